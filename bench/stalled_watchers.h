#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace tollgate::bench {

struct StalledWatchersOptions {
  // The tollgated binary and a directory for its store.
  std::string tollgated;
  std::string work_dir;
  int64_t workloads = 100000;
  // Watch(since_revision=0) streams that are opened and never read.
  int stalled = 1000;
  // The stalled clients' HTTP/2 receive window per stream, in KiB, with gRPC's BDP probing off:
  // a client whose transport stops taking data once that much is buffered (a hung process).
  // 0: gRPC's default client, whose transport keeps taking data the application never reads
  // (it grows every stream's window with its bandwidth estimate, to megabytes).
  int64_t stalled_window_kib = 0;
  // Non-empty: tollgated is spawned with a token file of two users, "bench-active" (the
  // active streams, the submits, /metrics) and this one (the stalled streams), both admins, so
  // the two kinds of client are different identities to tollgated's per-identity Watch write
  // shares. Empty: no authentication, every client is anonymous (tollgated then shares writes
  // per connection).
  std::string stalled_identity;
  // Streams that read everything; each must see every submit made afterwards.
  int active = 2;
  // Workloads submitted once the active streams have listed.
  int submits = 1000;
  // An active stream that receives nothing for this long while behind ends the run as
  // stalled (DEADLINE_EXCEEDED): slowness is reported as figures, never as a missing event.
  absl::Duration no_progress_timeout = absl::Minutes(2);
  bool keep = false;
};

// What one run measured.
struct StalledWatchersResult {
  int stalled = 0;
  // Seconds from opening an active stream to its last listed workload (median over them).
  double list_seconds = 0;
  // Submit sent to ADDED received on an active stream, all active streams together, ms.
  double lag_p50_ms = 0;
  double lag_p99_ms = 0;
  // tollgated's CPU seconds and Watch events sent (all streams) while the active streams
  // listed, and during the submits.
  double list_cpu_seconds = 0;
  int64_t list_events_sent = 0;
  double submit_cpu_seconds = 0;
  int64_t submit_events_sent = 0;
  double submit_seconds = 0;
};

// Fills a store with `workloads`, serves it with tollgated, opens `stalled` watches from
// revision 0 that never read, and `active` ones that do; once those have listed, submits
// `submits` workloads and waits until every active stream has caught up with the last of them.
// Prints progress, tollgated's RSS and threads, and the measurements. Fails with DATA_LOSS only
// when a stream that caught up lacks a submitted workload.
absl::StatusOr<StalledWatchersResult> RunStalledWatchers(const StalledWatchersOptions& options);

}  // namespace tollgate::bench
