#include "core/start_estimator.h"

#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "core/cluster_state.h"
#include "gtest/gtest.h"
#include "test/core/gpu_cluster_state_fixture.h"

namespace tollgate::core {
namespace {

const absl::Time kStart = absl::FromUnixSeconds(1767225600);

// A state driven as the executor drives it, on a clock the test moves.
class StartEstimatorTest : public ::testing::Test {
 protected:
  StartEstimatorTest() : state_(SchedulerConfig{}) {
    EXPECT_TRUE(state_.ApplyResourceFlavor({"a100", {}, {}, {}}, now_).ok());
  }

  void AddQueue(ClusterQueueSpec cq, const std::string& ns,
                StopPolicy lq_stop = StopPolicy::kNone) {
    const std::string name = cq.name;
    ASSERT_TRUE(state_.ApplyClusterQueue(std::move(cq), now_).ok());
    ASSERT_TRUE(state_.ApplyLocalQueue({ns, "q", name, lq_stop, 1.0}, now_).ok());
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

  // Runs a job of `ns` for `ran` so its LocalQueue's history learns that duration.
  void Teach(const std::string& ns, const std::string& name, absl::Duration ran) {
    Submit(GpuJob(name, ns, 1));
    ASSERT_EQ(state_.FindWorkload(ns + "/" + name)->status.state, WorkloadState::kAdmitted);
    now_ += ran;
    ASSERT_TRUE(state_.Finish(ns + "/" + name, "", now_).ok());
    Settle();
  }

  StartEstimate EstimateOf(const std::string& key, StartEstimateOptions options = {}) {
    absl::StatusOr<StartEstimates> all = EstimatePendingStarts(state_, now_, options);
    EXPECT_TRUE(all.ok()) << all.status();
    const Workload* wl = state_.FindWorkload(key);
    EXPECT_NE(wl, nullptr);
    auto it = all->by_id.find(wl->id);
    EXPECT_NE(it, all->by_id.end()) << key << " has no estimate";
    return it == all->by_id.end() ? StartEstimate{} : it->second;
  }

  absl::Time now_ = kStart;
  ClusterState state_;
};

TEST_F(StartEstimatorTest, AWorkloadThatFitsStartsNowInADryRun) {
  AddQueue(GpuQueue("cq", "", 8), "ns");
  absl::StatusOr<StartEstimate> e = EstimateSubmission(state_, GpuJob("a", "ns", 4), now_, {});
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->kind, StartEstimate::Kind::kEstimated);
  EXPECT_EQ(e->likely, now_);
  EXPECT_EQ(FormatStartEstimate(*e, now_), "now");
  // The dry run changed nothing.
  EXPECT_EQ(state_.FindWorkload("ns/a"), nullptr);
}

TEST_F(StartEstimatorTest, WaitsForTheRunningWorkloadToReachItsDeclaredEnd) {
  AddQueue(GpuQueue("cq", "", 8), "ns");
  Submit(TimedGpuJob("running", "ns", 8, 0, /*max_seconds=*/3600));
  now_ += absl::Minutes(20);
  Submit(GpuJob("waiting", "ns", 8));
  const StartEstimate e = EstimateOf("ns/waiting");
  EXPECT_EQ(e.kind, StartEstimate::Kind::kEstimated);
  EXPECT_EQ(e.likely, kStart + absl::Hours(1));
  // Declared runtimes leave no range to give.
  EXPECT_FALSE(e.late.has_value());
  EXPECT_EQ(e.basis, "runtimes: 1 declared, 0 from LocalQueue history, 0 unknown");
  EXPECT_EQ(FormatStartEstimate(e, now_), "in 40m");
}

TEST_F(StartEstimatorTest, LearnsRuntimesFromTheLocalQueuesFinishedWorkloads) {
  AddQueue(GpuQueue("cq", "", 8), "ns");
  // Durations 10m, 20m, ..., 100m: p50 = 50m, p90 = 90m.
  for (int i = 1; i <= 10; ++i) Teach("ns", "old-" + std::to_string(i), absl::Minutes(10 * i));
  const absl::Time started = now_;
  Submit(GpuJob("running", "ns", 8));
  now_ += absl::Minutes(5);
  Submit(GpuJob("waiting", "ns", 8));
  const StartEstimate e = EstimateOf("ns/waiting");
  ASSERT_EQ(e.kind, StartEstimate::Kind::kEstimated);
  // It has run 5m, so every recorded duration is still possible.
  EXPECT_EQ(e.likely, started + absl::Minutes(50));
  ASSERT_TRUE(e.late.has_value());
  EXPECT_EQ(*e.late, started + absl::Minutes(90));
  EXPECT_EQ(e.basis, "runtimes: 0 declared, 1 from LocalQueue history, 0 unknown");
}

TEST_F(StartEstimatorTest, AWorkloadThatRanPastShortDurationsIsGivenTheLongerOnes) {
  AddQueue(GpuQueue("cq", "", 8), "ns");
  for (int i = 1; i <= 10; ++i) Teach("ns", "old-" + std::to_string(i), absl::Minutes(10 * i));
  const absl::Time started = now_;
  Submit(GpuJob("running", "ns", 8));
  now_ += absl::Minutes(65);
  Submit(GpuJob("waiting", "ns", 8));
  // Durations above 65m: 70, 80, 90, 100 -> nearest-rank p50 80m.
  const StartEstimate e = EstimateOf("ns/waiting");
  ASSERT_EQ(e.kind, StartEstimate::Kind::kEstimated);
  EXPECT_EQ(e.likely, started + absl::Minutes(80));
}

TEST_F(StartEstimatorTest, QueueOrderIsTheSchedulersOwn) {
  AddQueue(GpuQueue("cq", "", 8), "ns");
  Submit(TimedGpuJob("running", "ns", 8, 0, 600));
  Submit(TimedGpuJob("first", "ns", 8, 0, 600));
  Submit(TimedGpuJob("second", "ns", 8, 0, 600));
  // A higher priority jumps the queue, as it would in a cycle.
  Submit(TimedGpuJob("urgent", "ns", 8, 10, 600));
  EXPECT_EQ(EstimateOf("ns/urgent").likely, now_ + absl::Minutes(10));
  EXPECT_EQ(EstimateOf("ns/first").likely, now_ + absl::Minutes(20));
  EXPECT_EQ(EstimateOf("ns/second").likely, now_ + absl::Minutes(30));
}

TEST_F(StartEstimatorTest, UnknownWithoutDeclaredRuntimeOrHistory) {
  AddQueue(GpuQueue("cq", "", 8), "ns");
  Submit(GpuJob("running", "ns", 8));
  Submit(GpuJob("waiting", "ns", 8));
  const StartEstimate e = EstimateOf("ns/waiting");
  EXPECT_EQ(e.kind, StartEstimate::Kind::kUnknown);
  EXPECT_EQ(e.reason,
            "1 workloads holding quota have no known runtime (no declared "
            "maximumExecutionTimeSeconds and no finished workload in their LocalQueue)");
  EXPECT_EQ(FormatStartEstimate(e, now_), "unknown");
}

TEST_F(StartEstimatorTest, UnknownWhenItCanNeverFit) {
  AddQueue(GpuQueue("cq", "", 8), "ns");
  Submit(GpuJob("huge", "ns", 16));
  const StartEstimate e = EstimateOf("ns/huge");
  EXPECT_EQ(e.kind, StartEstimate::Kind::kUnknown);
  EXPECT_TRUE(absl::StartsWith(e.reason, "it does not fit even after every workload ahead"))
      << e.reason;
}

TEST_F(StartEstimatorTest, UnknownWhenItsQueueIsStopped) {
  AddQueue(GpuQueue("cq", "", 8), "ns", StopPolicy::kHold);
  Submit(GpuJob("held", "ns", 1));
  const StartEstimate e = EstimateOf("ns/held");
  EXPECT_EQ(e.kind, StartEstimate::Kind::kUnknown);
  EXPECT_EQ(e.reason, "LocalQueue q is stopped");
}

TEST_F(StartEstimatorTest, NotBeforeTheHorizonWhenTheQueueIsLong) {
  AddQueue(GpuQueue("cq", "", 8), "ns");
  for (int i = 0; i < 5; ++i) Submit(TimedGpuJob("j" + std::to_string(i), "ns", 8, 0, 3600));
  StartEstimateOptions options;
  options.horizon = absl::Hours(2);
  const StartEstimate last = EstimateOf("ns/j4", options);
  EXPECT_EQ(last.kind, StartEstimate::Kind::kNotBefore);
  EXPECT_EQ(last.likely, now_ + absl::Hours(2));
  EXPECT_EQ(FormatStartEstimate(last, now_), "not before 2h");
  const StartEstimate second = EstimateOf("ns/j2", options);
  EXPECT_EQ(second.kind, StartEstimate::Kind::kEstimated);
  EXPECT_EQ(second.likely, now_ + absl::Hours(2));
}

TEST_F(StartEstimatorTest, BorrowsIdleQuotaFromTheCohort) {
  AddQueue(GpuQueue("a", "pool", 4), "team-a");
  AddQueue(GpuQueue("b", "pool", 4), "team-b");
  Submit(TimedGpuJob("running", "team-a", 4, 0, 1800));
  absl::StatusOr<StartEstimate> e =
      EstimateSubmission(state_, GpuJob("wide", "team-a", 8), now_, {});
  ASSERT_TRUE(e.ok()) << e.status();
  // Team b's idle 4 GPUs are borrowed once team a's own job ends.
  EXPECT_EQ(e->likely, now_ + absl::Minutes(30));
}

TEST_F(StartEstimatorTest, ReclaimPreemptsABorrowerSoTheOwnerStartsNow) {
  ClusterQueueSpec a = GpuQueue("a", "pool", 4);
  a.preemption.reclaim_within_cohort = PreemptionPolicy::kAny;
  AddQueue(std::move(a), "team-a");
  AddQueue(GpuQueue("b", "pool", 4), "team-b");
  // Team b borrows team a's idle quota for a long job.
  Submit(TimedGpuJob("borrower", "team-b", 8, 0, 10 * 3600));
  ASSERT_EQ(state_.FindWorkload("team-b/borrower")->status.state, WorkloadState::kAdmitted);
  absl::StatusOr<StartEstimate> owner =
      EstimateSubmission(state_, TimedGpuJob("owner", "team-a", 4, 0, 600), now_, {});
  ASSERT_TRUE(owner.ok()) << owner.status();
  EXPECT_EQ(owner->likely, now_);
  // Without reclaim, team b's queue would have to wait the borrower out.
  absl::StatusOr<StartEstimate> other =
      EstimateSubmission(state_, TimedGpuJob("next", "team-b", 4, 0, 600), now_, {});
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_GT(other->likely, now_);
}

// The copy keeps what the live state knows of a terminating ClusterQueue: it is no preemption
// target, so the owner waits for the borrower to end, and then the queue goes.
TEST_F(StartEstimatorTest, ATerminatingBorrowerIsWaitedOutNotReclaimed) {
  ClusterQueueSpec a = GpuQueue("a", "pool", 4);
  a.preemption.reclaim_within_cohort = PreemptionPolicy::kAny;
  AddQueue(std::move(a), "team-a");
  AddQueue(GpuQueue("b", "pool", 4), "team-b");
  Submit(TimedGpuJob("borrower", "team-b", 8, 0, 3600));
  ASSERT_TRUE(state_.DeleteObject(ObjectKind::kClusterQueue, "", "b", now_).ok());
  ASSERT_FALSE(state_.cluster_queue("b")->active);
  Submit(TimedGpuJob("owner", "team-a", 4, 0, 600));
  ASSERT_EQ(state_.FindWorkload("team-a/owner")->status.state, WorkloadState::kPending);
  EXPECT_EQ(EstimateOf("team-a/owner").likely, kStart + absl::Hours(1));
  // Once b is gone with its last workload, its 4 are gone from the cohort too: 8 never fit.
  absl::StatusOr<StartEstimate> wide =
      EstimateSubmission(state_, GpuJob("wide", "team-a", 8), now_, {});
  ASSERT_TRUE(wide.ok()) << wide.status();
  EXPECT_EQ(wide->kind, StartEstimate::Kind::kUnknown);
}

TEST_F(StartEstimatorTest, UnknownWhenItsClusterQueueIsTerminating) {
  AddQueue(GpuQueue("cq", "", 8), "ns");
  Submit(GpuJob("forever", "ns", 8));  // no runtime known: the queue never goes in the copy
  Submit(GpuJob("short", "ns", 8));
  ASSERT_TRUE(state_.DeleteObject(ObjectKind::kClusterQueue, "", "cq", now_).ok());
  EXPECT_EQ(EstimateOf("ns/short").reason, "ClusterQueue cq is terminating");
}

TEST_F(StartEstimatorTest, SlurmsRuleUsesOnlyDeclaredLimits) {
  AddQueue(GpuQueue("cq", "", 8), "ns");
  for (int i = 1; i <= 4; ++i) Teach("ns", "old-" + std::to_string(i), absl::Minutes(10));
  Submit(TimedGpuJob("running", "ns", 8, 0, 4 * 3600));
  Submit(GpuJob("waiting", "ns", 8));
  StartEstimateOptions slurm;
  slurm.runtimes = RuntimeSource::kDeclaredOnly;
  EXPECT_EQ(EstimateOf("ns/waiting", slurm).likely, now_ + absl::Hours(4));
  StartEstimateOptions learned;
  learned.runtimes = RuntimeSource::kHistoryOnly;
  EXPECT_EQ(EstimateOf("ns/waiting", learned).likely, now_ + absl::Minutes(10));
}

TEST_F(StartEstimatorTest, DeterministicAndLeavesTheStateAlone) {
  AddQueue(GpuQueue("cq", "", 8), "ns");
  for (int i = 0; i < 6; ++i)
    Submit(TimedGpuJob("j" + std::to_string(i), "ns", 3, i % 3, 900 * (i + 1)));
  const int64_t dirty_before = state_.HasUncommittedChanges();
  absl::StatusOr<StartEstimates> a = EstimatePendingStarts(state_, now_, {});
  absl::StatusOr<StartEstimates> b = EstimatePendingStarts(state_, now_, {});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->by_id, b->by_id);
  EXPECT_EQ(state_.HasUncommittedChanges(), dirty_before);
  for (const Workload* wl : state_.AllWorkloads()) {
    EXPECT_EQ(a->by_id.contains(wl->id), wl->status.state == WorkloadState::kPending) << wl->Key();
  }
}

// What the executor does when it commits: each changed workload carries the new revision.
void Commit(ClusterState& state, int64_t revision) {
  for (WorkloadId id : state.TakeDirtyWorkloads()) {
    state.mutable_workload(id)->resource_version = revision;
  }
}

TEST_F(StartEstimatorTest, AnIncrementalSnapshotEstimatesAsAFreshOne) {
  AddQueue(GpuQueue("cq", "", 8), "ns");
  Teach("ns", "t", absl::Minutes(30));
  for (int i = 0; i < 6; ++i) Submit(GpuJob("j" + std::to_string(i), "ns", 3, i % 3));
  Commit(state_, 1);
  std::shared_ptr<const EstimateSnapshot> first = TakeEstimateSnapshot(state_, now_);
  EXPECT_EQ(first->reused, 0);

  // A revision later: one workload finished, one submitted, time moved.
  now_ += absl::Minutes(5);
  const Workload* running = nullptr;
  for (const Workload* wl : state_.AllWorkloads()) {
    if (wl->status.state == WorkloadState::kAdmitted) running = wl;
  }
  ASSERT_NE(running, nullptr);
  ASSERT_TRUE(state_.Finish(running->Key(), "", now_).ok());
  Submit(GpuJob("late", "ns", 2, 5));
  Commit(state_, 2);
  std::shared_ptr<const EstimateSnapshot> next = TakeEstimateSnapshot(state_, now_, first.get());
  EXPECT_GT(next->reused, 0);
  EXPECT_LT(next->reused, static_cast<int64_t>(next->workloads.size()));

  absl::StatusOr<StartEstimates> incremental = EstimatePendingStarts(*next, {});
  absl::StatusOr<StartEstimates> fresh = EstimatePendingStarts(state_, now_, {});
  ASSERT_TRUE(incremental.ok() && fresh.ok());
  EXPECT_FALSE(fresh->by_id.empty());
  EXPECT_EQ(incremental->by_id, fresh->by_id);
  // A change not committed yet is copied, not shared.
  ASSERT_TRUE(state_.SetPriority("ns/late", 9, now_).ok());
  std::shared_ptr<const EstimateSnapshot> dirty = TakeEstimateSnapshot(state_, now_, next.get());
  for (const auto& wl : dirty->workloads) {
    if (wl->spec.name == "late") {
      EXPECT_EQ(wl->priority, 9);
    }
  }
}

TEST_F(StartEstimatorTest, ADeclaredLimitCountsTheTimeOfEarlierAdmissions) {
  AddQueue(GpuQueue("cq", "", 8), "ns");
  Submit(TimedGpuJob("w", "ns", 8, 0, 600));
  now_ += absl::Minutes(4);
  ASSERT_TRUE(state_.Evict("ns/w", "Operator", "drained", now_).ok());
  Settle();  // admitted again at once, with 6 of its 10 minutes left
  ASSERT_EQ(state_.FindWorkload("ns/w")->status.state, WorkloadState::kAdmitted);
  Submit(GpuJob("next", "ns", 8));
  EXPECT_EQ(EstimateOf("ns/next").likely, now_ + absl::Minutes(6));
}

TEST(RuntimeDistributionTest, NearestRankAndConditionalQuantiles) {
  RuntimeHistory history;
  for (int m : {30, 10, 20, 40}) history.Record("ns/q", absl::Minutes(m));
  history.Record("ns/q", -absl::Minutes(1));  // ignored
  RuntimeDistribution d(history, "ns/q");
  EXPECT_EQ(d.size(), 4u);
  EXPECT_EQ(d.Quantile(0.5), absl::Minutes(20));
  EXPECT_EQ(d.Quantile(0.9), absl::Minutes(40));
  EXPECT_EQ(d.QuantileGiven(0.5, absl::Minutes(25)), absl::Minutes(30));
  EXPECT_EQ(d.QuantileGiven(0.5, absl::Minutes(40)), std::nullopt);
  EXPECT_TRUE(RuntimeDistribution(history, "ns/other").empty());
}

TEST(RuntimeHistoryTest, KeepsTheLatestSamplesPerQueue) {
  RuntimeHistory history;
  for (size_t i = 0; i < RuntimeHistory::kMaxSamplesPerQueue + 10; ++i) {
    history.Record("ns/q", absl::Seconds(static_cast<int64_t>(i)));
  }
  ASSERT_NE(history.Samples("ns/q"), nullptr);
  EXPECT_EQ(history.Samples("ns/q")->size(), RuntimeHistory::kMaxSamplesPerQueue);
  EXPECT_EQ(history.Samples("ns/q")->front(), absl::Seconds(10));
}

}  // namespace
}  // namespace tollgate::core
