#pragma once

// Kueue's objectRetentionPolicies.workloads.afterDeactivatedByKueue, the job reconciler's half
// (jobframework's handleWorkloadAfterDeactivatedPolicy): the job whose workload Kueue
// deactivated is deleted, with its workload, that long after the eviction. Only a deactivation
// by Kueue counts (the Evicted condition's reason DeactivatedDueTo...: backoffLimitCount
// reached, maximumExecutionTimeSeconds, a Rejected admission check), never a user's
// spec.active false (reason Deactivated). Pure: the controllers act on the answer.

#include <optional>

#include "absl/time/time.h"
#include "tollgate/v1/objects.pb.h"

namespace tollgate::kube {

// When the workload's job is due for deletion under `retention`: the Evicted condition's
// transition time plus `retention`, for a workload inactive and evicted by a deactivation of
// Kueue's; nullopt for any other workload.
std::optional<absl::Time> DeactivatedJobDeletionTime(const v1::Workload& wl,
                                                     absl::Duration retention);

}  // namespace tollgate::kube
