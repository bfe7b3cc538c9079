#include "core/workload.h"

#include <algorithm>
#include <utility>

#include "core/unreserved_conditions.h"

namespace tollgate::core {

const char* WorkloadStateName(WorkloadState state) {
  switch (state) {
    case WorkloadState::kPending:
      return "Pending";
    case WorkloadState::kQuotaReserved:
      return "QuotaReserved";
    case WorkloadState::kAdmitted:
      return "Admitted";
    case WorkloadState::kEvicting:
      return "Evicting";
    case WorkloadState::kFinished:
      return "Finished";
  }
  return "Unknown";
}

const char* CheckStateName(CheckState state) {
  switch (state) {
    case CheckState::kPending:
      return "Pending";
    case CheckState::kReady:
      return "Ready";
    case CheckState::kRetry:
      return "Retry";
    case CheckState::kRejected:
      return "Rejected";
  }
  return "Unknown";
}

absl::string_view PendingReasonName(PendingReason reason) {
  switch (reason) {
    case PendingReason::kPendingEvaluation:
      return "PendingEvaluation";
    case PendingReason::kWaitingForQuota:
      return "WaitingForQuota";
    case PendingReason::kNoMatchingFlavor:
      return "NoMatchingFlavor";
    case PendingReason::kExceedsMaxQuota:
      return "ExceedsMaxQuota";
    case PendingReason::kTopologyPlacementFailed:
      return "TopologyPlacementFailed";
    case PendingReason::kWaitingForPreemptedWorkloads:
      return "WaitingForPreemptedWorkloads";
    case PendingReason::kWaitingForPodsReady:
      return "WaitingForPodsReady";
    case PendingReason::kMisconfigured:
      return "Misconfigured";
    case PendingReason::kSuspended:
      return "Suspended";
    case PendingReason::kAdmissionGated:
      return "AdmissionGated";
  }
  return "PendingEvaluation";
}

void SetCondition(WorkloadStatus& status, Condition condition) {
  for (Condition& existing : status.conditions) {
    if (existing.type != condition.type) continue;
    if (existing.status == condition.status) {
      condition.last_transition_time = existing.last_transition_time;
    }
    existing = std::move(condition);
    return;
  }
  status.conditions.push_back(std::move(condition));
}

void SetCondition(WorkloadStatus& status, absl::string_view type, bool value,
                  absl::string_view reason, absl::string_view message, absl::Time now) {
  for (Condition& existing : status.conditions) {
    if (existing.type != type) continue;
    if (existing.status != value) existing.last_transition_time = now;
    existing.status = value;
    existing.reason.assign(reason.data(), reason.size());
    existing.message.assign(message.data(), message.size());
    return;
  }
  // Built in place: no temporary condition to move from and destroy.
  Condition& added = status.conditions.emplace_back();
  added.type.assign(type.data(), type.size());
  added.status = value;
  added.reason.assign(reason.data(), reason.size());
  added.message.assign(message.data(), message.size());
  added.last_transition_time = now;
}

const Condition* FindCondition(const WorkloadStatus& status, absl::string_view type) {
  for (const Condition& c : status.conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

void AddEvent(WorkloadStatus& status, absl::Time time, std::string reason, std::string message) {
  if (status.events.size() >= kMaxWorkloadEvents) {
    status.events.erase(status.events.begin());
  }
  status.events.push_back(WorkloadEvent{time, std::move(reason), std::move(message)});
}

int32_t CountAfterReclaim(const WorkloadStatus& status, const PodSetSpec& pod_set,
                          bool reclaimable_pods) {
  if (!reclaimable_pods) return pod_set.count;
  for (const auto& [name, count] : status.history().reclaimable_pods) {
    if (name == pod_set.name) return pod_set.count - std::min(count, pod_set.count);
  }
  return pod_set.count;
}

std::optional<absl::Time> ExecutionDeadline(const Workload& wl) {
  if (!wl.spec.maximum_execution_time_seconds.has_value()) return std::nullopt;
  return AdmittedTime(wl.status) + absl::Seconds(*wl.spec.maximum_execution_time_seconds) -
         wl.status.history().past_execution;
}

absl::Time AdmittedTime(const WorkloadStatus& status) {
  const Condition* admitted = FindCondition(status, "Admitted");
  if (admitted != nullptr && admitted->status) return admitted->last_transition_time;
  return status.admission_time;
}

void RecordPreemption(WorkloadStatus& status, absl::Time now) {
  WorkloadHistory& history = status.mutable_history();
  history.preemption_count++;
  history.recent_preemptions.push_back(now);
  if (history.recent_preemptions.size() > kMaxRecentPreemptions) {
    history.recent_preemptions.erase(history.recent_preemptions.begin());
  }
}

std::optional<absl::Time> PreemptionProtectedUntil(const WorkloadStatus& status,
                                                   const ClusterQueueSpec& cq, absl::Time now) {
  const size_t limit = static_cast<size_t>(std::max(0, cq.max_preemptions_per_window));
  const std::vector<absl::Time>& recent = status.history().recent_preemptions;
  if (limit == 0 || recent.size() < limit) return std::nullopt;
  // The limit-th most recent preemption is the one whose leaving the window lifts protection.
  const absl::Time oldest_counted = recent[recent.size() - limit];
  const absl::Time until = oldest_counted + cq.preemption_window;
  if (until <= now) return std::nullopt;
  return until;
}

void SetPendingCondition(WorkloadStatus& status, PendingReason reason, absl::string_view message,
                         absl::Time now) {
  SetUnreservedConditions(status, PendingReasonName(reason), message, now);
}

bool HasPendingCondition(const WorkloadStatus& status, PendingReason reason) {
  const Condition* c = FindCondition(status, "QuotaReserved");
  return c != nullptr && !c->status && c->reason == PendingReasonName(reason);
}

}  // namespace tollgate::core
