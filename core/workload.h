#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "core/boxed.h"
#include "core/topology.h"
#include "core/types.h"

namespace tollgate::core {

// Dense, never reused identity of a workload inside one ClusterState. Ids grow with submission
// order, which makes them the final, deterministic tie-breaker in every ordering.
using WorkloadId = int64_t;

enum class WorkloadState {
  kPending,
  // Quota is reserved (it counts as used, and the workload may be preempted) but an admission
  // check is not Ready yet: it may not run. Kueue's QuotaReserved without Admitted.
  kQuotaReserved,
  // Quota is reserved and every admission check is Ready: it may run.
  kAdmitted,
  // Preempted or drained; keeps its quota until the adapter reports its pods stopped.
  kEvicting,
  kFinished,
};

const char* WorkloadStateName(WorkloadState state);

struct PodSetAssignment {
  std::string name;
  int32_t count = 0;
  // Resource -> flavor, sorted by resource.
  std::vector<std::pair<std::string, std::string>> flavors;
  // Resource -> total for the pod set (count x per-pod request), sorted by resource.
  ResourceAmounts resource_usage;
  // Where the pods go, for a pod set placed on a topology flavor.
  Boxed<TopologyAssignment> topology_assignment = {};
  bool operator==(const PodSetAssignment&) const = default;
};

struct Admission {
  std::string cluster_queue;
  std::vector<PodSetAssignment> pod_sets;
  // Labels the admitted pods carry for cost attribution: the workload's LocalQueue's labels
  // under the keys SchedulerConfig::local_queue_label_keys_to_copy names, as they were at
  // admission (a later relabelling of the queue does not re-charge running work).
  Labels pod_labels = {};
  bool operator==(const Admission&) const = default;
};

struct Condition {
  std::string type;
  bool status = false;
  std::string reason;
  std::string message;
  absl::Time last_transition_time;
  bool operator==(const Condition&) const = default;
};

// Why a pending workload holds no quota: the reason of its QuotaReserved=False condition, as
// Kueue writes it with UnadmittedWorkloadsObservability (beta, on by default since 0.19). The
// workload's own state (pending, deactivated, on hold) is kept elsewhere; this is only what the
// condition tells a reader about the cause.
enum class PendingReason : uint8_t {
  // Queued and not yet evaluated (submitted, requeued, activated, released from a hold), or a
  // cause the scheduler cannot name.
  kPendingEvaluation,
  // Could fit once quota in its ClusterQueue or cohort is released.
  kWaitingForQuota,
  // No flavor matches its node selector, affinity or tolerations (or covers its resources).
  kNoMatchingFlavor,
  // Asks for more than its ClusterQueue (with what it may borrow) could ever give.
  kExceedsMaxQuota,
  // The quota fits but the topology cannot place its pods even on empty nodes.
  kTopologyPlacementFailed,
  // It preempted (or counts on other heads' preemptions) and waits for the victims to go.
  kWaitingForPreemptedWorkloads,
  // waitForPodsReady.blockAdmission: admitted workloads' pods are not all ready yet.
  kWaitingForPodsReady,
  // Its LocalQueue or ClusterQueue is missing or terminating, or it is not admissible there.
  kMisconfigured,
  // Its LocalQueue or ClusterQueue is stopped or inactive.
  kSuspended,
  // Its kueue.x-k8s.io/admission-gated-by annotation names gates (core/admission_gates.h).
  kAdmissionGated,
};

// Kueue's reason string for `reason` (a literal: no allocation).
absl::string_view PendingReasonName(PendingReason reason);

// Kueue's CheckState: what an admission check's controller says about one workload.
enum class CheckState {
  // Not decided yet (also what every check is reset to when the workload loses its quota).
  kPending,
  // Passed: once every check of a workload holding quota is Ready, it is admitted.
  kReady,
  // Cannot pass now: the workload is evicted and requeued, no earlier than the delay asked for.
  kRetry,
  // Will not pass: the workload is deactivated.
  kRejected,
};

const char* CheckStateName(CheckState state);

// Kueue's PodSetUpdate: what a check adds to one pod set's pods (additive only: a key another
// check or the pod set already sets to a different value is a conflict).
struct PodSetUpdate {
  // The pod set's name.
  std::string name;
  Labels labels;
  Labels annotations;
  Labels node_selector;
  std::vector<Toleration> tolerations;
  bool operator==(const PodSetUpdate&) const = default;
};

// The pod-level values of one pod set once its flavors and its checks' podSetUpdates are
// applied: what an adapter puts on the pods it starts (Kueue's PodSetInfo;
// core/admission_checks.h, MergePodSetUpdates).
struct PodSetInfo {
  std::string name;
  Labels labels;
  Labels annotations;
  Labels node_selector;
  std::vector<Toleration> tolerations;
  bool operator==(const PodSetInfo&) const = default;
};

// Kueue's AdmissionCheckState: one check's state on one workload.
struct AdmissionCheckState {
  // The AdmissionCheck's name.
  std::string name;
  CheckState state = CheckState::kPending;
  // When `state` last changed.
  absl::Time last_transition_time = absl::InfinitePast();
  std::string message;
  // With Retry: requeue the workload no earlier than last_transition_time plus this.
  std::optional<int32_t> requeue_after_seconds;
  // How often the check asked for a retry (counted when Retry resets it to Pending); 0 is
  // Kueue's absent retryCount.
  int32_t retry_count = 0;
  std::vector<PodSetUpdate> pod_set_updates;
  bool operator==(const AdmissionCheckState&) const = default;
};

struct WorkloadEvent {
  absl::Time time;
  std::string reason;
  std::string message;
  bool operator==(const WorkloadEvent&) const = default;
};

// The submitter's own values of the spec fields an operator control changes in place
// (SetActive, SetPriority): a resubmit of the original spec still matches the workload.
struct SubmittedControls {
  bool active = true;
  std::optional<int32_t> priority;
  bool operator==(const SubmittedControls&) const = default;
};

// What most workloads never go through: preemptions, evictions, requeues and checkpoints.
// Kept behind a pointer until first set (core/boxed.h), which saves ~150 bytes per pending
// workload.
struct WorkloadHistory {
  int32_t preemption_count = 0;
  // Evictions by waitForPodsReady.
  int32_t requeue_count = 0;
  std::string last_preemption_reason;
  // The latest preemptions, oldest first (at most kMaxRecentPreemptions), for the ClusterQueue's
  // preemption rate limit.
  std::vector<absl::Time> recent_preemptions;
  // Cooperative preemption: the latest checkpoint the adapter reported; work done before it
  // survives a preemption.
  absl::Time last_checkpoint_time = absl::InfinitePast();
  // When the workload may be queued again after a waitForPodsReady eviction.
  absl::Time requeue_at = absl::InfinitePast();
  // Set when the latest eviction was a pods-ready timeout (requeuingStrategy Eviction orders the
  // workload by this time instead of its creation).
  absl::Time pods_ready_eviction_time = absl::InfinitePast();
  // When the current eviction started (grace period for the adapter's acknowledgement).
  absl::Time evicted_at = absl::InfinitePast();
  // Cooperative preemption: quota is released at this time even without the adapter's report.
  absl::Time eviction_deadline = absl::InfinitePast();
  // Set by the first operator control that changed spec.active or spec.priority.
  std::optional<SubmittedControls> submitted_controls;
  // Kueue's accumulatedPastExecutionTimeSeconds: how long the workload was admitted in its
  // earlier admit-evict cycles, counted against spec.maximumExecutionTimeSeconds. Whole seconds
  // (each cycle truncated, as Kueue), stored in status.accumulatedPastExexcutionTimeSeconds.
  absl::Duration past_execution = absl::ZeroDuration();
  // Kueue's status.reclaimablePods, reported by the adapter: per pod set (by name, sorted),
  // pods that finished for good. An admitted workload holds quota only for the rest, and a
  // pending one asks only for the rest.
  std::vector<std::pair<std::string, int32_t>> reclaimable_pods = {};
  // Kueue's status.unhealthyNodes: nodes of the topology assignment that failed; the scheduler
  // places their pods again (or evicts the workload) and clears the list.
  std::vector<std::string> unhealthy_nodes = {};
  // MultiKueue (docs/multicluster.md): the worker that won the workload (Kueue's
  // status.clusterName), set once per reservation and cleared by an eviction; and the workers
  // nominated for a copy until then.
  std::string cluster_name = {};
  std::vector<std::string> nominated_cluster_names = {};
  // On a worker's copy: the manager declared it the winner (MarkMultiKueueWinner); its job may
  // be created. Set once.
  bool multi_kueue_winner = false;
  // The job's status as its adapter reported it (on a worker's copy), or as the MultiKueue
  // controller mirrored it from the winner (on the manager's workload).
  Boxed<WorkloadPayload> job_status = {};
  // On the manager's workload: each worker's copy as the MultiKueue controller last saw it.
  std::vector<MultiKueueRemoteState> multi_kueue_remotes = {};
  bool operator==(const WorkloadHistory&) const = default;
};

struct WorkloadStatus {
  WorkloadState state = WorkloadState::kPending;
  // The flags sit in the padding after the 4-byte state: that keeps Workload at 448 bytes,
  // inside jemalloc's 448-byte size class instead of the 512-byte one.
  bool pods_ready = false;
  // Deactivated after exceeding backoffLimitCount.
  bool deactivated = false;
  // Kueue's OnHold (QuotaReserved=False, reason OnHold): its job asked to give its quota back
  // and not be queued (a StatefulSet scaled to zero) until the hold is lifted.
  bool on_hold = false;
  // Kueue's WaitingForReplacementPods: members of its pod group are missing (failed or
  // deleted, e.g. by a preemption); a pending workload is not queued until they are back.
  bool waiting_for_replacement_pods = false;
  Boxed<Admission> admission;
  // When quota was last reserved.
  absl::Time admission_time = absl::InfinitePast();
  std::string pending_message;
  std::vector<Condition> conditions;
  // Bounded; oldest dropped first.
  std::vector<WorkloadEvent> events;

