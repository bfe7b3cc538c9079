#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "core/admission_fair_sharing.h"
#include "core/config_registry.h"
#include "core/cycle_plan.h"
#include "core/object_kind.h"
#include "core/priority_boost.h"
#include "core/queue_router.h"
#include "core/quota_tree.h"
#include "core/runtime_history.h"
#include "core/scheduler_config.h"
#include "core/timer_set.h"
#include "core/topology_inventory.h"
#include "core/types.h"
#include "core/visibility.h"
#include "core/workload.h"
#include "core/workload_table.h"

namespace tollgate::core {

// What Admit (admission on request, outside the cycle order) did or would do.
struct AdmitNowResult {
  enum class Outcome { kAdmitted, kPreempting, kPending };
  Outcome outcome = Outcome::kPending;
  Admission admission;
  std::vector<WorkloadId> victims;
  std::string message;
};

// A configuration object's identity, as deletion reports it.
struct ObjectName {
  ObjectKind kind;
  // Empty for cluster-scoped kinds.
  std::string namespace_name;
  std::string name;
  // "ClusterQueue team-a", "LocalQueue ns/q".
  std::string ToString() const;
  bool operator==(const ObjectName&) const = default;
};

// A check controller's (or an operator's) word on one admission check of one workload: Kueue's
// AdmissionCheckState as a controller writes it. retryCount and lastTransitionTime are the
// state's to keep.
struct CheckStateUpdate {
  std::string check;
  CheckState state = CheckState::kPending;
  std::string message;
  std::optional<int32_t> requeue_after_seconds;
  std::vector<PodSetUpdate> pod_set_updates;
  // MultiKueue checks only: the winner (status.clusterName) and the nominees to record with the
  // state (docs/multicluster.md).
  std::optional<std::string> cluster_name;
  std::optional<std::vector<std::string>> nominated_cluster_names;
  // MultiKueue checks only: the winner's job status, mirrored onto the workload.
  std::optional<WorkloadPayload> job_status;
  // MultiKueue checks only: replaces status.multi_kueue_remotes.
  std::optional<std::vector<MultiKueueRemoteState>> multi_kueue_remotes;
};

struct SubmitOutcome {
  WorkloadId id = 0;
  bool created = false;
};

// Kueue's HasActiveQuotaReservation: a reservation its scheduler cache counts, which is not a
// deactivated workload's, though it keeps its admission until its pods stop.
inline bool HoldsActiveReservation(const Workload& wl) {
  return wl.HoldsQuota() && wl.spec.active && !wl.status.deactivated;
}

// Everything the scheduler knows: configuration objects, the quota tree, every workload and the
// queues. The executor mutates it only through these methods and persists what they report as
// dirty; the planner reads it (and may temporarily change usage, restoring it before
// returning). Not thread-safe: the executor owns it on one thread.
//
// A facade over parts that each hold one concern, in files named after it: the configuration
// (config_registry.h), the workloads with their key index and dirty set (workload_table.h),
// LocalQueue -> ClusterQueue routing and the ClusterQueues' runtimes (queue_router.h), timers
// (timer_set.h) and admission fair sharing's usage (admission_fair_sharing.h). Its own methods
// are the transitions that touch several parts, split the same way: configuration changes and
// routing (cluster_state.cc), a workload's lifecycle and timers (workload_lifecycle.cc), restore
// after a restart (workload_restore.cc), applying plans (cycle_applier.cc); read-only queries
// are free functions in visibility.h.
class ClusterState {
 public:
  explicit ClusterState(SchedulerConfig config);
  // Holds pointers into itself (queue indexes, the quota tree).
  ClusterState(const ClusterState&) = delete;
  ClusterState& operator=(const ClusterState&) = delete;

  const SchedulerConfig& config() const { return config_; }

