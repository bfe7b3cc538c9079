// FlavorAssignment::ResolveNoFitCause: Kueue's resolveNoFitReason over the flavor attempts the
// assigner recorded (the assigner's own search is exercised through ClusterState's cycles), and
// the assigner's ranking of flavors under flavorFungibility.preference.
#include "core/flavor_assigner.h"

#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "core/quantity.h"
#include "gtest/gtest.h"
#include "test/core/gpu_cluster_state_fixture.h"

namespace tollgate::core {
namespace {

// A pod set left without flavors (NoFit) after trying some, with the given causes per group.
PodSetFlavors FailedPodSet(std::initializer_list<std::pair<int, NoFitCause>> by_group) {
  PodSetFlavors ps;
  ps.name = "main";
  ps.flavor_tried = true;
  ps.reasons = {"insufficient unused quota for gpu in flavor a100, 1 more needed"};
  for (const auto& [group, cause] : by_group) ps.AddGroupNoFit(group, cause);
  return ps;
}

// A pod set whose one flavor fits (its failed attempts still recorded).
PodSetFlavors FittingPodSet(std::initializer_list<std::pair<int, NoFitCause>> by_group) {
  PodSetFlavors ps = FailedPodSet(by_group);
  ps.reasons.clear();
  ps.flavors = {{"gpu", "a100"}};
  ps.choices = {FlavorChoice{0, FlavorMode::kFit, 0}};
  return ps;
}

TEST(ResolveNoFitCauseTest, APodSetNoFlavorWasTriedForMatchesNone) {
  FlavorAssignment assignment;
  assignment.pod_sets.emplace_back().reasons = {"resource gpu unavailable in ClusterQueue"};
  EXPECT_EQ(assignment.ResolveNoFitCause(), NoFitCause::kNoMatchingFlavor);
}

TEST(ResolveNoFitCauseTest, TheMostSevereGroupDecides) {
  FlavorAssignment assignment;
  assignment.pod_sets.push_back(
      FailedPodSet({{0, NoFitCause::kWaitingForQuota}, {1, NoFitCause::kExceedsMaxQuota}}));
  EXPECT_EQ(assignment.ResolveNoFitCause(), NoFitCause::kExceedsMaxQuota);
}

TEST(ResolveNoFitCauseTest, TheMostSevereFailedPodSetDecidesAndFittingOnesAreIgnored) {
  FlavorAssignment assignment;
  // Its attempts do not count: the pod set fits.
  assignment.pod_sets.push_back(FittingPodSet({{0, NoFitCause::kNoMatchingFlavor}}));
  assignment.pod_sets.push_back(FailedPodSet({{0, NoFitCause::kTopologyPlacementFailed}}));
  EXPECT_EQ(assignment.ResolveNoFitCause(), NoFitCause::kTopologyPlacementFailed);
  assignment.pod_sets.push_back(FailedPodSet({{0, NoFitCause::kWaitingForQuota}}));
  EXPECT_EQ(assignment.ResolveNoFitCause(), NoFitCause::kWaitingForQuota);
}

TEST(ResolveNoFitCauseTest, AFailedPlacementReplacesOnlyItsOwnGroupsCause) {
  // The topology flavor's group had a flavor too small before it: the placement's failure
  // replaces that group's cause.
  PodSetFlavors own = FailedPodSet({{0, NoFitCause::kExceedsMaxQuota}});
  own.SetTopologyPlacementFailed(0);
  EXPECT_EQ(own.no_fit_cause, NoFitCause::kTopologyPlacementFailed);
  // Another group's cause stands: the most severe decides.
  PodSetFlavors other =
      FailedPodSet({{0, NoFitCause::kExceedsMaxQuota}, {1, NoFitCause::kWaitingForQuota}});
  other.SetTopologyPlacementFailed(0);
  EXPECT_EQ(other.no_fit_cause, NoFitCause::kWaitingForQuota);
  PodSetFlavors untouched = FailedPodSet({{1, NoFitCause::kNoMatchingFlavor}});
  untouched.SetTopologyPlacementFailed(0);
  EXPECT_EQ(untouched.no_fit_cause, NoFitCause::kNoMatchingFlavor);
  // Every flavor of the pod set fit its quota.
  PodSetFlavors placement_only = FailedPodSet({});
  placement_only.SetTopologyPlacementFailed(0);
  EXPECT_EQ(placement_only.no_fit_cause, NoFitCause::kTopologyPlacementFailed);
}

TEST(ResolveNoFitCauseTest, AFailedPodSetWithoutCausesNamesNone) {
  FlavorAssignment assignment;
  assignment.pod_sets.push_back(FailedPodSet({}));
  EXPECT_EQ(assignment.ResolveNoFitCause(), NoFitCause::kNone);
  EXPECT_EQ(PendingReasonOf(NoFitCause::kNone), PendingReason::kPendingEvaluation);
}

TEST(AssignmentMessageTest, ReasonsOfEachPodSetThatDoesNotFitAreSortedAndJoined) {
  FlavorAssignment assignment;
  assignment.pod_sets.push_back(FittingPodSet({}));
  PodSetFlavors& ps = assignment.pod_sets.emplace_back();
  ps.name = "workers";
  ps.reasons = {"untolerated taint {key val NoSchedule <nil>} in flavor b",
                "flavor a doesn't match"};
  EXPECT_EQ(assignment.Message(),
            "couldn't assign flavors to pod set workers: flavor a doesn't match, untolerated taint "
            "{key val NoSchedule <nil>} in flavor b");
}

TEST(AssignmentMessageTest, APodSetThatFailedWithAnErrorIsTheWholeMessage) {
  // Kueue's Assignment.Message: the first pod set whose Status carries an error is reported
  // alone, with its own prefix, whatever the pod sets before it said.
  FlavorAssignment assignment;
  assignment.pod_sets.push_back(FailedPodSet({}));
  PodSetFlavors& leader = assignment.pod_sets.emplace_back();
  leader.name = "leader";
  leader.reasons = {"no TAS flavor assigned"};
  leader.failed_with_error = true;
  PodSetFlavors& other = assignment.pod_sets.emplace_back();
  other.name = "other";
  other.reasons = {"more than one TAS flavor assigned: a, b"};
  other.failed_with_error = true;
  EXPECT_EQ(assignment.Message(),
            "failed to assign flavors to pod set leader: no TAS flavor assigned");
}

TEST(PendingReasonOfTest, EachCauseHasItsReason) {
  EXPECT_EQ(PendingReasonOf(NoFitCause::kTopologyPlacementFailed),
            PendingReason::kTopologyPlacementFailed);
  EXPECT_EQ(PendingReasonOf(NoFitCause::kWaitingForQuota), PendingReason::kWaitingForQuota);
  EXPECT_EQ(PendingReasonOf(NoFitCause::kExceedsMaxQuota), PendingReason::kExceedsMaxQuota);
  EXPECT_EQ(PendingReasonOf(NoFitCause::kNoMatchingFlavor), PendingReason::kNoMatchingFlavor);
}

// Through a cycle: the assigner records why each flavor failed.
class FlavorAssignerCauseTest : public GpuClusterStateTest {
 protected:
  std::string ReasonOf(const std::string& key) {
    const Condition* c = FindCondition(state_.FindWorkload(key)->status, "QuotaReserved");
    return c == nullptr ? "none" : c->reason;
  }
};

TEST_F(FlavorAssignerCauseTest, TheFlavorClosestToFittingNamesTheGroupsCause) {
  // tainted matches nothing; a100 is too small for `big` and short of unused quota for `next`.
  ASSERT_TRUE(
      state_.ApplyResourceFlavor({"tainted", {}, {{"k", "v", "NoSchedule"}}, {}}, now_).ok());
  ClusterQueueSpec cq;
  cq.name = "cq";
  cq.resource_groups = {{{"gpu"},
                         {{"tainted", {{"gpu", 16, std::nullopt, std::nullopt}}},
                          {"a100", {{"gpu", 4, std::nullopt, std::nullopt}}}}}};
  AddQueue(std::move(cq), "ns");
  Submit(GpuJob("first", "ns", 3));
  Submit(GpuJob("big", "ns", 8));
  Submit(GpuJob("next", "ns", 2));
  Settle();
  EXPECT_EQ(StateOf("ns/first"), WorkloadState::kAdmitted);
  EXPECT_EQ(ReasonOf("ns/big"), "ExceedsMaxQuota");
  EXPECT_EQ(ReasonOf("ns/next"), "WaitingForQuota");
}

TEST_F(FlavorAssignerCauseTest, NoMatchingFlavorOnlyWhenEveryFlavorFailsToMatch) {
  ASSERT_TRUE(
      state_.ApplyResourceFlavor({"tainted", {}, {{"k", "v", "NoSchedule"}}, {}}, now_).ok());
  ClusterQueueSpec cq;
  cq.name = "cq";
  cq.resource_groups = {{{"gpu"}, {{"tainted", {{"gpu", 16, std::nullopt, std::nullopt}}}}}};
  AddQueue(std::move(cq), "ns");
  Submit(GpuJob("a", "ns", 1));
  WorkloadSpec cpu = GpuJob("cpu", "ns", 1);
  cpu.pod_sets[0].requests = {{"cpu", 1}};
  Submit(std::move(cpu));
  Settle();
  EXPECT_EQ(ReasonOf("ns/a"), "NoMatchingFlavor");
  // A resource the queue does not cover: no flavor is even tried.
  EXPECT_EQ(ReasonOf("ns/cpu"), "NoMatchingFlavor");
}

TEST_F(FlavorAssignerCauseTest, TheFirstFailureInKueuesRequestOrderDecides) {
  // cpu in one group, too small; memory in another, whose only flavor is untolerated. Kueue walks
  // a pod set's requests in FNV-1a hash order, memory before cpu, and stops at the first group
  // that gets no flavor: the taint is the message and NoMatchingFlavor the reason.
  ASSERT_TRUE(
      state_.ApplyResourceFlavor({"tainted", {}, {{"k", "v", "NoSchedule"}}, {}}, now_).ok());
  ClusterQueueSpec cq;
  cq.name = "cq";
  cq.resource_groups = {
      {{"cpu"}, {{"a100", {{"cpu", 2000, std::nullopt, std::nullopt}}}}},
      {{"memory"}, {{"tainted", {{"memory", 1 << 30, std::nullopt, std::nullopt}}}}}};
  AddQueue(std::move(cq), "ns");
  WorkloadSpec both = GpuJob("both", "ns", 1);
  both.pod_sets[0].requests = {{"cpu", 3000}, {"memory", 1 << 20}};
  Submit(std::move(both));
  // An uncovered resource ends the walk only where it comes: example.com/gpu before cpu.
  WorkloadSpec uncovered = GpuJob("uncovered", "ns", 1);
  uncovered.pod_sets[0].requests = {{"cpu", 3000}, {"example.com/gpu", 1}};
  Submit(std::move(uncovered));
  Settle();
  EXPECT_EQ(ReasonOf("ns/both"), "NoMatchingFlavor");
  EXPECT_EQ(state_.FindWorkload("ns/both")->status.pending_message,
            "couldn't assign flavors to pod set main: untolerated taint {k v NoSchedule <nil>} in "
            "flavor tainted");
  EXPECT_EQ(state_.FindWorkload("ns/uncovered")->status.pending_message,
            "couldn't assign flavors to pod set main: resource example.com/gpu unavailable in "
            "ClusterQueue");
}

// Kueue's resources.quotaCheckStrategy IgnoreUndeclared: a request for a resource the queue does
// not cover gets no flavor and no usage, instead of keeping the workload out.
SchedulerConfig IgnoringUndeclared() {
  SchedulerConfig config;
  config.quota_check_strategy = QuotaCheckStrategy::kIgnoreUndeclared;
  return config;
}

class IgnoreUndeclaredTest : public GpuClusterStateTest {
 protected:
  IgnoreUndeclaredTest() : GpuClusterStateTest(IgnoringUndeclared()) {}
};

WorkloadSpec GpuAndMemoryJob(std::string name, int32_t gpus) {
  WorkloadSpec spec = GpuJob(std::move(name), "ns", gpus);
  spec.pod_sets[0].requests = {{"gpu", 1}, {"memory", 1 << 30}};
  return spec;
}

TEST_F(IgnoreUndeclaredTest, AnUndeclaredResourceGetsNoFlavorAndNoUsage) {
  AddQueue(GpuQueue("cq", "", 4), "ns");
  Submit(GpuAndMemoryJob("a", 3));
  Submit(GpuAndMemoryJob("b", 2));
  Settle();
  const Workload& a = *state_.FindWorkload("ns/a");
  ASSERT_EQ(a.status.state, WorkloadState::kAdmitted);
  const PodSetAssignment& ps = a.status.admission->pod_sets[0];
  EXPECT_EQ(ps.flavors, (std::vector<std::pair<std::string, std::string>>{{"gpu", "a100"}}));
  EXPECT_EQ(ps.resource_usage, (ResourceAmounts{{"gpu", 3}}));
  ASSERT_EQ(a.quota_usage.size(), 1u);
  EXPECT_EQ(a.quota_usage[0].second, 3);
  // The spec keeps what the pods ask for.
  EXPECT_EQ(a.spec.pod_sets[0].requests, (ResourceAmounts{{"gpu", 1}, {"memory", 1 << 30}}));
  // Only the covered resource is short: b waits for quota, not for a flavor.
  EXPECT_EQ(StateOf("ns/b"), WorkloadState::kPending);
  EXPECT_EQ(state_.FindWorkload("ns/b")->status.pending_message,
            "couldn't assign flavors to pod set main: insufficient unused quota for gpu in flavor "
            "a100, 1 more needed");
}

TEST_F(GpuClusterStateTest, BlockUndeclaredIsTheDefault) {
  AddQueue(GpuQueue("cq", "", 4), "ns");
  Submit(GpuAndMemoryJob("a", 1));
  Settle();
  EXPECT_EQ(StateOf("ns/a"), WorkloadState::kPending);
  EXPECT_EQ(state_.FindWorkload("ns/a")->status.pending_message,
            "couldn't assign flavors to pod set main: resource memory unavailable in ClusterQueue");
}

TEST_F(GpuClusterStateTest, AZeroRequestOfAnUncoveredResourceGetsNoFlavorAndNoUsage) {
  AddQueue(GpuQueue("cq", "", 4), "ns");
  WorkloadSpec spec = GpuJob("a", "ns", 2);
  spec.pod_sets[0].requests = {{"gpu", 1}, {"memory", 0}};
  Submit(std::move(spec));
  Settle();
  const Workload& a = *state_.FindWorkload("ns/a");
  ASSERT_EQ(a.status.state, WorkloadState::kAdmitted);
  const PodSetAssignment& ps = a.status.admission->pod_sets[0];
  EXPECT_EQ(ps.flavors, (std::vector<std::pair<std::string, std::string>>{{"gpu", "a100"}}));
  EXPECT_EQ(ps.resource_usage, (ResourceAmounts{{"gpu", 2}}));
}

// Kueue's resources.transformations: quota is asked for the outputs, computed from the spec's
// requests (which stay as submitted) at every evaluation.
SchedulerConfig MigAsGpus() {
  SchedulerConfig config;
  ResourceTransformation t;
  t.input = "example.com/mig";
  t.strategy = TransformationStrategy::kReplace;
  t.outputs = {{"gpu", *Quantity::Parse("2")}};
  config.resource_transformations = {std::move(t)};
  return config;
}

class ResourceTransformationsTest : public GpuClusterStateTest {
 protected:
  ResourceTransformationsTest() : GpuClusterStateTest(MigAsGpus()) {}
};

WorkloadSpec MigJob(std::string name, int32_t pods, std::optional<int32_t> min_count = {}) {
  WorkloadSpec spec = GpuJob(std::move(name), "ns", pods);
  spec.pod_sets[0].requests = {{"example.com/mig", 1}};
  spec.pod_sets[0].min_count = min_count;
  return spec;
}

TEST_F(ResourceTransformationsTest, QuotaIsAskedForTheOutputs) {
  AddQueue(GpuQueue("cq", "", 4), "ns");
  Submit(MigJob("a", 1));
  Submit(MigJob("b", 2));
  Settle();
  const Workload& a = *state_.FindWorkload("ns/a");
  ASSERT_EQ(a.status.state, WorkloadState::kAdmitted);
  EXPECT_EQ(a.status.admission->pod_sets[0].resource_usage, (ResourceAmounts{{"gpu", 2}}));
  EXPECT_EQ(a.spec.pod_sets[0].requests, (ResourceAmounts{{"example.com/mig", 1}}));
  EXPECT_EQ(StateOf("ns/b"), WorkloadState::kPending);
  EXPECT_EQ(state_.FindWorkload("ns/b")->status.pending_message,
            "couldn't assign flavors to pod set main: insufficient unused quota for gpu in flavor "
            "a100, 2 more needed");
}

TEST_F(ResourceTransformationsTest, PartialAdmissionScalesTheTransformedRequests) {
  AddQueue(GpuQueue("cq", "", 5), "ns");
  Submit(MigJob("a", 4, 1));
  Settle();
  const Workload& a = *state_.FindWorkload("ns/a");
  ASSERT_EQ(a.status.state, WorkloadState::kAdmitted);
  EXPECT_EQ(a.status.admission->pod_sets[0].count, 2);
  EXPECT_EQ(a.status.admission->pod_sets[0].resource_usage, (ResourceAmounts{{"gpu", 4}}));
}

// Kueue's flavorFungibility.preference, through the assigner's ranking of the flavors its search
// went through. The oracle's verdict for the first flavor is scripted; the second fits by
// borrowing from the cohort.
class ScriptedOracle : public PreemptionOracle {
 public:
  explicit ScriptedOracle(std::pair<PreemptionPossibility, int> verdict) : verdict_(verdict) {}
  std::pair<PreemptionPossibility, int> SimulatePreemption(FrId, int64_t) override {
    return verdict_;
  }

