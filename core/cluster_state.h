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
#include "core/cycle_plan.h"
#include "core/held_workloads.h"
#include "core/object_kind.h"
#include "core/quota_tree.h"
#include "core/scheduler_config.h"
#include "core/types.h"
#include "core/workload.h"
#include "core/workload_queue.h"
#include "core/workloads_by_key.h"

namespace tollgate::core {

// Runtime view of one ClusterQueue: its spec, its node in the quota tree, its pending queue and
// the workloads holding its quota.
struct ClusterQueueRuntime {
  ClusterQueueSpec spec;
  QuotaNode* node = nullptr;
  // Resource name -> index into spec.resource_groups.
  absl::flat_hash_map<std::string, int> group_of_resource;
  WorkloadQueue queue;
  // Admitted and evicting workloads.
  HeldWorkloads holding;
  bool active = true;
  // Why the queue is inactive (for its status condition).
  std::string inactive_reason;
};

struct LocalQueueRuntime {
  LocalQueueSpec spec;
};

// Per flavor and resource usage of one queue, as Kueue's status reports it.
struct ResourceUsageRow {
  std::string flavor;
  std::string resource;
  int64_t total = 0;
  int64_t borrowed = 0;
};

struct QueueCounts {
  int64_t pending = 0;
  int64_t admitted = 0;
};

struct PendingPosition {
  WorkloadId id = 0;
  std::string cluster_queue;
  int64_t position_in_cluster_queue = 0;
  int64_t position_in_local_queue = 0;
};

// What Admit (admission on request, outside the cycle order) did or would do.
struct AdmitNowResult {
  enum class Outcome { kAdmitted, kPreempting, kPending };
  Outcome outcome = Outcome::kPending;
  Admission admission;
  std::vector<WorkloadId> victims;
  std::string message;
};

struct SubmitOutcome {
  WorkloadId id = 0;
  bool created = false;
};

// Everything the scheduler knows: configuration objects, the quota tree, every workload and the
// queues. The executor mutates it only through these methods and persists what they report as
// dirty; the planner reads it (and may temporarily change usage, restoring it before
// returning). Not thread-safe: the executor owns it on one thread.
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
  // NOT_FOUND if absent.
  absl::Status DeleteObject(ObjectKind kind, absl::string_view namespace_name,
                            absl::string_view name, absl::Time now);

  const std::map<std::string, NamespaceSpec>& namespaces() const { return namespaces_; }
  const std::map<std::string, ResourceFlavorSpec>& flavors() const { return flavors_; }
  const std::map<std::string, ClusterQueueSpec>& cluster_queue_specs() const {
    return cluster_queue_specs_;
  }
  const std::map<std::string, CohortSpec>& cohorts() const { return cohorts_; }
  // Keyed by "namespace/name".
  const std::map<std::string, LocalQueueRuntime>& local_queues() const { return local_queues_; }
  const std::map<std::string, PriorityClassSpec>& workload_priority_classes() const {
    return workload_priority_classes_;
  }
  const std::map<std::string, PriorityClassSpec>& pod_priority_classes() const {
    return pod_priority_classes_;
  }

  // --- Workloads.
  // Idempotent: the same key and spec returns the existing workload (created=false);
  // a different spec is ALREADY_EXISTS. A spec naming no queue goes to the namespace's
  // LocalQueue "default", and is refused when there is none.
  absl::StatusOr<SubmitOutcome> Submit(WorkloadSpec spec, std::string uid, absl::Time now);
  // Re-creates a workload read back from the store after a restart, keeping its status.
  absl::Status Restore(Workload workload);
  // Restore of each workload in turn (the order assigns their ids), done in bulk: indexes
  // reserved once, routes looked up once per LocalQueue, each ClusterQueue's pending queue
  // built from its sorted keys, and for a large restore the key index filled on a helper
  // thread. On an error (a duplicate key, a workload holding quota without an admission) the
  // state is partly restored and must be discarded.
  absl::Status RestoreAll(std::vector<std::unique_ptr<Workload>> workloads);
  absl::Status Finish(absl::string_view key, absl::string_view message, absl::Time now);
  absl::Status Delete(absl::string_view key, absl::Time now);
  // Operator or adapter eviction of an admitted workload: it returns to its queue.
  absl::Status Evict(absl::string_view key, absl::string_view reason, absl::string_view message,
                     absl::Time now);
  // The adapter reports an evicting workload's pods stopped: release its quota.
  absl::Status ReleaseEvicted(absl::string_view key, absl::Time now);
  absl::Status SetPodsReady(absl::string_view key, absl::Time now);
  // Operator preemption of an admitted workload: evicts it as the scheduler's preemption does,
  // counting towards its preemption history.
  absl::Status Preempt(absl::string_view key, absl::string_view message, absl::Time now);
  // The adapter reports that the workload saved its progress at `at` (not in the future).
  absl::Status RecordCheckpoint(absl::string_view key, absl::Time at, absl::Time now);