  const WorkloadHistory& history() const { return history_.value_or_default(); }
  WorkloadHistory& mutable_history() { return history_.mutable_value(); }
  // The admission checks the workload carries, sorted by name (core/admission_checks.h).
  const std::vector<AdmissionCheckState>& admission_checks() const {
    return admission_checks_.value_or_default();
  }
  std::vector<AdmissionCheckState>& mutable_admission_checks() {
    return admission_checks_.mutable_value();
  }
  void set_admission_checks(std::vector<AdmissionCheckState> checks) {
    if (checks.empty()) {
      admission_checks_.reset();
    } else {
      admission_checks_ = std::move(checks);
    }
  }
  // Set when the workload was admitted with checks that update its pod sets: what each pod
  // set's pods get (its flavors' and its checks' additions merged), fixed at admission.
  const std::vector<PodSetInfo>& admitted_pod_sets() const {
    return admitted_pod_sets_.value_or_default();
  }
  void set_admitted_pod_sets(std::vector<PodSetInfo> infos) {
    if (infos.empty()) {
      admitted_pod_sets_.reset();
    } else {
      admitted_pod_sets_ = std::move(infos);
    }
  }
  bool operator==(const WorkloadStatus&) const = default;

 private:
  Boxed<WorkloadHistory> history_;
  // Boxed: most workloads run in queues without checks.
  Boxed<std::vector<AdmissionCheckState>> admission_checks_;
  Boxed<std::vector<PodSetInfo>> admitted_pod_sets_;
};

// A workload's identity in the API: its namespace and name. Neither can contain '/', so
// ToString ("namespace/name") is unambiguous.
struct WorkloadKey {
  std::string namespace_name;
  std::string name;

