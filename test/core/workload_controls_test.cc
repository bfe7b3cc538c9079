#include <string>

#include "core/cluster_state.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

// Deactivate / activate (spec.active), reprioritize, and stopping queues by their stopPolicy.

namespace tollgate::core {
namespace {

using ::testing::HasSubstr;

const absl::Time kStart = absl::FromUnixSeconds(1767225600);

WorkloadSpec GpuJob(std::string name, int32_t gpus, int32_t priority = 0) {
  WorkloadSpec spec;
  spec.name = std::move(name);
  spec.namespace_name = "ns";
  spec.queue_name = "q";
  spec.priority = priority;
  spec.pod_sets = {PodSetSpec{"main", gpus, std::nullopt, {{"gpu", 1}}, {}, {}}};
  return spec;
}

class WorkloadControlsTest : public ::testing::Test {
 protected:
  WorkloadControlsTest() : state_(SchedulerConfig{}) {
    EXPECT_TRUE(state_.ApplyResourceFlavor({"a100", {}, {}, {}}, now_).ok());
    cq_.name = "cq";
    cq_.resource_groups = {{{"gpu"}, {{"a100", {{"gpu", 8, std::nullopt, std::nullopt}}}}}};
    cq_.preemption.within_cluster_queue = PreemptionPolicy::kLowerPriority;
    EXPECT_TRUE(state_.ApplyClusterQueue(cq_, now_).ok());
    EXPECT_TRUE(state_.ApplyLocalQueue({"ns", "q", "cq", StopPolicy::kNone, 1.0}, now_).ok());
  }

