#pragma once

// What the job and pod controllers report about a running workload's pods, each sent only when
// it differs from what Tollgate has, so a level-triggered pass sends nothing when nothing changed.

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "clients/cpp/admission_client.h"
#include "tollgate/v1/objects.pb.h"

namespace tollgate::kube {

// Kueue's PodsReady: reports `ready` when the workload says otherwise. A workload evicted
// meanwhile (FAILED_PRECONDITION) is left to the next pass.
absl::Status ReportPodsReadyIfChanged(client::AdmissionClient& admission, const v1::Workload& wl,
                                      const v1::WorkloadRef& ref, bool ready);

// Kueue's ReclaimablePods: the pods per pod set that finished for good (`finished`), each
// limited to its pod set's count (LimitReclaimablePodsToPodSetSizes), reported when they differ
// from the workload's. Refusals because the workload moved on (evicted, finished, or fewer than
// before after a replacement) are left to the next pass.
absl::Status ReportReclaimablePodsIfChanged(client::AdmissionClient& admission,
                                            const v1::Workload& wl, const v1::WorkloadRef& ref,
                                            const std::map<std::string, int32_t>& finished);

// MultiKueue: a worker's copy reports its job's (or pods') status for the manager to mirror,
// when `report` differs from the copy's job_status. A copy that finished meanwhile
// (FAILED_PRECONDITION) keeps its last status: that is what the manager has.
absl::Status ReportJobStatusIfChanged(client::AdmissionClient& admission, const v1::Workload& copy,
                                      const v1::WorkloadPayload& report);

// Kueue's UpdateAdmissionGatedBy: the job's kueue.x-k8s.io/admission-gated-by annotation, as
// carried by `from_job` (the workload translated from it), goes to `stored` when it differs:
// a gate removed from the job (or the whole annotation) is removed from the workload. Gates only
// ever leave a workload, so a job that names a gate its workload no longer has (an operator
// removed it there) changes nothing. Returns the workload as stored after.
absl::StatusOr<v1::Workload> PropagateAdmissionGates(client::AdmissionClient& admission,
                                                     const v1::Workload& from_job,
                                                     v1::Workload stored);

// Kueue's AdmissionGatedBy off: a workload made from a job goes without the job's
// kueue.x-k8s.io/admission-gated-by annotation (prepareWorkload copies it only with the gate on).
void DropAdmissionGates(v1::Workload& wl);

}  // namespace tollgate::kube