  // --- Configuration objects. Each call validates references it can check and either
  // applies fully or returns an error and changes nothing.
  absl::Status ApplyNamespace(NamespaceSpec spec, absl::Time now);
  absl::Status ApplyResourceFlavor(ResourceFlavorSpec spec, absl::Time now);
  absl::Status ApplyClusterQueue(ClusterQueueSpec spec, absl::Time now);
  absl::Status ApplyCohort(CohortSpec spec, absl::Time now);
  absl::Status ApplyLocalQueue(LocalQueueSpec spec, absl::Time now);
  absl::Status ApplyPriorityClass(PriorityClassSpec spec, absl::Time now);
  // Keeps the check's Active condition; a new check is inactive until its controller reports
  // (SetAdmissionCheckActive). INVALID_ARGUMENT when it would change controllerName (immutable,
  // as in Kueue).
  absl::Status ApplyAdmissionCheck(AdmissionCheckSpec spec, absl::Time now);
  // The check's Active condition, as its controller reports it: ClusterQueues naming an inactive
  // check admit nothing (Kueue's AdmissionCheckInactive). NOT_FOUND if absent. The transition
  // time moves only when the status changes.
  absl::Status SetAdmissionCheckActive(absl::string_view name, bool active,
                                       absl::string_view reason, absl::string_view message,
                                       absl::Time now);
  // Restart: the Active condition as stored, transition time included.
  absl::Status RestoreAdmissionCheckActive(absl::string_view name, Condition active,
                                           absl::Time now);
  // MultiKueue's objects (multikueue_state.cc). They change no scheduling state by themselves:
  // the MultiKueue check controller derives its checks' Active condition from them
  // (MultiKueueCheckActivity) and reports it through SetAdmissionCheckActive.
  absl::Status ApplyMultiKueueConfig(MultiKueueConfigSpec spec, absl::Time now);
  // Keeps the cluster's Active condition; a new cluster is inactive until its connection
  // reports.
  absl::Status ApplyMultiKueueCluster(MultiKueueClusterSpec spec, absl::Time now);
  // The cluster's Active condition as its connection reports it (reason one of Kueue's, e.g.
  // "Active", "ClientConnectionFailed"). NOT_FOUND if absent. The transition time moves only
  // when the status changes.
  absl::Status SetMultiKueueClusterActive(absl::string_view name, bool active,
                                          absl::string_view reason, absl::string_view message,
                                          absl::Time now);
  // Restart: the Active condition as stored, transition time included.
  absl::Status RestoreMultiKueueClusterActive(absl::string_view name, Condition active);
  // The Active condition MultiKueueCheckActivity gives the check now; nullopt when the check
  // is absent or not a MultiKueue one.
  std::optional<CheckActivity> MultiKueueCheckActivityOf(absl::string_view check) const;
  // NOT_FOUND if absent. Each kind by its DeletionRule (deletion_rule.h, object_deletion.cc):
  // a ClusterQueue or Namespace that workloads still hold quota through is not erased but
  // marked terminating (admits nothing new, keeps accounting for what runs) until the last of
  // them ends, see TakeFinalizedObjects; a ResourceFlavor a ClusterQueue or Cohort names is
  // FAILED_PRECONDITION naming them; an AdmissionCheck a ClusterQueue names is terminating until
  // none does; anything else (a Cohort, a LocalQueue) is erased at once,
  // and what was admitted through it keeps running and keeps its quota. Deleting a terminating
  // object again is a no-op.
  absl::Status DeleteObject(ObjectKind kind, absl::string_view namespace_name,
                            absl::string_view name, absl::Time now);
  // When the object was deleted, if it is terminating.
  std::optional<absl::Time> TerminatingSince(ObjectKind kind, absl::string_view namespace_name,
                                             absl::string_view name) const;
  // Restart: the object (already applied) was stored as terminating since `since`. A kind that
  // no longer terminates (stored by a version that protected it) is erased instead, and
  // reported by the next TakeFinalizedObjects so its stored copy goes too.
  absl::Status RestoreTerminating(ObjectKind kind, absl::string_view namespace_name,
                                  absl::string_view name, absl::Time since, absl::Time now);
  // Terminating objects no workload holds quota through any more, erased now (and objects
  // erased by RestoreTerminating); the executor deletes them from the store with the changes
  // that released them.
  std::vector<ObjectName> TakeFinalizedObjects(absl::Time now);
  // Whether RestoreTerminating erased objects the next TakeFinalizedObjects reports (so a
  // restart can commit their removal without waiting for other work).
  bool HasObjectsErasedOnRestore() const { return !erased_on_restore_.empty(); }
  // The workloads ("ns/name", in submission order) holding quota through the object: admitted
  // or evicting in the ClusterQueue, in a ClusterQueue under the Cohort, from the LocalQueue or
  // in the Namespace.
  std::vector<std::string> WorkloadsHoldingQuotaVia(ObjectKind kind,
                                                    absl::string_view namespace_name,
                                                    absl::string_view name) const;

  // --- Topology Aware Scheduling (topology_state.cc): Topology objects, the node inventory and
  // pods Tollgate does not place. A change may let parked workloads fit (they are requeued);
  // a node that disappears or stops being ready fails the placements on it (Kueue's node
  // failure handling: re-placed where possible, else the workload is evicted).
  absl::Status ApplyTopology(TopologySpec spec, absl::Time now);
  // What ApplyTopology would refuse: bad levels, or levels changed where Kueue forbids it.
  absl::Status CheckTopology(const TopologySpec& spec) const;
  absl::Status DeleteTopology(absl::string_view name, absl::Time now);
  absl::Status UpsertNode(NodeSpec node, absl::Time now);
  absl::Status DeleteNode(absl::string_view name, absl::Time now);
  absl::Status ReportPod(std::string pod, std::string node, ResourceAmounts requests,
                         absl::Time now);
  absl::Status RemovePod(absl::string_view pod, absl::Time now);
  // The inventory is a cache the planners read through a const state: flavors are built on
  // first use after a change, and planners simulate usage on it, restoring it afterwards.
  TopologyInventory& topology() const { return topology_; }

