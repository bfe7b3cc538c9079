#include "core/unreserved_conditions.h"

namespace tollgate::core {

void SetUnreservedConditions(WorkloadStatus& status, absl::string_view reason,
                             absl::string_view message, absl::Time now) {
  SetCondition(status, "QuotaReserved", false, reason, message, now);
  SetCondition(status, "Admitted", false, "NoReservation", kNoReservationMessage, now);
}

void SetDeactivatedUnreservedConditions(WorkloadStatus& status, absl::string_view reason,
                                        absl::string_view message, absl::Time now) {
  // Kueue evicts a deactivated workload only when no eviction is in force: one evicted by a
  // PodsReady timeout and deactivated during its backoff keeps saying so.
  const Condition* evicted = FindCondition(status, "Evicted");
  if (evicted == nullptr || !evicted->status) {
    SetCondition(status,
                 Condition{"Evicted", true, std::string(reason), std::string(message), now});
  }
  SetUnreservedConditions(status, "Deactivated", kDeactivatedMessage, now);
}

void SetBackoffFinished(WorkloadStatus& status, absl::Time now) {
  SetCondition(status, Condition{"Requeued", true, "BackoffFinished",
                                 "The workload backoff was finished", now});
}

}  // namespace tollgate::core
