#include "adapters/kube/deactivation_retention.h"

#include "absl/strings/match.h"

namespace tollgate::kube {

std::optional<absl::Time> DeactivatedJobDeletionTime(const v1::Workload& wl,
                                                     absl::Duration retention) {
  // Kueue's !IsActive: spec.active false. Tollgate keeps a deactivation by Kueue itself in
  // status.deactivated and leaves the submitter's spec.active alone.
  const bool inactive =
      (wl.spec().has_active() && !wl.spec().active()) || wl.status().deactivated();
  if (!inactive) return std::nullopt;
  for (const v1::Condition& c : wl.status().conditions()) {
    if (c.type() != "Evicted") continue;
    if (c.status() != "True" || !absl::StartsWith(c.reason(), "DeactivatedDueTo")) {
      return std::nullopt;
    }
    const google::protobuf::Timestamp& t = c.last_transition_time();
    return absl::FromUnixSeconds(t.seconds()) + absl::Nanoseconds(t.nanos()) + retention;
  }
  return std::nullopt;
}

}  // namespace tollgate::kube
