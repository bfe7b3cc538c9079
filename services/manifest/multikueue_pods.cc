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
  return JsonPayload(kind.ApiVersion(), kind.kind, manifest);
}

absl::StatusOr<Json> RemoteGatedObjectFromPayload(const v1::WorkloadPayload& payload,
                                                  absl::string_view ns, absl::string_view copy_name,
                                                  absl::string_view origin) {
  if (!IsMultiKueueGatedKind(payload.api_version(), payload.kind())) {
    return absl::InvalidArgumentError(absl::StrCat("spec.payload: carries ", payload.api_version(),
                                                   " ", payload.kind(),
                                                   ", not a Pod or a StatefulSet"));
  }
  TOLLGATE_ASSIGN_OR_RETURN(Json obj, WorkerObjectFromPayload(payload, ns, copy_name, origin));
  const Json* spec = Find(obj, {"spec"});
  if (spec == nullptr || !spec->is_object()) {
    return absl::InvalidArgumentError("spec.payload.data: spec: Required value");
  }
  if (IsPod(payload.api_version(), payload.kind())) obj["spec"].erase("nodeName");
  return obj;
}

v1::WorkloadPayload PodStatusReport(const Json& pod) {
  const Json* status = Find(pod, {"status"});
  Json reduced = {{"apiVersion", "v1"},
                  {"kind", "Pod"},
                  {"status", status != nullptr && status->is_object() ? *status : Json::object()}};
  return JsonPayload("v1", "Pod", reduced);
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
