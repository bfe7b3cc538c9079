#pragma once

// How good the start-time estimates made during a replay were: each sampled job's estimate at
// submission against the start it actually got, for Tollgate's learned runtimes and for Slurm's
// time-limit rule side by side (docs/simulation.md, "How accurate are start estimates?").

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "services/sim/trace_reader.h"
#include "services/sim/trace_replay.h"

namespace tollgate::sim {

struct EstimateAccuracy {
  std::string method;
  // Jobs asked about; of those, how many got a time (ESTIMATED), and of those how many started.
  int64_t sampled = 0;
  int64_t estimated = 0;
  int64_t scored = 0;
  int64_t not_before = 0;
  int64_t unknown = 0;
  // Over the scored jobs: |estimated wait - actual wait|, and the share within 2x (see
  // WithinFactorTwo).
  double median_abs_error_seconds = 0;
  double p90_abs_error_seconds = 0;
  double within_2x = 0;
  double median_actual_wait_seconds = 0;
};

// Within 2x: the larger of the two waits is at most twice the smaller, or they differ by at
// most a minute (so "starts now" vs "started 20 s later" counts, and 0 vs 0 does).
bool WithinFactorTwo(absl::Duration estimated, absl::Duration actual);

// One row per method ("learned", "slurm"), then the same over the jobs that waited more than a
// minute ("learned>1m", "slurm>1m"); empty when no job was sampled.
std::vector<EstimateAccuracy> MeasureEstimateAccuracy(const std::vector<TraceJob>& jobs,
                                                      const ReplayResult& result);

std::string FormatEstimateAccuracy(const std::vector<EstimateAccuracy>& rows);

// estimates.csv: per sampled job, the two estimates and the actual wait.
absl::Status WriteEstimatesCsv(const std::string& path, const std::vector<TraceJob>& jobs,
                               const ReplayResult& result);

}  // namespace tollgate::sim
