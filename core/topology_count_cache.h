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
#include <string>
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
// order of their values). Each (slices, pods) pair present has a bucket of positions; a domain
// that moves to another pair is added to the new pair's bucket and left behind as a stale entry
// in the old one, dropped when it reaches the front or when stale entries outnumber live ones
// (so a bucket holds at most about twice its domains). The pairs present are a sorted array
// (few: a lookup is a binary search), each position remembers its bucket, and an emptied
// bucket's storage is reused. A bucket keeps its positions as an ascending run read from a
// moving front (built in level order, and a domain arriving after the run's last is appended:
// domains are mostly taken and filled in level order) plus a min-heap of the ones that arrived
// out of order; its smallest live position is the smaller of the two fronts. Building is one
// pass in level order; a move is a push onto a bucket and, when a pair appears or goes, an
// insertion into or removal from the sorted array. Memory: a key and a bucket index per domain
// of the level and at most ~2 entries per domain.
class TopologyLevelOrder {
 public:
  // (slices, pods) as one integer with the same order (signed values, biased).
  static uint64_t Key(int32_t slices, int32_t pods) {
    return (uint64_t{static_cast<uint32_t>(slices) ^ 0x80000000u} << 32) |
           uint64_t{static_cast<uint32_t>(pods) ^ 0x80000000u};
  }

  // `keys` by position in the level.
  explicit TopologyLevelOrder(const std::vector<uint64_t>& keys)
      : TopologyLevelOrder(keys.size(), [&keys](size_t pos) { return keys[pos]; }) {}
  // The key of each position from `key_of(position)`, for positions 0 to n - 1: one pass that
  // reads each key once and closes a stretch of equal keys where the key changes (a cache's
  // first order of a level holds every domain of it).
  template <typename KeyOf>
  TopologyLevelOrder(size_t n, const KeyOf& key_of)
      : key_of_(new uint64_t[n]), bucket_of_(new int32_t[n]) {
    uint64_t* keys = key_of_.get();
    size_t stretch = 0;
    for (size_t pos = 0; pos < n; ++pos) {
      keys[pos] = key_of(pos);
      if (keys[pos] != keys[stretch]) {
        AddStretch(stretch, pos);
        stretch = pos;
      }
    }
    if (n > stretch) AddStretch(stretch, n);
  }

  // The domain at `pos` now has `key`.
  void Move(int32_t pos, uint64_t key) {
    const uint64_t old = key_of_[pos];
    if (old == key) return;
    const int32_t from = bucket_of_[pos];
    key_of_[pos] = key;
    int32_t to_index;
    if (--buckets_[from].live == 0) {
      // The domain was its pair's last: when no other pair lies between the two, its bucket
      // takes the new pair in place (a domain moving alone), else the old pair goes.
      const auto at = LowerBound(keys_, old);
      const bool in_place = (at == keys_.begin() || std::prev(at)->first < key) &&
                            (std::next(at) == keys_.end() || key < std::next(at)->first);
      if (in_place) {
        at->first = key;
        Bucket& b = buckets_[from];
        b.run.clear();
        b.heap.clear();
        b.head = 0;
        to_index = from;
      } else {
        Release(from, at);
        to_index = BucketFor(key);
      }
    } else {
      to_index = BucketFor(key);
    }
    bucket_of_[pos] = to_index;
    Bucket& to = buckets_[to_index];
    ++to.live;
    if (to.head == to.run.size()) {
      to.run.clear();
      to.head = 0;
    } else if (to.head > 32 && to.head * 2 > to.run.size()) {
      // The front has moved past half the run: drop what it passed.
      to.run.erase(to.run.begin(), to.run.begin() + static_cast<long>(to.head));
      to.head = 0;
    }
    if (to.run.empty() || pos > to.run.back()) {
      to.run.push_back(pos);
    } else {
      to.heap.push_back(pos);
      std::push_heap(to.heap.begin(), to.heap.end(), std::greater<>());
    }
    if (to.run.size() - to.head + to.heap.size() > 2 * static_cast<size_t>(to.live) + 16) {
      Compact(key, to);
    }
  }

  // The first position in the order with a key of at least `from` (-1: none).
  int32_t FirstFrom(uint64_t from) {
    const auto it = LowerBound(keys_, from);
    if (it == keys_.end()) return -1;
    return Top(it->first, buckets_[it->second]);
  }
  // A position with the largest key (-1: an empty level).
  int32_t AnyLargest() {
    if (keys_.empty()) return -1;
    return Top(keys_.back().first, buckets_[keys_.back().second]);
  }

 private:
  // Positions [pos, end), all with key_of_[pos], join that key's bucket. Stretches come in
  // ascending order of positions, so every bucket's run stays ascending.
  void AddStretch(size_t pos, size_t end) {
    const int32_t b = BucketFor(key_of_[pos]);
    Bucket& bucket = buckets_[b];
    bucket.live += static_cast<int32_t>(end - pos);
    bucket.run.reserve(bucket.run.size() + (end - pos));
    for (size_t i = pos; i < end; ++i) bucket.run.push_back(static_cast<int32_t>(i));
    std::fill(bucket_of_.get() + pos, bucket_of_.get() + end, b);
  }

  struct Bucket {
    int32_t live = 0;
    // Ascending positions from `head`, and a min-heap (std::greater) of the ones that arrived
    // below the run's last; entries whose key moved on are stale.
    size_t head = 0;
    std::vector<int32_t> run;
    std::vector<int32_t> heap;
  };

