#include "core/cluster_state.h"

#include <initializer_list>
#include <set>

#include "absl/strings/str_cat.h"
#include "core/admission_checks.h"
#include "core/admission_planner.h"
#include "core/topology_scheduling.h"
#include "core/unreserved_conditions.h"

namespace tollgate::core {

ClusterState::ClusterState(SchedulerConfig config) : config_(std::move(config)) {
  topology_.set_balanced_placement(config_.tas_balanced_placement);
  topology_.set_respect_node_affinity_preferred(config_.tas_respect_node_affinity_preferred);
}

// --- Configuration -------------------------------------------------------------------------

absl::Status ClusterState::ApplyNamespace(NamespaceSpec spec, absl::Time now) {
  registry_.PutNamespace(std::move(spec));
  // Selectors may match differently now: give parked workloads another look.
  RequeueAllInadmissible(now);
  return absl::OkStatus();
}

absl::Status ClusterState::ApplyResourceFlavor(ResourceFlavorSpec spec, absl::Time now) {
  registry_.PutResourceFlavor(std::move(spec));
  topology_.SetFlavors(registry_.flavors());
  RecomputeActivity();
  RerouteAllPending(now);
  RequeueAllInadmissible(now);
  // A flavor that stopped naming a terminating Topology may have been its last user.
  if (!registry_.terminating().empty()) finalize_check_due_ = true;
  return absl::OkStatus();
}

absl::Status ClusterState::ApplyClusterQueue(ClusterQueueSpec spec, absl::Time now) {
  registry_.PutClusterQueue(std::move(spec));
  RebuildQuotaTree(now);
  return absl::OkStatus();
}

absl::Status ClusterState::ApplyCohort(CohortSpec spec, absl::Time now) {
  registry_.PutCohort(std::move(spec));
  RebuildQuotaTree(now);
  return absl::OkStatus();
}

absl::Status ClusterState::ApplyLocalQueue(LocalQueueSpec spec, absl::Time now) {
  fair_usage_.Track(LocalQueueKey(spec.namespace_name, spec.name), now);
  // Kueue's LocalQueue controller hands the queue manager a LocalQueue when it is created
  // running or runs again after a stop (AddLocalQueue); a stop takes it out.
  const LocalQueueRuntime* before = registry_.FindLocalQueue(spec.namespace_name, spec.name);
  const bool taken_in = spec.stop_policy == StopPolicy::kNone &&
                        (before == nullptr || before->spec.stop_policy != StopPolicy::kNone);
  std::optional<LocalQueueSpec> added;
  if (taken_in) added = spec;
  registry_.PutLocalQueue(std::move(spec));
  RerouteAllPending(now, added.has_value() ? &*added : nullptr);
  DrainStoppedQueues(now);
  SyncAllChecks(now);
  return absl::OkStatus();
}

absl::Status ClusterState::ApplyPriorityClass(PriorityClassSpec spec, absl::Time now) {
  registry_.PutPriorityClass(std::move(spec));
  return absl::OkStatus();
}

void ClusterState::RebuildQuotaTree(absl::Time now) {
  tree_.Build(registry_.cluster_queue_specs(), registry_.cohorts(), fr_index_);
  router_.Rebuild(tree_);
  // Re-add the usage of every workload holding quota, in id order.
  for (const auto& wl : workloads_.slots()) {
    if (wl == nullptr || !HoldsActiveReservation(*wl) || !wl->status.admission.has_value()) {
      continue;
    }
    ClusterQueueRuntime* cq = mutable_cluster_queue(wl->status.admission->cluster_queue);
    if (cq == nullptr) continue;  // Its ClusterQueue is gone; the usage goes with it.
    cq->holding.Insert(*wl, EffectivePriority(*wl, config_));
    AddUsageOf(*wl);
  }
  RecomputeActivity();
  RerouteAllPending(now);
  RequeueAllInadmissible(now);
  DrainStoppedQueues(now);
  SyncAllChecks(now);
  // A ClusterQueue that stopped naming a terminating AdmissionCheck may have been its last user.
  if (!registry_.terminating().empty()) finalize_check_due_ = true;
}

void ClusterState::DrainStoppedQueues(absl::Time now) {
  // A stopped queue that runs again lets go the requeues its drain held back (Kueue's workload
  // controller: Requeued=True, LocalQueueRestarted or ClusterQueueRestarted), the LocalQueue
  // first, as Kueue looks at it first.
  for (const auto& slot : workloads_.slots()) {
    Workload* wl = slot.get();
    if (wl == nullptr || wl->status.state != WorkloadState::kPending) continue;
    const Condition* requeued = FindCondition(wl->status, "Requeued");
    if (requeued == nullptr || requeued->status) continue;
    const LocalQueueRuntime* lq =
        registry_.FindLocalQueue(wl->spec.namespace_name, wl->spec.queue_name);
    if (lq == nullptr) continue;
    if (requeued->reason == "LocalQueueStopped" && lq->spec.stop_policy == StopPolicy::kNone) {
      SetCondition(wl->status, Condition{"Requeued", true, "LocalQueueRestarted",
                                         "The LocalQueue was restarted after being stopped", now});
      MarkDirty(wl->id);
    } else if (requeued->reason == "ClusterQueueStopped") {
      const ClusterQueueRuntime* cq = cluster_queue(lq->spec.cluster_queue);
      if (cq != nullptr && cq->spec.stop_policy == StopPolicy::kNone) {
        SetCondition(wl->status,
                     Condition{"Requeued", true, "ClusterQueueRestarted",
                               "The ClusterQueue was restarted after being stopped", now});
        MarkDirty(wl->id);
      }
    }
  }
  for (auto& [name, cq] : router_.runtimes()) {
    const bool drain_cq = cq.spec.stop_policy == StopPolicy::kHoldAndDrain;
    // Kueue's workload controller looks at the LocalQueue before the ClusterQueue: a workload
    // whose queues both drain is evicted as LocalQueueStopped.
    std::vector<std::pair<WorkloadId, bool>> to_evict;  // (workload, by its LocalQueue)
    for (WorkloadId id : cq.holding) {
      const Workload* wl = workload(id);
      if (wl == nullptr || wl->status.state != WorkloadState::kAdmitted) continue;
      const LocalQueueRuntime* lq =
          registry_.FindLocalQueue(wl->spec.namespace_name, wl->spec.queue_name);
      const bool drain_lq = lq != nullptr && lq->spec.stop_policy == StopPolicy::kHoldAndDrain;
      if (drain_lq || drain_cq) to_evict.emplace_back(id, drain_lq);
    }
    // Kueue's messages do not name the queue (its QuotaReserved message does).
    for (const auto& [id, by_local_queue] : to_evict) {
      StartEviction(*mutable_workload(id), now,
                    by_local_queue ? "LocalQueueStopped" : "ClusterQueueStopped",
                    by_local_queue ? "The LocalQueue is stopped" : "The ClusterQueue is stopped");
    }
  }
  CancelReservationsInInactiveQueues(now);
}

// --- Routing and queues --------------------------------------------------------------------

absl::Time ClusterState::QueueOrderTime(const Workload& wl) const {
  // Kueue's GetQueueOrderTimestamp: a workload counts from its eviction only while that eviction
  // is its Evicted condition (True): by the PodsReady timeout under the Eviction requeuing
  // timestamp, or by an admission check (Retry) whatever the strategy, behind what waited
  // meanwhile. Admitted again (the condition turns False) or evicted since for another reason
  // (preempted), it counts from its creation again, both in its queue and when
  // LowerOrNewerEqualPriority compares it with a preemptor. Whether waitForPodsReady is on now
  // does not matter (Kueue's requeuing timestamp defaults to Eviction without it): a workload
  // timed out before a restart that turned it off keeps its eviction time.
  const Condition* evicted = FindCondition(wl.status, "Evicted");
  if (evicted != nullptr && evicted->status) {
    if (evicted->reason == "PodsReadyTimeout" &&
        config_.wait_for_pods_ready.requeuing_timestamp == RequeuingTimestamp::kEviction) {
      return evicted->last_transition_time;
    }
    if (evicted->reason == kEvictedByAdmissionCheck) return evicted->last_transition_time;
  }
  // Without PrioritySortingWithinCohort nothing but this keeps a borrowing preemptor ahead of
  // the lower-priority workload it reclaimed from, which would otherwise come back first by its
  // older creation and take the quota again: Kueue counts such a victim from just after its
  // preemption (a millisecond later, so strictly after a preemptor created at that instant).
  if (!config_.priority_sorting_within_cohort) {
    const Condition* preempted = FindCondition(wl.status, "Preempted");
    if (preempted != nullptr && preempted->status &&
        preempted->reason == "InCohortReclaimWhileBorrowing") {
      return preempted->last_transition_time + absl::Milliseconds(1);
    }
  }
  return wl.creation_time;
}

QueueKey ClusterState::KeyOf(const Workload& wl) const {
  return QueueKey{1, EffectivePriority(wl, config_), QueueOrderTime(wl), wl.id};
}

void ClusterState::Requeue(Workload& wl, absl::Time now) {
  // Kueue's workload controller puts an updated workload back through AddOrUpdateWorkload,
  // which tracks it from then on; PushOrUpdate keeps one already in the active heap there,
  // backing off or not.
  backoff_outside_queue_.erase(wl.id);
  const ClusterQueueRuntime* was_in = router_.QueuedIn(wl.id);
  const bool was_active = was_in != nullptr && !was_in->queue.IsInadmissible(wl.id);
  Unqueue(wl);
  if (!wl.Queueable(config_.admission_gated_by)) return;
  const Route route = router_.RouteOf(wl);
  const bool stays_active = was_active && route.cluster_queue == was_in;
  QueueRouted(wl, route, now, stays_active ? Backoff::kIgnore : Backoff::kKeep, nullptr);
}

namespace {

// Kueue's workload controller re-evaluates a pending workload's QuotaReserved=False condition
// whenever its queues change: a blockage it wrote (Suspended, Misconfigured) that no longer
// holds becomes PendingEvaluation until a cycle evaluates the workload. `reasons` are the
// blockages the caller knows to be resolved. Returns whether the condition changed.
bool ClearResolvedBlockage(WorkloadStatus& status, std::initializer_list<PendingReason> reasons,
                           absl::Time now) {
  const Condition* reserved = FindCondition(status, "QuotaReserved");
  if (reserved == nullptr || reserved->status) return false;
  for (PendingReason reason : reasons) {
    if (reserved->reason == PendingReasonName(reason)) {
      status.pending_message.clear();
      SetPendingCondition(status, PendingReason::kPendingEvaluation, kPendingEvaluationMessage,
                          now);
      return true;
    }
  }
  return false;
}

}  // namespace

void ClusterState::QueueRouted(Workload& wl, const Route& route, absl::Time now, Backoff backoff,
                               absl::flat_hash_map<ClusterQueueRuntime*, PendingKeys>* keys) {
  if (route.cluster_queue != nullptr) {
    ClusterQueueRuntime& cq = *route.cluster_queue;
    const absl::Time requeue_at = wl.status.history().requeue_at;
    const bool backing_off = requeue_at > now;
    const bool parked = backing_off && backoff == Backoff::kKeep;
    if (keys != nullptr) {
      PendingKeys& pending = (*keys)[&cq];
      (parked ? pending.inadmissible : pending.active).push_back(KeyOf(wl));
    } else if (parked) {
      cq.queue.PushInadmissible(KeyOf(wl));
    } else {
      cq.queue.PushActive(KeyOf(wl));
    }
    // Tried early or not, the backoff still ends then (Requeued=True, BackoffFinished), and a
    // workload parked meanwhile goes back to the active set.
    if (backing_off) timers_.Arm(requeue_at, TimerKind::kBackoffExpired, wl.id);
    router_.MarkQueued(wl.id, cq);
    // Queued again with nothing in its way: what blocked it before is resolved. (Not while
    // restoring: the stored conditions are read back as they were.)
    if (keys == nullptr && route.blocked_message.empty() &&
        ClearResolvedBlockage(wl.status, {PendingReason::kSuspended, PendingReason::kMisconfigured},
                              now)) {
      MarkDirty(wl.id);
    }
  }
  if (!route.blocked_message.empty() && wl.status.pending_message != route.blocked_message) {
    wl.status.pending_message = route.blocked_message;
    SetPendingCondition(wl.status, route.blocked_reason, route.blocked_message, now);
    MarkDirty(wl.id);
  }
}

void ClusterState::RerouteAllPending(absl::Time now, const LocalQueueSpec* added_local_queue) {
  for (const auto& slot : workloads_.slots()) {
    Workload* wl = slot.get();
    if (wl == nullptr || wl->status.state != WorkloadState::kPending) continue;
    if (added_local_queue != nullptr &&
        wl->spec.namespace_name == added_local_queue->namespace_name &&
        wl->spec.queue_name == added_local_queue->name) {
      backoff_outside_queue_.erase(wl->id);
    }
    Route route = router_.RouteOf(*wl);
    const ClusterQueueRuntime* queued = router_.QueuedIn(wl->id);
    const bool same_queue = queued != nullptr && queued == route.cluster_queue;
    if (same_queue && route.blocked_message.empty()) {
      // Its ClusterQueue is active again (a stop resumed): no longer Suspended. A Misconfigured
      // the scheduler wrote stays until the workload is evaluated again.
      if (ClearResolvedBlockage(wl->status, {PendingReason::kSuspended}, now)) MarkDirty(wl->id);
      continue;
    }
    if (same_queue && wl->status.pending_message == route.blocked_message) continue;
    if (!same_queue) {
      // Queued in another ClusterQueue, or in one again: Kueue's AddFromLocalQueue pushes the
      // LocalQueue's workloads to the active heap whatever their backoff, all but those it
      // does not track yet.
      Unqueue(*wl);
      if (!wl->Queueable(config_.admission_gated_by)) continue;
      const Backoff backoff =
          backoff_outside_queue_.contains(wl->id) ? Backoff::kKeep : Backoff::kIgnore;
      QueueRouted(*wl, route, now, backoff, nullptr);
    } else if (wl->status.pending_message != route.blocked_message) {
      wl->status.pending_message = route.blocked_message;
      SetPendingCondition(wl->status, route.blocked_reason, route.blocked_message, now);
      MarkDirty(wl->id);
    }
  }
}

void ClusterState::RequeueInadmissibleInTreeOf(absl::string_view cluster_queue, absl::Time now) {
  ClusterQueueRuntime* cq = mutable_cluster_queue(cluster_queue);
  if (cq == nullptr || cq->node == nullptr) return;
  auto ready_at = [this](WorkloadId id) { return workload(id)->status.history().requeue_at; };
  if (!cq->node->HasParent()) {
    cq->queue.RequeueInadmissible(now, ready_at);
    return;
  }
  for (QuotaNode* node : tree_.ClusterQueuesUnder(cq->node->Root())) {
    if (ClusterQueueRuntime* other = mutable_cluster_queue(node->name())) {
      other->queue.RequeueInadmissible(now, ready_at);
    }
  }
}

void ClusterState::RequeueAllInadmissible(absl::Time now) {
  auto ready_at = [this](WorkloadId id) { return workload(id)->status.history().requeue_at; };
  for (auto& [name, cq] : router_.runtimes()) cq.queue.RequeueInadmissible(now, ready_at);
}

std::optional<WorkloadId> ClusterState::HeadOf(const ClusterQueueRuntime& cq) const {
  if (!UsesAdmissionFairSharing(cq.spec)) return cq.queue.Head();
  // The first active workload of each LocalQueue competes; the least-used LocalQueue wins,
  // then the usual priority and age order.
  std::optional<WorkloadId> best;
  double best_usage = 0;
  std::set<std::string> seen;
  for (WorkloadId id : cq.queue.ActiveInOrder()) {
    const Workload* wl = workload(id);
    const std::string lq = LocalQueueKey(wl->spec.namespace_name, wl->spec.queue_name);
    if (!seen.insert(lq).second) continue;
    const double usage = LocalQueueFairUsage(wl->spec.namespace_name, wl->spec.queue_name);
    if (!best.has_value() || usage < best_usage) {
      best = id;
      best_usage = usage;
    }
  }
  return best;
}

double ClusterState::LocalQueueFairUsage(absl::string_view namespace_name,
                                         absl::string_view name) const {
  const LocalQueueRuntime* lq = registry_.FindLocalQueue(namespace_name, name);
  return fair_usage_.WeightedUsage(LocalQueueKey(namespace_name, name),
                                   lq == nullptr ? 1.0 : lq->spec.fair_weight);
}

// --- Usage ---------------------------------------------------------------------------------

void ClusterState::AddUsageOf(const Workload& wl) { AddUsageOf(wl, {}); }

void ClusterState::AddUsageOf(const Workload& wl, absl::Span<const PlacedTopology> carried) {
  topology_.SetWorkloadUsage(wl.id, AdmittedTopologyUsage(wl, carried, topology_));
  ClusterQueueRuntime* cq = mutable_cluster_queue(wl.status.admission->cluster_queue);
  if (cq == nullptr || cq->node == nullptr) return;
  for (const auto& [fr, value] : wl.quota_usage) cq->node->AddUsage(fr, value);
  cq->holding.CountUsage(wl.quota_usage);
}

void ClusterState::RemoveUsageOf(const Workload& wl) {
  topology_.ClearWorkloadUsage(wl.id);
  ClusterQueueRuntime* cq = mutable_cluster_queue(wl.status.admission->cluster_queue);
  if (cq == nullptr || cq->node == nullptr) return;
  for (const auto& [fr, value] : wl.quota_usage) cq->node->RemoveUsage(fr, value);
  cq->holding.UncountUsage(wl.quota_usage);
  router_.BumpAllocatableGeneration(*cq);
}

}  // namespace tollgate::core
