#pragma once

// The Kubeflow job shape shared by the training operator's v1 kinds (PyTorchJob, TFJob,
// JAXJob, PaddleJob, XGBoostJob) and MPIJob v2beta1 (Kueue: pkg/controller/jobs/kubeflow and
// jobs/mpijob): spec.<field> maps replica types to {replicas, template}; one pod set per
// replica type present, in the kind's fixed order, named after the lower-cased type, of
// `replicas` (default 1) pods; suspended by spec.runPolicy.suspend; the priority class from
// spec.runPolicy.schedulingPolicy.priorityClass, else the first template naming one; finished
// by the Succeeded or Failed condition; active while a replica type reports active pods; ready
// once the Running condition is true. The whole job is one gang (no minCount).

#include <string>
#include <vector>

#include "services/manifest/job_kind.h"

namespace tollgate::manifest {

class ReplicaSpecsTranslator : public JobKindTranslator {
 public:
  // `field` is the replica-specs member of spec ("pytorchReplicaSpecs"); `types` the replica
  // types in Kueue's order ("Master", "Worker"). A type outside `types` is refused, as the
  // operators' validation refuses it.
  ReplicaSpecsTranslator(JobKindTraits traits, std::string field, std::vector<std::string> types)
      : traits_(std::move(traits)), field_(std::move(field)), types_(std::move(types)) {}

  const JobKindTraits& traits() const override { return traits_; }
  absl::StatusOr<std::vector<PodSetSource>> PodSets(const Json& obj,
                                                    const ObjectLookup& lookup) const override;
  std::string PodPriorityClassName(const Json& obj,
                                   const std::vector<PodSetSource>& sources) const override;
  std::string SuspendPath() const override { return "/spec/runPolicy/suspend"; }
  std::optional<JobFinish> Finished(const Json& obj) const override;
  bool IsActive(const Json& obj) const override;
  bool PodsReady(const Json& obj, const std::vector<PodSetSource>& sources,
                 const v1::Workload& workload) const override;

 private:
  const JobKindTraits traits_;
  const std::string field_;
  const std::vector<std::string> types_;
};

}  // namespace tollgate::manifest
