#include "core/unreserved_conditions.h"

namespace tollgate::core {

void SetUnreservedConditions(WorkloadStatus& status, absl::string_view reason,
                             absl::string_view message, absl::Time now) {
  SetCondition(status, "QuotaReserved", false, reason, message, now);
  SetCondition(status, "Admitted", false, "NoReservation", kNoReservationMessage, now);
}

}  // namespace tollgate::core
