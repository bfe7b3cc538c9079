#include "core/fair_sharing.h"

#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/cluster_state.h"
#include "gtest/gtest.h"

namespace tollgate::core {
namespace {

// Kueue's share of a node with a parent: for each resource, what it uses beyond its subtree quota
// (summed over flavors), times 1000, over what its parent could lend it (PotentialAvailable,
// summed over every flavor of that resource in the tree); the largest of those, ties to the
// smaller resource name, divided by the fair-sharing weight. The expected values below are that
// formula worked by hand.

const absl::Time kStart = absl::FromUnixSeconds(1767225600);
// Every queue is fed by a LocalQueue of this name in the namespace named after the queue.
const std::string kLocalQueue = "q";

ResourceQuotaSpec Quota(std::string resource, int64_t nominal,
                        std::optional<int64_t> borrowing = std::nullopt) {
  return ResourceQuotaSpec{std::move(resource), nominal, borrowing, std::nullopt};
}

class FairSharingTest : public ::testing::Test {
 protected:
  FairSharingTest() : state_(SchedulerConfig{}) {
    for (const char* flavor : {"f1", "f2"}) {
      EXPECT_TRUE(state_.ApplyResourceFlavor({flavor, {}, {}, {}}, now_).ok());
    }
  }

  // A queue with one resource group covering the resources of `f1` in flavor f1 (and f2 when
  // given), fed by kLocalQueue.
  void AddQueue(const std::string& name, const std::string& cohort,
                std::vector<ResourceQuotaSpec> f1, double weight = 1.0,
                std::vector<ResourceQuotaSpec> f2 = {}) {
    ClusterQueueSpec spec;
    spec.name = name;
    spec.cohort = cohort;
    ResourceGroupSpec group;
    for (const ResourceQuotaSpec& q : f1) group.covered_resources.push_back(q.resource);
    group.flavors.push_back({"f1", std::move(f1)});
    if (!f2.empty()) group.flavors.push_back({"f2", std::move(f2)});
    spec.resource_groups = {std::move(group)};
    spec.fair_weight = weight;
    ASSERT_TRUE(state_.ApplyClusterQueue(std::move(spec), now_).ok());
    ASSERT_TRUE(
        state_.ApplyLocalQueue({name, kLocalQueue, name, StopPolicy::kNone, 1.0}, now_).ok());
  }

  // Admits `pods` pods asking `per_pod` each to the queue, and checks it got in.
  void Run(const std::string& queue, int32_t pods, ResourceAmounts per_pod) {
    now_ += absl::Seconds(1);
    WorkloadSpec spec;
    spec.namespace_name = queue;
    spec.name = absl::StrCat("w", ++workloads_);
    spec.queue_name = kLocalQueue;
    spec.pod_sets = {PodSetSpec{"main", pods, std::nullopt, std::move(per_pod), {}, {}}};
    const std::string key = absl::StrCat(queue, "/", spec.name);
    ASSERT_TRUE(state_.Submit(std::move(spec), "", now_).ok());
    for (int i = 0; i < 20; ++i) {
      CyclePlan plan = state_.PlanCycle(now_);
      state_.ApplyCycle(plan, now_);
      if (!plan.MadeProgress()) break;
    }
    ASSERT_EQ(state_.FindWorkload(key)->status.state, WorkloadState::kAdmitted) << key;
  }

  DominantResourceShare QueueDrs(const std::string& name,
                                 const std::map<FrId, int64_t>* extra = nullptr) {
    return ComputeDrs(*state_.tree().ClusterQueue(name), state_.fr_index(), extra);
  }
  DominantResourceShare CohortDrs(const std::string& name) {
    return ComputeDrs(*state_.tree().Cohort(name), state_.fr_index());
  }

