#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"
#include "core/boxed.h"
#include "core/cluster_state.h"
#include "core/quota_tree.h"
#include "core/topology_inventory.h"
#include "core/workload.h"

namespace tollgate::core {

struct WorkloadTopologyRequests;
// Deletes the requests where their type is complete (topology_scheduling.h), so this header
// needs only its declaration.
struct TopologyRequestsDeleter {
  void operator()(const WorkloadTopologyRequests* requests) const;
};

// Kueue's FlavorAssignmentMode: ordered from worst to best.
enum class FlavorMode { kNoFit = 0, kPreempt = 1, kFit = 2 };

enum class PreemptionPossibility { kNoCandidates, kPreempt, kReclaim };

// Why a flavor did not fit, ordered as Kueue's reasonSeverity ranks them (least severe first):
// within a resource group the least severe flavor's cause is the group's (another flavor might
// do), across groups and pod sets the most severe is the workload's (every one must fit).
enum class NoFitCause : uint8_t {
  kNone = 0,
  kTopologyPlacementFailed,
  kWaitingForQuota,
  kExceedsMaxQuota,
  kNoMatchingFlavor,
};

// Answers "could preemption make `quantity` of `fr` fit for this workload, and at what
// borrowing level?" (Kueue's preemption oracle). Implemented by the preemption planner.
class PreemptionOracle {
 public:
  virtual ~PreemptionOracle() = default;
  virtual std::pair<PreemptionPossibility, int> SimulatePreemption(FrId fr, int64_t quantity) = 0;
};

// How the flavor of one resource was chosen (the flavor's name is in PodSetFlavors::flavors).
struct FlavorChoice {
  FrId fr = -1;
  FlavorMode mode = FlavorMode::kNoFit;
  int borrow = 0;
};

// Quota per flavor-resource, sorted by FrId: the shape of Workload::quota_usage, so an admitted
// assignment's usage moves into its workload whole.
using FrUsage = std::vector<std::pair<FrId, int64_t>>;

// Adds `amount` to `fr` in a sorted FrUsage.
void AddFrUsage(FrUsage& usage, FrId fr, int64_t amount);
// `fr`'s amount in a sorted FrUsage (0 when absent).
int64_t FrUsageOf(const FrUsage& usage, FrId fr);

// One pod set's assignment, laid out as the admission's PodSetAssignment (its name, count,
// flavors, totals and topology move into it without a copy) plus how each flavor was chosen.
struct PodSetFlavors {
  std::string name;
  int32_t count = 0;
  // Resource -> chosen flavor, sorted by resource.
  std::vector<std::pair<std::string, std::string>> flavors;
  // Parallel to `flavors`.
  absl::InlinedVector<FlavorChoice, 2> choices;
  // Why the pod set does not simply fit (Kueue's Status reasons); empty when it fits.
  std::vector<std::string> reasons;
  // Kueue's FlavorAssignmentAttempts, reduced to what the pending reason needs (a few bytes
  // copied with every pod set, the admitted ones too): whether any flavor was tried, and over
  // the resource groups tried, each with the least severe cause among its flavors that did not
  // fit, the most severe group's cause, that group, and the most severe of the others'.
  bool flavor_tried = false;
  // The assignment failed with an error rather than a reason (Kueue's Status.err: the pod set
  // got no single topology flavor), whose text is the last of `reasons`. Kueue's message is
  // then that error alone.
  bool failed_with_error = false;
  NoFitCause no_fit_cause = NoFitCause::kNone;
  NoFitCause other_groups_no_fit_cause = NoFitCause::kNone;
  int16_t no_fit_group = -1;
  // Totals for the set (count x per pod, plus `pods` when covered), sorted by resource.
  ResourceAmounts requests;
  // Where the pods go when the pod set is placed on a topology flavor, by names. Unset while
  // the placement is carried by `topology_leaves` alone: the assigner leaves it to ToAdmission
  // to name the placement (within the cycle, while its tree is current), since most placements
  // of a cycle are dropped or only checked.
  Boxed<TopologyAssignment> topology = {};
  // The same placement on the tree that computed it (no tree: not carried), for the cycle's
  // checks and usage and the admission's (AdmissionDecision::topology_leaves).
  PlacedTopology topology_leaves;

