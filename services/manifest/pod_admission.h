#pragma once

// What an admission puts on a pod of the gated kinds (plain Pods, pod groups and the pods of
// Deployments, StatefulSets and LeaderWorkerSets; docs/pod-integrations.md): Kueue's
// podset.PodSetInfo of the pod's pod set (pod_set_info.h, shared with every job kind: flavors,
// the pod-set label, the admission checks' podSetUpdates) plus the queue and cost-attribution
// labels Kueue puts on the pods of these kinds, merged into the pod with podset.Merge's rules.
// Pure.

#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "services/manifest/json_util.h"
#include "services/manifest/pod_set_info.h"
#include "tollgate/v1/objects.pb.h"

namespace tollgate::manifest {

// The labels every admitted pod of `wl` gets: Kueue's kueue.x-k8s.io/local-queue-name and
// kueue.x-k8s.io/cluster-queue-name (the latter only when the name is a valid label value, as
// Kueue's AssignQueueLabelsForPods), and the admission's cost-attribution labels.
std::map<std::string, std::string> AdmissionPodLabels(const v1::Workload& wl);

// The PodSetInfo of pod set `pod_set` of the admitted `wl` (PodSetInfosFromAdmission with the
// workload's PodSetUpdatesOf) with AdmissionPodLabels and Kueue's topology additions
// (AddTopologyPodSetInfo: the workload annotation, and the topology gate kept on a placed pod
// set) added. NOT_FOUND when the admission has no
// such pod set or `flavors` lacks an assigned flavor; a conflict between the checks' updates and
// these labels is a permanent FAILED_PRECONDITION (IsPermanentError).
absl::StatusOr<PodSetInfo> PodAdmissionFor(const v1::Workload& wl, absl::string_view pod_set,
                                           const FlavorMap& flavors);

// Merges `info` into a pod (MergeIntoTemplate: a Pod has a template's metadata and spec): a
// label, annotation or node-selector key the pod already has with another value is a permanent
// FAILED_PRECONDITION naming it and both values (Kueue's podset.Merge); tolerations are appended
// unless present.
absl::Status MergePodAdmission(Json& pod, const PodSetInfo& info);

}  // namespace tollgate::manifest
