// Kueue's topology placement (pkg/cache/scheduler/tas_flavor_snapshot.go), in two phases:
//  1. every leaf gets the number of pods (and, with a leader, pods beside the leader) that fit
//     on it; the counts roll up the tree, slices counted at the slice level;
//  2. the level to place at is chosen (the requested one; preferred climbs while nothing fits),
//     the domains there are picked (BestFit: the most free slices first with the tightest last
//     domain; unconstrained: the least free first), then each level below is narrowed down to
//     the fewest domains, and the leaves' counts become the assignment.
// The orderings and tie-breaks are Kueue's, so the same domains and counts come out; see
// docs/topology.md.

#include <algorithm>
#include <climits>
#include <map>
#include <tuple>

#include "absl/base/attributes.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/node_matching.h"
#include "core/saturating.h"
#include "core/topology_count_cache.h"
#include "core/topology_flavor.h"

namespace tollgate::core {
namespace {

// Go's %q for the names and values Kueue quotes (labels, taints, resources, topology names).
std::string Quoted(absl::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  out += '"';
  return out;
}

bool IsSliceOnly(const PodSetTopologyRequest* r) {
  return r != nullptr && !r->required.has_value() && !r->preferred.has_value() &&
         !r->slices.empty();
}

bool BelongsTo(const std::string& id, absl::string_view target) {
  if (target.empty()) return true;
  return id == target ||
         (id.size() > target.size() && absl::string_view(id).substr(0, target.size()) == target &&
          id[target.size()] == ',');
}

// A leaf's pods without a leader (LeafState's common case, and every leaf of a cache's first
// build): each requested resource read once, straight from the leaf's capacity rows (`used`
// null when simulating an empty tree, `assumed` null without assumed usage).
template <typename Request>
ABSL_ATTRIBUTE_ALWAYS_INLINE inline int32_t PodsOnLeaf(const int64_t* free, const int64_t* used,
                                                       const int64_t* assumed, const Request& req,
                                                       int* zero_reason) {
  auto capacity = [free, used, assumed](int r) {
    int64_t c = free[r];
    if (used != nullptr) c = SatSub(c, used[r]);
    if (assumed != nullptr) c = SatSub(c, assumed[r]);
    return c;
  };
  int limiting = -1;
  const int32_t pods = SmallestPodCount(req, capacity, &limiting);
  *zero_reason = pods == 0 && limiting >= 0 ? limiting : -1;
  return pods;
}

// One leaf's smallest count over N resources of a TightRequest, unclamped: positive, it is
// SmallestPodCount's result (the smallest of the clamped counts is the clamped smallest count);
// otherwise the leaf has no room for a pod and the general count gives its limiting resource.
template <int N>
ABSL_ATTRIBUTE_ALWAYS_INLINE inline int64_t TightPods(const int64_t* free, const int64_t* used,
                                                      const TightRequest& t, bool simulate_empty) {
  int64_t smallest = INT32_MAX;
  // Unrolled for a known count (the first build's pass over every leaf).
#pragma GCC unroll 4
  for (int k = 0; k < (N > 0 ? N : t.n); ++k) {
    const int r = t.r[k];
    const int64_t cap = simulate_empty ? free[r] : SatSub(free[r], used[r]);
    const int64_t count = t.amount[k] == 1 ? cap : cap / t.amount[k];
    smallest = std::min(smallest, count);
  }
  return smallest;
}

// PodsOnLeaf for a TightRequest (without assumed usage). A leaf without room for a pod names
// the first resource that leaves it none, as SmallestPodCount's limiting resource (the smallest
// count, 0, first reached there).
template <int N>
ABSL_ATTRIBUTE_ALWAYS_INLINE inline int32_t TightPodsOnLeaf(const int64_t* free,
                                                            const int64_t* used,
                                                            const TightRequest& t,
                                                            bool simulate_empty, int* zero_reason) {
  const int64_t smallest = TightPods<N>(free, used, t, simulate_empty);
  *zero_reason = -1;
  if (smallest > 0) return static_cast<int32_t>(smallest);
  for (int k = 0; k < t.n; ++k) {
    const int r = t.r[k];
    const int64_t cap = simulate_empty ? free[r] : SatSub(free[r], used[r]);
    if (cap / t.amount[k] <= 0) {
      *zero_reason = k;
      break;
    }
  }
  return 0;
}

// The tight count of every leaf, into the leaves' states (zeroed before: an infeasible leaf's
// is left so; slices are counted only at the slice level, 0 elsewhere). Not inlined, and the
// request copied into a local: inside SyncCache the loop's invariants were spilled and reloaded
// per leaf (the states' int32 stores may alias the request's ints).
template <int N, bool kSimulateEmpty, typename LeafT, typename Rows, typename State>
ABSL_ATTRIBUTE_NOINLINE void TightLeafLoop(const std::vector<LeafT>& leaves, const Rows& rows,
                                           const char* feasible, const TightRequest& request,
                                           bool leaves_at_slice_level, int32_t slice_size,
                                           State* state, int* zero_reason, int32_t* zero_counts) {
  const TightRequest t = request;
  const LeafT* leaf = leaves.data();
  const size_t n = leaves.size();
  const int64_t* row = rows.values.data();
  const size_t resources = rows.resources;
  for (size_t l = 0; l < n; ++l, row += 2 * resources) {
    if (!feasible[l]) continue;
    int reason = -1;
    const int32_t pods = TightPodsOnLeaf<N>(row, row + resources, t, kSimulateEmpty, &reason);
    State& s = state[leaf[l].domain];
    // `slice_size > 1`, not `== 1`: the compiler folds `== 1 ? pods : pods / slice_size` into a
    // division on every leaf.
    const int32_t slices = !leaves_at_slice_level ? 0 : (slice_size > 1 ? pods / slice_size : pods);
    s.pod_count = pods;
    s.pod_count_with_leader = pods;
    s.slice_count = slices;
    s.slice_count_with_leader = slices;
    zero_reason[l] = reason;
    if (reason >= 0) ++zero_counts[reason];
  }
}

template <int N, typename LeafT, typename Rows, typename State>
void TightLeafLoopOf(const std::vector<LeafT>& leaves, const Rows& rows, const char* feasible,
                     const TightRequest& t, bool simulate_empty, bool leaves_at_slice_level,
                     int32_t slice_size, State* state, int* zero_reason, int32_t* zero_counts) {
  if (simulate_empty) {
    TightLeafLoop<N, true>(leaves, rows, feasible, t, leaves_at_slice_level, slice_size, state,
                           zero_reason, zero_counts);
  } else {
    TightLeafLoop<N, false>(leaves, rows, feasible, t, leaves_at_slice_level, slice_size, state,
                            zero_reason, zero_counts);
  }
}

// The pods on every feasible leaf without a leader or assumed usage, into the leaves' states:
// the cache's first build, where this pass over every leaf is most of the cost. The loop is
// unrolled for the request's few resources.
template <typename LeafT, typename Rows, typename State>
void FirstLeafPass(const std::vector<LeafT>& leaves, const Rows& rows, const char* feasible,
                   const TightRequest& t, bool simulate_empty, bool leaves_at_slice_level,
                   int32_t slice_size, State* state, int* zero_reason, int32_t* zero_counts) {
  switch (t.n) {
    case 1:
      TightLeafLoopOf<1>(leaves, rows, feasible, t, simulate_empty, leaves_at_slice_level,
                         slice_size, state, zero_reason, zero_counts);
      break;
    case 2:
      TightLeafLoopOf<2>(leaves, rows, feasible, t, simulate_empty, leaves_at_slice_level,
                         slice_size, state, zero_reason, zero_counts);
      break;
    case 3:
      TightLeafLoopOf<3>(leaves, rows, feasible, t, simulate_empty, leaves_at_slice_level,
                         slice_size, state, zero_reason, zero_counts);
      break;
    default:
      TightLeafLoopOf<4>(leaves, rows, feasible, t, simulate_empty, leaves_at_slice_level,
                         slice_size, state, zero_reason, zero_counts);
      break;
  }
}

}  // namespace

bool TopologyFlavor::ExclusionStats::HasExclusions() const {
  return node_selector > 0 || affinity > 0 || topology_domain > 0 || !taints.empty() ||
         !resources.empty();
}

std::string TopologyFlavor::ExclusionStats::Reasons() const {
  std::vector<std::string> reasons;
  if (node_selector > 0) reasons.push_back(absl::StrCat("nodeSelector: ", node_selector));
  if (affinity > 0) reasons.push_back(absl::StrCat("affinity: ", affinity));
  if (topology_domain > 0) reasons.push_back(absl::StrCat("topologyDomain: ", topology_domain));
  for (const auto& [taint, n] : taints)
    reasons.push_back(absl::StrCat("taint ", Quoted(taint), ": ", n));
  for (const auto& [resource, n] : resources) {
    reasons.push_back(absl::StrCat("resource ", Quoted(resource), ": ", n));
  }
  std::sort(reasons.begin(), reasons.end());
  return absl::StrJoin(reasons, ", ");
}

int TopologyFlavor::LevelIndex(absl::string_view level) const {
  // Usually a view of one of these very names (LevelKey's levels_.back()).
  for (size_t i = 0; i < levels_.size(); ++i) {
    if (levels_[i].data() == level.data() && levels_[i].size() == level.size()) {
      return static_cast<int>(i);
    }
  }
  for (size_t i = 0; i < levels_.size(); ++i) {
    const std::string& name = levels_[i];
    if (name.size() == level.size() && name == level) return static_cast<int>(i);
  }
  return -1;
}

const std::string* TopologyFlavor::LevelKey(const TopologyPlacementRequest& r) const {
  const PodSetTopologyRequest* t = r.request;
  if (t != nullptr) {
    if (t->required.has_value()) return &*t->required;
    if (t->preferred.has_value()) return &*t->preferred;
    if (IsSliceOnly(t)) return &levels_.front();
    if (t->unconstrained) return &levels_.back();
  }
  if (r.implied) return &levels_.back();
  return nullptr;
}

const TopologyFlavor::ExclusionStats& TopologyFlavor::StatsOf(Params& p) const {
  if (p.stats_cache != nullptr) {
    const CountCache& c = *p.stats_cache;
    p.stats = c.filter_stats;
    for (size_t i = 0; i < c.zero_counts.size(); ++i) {
      if (c.zero_counts[i] > 0)
        p.stats.resources[std::string(p.stats_req->names[i])] += c.zero_counts[i];
    }
    p.stats_cache = nullptr;
  }
  return p.stats;
}

bool TopologyFlavor::HasLevels(const PodSetTopologyRequest* request) const {
  if (levels_.empty()) return false;
  if (request == nullptr) return true;
  if (request->required.has_value() && LevelIndex(*request->required) < 0) return false;
  if (request->preferred.has_value() && LevelIndex(*request->preferred) < 0) return false;
  for (const SliceConstraint& s : request->slices) {
    if (LevelIndex(s.level) < 0) return false;
  }
  return true;
}

TopologyPlacementResult TopologyFlavor::FindAssignments(
    absl::Span<const TopologyPlacementRequest> requests, bool simulate_empty, bool names) {
  TopologyPlacementResult result;
  result.assignments.resize(requests.size());
  result.leaves.resize(requests.size());
  if (requests.size() == 1) {
    // One pod set (the usual case) is one group, placed alone: no groups to build.
    PlacedGroup placed;
    std::string failure = Place(requests[0], nullptr, simulate_empty, "", &placed, names);
    if (!failure.empty()) {
      result.failure = std::move(failure);
      result.failed_pod_set = std::string(requests[0].pod_set);
      return result;
    }
    result.assignments[0] = std::move(placed.workers);
    result.leaves[0] = std::move(placed.workers_leaves);
    return result;
  }
  // Groups in the order of their first pod set; a pod set without a group is a group alone.
  std::vector<std::pair<std::string, std::vector<size_t>>> groups;
  for (size_t i = 0; i < requests.size(); ++i) {
    const PodSetTopologyRequest* t = requests[i].request;
    std::string key = t != nullptr && t->pod_set_group.has_value() ? "g:" + *t->pod_set_group
                                                                   : absl::StrCat("i:", i);
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&key](const auto& g) { return g.first == key; });
    if (it == groups.end()) {
      groups.emplace_back(std::move(key), std::vector<size_t>{i});
    } else {
      it->second.push_back(i);
    }
  }
  // Each group sees the ones placed before it (Leaf::assumed) until the placement ends.
  struct ClearAssumedAtEnd {
    TopologyFlavor* self;
    ~ClearAssumedAtEnd() { self->ClearAssumed(); }
  } clear_assumed{this};
  for (size_t g = 0; g < groups.size(); ++g) {
    const std::vector<size_t>& members = groups[g].second;
    // Kueue's findLeaderAndWorkers: of two pod sets, the one with fewer pods leads (the first
    // on a tie is the worker set).
    size_t workers = members[0];
    std::optional<size_t> leader;
    if (members.size() > 1) {
      leader = members[1];
      if (requests[*leader].count > requests[workers].count) std::swap(*leader, workers);
    }
    PlacedGroup placed;
    std::string failure =
        Place(requests[workers], leader.has_value() ? &requests[*leader] : nullptr, simulate_empty,
              "", &placed, names);
    if (!failure.empty()) {
      result.failure = std::move(failure);
      result.failed_pod_set = std::string(requests[workers].pod_set);
      return result;
    }
    result.assignments[workers] = std::move(placed.workers);
    result.leaves[workers] = std::move(placed.workers_leaves);
    if (leader.has_value()) {
      result.assignments[*leader] = std::move(placed.leader);
      result.leaves[*leader] = std::move(placed.leader_leaves);
    }
    // The last group has no one after it to see its usage.
    if (g + 1 == groups.size()) break;
    for (size_t m : members) {
      if (result.leaves[m] == nullptr) continue;
      if (names) {
        AddAssumed(*result.assignments[m], requests[m].per_pod);
      } else {
        AddAssumed(AssignmentOf(*result.leaves[m]), requests[m].per_pod);
      }
    }
  }
  return result;
}

