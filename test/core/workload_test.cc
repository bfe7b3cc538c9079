#include "core/workload.h"

#include "gtest/gtest.h"

namespace tollgate::core {
namespace {

const absl::Time kStart = absl::FromUnixSeconds(1767225600);

ClusterQueueSpec LimitedQueue(int32_t max_preemptions, absl::Duration window) {
  ClusterQueueSpec cq;
  cq.name = "cq";
  cq.max_preemptions_per_window = max_preemptions;
  cq.preemption_window = window;
  return cq;
}

TEST(PreemptionProtectedUntilTest, NoLimitNeverProtects) {
  WorkloadStatus status;
  for (int i = 0; i < 5; ++i) RecordPreemption(status, kStart + absl::Minutes(i));
  EXPECT_EQ(PreemptionProtectedUntil(status, LimitedQueue(0, absl::ZeroDuration()), kStart),
            std::nullopt);
  EXPECT_EQ(status.history().preemption_count, 5);
}

TEST(PreemptionProtectedUntilTest, ProtectsUntilTheOldestCountedPreemptionLeavesTheWindow) {
  const ClusterQueueSpec cq = LimitedQueue(2, absl::Minutes(10));
  WorkloadStatus status;
  RecordPreemption(status, kStart);
  // One preemption is below the limit of two.
  EXPECT_EQ(PreemptionProtectedUntil(status, cq, kStart + absl::Minutes(1)), std::nullopt);
  RecordPreemption(status, kStart + absl::Minutes(4));
  // Two within ten minutes: protected until the first (t=0) is ten minutes old.
  EXPECT_EQ(PreemptionProtectedUntil(status, cq, kStart + absl::Minutes(5)),
            kStart + absl::Minutes(10));
  EXPECT_EQ(PreemptionProtectedUntil(status, cq, kStart + absl::Minutes(10)), std::nullopt);
  RecordPreemption(status, kStart + absl::Minutes(11));
  // Now t=4m and t=11m count: protected until 14m.
  EXPECT_EQ(PreemptionProtectedUntil(status, cq, kStart + absl::Minutes(12)),
            kStart + absl::Minutes(14));
}

TEST(RecordPreemptionTest, HistoryIsBounded) {
  WorkloadStatus status;
  for (int i = 0; i < 40; ++i) RecordPreemption(status, kStart + absl::Seconds(i));
  EXPECT_EQ(status.history().preemption_count, 40);
  ASSERT_EQ(status.history().recent_preemptions.size(), kMaxRecentPreemptions);
  EXPECT_EQ(status.history().recent_preemptions.front(),
            kStart + absl::Seconds(40 - static_cast<int>(kMaxRecentPreemptions)));
  EXPECT_EQ(status.history().recent_preemptions.back(), kStart + absl::Seconds(39));
}

TEST(WorkAtRiskSinceTest, LaterOfAdmissionAndCheckpoint) {
  WorkloadStatus status;
  status.admission_time = kStart;
  EXPECT_EQ(WorkAtRiskSince(status), kStart);
  status.mutable_history().last_checkpoint_time = kStart + absl::Minutes(3);
  EXPECT_EQ(WorkAtRiskSince(status), kStart + absl::Minutes(3));
  // A checkpoint from before the current admission (an earlier run) does not count.
  status.admission_time = kStart + absl::Minutes(5);
  EXPECT_EQ(WorkAtRiskSince(status), kStart + absl::Minutes(5));
}

TEST(PendingConditionTest, WritesKueuesReasonAndReadsItBack) {
  WorkloadStatus status;
  SetPendingCondition(status, PendingReason::kExceedsMaxQuota, "too big", kStart);
  const Condition* c = FindCondition(status, "QuotaReserved");
  ASSERT_NE(c, nullptr);
  EXPECT_FALSE(c->status);
  EXPECT_EQ(c->reason, "ExceedsMaxQuota");
  EXPECT_EQ(c->message, "too big");
  EXPECT_TRUE(HasPendingCondition(status, PendingReason::kExceedsMaxQuota));
  EXPECT_FALSE(HasPendingCondition(status, PendingReason::kWaitingForQuota));
  // A reservation is no pending reason.
  SetCondition(status, Condition{"QuotaReserved", true, "ExceedsMaxQuota", "", kStart});
  EXPECT_FALSE(HasPendingCondition(status, PendingReason::kExceedsMaxQuota));
}

TEST(PendingConditionTest, EveryReasonHasKueuesName) {
  EXPECT_EQ(PendingReasonName(PendingReason::kPendingEvaluation), "PendingEvaluation");
  EXPECT_EQ(PendingReasonName(PendingReason::kWaitingForQuota), "WaitingForQuota");
  EXPECT_EQ(PendingReasonName(PendingReason::kNoMatchingFlavor), "NoMatchingFlavor");
  EXPECT_EQ(PendingReasonName(PendingReason::kExceedsMaxQuota), "ExceedsMaxQuota");
  EXPECT_EQ(PendingReasonName(PendingReason::kTopologyPlacementFailed), "TopologyPlacementFailed");
  EXPECT_EQ(PendingReasonName(PendingReason::kWaitingForPreemptedWorkloads),
            "WaitingForPreemptedWorkloads");
  EXPECT_EQ(PendingReasonName(PendingReason::kWaitingForPodsReady), "WaitingForPodsReady");
  EXPECT_EQ(PendingReasonName(PendingReason::kMisconfigured), "Misconfigured");
  EXPECT_EQ(PendingReasonName(PendingReason::kSuspended), "Suspended");
}

}  // namespace
}  // namespace tollgate::core
