// EtcdStore beyond the shared Store contract (store_test.cc): etcd's limits, fencing, followers,
// and a real etcd losing and regaining members.

#include "storage/etcd_store.h"

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "test/status_matchers.h"
#include "test/support/etcd_cluster.h"

namespace tollgate::storage {
namespace {

using test_support::EtcdCluster;

std::string FreshPrefix() { return absl::StrCat("/etcd-store-test/", NewStoreId(), "/"); }

EtcdStoreOptions OptionsFor(const std::string& endpoints, const std::string& prefix) {
  EtcdStoreOptions options;
  absl::StatusOr<std::vector<std::string>> parsed = ParseEtcdEndpoints(endpoints);
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  if (parsed.ok()) options.connection.endpoints = *parsed;
  options.connection.rpc_timeout = absl::Seconds(2);
  options.key_prefix = prefix;
  return options;
}

// A batch of `count` keys under `prefix` with values of `value_bytes` each.
WriteBatch BigBatch(absl::string_view prefix, int count, size_t value_bytes, char fill) {
  WriteBatch batch;
  for (int i = 0; i < count; ++i) {
    batch.Put(absl::StrCat(prefix, absl::Dec(i, absl::kZeroPad5)), std::string(value_bytes, fill));
  }
  batch.AppendChange(absl::StrCat("big ", count));
  return batch;
}

int64_t CountKeys(const Store& store, absl::string_view prefix, char* fill_seen = nullptr) {
  int64_t count = 0;
  absl::Status status = store.Scan(prefix, [&](absl::string_view, absl::string_view value) {
    ++count;
    if (fill_seen != nullptr && !value.empty()) *fill_seen = value[0];
    return true;
  });
  EXPECT_TRUE(status.ok()) << status;
  return count;
}

class EtcdStoreTest : public testing::Test {
 protected:
  void SetUp() override {
    TOLLGATE_SKIP_WITHOUT_ETCD();
    ASSERT_OK_AND_ASSIGN(etcd_, EtcdCluster::Shared());
    prefix_ = FreshPrefix();
  }
  absl::StatusOr<std::unique_ptr<EtcdStore>> OpenStore(bool skip_roll_forward = false) {
    EtcdStoreOptions options = OptionsFor(etcd_->ClientEndpoints(), prefix_);
    options.testing_skip_roll_forward = skip_roll_forward;
    return EtcdStore::Open(options);
  }
  // Keys under the store's prefix, straight from etcd.
  int64_t RawCount(EtcdStore& store, absl::string_view suffix) {
    etcdserverpb::RangeRequest range;
    range.set_key(absl::StrCat(prefix_, suffix));
    std::string end = range.key();
    end.back() = static_cast<char>(end.back() + 1);
    range.set_range_end(end);
    range.set_count_only(true);
    absl::StatusOr<etcdserverpb::RangeResponse> response = store.client().Range(range);
    EXPECT_TRUE(response.ok()) << response.status();
    return response.ok() ? response->count() : -1;
  }

