#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "bench/tollgated_launcher.h"

namespace tollgate::bench {

struct ServiceLoadOptions {
  std::vector<int> concurrency = {1, 8, 64};
  // Length of each measured phase.
  absl::Duration phase = absl::Seconds(5);
  // Where the raw RocksDB floor writes (use the same file system as tollgated's data dir).
  std::string scratch_dir = "/tmp/tollgate-bench";
  int watchers = 10;
  // Workloads submitted while the watchers follow.
  int watch_workloads = 3000;
};

// Submit with durable writes from N concurrent callers (N synchronous threads; each call is
// one HTTP/2 stream), beside two floors measured in the same run at the same concurrency: the
// gRPC health Check (an empty unary RPC on the same server) and raw synced RocksDB commits
// (storage::RocksDbStore::Commit from N threads, a batch the size of one Submit's write).
// Then Watch fan-out: the delivery latency of ADDED events to 1 and to `watchers` watchers.
// Prints tables; returns an error only if the server cannot be driven at all.
absl::Status RunServiceLoad(const TollgatedTarget& target, const ServiceLoadOptions& options);

}  // namespace tollgate::bench
