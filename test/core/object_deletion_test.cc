#include <string>
#include <vector>

#include "core/cluster_state.h"
#include "core/cohort_breakdown.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/core/gpu_cluster_state_fixture.h"

// Deleting configuration objects in the core, each kind by its DeletionRule: a ClusterQueue or
// Namespace that workloads hold quota through terminates instead of vanishing (Kueue's
// finalizer); a flavor a queue names cannot be deleted; a Cohort or LocalQueue goes at once,
// and what it admitted keeps running (Kueue has no finalizer on them).

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

TEST_F(ObjectDeletionTest, LocalQueueInUseGoesAtOnceAndReturnsItsWaitingWorkloadsInOrder) {
  AddQueue(GpuQueue("cq", "", 8), "ns");
  Submit(GpuJob("a", "ns", 4));
  Settle();
  Submit(GpuJob("b", "ns", 3));
  Submit(GpuJob("c", "ns", 2));
  ASSERT_TRUE(state_.DeleteObject(ObjectKind::kLocalQueue, "ns", "q", now_).ok());
  EXPECT_FALSE(Terminating(ObjectKind::kLocalQueue, "ns", "q"));
  EXPECT_EQ(state_.registry().FindLocalQueue("ns", "q"), nullptr);
  // Nothing is left for the finalizer: the executor deletes the stored object with the call.
  EXPECT_THAT(state_.TakeFinalizedObjects(now_), IsEmpty());

  // What it admitted keeps running, charged to its ClusterQueue; what waits says why.
  Submit(GpuJob("d", "ns", 1));
  Settle();
  EXPECT_EQ(StateOf("ns/a"), WorkloadState::kAdmitted);
  ASSERT_EQ(state_.ClusterQueueUsage("cq").size(), 1u);
  EXPECT_EQ(state_.ClusterQueueUsage("cq")[0].total, 4);
  EXPECT_THAT(state_.WorkloadsHoldingQuotaVia(ObjectKind::kClusterQueue, "", "cq"),
              ElementsAre("ns/a"));
  for (const char* key : {"ns/b", "ns/c", "ns/d"}) {
    EXPECT_EQ(StateOf(key), WorkloadState::kPending) << key;
    EXPECT_EQ(state_.FindWorkload(key)->status.pending_message, "LocalQueue q doesn't exist")
        << key;
    EXPECT_EQ(state_.QueuedIn(state_.FindWorkload(key)->id), nullptr) << key;
  }

  // Re-created, it queues them again in their original order: b (3) fits beside a (4), c (2)
  // then does not, d (1) does (BestEffortFIFO passes c). Had c gone before b, c would run.
  ASSERT_TRUE(state_.ApplyLocalQueue({"ns", "q", "cq", StopPolicy::kNone, 1.0}, now_).ok());
  Settle();
  EXPECT_EQ(StateOf("ns/b"), WorkloadState::kAdmitted);
  EXPECT_EQ(StateOf("ns/c"), WorkloadState::kPending);
  EXPECT_EQ(StateOf("ns/d"), WorkloadState::kAdmitted);
  ASSERT_TRUE(state_.Finish("ns/a", "", now_).ok());
  Settle();
  EXPECT_EQ(StateOf("ns/c"), WorkloadState::kAdmitted);
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

// Kueue's "Should not allow borrowing through deleted mid-tree cohort": root (2) > mid (2) > cq
// (1). Deleting mid leaves cq in an implicit cohort "mid" with no quota and no parent.
class MidTreeCohortDeletionTest : public ObjectDeletionTest {
 protected:
  void SetUp() override {
    ASSERT_TRUE(state_.ApplyCohort(GpuCohort("root", "", 2), now_).ok());
    ASSERT_TRUE(state_.ApplyCohort(GpuCohort("mid", "root", 2), now_).ok());
    AddQueue(GpuQueue("cq", "mid", 1), "ns");
  }
  static CohortSpec GpuCohort(std::string name, std::string parent, int64_t nominal) {
    CohortSpec cohort;
    cohort.name = std::move(name);
    cohort.parent = std::move(parent);
    cohort.resource_groups = {
        {{"gpu"}, {{"a100", {{"gpu", nominal, std::nullopt, std::nullopt}}}}}};
    return cohort;
  }
  int64_t Gpu(const QuotaNode& node, int64_t (QuotaNode::*get)(FrId) const) {
    return (node.*get)(*state_.fr_index().Find("a100", "gpu"));
  }
};

TEST_F(MidTreeCohortDeletionTest, GoesAtOnceAndItsQueuesKeepWhatTheyRun) {
  Submit(GpuJob("base", "ns", 1));
  Submit(GpuJob("borrows", "ns", 3));  // 1 of its own, 2 of mid's and root's
  Settle();
  ASSERT_EQ(StateOf("ns/borrows"), WorkloadState::kAdmitted);

  ASSERT_TRUE(state_.DeleteObject(ObjectKind::kCohort, "", "mid", now_).ok());
  EXPECT_FALSE(Terminating(ObjectKind::kCohort, "", "mid"));
  EXPECT_EQ(state_.cohorts().count("mid"), 0u);
  EXPECT_THAT(state_.TakeFinalizedObjects(now_), IsEmpty());

  // The queue stays active, under an implicit "mid": no quota, no parent.
  EXPECT_TRUE(state_.cluster_queue("cq")->active);
  const QuotaNode* mid = state_.tree().Cohort("mid");
  ASSERT_NE(mid, nullptr);
  EXPECT_FALSE(mid->HasParent());
  EXPECT_EQ(Gpu(*mid, &QuotaNode::SubtreeQuota), 1);  // only what cq lends it
  EXPECT_THAT(state_.tree().Cohort("root")->child_cohorts(), IsEmpty());
  absl::StatusOr<CohortBreakdown> breakdown = CohortBreakdownOf(state_, "mid");
  ASSERT_TRUE(breakdown.ok()) << breakdown.status();
  EXPECT_TRUE(breakdown->implicit);
  EXPECT_EQ(breakdown->root, "mid");
  // What runs keeps running and keeps its usage, above what is left.
  EXPECT_EQ(StateOf("ns/base"), WorkloadState::kAdmitted);
  EXPECT_EQ(StateOf("ns/borrows"), WorkloadState::kAdmitted);
  EXPECT_EQ(Gpu(*state_.tree().ClusterQueue("cq"), &QuotaNode::Usage), 4);

  // New work is judged against what is left: 1 gpu in all.
  ASSERT_TRUE(state_.Finish("ns/borrows", "", now_).ok());
  Submit(GpuJob("needs-two", "ns", 2));
  Settle();
  EXPECT_EQ(StateOf("ns/needs-two"), WorkloadState::kPending);
  EXPECT_THAT(state_.FindWorkload("ns/needs-two")->status.pending_message,
              HasSubstr("maximum capacity"));
  ASSERT_TRUE(state_.Finish("ns/base", "", now_).ok());
  Submit(GpuJob("fits", "ns", 1));
  Settle();
  EXPECT_EQ(StateOf("ns/fits"), WorkloadState::kAdmitted);
  EXPECT_EQ(StateOf("ns/needs-two"), WorkloadState::kPending);

  // Applied again, it is back in the tree with its quota and parent.
  ASSERT_TRUE(state_.ApplyCohort(GpuCohort("mid", "root", 2), now_).ok());
  Settle();
  EXPECT_EQ(StateOf("ns/needs-two"), WorkloadState::kAdmitted);
}

TEST_F(MidTreeCohortDeletionTest, ChildCohortsMoveToTheImplicitCohort) {
  ASSERT_TRUE(state_.ApplyCohort(GpuCohort("leaf", "mid", 0), now_).ok());
  AddQueue(GpuQueue("leaf-cq", "leaf", 0), "leaf-ns");
  ASSERT_EQ(state_.tree().Cohort("leaf")->parent()->name(), "mid");
  ASSERT_TRUE(state_.DeleteObject(ObjectKind::kCohort, "", "mid", now_).ok());
  const QuotaNode* leaf = state_.tree().Cohort("leaf");
  ASSERT_NE(leaf->parent(), nullptr);
  EXPECT_EQ(leaf->parent(), state_.tree().Cohort("mid"));
  EXPECT_FALSE(leaf->parent()->HasParent());
  // Only what cq lends: root's 2 and mid's own 2 are gone for leaf-cq.
  Submit(GpuJob("w", "leaf-ns", 2));
  Settle();
  EXPECT_EQ(StateOf("leaf-ns/w"), WorkloadState::kPending);
}

TEST_F(MidTreeCohortDeletionTest, StoredAsTerminatingByAnOlderVersionItGoesOnRestore) {
  Submit(GpuJob("borrows", "ns", 3));
  Settle();
  ASSERT_TRUE(
      state_.RestoreTerminating(ObjectKind::kCohort, "", "mid", now_ - absl::Minutes(5), now_)
          .ok());
  EXPECT_FALSE(Terminating(ObjectKind::kCohort, "", "mid"));
  EXPECT_EQ(state_.cohorts().count("mid"), 0u);
  EXPECT_FALSE(state_.tree().Cohort("mid")->HasParent());
  EXPECT_EQ(StateOf("ns/borrows"), WorkloadState::kAdmitted);
  // Reported once, so the executor deletes the stored object.
  EXPECT_TRUE(state_.HasObjectsErasedOnRestore());
  EXPECT_THAT(state_.TakeFinalizedObjects(now_),
              ElementsAre(ObjectName{ObjectKind::kCohort, "", "mid"}));
  EXPECT_FALSE(state_.HasObjectsErasedOnRestore());
  EXPECT_THAT(state_.TakeFinalizedObjects(now_), IsEmpty());
}

TEST_F(ObjectDeletionTest, LocalQueueStoredAsTerminatingGoesOnRestore) {
  AddQueue(GpuQueue("cq", "", 8), "ns");
  Submit(GpuJob("a", "ns", 4));
  Settle();
  ASSERT_TRUE(state_.RestoreTerminating(ObjectKind::kLocalQueue, "ns", "q", now_, now_).ok());
  EXPECT_EQ(state_.registry().FindLocalQueue("ns", "q"), nullptr);
  EXPECT_EQ(StateOf("ns/a"), WorkloadState::kAdmitted);
  EXPECT_THAT(state_.TakeFinalizedObjects(now_),
              ElementsAre(ObjectName{ObjectKind::kLocalQueue, "ns", "q"}));
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
