// What a data-cache miss costs on the machine the engine benchmarks run on (the VM exposes no
// hardware counters, so the engine's misses per admission can only be priced this way;
// docs/performance.md section 3). A pointer chase over a random cycle of 64-byte nodes spread
// over a working set of the given size: each load depends on the previous one, so the time
// per hop is the latency of the level the working set falls into (L1, L2, L3, memory, with the
// TLB misses a large set adds). BM_IndependentLoads reads the same nodes in the same order
// but without the dependence, so the out-of-order core overlaps the misses: the cost per miss
// when the addresses are known early (what a prefetch buys at best).
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <random>
#include <utility>
#include <vector>

#include "benchmark/benchmark.h"

namespace tollgate::bench {
namespace {

// One cache line: the next node's index first, the rest padding.
struct alignas(64) Node {
  size_t next = 0;
  char pad[56] = {};
};

// A single cycle through every node in random order (Sattolo's shuffle), so the chase visits
// the whole working set before repeating and the hardware prefetcher cannot guess the next line.
std::vector<Node> RandomCycle(size_t nodes) {
  std::vector<size_t> order(nodes);
  std::iota(order.begin(), order.end(), size_t{0});
  std::mt19937_64 rng(7);
  for (size_t i = nodes - 1; i > 0; --i) {
    std::uniform_int_distribution<size_t> pick(0, i - 1);
    std::swap(order[i], order[pick(rng)]);
  }
  std::vector<Node> out(nodes);
  for (size_t i = 0; i < nodes; ++i) out[i].next = order[i];
  return out;
}

constexpr int64_t kHopsPerIteration = 1 << 16;

void BM_PointerChase(benchmark::State& state) {
  const size_t bytes = static_cast<size_t>(state.range(0)) << 10;
  const std::vector<Node> nodes = RandomCycle(bytes / sizeof(Node));
  size_t at = 0;
  // One lap untimed, so the set is paged in and the caches hold what they can.
  for (size_t i = 0; i < nodes.size(); ++i) at = nodes[at].next;
  for (auto _ : state) {
    for (int64_t i = 0; i < kHopsPerIteration; ++i) at = nodes[at].next;
    benchmark::DoNotOptimize(at);
  }
  state.counters["ns/hop"] =
      benchmark::Counter(static_cast<double>(state.iterations() * kHopsPerIteration),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["KiB"] = static_cast<double>(state.range(0));
}

void BM_IndependentLoads(benchmark::State& state) {
  const size_t bytes = static_cast<size_t>(state.range(0)) << 10;
  const std::vector<Node> nodes = RandomCycle(bytes / sizeof(Node));
  // The visiting order, read sequentially (prefetched); only the node loads miss.
  std::vector<size_t> order;
  order.reserve(nodes.size());
  size_t at = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    order.push_back(at);
    at = nodes[at].next;
  }
  size_t pos = 0;
  for (auto _ : state) {
    size_t sum = 0;
    for (int64_t i = 0; i < kHopsPerIteration; ++i) {
      sum += nodes[order[pos]].next;
      if (++pos == order.size()) pos = 0;
    }
    benchmark::DoNotOptimize(sum);
  }
  state.counters["ns/load"] =
      benchmark::Counter(static_cast<double>(state.iterations() * kHopsPerIteration),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["KiB"] = static_cast<double>(state.range(0));
}

// 16 KiB fits L1 (32 KiB), 256 KiB L2 (512 KiB), 8 MiB L3 (32 MiB); 128 MiB and 1 GiB are
// memory, the second with most of its pages' translations missing the TLB too, as the engine's
// 1M-pending fixture (~1 GB) does.
void WorkingSets(benchmark::internal::Benchmark* b) {
  for (int64_t kib :
       {int64_t{16}, int64_t{256}, int64_t{8} << 10, int64_t{128} << 10, int64_t{1} << 20}) {
    b->Arg(kib);
  }
  b->Unit(benchmark::kMicrosecond);
}
BENCHMARK(BM_PointerChase)->Apply(WorkingSets);
BENCHMARK(BM_IndependentLoads)->Apply(WorkingSets);

}  // namespace
}  // namespace tollgate::bench

BENCHMARK_MAIN();
