#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/boxed.h"
#include "core/topology.h"
#include "core/types.h"

namespace tollgate::core {

// One pod set's part of a topology placement (Kueue's TASPodSetRequests). It views the pod
// set's fields, which must outlive it: one is built for every evaluation of a head.
struct TopologyPlacementRequest {
  absl::string_view pod_set;
  int32_t count = 0;
  // Per pod, without `pods` (added by the placement).
  absl::Span<const std::pair<std::string, int64_t>> per_pod;
  // Null for an implied request (a ClusterQueue whose flavors are all topology flavors).
  const PodSetTopologyRequest* request = nullptr;
  bool implied = false;
  // Null: none.
  const Labels* node_selector = nullptr;
  absl::Span<const Toleration> tolerations;
  // The pod set's required node affinity; null or empty: none.
  const std::vector<NodeSelectorTerm>* required_node_affinity = nullptr;
  // The pod set's preferred node affinity; null: none. Read only by a flavor that respects it
  // (Kueue's TASRespectNodeAffinityPreferred).
  const std::vector<PreferredSchedulingTerm>* preferred_node_affinity = nullptr;
};

// A placement as the tree that computed it knows it: each leaf it uses (an index into the
// tree's leaves) with its pod count, and the per-pod request with its one `pods` by the tree's
// resource indexes. Meaningful on that tree only: TopologyInventory::CurrentTree says whether
// the tree is still the flavor's, and a placement is named by its domains otherwise. Built once
// per placement and shared, never changed: the evaluation, the cycle's checks and usage and the
// admission's hold the same block (its inline vectors would be copied element by element at
// every move).
struct TopologyLeafUsage {
  absl::InlinedVector<std::pair<int32_t, int32_t>, 2> leaves;
  absl::InlinedVector<std::pair<int32_t, int64_t>, 4> per_pod;
};

// Inline for one request: a workload usually has one pod set, and one placement is computed for
// every evaluation of a head.
struct TopologyPlacementResult {
  // Per request, in request order: the placements on this tree's leaves, set for each request
  // placed before a failure (null where unplaced).
  absl::InlinedVector<std::shared_ptr<const TopologyLeafUsage>, 1> leaves;
  // Parallel to `leaves`: the same placements by names, set only when placed with names.
  // Boxed: placed without names it is one empty pointer to construct, move and destroy.
  absl::InlinedVector<Boxed<TopologyAssignment>, 1> assignments;
  // Empty when everything was placed; else Kueue's reason and the pod set it is about.
  std::string failure;
  std::string failed_pod_set;
  bool ok() const { return failure.empty(); }
};

// The topology of one ResourceFlavor with `spec.topologyName`: the tree of domains built from
// the inventory's nodes that match the flavor's node labels and carry every level label (and
// are ready and schedulable), each leaf's capacity (allocatable minus pods Tollgate does not
// place) and the usage of admitted workloads, and Kueue's placement algorithm over them
// (pkg/cache/scheduler/tas_flavor_snapshot.go; docs/topology.md).
//
// Usage is kept per leaf, so the scheduler changes it in place when workloads are admitted or
// release quota, and the planners change it temporarily (like UsageSimulation on the quota
// tree). The placement's scratch state lives here too: FindAssignments is not reentrant.
//
// The first phase of a placement (the pods that fit on every leaf, rolled up the tree) is kept
// per request shape (per-pod resources, leader, node filters, slice sizes) and brought up to
// date by recomputing only the leaves whose capacity or usage changed since, and their
// ancestors; the second phase reads it and undoes what it changes. The results are those of a
// computation from scratch (set_incremental(false), which the property test compares with).
// Not thread-safe.
class TopologyFlavor {
 public:
  TopologyFlavor(const TopologySpec& topology, const ResourceFlavorSpec& flavor,
                 const std::vector<const NodeSpec*>& nodes);
  ~TopologyFlavor();

  const std::string& topology_name() const { return topology_name_; }
  const std::vector<std::string>& levels() const { return levels_; }
  bool lowest_is_hostname() const { return lowest_is_hostname_; }
  size_t leaf_count() const { return leaves_.size(); }
  size_t domain_count() const { return domains_.size(); }

