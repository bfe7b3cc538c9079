#pragma once

// The glue between Topology Aware Scheduling and the scheduler: which pod sets ask for a
// topology, the placement requests of a flavor assignment, and the usage a workload's placement
// takes (Kueue's tas_flavorassigner.go and the TAS parts of the scheduler).

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/flavor_assigner.h"
#include "core/topology_inventory.h"
#include "core/types.h"
#include "core/workload.h"

namespace tollgate::core {

// Kueue's IsTASOnly: the ClusterQueue has flavors and every one names a topology; its pod sets
// then get an implied unconstrained request.
bool IsTopologyOnly(const ClusterQueueSpec& cq, const TopologyInventory& inventory);
// Kueue's IsExplicitlyRequestingTAS.
bool ExplicitlyRequestsTopology(const PodSetSpec& pod_set);
// Kueue's isTASRequested: explicitly, or implied by a topology-only ClusterQueue.
bool TopologyRequested(const PodSetSpec& pod_set, bool topology_only);

// What placing `count` pods of `pod_set` (named `name` in the admission) asks of a topology
// flavor: its requests, level request (implied in a topology-only ClusterQueue), node selector,
// tolerations and required node affinity. Views `pod_set` and `name`, which must outlive it.
TopologyPlacementRequest PlacementRequestFor(const PodSetSpec& pod_set, const std::string& name,
                                             int32_t count, bool topology_only);

// Kueue's checkPodSetAndFlavorMatchForTAS: empty when the flavor can serve the pod set, else why
// not. `covered` are the resources of the flavor's resource group.
std::string CheckTopologyFlavor(const PodSetSpec& pod_set, const ResourceFlavorSpec& flavor,
                                const std::vector<std::string>& covered, bool topology_only,
                                TopologyInventory& inventory);

// The placement requests of an assignment, by topology flavor, with the index of each request's
// pod set; `errors` are pod sets whose request cannot be built (Kueue's psError texts). Pod sets
// on a flavor of `delayed_flavors` (DelayedTopologyFlavors) get no request now: Kueue's
// DelayedTopologyRequest Pending, placed by the second pass (DelayedTopologyRequestsOf). Inline
// for one flavor and one pod set (the usual workload): these are built for every evaluation of a
// head.
struct WorkloadTopologyRequests {
  struct FlavorRequests {
    std::string flavor;
    absl::InlinedVector<TopologyPlacementRequest, 1> requests;
    // The index of each request's pod set.
    absl::InlinedVector<size_t, 1> pod_set_index;
  };
  // In flavor-name order, each flavor once (a workload names one or two: a sorted vector, not a
  // map).
  absl::InlinedVector<FlavorRequests, 1> by_flavor;
  std::vector<std::pair<size_t, std::string>> errors;
  // The node selectors and tolerations of the delayed second pass, which merges its checks'
  // updates into the pod set's: its requests view them here.
  struct Filters {
    Labels node_selector;
    std::vector<Toleration> tolerations;
  };
  std::vector<std::unique_ptr<Filters>> merged_filters;
  bool empty() const { return by_flavor.empty() && errors.empty(); }
  // The entry of `flavor`, added in order when absent.
  FlavorRequests& Of(absl::string_view flavor);
};
// Kueue's resolvePodSetFlavors for a pod set that requests none of the queue's resources (an LWS
// leader) and so got no flavor: in a pod-set group it takes the group's topology flavors (each
// resource's first entry among the group's other pod sets, with its choice), so its admission
// names them. Pod sets with flavors are left as they are.
void InheritGroupTopologyFlavors(const WorkloadSpec& spec, FlavorAssignment& assignment,
                                 const TopologyInventory& inventory);

WorkloadTopologyRequests TopologyRequestsFor(const Workload& wl, const FlavorAssignment& assignment,
                                             bool topology_only, const TopologyInventory& inventory,
                                             const std::set<std::string>& delayed_flavors = {});

// Kueue's second pass for delayed topology requests: the placement requests of the admitted pod
// sets of `wl` (indexes into its admission's pod sets) that request topology on a topology flavor
// and have no assignment yet, each with the node selector and tolerations its Ready checks'
// podSetUpdates add (the provisioned nodes' labels). Empty when there are none.
WorkloadTopologyRequests DelayedTopologyRequestsOf(const Workload& wl, bool topology_only,
                                                   const TopologyInventory& inventory);

// Places every flavor's requests in flavor-name order (Kueue's
// FindTopologyAssignmentsForWorkload). On failure, the pod set and Kueue's reason. Without
// `names`, the assignments stay empty: the leaves carry each placement (TopologyFlavor::
// AssignmentOf names it while its tree is current).
struct TopologyOutcome {
  struct Placed {
    size_t pod_set = 0;
    // Unset when placed without names.
    Boxed<TopologyAssignment> assignment;
    // The same placement on the tree that computed it.
    PlacedTopology leaves;
  };
  bool ok = true;
  size_t failed_pod_set = 0;
  std::string reason;
  absl::InlinedVector<Placed, 1> placed;
};
TopologyOutcome PlaceTopology(const WorkloadTopologyRequests& requests,
                              TopologyInventory& inventory, bool simulate_empty, bool names = true);

// The usage a workload's placements take (pod sets with a topology assignment), by names.
std::vector<TopologyUsage> TopologyUsageOf(const Workload& wl, const TopologyInventory& inventory);
// The same for an admission being applied whose placements were carried from the cycle that
// planned them (AdmissionDecision::topology_leaves): by their leaves when every placement is
// carried and its tree current, else by names.
WorkloadTopologyUsage AdmittedTopologyUsage(const Workload& wl,
                                            absl::Span<const PlacedTopology> carried,
                                            const TopologyInventory& inventory);
// The same for an assignment not yet admitted: each placement by its leaves while its tree is
// current, else by names.
WorkloadTopologyUsage PlannedTopologyUsage(const WorkloadSpec& spec,
                                           const FlavorAssignment& assignment,
                                           const TopologyInventory& inventory);

// Whether the assignment's placements still fit the current usage (Kueue's Fits with TAS).
bool TopologyFits(const WorkloadSpec& spec, const FlavorAssignment& assignment,
                  TopologyInventory& inventory);

}  // namespace tollgate::core
