#include "core/incremental_start_estimator.h"

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/cluster_state.h"
#include "core/start_estimator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/core/gpu_cluster_state_fixture.h"

namespace tollgate::core {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// Every queue here reclaims within its cohort and preempts lower priorities inside itself.
ClusterQueueSpec PreemptingGpuQueue(std::string name, std::string cohort, int64_t nominal) {
  ClusterQueueSpec spec = GpuQueue(std::move(name), std::move(cohort), nominal);
  spec.preemption.reclaim_within_cohort = PreemptionPolicy::kAny;
  spec.preemption.within_cluster_queue = PreemptionPolicy::kLowerPriority;
  return spec;
}

// Several independent trees, driven as the executor drives them: a two-level cohort tree
// (pool and lab under root), a cohort with no object (solo), and a ClusterQueue alone with
// strict FIFO order. Each ClusterQueue has one LocalQueue "q" in the namespace of its name.
class IncrementalStartEstimatorTest : public ::testing::Test {
 protected:
  IncrementalStartEstimatorTest() : state_(SchedulerConfig{}) {
    EXPECT_TRUE(state_.ApplyResourceFlavor({"a100", {}, {}, {}}, now_).ok());
    EXPECT_TRUE(state_.ApplyCohort({"root", "", {}, 1.0}, now_).ok());
    EXPECT_TRUE(state_.ApplyCohort({"pool", "root", {}, 1.0}, now_).ok());
    EXPECT_TRUE(state_.ApplyCohort({"lab", "root", {}, 1.0}, now_).ok());
    AddQueue(PreemptingGpuQueue("cq-a", "pool", 8));
    AddQueue(PreemptingGpuQueue("cq-b", "lab", 4));
    AddQueue(PreemptingGpuQueue("cq-c", "solo", 6));
    AddQueue(PreemptingGpuQueue("cq-d", "solo", 2));
    ClusterQueueSpec strict = PreemptingGpuQueue("cq-e", "", 6);
    strict.queueing_strategy = QueueingStrategy::kStrictFifo;
    AddQueue(strict);
    AddQueue(PreemptingGpuQueue("cq-f", "", 4));
  }

  void AddQueue(ClusterQueueSpec cq) {
    const std::string name = cq.name;
    ASSERT_TRUE(state_.ApplyClusterQueue(std::move(cq), now_).ok());
    ASSERT_TRUE(state_.ApplyLocalQueue({name, "q", name, StopPolicy::kNone, 1.0}, now_).ok());
  }

  void Submit(WorkloadSpec spec) {
    ASSERT_TRUE(state_.Submit(std::move(spec), "", now_).ok());
    Settle();
  }

  void Settle() {
    while (true) {
      CyclePlan plan = state_.PlanCycle(now_);
      state_.ApplyCycle(plan, now_);
      if (!plan.MadeProgress()) return;
    }
  }

  // What the executor does when it commits: each changed workload carries the new revision.
  void Commit() {
    ++revision_;
    for (WorkloadId id : state_.TakeDirtyWorkloads()) {
      state_.mutable_workload(id)->resource_version = revision_;
    }
  }

  std::shared_ptr<const EstimateSnapshot> Snapshot() {
    Commit();
    snapshot_ = TakeEstimateSnapshot(state_, now_, snapshot_.get());
    return snapshot_;
  }

  // Teaches each LocalQueue but cq-f's some runtimes, and fills every ClusterQueue with a
  // backlog of mixed priorities, declared and learned runtimes.
  void Populate(std::mt19937_64& rng) {
    for (const char* ns : {"cq-a", "cq-b", "cq-c", "cq-d", "cq-e"}) {
      for (int i = 0; i < 3; ++i) {
        const std::string name = absl::StrCat("teach-", i);
        Submit(GpuJob(name, ns, 1));
        now_ += absl::Minutes(10 + 20 * i);
        ASSERT_TRUE(state_.Finish(absl::StrCat(ns, "/", name), "", now_).ok());
      }
    }
    Settle();
    for (int i = 0; i < 60; ++i) SubmitRandom(rng);
  }

  void SubmitRandom(std::mt19937_64& rng) {
    static const char* const kQueues[] = {"cq-a", "cq-b", "cq-c", "cq-d", "cq-e", "cq-f"};
    const char* ns = kQueues[rng() % 6];
    std::optional<int32_t> max_seconds;
    if (rng() % 2 == 0) max_seconds = static_cast<int32_t>(600 * (1 + rng() % 12));
    Submit(TimedGpuJob(absl::StrCat("job-", next_job_++), ns, static_cast<int32_t>(1 + rng() % 4),
                       static_cast<int32_t>(rng() % 3), max_seconds));
  }

