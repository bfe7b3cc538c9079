// Topology Aware Scheduling on the pure core (docs/performance.md, "Topology"):
//  - BM_PlaceRequiredRack: one 64-pod required-rack placement on 10,000 nodes in 3 levels
//    (block / rack / host), with a third of the hosts partly used;
//  - BM_Backlog/topology:{0,1}: a 1,000-workload backlog admitted through the real cycle on the
//    same nodes, with and without topology flavors; counters: the engine's cost per admission
//    and the cycle's p99.

#include <algorithm>
#include <chrono>
#include <ctime>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "benchmark/benchmark.h"
#include "core/cluster_state.h"
#include "core/topology_flavor.h"

namespace tollgate::core {
namespace {

constexpr char kBlock[] = "cloud.com/topology-block";
constexpr char kRack[] = "cloud.com/topology-rack";
constexpr int kBlocks = 10;
constexpr int kRacksPerBlock = 50;
constexpr int kHostsPerRack = 20;  // 10 x 50 x 20 = 10,000 nodes
constexpr int64_t kGpusPerHost = 8;

std::vector<NodeSpec> Nodes() {
  std::vector<NodeSpec> nodes;
  nodes.reserve(kBlocks * kRacksPerBlock * kHostsPerRack);
  for (int b = 0; b < kBlocks; ++b) {
    for (int r = 0; r < kRacksPerBlock; ++r) {
      for (int h = 0; h < kHostsPerRack; ++h) {
        NodeSpec n;
        n.name = absl::StrCat("b", b, "-r", r, "-h", h);
        n.labels = {{"node-group", "tas"},
                    {kBlock, absl::StrCat("b", b)},
                    {kRack, absl::StrCat("b", b, "-r", r)},
                    {kHostnameLabel, n.name}};
        n.allocatable = {{"cpu", 96000}, {"gpu", kGpusPerHost}, {"pods", 110}};
        nodes.push_back(std::move(n));
      }
    }
  }
  return nodes;
}

void BM_PlaceRequiredRack(benchmark::State& state) {
  const std::vector<NodeSpec> nodes = Nodes();
  std::vector<const NodeSpec*> ptrs;
  for (const NodeSpec& n : nodes) ptrs.push_back(&n);
  ResourceFlavorSpec flavor;
  flavor.name = "tas";
  flavor.node_labels = {{"node-group", "tas"}};
  TopologyFlavor tf({"default", {kBlock, kRack, kHostnameLabel}}, flavor, ptrs);
  // Every third host runs something: racks differ in free capacity.
  for (size_t i = 0; i < nodes.size(); i += 3) {
    tf.AddUsage({nodes[i].name}, {{"gpu", 1}}, static_cast<int32_t>(1 + i % 7), +1);
  }
  PodSetTopologyRequest request;
  request.required = kRack;
  const ResourceAmounts per_pod = {{"cpu", 8000}, {"gpu", 1}};
  TopologyPlacementRequest r;
  r.pod_set = "main";
  r.count = 64;
  r.per_pod = per_pod;
  r.request = &request;
  for (auto _ : state) {
    TopologyPlacementResult result = tf.FindAssignments({r}, false);
    if (!result.ok()) state.SkipWithError(result.failure.c_str());
    benchmark::DoNotOptimize(result);
  }
}
BENCHMARK(BM_PlaceRequiredRack)->Unit(benchmark::kMicrosecond);

// CPU time used by the calling thread so far, in milliseconds.
double ThreadCpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

// 10 ClusterQueues sharing the nodes; 100 workloads each of 8 one-GPU pods, with topology: half
// require a rack, half are unconstrained (implied).
void BM_Backlog(benchmark::State& state) {
  const bool topology = state.range(0) != 0;
  const std::vector<NodeSpec> nodes = Nodes();
  std::vector<double> cycle_ms;
  // The same in CPU time of this thread: on a machine shared with other work, wall time also
  // counts the time the cycle waited for a core.
  std::vector<double> cycle_cpu_ms;
  double total_cpu_seconds = 0;
  // Each run's first cycle places the first heads, which builds the placement caches (a shape's
  // counts over every leaf and the order of a level's domains).
  double first_cycle_ms = 0;
  double total_seconds = 0;
  int64_t admissions = 0;
  for (auto _ : state) {
    state.PauseTiming();
    absl::Time now = absl::FromUnixSeconds(1767225600);
    ClusterState s{SchedulerConfig{}};
    if (!s.ApplyNamespace({"ns", {}}, now).ok()) state.SkipWithError("namespace");
    if (topology) {
      if (!s.ApplyTopology({"default", {kBlock, kRack, kHostnameLabel}}, now).ok()) {
        state.SkipWithError("topology");
      }
      for (const NodeSpec& n : nodes) {
        if (!s.UpsertNode(n, now).ok()) state.SkipWithError("node");
      }
    }
    ResourceFlavorSpec flavor;
    flavor.name = "tas";
    flavor.node_labels = {{"node-group", "tas"}};
    if (topology) flavor.topology_name = "default";
    if (!s.ApplyResourceFlavor(flavor, now).ok()) state.SkipWithError("flavor");
    for (int q = 0; q < 10; ++q) {
      ClusterQueueSpec cq;
      cq.name = absl::StrCat("cq-", q);
      cq.resource_groups = {{{"gpu"}, {{"tas", {{"gpu", 8000, std::nullopt, std::nullopt}}}}}};
      if (!s.ApplyClusterQueue(cq, now).ok()) state.SkipWithError("cq");
      if (!s.ApplyLocalQueue({"ns", absl::StrCat("q-", q), cq.name, StopPolicy::kNone, 1.0}, now)
               .ok()) {
        state.SkipWithError("lq");
      }
    }
    for (int i = 0; i < 1000; ++i) {
      WorkloadSpec spec;
      spec.name = absl::StrCat("job-", i);
      spec.namespace_name = "ns";
      spec.queue_name = absl::StrCat("q-", i % 10);
      PodSetSpec ps;
      ps.name = "main";
      ps.count = 8;
      ps.requests = {{"gpu", 1}};
      if (topology && i % 2 == 0) {
        PodSetTopologyRequest r;
        r.required = kRack;
        ps.topology_request = r;
      }
      spec.pod_sets = {ps};
      now += absl::Milliseconds(1);
      if (!s.Submit(std::move(spec), "", now).ok()) state.SkipWithError("submit");
    }
    // The first cycle builds the flavor's tree from the inventory: not part of the steady state.
    (void)s.topology().Flavor("tas");
    state.ResumeTiming();
    for (bool first = true;; first = false) {
      const auto start = std::chrono::steady_clock::now();
      const double cpu_start = ThreadCpuMs();
      CyclePlan plan = s.PlanCycle(now);
      // tollgated's scheduling loop (AdmissionExecutor::RunCycles) and engine_bench apply a
      // cycle this way: the admissions move into their workloads instead of being copied.
      s.ApplyCycleTakingAdmissions(plan, now);
      const double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count();
      const double cpu_ms = ThreadCpuMs() - cpu_start;
      cycle_cpu_ms.push_back(cpu_ms);
      total_cpu_seconds += cpu_ms / 1000;
      cycle_ms.push_back(ms);
      if (first) first_cycle_ms += ms;
      total_seconds += ms / 1000;
      admissions += static_cast<int64_t>(plan.admissions.size());
      if (!plan.MadeProgress()) break;
    }
  }
  std::sort(cycle_ms.begin(), cycle_ms.end());
  std::sort(cycle_cpu_ms.begin(), cycle_cpu_ms.end());
  state.counters["cpu_us_per_admission"] =
      admissions > 0 ? total_cpu_seconds * 1e6 / admissions : 0;
  state.counters["cycle_cpu_p99_ms"] =
      cycle_cpu_ms.empty()
          ? 0
          : cycle_cpu_ms[std::min(cycle_cpu_ms.size() - 1, cycle_cpu_ms.size() * 99 / 100)];
  state.counters["admissions"] = static_cast<double>(admissions) / state.iterations();
  state.counters["us_per_admission"] = admissions > 0 ? total_seconds * 1e6 / admissions : 0;
  state.counters["cycle_p99_ms"] =
      cycle_ms.empty() ? 0 : cycle_ms[std::min(cycle_ms.size() - 1, cycle_ms.size() * 99 / 100)];
  // The p99 is the 4th-slowest of ~300 cycles: the median and the maximum tell steady cycles
  // from the first one (which builds the placement caches).
  state.counters["cycle_p50_ms"] = cycle_ms.empty() ? 0 : cycle_ms[cycle_ms.size() / 2];
  state.counters["cycle_max_ms"] = cycle_ms.empty() ? 0 : cycle_ms.back();
  state.counters["cycle_first_ms"] = first_cycle_ms / state.iterations();
  state.counters["cycles"] = static_cast<double>(cycle_ms.size()) / state.iterations();
}
BENCHMARK(BM_Backlog)
    ->ArgName("topology")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);

}  // namespace
}  // namespace tollgate::core

BENCHMARK_MAIN();
