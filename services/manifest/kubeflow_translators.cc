// The training operator's kubeflow.org/v1 kinds (Kueue: pkg/controller/jobs/kubeflow), each a
// ReplicaSpecsTranslator with its replica-specs field and Kueue's order of replica types.
#include <memory>

#include "services/manifest/job_kinds.h"
#include "services/manifest/replica_specs_translator.h"

namespace tollgate::manifest {
namespace {

std::unique_ptr<JobKindTranslator> Kubeflow(const char* kind, const char* plural,
                                            const char* framework, const char* field,
                                            std::vector<std::string> types) {
  return std::make_unique<ReplicaSpecsTranslator>(
      JobKindTraits{.resource = {"kubeflow.org", "v1", plural, kind, true}, .framework = framework},
      field, std::move(types));
}

}  // namespace

std::unique_ptr<JobKindTranslator> NewPyTorchJobTranslator() {
  return Kubeflow("PyTorchJob", "pytorchjobs", "kubeflow.org/pytorchjob", "pytorchReplicaSpecs",
                  {"Master", "Worker"});
}

std::unique_ptr<JobKindTranslator> NewTfJobTranslator() {
  return Kubeflow("TFJob", "tfjobs", "kubeflow.org/tfjob", "tfReplicaSpecs",
                  {"Chief", "Master", "PS", "Worker", "Evaluator"});
}

std::unique_ptr<JobKindTranslator> NewJaxJobTranslator() {
  return Kubeflow("JAXJob", "jaxjobs", "kubeflow.org/jaxjob", "jaxReplicaSpecs", {"Worker"});
}

std::unique_ptr<JobKindTranslator> NewPaddleJobTranslator() {
  return Kubeflow("PaddleJob", "paddlejobs", "kubeflow.org/paddlejob", "paddleReplicaSpecs",
                  {"Master", "Worker"});
}

std::unique_ptr<JobKindTranslator> NewXgboostJobTranslator() {
  return Kubeflow("XGBoostJob", "xgboostjobs", "kubeflow.org/xgboostjob", "xgbReplicaSpecs",
                  {"Master", "Worker"});
}

}  // namespace tollgate::manifest