  // Kueue's HasLevel: every level the request names exists in this topology (an absent request
  // names the lowest level, as an implied one does).
  bool HasLevels(const PodSetTopologyRequest* request) const;

  // Usage of pods Tollgate does not place, on a node of this flavor (ignored otherwise).
  void AddNonTasUsage(absl::string_view node, const ResourceAmounts& usage);
  // Adds (sign +1) or removes (-1) the usage of `count` pods of `per_pod` (plus one `pods`
  // each) on the domain with these values (as an assignment names it). Domains without a leaf
  // (a node that went away) are skipped, as Kueue does.
  void AddUsage(const std::vector<std::string>& values, const ResourceAmounts& per_pod,
                int32_t count, int sign);
  // The same for a placement this tree computed, by its leaves.
  void AddUsage(const TopologyLeafUsage& usage, int sign);
  // Whether every domain of the assignment still has room for its pods (Kueue's Fits).
  bool Fits(const TopologyAssignment& assignment, const ResourceAmounts& per_pod) const;
  // The same for a placement this tree computed, by its leaves.
  bool Fits(const TopologyLeafUsage& usage) const;
  // A placement this tree computed, named as an assignment names it: a leaf's values (the
  // hostname alone when it is the lowest level), and the per-pod request by resource name
  // without the one `pods`.
  std::vector<std::string> LeafValues(int32_t leaf) const;
  ResourceAmounts PerPodOf(const TopologyLeafUsage& usage) const;
  // The assignment of a placement this tree computed (FindAssignments without names), named
  // as FindAssignments names it.
  TopologyAssignment AssignmentOf(const TopologyLeafUsage& usage) const;
  // Whether the assignment names a domain without a leaf (Kueue's IsTopologyAssignmentStale).
  std::optional<std::string> StaleDomain(const TopologyAssignment& assignment) const;

  // Kueue's FindTopologyAssignmentsForFlavor: pod sets of one group are placed together, groups
  // in order, each seeing the ones before. `simulate_empty` ignores admitted workloads' usage.
  // Without `names`, a placed request gets its leaves only (AssignmentOf names them while this
  // tree is current): most placements of a cycle are dropped or only checked, and naming one
  // allocates its levels, domains and values.
  TopologyPlacementResult FindAssignments(absl::Span<const TopologyPlacementRequest> requests,
                                          bool simulate_empty, bool names = true);

  // Kueue's failed-node replacement for one pod set: the pods of `existing` on `lost_node` are
  // placed again, inside the domain the request requires where there is one, keeping the other
  // domains. The merged assignment, or the failure text.
  struct Replacement {
    std::optional<TopologyAssignment> assignment;
    std::string failure;
  };
  Replacement FindReplacement(const TopologyPlacementRequest& request,
                              const TopologyAssignment& existing, absl::string_view lost_node);

  // The tree with each domain's capacity (allocatable minus pods Tollgate does not place) and
  // what placements use, summed over its leaves; parents before children, siblings by values.
  // For `get topology`, `describe node` and the dashboard.
  struct DomainCapacity {
    int level = 0;
    std::vector<std::string> values;
    ResourceAmounts free;
    ResourceAmounts used;
    // Nodes under the domain.
    int32_t nodes = 0;
  };
  std::vector<DomainCapacity> Capacities() const;

  // Off: every placement computes the first phase from scratch (the reference the tests
  // compare the incremental one with). On by default.
  void set_incremental(bool on) { incremental_ = on; }
  // Kueue's TASBalancedPlacement gate: a preferred request (neither required nor unconstrained)
  // is spread evenly over the fewest domains that hold it when it can be, best fit otherwise
  // (topology_balanced_placement.cc). Off by default, as in Kueue.
  void set_balanced_placement(bool on) { balanced_placement_ = on; }

  // Kueue's TASRespectNodeAffinityPreferred: a pod set's preferred node affinity scores the
  // nodes, and the scores rank the domains ahead of the placement policy. Off by default.
  void set_respect_node_affinity_preferred(bool on) { respect_preferred_ = on; }

