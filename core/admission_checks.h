#pragma once

// Kueue's admission checks (two-phase admission, KEP-993) as pure rules over the model: which
// checks a workload carries, how their states are kept in sync with its ClusterQueue, what an
// eviction does to them, when a Retry may requeue, Kueue's messages, whether a ClusterQueue's
// checks make it inactive, and whether the checks' podSetUpdates agree with each other and with
// the workload. ClusterState (admission_check_lifecycle.cc) applies them. docs/admission-checks.md
// describes the whole state machine.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "core/types.h"
#include "core/workload.h"

namespace tollgate::core {

// Kueue's controller names with extra rules on a ClusterQueue (MultiKueue, ProvisioningRequest).
inline constexpr absl::string_view kMultiKueueControllerName = "kueue.x-k8s.io/multikueue";
// The label a MultiKueue copy carries with its manager's origin (Kueue's MultiKueueOriginLabel).
inline constexpr absl::string_view kMultiKueueOriginLabel = "kueue.x-k8s.io/multikueue-origin";
inline constexpr absl::string_view kProvisioningRequestControllerName =
    "kueue.x-k8s.io/provisioning-request";

// Kueue's reason of an eviction by a Retry check, and the Evicted reason of a deactivation by a
// Rejected one (Deactivated with the underlying cause AdmissionCheck).
inline constexpr absl::string_view kEvictedByAdmissionCheck = "AdmissionCheck";
inline constexpr absl::string_view kDeactivatedByAdmissionCheck = "DeactivatedDueToAdmissionCheck";

// An AdmissionCheck as ClusterState holds it: the spec as applied and the Active condition its
// controller last reported (a check nobody reported on is inactive, as in Kueue).
struct AdmissionCheckRuntime {
  AdmissionCheckSpec spec;
  // Type "Active"; unset until the controller first reports.
  std::optional<Condition> active;
  bool IsActive() const { return active.has_value() && active->status; }
  bool operator==(const AdmissionCheckRuntime&) const = default;
};

// Every flavor named by the queue's resource groups.
std::set<std::string> AllFlavors(const ClusterQueueSpec& cq);

// The checks the ClusterQueue asks of its workloads, each with the flavors it applies to (an
// entry without onFlavors applies to every flavor of the queue).
std::map<std::string, std::set<std::string>> ChecksByFlavors(const ClusterQueueSpec& cq);

// Kueue's AdmissionChecksForWorkload, sorted by name: with an admission, the checks whose
// flavors meet the assigned ones; without one, only those covering every flavor of the queue
// (the flavors are not known yet).
std::vector<std::string> ChecksForWorkload(const ClusterQueueSpec& cq, const Admission* admission);

// Kueue's delayed topology requests (flavorsWithProvReqAdmissionCheck,
// hasMultiKueueAdmissionCheck): the flavors of `cq` whose topology placement waits until the
// workload's checks are Ready: those a ProvisioningRequest check applies to (the pods are placed on
// the nodes it provisioned), and every flavor when a MultiKueue check is set (the worker cluster
// places them). Missing checks count for nothing.
std::set<std::string> DelayedTopologyFlavors(
    const ClusterQueueSpec& cq, const std::map<std::string, AdmissionCheckRuntime>& checks);
// The ClusterQueue names a MultiKueue check (that exists).
bool HasMultiKueueCheck(const ClusterQueueSpec& cq,
                        const std::map<std::string, AdmissionCheckRuntime>& checks);

// Makes `checks` hold exactly `names` (sorted by name): a missing one is added as Pending at
// `now`, one not named any more is dropped, the others keep their state. Returns whether
// anything changed.
bool SyncCheckStates(std::vector<AdmissionCheckState>& checks,
                     const std::vector<std::string>& names, absl::Time now);

bool AllChecksReady(const std::vector<AdmissionCheckState>& checks);
bool AnyCheckIn(const std::vector<AdmissionCheckState>& checks, CheckState state);
AdmissionCheckState* FindCheck(std::vector<AdmissionCheckState>& checks, absl::string_view name);
const AdmissionCheckState* FindCheck(const std::vector<AdmissionCheckState>& checks,
                                     absl::string_view name);

// Kueue's message naming the checks in `state`, by name, each with its message:
// `AdmissionChecks in Retry state: "a" (no capacity); "b"`.
std::string ChecksInStateMessage(const std::vector<AdmissionCheckState>& checks, CheckState state);

// Kueue's reset when a workload loses its quota: every check that is not Pending becomes
// Pending with the message "Reset to Pending after eviction. Previously: <state>", its
// podSetUpdates dropped, its requeueAfterSeconds kept; a Retry counts one more retry (the
// others' counts are dropped, as Kueue does). Returns whether anything changed.
bool ResetChecksAfterEviction(std::vector<AdmissionCheckState>& checks, absl::Time now);

// The latest time a Retry check asked the workload to wait until (its transition plus its
// requeueAfterSeconds), or InfinitePast when none asked.
absl::Time LatestRetryTime(const std::vector<AdmissionCheckState>& checks);

// Kueue's inactive reasons for a ClusterQueue's checks: AdmissionCheckNotFound,
// AdmissionCheckInactive, and MultiKueue's own rules (at most one MultiKueue check, for every
// flavor, and not together with a ProvisioningRequest check). Empty when the checks allow it
// to admit.
struct CheckInactivity {
  // Kueue's reasons in its order; the ClusterQueue's condition reports the first.
  std::vector<std::string> reasons;
  // One clause per reason, e.g. "references missing AdmissionCheck(s): a,b".
  std::vector<std::string> messages;
  bool empty() const { return reasons.empty(); }
};
CheckInactivity ClusterQueueCheckInactivity(
    const ClusterQueueSpec& cq, const std::map<std::string, AdmissionCheckRuntime>& checks);

// Kueue's merge of what a started workload's pods get: per pod set, its own nodeSelector and
// tolerations, its assigned flavors' nodeLabels and tolerations (`flavors` by name; an unknown
// flavor adds nothing), then every check's podSetUpdates in name order. Additive: a key set to
// two different values is INVALID_ARGUMENT naming the check, the field and both values; equal
// tolerations are kept once. Without an admission the flavors are left out. `last_check`, when
// set, is merged after the others, so a conflict is reported as that check's.
absl::StatusOr<std::vector<PodSetInfo>> MergePodSetUpdates(
    const WorkloadSpec& spec, const WorkloadStatus& status,
    const std::map<std::string, ResourceFlavorSpec>& flavors, absl::string_view last_check = "");

// False when MergePodSetUpdates cannot report a conflict for the workload: no check updates its
// pod sets and none of its assigned flavors adds node labels (a pod set's own nodeSelector
// cannot conflict with itself). Lets an admission skip the merge it would throw away.
bool PodSetUpdatesMayConflict(const WorkloadStatus& status,
                              const std::map<std::string, ResourceFlavorSpec>& flavors);

}  // namespace tollgate::core
