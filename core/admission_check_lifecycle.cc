#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/admission_checks.h"
#include "core/cluster_state.h"
#include "core/error_text.h"
#include "core/multikueue_dispatcher.h"
#include "core/status_macros.h"
#include "core/topology_scheduling.h"
#include "core/unreserved_conditions.h"

// ClusterState's admission checks (Kueue's two-phase admission): the AdmissionCheck objects and
// their Active condition, which checks each workload carries, a controller's state updates and
// what they lead to (admission, eviction with a delayed requeue, deactivation), and the
// reservations a stopped or terminating queue cancels. The rules themselves are in
// core/admission_checks.h; docs/admission-checks.md draws the state machine.

namespace tollgate::core {
namespace {

std::string CheckNames(const std::vector<AdmissionCheckState>& checks) {
  std::vector<std::string> names;
  for (const AdmissionCheckState& c : checks) names.push_back(QuoteValue(c.name));
  return names.empty() ? "none" : absl::StrJoin(names, ", ");
}

std::string PodSetNames(const WorkloadSpec& spec) {
  std::vector<std::string> names;
  for (const PodSetSpec& ps : spec.pod_sets) names.push_back(QuoteValue(ps.name));
  return absl::StrJoin(names, ", ");
}

// The Admitted event's text: "Admitted by ClusterQueue NAME" and, for a workload that waited
// for its checks, ", wait time since reservation was Ns". Allocated once at its final size
// (StrCat sizes the string by resizing, which fills it first: a measurable part of an
// admission).
std::string AdmittedMessage(absl::string_view cluster_queue,
                            std::optional<int64_t> waited_seconds) {
  constexpr absl::string_view kPrefix = "Admitted by ClusterQueue ";
  constexpr absl::string_view kWaited = ", wait time since reservation was ";
  const absl::AlphaNum seconds(waited_seconds.value_or(0));
  std::string out;
  out.reserve(kPrefix.size() + cluster_queue.size() +
              (waited_seconds.has_value() ? kWaited.size() + seconds.size() + 1 : 0));
  out.append(kPrefix.data(), kPrefix.size());
  out.append(cluster_queue.data(), cluster_queue.size());
  if (waited_seconds.has_value()) {
    out.append(kWaited.data(), kWaited.size());
    out.append(seconds.data(), seconds.size());
    out.push_back('s');
  }
  return out;
}

}  // namespace

// --- AdmissionCheck objects ------------------------------------------------------------------

absl::Status ClusterState::ApplyAdmissionCheck(AdmissionCheckSpec spec, absl::Time now) {
  if (const AdmissionCheckRuntime* existing = registry_.FindAdmissionCheck(spec.name)) {
    if (existing->spec.controller_name != spec.controller_name) {
      return absl::InvalidArgumentError(absl::StrCat(
          "spec.controllerName: ", QuoteValue(spec.controller_name), " would replace ",
          QuoteValue(existing->spec.controller_name),
          ", but the field is immutable (delete the AdmissionCheck and create it again)"));
    }
  }
  registry_.PutAdmissionCheck(std::move(spec));
  OnAdmissionChecksChanged(now);
  return absl::OkStatus();
}

absl::Status ClusterState::SetAdmissionCheckActive(absl::string_view name, bool active,
                                                   absl::string_view reason,
                                                   absl::string_view message, absl::Time now) {
  const AdmissionCheckRuntime* check = registry_.FindAdmissionCheck(name);
  if (check == nullptr) {
    return absl::NotFoundError(absl::StrCat("AdmissionCheck ", name, " not found"));
  }
  Condition condition{"Active", active, std::string(reason), std::string(message), now};
  if (check->active.has_value() && check->active->status == active) {
    condition.last_transition_time = check->active->last_transition_time;
  }
  if (check->active == condition) return absl::OkStatus();
  registry_.SetAdmissionCheckActive(std::string(name), std::move(condition));
  OnAdmissionChecksChanged(now);
  return absl::OkStatus();
}

absl::Status ClusterState::RestoreAdmissionCheckActive(absl::string_view name, Condition active,
                                                       absl::Time now) {
  active.type = "Active";
  if (!registry_.SetAdmissionCheckActive(std::string(name), std::move(active))) {
    return absl::NotFoundError(absl::StrCat("AdmissionCheck ", name, " not found"));
  }
  OnAdmissionChecksChanged(now);
  return absl::OkStatus();
}

void ClusterState::OnAdmissionChecksChanged(absl::Time now) {
  RecomputeActivity();
  RerouteAllPending(now);
  RequeueAllInadmissible(now);
}

// --- Which checks a workload carries ---------------------------------------------------------

const ClusterQueueRuntime* ClusterState::ChecksQueueOf(const Workload& wl) const {
  if (wl.HoldsQuota()) return cluster_queue(wl.status.admission->cluster_queue);
  // Kueue follows the LocalQueue to its ClusterQueue whatever their state.
  const LocalQueueRuntime* lq =
      registry_.FindLocalQueue(wl.spec.namespace_name, wl.spec.queue_name);
  return lq == nullptr ? nullptr : cluster_queue(lq->spec.cluster_queue);
}

bool ClusterState::SyncChecks(Workload& wl, absl::Time now) {
  // An evicting workload's checks were reset with its eviction; they follow its queue again once
  // it is pending.
  if (wl.status.state == WorkloadState::kFinished || wl.status.state == WorkloadState::kEvicting) {
    return false;
  }
  const ClusterQueueRuntime* cq = ChecksQueueOf(wl);
  if (cq == nullptr) return false;
  const Admission* admission =
      wl.HoldsQuota() && wl.status.admission.has_value() ? &*wl.status.admission : nullptr;
  const std::vector<std::string> names = ChecksForWorkload(cq->spec, admission);
  if (names.empty() && wl.status.admission_checks().empty()) return false;
  std::vector<AdmissionCheckState> checks = wl.status.admission_checks();
  if (!SyncCheckStates(checks, names, now)) return false;
  wl.status.set_admission_checks(std::move(checks));
  MarkDirty(wl.id);
  // A check dropped from the queue may have been the last one not Ready.
  if (wl.status.state == WorkloadState::kQuotaReserved) ReconcileChecks(wl, now);
  return true;
}

void ClusterState::SyncAllChecks(absl::Time now) {
  bool asked = false;
  for (const auto& [name, spec] : registry_.cluster_queue_specs()) {
    if (!spec.admission_checks.empty()) {
      asked = true;
      break;
    }
  }
  // Nothing asks for checks now nor did at the last sync: no workload carries any.
  if (!asked && !checks_synced_) return;
  checks_synced_ = asked;
  for (const auto& slot : workloads_.slots()) {
    if (slot != nullptr) SyncChecks(*slot, now);
  }
}

// --- A controller's word on a check ----------------------------------------------------------

absl::Status ClusterState::SetAdmissionCheckState(absl::string_view key, CheckStateUpdate update,
                                                  absl::Time now) {
  Workload* wl = workloads_.FindMutable(key);
  if (wl == nullptr) return absl::NotFoundError(absl::StrCat("workload ", key, " not found"));
  if (wl->status.state == WorkloadState::kFinished) {
    return absl::FailedPreconditionError(
        absl::StrCat("workload ", key, " is Finished; its admission checks can no longer change"));
  }
  const AdmissionCheckState* current = FindCheck(wl->status.admission_checks(), update.check);
  if (current == nullptr) {
    if (registry_.FindAdmissionCheck(update.check) == nullptr) {
      return absl::NotFoundError(
          absl::StrCat("check: AdmissionCheck ", QuoteValue(update.check), " not found"));
    }
    return absl::FailedPreconditionError(absl::StrCat(
        "check: workload ", key, " does not carry admission check ", QuoteValue(update.check),
        " (it carries: ", CheckNames(wl->status.admission_checks()), ")"));
  }

  std::set<std::string> pod_sets_named;
  for (size_t i = 0; i < update.pod_set_updates.size(); ++i) {
    const std::string& name = update.pod_set_updates[i].name;
    const bool known = std::any_of(wl->spec.pod_sets.begin(), wl->spec.pod_sets.end(),
                                   [&](const PodSetSpec& ps) { return ps.name == name; });
    if (!known) {
      return absl::InvalidArgumentError(absl::StrCat(
          "podSetUpdates[", i, "].name: ", QuoteValue(name), " is not a pod set of workload ", key,
          " (it has: ", PodSetNames(wl->spec), ")"));
    }
    if (!pod_sets_named.insert(name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("podSetUpdates[", i, "].name: ", QuoteValue(name), " is named twice"));
    }
  }
  if (current->state == CheckState::kReady && update.state == CheckState::kReady &&
      current->pod_set_updates != update.pod_set_updates) {
    return absl::InvalidArgumentError(absl::StrCat(
        "podSetUpdates: admission check ", QuoteValue(update.check), " is Ready on workload ", key,
        " and its podSetUpdates cannot change while it stays Ready (set another state first)"));
  }

  const bool dispatch_changes =
      update.cluster_name.has_value() || update.nominated_cluster_names.has_value() ||
      update.job_status.has_value() || update.multi_kueue_remotes.has_value();
  if (dispatch_changes) {
    TOLLGATE_RETURN_IF_ERROR(CheckMultiKueueDispatch(*wl, update));
  }
  const WorkloadHistory& history = wl->status.history();
  const bool dispatch_same =
      (!update.cluster_name.has_value() || *update.cluster_name == history.cluster_name) &&
      (!update.nominated_cluster_names.has_value() ||
       *update.nominated_cluster_names == history.nominated_cluster_names);
  if (current->state == update.state && current->message == update.message &&
      current->requeue_after_seconds == update.requeue_after_seconds &&
      current->pod_set_updates == update.pod_set_updates && dispatch_same) {
    // The mirrored job status and the remote copies' states alone change often while the job
    // runs: no event for them.
    if (update.job_status.has_value() &&
        !(history.job_status.has_value() && *history.job_status == *update.job_status)) {
      wl->status.mutable_history().job_status = std::move(*update.job_status);
      MarkDirty(wl->id);
    }
    if (update.multi_kueue_remotes.has_value() &&
        *update.multi_kueue_remotes != history.multi_kueue_remotes) {
      wl->status.mutable_history().multi_kueue_remotes = std::move(*update.multi_kueue_remotes);
      MarkDirty(wl->id);
    }
    return absl::OkStatus();
  }
  WorkloadStatus candidate = wl->status;
  if (update.nominated_cluster_names.has_value()) {
    std::vector<std::string> added;
    for (const std::string& cluster : *update.nominated_cluster_names) {
      if (!absl::c_linear_search(history.nominated_cluster_names, cluster)) {
        added.push_back(cluster);
      }
    }
    candidate.mutable_history().nominated_cluster_names = *update.nominated_cluster_names;
    if (!added.empty()) {
      AddEvent(candidate, now, std::string(kNominatedEventReason), NominatedEventMessage(added));
    }
  }
  if (update.job_status.has_value()) {
    candidate.mutable_history().job_status = *update.job_status;
  }
  if (update.multi_kueue_remotes.has_value()) {
    candidate.mutable_history().multi_kueue_remotes = *update.multi_kueue_remotes;
  }
  if (update.cluster_name.has_value() && *update.cluster_name != history.cluster_name) {
    // Kueue's rule: clusterName and nominatedClusterNames are mutually exclusive.
    candidate.mutable_history().cluster_name = *update.cluster_name;
    candidate.mutable_history().nominated_cluster_names.clear();
    AddEvent(candidate, now, std::string(kAdmittedOnWorkerEventReason),
             absl::StrCat("admitted on worker cluster ", QuoteValue(*update.cluster_name)));
  }
  AdmissionCheckState* check = FindCheck(candidate.mutable_admission_checks(), update.check);
  if (check->pod_set_updates != update.pod_set_updates && !update.pod_set_updates.empty()) {
    // Only a conflict this update brings in is its fault: one already there (a flavor's labels
    // changed since) fails the admission, not every unrelated update.
    check->pod_set_updates.clear();
    const bool clean_before = MergePodSetUpdates(wl->spec, candidate, registry_.flavors()).ok();
    check->pod_set_updates = update.pod_set_updates;
    if (clean_before) {
      absl::StatusOr<std::vector<PodSetInfo>> merged =
          MergePodSetUpdates(wl->spec, candidate, registry_.flavors(), update.check);
      if (!merged.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("podSetUpdates: ", merged.status().message()));
      }
    }
  }

