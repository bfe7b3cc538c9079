#pragma once

#include "services/manifest/workload_translator.h"

namespace tollgate::manifest {

// Minimum parallelism for partial admission (Kueue's annotation of the same name).
inline constexpr absl::string_view kJobMinParallelismAnnotation =
    "kueue.x-k8s.io/job-min-parallelism";

// batch/v1 Job: one pod set "main" of min(parallelism, completions) pods (parallelism defaults
// to 1, completions to parallelism), suspended by spec.suspend, finished by its Complete or
// Failed condition, ready when ready + succeeded pods reach the pod count.
class JobTranslator final : public JobKindTranslator {
 public:
  const ResourceKind& resource() const override { return JobResource(); }
  absl::StatusOr<std::vector<PodSetSource>> PodSets(const Json& obj) const override;
  std::string PodPriorityClassName(const Json& obj) const override;
  std::string SuspendPath() const override { return "/spec/suspend"; }
  std::optional<JobFinish> Finished(const Json& obj) const override;
  bool IsActive(const Json& obj) const override;
  bool PodsReady(const Json& obj, const v1::Workload& workload) const override;
};

}  // namespace tollgate::manifest