  const ConfigRegistry& registry() const { return registry_; }
  const std::map<std::string, NamespaceSpec>& namespaces() const { return registry_.namespaces(); }
  const std::map<std::string, ResourceFlavorSpec>& flavors() const { return registry_.flavors(); }
  const std::map<std::string, ClusterQueueSpec>& cluster_queue_specs() const {
    return registry_.cluster_queue_specs();
  }
  const std::map<std::string, CohortSpec>& cohorts() const { return registry_.cohorts(); }
  // Keyed by "namespace/name".
  const std::map<std::string, LocalQueueRuntime>& local_queues() const {
    return registry_.local_queues();
  }
  const std::map<std::string, PriorityClassSpec>& workload_priority_classes() const {
    return registry_.workload_priority_classes();
  }
  const std::map<std::string, PriorityClassSpec>& pod_priority_classes() const {
    return registry_.pod_priority_classes();
  }
  const std::map<std::string, AdmissionCheckRuntime>& admission_checks() const {
    return registry_.admission_checks();
  }
  const std::map<std::string, MultiKueueConfigSpec>& multikueue_configs() const {
    return registry_.multikueue_configs();
  }
  const std::map<std::string, MultiKueueClusterRuntime>& multikueue_clusters() const {
    return registry_.multikueue_clusters();
  }
  // The ClusterQueues whose admissionChecksStrategy names the check, by name.
  std::vector<std::string> ClusterQueuesUsingAdmissionCheck(absl::string_view name) const;

