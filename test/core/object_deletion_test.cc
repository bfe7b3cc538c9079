#include <string>
#include <vector>

#include "core/cluster_state.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/core/gpu_cluster_state_fixture.h"

// Kueue's finalizers in the core: objects deleted while workloads hold quota through them
// terminate instead of vanishing; a flavor a queue names cannot be deleted.

namespace tollgate::core {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

class ObjectDeletionTest : public GpuClusterStateTest {};

TEST_F(ObjectDeletionTest, ClusterQueueInUseTerminatesAndGoesWithItsLastWorkload) {
  AddQueue(GpuQueue("cq", "", 8), "ns");
  Submit(GpuJob("a", "ns", 4));
  Submit(GpuJob("b", "ns", 4));
  Settle();
  ASSERT_TRUE(state_.Finish("ns/b", "", now_).ok());
  ASSERT_THAT(state_.TakeFinalizedObjects(now_), IsEmpty());

  ASSERT_TRUE(state_.DeleteObject(ObjectKind::kClusterQueue, "", "cq", now_).ok());
  EXPECT_TRUE(Terminating(ObjectKind::kClusterQueue, "", "cq"));
  EXPECT_THAT(state_.WorkloadsHoldingQuotaVia(ObjectKind::kClusterQueue, "", "cq"),
              ElementsAre("ns/a"));
  // Deleting again is a no-op, as a second kubectl delete.
  ASSERT_TRUE(state_.DeleteObject(ObjectKind::kClusterQueue, "", "cq", now_).ok());

  // It admits nothing new, but keeps accounting for what runs.
  Submit(GpuJob("c", "ns", 1));
  Settle();
  EXPECT_EQ(StateOf("ns/a"), WorkloadState::kAdmitted);
  EXPECT_EQ(StateOf("ns/c"), WorkloadState::kPending);
  EXPECT_THAT(state_.FindWorkload("ns/c")->status.pending_message, HasSubstr("inactive"));
  EXPECT_EQ(state_.cluster_queue("cq")->inactive_reason, "Terminating");
  ASSERT_EQ(state_.ClusterQueueUsage("cq").size(), 1u);
  EXPECT_EQ(state_.ClusterQueueUsage("cq")[0].total, 4);
  EXPECT_THAT(state_.TakeFinalizedObjects(now_), IsEmpty());

  ASSERT_TRUE(state_.Finish("ns/a", "", now_).ok());
  EXPECT_THAT(state_.TakeFinalizedObjects(now_),
              ElementsAre(ObjectName{ObjectKind::kClusterQueue, "", "cq"}));
  EXPECT_EQ(state_.cluster_queue("cq"), nullptr);
  EXPECT_EQ(state_.FindWorkload("ns/c")->status.pending_message, "ClusterQueue cq doesn't exist");
}

TEST_F(ObjectDeletionTest, UnusedObjectsGoAtOnce) {
  AddQueue(GpuQueue("cq", "", 8), "ns");
  Submit(GpuJob("a", "ns", 4));  // pending only: nothing holds quota
  ASSERT_TRUE(state_.DeleteObject(ObjectKind::kLocalQueue, "ns", "q", now_).ok());
  EXPECT_FALSE(Terminating(ObjectKind::kLocalQueue, "ns", "q"));
  EXPECT_EQ(state_.registry().FindLocalQueue("ns", "q"), nullptr);
  ASSERT_TRUE(state_.DeleteObject(ObjectKind::kClusterQueue, "", "cq", now_).ok());
  EXPECT_EQ(state_.cluster_queue("cq"), nullptr);
  EXPECT_EQ(state_.DeleteObject(ObjectKind::kClusterQueue, "", "cq", now_).code(),
            absl::StatusCode::kNotFound);
}

TEST_F(ObjectDeletionTest, LocalQueueInUseBlocksNewAdmissionsUntilItsWorkloadsEnd) {
  AddQueue(GpuQueue("cq", "", 8), "ns");
  Submit(GpuJob("a", "ns", 4));
  Settle();
  ASSERT_TRUE(state_.DeleteObject(ObjectKind::kLocalQueue, "ns", "q", now_).ok());
  EXPECT_TRUE(Terminating(ObjectKind::kLocalQueue, "ns", "q"));
  Submit(GpuJob("b", "ns", 1));
  Settle();
  EXPECT_EQ(StateOf("ns/b"), WorkloadState::kPending);
  EXPECT_EQ(state_.FindWorkload("ns/b")->status.pending_message, "LocalQueue q is terminating");
  // Without eviction acknowledgements an eviction releases the quota at once.
  ASSERT_TRUE(state_.Preempt("ns/a", "", now_).ok());
  EXPECT_THAT(state_.TakeFinalizedObjects(now_),
              ElementsAre(ObjectName{ObjectKind::kLocalQueue, "ns", "q"}));
  Settle();
  EXPECT_EQ(state_.FindWorkload("ns/b")->status.pending_message, "LocalQueue q doesn't exist");
  EXPECT_EQ(StateOf("ns/a"), WorkloadState::kPending);
}

TEST(ObjectDeletionAckTest, AnEvictingWorkloadKeepsItsQueueUntilReleased) {
  SchedulerConfig config;
  config.evictions_need_ack = true;
  ClusterState state(config);
  absl::Time now = kFixtureStart;
  ASSERT_TRUE(state.ApplyResourceFlavor({"a100", {}, {}, {}}, now).ok());
  ASSERT_TRUE(state.ApplyClusterQueue(GpuQueue("cq", "", 8), now).ok());
  ASSERT_TRUE(state.ApplyLocalQueue({"ns", "q", "cq", StopPolicy::kNone, 1.0}, now).ok());
  ASSERT_TRUE(state.Submit(GpuJob("a", "ns", 4), "", now).ok());
  state.ApplyCycle(state.PlanCycle(now), now);
  ASSERT_EQ(state.FindWorkload("ns/a")->status.state, WorkloadState::kAdmitted);
  ASSERT_TRUE(state.DeleteObject(ObjectKind::kClusterQueue, "", "cq", now).ok());
  ASSERT_TRUE(state.Preempt("ns/a", "", now).ok());
  ASSERT_EQ(state.FindWorkload("ns/a")->status.state, WorkloadState::kEvicting);
  EXPECT_THAT(state.TakeFinalizedObjects(now), IsEmpty());
  ASSERT_TRUE(state.ReleaseEvicted("ns/a", now).ok());
  EXPECT_THAT(state.TakeFinalizedObjects(now),
              ElementsAre(ObjectName{ObjectKind::kClusterQueue, "", "cq"}));
}

TEST_F(ObjectDeletionTest, CohortInUseStopsItsSubtreeAdmitting) {
  AddQueue(GpuQueue("cq-a", "shared", 4), "a");
  AddQueue(GpuQueue("cq-b", "shared", 4), "b");
  CohortSpec cohort;
  cohort.name = "shared";
  cohort.resource_groups = {{{"gpu"}, {{"a100", {{"gpu", 8, std::nullopt, std::nullopt}}}}}};
  ASSERT_TRUE(state_.ApplyCohort(cohort, now_).ok());
  Submit(GpuJob("big", "a", 10));  // borrows the cohort's own quota
  Settle();
  ASSERT_EQ(StateOf("a/big"), WorkloadState::kAdmitted);

  ASSERT_TRUE(state_.DeleteObject(ObjectKind::kCohort, "", "shared", now_).ok());
  EXPECT_TRUE(Terminating(ObjectKind::kCohort, "", "shared"));
  Submit(GpuJob("small", "b", 1));
  Settle();
  EXPECT_EQ(StateOf("b/small"), WorkloadState::kPending);
  EXPECT_EQ(state_.cluster_queue("cq-b")->inactive_reason, "Terminating");

  ASSERT_TRUE(state_.Finish("a/big", "", now_).ok());
  EXPECT_THAT(state_.TakeFinalizedObjects(now_),
              ElementsAre(ObjectName{ObjectKind::kCohort, "", "shared"}));
  Settle();
  EXPECT_EQ(StateOf("b/small"), WorkloadState::kAdmitted);
}

TEST_F(ObjectDeletionTest, NamespaceWithRunningWorkloadsTerminates) {
  AddQueue(GpuQueue("cq", "", 8), "ns");
  ASSERT_TRUE(state_.ApplyNamespace({"ns", {{"team", "x"}}}, now_).ok());
  Submit(GpuJob("a", "ns", 4));
  Settle();
  ASSERT_TRUE(state_.DeleteObject(ObjectKind::kNamespace, "", "ns", now_).ok());
  EXPECT_TRUE(Terminating(ObjectKind::kNamespace, "", "ns"));
  Submit(GpuJob("b", "ns", 1));
  Settle();
  EXPECT_EQ(state_.FindWorkload("ns/b")->status.pending_message, "Namespace ns is terminating");
  ASSERT_TRUE(state_.Delete("ns/a", now_).ok());
  EXPECT_THAT(state_.TakeFinalizedObjects(now_),
              ElementsAre(ObjectName{ObjectKind::kNamespace, "", "ns"}));
  // Namespaces are optional: without the object the namespace admits again.
  Settle();
  EXPECT_EQ(StateOf("ns/b"), WorkloadState::kAdmitted);
}

TEST_F(ObjectDeletionTest, FlavorNamedByAQueueCannotBeDeleted) {
  AddQueue(GpuQueue("cq", "", 8), "ns");
  AddQueue(GpuQueue("cq2", "", 8), "ns2");
  const absl::Status refused = state_.DeleteObject(ObjectKind::kResourceFlavor, "", "a100", now_);
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.message(), HasSubstr("ClusterQueue cq, ClusterQueue cq2"));
  EXPECT_TRUE(state_.registry().HasFlavor("a100"));
  EXPECT_TRUE(state_.cluster_queue("cq")->active);

  ASSERT_TRUE(state_.DeleteObject(ObjectKind::kClusterQueue, "", "cq", now_).ok());
  ASSERT_TRUE(state_.DeleteObject(ObjectKind::kClusterQueue, "", "cq2", now_).ok());
  EXPECT_TRUE(state_.DeleteObject(ObjectKind::kResourceFlavor, "", "a100", now_).ok());
}

TEST_F(ObjectDeletionTest, RestoredTerminatingObjectIsFinalizedWhenUnused) {
  AddQueue(GpuQueue("cq", "", 8), "ns");
  const absl::Time since = now_ - absl::Minutes(5);
  ASSERT_TRUE(state_.RestoreTerminating(ObjectKind::kClusterQueue, "", "cq", since, now_).ok());
  EXPECT_EQ(*state_.TerminatingSince(ObjectKind::kClusterQueue, "", "cq"), since);
  EXPECT_THAT(state_.TakeFinalizedObjects(now_),
              ElementsAre(ObjectName{ObjectKind::kClusterQueue, "", "cq"}));
  EXPECT_EQ(state_.RestoreTerminating(ObjectKind::kClusterQueue, "", "gone", since, now_).code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace tollgate::core
