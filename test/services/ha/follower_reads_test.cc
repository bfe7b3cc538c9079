// FollowerReads: a follower's read view over its warm copy, against a real etcd. A leader (the
// real executor over an EtcdStore) writes; the view must answer exactly what the leader answers
// at the same revision, move forward only when asked or when old, and never write.

#include "services/ha/follower_reads.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "core/real_clock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "storage/etcd_store.h"
#include "test/services/engine/executor_fixture.h"
#include "test/status_matchers.h"
#include "test/support/etcd_cluster.h"

namespace tollgate::ha {
namespace {

using google::protobuf::util::MessageDifferencer;
using test_support::EtcdCluster;

TEST(FollowerReadsPureTest, OnlyGetListAndWatchAreReads) {
  for (const char* verb : {"get", "list", "watch"}) EXPECT_TRUE(IsReadVerb(verb)) << verb;
  for (const char* verb : {"submit", "admit", "preempt", "finish", "report", "delete", "apply",
                           "stop", "deactivate", "reprioritize", "", "GET"}) {
    EXPECT_FALSE(IsReadVerb(verb)) << verb;
  }
}

TEST(FollowerReadsPureTest, MinRevisionParsesOrNamesTheHeaderAndValue) {
  EXPECT_EQ(*ParseMinRevision("", false), 0);
  EXPECT_EQ(*ParseMinRevision("0", true), 0);
  EXPECT_EQ(*ParseMinRevision("12345", true), 12345);
  for (const char* bad : {"", "-1", "12x", "soon", "99999999999999999999"}) {
    absl::StatusOr<int64_t> parsed = ParseMinRevision(bad, true);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_TRUE(absl::IsInvalidArgument(parsed.status()));
    EXPECT_NE(parsed.status().message().find("tollgate-min-revision"), std::string::npos);
    EXPECT_NE(parsed.status().message().find(absl::StrCat("\"", bad, "\"")), std::string::npos)
        << parsed.status();
  }
}

class FollowerReadsTest : public testing::Test {
 protected:
  void SetUp() override {
    TOLLGATE_SKIP_WITHOUT_ETCD();
    ASSERT_OK_AND_ASSIGN(etcd_, EtcdCluster::Shared());
    prefix_ = absl::StrCat("/follower-reads-test/", storage::NewStoreId(), "/");
    ASSERT_OK_AND_ASSIGN(leader_store_, OpenStore());
    ASSERT_OK_AND_ASSIGN(leader_, engine::AdmissionExecutor::Open(*leader_store_, clock_, {}, {}));
    leader_api_ = std::make_unique<engine::TollgateApi>(*leader_);
    engine::OneQueueConfig queue;
    queue.nominal_cpu = "2";
    ASSERT_OK(leader_api_->Apply(engine::OneQueueApplyRequest(queue)).status());
    for (int i = 0; i < 3; ++i) Submit(absl::StrCat("w", i));
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<storage::EtcdStore> follower_store, OpenStore());
    storage::EtcdMirror::Options mirror_options;
    mirror_options.watch_timeout = absl::Milliseconds(200);
    ASSERT_OK_AND_ASSIGN(mirror_,
                         storage::EtcdMirror::Start(std::move(follower_store), mirror_options));
    FollowerReads::Options options;
    options.leader_address = [] { return std::string("leader.example:50051"); };
    // Long, so only what a test asks for moves the view.
    options.max_view_age = absl::Hours(1);
    ASSERT_OK_AND_ASSIGN(reads_, FollowerReads::Open(mirror_, clock_, options));
  }
  void TearDown() override {
    reads_.reset();
    mirror_.reset();
    leader_api_.reset();
    leader_.reset();
  }

  absl::StatusOr<std::unique_ptr<storage::EtcdStore>> OpenStore() {
    storage::EtcdStoreOptions options;
    absl::StatusOr<std::vector<std::string>> endpoints =
        storage::ParseEtcdEndpoints(etcd_->ClientEndpoints());
    if (!endpoints.ok()) return endpoints.status();
    options.connection.endpoints = *endpoints;
    options.key_prefix = prefix_;
    return storage::EtcdStore::Open(options);
  }

  int64_t Submit(const std::string& name) {
    absl::StatusOr<v1::SubmitResponse> submitted =
        leader_api_->Submit(engine::OnePodSubmitRequest("team", name, "1"));
    EXPECT_OK(submitted.status());
    return submitted.ok() ? submitted->workload().metadata().resource_version() : -1;
  }

  // The leader's listing once it has stopped changing (admission settled).
  v1::ListWorkloadsResponse SettledLeaderList() {
    v1::ListWorkloadsResponse previous;
    for (int i = 0; i < 200; ++i) {
      absl::StatusOr<v1::ListWorkloadsResponse> listed = leader_api_->ListWorkloads({});
      EXPECT_OK(listed.status());
      if (i > 0 && listed->revision() == previous.revision()) return *listed;
      previous = *listed;
      // Waits for the executor's next commit (or 100 ms without one): a condition, not a sleep.
      leader_->WaitForRevision(previous.revision(), absl::Now() + absl::Milliseconds(100));
    }
    ADD_FAILURE() << "the leader never settled";
    return previous;
  }

