#pragma once

// Reads a job trace (CSV with a header row) into the jobs a replay submits. Which columns hold
// what, and which LocalQueue each value of the queue column means, is the caller's mapping, so
// any trace with a submit time, a duration and a GPU count can be replayed without editing it.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace tollgate::sim {

struct TraceColumns {
  // Seconds since the start of the trace.
  std::string submit = "submit_s";
  // Run time in seconds once admitted.
  std::string duration = "duration_s";
  // Total GPUs (or units of `TraceMapping::resource`) the job asks for.
  std::string gpus = "gpus";
  // The value that picks the job's LocalQueue (a team, a cluster, a user).
  std::string queue = "team";
  // Optional: an integer priority.
  std::string priority;
  // Optional: the job's name; `job-<row>` when absent.
  std::string name;
  // Optional: the job's kind ("JobSet", "RayJob", ...; docs/job-kinds.md). A row with a kind
  // asks for the pod sets of that kind's manifest (ReplayOptions::kind_pod_sets) instead of
  // the GPU column's; an empty cell is a plain job.
  std::string kind;
};

struct TraceMapping {
  TraceColumns columns;
  // The resource every pod requests `gpus_per_pod` (or fewer) of.
  std::string resource = "nvidia.com/gpu";
  // A job asking for more than this is a gang of pods of this size, as a multi-node job is
  // (the total must divide evenly).
  int64_t gpus_per_pod = 8;
  // Queue-column value -> "namespace/localQueue". A value not listed goes to `default_queue`,
  // or, when that is empty, to namespace and LocalQueue both named after the value.
  std::map<std::string, std::string> queues;
  std::string default_queue;
};

// One row of the trace as a replay submits it.
struct TraceJob {
  // 1-based data row (the header is row 0), for messages.
  int64_t row = 0;
  std::string name;
  // The queue column's value, as written.
  std::string team;
  std::string namespace_name;
  std::string local_queue;
  absl::Duration submit;
  absl::Duration duration;
  int32_t pods = 1;
  // Units of the resource per pod.
  int64_t per_pod = 0;
  std::optional<int32_t> priority;
  // The kind column's value; empty for a plain job of `pods` x `per_pod`.
  std::string kind;

  int64_t total() const { return per_pod * pods; }
};

// Parses `--queue-map` style text: comma-separated `value=namespace/localQueue` pairs.
absl::StatusOr<std::map<std::string, std::string>> ParseQueueMap(absl::string_view text);

// Parses the trace. Errors name the source, the row, the column and the value:
//   trace.csv: row 17: column "gpus": expected a positive integer, got "x"
// Jobs come back ordered by submit time, ties in row order.
absl::StatusOr<std::vector<TraceJob>> ParseTrace(absl::string_view csv_text,
                                                 const TraceMapping& mapping,
                                                 absl::string_view source_name);

}  // namespace tollgate::sim
