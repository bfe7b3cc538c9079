#include <algorithm>

#include "absl/algorithm/container.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/admission_checks.h"
#include "core/admission_gates.h"
#include "core/cluster_state.h"
#include "core/submit_preview.h"
#include "core/unreserved_conditions.h"

// ClusterState's workload transitions: submit, finish, delete, evict and preempt on request,
// the adapter's reports (stopped, pods ready, checkpoint), and the timers that drive the same
// transitions when time passes.

namespace tollgate::core {
namespace {

// Kueue's message for a deactivation by maximumExecutionTimeSeconds; the Evicted condition
// carries it, which is how a release tells this eviction from the others.
constexpr char kMaximumExecutionTimeMessage[] =
    "The workload is deactivated due to exceeding the maximum execution time";

// The end of a PodsReady or admission check backoff that held a requeue back (Requeued=False
// with the eviction's reason): Kueue's workload controller lets it go (True, BackoffFinished),
// whether or not the workload's queue can take it now, and even when it was admitted before
// the backoff ended (its queue tried it early). False when there was none to end.
bool FinishBackoff(Workload& wl, absl::Time now) {
  const Condition* requeued = FindCondition(wl.status, "Requeued");
  if (requeued == nullptr || requeued->status || !wl.spec.active || wl.status.deactivated ||
      wl.status.state == WorkloadState::kFinished ||
      (requeued->reason != "PodsReadyTimeout" && requeued->reason != kEvictedByAdmissionCheck)) {
    return false;
  }
  SetBackoffFinished(wl.status, now);
  return true;
}

}  // namespace

void ClusterState::ReleaseQuota(Workload& wl, absl::Time now) {
  if (!wl.HoldsQuota()) return;
  const std::string cq_name = wl.status.admission->cluster_queue;
  if (ClusterQueueRuntime* cq = mutable_cluster_queue(cq_name)) {
    if (cq->holding.Erase(wl.id)) RemoveUsageOf(wl);
  }
  wl.quota_usage.clear();
  // A deactivated workload (by spec.active, a Rejected check or a limit) keeps its entry
  // penalty while it holds its reservation (activated again, it may still be admitted on it);
  // once the reservation is gone the penalty cannot settle.
  if (!wl.spec.active || wl.status.deactivated) DropEntryPenalty(wl);
  unready_admitted_.erase(wl.id);
  delayed_topology_.erase(wl.id);
  second_pass_retries_.erase(wl.id);
  if (!registry_.terminating().empty()) finalize_check_due_ = true;
  RequeueInadmissibleInTreeOf(cq_name, now);
}

void ClusterState::DropInactiveReservation(Workload& wl, absl::Time now) {
  if (!wl.HoldsQuota() || HoldsActiveReservation(wl)) return;
  const std::string cq_name = wl.status.admission->cluster_queue;
  ClusterQueueRuntime* cq = mutable_cluster_queue(cq_name);
  if (cq == nullptr || !cq->holding.Erase(wl.id)) return;
  RemoveUsageOf(wl);
  // Out of the cache, it no longer holds blockAdmission back either.
  unready_admitted_.erase(wl.id);
  if (!registry_.terminating().empty()) finalize_check_due_ = true;
  // Kueue's workload controller drops it while holding the queues, then requeues the
  // inadmissible workloads of its cohort tree (QueueAssociatedInadmissibleWorkloadsAfter).
  RequeueInadmissibleInTreeOf(cq_name, now);
}

void ClusterState::RestoreActiveReservation(Workload& wl) {
  if (!HoldsActiveReservation(wl)) return;
  ClusterQueueRuntime* cq = mutable_cluster_queue(wl.status.admission->cluster_queue);
  if (cq == nullptr || cq->holding.contains(wl.id)) return;
  cq->holding.Insert(wl, EffectivePriority(wl, config_));
  AddUsageOf(wl);
}

absl::Duration ClusterState::EvictionGrace(const Workload& wl) const {
  return wl.spec.checkpoint_grace_seconds > 0 ? absl::Seconds(wl.spec.checkpoint_grace_seconds)
                                              : config_.eviction_grace_period;
}

void ClusterState::StartEviction(Workload& wl, absl::Time now, const std::string& reason,
                                 const std::string& message) {
  if (wl.status.state != WorkloadState::kAdmitted &&
      wl.status.state != WorkloadState::kQuotaReserved) {
    return;
  }
  // A reservation still waiting for its checks never started anything to stop.
  const bool running = wl.status.state == WorkloadState::kAdmitted;
  wl.status.state = WorkloadState::kEvicting;
  wl.status.mutable_history().evicted_at = now;
  RefileHeld(wl);
  SetCondition(wl.status, Condition{"Evicted", true, reason, message, now});
  AddEvent(wl.status, now, absl::StrCat("EvictedDueTo", reason), message);
  // Kueue starts every check over when a workload loses its quota.
  if (!wl.status.admission_checks().empty()) {
    ResetChecksAfterEviction(wl.status.mutable_admission_checks(), now);
  }
  // Kueue's resetUnhealthyNodes: the next admission places every pod afresh, so the failed
  // nodes a replacement was for no longer describe it (and a requeued workload must not be
  // taken for one being replaced).
  if (!wl.status.history().unhealthy_nodes.empty()) {
    wl.status.mutable_history().unhealthy_nodes.clear();
  }
  // Kueue's resetClusterNomination: the next reservation is dispatched afresh. The job status
  // mirrored from the winner described that admission's remote job, which is removed with its
  // copy: kept, it would show the manager's suspended job as still running there.
  if (!wl.status.history().cluster_name.empty() ||
      !wl.status.history().nominated_cluster_names.empty()) {
    if (!wl.status.history().cluster_name.empty()) {
      wl.status.mutable_history().job_status = std::nullopt;
    }
    wl.status.mutable_history().cluster_name.clear();
    wl.status.mutable_history().nominated_cluster_names.clear();
  }
  MarkDirty(wl.id);
  DropInactiveReservation(wl, now);
  if (config_.evictions_need_ack && running) {
    // Cooperative preemption: the workload's own checkpoint grace, else the service default.
    wl.status.mutable_history().eviction_deadline = now + EvictionGrace(wl);
    SetCondition(wl.status,
                 Condition{"Preempting", true, reason,
                           absl::StrCat("checkpoint and stop by ",
                                        absl::FormatTime(wl.status.history().eviction_deadline)),
                           now});
    timers_.Arm(wl.status.history().eviction_deadline, TimerKind::kEvictionGrace, wl.id);
  } else {
    // Nothing to wait for: the workload stops at once and returns to its queue.
    const absl::Status released = ReleaseEvicted(wl.Key(), now);
    (void)released;  // Cannot fail: the workload is evicting.
  }
}

absl::Status ClusterState::ReleaseEvicted(absl::string_view key, absl::Time now) {
  Workload* wl = workloads_.FindMutable(key);
  if (wl == nullptr) return absl::NotFoundError(absl::StrCat("workload ", key, " not found"));
  if (wl->status.state != WorkloadState::kEvicting) {
    return absl::FailedPreconditionError(absl::StrCat(
        "workload ", key, " is ", WorkloadStateName(wl->status.state), ", not Evicting"));
  }
  ReleaseQuota(*wl, now);
  // The copies go with the quota (MultiKueue removes them once it is released); what the
  // controller last saw of them would describe the next reservation's copies wrongly.
  if (!wl->status.history().multi_kueue_remotes.empty()) {
    wl->status.mutable_history().multi_kueue_remotes.clear();
  }
  const Condition* evicted = FindCondition(wl->status, "Evicted");
  const bool timed_out = wl->status.deactivated && evicted != nullptr && evicted->status &&
                         evicted->message == kMaximumExecutionTimeMessage;
  const bool rejected_by_check = wl->status.deactivated && evicted != nullptr && evicted->status &&
                                 evicted->reason == kDeactivatedByAdmissionCheck;
  // Copies: SetCondition below may grow the conditions and move what `evicted` points at.
  const std::string rejection_message = rejected_by_check ? evicted->message : "";
  // Kueue's job reconciler clears the reservation with the eviction's message, which a
  // workload keeps until the scheduler next looks at it (not before a backoff ends).
  const std::string eviction_message =
      evicted != nullptr && evicted->status ? evicted->message : std::string();
  const std::string eviction_reason =
      evicted != nullptr && evicted->status ? evicted->reason : std::string("Evicted");
  // A deactivation that named its cause (SetActive's DeactivationCause) keeps saying why.
  const std::string deactivation_message =
      !wl->spec.active && evicted != nullptr && evicted->status &&
              absl::StartsWith(evicted->reason, "DeactivatedDueTo")
          ? evicted->message
          : "The workload is deactivated";
  evicted = nullptr;
  // Kueue's accumulatedPastExecutionTimeSeconds: the admitted time of this cycle counts against
  // the limit in the next one (not when the limit itself ended it: that starts afresh). Whole
  // seconds, each cycle truncated, as Kueue counts: the stored field holds seconds, so a restart
  // reads back exactly what the running process had. A reservation that never got past its
  // admission checks ran for no time.
  const Condition* admitted_condition = FindCondition(wl->status, "Admitted");
  const bool was_admitted = admitted_condition != nullptr && admitted_condition->status;
  if (wl->spec.maximum_execution_time_seconds.has_value() && !timed_out && was_admitted) {
    const absl::Duration admitted = std::max(absl::ZeroDuration(), now - AdmittedTime(wl->status));
    wl->status.mutable_history().past_execution += absl::Trunc(admitted, absl::Seconds(1));
  }
  wl->status.state = WorkloadState::kPending;
  wl->status.admission.reset();
  wl->status.set_admitted_pod_sets({});
  wl->status.pods_ready = false;
  if (config_.wait_for_pods_ready.enable && FindCondition(wl->status, "PodsReady") != nullptr) {
    // Kueue's job reconciler: a workload no longer admitted waits for its pods to start again.
    SetCondition(wl->status, Condition{"PodsReady", false, "WaitForStart",
                                       "Not all pods are ready or succeeded", now});
  }
  wl->status.mutable_history().eviction_deadline = absl::InfinitePast();
  SetCondition(wl->status, Condition{"Preempting", false, "Stopped", "", now});
  wl->status.pending_message =
      timed_out           ? kMaximumExecutionTimeMessage
      : rejected_by_check ? rejection_message
      : wl->status.deactivated
          ? "The workload is deactivated due to exceeding the maximum number of re-queuing "
            "retries"
      : !wl->spec.active                        ? deactivation_message
      : wl->status.waiting_for_replacement_pods ? kWaitingForPodsMessage
                                                : eviction_message;
  if (!wl->spec.active || wl->status.deactivated) {
    // Not requeued: Kueue's workload controller names a deactivated workload's state, with the
    // same message whatever deactivated it (the Evicted condition names the cause).
    SetUnreservedConditions(wl->status, "Deactivated", kDeactivatedMessage, now);
  } else {
    // Requeued, to be evaluated again, with the eviction's message (Kueue's job reconciler;
    // the workload controller keeps a PendingEvaluation until a cycle evaluates the workload).
    SetPendingCondition(wl->status, PendingReason::kPendingEvaluation, eviction_message, now);
  }
  // Kueue's job reconciler, once the job stopped: Requeued names the eviction, True only after a
  // preemption or a node failure; any other eviction holds the requeue back (False) until the
  // workload controller lets it go: at the end of the backoff (FinishBackoff), on reactivation
  // (SetActive) or when the stopped queue runs again (DrainStoppedQueues).
  const bool requeued = eviction_reason == "Preempted" || eviction_reason == "NodeFailures";
  SetCondition(wl->status, Condition{"Requeued", requeued, eviction_reason, eviction_message, now});
  // No backoff to wait for: the workload controller lets it go at once.
  if (wl->status.history().requeue_at <= now) FinishBackoff(*wl, now);
  AddEvent(wl->status, now, "Requeued", "Workload requeued after eviction");
  MarkDirty(wl->id);
  // Without an admission it carries only the checks that cover every flavor of its queue.
  SyncChecks(*wl, now);
  Requeue(*wl, now);
  // Kueue's workload controller does not requeue a workload whose backoff has not ended (its
  // Reconcile adds it then): until that, its queue manager does not track it.
  if (wl->Queueable(config_.admission_gated_by) && wl->status.history().requeue_at > now) {
    backoff_outside_queue_.insert(wl->id);
  }
  return absl::OkStatus();
}

// --- Workloads -----------------------------------------------------------------------------

absl::StatusOr<SubmitOutcome> ClusterState::Submit(WorkloadSpec spec, std::string uid,
                                                   absl::Time now,
                                                   std::optional<WorkloadOwner> owner) {
  absl::StatusOr<SubmitPreview> preview =
      PreviewSubmit(*this, std::move(spec), owner.has_value() ? &*owner : nullptr);
  if (!preview.ok()) return preview.status();
  if (preview->existing != nullptr) return SubmitOutcome{preview->existing->id, false};

  auto wl = std::make_unique<Workload>();
  wl->id = workloads_.next_id();
  wl->uid = uid.empty() ? absl::StrCat("tollgate-", wl->id) : std::move(uid);
  wl->creation_time = now;
  wl->spec = std::move(preview->spec);
  wl->priority = preview->priority;
  if (owner.has_value()) wl->owner = std::move(*owner);
  wl->status.state = WorkloadState::kPending;
  AddEvent(wl->status, now, "Created",
           absl::StrCat("Submitted to LocalQueue ", wl->spec.queue_name));
  Workload& ref = workloads_.Append(std::move(wl));
  workloads_.Index(ref.id);
  workloads_.IndexOwner(ref.id);
  MarkDirty(ref.id);
  Requeue(ref, now);
  // Kueue's workload controller marks a gated workload on first sight; Requeue left it out.
  if (HasAdmissionGate(ref.spec, config_.admission_gated_by)) {
    MarkAdmissionGated(ref.status, *AdmissionGatedByOf(ref.spec), now, /*first_seen=*/true);
  }
  // Submitted inactive: Kueue's workload controller evicts it on first sight (Evicted=True,
  // Deactivated) and names its state, before any cycle and whatever its queue or gates.
  if (!ref.spec.active) {
    ref.status.pending_message = std::string(kDeactivatedMessage);
    SetDeactivatedUnreservedConditions(ref.status, "Deactivated", kDeactivatedMessage, now);
  }
  SyncChecks(ref, now);
  return SubmitOutcome{ref.id, true};
}

absl::Status ClusterState::Finish(absl::string_view key, absl::string_view message, absl::Time now,
                                  absl::string_view reason) {
  Workload* wl = workloads_.FindMutable(key);
  if (wl == nullptr) return absl::NotFoundError(absl::StrCat("workload ", key, " not found"));
  if (wl->status.state == WorkloadState::kFinished) return absl::OkStatus();
  if (!wl->HoldsQuota()) {
    return absl::FailedPreconditionError(absl::StrCat("workload ", key, " is ",
                                                      WorkloadStateName(wl->status.state),
                                                      "; only an admitted workload can finish"));
  }
  const bool ran = wl->status.state != WorkloadState::kQuotaReserved;
  ReleaseQuota(*wl, now);
  DropEntryPenalty(*wl);
  if (ran) {
    runtime_history_.Record(LocalQueueKey(wl->spec.namespace_name, wl->spec.queue_name),
                            now - AdmittedTime(wl->status));
  }
  wl->status.state = WorkloadState::kFinished;
  wl->status.pending_message.clear();
  SetCondition(wl->status,
               Condition{"Finished", true, reason.empty() ? "Succeeded" : std::string(reason),
                         std::string(message), now});
  AddEvent(wl->status, now, "Finished",
           message.empty() ? "Workload finished" : std::string(message));
  MarkDirty(wl->id);
  ArmFinishedRetention(*wl);
  return absl::OkStatus();
}

absl::Status ClusterState::Delete(absl::string_view key, absl::Time now) {
  std::optional<WorkloadId> found = workloads_.FindId(key);
  if (!found.has_value()) {
    return absl::NotFoundError(absl::StrCat("workload ", key, " not found"));
  }
  const WorkloadId id = *found;
  Workload& wl = *workloads_.GetMutable(id);
  Unqueue(wl);
  ReleaseQuota(wl, now);
  DropEntryPenalty(wl);
  workloads_.Erase(id);
  return absl::OkStatus();
}

absl::Status ClusterState::Evict(absl::string_view key, absl::string_view reason,
                                 absl::string_view message, absl::Time now) {
  Workload* wl = workloads_.FindMutable(key);
  if (wl == nullptr) return absl::NotFoundError(absl::StrCat("workload ", key, " not found"));
  if (wl->status.state != WorkloadState::kAdmitted &&
      wl->status.state != WorkloadState::kQuotaReserved) {
    return absl::FailedPreconditionError(
        absl::StrCat("workload ", key, " is ", WorkloadStateName(wl->status.state),
                     "; only an admitted workload can be evicted"));
  }
  StartEviction(*wl, now, std::string(reason), std::string(message));
  return absl::OkStatus();
}

absl::Status ClusterState::Preempt(absl::string_view key, absl::string_view message,
                                   absl::Time now) {
  Workload* wl = workloads_.FindMutable(key);
  if (wl == nullptr) return absl::NotFoundError(absl::StrCat("workload ", key, " not found"));
  if (wl->status.state != WorkloadState::kAdmitted &&
      wl->status.state != WorkloadState::kQuotaReserved) {
    return absl::FailedPreconditionError(
        absl::StrCat("workload ", key, " is ", WorkloadStateName(wl->status.state),
                     "; only an admitted workload can be preempted"));
  }
  RecordPreemption(wl->status, now);
  wl->status.mutable_history().last_preemption_reason = "OnRequest";
  SetCondition(wl->status, Condition{"Preempted", true, "OnRequest", std::string(message), now});
  AddEvent(wl->status, now, "Preempted", std::string(message));
  StartEviction(*wl, now, "Preempted", std::string(message));
  return absl::OkStatus();
}

absl::Status ClusterState::RecordCheckpoint(absl::string_view key, absl::Time at, absl::Time now) {
  Workload* wl = workloads_.FindMutable(key);
  if (wl == nullptr) return absl::NotFoundError(absl::StrCat("workload ", key, " not found"));
  if (at > now) {
    return absl::InvalidArgumentError(absl::StrCat("checkpoint_time: ", absl::FormatTime(at),
                                                   " is in the future (now ", absl::FormatTime(now),
                                                   ")"));
  }
  if (!wl->HoldsQuota()) {
    return absl::FailedPreconditionError(
        absl::StrCat("workload ", key, " is ", WorkloadStateName(wl->status.state),
                     "; only a running workload can report a checkpoint"));
  }
  // Reports may arrive out of order; the latest checkpoint wins.
  if (at <= wl->status.history().last_checkpoint_time) return absl::OkStatus();
  wl->status.mutable_history().last_checkpoint_time = at;
  MarkDirty(wl->id);
  RefileHeld(*wl);
  return absl::OkStatus();
}

void ClusterState::RefileHeld(const Workload& wl) {
  if (ClusterQueueRuntime* cq = mutable_cluster_queue(wl.status.admission->cluster_queue)) {
    if (cq->holding.contains(wl.id)) cq->holding.Insert(wl, EffectivePriority(wl, config_));
  }
}

void ClusterState::ArmPreemptionProtectionTimer(const Workload& wl, absl::Time now) {
  const ClusterQueueRuntime* cq = cluster_queue(wl.status.admission->cluster_queue);
  if (cq == nullptr) return;
  if (std::optional<absl::Time> until = PreemptionProtectedUntil(wl.status, cq->spec, now)) {
    timers_.Arm(*until, TimerKind::kPreemptionProtectionEnds, wl.id);
  }
}

absl::Status ClusterState::SetPodsReady(absl::string_view key, absl::Time now) {
  Workload* wl = workloads_.FindMutable(key);
  if (wl == nullptr) return absl::NotFoundError(absl::StrCat("workload ", key, " not found"));
  if (wl->status.state != WorkloadState::kAdmitted) {
    return absl::FailedPreconditionError(
        absl::StrCat("workload ", key, " is ", WorkloadStateName(wl->status.state),
                     "; pods can only be ready for an admitted workload"));
  }
  unready_admitted_.erase(wl->id);
  if (!wl->status.pods_ready) {
    wl->status.pods_ready = true;
    // Kueue's job reconciler writes PodsReady only with waitForPodsReady
    // (generatePodsReadyCondition): Started the first time, Recovered once a workload that lost
    // a pod is running again; the same message for both.
    if (config_.wait_for_pods_ready.enable) {
      const Condition* before = FindCondition(wl->status, "PodsReady");
      const bool recovered = before != nullptr &&
                             (before->reason == kWaitForRecovery || before->reason == "Recovered");
      SetCondition(wl->status,
                   Condition{"PodsReady", true, recovered ? "Recovered" : "Started",
                             "All pods reached readiness and the workload is running", now});
    }
    MarkDirty(wl->id);
  }
  return absl::OkStatus();
}

absl::Status ClusterState::SetPodsNotReady(absl::string_view key, absl::Time now) {
  Workload* wl = workloads_.FindMutable(key);
  if (wl == nullptr) return absl::NotFoundError(absl::StrCat("workload ", key, " not found"));
  if (wl->status.state != WorkloadState::kAdmitted) {
    return absl::FailedPreconditionError(
        absl::StrCat("workload ", key, " is ", WorkloadStateName(wl->status.state),
                     "; pods can only lose readiness in an admitted workload"));
  }
  // Never ready yet: the pods-ready timeout from admission already runs. Already waiting for
  // recovery: the recovery timeout keeps counting from the first loss.
  if (!wl->status.pods_ready) return absl::OkStatus();
  wl->status.pods_ready = false;
  AddEvent(wl->status, now, "PodsNotReady", "At least one pod has failed, waiting for recovery");
  MarkDirty(wl->id);
  if (config_.wait_for_pods_ready.enable) {
    SetCondition(wl->status, Condition{"PodsReady", false, std::string(kWaitForRecovery),
                                       "At least one pod has failed, waiting for recovery", now});
    // Not ready again: with blockAdmission it holds admission back, as before its first start.
    unready_admitted_.insert(wl->id);
    if (RecoveryTimeout() > absl::ZeroDuration()) {
      timers_.Arm(now + RecoveryTimeout(), TimerKind::kPodsRecoveryTimeout, wl->id);
    }
  }
  return absl::OkStatus();
}

absl::Duration ClusterState::RecoveryTimeout() const {
  const SchedulerConfig::WaitForPodsReady& w = config_.wait_for_pods_ready;
  return w.recovery_timeout.value_or(w.timeout);
}

// --- Timers --------------------------------------------------------------------------------

bool ClusterState::FireTimers(absl::Time now) {
  bool changed = false;
  if (fair_usage_.SampleDue(workloads_, now)) changed = true;
  if (FireNodeFailureDelays(now)) changed = true;
  while (std::optional<Timer> due = timers_.PopDue(now)) {
    const auto [at, kind, id] = *due;
    Workload* wl = mutable_workload(id);
    if (wl == nullptr) continue;
    switch (kind) {
      case TimerKind::kEvictionGrace:
        if (wl->status.state == WorkloadState::kEvicting &&
            wl->status.history().eviction_deadline <= now) {
          changed = ReleaseEvicted(wl->Key(), now).ok() || changed;
        }
        break;
      case TimerKind::kPodsReadyTimeout:
        // Not for a workload that was ready and lost a pod: the recovery timeout covers it.
        if (wl->status.state == WorkloadState::kAdmitted && !wl->status.pods_ready &&
            !WaitsForRecovery(wl->status) &&
            AdmittedTime(wl->status) + config_.wait_for_pods_ready.timeout <= now) {
          PodsReadyTimeout(*wl, now, absl::StrCat("Exceeded the PodsReady timeout ", wl->Key()));
          changed = true;
        }
        break;
      case TimerKind::kPodsRecoveryTimeout:
        if (wl->status.state == WorkloadState::kAdmitted && !wl->status.pods_ready &&
            WaitsForRecovery(wl->status) && RecoveryTimeout() > absl::ZeroDuration() &&
            FindCondition(wl->status, "PodsReady")->last_transition_time + RecoveryTimeout() <=
                now) {
          // Kueue's message is the same for both timeouts; the metrics' underlying_cause
          // (WaitForRecovery) tells them apart.
          PodsReadyTimeout(*wl, now, absl::StrCat("Exceeded the PodsReady timeout ", wl->Key()));
          changed = true;
        }
        break;
      case TimerKind::kPreemptionProtectionEnds:
        // The workload may be a victim again: preemptors parked for lack of candidates retry.
        if (wl->status.state == WorkloadState::kAdmitted ||
            wl->status.state == WorkloadState::kQuotaReserved) {
          RequeueInadmissibleInTreeOf(wl->status.admission->cluster_queue, now);
          changed = true;
        }
        break;
      case TimerKind::kMaximumExecutionTime: {
        // Stale when the workload was evicted since; a new admission armed its own timer.
        const std::optional<absl::Time> deadline = ExecutionDeadline(*wl);
        if (wl->status.state == WorkloadState::kAdmitted && deadline.has_value() &&
            *deadline <= now) {
          MaximumExecutionTimeExceeded(*wl, now);
          changed = true;
        }
        break;
      }
      case TimerKind::kFinishedRetentionEnds: {
        // Kueue's workload controller deletes a finished workload once its Finished condition
        // is older than afterFinished; the deletion is the executor's like any other.
        const std::optional<absl::Time> ends = FinishedRetentionEnds(*wl);
        if (ends.has_value() && *ends <= now) {
          const std::string key = wl->Key();
          changed = Delete(key, now).ok() || changed;
        }
        break;
      }
      case TimerKind::kSecondPassRetry: {
        // A cycle tries the replacement again (PlanCycle), unless the node was healthy again or
        // the workload lost its placement meanwhile.
        auto retry = second_pass_retries_.find(id);
        if (retry != second_pass_retries_.end() && retry->second.not_before <= now &&
            delayed_topology_.contains(id)) {
          changed = true;
        }
        break;
      }
      case TimerKind::kBackoffExpired: {
        if (wl->status.history().requeue_at > now) break;
        backoff_outside_queue_.erase(id);
        if (FinishBackoff(*wl, now)) {
          MarkDirty(wl->id);
          changed = true;
        }
        ClusterQueueRuntime* cq = router_.QueuedIn(id);
        if (cq == nullptr) break;
        if (cq->queue.IsInadmissible(id)) {
          cq->queue.PushActive(KeyOf(*wl));
          changed = true;
        }
        break;
      }
    }
  }
  return changed;
}

void ClusterState::PodsReadyTimeout(Workload& wl, absl::Time now, const std::string& message) {
  const SchedulerConfig::WaitForPodsReady& w = config_.wait_for_pods_ready;
  if (w.backoff_limit_count.has_value() &&
      wl.status.history().requeue_count + 1 > *w.backoff_limit_count) {
    wl.status.deactivated = true;
    // Kueue names the deactivation's cause in the Evicted reason (Deactivated + "DueTo" +
    // the DeactivationTarget's reason); a deactivation by spec.active alone is plain Deactivated.
    StartEviction(wl, now, "DeactivatedDueToRequeuingLimitExceeded",
                  "The workload is deactivated due to exceeding the maximum number of re-queuing "
                  "retries");
    return;
  }
  wl.status.mutable_history().requeue_count++;
  // Kueue's backoff without its 0.01% jitter: base * 2^(n-1), capped. The cap bounds each
  // doubling, not the base (k8s wait.Backoff.Step returns the current step and caps the next),
  // so the first requeue waits the base even when it is above the cap.
  double wait_seconds = static_cast<double>(w.backoff_base_seconds);
  for (int32_t i = 1; i < wl.status.history().requeue_count; ++i) {
    wait_seconds *= 2;
    if (w.backoff_max_seconds > 0) {
      wait_seconds = std::min(wait_seconds, static_cast<double>(w.backoff_max_seconds));
    }
  }
  wl.status.mutable_history().requeue_at = now + absl::Seconds(wait_seconds);
  wl.status.mutable_history().pods_ready_eviction_time = now;
  StartEviction(wl, now, "PodsReadyTimeout", message);
}

void ClusterState::MaximumExecutionTimeExceeded(Workload& wl, absl::Time now) {
  // As Kueue: the workload is deactivated (it is not requeued until activated again) and its
  // accumulated execution time starts afresh, so an activated workload gets its whole limit.
  wl.status.deactivated = true;
  wl.status.mutable_history().past_execution = absl::ZeroDuration();
  AddEvent(wl.status, now, "MaximumExecutionTimeExceeded",
           absl::StrCat("The maximum execution time (", *wl.spec.maximum_execution_time_seconds,
                        "s) exceeded"));
  StartEviction(wl, now, "DeactivatedDueToMaximumExecutionTimeExceeded",
                kMaximumExecutionTimeMessage);
}

void ClusterState::ArmExecutionDeadline(const Workload& wl) {
  if (std::optional<absl::Time> deadline = ExecutionDeadline(wl)) {
    timers_.Arm(*deadline, TimerKind::kMaximumExecutionTime, wl.id);
  }
}

std::optional<absl::Time> ClusterState::FinishedRetentionEnds(const Workload& wl) const {
  if (!config_.finished_workload_retention.has_value() ||
      wl.status.state != WorkloadState::kFinished) {
    return std::nullopt;
  }
  const Condition* finished = FindCondition(wl.status, "Finished");
  if (finished == nullptr || !finished->status) return std::nullopt;
  return finished->last_transition_time + *config_.finished_workload_retention;
}

void ClusterState::ArmFinishedRetention(const Workload& wl) {
  if (std::optional<absl::Time> ends = FinishedRetentionEnds(wl)) {
    timers_.Arm(*ends, TimerKind::kFinishedRetentionEnds, wl.id);
  }
}

std::optional<absl::Time> ClusterState::NextTimer() const {
  std::optional<absl::Time> next = timers_.Next();
  if (std::optional<absl::Time> node = node_timers_.Next()) {
    if (!next.has_value() || *node < *next) next = node;
  }
  if (std::optional<absl::Time> sample = fair_usage_.NextSample()) {
    if (!next.has_value() || *sample < *next) next = sample;
  }
  return next;
}

}  // namespace tollgate::core
