// The Store contract, checked against every implementation.

#include "storage/store.h"

#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "storage/etcd_store.h"
#include "storage/memory_store.h"
#include "storage/rocksdb_store.h"
#include "test/status_matchers.h"
#include "test/support/etcd_cluster.h"
#include "test/support/scratch_dir.h"

namespace tollgate::storage {
namespace {

using KeyValues = std::vector<std::pair<std::string, std::string>>;

struct MemoryStoreFactory {
  static constexpr const char* kName = "MemoryStore";
  absl::StatusOr<std::unique_ptr<Store>> Open() { return std::make_unique<MemoryStore>(); }
};

// A real RocksDB in a fresh directory, removed with the factory.
class RocksDbStoreFactory {
 public:
  static constexpr const char* kName = "RocksDbStore";

  ~RocksDbStoreFactory() { test_support::RemoveScratchDir(dir_); }

  absl::StatusOr<std::unique_ptr<Store>> Open() {
    absl::StatusOr<std::string> dir = test_support::MakeScratchDir("tollgate_store_test");
    if (!dir.ok()) return dir.status();
    dir_ = *std::move(dir);
    absl::StatusOr<std::unique_ptr<RocksDbStore>> store = RocksDbStore::Open(dir_ + "/db");
    if (!store.ok()) return store.status();
    return std::unique_ptr<Store>(*std::move(store));
  }

 private:
  std::string dir_;
};

// A real single-member etcd on loopback (shared by the tests of this process), each store under
// a key prefix of its own.
struct EtcdStoreFactory {
  static constexpr const char* kName = "EtcdStore";
  static std::string SkipReason() {
    if (test_support::EtcdCluster::Available()) return "";
    return absl::StrCat("etcd binary not found at ", test_support::EtcdCluster::BinaryPath(),
                        " (install etcd-server)");
  }

  absl::StatusOr<std::unique_ptr<Store>> Open() {
    absl::StatusOr<test_support::EtcdCluster*> etcd = test_support::EtcdCluster::Shared();
    if (!etcd.ok()) return etcd.status();
    static std::atomic<int> next = 0;
    EtcdStoreOptions options;
    options.connection.endpoints = {(*etcd)->ClientEndpoint(0)};
    options.key_prefix = absl::StrCat("/store-test/", NewStoreId(), "-", next++, "/");
    absl::StatusOr<std::unique_ptr<EtcdStore>> store = EtcdStore::Open(options);
    if (!store.ok()) return store.status();
    return std::unique_ptr<Store>(*std::move(store));
  }
};

struct FactoryName {
  template <typename T>
  static std::string GetName(int) {
    return T::kName;
  }
};

template <typename Factory>
class StoreTest : public testing::Test {
 protected:
  void SetUp() override {
    if constexpr (requires { Factory::SkipReason(); }) {
      if (const std::string reason = Factory::SkipReason(); !reason.empty()) {
        GTEST_SKIP() << reason;
      }
    }
    ASSERT_OK_AND_ASSIGN(store_, factory_.Open());
  }

  absl::StatusOr<int64_t> Put(absl::string_view key, absl::string_view value) {
    WriteBatch batch;
    batch.Put(key, value);
    return store_->Commit(batch);
  }

  KeyValues ScanAll(absl::string_view prefix) {
    KeyValues out;
    absl::Status status = store_->Scan(prefix, [&](absl::string_view k, absl::string_view v) {
      out.emplace_back(k, v);
      return true;
    });
    EXPECT_TRUE(status.ok()) << status;
    return out;
  }