  if (check->state != update.state) check->last_transition_time = now;
  check->state = update.state;
  check->message = std::move(update.message);
  check->requeue_after_seconds = update.requeue_after_seconds;
  check->pod_set_updates = std::move(update.pod_set_updates);
  AddEvent(candidate, now, "UpdatedAdmissionCheck",
           check->message.empty() ? absl::StrCat(check->name, ": ", CheckStateName(check->state))
                                  : absl::StrCat(check->name, ": ", CheckStateName(check->state),
                                                 ": ", check->message));
  wl->status = std::move(candidate);
  MarkDirty(wl->id);
  ReconcileChecks(*wl, now);
  return absl::OkStatus();
}

absl::Status ClusterState::CheckMultiKueueDispatch(const Workload& wl,
                                                   const CheckStateUpdate& update) const {
  const AdmissionCheckRuntime* check = registry_.FindAdmissionCheck(update.check);
  if (check == nullptr || check->spec.controller_name != kMultiKueueControllerName) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cluster_name, nominated_cluster_names, job_status, multi_kueue_remotes: only a MultiKueue "
        "check (controller ",
        kMultiKueueControllerName, ") records them; ", QuoteValue(update.check), " is not one"));
  }
  if (!wl.HoldsQuota()) {
    return absl::FailedPreconditionError(
        absl::StrCat("cluster_name, nominated_cluster_names, job_status, multi_kueue_remotes: "
                     "workload ",
                     wl.Key(), " holds no quota, so it is dispatched to no worker"));
  }
  const WorkloadHistory& history = wl.status.history();
  if (update.cluster_name.has_value()) {
    if (!history.cluster_name.empty() && history.cluster_name != *update.cluster_name) {
      return absl::FailedPreconditionError(
          absl::StrCat("cluster_name: workload ", wl.Key(), " was admitted on ",
                       QuoteValue(history.cluster_name), " and cannot move to ",
                       QuoteValue(*update.cluster_name),
                       " (clusterName is immutable once set; only an eviction clears it)"));
    }
    const std::vector<std::string>& nominees = history.nominated_cluster_names;
    if (history.cluster_name.empty() &&
        std::find(nominees.begin(), nominees.end(), *update.cluster_name) == nominees.end()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "cluster_name: ", QuoteValue(*update.cluster_name),
          " is not one of the workload's nominated_cluster_names [", absl::StrJoin(nominees, " "),
          "] (when setting clusterName it must be one of the nominatedClusterNames)"));
    }
    if (update.state != CheckState::kReady) {
      return absl::InvalidArgumentError(
          absl::StrCat("cluster_name: is recorded with the check going Ready, got state ",
                       CheckStateName(update.state)));
    }
  }
  if (update.nominated_cluster_names.has_value() && !update.nominated_cluster_names->empty()) {
    const std::string& winner =
        update.cluster_name.has_value() ? *update.cluster_name : history.cluster_name;
    if (!winner.empty()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "nominated_cluster_names: workload ", wl.Key(), " was admitted on ", QuoteValue(winner),
          "; it has no nominees any more (clusterName and nominatedClusterNames are "
          "mutually exclusive)"));
    }
  }
  return absl::OkStatus();
}

