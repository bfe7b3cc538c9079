#include "core/workload.h"

#include <utility>

namespace tollgate::core {

const char* WorkloadStateName(WorkloadState state) {
  switch (state) {
    case WorkloadState::kPending:
      return "Pending";
    case WorkloadState::kAdmitted:
      return "Admitted";
    case WorkloadState::kEvicting:
      return "Evicting";
    case WorkloadState::kFinished:
      return "Finished";
  }
  return "Unknown";
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

}  // namespace tollgate::core
