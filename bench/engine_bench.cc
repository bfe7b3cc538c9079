// Engine scaling microbenchmarks (Google Benchmark) for the pure scheduling core: admission
// cycles with deep queues, preemption victim search, and the fair-sharing tournament.
// docs/performance.md says how to run them and what they showed.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "benchmark/benchmark.h"
#include "core/admission_planner.h"
#include "core/cluster_state.h"
#include "core/cycle_plan.h"
#include "core/scheduler_config.h"
#include "core/types.h"
#include "core/visibility.h"

namespace tollgate::bench {
namespace {

using core::ClusterQueueSpec;
using core::ClusterState;
using core::CyclePlan;
using core::PodSetSpec;
using core::PreemptionPolicy;
using core::SchedulerConfig;
using core::WorkloadSpec;

const absl::Time kStart = absl::FromUnixSeconds(1767225600);
constexpr char kFlavor[] = "default";
constexpr char kNamespace[] = "bench";
constexpr int64_t kMilli = 1000;

void Check(const absl::Status& status, const char* what) {
  if (!status.ok()) {
    std::fprintf(stderr, "engine_bench: %s: %s\n", what, status.ToString().c_str());
    std::abort();
  }
}

std::string CqName(int i) { return absl::StrCat("cq-", i); }
std::string LqName(int i) { return absl::StrCat("lq-", i); }

struct Topology {
  int cohorts = 100;
  int cqs_per_cohort = 10;
  // cpu, in milli-units.
  int64_t nominal = 0;
  std::optional<int64_t> borrowing_limit;
  PreemptionPolicy within_cluster_queue = PreemptionPolicy::kNever;
  PreemptionPolicy reclaim_within_cohort = PreemptionPolicy::kNever;
  bool fair_sharing = false;
};

// One flavor, one resource (cpu), `cohorts` x `cqs_per_cohort` ClusterQueues, one LocalQueue
// per ClusterQueue in one namespace.
std::unique_ptr<ClusterState> BuildCluster(const Topology& t) {
  SchedulerConfig config;
  config.fair_sharing.enable = t.fair_sharing;
  auto state = std::make_unique<ClusterState>(config);
  Check(state->ApplyNamespace({kNamespace, {}}, kStart), "namespace");
  Check(state->ApplyResourceFlavor({kFlavor, {}, {}, {}}, kStart), "flavor");
  for (int c = 0; c < t.cohorts; ++c) {
    for (int q = 0; q < t.cqs_per_cohort; ++q) {
      const int i = c * t.cqs_per_cohort + q;
      ClusterQueueSpec cq;
      cq.name = CqName(i);
      cq.cohort = absl::StrCat("cohort-", c);
      cq.resource_groups = {
          {{"cpu"}, {{kFlavor, {{"cpu", t.nominal, t.borrowing_limit, std::nullopt}}}}}};
      cq.preemption.within_cluster_queue = t.within_cluster_queue;
      cq.preemption.reclaim_within_cohort = t.reclaim_within_cohort;
      Check(state->ApplyClusterQueue(std::move(cq), kStart), "cluster queue");
      Check(state->ApplyLocalQueue({kNamespace, LqName(i), CqName(i), core::StopPolicy::kNone, 1.0},
                                   kStart),
            "local queue");
    }
  }
  return state;
}

WorkloadSpec Job(int64_t serial, int cq, int64_t cpu_milli, int32_t priority) {
  WorkloadSpec spec;
  spec.namespace_name = kNamespace;
  spec.name = absl::StrCat("wl-", serial);
  spec.queue_name = LqName(cq);
  spec.priority = priority;
  spec.pod_sets = {PodSetSpec{"main", 1, std::nullopt, {{"cpu", cpu_milli}}, {}, {}}};
  return spec;
}

// Runs cycles until one makes no progress; returns the admissions made.
int64_t Settle(ClusterState& state, absl::Time now) {
  int64_t admitted = 0;
  while (true) {
    CyclePlan plan = state.PlanCycle(now);
    state.ApplyCycle(plan, now);
    admitted += static_cast<int64_t>(plan.admissions.size());
    if (!plan.MadeProgress()) return admitted;
  }
}

void DrainBookkeeping(ClusterState& state) {
  state.TakeDirtyWorkloads();
  state.TakeDeletedWorkloads();
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())));
  return v[i];
}