void ClusterState::ReconcileChecks(Workload& wl, absl::Time now) {
  const std::vector<AdmissionCheckState>& checks = wl.status.admission_checks();
  const bool rejected = AnyCheckIn(checks, CheckState::kRejected);
  const bool retry = AnyCheckIn(checks, CheckState::kRetry);
  const bool reserved = wl.status.state == WorkloadState::kQuotaReserved ||
                        wl.status.state == WorkloadState::kAdmitted;
  if (rejected) {
    // Kueue's workload controller acts on a Rejected check only while the workload holds a
    // reservation it has not started evicting (reconcileCheckBasedEviction runs under
    // HasQuotaReservation and returns early on an evicted workload). Without one nothing is
    // deactivated, evicted or reset: the check stays Rejected and every cycle that reaches the
    // workload leaves it pending for its failed checks (AdmissionPlanner, as Kueue's nominate).
    if (!reserved) return;
    // Otherwise it is deactivated: evicted, and not requeued until an operator activates it.
    const std::string what = ChecksInStateMessage(checks, CheckState::kRejected);
    wl.status.deactivated = true;
    AddEvent(wl.status, now, "AdmissionCheckRejected", absl::StrCat("Deactivated due to ", what));
    MarkDirty(wl.id);
    StartEviction(wl, now, std::string(kDeactivatedByAdmissionCheck),
                  absl::StrCat("The workload is deactivated due to ", what));
    return;
  }
  if (retry) {
    // The latest delay any Retry asked for holds the requeue back; Kueue keeps the latest of all
    // requeue times (waitForPodsReady's backoff included).
    const absl::Time retry_at = LatestRetryTime(checks);
    if (retry_at > wl.status.history().requeue_at) {
      wl.status.mutable_history().requeue_at = retry_at;
    }
    MarkDirty(wl.id);
    if (reserved) {
      StartEviction(
          wl, now, std::string(kEvictedByAdmissionCheck),
          absl::StrCat("Evicted due to ", ChecksInStateMessage(checks, CheckState::kRetry)));
      return;
    }
    // Without quota (pending, or evicting after another check's Retry) there is nothing to evict:
    // the delay counts, the check starts over.
    ResetChecksAfterEviction(wl.status.mutable_admission_checks(), now);
    if (wl.status.state == WorkloadState::kPending && router_.QueuedIn(wl.id) != nullptr) {
      Requeue(wl, now);
    }
    return;
  }
  if (wl.status.state == WorkloadState::kQuotaReserved && AllChecksReady(checks) &&
      PlaceDelayedTopology(wl, now)) {
    CompleteAdmission(wl, now);
  }
}

