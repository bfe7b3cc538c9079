#include <thread>

#include "absl/strings/str_cat.h"
#include "core/admission_checks.h"
#include "core/cluster_state.h"

// ClusterState's restore after a restart: workloads read back from the store re-enter the
// table, their queues and the quota tree with the status they had.

namespace tollgate::core {

absl::Status ClusterState::Restore(Workload workload) {
  std::vector<std::unique_ptr<Workload>> one;
  one.push_back(std::make_unique<Workload>(std::move(workload)));
  return RestoreAll(std::move(one));
}

absl::Status ClusterState::RestoreAll(std::vector<std::unique_ptr<Workload>> workloads) {
  for (const std::unique_ptr<Workload>& wl : workloads) {
    if (wl == nullptr) return absl::InvalidArgumentError("RestoreAll: no workload");
  }
  const size_t base = static_cast<size_t>(workloads_.next_id());
  const size_t count = workloads.size();
  workloads_.Reserve(count);
  router_.ReserveQueued(count);
  for (std::unique_ptr<Workload>& wl : workloads) workloads_.Append(std::move(wl));

  // The key index depends on nothing else restored, and filling it (a hash of the names and a
  // probe that misses the cache per workload) is a good part of the work: for a large restore a
  // helper thread fills it while this one routes and queues. Neither side touches what the
  // other writes: the helper reads only the workloads' names and workloads_ (which neither
  // grows here), and writes only the key index.
  std::optional<std::string> duplicate;
  auto index_keys = [this, base, count, &duplicate] {
    for (size_t i = base; i < base + count; ++i) {
      const Workload& wl = *workloads_.Get(static_cast<WorkloadId>(i));
      if (!workloads_.Index(wl.id) && !duplicate.has_value()) duplicate = wl.Key();
    }
  };
  constexpr size_t kMinForHelper = 1 << 16;
  std::thread indexer;
  if (count >= kMinForHelper) {
    indexer = std::thread(index_keys);
  } else {
    index_keys();
  }

  absl::flat_hash_map<ClusterQueueRuntime*, PendingKeys> keys;
  // Routing does not change during a restore, and stored workloads mostly share a few
  // LocalQueues: the route of the previous workload's LocalQueue is reused.
  std::optional<CachedRoute> last_route;
  absl::Status status;
  for (size_t i = base; i < base + count; ++i) {
    // The workloads were just decoded elsewhere and are cold; fetch a few ahead.
    constexpr size_t kPrefetchDistance = 8;
    if (i + kPrefetchDistance < base + count) {
      const Workload& ahead = *workloads_.Get(static_cast<WorkloadId>(i + kPrefetchDistance));
      __builtin_prefetch(&ahead.spec);
      __builtin_prefetch(&ahead.status);
    }
    status = RestoreOne(*workloads_.GetMutable(static_cast<WorkloadId>(i)), &keys, &last_route);
    if (!status.ok()) break;
  }
  // Queued even after an error, so that the router and the queues agree.
  for (auto& [cq, pending] : keys) {
    cq->queue.PushAll(std::move(pending.active), /*inadmissible=*/false);
    cq->queue.PushAll(std::move(pending.inadmissible), /*inadmissible=*/true);
  }
  if (indexer.joinable()) indexer.join();
  if (duplicate.has_value()) {
    return absl::AlreadyExistsError(absl::StrCat("workload ", *duplicate, " restored twice"));
  }
  return status;
}

absl::Status ClusterState::RestoreOne(Workload& ref,
                                      absl::flat_hash_map<ClusterQueueRuntime*, PendingKeys>* keys,
                                      std::optional<CachedRoute>* last_route) {
  workloads_.IndexOwner(ref.id);
  if (ref.HoldsQuota()) {
    const std::string key = ref.Key();
    if (!ref.status.admission.has_value()) {
      return absl::DataLossError(absl::StrCat("workload ", key, " holds quota without admission"));
    }
    DeriveQuotaUsage(ref);
    ClusterQueueRuntime* cq = mutable_cluster_queue(ref.status.admission->cluster_queue);
    // A deactivated workload whose pods still stop is not in Kueue's cache after a restart
    // either (its ClusterQueue counts HasActiveQuotaReservation ones).
    if (cq != nullptr && HoldsActiveReservation(ref)) {
      cq->holding.Insert(ref, EffectivePriority(ref, config_));
      AddUsageOf(ref);
    }
    if (ref.status.state == WorkloadState::kEvicting && config_.evictions_need_ack) {
      if (ref.status.history().eviction_deadline == absl::InfinitePast()) {
        ref.status.mutable_history().eviction_deadline =
            ref.status.history().evicted_at + EvictionGrace(ref);
      }
      timers_.Arm(ref.status.history().eviction_deadline, TimerKind::kEvictionGrace, ref.id);
    }
    if (ref.status.state == WorkloadState::kAdmitted ||
        ref.status.state == WorkloadState::kQuotaReserved) {
      ArmPreemptionProtectionTimer(ref, ref.status.admission_time);
    }
    if (ref.status.state == WorkloadState::kAdmitted) ArmExecutionDeadline(ref);
    if (ref.status.state == WorkloadState::kQuotaReserved &&
        AllChecksReady(ref.status.admission_checks())) {
      // Its checks are Ready but its delayed topology requests did not fit yet.
      delayed_topology_.insert(ref.id);
    }
    if ((ref.status.state == WorkloadState::kAdmitted ||
         ref.status.state == WorkloadState::kQuotaReserved) &&
        !ref.status.history().unhealthy_nodes.empty()) {
      // A failed node recorded before the restart still waits for its replacement (PlanCycle).
      delayed_topology_.insert(ref.id);
    }
    if (ref.status.state == WorkloadState::kQuotaReserved && config_.wait_for_pods_ready.enable) {
      // Waiting for its admission checks: it holds blockAdmission back, its timeout has not
      // started.
      unready_admitted_.insert(ref.id);
    }
    if (ref.status.state == WorkloadState::kAdmitted && config_.wait_for_pods_ready.enable &&
        !ref.status.pods_ready) {
      unready_admitted_.insert(ref.id);
      if (!WaitsForRecovery(ref.status)) {
        timers_.Arm(AdmittedTime(ref.status) + config_.wait_for_pods_ready.timeout,
                    TimerKind::kPodsReadyTimeout, ref.id);
      } else if (RecoveryTimeout() > absl::ZeroDuration()) {
        timers_.Arm(
            FindCondition(ref.status, "PodsReady")->last_transition_time + RecoveryTimeout(),
            TimerKind::kPodsRecoveryTimeout, ref.id);
      }
    }
  } else if (ref.Queueable(config_.admission_gated_by)) {
    // Requeue at the workload's creation time, as a fresh id is not queued yet. Kueue's queue
    // manager takes every running LocalQueue in at start and lists its workloads into the
    // active heap (AddLocalQueue), so one still backing off is tried at the first cycle.
    if (!last_route->has_value() || (*last_route)->namespace_name != ref.spec.namespace_name ||
        (*last_route)->queue_name != ref.spec.queue_name) {
      *last_route = CachedRoute{ref.spec.namespace_name, ref.spec.queue_name, router_.RouteOf(ref)};
    }
    QueueRouted(ref, (*last_route)->route, ref.creation_time, Backoff::kIgnore, keys);
  } else if (ref.status.state == WorkloadState::kFinished) {
    // Finished before the restart: its retention counts from its Finished condition, so one
    // already past it goes at the first timer round.
    ArmFinishedRetention(ref);
    // Finished workloads are read back in creation order, close enough to finish order for a
    // history that keeps the latest few hundred per queue.
    const Condition* finished = FindCondition(ref.status, "Finished");
    const Condition* admitted = FindCondition(ref.status, "Admitted");
    if (finished != nullptr && admitted != nullptr && admitted->status &&
        ref.status.admission_time != absl::InfinitePast()) {
      runtime_history_.Record(LocalQueueKey(ref.spec.namespace_name, ref.spec.queue_name),
                              finished->last_transition_time - AdmittedTime(ref.status));
    }
  }
  return absl::OkStatus();
}

}  // namespace tollgate::core
