#include "core/preemption_planner.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/cluster_state.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tollgate::core {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::UnorderedElementsAre;

const absl::Time kStart = absl::FromUnixSeconds(1767225600);

ClusterQueueSpec GpuQueue(std::string name, std::string cohort, int64_t nominal,
                          PreemptionSpec preemption = {}) {
  ClusterQueueSpec spec;
  spec.name = std::move(name);
  spec.cohort = std::move(cohort);
  spec.resource_groups = {{{"gpu"}, {{"a100", {{"gpu", nominal, std::nullopt, std::nullopt}}}}}};
  spec.preemption = preemption;
  return spec;
}

PreemptionSpec Within(PreemptionPolicy policy) {
  PreemptionSpec spec;
  spec.within_cluster_queue = policy;
  return spec;
}

PreemptionSpec Reclaim(PreemptionPolicy policy) {
  PreemptionSpec spec;
  spec.reclaim_within_cohort = policy;
  return spec;
}

// Every queue gets a namespace of its own name with a LocalQueue "q"; workloads are named
// "<queue>/<name>" after that namespace.
class PreemptionPlannerTest : public ::testing::Test {
 protected:
  explicit PreemptionPlannerTest(SchedulerConfig config = {}) : state_(std::move(config)) {
    EXPECT_TRUE(state_.ApplyResourceFlavor({"a100", {}, {}, {}}, now_).ok());
  }

  void AddQueue(ClusterQueueSpec cq) {
    const std::string name = cq.name;
    ASSERT_TRUE(state_.ApplyClusterQueue(std::move(cq), now_).ok());
    ASSERT_TRUE(state_.ApplyLocalQueue({name, "q", name, StopPolicy::kNone, 1.0}, now_).ok());
  }

  // Submits and settles, a second after the previous submission, so admission times (and
  // creation times) are distinct and increase in submission order.
  void Run(const std::string& queue, const std::string& name, int32_t gpus, int32_t priority,
           bool non_preemptible = false) {
    Submit(queue, name, gpus, priority, non_preemptible);
    Settle();
    ASSERT_EQ(state_.FindWorkload(absl::StrCat(queue, "/", name))->status.state,
              WorkloadState::kAdmitted)
        << queue << "/" << name;
  }

  void Submit(const std::string& queue, const std::string& name, int32_t gpus, int32_t priority,
              bool non_preemptible = false, const std::string& local_queue = "q") {
    now_ += absl::Seconds(1);
    WorkloadSpec spec;
    spec.namespace_name = queue;
    spec.name = name;
    spec.queue_name = local_queue;
    spec.priority = priority;
    spec.non_preemptible = non_preemptible;
    spec.pod_sets = {PodSetSpec{"main", gpus, std::nullopt, {{"gpu", 1}}, {}, {}}};
    ASSERT_TRUE(state_.Submit(std::move(spec), "", now_).ok());
  }

  void Settle() {
    for (int i = 0; i < 100; ++i) {
      CyclePlan plan = state_.PlanCycle(now_);
      state_.ApplyCycle(plan, now_);
      if (!plan.MadeProgress()) return;
    }
    ADD_FAILURE() << "no fixpoint";
  }

  // What the planner would evict so that the pending `key` gets `gpus` more in `queue`, as
  // "<key> <reason>" in the planner's order.
  std::vector<std::string> TargetsFor(const std::string& key, const std::string& queue,
                                      int64_t gpus) {
    const Workload* preemptor = state_.FindWorkload(key);
    const ClusterQueueRuntime* cq = state_.cluster_queue(queue);
    const FrId fr = *state_.fr_index().Find("a100", "gpu");
    PreemptionPlanner planner(state_, now_);
    std::vector<std::string> out;
    for (const PreemptionTarget& t : planner.GetTargets(*preemptor, *cq, {{fr, gpus}}, {fr})) {
      out.push_back(absl::StrCat(state_.workload(t.id)->Key(), " ", t.reason));
    }
    return out;
  }

  absl::Time now_ = kStart;
  ClusterState state_;
};

// --- Candidate order -----------------------------------------------------------------------
// Each case needs exactly one of two candidates, so the one chosen is the one ordered first.

class EvictingFirstTest : public PreemptionPlannerTest {
 protected:
  static SchedulerConfig WithAck() {
    SchedulerConfig config;
    config.evictions_need_ack = true;
    return config;
  }
  EvictingFirstTest() : PreemptionPlannerTest(WithAck()) {}
};