bool ClusterState::PlaceDelayedTopology(Workload& wl, absl::Time now) {
  const ClusterQueueRuntime* cq = cluster_queue(wl.status.admission->cluster_queue);
  if (cq != nullptr && HasMultiKueueCheck(cq->spec, registry_.admission_checks())) {
    // The worker cluster places the pods; the manager admits without placing them (Kueue marks
    // the request Ready from the remote's admission).
    delayed_topology_.erase(wl.id);
    return true;
  }
  const bool topology_only = cq != nullptr && IsTopologyOnly(cq->spec, topology_);
  const WorkloadTopologyRequests requests = DelayedTopologyRequestsOf(wl, topology_only, topology_);
  if (requests.empty()) {
    delayed_topology_.erase(wl.id);
    return true;
  }
  TopologyOutcome outcome = PlaceTopology(requests, topology_, /*simulate_empty=*/false);
  if (outcome.ok) {
    Admission placed = *wl.status.admission;
    for (TopologyOutcome::Placed& p : outcome.placed) {
      placed.pod_sets[p.pod_set].topology_assignment = std::move(p.assignment);
    }
    RemoveUsageOf(wl);
    wl.status.admission = std::move(placed);
    AddUsageOf(wl);
    delayed_topology_.erase(wl.id);
    MarkDirty(wl.id);
    return true;
  }
  delayed_topology_.insert(wl.id);
  const Condition* admitted = FindCondition(wl.status, "Admitted");
  if (admitted == nullptr || admitted->reason != "PendingDelayedTopologyRequests") {
    SetCondition(wl.status, Condition{"Admitted", false, "PendingDelayedTopologyRequests",
                                      "There are pending delayed topology requests", now});
    AddEvent(wl.status, now, "SecondPassFailed", outcome.reason);
    MarkDirty(wl.id);
  }
  return false;
}