  EtcdCluster* etcd_ = nullptr;
  std::string prefix_;
};

// 1,000 keys of 2 KiB: 8 times etcd's 128 ops per Txn and over its 1.5 MiB per request.
TEST_F(EtcdStoreTest, CommitOverEtcdLimitsIsOneRevisionAndAtomic) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<EtcdStore> writer, OpenStore());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<EtcdStore> reader, OpenStore());
  ASSERT_OK_AND_ASSIGN(int64_t first, writer->Commit(BigBatch("big/", 1000, 2048, 'a')));
  EXPECT_EQ(first, 1);

  // A reader in another store object scans while the next large commit replaces every value:
  // it must see all 'a' or all 'b', never a mix, and always 1,000 keys.
  std::atomic<bool> done = false;
  std::thread scanner([&] {
    while (!done) {
      std::vector<char> fills;
      absl::Status status = reader->Scan("big/", [&](absl::string_view, absl::string_view v) {
        fills.push_back(v[0]);
        return true;
      });
      if (!status.ok()) {
        ADD_FAILURE() << status;
        return;
      }
      if (fills.size() != 1000u || std::count(fills.begin(), fills.end(), fills[0]) != 1000) {
        ADD_FAILURE() << "scan saw " << fills.size() << " keys, not all with one value";
        return;
      }
    }
  });
  absl::StatusOr<int64_t> second = writer->Commit(BigBatch("big/", 1000, 2048, 'b'));
  done = true;
  scanner.join();
  ASSERT_OK(second.status());
  EXPECT_EQ(*second, 2);

  char fill = 0;
  EXPECT_EQ(CountKeys(*reader, "big/", &fill), 1000);
  EXPECT_EQ(fill, 'b');
  ASSERT_OK_AND_ASSIGN(std::vector<ChangeLogEntry> changes, reader->ReadChanges(0, 10));
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[1].records, std::vector<std::string>{"big 1000"});
  // Applied and cleaned up: no marker, no staged chunks left.
  EXPECT_EQ(RawCount(*writer, "meta/staged"), 0);
  EXPECT_EQ(RawCount(*writer, "stage/"), 0);
}

// A large commit stopped right after its commit point (the process died while applying it):
// every reader already sees all of it, and the next write finishes it.
TEST_F(EtcdStoreTest, StagedCommitIsVisibleWholeBeforeItIsApplied) {
  {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<EtcdStore> seed, OpenStore());
    WriteBatch batch;
    batch.Put("keep", "1");
    batch.Put("gone", "1");
    ASSERT_OK(seed->Commit(batch).status());
  }
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<EtcdStore> writer, OpenStore(/*skip_roll_forward=*/true));
  WriteBatch big = BigBatch("big/", 300, 100, 'x');
  big.Delete("gone");
  big.Put("keep", "2");
  ASSERT_OK_AND_ASSIGN(int64_t revision, writer->Commit(big));
  EXPECT_EQ(revision, 2);
  EXPECT_EQ(RawCount(*writer, "meta/staged"), 1);
  EXPECT_EQ(RawCount(*writer, "data/big/"), 0);  // Nothing applied yet.

  ASSERT_OK_AND_ASSIGN(std::unique_ptr<EtcdStore> reader, OpenStore());
  EXPECT_EQ(reader->CurrentRevision(), 2);
  EXPECT_EQ(CountKeys(*reader, "big/"), 300);
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> value, reader->Get("keep"));
  EXPECT_EQ(value, "2");
  ASSERT_OK_AND_ASSIGN(value, reader->Get("gone"));
  EXPECT_EQ(value, std::nullopt);
  ASSERT_OK_AND_ASSIGN(value, reader->Get("big/00299"));
  EXPECT_EQ(value, std::string(100, 'x'));
  EXPECT_EQ(CountKeys(*reader, ""), 301);
  ASSERT_OK_AND_ASSIGN(std::vector<ChangeLogEntry> changes, reader->ReadChanges(1, 10));
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].revision, 2);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<StoreSnapshot> snapshot, reader->TakeSnapshot());
  EXPECT_EQ(snapshot->revision(), 2);
  int64_t paged = 0;
  std::string last;
  while (true) {
    ASSERT_OK_AND_ASSIGN(
        int64_t visited,
        snapshot->ScanPage("big/", last, 64, [&](absl::string_view k, absl::string_view) {
          ++paged;
          last = std::string(k);
        }));
    if (visited < 64) break;
  }
  EXPECT_EQ(paged, 300);

  // Another process (a new leader) writes next: it applies the staged commit first.
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<EtcdStore> next, OpenStore());
  WriteBatch after;
  after.Put("after", "1");
  ASSERT_OK_AND_ASSIGN(int64_t third, next->Commit(after));
  EXPECT_EQ(third, 3);
  EXPECT_EQ(RawCount(*next, "meta/staged"), 0);
  EXPECT_EQ(RawCount(*next, "stage/"), 0);
  EXPECT_EQ(RawCount(*next, "data/big/"), 300);
  EXPECT_EQ(RawCount(*next, "data/gone"), 0);
  ASSERT_OK_AND_ASSIGN(changes, reader->ReadChanges(0, 10));
  ASSERT_EQ(changes.size(), 3u);
  EXPECT_EQ(changes[2].revision, 3);
}