TEST_F(EvictingFirstTest, EvictingCandidateIsTakenBeforeLowerPriorityOne) {
  AddQueue(GpuQueue("cq", "", 4, Within(PreemptionPolicy::kLowerPriority)));
  Run("cq", "low", 2, 0);
  Run("cq", "leaving", 2, 50);
  // Its pods are still stopping, so it holds its quota, but it is already on its way out.
  ASSERT_TRUE(state_.Evict("cq/leaving", "Test", "operator", now_).ok());
  Submit("cq", "urgent", 2, 100);
  EXPECT_THAT(TargetsFor("cq/urgent", "cq", 2), ElementsAre("cq/leaving InClusterQueue"));
}

TEST_F(PreemptionPlannerTest, OtherQueuesAreTakenBeforeTheOwnQueue) {
  PreemptionSpec both = Within(PreemptionPolicy::kLowerPriority);
  both.reclaim_within_cohort = PreemptionPolicy::kAny;
  AddQueue(GpuQueue("mine", "pool", 4, both));
  AddQueue(GpuQueue("theirs", "pool", 0));
  Run("mine", "own-low", 2, 0);
  // Borrowed from mine's nominal quota; a higher priority than own-low does not protect it.
  Run("theirs", "borrower", 2, 50);
  Submit("mine", "urgent", 2, 100);
  EXPECT_THAT(TargetsFor("mine/urgent", "mine", 2),
              ElementsAre("theirs/borrower InCohortReclamation"));
}

TEST_F(PreemptionPlannerTest, LowerPriorityIsTakenBeforeMoreRecentlyAdmitted) {
  AddQueue(GpuQueue("cq", "", 4, Within(PreemptionPolicy::kLowerPriority)));
  Run("cq", "old-low", 2, 0);
  Run("cq", "new-mid", 2, 10);
  Submit("cq", "urgent", 2, 100);
  EXPECT_THAT(TargetsFor("cq/urgent", "cq", 2), ElementsAre("cq/old-low InClusterQueue"));
}

TEST_F(PreemptionPlannerTest, MostRecentlyAdmittedIsTakenFirstAmongEqualPriority) {
  AddQueue(GpuQueue("cq", "", 4, Within(PreemptionPolicy::kLowerPriority)));
  Run("cq", "first", 2, 0);
  Run("cq", "second", 2, 0);
  Submit("cq", "urgent", 2, 100);
  // Kueue loses the least work: the one that started last.
  EXPECT_THAT(TargetsFor("cq/urgent", "cq", 2), ElementsAre("cq/second InClusterQueue"));
}

TEST_F(PreemptionPlannerTest, WorkloadsPlannedAsGoneAreNoCandidates) {
  AddQueue(GpuQueue("cq", "", 6, Within(PreemptionPolicy::kLowerPriority)));
  Run("cq", "first", 2, 0);
  Run("cq", "second", 2, 0);
  Run("cq", "third", 2, 0);
  Submit("cq", "urgent", 4, 100);
  // Another head's victim this cycle: its quota is free already and it is no candidate (Kueue's
  // Snapshot.SimulateWorkloadRemoval during the overlap recomputation), so one more is needed.
  const Workload* third = state_.FindWorkload("cq/third");
  const std::set<WorkloadId> gone = {third->id};
  UsageSimulation removal(state_);
  removal.RemoveWorkload(*third);
  const FrId fr = *state_.fr_index().Find("a100", "gpu");
  PreemptionPlanner planner(state_, now_, &gone);
  std::vector<std::string> targets;
  for (const PreemptionTarget& t : planner.GetTargets(
           *state_.FindWorkload("cq/urgent"), *state_.cluster_queue("cq"), {{fr, 4}}, {fr})) {
    targets.push_back(state_.workload(t.id)->Key());
  }
  EXPECT_THAT(targets, ElementsAre("cq/second"));
}

// --- Minimal victim set --------------------------------------------------------------------