  // --- Workloads.
  // Idempotent: the same key and spec returns the existing workload (created=false);
  // a different spec is ALREADY_EXISTS. A spec naming no queue goes to the namespace's
  // LocalQueue "default", and is refused when there is none.
  // `owner`, when set, is the object controlling the workload (an existing workload controlled
  // by another owner is ALREADY_EXISTS).
  absl::StatusOr<SubmitOutcome> Submit(WorkloadSpec spec, std::string uid, absl::Time now,
                                       std::optional<WorkloadOwner> owner = std::nullopt);
  // Re-creates a workload read back from the store after a restart, keeping its status.
  absl::Status Restore(Workload workload);
  // Restore of each workload in turn (the order assigns their ids), done in bulk: indexes
  // reserved once, routes looked up once per LocalQueue, each ClusterQueue's pending queue
  // built from its sorted keys, and for a large restore the key index filled on a helper
  // thread. On an error (a duplicate key, a workload holding quota without an admission) the
  // state is partly restored and must be discarded.
  absl::Status RestoreAll(std::vector<std::unique_ptr<Workload>> workloads);
  // `reason` is the Finished condition's (Kueue's Succeeded, Failed, ...); empty: Succeeded.
  absl::Status Finish(absl::string_view key, absl::string_view message, absl::Time now,
                      absl::string_view reason = "");
  absl::Status Delete(absl::string_view key, absl::Time now);
  // Operator or adapter eviction of an admitted workload: it returns to its queue.
  absl::Status Evict(absl::string_view key, absl::string_view reason, absl::string_view message,
                     absl::Time now);
  // The adapter reports an evicting workload's pods stopped: release its quota.
  absl::Status ReleaseEvicted(absl::string_view key, absl::Time now);
  // The adapter's readiness reports (waitForPodsReady). Ready again after a loss is Kueue's
  // "Recovered". Not ready after being ready (a pod failed, its replacement is awaited) starts
  // recoveryTimeout: not ready again by then, the workload is evicted as by the pods-ready
  // timeout. FAILED_PRECONDITION unless admitted.
  absl::Status SetPodsReady(absl::string_view key, absl::Time now);
  absl::Status SetPodsNotReady(absl::string_view key, absl::Time now);
  // Operator preemption of an admitted workload: evicts it as the scheduler's preemption does,
  // counting towards its preemption history.
  absl::Status Preempt(absl::string_view key, absl::string_view message, absl::Time now);
  // Kueue's spec.active (workload_controls.cc). Deactivating evicts an admitted workload (reason
  // Deactivated) and takes a pending one out of its queue; it is not requeued until activated.
  // Activating clears a backoffLimitCount deactivation and its requeue count, and requeues.
  // Idempotent; FAILED_PRECONDITION for a finished workload. A deactivation's `cause` (Kueue's
  // DeactivationTarget condition, validated by the caller) names it in the eviction: reason
  // "DeactivatedDueTo<cause reason>", message "The workload is deactivated due to <message>".
  absl::Status SetActive(absl::string_view key, bool active, absl::Time now,
                         const std::optional<DeactivationCause>& cause = std::nullopt);
  // Sets an explicit priority. A pending workload moves in its queue; an admitted one keeps its
  // quota and only its standing as a preemption victim changes. FAILED_PRECONDITION when
  // finished.
  absl::Status SetPriority(absl::string_view key, int32_t priority, absl::Time now);
  // Kueue's AdmissionGatedBy (workload_controls.cc, rules in admission_gates.h): a new value of
  // the kueue.x-k8s.io/admission-gated-by annotation (nullopt: removed). Gates may only be
  // removed (INVALID_ARGUMENT naming the annotation otherwise, nothing changed). Removing the
  // last gate requeues the workload; removing some keeps it out of its queue with the condition
  // naming the rest. The same value again changes nothing. NOT_FOUND when absent.
  absl::Status SetAdmissionGates(absl::string_view key, const std::optional<std::string>& gates,
                                 absl::Time now);
  // Kueue's PriorityBoost (workload_controls.cc, rules in priority_boost.h): a new value of the
  // kueue.x-k8s.io/priority-boost annotation (nullopt: removed), as an external controller
  // patches it. With the gate on the value must be a signed integer (INVALID_ARGUMENT naming
  // the annotation otherwise, nothing changed); a queued workload is queued again with its new
  // priority (out of the inadmissible set unless it backs off, as Kueue's PushOrUpdate), and one
  // holding quota is re-filed as a victim and, when its effective priority changed and it has a
  // WorkloadPriorityClass, lets its tree's inadmissible workloads try again (Kueue's
  // PriorityChanged). With the gate off the annotation is stored and read by nothing. The same
  // value again changes nothing. NOT_FOUND when absent.
  absl::Status SetPriorityBoost(absl::string_view key, const std::optional<std::string>& value,
                                absl::Time now);
  // The adapter reports that the workload saved its progress at `at` (not in the future).
  absl::Status RecordCheckpoint(absl::string_view key, absl::Time at, absl::Time now);
  // Kueue's status.reclaimablePods (reclaimable_pods.cc): the adapter reports, per pod set,
  // pods that finished for good. An admitted or evicting workload's quota shrinks to the pods
  // still needed and the freed quota goes to the queues at once; a pending one asks only for
  // the rest. INVALID_ARGUMENT for an unknown pod set or a count outside 0..count; while the
  // workload holds quota a count may not decrease nor a pod set be dropped (Kueue's webhook
  // rule). FAILED_PRECONDITION for a finished workload. The same report again is a no-op.
  absl::Status SetReclaimablePods(absl::string_view key,
                                  std::vector<std::pair<std::string, int32_t>> pods,
                                  absl::Time now);
  // One admission check's state on one workload (admission_check_lifecycle.cc), then Kueue's
  // consequences: with quota reserved, Ready on every check admits it, Retry evicts it
  // (requeued no earlier than the latest delay asked for), Rejected deactivates it. Without
  // quota (pending or evicting) Retry delays the next requeue; Rejected changes nothing and
  // the cycles hold it back (Kueue). Errors change nothing: NOT_FOUND for an unknown workload or
  // check, FAILED_PRECONDITION for a finished workload or a check it does not carry,
  // INVALID_ARGUMENT for podSetUpdates naming no pod set of the workload, changing while the
  // check stays Ready, or conflicting with what another check, a flavor or the pod set sets.
  // Setting what is already there is a no-op.
  absl::Status SetAdmissionCheckState(absl::string_view key, CheckStateUpdate update,
                                      absl::Time now);
  // What the workload's pods get once admitted: its flavors' and checks' additions merged
  // (core/admission_checks.h, MergePodSetUpdates). NOT_FOUND for an unknown workload.
  absl::StatusOr<std::vector<PodSetInfo>> PodSetInfos(absl::string_view key) const;

  // --- What a workload's job asks for (job_reports.cc): Kueue's job reconciler writing onto
  // its Workload.
  // Kueue's prebuilt workload: the job binds the workload made for it beforehand as its
  // controller. Idempotent for the same owner uid; FAILED_PRECONDITION when another object
  // controls it or it has finished.
  absl::Status BindOwner(absl::string_view key, WorkloadOwner owner, absl::Time now);
  // Kueue's OutOfSync: a prebuilt workload whose pod sets differ from its job's is finished
  // (reason OutOfSync), from any state, releasing quota it holds. Idempotent once finished.
  absl::Status MarkOutOfSync(absl::string_view key, absl::Time now);
  // Kueue's OnHold. Holding releases the quota at once (admitted or evicting: the pods are
  // going away) and keeps the workload out of its queue; releasing the hold requeues it.
  // Idempotent; FAILED_PRECONDITION when finished. `message` says why (empty: a default).
  absl::Status SetOnHold(absl::string_view key, bool on_hold, absl::string_view message,
                         absl::Time now);
  // Kueue's WaitingForReplacementPods: members of the workload's pod group are missing. While
  // true a pending workload stays out of its queue; false requeues it. Idempotent.
  absl::Status SetWaitingForReplacementPods(absl::string_view key, bool waiting, absl::Time now);
  // The job's status as its adapter reports it (status.job_status), from any state; the same
  // status again is a no-op and no report adds an event (a running job reports often).
  absl::Status SetJobStatus(absl::string_view key, WorkloadPayload status);
  // On a MultiKueue worker (docs/multicluster.md): the manager declares this copy the winner.
  // Idempotent once set. FAILED_PRECONDITION when the workload has no origin label
  // (kueue.x-k8s.io/multikueue-origin), carries another `origin` (when not empty), or holds no
  // quota.
  absl::Status MarkMultiKueueWinner(absl::string_view key, absl::string_view origin,
                                    absl::Time now);
  // A new spec.payload (a pod group grown after its workload was made; docs/multicluster.md).
  // FAILED_PRECONDITION when the workload is finished, carries no payload, or carries one of
  // another api_version or kind; the same payload again is a no-op. Scheduling never reads it.
  absl::Status SetPayload(absl::string_view key, WorkloadPayload payload, absl::Time now);
  // The workloads (in id order) whose owner has this uid.
  std::vector<WorkloadId> WorkloadsOwnedBy(absl::string_view owner_uid) const {
    return workloads_.OwnedBy(owner_uid);
  }

