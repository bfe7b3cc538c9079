#include <optional>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/admission_checks.h"
#include "core/admission_gates.h"
#include "core/cluster_state.h"
#include "core/unreserved_conditions.h"

// ClusterState's operator controls on one workload that change its spec in place: Kueue's
// spec.active (deactivate / activate), a new priority (Armada's reprioritize) and the removal
// of admission gates (Kueue's kueue.x-k8s.io/admission-gated-by annotation).

namespace tollgate::core {

namespace {

// Keeps what the submitter asked for before the first operator change, so that a resubmit of
// the original spec (an adapter restarting) matches the workload instead of being refused.
void RememberSubmittedControls(Workload& wl) {
  if (wl.status.history().submitted_controls.has_value()) return;
  wl.status.mutable_history().submitted_controls =
      SubmittedControls{wl.spec.active, wl.spec.priority};
}

}  // namespace

absl::Status ClusterState::SetActive(absl::string_view key, bool active, absl::Time now,
                                     const std::optional<DeactivationCause>& cause) {
  Workload* wl = workloads_.FindMutable(key);
  if (wl == nullptr) return absl::NotFoundError(absl::StrCat("workload ", key, " not found"));
  if (wl->status.state == WorkloadState::kFinished) {
    return absl::FailedPreconditionError(absl::StrCat("workload ", key, " is Finished; only a ",
                                                      "workload that has not finished can be ",
                                                      active ? "activated" : "deactivated"));
  }
  if (!active) {
    if (!wl->spec.active) return absl::OkStatus();
    RememberSubmittedControls(*wl);
    wl->spec.active = false;
    // Kueue's workload controller names a DeactivationTarget's cause in the eviction: reason
    // Deactivated + "DueTo" + its reason, message "... due to " + its message.
    std::string reason = "Deactivated";
    std::string message = "The workload is deactivated";
    if (cause.has_value() && !cause->reason.empty()) {
      absl::StrAppend(&reason, "DueTo", cause->reason);
      if (!cause->message.empty()) absl::StrAppend(&message, " due to ", cause->message);
    }
    AddEvent(wl->status, now, "Deactivated",
             cause.has_value() && !cause->reason.empty()
                 ? absl::StrCat("spec.active set to false (", cause->reason, ")")
                 : "spec.active set to false");
    MarkDirty(wl->id);
    switch (wl->status.state) {
      case WorkloadState::kAdmitted:
      case WorkloadState::kQuotaReserved:
        // Kueue evicts a deactivated workload; once stopped it is not requeued (Requeue skips
        // inactive workloads).
        StartEviction(*wl, now, reason, message);
        break;
      case WorkloadState::kPending:
        Unqueue(*wl);
        DropEntryPenalty(*wl);
        wl->status.pending_message = message;
        // Kueue's workload controller evicts a deactivated workload even when it holds no quota
        // (Evicted=True, Deactivated), then names its state (UnadmittedWorkloadsObservability).
        SetDeactivatedUnreservedConditions(wl->status, reason, message, now);
        break;
      default:
        // Evicting: not requeued once its pods stop; its quota is free from now on.
        DropInactiveReservation(*wl, now);
        break;
    }
    return absl::OkStatus();
  }
  if (wl->spec.active && !wl->status.deactivated) return absl::OkStatus();
  if (!wl->spec.active) RememberSubmittedControls(*wl);
  wl->spec.active = true;
  // Reactivation starts the requeue count afresh, as Kueue resets its requeueState, so a workload
  // deactivated by backoffLimitCount gets its retries back.
  wl->status.deactivated = false;
  if (wl->status.history().requeue_count > 0 ||
      wl->status.history().requeue_at != absl::InfinitePast()) {
    wl->status.mutable_history().requeue_count = 0;
    wl->status.mutable_history().requeue_at = absl::InfinitePast();
  }
  AddEvent(wl->status, now, "Activated", "spec.active set to true");
  // Kueue's workload controller lets go a requeue the deactivation held back (Requeued=True,
  // Reactivated). Kueue matches the plain Deactivated reason only, which would leave a workload
  // deactivated for a cause (DeactivatedDueTo...) unqueueable for good once activated; Tollgate
  // lets it go as well (docs/scheduling.md, "The lifecycle conditions"). A workload deactivated
  // during its backoff lost its requeue state with the deactivation: its backoff is over.
  if (const Condition* requeued = FindCondition(wl->status, "Requeued");
      requeued != nullptr && !requeued->status) {
    if (absl::StartsWith(requeued->reason, "Deactivated")) {
      SetCondition(wl->status,
                   Condition{"Requeued", true, "Reactivated", "The workload was reactivated", now});
    } else if (requeued->reason == "PodsReadyTimeout" ||
               requeued->reason == kEvictedByAdmissionCheck) {
      SetBackoffFinished(wl->status, now);
    }
  }
  MarkDirty(wl->id);
  RestoreActiveReservation(*wl);
  if (wl->status.state == WorkloadState::kPending) {
    if (const std::optional<std::string> gates = AdmissionGatedByOf(wl->spec);
        HasAdmissionGate(wl->spec, config_.admission_gated_by)) {
      // Still gated: the gate, not the activation, is what it waits for.
      MarkAdmissionGated(wl->status, *gates, now, /*first_seen=*/false);
      return absl::OkStatus();
    }
    wl->status.pending_message.clear();
    // Back in its queue, not yet evaluated (Kueue's workload controller).
    SetPendingCondition(wl->status, PendingReason::kPendingEvaluation, kPendingEvaluationMessage,
                        now);
    Requeue(*wl, now);
  }
  return absl::OkStatus();
}

absl::Status ClusterState::SetPriority(absl::string_view key, int32_t priority, absl::Time now) {
  Workload* wl = workloads_.FindMutable(key);
  if (wl == nullptr) return absl::NotFoundError(absl::StrCat("workload ", key, " not found"));
  if (wl->status.state == WorkloadState::kFinished) {
    return absl::FailedPreconditionError(
        absl::StrCat("workload ", key, " is Finished; its priority can no longer matter"));
  }
  if (wl->priority == priority && wl->spec.priority == priority) return absl::OkStatus();
  const int32_t before = wl->priority;
  RememberSubmittedControls(*wl);
  // An explicit priority wins over the class's value (ResolvePriority), so the class name stays
  // for display.
  wl->spec.priority = priority;
  wl->priority = priority;
  AddEvent(wl->status, now, "PriorityChanged",
           absl::StrCat("Priority changed from ", before, " to ", priority));
  MarkDirty(wl->id);
  if (wl->status.state == WorkloadState::kPending) {
    // Its place in the queue follows the new priority; a raised workload gets another look
    // even if it was parked.
    if (router_.QueuedIn(wl->id) != nullptr) Requeue(*wl, now);
    return absl::OkStatus();
  }
  // Admitted or evicting: it keeps its quota; the priority changes whom it may be preempted by
  // (Kueue lets an admitted workload's priority change the same way).
  RefileHeld(*wl);
  if (priority < before) RequeueInadmissibleInTreeOf(wl->status.admission->cluster_queue, now);
  return absl::OkStatus();
}

absl::Status ClusterState::SetAdmissionGates(absl::string_view key,
                                             const std::optional<std::string>& gates,
                                             absl::Time now) {
  Workload* wl = workloads_.FindMutable(key);
  if (wl == nullptr) return absl::NotFoundError(absl::StrCat("workload ", key, " not found"));
  const std::optional<std::string> before = AdmissionGatedByOf(wl->spec);
  if (before == gates) return absl::OkStatus();
  // Kueue's workload webhook checks the change only with the AdmissionGatedBy gate on.
  if (absl::Status allowed = ValidateAdmissionGatesOnUpdate(before, gates);
      config_.admission_gated_by && !allowed.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("workload ", key, ": ", allowed.message()));
  }
  const bool was_gated = HasAdmissionGate(wl->spec, config_.admission_gated_by);
  SetAdmissionGatedBy(wl->spec, gates);
  MarkDirty(wl->id);
  // A workload gains no gate after creation, so only a pending one can still be gated; the
  // others merely had the annotation's empty value dropped.
  if (!was_gated || wl->status.state != WorkloadState::kPending) return absl::OkStatus();
  if (HasAdmissionGate(wl->spec, config_.admission_gated_by)) {
    MarkAdmissionGated(wl->status, *gates, now, /*first_seen=*/false);
    return absl::OkStatus();
  }
  // Deactivated, on hold or waiting for pods: that keeps it out of its queue and names why.
  if (!wl->Queueable(config_.admission_gated_by)) return absl::OkStatus();
  MarkAdmissionGateCleared(wl->status, now);
  Requeue(*wl, now);
  return absl::OkStatus();
}

