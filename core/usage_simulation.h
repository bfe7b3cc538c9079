#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"
#include "core/cluster_state.h"
#include "core/quota_tree.h"
#include "core/topology_inventory.h"
#include "core/workload.h"

namespace tollgate::core {

// Temporarily removes workloads' usage from the quota tree and puts it back on destruction (or
// Restore), so the planners can ask "would it fit without them?" on the live tree. Not
// thread-safe.
class UsageSimulation {
 public:
  explicit UsageSimulation(ClusterState& state) : state_(state) {}
  ~UsageSimulation() { Restore(); }
  UsageSimulation(const UsageSimulation&) = delete;
  UsageSimulation& operator=(const UsageSimulation&) = delete;

  void RemoveWorkload(const Workload& wl);
  void AddWorkloadBack(const Workload& wl);
  // Adds usage to a ClusterQueue (for a workload planned this cycle).
  void AddUsage(QuotaNode& node, const std::map<FrId, int64_t>& usage);
  void RemoveUsage(QuotaNode& node, const std::map<FrId, int64_t>& usage);
  // The same for usage sorted by FrId (a flavor assignment's).
  void AddUsage(QuotaNode& node, absl::Span<const std::pair<FrId, int64_t>> usage);
  // Removes a quota usage as a held workload's (Workload::quota_usage) from its ClusterQueue's
  // node, without its topology placement: what a fair-sharing share sees of a victim.
  void RemoveQuotaUsage(QuotaNode& node, const std::vector<std::pair<FrId, int64_t>>& usage);
  // Topology placements of a workload planned this cycle (sign +1) or taken away (-1).
  void ApplyTopologyUsage(WorkloadTopologyUsage&& usage, int sign);
  // The last placements added (ApplyTopologyUsage, +1) are held past Restore for the admission
  // of `workload` (TopologyInventory::HoldTemporary).
  void HoldLastTopologyUsage(WorkloadId workload);
  void Restore();

 private:
  struct Change {
    QuotaNode* node;
    FrId fr;
    int64_t delta;
  };
  void Apply(QuotaNode& node, FrId fr, int64_t delta);

  ClusterState& state_;
  // Inline for a cycle's handful of heads: growing it from empty in every cycle took the
  // allocator's slow path.
  absl::InlinedVector<Change, 16> log_;
  // The inventory's tokens of the topology changes, to undo in reverse. Inline for a few: a
  // cycle's simulation takes one per head placed, and most others take one or two.
  absl::InlinedVector<int64_t, 8> topology_log_;
};

}  // namespace tollgate::core