  // Pairs compare by key alone (a bucket index is never searched for).
  using Pair = std::pair<uint64_t, int32_t>;
  struct KeyLess {
    bool operator()(const Pair& a, uint64_t k) const { return a.first < k; }
  };
  static std::vector<Pair>::iterator LowerBound(std::vector<Pair>& keys, uint64_t key) {
    return std::lower_bound(keys.begin(), keys.end(), key, KeyLess());
  }
  // The bucket of `key`, added (empty) when the pair is not present.
  int32_t BucketFor(uint64_t key) {
    const auto it = LowerBound(keys_, key);
    if (it != keys_.end() && it->first == key) return it->second;
    int32_t b;
    if (!free_.empty()) {
      b = free_.back();
      free_.pop_back();
    } else {
      b = static_cast<int32_t>(buckets_.size());
      buckets_.emplace_back();
    }
    keys_.insert(it, Pair(key, b));
    return b;
  }
  // Bucket `b`, of the pair at `at`, has no live domain left: the pair goes, the storage is kept
  // for reuse.
  void Release(int32_t b, std::vector<Pair>::iterator at) {
    Bucket& bucket = buckets_[b];
    keys_.erase(at);
    bucket.run.clear();
    bucket.heap.clear();
    bucket.head = 0;
    free_.push_back(b);
  }

  int32_t Top(uint64_t key, Bucket& b) {
    // A present pair has a live domain, so a live entry remains in the run or the heap.
    while (b.head < b.run.size() && key_of_[b.run[b.head]] != key) ++b.head;
    while (!b.heap.empty() && key_of_[b.heap.front()] != key) {
      std::pop_heap(b.heap.begin(), b.heap.end(), std::greater<>());
      b.heap.pop_back();
    }
    if (b.head == b.run.size()) return b.heap.front();
    if (b.heap.empty()) return b.run[b.head];
    return std::min(b.run[b.head], b.heap.front());
  }
  void Compact(uint64_t key, Bucket& b) {
    std::vector<int32_t>& r = b.run;
    r.erase(r.begin(), r.begin() + static_cast<long>(b.head));
    b.head = 0;
    r.insert(r.end(), b.heap.begin(), b.heap.end());
    b.heap.clear();
    r.erase(std::remove_if(r.begin(), r.end(), [&](int32_t pos) { return key_of_[pos] != key; }),
            r.end());
    // A domain that left and came back has two entries.
    std::sort(r.begin(), r.end());
    r.erase(std::unique(r.begin(), r.end()), r.end());
  }

  // By position: its key, and the bucket of its key. Arrays the size of the level, written first
  // by the constructor's pass (a vector would zero them before).
  std::unique_ptr<uint64_t[]> key_of_;
  std::unique_ptr<int32_t[]> bucket_of_;
  // The pairs present, ascending, with their buckets.
  std::vector<Pair> keys_;
  std::vector<Bucket> buckets_;
  // Buckets without a pair, for reuse.
  std::vector<int32_t> free_;
};

// A request's resources for the tight leaf counts: each a resource every leaf has with a
// positive amount (`ok` false otherwise: the general count handles the rest).
struct TightRequest {
  int n = 0;
  int r[4];
  int64_t amount[4];
  bool ok = false;
};

template <typename Request>
TightRequest TightRequestOf(const Request& req) {
  TightRequest t;
  const size_t n = req.amounts.size();
  if (n == 0 || n > 4) return t;
  for (size_t k = 0; k < n; ++k) {
    t.r[k] = req.amounts[k].first;
    t.amount[k] = req.amounts[k].second;
    if (t.r[k] < 0 || t.amount[k] <= 0) return t;
  }
  t.n = static_cast<int>(n);
  t.ok = true;
  return t;
}

// What the first phase of a placement depends on beside the leaves' capacity and usage. The
// preferred node affinity is not part of it: it changes no count, only the ranking of phase two
// (topology_affinity.cc), so placements with any preferred terms share a shape's counts.
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
    if (this->leader.has_value() != (leader != nullptr) ||
        !std::equal(amounts.begin(), amounts.end(), req.amounts.begin(), req.amounts.end())) {
      return false;
    }
    if (leader != nullptr && !std::equal(this->leader->begin(), this->leader->end(),
                                         leader->amounts.begin(), leader->amounts.end())) {
      return false;
    }
    return MatchesBesidesRequests(simulate_empty, p, workers, with_node_filters);
  }
  // Matches for the fields beside the resolved requests (a placement that knows them equal).
  bool MatchesBesidesRequests(bool simulate_empty, const Params& p,
                              const TopologyPlacementRequest& workers,
                              bool with_node_filters) const {
    if (this->simulate_empty != simulate_empty || slice_level != p.slice_level ||
        slice_size != p.slice_size) {
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
  // A shape without a leader: the per-pod request it was first found by, as given, and that
  // request resolved (its names view these strings). The same request finds the shape again
  // without being resolved.
  bool has_per_pod = false;
  std::vector<std::pair<std::string, int64_t>> per_pod;
  ResolvedRequest resolved;
  // Scratch of the placements of this shape: the chosen domains.
  std::vector<int> fit;
  // The shape's request for the tight leaf counts, once.
  bool has_tight = false;
  TightRequest tight;
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
  int64_t synced = -1;
  int64_t last_use = 0;
  // Scratch of the incremental update, by domain: a dirty domain's state before its children's
  // changes were added to it (shapes without a leader, where a parent is its children's sum).
  std::vector<DomainState> dirty_before;
};

}  // namespace tollgate::core