TEST_F(EtcdStoreTest, ValueOverTheRequestLimitIsRejectedNamingTheKey) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<EtcdStore> store, OpenStore());
  WriteBatch batch;
  batch.Put("small", "1");
  batch.Put("huge", std::string(2 * 1024 * 1024, 'h'));
  absl::Status status = store->Commit(batch).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("\"huge\""), std::string::npos) << status;
  EXPECT_EQ(store->CurrentRevision(), 0);
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> value, store->Get("small"));
  EXPECT_EQ(value, std::nullopt);
}

// The leader's writes are conditional on its leadership key: once the key is gone (lease
// expired) or held by someone else, nothing of the deposed leader's commits applies.
TEST_F(EtcdStoreTest, FencedWritesFailOnceLeadershipIsLost) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<EtcdStore> store, OpenStore());
  EtcdClient& client = store->client();
  ASSERT_OK_AND_ASSIGN(etcdserverpb::LeaseGrantResponse lease, client.LeaseGrant(30));
  const std::string leader_key = absl::StrCat(prefix_, "leader");
  etcdserverpb::TxnRequest campaign;
  etcdserverpb::RequestOp* put = campaign.add_success();
  put->mutable_request_put()->set_key(leader_key);
  put->mutable_request_put()->set_value("me");
  put->mutable_request_put()->set_lease(lease.id());
  ASSERT_OK_AND_ASSIGN(etcdserverpb::TxnResponse won, client.Txn(campaign));
  store->SetFence(EtcdFence{.key = leader_key, .create_revision = won.header().revision()});

  WriteBatch batch;
  batch.Put("a", "1");
  ASSERT_OK_AND_ASSIGN(int64_t revision, store->Commit(batch));
  EXPECT_EQ(revision, 1);

  // The lease ends (as when the leader paused past its TTL) and another process campaigns.
  ASSERT_OK(client.LeaseRevoke(lease.id()));
  etcdserverpb::TxnRequest other;
  other.add_success()->mutable_request_put()->set_key(leader_key);
  other.mutable_success(0)->mutable_request_put()->set_value("other");
  ASSERT_OK(client.Txn(other).status());

  WriteBatch late;
  late.Put("a", "deposed");
  absl::Status small = store->Commit(late).status();
  EXPECT_TRUE(IsNotLeaderError(small)) << small;
  EXPECT_EQ(small.code(), absl::StatusCode::kFailedPrecondition);
  absl::Status large = store->Commit(BigBatch("big/", 400, 10, 'd')).status();
  EXPECT_TRUE(IsNotLeaderError(large)) << large;
  EXPECT_TRUE(IsNotLeaderError(store->CompactChanges(1))) << "compaction is a write too";

  ASSERT_OK_AND_ASSIGN(std::unique_ptr<EtcdStore> reader, OpenStore());
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> value, reader->Get("a"));
  EXPECT_EQ(value, "1");
  EXPECT_EQ(reader->CurrentRevision(), 1);
  EXPECT_EQ(RawCount(*reader, "stage/"), 0);
  EXPECT_EQ(CountKeys(*reader, "big/"), 0);
}