  std::string ToString() const { return namespace_name + "/" + name; }
  bool operator==(const WorkloadKey&) const = default;
};

// The object that controls a workload (a Kubernetes ownerReference with controller: true): the
// job it was made for, or the LeaderWorkerSet or StatefulSet whose groups it admits. An object
// may own several workloads (one per LeaderWorkerSet group); a workload has at most one owner.
struct WorkloadOwner {
  // "apps/v1", "leaderworkerset.x-k8s.io/v1", ...
  std::string api_version;
  std::string kind;
  std::string name;
  // Identifies the owner: a re-created object of the same name is another owner.
  std::string uid;
  bool operator==(const WorkloadOwner&) const = default;
};

// Where a pending workload's flavor search stopped short of a resource group's last flavor
// (Kueue's LastAssignment.LastTriedFlavorIdx): the next evaluation starts after that flavor, so
// a workload that stopped at a flavor it could not be admitted in (its topology did not fit
// there, or another head took the quota) reaches the group's later flavors.
struct FlavorScanStop {
  int32_t pod_set = 0;
  // Index into the ClusterQueue's spec.resource_groups, and into that group's flavors.
  int32_t group = 0;
  int32_t flavor = 0;
  bool operator==(const FlavorScanStop&) const = default;
};

struct FlavorScanProgress {
  // The scheduling cycle that recorded it, and its ClusterQueue's allocatable generation then
  // (ClusterQueueRuntime::allocatable_generation).
  int64_t cycle = 0;
  int64_t cluster_queue_generation = 0;
  absl::InlinedVector<FlavorScanStop, 1> stops;
  bool operator==(const FlavorScanProgress&) const = default;

