#pragma once

// Validation of Topology objects and of the topology requests of a workload's pod sets, with the
// rules (and, where Kueue has one, the message) of Kueue's CRD schema and webhooks. Every error
// is InvalidArgument naming the field path and the value; nothing is changed by a caller that
// validates first.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "core/topology.h"
#include "core/types.h"

namespace tollgate::core {

// Kueue's Topology schema: 1 to 16 levels, each a valid label key, unique, and
// kubernetes.io/hostname only as the lowest level.
absl::Status ValidateTopology(const TopologySpec& spec);

// One pod set's request (`path` is the pod set's field path, e.g. "spec.podSets[0]"): at most
// one of required, preferred and unconstrained; valid level names; 1 to 3 slice layers with
// sizes >= 1, unique levels, each inner size dividing the one above and the outermost not above
// the pod count; a group without slices (a job's annotations also need required or preferred
// with it: services/manifest/topology_annotations.cc).
absl::Status ValidatePodSetTopologyRequest(const PodSetTopologyRequest& request, int32_t count,
                                           absl::string_view path);

// A pod set's required node affinity (`path` names the terms, e.g.
// "spec.podSets[0].requiredNodeAffinity"): label keys, operators In, NotIn, Exists,
// DoesNotExist, Gt, Lt, and the values each takes; matchFields name metadata.name with In or
// NotIn and one value, as Kubernetes' pod validation requires.
absl::Status ValidateRequiredNodeAffinity(const std::vector<NodeSelectorTerm>& terms,
                                          absl::string_view path);
// Kubernetes' checks of preferred node affinity terms (`path` names the list): weight 1..100,
// and each preference as a required term is checked.
absl::Status ValidatePreferredNodeAffinity(const std::vector<PreferredSchedulingTerm>& terms,
                                           absl::string_view path);

// Pod-set groups of a workload: exactly two pod sets per group, one of them with a single pod,
// with the same required or preferred level.
absl::Status ValidatePodSetGroups(const WorkloadSpec& spec);

}  // namespace tollgate::core