// Two processes writing one prefix without fencing: never two batches under one revision.
TEST_F(EtcdStoreTest, SecondWriterIsDetectedNotInterleaved) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<EtcdStore> a, OpenStore());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<EtcdStore> b, OpenStore());
  WriteBatch one;
  one.Put("k", "a1");
  ASSERT_OK_AND_ASSIGN(int64_t r1, a->Commit(one));
  EXPECT_EQ(r1, 1);
  WriteBatch two;
  two.Put("k", "b2");
  ASSERT_OK_AND_ASSIGN(int64_t r2, b->Commit(two));
  EXPECT_EQ(r2, 2);
  WriteBatch three;
  three.Put("k", "a3");
  absl::Status stale = a->Commit(three).status();
  EXPECT_EQ(stale.code(), absl::StatusCode::kAborted) << stale;
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> value, b->Get("k"));
  EXPECT_EQ(value, "b2");
  // Having re-read the store, the first writer continues after the second.
  ASSERT_OK_AND_ASSIGN(int64_t r3, a->Commit(three));
  EXPECT_EQ(r3, 3);
}

TEST_F(EtcdStoreTest, FollowerWaitsForCommitsOfAnotherProcess) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<EtcdStore> leader, OpenStore());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<EtcdStore> follower, OpenStore());
  EXPECT_EQ(follower->WaitForCommit(0, absl::Milliseconds(200)).status().code(),
            absl::StatusCode::kDeadlineExceeded);
  std::thread writer([&] {
    for (int i = 0; i < 3; ++i) {
      WriteBatch batch;
      batch.Put("k", absl::StrCat(i));
      batch.AppendChange(absl::StrCat("c", i));
      EXPECT_TRUE(leader->Commit(batch).ok());
    }
  });
  int64_t seen = 0;
  std::vector<std::string> records;
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (seen < 3 && absl::Now() < deadline) {
    absl::StatusOr<int64_t> revision = follower->WaitForCommit(seen, absl::Seconds(5));
    ASSERT_OK(revision.status());
    ASSERT_OK_AND_ASSIGN(std::vector<ChangeLogEntry> changes, follower->ReadChanges(seen, 100));
    for (const ChangeLogEntry& entry : changes) {
      EXPECT_EQ(entry.revision, seen + 1);
      seen = entry.revision;
      records.insert(records.end(), entry.records.begin(), entry.records.end());
    }
  }
  writer.join();
  EXPECT_EQ(records, (std::vector<std::string>{"c0", "c1", "c2"}));
  EXPECT_EQ(follower->CurrentRevision(), 3);
}

TEST_F(EtcdStoreTest, LeasedKeysDisappearWithTheirLease) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<EtcdStore> store, OpenStore());
  EtcdClient& client = store->client();
  ASSERT_OK_AND_ASSIGN(etcdserverpb::LeaseGrantResponse lease, client.LeaseGrant(5));
  ASSERT_OK_AND_ASSIGN(int64_t ttl, client.LeaseKeepAliveOnce(lease.id()));
  EXPECT_GT(ttl, 0);
  etcdserverpb::TxnRequest txn;
  auto* put = txn.add_success()->mutable_request_put();
  put->set_key(absl::StrCat(prefix_, "ephemeral"));
  put->set_lease(lease.id());
  ASSERT_OK(client.Txn(txn).status());
  EXPECT_EQ(RawCount(*store, "ephemeral"), 1);
  ASSERT_OK(client.LeaseRevoke(lease.id()));
  EXPECT_EQ(RawCount(*store, "ephemeral"), 0);
  EXPECT_EQ(client.LeaseKeepAliveOnce(lease.id()).status().code(), absl::StatusCode::kNotFound);
}

