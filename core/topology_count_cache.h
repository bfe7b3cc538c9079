#pragma once

// TopologyFlavor's cache of the first phase of a placement, per request shape (the definitions
// behind the declarations in topology_flavor.h; read by topology_flavor.cc and
// topology_placement.cc only).

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/btree_set.h"
#include "absl/container/inlined_vector.h"
#include "core/topology_flavor.h"

namespace tollgate::core {

// Kueue's CountInWithLimitingResource over `capacity_of(resource)`: the smallest count over the
// requested resources, ties broken by resource name (the amounts are sorted by name, so the
// first smallest wins); `limiting`, when given, receives that amount's index. Here, not in a
// .cc, so that the leaf counts (every leaf of a cache's first build) inline it.
template <typename Request, typename CapacityOf>
inline int32_t SmallestPodCount(const Request& req, const CapacityOf& capacity_of, int* limiting) {
  int32_t result = 0;
  bool first = true;
  if (limiting != nullptr) *limiting = -1;
  for (size_t i = 0; i < req.amounts.size(); ++i) {
    const auto& [r, amount] = req.amounts[i];
    int32_t count;
    if (amount == 0) {
      count = INT32_MAX;
    } else {
      const int64_t cap = r < 0 ? 0 : capacity_of(r);
      count =
          static_cast<int32_t>(std::max<int64_t>(0, std::min<int64_t>(cap / amount, INT32_MAX)));
    }
    if (first || count < result) {
      result = count;
      if (limiting != nullptr) *limiting = static_cast<int>(i);
      first = false;
    }
  }
  return result;
}

// What the first phase of a placement depends on beside the leaves' capacity and usage.
struct TopologyFlavor::ShapeKey {
  // Inline, like the resolved request they come from: a key is built for every placement.
  absl::InlinedVector<std::pair<int, int64_t>, 4> amounts;
  std::optional<absl::InlinedVector<std::pair<int, int64_t>, 4>> leader;
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