// --- Admission throughput with deep queues --------------------------------------------------
//
// 1,000 ClusterQueues in 100 cohorts, `pending` workloads spread round-robin over them with
// priorities 0..9 (so every queue's btree is exercised), quota large enough that every head
// fits. One iteration is one scheduling cycle (PlanCycle + ApplyCycle), which admits one head
// per ClusterQueue. Between iterations (untimed) the admitted workloads are finished and deleted
// and as many new ones submitted, so the queue depth stays at `pending`.
struct DeepQueue {
  std::unique_ptr<ClusterState> state;
  int64_t next_serial = 0;
  int64_t pending = 0;
  std::mt19937_64 rng{42};
};

constexpr int kCohorts = 100;
constexpr int kCqsPerCohort = 10;
constexpr int kCqs = kCohorts * kCqsPerCohort;

// The fixture is expensive at 1M; Google Benchmark calls the function several times per
// argument, so keep the last one.
DeepQueue& DeepQueueFor(int64_t pending) {
  static std::unique_ptr<DeepQueue> cached;
  if (cached != nullptr && cached->pending == pending) return *cached;
  cached.reset();
  auto dq = std::make_unique<DeepQueue>();
  Topology t;
  t.cohorts = kCohorts;
  t.cqs_per_cohort = kCqsPerCohort;
  t.nominal = int64_t{1} << 40;
  dq->state = BuildCluster(t);
  dq->pending = pending;
  std::uniform_int_distribution<int32_t> prio(0, 9);
  for (int64_t i = 0; i < pending; ++i) {
    const int64_t serial = dq->next_serial++;
    Check(dq->state
              ->Submit(Job(serial, static_cast<int>(serial % kCqs), kMilli, prio(dq->rng)), "",
                       kStart + absl::Microseconds(serial))
              .status(),
          "submit");
  }
  DrainBookkeeping(*dq->state);
  cached = std::move(dq);
  return *cached;
}

// Finishes and deletes what `plan` admitted and submits as many new workloads.
void Replenish(DeepQueue& dq, const CyclePlan& plan, absl::Time now) {
  std::uniform_int_distribution<int32_t> prio(0, 9);
  for (const core::AdmissionDecision& a : plan.admissions) {
    const std::string key = dq.state->workload(a.id)->Key();
    Check(dq.state->Finish(key, "", now), "finish");
    Check(dq.state->Delete(key, now), "delete");
  }
  for (size_t i = 0; i < plan.admissions.size(); ++i) {
    const int64_t serial = dq.next_serial++;
    Check(dq.state
              ->Submit(Job(serial, static_cast<int>(serial % kCqs), kMilli, prio(dq.rng)), "", now)
              .status(),
          "submit");
  }
  DrainBookkeeping(*dq.state);
}

// Times one scheduling cycle per iteration; the admitted workloads are replaced untimed so the
// queues keep their depth. Returns how many were admitted.
int64_t TimeCycles(benchmark::State& bs, DeepQueue& dq) {
  absl::Time now = kStart + absl::Hours(1);
  int64_t admitted = 0;
  for (auto _ : bs) {
    CyclePlan plan = dq.state->PlanCycle(now);
    dq.state->ApplyCycleTakingAdmissions(plan, now);
    admitted += static_cast<int64_t>(plan.admissions.size());
    bs.PauseTiming();
    Replenish(dq, plan, now);
    now += absl::Milliseconds(1);
    bs.ResumeTiming();
  }
  return admitted;
}

