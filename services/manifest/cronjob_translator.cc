// batch/v1 CronJob. Kueue has no CronJob integration: the Jobs a CronJob creates carry the
// labels of spec.jobTemplate.metadata, so a queue label there makes each Job queued and
// admitted like any Job. The row exists so that a CronJob manifest is recognised (and skipped
// with a note by `tollgate submit -f`) instead of being called unknown; it asks for no workload.
// Its pod sets are those each of its Jobs will ask for.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/status_macros.h"
#include "services/manifest/job_kinds.h"

namespace tollgate::manifest {
namespace {

class CronJobTranslator final : public JobKindTranslator {
 public:
  const JobKindTraits& traits() const override {
    static const JobKindTraits* traits = new JobKindTraits{
        .resource = {"batch", "v1", "cronjobs", "CronJob", true},
        .other_versions = {"v1beta1"},
        .creates_workload = false,
    };
    return *traits;
  }

  // The pod sets of the Job spec.jobTemplate describes.
  absl::StatusOr<std::vector<PodSetSource>> PodSets(const Json& obj,
                                                    const ObjectLookup& lookup) const override {
    const Json job = {{"metadata", JsonAt(obj, {"spec", "jobTemplate", "metadata"})},
                      {"spec", JsonAt(obj, {"spec", "jobTemplate", "spec"})}};
    TOLLGATE_ASSIGN_OR_RETURN(std::vector<PodSetSource> sources,
                              FindJobKind("Job")->PodSets(job, lookup));
    for (PodSetSource& s : sources) s.template_path = "/spec/jobTemplate" + s.template_path;
    return sources;
  }

  std::string SuspendPath() const override { return "/spec/suspend"; }
  std::optional<JobFinish> Finished(const Json& obj) const override { return std::nullopt; }
  bool IsActive(const Json& obj) const override { return false; }
  bool PodsReady(const Json& obj, const std::vector<PodSetSource>& sources,
                 const v1::Workload& workload) const override {
    return false;
  }
};

}  // namespace

std::unique_ptr<JobKindTranslator> NewCronJobTranslator() {
  return std::make_unique<CronJobTranslator>();
}

}  // namespace tollgate::manifest
