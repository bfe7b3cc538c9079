#include "core/visibility.h"

#include <optional>
#include <string>
#include <utility>

#include "core/admission_gates.h"
#include "core/cluster_state.h"
#include "gtest/gtest.h"

// The queue counts a LocalQueue's and a ClusterQueue's status report: Kueue's pendingWorkloads
// counts the workloads in its queue manager, which IsAdmissible keeps gated, deactivated, held
// and replacement-waiting workloads out of (pkg/cache/queue/manager.go, PendingWorkloads and
// Pending; pkg/controller/core/localqueue_controller.go).

namespace tollgate::core {
namespace {

const absl::Time kStart = absl::FromUnixSeconds(1767225600);

class QueueCountsTest : public ::testing::Test {
 protected:
  QueueCountsTest() : state_(SchedulerConfig{}) {
    EXPECT_TRUE(state_.ApplyResourceFlavor({"default", {}, {}, {}}, now_).ok());
    ClusterQueueSpec cq;
    cq.name = "cq";
    cq.resource_groups = {{{"cpu"}, {{"default", {{"cpu", 2, std::nullopt, std::nullopt}}}}}};
    EXPECT_TRUE(state_.ApplyClusterQueue(cq, now_).ok());
    EXPECT_TRUE(state_.ApplyLocalQueue({"ns", "q", "cq", StopPolicy::kNone, 1.0}, now_).ok());
  }

  void Submit(std::string name, int32_t cpus, std::optional<std::string> gates = {},
              std::string queue = "q") {
    WorkloadSpec spec;
    spec.name = std::move(name);
    spec.namespace_name = "ns";
    spec.queue_name = std::move(queue);
    spec.pod_sets = {PodSetSpec{"main", cpus, std::nullopt, {{"cpu", 1}}, {}, {}}};
    if (gates.has_value()) {
      spec.metadata.mutable_value().annotations[std::string(kAdmissionGatedByAnnotation)] = *gates;
    }
    now_ += absl::Milliseconds(1);
    ASSERT_TRUE(state_.Submit(std::move(spec), "", now_).ok());
  }

  void Settle() {
    while (true) {
      CyclePlan plan = state_.PlanCycle(now_);
      state_.ApplyCycle(plan, now_);
      if (!plan.MadeProgress()) return;
    }
  }

  QueueCounts Local() { return LocalQueueCounts(state_, "ns", "q"); }
  QueueCounts Cluster() { return ClusterQueueCounts(state_, "cq"); }

  absl::Time now_ = kStart;
  ClusterState state_;
};

TEST_F(QueueCountsTest, CountsQueuedPendingReservingAndAdmittedWorkloads) {
  ASSERT_NO_FATAL_FAILURE(Submit("runs", 2));
  ASSERT_NO_FATAL_FAILURE(Submit("waits", 1));
  Settle();
  EXPECT_EQ(Local().pending, 1);
  EXPECT_EQ(Local().reserving, 1);
  EXPECT_EQ(Local().admitted, 1);
  EXPECT_EQ(Cluster().pending, 1);
  EXPECT_EQ(Cluster().reserving, 1);
}

// Each workload IsAdmissible keeps out of the queue manager is pending, yet neither queue counts
// it; each one that goes back into the queue counts again.
TEST_F(QueueCountsTest, WorkloadsKeptOutOfTheQueueAreNotPendingInIt) {
  ASSERT_NO_FATAL_FAILURE(Submit("runs", 2));
  ASSERT_NO_FATAL_FAILURE(Submit("gated", 1, "example.com/gate"));
  ASSERT_NO_FATAL_FAILURE(Submit("deactivated", 1));
  ASSERT_NO_FATAL_FAILURE(Submit("held", 1));
  ASSERT_NO_FATAL_FAILURE(Submit("replacing", 1));
  ASSERT_TRUE(state_.SetActive("ns/deactivated", false, now_).ok());
  ASSERT_TRUE(state_.SetOnHold("ns/held", true, "", now_).ok());
  ASSERT_TRUE(state_.SetWaitingForReplacementPods("ns/replacing", true, now_).ok());
  Settle();
  for (const char* name : {"gated", "deactivated", "held", "replacing"}) {
    EXPECT_EQ(state_.FindWorkload(std::string("ns/") + name)->status.state, WorkloadState::kPending)
        << name;
  }
  EXPECT_EQ(Local().pending, 0);
  EXPECT_EQ(Cluster().pending, 0);
  EXPECT_EQ(Local().reserving, 1);

  ASSERT_TRUE(state_.SetAdmissionGates("ns/gated", std::nullopt, now_).ok());
  ASSERT_TRUE(state_.SetActive("ns/deactivated", true, now_).ok());
  ASSERT_TRUE(state_.SetOnHold("ns/held", false, "", now_).ok());
  ASSERT_TRUE(state_.SetWaitingForReplacementPods("ns/replacing", false, now_).ok());
  Settle();
  EXPECT_EQ(Local().pending, 4);
  EXPECT_EQ(Cluster().pending, 4);
}

// Kueue's LocalQueue controller reports no pending workloads for a stopped LocalQueue (the queue
// manager drops it while stopped); its reservations still count.
TEST_F(QueueCountsTest, AStoppedLocalQueueHasNoPendingWorkloads) {
  ASSERT_NO_FATAL_FAILURE(Submit("runs", 2));
  ASSERT_NO_FATAL_FAILURE(Submit("waits", 1));
  Settle();
  ASSERT_TRUE(state_.ApplyLocalQueue({"ns", "q", "cq", StopPolicy::kHold, 1.0}, now_).ok());
  Settle();
  EXPECT_EQ(state_.FindWorkload("ns/waits")->status.state, WorkloadState::kPending);
  EXPECT_EQ(Local().pending, 0);
  EXPECT_EQ(Local().reserving, 1);
  EXPECT_EQ(Cluster().pending, 0);

  ASSERT_TRUE(state_.ApplyLocalQueue({"ns", "q", "cq", StopPolicy::kNone, 1.0}, now_).ok());
  EXPECT_EQ(Local().pending, 1);
}

// The queue manager keeps a LocalQueue's workloads whether or not its ClusterQueue exists, and
// its controller reports them.
TEST_F(QueueCountsTest, ALocalQueueWithoutItsClusterQueueCountsItsQueueableWorkloads) {
  ASSERT_TRUE(
      state_.ApplyLocalQueue({"ns", "orphan", "missing", StopPolicy::kNone, 1.0}, now_).ok());
  ASSERT_NO_FATAL_FAILURE(Submit("waits", 1, std::nullopt, "orphan"));
  ASSERT_NO_FATAL_FAILURE(Submit("gated", 1, "example.com/gate", "orphan"));
  Settle();
  EXPECT_EQ(LocalQueueCounts(state_, "ns", "orphan").pending, 1);
}

}  // namespace
}  // namespace tollgate::core
