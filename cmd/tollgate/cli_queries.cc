#include "cmd/tollgate/cli_queries.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "cmd/tollgate/cli_format.h"
#include "services/engine/config_objects.h"

namespace tollgate::cli {

absl::StatusOr<std::vector<v1::ConfigObject>> ListConfig(Session& s, v1::ObjectKind kind,
                                                         absl::string_view ns,
                                                         absl::string_view name) {
  std::vector<v1::ConfigObject> objects;
  if (!name.empty()) {
    v1::GetObjectRequest request;
    request.mutable_ref()->set_kind(kind);
    request.mutable_ref()->set_namespace_(std::string(ns));
    request.mutable_ref()->set_name(std::string(name));
    absl::StatusOr<v1::ConfigObject> object = s.client().GetObject(request);
    if (!object.ok()) return object.status();
    objects.push_back(*std::move(object));
    return objects;
  }
  v1::ListObjectsRequest request;
  request.set_kind(kind);
  request.set_namespace_(std::string(ns));
  absl::StatusOr<v1::ListObjectsResponse> response = s.client().ListObjects(request);
  if (!response.ok()) return response.status();
  for (v1::ConfigObject& object : *response->mutable_objects()) {
    // The service narrows only some kinds by namespace; the filter is the CLI's promise.
    if (!ns.empty() && engine::MetadataOf(object).namespace_() != ns) continue;
    objects.push_back(std::move(object));
  }
  std::sort(
      objects.begin(), objects.end(), [](const v1::ConfigObject& a, const v1::ConfigObject& b) {
        return std::make_pair(engine::MetadataOf(a).namespace_(), engine::MetadataOf(a).name()) <
               std::make_pair(engine::MetadataOf(b).namespace_(), engine::MetadataOf(b).name());
      });
  return objects;
}

absl::StatusOr<std::map<std::string, PendingInfo>> PendingInfoOf(
    Session& s, const std::vector<v1::Workload>& workloads, bool with_start_estimates) {
  std::set<std::pair<std::string, std::string>> queues;
  for (const v1::Workload& wl : workloads) {
    if (wl.status().state() == v1::WORKLOAD_STATE_PENDING) {
      queues.emplace(wl.metadata().namespace_(), QueueOf(wl));
    }
  }
  std::map<std::string, PendingInfo> info;
  for (const auto& [ns, queue] : queues) {
    v1::ListPendingWorkloadsRequest request;
    request.set_namespace_(ns);
    request.set_local_queue(queue);
    request.set_include_start_estimates(with_start_estimates);
    absl::StatusOr<v1::ListPendingWorkloadsResponse> response =
        s.client().ListPendingWorkloads(request);
    // A LocalQueue that does not exist (yet) has no positions; the workload still lists.
    if (absl::IsNotFound(response.status())) continue;
    if (!response.ok()) return response.status();
    for (const v1::PendingWorkload& p : response->items()) {
      PendingInfo& entry = info[absl::StrCat(p.workload().namespace_(), "/", p.workload().name())];
      entry.position = p.position_in_cluster_queue() + 1;
      entry.cluster_queue = p.cluster_queue();
      entry.message = p.message();
      if (p.has_start_estimate()) entry.start_estimate = p.start_estimate();
    }
  }
  return info;
}

}  // namespace tollgate::cli