  const Workload* FindWorkload(absl::string_view key) const;
  const Workload* workload(WorkloadId id) const;
  Workload* mutable_workload(WorkloadId id);
  // Every live workload, in id (submission) order.
  std::vector<const Workload*> AllWorkloads() const;

  // --- Scheduling. A cycle is PlanCycle followed by ApplyCycle with the same `now`.
  CyclePlan PlanCycle(absl::Time now);
  void ApplyCycle(const CyclePlan& plan, absl::Time now);
  // Evaluates one pending workload now, ahead of queue order: admits it if it fits, or issues
  // the preemptions that would make it fit; with `dry_run` only reports.
  absl::StatusOr<AdmitNowResult> AdmitNow(absl::string_view key, bool dry_run, absl::Time now);
  // Fires time-based transitions due at `now` (eviction grace, pods-ready timeouts, backoff
  // expiry). Returns true if anything changed.
  bool FireTimers(absl::Time now);
  // The earliest future time at which FireTimers would change something.
  std::optional<absl::Time> NextTimer() const;

  // Workloads changed since the last call, in id order; deleted ones are reported in
  // TakeDeletedWorkloads. The executor persists both.
  std::vector<WorkloadId> TakeDirtyWorkloads();
  bool HasUncommittedChanges() const { return !dirty_.empty() || !deleted_.empty(); }
  bool IsDirty(WorkloadId id) const { return dirty_.contains(id); }
  std::vector<std::string> TakeDeletedWorkloads();

  // --- Visibility.
  const ClusterQueueRuntime* cluster_queue(absl::string_view name) const;
  ClusterQueueRuntime* mutable_cluster_queue(absl::string_view name);
  // The ClusterQueue of a quota-tree node (null for cohorts).
  const ClusterQueueRuntime* cluster_queue(const QuotaNode* node) const;
  const std::map<std::string, ClusterQueueRuntime, std::less<>>& cluster_queue_runtimes() const {
    return cluster_queues_;
  }
  std::vector<ResourceUsageRow> ClusterQueueUsage(absl::string_view name) const;
  std::vector<ResourceUsageRow> LocalQueueUsage(absl::string_view namespace_name,
                                                absl::string_view name) const;
  QueueCounts ClusterQueueCounts(absl::string_view name) const;
  QueueCounts LocalQueueCounts(absl::string_view namespace_name, absl::string_view name) const;
  // Pending workloads of a ClusterQueue or LocalQueue in the order they would be admitted.
  std::vector<PendingPosition> PendingInClusterQueue(absl::string_view name) const;
  std::vector<PendingPosition> PendingInLocalQueue(absl::string_view namespace_name,
                                                   absl::string_view name) const;
  // Kueue's weightedShare of a ClusterQueue or Cohort (0 when not borrowing).
  int64_t WeightedShare(absl::string_view name) const;

  // Shared with the planners.
  QuotaTree& tree() { return tree_; }
  const QuotaTree& tree() const { return tree_; }
  FlavorResourceIndex& fr_index() { return fr_index_; }
  const FlavorResourceIndex& fr_index() const { return fr_index_; }
  bool NamespaceMatches(const ClusterQueueSpec& cq, absl::string_view namespace_name) const;
  // The ClusterQueue a pending workload is queued in, if any.
  const std::string* QueuedIn(WorkloadId id) const;
  // The time Kueue orders a pending workload by (creation, or pods-ready eviction).
  absl::Time QueueOrderTime(const Workload& wl) const;
  int64_t cycle() const { return cycle_; }
  // The head the next cycle takes from this queue: the active set's first entry, or under
  // admission fair sharing the first entry of the LocalQueue with the least weighted usage.
  std::optional<WorkloadId> HeadOf(const ClusterQueueRuntime& cq) const;
  bool UsesAdmissionFairSharing(const ClusterQueueSpec& cq) const;
  // Admission fair sharing: the LocalQueue's decayed usage (plus penalties) over its weight.
  double LocalQueueFairUsage(absl::string_view namespace_name, absl::string_view name) const;
  // waitForPodsReady's blockAdmission: no admitted workload is still waiting for its pods.
  bool AllAdmittedPodsReady() const { return unready_admitted_.empty(); }

 private:
  struct Route {
    ClusterQueueRuntime* cluster_queue = nullptr;  // null when not queued
    std::string blocked_message;
  };