TEST(EtcdStoreOptionsTest, BadEndpointsAndOptionsAreNamed) {
  EXPECT_EQ(ParseEtcdEndpoints("").status().code(), absl::StatusCode::kInvalidArgument);
  absl::Status bad = ParseEtcdEndpoints("127.0.0.1:2379,nohost").status();
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("\"nohost\""), std::string::npos) << bad;
  EXPECT_EQ(ParseEtcdEndpoints("ftp://a:1").status().code(), absl::StatusCode::kInvalidArgument);
  ASSERT_OK_AND_ASSIGN(std::vector<std::string> endpoints,
                       ParseEtcdEndpoints("127.0.0.1:2379, https://etcd-0:2379"));
  EXPECT_EQ(endpoints, (std::vector<std::string>{"127.0.0.1:2379", "https://etcd-0:2379"}));

  EtcdStoreOptions options;
  options.connection.endpoints = {"127.0.0.1:1"};
  options.key_prefix = "";
  EXPECT_EQ(EtcdStore::Open(options).status().code(), absl::StatusCode::kInvalidArgument);
  options.key_prefix = "/p/";
  options.connection.cert_file = "/nonexistent.pem";
  EXPECT_EQ(EtcdStore::Open(options).status().code(), absl::StatusCode::kInvalidArgument);
}

// etcd serving clients only over TLS with client certificates (--client-cert-auth).
TEST(EtcdStoreTlsTest, ConnectsWithCaAndClientCertificate) {
  TOLLGATE_SKIP_WITHOUT_ETCD();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<EtcdCluster> etcd,
                       EtcdCluster::Start({.members = 1, .tls = true}));
  EtcdStoreOptions options = OptionsFor(etcd->ClientEndpoints(), FreshPrefix());
  options.connection.ca_file = etcd->ca_file();
  options.connection.cert_file = etcd->client_cert_file();
  options.connection.key_file = etcd->client_key_file();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<EtcdStore> store, EtcdStore::Open(options));
  WriteBatch batch;
  batch.Put("k", "v");
  ASSERT_OK_AND_ASSIGN(int64_t revision, store->Commit(batch));
  EXPECT_EQ(revision, 1);
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> value, store->Get("k"));
  EXPECT_EQ(value, "v");

  // Without the client certificate etcd refuses the connection: no store.
  options.connection.cert_file.clear();
  options.connection.key_file.clear();
  options.connection.rpc_timeout = absl::Seconds(1);
  EXPECT_FALSE(EtcdStore::Open(options).ok());
  // Plain text to a TLS port fails too.
  options.connection.ca_file.clear();
  EXPECT_FALSE(EtcdStore::Open(options).ok());
}

// ---- Failures of etcd itself (clusters of their own) ----

TEST(EtcdStoreFailureTest, KillNineAndRestartOfEtcdKeepsAcknowledgedData) {
  TOLLGATE_SKIP_WITHOUT_ETCD();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<EtcdCluster> etcd, EtcdCluster::Start({.members = 1}));
  const std::string prefix = FreshPrefix();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<EtcdStore> store,
                       EtcdStore::Open(OptionsFor(etcd->ClientEndpoints(), prefix)));
  const StoreIdentity identity = store->Identity();
  for (int i = 1; i <= 20; ++i) {
    WriteBatch batch;
    batch.Put(absl::StrCat("k", i), absl::StrCat(i));
    batch.AppendChange(absl::StrCat("c", i));
    ASSERT_OK(store->Commit(batch).status());
  }
  ASSERT_OK(store->Commit(BigBatch("big/", 200, 10000, 'z')).status());
  ASSERT_OK(etcd->Kill(0));
  ASSERT_OK(etcd->Restart(0));
  ASSERT_OK(etcd->WaitHealthy(absl::Seconds(30)));

  ASSERT_OK_AND_ASSIGN(std::unique_ptr<EtcdStore> reopened,
                       EtcdStore::Open(OptionsFor(etcd->ClientEndpoints(), prefix)));
  EXPECT_EQ(reopened->Identity(), identity);
  EXPECT_EQ(reopened->CurrentRevision(), 21);
  EXPECT_EQ(CountKeys(*reopened, "k"), 20);
  EXPECT_EQ(CountKeys(*reopened, "big/"), 200);
  ASSERT_OK_AND_ASSIGN(std::vector<ChangeLogEntry> changes, reopened->ReadChanges(0, 100));
  EXPECT_EQ(changes.size(), 21u);
  // The store object from before the crash reconnects and goes on.
  WriteBatch after;
  after.Put("after", "1");
  absl::StatusOr<int64_t> revision = store->Commit(after);
  ASSERT_OK(revision.status());
  EXPECT_EQ(*revision, 22);
}

