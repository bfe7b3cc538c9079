// What tollgate-multikueue reads from a workload and a worker's copy, and the copy it submits.

#include "adapters/multikueue/remote_views.h"

#include <string>

#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace tollgate::multikueue {
namespace {

v1::Workload Parse(const std::string& text) {
  v1::Workload wl;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &wl)) << text;
  return wl;
}

const char kManager[] = R"pb(
  metadata {
    namespace: "team"
    name: "train"
    labels { key: "app" value: "llm" }
    resource_version: 12
  }
  spec {
    queue_name: "q"
    priority_class_name: "high"
    pod_sets {
      name: "main"
      count: 2
      requests { key: "cpu" value: "2" }
    }
  }
  status {
    state: WORKLOAD_STATE_QUOTA_RESERVED
    priority: 100
    admission_checks { name: "mk" state: "Pending" }
    nominated_cluster_names: "w1"
  }
)pb";

TEST(RemoteViewsTest, TheCopyKeepsWhatNamesTheWorkAndCarriesTheOrigin) {
  const v1::Workload copy = CopyOf(Parse(kManager), "east");
  EXPECT_EQ(copy.metadata().namespace_(), "team");
  EXPECT_EQ(copy.metadata().name(), "train");
  EXPECT_EQ(copy.metadata().labels().at("app"), "llm");
  EXPECT_EQ(copy.metadata().labels().at(std::string(kOriginLabel)), "east");
  EXPECT_EQ(copy.metadata().resource_version(), 0);
  EXPECT_EQ(copy.spec().queue_name(), "q");
  // The effective priority travels, not the class the worker may not have.
  EXPECT_EQ(copy.spec().priority(), 100);
  EXPECT_TRUE(copy.spec().priority_class_name().empty());
  ASSERT_EQ(copy.spec().pod_sets_size(), 1);
  EXPECT_EQ(copy.spec().pod_sets(0).requests().at("cpu"), "2");
  EXPECT_FALSE(copy.has_status());
  EXPECT_TRUE(HasOrigin(copy, "east"));
  EXPECT_FALSE(HasOrigin(copy, "west"));
  EXPECT_FALSE(HasOrigin(Parse(kManager), "east"));
}

TEST(RemoteViewsTest, LocalViewReadsQuotaCheckAndWinner) {
  v1::Workload wl = Parse(kManager);
  core::LocalView local = LocalViewOf(wl, "mk");
  EXPECT_TRUE(local.holds_quota);
  EXPECT_FALSE(local.finished);
  EXPECT_EQ(local.check_state, core::CheckState::kPending);
  EXPECT_FALSE(local.cluster_name.has_value());
  EXPECT_FALSE(local.evicted_message.has_value());

  wl.mutable_status()->set_cluster_name("w1");
  wl.mutable_status()->mutable_admission_checks(0)->set_state("Ready");
  wl.mutable_status()->set_state(v1::WORKLOAD_STATE_EVICTING);
  v1::Condition* evicted = wl.mutable_status()->add_conditions();
  evicted->set_type("Evicted");
  evicted->set_status("True");
  evicted->set_message("Preempted to accommodate a higher priority workload");
  local = LocalViewOf(wl, "mk");
  EXPECT_EQ(local.cluster_name, "w1");
  EXPECT_EQ(local.check_state, core::CheckState::kReady);
  EXPECT_EQ(local.evicted_message, "Preempted to accommodate a higher priority workload");

  wl.mutable_status()->set_state(v1::WORKLOAD_STATE_FINISHED);
  local = LocalViewOf(wl, "mk");
  EXPECT_FALSE(local.holds_quota);
  EXPECT_TRUE(local.finished);
}

TEST(RemoteViewsTest, RemoteCopyReadsTheWorkersConditionsAndSpecSync) {
  const v1::Workload manager = Parse(kManager);
  v1::Workload copy = CopyOf(manager, "multikueue");
  core::RemoteCopy remote = RemoteCopyOf(copy, manager);
  EXPECT_FALSE(remote.admitted_since.has_value());
  EXPECT_TRUE(remote.spec_in_sync);

  copy.mutable_status()->set_state(v1::WORKLOAD_STATE_ADMITTED);
  v1::Condition* admitted = copy.mutable_status()->add_conditions();
  admitted->set_type("Admitted");
  admitted->set_status("True");
  admitted->mutable_last_transition_time()->set_seconds(1767225600);
  remote = RemoteCopyOf(copy, manager);
  EXPECT_EQ(remote.admitted_since, absl::FromUnixSeconds(1767225600));

  copy.mutable_status()->set_state(v1::WORKLOAD_STATE_FINISHED);
  v1::Condition* finished = copy.mutable_status()->add_conditions();
  finished->set_type("Finished");
  finished->set_status("True");
  finished->set_reason("Failed");
  finished->set_message("Job failed: BackoffLimitExceeded");
  remote = RemoteCopyOf(copy, manager);
  EXPECT_FALSE(remote.admitted_since.has_value());
  ASSERT_TRUE(remote.finished.has_value());
  EXPECT_EQ(remote.finished->reason, "Failed");
  EXPECT_EQ(remote.finished->message, "Job failed: BackoffLimitExceeded");

  // Another count is another job: out of sync.
  copy.mutable_spec()->mutable_pod_sets(0)->set_count(3);
  EXPECT_FALSE(RemoteCopyOf(copy, manager).spec_in_sync);
}

}  // namespace
}  // namespace tollgate::multikueue
