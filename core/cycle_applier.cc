#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/admission_checks.h"
#include "core/admission_planner.h"
#include "core/cluster_state.h"
#include "core/node_failure_rule.h"
#include "core/pod_requests.h"
#include "core/prefetch.h"
#include "core/topology_scheduling.h"

// ClusterState's scheduling entry points: a cycle's plan comes from the AdmissionPlanner and is
// applied here, decision by decision; AdmitNow plans one workload the same way.

namespace tollgate::core {
namespace {

// For a reservation still waiting on admission checks, which; empty otherwise.
std::string WaitingForChecksMessage(const Workload& wl) {
  if (wl.status.state != WorkloadState::kQuotaReserved) return "";
  std::vector<std::string> waiting;
  for (const AdmissionCheckState& c : wl.status.admission_checks()) {
    if (c.state != CheckState::kReady) waiting.push_back(c.name);
  }
  return absl::StrCat("quota reserved; waiting for admission checks: ",
                      absl::StrJoin(waiting, ", "));
}

// "Quota reserved in ClusterQueue NAME", allocated once at its final size (StrCat sizes the
// string by resizing, which fills it first: a measurable part of an admission).
std::string QuotaReservedMessage(absl::string_view cluster_queue) {
  constexpr absl::string_view kPrefix = "Quota reserved in ClusterQueue ";
  std::string out;
  out.reserve(kPrefix.size() + cluster_queue.size());
  out.append(kPrefix.data(), kPrefix.size());
  out.append(cluster_queue.data(), cluster_queue.size());
  return out;
}

// Kueue's resetActiveCondition: a true condition of this type turns false with reason
// QuotaReserved and "Previously: <message>"; an absent or false one is left as it is.
void ResetActiveCondition(WorkloadStatus& status, absl::string_view type, absl::Time now) {
  const Condition* previous = FindCondition(status, type);
  if (previous == nullptr || !previous->status) return;
  std::string message = absl::StrCat("Previously: ", previous->message);
  SetCondition(status, type, false, "QuotaReserved", message, now);
}

// How many admissions ahead of the one applied its successors' data is fetched, in two steps
// (the workload and its queue's containers at twice the distance, then what the workload points
// at): every admitted head is a workload the cycle last touched a thousand heads ago, and
// waiting for its misses one at a time was most of applying it.
constexpr size_t kAdmissionPrefetchDistance = 2;

}  // namespace

CyclePlan ClusterState::PlanCycle(absl::Time now) {
  if (!held_cycle_.empty() && BlocksAdmissionForPodsReady()) {
    // Kueue's scheduler is still waiting inside the held cycle (waitForPodsReadyIfNeeded): no
    // cycle runs, nothing is admitted or preempted, not even a second pass.
    CyclePlan blocked;
    blocked.cycle = cycle_;
    blocked.held_cycle = held_cycle_;
    return blocked;
  }
  // Kueue's second pass after a node failure (NeedsSecondPass, needsSecondPassAfterNodeFailure):
  // the node controller recorded the failed node (HandleNodeFailures) and the scheduler's next
  // cycle places the lost pods again, before its other heads (it takes the workloads that hold
  // quota first); with TASFailedNodeReplacementFailFast (on by default) a workload without a
  // replacement is evicted, and so requeued in time for this cycle; with it off the workload
  // keeps its placement and tries again after a backoff (second_pass_retries_). A reservation
  // still waiting for its checks stays recorded until it is admitted. The waiting workloads
  // share delayed_topology_, the second-pass set, with the delayed topology requests.
  if (!delayed_topology_.empty()) {
    const std::vector<WorkloadId> waiting(delayed_topology_.begin(), delayed_topology_.end());
    for (WorkloadId id : waiting) {
      Workload* wl = mutable_workload(id);
      if (wl == nullptr || wl->status.state != WorkloadState::kAdmitted ||
          !PlacedOnUnhealthyNode(*wl)) {
        continue;
      }
      auto retry = second_pass_retries_.find(id);
      if (retry != second_pass_retries_.end() && retry->second.not_before > now) continue;
      const ClusterQueueRuntime* cq = cluster_queue(wl->status.admission->cluster_queue);
      NodeReplacement replacement = ReplaceUnhealthyNodes(
          *wl, cq != nullptr && IsTopologyOnly(cq->spec, topology_), topology_);
      if (!replacement.admission.has_value() && !config_.tas_failed_node_replacement_fail_fast) {
        // Kueue's requeueAndUpdate: the second pass is queued again with a longer backoff and
        // the workload runs on as it is meanwhile.
        SecondPassRetry& next = second_pass_retries_[id];
        ++next.failures;
        next.not_before = now + SecondPassRetryDelay(next.failures);
        timers_.Arm(next.not_before, TimerKind::kSecondPassRetry, id);
        AddEvent(wl->status, now, "SecondPassFailed", replacement.failure);
        MarkDirty(id);
        continue;
      }
      second_pass_retries_.erase(id);
      const std::string unhealthy = absl::StrJoin(wl->status.history().unhealthy_nodes, ",");
      delayed_topology_.erase(id);
      if (replacement.admission.has_value()) {
        // Kueue's admit clears UnhealthyNodes on the successful replacement.
        RemoveUsageOf(*wl);
        wl->status.admission = std::move(*replacement.admission);
        wl->status.mutable_history().unhealthy_nodes.clear();
        AddUsageOf(*wl);
        AddEvent(wl->status, now, "NodeFailureReplaced",
                 absl::StrCat("Pods of unhealthy node(s) ", unhealthy, " placed on other nodes"));
        MarkDirty(id);
        continue;
      }
      // Kueue's evictWorkloadAfterFailedTASReplacement.
      StartEviction(*wl, now, "NodeFailures",
                    absl::StrCat("Workload was evicted as there was no replacement for unhealthy "
                                 "node(s): ",
                                 unhealthy));
    }
  }
  AdmissionPlanner planner(*this);
  return planner.PlanCycle(now, cycle_ + 1);
}

void ClusterState::ApplyCycle(const CyclePlan& plan, absl::Time now) {
  ApplyPlan(plan, nullptr, now);
}

void ClusterState::ApplyCycleTakingAdmissions(CyclePlan& plan, absl::Time now) {
  ApplyPlan(plan, &plan, now);
}

void ClusterState::ApplyPlan(const CyclePlan& plan, CyclePlan* taken, absl::Time now) {
  cycle_ = plan.cycle;
  held_cycle_ = plan.held_cycle;
  // Requeue the heads first: evictions below complete after the cycle in Kueue, so a head parked
  // now is woken by the quota its cohort's victims release.
  for (const PendingDecision& p : plan.pending) ApplyPending(p, now);
  const size_t n = plan.admissions.size();
  auto prefetch_workload = [&](size_t i) {
    const WorkloadId id = plan.admissions[i].id;
    if (const Workload* wl = workload(id); wl != nullptr)
      PrefetchLinesForWrite(wl, sizeof(Workload));
    if (const ClusterQueueRuntime* cq = router_.QueuedIn(id); cq != nullptr) {
      PrefetchLinesForWrite(&cq->queue, sizeof(cq->queue));
      PrefetchLinesForWrite(&cq->holding, sizeof(cq->holding));
      PrefetchLinesForWrite(cq->node, QuotaNode::kHotBytes);
    }
  };
  auto prefetch_status = [&](size_t i) {
    const WorkloadId id = plan.admissions[i].id;
    // The queue's object was fetched a step ago: what the head's removal touches beyond it.
    if (const ClusterQueueRuntime* cq = router_.QueuedIn(id); cq != nullptr) {
      cq->queue.PrefetchHeadRemoval(id);
    }
    const Workload* wl = workload(id);
    if (wl == nullptr) return;
    PrefetchLinesForWrite(wl->status.conditions.data(),
                          wl->status.conditions.size() * sizeof(Condition));
    PrefetchLinesForWrite(wl->status.events.data(),
                          wl->status.events.size() * sizeof(WorkloadEvent));
  };
  for (size_t i = 0; i < std::min(n, 2 * kAdmissionPrefetchDistance); ++i) prefetch_workload(i);
  for (size_t i = 0; i < n; ++i) {
    if (i + 2 * kAdmissionPrefetchDistance < n) {
      prefetch_workload(i + 2 * kAdmissionPrefetchDistance);
    }
    if (i + kAdmissionPrefetchDistance < n) prefetch_status(i + kAdmissionPrefetchDistance);
    Admission* taken_admission = nullptr;
    if (taken != nullptr) {
      AdmissionDecision& decision = taken->admissions[i];
      taken_admission = &decision.admission;
      // The usage moves here (ApplyAdmission copies it only from a plan it may not take); a
      // pending workload holds none, so nothing before the admission reads what it replaces.
      if (Workload* wl = mutable_workload(decision.id); wl != nullptr) {
        wl->quota_usage = std::move(decision.usage);
      }
    }
    ApplyAdmission(plan.admissions[i], taken_admission, now);
  }
  // Placements the planner held for admissions not applied (or not taken over) are undone.
  topology_.ReleaseHeld();
  for (const PreemptionDecision& p : plan.preemptions) ApplyPreemption(p, now);
  // After the cycle's admissions, so a second pass never takes nodes a planned head counted on.
  RetryDelayedTopology(now);
}

void ClusterState::ApplyPending(const PendingDecision& p, absl::Time now) {
  Workload* wl = mutable_workload(p.id);
  if (wl == nullptr) return;
  wl->scan_progress = p.scan_progress;
  // The same message may come with another cause (a preemptor's victims are gone, yet it still
  // does not fit): the reason is compared too.
  if (wl->status.pending_message != p.message || !HasPendingCondition(wl->status, p.reason)) {
    wl->status.pending_message = p.message;
    SetPendingCondition(wl->status, p.reason, p.message, now);
    MarkDirty(p.id);
  }
  ClusterQueueRuntime* cq = router_.QueuedIn(p.id);
  if (cq == nullptr) return;
  if (p.preemptor) cq->queue.SetPreemptor(p.id);
  if (p.sticky) cq->queue.SetSticky(p.id);
  // Kueue's requeueIfNotPresent parks a workload still backing off (one its queue tried early)
  // whatever the queueing strategy.
  if (p.requeue == RequeueKind::kPark || wl->status.history().requeue_at > now) {
    cq->queue.Park(p.id);
  }
}

void ClusterState::ApplyAdmission(const AdmissionDecision& a, Admission* taken, absl::Time now) {
  Workload* wl = mutable_workload(a.id);
  if (wl == nullptr) return;
  // The head's own queue is the admission's (checked below): found by id, not by name.
  ClusterQueueRuntime* cq = router_.QueuedIn(wl->id);
  Unqueue(*wl);
  // Reserved first; admitted below once its admission checks, if it has any, are all Ready.
  wl->status.state = WorkloadState::kQuotaReserved;
  if (taken != nullptr) {
    wl->status.admission = std::move(*taken);
  } else {
    wl->status.admission = a.admission;
    wl->quota_usage.assign(a.usage.begin(), a.usage.end());
  }
  const Admission& admission = *wl->status.admission;
  wl->status.admission->pod_labels = CostAttributionLabels(*wl);
  wl->status.admission_time = now;
  wl->status.pending_message.clear();
  wl->status.pods_ready = false;
  if (cq == nullptr || cq->spec.name != admission.cluster_queue) {
    cq = mutable_cluster_queue(admission.cluster_queue);
  }
  // Partial admission asks for the reclaimable pods of the pod sets it does not shrink (Kueue's
  // PodSetReducer starts from the spec's counts), yet the ClusterQueue counts only the pods
  // still needed (Kueue's totalRequestsFromAdmission).
  if (!wl->status.history().reclaimable_pods.empty()) DeriveQuotaUsage(*wl);
  cq->holding.Insert(*wl, EffectivePriority(*wl, config_));
  AddUsageOf(*wl, a.topology_leaves);
  std::string message = QuotaReservedMessage(admission.cluster_queue);
  // Grow each list once for the conditions and events below.
  wl->status.conditions.reserve(wl->status.conditions.size() + 2);
  wl->status.events.reserve(std::min(kMaxWorkloadEvents, wl->status.events.size() + 2));
  SetCondition(wl->status, "QuotaReserved", true, "QuotaReserved", message, now);
  // Not admitted until its checks are all Ready (CompleteAdmission, below for a workload that
  // has none); set here so the conditions keep their order.
  SetCondition(wl->status, "Admitted", false, "UnsatisfiedAdmissionChecks",
               "The workload has not all checks ready", now);
  // Kueue's SetQuotaReservation (resetActiveCondition): a true Evicted or Preempted condition
  // turns false, reason QuotaReserved, keeping what it said as "Previously: ..."; a workload
  // never evicted or preempted gets neither condition.
  ResetActiveCondition(wl->status, "Evicted", now);
  ResetActiveCondition(wl->status, "Preempted", now);
  AddEvent(wl->status, now, "QuotaReserved", std::move(message));
  MarkDirty(wl->id);
  if (UsesAdmissionFairSharing(cq->spec)) {
    fair_usage_.PushEntryPenalty(LocalQueueKey(wl->spec.namespace_name, wl->spec.queue_name),
                                 wl->id, EntryPenaltyRequests(config_, *wl, *cq));
  }
  // Kueue's blockAdmission waits for reserved workloads' pods too.
  if (config_.wait_for_pods_ready.enable) unready_admitted_.insert(wl->id);
  ArmPreemptionProtectionTimer(*wl, now);
  // The checks for the flavors it got: those covering every flavor it carries already, those
  // only for some flavors join now. (A queue without checks adds none to a workload without
  // any: nothing to sync.)
  if (!cq->spec.admission_checks.empty() || !wl->status.admission_checks().empty()) {
    SyncChecks(*wl, now);
  }
  if (wl->status.state == WorkloadState::kQuotaReserved &&
      AllChecksReady(wl->status.admission_checks())) {
    CompleteAdmission(*wl, now);
  }
}

Labels ClusterState::CostAttributionLabels(const Workload& wl) const {
  Labels out;
  if (config_.local_queue_label_keys_to_copy.empty()) return out;
  const LocalQueueRuntime* lq =
      registry_.FindLocalQueue(wl.spec.namespace_name, wl.spec.queue_name);
  if (lq == nullptr) return out;
  for (const std::string& key : config_.local_queue_label_keys_to_copy) {
    auto it = lq->spec.labels.find(key);
    if (it != lq->spec.labels.end()) out.emplace(it->first, it->second);
  }
  return out;
}

void ClusterState::ApplyPreemption(const PreemptionDecision& p, absl::Time now) {
  Workload* victim = mutable_workload(p.victim);
  if (victim == nullptr || (victim->status.state != WorkloadState::kAdmitted &&
                            victim->status.state != WorkloadState::kQuotaReserved)) {
    return;
  }
  const Workload* preemptor = workload(p.preemptor);
  RecordPreemption(victim->status, now);
  victim->status.mutable_history().last_preemption_reason = p.reason;
  SetCondition(victim->status, Condition{"Preempted", true, p.reason, p.message, now});
  // Kueue's Preempted event names both effective priorities (KEP-7990's observability).
  auto priority_info = [this](const Workload& wl) {
    const int64_t effective = EffectivePriority(wl, config_);
    return absl::StrCat(effective, " (base: ", wl.priority,
                        ", boost: ", effective - int64_t{wl.priority}, ")");
  };
  AddEvent(victim->status, now, "Preempted",
           absl::StrCat(p.message, "; preemptor ",
                        preemptor != nullptr ? preemptor->Key() : std::string("unknown"),
                        preemptor != nullptr ? absl::StrCat("; preemptor effective priority: ",
                                                            priority_info(*preemptor))
                                             : std::string(),
                        "; preemptee effective priority: ", priority_info(*victim)));
  StartEviction(*victim, now, "Preempted", p.message);
}

absl::StatusOr<AdmitNowResult> ClusterState::AdmitNow(absl::string_view key, bool dry_run,
                                                      absl::Time now) {
  const Workload* wl = workloads_.Find(key);
  if (wl == nullptr) return absl::NotFoundError(absl::StrCat("workload ", key, " not found"));
  AdmitNowResult result;
  if (wl->HoldsQuota()) {
    result.outcome = AdmitNowResult::Outcome::kAdmitted;
    result.admission = *wl->status.admission;
    result.message = WaitingForChecksMessage(*wl);
    return result;
  }
  if (wl->status.state != WorkloadState::kPending) {
    return absl::FailedPreconditionError(
        absl::StrCat("workload ", key, " is ", WorkloadStateName(wl->status.state)));
  }
  if (wl->status.on_hold || wl->status.waiting_for_replacement_pods) {
    // Its job has no pods to run (scaled to zero) or lacks some: admitting it would reserve
    // quota nothing uses.
    result.message = wl->status.pending_message;
    return result;
  }
  if (HasAdmissionGate(wl->spec, config_.admission_gated_by)) {
    // Kueue's AdmissionGatedBy: no admission, on request or not, until its gates are removed.
    result.message = wl->status.pending_message;
    return result;
  }
  Route route = router_.RouteOf(*wl);
  if (route.cluster_queue == nullptr || !route.blocked_message.empty()) {
    result.message = route.blocked_message;
    return result;
  }
  ClusterQueueRuntime& cq = *route.cluster_queue;
  if (!NamespaceMatches(cq.spec, wl->spec.namespace_name)) {
    result.message = "workload namespace doesn't match ClusterQueue selector";
    return result;
  }
  if (std::string invalid = InvalidResourcesMessage(wl->spec); !invalid.empty()) {
    result.message = std::move(invalid);
    return result;
  }
  AdmissionPlanner planner(*this);
  AdmissionPlanner::SinglePlan single = planner.PlanOne(*wl, cq, now, cycle_);
  switch (single.outcome) {
    case AdmissionPlanner::SinglePlan::Outcome::kAdmit:
      result.outcome = AdmitNowResult::Outcome::kAdmitted;
      result.admission = single.plan.admissions.front().admission;
      break;
    case AdmissionPlanner::SinglePlan::Outcome::kPreempt:
      result.outcome = AdmitNowResult::Outcome::kPreempting;
      result.admission = std::move(single.admission);
      result.message = single.plan.pending.front().message;
      result.victims = std::move(single.victims);
      break;
    case AdmissionPlanner::SinglePlan::Outcome::kPending:
      result.message = std::move(single.message);
      break;
  }
  if (!dry_run) {
    // An admission on request is no cycle: a held cycle stays held.
    single.plan.held_cycle = held_cycle_;
    ApplyCycle(single.plan, now);
    if (result.outcome == AdmitNowResult::Outcome::kAdmitted) {
      result.message = WaitingForChecksMessage(*workloads_.Find(key));
    }
  }
  return result;
}

}  // namespace tollgate::core