void ClusterState::RetryDelayedTopology(absl::Time now) {
  if (delayed_topology_.empty()) return;
  const std::vector<WorkloadId> waiting(delayed_topology_.begin(), delayed_topology_.end());
  for (WorkloadId id : waiting) {
    Workload* wl = mutable_workload(id);
    // A failed node recorded on a workload holding quota waits in the same set for its
    // replacement (PlanCycle), a reservation until it is admitted.
    if (wl != nullptr && wl->HoldsQuota() && !wl->status.history().unhealthy_nodes.empty()) {
      continue;
    }
    if (wl == nullptr || wl->status.state != WorkloadState::kQuotaReserved ||
        !AllChecksReady(wl->status.admission_checks())) {
      delayed_topology_.erase(id);
      continue;
    }
    if (PlaceDelayedTopology(*wl, now)) CompleteAdmission(*wl, now);
  }
}

void ClusterState::CompleteAdmission(Workload& wl, absl::Time now) {
  // What the pods start with, kept only when a check added something to them.
  const bool updated =
      std::any_of(wl.status.admission_checks().begin(), wl.status.admission_checks().end(),
                  [](const AdmissionCheckState& c) { return !c.pod_set_updates.empty(); });
  // Without a possible conflict the merge only builds what is thrown away below.
  absl::StatusOr<std::vector<PodSetInfo>> infos =
      PodSetUpdatesMayConflict(wl.status, registry_.flavors())
          ? MergePodSetUpdates(wl.spec, wl.status, registry_.flavors())
          : std::vector<PodSetInfo>();
  if (!infos.ok()) {
    // Kueue cannot start such a workload and finishes it (FailedToStart): retrying would meet
    // the same conflict.
    const std::string message =
        absl::StrCat("The workload failed to start: ", infos.status().message());
    ReleaseQuota(wl, now);
    DropEntryPenalty(wl);
    wl.status.state = WorkloadState::kFinished;
    wl.status.pending_message.clear();
    SetCondition(wl.status, Condition{"Finished", true, "FailedToStart", message, now});
    AddEvent(wl.status, now, "FailedToStart", message);
    MarkDirty(wl.id);
    ArmFinishedRetention(wl);
    return;
  }
  const bool waited = wl.status.state == WorkloadState::kQuotaReserved;
  wl.status.state = WorkloadState::kAdmitted;
  // A node that failed while it waited for its checks is replaced in the next cycle, now that
  // it is admitted (Kueue's needsSecondPassAfterNodeFailure asks for an admitted workload).
  if (!wl.status.history().unhealthy_nodes.empty()) delayed_topology_.insert(wl.id);
  wl.status.set_admitted_pod_sets(updated ? *std::move(infos) : std::vector<PodSetInfo>());
  RefileHeld(wl);
  SetCondition(wl.status, "Admitted", true, "Admitted", "The workload is admitted", now);
  // Kueue settles the entry penalty on every transition into Admitted, not for a workload
  // deactivated meanwhile (#12786).
  if (fair_usage_.TracksAny() && wl.spec.active && !wl.status.deactivated) {
    const ClusterQueueRuntime* cq = cluster_queue(wl.status.admission->cluster_queue);
    if (cq != nullptr && UsesAdmissionFairSharing(cq->spec)) {
      fair_usage_.SettleEntryPenalty(LocalQueueKey(wl.spec.namespace_name, wl.spec.queue_name),
                                     wl.id, workloads_, now);
    }
  }
  if (config_.wait_for_pods_ready.enable) {
    // A new admission waits for its pods from the start (Kueue's WaitForStart), whatever an
    // earlier admission's pods did. Kueue's job reconciler writes PodsReady only with
    // waitForPodsReady.
    SetCondition(wl.status, "PodsReady", false, "WaitForStart",
                 "Not all pods are ready or succeeded", now);
  }
  AddEvent(wl.status, now, "Admitted",
           AdmittedMessage(
               wl.status.admission->cluster_queue,
               waited ? std::optional<int64_t>(absl::ToInt64Seconds(now - wl.status.admission_time))
                      : std::nullopt));
  MarkDirty(wl.id);
  if (config_.wait_for_pods_ready.enable) {
    timers_.Arm(now + config_.wait_for_pods_ready.timeout, TimerKind::kPodsReadyTimeout, wl.id);
  }
  ArmExecutionDeadline(wl);
}