absl::Status ClusterState::SetPriorityBoost(absl::string_view key,
                                            const std::optional<std::string>& value,
                                            absl::Time now) {
  Workload* wl = workloads_.FindMutable(key);
  if (wl == nullptr) return absl::NotFoundError(absl::StrCat("workload ", key, " not found"));
  const std::string* current = PriorityBoostAnnotationOf(wl->spec);
  if (current == nullptr ? !value.has_value() : value.has_value() && *current == *value) {
    return absl::OkStatus();
  }
  if (value.has_value()) {
    if (absl::Status valid = ValidatePriorityBoostValue(*value, config_); !valid.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("workload ", key, ": ", valid.message()));
    }
  }
  const int64_t before = EffectivePriority(*wl, config_);
  SetPriorityBoostAnnotation(wl->spec, value);
  MarkDirty(wl->id);
  // Kueue's queue and cache look at the annotation only with the gate on.
  if (!config_.priority_boost) return absl::OkStatus();
  if (wl->status.state == WorkloadState::kPending) {
    if (router_.QueuedIn(wl->id) != nullptr) Requeue(*wl, now);
    return absl::OkStatus();
  }
  if (!wl->HoldsQuota() || !wl->status.admission.has_value()) return absl::OkStatus();
  RefileHeld(*wl);
  // Kueue's PriorityChanged counts only a workload with a WorkloadPriorityClass.
  const bool workload_priority_class =
      !wl->spec.priority_class_name.empty() &&
      registry().workload_priority_classes().contains(wl->spec.priority_class_name);
  if (workload_priority_class && EffectivePriority(*wl, config_) != before) {
    RequeueInadmissibleInTreeOf(wl->status.admission->cluster_queue, now);
  }
  return absl::OkStatus();
}

}  // namespace tollgate::core
