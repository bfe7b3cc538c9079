#include "adapters/kube/priority_defaulting.h"

#include <string>

#include "services/manifest/job_kind.h"

namespace tollgate::kube {

absl::StatusOr<bool> TakesDefaultWorkloadPriorityClass(const manifest::Json& obj,
                                                       client::AdmissionClient& admission) {
  if (!manifest::GetString(obj, {"metadata", "labels", manifest::kPriorityClassLabel}).empty()) {
    return false;
  }
  v1::ObjectRef ref;
  ref.set_kind(v1::WORKLOAD_PRIORITY_CLASS);
  ref.set_name(std::string(kDefaultWorkloadPriorityClass));
  absl::StatusOr<v1::ConfigObject> found = admission.GetObject(ref);
  if (absl::IsNotFound(found.status())) return false;
  if (!found.ok()) return found.status();
  return true;
}

void SetDefaultWorkloadPriorityClass(manifest::Json& obj) {
  obj["metadata"]["labels"][std::string(manifest::kPriorityClassLabel)] =
      std::string(kDefaultWorkloadPriorityClass);
}

absl::Status ApplyDefaultWorkloadPriorityClass(const manifest::Json& source,
                                               client::AdmissionClient& admission,
                                               v1::Workload& workload) {
  absl::StatusOr<bool> takes_default = TakesDefaultWorkloadPriorityClass(source, admission);
  if (!takes_default.ok()) return takes_default.status();
  if (*takes_default) {
    workload.mutable_spec()->set_priority_class_name(std::string(kDefaultWorkloadPriorityClass));
  }
  return absl::OkStatus();
}

}  // namespace tollgate::kube