// --- Reservations a stopped or terminating queue cancels --------------------------------------

void ClusterState::CancelReservation(Workload& wl, PendingReason reason, const std::string& message,
                                     absl::Time now) {
  if (wl.status.state != WorkloadState::kQuotaReserved) return;
  ReleaseQuota(wl, now);
  if (!wl.status.history().multi_kueue_remotes.empty()) {
    wl.status.mutable_history().multi_kueue_remotes.clear();
  }
  wl.status.state = WorkloadState::kPending;
  wl.status.admission.reset();
  wl.status.set_admitted_pod_sets({});
  wl.status.pods_ready = false;
  wl.status.pending_message = message;
  SetPendingCondition(wl.status, reason, message, now);
  AddEvent(wl.status, now, "QuotaReservationCancelled", message);
  MarkDirty(wl.id);
  SyncChecks(wl, now);
  Requeue(wl, now);
}

void ClusterState::CancelReservationsInInactiveQueues(absl::Time now) {
  struct Cancel {
    WorkloadId id;
    PendingReason reason;
    std::string message;
  };
  std::vector<Cancel> cancel;
  for (const auto& [name, cq] : router_.runtimes()) {
    if (cq.holding.quota_reserved() == 0) continue;
    const bool cq_terminating = registry_.IsTerminating(ObjectKind::kClusterQueue, name);
    for (WorkloadId id : cq.holding) {
      const Workload* wl = workload(id);
      if (wl == nullptr || wl->status.state != WorkloadState::kQuotaReserved) continue;
      const LocalQueueRuntime* lq =
          registry_.FindLocalQueue(wl->spec.namespace_name, wl->spec.queue_name);
      // Kueue's workload controller, in its order: the LocalQueue first, then the ClusterQueue.
      if (lq == nullptr ||
          registry_.IsTerminating(ObjectKind::kLocalQueue,
                                  LocalQueueKey(wl->spec.namespace_name, wl->spec.queue_name))) {
        cancel.push_back(
            {id, PendingReason::kMisconfigured,
             absl::StrCat("LocalQueue ", wl->spec.queue_name, " is terminating or missing")});
      } else if (lq->spec.stop_policy != StopPolicy::kNone) {
        cancel.push_back({id, PendingReason::kSuspended,
                          absl::StrCat("LocalQueue ", wl->spec.queue_name, " is stopped")});
      } else if (cq_terminating) {
        cancel.push_back({id, PendingReason::kMisconfigured,
                          absl::StrCat("ClusterQueue ", name, " is terminating or missing")});
      } else if (cq.spec.stop_policy != StopPolicy::kNone) {
        cancel.push_back(
            {id, PendingReason::kSuspended, absl::StrCat("ClusterQueue ", name, " is stopped")});
      }
    }
  }
  for (const Cancel& c : cancel) {
    CancelReservation(*mutable_workload(c.id), c.reason, c.message, now);
  }
}

// --- Reads ------------------------------------------------------------------------------------

absl::StatusOr<std::vector<PodSetInfo>> ClusterState::PodSetInfos(absl::string_view key) const {
  const Workload* wl = workloads_.Find(key);
  if (wl == nullptr) return absl::NotFoundError(absl::StrCat("workload ", key, " not found"));
  return MergePodSetUpdates(wl->spec, wl->status, registry_.flavors());
}

}  // namespace tollgate::core