TEST(EtcdStoreFailureTest, OneMemberOfThreeLostCommitsContinue) {
  TOLLGATE_SKIP_WITHOUT_ETCD();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<EtcdCluster> etcd, EtcdCluster::Start({.members = 3}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<EtcdStore> store,
                       EtcdStore::Open(OptionsFor(etcd->ClientEndpoints(), FreshPrefix())));
  WriteBatch before;
  before.Put("before", "1");
  ASSERT_OK(store->Commit(before).status());
  // The member the store is talking to (the first endpoint) dies.
  ASSERT_OK(etcd->Kill(0));
  for (int i = 0; i < 10; ++i) {
    WriteBatch batch;
    batch.Put(absl::StrCat("during/", i), "v");
    absl::StatusOr<int64_t> revision = store->Commit(batch);
    ASSERT_OK(revision.status());
    EXPECT_EQ(*revision, i + 2);
  }
  EXPECT_EQ(CountKeys(*store, "during/"), 10);
}

TEST(EtcdStoreFailureTest, QuorumLostWritesFailUnavailableAndNothingAcknowledgedIsLost) {
  TOLLGATE_SKIP_WITHOUT_ETCD();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<EtcdCluster> etcd, EtcdCluster::Start({.members = 3}));
  EtcdStoreOptions options = OptionsFor(etcd->ClientEndpoints(), FreshPrefix());
  options.connection.rpc_timeout = absl::Seconds(1);
  options.commit_timeout = absl::Seconds(2);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<EtcdStore> store, EtcdStore::Open(options));
  std::vector<std::string> acknowledged;
  for (int i = 0; i < 5; ++i) {
    WriteBatch batch;
    batch.Put(absl::StrCat("ack/", i), "v");
    ASSERT_OK(store->Commit(batch).status());
    acknowledged.push_back(absl::StrCat("ack/", i));
  }
  ASSERT_OK(etcd->Kill(1));
  ASSERT_OK(etcd->Kill(2));
  WriteBatch lost;
  lost.Put("unknown/1", "v");
  absl::Status failed = store->Commit(lost).status();
  EXPECT_EQ(failed.code(), absl::StatusCode::kUnavailable) << failed;
  EXPECT_EQ(store->Get("ack/0").status().code(), absl::StatusCode::kUnavailable);

  ASSERT_OK(etcd->Restart(1));
  ASSERT_OK(etcd->Restart(2));
  ASSERT_OK(etcd->WaitHealthy(absl::Seconds(30)));
  WriteBatch after;
  after.Put("after", "v");
  absl::StatusOr<int64_t> revision;
  // The first call after the outage may still meet a member catching up: retry within a
  // deadline, as tollgated's executor would.
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  do {
    revision = store->Commit(after);
  } while (!revision.ok() && absl::Now() < deadline);
  ASSERT_OK(revision.status());
  // The commit whose outcome was unknown either applied (6) or was fenced off; never both, and
  // never a gap.
  EXPECT_TRUE(*revision == 6 || *revision == 7) << *revision;
  for (const std::string& key : acknowledged) {
    ASSERT_OK_AND_ASSIGN(std::optional<std::string> value, store->Get(key));
    EXPECT_EQ(value, "v") << key;
  }
  ASSERT_OK_AND_ASSIGN(std::vector<ChangeLogEntry> changes, store->ReadChanges(0, 100));
  ASSERT_EQ(static_cast<int64_t>(changes.size()), *revision);
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> unknown, store->Get("unknown/1"));
  EXPECT_EQ(unknown.has_value(), *revision == 7);
}

}  // namespace
}  // namespace tollgate::storage