  // Declared first so the store closes before its directory is removed.
  Factory factory_;
  std::unique_ptr<Store> store_;
};

using StoreTypes = testing::Types<MemoryStoreFactory, RocksDbStoreFactory, EtcdStoreFactory>;
TYPED_TEST_SUITE(StoreTest, StoreTypes, FactoryName);

TYPED_TEST(StoreTest, NewStoreIsEmpty) {
  Store& store = *this->store_;
  EXPECT_EQ(store.CurrentRevision(), 0);
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> value, store.Get("missing"));
  EXPECT_EQ(value, std::nullopt);
  EXPECT_TRUE(this->ScanAll("").empty());
  ASSERT_OK_AND_ASSIGN(std::vector<ChangeLogEntry> changes, store.ReadChanges(0, 10));
  EXPECT_TRUE(changes.empty());
}

TYPED_TEST(StoreTest, NewStoreHasAnIdentityAtEpochOne) {
  const StoreIdentity identity = this->store_->Identity();
  EXPECT_EQ(identity.store_id.size(), 32u);
  EXPECT_EQ(identity.epoch, 1);
  EXPECT_EQ(this->store_->CompactedRevision(), 0);
}

// Watch pages its initial listing through a snapshot: later commits must not show through.
TYPED_TEST(StoreTest, SnapshotPagesSeeOneRevision) {
  Store& store = *this->store_;
  for (const char* key : {"w/a", "w/b", "w/c", "w/d", "w/e", "x/other"}) {
    ASSERT_OK(this->Put(key, "old").status());
  }
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<StoreSnapshot> snapshot, store.TakeSnapshot());
  EXPECT_EQ(snapshot->revision(), 6);
  ASSERT_OK(this->Put("w/c", "new").status());
  ASSERT_OK(this->Put("w/bb", "new").status());

  KeyValues seen;
  std::string last;
  while (true) {
    ASSERT_OK_AND_ASSIGN(
        int64_t visited,
        snapshot->ScanPage("w/", last, 2, [&](absl::string_view k, absl::string_view v) {
          seen.emplace_back(k, v);
          last = std::string(k);
        }));
    if (visited < 2) break;
  }
  EXPECT_EQ(
      seen,
      (KeyValues{{"w/a", "old"}, {"w/b", "old"}, {"w/c", "old"}, {"w/d", "old"}, {"w/e", "old"}}));
}

TYPED_TEST(StoreTest, PutGetDelete) {
  Store& store = *this->store_;
  ASSERT_OK(this->Put("a", "1").status());
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> value, store.Get("a"));
  EXPECT_EQ(value, "1");

  ASSERT_OK(this->Put("a", "2").status());
  ASSERT_OK_AND_ASSIGN(value, store.Get("a"));
  EXPECT_EQ(value, "2");

  WriteBatch del;
  del.Delete("a");
  del.Delete("never-written");
  ASSERT_OK(store.Commit(del).status());
  ASSERT_OK_AND_ASSIGN(value, store.Get("a"));
  EXPECT_EQ(value, std::nullopt);
}

TYPED_TEST(StoreTest, EmptyValuesAndBinaryKeysRoundTrip) {
  Store& store = *this->store_;
  const std::string binary_key("k\0\xff", 3);
  const std::string binary_value("\0\x01\x80\xff", 4);
  ASSERT_OK(this->Put("empty", "").status());
  ASSERT_OK(this->Put(binary_key, binary_value).status());

  // An empty value is present, not missing.
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> value, store.Get("empty"));
  EXPECT_EQ(value, "");
  ASSERT_OK_AND_ASSIGN(value, store.Get(binary_key));
  EXPECT_EQ(value, binary_value);
}

