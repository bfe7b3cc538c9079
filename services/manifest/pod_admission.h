#pragma once

// What an admission puts on a pod of the gated kinds (plain Pods, pod groups and the pods of
// Deployments, StatefulSets and LeaderWorkerSets; docs/pod-integrations.md): Kueue's
// podset.PodSetInfo for one pod set, merged into the pod with podset.Merge's rules. Also the
// workload name Kueue gives an object's workload. Pure.
//
// The minimal interface these kinds need until the shared kinds table lands (branch kinds27:
// job_kind.h's KueueWorkloadName, pod_set_info.h's PodSetInfosFromAdmission and
// MergeIntoTemplate do the same for every kind); AdmissionPodLabels is what that table's
// PodSetInfosFromAdmission needs to add for cost attribution.

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "services/manifest/admission_translator.h"
#include "services/manifest/json_util.h"
#include "tollgate/v1/objects.pb.h"

namespace tollgate::manifest {

// Kueue's GetWorkloadNameForOwnerWithGVK: "<lower-case kind>-<name>" cut to 247 bytes, "-", and
// the first 5 hex digits of SHA-1 over kind, group, name and uid (newline separated).
std::string OwnerWorkloadName(absl::string_view kind, absl::string_view group,
                              absl::string_view name, absl::string_view uid);

// The labels every admitted pod of `wl` gets: Kueue's kueue.x-k8s.io/local-queue-name and
// kueue.x-k8s.io/cluster-queue-name (the latter only when the name is a valid label value, as
// Kueue's AssignQueueLabelsForPods), and the admission's cost-attribution labels.
std::map<std::string, std::string> AdmissionPodLabels(const v1::Workload& wl);

// One pod set's share of an admission.
struct PodAdmission {
  std::string pod_set;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> node_selector;
  // core/v1 Toleration objects, without duplicates.
  std::vector<Json> tolerations;
};

// The PodAdmission of pod set `pod_set` of the admitted `wl`: its flavors' node labels and
// tolerations (`flavors` must hold every assigned flavor: NOT_FOUND otherwise), the label
// kueue.x-k8s.io/podset and AdmissionPodLabels. NOT_FOUND when the admission has no such pod
// set.
absl::StatusOr<PodAdmission> PodAdmissionFor(const v1::Workload& wl, absl::string_view pod_set,
                                             const FlavorMap& flavors);

// Merges `admission` into a pod (or a PodTemplateSpec): labels and node selector are added, and
// a key the pod already has with another value is FAILED_PRECONDITION naming it and both values
// (Kueue's podset.Merge); tolerations are appended unless present.
absl::Status MergePodAdmission(Json& pod, const PodAdmission& admission);

}  // namespace tollgate::manifest