void BM_AdmissionCycle(benchmark::State& bs) {
  DeepQueue& dq = DeepQueueFor(bs.range(0));
  const int64_t admitted = TimeCycles(bs, dq);
  bs.counters["admissions/s"] =
      benchmark::Counter(static_cast<double>(admitted), benchmark::Counter::kIsRate);
  bs.counters["s/admission"] = benchmark::Counter(
      static_cast<double>(admitted), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  bs.counters["pending"] = static_cast<double>(bs.range(0));
}
BENCHMARK(BM_AdmissionCycle)
    ->Arg(10'000)
    ->Arg(100'000)
    ->Arg(1'000'000)
    ->Unit(benchmark::kMillisecond);

// The whole life of one workload at queue depth `pending`: Submit, the share of a cycle that
// admits it, Finish and Delete, all timed. One iteration handles one workload per ClusterQueue.
void BM_WorkloadLifecycle(benchmark::State& bs) {
  DeepQueue& dq = DeepQueueFor(bs.range(0));
  absl::Time now = kStart + absl::Hours(2);
  int64_t admitted = 0;
  for (auto _ : bs) {
    CyclePlan plan = dq.state->PlanCycle(now);
    dq.state->ApplyCycleTakingAdmissions(plan, now);
    admitted += static_cast<int64_t>(plan.admissions.size());
    Replenish(dq, plan, now);
    now += absl::Milliseconds(1);
  }
  bs.counters["workloads/s"] =
      benchmark::Counter(static_cast<double>(admitted), benchmark::Counter::kIsRate);
  bs.counters["s/workload"] = benchmark::Counter(
      static_cast<double>(admitted), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_WorkloadLifecycle)
    ->Arg(10'000)
    ->Arg(100'000)
    ->Arg(1'000'000)
    ->Unit(benchmark::kMillisecond);

// Submit alone into a queue of depth `pending` (amortized over 1,000 submits per iteration;
// the new workloads are deleted untimed so the depth stays put).
void BM_Submit(benchmark::State& bs) {
  DeepQueue& dq = DeepQueueFor(bs.range(0));
  const absl::Time now = kStart + absl::Hours(3);
  std::uniform_int_distribution<int32_t> prio(0, 9);
  int64_t submitted = 0;
  std::vector<std::string> keys;
  for (auto _ : bs) {
    keys.clear();
    for (int i = 0; i < kCqs; ++i) {
      const int64_t serial = dq.next_serial++;
      Check(
          dq.state
              ->Submit(Job(serial, static_cast<int>(serial % kCqs), kMilli, prio(dq.rng)), "", now)
              .status(),
          "submit");
      keys.push_back(absl::StrCat(kNamespace, "/wl-", serial));
    }
    submitted += kCqs;
    bs.PauseTiming();
    for (const std::string& key : keys) Check(dq.state->Delete(key, now), "delete");
    DrainBookkeeping(*dq.state);
    bs.ResumeTiming();
  }
  bs.counters["s/submit"] = benchmark::Counter(
      static_cast<double>(submitted), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_Submit)->Arg(10'000)->Arg(100'000)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

// --- Preemption victim search ----------------------------------------------------------------
//
// One cohort of `cqs` ClusterQueues (10 unless said), each with nominal quota admitted/cqs CPUs.
// ClusterQueues 1..cqs-1 hold `admitted` 1-CPU workloads (priority 0), borrowing all of cq-0's
// quota. A priority-100 workload asking 4 CPUs in cq-0 must reclaim (reclaimWithinCohort Any):
// the victim search scans every borrowing candidate. One iteration is AdmissionPlanner::Evaluate
// for it (flavor assignment with the preemption oracle, then the target search), which changes
// no state. With fair sharing the search is Kueue's fair preemption (the queues with the highest
// share first).
constexpr int64_t kPreemptorSerial = 999999999;

struct Reclaim {
  std::unique_ptr<ClusterState> state;
  int64_t admitted = 0;
  int cqs = 0;
  bool fair = false;
};

Reclaim& ReclaimFor(int64_t admitted, int cqs = 10, bool fair = false) {
  static std::unique_ptr<Reclaim> cached;
  if (cached != nullptr && cached->admitted == admitted && cached->cqs == cqs &&
      cached->fair == fair) {
    return *cached;
  }
  cached.reset();
  auto r = std::make_unique<Reclaim>();
  Topology t;
  t.cohorts = 1;
  t.cqs_per_cohort = cqs;
  t.nominal = admitted / cqs * kMilli;
  t.within_cluster_queue = PreemptionPolicy::kLowerPriority;
  t.reclaim_within_cohort = PreemptionPolicy::kAny;
  t.fair_sharing = fair;
  r->state = BuildCluster(t);
  r->admitted = admitted;
  r->cqs = cqs;
  r->fair = fair;
  for (int64_t i = 0; i < admitted; ++i) {
    Check(r->state
              ->Submit(Job(i, 1 + static_cast<int>(i % (cqs - 1)), kMilli, 0), "",
                       kStart + absl::Microseconds(i))
              .status(),
          "submit");
  }
  const int64_t n = Settle(*r->state, kStart + absl::Seconds(10));
  if (n != admitted) {
    std::fprintf(stderr, "engine_bench: admitted %lld of %lld\n", static_cast<long long>(n),
                 static_cast<long long>(admitted));
    std::abort();
  }
  Check(r->state->Submit(Job(kPreemptorSerial, 0, 4 * kMilli, 100), "", kStart + absl::Seconds(11))
            .status(),
        "submit preemptor");
  DrainBookkeeping(*r->state);
  cached = std::move(r);
  return *cached;
}

void SearchVictims(benchmark::State& bs, Reclaim& r) {
  ClusterState& state = *r.state;
  const core::Workload* preemptor =
      state.FindWorkload(absl::StrCat(kNamespace, "/wl-", kPreemptorSerial));
  const core::ClusterQueueRuntime* cq = state.cluster_queue(CqName(0));
  const absl::Time now = kStart + absl::Seconds(12);
  std::vector<double> us;
  size_t victims = 0;
  for (auto _ : bs) {
    const auto t0 = std::chrono::steady_clock::now();
    core::AdmissionPlanner planner(state);
    core::AdmissionPlanner::Evaluation eval = planner.Evaluate(*preemptor, *cq, now);
    const auto t1 = std::chrono::steady_clock::now();
    victims = eval.targets.size();
    benchmark::DoNotOptimize(eval);
    us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  bs.counters["victims"] = static_cast<double>(victims);
  bs.counters["p50_us"] = Percentile(us, 0.50);
  bs.counters["p99_us"] = Percentile(us, 0.99);
}
void BM_VictimSearch(benchmark::State& bs) { SearchVictims(bs, ReclaimFor(bs.range(0))); }
BENCHMARK(BM_VictimSearch)->Arg(10'000)->Arg(100'000)->Unit(benchmark::kMicrosecond);

// The same with fair sharing, 10,000 admitted, in one cohort of `cqs` ClusterQueues: the fair
// search's cost as the cohort grows.
void BM_FairVictimSearch(benchmark::State& bs) {
  SearchVictims(bs, ReclaimFor(10'000, static_cast<int>(bs.range(0)), /*fair=*/true));
}
BENCHMARK(BM_FairVictimSearch)
    ->ArgName("cqs")
    ->Arg(10)
    ->Arg(100)
    ->Arg(1000)
    ->Unit(benchmark::kMicrosecond);

// --- Fair-sharing tournament -----------------------------------------------------------------
//
// `cqs_per_cohort` x (1000 / cqs_per_cohort) ClusterQueues, each with 2 pending heads that fit
// (nominal 4 CPUs, 1-CPU workloads, no borrowing), so one cycle considers one head per
// ClusterQueue and admits them all. With fair sharing the planner orders the heads by
// tournament (dominant resource share, recomputed before every pick); without it, by one sort.
// One iteration is one cycle; the admitted workloads are finished and replaced untimed.
void BM_CycleOrdering(benchmark::State& bs) {
  const bool fair = bs.range(0) != 0;
  const int per_cohort = static_cast<int>(bs.range(1));
  Topology t;
  t.cqs_per_cohort = per_cohort;
  t.cohorts = kCqs / per_cohort;
  t.nominal = 4 * kMilli;
  t.fair_sharing = fair;
  DeepQueue dq;
  dq.state = BuildCluster(t);
  dq.pending = 2 * kCqs;
  for (int64_t i = 0; i < dq.pending; ++i) {
    const int64_t serial = dq.next_serial++;
    Check(dq.state
              ->Submit(Job(serial, static_cast<int>(serial % kCqs), kMilli, 0), "",
                       kStart + absl::Microseconds(serial))
              .status(),
          "submit");
  }
  DrainBookkeeping(*dq.state);
  const int64_t admitted = TimeCycles(bs, dq);
  bs.SetLabel(fair ? "fair-sharing" : "classical");
  bs.counters["admissions/cycle"] =
      benchmark::Counter(static_cast<double>(admitted), benchmark::Counter::kAvgIterations);
  bs.counters["s/admission"] = benchmark::Counter(
      static_cast<double>(admitted), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_CycleOrdering)
    ->ArgNames({"fair", "cqs_per_cohort"})
    ->Args({0, 10})
    ->Args({1, 10})
    ->Args({0, 100})
    ->Args({1, 100})
    ->Args({0, 1000})
    ->Args({1, 1000})
    ->Unit(benchmark::kMillisecond);

// --- Visibility: pending positions ---------------------------------------------------------
//
// One ClusterQueue with `pending` workloads, spread round-robin over 10 LocalQueues, none of
// which fits. One iteration answers what one page of ListPendingWorkloads (and so each page of
// `tollgate get workloads` or a dashboard's poll) computes: the positions of one LocalQueue's
// workloads, counted over the whole ClusterQueue.
void BM_PendingPositions(benchmark::State& bs) {
  const int64_t pending = bs.range(0);
  constexpr int kLocalQueues = 10;
  Topology t;
  t.cohorts = 1;
  t.cqs_per_cohort = 1;
  t.nominal = 0;
  std::unique_ptr<ClusterState> state = BuildCluster(t);
  for (int q = 1; q < kLocalQueues; ++q) {
    Check(state->ApplyLocalQueue({kNamespace, LqName(q), CqName(0), core::StopPolicy::kNone, 1.0},
                                 kStart),
          "local queue");
  }
  std::mt19937_64 rng{42};
  std::uniform_int_distribution<int32_t> prio(0, 9);
  for (int64_t serial = 0; serial < pending; ++serial) {
    WorkloadSpec spec = Job(serial, 0, kMilli, prio(rng));
    spec.queue_name = LqName(static_cast<int>(serial % kLocalQueues));
    Check(state->Submit(std::move(spec), "", kStart + absl::Microseconds(serial)).status(),
          "submit");
  }
  // A tenth of them tried and parked inadmissible (a BestEffortFIFO queue moves past a head
  // that does not fit), the rest active: a real backlog mixes the two sets.
  for (int64_t cycle = 0; cycle < pending / 10; ++cycle) {
    CyclePlan plan = state->PlanCycle(kStart + absl::Hours(1));
    state->ApplyCycle(plan, kStart + absl::Hours(1));
  }
  DrainBookkeeping(*state);
  size_t listed = 0;
  for (auto _ : bs) {
    std::vector<core::PendingPosition> positions =
        state->PendingInLocalQueue(kNamespace, LqName(3));
    listed += positions.size();
    benchmark::DoNotOptimize(positions.data());
  }
  bs.counters["listed"] =
      benchmark::Counter(static_cast<double>(listed), benchmark::Counter::kAvgIterations);
}
BENCHMARK(BM_PendingPositions)->Arg(10'000)->Arg(100'000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace tollgate::bench

BENCHMARK_MAIN();
