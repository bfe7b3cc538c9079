// LeaderElection against a real etcd on loopback: who leads, hand-over on resign and on a lost
// lease, and the fencing property a leader's writes rely on.
#include "services/ha/leader_election.h"

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "core/real_clock.h"
#include "etcd/etcdserver/etcdserverpb/rpc.grpc.pb.h"
#include "gtest/gtest.h"
#include "services/ha/etcd_keys.h"
#include "storage/etcd_client.h"
#include "test/support/etcd_cluster.h"

namespace tollgate::ha {
namespace {

using test_support::EtcdCluster;
using test_support::EtcdClusterOptions;

constexpr absl::Duration kWait = absl::Seconds(15);

class LeaderElectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    TOLLGATE_SKIP_WITHOUT_ETCD();
    absl::StatusOr<std::unique_ptr<EtcdCluster>> etcd = EtcdCluster::Start(EtcdClusterOptions{});
    ASSERT_TRUE(etcd.ok()) << etcd.status();
    etcd_ = *std::move(etcd);
    storage::EtcdConnectionOptions connection;
    connection.endpoints = {etcd_->ClientEndpoint(0)};
    connection.rpc_timeout = absl::Milliseconds(500);
    absl::StatusOr<std::unique_ptr<storage::EtcdClient>> client =
        storage::EtcdClient::Connect(connection);
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = *std::move(client);
  }

  std::unique_ptr<LeaderElection> Candidate(const std::string& advertise) {
    LeaderElection::Options options;
    options.prefix = "/test/election/";
    options.advertise = advertise;
    options.lease_ttl = absl::Seconds(2);
    absl::StatusOr<std::unique_ptr<LeaderElection>> election =
        LeaderElection::Start(*client_, clock_, options);
    EXPECT_TRUE(election.ok()) << election.status();
    return election.ok() ? *std::move(election) : nullptr;
  }

  // Waits until `election` sees `predicate` hold or the deadline passes.
  template <typename Predicate>
  LeaderElection::View AwaitView(const LeaderElection& election, Predicate predicate) {
    const absl::Time deadline = absl::Now() + kWait;
    LeaderElection::View view = election.view();
    while (!predicate(view) && absl::Now() < deadline) {
      view = election.WaitForChange(view.generation, deadline);
    }
    return view;
  }

  // A write fenced on `leadership`, as the leader's store makes it: true when etcd applied it.
  bool FencedPut(const Leadership& leadership, const std::string& key) {
    etcdserverpb::TxnRequest txn;
    etcdserverpb::Compare* fence = txn.add_compare();
    fence->set_key(leadership.key);
    fence->set_target(etcdserverpb::Compare::CREATE);
    fence->set_result(etcdserverpb::Compare::EQUAL);
    fence->set_create_revision(leadership.create_revision);
    etcdserverpb::PutRequest* put = txn.add_success()->mutable_request_put();
    put->set_key(key);
    put->set_value("written");
    absl::StatusOr<etcdserverpb::TxnResponse> response = client_->Txn(txn);
    EXPECT_TRUE(response.ok()) << response.status();
    return response.ok() && response->succeeded();
  }

  core::RealClock clock_;
  std::unique_ptr<EtcdCluster> etcd_;
  std::unique_ptr<storage::EtcdClient> client_;
};

TEST_F(LeaderElectionTest, RejectsBadOptions) {
  LeaderElection::Options options;
  options.advertise = "a:1";
  options.lease_ttl = absl::Milliseconds(500);
  absl::StatusOr<std::unique_ptr<LeaderElection>> election =
      LeaderElection::Start(*client_, clock_, options);
  EXPECT_TRUE(absl::IsInvalidArgument(election.status())) << election.status();
  EXPECT_NE(election.status().message().find("500ms"), std::string::npos);
  options.lease_ttl = absl::Seconds(2);
  options.advertise = "";
  EXPECT_TRUE(absl::IsInvalidArgument(LeaderElection::Start(*client_, clock_, options).status()));
}

