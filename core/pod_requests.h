#pragma once

// A Kubernetes pod's effective resource requests: the one rule both the Kueue manifest parser
// (YAML) and the Kubernetes adapter (JSON) apply to a pod template, so a Job gets the same
// requests through `tollgate apply` and through `tollgate-kube`; and Kueue's check that no
// request is above its limit. Pure; see docs/kubernetes.md.

#include <map>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "core/quantity.h"
#include "core/types.h"

namespace tollgate::core {

// Resource name -> quantity, as in a core/v1 ResourceList.
using ResourceList = std::map<std::string, Quantity>;

// The `resources` of one container, as written.
struct ContainerResources {
  ResourceList requests;
  ResourceList limits;
  // An init container with `restartPolicy: Always`: a sidecar (KEP-753), which keeps running
  // beside the later init containers and the app containers. Ignored on app containers.
  bool restartable = false;
};

// The parts of a core/v1 PodSpec that decide what the pod asks of a queue.
struct PodResources {
  std::vector<ContainerResources> containers;
  // In spec order: a sidecar only runs beside the init containers after it.
  std::vector<ContainerResources> init_containers;
  // spec.overhead (usually filled in from the RuntimeClass).
  ResourceList overhead;
  // spec.resources, the pod-level resources of KEP-2837.
  ResourceList pod_requests;
  ResourceList pod_limits;
};

// Resources a pod-level `resources` stanza may set: cpu, memory and hugepages-*.
bool IsPodLevelResource(absl::string_view name);

// The pod's effective requests, as Kubernetes' scheduler (component-helpers PodRequests) and
// Kueue compute them:
//  - a request missing where a limit is given takes the limit (the API server's defaulting of
//    a Pod, which Kueue applies to Job templates), for containers and for the pod level;
//  - app containers are summed, and every sidecar adds to that sum;
//  - each regular init container needs its own request plus the sidecars started before it;
//    the largest of those is the init peak, and per resource the larger of the sum and the
//    peak wins;
//  - pod-level requests replace that result for the resources they name (cpu, memory,
//    hugepages-*; other names are ignored, as Kubernetes ignores them);
//  - overhead is added last.
// Entries whose amount is zero are kept, as Kubernetes and Kueue keep them: a zero request for a
// resource the ClusterQueue does not cover is then ignored by flavor assignment, and one it does
// cover is assigned a flavor like any other.
// Amounts are exact to the milli-unit (finer values round up, as Quantity::MilliValue does) and
// saturate instead of overflowing. A term that is never added to keeps its own spelling; a sum
// takes the format of its first non-zero term, as Quantity.Add does.
ResourceList EffectivePodRequests(const PodResources& pod);

// Kueue's ValidateResources: every init container, container and the pod level (in that order)
// whose request of some resource is above its limit of that resource, as a Kubernetes field
// error under `pod_spec_path` (`spec.podSets[0].template.spec`), e.g.
// `spec.podSets[0].template.spec.containers[1]: Invalid value: ["cpu","memory"]: requests must
// not exceed its limits`. Names are sorted; cpu compares in milli-units, everything else in
// whole units rounded up, as Kueue compares them. Empty when every request is within its limit.
// Kueue does not refuse such a workload: it waits, Misconfigured (InvalidResourcesMessage).
std::vector<std::string> RequestsAboveLimits(const PodResources& pod,
                                             absl::string_view pod_spec_path);

// Kueue's Workload webhook (validatePodSet): what refuses a workload outright, each as a
// Kubernetes field error under `pod_spec_path`: a request or limit named `pods` (the name Kueue
// keeps for its own pod count), in an init container, a container or at the pod level, and a
// negative request or limit there. In Kueue's order: init containers, containers, then the pod
// level; each container's requests before its limits, names sorted. Empty when there are none.
std::vector<std::string> RefusedResourceFields(const PodResources& pod,
                                               absl::string_view pod_spec_path);

// The message a workload whose pod sets carry resource errors waits with, Kueue's
// `resources validation failed: ERRORS` (one error as is, several as `[e1, e2]`, duplicates
// once); empty when there are none.
std::string InvalidResourcesMessage(const WorkloadSpec& spec);

}  // namespace tollgate::core
