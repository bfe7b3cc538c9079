#include "services/ha/replica_phases.h"

#include "common/json_log.h"

namespace tollgate::ha {

LeadFailure ClassifyLeadFailure(const absl::Status& status) {
  return absl::IsUnavailable(status) || absl::IsCancelled(status) ? LeadFailure::kStepDownAndFollow
                                                                  : LeadFailure::kResignAndExit;
}

absl::Status RunReplicaPhases(ReplicaPhases& phases, const absl::Notification& stop) {
  while (!stop.HasBeenNotified()) {
    if (absl::Status followed = phases.Follow(); !followed.ok()) return followed;
    if (stop.HasBeenNotified()) break;
    absl::Status led = phases.Lead();
    if (led.ok()) continue;
    if (ClassifyLeadFailure(led) == LeadFailure::kStepDownAndFollow) {
      common::Log("error", "leading failed; stepping down", {{"error", led.ToString()}});
      phases.StepDown("the promotion failed");
      continue;
    }
    common::Log("error", "leading failed; resigning", {{"error", led.ToString()}});
    phases.Resign();
    return led;
  }
  return absl::OkStatus();
}

}  // namespace tollgate::ha