  const WorkloadTable& workload_table() const { return workloads_; }
  const Workload* FindWorkload(absl::string_view key) const { return workloads_.Find(key); }
  const Workload* workload(WorkloadId id) const { return workloads_.Get(id); }
  Workload* mutable_workload(WorkloadId id) { return workloads_.GetMutable(id); }
  // Every live workload, in id (submission) order.
  std::vector<const Workload*> AllWorkloads() const { return workloads_.All(); }

  // --- Scheduling. A cycle is PlanCycle followed by ApplyCycle with the same `now`.
  CyclePlan PlanCycle(absl::Time now);
  void ApplyCycle(const CyclePlan& plan, absl::Time now);
  // The same, moving each admission decision's Admission and usage into its workload instead of
  // copying them (the scheduling loop's path): the plan keeps its ids, pending and preemption
  // decisions, but its admissions' Admission values and usage are left empty.
  void ApplyCycleTakingAdmissions(CyclePlan& plan, absl::Time now);
  // Evaluates one pending workload now, ahead of queue order: admits it if it fits, or issues
  // the preemptions that would make it fit; with `dry_run` only reports.
  absl::StatusOr<AdmitNowResult> AdmitNow(absl::string_view key, bool dry_run, absl::Time now);
  // Fires time-based transitions due at `now` (eviction grace, pods-ready timeouts, backoff
  // expiry, deleting finished workloads past their retention). Returns true if anything
  // changed.
  bool FireTimers(absl::Time now);
  // The earliest future time at which FireTimers would change something.
  std::optional<absl::Time> NextTimer() const;

  // Workloads changed since the last call, in id order; deleted ones are reported in
  // TakeDeletedWorkloads. The executor persists both.
  std::vector<WorkloadId> TakeDirtyWorkloads() { return workloads_.TakeDirty(); }
  bool HasUncommittedChanges() const { return workloads_.HasUncommittedChanges(); }
  bool IsDirty(WorkloadId id) const { return workloads_.IsDirty(id); }
  std::vector<WorkloadKey> TakeDeletedWorkloads() { return workloads_.TakeDeleted(); }

  // --- ClusterQueues.
  const ClusterQueueRuntime* cluster_queue(absl::string_view name) const {
    return router_.cluster_queue(name);
  }
  ClusterQueueRuntime* mutable_cluster_queue(absl::string_view name) {
    return router_.mutable_cluster_queue(name);
  }
  // The ClusterQueue of a quota-tree node (null for cohorts).
  const ClusterQueueRuntime* cluster_queue(const QuotaNode* node) const {
    return router_.cluster_queue(node);
  }
  const std::map<std::string, ClusterQueueRuntime, std::less<>>& cluster_queue_runtimes() const {
    return router_.runtimes();
  }
  // The same runtimes in the same order, as an array (QueueRouter::in_order).
  const std::vector<ClusterQueueRuntime*>& cluster_queues_in_order() const {
    return router_.in_order();
  }

  // --- Visibility: forwarders to the free functions of visibility.h.
  std::vector<ResourceUsageRow> ClusterQueueUsage(absl::string_view name) const;
  std::vector<ResourceUsageRow> LocalQueueUsage(absl::string_view namespace_name,
                                                absl::string_view name) const;
  QueueCounts ClusterQueueCounts(absl::string_view name) const;
  QueueCounts LocalQueueCounts(absl::string_view namespace_name, absl::string_view name) const;
  std::vector<PendingPosition> PendingInClusterQueue(absl::string_view name) const;
  std::vector<PendingPosition> PendingInLocalQueue(absl::string_view namespace_name,
                                                   absl::string_view name) const;
  int64_t WeightedShare(absl::string_view name) const;