  Route RouteOf(const Workload& wl);
  void Requeue(Workload& wl, absl::Time now);
  // Requeue's bookkeeping for a workload that is not queued, along `route`. `keys`, when set,
  // collects the queue keys per ClusterQueue (active, inadmissible) instead of pushing them.
  struct PendingKeys {
    std::vector<QueueKey> active;
    std::vector<QueueKey> inadmissible;
  };
  void QueueRouted(Workload& wl, const Route& route, absl::Time now,
                   absl::flat_hash_map<ClusterQueueRuntime*, PendingKeys>* keys);
  // The route of the LocalQueue `namespace_name`/`queue_name`, kept across a RestoreAll.
  struct CachedRoute {
    std::string namespace_name;
    std::string queue_name;
    Route route;
  };
  // Everything Restore does for one workload already in workloads_ but its key index entry.
  absl::Status RestoreOne(Workload& ref,
                          absl::flat_hash_map<ClusterQueueRuntime*, PendingKeys>* keys,
                          std::optional<CachedRoute>* last_route);
  void Unqueue(Workload& wl);
  void RerouteAllPending(absl::Time now);
  void RebuildQuotaTree(absl::Time now);
  void RecomputeActivity();
  void RequeueInadmissibleInTreeOf(absl::string_view cluster_queue, absl::Time now);
  void RequeueAllInadmissible(absl::Time now);
  void AddUsageOf(const Workload& wl);
  void RemoveUsageOf(const Workload& wl);
  void ReleaseQuota(Workload& wl, absl::Time now);
  void StartEviction(Workload& wl, absl::Time now, const std::string& reason,
                     const std::string& message);
  void DrainStoppedQueues(absl::Time now);
  void PodsReadyTimeout(Workload& wl, absl::Time now);
  // Re-files a workload holding quota in its ClusterQueue's victim order after a change.
  void RefileHeld(const Workload& wl);
  // Wakes parked preemptors when an admitted workload's preemption rate-limit protection ends.
  void ArmPreemptionProtectionTimer(const Workload& wl, absl::Time now);
  absl::Duration EvictionGrace(const Workload& wl) const;
  // Admission fair sharing bookkeeping.
  std::map<std::string, double> AdmittedUsageOf(const std::string& local_queue_key) const;
  void DecayLocalQueueUsage(const std::string& local_queue_key, absl::Time now,
                            const std::map<std::string, double>& penalty);
  std::vector<WorkloadId> OrderForVisibility(const ClusterQueueRuntime& cq) const;
  void MarkDirty(WorkloadId id) { dirty_.insert(id); }
  absl::StatusOr<int32_t> ResolvePriority(const WorkloadSpec& spec) const;
  QueueKey KeyOf(const Workload& wl) const;
  Workload* FindMutable(absl::string_view key);

  SchedulerConfig config_;
  std::map<std::string, NamespaceSpec> namespaces_;
  std::map<std::string, ResourceFlavorSpec> flavors_;
  std::map<std::string, ClusterQueueSpec> cluster_queue_specs_;
  std::map<std::string, CohortSpec> cohorts_;
  std::map<std::string, LocalQueueRuntime> local_queues_;
  std::map<std::string, PriorityClassSpec> workload_priority_classes_;
  std::map<std::string, PriorityClassSpec> pod_priority_classes_;

  FlavorResourceIndex fr_index_;
  QuotaTree tree_;
  std::map<std::string, ClusterQueueRuntime, std::less<>> cluster_queues_;
  // Lookup indexes into cluster_queues_ (the hot paths look queues up per workload and per
  // tree node), rebuilt with the quota tree.
  absl::flat_hash_map<std::string, ClusterQueueRuntime*> cluster_queue_by_name_;
  absl::flat_hash_map<const QuotaNode*, ClusterQueueRuntime*> cluster_queue_by_node_;

  std::vector<std::unique_ptr<Workload>> workloads_;  // indexed by id; null once deleted
  WorkloadsByKey ids_by_key_;
  // Pending workload -> ClusterQueue it is queued in. A ClusterQueue's entries go before its
  // runtime does (RebuildQuotaTree).
  absl::flat_hash_map<WorkloadId, ClusterQueueRuntime*> queued_in_;
  // Per LocalQueue ("ns/name") pending and admitted counts are computed on demand.
  enum class TimerKind {
    kEvictionGrace,
    kPodsReadyTimeout,
    kBackoffExpired,
    kPreemptionProtectionEnds
  };
  // Time-based transitions, earliest first. Entries are hints: each is re-checked against the
  // workload when it fires, so stale ones are harmless.
  absl::btree_set<std::tuple<absl::Time, TimerKind, WorkloadId>> timers_;
  // Admission fair sharing: per LocalQueue ("ns/name") consumed usage, per resource in whole
  // units, decayed with the configured half-life; sampled every usageSamplingInterval.
  struct FairUsageLedger {
    std::map<std::string, double> consumed;
    absl::Time last_update = absl::InfinitePast();
    absl::Time next_sample = absl::InfiniteFuture();
  };
  std::map<std::string, FairUsageLedger> fair_usage_;
  // Admitted workloads whose pods are not all ready yet (waitForPodsReady).
  absl::btree_set<WorkloadId> unready_admitted_;
  absl::btree_set<WorkloadId> dirty_;
  std::vector<std::string> deleted_;
  int64_t cycle_ = 0;
};

}  // namespace tollgate::core