  void Submit(WorkloadSpec spec) {
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

  const Workload& Wl(const std::string& name) { return *state_.FindWorkload("ns/" + name); }

  absl::Time now_ = kStart;
  ClusterQueueSpec cq_;
  ClusterState state_;
};

TEST_F(WorkloadControlsTest, DeactivatingEvictsAndKeepsItOutUntilActivated) {
  Submit(GpuJob("a", 8));
  Settle();
  ASSERT_EQ(Wl("a").status.state, WorkloadState::kAdmitted);
  ASSERT_TRUE(state_.SetActive("ns/a", false, now_).ok());
  EXPECT_EQ(Wl("a").status.state, WorkloadState::kPending);
  EXPECT_FALSE(Wl("a").spec.active);
  EXPECT_EQ(FindCondition(Wl("a").status, "Evicted")->reason, "Deactivated");
  EXPECT_EQ(Wl("a").status.pending_message, "The workload is deactivated");
  EXPECT_EQ(state_.QueuedIn(Wl("a").id), nullptr);
  Submit(GpuJob("b", 8));
  Settle();
  EXPECT_EQ(Wl("b").status.state, WorkloadState::kAdmitted);
  // Idempotent.
  ASSERT_TRUE(state_.SetActive("ns/a", false, now_).ok());

  ASSERT_TRUE(state_.Finish("ns/b", "", now_).ok());
  ASSERT_TRUE(state_.SetActive("ns/a", true, now_).ok());
  EXPECT_TRUE(Wl("a").spec.active);
  Settle();
  EXPECT_EQ(Wl("a").status.state, WorkloadState::kAdmitted);
}

// Kueue's DeactivationTarget: the cause names the eviction (MultiKueue's local eviction).
TEST_F(WorkloadControlsTest, ADeactivationWithACauseNamesItInTheEviction) {
  Submit(GpuJob("a", 8));
  Submit(GpuJob("b", 4));
  Settle();
  ASSERT_EQ(Wl("a").status.state, WorkloadState::kAdmitted);
  ASSERT_TRUE(state_
                  .SetActive("ns/a", false, now_,
                             DeactivationCause{"EvictedOnManagerCluster",
                                               "Evicted on manager: Preempted to accommodate"})
                  .ok());
  const Condition* evicted = FindCondition(Wl("a").status, "Evicted");
  ASSERT_NE(evicted, nullptr);
  EXPECT_TRUE(evicted->status);
  EXPECT_EQ(evicted->reason, "DeactivatedDueToEvictedOnManagerCluster");
  EXPECT_EQ(evicted->message,
            "The workload is deactivated due to Evicted on manager: Preempted to accommodate");
  EXPECT_EQ(Wl("a").status.pending_message,
            "The workload is deactivated due to Evicted on manager: Preempted to accommodate");
  bool named = false;
  for (const WorkloadEvent& event : Wl("a").status.events) {
    named = named || (event.reason == "EvictedDueToDeactivatedDueToEvictedOnManagerCluster");
  }
  EXPECT_TRUE(named);

  // A pending workload says the same while it waits.
  ASSERT_TRUE(state_.SetActive("ns/b", false, now_, DeactivationCause{"Custom", "ops"}).ok());
  EXPECT_EQ(Wl("b").status.pending_message, "The workload is deactivated due to ops");
  // Without a cause: the plain Deactivated, as before.
  ASSERT_TRUE(state_.SetActive("ns/a", true, now_).ok());
  Settle();
  ASSERT_EQ(Wl("a").status.state, WorkloadState::kAdmitted);
  ASSERT_TRUE(state_.SetActive("ns/a", false, now_, std::nullopt).ok());
  EXPECT_EQ(FindCondition(Wl("a").status, "Evicted")->reason, "Deactivated");
  EXPECT_EQ(FindCondition(Wl("a").status, "Evicted")->message, "The workload is deactivated");
}

TEST_F(WorkloadControlsTest, DeactivatingAPendingWorkloadTakesItOutOfItsQueue) {
  Submit(GpuJob("a", 8));
  Submit(GpuJob("b", 4));
  Settle();
  ASSERT_TRUE(state_.SetActive("ns/b", false, now_).ok());
  ASSERT_TRUE(state_.Finish("ns/a", "", now_).ok());
  Settle();
  EXPECT_EQ(Wl("b").status.state, WorkloadState::kPending);
  EXPECT_EQ(state_.PendingInLocalQueue("ns", "q").size(), 0u);
}

TEST_F(WorkloadControlsTest, FinishedWorkloadsRefuseControls) {
  Submit(GpuJob("a", 8));
  Settle();
  ASSERT_TRUE(state_.Finish("ns/a", "", now_).ok());
  EXPECT_EQ(state_.SetActive("ns/a", false, now_).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(state_.SetPriority("ns/a", 5, now_).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(state_.SetPriority("ns/nope", 5, now_).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(state_.SetActive("ns/nope", true, now_).code(), absl::StatusCode::kNotFound);
}

TEST_F(WorkloadControlsTest, ReprioritizeMovesAPendingWorkloadAhead) {
  Submit(GpuJob("running", 8));
  Submit(GpuJob("first", 8));
  Submit(GpuJob("second", 8));
  Settle();
  ASSERT_TRUE(state_.SetPriority("ns/second", 10, now_).ok());
  EXPECT_EQ(Wl("second").priority, 10);
  EXPECT_EQ(*Wl("second").spec.priority, 10);
  EXPECT_THAT(Wl("second").status.events.back().message, HasSubstr("from 0 to 10"));
  std::vector<PendingPosition> order = state_.PendingInLocalQueue("ns", "q");
  ASSERT_EQ(order.size(), 2u);
  EXPECT_EQ(state_.workload(order[0].id)->spec.name, "second");
  // Higher priority than what runs: it preempts under withinClusterQueue LowerPriority.
  Settle();
  EXPECT_EQ(Wl("second").status.state, WorkloadState::kAdmitted);
  EXPECT_EQ(Wl("running").status.state, WorkloadState::kPending);
}

TEST_F(WorkloadControlsTest, ReprioritizingAnAdmittedWorkloadChangesWhoMayPreemptIt) {
  Submit(GpuJob("a", 8, 5));
  Settle();
  Submit(GpuJob("b", 8, 1));
  Settle();
  ASSERT_EQ(Wl("b").status.state, WorkloadState::kPending);
  ASSERT_TRUE(state_.SetPriority("ns/a", 0, now_).ok());
  EXPECT_EQ(Wl("a").status.state, WorkloadState::kAdmitted);  // not evicted by the change
  Settle();
  EXPECT_EQ(Wl("b").status.state, WorkloadState::kAdmitted);
  EXPECT_EQ(Wl("a").status.state, WorkloadState::kPending);
}

TEST_F(WorkloadControlsTest, ActivatingClearsBackoffDeactivation) {
  Submit(GpuJob("a", 8));
  Workload* wl = state_.mutable_workload(Wl("a").id);
  wl->status.deactivated = true;
  wl->status.mutable_history().requeue_count = 3;
  ASSERT_TRUE(state_.SetActive("ns/a", true, now_).ok());
  EXPECT_FALSE(Wl("a").status.deactivated);
  EXPECT_EQ(Wl("a").status.history().requeue_count, 0);
}

TEST_F(WorkloadControlsTest, StopHoldKeepsRunningAndDrainEvicts) {
  Submit(GpuJob("a", 4));
  Settle();
  cq_.stop_policy = StopPolicy::kHold;
  ASSERT_TRUE(state_.ApplyClusterQueue(cq_, now_).ok());
  Submit(GpuJob("b", 4));
  Settle();
  EXPECT_EQ(Wl("a").status.state, WorkloadState::kAdmitted);
  EXPECT_EQ(Wl("b").status.state, WorkloadState::kPending);
  cq_.stop_policy = StopPolicy::kHoldAndDrain;
  ASSERT_TRUE(state_.ApplyClusterQueue(cq_, now_).ok());
  EXPECT_EQ(Wl("a").status.state, WorkloadState::kPending);
  cq_.stop_policy = StopPolicy::kNone;
  ASSERT_TRUE(state_.ApplyClusterQueue(cq_, now_).ok());
  Settle();
  EXPECT_EQ(Wl("a").status.state, WorkloadState::kAdmitted);
  EXPECT_EQ(Wl("b").status.state, WorkloadState::kAdmitted);
}

}  // namespace
}  // namespace tollgate::core
