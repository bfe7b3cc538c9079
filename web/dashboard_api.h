#pragma once

#include <functional>
#include <map>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "services/engine/tollgate_api.h"

namespace tollgate::web {

// Query parameters of a request, by name.
using Params = std::map<std::string, std::string>;

// Which workloads a caller may see by name (the access gate's List filtering); null: all.
using Visible = std::function<bool(const v1::Workload&)>;

// The dashboard's read-only JSON API: each call is the gRPC API's call through the same
// TollgateApi facade, printed with protobuf's JSON mapping (lowerCamelCase names, enums by
// name, int64 as strings), so the dashboard shows exactly the numbers `tollgate get` shows.
// Errors carry the facade's status (INVALID_ARGUMENT names the parameter). Authorization is the
// caller's (web/dashboard_access decides it through the access gate); the calls that return
// workloads take the resulting `visible` filter. Thread-safe.
class DashboardApi {
 public:
  // `current_revision` returns the store's latest committed revision.
  DashboardApi(engine::TollgateApi& api, std::function<int64_t()> current_revision)
      : api_(api), current_revision_(std::move(current_revision)) {}

  // GET /api/v1/objects/{kind}: kind is clusterqueues, localqueues, cohorts, resourceflavors,
  // workloadpriorityclasses or priorityclasses. ?namespace= for LocalQueues.
  absl::StatusOr<std::string> ListObjects(absl::string_view kind, const Params& params);
  // GET /api/v1/workloads: ?namespace= &queue= &clusterQueue= &state=PENDING|ADMITTED|...
  absl::StatusOr<std::string> ListWorkloads(const Params& params, const Visible& visible = nullptr);
  // GET /api/v1/workloads/{namespace}/{name}: {"workload", "pending" (position and message,
  // absent unless pending), "quotaHolders" (workloads holding quota in the ClusterQueues of its
  // cohort, or of its ClusterQueue without one: who holds what it waits for; only those
  // `visible` allows)}.
  absl::StatusOr<std::string> GetWorkload(absl::string_view namespace_name, absl::string_view name,
                                          const Visible& visible = nullptr);
  // GET /api/v1/pending?clusterQueue= (or ?namespace= &localQueue=): Kueue's visibility list.
  // Items `visible` refuses keep their position but lose namespace, name, LocalQueue and message
  // (as the gRPC visibility call does).
  absl::StatusOr<std::string> ListPending(const Params& params, const Visible& visible = nullptr);
  // GET /api/v1/topology?flavor=F: each topology flavor's tree of domains with capacity, use and
  // free (InventoryService.GetTopologyUsage; docs/topology.md).
  absl::StatusOr<std::string> TopologyUsage(const Params& params);

  // The workload change stream for server-sent events: calls `send` with each change as a
  // small JSON object {"type","revision","namespace","name","state","clusterQueue"} after
  // `since_revision` (the current revision when 0 or less) until `send` returns false or
  // `cancelled` returns true. Bookmarks arrive as type "BOOKMARK". OUT_OF_RANGE when the
  // revision is compacted away. Changes of workloads `visible` refuses are skipped.
  absl::Status Stream(int64_t since_revision,
                      const std::function<bool(int64_t revision, const std::string& json)>& send,
                      const std::function<bool()>& cancelled, const Visible& visible = nullptr);

 private:
  engine::TollgateApi& api_;
  const std::function<int64_t()> current_revision_;
};

}  // namespace tollgate::web
