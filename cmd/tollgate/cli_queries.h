#pragma once

// Reads several commands share: config objects by kind, workloads, pending positions.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cmd/tollgate/cli_session.h"
#include "tollgate/v1/objects.pb.h"
#include "tollgate/v1/service.pb.h"

namespace tollgate::cli {

// One object when `name` is set (NOT_FOUND when absent), else every object of `kind` in `ns`
// ("" for all), sorted by namespace and name.
absl::StatusOr<std::vector<v1::ConfigObject>> ListConfig(Session& s, v1::ObjectKind kind,
                                                         absl::string_view ns,
                                                         absl::string_view name);

// Where a pending workload stands: its 1-based position in its ClusterQueue and why it waits.
struct PendingInfo {
  int position = 0;
  std::string cluster_queue;
  std::string message;
  // Set when asked for (get workloads -o wide).
  std::optional<v1::StartEstimate> start_estimate;
};

// The pending entries of the LocalQueues `workloads` name, by "namespace/name". One visibility
// call per LocalQueue with a pending workload.
absl::StatusOr<std::map<std::string, PendingInfo>> PendingInfoOf(
    Session& s, const std::vector<v1::Workload>& workloads, bool with_start_estimates = false);

}  // namespace tollgate::cli
