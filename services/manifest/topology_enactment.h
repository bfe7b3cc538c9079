#pragma once

// How a topology admission reaches the pods (Kueue's pkg/podset FromAssignment additions and
// pkg/controller/tas/topology_ungater.go): a placed pod set's template carries the
// kueue.x-k8s.io/topology scheduling gate, and each pod that appears is given the node labels of
// one domain of the workload's topology assignment before the gate comes off. Pods are assigned
// by their index label where the kind has one (Job completion index, JobSet job index, ...) and
// greedily otherwise, as Kueue assigns them. Pure; no I/O. docs/topology.md.

#include <map>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "services/manifest/job_kind.h"
#include "services/manifest/json_util.h"
#include "tollgate/v1/objects.pb.h"

namespace tollgate::manifest {

// The pod annotation naming the workload a pod belongs to (Kueue's WorkloadAnnotation).
inline constexpr absl::string_view kWorkloadAnnotation = "kueue.x-k8s.io/workload";
// Added to a pod's index before ranks are read (Kueue's PodIndexOffsetAnnotation).
inline constexpr absl::string_view kPodIndexOffsetAnnotation = "kueue.x-k8s.io/pod-index-offset";

// Kueue's additions to the pod set infos of an admitted workload (`infos` in the admission's
// order, as PodSetInfosFromAdmission returns them): every pod set gets the
// kueue.x-k8s.io/workload annotation; a pod set with a topology assignment gets the topology
// scheduling gate, and the unconstrained-topology annotation when its pod set asked for no
// level (an implied request).
void AddTopologyPodSetInfo(const v1::Workload& workload, std::vector<PodSetInfo>& infos);

// A pod placed by topology-aware scheduling: it has a topology annotation (required, preferred,
// slice or unconstrained), as Kueue's IsTAS reads it.
bool IsTopologyPod(const Json& pod);

// The pod's phase is Succeeded or Failed.
bool IsTerminatedPod(const Json& pod);

// A gated pod to release: its name and the node labels of its domain (added to its node
// selector before the gate is removed).
struct PodUngate {
  std::string pod;
  std::map<std::string, std::string> node_labels;
};

// Kueue's topology ungater for one workload: which gated pods of `pods` (the pods carrying
// the workload's annotation, in any order) get which domain. Nothing unless the workload is
// admitted with a topology assignment. Per placed pod set: its non-terminated pods (label
// kueue.x-k8s.io/podset); ranked by the pod set's pod index label (and sub-group index label,
// less the pod-index-offset annotation, with leader and workers of a pod-set group ranked one
// after the other) when every pod has a valid, distinct rank agreeing with the domains of the
// pods already released; otherwise greedily, domain by domain in the assignment's order, filling
// each up to its count less the released pods already in it. Pods whose domain is a node the
// workload recorded as unhealthy stay gated until the assignment is replaced. Sorted by pod name.
std::vector<PodUngate> PodsToUngate(const v1::Workload& workload, const std::vector<Json>& pods);

// An RFC 6902 patch for `pod` (as read) that fails unless its resourceVersion is unchanged,
// removes the topology gate and adds `node_labels` to its node selector.
Json UngatePatch(const Json& pod, const std::map<std::string, std::string>& node_labels);

}  // namespace tollgate::manifest
