#pragma once

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "core/workload.h"

namespace tollgate::core {

// Kueue's Admitted=False message for a workload holding no quota (reason NoReservation).
inline constexpr absl::string_view kNoReservationMessage = "The workload has no reservation";

// The conditions of a workload that holds no quota: QuotaReserved=False with `reason` and
// `message`, then Admitted=False with reason NoReservation. Kueue 0.19 writes them together
// (UnadmittedWorkloadsObservability, on by default): its SyncAdmittedCondition follows every
// QuotaReserved write on a workload without a reservation, whether it never held quota, was
// evicted, deactivated or put on hold. (Until some QuotaReserved condition is written a new
// workload has neither: UnadmittedWorkloadsExplicitStatus is off by default.)
void SetUnreservedConditions(WorkloadStatus& status, absl::string_view reason,
                             absl::string_view message, absl::Time now);

// Kueue's workload controller's message for a workload back in its queue that no cycle has
// evaluated yet (QuotaReserved=False, PendingEvaluation).
inline constexpr absl::string_view kPendingEvaluationMessage =
    "Workload is pending evaluation in the scheduling queue";

// Kueue's message for a deactivated workload's QuotaReserved=False condition, whatever caused the
// deactivation (the Evicted condition names the cause).
inline constexpr absl::string_view kDeactivatedMessage = "The workload is deactivated";

// Kueue's workload controller letting go a requeue that a PodsReady or admission check backoff
// held back: Requeued=True, BackoffFinished.
void SetBackoffFinished(WorkloadStatus& status, absl::Time now);

// The conditions of a deactivated workload that holds no quota, as Kueue's workload controller
// writes them as soon as it sees one (a workload submitted inactive, or deactivated while
// pending): Evicted=True with `reason` and `message` (Deactivated, or DeactivatedDueTo<cause>),
// unless an earlier eviction is still in force (its reason stays), then QuotaReserved=False with
// reason Deactivated and Admitted=False NoReservation.
void SetDeactivatedUnreservedConditions(WorkloadStatus& status, absl::string_view reason,
                                        absl::string_view message, absl::Time now);

}  // namespace tollgate::core
