#pragma once

// What a pod set asks of quota, per pod, when Kueue's Configuration changes it: its requests
// after resources.transformations, and under quotaCheckStrategy IgnoreUndeclared only the
// resources its ClusterQueue covers (docs/scheduling.md, "Resource transformations" and
// "Undeclared resources"). Without either option a pod set asks for its spec's requests as
// they are, and nothing here is called. Pure.

#include "core/scheduler_config.h"
#include "core/types.h"

namespace tollgate::core {

struct ClusterQueueRuntime;

// Kueue's applyResourceTransformations on one pod's requests (Kueue's scalars, sorted by
// resource; so is the result). A request without a transformation is kept; one with a
// transformation adds its outputs (`factor` x the request, x the request for `multiply_by`
// when the pod makes one) and is kept under Retain, dropped under Replace. Outputs of one name
// are summed exactly before anything is rounded, a negative sum counts as zero, and that total
// is added to a request of the same name the pod makes itself (which it never reduces).
ResourceAmounts TransformRequests(const ResourceAmounts& per_pod,
                                  const std::vector<ResourceTransformation>& transformations);

// Whether the configuration makes some pod set's quota requests differ from its spec's.
inline bool AdjustsQuotaRequests(const SchedulerConfig& config) {
  return !config.resource_transformations.empty() ||
         config.quota_check_strategy == QuotaCheckStrategy::kIgnoreUndeclared;
}

// The pod set's per-pod quota requests in `cq`: transformed, and under IgnoreUndeclared without
// the resources `cq` does not cover (Kueue's flavor assigner skips them: no flavor, no usage).
ResourceAmounts QuotaRequestsPerPod(const SchedulerConfig& config, const PodSetSpec& pod_set,
                                    const ClusterQueueRuntime& cq);

// The pod set's per-pod requests after the transformations alone (no ClusterQueue): what
// Kueue's status.resourceRequests shows, per pod.
ResourceAmounts TransformedRequestsPerPod(const SchedulerConfig& config, const PodSetSpec& pod_set);

}  // namespace tollgate::core