  absl::Time now_ = kStart;
  ClusterState state_;
  int workloads_ = 0;
};

TEST_F(FairSharingTest, ZeroWithinNominalQuota) {
  AddQueue("a", "pool", {Quota("gpu", 4)});
  AddQueue("b", "pool", {Quota("gpu", 4)});
  Run("a", 4, {{"gpu", 1}});
  const DominantResourceShare drs = QueueDrs("a");
  EXPECT_TRUE(drs.IsZero());
  EXPECT_FALSE(drs.borrowing);
  EXPECT_EQ(drs.PreciseWeightedShare(), 0.0);
  EXPECT_EQ(state_.WeightedShare("a"), 0);
}

TEST_F(FairSharingTest, NodesWithoutParentHaveNoShare) {
  AddQueue("alone", "", {Quota("gpu", 4)});
  AddQueue("a", "pool", {Quota("gpu", 4)});
  AddQueue("b", "pool", {Quota("gpu", 4)});
  Run("alone", 4, {{"gpu", 1}});
  Run("a", 6, {{"gpu", 1}});
  EXPECT_EQ(state_.WeightedShare("alone"), 0);
  // The root cohort has nobody to borrow from, however much its queues use.
  EXPECT_EQ(state_.WeightedShare("pool"), 0);
  EXPECT_TRUE(CohortDrs("pool").IsZero());
}

TEST_F(FairSharingTest, BorrowedPerMilleOfWhatTheParentCanLend) {
  AddQueue("a", "pool", {Quota("gpu", 4)});
  AddQueue("b", "pool", {Quota("gpu", 4)});
  Run("a", 6, {{"gpu", 1}});
  // Borrows 6 - 4 = 2 of the 8 the pool could give it: 2 * 1000 / 8.
  const DominantResourceShare drs = QueueDrs("a");
  EXPECT_TRUE(drs.borrowing);
  EXPECT_EQ(drs.dominant_resource, "gpu");
  EXPECT_DOUBLE_EQ(drs.unweighted_ratio, 250.0);
  EXPECT_EQ(state_.WeightedShare("a"), 250);
  EXPECT_EQ(state_.WeightedShare("b"), 0);
}

TEST_F(FairSharingTest, LendableCountsEveryFlavorOfTheResource) {
  AddQueue("a", "pool", {Quota("gpu", 2)}, 1.0, {Quota("gpu", 2)});
  AddQueue("b", "pool", {Quota("gpu", 2)}, 1.0, {Quota("gpu", 2)});
  Run("a", 4, {{"gpu", 1}});
  // All 4 land on f1, 2 over a's nominal there; the pool could lend 4 of f1 plus 4 of f2:
  // 2 * 1000 / 8 (per flavor it would be 2 * 1000 / 4 = 500).
  EXPECT_EQ(state_.ClusterQueueUsage("a")[0].total, 4);
  EXPECT_DOUBLE_EQ(QueueDrs("a").unweighted_ratio, 250.0);
}

TEST_F(FairSharingTest, DominantResourceIsTheLargestRatio) {
  AddQueue("a", "pool", {Quota("cpu", 4000), Quota("gpu", 4)});
  AddQueue("b", "pool", {Quota("cpu", 4000), Quota("gpu", 12)});
  Run("a", 3, {{"cpu", 2000}, {"gpu", 2}});
  // cpu: (6000 - 4000) * 1000 / 8000 = 250; gpu: (6 - 4) * 1000 / 16 = 125.
  const DominantResourceShare drs = QueueDrs("a");
  EXPECT_EQ(drs.dominant_resource, "cpu");
  EXPECT_DOUBLE_EQ(drs.unweighted_ratio, 250.0);
  EXPECT_EQ(state_.WeightedShare("a"), 250);
}

TEST_F(FairSharingTest, TiedResourcesResolveToTheSmallerName) {
  AddQueue("a", "pool", {Quota("cpu", 4000), Quota("gpu", 4)});
  AddQueue("b", "pool", {Quota("cpu", 4000), Quota("gpu", 4)});
  Run("a", 3, {{"cpu", 2000}, {"gpu", 2}});
  // Both resources borrow 2 of 8 (in their units): 250 each.
  const DominantResourceShare drs = QueueDrs("a");
  EXPECT_EQ(drs.dominant_resource, "cpu");
  EXPECT_DOUBLE_EQ(drs.unweighted_ratio, 250.0);
}

TEST_F(FairSharingTest, ExtraUsageCountsAsIfAdmitted) {
  AddQueue("a", "pool", {Quota("gpu", 4)});
  AddQueue("b", "pool", {Quota("gpu", 4)});
  Run("a", 4, {{"gpu", 1}});
  const std::map<FrId, int64_t> two_more = {{*state_.fr_index().Find("f1", "gpu"), 2}};
  EXPECT_TRUE(QueueDrs("a").IsZero());
  EXPECT_DOUBLE_EQ(QueueDrs("a", &two_more).unweighted_ratio, 250.0);
  EXPECT_TRUE(QueueDrs("a", &two_more).IsBorrowingOn(two_more));
}

struct WeightCase {
  std::string name;
  double weight;
  double precise;
  int64_t rounded;
};

class WeightTest : public FairSharingTest, public ::testing::WithParamInterface<WeightCase> {};

// a borrows 2 of 8: unweighted 250.
TEST_P(WeightTest, WeightDividesTheShare) {
  const WeightCase& c = GetParam();
  AddQueue("a", "pool", {Quota("gpu", 4)}, c.weight);
  AddQueue("b", "pool", {Quota("gpu", 4)});
  Run("a", 6, {{"gpu", 1}});
  const DominantResourceShare drs = QueueDrs("a");
  EXPECT_DOUBLE_EQ(drs.unweighted_ratio, 250.0);
  EXPECT_EQ(drs.PreciseWeightedShare(), c.precise);
  EXPECT_EQ(drs.RoundedWeightedShare(), c.rounded);
  EXPECT_EQ(state_.WeightedShare("a"), c.rounded);
}

INSTANTIATE_TEST_SUITE_P(
    Weights, WeightTest,
    ::testing::Values(WeightCase{"One", 1.0, 250.0, 250}, WeightCase{"Two", 2.0, 125.0, 125},
                      WeightCase{"Half", 0.5, 500.0, 500},
                      // 83.33... rounds up, as Kueue's status does.
                      WeightCase{"Three", 3.0, 250.0 / 3.0, 84},
                      // Weight 0: only what nobody else wants, so any borrowing is maximal.
                      WeightCase{"Zero", 0.0, std::numeric_limits<double>::infinity(),
                                 std::numeric_limits<int64_t>::max()}),
    [](const ::testing::TestParamInfo<WeightCase>& info) { return info.param.name; });

TEST_F(FairSharingTest, ZeroWeightWithoutBorrowingIsZero) {
  AddQueue("a", "pool", {Quota("gpu", 4)}, 0.0);
  AddQueue("b", "pool", {Quota("gpu", 4)});
  Run("a", 4, {{"gpu", 1}});
  const DominantResourceShare drs = QueueDrs("a");
  EXPECT_FALSE(drs.ZeroWeightBorrows());
  EXPECT_EQ(drs.PreciseWeightedShare(), 0.0);
  EXPECT_EQ(state_.WeightedShare("a"), 0);
}

// root <- child (cohort: nominal 0, borrowingLimit 1) <- a (2), b (2); root <- d (4).
TEST_F(FairSharingTest, CohortShareIsMeasuredAgainstItsParent) {
  ResourceGroupSpec limit{{"gpu"}, {{"f1", {Quota("gpu", 0, 1)}}}};
  ASSERT_TRUE(state_.ApplyCohort({"child", "root", {limit}, 2.0}, now_).ok());
  AddQueue("a", "child", {Quota("gpu", 2)});
  AddQueue("b", "child", {Quota("gpu", 2)});
  AddQueue("d", "root", {Quota("gpu", 4)});
  Run("a", 3, {{"gpu", 1}});
  Run("b", 2, {{"gpu", 1}});

  // child uses 5 of its subtree quota 4: borrows 1 of the 8 root could lend, 125 unweighted,
  // 62.5 with weight 2, reported rounded up.
  const DominantResourceShare child = CohortDrs("child");
  EXPECT_DOUBLE_EQ(child.unweighted_ratio, 125.0);
  EXPECT_DOUBLE_EQ(child.PreciseWeightedShare(), 62.5);
  EXPECT_EQ(state_.WeightedShare("child"), 63);
  // a borrows 1 from child, which could give it at most its subtree 4 plus its borrowing limit
  // 1: 1 * 1000 / 5.
  EXPECT_DOUBLE_EQ(QueueDrs("a").unweighted_ratio, 200.0);
  EXPECT_EQ(state_.WeightedShare("b"), 0);
  EXPECT_EQ(state_.WeightedShare("d"), 0);
}

TEST(WeightedShareTest, UnknownNameHasNoShare) {
  ClusterState state{SchedulerConfig{}};
  EXPECT_EQ(state.WeightedShare("nope"), 0);
}

// --- CompareDrs ----------------------------------------------------------------------------

DominantResourceShare Share(double weight, double unweighted) {
  DominantResourceShare drs;
  drs.fair_weight = weight;
  drs.unweighted_ratio = unweighted;
  drs.borrowing = unweighted > 0;
  return drs;
}

struct CompareCase {
  std::string name;
  DominantResourceShare a;
  DominantResourceShare b;
  int expected;
};

class CompareDrsTest : public ::testing::TestWithParam<CompareCase> {};

TEST_P(CompareDrsTest, Orders) {
  const CompareCase& c = GetParam();
  EXPECT_EQ(CompareDrs(c.a, c.b), c.expected);
  EXPECT_EQ(CompareDrs(c.b, c.a), -c.expected);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, CompareDrsTest,
    ::testing::Values(
        // 250 / 1 against 400 / 2 = 200: the weighted share decides, not the raw ratio.
        CompareCase{"ByWeightedShare", Share(1, 250), Share(2, 400), 1},
        CompareCase{"Equal", Share(2, 500), Share(1, 250), 0},
        CompareCase{"ZeroWeightBorrowerAfterAnyFiniteShare", Share(0, 1), Share(1, 900), 1},
        CompareCase{"ZeroWeightBorrowersByRawRatio", Share(0, 100), Share(0, 200), -1},
        // A zero weight that borrows nothing is just zero.
        CompareCase{"ZeroWeightNotBorrowingIsZero", Share(0, 0), Share(1, 0), 0}),
    [](const ::testing::TestParamInfo<CompareCase>& info) { return info.param.name; });

}  // namespace
}  // namespace tollgate::core