TYPED_TEST(StoreTest, CommitSequenceGivesConsecutiveRevisionsInOrder) {
  Store& store = *this->store_;
  ASSERT_OK(this->Put("a", "0").status());
  WriteBatch first;
  first.Put("a", "1");
  first.Put("b", "1");
  first.AppendChange("first");
  WriteBatch empty;
  WriteBatch third;
  third.Put("a", "3");
  third.Delete("b");
  third.AppendChange("third");
  ASSERT_OK_AND_ASSIGN(int64_t last, store.CommitSequence({&first, &empty, &third}));
  EXPECT_EQ(last, 4);
  EXPECT_EQ(store.CurrentRevision(), 4);
  // The later batch's writes win.
  EXPECT_EQ(this->ScanAll(""), (KeyValues{{"a", "3"}}));
  ASSERT_OK_AND_ASSIGN(std::vector<ChangeLogEntry> changes, store.ReadChanges(1, 10));
  ASSERT_EQ(changes.size(), 3u);
  EXPECT_EQ(changes[0].revision, 2);
  EXPECT_EQ(changes[0].records, (std::vector<std::string>{"first"}));
  EXPECT_EQ(changes[1].revision, 3);
  EXPECT_TRUE(changes[1].records.empty());
  EXPECT_EQ(changes[2].revision, 4);
  EXPECT_EQ(changes[2].records, (std::vector<std::string>{"third"}));

  EXPECT_EQ(store.CommitSequence({}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store.CurrentRevision(), 4);
}

TYPED_TEST(StoreTest, MultiOpBatchAppliesInOrderUnderOneRevision) {
  Store& store = *this->store_;
  WriteBatch batch;
  batch.Put("a", "1");
  batch.Put("b", "2");
  batch.Put("c", "3");
  batch.Delete("b");
  batch.Put("a", "4");
  batch.AppendChange("first");
  batch.AppendChange("second");
  ASSERT_OK_AND_ASSIGN(int64_t revision, store.Commit(batch));
  EXPECT_EQ(revision, 1);
  EXPECT_EQ(store.CurrentRevision(), 1);

  EXPECT_EQ(this->ScanAll(""), (KeyValues{{"a", "4"}, {"c", "3"}}));
  ASSERT_OK_AND_ASSIGN(std::vector<ChangeLogEntry> changes, store.ReadChanges(0, 10));
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].revision, 1);
  EXPECT_EQ(changes[0].records, (std::vector<std::string>{"first", "second"}));
}

TYPED_TEST(StoreTest, ConcurrentScansNeverSeeHalfABatch) {
  Store& store = *this->store_;
  constexpr int kBatches = 100;
  std::atomic<bool> done = false;
  std::thread writer([&] {
    for (int i = 0; i < kBatches; ++i) {
      WriteBatch batch;
      batch.Put("pair/a", absl::StrCat(i));
      batch.Put("pair/b", absl::StrCat(i));
      absl::StatusOr<int64_t> revision = store.Commit(batch);
      EXPECT_TRUE(revision.ok()) << revision.status();
    }
    done = true;
  });
  int scans = 0;
  // Keeps scanning for as long as the writer runs; the final scan after `done` sees the end.
  bool last = false;
  while (!last) {
    last = done;
    KeyValues seen = this->ScanAll("pair/");
    ++scans;
    if (seen.empty()) continue;
    // No ASSERT here: returning early would destroy the running writer thread.
    if (seen.size() != 2u || seen[0].second != seen[1].second) {
      ADD_FAILURE() << "scan saw half of a batch: " << testing::PrintToString(seen);
      break;
    }
  }
  writer.join();
  EXPECT_EQ(this->ScanAll("pair/"), (KeyValues{{"pair/a", absl::StrCat(kBatches - 1)},
                                               {"pair/b", absl::StrCat(kBatches - 1)}}));
  EXPECT_GT(scans, 0);
}

TYPED_TEST(StoreTest, ScanReturnsOnlyThePrefixInKeyOrder) {
  Store& store = *this->store_;
  WriteBatch batch;
  for (const char* key : {"b/2", "a", "b/10", "b/1", "b0", "b", "c", "b/gone"}) {
    batch.Put(key, absl::StrCat("v-", key));
  }
  batch.Put("b/\xff", "high");
  batch.Put("\xff\xff", "top");
  ASSERT_OK(store.Commit(batch).status());
  WriteBatch del;
  del.Delete("b/gone");
  ASSERT_OK(store.Commit(del).status());

  EXPECT_EQ(
      this->ScanAll("b/"),
      (KeyValues{{"b/1", "v-b/1"}, {"b/10", "v-b/10"}, {"b/2", "v-b/2"}, {"b/\xff", "high"}}));
  // A prefix with no successor key (all 0xff) still stops at the end of the prefix.
  EXPECT_EQ(this->ScanAll("\xff"), (KeyValues{{"\xff\xff", "top"}}));
  EXPECT_TRUE(this->ScanAll("zz").empty());

  std::vector<std::string> all_keys;
  for (const auto& [key, value] : this->ScanAll("")) all_keys.push_back(key);
  EXPECT_EQ(all_keys, (std::vector<std::string>{"a", "b", "b/1", "b/10", "b/2", "b/\xff", "b0", "c",
                                                "\xff\xff"}));
}