  // Whether the pod set is placed on a topology (by names, or carried).
  bool Placed() const { return topology.has_value() || topology_leaves.tree != nullptr; }
  FlavorMode Mode() const;
  // Files the cause of resource group `group` (each group once).
  void AddGroupNoFit(int group, NoFitCause cause);
  // The placement on the flavor of resource group `group` failed even on empty nodes: that
  // group's cause becomes TopologyPlacementFailed whatever its other flavors' were.
  void SetTopologyPlacementFailed(int group);
  // Kueue's updateMode: every flavor of the pod set takes `mode`.
  void SetMode(FlavorMode mode);
};

struct FlavorAssignment {
  std::vector<PodSetFlavors> pod_sets;
  // Highest borrowing level among the chosen flavors (0: no borrowing).
  int borrowing = 0;
  // Quota the workload would take, per flavor-resource (zero requests excluded).
  FrUsage usage;
  // The placement requests the topology pod sets were placed by (null: none), built from the
  // flavors above; they view the workload's spec. Kept so that placing the same assignment again
  // within its cycle (AssignTopologyAgain, most heads of a cycle that share nodes) does not
  // build them again.
  std::unique_ptr<const WorkloadTopologyRequests, TopologyRequestsDeleter> topology_requests;
  // Where the search of each pod set's resource group stopped short of the group's last flavor
  // (Kueue's LastState): what the workload resumes from if it stays pending.
  absl::InlinedVector<FlavorScanStop, 1> scan_stops;

  FlavorMode RepresentativeMode() const;
  // Kueue's pending message: "couldn't assign flavors to pod set NAME: reasons", or, once a pod
  // set failed with an error, "failed to assign flavors to pod set NAME: error" alone.
  std::string Message() const;
  // Kueue's resolveNoFitReason, for an assignment that does not fit: the most severe cause over
  // the pod sets that do not fit (kNone when none can be named, e.g. an invalid topology
  // request). Read only for workloads that stay pending.
  NoFitCause ResolveNoFitCause() const;
  // FrIds whose flavor needs preemption.
  std::vector<FrId> ResourcesNeedingPreemption() const;
  // Both name the carried placements that have no names yet: while their trees are current
  // (within the cycle that placed them).
  Admission ToAdmission(const std::string& cluster_queue) const&;
  // Moves the pod sets' names, flavors and totals into the admission (the carried placements
  // stay in `topology_leaves`).
  Admission ToAdmission(const std::string& cluster_queue) &&;
};

// Chooses a flavor for every resource of every pod set of one workload in one ClusterQueue,
// following Kueue's FlavorAssigner: flavors in the queue's order, one flavor per resource group
// and pod set, pod sets in spec order seeing the earlier ones' usage, and flavorFungibility
// deciding whether to stop at a flavor that needs borrowing or preemption.
// Holds references only for the duration of one cycle. Not thread-safe.
class FlavorAssigner {
 public:
  FlavorAssigner(const ClusterState& state, const ClusterQueueRuntime& cq, const Workload& wl,
                 PreemptionOracle& oracle);

  // `counts` reduces pod counts (partial admission); empty means the full counts.
  FlavorAssignment Assign(const std::vector<int32_t>& counts);
  // The same as Assign({}) of `wl` in `cq` for an assignment it returned that fit, while the
  // usage its quota part read is unchanged: the topology placed again on the nodes as they are
  // now (no preemption is simulated: placing asks no oracle).
  static FlavorAssignment AssignTopologyAgain(const ClusterState& state,
                                              const ClusterQueueRuntime& cq, const Workload& wl,
                                              FlavorAssignment fitting);

  // Kueue's NominationMapping: an assignment recomputed within its cycle (another head took its
  // nodes, or its preemption targets overlap another's) considers only the flavors `nominated`
  // chose for each pod set's resource group, so the recomputation never switches flavors.
  // `nominated` must outlive the assigner.
  void PinToNomination(const FlavorAssignment& nominated) { nominated_ = &nominated; }
  // Kueue's LastAssignment: each pod set's resource group starts its search after the flavor
  // `progress` says the last evaluation stopped at. `progress` must outlive the assigner.
  void ResumeFrom(const FlavorScanProgress& progress) { resume_ = &progress; }