TEST_F(PreemptionPlannerTest, AddsBackVictimsTheLaterChoiceMadeUnnecessary) {
  AddQueue(GpuQueue("cq", "", 6, Within(PreemptionPolicy::kLowerPriority)));
  Run("cq", "big", 4, 0);
  Run("cq", "small", 2, 0);
  Submit("cq", "urgent", 4, 100);
  // small goes first (newest) and frees 2: not enough. big frees 4 more: fits. Putting small
  // back leaves 6 - 2 = 4 free, still enough, so only big is evicted.
  EXPECT_THAT(TargetsFor("cq/urgent", "cq", 4), ElementsAre("cq/big InClusterQueue"));
}

TEST_F(PreemptionPlannerTest, KeepsEveryVictimThatIsStillNeeded) {
  AddQueue(GpuQueue("cq", "", 6, Within(PreemptionPolicy::kLowerPriority)));
  Run("cq", "big", 4, 0);
  Run("cq", "small", 2, 0);
  Submit("cq", "urgent", 5, 100);
  EXPECT_THAT(TargetsFor("cq/urgent", "cq", 5),
              UnorderedElementsAre("cq/big InClusterQueue", "cq/small InClusterQueue"));
}

TEST_F(PreemptionPlannerTest, NoTargetsWhenEvenEveryCandidateIsNotEnough) {
  AddQueue(GpuQueue("cq", "", 6, Within(PreemptionPolicy::kLowerPriority)));
  Run("cq", "keeper", 2, 500);
  Run("cq", "low", 4, 0);
  Submit("cq", "urgent", 5, 100);
  // Evicting low frees 4 of the 5 needed; keeper outranks the preemptor.
  EXPECT_THAT(TargetsFor("cq/urgent", "cq", 5), IsEmpty());
}

// --- withinClusterQueue --------------------------------------------------------------------

struct WithinCase {
  std::string name;
  PreemptionPolicy policy;
  int32_t candidate_priority;
  // The preemptor (priority 10) was created before the candidate.
  bool preemptor_older;
  bool preempts;
};

class WithinClusterQueueTest : public PreemptionPlannerTest,
                               public ::testing::WithParamInterface<WithinCase> {};

TEST_P(WithinClusterQueueTest, PolicyDecides) {
  const WithinCase& c = GetParam();
  AddQueue(GpuQueue("cq", "", 2, Within(c.policy)));
  // A held LocalQueue keeps an older preemptor out of the queue until the candidate runs.
  ASSERT_TRUE(state_.ApplyLocalQueue({"cq", "held", "cq", StopPolicy::kHold, 1.0}, now_).ok());
  if (c.preemptor_older) Submit("cq", "preemptor", 2, 10, false, "held");
  Run("cq", "candidate", 2, c.candidate_priority);
  if (!c.preemptor_older) Submit("cq", "preemptor", 2, 10, false, "held");
  ASSERT_TRUE(state_.ApplyLocalQueue({"cq", "held", "cq", StopPolicy::kNone, 1.0}, now_).ok());

  if (c.preempts) {
    EXPECT_THAT(TargetsFor("cq/preemptor", "cq", 2), ElementsAre("cq/candidate InClusterQueue"));
  } else {
    EXPECT_THAT(TargetsFor("cq/preemptor", "cq", 2), IsEmpty());
  }
  // The cycle agrees: it preempts exactly when a target exists.
  const CyclePlan plan = state_.PlanCycle(now_);
  EXPECT_EQ(plan.preemptions.size(), c.preempts ? 1u : 0u);
}

INSTANTIATE_TEST_SUITE_P(
    Policies, WithinClusterQueueTest,
    ::testing::Values(
        WithinCase{"NeverEvenForLowerPriority", PreemptionPolicy::kNever, 0, false, false},
        WithinCase{"LowerPriorityTakesLower", PreemptionPolicy::kLowerPriority, 0, false, true},
        WithinCase{"LowerPrioritySparesEqualEvenIfNewer", PreemptionPolicy::kLowerPriority, 10,
                   true, false},
        WithinCase{"LowerPrioritySparesHigher", PreemptionPolicy::kLowerPriority, 20, true, false},
        WithinCase{"LowerOrNewerTakesLower", PreemptionPolicy::kLowerOrNewerEqualPriority, 0, false,
                   true},
        WithinCase{"LowerOrNewerTakesNewerEqual", PreemptionPolicy::kLowerOrNewerEqualPriority, 10,
                   true, true},
        WithinCase{"LowerOrNewerSparesOlderEqual", PreemptionPolicy::kLowerOrNewerEqualPriority, 10,
                   false, false},
        WithinCase{"LowerOrNewerSparesHigher", PreemptionPolicy::kLowerOrNewerEqualPriority, 20,
                   true, false}),
    [](const ::testing::TestParamInfo<WithinCase>& info) { return info.param.name; });