std::string TopologyFlavor::BuildSliceSizeAtLevel(const TopologyPlacementRequest& r,
                                                  Params& p) const {
  if (r.request == nullptr || r.request->slices.size() < 2) return {};
  int32_t prev_size = p.slice_size;
  int prev_level = p.slice_level;
  for (size_t i = 1; i < r.request->slices.size(); ++i) {
    const SliceConstraint& layer = r.request->slices[i];
    const int level = LevelIndex(layer.level);
    if (level < 0) {
      return absl::StrCat("no requested topology level for additional slice layer: ", layer.level);
    }
    if (level <= prev_level) {
      return absl::StrCat("additional slice layer topology ", layer.level,
                          " must be at a lower level than ", levels_[prev_level]);
    }
    if (layer.size <= 0 || prev_size % layer.size != 0) {
      return absl::StrCat("additional slice layer size ", layer.size,
                          " must evenly divide parent layer size ", prev_size);
    }
    for (int l = prev_level + 1; l <= level; ++l) p.slice_size_at_level[l] = layer.size;
    prev_size = layer.size;
    prev_level = level;
  }
  p.multi_layer = r.request->slices;
  return {};
}

bool TopologyFlavor::NodeFeasible(int leaf, const TopologyPlacementRequest& r,
                                  ExclusionStats& stats) const {
  ++stats.total_nodes;
  if (leaf_nodes_.empty()) return true;
  const NodeSpec& node = leaf_nodes_[leaf];
  // Untolerated NoSchedule/NoExecute taints, by the pod's tolerations and the flavor's.
  for (const Taint& taint : node.taints) {
    if (taint.effect != "NoSchedule" && taint.effect != "NoExecute") continue;
    auto tolerated = [&taint](const Toleration& t) { return ToleratesWhenScheduling(t, taint); };
    if (std::any_of(r.tolerations.begin(), r.tolerations.end(), tolerated)) continue;
    if (std::any_of(flavor_tolerations_.begin(), flavor_tolerations_.end(), tolerated)) continue;
    ++stats.taints[TaintString(taint)];
    return false;
  }
  if (r.node_selector != nullptr) {
    for (const auto& [key, value] : *r.node_selector) {
      auto it = node.labels.find(key);
      if (it == node.labels.end() || it->second != value) {
        ++stats.node_selector;
        return false;
      }
    }
  }
  if (r.required_node_affinity != nullptr &&
      !NodeAffinityMatches(*r.required_node_affinity, node.labels, node.name)) {
    ++stats.affinity;
    return false;
  }
  return true;
}

