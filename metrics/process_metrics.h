#pragma once

#include "absl/status/statusor.h"
#include "metrics/metric_registry.h"

namespace tollgate::metrics {

// This process as the Prometheus client libraries report it, read from /proc at scrape time.
struct ProcessStats {
  double cpu_seconds = 0;
  double resident_bytes = 0;
  double virtual_bytes = 0;
  double start_time_seconds = 0;
  double open_fds = 0;
  double max_fds = 0;
  double threads = 0;
};

absl::StatusOr<ProcessStats> ReadProcessStats();

// Writes process_cpu_seconds_total, process_resident_memory_bytes, process_virtual_memory_bytes,
// process_start_time_seconds, process_open_fds, process_max_fds and process_threads (nothing
// when /proc cannot be read).
void WriteProcessMetrics(TextWriter& writer);

}  // namespace tollgate::metrics