// --- reclaimWithinCohort -------------------------------------------------------------------

TEST_F(PreemptionPlannerTest, ReclaimOnlyFromQueuesOverTheirNominalQuota) {
  AddQueue(GpuQueue("mine", "pool", 4, Reclaim(PreemptionPolicy::kAny)));
  AddQueue(GpuQueue("guaranteed", "pool", 2));
  AddQueue(GpuQueue("borrower", "pool", 0));
  Run("borrower", "borrowed", 2, 0);
  Run("mine", "own", 2, 0);
  // Newest and as cheap as "borrowed", but inside its queue's own nominal quota.
  Run("guaranteed", "safe", 2, 0);
  Submit("mine", "urgent", 2, 0);
  EXPECT_THAT(TargetsFor("mine/urgent", "mine", 2),
              ElementsAre("borrower/borrowed InCohortReclamation"));
}

TEST_F(PreemptionPlannerTest, ReclaimNeverLeavesBorrowersAlone) {
  AddQueue(GpuQueue("mine", "pool", 2, Reclaim(PreemptionPolicy::kNever)));
  AddQueue(GpuQueue("borrower", "pool", 0));
  Run("borrower", "borrowed", 2, 0);
  Submit("mine", "urgent", 2, 100);
  EXPECT_THAT(TargetsFor("mine/urgent", "mine", 2), IsEmpty());
}

TEST_F(PreemptionPlannerTest, ReclaimLowerPrioritySparesEqualPriorityBorrowers) {
  AddQueue(GpuQueue("mine", "pool", 2, Reclaim(PreemptionPolicy::kLowerPriority)));
  AddQueue(GpuQueue("borrower", "pool", 0));
  Run("borrower", "borrowed", 2, 100);
  Submit("mine", "urgent", 2, 100);
  EXPECT_THAT(TargetsFor("mine/urgent", "mine", 2), IsEmpty());
}

// --- The victims' message -----------------------------------------------------------------
// Kueue's preemptionMessage: the preemptor's uid and job uid, the reason in words, and both
// ClusterQueues' paths from the root of their cohort tree.

TEST_F(PreemptionPlannerTest, VictimMessageNamesPreemptorReasonAndPaths) {
  ASSERT_TRUE(state_.ApplyCohort({"pool", "root", {}, 1.0}, now_).ok());
  AddQueue(GpuQueue("mine", "pool", 2, Reclaim(PreemptionPolicy::kAny)));
  AddQueue(GpuQueue("borrower", "root", 0));
  Run("borrower", "borrowed", 2, 0);
  now_ += absl::Seconds(1);
  WorkloadSpec spec;
  spec.namespace_name = "mine";
  spec.name = "urgent";
  spec.queue_name = "q";
  spec.pod_sets = {PodSetSpec{"main", 2, std::nullopt, {{"gpu", 1}}, {}, {}}};
  spec.metadata.mutable_value().labels["kueue.x-k8s.io/job-uid"] = "job-in";
  ASSERT_TRUE(state_.Submit(std::move(spec), "", now_).ok());

  const CyclePlan plan = state_.PlanCycle(now_);
  ASSERT_EQ(plan.preemptions.size(), 1u);
  EXPECT_EQ(plan.preemptions[0].reason, "InCohortReclamation");
  EXPECT_EQ(plan.preemptions[0].message,
            absl::StrCat("Preempted to accommodate a workload (UID: ",
                         state_.FindWorkload("mine/urgent")->uid,
                         ", JobUID: job-in) due to reclamation within the cohort; preemptor path: "
                         "/root/pool/mine; preemptee path: /root/borrower"));
}

TEST_F(PreemptionPlannerTest, VictimMessageOfAQueueOutsideCohortsWithoutJobUid) {
  AddQueue(GpuQueue("cq", "", 2, Within(PreemptionPolicy::kLowerPriority)));
  Run("cq", "low", 2, 0);
  Submit("cq", "high", 2, 10);

  const CyclePlan plan = state_.PlanCycle(now_);
  ASSERT_EQ(plan.preemptions.size(), 1u);
  EXPECT_EQ(plan.preemptions[0].message,
            absl::StrCat(
                "Preempted to accommodate a workload (UID: ", state_.FindWorkload("cq/high")->uid,
                ", JobUID: UNKNOWN) due to prioritization in the ClusterQueue; preemptor "
                "path: /cq; preemptee path: /cq"));
}

