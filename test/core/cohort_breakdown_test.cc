#include "core/cohort_breakdown.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/cluster_state.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tollgate::core {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

const absl::Time kStart = absl::FromUnixSeconds(1767225600);

struct Limits {
  std::optional<int64_t> borrowing;
  std::optional<int64_t> lending;
};

ClusterQueueSpec GpuQueue(std::string name, std::string cohort, int64_t nominal,
                          PreemptionSpec preemption = {}, Limits limits = {}) {
  ClusterQueueSpec spec;
  spec.name = std::move(name);
  spec.cohort = std::move(cohort);
  spec.resource_groups = {
      {{"gpu"}, {{"a100", {{"gpu", nominal, limits.borrowing, limits.lending}}}}}};
  spec.preemption = preemption;
  return spec;
}

PreemptionSpec Reclaim(PreemptionPolicy policy) {
  PreemptionSpec spec;
  spec.reclaim_within_cohort = policy;
  return spec;
}

// "name depth nominal/quota usage borrowed lendable" for compact expectations.
std::vector<std::string> Rows(const CohortBreakdown& b) {
  std::vector<std::string> out;
  for (const QuotaHolder& h : b.holders) {
    out.push_back(absl::StrCat(h.name, " ", h.depth, " ", h.nominal, "/", h.quota, " ", h.usage,
                               " ", h.borrowed, " ", h.lendable));
  }
  return out;
}

std::vector<std::string> Policies(const CohortBreakdown& b) {
  std::vector<std::string> out;
  for (const ReclaimBlocker& r : b.blockers) out.push_back(absl::StrCat(r.policy, " ", r.object));
  return out;
}

// Every queue gets a namespace of its own name with a LocalQueue "q".
class CohortBreakdownTest : public ::testing::Test {
 protected:
  CohortBreakdownTest() {
    EXPECT_TRUE(state_.ApplyResourceFlavor({"a100", {}, {}, {}}, now_).ok());
  }

  void AddQueue(ClusterQueueSpec cq) {
    const std::string name = cq.name;
    ASSERT_TRUE(state_.ApplyClusterQueue(std::move(cq), now_).ok());
    ASSERT_TRUE(state_.ApplyNamespace({name, {}}, now_).ok());
    ASSERT_TRUE(state_.ApplyLocalQueue({name, "q", name, StopPolicy::kNone, 1.0}, now_).ok());
  }

  void Submit(const std::string& queue, const std::string& name, int32_t gpus, int32_t priority) {
    now_ += absl::Seconds(1);
    WorkloadSpec spec;
    spec.namespace_name = queue;
    spec.name = name;
    spec.queue_name = "q";
    spec.priority = priority;
    spec.pod_sets = {PodSetSpec{"main", gpus, std::nullopt, {{"gpu", 1}}, {}, {}}};
    ASSERT_TRUE(state_.Submit(std::move(spec), "", now_).ok());
    for (int i = 0; i < 100; ++i) {
      CyclePlan plan = state_.PlanCycle(now_);
      state_.ApplyCycle(plan, now_);
      if (!plan.MadeProgress()) return;
    }
    ADD_FAILURE() << "no fixpoint";
  }

  WorkloadState StateOf(const std::string& key) { return state_.FindWorkload(key)->status.state; }

  CohortBreakdown ForQueue(const std::string& name) {
    absl::StatusOr<CohortBreakdown> b = ClusterQueueBreakdown(state_, name, nullptr);
    EXPECT_TRUE(b.ok()) << b.status();
    return b.ok() ? *b : CohortBreakdown{};
  }

  absl::Time now_ = kStart;
  ClusterState state_{SchedulerConfig{}};
};

// The case: team-b uses 1 of its 4, needs 2 more, but team-a borrowed the cohort's
// spare quota and team-b's reclaimWithinCohort is Never.
TEST_F(CohortBreakdownTest, ReclaimWithinCohortNeverNamesTheBorrower) {
  AddQueue(GpuQueue("team-a", "pool", 4));
  AddQueue(GpuQueue("team-b", "pool", 4));
  Submit("team-a", "big", 6, 0);
  Submit("team-b", "small", 1, 0);
  Submit("team-b", "waits", 2, 0);
  ASSERT_EQ(StateOf("team-b/waits"), WorkloadState::kPending);

  const CohortBreakdown b = ForQueue("team-b");
  EXPECT_EQ(b.cohort, "pool");
  EXPECT_TRUE(b.implicit);
  EXPECT_EQ(b.root, "pool");
  ASSERT_TRUE(b.workload.has_value());
  EXPECT_EQ(state_.workload(*b.workload)->Key(), "team-b/waits");
  EXPECT_THAT(Rows(b), ElementsAre("pool 0 0/8 7 0 0", "team-a 1 4/4 6 2 4", "team-b 1 4/4 1 0 4"));
  ASSERT_EQ(b.totals.size(), 1u);
  EXPECT_EQ(b.totals[0].nominal, 8);
  EXPECT_EQ(b.totals[0].shared, 8);
  EXPECT_EQ(b.totals[0].usage, 7);
  EXPECT_EQ(b.totals[0].available, 1);
  EXPECT_THAT(Policies(b), ElementsAre("reclaimWithinCohort team-b"));
  EXPECT_THAT(b.blockers[0].message, HasSubstr("team-a (2 borrowed)"));
  EXPECT_THAT(b.blockers[0].message, HasSubstr("reclaimWithinCohort: Never"));
}

