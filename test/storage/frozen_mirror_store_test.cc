// FrozenMirrorStore: a read-only Store over one frozen copy of a follower's warm state, replaced
// whole by Install; the change log comes from another store.

#include "storage/frozen_mirror_store.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "storage/memory_store.h"
#include "test/status_matchers.h"

namespace tollgate::storage {
namespace {

std::shared_ptr<const EtcdMirror::Frozen> Frozen(int64_t revision,
                                                 const std::map<std::string, std::string>& data) {
  auto frozen = std::make_shared<EtcdMirror::Frozen>();
  frozen->revision = revision;
  frozen->identity = StoreIdentity{"store-a", 1};
  for (const auto& [key, value] : data) {
    frozen->data.emplace(key, std::make_shared<const std::string>(value));
  }
  return frozen;
}

std::vector<std::string> Keys(const StoreSnapshot& snapshot, absl::string_view prefix,
                              absl::string_view after, int64_t limit) {
  std::vector<std::string> keys;
  absl::StatusOr<int64_t> visited =
      snapshot.ScanPage(prefix, after, limit,
                        [&](absl::string_view key, absl::string_view) { keys.emplace_back(key); });
  EXPECT_OK(visited.status());
  EXPECT_EQ(*visited, static_cast<int64_t>(keys.size()));
  return keys;
}

TEST(FrozenMirrorStoreTest, AnswersFromTheInstalledCopyOnly) {
  MemoryStore changes;
  FrozenMirrorStore store(Frozen(3, {{"a/1", "x"}, {"w/1", "one"}, {"w/2", "two"}}), changes);
  EXPECT_EQ(store.CurrentRevision(), 3);
  EXPECT_TRUE(store.Identity() == (StoreIdentity{"store-a", 1}));
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> got, store.Get("w/1"));
  EXPECT_EQ(got, std::optional<std::string>("one"));
  ASSERT_OK_AND_ASSIGN(got, store.Get("w/3"));
  EXPECT_EQ(got, std::nullopt);
  std::vector<std::string> scanned;
  ASSERT_OK(store.Scan("w/", [&](absl::string_view key, absl::string_view) {
    scanned.emplace_back(key);
    return true;
  }));
  EXPECT_EQ(scanned, (std::vector<std::string>{"w/1", "w/2"}));

  // A snapshot keeps its copy after the next one is installed.
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<StoreSnapshot> before, store.TakeSnapshot());
  store.Install(Frozen(5, {{"w/2", "two"}, {"w/3", "three"}}));
  EXPECT_EQ(store.CurrentRevision(), 5);
  ASSERT_OK_AND_ASSIGN(got, store.Get("w/1"));
  EXPECT_EQ(got, std::nullopt);
  EXPECT_EQ(before->revision(), 3);
  EXPECT_EQ(Keys(*before, "w/", "", 10), (std::vector<std::string>{"w/1", "w/2"}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<StoreSnapshot> after, store.TakeSnapshot());
  EXPECT_EQ(Keys(*after, "w/", "", 1), (std::vector<std::string>{"w/2"}));
  EXPECT_EQ(Keys(*after, "w/", "w/2", 1), (std::vector<std::string>{"w/3"}));
  EXPECT_TRUE(Keys(*after, "w/", "w/3", 1).empty());
}

TEST(FrozenMirrorStoreTest, NeverWritesAndReadsTheChangeLogFromItsSource) {
  MemoryStore changes;
  WriteBatch batch;
  batch.Put("w/1", "one");
  batch.AppendChange("added w/1");
  ASSERT_OK(changes.Commit(batch).status());
  FrozenMirrorStore store(Frozen(1, {{"w/1", "one"}}), changes);

  const absl::StatusOr<int64_t> committed = store.Commit(batch);
  EXPECT_TRUE(absl::IsFailedPrecondition(committed.status())) << committed.status();
  EXPECT_TRUE(absl::IsFailedPrecondition(store.CompactChanges(1)));
  EXPECT_EQ(changes.CurrentRevision(), 1);

  ASSERT_OK_AND_ASSIGN(std::vector<ChangeLogEntry> entries, store.ReadChanges(0, 10));
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].revision, 1);
  EXPECT_EQ(entries[0].records, (std::vector<std::string>{"added w/1"}));
  EXPECT_EQ(store.CompactedRevision(), 0);
}

}  // namespace
}  // namespace tollgate::storage