  // The index of the first flavor to try for the pod set's resource group (0: all of them).
  int32_t NextFlavor(size_t pod_set, int group) const {
    for (const FlavorScanStop& stop : stops) {
      if (stop.pod_set == static_cast<int32_t>(pod_set) && stop.group == group) {
        return stop.flavor + 1;
      }
    }
    return 0;
  }
};

// Kueue's HasAdmissionGate: the workload's kueue.x-k8s.io/admission-gated-by annotation is not
// empty and the gates are obeyed (`admission_gated_by`: SchedulerConfig's AdmissionGatedBy
// gate). Defined with the rest of the gates' rules in core/admission_gates.cc.
bool HasAdmissionGate(const WorkloadSpec& spec, bool admission_gated_by);

struct Workload {
  WorkloadId id = 0;
  std::string uid;
  // Set at submission or bound later (Kueue's prebuilt workload); not part of the spec, so a
  // resubmit of the spec as written still matches a workload bound since.
  Boxed<WorkloadOwner> owner;
  absl::Time creation_time;
  WorkloadSpec spec;
  // Effective priority resolved at submission (explicit value, or its class's value, or 0).
  int32_t priority = 0;
  WorkloadStatus status;
  // Quota held while admitted or evicting, per flavor-resource (derived from the admission,
  // never persisted).
  std::vector<std::pair<int32_t, int64_t>> quota_usage;
  // Store revision of the workload's last persisted change; maintained by the service.
  int64_t resource_version = 0;
  // Pending only, in memory only (as Kueue's): where its last evaluation's flavor search
  // stopped, when some resource group has flavors left to try.
  Boxed<FlavorScanProgress> scan_progress;