TopologyFlavor::DomainState TopologyFlavor::LeafState(int leaf_index, const LeafInputs& in,
                                                      int slice_level, int32_t slice_size,
                                                      int* zero_reason) {
  const Leaf& leaf = leaves_[leaf_index];
  const int64_t* free = capacity_.free(leaf_index);
  const int64_t* used = capacity_.used(leaf_index);
  const std::vector<int64_t>& assumed = assumed_[leaf_index];
  if (in.leader == nullptr) {
    DomainState s;
    s.pod_count = PodsOnLeaf(free, in.simulate_empty ? nullptr : used,
                             assumed.empty() ? nullptr : assumed.data(), *in.req, zero_reason);
    s.pod_count_with_leader = s.pod_count;
    if (domains_[leaf.domain].level == slice_level) {
      s.slice_count = s.pod_count / slice_size;
      s.slice_count_with_leader = s.slice_count;
    }
    return s;
  }
  // Only the requested resources are read: fill just those of the scratch capacity.
  for (int r : in.needed) {
    int64_t c = free[r];
    if (!in.simulate_empty) c = SatSub(c, used[r]);
    if (!assumed.empty()) c = SatSub(c, assumed[r]);
    remaining_[r] = c;
  }
  DomainState s;
  int limiting = -1;
  const int64_t* remaining = remaining_.data();
  auto capacity = [remaining](int r) { return remaining[r]; };
  s.pod_count = SmallestPodCount(*in.req, capacity, &limiting);
  *zero_reason = s.pod_count == 0 && limiting >= 0 ? limiting : -1;
  if (in.leader != nullptr) {
    int ignored = -1;
    if (SmallestPodCount(*in.leader, capacity, &ignored) > 0) {
      s.leader_count = 1;
      for (const auto& [r, amount] : in.leader->amounts) {
        if (r >= 0) remaining_[r] -= amount;
      }
    }
    s.pod_count_with_leader = SmallestPodCount(*in.req, capacity, &ignored);
  } else {
    s.pod_count_with_leader = s.pod_count;
  }
  if (domains_[leaf.domain].level == slice_level) {
    s.slice_count = s.pod_count / slice_size;
    s.slice_count_with_leader = s.pod_count_with_leader / slice_size;
  }
  return s;
}

void TopologyFlavor::CountFromScratch(const TopologyPlacementRequest& workers, const LeafInputs& in,
                                      absl::string_view required_domain, Params& p) {
  std::fill(state_.begin(), state_.end(), DomainState{});
  for (size_t l = 0; l < leaves_.size(); ++l) {
    const Leaf& leaf = leaves_[l];
    if (lowest_is_hostname_) {
      if (!NodeFeasible(static_cast<int>(l), workers, p.stats)) continue;
    } else {
      ++p.stats.total_nodes;
    }
    if (!required_domain.empty() &&
        !BelongsTo(DomainId(domains_[leaf.domain].values), required_domain)) {
      ++p.stats.topology_domain;
      continue;
    }
    int zero_reason = -1;
    state_[leaf.domain] =
        LeafState(static_cast<int>(l), in, p.slice_level, p.slice_size, &zero_reason);
    if (zero_reason >= 0) ++p.stats.resources[std::string(in.req->names[zero_reason])];
  }
  for (int root : roots_) FillHelper(root, p, p.leader_count > 0);
}

TopologyFlavor::CountCache& TopologyFlavor::CacheFor(ShapeKey& key) {
  constexpr size_t kMaxShapes = 8;
  ++cache_uses_;
  for (const std::unique_ptr<CountCache>& c : caches_) {
    if (c->key == key) {
      c->last_use = cache_uses_;
      return *c;
    }
  }
  CountCache* slot;
  if (caches_.size() < kMaxShapes) {
    caches_.push_back(std::make_unique<CountCache>());
    slot = caches_.back().get();
  } else {
    slot = std::min_element(caches_.begin(), caches_.end(), [](const auto& a, const auto& b) {
             return a->last_use < b->last_use;
           })->get();
  }
  slot->key = std::move(key);
  slot->has_per_pod = false;
  slot->has_tight = false;
  slot->feasible.clear();
  slot->synced = -1;
  slot->last_use = cache_uses_;
  return *slot;
}

