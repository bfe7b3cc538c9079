// ray.io/v1 RayCluster (Kueue: pkg/controller/jobs/raycluster): the cluster's head and worker
// groups are the pod sets (ray_cluster_spec.h); suspended by spec.suspend; a cluster never
// finishes by itself, it holds its quota until deleted or preempted; ready and active while
// status.state is "ready".
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "services/manifest/job_kinds.h"
#include "services/manifest/ray_cluster_spec.h"

namespace tollgate::manifest {
namespace {

class RayClusterTranslator final : public JobKindTranslator {
 public:
  const JobKindTraits& traits() const override {
    static const JobKindTraits* traits = new JobKindTraits{
        .resource = {"ray.io", "v1", "rayclusters", "RayCluster", true},
        .framework = "ray.io/raycluster",
        .other_versions = {"v1alpha1"},
        .finishes = false,
    };
    return *traits;
  }

  absl::StatusOr<std::vector<PodSetSource>> PodSets(const Json& obj,
                                                    const ObjectLookup& lookup) const override {
    const Json* spec = Find(obj, {"spec"});
    return RayClusterPodSets(spec == nullptr ? Json() : *spec, "/spec", obj);
  }

  std::optional<JobFinish> Finished(const Json& obj) const override { return std::nullopt; }

  bool IsActive(const Json& obj) const override {
    return GetString(obj, {"status", "state"}) == "ready";
  }

  bool PodsReady(const Json& obj, const std::vector<PodSetSource>& sources,
                 const v1::Workload& workload) const override {
    return GetString(obj, {"status", "state"}) == "ready";
  }
};

}  // namespace

std::unique_ptr<JobKindTranslator> NewRayClusterTranslator() {
  return std::make_unique<RayClusterTranslator>();
}

}  // namespace tollgate::manifest
