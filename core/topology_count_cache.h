#pragma once

// TopologyFlavor's cache of the first phase of a placement, per request shape (the definitions
// behind the declarations in topology_flavor.h; read by topology_flavor.cc and
// topology_placement.cc only).

#include <algorithm>
#include <cstdint>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

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
  // Read once: an inlined vector's every access asks where its elements are.
  const auto* amounts = req.amounts.data();
  const size_t n = req.amounts.size();
  for (size_t i = 0; i < n; ++i) {
    const auto& [r, amount] = amounts[i];
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

// The domains of one level in Kueue's order without a leader, (slices, pods) ascending, then
// the domains' values: a domain with at least `slices` slices, the smallest such by that order,
// is a lookup instead of a pass over the level (TopologyFlavor::FindLevelWithFitDomains).
//
// Domains are named by their position in the level (TopologyFlavor::by_level_, which is in the
// order of their values). Each (slices, pods) pair present has a bucket, a min-heap of positions;
// a domain that moves to another pair is pushed onto the new pair's heap and left behind as a
// stale entry on the old one, dropped when it reaches the top or when stale entries outnumber
// live ones (so a bucket holds at most about twice its domains). Buckets without a domain are
// removed. Building is one pass in level order (an ascending array is a heap); a move costs two
// lookups among the few distinct pairs and a push, where a B-tree of the whole level took an
// erase and an insert. Memory: a key per domain of the level and at most ~2 entries per domain.
class TopologyLevelOrder {
 public:
  // (slices, pods) as one integer with the same order (signed values, biased).
  static uint64_t Key(int32_t slices, int32_t pods) {
    return (uint64_t{static_cast<uint32_t>(slices) ^ 0x80000000u} << 32) |
           uint64_t{static_cast<uint32_t>(pods) ^ 0x80000000u};
  }

  // `keys` by position in the level.
  explicit TopologyLevelOrder(std::vector<uint64_t> keys) : key_of_(std::move(keys)) {
    Bucket* last = nullptr;
    uint64_t last_key = 0;
    for (size_t pos = 0; pos < key_of_.size(); ++pos) {
      const uint64_t key = key_of_[pos];
      if (last == nullptr || key != last_key) {
        last = &buckets_[key];
        last_key = key;
      }
      ++last->live;
      last->heap.push_back(static_cast<int32_t>(pos));
    }
  }

  // The domain at `pos` now has `key`.
  void Move(int32_t pos, uint64_t key) {
    const uint64_t old = key_of_[pos];
    if (old == key) return;
    auto from = buckets_.find(old);
    if (--from->second.live == 0) buckets_.erase(from);
    key_of_[pos] = key;
    Bucket& to = buckets_[key];
    ++to.live;
    to.heap.push_back(pos);
    std::push_heap(to.heap.begin(), to.heap.end(), std::greater<>());
    if (to.heap.size() > 2 * static_cast<size_t>(to.live) + 16) Compact(key, to);
  }

  // The first position in the order with a key of at least `from` (-1: none).
  int32_t FirstFrom(uint64_t from) {
    auto it = buckets_.lower_bound(from);
    return it == buckets_.end() ? -1 : Top(it->first, it->second);
  }
  // A position with the largest key (-1: an empty level).
  int32_t AnyLargest() {
    if (buckets_.empty()) return -1;
    auto it = std::prev(buckets_.end());
    return Top(it->first, it->second);
  }

 private:
  struct Bucket {
    int32_t live = 0;
    // Min-heap of positions (std::greater); entries whose key moved on are stale.
    std::vector<int32_t> heap;
  };

  int32_t Top(uint64_t key, Bucket& b) {
    // A bucket in the map has a live domain, so a live entry remains.
    while (key_of_[b.heap.front()] != key) {
      std::pop_heap(b.heap.begin(), b.heap.end(), std::greater<>());
      b.heap.pop_back();
    }
    return b.heap.front();
  }
  void Compact(uint64_t key, Bucket& b) {
    std::vector<int32_t>& h = b.heap;
    h.erase(std::remove_if(h.begin(), h.end(), [&](int32_t pos) { return key_of_[pos] != key; }),
            h.end());
    // A domain that left and came back has two entries.
    std::sort(h.begin(), h.end());
    h.erase(std::unique(h.begin(), h.end()), h.end());
  }

  std::vector<uint64_t> key_of_;
  std::map<uint64_t, Bucket> buckets_;
};

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

  // The key of a placement's shape. The node filters are part of it only when the lowest level
  // is the hostname (`with_node_filters`): otherwise no node is filtered.
  static ShapeKey Of(const ResolvedRequest& req, const ResolvedRequest* leader, bool simulate_empty,
                     const Params& p, const TopologyPlacementRequest& workers,
                     bool with_node_filters) {
    ShapeKey key;
    key.amounts.assign(req.amounts.begin(), req.amounts.end());
    if (leader != nullptr) key.leader.emplace(leader->amounts.begin(), leader->amounts.end());
    key.simulate_empty = simulate_empty;
    key.slice_level = p.slice_level;
    key.slice_size = p.slice_size;
    key.slice_size_at_level = p.slice_size_at_level;
    if (with_node_filters) {
      key.tolerations.assign(workers.tolerations.begin(), workers.tolerations.end());
      if (workers.node_selector != nullptr) key.node_selector = *workers.node_selector;
      if (workers.required_node_affinity != nullptr) key.affinity = *workers.required_node_affinity;
    }
    return key;
  }

  // Whether this key equals Of(...) of the same arguments, without building that key (which
  // copies the request's filters): how a placement finds its cache. Reads every field Of sets.
  bool Matches(const ResolvedRequest& req, const ResolvedRequest* leader, bool simulate_empty,
               const Params& p, const TopologyPlacementRequest& workers,
               bool with_node_filters) const {
    if (this->simulate_empty != simulate_empty || slice_level != p.slice_level ||
        slice_size != p.slice_size || this->leader.has_value() != (leader != nullptr) ||
        !std::equal(amounts.begin(), amounts.end(), req.amounts.begin(), req.amounts.end())) {
      return false;
    }
    if (leader != nullptr && !std::equal(this->leader->begin(), this->leader->end(),
                                         leader->amounts.begin(), leader->amounts.end())) {
      return false;
    }
    if (slice_size_at_level != p.slice_size_at_level) return false;
    if (!with_node_filters) return true;
    const std::vector<NodeSelectorTerm>* required = workers.required_node_affinity;
    const bool same_selector = workers.node_selector == nullptr
                                   ? node_selector.empty()
                                   : node_selector == *workers.node_selector;
    return same_selector &&
           std::equal(tolerations.begin(), tolerations.end(), workers.tolerations.begin(),
                      workers.tolerations.end()) &&
           affinity.has_value() == (required != nullptr) &&
           (required == nullptr || *affinity == *required);
  }
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
  // domains in Kueue's order without a leader, kept with the state.
  std::vector<std::unique_ptr<TopologyLevelOrder>> order;
  // By domain: its position in its level (by_level_), filled with the first order.
  std::vector<int32_t> level_pos;
  int64_t synced = -1;
  int64_t last_use = 0;
  // Scratch of the incremental update, by domain: a dirty domain's state before its children's
  // changes were added to it (shapes without a leader, where a parent is its children's sum).
  std::vector<DomainState> dirty_before;
};

}  // namespace tollgate::core
