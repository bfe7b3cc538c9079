// jobset.x-k8s.io/v1alpha2 JobSet (Kueue: pkg/controller/jobs/jobset): one pod set per
// replicated job (replicated_jobs.h); suspended by spec.suspend; finished by its Completed or
// Failed condition; active while a replicated job reports active jobs; ready when every job
// runs or succeeded; the pods of succeeded jobs are reclaimable.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "services/manifest/job_kinds.h"
#include "services/manifest/replicated_jobs.h"

namespace tollgate::manifest {
namespace {

class JobSetTranslator final : public JobKindTranslator {
 public:
  const JobKindTraits& traits() const override {
    static const JobKindTraits* traits = new JobKindTraits{
        .resource = {"jobset.x-k8s.io", "v1alpha2", "jobsets", "JobSet", true},
        .framework = "jobset.x-k8s.io/jobset",
        .other_versions = {"v1alpha1"},
    };
    return *traits;
  }

  absl::StatusOr<std::vector<PodSetSource>> PodSets(const Json& obj,
                                                    const ObjectLookup& lookup) const override {
    return ReplicatedJobPodSets(JsonAt(obj, {"spec", "replicatedJobs"}), "/spec/replicatedJobs",
                                "spec.replicatedJobs");
  }

  std::optional<JobFinish> Finished(const Json& obj) const override {
    return FinishFromConditions(obj, "Completed", "Failed", "JobSet");
  }

  bool IsActive(const Json& obj) const override {
    return AnyReplicaActive(JsonAt(obj, {"status", "replicatedJobsStatus"}));
  }

  bool PodsReady(const Json& obj, const std::vector<PodSetSource>& sources,
                 const v1::Workload& workload) const override {
    return AllReplicasReady(sources, JsonAt(obj, {"status", "replicatedJobsStatus"}));
  }

  std::vector<ReclaimablePod> ReclaimablePods(
      const Json& obj, const std::vector<PodSetSource>& sources) const override {
    return SucceededReplicaPods(sources, JsonAt(obj, {"status", "replicatedJobsStatus"}));
  }
};

}  // namespace

std::unique_ptr<JobKindTranslator> NewJobSetTranslator() {
  return std::make_unique<JobSetTranslator>();
}

}  // namespace tollgate::manifest
