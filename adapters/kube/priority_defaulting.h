#pragma once

// Kueue's WorkloadPriorityClassDefaulting (0.20, beta, on by default): Kueue's webhooks label an
// object created without the kueue.x-k8s.io/priority-class label with the WorkloadPriorityClass
// named "default" when one exists, so its workload takes that class instead of falling through
// to the pods' PriorityClass. The label is set once, at creation, and stays: an object made
// before the class existed keeps its priority. tollgate-kube has no webhook, so it decides when
// it first makes the object's workload (docs/kubernetes.md, "Priority").

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "clients/cpp/admission_client.h"
#include "services/manifest/json_util.h"

namespace tollgate::kube {

inline constexpr absl::string_view kDefaultWorkloadPriorityClass = "default";

// Whether `obj` is one Kueue's webhook would label: it names no WorkloadPriorityClass and
// Tollgate has the WorkloadPriorityClass "default". Errors are the lookup's, other than
// NOT_FOUND.
absl::StatusOr<bool> TakesDefaultWorkloadPriorityClass(const manifest::Json& obj,
                                                       client::AdmissionClient& admission);

// Labels `obj` with the default WorkloadPriorityClass.
void SetDefaultWorkloadPriorityClass(manifest::Json& obj);

// For a workload made now from `source` (a pod, a pod group's first pod): gives it the default
// WorkloadPriorityClass when `source` takes it. Kueue labels each such pod at creation; the
// workload, made once, carries the choice for the pods' life.
absl::Status ApplyDefaultWorkloadPriorityClass(const manifest::Json& source,
                                               client::AdmissionClient& admission,
                                               v1::Workload& workload);

}  // namespace tollgate::kube