void TopologyFlavor::SyncCache(CountCache& c, const TopologyPlacementRequest& workers,
                               const LeafInputs& in, const Params& p) {
  const int64_t head = changes_base_ + static_cast<int64_t>(changes_.size());
  const bool leader_required = p.leader_count > 0;
  const int last = static_cast<int>(levels_.size()) - 1;
  // Without a leader or assumed usage (the common case) a leaf is counted by the tight count.
  if (!c.has_tight) {
    // The shape's request (the same for every placement of it).
    c.tight = TightRequestOf(*in.req);
    c.has_tight = true;
  }
  TightRequest tight;
  if (in.leader == nullptr && assumed_leaves_.empty()) tight = c.tight;
  if (c.feasible.empty()) {
    // The node filters depend on the shape and the nodes only (a node change rebuilds the
    // flavor): once per cache.
    c.filter_stats = ExclusionStats{};
    c.feasible.assign(leaves_.size(), 1);
    // Without a node selector or affinity only a node's taints can exclude it: an untainted node
    // passes without NodeFeasible's checks.
    const bool only_taints = (workers.node_selector == nullptr || workers.node_selector->empty()) &&
                             workers.required_node_affinity == nullptr;
    if (!lowest_is_hostname_) {
      // No node to filter: every leaf counts as a node that passes.
      c.filter_stats.total_nodes += static_cast<int>(leaves_.size());
    } else if (only_taints) {
      // Only the tainted leaves need NodeFeasible; every other leaf counts as a node that passes.
      for (int l : tainted_leaves_) {
        c.feasible[l] = NodeFeasible(l, workers, c.filter_stats) ? 1 : 0;
      }
      c.filter_stats.total_nodes += static_cast<int>(leaves_.size() - tainted_leaves_.size());
    } else {
      for (size_t l = 0; l < leaves_.size(); ++l) {
        c.feasible[l] = NodeFeasible(static_cast<int>(l), workers, c.filter_stats) ? 1 : 0;
      }
    }
    c.synced = -1;
  }
  if (c.synced < changes_base_) {
    c.order.clear();
    c.order.resize(levels_.size());
    state_.assign(domains_.size(), DomainState{});
    c.zero_reason.assign(leaves_.size(), -1);
    c.zero_counts.assign(in.req->amounts.size(), 0);
    if (tight.ok) {
      FirstLeafPass(leaves_, capacity_, c.feasible.data(), tight, in.simulate_empty,
                    last == p.slice_level, p.slice_size, state_.data(), c.zero_reason.data(),
                    c.zero_counts.data());
    } else if (in.leader == nullptr) {
      // LeafState without a leader, inlined: this pass is most of a cache's first build.
      const bool leaves_at_slice_level = last == p.slice_level;
      DomainState* state = state_.data();
      for (size_t l = 0; l < leaves_.size(); ++l) {
        if (!c.feasible[l]) continue;
        const int leaf = static_cast<int>(l);
        int zero_reason = -1;
        DomainState& s = state[leaves_[l].domain];
        s.pod_count =
            PodsOnLeaf(capacity_.free(leaf), in.simulate_empty ? nullptr : capacity_.used(leaf),
                       assumed_[l].empty() ? nullptr : assumed_[l].data(), *in.req, &zero_reason);
        s.pod_count_with_leader = s.pod_count;
        if (leaves_at_slice_level) {
          s.slice_count = s.pod_count / p.slice_size;
          s.slice_count_with_leader = s.slice_count;
        }
        c.zero_reason[l] = zero_reason;
        if (zero_reason >= 0) ++c.zero_counts[zero_reason];
      }
    } else {
      for (size_t l = 0; l < leaves_.size(); ++l) {
        if (!c.feasible[l]) continue;
        int zero_reason = -1;
        state_[leaves_[l].domain] =
            LeafState(static_cast<int>(l), in, p.slice_level, p.slice_size, &zero_reason);
        c.zero_reason[l] = zero_reason;
        if (zero_reason >= 0) ++c.zero_counts[zero_reason];
      }
    }
    // Without a leader (and an inner slice layer) a domain's counts are its children's sums, its
    // slices recounted at the slice level: what FillDomain computes then, without its minimums.
    const bool summable = !leader_required && in.leader == nullptr && p.slice_size_at_level.empty();
    for (int level = last - 1; level >= 0; --level) {
      if (!summable) {
        for (int d : by_level_[level]) FillDomain(d, p, leader_required);
        continue;
      }
      const bool at_slice_level = level == p.slice_level;
      for (int d : by_level_[level]) {
        int32_t pods = 0;
        int32_t slices = 0;
        for (int child : domains_[d].children) {
          pods += state_[child].pod_count;
          slices += state_[child].slice_count;
        }
        if (at_slice_level) slices = pods / p.slice_size;
        DomainState& s = state_[d];
        s.pod_count = pods;
        s.pod_count_with_leader = pods;
        s.slice_count = slices;
        s.slice_count_with_leader = slices;
        s.leader_count = 0;
      }
    }
    c.synced = head;
    return;
  }
  // Only the changed leaves and, while their state changes, their ancestors.
  // Without a leader (and an inner slice layer) a domain's counts are its children's sums (its
  // slices recounted at the slice level): a parent takes its children's changes instead of
  // summing all its children again.
  const bool summable = !leader_required && in.leader == nullptr && p.slice_size_at_level.empty();
  if (summable && tight.ok) {
    // Each changed leaf's change carried up its path while it changes anything: the same sums
    // as the pass by level below (a leaf changed twice is counted again and changes nothing).
    for (size_t i = static_cast<size_t>(c.synced - changes_base_); i < changes_.size(); ++i) {
      const int l = changes_[i];
      if (!c.feasible[l]) continue;
      int d = leaves_[l].domain;
      DomainState before = state_[d];
      int zero_reason = -1;
      const int32_t pods = TightPodsOnLeaf<0>(capacity_.free(l), capacity_.used(l), tight,
                                              in.simulate_empty, &zero_reason);
      DomainState& leaf_state = state_[d];
      leaf_state.pod_count = pods;
      leaf_state.pod_count_with_leader = pods;
      int level = domains_[d].level;
      if (level == p.slice_level) {
        leaf_state.slice_count = pods / p.slice_size;
        leaf_state.slice_count_with_leader = leaf_state.slice_count;
      }
      if (zero_reason != c.zero_reason[l]) {
        if (c.zero_reason[l] >= 0) --c.zero_counts[c.zero_reason[l]];
        if (zero_reason >= 0) ++c.zero_counts[zero_reason];
        c.zero_reason[l] = zero_reason;
      }
      DomainState after = leaf_state;
      while (!(after == before)) {
        if (TopologyLevelOrder* order = c.order[level].get(); order != nullptr) {
          order->Move(level_pos_[d], TopologyLevelOrder::Key(after.slice_count_with_leader,
                                                             after.pod_count_with_leader));
        }
        const int parent = domains_[d].parent;
        if (parent < 0) break;
        DomainState& up = state_[parent];
        const DomainState up_before = up;
        up.pod_count += after.pod_count - before.pod_count;
        up.pod_count_with_leader += after.pod_count_with_leader - before.pod_count_with_leader;
        up.slice_count += after.slice_count - before.slice_count;
        up.slice_count_with_leader +=
            after.slice_count_with_leader - before.slice_count_with_leader;
        level = domains_[parent].level;
        if (level == p.slice_level) {
          up.slice_count = up.pod_count / p.slice_size;
          up.slice_count_with_leader = up.pod_count_with_leader / p.slice_size;
        }
        d = parent;
        before = up_before;
        after = up;
      }
    }
    c.synced = head;
    return;
  }
  dirty_.resize(domains_.size(), 0);
  dirty_by_level_.resize(levels_.size());
  if (summable) c.dirty_before.resize(domains_.size());
  for (size_t i = static_cast<size_t>(c.synced - changes_base_); i < changes_.size(); ++i) {
    const int d = leaves_[changes_[i]].domain;
    if (!dirty_[d]) {
      dirty_[d] = 1;
      dirty_by_level_[last].push_back(d);
    }
  }
  for (int level = last; level >= 0; --level) {
    for (int d : dirty_by_level_[level]) {
      dirty_[d] = 0;
      const int l = domains_[d].leaf;
      const DomainState before = l < 0 && summable ? c.dirty_before[d] : state_[d];
      if (l >= 0) {
        if (!c.feasible[l]) continue;
        int zero_reason = -1;
        if (tight.ok) {
          DomainState& s = state_[d];
          const int32_t pods = TightPodsOnLeaf<0>(capacity_.free(l), capacity_.used(l), tight,
                                                  in.simulate_empty, &zero_reason);
          s.pod_count = pods;
          s.pod_count_with_leader = pods;
          if (level == p.slice_level) {
            s.slice_count = pods / p.slice_size;
            s.slice_count_with_leader = s.slice_count;
          }
        } else {
          state_[d] = LeafState(l, in, p.slice_level, p.slice_size, &zero_reason);
        }
        if (zero_reason != c.zero_reason[l]) {
          if (c.zero_reason[l] >= 0) --c.zero_counts[c.zero_reason[l]];
          if (zero_reason >= 0) ++c.zero_counts[zero_reason];
          c.zero_reason[l] = zero_reason;
        }
      } else if (summable) {
        // The children's changes are in; FillDomain's slice count at the slice level.
        if (level == p.slice_level) {
          DomainState& s = state_[d];
          s.slice_count = s.pod_count / p.slice_size;
          s.slice_count_with_leader = s.pod_count_with_leader / p.slice_size;
        }
      } else {
        FillDomain(d, p, leader_required);
      }
      const DomainState& after = state_[d];
      if (after == before) continue;
      if (TopologyLevelOrder* order = c.order[level].get(); order != nullptr) {
        order->Move(level_pos_[d], TopologyLevelOrder::Key(after.slice_count_with_leader,
                                                           after.pod_count_with_leader));
      }
      const int parent = domains_[d].parent;
      if (parent < 0) continue;
      if (!dirty_[parent]) {
        dirty_[parent] = 1;
        dirty_by_level_[level - 1].push_back(parent);
        if (summable) c.dirty_before[parent] = state_[parent];
      }
      if (summable) {
        DomainState& up = state_[parent];
        up.pod_count += after.pod_count - before.pod_count;
        up.pod_count_with_leader += after.pod_count_with_leader - before.pod_count_with_leader;
        up.slice_count += after.slice_count - before.slice_count;
        up.slice_count_with_leader +=
            after.slice_count_with_leader - before.slice_count_with_leader;
      }
    }
    dirty_by_level_[level].clear();
  }
  c.synced = head;
}

void TopologyFlavor::FillHelper(int domain, const Params& p, bool leader_required) {
  const Domain& d = domains_[domain];
  if (d.children.empty()) {
    DomainState& s = state_[domain];
    if (d.level == p.slice_level) {
      s.slice_count = s.pod_count / p.slice_size;
      s.slice_count_with_leader = s.pod_count_with_leader / p.slice_size;
    }
    return;
  }
  for (int child : d.children) FillHelper(child, p, leader_required);
  FillDomain(domain, p, leader_required);
}

