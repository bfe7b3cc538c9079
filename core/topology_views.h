#pragma once

// Read-only views of Topology Aware Scheduling's state for the API's node and topology calls
// (`tollgate get nodes`, `describe node`, `get topology`, the dashboard): free functions over a
// const ClusterState, like core/visibility.h.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "core/topology.h"
#include "core/types.h"

namespace tollgate::core {

class ClusterState;

// Pods of one pod set of a workload holding quota, on one node.
struct NodePlacementView {
  std::string workload;  // namespace/name
  std::string pod_set;
  std::string flavor;
  int32_t count = 0;
  ResourceAmounts per_pod;
};

struct NodeView {
  NodeSpec node;
  // Topology flavors whose trees hold the node (docs/topology.md).
  std::vector<std::string> flavors;
  int32_t reported_pods = 0;
  int32_t placed_pods = 0;
  // Allocatable minus reported pods (each with one `pods`) minus placements.
  ResourceAmounts free;
  // Filled by NodeDetails only.
  std::vector<std::string> reported;  // pod names
  std::vector<NodePlacementView> placements;
  // Workloads that recorded the node as unhealthy (namespace/name).
  std::vector<std::string> unhealthy_for;
};

// Every node, by name. A placement is on a node when its topology's lowest level is the
// hostname and the domain names the node's hostname label (a node without one: its name).
std::vector<NodeView> NodeViews(const ClusterState& state);
// One node with its reported pods and placements; nullopt when unknown.
std::optional<NodeView> NodeDetails(const ClusterState& state, absl::string_view name);

struct TopologyDomainView {
  int level = 0;
  std::vector<std::string> values;
  // Allocatable minus pods Tollgate does not place; what placements use; the difference.
  ResourceAmounts capacity;
  ResourceAmounts used;
  ResourceAmounts free;
  int32_t nodes = 0;
};

struct FlavorTopologyView {
  std::string flavor;
  std::string topology;
  std::vector<std::string> levels;
  // Parents before children, siblings by their values.
  std::vector<TopologyDomainView> domains;
  bool topology_missing = false;
};

// The topology flavors (all, or the one named), by flavor name.
std::vector<FlavorTopologyView> TopologyViews(const ClusterState& state, absl::string_view flavor);

}  // namespace tollgate::core