 private:
  struct Domain {
    int parent = -1;
    int level = 0;
    std::vector<int> children;
    // The values of every level from the highest down to this domain's.
    std::vector<std::string> values;
    int leaf = -1;
  };
  // What every pass over the leaves reads of a leaf; the rest is in arrays by leaf index
  // (capacity_, leaf_nodes_, assumed_), so a cache's first build streams through the leaves
  // instead of missing the cache on each leaf's node and vectors.
  struct Leaf {
    int domain = 0;
    // Nodes in the leaf (more than one where the lowest level is not the hostname).
    int32_t nodes = 0;
  };
  // The leaves' capacities, a row per leaf in leaf order: its allocatable minus usage of pods
  // Tollgate does not place (free), then the usage of admitted workloads (used), a value per
  // resource index each.
  struct CapacityRows {
    std::vector<int64_t> values;
    size_t resources = 0;
    int64_t* free(size_t leaf) { return values.data() + leaf * 2 * resources; }
    const int64_t* free(size_t leaf) const { return values.data() + leaf * 2 * resources; }
    int64_t* used(size_t leaf) { return free(leaf) + resources; }
    const int64_t* used(size_t leaf) const { return free(leaf) + resources; }
  };
  struct DomainState {
    int32_t pod_count = 0;
    int32_t slice_count = 0;
    int32_t pod_count_with_leader = 0;
    int32_t slice_count_with_leader = 0;
    int32_t leader_count = 0;
    bool operator==(const DomainState&) const = default;
  };
  struct ExclusionStats {
    int total_nodes = 0;
    int node_selector = 0;
    int affinity = 0;
    int topology_domain = 0;
    std::map<std::string, int> taints;
    std::map<std::string, int> resources;
    bool HasExclusions() const;
    std::string Reasons() const;
  };
  // What the first phase of a placement depends on beside the leaves' capacity and usage, and
  // its result for one such shape (topology_placement.cc).
  struct ShapeKey;
  struct CountCache;
  // A per-pod request resolved against the resource index (-1: no node has the resource).
  // Inline: a pod asks for a handful of resources, and one is resolved per placement and per
  // Fits. The names view the request's resource names (or a literal `pods`).
  struct ResolvedRequest {
    absl::InlinedVector<std::pair<int, int64_t>, 4> amounts;
    absl::InlinedVector<absl::string_view, 4> names;
  };
  struct Params {
    int32_t count = 0;
    int32_t leader_count = 0;
    int32_t slice_size = 1;
    int requested_level = 0;
    int slice_level = 0;
    bool required = false;
    bool unconstrained = false;
    std::map<int, int32_t> slice_size_at_level;
    std::vector<SliceConstraint> multi_layer;
    // The exclusions of a placement counted from scratch. A cached placement's are its cache's
    // (the node filters' and the leaves without room for the request), filled in here only for a
    // failure's text (StatsOf): most placements succeed and never read them.
    ExclusionStats stats;
    const CountCache* stats_cache = nullptr;
    const ResolvedRequest* stats_req = nullptr;
  };
  // The resolved requests of one placement and the resources they read.
  struct LeafInputs {
    const ResolvedRequest* req = nullptr;
    const ResolvedRequest* leader = nullptr;
    absl::InlinedVector<int, 4> needed;
    bool simulate_empty = false;
  };
  struct Group {
    const TopologyPlacementRequest* workers = nullptr;
    const TopologyPlacementRequest* leader = nullptr;
  };

  void AddNode(const NodeSpec& node);
  int FindOrAddDomain(const std::vector<std::string>& values);
  int LeafFor(const std::vector<std::string>& values) const;
  int ResourceIndex(absl::string_view resource) const;
  ResolvedRequest Resolve(absl::Span<const std::pair<std::string, int64_t>> per_pod) const;
  // Records the placed group's usage on its leaves (assumed_) for the next groups.
  void AddAssumed(const TopologyAssignment& assignment,
                  absl::Span<const std::pair<std::string, int64_t>> per_pod);
  void ClearAssumed();
  // A leaf's capacity or usage changed: the caches recompute it when next used.
  void Touch(int leaf);

