#pragma once

// Kueue's prebuilt workloads (pkg/controller/jobframework: PrebuiltWorkloadNameFor,
// ensurePrebuiltWorkloadInSync, EquivalentToWorkload; validation.go's supported kinds): a job
// that names a Workload made before it is bound to that workload instead of getting its own.
// The adapter does the I/O; these are the decisions.

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "services/manifest/kube_resource.h"
#include "tollgate/v1/objects.pb.h"

namespace tollgate::manifest {

inline constexpr char kPrebuiltWorkloadKey[] = "kueue.x-k8s.io/prebuilt-workload-name";

// The prebuilt workload an object names (annotation, else label); "" when none.
std::string PrebuiltWorkloadName(const nlohmann::json& obj);

// Kueue's webhook refuses a prebuilt workload name on kinds outside its list (JAXJob and
// SparkApplication among the job kinds): INVALID_ARGUMENT naming the label and the kind.
absl::Status CheckPrebuiltWorkloadSupported(const ResourceKind& kind);

// Kueue's EquivalentToWorkload: the workload the job would get (`from_job`, translated from the
// job as written) has the prebuilt workload's pod sets (names, counts, minimum counts, requests,
// node selectors, tolerations, topology requests and node affinity, in order) and its maximum
// execution time. Queue, priority and metadata are the prebuilt workload's own and not
// compared. INVALID_ARGUMENT when either cannot be read as a workload.
absl::StatusOr<bool> EquivalentToPrebuilt(const v1::Workload& from_job,
                                          const v1::Workload& prebuilt);

}  // namespace tollgate::manifest
