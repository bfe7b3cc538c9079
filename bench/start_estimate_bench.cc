// Cost of start-time estimates (core/start_estimator.h): every pending workload's estimate
// (what a describe, `get workloads -o wide` or a visibility page computes once per store
// revision) and one dry-run submission, at 1k and 10k pending; and, with many independent
// cohort trees, a new revision's estimates when one submission changed one tree
// (core/incremental_start_estimator.h). docs/start-estimates.md has the command and the numbers.

#include <cstdint>
#include <memory>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "core/cluster_state.h"
#include "core/incremental_start_estimator.h"
#include "core/start_estimator.h"

namespace tollgate::core {
namespace {

const absl::Time kStart = absl::FromUnixSeconds(1767225600);
constexpr int kTeams = 10;
constexpr int64_t kGpusPerTeam = 128;

WorkloadSpec Job(int team, int64_t n, int32_t gpus) {
  WorkloadSpec spec;
  spec.namespace_name = absl::StrCat("team-", team);
  spec.name = absl::StrCat("job-", n);
  spec.queue_name = "q";
  spec.pod_sets = {PodSetSpec{"main", 1, std::nullopt, {{"gpu", gpus}}, {}, {}}};
  return spec;
}

WorkloadSpec TreeJob(int tree, int team, int64_t n, int32_t gpus) {
  WorkloadSpec spec;
  spec.namespace_name = absl::StrCat("tree-", tree, "-team-", team);
  spec.name = absl::StrCat("job-", n);
  spec.queue_name = "q";
  spec.pod_sets = {PodSetSpec{"main", 1, std::nullopt, {{"gpu", gpus}}, {}, {}}};
  return spec;
}

void Settle(ClusterState& state, absl::Time now) {
  while (true) {
    CyclePlan plan = state.PlanCycle(now);
    state.ApplyCycle(plan, now);
    if (!plan.MadeProgress()) return;
  }
}

// Ten teams in one cohort, 128 GPUs each; each LocalQueue has learned 64 runtimes (10 min to
// 8 h); the cluster is full, and `pending` jobs of 1-8 GPUs wait, spread over the teams.
std::unique_ptr<ClusterState> MakeState(int64_t pending, absl::Time& now) {
  auto state = std::make_unique<ClusterState>(SchedulerConfig{});
  now = kStart;
  (void)state->ApplyResourceFlavor({"a100", {}, {}, {}}, now);
  for (int t = 0; t < kTeams; ++t) {
    ClusterQueueSpec cq;
    cq.name = absl::StrCat("cq-", t);
    cq.cohort = "pool";
    cq.resource_groups = {
        {{"gpu"}, {{"a100", {{"gpu", kGpusPerTeam, std::nullopt, std::nullopt}}}}}};
    cq.preemption.reclaim_within_cohort = PreemptionPolicy::kAny;
    (void)state->ApplyClusterQueue(cq, now);
    (void)state->ApplyLocalQueue({absl::StrCat("team-", t), "q", cq.name, StopPolicy::kNone, 1.0},
                                 now);
  }
  std::mt19937_64 rng(17);
  std::uniform_int_distribution<int64_t> minutes(10, 480);
  std::uniform_int_distribution<int32_t> gpus(1, 8);
  int64_t n = 0;
  // History: 64 finished jobs per team.
  for (int round = 0; round < 64; ++round) {
    for (int t = 0; t < kTeams; ++t) (void)state->Submit(Job(t, n++, 1), "", now);
    Settle(*state, now);
    now += absl::Minutes(minutes(rng));
    for (const Workload* wl : state->AllWorkloads()) {
      if (wl->status.state == WorkloadState::kAdmitted) (void)state->Finish(wl->Key(), "", now);
    }
  }
  // Fill the cluster, then queue the backlog.
  for (int64_t i = 0; i < pending + kTeams * kGpusPerTeam; ++i) {
    (void)state->Submit(Job(static_cast<int>(i % kTeams), n++, gpus(rng)), "", now);
    if (i == kTeams * kGpusPerTeam / 4) Settle(*state, now);
  }
  Settle(*state, now);
  now += absl::Minutes(30);
  return state;
}

// What the last run answered: how many estimates, how many "not before", and its cycles.
void CountAnswers(const StartEstimates& last, benchmark::State& bench) {
  int64_t estimated = 0, not_before = 0;
  for (const auto& [id, e] : last.by_id) {
    estimated += e.kind == StartEstimate::Kind::kEstimated;
    not_before += e.kind == StartEstimate::Kind::kNotBefore;
  }
  bench.counters["pending"] = static_cast<double>(last.by_id.size());
  bench.counters["estimated"] = static_cast<double>(estimated);
  bench.counters["not_before"] = static_cast<double>(not_before);
  bench.counters["cycles"] = static_cast<double>(last.cycles);
}

void BM_EstimateAllPending(benchmark::State& bench) {
  absl::Time now;
  std::unique_ptr<ClusterState> state = MakeState(bench.range(0), now);
  StartEstimateOptions options;
  options.max_cycles = bench.range(1);
  StartEstimates last;
  for (auto _ : bench) {
    absl::StatusOr<StartEstimates> estimates = EstimatePendingStarts(*state, now, options);
    if (!estimates.ok()) {
      bench.SkipWithError(std::string(estimates.status().message()).c_str());
      return;
    }
    last = *std::move(estimates);
  }
  CountAnswers(last, bench);
  bench.counters["steps"] = static_cast<double>(last.steps);
}
// Args: pending, the cycle budget per run (5,000 is the default).
BENCHMARK(BM_EstimateAllPending)
    ->Args({1'000, 5'000})
    ->Args({10'000, 5'000})
    ->Args({10'000, 20'000})
    ->Unit(benchmark::kMillisecond);

void BM_EstimateDryRunSubmit(benchmark::State& bench) {
  absl::Time now;
  std::unique_ptr<ClusterState> state = MakeState(bench.range(0), now);
  for (auto _ : bench) {
    absl::StatusOr<StartEstimate> e = EstimateSubmission(*state, Job(3, 1'000'000'000, 4), now, {});
    if (!e.ok()) {
      bench.SkipWithError(std::string(e.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(e);
  }
}
BENCHMARK(BM_EstimateDryRunSubmit)->Arg(1'000)->Arg(10'000)->Unit(benchmark::kMillisecond);

// The executor thread's part of an estimate refresh since estimates run off it: taking the
// snapshot. Arg 1: the first snapshot (every workload copied); arg 0: the next one at a new
// revision, where 1% of the workloads changed (the rest are shared with the previous one).
void BM_EstimateSnapshot(benchmark::State& bench) {
  absl::Time now;
  std::unique_ptr<ClusterState> state = MakeState(bench.range(0), now);
  // What the executor does when it persists: each workload carries its store revision.
  int64_t revision = 1;
  for (const Workload* wl : state->AllWorkloads()) {
    state->mutable_workload(wl->id)->resource_version = revision;
  }
  (void)state->TakeDirtyWorkloads();
  std::shared_ptr<const EstimateSnapshot> previous = TakeEstimateSnapshot(*state, now);
  const bool first = bench.range(1) == 1;
  const std::vector<const Workload*> all = state->AllWorkloads();
  int64_t reused = 0;
  for (auto _ : bench) {
    if (first) {
      benchmark::DoNotOptimize(TakeEstimateSnapshot(*state, now));
      continue;
    }
    bench.PauseTiming();
    ++revision;
    for (size_t i = static_cast<size_t>(revision) % 100; i < all.size(); i += 100) {
      state->mutable_workload(all[i]->id)->resource_version = revision;
    }
    bench.ResumeTiming();
    previous = TakeEstimateSnapshot(*state, now, previous.get());
    reused = previous->reused;
  }
  bench.counters["workloads"] = static_cast<double>(previous->workloads.size());
  bench.counters["reused"] = static_cast<double>(reused);
}
// Args: pending, first snapshot (1) or next revision (0).
BENCHMARK(BM_EstimateSnapshot)->Args({10'000, 1})->Args({10'000, 0})->Unit(benchmark::kMillisecond);

// Many independent trees: `trees` cohorts of two teams with 64 GPUs each (reclaim within the
// cohort), each LocalQueue with 64 learned runtimes (10 min to 8 h), the cluster full, and
// `pending` jobs of 1-8 GPUs spread over every team.
constexpr int kTeamsPerTree = 2;
constexpr int64_t kGpusPerTreeTeam = 64;

std::unique_ptr<ClusterState> MakeTreesState(int trees, int64_t pending, absl::Time& now) {
  auto state = std::make_unique<ClusterState>(SchedulerConfig{});
  now = kStart;
  (void)state->ApplyResourceFlavor({"a100", {}, {}, {}}, now);
  for (int k = 0; k < trees; ++k) {
    for (int t = 0; t < kTeamsPerTree; ++t) {
      ClusterQueueSpec cq;
      cq.name = absl::StrCat("cq-", k, "-", t);
      cq.cohort = absl::StrCat("pool-", k);
      cq.resource_groups = {
          {{"gpu"}, {{"a100", {{"gpu", kGpusPerTreeTeam, std::nullopt, std::nullopt}}}}}};
      cq.preemption.reclaim_within_cohort = PreemptionPolicy::kAny;
      (void)state->ApplyClusterQueue(cq, now);
      (void)state->ApplyLocalQueue(
          {absl::StrCat("tree-", k, "-team-", t), "q", cq.name, StopPolicy::kNone, 1.0}, now);
    }
  }
  std::mt19937_64 rng(17);
  std::uniform_int_distribution<int64_t> minutes(10, 480);
  std::uniform_int_distribution<int32_t> gpus(1, 8);
  const int teams = trees * kTeamsPerTree;
  int64_t n = 0;
  for (int round = 0; round < 64; ++round) {
    for (int i = 0; i < teams; ++i) {
      (void)state->Submit(TreeJob(i / kTeamsPerTree, i % kTeamsPerTree, n++, 1), "", now);
    }
    Settle(*state, now);
    now += absl::Minutes(minutes(rng));
    for (const Workload* wl : state->AllWorkloads()) {
      if (wl->status.state == WorkloadState::kAdmitted) (void)state->Finish(wl->Key(), "", now);
    }
  }
  const int64_t capacity = teams * kGpusPerTreeTeam;
  for (int64_t i = 0; i < pending + capacity; ++i) {
    const int team = static_cast<int>(i % teams);
    (void)state->Submit(TreeJob(team / kTeamsPerTree, team % kTeamsPerTree, n++, gpus(rng)), "",
                        now);
    if (i == capacity / 4) Settle(*state, now);
  }
  Settle(*state, now);
  now += absl::Minutes(30);
  return state;
}

// What the executor does when it persists: each changed workload carries the new revision.
void Commit(ClusterState& state, int64_t revision) {
  for (WorkloadId id : state.TakeDirtyWorkloads()) {
    state.mutable_workload(id)->resource_version = revision;
  }
}

// A new revision's estimates after one submission into one tree (a different tree each time),
// computed three ways. Mode 0: one run over the whole state (the estimate before trees were
// split); mode 1: every tree simulated (a fresh computation); mode 2: the incremental
// estimator, which simulates only the tree the submission changed. The snapshot is taken outside
// the timing (BM_EstimateSnapshot measures it).
void BM_EstimateManyTreesOneSubmit(benchmark::State& bench) {
  const int trees = static_cast<int>(bench.range(0));
  const int mode = static_cast<int>(bench.range(2));
  absl::Time now;
  std::unique_ptr<ClusterState> state = MakeTreesState(trees, bench.range(1), now);
  int64_t revision = 1;
  Commit(*state, revision);
  StartEstimateOptions options;
  options.independent_trees = mode != 0;
  IncrementalStartEstimator estimator(options, absl::Minutes(1));
  std::shared_ptr<const EstimateSnapshot> snapshot = TakeEstimateSnapshot(*state, now);
  if (mode == 2 && !estimator.Estimate(*snapshot).ok()) {
    bench.SkipWithError("the first estimate failed");
    return;
  }
  int64_t n = 2'000'000'000;
  StartEstimates last;
  for (auto _ : bench) {
    bench.PauseTiming();
    const int tree = static_cast<int>(n % trees);
    (void)state->Submit(TreeJob(tree, 0, n++, 4), "", now);
    Settle(*state, now);
    Commit(*state, ++revision);
    snapshot = TakeEstimateSnapshot(*state, now, snapshot.get());
    bench.ResumeTiming();
    absl::StatusOr<StartEstimates> estimates =
        mode == 2 ? estimator.Estimate(*snapshot) : EstimatePendingStarts(*snapshot, options);
    if (!estimates.ok()) {
      bench.SkipWithError(std::string(estimates.status().message()).c_str());
      return;
    }
    last = *std::move(estimates);
  }
  CountAnswers(last, bench);
  bench.counters["trees_simulated"] = static_cast<double>(last.trees_simulated);
}
// Args: trees, pending in all, mode (0 one run, 1 every tree, 2 incremental).
BENCHMARK(BM_EstimateManyTreesOneSubmit)
    ->Args({20, 10'000, 0})
    ->Args({20, 10'000, 1})
    ->Args({20, 10'000, 2})
    ->Args({50, 10'000, 0})
    ->Args({50, 10'000, 1})
    ->Args({50, 10'000, 2})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace tollgate::core

BENCHMARK_MAIN();