TEST_F(CohortBreakdownTest, LowerPriorityReclaimBlockedByTheBorrowersPriority) {
  AddQueue(GpuQueue("team-a", "pool", 4));
  AddQueue(GpuQueue("team-b", "pool", 4, Reclaim(PreemptionPolicy::kLowerPriority)));
  Submit("team-a", "big", 6, 100);
  Submit("team-b", "small", 1, 0);
  Submit("team-b", "waits", 2, 50);
  ASSERT_EQ(StateOf("team-b/waits"), WorkloadState::kPending);
  const CohortBreakdown b = ForQueue("team-b");
  EXPECT_THAT(Policies(b), ElementsAre("priority team-b"));
  EXPECT_THAT(b.blockers[0].message, HasSubstr("lower priority than team-b/waits (50)"));
}

TEST_F(CohortBreakdownTest, ReclaimThatWouldBorrowNeedsBorrowWithinCohort) {
  AddQueue(GpuQueue("team-a", "pool", 4));
  AddQueue(GpuQueue("team-b", "pool", 4, Reclaim(PreemptionPolicy::kAny)));
  Submit("team-a", "big", 6, 0);
  Submit("team-b", "small", 1, 0);
  // 1 + 4 > 4: team-b would borrow, so it may not reclaim.
  Submit("team-b", "waits", 4, 10);
  ASSERT_EQ(StateOf("team-b/waits"), WorkloadState::kPending);
  const CohortBreakdown b = ForQueue("team-b");
  EXPECT_THAT(Policies(b), ElementsAre("borrowWithinCohort team-b"));
}

TEST_F(CohortBreakdownTest, NothingBorrowedMeansTheOwnersUseTheirQuota) {
  AddQueue(GpuQueue("team-a", "pool", 4));
  AddQueue(GpuQueue("team-b", "pool", 4, Reclaim(PreemptionPolicy::kAny)));
  Submit("team-a", "own", 4, 0);
  Submit("team-b", "own", 4, 0);
  Submit("team-b", "waits", 1, 0);
  ASSERT_EQ(StateOf("team-b/waits"), WorkloadState::kPending);
  EXPECT_THAT(Policies(ForQueue("team-b")), ElementsAre("inUseByOwners pool"));
}

TEST_F(CohortBreakdownTest, LimitsThatCapWhatTheQueueCanEverGet) {
  AddQueue(GpuQueue("team-a", "pool", 4, {}, Limits{std::nullopt, 1}));
  AddQueue(GpuQueue("team-b", "pool", 4, {}, Limits{1, std::nullopt}));
  Submit("team-b", "huge", 6, 0);
  ASSERT_EQ(StateOf("team-b/huge"), WorkloadState::kPending);
  const CohortBreakdown b = ForQueue("team-b");
  EXPECT_THAT(Policies(b), ElementsAre("borrowingLimit team-b", "lendingLimit team-a"));
  // team-a keeps 3 of its 4 for itself.
  EXPECT_THAT(Rows(b), ElementsAre("pool 0 0/5 0 0 0", "team-a 1 4/4 0 0 1", "team-b 1 4/4 0 0 4"));
}