 private:
  std::pair<PreemptionPossibility, int> verdict_;
};

struct PreferenceCase {
  std::string name;
  std::optional<FungibilityPreference> preference;
  // What preempting in a100 would take: its possibility and borrowing level after.
  std::pair<PreemptionPossibility, int> a100_verdict;
  std::string want_flavor;
  FlavorMode want_mode;
};

void PrintTo(const PreferenceCase& c, std::ostream* os) { *os << c.name; }

class FungibilityPreferenceTest : public GpuClusterStateTest,
                                  public ::testing::WithParamInterface<PreferenceCase> {
 protected:
  // cq: a100 4 (held by `holder`), spot 0; lender: spot 4. Both fungibility policies
  // TryNextFlavor, so the search goes through both flavors and the ranking decides.
  FlavorAssignment AssignSecondJob(const PreferenceCase& c) {
    EXPECT_TRUE(state_.ApplyResourceFlavor({"spot", {}, {}, {}}, now_).ok());
    ClusterQueueSpec cq;
    cq.name = "cq";
    cq.cohort = "c";
    cq.resource_groups = {{{"gpu"},
                           {{"a100", {{"gpu", 4, std::nullopt, std::nullopt}}},
                            {"spot", {{"gpu", 0, std::nullopt, std::nullopt}}}}}};
    cq.flavor_fungibility.when_can_borrow = WhenCanBorrow::kTryNextFlavor;
    cq.flavor_fungibility.when_can_preempt = WhenCanPreempt::kTryNextFlavor;
    cq.flavor_fungibility.preference = c.preference;
    AddQueue(std::move(cq), "ns");
    ClusterQueueSpec lender;
    lender.name = "lender";
    lender.cohort = "c";
    lender.resource_groups = {{{"gpu"},
                               {{"a100", {{"gpu", 0, std::nullopt, std::nullopt}}},
                                {"spot", {{"gpu", 4, std::nullopt, std::nullopt}}}}}};
    EXPECT_TRUE(state_.ApplyClusterQueue(std::move(lender), now_).ok());
    Submit(GpuJob("holder", "ns", 4));
    Settle();
    EXPECT_EQ(state_.FindWorkload("ns/holder")->status.admission->pod_sets[0].flavors,
              (std::vector<std::pair<std::string, std::string>>{{"gpu", "a100"}}));
    now_ += absl::Milliseconds(1);
    EXPECT_TRUE(state_.Submit(GpuJob("next", "ns", 4, 1), "", now_).ok());
    ScriptedOracle oracle(c.a100_verdict);
    FlavorAssigner assigner(state_, *state_.cluster_queue("cq"), *state_.FindWorkload("ns/next"),
                            oracle);
    return assigner.Assign({});
  }
};

TEST_P(FungibilityPreferenceTest, RanksTheFlavorsItWentThrough) {
  const PreferenceCase& c = GetParam();
  const FlavorAssignment got = AssignSecondJob(c);
  ASSERT_EQ(got.pod_sets.size(), 1u);
  EXPECT_EQ(got.pod_sets[0].flavors,
            (std::vector<std::pair<std::string, std::string>>{{"gpu", c.want_flavor}}));
  EXPECT_EQ(got.RepresentativeMode(), c.want_mode);
}

constexpr auto kPreemptOwnQuota = std::pair{PreemptionPossibility::kPreempt, 0};

INSTANTIATE_TEST_SUITE_P(
    Preferences, FungibilityPreferenceTest,
    ::testing::Values(
        // Preemption mode first: spot's fit (borrowing) beats a100's preemption.
        PreferenceCase{"UnsetRanksAsBorrowingOverPreemption", std::nullopt, kPreemptOwnQuota,
                       "spot", FlavorMode::kFit},
        PreferenceCase{"BorrowingOverPreemptionBorrows",
                       FungibilityPreference::kBorrowingOverPreemption, kPreemptOwnQuota, "spot",
                       FlavorMode::kFit},
        // Borrowing level first: a100's 0 beats spot's cohort level.
        PreferenceCase{"PreemptionOverBorrowingPreemptsInOwnQuota",
                       FungibilityPreference::kPreemptionOverBorrowing, kPreemptOwnQuota, "a100",
                       FlavorMode::kPreempt},
        // Same borrowing level: the better preemption mode (fit) breaks the tie.
        PreferenceCase{"PreemptionOverBorrowingBreaksTiesByMode",
                       FungibilityPreference::kPreemptionOverBorrowing,
                       {PreemptionPossibility::kReclaim, 1},
                       "spot",
                       FlavorMode::kFit},
        // No candidates ranks below any usable flavor before the preference applies.
        PreferenceCase{"PreemptionOverBorrowingNeverTakesNoCandidates",
                       FungibilityPreference::kPreemptionOverBorrowing,
                       {PreemptionPossibility::kNoCandidates, 0},
                       "spot",
                       FlavorMode::kFit}),
    [](const ::testing::TestParamInfo<PreferenceCase>& info) { return info.param.name; });

}  // namespace
}  // namespace tollgate::core
