#include "absl/strings/str_cat.h"
#include "core/admission_checks.h"
#include "core/admission_gates.h"
#include "core/cluster_state.h"
#include "core/unreserved_conditions.h"

// ClusterState's transitions a workload's job asks for, as Kueue's job reconciler writes them
// onto its Workload: binding a workload made beforehand to its job (prebuilt workloads) or
// finishing it when the two disagree, holding and releasing quota for a job scaled to zero and
// back (StatefulSet), and a pod group missing members.

namespace tollgate::core {
namespace {

// Kueue's messages, so that tools reading conditions see the same text.
constexpr char kOutOfSyncMessage[] = "The prebuilt workload is out of sync with its user job";
constexpr char kDefaultHoldMessage[] = "Job is on hold";
constexpr char kHoldReleasedMessage[] = "Workload no longer on hold; waiting for quota reservation";
constexpr char kReplacementMessage[] = "Some Failed pods need replacement";

}  // namespace

absl::Status ClusterState::BindOwner(absl::string_view key, WorkloadOwner owner, absl::Time now) {
  Workload* wl = workloads_.FindMutable(key);
  if (wl == nullptr) return absl::NotFoundError(absl::StrCat("workload ", key, " not found"));
  if (owner.uid.empty() || owner.kind.empty() || owner.name.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("owner of workload ", key, ": kind, name and uid are required"));
  }
  if (wl->owner.has_value()) {
    if (wl->owner->uid == owner.uid) return absl::OkStatus();
    // Kueue leaves a workload another object controls alone; its job then finds no workload.
    return absl::FailedPreconditionError(absl::StrCat(
        "workload ", key, " is already controlled by ", wl->owner->kind, " ", wl->owner->name,
        " (uid ", wl->owner->uid, "), not by ", owner.kind, " ", owner.name));
  }
  if (wl->status.state == WorkloadState::kFinished) {
    return absl::FailedPreconditionError(
        absl::StrCat("workload ", key, " is Finished; a finished workload cannot be bound"));
  }
  AddEvent(wl->status, now, "OwnerBound", absl::StrCat("Bound to ", owner.kind, " ", owner.name));
  workloads_.SetOwner(wl->id, std::move(owner));
  MarkDirty(wl->id);
  return absl::OkStatus();
}

absl::Status ClusterState::SetJobStatus(absl::string_view key, WorkloadPayload status) {
  Workload* wl = workloads_.FindMutable(key);
  if (wl == nullptr) return absl::NotFoundError(absl::StrCat("workload ", key, " not found"));
  const WorkloadHistory& history = wl->status.history();
  if (history.job_status.has_value() && *history.job_status == status) return absl::OkStatus();
  wl->status.mutable_history().job_status = std::move(status);
  MarkDirty(wl->id);
  return absl::OkStatus();
}

absl::Status ClusterState::SetPayload(absl::string_view key, WorkloadPayload payload,
                                      absl::Time now) {
  Workload* wl = workloads_.FindMutable(key);
  if (wl == nullptr) return absl::NotFoundError(absl::StrCat("workload ", key, " not found"));
  if (wl->status.state == WorkloadState::kFinished) {
    return absl::FailedPreconditionError(
        absl::StrCat("workload ", key, " is Finished; its payload can no longer change"));
  }
  if (!wl->spec.payload.has_value()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "workload ", key, " carries no payload; a payload is set when the workload is submitted"));
  }
  const WorkloadPayload& current = *wl->spec.payload;
  if (current.api_version != payload.api_version || current.kind != payload.kind) {
    return absl::FailedPreconditionError(
        absl::StrCat("workload ", key, " carries ", current.api_version, " ", current.kind,
                     "; payload.apiVersion and payload.kind must stay so, got ",
                     payload.api_version, " ", payload.kind));
  }
  if (current == payload) return absl::OkStatus();
  const size_t bytes = payload.data.size();
  wl->spec.payload = std::move(payload);
  AddEvent(wl->status, now, "PayloadUpdated",
           absl::StrCat("spec.payload replaced (", bytes, " bytes)"));
  MarkDirty(wl->id);
  return absl::OkStatus();
}

absl::Status ClusterState::MarkMultiKueueWinner(absl::string_view key, absl::string_view origin,
                                                absl::Time now) {
  Workload* wl = workloads_.FindMutable(key);
  if (wl == nullptr) return absl::NotFoundError(absl::StrCat("workload ", key, " not found"));
  const Labels& labels = wl->spec.metadata.value_or_default().labels;
  auto label = labels.find(std::string(kMultiKueueOriginLabel));
  if (label == labels.end()) {
    return absl::FailedPreconditionError(absl::StrCat("workload ", key,
                                                      " is not a MultiKueue copy (it has no ",
                                                      kMultiKueueOriginLabel, " label)"));
  }
  if (!origin.empty() && label->second != origin) {
    return absl::FailedPreconditionError(absl::StrCat(
        "workload ", key, " is a copy of origin \"", label->second, "\", not of \"", origin, "\""));
  }
  if (wl->status.history().multi_kueue_winner) return absl::OkStatus();
  if (!wl->HoldsQuota()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "workload ", key, " is ", WorkloadStateName(wl->status.state),
        "; only a copy that holds quota (admitted on this worker) can be marked the winner"));
  }
  wl->status.mutable_history().multi_kueue_winner = true;
  AddEvent(wl->status, now, "MultiKueueWinner",
           "Declared the winner by the manager: its job runs on this worker");
  MarkDirty(wl->id);
  return absl::OkStatus();
}