  // --- Shared with the planners.
  QuotaTree& tree() { return tree_; }
  const QuotaTree& tree() const { return tree_; }
  FlavorResourceIndex& fr_index() { return fr_index_; }
  const FlavorResourceIndex& fr_index() const { return fr_index_; }
  bool NamespaceMatches(const ClusterQueueSpec& cq, absl::string_view namespace_name) const {
    return registry_.NamespaceMatches(cq, namespace_name);
  }
  // The ClusterQueue a pending workload is queued in, if any.
  const std::string* QueuedIn(WorkloadId id) const {
    const ClusterQueueRuntime* cq = router_.QueuedIn(id);
    return cq == nullptr ? nullptr : &cq->spec.name;
  }
  // The time Kueue orders a pending workload by (creation, or pods-ready eviction).
  absl::Time QueueOrderTime(const Workload& wl) const;
  int64_t cycle() const { return cycle_; }
  // The head the next cycle takes from this queue: the active set's first entry, or under
  // admission fair sharing the first entry of the LocalQueue with the least weighted usage.
  std::optional<WorkloadId> HeadOf(const ClusterQueueRuntime& cq) const;
  bool UsesAdmissionFairSharing(const ClusterQueueSpec& cq) const {
    return fair_usage_.Applies(cq);
  }
  // Admission fair sharing: the LocalQueue's decayed usage (plus penalties) over its weight.
  double LocalQueueFairUsage(absl::string_view namespace_name, absl::string_view name) const;
  // Its ledger, which the executor persists and a restart seeds (Kueue keeps the usage in the
  // LocalQueue's status).
  AdmissionFairSharingLedger& fair_usage_ledger() { return fair_usage_; }
  // How long finished workloads ran, per LocalQueue (start-time estimates learn from it).
  const RuntimeHistory& runtime_history() const { return runtime_history_; }
  // waitForPodsReady's blockAdmission: no admitted workload is still waiting for its pods.
  bool AllAdmittedPodsReady() const { return unready_admitted_.empty(); }
  // Kueue's scheduler would wait in waitForPodsReadyIfNeeded now (a fitting head is held).
  bool BlocksAdmissionForPodsReady() const {
    return config_.wait_for_pods_ready.enable && config_.wait_for_pods_ready.block_admission &&
           !AllAdmittedPodsReady();
  }
  // The entries of the cycle held for blockAdmission (CyclePlan::held_cycle). Not persisted:
  // a restarted Kueue scheduler starts a fresh cycle too.
  const std::vector<WorkloadId>& held_cycle() const { return held_cycle_; }
  // The ClusterQueue a pending workload is queued in (null when it is not queued).
  const ClusterQueueRuntime* QueuedRuntime(WorkloadId id) const { return router_.QueuedIn(id); }

 private:
  // --- Routing (cluster_state.cc).
  void Requeue(Workload& wl, absl::Time now);
  // Requeue's bookkeeping for a workload that is not queued, along `route`. `keys`, when set,
  // collects the queue keys per ClusterQueue (active, inadmissible) instead of pushing them.
  struct PendingKeys {
    std::vector<QueueKey> active;
    std::vector<QueueKey> inadmissible;
  };
  // Whether queueing a workload keeps its backoff. Kueue's queue manager does when it adds or
  // updates one workload (ClusterQueue.PushOrUpdate parks one still backing off), not when it
  // pushes every workload it tracks for a LocalQueue it has just taken in, or for a
  // ClusterQueue it has just created (AddFromLocalQueue: PushActiveIfNotPresent).
  enum class Backoff { kKeep, kIgnore };
  void QueueRouted(Workload& wl, const Route& route, absl::Time now, Backoff backoff,
                   absl::flat_hash_map<ClusterQueueRuntime*, PendingKeys>* keys);
  // Its flavor scan progress goes with it: Kueue keeps it only for a workload that stays in its
  // queue (a requeue for a new priority, an activation, a move to another queue start over).
  void Unqueue(Workload& wl) {
    router_.Unqueue(wl.id);
    wl.scan_progress.reset();
  }
  // Queues every pending workload whose route changed. `added_local_queue`, when set, is a
  // LocalQueue Kueue's queue manager has just taken in (created, or running again after a
  // stop): it lists the queue's workloads, so none of them is outside the queue any more.
  void RerouteAllPending(absl::Time now, const LocalQueueSpec* added_local_queue = nullptr);
  void RebuildQuotaTree(absl::Time now);
  void RequeueInadmissibleInTreeOf(absl::string_view cluster_queue, absl::Time now);
  void RequeueAllInadmissible(absl::Time now);
  void DrainStoppedQueues(absl::Time now);
  QueueKey KeyOf(const Workload& wl) const;
  void AddUsageOf(const Workload& wl);
  // The same for an admission whose topology placements were carried from its cycle.
  void AddUsageOf(const Workload& wl, absl::Span<const PlacedTopology> carried);
  void RemoveUsageOf(const Workload& wl);
  // Sets wl.quota_usage from its admission, each pod set's share scaled down to the pods still
  // needed when some are reclaimable (Kueue's totalRequestsFromAdmission).
  void DeriveQuotaUsage(Workload& wl);
  // The queues' activity, with Kueue's TopologyNotFound on top of the router's reasons.
  void RecomputeActivity();
  // Placements on the node named `changed_host` that failed (core/node_failure_rule.h: gone,
  // not ready, or an untolerated taint, once the pods there ended): re-placed, or the workload
  // is evicted. True when some workload was.
  bool HandleNodeFailures(const std::string& changed_host, absl::Time now);
  // With Kueue's TASReplaceNodeDueToNotReadyOverFixedTime: the not-ready nodes whose fixed
  // failure delay ran out by `now` fail the placements on them. True when something changed.
  bool FireNodeFailureDelays(absl::Time now);