// --- Inactive ClusterQueues ------------------------------------------------------------------
// Kueue's scheduling snapshot leaves inactive ClusterQueues out while their usage still counts in
// the cohort: a lender cannot reclaim from a held or terminating borrower.

enum class Inactivation { kHold, kTerminating };

struct InactiveCase {
  std::string name;
  Inactivation how;
  bool fair_sharing;
};

class InactiveBorrowerTest : public PreemptionPlannerTest,
                             public ::testing::WithParamInterface<InactiveCase> {
 protected:
  static SchedulerConfig ConfigFor(const InactiveCase& c) {
    SchedulerConfig config;
    config.fair_sharing.enable = c.fair_sharing;
    return config;
  }
  InactiveBorrowerTest() : PreemptionPlannerTest(ConfigFor(GetParam())) {}

  void SetStopPolicy(StopPolicy policy) {
    ClusterQueueSpec spec = GpuQueue("borrower", "pool", 0);
    spec.stop_policy = policy;
    ASSERT_TRUE(state_.ApplyClusterQueue(spec, now_).ok());
  }
  WorkloadState StateOf(const std::string& key) { return state_.FindWorkload(key)->status.state; }
};

TEST_P(InactiveBorrowerTest, IsNoTargetUntilItIsActiveAgainOrItsWorkloadEnds) {
  AddQueue(GpuQueue("lender", "pool", 4, Reclaim(PreemptionPolicy::kAny)));
  AddQueue(GpuQueue("borrower", "pool", 0));
  Run("borrower", "borrowed", 4, 0);
  Submit("lender", "urgent", 2, 100);
  ASSERT_THAT(TargetsFor("lender/urgent", "lender", 2), Not(IsEmpty()));

  if (GetParam().how == Inactivation::kHold) {
    SetStopPolicy(StopPolicy::kHold);
  } else {
    ASSERT_TRUE(state_.DeleteObject(ObjectKind::kClusterQueue, "", "borrower", now_).ok());
  }
  ASSERT_FALSE(state_.cluster_queue("borrower")->active);
  EXPECT_THAT(TargetsFor("lender/urgent", "lender", 2), IsEmpty());
  Settle();
  EXPECT_EQ(StateOf("borrower/borrowed"), WorkloadState::kAdmitted);
  EXPECT_EQ(StateOf("lender/urgent"), WorkloadState::kPending);
  // Its usage still counts in the cohort: nothing is left to lend.
  const FrId fr = *state_.fr_index().Find("a100", "gpu");
  EXPECT_EQ(state_.tree().Cohort("pool")->Usage(fr), 4);

  if (GetParam().how == Inactivation::kHold) {
    SetStopPolicy(StopPolicy::kNone);
  } else {
    ASSERT_TRUE(state_.Finish("borrower/borrowed", "", now_).ok());
  }
  Settle();
  EXPECT_EQ(StateOf("lender/urgent"), WorkloadState::kAdmitted);
  if (GetParam().how == Inactivation::kHold) {
    EXPECT_EQ(StateOf("borrower/borrowed"), WorkloadState::kPending);  // reclaimed
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, InactiveBorrowerTest,
    ::testing::Values(InactiveCase{"HeldClassical", Inactivation::kHold, false},
                      InactiveCase{"TerminatingClassical", Inactivation::kTerminating, false},
                      InactiveCase{"HeldFairSharing", Inactivation::kHold, true},
                      InactiveCase{"TerminatingFairSharing", Inactivation::kTerminating, true}),
    [](const ::testing::TestParamInfo<InactiveCase>& info) { return info.param.name; });

TEST_F(PreemptionPlannerTest, AnActiveBorrowerBesideAHeldOneIsStillReclaimed) {
  AddQueue(GpuQueue("lender", "pool", 4, Reclaim(PreemptionPolicy::kAny)));
  AddQueue(GpuQueue("held", "pool", 0));
  AddQueue(GpuQueue("running", "pool", 0));
  Run("held", "old", 2, 0);
  Run("running", "young", 2, 0);
  ClusterQueueSpec held = GpuQueue("held", "pool", 0);
  held.stop_policy = StopPolicy::kHold;
  ASSERT_TRUE(state_.ApplyClusterQueue(held, now_).ok());
  Submit("lender", "urgent", 2, 0);
  EXPECT_THAT(TargetsFor("lender/urgent", "lender", 2),
              ElementsAre("running/young InCohortReclamation"));
  // Wanting all 4 back, only 2 can be had: no victims at all.
  EXPECT_THAT(TargetsFor("lender/urgent", "lender", 4), IsEmpty());
}

// --- borrowWithinCohort --------------------------------------------------------------------
// mine (nominal 2) needs 4, so it must borrow; the 2 idle in "spare" and the 4 "borrower" holds
// beyond its nominal 0 make that possible only by evicting both of borrower's workloads (priority
// 10) while mine borrows. reclaimWithinCohort is Any, so only borrowWithinCohort decides.

struct BorrowCase {
  std::string name;
  BorrowWithinCohortPolicy policy;
  std::optional<int32_t> max_priority_threshold;
  int32_t preemptor_priority;
  bool preempts;
};

class BorrowWithinCohortTest : public PreemptionPlannerTest,
                               public ::testing::WithParamInterface<BorrowCase> {};

TEST_P(BorrowWithinCohortTest, ThresholdDecides) {
  const BorrowCase& c = GetParam();
  PreemptionSpec preemption = Reclaim(PreemptionPolicy::kAny);
  preemption.borrow_within_cohort = c.policy;
  preemption.max_priority_threshold = c.max_priority_threshold;
  AddQueue(GpuQueue("mine", "pool", 2, preemption));
  AddQueue(GpuQueue("spare", "pool", 2));
  AddQueue(GpuQueue("borrower", "pool", 0));
  Run("borrower", "b1", 2, 10);
  Run("borrower", "b2", 2, 10);
  Submit("mine", "urgent", 4, c.preemptor_priority);
  if (c.preempts) {
    EXPECT_THAT(TargetsFor("mine/urgent", "mine", 4),
                UnorderedElementsAre("borrower/b1 InCohortReclaimWhileBorrowing",
                                     "borrower/b2 InCohortReclaimWhileBorrowing"));
  } else {
    EXPECT_THAT(TargetsFor("mine/urgent", "mine", 4), IsEmpty());
  }
}

INSTANTIATE_TEST_SUITE_P(
    Thresholds, BorrowWithinCohortTest,
    ::testing::Values(
        BorrowCase{"NeverForbidsPreemptingWhileBorrowing", BorrowWithinCohortPolicy::kNever,
                   std::nullopt, 100, false},
        BorrowCase{"LowerPriorityWithoutThreshold", BorrowWithinCohortPolicy::kLowerPriority,
                   std::nullopt, 100, true},
        BorrowCase{"VictimsAtTheThreshold", BorrowWithinCohortPolicy::kLowerPriority, 10, 100,
                   true},
        BorrowCase{"VictimsAboveTheThreshold", BorrowWithinCohortPolicy::kLowerPriority, 9, 100,
                   false},
        // borrowWithinCohort only ever takes strictly lower priorities, threshold or not.
        BorrowCase{"EqualPriorityVictims", BorrowWithinCohortPolicy::kLowerPriority, 50, 10,
                   false}),
    [](const ::testing::TestParamInfo<BorrowCase>& info) { return info.param.name; });

// --- Never chosen --------------------------------------------------------------------------

TEST_F(PreemptionPlannerTest, NonPreemptibleIsSkippedEvenWhenOrderedFirst) {
  AddQueue(GpuQueue("cq", "", 4, Within(PreemptionPolicy::kLowerPriority)));
  Run("cq", "ordinary", 2, 0);
  Run("cq", "protected", 2, 0, /*non_preemptible=*/true);
  Submit("cq", "urgent", 2, 100);
  EXPECT_THAT(TargetsFor("cq/urgent", "cq", 2), ElementsAre("cq/ordinary InClusterQueue"));
  // Needing both leaves nothing to take.
  EXPECT_THAT(TargetsFor("cq/urgent", "cq", 4), IsEmpty());
}

TEST_F(PreemptionPlannerTest, MaxPreemptedWorkloadsRefusesLargerVictimSets) {
  ClusterQueueSpec cq = GpuQueue("cq", "", 4, Within(PreemptionPolicy::kLowerPriority));
  cq.max_preempted_workloads = 1;
  AddQueue(cq);
  Run("cq", "a", 2, 0);
  Run("cq", "b", 2, 0);
  Submit("cq", "one-victim", 2, 100);
  Submit("cq", "two-victims", 4, 100);
  EXPECT_THAT(TargetsFor("cq/one-victim", "cq", 2), ElementsAre("cq/b InClusterQueue"));
  EXPECT_THAT(TargetsFor("cq/two-victims", "cq", 4), IsEmpty());
}

TEST_F(PreemptionPlannerTest, MaxPreemptedWorkloadsLeavesTheCyclePending) {
  ClusterQueueSpec cq = GpuQueue("cq", "", 4, Within(PreemptionPolicy::kLowerPriority));
  cq.max_preempted_workloads = 1;
  AddQueue(cq);
  Run("cq", "a", 2, 0);
  Run("cq", "b", 2, 0);
  Submit("cq", "two-victims", 4, 100);
  Settle();
  EXPECT_EQ(state_.FindWorkload("cq/a")->status.state, WorkloadState::kAdmitted);
  EXPECT_EQ(state_.FindWorkload("cq/b")->status.state, WorkloadState::kAdmitted);
  EXPECT_EQ(state_.FindWorkload("cq/two-victims")->status.state, WorkloadState::kPending);
}

// --- SatisfiesPreemptionPolicy -------------------------------------------------------------

struct PolicyCase {
  std::string name;
  PreemptionPolicy policy;
  int32_t candidate_priority;
  // Candidate creation relative to the preemptor's (priority 10).
  absl::Duration candidate_created_after;
  bool satisfied;
};

class SatisfiesPreemptionPolicyTest : public ::testing::TestWithParam<PolicyCase> {};

TEST_P(SatisfiesPreemptionPolicyTest, Table) {
  const PolicyCase& c = GetParam();
  ClusterState state{SchedulerConfig{}};
  Workload preemptor;
  preemptor.priority = 10;
  preemptor.creation_time = kStart;
  Workload candidate;
  candidate.priority = c.candidate_priority;
  candidate.creation_time = kStart + c.candidate_created_after;
  EXPECT_EQ(SatisfiesPreemptionPolicy(state, preemptor, candidate, c.policy), c.satisfied);
}

INSTANTIATE_TEST_SUITE_P(
    Policies, SatisfiesPreemptionPolicyTest,
    ::testing::Values(
        PolicyCase{"NeverLower", PreemptionPolicy::kNever, 0, absl::Seconds(1), false},
        PolicyCase{"LowerPriorityLower", PreemptionPolicy::kLowerPriority, 9, -absl::Seconds(1),
                   true},
        PolicyCase{"LowerPriorityEqualNewer", PreemptionPolicy::kLowerPriority, 10,
                   absl::Seconds(1), false},
        PolicyCase{"LowerPriorityHigher", PreemptionPolicy::kLowerPriority, 11, absl::Seconds(1),
                   false},
        PolicyCase{"LowerOrNewerLowerOlder", PreemptionPolicy::kLowerOrNewerEqualPriority, 9,
                   -absl::Seconds(1), true},
        PolicyCase{"LowerOrNewerEqualNewer", PreemptionPolicy::kLowerOrNewerEqualPriority, 10,
                   absl::Seconds(1), true},
        // Same creation time is not newer.
        PolicyCase{"LowerOrNewerEqualSameTime", PreemptionPolicy::kLowerOrNewerEqualPriority, 10,
                   absl::ZeroDuration(), false},
        PolicyCase{"LowerOrNewerEqualOlder", PreemptionPolicy::kLowerOrNewerEqualPriority, 10,
                   -absl::Seconds(1), false},
        PolicyCase{"LowerOrNewerHigherNewer", PreemptionPolicy::kLowerOrNewerEqualPriority, 11,
                   absl::Seconds(1), false},
        PolicyCase{"AnyHigherOlder", PreemptionPolicy::kAny, 1000, -absl::Seconds(1), true}),
    [](const ::testing::TestParamInfo<PolicyCase>& info) { return info.param.name; });

}  // namespace
}  // namespace tollgate::core
