// EtcdMirror: a warm in-memory copy of an EtcdStore that follows etcd's Watch, against a real
// etcd. What it holds must always equal the store's state at the copy's revision.

#include "storage/etcd_mirror.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "test/status_matchers.h"
#include "test/support/etcd_cluster.h"

namespace tollgate::storage {
namespace {

using test_support::EtcdCluster;

std::map<std::string, std::string> Contents(const Store& store) {
  std::map<std::string, std::string> out;
  absl::Status status = store.Scan("", [&](absl::string_view key, absl::string_view value) {
    out.emplace(std::string(key), std::string(value));
    return true;
  });
  EXPECT_TRUE(status.ok()) << status;
  return out;
}

std::map<std::string, std::string> Contents(const EtcdMirror& mirror) {
  std::map<std::string, std::string> out;
  mirror.Scan("", [&](absl::string_view key, absl::string_view value) {
    out.emplace(std::string(key), std::string(value));
    return true;
  });
  return out;
}

WriteBatch Fill(absl::string_view prefix, int count, size_t value_bytes, char fill) {
  WriteBatch batch;
  for (int i = 0; i < count; ++i) {
    batch.Put(absl::StrCat(prefix, absl::Dec(i, absl::kZeroPad4)), std::string(value_bytes, fill));
  }
  batch.AppendChange(absl::StrCat("fill ", count));
  return batch;
}

class EtcdMirrorTest : public testing::Test {
 protected:
  void SetUp() override {
    TOLLGATE_SKIP_WITHOUT_ETCD();
    ASSERT_OK_AND_ASSIGN(etcd_, EtcdCluster::Shared());
    prefix_ = absl::StrCat("/etcd-mirror-test/", NewStoreId(), "/");
  }
  absl::StatusOr<std::unique_ptr<EtcdStore>> OpenStore(bool skip_roll_forward = false) {
    EtcdStoreOptions options;
    absl::StatusOr<std::vector<std::string>> endpoints =
        ParseEtcdEndpoints(etcd_->ClientEndpoints());
    if (!endpoints.ok()) return endpoints.status();
    options.connection.endpoints = *endpoints;
    options.connection.rpc_timeout = absl::Seconds(2);
    options.key_prefix = prefix_;
    // Small Txns, so that modest commits take the staged (multi-Txn) path.
    options.max_txn_ops = 16;
    options.testing_skip_roll_forward = skip_roll_forward;
    return EtcdStore::Open(options);
  }
  absl::StatusOr<std::unique_ptr<EtcdMirror>> StartMirror() {
    absl::StatusOr<std::unique_ptr<EtcdStore>> store = OpenStore();
    if (!store.ok()) return store.status();
    EtcdMirror::Options options;
    options.watch_timeout = absl::Milliseconds(200);
    return EtcdMirror::Start(*std::move(store), options);
  }

  EtcdCluster* etcd_ = nullptr;
  std::string prefix_;
};

TEST_F(EtcdMirrorTest, LoadsThenFollowsPutsAndDeletes) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<EtcdStore> writer, OpenStore());
  ASSERT_OK(writer->Commit(Fill("a/", 5, 10, 'x')).status());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<EtcdMirror> mirror, StartMirror());
  EXPECT_EQ(mirror->revision(), 1);
  EXPECT_EQ(Contents(*mirror), Contents(*writer));
  EXPECT_EQ(mirror->identity(), writer->Identity());

  for (int i = 0; i < 20; ++i) {
    WriteBatch batch;
    batch.Put(absl::StrCat("b/", i), absl::StrCat("v", i));
    if (i % 3 == 0) batch.Delete(absl::StrCat("a/", absl::Dec(i / 3, absl::kZeroPad4)));
    batch.AppendChange("step");
    ASSERT_OK(writer->Commit(batch).status());
  }
  ASSERT_OK(mirror->WaitForRevision(writer->CurrentRevision(), absl::Now() + absl::Seconds(20)));
  EXPECT_EQ(mirror->revision(), 21);
  EXPECT_EQ(Contents(*mirror), Contents(*writer));
  EXPECT_EQ(mirror->Get("b/7"), std::optional<std::string>("v7"));
  EXPECT_EQ(mirror->Get("a/0000"), std::nullopt);
  EXPECT_EQ(mirror->stats().loads, 1);
}

// Commits larger than one Txn are staged and applied in several: the copy must move from the
// whole previous state to the whole next one, never show a mix.
TEST_F(EtcdMirrorTest, LargeCommitsAppearWhole) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<EtcdStore> writer, OpenStore());
  ASSERT_OK(writer->Commit(Fill("big/", 100, 64, 'a')).status());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<EtcdMirror> mirror, StartMirror());

  std::atomic<bool> done = false;
  std::atomic<int64_t> scans = 0;
  std::thread scanner([&] {
    while (!done) {
      std::vector<char> fills;
      mirror->Scan("big/", [&](absl::string_view, absl::string_view value) {
        fills.push_back(value[0]);
        return true;
      });
      ++scans;
      if (fills.size() != 100u || std::count(fills.begin(), fills.end(), fills[0]) != 100) {
        ADD_FAILURE() << "the copy showed " << fills.size() << " keys, not all of one commit";
        return;
      }
    }
  });
  for (char fill : {'b', 'c', 'd', 'e'}) {
    ASSERT_OK(writer->Commit(Fill("big/", 100, 64, fill)).status());
  }
  ASSERT_OK(mirror->WaitForRevision(writer->CurrentRevision(), absl::Now() + absl::Seconds(20)));
  done = true;
  scanner.join();
  EXPECT_GT(scans.load(), 0);
  EXPECT_EQ(mirror->revision(), 5);
  EXPECT_EQ(Contents(*mirror), Contents(*writer));
}

