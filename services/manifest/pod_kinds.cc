#include "services/manifest/pod_kinds.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "services/manifest/job_kind.h"
#include "services/manifest/pod_admission.h"
#include "services/manifest/pod_translator.h"
#include "services/manifest/topology_annotations.h"

namespace tollgate::manifest {
namespace {

constexpr char kLwsGroup[] = "leaderworkerset.x-k8s.io";

std::string Name(const Json& obj) { return GetString(obj, {"metadata", "name"}); }
std::string Ns(const Json& obj) { return GetString(obj, {"metadata", "namespace"}, "default"); }
std::string Uid(const Json& obj) { return GetString(obj, {"metadata", "uid"}); }

int32_t IntAt(const Json& obj, std::initializer_list<absl::string_view> path, int32_t fallback) {
  std::optional<int64_t> v = GetInt(obj, path);
  return static_cast<int32_t>(std::clamp<int64_t>(v.value_or(fallback), 0, INT32_MAX));
}

v1::Workload Base(absl::string_view name, absl::string_view ns, absl::string_view queue) {
  v1::Workload wl;
  wl.mutable_metadata()->set_name(std::string(name));
  wl.mutable_metadata()->set_namespace_(std::string(ns));
  wl.mutable_spec()->set_queue_name(std::string(queue));
  return wl;
}

void SetOwner(v1::Workload& wl, const Json& obj, absl::string_view api_version,
              absl::string_view kind) {
  v1::OwnerReference* owner = wl.mutable_metadata()->add_owner_references();
  owner->set_api_version(GetString(obj, {"apiVersion"}, api_version));
  owner->set_kind(GetString(obj, {"kind"}, kind));
  owner->set_name(Name(obj));
  owner->set_uid(Uid(obj));
  owner->set_controller(true);
}

// Kueue's priority: the kueue.x-k8s.io/priority-class label (a WorkloadPriorityClass), else
// the pods' priorityClassName (a PriorityClass).
void SetPriority(v1::Workload& wl, const Json& obj, const Json* pod_spec) {
  const std::string label = GetString(obj, {"metadata", "labels", kPriorityClassLabel});
  if (!label.empty()) {
    wl.mutable_spec()->set_priority_class_name(label);
  } else if (pod_spec != nullptr) {
    if (std::string pc = GetString(*pod_spec, {"priorityClassName"}); !pc.empty()) {
      wl.mutable_spec()->set_priority_class_name(pc);
    }
  }
}

// A pod set of `pod_template` with the topology request its annotations ask for, as Kueue's
// pod, StatefulSet and LeaderWorkerSet reconcilers build it (the kind's pod index label).
absl::StatusOr<v1::PodSet> TopologyPodSet(absl::string_view name, int32_t count,
                                          const Json& pod_template, absl::string_view path,
                                          std::optional<std::string> pod_index_label) {
  TOLLGATE_ASSIGN_OR_RETURN(v1::PodSet pod_set,
                            PodSetFromTemplate(name, count, std::nullopt, pod_template, path));
  TOLLGATE_RETURN_IF_ERROR(
      ApplyTemplateTopology(pod_template, std::move(pod_index_label), path, &pod_set));
  return pod_set;
}

void MarkGroup(v1::Workload& wl) {
  (*wl.mutable_metadata()->mutable_annotations())[kIsGroupWorkloadAnnotation] = "true";
}

}  // namespace

absl::StatusOr<v1::Workload> PodWorkload(const Json& pod, absl::string_view queue) {
  v1::Workload wl = Base(KueueWorkloadName("Pod", "", Name(pod), Uid(pod)), Ns(pod), queue);
  wl.mutable_metadata()->set_uid(Uid(pod));
  SetOwner(wl, pod, "v1", "Pod");
  SetPriority(wl, pod, Find(pod, {"spec"}));
  CopyAdmissionGates(pod, wl);
  TOLLGATE_ASSIGN_OR_RETURN(
      *wl.mutable_spec()->add_pod_sets(),
      TopologyPodSet("main", 1, pod, "pod", std::string(kPodGroupPodIndexLabel)));
  return wl;
}

absl::StatusOr<v1::Workload> PodGroupWorkload(absl::string_view ns, const PodGroupInfo& group,
                                              const std::vector<PodRole>& roles,
                                              const Json& reference, absl::string_view queue) {
  v1::Workload wl =
      Base(group.prebuilt_workload.empty() ? group.name : group.prebuilt_workload, ns, queue);
  MarkGroup(wl);
  SetPriority(wl, reference, Find(reference, {"spec"}));
  CopyAdmissionGates(reference, wl);
  for (const PodRole& role : roles) {
    TOLLGATE_ASSIGN_OR_RETURN(*wl.mutable_spec()->add_pod_sets(),
                              TopologyPodSet(role.hash, role.count, role.representative,
                                             absl::StrCat("pod ", PodName(role.representative)),
                                             std::string(kPodGroupPodIndexLabel)));
  }
  return wl;
}

std::string StatefulSetWorkloadName(const Json& sts) {
  return KueueWorkloadName("StatefulSet", "apps", Name(sts), Uid(sts));
}

int32_t StatefulSetReplicas(const Json& sts) { return IntAt(sts, {"spec", "replicas"}, 1); }

absl::StatusOr<v1::Workload> StatefulSetWorkload(const Json& sts, absl::string_view queue) {
  v1::Workload wl = Base(StatefulSetWorkloadName(sts), Ns(sts), queue);
  MarkGroup(wl);
  (*wl.mutable_metadata()->mutable_labels())[std::string(kJobUidLabel)] = Uid(sts);
  SetOwner(wl, sts, "apps/v1", "StatefulSet");
  // Kueue's StatefulSet reconciler: the StatefulSet's own annotation, not its pod template's.
  CopyAdmissionGates(sts, wl);
  const Json* tmpl = Find(sts, {"spec", "template"});
  if (tmpl == nullptr || !tmpl->is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat("StatefulSet ", Ns(sts), "/", Name(sts), ": spec.template: Required value"));
  }
  SetPriority(wl, sts, Find(*tmpl, {"spec"}));
  TOLLGATE_ASSIGN_OR_RETURN(*wl.mutable_spec()->add_pod_sets(),
                            TopologyPodSet("main", StatefulSetReplicas(sts), *tmpl, "spec.template",
                                           std::string(kStatefulSetPodIndexLabel)));
  return wl;
}

