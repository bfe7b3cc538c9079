#pragma once

#include "services/manifest/workload_translator.h"

namespace tollgate::manifest {

// ray.io/v1 RayJob: pod set "head" (1 pod), one pod set per worker group named after the group
// (replicas x numOfHosts pods), and "submitter" when the job is submitted by a Kubernetes Job
// (submissionMode K8sJobMode, KubeRay's default), whose template is spec.submitterPodTemplate
// or KubeRay's default submitter. Suspended by spec.suspend; finished when jobDeploymentStatus
// is Complete or Failed, or jobStatus SUCCEEDED/FAILED/STOPPED; ready when the deployment runs
// on a ready cluster. A RayJob that attaches to an existing cluster (spec.clusterSelector) is
// refused, as in Kueue.
class RayJobTranslator final : public JobKindTranslator {
 public:
  const ResourceKind& resource() const override { return RayJobResource(); }
  absl::StatusOr<std::vector<PodSetSource>> PodSets(const Json& obj) const override;
  std::string PodPriorityClassName(const Json& obj) const override;
  std::string SuspendPath() const override { return "/spec/suspend"; }
  std::optional<JobFinish> Finished(const Json& obj) const override;
  bool IsActive(const Json& obj) const override;
  bool PodsReady(const Json& obj, const v1::Workload& workload) const override;

  // KubeRay's submitter pod when the RayJob brings none (500m CPU, 200Mi memory).
  static Json DefaultSubmitterTemplate(const Json& obj);
};

}  // namespace tollgate::manifest
