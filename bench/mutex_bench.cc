// What Abseil's lock-order (deadlock) detection costs per lock. Debian's Abseil is built
// without NDEBUG, so the detection runs unless a process turns it off; tollgated, tollgate-kube
// and tollgate-multikueue do (common/mutex_checks.h). Each thread locks its own mutex, so any
// cost that grows with threads is the detection's process-wide graph lock.
#include <benchmark/benchmark.h>

#include "absl/synchronization/mutex.h"

namespace {

void BM_MutexLockUnlock(benchmark::State& state) {
  if (state.thread_index() == 0) {
    absl::SetMutexDeadlockDetectionMode(state.range(0) != 0 ? absl::OnDeadlockCycle::kReport
                                                            : absl::OnDeadlockCycle::kIgnore);
  }
  absl::Mutex mu;
  int64_t guarded = 0;
  for (auto _ : state) {
    absl::MutexLock lock(&mu);
    benchmark::DoNotOptimize(++guarded);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_MutexLockUnlock)->ArgName("detection")->Arg(0)->Arg(1)->Threads(1)->Threads(2);

}  // namespace

BENCHMARK_MAIN();
