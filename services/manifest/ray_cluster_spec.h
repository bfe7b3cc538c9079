#pragma once

// The pod sets of a KubeRay RayClusterSpec, shared by RayJob (spec.rayClusterSpec), RayCluster
// (spec) and RayService (spec.rayClusterConfig), as Kueue's raycluster.BuildPodSets computes
// them: "head" (1 pod, plus the Redis cleanup job's requests when GCS fault tolerance is on),
// then one pod set per worker group, named after the group, of replicas (default 1) x
// numOfHosts pods.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "services/manifest/job_kind.h"
#include "services/manifest/json_util.h"

namespace tollgate::manifest {

// `cluster` is the RayClusterSpec at JSON pointer `pointer` inside `obj` (for template paths);
// `annotations` are the owning object's (ray.io/ft-enabled). INVALID_ARGUMENT, naming the field,
// for what Kueue refuses: no head template, a worker group named "head" or repeating a name, a
// group without template, counts out of range, and in-tree autoscaling (Kueue allows it only
// for elastic workloads, which Tollgate does not have).
absl::StatusOr<std::vector<PodSetSource>> RayClusterPodSets(const Json& cluster,
                                                            absl::string_view pointer,
                                                            const Json& obj);

// The head's priorityClassName (KubeRay's pods take their class from their own template; Kueue
// falls back to the first pod set, the head).
std::string RayHeadPriorityClassName(const Json& cluster);

}  // namespace tollgate::manifest