  // One random change of the kinds a revision brings.
  void ChangeRandomly(std::mt19937_64& rng) {
    std::vector<const Workload*> admitted, pending;
    for (const Workload* wl : state_.AllWorkloads()) {
      if (wl->status.state == WorkloadState::kAdmitted) admitted.push_back(wl);
      if (wl->status.state == WorkloadState::kPending) pending.push_back(wl);
    }
    switch (rng() % 5) {
      case 0:
        SubmitRandom(rng);
        break;
      case 1:
        if (!admitted.empty()) {
          ASSERT_TRUE(state_.Finish(admitted[rng() % admitted.size()]->Key(), "", now_).ok());
          Settle();
        }
        break;
      case 2:
        if (!pending.empty()) {
          ASSERT_TRUE(state_
                          .SetPriority(pending[rng() % pending.size()]->Key(),
                                       static_cast<int32_t>(rng() % 5), now_)
                          .ok());
          Settle();
        }
        break;
      case 3: {
        ClusterQueueSpec cq = state_.cluster_queue_specs().at("cq-b");
        cq.resource_groups[0].flavors[0].resources[0].nominal = 3 + static_cast<int64_t>(rng() % 4);
        ASSERT_TRUE(state_.ApplyClusterQueue(std::move(cq), now_).ok());
        Settle();
        break;
      }
      case 4:
        now_ += absl::Minutes(1 + static_cast<int64_t>(rng() % 30));
        (void)state_.FireTimers(now_);
        Settle();
        break;
    }
  }

