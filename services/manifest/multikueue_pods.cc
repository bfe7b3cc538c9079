#include "services/manifest/multikueue_pods.h"

#include <set>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "services/manifest/multikueue_job.h"
#include "services/manifest/pod_group.h"
#include "services/manifest/pod_kinds.h"
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

const ResourceKind& LeaderWorkerSetKind() {
  static const ResourceKind* kind = new ResourceKind{"leaderworkerset.x-k8s.io", "v1",
                                                     "leaderworkersets", "LeaderWorkerSet", true};
  return *kind;
}

bool IsMultiKueuePodGroup(absl::string_view api_version, absl::string_view kind) {
  return api_version == "v1" && kind == "PodList";
}

bool IsMultiKueueGatedKind(absl::string_view api_version, absl::string_view kind) {
  return IsPod(api_version, kind) || IsMultiKueuePodGroup(api_version, kind) ||
         (api_version == LeaderWorkerSetKind().ApiVersion() &&
          kind == LeaderWorkerSetKind().kind) ||
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
  if (kind.kind == "StatefulSet" || kind.kind == "LeaderWorkerSet") {
    metadata["annotations"][std::string(kMultiKueueOriginUidAnnotation)] =
        GetString(obj, {"metadata", "uid"});
  }
  Json manifest = {{"apiVersion", kind.ApiVersion()},
                   {"kind", kind.kind},
                   {"metadata", std::move(metadata)},
                   {"spec", *spec}};
  return JsonPayload(kind.ApiVersion(), kind.kind, manifest);
}

absl::StatusOr<v1::WorkloadPayload> PodGroupPayload(const std::vector<Json>& pods) {
  if (pods.empty()) return absl::InvalidArgumentError("pods: the group to carry has no pods");
  Json items = Json::array();
  for (const Json& pod : pods) {
    const Json* spec = Find(pod, {"spec"});
    if (spec == nullptr || !spec->is_object()) {
      return absl::InvalidArgumentError(
          absl::StrCat("pod ", GetString(pod, {"metadata", "name"}), ": spec: Required value"));
    }
    items.push_back({{"apiVersion", "v1"},
                     {"kind", "Pod"},
                     {"metadata", CarriedMetadata(pod)},
                     {"spec", *spec}});
  }
  Json list = {{"apiVersion", "v1"}, {"kind", "PodList"}, {"items", std::move(items)}};
  return JsonPayload("v1", "PodList", list);
}

absl::StatusOr<std::vector<Json>> GroupPodsToCarry(const std::vector<Json>& pods,
                                                   const v1::WorkloadPayload& carried) {
  if (!IsMultiKueuePodGroup(carried.api_version(), carried.kind())) {
    return absl::InvalidArgumentError(absl::StrCat("spec.payload: carries ", carried.api_version(),
                                                   " ", carried.kind(), ", not a v1 PodList"));
  }
  TOLLGATE_ASSIGN_OR_RETURN(Json list, ParseJson(carried.data(), "spec.payload.data"));
  const Json* items = list.is_object() ? Find(list, {"items"}) : nullptr;
  if (items == nullptr || !items->is_array()) {
    return absl::InvalidArgumentError("spec.payload.data: items: must be a list of pods");
  }
  auto deleting = [](const Json& pod) {
    return Find(pod, {"metadata", "deletionTimestamp"}) != nullptr;
  };
  // The carried ones keep their places, so a group that gained nothing gives the same payload.
  std::vector<Json> out;
  std::set<std::string> names;
  for (const Json& item : *items) {
    const std::string name = GetString(item, {"metadata", "name"});
    names.insert(name);
    for (const Json& pod : pods) {
      if (GetString(pod, {"metadata", "name"}) == name && !deleting(pod)) out.push_back(pod);
    }
  }
  for (const Json& pod : pods) {
    if (names.count(GetString(pod, {"metadata", "name"})) == 0 && !deleting(pod) &&
        IsRunnableOrSucceeded(pod)) {
      out.push_back(pod);
    }
  }
  return out;
}

absl::StatusOr<std::vector<Json>> RemotePodsFromGroupPayload(const v1::WorkloadPayload& payload,
                                                             absl::string_view ns,
                                                             absl::string_view copy_name,
                                                             absl::string_view origin) {
  if (!IsMultiKueuePodGroup(payload.api_version(), payload.kind())) {
    return absl::InvalidArgumentError(absl::StrCat("spec.payload: carries ", payload.api_version(),
                                                   " ", payload.kind(), ", not a v1 PodList"));
  }
  if (payload.content_type() != kJsonContentType) {
    return absl::InvalidArgumentError(absl::StrCat("spec.payload.contentType: want \"",
                                                   kJsonContentType, "\", got \"",
                                                   payload.content_type(), "\""));
  }
  TOLLGATE_ASSIGN_OR_RETURN(Json list, ParseJson(payload.data(), "spec.payload.data"));
  const Json* items = list.is_object() ? Find(list, {"items"}) : nullptr;
  if (items == nullptr || !items->is_array() || items->empty()) {
    return absl::InvalidArgumentError("spec.payload.data: items: must be a non-empty list of pods");
  }
  std::vector<Json> pods;
  for (size_t i = 0; i < items->size(); ++i) {
    absl::StatusOr<Json> pod =
        RemoteGatedObjectFromPayload(JsonPayload("v1", "Pod", (*items)[i]), ns, copy_name, origin);
    if (!pod.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("spec.payload.data: items[", i, "]: ", pod.status().message()));
    }
    pods.push_back(*std::move(pod));
  }
  return pods;
}