 private:
  struct ResourceResult {
    // For the whole group; `choices` parallel to `flavors`.
    std::vector<std::pair<std::string, std::string>> flavors;
    absl::InlinedVector<FlavorChoice, 2> choices;
    std::vector<std::string> reasons;
    bool fits = false;
    // The flavor the search stopped at, when flavors were chosen and later ones are left
    // untried (-1: none left).
    int32_t last_tried_flavor = -1;
    // Whether any flavor was tried (not skipped by a nomination), and the least severe cause
    // among those that did not fit (kNone: all fit).
    bool tried = false;
    NoFitCause least_no_fit = NoFitCause::kNone;
  };
  // `groups` holds each request's resource group index (-1: not covered); the flavors are
  // chosen for the requests of group `group_index`. `pod_sets` are the spec indices the requests
  // are for: one pod set, or a pod-set group whose requests are summed (Kueue's
  // findFlavorForPodSets), every one of which the flavor must suit.
  ResourceResult FindFlavorForPodSets(absl::Span<const size_t> pod_sets,
                                      const ResourceAmounts& requests, absl::Span<const int> groups,
                                      int group_index, const FrUsage& assigned_usage);
  // Resource group -> the flavor its search stopped at (FlavorScanStop without the pod set).
  using ScanStops = absl::InlinedVector<std::pair<int, int32_t>, 1>;
  // The pod set's name, count and total requests, before any flavor is chosen.
  PodSetFlavors PodSetWithRequests(size_t pod_set_index, const std::vector<int32_t>& counts) const;
  // Chooses one flavor per resource group for `requests`, the requests of the pod sets
  // `pod_sets` (spec indices), seeing the usage the assignment's earlier pod sets take: into
  // `out`'s flavors, choices and reasons, and where the searches stopped into `scan_stops`.
  // False when some resource got no flavor (the assignment stops there).
  bool AssignResourceGroups(absl::Span<const size_t> pod_sets, const ResourceAmounts& requests,
                            const FrUsage& assigned_usage, PodSetFlavors& out,
                            ScanStops& scan_stops);
  // Adds a pod set's quota and borrowing level to the assignment's.
  static void AddPodSetUsage(const PodSetFlavors& ps, FlavorAssignment& assignment);
  // Assign for a workload without pod-set groups: pod set by pod set, in spec order.
  FlavorAssignment AssignPodSetByPodSet(const std::vector<int32_t>& counts);
  // Assign for a workload with pod-set groups (Kueue's grouped FlavorAssigner): a group's pod
  // sets get their flavors jointly, for the sum of their requests.
  FlavorAssignment AssignWithGroups(const std::vector<int32_t>& counts);
  // Whether a pinned assigner may consider `flavor` for the group whose first requested
  // resource is `resource`.
  bool Nominated(size_t pod_set_index, const std::string& resource,
                 const std::string& flavor) const;
  // Empty when the flavor can host the pod set; else the reason.
  std::string CheckFlavorForPodSet(const std::string& flavor, const PodSetSpec& pod_set,
                                   const ResourceGroupSpec& group) const;
  // Topology Aware Scheduling after quota (Kueue's flavor assigner): places the topology pod
  // sets of a fitting assignment, turning a pod set whose topology does not fit into Preempt,
  // and into NoFit when it would not fit even on empty nodes.
  void AssignTopology(FlavorAssignment& assignment) const;

  const ClusterState& state_;
  const ClusterQueueRuntime& cq_;
  const Workload& wl_;
  PreemptionOracle& oracle_;
  // Kueue's IsTASOnly for the queue: pod sets without a request get an implied one.
  const bool topology_only_;
  // resources.transformations or quotaCheckStrategy IgnoreUndeclared is set: the pod sets'
  // quota requests are computed (core/quota_requests.h) rather than read from the spec.
  const bool adjusts_requests_;
  // Set by PinToNomination.
  const FlavorAssignment* nominated_ = nullptr;
  // Set by ResumeFrom.
  const FlavorScanProgress* resume_ = nullptr;
};

// The pending reason Kueue's scheduler writes for a workload whose assignment does not fit.
PendingReason PendingReasonOf(NoFitCause cause);

// Kueue's classical.FindHeightOfLowestSubtreeThatFits: the borrowing level needed for `val`
// more of `fr`, and whether reclaiming within the hierarchy may help.
std::pair<int, bool> FindHeightOfLowestSubtreeThatFits(const QuotaNode& cq, FrId fr, int64_t val);

}  // namespace tollgate::core