std::string LeaderWorkerSetGroupName(const Json& lws, int32_t index) {
  return KueueWorkloadName("LeaderWorkerSet", kLwsGroup, absl::StrCat(Name(lws), "-", index),
                           Uid(lws));
}

int32_t LeaderWorkerSetReplicas(const Json& lws) { return IntAt(lws, {"spec", "replicas"}, 1); }

int32_t LeaderWorkerSetSize(const Json& lws) {
  return std::max<int32_t>(1, IntAt(lws, {"spec", "leaderWorkerTemplate", "size"}, 1));
}

absl::StatusOr<std::vector<v1::Workload>> LeaderWorkerSetWorkloads(const Json& lws,
                                                                   absl::string_view queue) {
  const int32_t size = LeaderWorkerSetSize(lws);
  const Json* leader = Find(lws, {"spec", "leaderWorkerTemplate", "leaderTemplate"});
  const bool has_leader = leader != nullptr && leader->is_object();
  const Json* worker = Find(lws, {"spec", "leaderWorkerTemplate", "workerTemplate"});
  if (worker == nullptr || !worker->is_object()) {
    return absl::InvalidArgumentError(absl::StrCat("LeaderWorkerSet ", Ns(lws), "/", Name(lws),
                                                   ": spec.leaderWorkerTemplate.workerTemplate: "
                                                   "Required value"));
  }
  std::vector<v1::PodSet> pod_sets;
  if (has_leader) {
    TOLLGATE_ASSIGN_OR_RETURN(
        v1::PodSet ps, TopologyPodSet("leader", 1, *leader,
                                      "spec.leaderWorkerTemplate.leaderTemplate", std::nullopt));
    pod_sets.push_back(std::move(ps));
  }
  TOLLGATE_ASSIGN_OR_RETURN(
      v1::PodSet ps, TopologyPodSet(has_leader ? "worker" : "main", has_leader ? size - 1 : size,
                                    *worker, "spec.leaderWorkerTemplate.workerTemplate",
                                    std::string(kLeaderWorkerSetWorkerIndexLabel)));
  pod_sets.push_back(std::move(ps));
  std::vector<v1::Workload> out;
  for (int32_t i = 0; i < LeaderWorkerSetReplicas(lws); ++i) {
    v1::Workload wl = Base(LeaderWorkerSetGroupName(lws, i), Ns(lws), queue);
    MarkGroup(wl);
    (*wl.mutable_metadata()->mutable_annotations())[kComponentIndexAnnotation] = absl::StrCat(i);
    (*wl.mutable_metadata()->mutable_labels())[std::string(kJobUidLabel)] = Uid(lws);
    SetOwner(wl, lws, "leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet");
    // Every group's workload carries the LeaderWorkerSet's own gates (Kueue's reconciler).
    CopyAdmissionGates(lws, wl);
    SetPriority(wl, lws, Find(has_leader ? *leader : *worker, {"spec"}));
    for (const v1::PodSet& set : pod_sets) *wl.mutable_spec()->add_pod_sets() = set;
    out.push_back(std::move(wl));
  }
  return out;
}

}  // namespace tollgate::manifest