TYPED_TEST(StoreTest, ScanStopsWhenVisitReturnsFalse) {
  Store& store = *this->store_;
  WriteBatch batch;
  for (int i = 0; i < 5; ++i) batch.Put(absl::StrCat("k", i), "v");
  ASSERT_OK(store.Commit(batch).status());

  std::vector<std::string> visited;
  ASSERT_OK(store.Scan("k", [&](absl::string_view key, absl::string_view) {
    visited.emplace_back(key);
    return visited.size() < 2;
  }));
  EXPECT_EQ(visited, (std::vector<std::string>{"k0", "k1"}));
}

TYPED_TEST(StoreTest, ScanVisitMayCallBackIntoTheStore) {
  Store& store = *this->store_;
  ASSERT_OK(this->Put("src/a", "1").status());
  ASSERT_OK(this->Put("src/b", "2").status());

  ASSERT_OK(store.Scan("src/", [&](absl::string_view key, absl::string_view value) {
    absl::StatusOr<std::optional<std::string>> got = store.Get(key);
    EXPECT_TRUE(got.ok() && *got == value);
    WriteBatch copy;
    copy.Put(absl::StrCat("dst/", key), value);
    EXPECT_TRUE(store.Commit(copy).ok());
    return true;
  }));
  EXPECT_EQ(this->ScanAll("dst/"), (KeyValues{{"dst/src/a", "1"}, {"dst/src/b", "2"}}));
}

TYPED_TEST(StoreTest, EveryCommitTakesTheNextRevision) {
  Store& store = *this->store_;
  for (int64_t expected = 1; expected <= 10; ++expected) {
    WriteBatch batch;
    // Every third batch is empty: it still takes a revision so the log has no gaps.
    if (expected % 3 != 0) batch.Put(absl::StrCat("k", expected), "v");
    ASSERT_OK_AND_ASSIGN(int64_t revision, store.Commit(batch));
    EXPECT_EQ(revision, expected);
    EXPECT_EQ(store.CurrentRevision(), expected);
  }
}

TYPED_TEST(StoreTest, ChangeLogKeepsEachBatchsRecords) {
  Store& store = *this->store_;
  const std::vector<std::vector<std::string>> batches = {
      {"x", "y"},
      {},
      // Empty, binary and long (multi-byte length prefix) records.
      {"", std::string("\0\x80\xff", 3), std::string(300, 'r')},
  };
  for (const std::vector<std::string>& records : batches) {
    WriteBatch batch;
    batch.Put("k", "v");
    for (const std::string& record : records) batch.AppendChange(record);
    ASSERT_OK(store.Commit(batch).status());
  }

  ASSERT_OK_AND_ASSIGN(std::vector<ChangeLogEntry> changes, store.ReadChanges(0, 100));
  ASSERT_EQ(changes.size(), 3u);
  for (size_t i = 0; i < changes.size(); ++i) {
    EXPECT_EQ(changes[i].revision, static_cast<int64_t>(i) + 1);
    EXPECT_EQ(changes[i].records, batches[i]);
  }

  ASSERT_OK_AND_ASSIGN(changes, store.ReadChanges(1, 1));
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].revision, 2);
  EXPECT_TRUE(changes[0].records.empty());

  ASSERT_OK_AND_ASSIGN(changes, store.ReadChanges(3, 10));
  EXPECT_TRUE(changes.empty());
  ASSERT_OK_AND_ASSIGN(changes, store.ReadChanges(100, 10));
  EXPECT_TRUE(changes.empty());
  ASSERT_OK_AND_ASSIGN(changes, store.ReadChanges(std::numeric_limits<int64_t>::max(), 10));
  EXPECT_TRUE(changes.empty());
}

