#pragma once

// How the CLI shows start-time estimates (docs/start-estimates.md): the ESTIMATED-START
// column of `get workloads -o wide`, the "Estimated Start" field of `describe workload`, and
// the answer of `admit --dry-run` and `submit --dry-run=server`. Kept apart from the commands
// that print them so each needs a one-line hunk.

#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cmd/tollgate/cli_session.h"
#include "tollgate/v1/service.pb.h"

namespace tollgate::cli {

// For a table cell: "now", "40m", "40m..1h30m" (likely..late), ">2d" (not before), "unknown".
std::string StartEstimateCell(const v1::StartEstimate& estimate, absl::Time now);

// For describe and dry runs: "in 40m (2026-01-01T01:00:00Z), p90 in 1h30m; runtimes: ...",
// or "unknown: <reason>".
std::string StartEstimateText(const v1::StartEstimate& estimate, absl::Time now);

// The estimate of one pending workload, asked of the visibility API; "" when it is not queued.
absl::StatusOr<std::string> DescribeStartEstimate(Session& s, const v1::Workload& wl);

}  // namespace tollgate::cli
