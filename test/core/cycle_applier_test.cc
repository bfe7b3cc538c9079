// AdmitNow: one workload planned ahead of queue order through AdmissionPlanner::PlanOne and
// applied as a cycle plan.
#include <string>
#include <vector>

#include "core/cluster_state.h"
#include "gtest/gtest.h"

namespace tollgate::core {
namespace {

const absl::Time kStart = absl::FromUnixSeconds(1767225600);

WorkloadSpec GpuJob(std::string name, int32_t gpus, int32_t priority) {
  WorkloadSpec spec;
  spec.name = std::move(name);
  spec.namespace_name = "ml";
  spec.queue_name = "q";
  spec.priority = priority;
  spec.pod_sets = {PodSetSpec{"main", gpus, std::nullopt, {{"gpu", 1}}, {}, {}}};
  return spec;
}

class AdmitNowTest : public ::testing::Test {
 protected:
  AdmitNowTest() : state_(SchedulerConfig{}) {
    EXPECT_TRUE(state_.ApplyResourceFlavor({"a100", {}, {}, {}}, now_).ok());
    ClusterQueueSpec cq;
    cq.name = "cq";
    cq.resource_groups = {{{"gpu"}, {{"a100", {{"gpu", 4, std::nullopt, std::nullopt}}}}}};
    cq.preemption.within_cluster_queue = PreemptionPolicy::kLowerPriority;
    EXPECT_TRUE(state_.ApplyClusterQueue(std::move(cq), now_).ok());
    EXPECT_TRUE(state_.ApplyLocalQueue({"ml", "q", "cq", StopPolicy::kNone, 1.0}, now_).ok());
  }

  WorkloadId Submit(WorkloadSpec spec) {
    now_ += absl::Milliseconds(1);
    absl::StatusOr<SubmitOutcome> outcome = state_.Submit(std::move(spec), "", now_);
    EXPECT_TRUE(outcome.ok()) << outcome.status();
    return outcome.ok() ? outcome->id : 0;
  }

  WorkloadState StateOf(WorkloadId id) const { return state_.workload(id)->status.state; }

  absl::Time now_ = kStart;
  ClusterState state_;
};

TEST_F(AdmitNowTest, AdmitsAWorkloadThatFitsWithoutACycle) {
  const WorkloadId id = Submit(GpuJob("small", 2, 0));
  absl::StatusOr<AdmitNowResult> dry = state_.AdmitNow("ml/small", /*dry_run=*/true, now_);
  ASSERT_TRUE(dry.ok()) << dry.status();
  EXPECT_EQ(dry->outcome, AdmitNowResult::Outcome::kAdmitted);
  EXPECT_EQ(dry->admission.cluster_queue, "cq");
  EXPECT_EQ(StateOf(id), WorkloadState::kPending);

  absl::StatusOr<AdmitNowResult> real = state_.AdmitNow("ml/small", /*dry_run=*/false, now_);
  ASSERT_TRUE(real.ok()) << real.status();
  EXPECT_EQ(real->outcome, AdmitNowResult::Outcome::kAdmitted);
  EXPECT_EQ(real->admission, dry->admission);
  EXPECT_EQ(StateOf(id), WorkloadState::kAdmitted);
  EXPECT_EQ(*state_.workload(id)->status.admission, real->admission);
  EXPECT_EQ(state_.ClusterQueueCounts("cq").admitted, 1);
  EXPECT_EQ(state_.QueuedIn(id), nullptr);
}

TEST_F(AdmitNowTest, PreemptsLowerPriorityVictimsThenAdmits) {
  const WorkloadId low = Submit(GpuJob("low", 4, 0));
  ASSERT_TRUE(state_.AdmitNow("ml/low", false, now_).ok());
  ASSERT_EQ(StateOf(low), WorkloadState::kAdmitted);
  const WorkloadId high = Submit(GpuJob("high", 4, 10));

  absl::StatusOr<AdmitNowResult> dry = state_.AdmitNow("ml/high", /*dry_run=*/true, now_);
  ASSERT_TRUE(dry.ok()) << dry.status();
  EXPECT_EQ(dry->outcome, AdmitNowResult::Outcome::kPreempting);
  EXPECT_EQ(dry->victims, std::vector<WorkloadId>{low});
  EXPECT_NE(dry->message.find("Pending the preemption of 1 workload(s)"), std::string::npos)
      << dry->message;
  EXPECT_EQ(StateOf(low), WorkloadState::kAdmitted);

  absl::StatusOr<AdmitNowResult> real = state_.AdmitNow("ml/high", /*dry_run=*/false, now_);
  ASSERT_TRUE(real.ok()) << real.status();
  EXPECT_EQ(real->outcome, AdmitNowResult::Outcome::kPreempting);
  // Evictions need no acknowledgement here: the victim is back in its queue at once.
  EXPECT_EQ(StateOf(low), WorkloadState::kPending);
  EXPECT_EQ(state_.workload(low)->status.history().last_preemption_reason, "InClusterQueue");
  EXPECT_EQ(state_.workload(high)->status.pending_message, real->message);
  // Kueue's reason for a preemptor waiting for its victims; the victim, requeued, waits for its
  // evaluation.
  EXPECT_TRUE(HasPendingCondition(state_.workload(high)->status,
                                  PendingReason::kWaitingForPreemptedWorkloads));
  EXPECT_TRUE(HasPendingCondition(state_.workload(low)->status, PendingReason::kPendingEvaluation));

  absl::StatusOr<AdmitNowResult> after = state_.AdmitNow("ml/high", false, now_);
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(after->outcome, AdmitNowResult::Outcome::kAdmitted);
  EXPECT_EQ(StateOf(high), WorkloadState::kAdmitted);
}

TEST_F(AdmitNowTest, ReportsWhyAWorkloadCannotBeAdmittedAndChangesNothing) {
  const WorkloadId id = Submit(GpuJob("huge", 8, 0));
  absl::StatusOr<AdmitNowResult> result = state_.AdmitNow("ml/huge", false, now_);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->outcome, AdmitNowResult::Outcome::kPending);
  EXPECT_FALSE(result->message.empty());
  EXPECT_TRUE(result->victims.empty());
  EXPECT_EQ(StateOf(id), WorkloadState::kPending);
  EXPECT_EQ(state_.AdmitNow("ml/absent", false, now_).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(AdmitNowTest, APendingDecisionRewritesTheReasonWhenOnlyTheCauseChanged) {
  const WorkloadId id = Submit(GpuJob("w", 1, 0));
  CyclePlan plan;
  plan.cycle = 1;
  PendingDecision pending;
  pending.id = id;
  pending.message = "same message";
  pending.reason = PendingReason::kWaitingForQuota;
  plan.pending.push_back(std::move(pending));
  state_.ApplyCycle(plan, now_);
  EXPECT_TRUE(HasPendingCondition(state_.workload(id)->status, PendingReason::kWaitingForQuota));
  plan.pending[0].reason = PendingReason::kWaitingForPreemptedWorkloads;
  state_.ApplyCycle(plan, now_);
  EXPECT_TRUE(HasPendingCondition(state_.workload(id)->status,
                                  PendingReason::kWaitingForPreemptedWorkloads));
  EXPECT_EQ(state_.workload(id)->status.pending_message, "same message");
}

}  // namespace
}  // namespace tollgate::core
