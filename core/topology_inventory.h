#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/topology.h"
#include "core/topology_flavor.h"
#include "core/types.h"

namespace tollgate::core {

// Usage of one pod set's placement: `count` pods of `per_pod` on the domain `values` of
// `flavor`'s topology.
struct TopologyUsage {
  std::string flavor;
  // For the views (describe node); not part of what the capacity is keyed by.
  std::string pod_set;
  std::vector<std::string> values;
  ResourceAmounts per_pod;
  int32_t count = 0;
};

// A placement carried from the evaluation that computed it (PlaceTopology) into the cycle and
// the admission, so that they count it by its leaves instead of finding its domains again by
// name: the tree it was computed on, the generation the tree was built at, and its leaves there.
// Valid while TopologyInventory::CurrentTree finds the tree; a placement is named by its
// assignment otherwise. The leaves are shared: copying a placement (into the cycle's simulated
// usage, into an admitted workload's) copies a pointer.
struct PlacedTopology {
  const TopologyFlavor* tree = nullptr;
  int64_t generation = -1;
  // Set whenever `tree` is.
  std::shared_ptr<const TopologyLeafUsage> usage;
};

// The usage of a workload's placements: carried on the trees that computed them (current when
// handed to the inventory) and by names. Inline for one carried placement (one pod set): one is
// built for every admission and for every head the cycle counts.
struct WorkloadTopologyUsage {
  absl::InlinedVector<PlacedTopology, 1> placed;
  std::vector<TopologyUsage> named;
  bool empty() const { return placed.empty() && named.empty(); }
};

// Everything Topology Aware Scheduling knows beside the configuration: the Topology objects, the
// node inventory (fed by an adapter, a Slurm front-end or a test harness), the usage of pods
// Tollgate does not place, and the placements of admitted workloads. It hands out one
// TopologyFlavor per topology flavor, built on first use after a change of nodes, topologies or
// flavors, and keeps the flavors' usage current as placements come and go.
//
// Placements on hostname topologies are counted on every hostname flavor that has the node
// (Kueue's TASHandleOverlappingFlavors, on by default): two flavors selecting the same nodes
// never hand out the same capacity twice. Not thread-safe.
class TopologyInventory {
 public:
  // --- Topologies (validated by the caller with ValidateTopology).
  void ApplyTopology(TopologySpec spec);
  // NOT_FOUND when absent.
  absl::Status DeleteTopology(absl::string_view name);
  const std::map<std::string, TopologySpec>& topologies() const { return topologies_; }
  const TopologySpec* FindTopology(absl::string_view name) const;

  // --- Nodes. Upsert replaces the node; INVALID_ARGUMENT names the bad field.
  absl::Status UpsertNode(NodeSpec node);
  // NOT_FOUND when absent.
  absl::Status DeleteNode(absl::string_view name);
  const std::map<std::string, NodeSpec>& nodes() const { return nodes_; }
  const NodeSpec* FindNode(absl::string_view name) const;

  // --- Pods Tollgate does not place (static pods, daemon sets, other schedulers): each takes
  // its requests and one `pods` on its node. Reporting a pod again replaces it. True when the
  // report may have freed capacity on a node: the pod was reported before on another node, or
  // asks for less of some resource than before (an in-place resize; Kueue's nonTasUsageCache).
  absl::StatusOr<bool> ReportPod(std::string pod, std::string node, ResourceAmounts requests);
  // NOT_FOUND when absent.
  absl::Status RemovePod(absl::string_view pod);
  struct PodUsage {
    std::string node;
    ResourceAmounts requests;
  };
  const std::map<std::string, PodUsage>& pods() const { return pods_; }

  // --- Flavors. Called whenever ResourceFlavors change.
  void SetFlavors(const std::map<std::string, ResourceFlavorSpec>& flavors);
  // The flavor's topology, or null for a quota-only flavor or one whose Topology is missing.
  TopologyFlavor* Flavor(absl::string_view flavor);
  // Whether the flavor names a topology (existing or not).
  bool IsTopologyFlavor(absl::string_view flavor) const;
  // Kueue's TASRespectNodeAffinityPreferred for every flavor's placements (off by default).
  void set_respect_node_affinity_preferred(bool on);