void TopologyFlavor::FillDomain(int domain, const Params& p, bool leader_required) {
  DomainState& s = state_[domain];
  const Domain& d = domains_[domain];
  const int level = d.level;
  int32_t children_capacity = 0;
  int32_t slice_capacity = 0;
  bool has_with_leader_contributor = false;
  int32_t min_pod_diff = INT32_MAX;
  int32_t min_slice_diff = INT32_MAX;
  int32_t leader_count = 0;
  // Under a multi-layer constraint, a child contributes only whole inner slices.
  auto inner = p.slice_size_at_level.find(level + 1);
  for (int child : d.children) {
    const DomainState& c = state_[child];
    int32_t pods = c.pod_count;
    int32_t pods_with_leader = c.pod_count_with_leader;
    if (inner != p.slice_size_at_level.end()) {
      pods = pods / inner->second * inner->second;
      pods_with_leader = pods_with_leader / inner->second * inner->second;
    }
    children_capacity += pods;
    slice_capacity += c.slice_count;
    if (!leader_required || c.leader_count > 0) {
      has_with_leader_contributor = true;
      min_pod_diff = std::min(pods - pods_with_leader, min_pod_diff);
      min_slice_diff = std::min(c.slice_count - c.slice_count_with_leader, min_slice_diff);
    }
    leader_count = std::max(c.leader_count, leader_count);
  }
  s.pod_count = children_capacity;
  int32_t slice_with_leader = 0;
  if (has_with_leader_contributor) {
    s.pod_count_with_leader = children_capacity - min_pod_diff;
    slice_with_leader = slice_capacity - min_slice_diff;
  } else {
    s.pod_count_with_leader = 0;
  }
  s.leader_count = leader_count;
  if (level == p.slice_level) {
    slice_capacity = s.pod_count / p.slice_size;
    slice_with_leader = s.pod_count_with_leader / p.slice_size;
  }
  s.slice_count = slice_capacity;
  s.slice_count_with_leader = slice_with_leader;
}

bool TopologyFlavor::ValuesLess(int a, int b) const { return rank_[a] < rank_[b]; }

std::vector<int> TopologyFlavor::Sorted(std::vector<int> domains, bool unconstrained,
                                        bool with_leader) const {
  // Kueue's sortedDomains / sortedDomainsWithLeader: (leaders first,) slices descending for
  // BestFit or ascending for least free capacity, then pods ascending, then level values.
  // The last key (the rank of the level values) is total: std::sort gives Kueue's order.
  std::sort(domains.begin(), domains.end(), [&](int a, int b) {
    const DomainState& x = state_[a];
    const DomainState& y = state_[b];
    if (with_leader && x.leader_count != y.leader_count) return x.leader_count > y.leader_count;
    // TASRespectNodeAffinityPreferred: the affinity score ranks ahead of the policy.
    if (const int by_affinity = CompareAffinity(a, b); by_affinity != 0) return by_affinity < 0;
    const int32_t xs = with_leader ? x.slice_count_with_leader : x.slice_count;
    const int32_t ys = with_leader ? y.slice_count_with_leader : y.slice_count;
    if (xs != ys) return unconstrained ? xs < ys : xs > ys;
    const int32_t xp = with_leader ? x.pod_count_with_leader : x.pod_count;
    const int32_t yp = with_leader ? y.pod_count_with_leader : y.pod_count;
    if (xp != yp) return xp < yp;
    return ValuesLess(a, b);
  });
  return domains;
}

int TopologyFlavor::BestFit(const std::vector<int>& domains, size_t from, int32_t needed,
                            int32_t leader_count, bool slices) const {
  // The first domain with the smallest count that still holds `needed`; the first domain when
  // none does.
  int best = domains[from];
  int32_t best_count = INT32_MAX;
  bool found = false;
  // With affinity scores, only the domains scoring as the first (Kueue's topAffinityTierDomains).
  const size_t end = scored_ ? AffinityTierEnd(domains, from) : domains.size();
  for (size_t i = from; i < end; ++i) {
    const DomainState& s = state_[domains[i]];
    if (s.leader_count < leader_count) continue;
    int32_t count;
    if (slices) {
      count = leader_count > 0 ? s.slice_count_with_leader : s.slice_count;
    } else {
      count = leader_count > 0 ? s.pod_count_with_leader : s.pod_count;
    }
    if (count >= needed && count < best_count) {
      best = domains[i];
      best_count = count;
      found = true;
    }
  }
  return found ? best : domains[from];
}

std::vector<int> TopologyFlavor::PrioritizeLeaderDomain(const std::vector<int>& domains,
                                                        int32_t count, int32_t leader_count,
                                                        int32_t slice_size, bool slices) const {
  if (leader_count == 0 || domains.size() < 2) return domains;
  int32_t required = count;
  int32_t available = 0;
  if (slices) {
    required /= slice_size;
    for (int d : domains) available += state_[d].slice_count;
  } else {
    for (int d : domains) available += state_[d].pod_count;
  }
  for (size_t i = 0; i < domains.size(); ++i) {
    const DomainState& s = state_[domains[i]];
    if (s.leader_count < leader_count) continue;
    const int32_t penalty =
        slices ? s.slice_count - s.slice_count_with_leader : s.pod_count - s.pod_count_with_leader;
    if (available - penalty < required) continue;
    if (i == 0) return domains;
    std::vector<int> result = domains;
    std::rotate(result.begin(), result.begin() + static_cast<long>(i),
                result.begin() + static_cast<long>(i) + 1);
    return result;
  }
  return domains;
}

std::vector<int> TopologyFlavor::UpdateCountsToMinimum(const std::vector<int>& input, int32_t count,
                                                       int32_t leader_count, int32_t slice_size,
                                                       bool unconstrained, bool slices) {
  for (int d : input) Save(d);
  // Without a leader the order stays as it is: no copy.
  std::vector<int> prioritized;
  if (leader_count > 0) {
    prioritized = PrioritizeLeaderDomain(input, count, leader_count, slice_size, slices);
  }
  const std::vector<int>& domains = leader_count > 0 ? prioritized : input;
  const bool best_fit = !unconstrained;
  std::vector<int> result;
  int32_t remaining = slices ? count / slice_size : count;
  int32_t remaining_leaders = leader_count;
  const int32_t unit = slices ? slice_size : 1;
  for (size_t i = 0; i < domains.size(); ++i) {
    int dom = domains[i];
    if (remaining_leaders > 0) {
      // Kueue's consumeWithLeadersGeneric.
      auto with_leader = [&](int d) -> int32_t& {
        return slices ? state_[d].slice_count_with_leader : state_[d].pod_count_with_leader;
      };
      auto primary = [&](int d) -> int32_t& {
        return slices ? state_[d].slice_count : state_[d].pod_count;
      };
      if (best_fit && with_leader(dom) >= remaining &&
          state_[dom].leader_count >= remaining_leaders) {
        dom = BestFit(domains, i, remaining, remaining_leaders, slices);
      }
      DomainState& s = state_[dom];
      if (with_leader(dom) >= remaining && s.leader_count >= remaining_leaders) {
        primary(dom) = remaining;
        s.leader_count = remaining_leaders;
        s.pod_count = remaining * unit;
        result.push_back(dom);
        return result;
      }
      if (with_leader(dom) > remaining) with_leader(dom) = remaining;
      if (s.leader_count > remaining_leaders) s.leader_count = remaining_leaders;
      primary(dom) = with_leader(dom);
      s.pod_count = with_leader(dom) * unit;
      remaining_leaders -= s.leader_count;
      remaining -= with_leader(dom);
      result.push_back(dom);
      continue;
    }
    if (slices) {
      if (best_fit && state_[dom].slice_count >= remaining) {
        dom = BestFit(domains, i, remaining, 0, true);
      }
      DomainState& s = state_[dom];
      s.leader_count = 0;
      if (s.slice_count >= remaining) {
        s.pod_count = remaining * slice_size;
        s.slice_count = remaining;
        result.push_back(dom);
        return result;
      }
      s.pod_count = s.slice_count * slice_size;
      remaining -= s.slice_count;
      result.push_back(dom);
      continue;
    }
    if (best_fit && state_[dom].pod_count >= remaining) {
      dom = BestFit(domains, i, remaining, 0, false);
    }
    DomainState& s = state_[dom];
    s.leader_count = 0;
    if (s.pod_count >= remaining) {
      s.pod_count = remaining;
      result.push_back(dom);
      return result;
    }
    remaining -= s.pod_count;
    result.push_back(dom);
  }
  // Kueue logs a violated assumption here and places nothing.
  return {};
}