  std::string Key() const { return spec.namespace_name + "/" + spec.name; }
  bool HoldsQuota() const {
    return status.state == WorkloadState::kAdmitted ||
           status.state == WorkloadState::kQuotaReserved ||
           status.state == WorkloadState::kEvicting;
  }
  // Kueue's IsAdmissible for a pending workload: it belongs in a queue. Not when deactivated
  // (by an operator or by a limit), on hold, waiting for replacement pods, or gated by its
  // kueue.x-k8s.io/admission-gated-by annotation while `admission_gated_by` (the gate).
  bool Queueable(bool admission_gated_by) const {
    return status.state == WorkloadState::kPending && spec.active && !status.deactivated &&
           !status.on_hold && !status.waiting_for_replacement_pods &&
           !HasAdmissionGate(spec, admission_gated_by);
  }
};

// Pods of the pod set still needed: its count less its reclaimable pods, never below zero
// (Kueue's podSetsCountsAfterReclaim). With Kueue's ReclaimablePods gate off
// (`reclaimable_pods` false: SchedulerConfig::reclaimable_pods) the recorded pods give nothing
// back: the whole count.
int32_t CountAfterReclaim(const WorkloadStatus& status, const PodSetSpec& pod_set,
                          bool reclaimable_pods);

// When an admitted workload with spec.maximumExecutionTimeSeconds runs out of it: its
// admission plus what is left of the limit after earlier admissions. nullopt without a limit.
std::optional<absl::Time> ExecutionDeadline(const Workload& wl);

// When the workload was last admitted (allowed to run): the Admitted condition's transition
// while it is true, as Kueue reads it; else when its quota was last reserved. Without admission
// checks the two are the same instant.
absl::Time AdmittedTime(const WorkloadStatus& status);

// Sets or replaces the condition of that type, keeping the transition time when its status
// does not change (as Kubernetes' meta.SetStatusCondition does).
void SetCondition(WorkloadStatus& status, Condition condition);
// The same from views, written into an existing condition's strings (the scheduling hot path:
// a condition replaced within one admission reuses their storage).
void SetCondition(WorkloadStatus& status, absl::string_view type, bool value,
                  absl::string_view reason, absl::string_view message, absl::Time now);
const Condition* FindCondition(const WorkloadStatus& status, absl::string_view type);
// A pending workload's QuotaReserved=False condition with Kueue's reason for `reason`.
void SetPendingCondition(WorkloadStatus& status, PendingReason reason, absl::string_view message,
                         absl::Time now);
// Whether its QuotaReserved condition is false with the reason for `reason`.
bool HasPendingCondition(const WorkloadStatus& status, PendingReason reason);

// Why a pending workload waiting for replacement pods is not queued.
inline constexpr char kWaitingForPodsMessage[] = "Waiting for replacement pods of its pod group";

// Kueue's PodsReady=False reason for a workload that was ready and lost a pod.
inline constexpr absl::string_view kWaitForRecovery = "WaitForRecovery";
// It was ready, lost a pod and is not ready again: the recovery timeout applies, not the
// timeout from admission.
inline bool WaitsForRecovery(const WorkloadStatus& status) {
  const Condition* c = FindCondition(status, "PodsReady");
  return c != nullptr && !c->status && c->reason == kWaitForRecovery;
}
void AddEvent(WorkloadStatus& status, absl::Time time, std::string reason, std::string message);

inline constexpr size_t kMaxWorkloadEvents = 32;
inline constexpr size_t kMaxRecentPreemptions = 16;

// Records a preemption at `now` in the bounded history the rate limit reads.
void RecordPreemption(WorkloadStatus& status, absl::Time now);

// Under the ClusterQueue's preemption rate limit, a workload preempted max_preemptions_per_window
// times within the window is protected from further preemption: returns when that protection
// ends, or nullopt when it is not protected at `now`.
std::optional<absl::Time> PreemptionProtectedUntil(const WorkloadStatus& status,
                                                   const ClusterQueueSpec& cq, absl::Time now);

// When the work a preemption would lose began: the latest of its admission and its last
// reported checkpoint.
inline absl::Time WorkAtRiskSince(const WorkloadStatus& status) {
  return std::max(status.admission_time, status.history().last_checkpoint_time);
}

}  // namespace tollgate::core