absl::Status ClusterState::MarkOutOfSync(absl::string_view key, absl::Time now) {
  Workload* wl = workloads_.FindMutable(key);
  if (wl == nullptr) return absl::NotFoundError(absl::StrCat("workload ", key, " not found"));
  if (wl->status.state == WorkloadState::kFinished) return absl::OkStatus();
  Unqueue(*wl);
  // A finished workload holds no quota in Kueue, whatever it held: released at once (its job
  // is stopped by the adapter, as Kueue's reconciler stops a job without a matching workload).
  ReleaseQuota(*wl, now);
  DropEntryPenalty(*wl);
  wl->status.state = WorkloadState::kFinished;
  wl->status.pending_message.clear();
  SetCondition(wl->status, Condition{"Finished", true, "OutOfSync", kOutOfSyncMessage, now});
  AddEvent(wl->status, now, "Finished", kOutOfSyncMessage);
  MarkDirty(wl->id);
  ArmFinishedRetention(*wl);
  return absl::OkStatus();
}

absl::Status ClusterState::SetOnHold(absl::string_view key, bool on_hold, absl::string_view message,
                                     absl::Time now) {
  Workload* wl = workloads_.FindMutable(key);
  if (wl == nullptr) return absl::NotFoundError(absl::StrCat("workload ", key, " not found"));
  if (wl->status.state == WorkloadState::kFinished) {
    return absl::FailedPreconditionError(absl::StrCat(
        "workload ", key, " is Finished; only a workload that has not finished can be ",
        on_hold ? "put on hold" : "released from hold"));
  }
  if (wl->status.on_hold == on_hold) return absl::OkStatus();
  wl->status.on_hold = on_hold;
  MarkDirty(wl->id);
  if (on_hold) {
    const std::string why = message.empty() ? kDefaultHoldMessage : std::string(message);
    if (wl->HoldsQuota()) {
      // Kueue drops the reservation without an eviction: the job's own scale-down stops the
      // pods, so there is nothing to acknowledge.
      ReleaseQuota(*wl, now);
      wl->status.state = WorkloadState::kPending;
      wl->status.admission.reset();
      wl->status.pods_ready = false;
      wl->status.mutable_history().eviction_deadline = absl::InfinitePast();
    }
    Unqueue(*wl);
    wl->status.pending_message = why;
    SetUnreservedConditions(wl->status, "OnHold", why, now);
    AddEvent(wl->status, now, "OnHold", why);
    return absl::OkStatus();
  }
  wl->status.pending_message.clear();
  // Queued again, not yet evaluated (Kueue's job reconciler).
  SetPendingCondition(wl->status, PendingReason::kPendingEvaluation, kHoldReleasedMessage, now);
  AddEvent(wl->status, now, "HoldReleased", kHoldReleasedMessage);
  // Still gated: the gate is what it waits for now (Requeue leaves it out of the queue).
  if (HasAdmissionGate(wl->spec, config_.admission_gated_by)) {
    MarkAdmissionGated(wl->status, *AdmissionGatedByOf(wl->spec), now, /*first_seen=*/false);
  }
  Requeue(*wl, now);
  return absl::OkStatus();
}

absl::Status ClusterState::SetWaitingForReplacementPods(absl::string_view key, bool waiting,
                                                        absl::Time now) {
  Workload* wl = workloads_.FindMutable(key);
  if (wl == nullptr) return absl::NotFoundError(absl::StrCat("workload ", key, " not found"));
  if (wl->status.waiting_for_replacement_pods == waiting) return absl::OkStatus();
  wl->status.waiting_for_replacement_pods = waiting;
  MarkDirty(wl->id);
  if (!waiting) {
    SetCondition(wl->status, Condition{"WaitingForReplacementPods", false, "PodsReady",
                                       "No pods need replacement", now});
    if (wl->status.state == WorkloadState::kPending && !wl->status.on_hold &&
        !HasAdmissionGate(wl->spec, config_.admission_gated_by)) {
      wl->status.pending_message.clear();
      Requeue(*wl, now);
    }
    return absl::OkStatus();
  }
  // As Kueue: the reason and message of the eviction explain the missing pods (a preemption
  // deleted them); otherwise they failed.
  const Condition* evicted = FindCondition(wl->status, "Evicted");
  const bool by_eviction = evicted != nullptr && evicted->status;
  SetCondition(wl->status, by_eviction ? Condition{"WaitingForReplacementPods", true,
                                                   evicted->reason, evicted->message, now}
                                       : Condition{"WaitingForReplacementPods", true, "PodsFailed",
                                                   kReplacementMessage, now});
  if (wl->status.state == WorkloadState::kPending) {
    Unqueue(*wl);
    if (!wl->status.on_hold) wl->status.pending_message = kWaitingForPodsMessage;
  }
  return absl::OkStatus();
}

}  // namespace tollgate::core