std::string TopologyFlavor::FindLevelWithFitDomains(int level, Params& p, int* fit_level,
                                                    std::vector<int>* out) {
  const std::vector<int>& level_domains = by_level_[level];
  if (level_domains.empty()) {
    return absl::StrCat("no topology domains at level: ", levels_[level]);
  }
  const int32_t slice_count = p.count / p.slice_size;
  const bool least_free = p.unconstrained;
  auto not_fit = [&](int32_t fit, int32_t total) {
    if (!p.multi_layer.empty()) return MultiLayerNotFitMessage(level, p);
    return NotFitMessage(fit, total, p.slice_size, StatsOf(p));
  };
  // The lookups below know the order without affinity scores only.
  if (incremental_ && p.leader_count == 0 && !scored_) {
    // Without a leader every domain's counts with a leader equal its plain counts, and both
    // orders below pick the same domain when one holds every slice: the smallest by (slices,
    // pods, values) among those with enough slices (BestFit's tightest domain; the least free
    // one). One pass finds it, and the largest for the failure text, without sorting the level.
    auto ascending = [this](int a, int b) {
      const DomainState& x = state_[a];
      const DomainState& y = state_[b];
      if (x.slice_count_with_leader != y.slice_count_with_leader) {
        return x.slice_count_with_leader < y.slice_count_with_leader;
      }
      if (x.pod_count_with_leader != y.pod_count_with_leader) {
        return x.pod_count_with_leader < y.pod_count_with_leader;
      }
      return ValuesLess(a, b);
    };
    int best = -1;
    int largest = -1;
    if (active_cache_ != nullptr) {
      // The cache keeps the level in that order: a lookup instead of a pass.
      CountCache& c = *active_cache_;
      std::unique_ptr<TopologyLevelOrder>& order = c.order[level];
      if (order == nullptr) {
        const DomainState* state = state_.data();
        const int* domains = level_domains.data();
        order = std::make_unique<TopologyLevelOrder>(level_domains.size(), [&](size_t pos) {
          const DomainState& x = state[domains[pos]];
          return TopologyLevelOrder::Key(x.slice_count_with_leader, x.pod_count_with_leader);
        });
      }
      const int32_t pos = order->FirstFrom(TopologyLevelOrder::Key(slice_count, INT32_MIN));
      if (pos >= 0) {
        best = level_domains[pos];
      } else {
        // Read for the failure text only (its counts, which every domain of the largest
        // (slices, pods) shares).
        largest = level_domains[order->AnyLargest()];
      }
    } else {
      for (int d : level_domains) {
        if (state_[d].slice_count >= slice_count && (best < 0 || ascending(d, best))) best = d;
        if (largest < 0 || ascending(largest, d)) largest = d;
      }
    }
    if (best >= 0) {
      *fit_level = level;
      // Into the caller's buffer (a placement's scratch list).
      out->clear();
      out->push_back(best);
      return {};
    }
    if (p.required) {
      // The sorted order's last (least free) or first (BestFit: the most slices).
      return not_fit(least_free ? state_[largest].pod_count : state_[largest].slice_count,
                     slice_count);
    }
    if (level > 0 && !p.unconstrained) return FindLevelWithFitDomains(level - 1, p, fit_level, out);
    // Several domains together: that needs the sorted order.
  }
  std::vector<int> sorted = Sorted(level_domains, p.unconstrained, /*with_leader=*/true);
  int top = sorted[0];
  if (!least_free && state_[top].slice_count_with_leader >= slice_count &&
      state_[top].leader_count >= p.leader_count) {
    top = BestFit(sorted, 0, slice_count, p.leader_count, true);
  }
  if (least_free) {
    for (int d : sorted) {
      const DomainState& s = state_[d];
      int32_t capacity = s.slice_count;
      if (p.leader_count > 0) {
        if (s.leader_count < p.leader_count) continue;
        capacity = s.slice_count_with_leader;
      }
      if (capacity >= slice_count) {
        *fit_level = level;
        *out = {d};
        return {};
      }
    }
    if (p.required) return not_fit(state_[sorted.back()].pod_count, slice_count);
  }
  if (state_[top].slice_count_with_leader < slice_count ||
      state_[top].leader_count < p.leader_count) {
    if (p.required) {
      // Kueue's TASRespectNodeAffinityPreferred looks past a better-scoring domain too small.
      for (size_t i = 1; scored_ && i < sorted.size(); ++i) {
        const DomainState& s = state_[sorted[i]];
        if (s.slice_count_with_leader >= slice_count && s.leader_count >= p.leader_count) {
          *fit_level = level;
          *out = {BestFit(sorted, i, slice_count, p.leader_count, true)};
          return {};
        }
      }
      return not_fit(state_[top].slice_count, slice_count);
    }
    if (level > 0 && !p.unconstrained) return FindLevelWithFitDomains(level - 1, p, fit_level, out);
    std::vector<int> results;
    int32_t remaining = slice_count;
    int32_t remaining_leaders = p.leader_count;
    sorted = PrioritizeLeaderDomain(sorted, p.count, p.leader_count, p.slice_size, true);
    // Leaders first, from domains that keep the workers' capacity; then the workers by capacity.
    size_t i = 0;
    for (; remaining_leaders > 0 && i < sorted.size() && state_[sorted[i]].leader_count > 0; ++i) {
      int d = sorted[i];
      if (!least_free && state_[sorted[i]].slice_count_with_leader >= remaining) {
        d = BestFit(sorted, i, remaining, remaining_leaders, true);
      }
      results.push_back(d);
      remaining_leaders -= state_[d].leader_count;
      remaining -= state_[d].slice_count_with_leader;
    }
    if (remaining_leaders > 0) return not_fit(p.leader_count - remaining_leaders, slice_count);
    std::vector<int> rest =
        Sorted(std::vector<int>(sorted.begin() + static_cast<long>(i), sorted.end()),
               p.unconstrained, /*with_leader=*/false);
    for (size_t j = 0; remaining > 0 && j < rest.size(); ++j) {
      int d = rest[j];
      if (!least_free && state_[rest[j]].slice_count >= remaining) {
        d = BestFit(rest, j, remaining, 0, true);
      }
      results.push_back(d);
      remaining -= state_[d].slice_count;
    }
    if (remaining > 0) return not_fit(slice_count - remaining, slice_count);
    *fit_level = level;
    *out = std::move(results);
    return {};
  }
  *fit_level = level;
  *out = {top};
  return {};
}

