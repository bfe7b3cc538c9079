#include "web/dashboard_access.h"

#include <map>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace tollgate::web {
namespace {

std::string Param(const Params& params, const std::string& name) {
  auto it = params.find(name);
  return it == params.end() ? "" : it->second;
}

auth::AccessRequest Request(absl::string_view verb, absl::string_view kind, absl::string_view ns,
                            absl::string_view name) {
  auth::AccessRequest request;
  request.verb = std::string(verb);
  request.kind = std::string(kind);
  request.ns = auth::IsNamespacedKind(kind) ? std::string(ns) : "";
  request.name = std::string(name);
  if (request.kind == "ClusterQueue") request.cluster_queue = request.name;
  return request;
}

}  // namespace

absl::StatusOr<auth::Identity> DashboardAccess::Authenticate(absl::string_view bearer,
                                                             absl::string_view certificate_pem,
                                                             absl::string_view what) {
  absl::StatusOr<auth::Identity> identity = gate_.AuthenticateCredentials(bearer, certificate_pem);
  if (!identity.ok()) {
    auth::AccessRequest request;
    request.verb = "get";
    request.name = std::string(what);
    gate_.AuditUnauthenticated(request, identity.status());
  }
  return identity;
}

void DashboardAccess::AuditRefused(absl::string_view method, absl::string_view path,
                                   const absl::Status& status) {
  auth::AccessRequest request;
  request.verb = absl::AsciiStrToLower(method);
  request.name = std::string(path);
  gate_.AuditRefused(request, status);
}

absl::Status DashboardAccess::Metrics(const auth::Identity& caller) {
  return gate_.CheckIdentity(caller, Request("get", "Metrics", "", "")).status();
}

absl::Status DashboardAccess::ListObjects(const auth::Identity& caller, absl::string_view path_kind,
                                          const Params& params) {
  static const auto* kKinds = new std::map<std::string, std::string, std::less<>>{
      {"clusterqueues", "ClusterQueue"},
      {"localqueues", "LocalQueue"},
      {"cohorts", "Cohort"},
      {"resourceflavors", "ResourceFlavor"},
      {"workloadpriorityclasses", "WorkloadPriorityClass"},
      {"priorityclasses", "PriorityClass"},
  };
  auto it = kKinds->find(path_kind);
  // An unknown kind is the API's NOT_FOUND to report; nothing to authorize.
  if (it == kKinds->end()) return absl::OkStatus();
  return gate_.CheckIdentity(caller, Request("list", it->second, Param(params, "namespace"), ""))
      .status();
}

Visible DashboardAccess::Filter(rpc::AuthorizedCall call, bool filtered, absl::string_view verb) {
  if (!filtered) return nullptr;
  return [this, call = std::move(call), verb = std::string(verb)](const v1::Workload& workload) {
    return gate_.MayRead(call, verb, workload);
  };
}

absl::StatusOr<Visible> DashboardAccess::ListWorkloads(const auth::Identity& caller,
                                                       const Params& params) {
  bool filtered = false;
  absl::StatusOr<rpc::AuthorizedCall> call = gate_.CheckListIdentity(
      caller, Request("list", "Workload", Param(params, "namespace"), ""), filtered);
  if (!call.ok()) return call.status();
  return Filter(*std::move(call), filtered, "list");
}

absl::StatusOr<Visible> DashboardAccess::GetWorkload(const auth::Identity& caller,
                                                     absl::string_view ns, absl::string_view name) {
  absl::StatusOr<rpc::AuthorizedCall> call =
      gate_.CheckIdentity(caller, Request("get", "Workload", ns, name));
  if (!call.ok()) return call.status();
  // The quota holders are other workloads: shown only when the caller may list them.
  return Filter(*std::move(call), /*filtered=*/true, "list");
}

absl::StatusOr<Visible> DashboardAccess::ListPending(const auth::Identity& caller,
                                                     const Params& params) {
  auth::AccessRequest request;
  const std::string cluster_queue = Param(params, "clusterQueue");
  if (cluster_queue.empty()) {
    request = Request("list", "Workload", Param(params, "namespace"), "");
    request.local_queue = Param(params, "localQueue");
  } else {
    request = Request("get", "ClusterQueue", "", cluster_queue);
  }
  absl::StatusOr<rpc::AuthorizedCall> call = gate_.CheckIdentity(caller, std::move(request));
  if (!call.ok()) return call.status();
  return Filter(*std::move(call), /*filtered=*/true, "list");
}

absl::Status DashboardAccess::TopologyUsage(const auth::Identity& caller) {
  return gate_.CheckIdentity(caller, Request("get", "Topology", "", "")).status();
}

absl::StatusOr<Visible> DashboardAccess::Events(const auth::Identity& caller) {
  bool filtered = false;
  absl::StatusOr<rpc::AuthorizedCall> call =
      gate_.CheckListIdentity(caller, Request("watch", "Workload", "", ""), filtered);
  if (!call.ok()) return call.status();
  return Filter(*std::move(call), filtered, "watch");
}

}  // namespace tollgate::web
