#pragma once

// Kueue's Topology Aware Scheduling annotations on pod templates
// (kueue.x-k8s.io/podset-required-topology, ...) and a template's required node affinity, read
// onto a pod set's typed fields (docs/topology.md). Both manifest readers use it: the YAML of
// Workload manifests and the JSON of job kinds. Pure; no I/O.

#include <map>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "services/manifest/json_util.h"
#include "tollgate/v1/objects.pb.h"

namespace tollgate::manifest {

inline constexpr absl::string_view kRequiredTopologyAnnotation =
    "kueue.x-k8s.io/podset-required-topology";
inline constexpr absl::string_view kPreferredTopologyAnnotation =
    "kueue.x-k8s.io/podset-preferred-topology";
inline constexpr absl::string_view kUnconstrainedTopologyAnnotation =
    "kueue.x-k8s.io/podset-unconstrained-topology";
inline constexpr absl::string_view kSliceRequiredTopologyAnnotation =
    "kueue.x-k8s.io/podset-slice-required-topology";
inline constexpr absl::string_view kSliceSizeAnnotation = "kueue.x-k8s.io/podset-slice-size";
inline constexpr absl::string_view kSliceConstraintsAnnotation =
    "kueue.x-k8s.io/podset-slice-required-topology-constraints";
inline constexpr absl::string_view kPodSetGroupNameAnnotation = "kueue.x-k8s.io/podset-group-name";
// The scheduling gate tollgate-kube (as Kueue) holds a placed pod back with until its node
// selector names its domain.
inline constexpr absl::string_view kTopologySchedulingGate = "kueue.x-k8s.io/topology";

// Kueue's NewPodSetTopologyRequest(...).Build() with the checks of its ValidateTASPodSetRequest:
// the request the annotations ask for, carrying `pod_index_label` (the kind's pod index label),
// or nullopt when they ask for none (Kueue would keep a request holding only the label).
// `annotations_path` names the map in errors, e.g. "spec.template.metadata.annotations";
// INVALID_ARGUMENT names the annotation and the value.
absl::StatusOr<std::optional<v1::PodSetTopologyRequest>> TopologyRequestFromAnnotations(
    const std::map<std::string, std::string>& annotations,
    std::optional<std::string> pod_index_label, absl::string_view annotations_path);

// The JSON pod template's metadata.annotations and spec.affinity's node affinity onto `pod_set`
// (topology_request, required_node_affinity, preferred_node_affinity). `path` names the
// template.
absl::Status ApplyTemplateTopology(const Json& pod_template,
                                   std::optional<std::string> pod_index_label,
                                   absl::string_view path, v1::PodSet* pod_set);

}  // namespace tollgate::manifest
