#pragma once

// The model of Kueue's Topology Aware Scheduling (TAS) beside types.h (which holds the Topology
// kind and a pod set's topology request): the nodes a topology is built from and the placement
// stored in an admission. docs/topology.md has the semantics and where they come from in Kueue.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "core/types.h"

namespace tollgate::core {

// Kueue's label for the node level; only the lowest level of a Topology may use it.
inline constexpr char kHostnameLabel[] = "kubernetes.io/hostname";

// A node of the inventory: what Kueue's TAS cache reads from a Kubernetes Node.
struct NodeSpec {
  std::string name;
  Labels labels;
  std::vector<Taint> taints;
  // Sorted by resource; `pods` is the number of pods the node takes.
  ResourceAmounts allocatable;
  bool ready = true;
  bool unschedulable = false;
  // On a node that is not ready or tainted NoSchedule/NoExecute: the workloads (namespace/name,
  // sorted) whose pods still run there; their placements on it fail once the pods end
  // (core/node_failure_rule.h).
  std::vector<std::string> running_workloads;
  // On a node that is not ready: since when (Kubernetes' Ready condition's lastTransitionTime).
  // ClusterState::UpsertNode fills it in when the feeder does not say: the time the node went
  // not ready, or the time it kept from before. Read only by Kueue's deprecated fixed delay
  // (core/node_failure_rule.h, kNodeFailureDelay).
  std::optional<absl::Time> not_ready_since;
  bool operator==(const NodeSpec&) const = default;
};

struct TopologyDomainAssignment {
  // The domain's values for TopologyAssignment::levels.
  std::vector<std::string> values;
  int32_t count = 0;
  bool operator==(const TopologyDomainAssignment&) const = default;
};

// Where a pod set's pods go: the levels the values name (only the hostname when it is the lowest
// level, else every level) and the domains with their pod counts, sorted by their level values.
struct TopologyAssignment {
  std::vector<std::string> levels;
  std::vector<TopologyDomainAssignment> domains;
  int32_t PodCount() const;
  bool operator==(const TopologyAssignment&) const = default;
};

// Kubernetes' Taint.ToString(): "key=value:effect", "key:effect" without a value.
std::string TaintString(const Taint& taint);

}  // namespace tollgate::core