  // The level the request names (null: none), viewed in the request or in levels_.
  const std::string* LevelKey(const TopologyPlacementRequest& r) const;
  // The placement's exclusions, for a failure's text: a cached placement's are filled in on
  // first use.
  const ExclusionStats& StatsOf(Params& p) const;
  int LevelIndex(absl::string_view level) const;
  // One group's placement: by names (the assignments) and on this tree's leaves.
  struct PlacedGroup {
    Boxed<TopologyAssignment> workers;
    Boxed<TopologyAssignment> leader;
    std::shared_ptr<const TopologyLeafUsage> workers_leaves;
    std::shared_ptr<const TopologyLeafUsage> leader_leaves;
  };
  // The placement of one group (Kueue's findTopologyAssignment); the failure text or empty.
  std::string Place(const TopologyPlacementRequest& workers, const TopologyPlacementRequest* leader,
                    bool simulate_empty, absl::string_view required_domain, PlacedGroup* out,
                    bool names = true);
  std::string BuildSliceSizeAtLevel(const TopologyPlacementRequest& r, Params& p) const;
  bool NodeFeasible(int leaf, const TopologyPlacementRequest& r, ExclusionStats& stats) const;
  // A leaf's first-phase state (rolled to the slice level when the leaf is there); `zero_reason`
  // is the index of the requested resource that leaves it no pod, or -1.
  DomainState LeafState(int leaf_index, const LeafInputs& in, int slice_level, int32_t slice_size,
                        int* zero_reason);
  // The first phase from scratch into state_ (the reference), with its exclusions in p.stats.
  void CountFromScratch(const TopologyPlacementRequest& workers, const LeafInputs& in,
                        absl::string_view required_domain, Params& p);
  // The cache for this shape, brought up to date in state_ (swapped in by the caller).
  CountCache& CacheFor(ShapeKey& key);
  void SyncCache(CountCache& cache, const TopologyPlacementRequest& workers, const LeafInputs& in,
                 const Params& p);
  // A domain above the leaves from its children's states (Kueue's fillInCountsHelper).
  void FillDomain(int domain, const Params& p, bool leader_required);
  void FillHelper(int domain, const Params& p, bool leader_required);
  // Keeps the first-phase state of `domain` to restore after the placement (cached states).
  void Save(int domain) {
    if (undo_active_) undo_.emplace_back(domain, state_[domain]);
  }

  std::string FindLevelWithFitDomains(int level, Params& p, int* fit_level, std::vector<int>* out);
  // Kueue's balanced placement: on success the domains at `fit_level` with the counts phase two
  // hands down; false (state as it was) when it does not apply or fails, for best fit instead.
  class Balanced;
  bool PlaceBalanced(const Params& p, int* fit_level, std::vector<int>* fit);
  int BestFit(const std::vector<int>& domains, size_t from, int32_t needed, int32_t leader_count,
              bool slices) const;
  std::vector<int> PrioritizeLeaderDomain(const std::vector<int>& domains, int32_t count,
                                          int32_t leader_count, int32_t slice_size,
                                          bool slices) const;
  std::vector<int> UpdateCountsToMinimum(const std::vector<int>& domains, int32_t count,
                                         int32_t leader_count, int32_t slice_size,
                                         bool unconstrained, bool slices);
  std::vector<int> Sorted(std::vector<int> domains, bool unconstrained, bool with_leader) const;
  // Kueue's affinityScore of the running placement (topology_affinity.cc): each feasible
  // node's sum of the weights of the preferred terms it matches, and a domain's the sum of its
  // children's, into affinity_score_. False when no node scores, where the scores would change
  // no order: the placement then runs as without the gate (scored_ stays false).
  bool ScorePreferredAffinity(const TopologyPlacementRequest& workers);
  // Whether domain `a` ranks before `b` by affinity alone, or after (-1 / 1; 0: a tie or no
  // scores).
  int CompareAffinity(int a, int b) const {
    if (!scored_ || affinity_score_[a] == affinity_score_[b]) return 0;
    return affinity_score_[a] > affinity_score_[b] ? -1 : 1;
  }
  // The end of the run of `domains` from `from` with the score of domains[from] (Kueue's
  // topAffinityTierDomains): BestFit never trades affinity for a tighter fit.
  size_t AffinityTierEnd(const std::vector<int>& domains, size_t from) const;
  bool ValuesLess(int a, int b) const;
  TopologyAssignment BuildAssignment(std::vector<std::pair<int, int32_t>> domains) const;
  std::shared_ptr<const TopologyLeafUsage> LeafUsageOf(
      const std::vector<std::pair<int, int32_t>>& domains, const ResolvedRequest& req) const;
  std::string NotFitMessage(int32_t fit, int32_t total, int32_t slice_size,
                            const ExclusionStats& stats) const;
  std::string MultiLayerNotFitMessage(int level, Params& p) const;
  int32_t CountSlicesInSubtree(int domain, int level, int target, int32_t size) const;

