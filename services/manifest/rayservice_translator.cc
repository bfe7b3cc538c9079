// ray.io/v1 RayService (Kueue: pkg/controller/jobs/rayservice): the pod sets of its Ray cluster,
// spec.rayClusterConfig (ray_cluster_spec.h); suspended by spec.rayClusterConfig.suspend; a
// service runs until deleted, so it never finishes; active and ready while its Ready condition
// is true.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "services/manifest/job_kinds.h"
#include "services/manifest/ray_cluster_spec.h"

namespace tollgate::manifest {
namespace {

class RayServiceTranslator final : public JobKindTranslator {
 public:
  const JobKindTraits& traits() const override {
    static const JobKindTraits* traits = new JobKindTraits{
        .resource = {"ray.io", "v1", "rayservices", "RayService", true},
        .framework = "ray.io/rayservice",
        .other_versions = {"v1alpha1"},
        .finishes = false,
    };
    return *traits;
  }

  absl::StatusOr<std::vector<PodSetSource>> PodSets(const Json& obj,
                                                    const ObjectLookup& lookup) const override {
    const Json* cluster = Find(obj, {"spec", "rayClusterConfig"});
    return RayClusterPodSets(cluster == nullptr ? Json() : *cluster, "/spec/rayClusterConfig", obj);
  }

  std::string SuspendPath() const override { return "/spec/rayClusterConfig/suspend"; }

  std::optional<JobFinish> Finished(const Json& obj) const override { return std::nullopt; }

  bool IsActive(const Json& obj) const override { return HasTrueCondition(obj, "Ready"); }

  bool PodsReady(const Json& obj, const std::vector<PodSetSource>& sources,
                 const v1::Workload& workload) const override {
    return HasTrueCondition(obj, "Ready");
  }
};

}  // namespace

std::unique_ptr<JobKindTranslator> NewRayServiceTranslator() {
  return std::make_unique<RayServiceTranslator>();
}

}  // namespace tollgate::manifest
