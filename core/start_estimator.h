#pragma once

// "When will it start?": an estimate of each pending workload's start, made by running the
// real scheduler forward on a copy of the state. Running workloads end at their expected end;
// as each ends, the copy runs the same admission cycles tollgated runs, so queue order,
// borrowing, preemption and fair sharing are the real rules, not a model of them. The rules
// for expected runtimes and the cases answered "unknown" are in docs/start-estimates.md.

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/types.h"
#include "core/workload.h"

namespace tollgate::core {

class ClusterState;

// Where a workload's expected runtime comes from.
enum class RuntimeSource {
  // Its declared maximum execution time if it has one, else its LocalQueue's history.
  kDeclaredThenHistory,
  // Only the LocalQueue's history (what Tollgate learns).
  kHistoryOnly,
  // Only declared maximum execution times: Slurm's rule (every job runs to its limit).
  kDeclaredOnly,
};

struct StartEstimateOptions {
  RuntimeSource runtimes = RuntimeSource::kDeclaredThenHistory;
  // The likely start comes from a run where every workload learned from history runs for this
  // quantile of its LocalQueue's durations; the late start from a second run at late_quantile
  // (no second run when late_quantile <= 0, or when no runtime came from history).
  double likely_quantile = 0.5;
  double late_quantile = 0.9;
  // Bounds on the work per estimate: at most max_steps instants at which workloads end, at
  // most max_cycles scheduling cycles in all, and nothing beyond now + horizon. A workload
  // not started within them is answered "not before" the last instant simulated.
  int max_steps = 256;
  int64_t max_cycles = 5000;
  absl::Duration horizon = absl::Hours(24 * 14);
};

struct StartEstimate {
  enum class Kind {
    // `likely` (and `late` when set) are estimated start times.
    kEstimated,
    // Not started within the simulation's bounds: it starts no earlier than `likely`.
    kNotBefore,
    // The inputs do not support an estimate; `reason` says why.
    kUnknown,
  };
  Kind kind = Kind::kUnknown;
  absl::Time likely = absl::InfinitePast();
  // Start in the late run; unset when there was none or it did not start within the bounds.
  std::optional<absl::Time> late;
  // How the runtimes the estimate rests on were obtained, e.g.
  // "runtimes: 3 declared, 12 from LocalQueue history".
  std::string basis;
  std::string reason;

  bool operator==(const StartEstimate&) const = default;
};

struct StartEstimates {
  absl::Time now;
  // By the live state's workload id; every pending, active workload has an entry.
  std::map<WorkloadId, StartEstimate> by_id;
  // Cost: simulated instants and scheduling cycles over every run.
  int64_t steps = 0;
  int64_t cycles = 0;
};

// Estimates for every pending workload of `state` at `now`. `state` is not changed.
absl::StatusOr<StartEstimates> EstimatePendingStarts(const ClusterState& state, absl::Time now,
                                                     const StartEstimateOptions& options);

// The estimate for `spec` if it were submitted at `now` (an Admit/Submit dry run). Errors are
// Submit's (e.g. a LocalQueue that does not exist). `state` is not changed.
absl::StatusOr<StartEstimate> EstimateSubmission(const ClusterState& state, WorkloadSpec spec,
                                                 absl::Time now,
                                                 const StartEstimateOptions& options);

// A short human rendering relative to `now`: "in 2h10m (late: 5h)", "now", "not before 3d",
// "unknown: ...".
std::string FormatStartEstimate(const StartEstimate& estimate, absl::Time now);

}  // namespace tollgate::core
