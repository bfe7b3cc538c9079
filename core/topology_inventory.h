#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
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
  // its requests and one `pods` on its node. Reporting a pod again replaces it.
  absl::Status ReportPod(std::string pod, std::string node, ResourceAmounts requests);
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

  // --- Placements of workloads holding quota, by workload id: Set replaces what the workload
  // had (so re-adding after a quota-tree rebuild counts nothing twice), Clear drops it.
  void SetWorkloadUsage(int64_t workload, std::vector<TopologyUsage> usage);
  void ClearWorkloadUsage(int64_t workload);
  // A temporary change by the planners (sign +1 adds, -1 removes); they undo it themselves, in
  // reverse order.
  void ApplyUsage(const std::vector<TopologyUsage>& usage, int sign);

  // Bumped on every change that rebuilds the flavors (nodes, topologies, flavors; not pods).
  int64_t generation() const { return generation_; }

 private:
  struct FlavorEntry {
    ResourceFlavorSpec spec;
    std::unique_ptr<TopologyFlavor> built;
    int64_t built_generation = -1;
  };
  void Invalidate() { ++generation_; }
  void ApplyPodToBuilt(const PodUsage& pod, int sign);
  void Build(FlavorEntry& entry);
  // The flavors a placement in `flavor` counts on.
  template <typename Fn>
  void ForEachSharing(absl::string_view flavor, Fn fn);
  // Adds (+1) or removes (-1) a placement's usage on the flavors built now.
  void ApplyToBuilt(const TopologyUsage& usage, int sign);
  // Records a planner's temporary change for a rebuild: the opposite change still recorded
  // (the undo) cancels it, else it is kept.
  void RecordTemporary(const TopologyUsage& usage, int sign);
  // Whether a flavor built for `entry` counts a placement in `flavor`.
  bool Counts(const FlavorEntry& entry, absl::string_view flavor, bool hostname) const;

  std::map<std::string, TopologySpec> topologies_;
  std::map<std::string, NodeSpec> nodes_;
  std::map<std::string, PodUsage> pods_;
  std::map<std::string, FlavorEntry, std::less<>> flavors_;
  // Admitted placements, replayed on a rebuild.
  std::map<int64_t, std::vector<TopologyUsage>> by_workload_;
  // The planners' temporary changes not yet undone, with their sign, replayed on a rebuild
  // after the admitted ones. Undone in reverse order, so an undo matches at the back: no keyed
  // lookup per change (this used to be a map keyed by the placement's strings).
  std::vector<std::pair<TopologyUsage, int>> temporary_;
  int64_t generation_ = 0;
};

}  // namespace tollgate::core
