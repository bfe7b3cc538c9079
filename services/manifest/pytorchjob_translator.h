#pragma once

#include "services/manifest/workload_translator.h"

namespace tollgate::manifest {

// kubeflow.org/v1 PyTorchJob: one pod set per entry of spec.pytorchReplicaSpecs named after the
// lower-cased replica type (Master first, then Worker, then any other in name order), each of
// `replicas` pods (default 1). Suspended by spec.runPolicy.suspend; finished by its Succeeded or
// Failed condition; active while any replica type reports active pods; ready once its Running
// condition is true. The whole job is one gang: no pod set has a minCount.
class PyTorchJobTranslator final : public JobKindTranslator {
 public:
  const ResourceKind& resource() const override { return PyTorchJobResource(); }
  absl::StatusOr<std::vector<PodSetSource>> PodSets(const Json& obj) const override;
  std::string PodPriorityClassName(const Json& obj) const override;
  std::string SuspendPath() const override { return "/spec/runPolicy/suspend"; }
  std::optional<JobFinish> Finished(const Json& obj) const override;
  bool IsActive(const Json& obj) const override;
  bool PodsReady(const Json& obj, const v1::Workload& workload) const override;
};

}  // namespace tollgate::manifest