  // --- Placements of workloads holding quota, by workload id: Set replaces what the workload
  // had (so re-adding after a quota-tree rebuild counts nothing twice), Clear drops it.
  void SetWorkloadUsage(int64_t workload, WorkloadTopologyUsage usage);
  void ClearWorkloadUsage(int64_t workload);
  // A temporary change by the planners (sign +1 adds, -1 removes), undone by the token it
  // returns; the planners undo in reverse order.
  int64_t ApplyTemporary(WorkloadTopologyUsage&& usage, int sign);
  void UndoTemporary(int64_t token);
  // The temporary addition `token`, once undone, stays counted instead, held for `workload`,
  // whose admission the cycle planned with it: the admission's SetWorkloadUsage with the same
  // carried placements takes it over instead of counting it again (a placement is otherwise
  // counted when the cycle plans it, undone at the cycle's end and counted again when
  // admitted). Whatever is held when the trees are read or changed otherwise (a flavor asked
  // for; a node, topology or flavor change; another workload's usage set or cleared) is undone
  // first, as the cycle's end would have: nothing outside the apply path sees it. (The
  // planners' temporary changes add to the same counts and are undone by the same amounts:
  // they need not release it.)
  void HoldTemporary(int64_t token, int64_t workload);
  // Undoes what is still held (the end of a cycle's apply).
  void ReleaseHeld() {
    if (held_ > 0) ReleaseAllHeld();
  }

  // The tree a carried placement was computed on while it is still its flavor's (built at the
  // placement's generation, here); null once the flavor was rebuilt or for another inventory's.
  TopologyFlavor* CurrentTree(const PlacedTopology& placed) const;

  // Bumped on every change that rebuilds the flavors (nodes, topologies, flavors; not pods).
  int64_t generation() const { return generation_; }

  // Kueue's TASBalancedPlacement gate for every flavor's placements (TopologyFlavor::
  // set_balanced_placement); set once, from the scheduler's configuration.
  void set_balanced_placement(bool on);

 private:
  struct FlavorEntry {
    ResourceFlavorSpec spec;
    std::unique_ptr<TopologyFlavor> built;
    int64_t built_generation = -1;
  };
  struct Temporary {
    int64_t token = 0;
    // 0 once an admission took it over.
    int sign = 0;
    WorkloadTopologyUsage usage;
    // HoldTemporary's workload (-1: none), and whether it was undone since (held).
    int64_t held_for = -1;
    bool held = false;
  };
  void ReleaseAllHeld();
  // Empties the workload's slot for reuse and forgets the workload.
  void FreeSlot(absl::flat_hash_map<int64_t, uint32_t>::iterator it);
  // Every change that rebuilds the flavors comes through here, while the old trees still exist.
  void Invalidate();
  // The entry whose tree computed `placed`, while that tree is current.
  const std::pair<const std::string, FlavorEntry>* EntryOf(const PlacedTopology& placed) const;
  // Names the carried placements of `usage` from their trees (a rebuild replays names).
  void NamePlaced(WorkloadTopologyUsage& usage) const;
  void ApplyPodToBuilt(const PodUsage& pod, int sign);
  void Build(FlavorEntry& entry);
  // The flavors a placement in `flavor` counts on.
  template <typename Fn>
  void ForEachSharing(absl::string_view flavor, Fn fn);
  // Adds (+1) or removes (-1) a workload's placements on the flavors built now.
  void ApplyToBuilt(const WorkloadTopologyUsage& usage, int sign);
  void ApplyToBuilt(const TopologyUsage& usage, int sign);
  void ApplyToBuilt(const PlacedTopology& placed, int sign);
  // Replays a workload's placements on a flavor built after they were applied.
  void Replay(FlavorEntry& entry, const WorkloadTopologyUsage& usage, int sign) const;
  // Whether a flavor built for `entry` counts a placement in `flavor`.
  bool Counts(const FlavorEntry& entry, absl::string_view flavor, bool hostname) const;

  std::map<std::string, TopologySpec> topologies_;
  std::map<std::string, NodeSpec> nodes_;
  std::map<std::string, PodUsage> pods_;
  std::map<std::string, FlavorEntry, std::less<>> flavors_;
  // Admitted placements, replayed on a rebuild: each workload's in a slot of `slots_` that
  // stays put (a deque never moves its elements, so growing costs no moves of the placements;
  // every admission adds one), found by `by_workload_`. A cleared slot is empty (replaying it
  // counts nothing) and listed in `free_slots_` for the next workload.
  absl::flat_hash_map<int64_t, uint32_t> by_workload_;
  std::deque<WorkloadTopologyUsage> slots_;
  std::vector<uint32_t> free_slots_;
  // The planners' temporary changes not yet undone, replayed on a rebuild after the admitted
  // ones. Undone in reverse order, so an undo finds its token at the back.
  std::vector<Temporary> temporary_;
  // How many of them are held (a cycle's admissions: usually a few).
  int held_ = 0;
  int64_t next_token_ = 0;
  int64_t generation_ = 0;
  bool balanced_placement_ = false;
  bool respect_preferred_ = false;
};

}  // namespace tollgate::core