// A writer died between a large commit's commit point and the end of its application: the
// commit is durable. A copy loaded then shows it whole, and keeps following when the next writer
// finishes applying it and commits more.
TEST_F(EtcdMirrorTest, LoadDuringAnUnfinishedLargeCommit) {
  {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<EtcdStore> dying, OpenStore(/*skip_roll_forward=*/true));
    ASSERT_OK(dying->Commit(Fill("big/", 60, 32, 'a')).status());
  }
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<EtcdMirror> mirror, StartMirror());
  EXPECT_EQ(mirror->revision(), 1);
  EXPECT_EQ(Contents(*mirror).size(), 60u);

  ASSERT_OK_AND_ASSIGN(std::unique_ptr<EtcdStore> writer, OpenStore());
  WriteBatch next;
  next.Put("after", "1");
  next.AppendChange("after");
  ASSERT_OK_AND_ASSIGN(const int64_t revision, writer->Commit(next));
  EXPECT_EQ(revision, 2);
  ASSERT_OK(mirror->WaitForRevision(2, absl::Now() + absl::Seconds(20)));
  EXPECT_EQ(Contents(*mirror), Contents(*writer));
}

TEST_F(EtcdMirrorTest, WaitForRevisionTimesOutNamingBoth) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<EtcdMirror> mirror, StartMirror());
  absl::Status status = mirror->WaitForRevision(5, absl::Now() + absl::Milliseconds(50));
  EXPECT_TRUE(absl::IsDeadlineExceeded(status)) << status;
  EXPECT_NE(status.message().find("revision 0, not yet at 5"), std::string::npos) << status;
}

// Stopped, the copy stays readable and no longer moves (a promotion loads from it frozen).
TEST_F(EtcdMirrorTest, StopFreezesTheCopy) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<EtcdStore> writer, OpenStore());
  ASSERT_OK(writer->Commit(Fill("k/", 3, 4, 'a')).status());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<EtcdMirror> mirror, StartMirror());
  mirror->Stop();
  ASSERT_OK(writer->Commit(Fill("k/", 3, 4, 'b')).status());
  EXPECT_EQ(mirror->revision(), 1);
  EXPECT_EQ(mirror->Get("k/0000"), std::optional<std::string>("aaaa"));
}

// A frozen copy keeps the state of its revision while the live copy moves on.
TEST_F(EtcdMirrorTest, FreezeKeepsItsRevisionWhileTheCopyMovesOn) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<EtcdStore> writer, OpenStore());
  ASSERT_OK(writer->Commit(Fill("k/", 3, 4, 'a')).status());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<EtcdMirror> mirror, StartMirror());
  const std::shared_ptr<const EtcdMirror::Frozen> frozen = mirror->Freeze();
  ASSERT_OK(writer->Commit(Fill("k/", 4, 4, 'b')).status());
  ASSERT_OK(mirror->WaitForRevision(2, absl::Now() + absl::Seconds(10)));
  EXPECT_EQ(frozen->revision, 1);
  EXPECT_TRUE(frozen->identity == writer->Identity());
  ASSERT_EQ(frozen->data.size(), 3u);
  EXPECT_EQ(*frozen->data.at("k/0000"), "aaaa");
  EXPECT_EQ(mirror->Get("k/0000"), std::optional<std::string>("bbbb"));
  EXPECT_EQ(Contents(*mirror).size(), 4u);
}

bool AwaitFreshness(const EtcdMirror& mirror, bool current, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (mirror.freshness().current != current) {
    if (absl::Now() >= deadline) return false;
    absl::SleepFor(absl::Milliseconds(20));  // polling a condition, bounded by `deadline`
  }
  return true;
}

// Without etcd the copy cannot confirm it is current: it says so (and why) within stale_after,
// and is current again once etcd answers.
TEST(EtcdMirrorFreshnessTest, StaleWhileEtcdIsDownCurrentOnceItIsBack) {
  TOLLGATE_SKIP_WITHOUT_ETCD();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<EtcdCluster> etcd,
                       EtcdCluster::Start(test_support::EtcdClusterOptions()));
  EtcdStoreOptions store_options;
  ASSERT_OK_AND_ASSIGN(store_options.connection.endpoints,
                       ParseEtcdEndpoints(etcd->ClientEndpoints()));
  store_options.connection.rpc_timeout = absl::Milliseconds(500);
  store_options.key_prefix = "/etcd-mirror-freshness/";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<EtcdStore> store, EtcdStore::Open(store_options));
  EtcdMirror::Options options;
  options.watch_timeout = absl::Milliseconds(200);
  options.retry_delay = absl::Milliseconds(50);
  options.confirm_interval = absl::Milliseconds(100);
  options.stale_after = absl::Seconds(1);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<EtcdMirror> mirror,
                       EtcdMirror::Start(std::move(store), options));
  ASSERT_TRUE(AwaitFreshness(*mirror, true, absl::Seconds(10))) << mirror->freshness().reason;

  ASSERT_OK(etcd->Kill(0));
  ASSERT_TRUE(AwaitFreshness(*mirror, false, absl::Seconds(10)));
  const EtcdMirror::Freshness stale = mirror->freshness();
  EXPECT_FALSE(stale.reason.empty());
  EXPECT_NE(stale.reason.find("last confirmed current"), std::string::npos) << stale.reason;

  ASSERT_OK(etcd->Restart(0));
  EXPECT_TRUE(AwaitFreshness(*mirror, true, absl::Seconds(20))) << mirror->freshness().reason;
}

}  // namespace
}  // namespace tollgate::storage
