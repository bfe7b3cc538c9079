#pragma once

// Who may read what on the HTTP port: each dashboard endpoint and /metrics described as the
// access request its gRPC counterpart makes, decided by the same AccessGate (so a team member
// sees the same workloads in the dashboard as in `tollgate get`), with the same audit lines for
// refusals. Thread-safe.

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "services/auth/authorizer.h"
#include "services/rpc/access_gate.h"
#include "web/dashboard_api.h"

namespace tollgate::web {

class DashboardAccess {
 public:
  // `gate` must outlive this.
  explicit DashboardAccess(rpc::AccessGate& gate) : gate_(gate) {}

  // The caller of an HTTP request: `bearer` from "Authorization: Bearer" or the login cookie,
  // `certificate_pem` a client certificate TLS verified. UNAUTHENTICATED (audited) otherwise.
  absl::StatusOr<auth::Identity> Authenticate(absl::string_view bearer,
                                              absl::string_view certificate_pem,
                                              absl::string_view what);

  // Audits a state-changing request refused before any credentials were looked at (a
  // cross-site or token-less POST /login or /logout): result "denied", `method` as the verb
  // ("POST"), `path` as the name.
  void AuditRefused(absl::string_view method, absl::string_view path, const absl::Status& status);

  // GET /metrics: get Metrics (the metrics-reader role, viewer, admin).
  absl::Status Metrics(const auth::Identity& caller);
  // GET /api/v1/objects/{kind}: list of that kind, as ConfigService.List.
  absl::Status ListObjects(const auth::Identity& caller, absl::string_view path_kind,
                           const Params& params);
  // GET /api/v1/workloads: list Workload as AdmissionService.ListWorkloads; the filter for
  // callers allowed only some namespaces or queues.
  absl::StatusOr<Visible> ListWorkloads(const auth::Identity& caller, const Params& params);
  // GET /api/v1/workloads/{ns}/{name}: get Workload; the filter for the quota holders shown.
  absl::StatusOr<Visible> GetWorkload(const auth::Identity& caller, absl::string_view ns,
                                      absl::string_view name);
  // GET /api/v1/pending: as VisibilityService.ListPendingWorkloads.
  absl::StatusOr<Visible> ListPending(const auth::Identity& caller, const Params& params);
  // GET /api/v1/topology: get Topology, as InventoryService.GetTopologyUsage.
  absl::Status TopologyUsage(const auth::Identity& caller);
  // GET /api/v1/events: watch Workload in every namespace, filtered like Watch.
  absl::StatusOr<Visible> Events(const auth::Identity& caller);

 private:
  // The filter of an allowed call: null when the caller may read every workload.
  Visible Filter(rpc::AuthorizedCall call, bool filtered, absl::string_view verb);

  rpc::AccessGate& gate_;
};

}  // namespace tollgate::web