// Hierarchical cohorts: org <- research (team-a), org <- prod (team-b). team-a borrows through
// org, so the breakdown seen from team-b walks up to org and down into research.
TEST_F(CohortBreakdownTest, HierarchicalCohortsFindABorrowerInASiblingCohort) {
  ASSERT_TRUE(state_.ApplyCohort({"research", "org", {}, 1.0}, now_).ok());
  ASSERT_TRUE(state_.ApplyCohort({"prod", "org", {}, 1.0}, now_).ok());
  AddQueue(GpuQueue("team-a", "research", 4));
  AddQueue(GpuQueue("team-b", "prod", 4));
  Submit("team-a", "big", 7, 0);
  Submit("team-b", "small", 1, 0);
  Submit("team-b", "waits", 2, 0);
  ASSERT_EQ(StateOf("team-b/waits"), WorkloadState::kPending);

  const CohortBreakdown b = ForQueue("team-b");
  EXPECT_EQ(b.cohort, "prod");
  EXPECT_FALSE(b.implicit);
  EXPECT_EQ(b.parent, "org");
  EXPECT_EQ(b.root, "org");
  EXPECT_THAT(Rows(b), ElementsAre("org 0 0/8 8 0 0", "prod 1 0/4 1 0 4", "team-b 2 4/4 1 0 4",
                                   "research 1 0/4 7 3 4", "team-a 2 4/4 7 3 4"));
  EXPECT_THAT(Policies(b), ElementsAre("reclaimWithinCohort team-b"));
  EXPECT_THAT(b.blockers[0].message, HasSubstr("team-a (3 borrowed)"));

  // The cohorts themselves, implicit root included.
  absl::StatusOr<CohortBreakdown> org = CohortBreakdownOf(state_, "org");
  ASSERT_TRUE(org.ok()) << org.status();
  EXPECT_TRUE(org->implicit);
  EXPECT_TRUE(org->blockers.empty());
  ASSERT_EQ(org->totals.size(), 1u);
  EXPECT_EQ(org->totals[0].usage, 8);
  EXPECT_EQ(org->totals[0].available, 0);
  absl::StatusOr<CohortBreakdown> research = CohortBreakdownOf(state_, "research");
  ASSERT_TRUE(research.ok()) << research.status();
  EXPECT_FALSE(research->implicit);
  EXPECT_EQ(research->parent, "org");
  EXPECT_EQ(research->totals[0].borrowed, 3);
  EXPECT_EQ(research->holders.size(), 5u);  // the whole tree, from its root
}

TEST_F(CohortBreakdownTest, AHeldBorrowerIsNamedAsInactive) {
  AddQueue(GpuQueue("team-a", "pool", 4, Reclaim(PreemptionPolicy::kAny)));
  AddQueue(GpuQueue("team-b", "pool", 0));
  Submit("team-b", "big", 4, 0);
  ClusterQueueSpec held = GpuQueue("team-b", "pool", 0);
  held.stop_policy = StopPolicy::kHold;
  ASSERT_TRUE(state_.ApplyClusterQueue(held, now_).ok());
  Submit("team-a", "waits", 2, 10);
  ASSERT_EQ(StateOf("team-a/waits"), WorkloadState::kPending);
  const CohortBreakdown b = ForQueue("team-a");
  EXPECT_THAT(Policies(b), ElementsAre("inactiveClusterQueue team-b (Stopped, 4 borrowed)"));
  EXPECT_THAT(b.blockers[0].message, HasSubstr("not preempted while the queue is inactive"));
}

TEST_F(CohortBreakdownTest, FitsOrNothingPendingMeansNoBlockers) {
  AddQueue(GpuQueue("team-a", "pool", 4));
  AddQueue(GpuQueue("team-b", "pool", 4));
  Submit("team-a", "big", 6, 0);
  CohortBreakdown b = ForQueue("team-b");
  EXPECT_FALSE(b.workload.has_value());
  EXPECT_THAT(b.blockers, IsEmpty());
  EXPECT_THAT(Rows(b), ElementsAre("pool 0 0/8 6 0 0", "team-a 1 4/4 6 2 4", "team-b 1 4/4 0 0 4"));
}

TEST_F(CohortBreakdownTest, ErrorsNameWhatIsMissing) {
  AddQueue(GpuQueue("team-a", "", 4));
  Submit("team-a", "runs", 1, 0);
  absl::StatusOr<CohortBreakdown> missing = CohortBreakdownOf(state_, "nope");
  EXPECT_TRUE(absl::IsNotFound(missing.status()));
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("\"nope\""));
  EXPECT_TRUE(absl::IsNotFound(ClusterQueueBreakdown(state_, "nope", nullptr).status()));
  // An admitted workload is not pending anywhere.
  EXPECT_TRUE(absl::IsInvalidArgument(
      ClusterQueueBreakdown(state_, "team-a", state_.FindWorkload("team-a/runs")).status()));
  // No cohort: only the queue itself.
  CohortBreakdown alone = ForQueue("team-a");
  EXPECT_EQ(alone.cohort, "");
  EXPECT_THAT(Rows(alone), ElementsAre("team-a 0 4/4 1 0 0"));
}

}  // namespace
}  // namespace tollgate::core
