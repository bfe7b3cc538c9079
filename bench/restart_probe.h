#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"

namespace tollgate::bench {

enum class PopulateEnd {
  // Close the store as a clean shutdown does.
  kClose,
  // Flush stdout and _exit without closing the store, as kill -9 would leave it (every write
  // is already synced); the next open replays the write-ahead log.
  kExitUnclean,
};

// Fills a fresh RocksDB store with `workloads` workloads through TollgateApi (one ClusterQueue
// of 1 CPU: the first is admitted, the rest pend), from 16 submitting threads so the executor's
// group commit is used, then compacts the change log away. Prints the fill rate.
absl::Status PopulateRestartStore(const std::string& data_dir, int64_t workloads, PopulateEnd end);

// In a fresh process: RSS before, AdmissionExecutor::Open on `data_dir` (timed), RSS after and
// per stored workload; then Finish of the admitted workload and the time until the next one is
// admitted (restart-to-first-admission = open + that).
absl::Status ProbeRestart(const std::string& data_dir, int64_t workloads);

// Resident memory of the pure core per pending workload: RSS delta over `workloads` Submits
// into a ClusterState (1,000 ClusterQueues, nothing admitted), in this process.
absl::Status ProbeEngineMemory(int64_t workloads);

}  // namespace tollgate::bench
