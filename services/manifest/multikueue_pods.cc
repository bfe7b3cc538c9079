#include "services/manifest/multikueue_pods.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "services/manifest/multikueue_job.h"
#include "services/manifest/pod_group.h"
#include "services/manifest/prebuilt_workload.h"

namespace tollgate::manifest {
namespace {

bool IsPod(absl::string_view api_version, absl::string_view kind) {
  return api_version == "v1" && kind == "Pod";
}

v1::WorkloadPayload Payload(absl::string_view api_version, absl::string_view kind,
                            const Json& data) {
  v1::WorkloadPayload payload;
  payload.set_content_type(std::string(kJsonContentType));
  payload.set_api_version(std::string(api_version));
  payload.set_kind(std::string(kind));
  payload.set_data(Dump(data));
  return payload;
}

}  // namespace

const ResourceKind& StatefulSetKind() {
  static const ResourceKind* kind =
      new ResourceKind{"apps", "v1", "statefulsets", "StatefulSet", true};
  return *kind;
}

bool IsMultiKueueGatedKind(absl::string_view api_version, absl::string_view kind) {
  return IsPod(api_version, kind) ||
         (api_version == StatefulSetKind().ApiVersion() && kind == StatefulSetKind().kind);
}

absl::StatusOr<v1::WorkloadPayload> GatedObjectPayload(const ResourceKind& kind, const Json& obj) {
  if (!IsMultiKueueGatedKind(kind.ApiVersion(), kind.kind)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "kind: MultiKueue carries no ", kind.ApiVersion(), " ", kind.kind, " without managedBy"));
  }
  const Json* spec = Find(obj, {"spec"});
  if (spec == nullptr || !spec->is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat("spec: Required value (the ", kind.kind, " to carry has no spec)"));
  }
  Json metadata = CarriedMetadata(obj);
  if (kind.kind == "StatefulSet") {
    metadata["annotations"][std::string(kMultiKueueOriginUidAnnotation)] =
        GetString(obj, {"metadata", "uid"});
  }
  Json manifest = {{"apiVersion", kind.ApiVersion()},
                   {"kind", kind.kind},
                   {"metadata", std::move(metadata)},
                   {"spec", *spec}};
  return Payload(kind.ApiVersion(), kind.kind, manifest);
}

absl::StatusOr<Json> RemoteGatedObjectFromPayload(const v1::WorkloadPayload& payload,
                                                  absl::string_view ns, absl::string_view copy_name,
                                                  absl::string_view origin) {
  if (!IsMultiKueueGatedKind(payload.api_version(), payload.kind())) {
    return absl::InvalidArgumentError(absl::StrCat("spec.payload: carries ", payload.api_version(),
                                                   " ", payload.kind(),
                                                   ", not a Pod or a StatefulSet"));
  }
  if (payload.content_type() != kJsonContentType) {
    return absl::InvalidArgumentError(absl::StrCat("spec.payload.contentType: want \"",
                                                   kJsonContentType, "\", got \"",
                                                   payload.content_type(), "\""));
  }
  TOLLGATE_ASSIGN_OR_RETURN(Json obj, ParseJson(payload.data(), "spec.payload.data"));
  if (!obj.is_object() || GetString(obj, {"metadata", "name"}).empty()) {
    return absl::InvalidArgumentError(
        "spec.payload.data: must be a Kubernetes object with metadata.name");
  }
  const Json* spec = Find(obj, {"spec"});
  if (spec == nullptr || !spec->is_object()) {
    return absl::InvalidArgumentError("spec.payload.data: spec: Required value");
  }
  obj["apiVersion"] = payload.api_version();
  obj["kind"] = payload.kind();
  Json& metadata = obj["metadata"];
  metadata["namespace"] = std::string(ns);
  for (const char* server_set : {"uid", "resourceVersion", "managedFields", "generation",
                                 "creationTimestamp", "ownerReferences", "deletionTimestamp"}) {
    metadata.erase(server_set);
  }
  obj.erase("status");
  if (IsPod(payload.api_version(), payload.kind())) obj["spec"].erase("nodeName");
  Json& labels = Ensure(obj, {"metadata", "labels"});
  labels[kPrebuiltWorkloadKey] = std::string(copy_name);
  labels[std::string(kMultiKueueOriginLabel)] = std::string(origin);
  return obj;
}

v1::WorkloadPayload PodStatusReport(const Json& pod) {
  const Json* status = Find(pod, {"status"});
  Json reduced = {{"apiVersion", "v1"},
                  {"kind", "Pod"},
                  {"status", status != nullptr && status->is_object() ? *status : Json::object()}};
  return Payload("v1", "Pod", reduced);
}

absl::StatusOr<Json> ProjectedPodStatus(const Json& local_pod, const v1::WorkloadPayload& report) {
  if (!IsPod(report.api_version(), report.kind())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "status.jobStatus: reports ", report.api_version(), " ", report.kind(), ", not a v1 Pod"));
  }
  TOLLGATE_ASSIGN_OR_RETURN(Json remote, ParseJson(report.data(), "status.jobStatus.data"));
  const Json* remote_status = remote.is_object() ? Find(remote, {"status"}) : nullptr;
  if (remote_status == nullptr || !remote_status->is_object()) {
    return absl::InvalidArgumentError("status.jobStatus.data: status: must be a JSON object");
  }
  Json status = *remote_status;
  const Json* local_scheduled = FindCondition(local_pod, "PodScheduled");
  const Json* remote_scheduled = FindCondition(remote, "PodScheduled");
  const bool remote_is_scheduled =
      remote_scheduled != nullptr && GetString(*remote_scheduled, {"status"}) == "True";
  if (IsGated(local_pod) && local_scheduled != nullptr && !remote_is_scheduled) {
    Json& conditions = status["conditions"];
    if (!conditions.is_array()) conditions = Json::array();
    bool replaced = false;
    for (Json& c : conditions) {
      if (c.is_object() && GetString(c, {"type"}) == "PodScheduled") {
        c = *local_scheduled;
        replaced = true;
      }
    }
    if (!replaced) conditions.push_back(*local_scheduled);
  }
  return status;
}

}  // namespace tollgate::manifest
