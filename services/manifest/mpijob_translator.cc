// kubeflow.org/v2beta1 MPIJob of the MPI operator (Kueue: pkg/controller/jobs/mpijob): pod sets
// "launcher" and "worker" from spec.mpiReplicaSpecs, otherwise the Kubeflow shape
// (replica_specs_translator.h). The training operator's older kubeflow.org/v1 MPIJob is refused
// by version, as Kueue reads only v2beta1.
#include <memory>

#include "services/manifest/job_kinds.h"
#include "services/manifest/replica_specs_translator.h"

namespace tollgate::manifest {

std::unique_ptr<JobKindTranslator> NewMpiJobTranslator() {
  return std::make_unique<ReplicaSpecsTranslator>(
      JobKindTraits{.resource = {"kubeflow.org", "v2beta1", "mpijobs", "MPIJob", true},
                    .framework = "kubeflow.org/mpijob",
                    .other_versions = {"v1", "v1alpha2"}},
      "mpiReplicaSpecs", std::vector<std::string>{"Launcher", "Worker"});
}

}  // namespace tollgate::manifest
