// ray.io/v1 RayJob (Kueue: pkg/controller/jobs/rayjob): its cluster's pod sets
// (ray_cluster_spec.h, from spec.rayClusterSpec), and "submitter" when the job is submitted by
// a Kubernetes Job (submissionMode K8sJobMode, KubeRay's default), whose template is
// spec.submitterPodTemplate or KubeRay's default submitter. Suspended by spec.suspend; finished
// when jobStatus is SUCCEEDED, FAILED or STOPPED, or jobDeploymentStatus Complete or Failed;
// ready when the deployment runs on a ready cluster. A RayJob that attaches to an existing
// RayCluster (spec.clusterSelector) is refused, as in Kueue.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "services/manifest/job_kinds.h"
#include "services/manifest/ray_cluster_spec.h"

namespace tollgate::manifest {
namespace {

constexpr absl::string_view kK8sJobMode = "K8sJobMode";

// KubeRay's submitter pod when the RayJob brings none (500m CPU, 200Mi memory), on the head's
// image to avoid a Ray version mismatch.
Json DefaultSubmitterTemplate(const Json& obj) {
  std::string image = "rayproject/ray:latest";
  if (const Json* containers =
          Find(obj, {"spec", "rayClusterSpec", "headGroupSpec", "template", "spec", "containers"});
      containers != nullptr && containers->is_array() && !containers->empty()) {
    image = GetString((*containers)[0], {"image"}, image);
  }
  return Json{
      {"spec",
       {{"restartPolicy", "Never"},
        {"containers", Json::array({{{"name", "ray-job-submitter"},
                                     {"image", image},
                                     {"resources",
                                      {{"requests", {{"cpu", "500m"}, {"memory", "200Mi"}}},
                                       {"limits", {{"cpu", "1"}, {"memory", "1Gi"}}}}}}})}}}};
}

class RayJobTranslator final : public JobKindTranslator {
 public:
  const JobKindTraits& traits() const override {
    static const JobKindTraits* traits = new JobKindTraits{
        .resource = {"ray.io", "v1", "rayjobs", "RayJob", true},
        .framework = "ray.io/rayjob",
        .other_versions = {"v1alpha1"},
    };
    return *traits;
  }

  absl::StatusOr<std::vector<PodSetSource>> PodSets(const Json& obj,
                                                    const ObjectLookup& lookup) const override {
    if (const Json* selector = Find(obj, {"spec", "clusterSelector"});
        selector != nullptr && selector->is_object() && !selector->empty()) {
      return absl::InvalidArgumentError(
          "spec.clusterSelector: a RayJob that runs on an existing RayCluster cannot be queued");
    }
    TOLLGATE_ASSIGN_OR_RETURN(
        std::vector<PodSetSource> out,
        RayClusterPodSets(JsonAt(obj, {"spec", "rayClusterSpec"}), "/spec/rayClusterSpec", obj));
    for (const PodSetSource& s : out) {
      if (s.name == "submitter") {
        return absl::InvalidArgumentError(
            "spec.rayClusterSpec.workerGroupSpecs: \"submitter\" is the submitter's pod set");
      }
    }
    const std::string mode = GetString(obj, {"spec", "submissionMode"}, kK8sJobMode);
    if (mode == kK8sJobMode) {
      PodSetSource submitter{"submitter", 1, std::nullopt, "/spec/submitterPodTemplate"};
      if (const Json* tmpl = Find(obj, {"spec", "submitterPodTemplate"});
          tmpl != nullptr && tmpl->is_object()) {
        submitter.pod_template = *tmpl;
      } else {
        submitter.pod_template = DefaultSubmitterTemplate(obj);
        submitter.template_present = false;
      }
      out.push_back(std::move(submitter));
    }
    return out;
  }

  std::optional<JobFinish> Finished(const Json& obj) const override {
    const std::string deployment = GetString(obj, {"status", "jobDeploymentStatus"});
    const std::string job = GetString(obj, {"status", "jobStatus"});
    const std::string message = GetString(obj, {"status", "message"});
    if (job == "SUCCEEDED") return JobFinish{true, "RayJob succeeded"};
    if (job == "FAILED" || job == "STOPPED" || deployment == "Failed") {
      std::string text =
          absl::StrCat("RayJob failed (jobStatus ", job.empty() ? "unknown" : job, ")");
      if (!message.empty()) absl::StrAppend(&text, ": ", message);
      return JobFinish{false, text};
    }
    if (deployment == "Complete") return JobFinish{true, "RayJob completed"};
    return std::nullopt;
  }

  bool IsOnHold(const Json& obj) const override {
    return GetString(obj, {"status", "jobDeploymentStatus"}) == "ValidationFailed";
  }

  bool IsActive(const Json& obj) const override {
    const std::string deployment = GetString(obj, {"status", "jobDeploymentStatus"});
    return !(deployment.empty() || deployment == "New" || deployment == "Suspended" ||
             deployment == "Complete" || deployment == "Failed");
  }

  bool PodsReady(const Json& obj, const std::vector<PodSetSource>& sources,
                 const v1::Workload& workload) const override {
    if (GetString(obj, {"status", "jobDeploymentStatus"}) != "Running") return false;
    const std::string cluster_state = GetString(obj, {"status", "rayClusterStatus", "state"});
    return cluster_state.empty() || cluster_state == "ready";
  }
};

}  // namespace

std::unique_ptr<JobKindTranslator> NewRayJobTranslator() {
  return std::make_unique<RayJobTranslator>();
}

}  // namespace tollgate::manifest