v1::WorkloadPayload PodGroupStatusReport(const std::vector<Json>& pods) {
  Json items = Json::array();
  for (const Json& pod : pods) {
    const Json* status = Find(pod, {"status"});
    items.push_back(
        {{"metadata", {{"name", GetString(pod, {"metadata", "name"})}}},
         {"status", status != nullptr && status->is_object() ? *status : Json::object()}});
  }
  Json list = {{"apiVersion", "v1"}, {"kind", "PodList"}, {"items", std::move(items)}};
  return JsonPayload("v1", "PodList", list);
}

absl::StatusOr<Json> RemoteGatedObjectFromPayload(const v1::WorkloadPayload& payload,
                                                  absl::string_view ns, absl::string_view copy_name,
                                                  absl::string_view origin) {
  if (!IsMultiKueueGatedKind(payload.api_version(), payload.kind()) ||
      IsMultiKueuePodGroup(payload.api_version(), payload.kind())) {
    return absl::InvalidArgumentError(
        absl::StrCat("spec.payload: carries ", payload.api_version(), " ", payload.kind(),
                     ", not a Pod, a StatefulSet or a LeaderWorkerSet"));
  }
  TOLLGATE_ASSIGN_OR_RETURN(Json obj, WorkerObjectFromPayload(payload, ns, copy_name, origin));
  const Json* spec = Find(obj, {"spec"});
  if (spec == nullptr || !spec->is_object()) {
    return absl::InvalidArgumentError("spec.payload.data: spec: Required value");
  }
  if (IsPod(payload.api_version(), payload.kind())) obj["spec"].erase("nodeName");
  if (payload.kind() == LeaderWorkerSetKind().kind) {
    obj["metadata"]["labels"].erase(kPrebuiltWorkloadKey);
  }
  return obj;
}

std::vector<std::string> RemoteLeaderWorkerSetCopies(const Json& lws) {
  const std::string origin_uid =
      GetString(lws, {"metadata", "annotations", kMultiKueueOriginUidAnnotation});
  if (origin_uid.empty()) return {};
  Json as_on_the_manager = lws;
  as_on_the_manager["metadata"]["uid"] = origin_uid;
  std::vector<std::string> out;
  for (int32_t i = 0; i < LeaderWorkerSetReplicas(lws); ++i) {
    out.push_back(LeaderWorkerSetGroupName(as_on_the_manager, i));
  }
  return out;
}

v1::WorkloadPayload PodStatusReport(const Json& pod) {
  const Json* status = Find(pod, {"status"});
  Json reduced = {{"apiVersion", "v1"},
                  {"kind", "Pod"},
                  {"status", status != nullptr && status->is_object() ? *status : Json::object()}};
  return JsonPayload("v1", "Pod", reduced);
}

absl::StatusOr<Json> ProjectedPodStatus(const Json& local_pod, const v1::WorkloadPayload& report) {
  const bool group = IsMultiKueuePodGroup(report.api_version(), report.kind());
  if (!IsPod(report.api_version(), report.kind()) && !group) {
    return absl::InvalidArgumentError(absl::StrCat("status.jobStatus: reports ",
                                                   report.api_version(), " ", report.kind(),
                                                   ", not a v1 Pod or PodList"));
  }
  TOLLGATE_ASSIGN_OR_RETURN(Json remote, ParseJson(report.data(), "status.jobStatus.data"));
  if (group) {
    const Json* items = remote.is_object() ? Find(remote, {"items"}) : nullptr;
    if (items == nullptr || !items->is_array()) {
      return absl::InvalidArgumentError("status.jobStatus.data: items: must be a list");
    }
    const std::string name = GetString(local_pod, {"metadata", "name"});
    const Json* mine = nullptr;
    for (const Json& item : *items) {
      if (item.is_object() && GetString(item, {"metadata", "name"}) == name) mine = &item;
    }
    if (mine == nullptr) {
      return absl::NotFoundError(absl::StrCat("status.jobStatus.data: no pod ", name));
    }
    remote = *mine;
  }
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