  absl::Time now_ = kFixtureStart;
  ClusterState state_;
  int64_t revision_ = 0;
  int64_t next_job_ = 0;
  std::shared_ptr<const EstimateSnapshot> snapshot_;
};

TEST_F(IncrementalStartEstimatorTest, AfterRandomChangesEstimatesAsAFreshFullComputation) {
  std::mt19937_64 rng(30);
  Populate(rng);
  // Age 0: a tree is reused only at the same instant, where a fresh computation must agree.
  IncrementalStartEstimator estimator({}, absl::ZeroDuration());
  int64_t trees = 0, simulated = 0;
  for (int round = 0; round < 40; ++round) {
    ChangeRandomly(rng);
    std::shared_ptr<const EstimateSnapshot> snapshot = Snapshot();
    absl::StatusOr<StartEstimates> incremental = estimator.Estimate(*snapshot);
    absl::StatusOr<StartEstimates> fresh = EstimatePendingStarts(state_, now_, {});
    ASSERT_TRUE(incremental.ok()) << incremental.status();
    ASSERT_TRUE(fresh.ok()) << fresh.status();
    ASSERT_FALSE(fresh->by_id.empty());
    EXPECT_EQ(incremental->by_id, fresh->by_id) << "round " << round;
    EXPECT_EQ(incremental->trees, fresh->trees);
    trees += incremental->trees;
    simulated += incremental->trees_simulated;
  }
  // Most rounds change one tree of four or five.
  EXPECT_LT(simulated, trees / 2);
}

TEST_F(IncrementalStartEstimatorTest, SimulatesOnlyTheTreesWhoseInputsChanged) {
  // cq-a and cq-b are one tree (pool and lab share root), cq-c and cq-d another (solo).
  AddQueue(PreemptingGpuQueue("cq-g", "", 4));
  Submit(TimedGpuJob("a-run", "cq-a", 8, 0, 3600));
  Submit(TimedGpuJob("a-wait", "cq-a", 5, 0, 600));  // cq-b lends only 4
  Submit(TimedGpuJob("c-run", "cq-c", 6, 0, 3600));
  Submit(TimedGpuJob("c-wait", "cq-c", 6, 0, 600));  // cq-d lends only 2
  Submit(TimedGpuJob("c-wait-2", "cq-c", 6, 0, 600));
  Submit(TimedGpuJob("e-run", "cq-e", 6, 0, 3600));
  Submit(TimedGpuJob("e-wait", "cq-e", 6, 0, 600));
  IncrementalStartEstimator estimator({}, absl::Minutes(1));
  // The trees simulated at a new snapshot; at an unchanged instant the answer must be a fresh
  // computation's.
  absl::Time last_now = now_;
  auto simulated = [&] {
    absl::StatusOr<StartEstimates> estimates = estimator.Estimate(*Snapshot());
    EXPECT_TRUE(estimates.ok()) << estimates.status();
    absl::StatusOr<StartEstimates> fresh = EstimatePendingStarts(state_, now_, {});
    EXPECT_TRUE(fresh.ok());
    if (estimates.ok() && fresh.ok() && now_ == last_now) {
      EXPECT_EQ(estimates->by_id, fresh->by_id);
    }
    last_now = now_;
    return estimator.last_simulated();
  };
  // Trees without pending workloads (cq-f, cq-g) need no simulation.
  EXPECT_THAT(simulated(), ElementsAre("cq-a", "cq-c", "cq-e"));
  EXPECT_THAT(simulated(), IsEmpty());

  Submit(TimedGpuJob("b-wait", "cq-b", 8, 0, 600));
  EXPECT_THAT(simulated(), ElementsAre("cq-a"));

  ASSERT_TRUE(state_.Finish("cq-c/c-run", "", now_).ok());
  Settle();  // c-wait starts, c-wait-2 waits for it
  EXPECT_THAT(simulated(), ElementsAre("cq-c"));

  Submit(TimedGpuJob("g-wait", "cq-g", 5, 0, 600));  // more than cq-g has: pending
  EXPECT_THAT(simulated(), ElementsAre("cq-g"));

  ClusterQueueSpec e = state_.cluster_queue_specs().at("cq-e");
  e.stop_policy = StopPolicy::kHold;
  ASSERT_TRUE(state_.ApplyClusterQueue(e, now_).ok());
  EXPECT_THAT(simulated(), ElementsAre("cq-e"));

  // A change every tree reads (a priority class) simulates them all.
  ASSERT_TRUE(state_.ApplyPriorityClass({"high", 100, false}, now_).ok());
  EXPECT_THAT(simulated(), ElementsAre("cq-a", "cq-c", "cq-e", "cq-g"));

  // Ageing: unchanged trees are reused for a minute, then simulated again.
  now_ += absl::Seconds(30);
  EXPECT_THAT(simulated(), IsEmpty());
  now_ += absl::Seconds(31);
  EXPECT_THAT(simulated(), ElementsAre("cq-a", "cq-c", "cq-e", "cq-g"));
}

TEST_F(IncrementalStartEstimatorTest, ALocalQueuePointedElsewhereJoinsTheTreesOfItsWorkloads) {
  Submit(TimedGpuJob("f-run", "cq-f", 4, 0, 3600));
  Submit(TimedGpuJob("f-wait", "cq-f", 2, 0, 600));
  // cq-f's LocalQueue now points at cq-e: f-run still holds quota in cq-f, so cq-e and cq-f are
  // one tree (preempted in the copy, f-run would queue in cq-e).
  ASSERT_TRUE(state_.ApplyLocalQueue({"cq-f", "q", "cq-e", StopPolicy::kNone, 1.0}, now_).ok());
  Settle();
  std::vector<std::string> names;
  for (const EstimateTree& tree : SplitIntoTrees(*Snapshot(), {})) names.push_back(tree.name);
  EXPECT_THAT(names, ElementsAre("cq-a", "cq-c", "cq-e"));
}

TEST_F(IncrementalStartEstimatorTest, IndependentTreesStartAsInOneRunOfTheWholeState) {
  std::mt19937_64 rng(7);
  Populate(rng);
  for (int round = 0; round < 20; ++round) ChangeRandomly(rng);
  // Bounds that no run reaches, since they hold per run: per tree, or for the whole state.
  StartEstimateOptions trees;
  trees.max_steps = 1'000'000;
  trees.max_cycles = 10'000'000;
  trees.horizon = absl::Hours(24 * 1000);
  StartEstimateOptions whole = trees;
  whole.independent_trees = false;
  std::shared_ptr<const EstimateSnapshot> snapshot = Snapshot();
  EXPECT_EQ(SplitIntoTrees(*snapshot, trees).size(), 4u);
  ASSERT_EQ(SplitIntoTrees(*snapshot, whole).size(), 1u);
  absl::StatusOr<StartEstimates> by_tree = EstimatePendingStarts(*snapshot, trees);
  absl::StatusOr<StartEstimates> at_once = EstimatePendingStarts(*snapshot, whole);
  ASSERT_TRUE(by_tree.ok() && at_once.ok());
  ASSERT_EQ(by_tree->by_id.size(), at_once->by_id.size());
  int64_t estimated = 0;
  for (const auto& [id, e] : at_once->by_id) {
    const StartEstimate& t = by_tree->by_id.at(id);
    EXPECT_EQ(t.kind, e.kind) << id;
    EXPECT_EQ(t.likely, e.likely) << id;
    // The late run is made per tree when that tree learned a runtime; in one run it is made when
    // any tree did, and then equals the likely start in a tree that learned none.
    EXPECT_EQ(t.late.value_or(t.likely), e.late.value_or(e.likely)) << id;
    estimated += e.kind == StartEstimate::Kind::kEstimated;
  }
  EXPECT_GT(estimated, 20);
}

TEST_F(IncrementalStartEstimatorTest, TopologyAwareSchedulingLinksEveryTreeAndIsNeverReused) {
  Submit(TimedGpuJob("a-run", "cq-a", 8, 0, 3600));
  Submit(TimedGpuJob("a-wait", "cq-a", 5, 0, 600));
  Submit(TimedGpuJob("e-run", "cq-e", 6, 0, 3600));
  Submit(TimedGpuJob("e-wait", "cq-e", 6, 0, 600));
  // Pods of every tree may share the nodes of a Topology: one copy of the whole state.
  ASSERT_TRUE(state_.ApplyTopology({"default", {"kubernetes.io/hostname"}}, now_).ok());
  std::vector<EstimateTree> trees = SplitIntoTrees(*Snapshot(), {});
  ASSERT_EQ(trees.size(), 1u);
  EXPECT_TRUE(trees[0].whole);
  EXPECT_EQ(trees[0].pending, 2);
  IncrementalStartEstimator estimator({}, absl::Minutes(1));
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<StartEstimates> estimates = estimator.Estimate(*Snapshot());
    ASSERT_TRUE(estimates.ok()) << estimates.status();
    EXPECT_EQ(estimates->by_id.size(), 2u);
    EXPECT_THAT(estimator.last_simulated(), ElementsAre("")) << "simulated at every revision";
  }
}

}  // namespace
}  // namespace tollgate::core