std::string TopologyFlavor::Place(const TopologyPlacementRequest& workers,
                                  const TopologyPlacementRequest* leader, bool simulate_empty,
                                  absl::string_view required_domain, PlacedGroup* out, bool names) {
  Params p;
  p.count = workers.count;
  p.leader_count = leader != nullptr ? 1 : 0;
  const PodSetTopologyRequest* t = workers.request;
  if (t != nullptr && !t->slices.empty()) {
    p.slice_size = t->slices[0].size;
    if (p.slice_size <= 0) return "slice topology requested, but slice size not provided";
  }
  p.required = t != nullptr && t->required.has_value();
  p.unconstrained = (t != nullptr && t->unconstrained) || workers.implied || IsSliceOnly(t);
  if (levels_.empty()) return "topology level not specified";
  const std::string* key = LevelKey(workers);
  if (key == nullptr) return "topology level not specified";
  const int last_level = static_cast<int>(levels_.size()) - 1;
  // The lowest level is named by levels_ itself (an implied request, slices at the hosts).
  p.requested_level = key == &levels_.back() ? last_level : LevelIndex(*key);
  if (p.requested_level < 0) return absl::StrCat("no requested topology level: ", *key);
  const absl::string_view slice_key =
      t != nullptr && !t->slices.empty() ? t->slices[0].level : levels_.back();
  p.slice_level =
      slice_key.data() == levels_.back().data() && slice_key.size() == levels_.back().size()
          ? last_level
          : LevelIndex(slice_key);
  if (p.slice_level < 0) return absl::StrCat("no requested topology level for slices: ", slice_key);
  if (p.requested_level > p.slice_level) {
    return absl::StrCat("podset slice topology ", slice_key, " is above the podset topology ",
                        *key);
  }
  // Only more than one slice layer has sizes by level.
  if (t != nullptr && t->slices.size() > 1) {
    if (std::string reason = BuildSliceSizeAtLevel(workers, p); !reason.empty()) return reason;
  }

  // Phase 1: counts per leaf, rolled up.
  CountCache* cache = nullptr;
  // A replacement's required domain is a one-off: it is counted from scratch.
  const bool cached = incremental_ && required_domain.empty();
  if (cached) ++cache_uses_;
  // A shape without a leader is found by the per-pod request as given, which it keeps resolved:
  // no Resolve for the same request again.
  const ResolvedRequest* found = nullptr;
  if (cached && leader == nullptr) {
    for (const std::unique_ptr<CountCache>& c : caches_) {
      // Its resolved request (and no leader) is the key's: the rest of the shape decides.
      if (c->has_per_pod &&
          std::equal(c->per_pod.begin(), c->per_pod.end(), workers.per_pod.begin(),
                     workers.per_pod.end()) &&
          c->key.MatchesBesidesRequests(simulate_empty, p, workers, lowest_is_hostname_)) {
        c->last_use = cache_uses_;
        cache = c.get();
        found = &c->resolved;
        break;
      }
    }
  }
  ResolvedRequest resolved_here;
  if (found == nullptr) resolved_here = Resolve(workers.per_pod);
  const ResolvedRequest& req = found != nullptr ? *found : resolved_here;
  std::optional<ResolvedRequest> leader_req;
  if (leader != nullptr) leader_req = Resolve(leader->per_pod);
  LeafInputs in;
  in.req = &req;
  in.leader = leader_req.has_value() ? &*leader_req : nullptr;
  in.simulate_empty = simulate_empty;
  for (const auto& [r, amount] : req.amounts) {
    if (r >= 0) in.needed.push_back(r);
  }
  if (leader_req.has_value()) {
    for (const auto& [r, amount] : leader_req->amounts) {
      if (r >= 0 && std::find(in.needed.begin(), in.needed.end(), r) == in.needed.end()) {
        in.needed.push_back(r);
      }
    }
  }
  remaining_.resize(resource_names_.size(), 0);
  // Otherwise the cache of this shape is found without building its key, which is built only for
  // a new shape.
  const ResolvedRequest* leader_resolved = leader_req.has_value() ? &*leader_req : nullptr;
  if (cached && cache == nullptr) {
    for (const std::unique_ptr<CountCache>& c : caches_) {
      if (c->key.Matches(req, leader_resolved, simulate_empty, p, workers, lowest_is_hostname_)) {
        c->last_use = cache_uses_;
        cache = c.get();
        break;
      }
    }
    if (cache == nullptr) {
      ShapeKey key =
          ShapeKey::Of(req, leader_resolved, simulate_empty, p, workers, lowest_is_hostname_);
      cache = &CacheFor(key);
    }
    if (leader == nullptr && !cache->has_per_pod) {
      // Its names view the cache's own copy of the request.
      cache->per_pod.assign(workers.per_pod.begin(), workers.per_pod.end());
      cache->resolved = Resolve(cache->per_pod);
      cache->has_per_pod = true;
    }
  }
  // The cached state is worked on in place and handed back, with phase two's changes undone,
  // however the placement ends.
  struct HandBack {
    TopologyFlavor* self;
    CountCache* cache;
    ~HandBack() {
      if (cache == nullptr) return;
      for (auto it = self->undo_.rbegin(); it != self->undo_.rend(); ++it) {
        self->state_[it->first] = it->second;
      }
      self->undo_.clear();
      self->undo_active_ = false;
      self->active_cache_ = nullptr;
      self->state_.swap(cache->state);
    }
  } hand_back{this, cache};
  if (cache != nullptr) {
    state_.swap(cache->state);
    SyncCache(*cache, workers, in, p);
    p.stats_cache = cache;
    p.stats_req = &req;
    undo_active_ = true;
    active_cache_ = cache;
  } else {
    CountFromScratch(workers, in, required_domain, p);
  }

  // Phase 2: the level and its domains, then down level by level.
  scored_ = respect_preferred_ && workers.preferred_node_affinity != nullptr &&
            ScorePreferredAffinity(workers);
  int fit_level = 0;
  // The cache's scratch list keeps its buffer from one placement to the next.
  std::vector<int> fit_here;
  std::vector<int>& fit = cache != nullptr ? cache->fit : fit_here;
  fit.clear();
  // Balanced placement (a gate, off by default) for a preferred request; best fit otherwise.
  const bool balanced =
      balanced_placement_ && !p.required && !p.unconstrained && PlaceBalanced(p, &fit_level, &fit);
  if (!balanced) {
    if (std::string reason = FindLevelWithFitDomains(p.requested_level, p, &fit_level, &fit);
        !reason.empty()) {
      return reason;
    }
  }
  if (fit.size() == 1 && p.leader_count == 0) {
    // UpdateCountsToMinimum of one domain without a leader, without its list: the domain keeps
    // the slices asked for, or (an assumption violated) nothing is placed.
    const int d = fit[0];
    Save(d);
    DomainState& s = state_[d];
    s.leader_count = 0;
    const int32_t needed = p.count / p.slice_size;
    if (s.slice_count >= needed) {
      s.pod_count = needed * p.slice_size;
      s.slice_count = needed;
    } else {
      s.pod_count = s.slice_count * p.slice_size;
      fit.clear();
    }
  } else {
    fit = UpdateCountsToMinimum(fit, p.count, p.leader_count, p.slice_size, p.unconstrained, true);
  }
  const int last = static_cast<int>(levels_.size()) - 1;
  int level = fit_level;
  // Above the slice level the lower domains of all chosen domains compete together (a balanced
  // placement already split the slices between its domains).
  for (; !balanced && level < std::min(last, p.slice_level); ++level) {
    if (incremental_ && p.leader_count == 0 && !p.unconstrained && !scored_) {
      // BestFit without a leader: when one lower domain holds every slice, the sorted order's
      // pick is the smallest by (slices, pods, values) among those that do; no sort needed, and
      // no list of the lower domains.
      const int32_t needed = p.count / p.slice_size;
      int best = -1;
      // The best's (slices, pods) as one key of the same order, and its rank.
      uint64_t best_key = UINT64_MAX;
      int best_rank = INT_MAX;
      const DomainState* state = state_.data();
      for (int upper : fit) {
        for (int d : domains_[upper].children) {
          const DomainState& x = state[d];
          if (x.slice_count < needed) continue;
          const uint64_t key = TopologyLevelOrder::Key(x.slice_count, x.pod_count);
          if (key > best_key || (key == best_key && rank_[d] >= best_rank)) continue;
          best = d;
          best_key = key;
          best_rank = rank_[d];
        }
      }
      if (best >= 0) {
        // What UpdateCountsToMinimum does to the domain it picks.
        Save(best);
        DomainState& chosen = state_[best];
        chosen.leader_count = 0;
        chosen.pod_count = needed * p.slice_size;
        chosen.slice_count = needed;
        fit.assign(1, best);
        continue;
      }
    }
    std::vector<int> lower;
    for (int d : fit)
      lower.insert(lower.end(), domains_[d].children.begin(), domains_[d].children.end());
    fit = UpdateCountsToMinimum(Sorted(std::move(lower), p.unconstrained, false), p.count,
                                p.leader_count, p.slice_size, p.unconstrained, true);
  }
  // At and below it each chosen domain hands its own count down to its children.
  for (; level < last; ++level) {
    int32_t size_on_level = p.slice_size;
    if (level >= p.slice_level) {
      size_on_level = 1;
      auto it = p.slice_size_at_level.find(level + 1);
      if (it != p.slice_size_at_level.end()) size_on_level = it->second;
    }
    std::vector<int> next;
    for (int d : fit) {
      std::vector<int> children = Sorted(domains_[d].children, p.unconstrained, false);
      if (size_on_level > 1) {
        for (int c : children) {
          Save(c);
          state_[c].slice_count = state_[c].pod_count / size_on_level;
          state_[c].slice_count_with_leader = state_[c].pod_count_with_leader / size_on_level;
        }
      }
      std::vector<int> chosen =
          UpdateCountsToMinimum(children, state_[d].pod_count, state_[d].leader_count,
                                size_on_level, p.unconstrained, size_on_level > 1);
      next.insert(next.end(), chosen.begin(), chosen.end());
    }
    fit = std::move(next);
  }

  if (leader == nullptr && fit.size() == 1) {
    // One leaf (the usual end of a placement): its usage without the lists below, built here
    // rather than by LeafUsageOf (an out-of-line call on every placement).
    const int d = fit[0];
    const int32_t count = state_[d].pod_count;
    auto usage = std::make_shared<TopologyLeafUsage>();
    if (count != 0) usage->leaves.emplace_back(domains_[d].leaf, count);
    usage->per_pod.assign(req.amounts.begin(), req.amounts.end());
    if (names) out->workers = AssignmentOf(*usage);
    out->workers_leaves = std::move(usage);
    return {};
  }
  std::vector<std::pair<int, int32_t>> worker_domains;
  std::vector<std::pair<int, int32_t>> leader_domains;
  for (int d : fit) {
    if (leader != nullptr && state_[d].leader_count > 0) {
      leader_domains.emplace_back(d, state_[d].leader_count);
    }
    if (leader == nullptr || state_[d].pod_count > 0) {
      worker_domains.emplace_back(d, state_[d].pod_count);
    }
  }
  if (leader != nullptr) {
    out->leader_leaves = LeafUsageOf(leader_domains, *leader_req);
    if (names) out->leader = BuildAssignment(std::move(leader_domains));
  }
  out->workers_leaves = LeafUsageOf(worker_domains, req);
  if (names) out->workers = BuildAssignment(std::move(worker_domains));
  return {};
}