TEST_F(LeaderElectionTest, FirstCandidateLeadsAndOthersSeeItsAddress) {
  std::unique_ptr<LeaderElection> first = Candidate("first:1");
  ASSERT_NE(first, nullptr);
  absl::StatusOr<Leadership> leadership = first->WaitForLeadership(absl::Now() + kWait);
  ASSERT_TRUE(leadership.ok()) << leadership.status();
  EXPECT_GT(leadership->create_revision, 0);
  EXPECT_EQ(leadership->key.rfind("/test/election/", 0), 0u) << leadership->key;

  std::unique_ptr<LeaderElection> second = Candidate("second:2");
  ASSERT_NE(second, nullptr);
  const LeaderElection::View seen =
      AwaitView(*second, [](const LeaderElection::View& v) { return !v.leader_address.empty(); });
  EXPECT_FALSE(seen.leader);
  EXPECT_EQ(seen.leader_address, "first:1");
  EXPECT_TRUE(first->view().leader);
  EXPECT_EQ(first->view().leader_address, "first:1");
}

TEST_F(LeaderElectionTest, ResignHandsOverAtOnce) {
  std::unique_ptr<LeaderElection> first = Candidate("first:1");
  ASSERT_NE(first, nullptr);
  ASSERT_TRUE(first->WaitForLeadership(absl::Now() + kWait).ok());
  std::unique_ptr<LeaderElection> second = Candidate("second:2");
  ASSERT_NE(second, nullptr);
  AwaitView(*second, [](const LeaderElection::View& v) { return !v.leader_address.empty(); });
  ASSERT_FALSE(second->view().leader);

  const absl::Time resigned = absl::Now();
  first->Resign();
  EXPECT_FALSE(first->view().leader);
  absl::StatusOr<Leadership> taken = second->WaitForLeadership(absl::Now() + kWait);
  ASSERT_TRUE(taken.ok()) << taken.status();
  // The lease was revoked, so the hand-over does not wait out the 2 s TTL.
  EXPECT_LT(absl::Now() - resigned, absl::Seconds(2));
  EXPECT_EQ(second->view().leader_address, "second:2");
}

TEST_F(LeaderElectionTest, LostLeaseStepsDownAndFencesTheOldLeadership) {
  std::unique_ptr<LeaderElection> first = Candidate("first:1");
  ASSERT_NE(first, nullptr);
  absl::StatusOr<Leadership> old = first->WaitForLeadership(absl::Now() + kWait);
  ASSERT_TRUE(old.ok()) << old.status();
  std::unique_ptr<LeaderElection> second = Candidate("second:2");
  ASSERT_NE(second, nullptr);
  EXPECT_TRUE(FencedPut(*old, "/test/data/while-leading"));

  // etcd drops the leader's lease behind its back (what expiry does to a paused leader).
  ASSERT_TRUE(client_->LeaseRevoke(old->lease_id).ok());

  const LeaderElection::View stepped =
      AwaitView(*first, [](const LeaderElection::View& v) { return !v.leader; });
  EXPECT_FALSE(stepped.leader);
  EXPECT_FALSE(stepped.last_loss.empty());
  absl::StatusOr<Leadership> taken = second->WaitForLeadership(absl::Now() + kWait);
  ASSERT_TRUE(taken.ok()) << taken.status();
  EXPECT_NE(taken->key, old->key);

  // The old leadership can never write again; the new one can.
  EXPECT_FALSE(FencedPut(*old, "/test/data/after-losing"));
  EXPECT_TRUE(FencedPut(*taken, "/test/data/new-leader"));
  // The old leader campaigns again, as a follower of the new one.
  const LeaderElection::View again = AwaitView(
      *first, [](const LeaderElection::View& v) { return v.leader_address == "second:2"; });
  EXPECT_FALSE(again.leader);
  EXPECT_EQ(again.leader_address, "second:2");
}

TEST(PrefixEndTest, CoversThePrefix) {
  EXPECT_EQ(PrefixEnd("/a/"), "/a0");
  EXPECT_EQ(PrefixEnd(std::string("a\xff", 2)), "b");
  EXPECT_EQ(PrefixEnd(""), std::string(1, '\0'));
}

}  // namespace
}  // namespace tollgate::ha