  std::string topology_name_;
  std::vector<std::string> levels_;
  bool lowest_is_hostname_ = false;
  std::vector<Toleration> flavor_tolerations_;
  std::vector<std::string> resource_names_;  // sorted; index = resource index
  // The index of `pods` (always among the resources).
  int pods_index_ = 0;
  std::vector<Domain> domains_;
  std::vector<Leaf> leaves_;
  CapacityRows capacity_;
  // Each leaf's node where the lowest level is the hostname (the filters read its labels and
  // taints); empty otherwise.
  std::vector<NodeSpec> leaf_nodes_;
  // The hostname leaves whose node has a taint: the only ones a request without a node
  // selector or affinity can exclude.
  std::vector<int> tainted_leaves_;
  // Per leaf, the usage of the groups already placed by the running FindAssignments; empty
  // outside it (assumed_leaves_ lists the leaves with one).
  std::vector<std::vector<int64_t>> assumed_;
  // Per level, the domains sorted by their values.
  std::vector<std::vector<int>> by_level_;
  // By domain: its position in its level (by_level_), where a count cache's level orders name it.
  std::vector<int32_t> level_pos_;
  std::vector<int> roots_;
  // Domain id (values joined by ",") -> domain, per level.
  std::vector<absl::flat_hash_map<std::string, int>> ids_;
  absl::flat_hash_map<std::string, int> leaf_of_node_;
  // Scratch state of one placement, by domain.
  std::vector<DomainState> state_;
  // Each domain's position in the order of level values (compared as whole value lists): the
  // final tie-break of every sort, as an int.
  std::vector<int> rank_;

  bool incremental_ = true;
  bool balanced_placement_ = false;
  bool respect_preferred_ = false;
  // Set while a placement ranks by affinity_score_ (by domain).
  bool scored_ = false;
  std::vector<int64_t> affinity_score_;
  // The cache the running placement reads (null: counted from scratch).
  CountCache* active_cache_ = nullptr;
  std::vector<std::unique_ptr<CountCache>> caches_;
  int64_t cache_uses_ = 0;
  // Leaves changed since change number changes_base_ (kept while some cache needs them).
  std::vector<int> changes_;
  int64_t changes_base_ = 0;
  // Leaves with assumed usage.
  std::vector<int> assumed_leaves_;
  // Phase-two changes to cached states, undone when the placement ends.
  std::vector<std::pair<int, DomainState>> undo_;
  bool undo_active_ = false;
  // Scratch of the incremental update, by domain.
  std::vector<char> dirty_;
  std::vector<std::vector<int>> dirty_by_level_;
  std::vector<int64_t> remaining_;
};

// Kueue's domain id: the values joined by ",".
std::string DomainId(const std::vector<std::string>& values);

// Whether a topology flavor's tree holds the node: ready and schedulable (Kueue's nodes cache),
// with the flavor's node labels and a label for every level of the topology.
bool NodeInTopologyFlavor(const NodeSpec& node, const TopologySpec& topology,
                          const ResourceFlavorSpec& flavor);

}  // namespace tollgate::core