  // --- Admission checks (admission_check_lifecycle.cc).
  // The ClusterQueue whose checks the workload carries: the one holding its quota, else the one
  // its LocalQueue points at. Null when there is none.
  const ClusterQueueRuntime* ChecksQueueOf(const Workload& wl) const;
  // Brings the workload's checks in line with its ClusterQueue (ChecksForWorkload); a workload
  // waiting on its checks whose remaining checks are all Ready is admitted. Returns whether
  // anything changed.
  bool SyncChecks(Workload& wl, absl::Time now);
  // SyncChecks for every workload not finished, after ClusterQueues or LocalQueues changed.
  void SyncAllChecks(absl::Time now);
  // A workload whose quota is reserved and whose checks are all Ready becomes admitted; a
  // podSetUpdates conflict fails it instead (Kueue's FailedToStart).
  void CompleteAdmission(Workload& wl, absl::Time now);
  // Kueue's second pass for delayed topology requests (a ProvisioningRequest or MultiKueue check
  // on the flavor): once the checks are Ready, places the pod sets reserved without a topology
  // assignment. True when nothing is left to place; false when they do not fit yet: the workload
  // stays reserved (Admitted False, PendingDelayedTopologyRequests) and is tried again after
  // each scheduling cycle (RetryDelayedTopology).
  bool PlaceDelayedTopology(Workload& wl, absl::Time now);
  void RetryDelayedTopology(absl::Time now);
  // Kueue's consequences of the workload's check states (see SetAdmissionCheckState).
  void ReconcileChecks(Workload& wl, absl::Time now);
  // Whether a check update may record MultiKueue's winner and nominees on `wl`
  // (docs/multicluster.md): a MultiKueue check, quota held, the winner set once.
  absl::Status CheckMultiKueueDispatch(const Workload& wl, const CheckStateUpdate& update) const;
  // Kueue's release of a reservation that is not admitted yet when its LocalQueue or
  // ClusterQueue is stopped or terminating: the quota goes back without an eviction.
  void CancelReservation(Workload& wl, PendingReason reason, const std::string& message,
                         absl::Time now);
  void CancelReservationsInInactiveQueues(absl::Time now);
  // What the registry's checks mean for every ClusterQueue's activity, then requeues.
  void OnAdmissionChecksChanged(absl::Time now);

  // --- Deletion (object_deletion.cc).
  static std::string RegistryKey(ObjectKind kind, absl::string_view namespace_name,
                                 absl::string_view name);
  bool ObjectExists(ObjectKind kind, absl::string_view namespace_name,
                    absl::string_view name) const;
  // Kueue's in-use rule for a protected object: workloads holding quota through it, or for an
  // AdmissionCheck a ClusterQueue naming it.
  bool InUse(ObjectKind kind, absl::string_view namespace_name, absl::string_view name) const;
  // "ClusterQueue a", "Cohort b": the queues whose resourceGroups name the flavor.
  std::vector<std::string> QueuesNamingFlavor(absl::string_view flavor) const;
  // "ResourceFlavor F" for each flavor whose spec.topologyName is `topology`.
  std::vector<std::string> FlavorsNamingTopology(absl::string_view topology) const;
  void EraseObject(ObjectKind kind, absl::string_view namespace_name, absl::string_view name,
                   absl::Time now);
  void OnTerminatingChanged(absl::Time now);

  // --- Restore (workload_restore.cc).
  // The route of the LocalQueue `namespace_name`/`queue_name`, kept across a RestoreAll.
  struct CachedRoute {
    std::string namespace_name;
    std::string queue_name;
    Route route;
  };
  // Everything Restore does for one workload already in the table but its key index entry.
  absl::Status RestoreOne(Workload& ref,
                          absl::flat_hash_map<ClusterQueueRuntime*, PendingKeys>* keys,
                          std::optional<CachedRoute>* last_route);