TopologyAssignment TopologyFlavor::AssignmentOf(const TopologyLeafUsage& usage) const {
  if (usage.leaves.size() == 1) {
    // BuildAssignment's result for one domain, without its list of domains.
    const auto [leaf, count] = usage.leaves[0];
    const size_t from = lowest_is_hostname_ ? levels_.size() - 1 : 0;
    const std::vector<std::string>& values = domains_[leaves_[leaf].domain].values;
    TopologyAssignment out;
    out.levels.assign(levels_.begin() + static_cast<long>(from), levels_.end());
    if (count != 0) {
      out.domains.resize(1);
      out.domains[0].values.assign(values.begin() + static_cast<long>(from), values.end());
      out.domains[0].count = count;
    }
    return out;
  }
  // The domains BuildAssignment was given: the leaves' (a placement ends on leaves), without
  // the ones that took no pod (the block has none).
  std::vector<std::pair<int, int32_t>> domains;
  domains.reserve(usage.leaves.size());
  for (const auto& [leaf, count] : usage.leaves) domains.emplace_back(leaves_[leaf].domain, count);
  return BuildAssignment(std::move(domains));
}

std::shared_ptr<const TopologyLeafUsage> TopologyFlavor::LeafUsageOf(
    const std::vector<std::pair<int, int32_t>>& domains, const ResolvedRequest& req) const {
  auto out = std::make_shared<TopologyLeafUsage>();
  // The domains BuildAssignment names (a placement ends on leaves), in any order.
  for (const auto& [d, count] : domains) {
    if (count != 0) out->leaves.emplace_back(domains_[d].leaf, count);
  }
  out->per_pod.assign(req.amounts.begin(), req.amounts.end());
  return out;
}

TopologyAssignment TopologyFlavor::BuildAssignment(
    std::vector<std::pair<int, int32_t>> domains) const {
  auto by_values = [this](const auto& a, const auto& b) { return ValuesLess(a.first, b.first); };
  // Usually one domain, or already in order: the sort (and its buffer) only when needed.
  if (!std::is_sorted(domains.begin(), domains.end(), by_values)) {
    std::stable_sort(domains.begin(), domains.end(), by_values);
  }
  // With the hostname lowest, the hostname alone names a node.
  const size_t from = lowest_is_hostname_ ? levels_.size() - 1 : 0;
  TopologyAssignment out;
  out.levels.assign(levels_.begin() + static_cast<long>(from), levels_.end());
  out.domains.reserve(domains.size());
  for (const auto& [d, count] : domains) {
    if (count == 0) continue;
    const std::vector<std::string>& values = domains_[d].values;
    out.domains.push_back(TopologyDomainAssignment{
        std::vector<std::string>(values.begin() + static_cast<long>(from), values.end()), count});
  }
  return out;
}

std::string TopologyFlavor::NotFitMessage(int32_t fit, int32_t total, int32_t slice_size,
                                          const ExclusionStats& stats) const {
  const char* unit = slice_size == 1 ? "pod" : "slice";
  std::string out;
  if (fit == 0) {
    out = absl::StrFormat("topology %s doesn't allow to fit any of %d %s(s)",
                          Quoted(topology_name_), total, unit);
  } else {
    out = absl::StrFormat("topology %s allows to fit only %d out of %d %s(s)",
                          Quoted(topology_name_), fit, total, unit);
  }
  if (stats.HasExclusions()) {
    absl::StrAppend(&out, ". Total nodes: ", stats.total_nodes, "; excluded: ", stats.Reasons());
  }
  return out;
}

int32_t TopologyFlavor::CountSlicesInSubtree(int domain, int level, int target,
                                             int32_t size) const {
  if (level == target) return state_[domain].pod_count / size;
  int32_t total = 0;
  for (int child : domains_[domain].children) {
    total += CountSlicesInSubtree(child, level + 1, target, size);
  }
  return total;
}

std::string TopologyFlavor::MultiLayerNotFitMessage(int level, Params& p) const {
  std::string out = absl::StrCat("topology ", Quoted(topology_name_), " doesn't allow to fit");
  // The domain with the most slices (ties: the smallest id) shows the best case.
  int best = -1;
  std::string best_id;
  for (int d : by_level_[level]) {
    const std::string id = lowest_is_hostname_ && d >= 0 && domains_[d].leaf >= 0
                               ? domains_[d].values.back()
                               : DomainId(domains_[d].values);
    if (best < 0 || state_[d].slice_count > state_[best].slice_count ||
        (state_[d].slice_count == state_[best].slice_count && id < best_id)) {
      best = d;
      best_id = id;
    }
  }
  if (best < 0) return out;
  for (const SliceConstraint& c : p.multi_layer) {
    const int target = LevelIndex(c.level);
    if (target < 0 || c.size <= 0) continue;
    absl::StrAppend(&out, "; ", CountSlicesInSubtree(best, level, target, c.size), "/",
                    p.count / c.size, " slice(s) fit on level ", c.level);
  }
  const ExclusionStats& stats = StatsOf(p);
  if (stats.HasExclusions()) {
    absl::StrAppend(&out, ". Total nodes: ", stats.total_nodes, "; excluded: ", stats.Reasons());
  }
  return out;
}

}  // namespace tollgate::core
