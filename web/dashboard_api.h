#pragma once

#include <functional>
#include <map>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "services/tollgate_api.h"

namespace tollgate::web {

// Query parameters of a request, by name.
using Params = std::map<std::string, std::string>;

// The dashboard's read-only JSON API: each call is the gRPC API's call through the same
// TollgateApi facade, printed with protobuf's JSON mapping (lowerCamelCase names, enums by
// name, int64 as strings), so the dashboard shows exactly the numbers `tollgate get` shows.
// Errors carry the facade's status (INVALID_ARGUMENT names the parameter). Thread-safe.
class DashboardApi {
 public:
  // `current_revision` returns the store's latest committed revision.
  DashboardApi(services::TollgateApi& api, std::function<int64_t()> current_revision)
      : api_(api), current_revision_(std::move(current_revision)) {}

  // GET /api/v1/objects/{kind}: kind is clusterqueues, localqueues, cohorts, resourceflavors,
  // workloadpriorityclasses or priorityclasses. ?namespace= for LocalQueues.
  absl::StatusOr<std::string> ListObjects(absl::string_view kind, const Params& params);
  // GET /api/v1/workloads: ?namespace= &queue= &clusterQueue= &state=PENDING|ADMITTED|...
  absl::StatusOr<std::string> ListWorkloads(const Params& params);
  // GET /api/v1/workloads/{namespace}/{name}: {"workload", "pending" (position and message,
  // absent unless pending), "quotaHolders" (workloads holding quota in the ClusterQueues of its
  // cohort, or of its ClusterQueue without one: who holds what it waits for)}.
  absl::StatusOr<std::string> GetWorkload(absl::string_view namespace_name, absl::string_view name);
  // GET /api/v1/pending?clusterQueue= (or ?namespace= &localQueue=): Kueue's visibility list.
  absl::StatusOr<std::string> ListPending(const Params& params);

  // The workload change stream for server-sent events: calls `send` with each change as a
  // small JSON object {"type","revision","namespace","name","state","clusterQueue"} after
  // `since_revision` (the current revision when 0 or less) until `send` returns false or
  // `cancelled` returns true. Bookmarks arrive as type "BOOKMARK". OUT_OF_RANGE when the
  // revision is compacted away.
  absl::Status Stream(int64_t since_revision,
                      const std::function<bool(int64_t revision, const std::string& json)>& send,
                      const std::function<bool()>& cancelled);

 private:
  services::TollgateApi& api_;
  const std::function<int64_t()> current_revision_;
};

}  // namespace tollgate::web