TYPED_TEST(StoreTest, ReadChangesRejectsBadArguments) {
  Store& store = *this->store_;
  EXPECT_EQ(store.ReadChanges(-1, 10).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store.ReadChanges(0, 0).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store.ReadChanges(0, -5).status().code(), absl::StatusCode::kInvalidArgument);
}

TYPED_TEST(StoreTest, CompactChangesDropsOldEntriesAndReportsThem) {
  Store& store = *this->store_;
  for (int i = 1; i <= 5; ++i) {
    WriteBatch batch;
    batch.Put(absl::StrCat("k", i), "v");
    batch.AppendChange(absl::StrCat("c", i));
    ASSERT_OK(store.Commit(batch).status());
  }
  ASSERT_OK(store.CompactChanges(3));

  ASSERT_OK_AND_ASSIGN(std::vector<ChangeLogEntry> changes, store.ReadChanges(3, 10));
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0].revision, 4);
  EXPECT_EQ(changes[0].records, std::vector<std::string>{"c4"});
  EXPECT_EQ(changes[1].revision, 5);

  absl::Status compacted = store.ReadChanges(2, 10).status();
  EXPECT_EQ(compacted.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(compacted.message(), "revision 3 has been compacted; oldest available is 4");
  compacted = store.ReadChanges(0, 10).status();
  EXPECT_EQ(compacted.message(), "revision 1 has been compacted; oldest available is 4");

  // Compacting to an older revision neither fails nor brings entries back.
  ASSERT_OK(store.CompactChanges(2));
  EXPECT_EQ(store.ReadChanges(2, 10).status().code(), absl::StatusCode::kFailedPrecondition);

  EXPECT_EQ(store.CompactChanges(6).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store.CompactChanges(-1).code(), absl::StatusCode::kInvalidArgument);

  // Compacting everything leaves an empty log that continues with the next commit.
  ASSERT_OK(store.CompactChanges(5));
  ASSERT_OK_AND_ASSIGN(changes, store.ReadChanges(5, 10));
  EXPECT_TRUE(changes.empty());
  EXPECT_EQ(store.ReadChanges(4, 10).status().message(),
            "revision 5 has been compacted; oldest available is 6");
  ASSERT_OK(this->Put("k6", "v").status());
  ASSERT_OK_AND_ASSIGN(changes, store.ReadChanges(5, 10));
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].revision, 6);

  // State is untouched by compaction.
  EXPECT_EQ(this->ScanAll("k").size(), 6u);
}

TYPED_TEST(StoreTest, ConcurrentCommitsGetUniqueConsecutiveRevisions) {
  Store& store = *this->store_;
  constexpr int kThreads = 8;
  constexpr int kCommitsPerThread = 25;
  std::vector<std::vector<int64_t>> revisions(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCommitsPerThread; ++i) {
        WriteBatch batch;
        batch.Put(absl::StrCat("t", t, "/", i), "v");
        absl::StatusOr<int64_t> revision = store.Commit(batch);
        ASSERT_TRUE(revision.ok()) << revision.status();
        revisions[t].push_back(*revision);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();

  std::vector<int64_t> all;
  for (const std::vector<int64_t>& per_thread : revisions) {
    // One thread's commits are ordered, so its revisions must be too.
    EXPECT_TRUE(std::is_sorted(per_thread.begin(), per_thread.end()));
    all.insert(all.end(), per_thread.begin(), per_thread.end());
  }
  std::sort(all.begin(), all.end());
  std::vector<int64_t> expected(size_t{kThreads} * kCommitsPerThread);
  for (size_t i = 0; i < expected.size(); ++i) expected[i] = static_cast<int64_t>(i) + 1;
  EXPECT_EQ(all, expected);
  EXPECT_EQ(store.CurrentRevision(), kThreads * kCommitsPerThread);
  EXPECT_EQ(this->ScanAll("t").size(), expected.size());
}

}  // namespace
}  // namespace tollgate::storage