  core::RealClock clock_;
  EtcdCluster* etcd_ = nullptr;
  std::string prefix_;
  std::unique_ptr<storage::EtcdStore> leader_store_;
  std::unique_ptr<engine::AdmissionExecutor> leader_;
  std::unique_ptr<engine::TollgateApi> leader_api_;
  std::shared_ptr<storage::EtcdMirror> mirror_;
  std::unique_ptr<FollowerReads> reads_;
};

TEST_F(FollowerReadsTest, AnswersAsTheLeaderAtTheSameRevision) {
  const v1::ListWorkloadsResponse on_leader = SettledLeaderList();
  ASSERT_EQ(on_leader.workloads_size(), 3);
  ASSERT_OK(reads_->Refresh(on_leader.revision(), absl::Now() + absl::Seconds(10)));
  EXPECT_EQ(reads_->revision(), on_leader.revision());
  ASSERT_OK_AND_ASSIGN(v1::ListWorkloadsResponse on_follower, reads_->api().ListWorkloads({}));
  EXPECT_TRUE(MessageDifferencer::Equals(on_leader, on_follower))
      << on_leader.DebugString() << "\n---\n"
      << on_follower.DebugString();

  v1::ListPendingWorkloadsRequest pending;
  pending.set_cluster_queue("cq");
  ASSERT_OK_AND_ASSIGN(v1::ListPendingWorkloadsResponse leader_pending,
                       leader_api_->ListPendingWorkloads(pending));
  ASSERT_OK_AND_ASSIGN(v1::ListPendingWorkloadsResponse follower_pending,
                       reads_->api().ListPendingWorkloads(pending));
  EXPECT_EQ(leader_pending.items_size(), 1);
  EXPECT_TRUE(MessageDifferencer::Equals(leader_pending, follower_pending))
      << leader_pending.DebugString() << "\n---\n"
      << follower_pending.DebugString();

  v1::GetObjectRequest get;
  get.mutable_ref()->set_kind(v1::CLUSTER_QUEUE);
  get.mutable_ref()->set_name("cq");
  ASSERT_OK_AND_ASSIGN(v1::ConfigObject leader_cq, leader_api_->GetObject(get));
  ASSERT_OK_AND_ASSIGN(v1::ConfigObject follower_cq, reads_->api().GetObject(get));
  EXPECT_TRUE(MessageDifferencer::Equals(leader_cq, follower_cq));
}

TEST_F(FollowerReadsTest, MovesForwardOnlyWhenAskedAndNeverAnswersOlder) {
  const v1::ListWorkloadsResponse settled = SettledLeaderList();
  ASSERT_OK(reads_->Refresh(settled.revision(), absl::Now() + absl::Seconds(10)));
  const int64_t reloads = reads_->stats().reloads;
  // Nothing asked beyond the view, and the view is young: no reload, however many reads.
  for (int i = 0; i < 50; ++i) ASSERT_OK(reads_->Refresh(0, absl::Now() + absl::Seconds(1)));
  EXPECT_EQ(reads_->stats().reloads, reloads);

  const int64_t written = Submit("later");
  ASSERT_OK(reads_->Refresh(written, absl::Now() + absl::Seconds(10)));
  EXPECT_GE(reads_->revision(), written);
  EXPECT_EQ(reads_->stats().reloads, reloads + 1);
  v1::GetWorkloadRequest get;
  get.mutable_workload()->set_namespace_("team");
  get.mutable_workload()->set_name("later");
  EXPECT_OK(reads_->api().GetWorkload(get).status());

  // A revision the copy does not reach in time: UNAVAILABLE naming both, the view unchanged.
  const int64_t at = reads_->revision();
  const absl::Status behind = reads_->Refresh(at + 1000, absl::Now() + absl::Milliseconds(300));
  EXPECT_TRUE(absl::IsUnavailable(behind)) << behind;
  EXPECT_NE(behind.message().find(absl::StrCat("behind the requested ", at + 1000)),
            std::string::npos)
      << behind;
  EXPECT_EQ(reads_->revision(), at);
}

TEST_F(FollowerReadsTest, AWriteThatBypassesTheGateChangesNothing) {
  const v1::ListWorkloadsResponse settled = SettledLeaderList();
  ASSERT_OK(reads_->Refresh(settled.revision(), absl::Now() + absl::Seconds(10)));
  // Straight to the view's API, past the gate's redirect: the frozen store refuses the commit.
  absl::StatusOr<v1::SubmitResponse> submitted =
      reads_->api().Submit(engine::OnePodSubmitRequest("team", "sneaky", "1"));
  EXPECT_FALSE(submitted.ok());
  // The view reloaded what it holds and still answers as before; etcd has nothing new.
  ASSERT_OK_AND_ASSIGN(v1::ListWorkloadsResponse after, reads_->api().ListWorkloads({}));
  EXPECT_EQ(after.workloads_size(), 3);
  EXPECT_EQ(after.revision(), settled.revision());
  ASSERT_OK_AND_ASSIGN(const int64_t stored, leader_store_->FetchRevision());
  EXPECT_EQ(stored, settled.revision());
}

TEST_F(FollowerReadsTest, CopyIsCurrentWhileFollowingAndStaleOnceStopped) {
  // The first confirmation comes within the mirror's confirm interval.
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (!reads_->freshness().current && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(20));  // polling a condition, bounded by `deadline`
  }
  EXPECT_TRUE(reads_->freshness().current) << reads_->freshness().reason;
  mirror_->Stop();
  const storage::EtcdMirror::Freshness stopped = reads_->freshness();
  EXPECT_FALSE(stopped.current);
  EXPECT_NE(stopped.reason.find("no longer follows etcd"), std::string::npos) << stopped.reason;
}

}  // namespace
}  // namespace tollgate::ha
