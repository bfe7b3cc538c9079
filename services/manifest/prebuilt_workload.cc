#include "services/manifest/prebuilt_workload.h"

#include <array>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "core/types.h"
#include "services/api/workload_codec.h"
#include "services/manifest/json_util.h"

namespace tollgate::manifest {

std::string PrebuiltWorkloadName(const nlohmann::json& obj) {
  const std::string annotated = GetString(obj, {"metadata", "annotations", kPrebuiltWorkloadKey});
  return annotated.empty() ? GetString(obj, {"metadata", "labels", kPrebuiltWorkloadKey})
                           : annotated;
}

absl::Status CheckPrebuiltWorkloadSupported(const ResourceKind& kind) {
  // (group, kind) pairs of Kueue's supportedPrebuiltWlJobGVKs.
  static constexpr std::array<std::pair<const char*, const char*>, 13> kSupported = {{
      {"batch", "Job"},
      {"jobset.x-k8s.io", "JobSet"},
      {"kubeflow.org", "TFJob"},
      {"kubeflow.org", "PaddleJob"},
      {"kubeflow.org", "PyTorchJob"},
      {"kubeflow.org", "XGBoostJob"},
      {"kubeflow.org", "MPIJob"},
      {"trainer.kubeflow.org", "TrainJob"},
      {"ray.io", "RayJob"},
      {"ray.io", "RayCluster"},
      {"ray.io", "RayService"},
      {"", "Pod"},
      {"workload.codeflare.dev", "AppWrapper"},
  }};
  for (const auto& [group, name] : kSupported) {
    if (kind.group == group && kind.kind == name) return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat("metadata.labels[", kPrebuiltWorkloadKey,
                                                 "]: Forbidden: Is not supported for ",
                                                 kind.ApiVersion(), ", Kind=", kind.kind));
}

absl::StatusOr<bool> EquivalentToPrebuilt(const v1::Workload& from_job,
                                          const v1::Workload& prebuilt) {
  // Compared as the core reads them, so "1" and "1000m" CPU are the same request.
  TOLLGATE_ASSIGN_OR_RETURN(core::WorkloadSpec job_spec, api::WorkloadSpecFromProto(from_job));
  TOLLGATE_ASSIGN_OR_RETURN(core::WorkloadSpec prebuilt_spec, api::WorkloadSpecFromProto(prebuilt));
  const auto max_execution = [](const v1::Workload& wl) {
    return wl.spec().has_maximum_execution_time_seconds()
               ? wl.spec().maximum_execution_time_seconds()
               : -1;
  };
  return job_spec.pod_sets == prebuilt_spec.pod_sets &&
         max_execution(from_job) == max_execution(prebuilt);
}

}  // namespace tollgate::manifest
