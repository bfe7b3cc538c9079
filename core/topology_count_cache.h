#pragma once

// TopologyFlavor's cache of the first phase of a placement, per request shape (the definitions
// behind the declarations in topology_flavor.h; read by topology_flavor.cc and
// topology_placement.cc only).

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/btree_set.h"
#include "core/topology_flavor.h"

namespace tollgate::core {

// What the first phase of a placement depends on beside the leaves' capacity and usage.
struct TopologyFlavor::ShapeKey {
  std::vector<std::pair<int, int64_t>> amounts;
  std::optional<std::vector<std::pair<int, int64_t>>> leader;
  bool simulate_empty = false;
  int slice_level = 0;
  int32_t slice_size = 1;
  std::map<int, int32_t> slice_size_at_level;
  std::vector<Toleration> tolerations;
  Labels node_selector;
  std::optional<std::vector<NodeSelectorTerm>> affinity;
  bool operator==(const ShapeKey&) const = default;
};

// The first phase's result for one shape, current up to change `synced`.
struct TopologyFlavor::CountCache {
  ShapeKey key;
  std::vector<DomainState> state;  // by domain
  std::vector<char> feasible;      // by leaf: passes the node filters
  // By leaf: the index of the requested resource that leaves it no pod, or -1.
  std::vector<int> zero_reason;
  // By requested resource: the leaves it leaves without a pod.
  std::vector<int32_t> zero_counts;
  // The node filters' exclusions (the resources' are added from zero_counts).
  ExclusionStats filter_stats;
  // By level, built when a placement without a leader first picks a domain there: the level's
  // domains in OrderKey order, kept with the state.
  std::vector<std::unique_ptr<absl::btree_set<OrderKey>>> order;
  int64_t synced = -1;
  int64_t last_use = 0;
  // Scratch of the incremental update, by domain: a dirty domain's state before its children's
  // changes were added to it (shapes without a leader, where a parent is its children's sum).
  std::vector<DomainState> dirty_before;
};

}  // namespace tollgate::core