  // --- Lifecycle (workload_lifecycle.cc).
  void ReleaseQuota(Workload& wl, absl::Time now);
  // Kueue's scheduler cache drops a deactivated workload at once (HasActiveQuotaReservation):
  // its quota is free while its pods still stop, and it is no victim. The workload keeps its
  // admission until released.
  void DropInactiveReservation(Workload& wl, absl::Time now);
  // Reactivated before its pods stopped: the cache counts its reservation again, whether or not
  // it still fits.
  void RestoreActiveReservation(Workload& wl);
  // Admission fair sharing: the workload's entry penalty will not settle (it left without its
  // admission); nothing when it has none.
  void DropEntryPenalty(const Workload& wl) {
    if (!fair_usage_.TracksAny()) return;
    fair_usage_.DropEntryPenalty(LocalQueueKey(wl.spec.namespace_name, wl.spec.queue_name), wl.id);
  }
  void StartEviction(Workload& wl, absl::Time now, const std::string& reason,
                     const std::string& message);
  // Evicts an admitted workload whose pods were not ready in time (at admission, or again after
  // a loss: `message` says which), with backoff, or deactivates it past backoffLimitCount.
  void PodsReadyTimeout(Workload& wl, absl::Time now, const std::string& message);
  // waitForPodsReady.recoveryTimeout in effect: the timeout unless set; zero turns it off.
  absl::Duration RecoveryTimeout() const;
  // Kueue's maximumExecutionTimeSeconds: deactivates and evicts an admitted workload that has
  // used up its limit.
  void MaximumExecutionTimeExceeded(Workload& wl, absl::Time now);
  // Arms the timer for an admitted workload's ExecutionDeadline, if it has one.
  void ArmExecutionDeadline(const Workload& wl);
  // With objectRetentionPolicies.workloads.afterFinished: arms the deletion of a finished
  // workload, due when its Finished condition is that old.
  void ArmFinishedRetention(const Workload& wl);
  // When the finished workload is to be deleted; nullopt when it is kept.
  std::optional<absl::Time> FinishedRetentionEnds(const Workload& wl) const;
  // Re-files a workload holding quota in its ClusterQueue's victim order after a change.
  void RefileHeld(const Workload& wl);
  // Wakes parked preemptors when an admitted workload's preemption rate-limit protection ends.
  void ArmPreemptionProtectionTimer(const Workload& wl, absl::Time now);
  absl::Duration EvictionGrace(const Workload& wl) const;
  void MarkDirty(WorkloadId id) { workloads_.MarkDirty(id); }

  // --- Applying plans (cycle_applier.cc).
  void ApplyPending(const PendingDecision& p, absl::Time now);
  // `taken`, when set, is a's Admission to move into the workload (else it is copied).
  void ApplyPlan(const CyclePlan& plan, CyclePlan* taken, absl::Time now);
  void ApplyAdmission(const AdmissionDecision& a, Admission* taken, absl::Time now);
  void ApplyPreemption(const PreemptionDecision& p, absl::Time now);
  // The workload's LocalQueue's labels under the configured cost-attribution keys.
  Labels CostAttributionLabels(const Workload& wl) const;

  SchedulerConfig config_;
  ConfigRegistry registry_;
  FlavorResourceIndex fr_index_;
  QuotaTree tree_;
  QueueRouter router_{registry_};
  WorkloadTable workloads_;
  TimerSet timers_;
  NodeTimerSet node_timers_;
  AdmissionFairSharingLedger fair_usage_{config_.admission_fair_sharing};
  // Admitted workloads whose pods are not all ready yet (waitForPodsReady).
  absl::btree_set<WorkloadId> unready_admitted_;
  std::vector<WorkloadId> held_cycle_;
  // Workloads evicted into a backoff that Kueue's queue manager does not track yet: its
  // workload controller adds one when the backoff ends, an update requeues it, or its
  // LocalQueue is taken in again (which lists it). A ClusterQueue created or named anew meanwhile
  // does not push them. Not stored: a restart takes every LocalQueue in again.
  absl::btree_set<WorkloadId> backoff_outside_queue_;
  // Reserved workloads whose checks are Ready but whose delayed topology requests did not fit.
  absl::btree_set<WorkloadId> delayed_topology_;
  // With TASFailedNodeReplacementFailFast off: the workloads of delayed_topology_ whose failed
  // node found no replacement yet, how many tries failed and when the next may run (Kueue's
  // second-pass queue backoff). In memory, as Kueue's: a restart tries again at once.
  struct SecondPassRetry {
    int failures = 0;
    absl::Time not_before;
  };
  absl::flat_hash_map<WorkloadId, SecondPassRetry> second_pass_retries_;
  RuntimeHistory runtime_history_;
  mutable TopologyInventory topology_;
  int64_t cycle_ = 0;
  // A workload released quota (or an object began terminating) since TakeFinalizedObjects last
  // looked: some terminating object may be unused now.
  bool finalize_check_due_ = false;
  // Some ClusterQueue asked for admission checks at the last SyncAllChecks: the next one must
  // look at every workload even if none asks now (to drop what they carry).
  bool checks_synced_ = false;
  // Stored as terminating, erased by RestoreTerminating: reported by TakeFinalizedObjects.
  std::vector<ObjectName> erased_on_restore_;
};

}  // namespace tollgate::core
