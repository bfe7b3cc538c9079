#pragma once

// Turns a replay into what an admin reads: per-queue and overall wait and completion-time
// percentiles, utilization, borrowing, preemption cost and fairness, as a text summary, CSV
// files and gnuplot scripts. Pure functions of the replay: the same replay gives byte-identical
// output.

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "services/sim/trace_reader.h"
#include "services/sim/trace_replay.h"

namespace tollgate::sim {

// Nearest-rank percentiles in seconds; infinity when the rank falls on a job that never got
// there (never admitted, never finished), so a target like "p95 wait <= 1 h" cannot be met by
// leaving jobs out.
struct Percentiles {
  double p50 = 0;
  double p95 = 0;
  double p99 = 0;
};

struct QueueReport {
  std::string name;
  int64_t jobs = 0;
  int64_t never_admitted = 0;
  Percentiles wait_seconds;
  Percentiles completion_seconds;
  double mean_wait_seconds = 0;
  int64_t preemptions = 0;
  // Resource-hours thrown away by preemptions (GPU-hours for a GPU trace).
  double lost_hours = 0;
  // With admission checks: per admitted job, the time its reservations waited for them, and
  // the resource-hours of quota held meanwhile without running (what provisioning costs).
  Percentiles check_wait_seconds;
  double idle_reserved_hours = 0;
  double nominal = 0;
  double weight = 1;
  // Over the samples while the trace ran.
  double mean_used = 0;
  double mean_borrowed = 0;
};

struct ReplayReport {
  std::string resource;
  std::vector<QueueReport> queues;
  QueueReport overall;
  // Sum of the ClusterQueues' nominal quotas.
  double capacity = 0;
  // Mean of used / capacity over the samples.
  double mean_utilization = 0;
  // Mean over the samples of Jain's index of used/entitlement across the queues with demand
  // (1 = every queue with work got its weighted share).
  double mean_fairness = 0;
  // The largest per-queue p95 wait.
  double worst_queue_p95_wait_seconds = 0;
  // The replay modelled admission checks: the summary reports their cost.
  bool has_checks = false;
  absl::Duration end;
};

ReplayReport Summarize(const std::vector<TraceJob>& jobs, const ReplayResult& result,
                       const std::string& resource);

// A few lines and a per-queue table.
std::string FormatSummary(const ReplayReport& report);

// One row per configuration, side by side.
std::string FormatComparison(const std::vector<std::pair<std::string, ReplayReport>>& reports);

// Writes into `dir` (which must exist): summary.txt, jobs.csv, queues.csv, timeseries.csv and
// gnuplot scripts (utilization.gp, usage.gp, borrowed.gp, fairness.gp, wait.gp), each drawing
// an SVG of the same name beside it when run from `dir`.
absl::Status WriteReplayFiles(const std::string& dir, const std::vector<TraceJob>& jobs,
                              const ReplayResult& result, const ReplayReport& report);

// The plot scripts WriteReplayFiles writes, in the order to run them.
std::vector<std::string> PlotScripts();

}  // namespace tollgate::sim
