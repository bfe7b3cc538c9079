#pragma once

// Kueue's node controller rule (pkg/controller/tas/node_controller.go, getWorkloadStatus): when a
// workload's placement on one node has failed, so that its pods there are placed again or the
// workload is evicted (docs/topology.md, "Node failures").

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "core/topology.h"
#include "core/topology_inventory.h"
#include "core/types.h"
#include "core/workload.h"

namespace tollgate::core {

// Kueue's NodeFailureDelay (pkg/controller/tas/constants.go): with the deprecated gate
// TASReplaceNodeDueToNotReadyOverFixedTime, how long a node may be not ready before the
// placements on it fail whatever their pods do.
inline constexpr absl::Duration kNodeFailureDelay = absl::Seconds(30);

// When a not-ready node's kNodeFailureDelay runs out (its not_ready_since plus the delay);
// nullopt for a ready node or one without a not-ready time.
std::optional<absl::Time> NodeFailureDelayEnds(const NodeSpec& node);

// The taint Kubernetes puts on a cordoned node.
inline constexpr char kUnschedulableTaintKey[] = "node.kubernetes.io/unschedulable";

// How the workload's pod sets placed on a node stand with one NoSchedule or NoExecute taint
// (Kueue's classifyTaints).
enum class TaintToleration {
  // Every such pod set tolerates it with a toleration that has no tolerationSeconds.
  kPermanently,
  // Every one tolerates it, some only for tolerationSeconds (NoExecute evicts them later).
  kTemporarily,
  // Some pod set does not tolerate it.
  kNot,
};
TaintToleration ClassifyTaint(const Taint& taint,
                              const std::vector<const std::vector<Toleration>*>& pod_sets);

// Whether the workload's placement on `host` has failed; `node` is the inventory's node of that
// hostname, null when it is gone.
// * Gone: failed at once.
// * Not ready: failed once none of the workload's pods run there (`node->running_workloads`,
//   Kueue's TASReplaceNodeOnPodTermination). With `fixed_delay_at` (the time to judge at, given
//   when Kueue's deprecated TASReplaceNodeDueToNotReadyOverFixedTime is on) also failed once
//   the node has been not ready for kNodeFailureDelay, whether or not pods run there.
// * Ready, with a NoSchedule or NoExecute taint that a pod set placed there does not tolerate, or
//   tolerates only for a while (Kueue's TASReplaceNodeOnNodeTaints): likewise failed once none of
//   its pods run there. The pod sets' tolerations are their own, their flavors' and their
//   admission checks' podSetUpdates' (Kueue's podSetsWithEffectiveTolerationsOnNode).
// A cordoned (unschedulable) node counts as tainted `node.kubernetes.io/unschedulable:NoSchedule`
// (KEP-2724; Kubernetes adds that taint itself). When the tolerations cannot be merged (two
// checks disagree) nothing is decided, as Kueue leaves the health unknown.
bool PlacementFailedOn(const NodeSpec* node, const std::string& host, const Workload& wl,
                       const std::map<std::string, ResourceFlavorSpec>& flavors,
                       std::optional<absl::Time> fixed_delay_at = std::nullopt);

// Kueue's nodeMultipleFailuresEvictionMessageFormat (pkg/controller/tas/node_controller.go): the
// eviction of a workload that already has an unhealthy node when another of its nodes fails.
inline constexpr char kMultipleNodeFailuresMessage[] =
    "Workload eviction triggered due to multiple TAS assigned node failures, including: ";

// Kueue's HasTopologyAssignmentWithUnhealthyNode without its admitted check: some pod set's
// placement names a node of the workload's unhealthy_nodes.
bool PlacedOnUnhealthyNode(const Workload& wl);

// Kueue's failed-node replacement (the scheduler's second pass after a node failure,
// findReplacementAssignment in tas_flavor_snapshot.go): the workload's admission with the pods of
// its unhealthy nodes placed again, inside the domain each pod set requires and keeping its other
// domains; or, when some pod set has no replacement, why not.
struct NodeReplacement {
  std::optional<Admission> admission;
  std::string failure;
};
NodeReplacement ReplaceUnhealthyNodes(const Workload& wl, bool topology_only,
                                      TopologyInventory& inventory);

// Kueue's second-pass queue backoff (pkg/cache/queue/second_pass_queue.go: 1 s doubling, at most
// 30 s): how long a workload whose replacement failed `failures` times waits before the next try.
absl::Duration SecondPassRetryDelay(int failures);

}  // namespace tollgate::core
