#include "services/manifest/rayjob_translator.h"

#include <set>
#include <string>

#include "absl/strings/str_cat.h"

namespace tollgate::manifest {
namespace {

constexpr absl::string_view kK8sJobMode = "K8sJobMode";

}  // namespace

Json RayJobTranslator::DefaultSubmitterTemplate(const Json& obj) {
  std::string image = "rayproject/ray:latest";
  if (const Json* containers =
          Find(obj, {"spec", "rayClusterSpec", "headGroupSpec", "template", "spec", "containers"});
      containers != nullptr && containers->is_array() && !containers->empty()) {
    // KubeRay uses the head's image to avoid a Ray version mismatch.
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

absl::StatusOr<std::vector<PodSetSource>> RayJobTranslator::PodSets(const Json& obj) const {
  if (const Json* selector = Find(obj, {"spec", "clusterSelector"});
      selector != nullptr && selector->is_object() && !selector->empty()) {
    return absl::InvalidArgumentError(
        "spec.clusterSelector: a RayJob that runs on an existing RayCluster cannot be queued");
  }
  const Json* cluster = Find(obj, {"spec", "rayClusterSpec"});
  if (cluster == nullptr || !cluster->is_object()) {
    return absl::InvalidArgumentError("spec.rayClusterSpec: required");
  }
  std::vector<PodSetSource> out;
  const Json* head = Find(*cluster, {"headGroupSpec", "template"});
  if (head == nullptr || !head->is_object()) {
    return absl::InvalidArgumentError("spec.rayClusterSpec.headGroupSpec.template: required");
  }
  out.push_back(PodSetSource{"head", 1, std::nullopt, "/spec/rayClusterSpec/headGroupSpec/template",
                             *head, true});
  std::set<std::string> names = {"head", "submitter"};
  if (const Json* groups = Find(*cluster, {"workerGroupSpecs"});
      groups != nullptr && groups->is_array()) {
    for (size_t i = 0; i < groups->size(); ++i) {
      const Json& group = (*groups)[i];
      const std::string path = absl::StrCat("spec.rayClusterSpec.workerGroupSpecs[", i, "]");
      const std::string name = PodSetNameFrom(GetString(group, {"groupName"}));
      if (name.empty() || !names.insert(name).second) {
        return absl::InvalidArgumentError(
            absl::StrCat(path, ".groupName: \"", GetString(group, {"groupName"}),
                         "\" is empty or repeats another pod set's name"));
      }
      const Json* tmpl = Find(group, {"template"});
      if (tmpl == nullptr || !tmpl->is_object()) {
        return absl::InvalidArgumentError(absl::StrCat(path, ".template: required"));
      }
      const int64_t replicas = GetInt(group, {"replicas"}).value_or(1);
      const int64_t hosts = GetInt(group, {"numOfHosts"}).value_or(1);
      if (replicas < 0 || hosts < 1 || replicas * hosts > INT32_MAX) {
        return absl::InvalidArgumentError(absl::StrCat(
            path, ": replicas (", replicas, ") x numOfHosts (", hosts, ") is out of range"));
      }
      out.push_back(PodSetSource{
          name, static_cast<int32_t>(replicas * hosts), std::nullopt,
          absl::StrCat("/spec/rayClusterSpec/workerGroupSpecs/", i, "/template"), *tmpl, true});
    }
  }
  const std::string mode = GetString(obj, {"spec", "submissionMode"}, kK8sJobMode);
  if (mode == kK8sJobMode) {
    PodSetSource submitter{"submitter", 1,   std::nullopt, "/spec/submitterPodTemplate",
                           Json(),      true};
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

std::string RayJobTranslator::PodPriorityClassName(const Json& obj) const {
  return GetString(
      obj, {"spec", "rayClusterSpec", "headGroupSpec", "template", "spec", "priorityClassName"});
}

std::optional<JobFinish> RayJobTranslator::Finished(const Json& obj) const {
  const std::string deployment = GetString(obj, {"status", "jobDeploymentStatus"});
  const std::string job = GetString(obj, {"status", "jobStatus"});
  const std::string message = GetString(obj, {"status", "message"});
  auto with_detail = [&](std::string text) {
    if (!message.empty()) absl::StrAppend(&text, ": ", message);
    return text;
  };
  if (job == "SUCCEEDED") return JobFinish{true, "RayJob succeeded"};
  if (job == "FAILED" || job == "STOPPED" || deployment == "Failed") {
    return JobFinish{false, with_detail(absl::StrCat("RayJob failed (jobStatus ",
                                                     job.empty() ? "unknown" : job, ")"))};
  }
  if (deployment == "Complete") return JobFinish{true, "RayJob completed"};
  return std::nullopt;
}

bool RayJobTranslator::IsActive(const Json& obj) const {
  const std::string deployment = GetString(obj, {"status", "jobDeploymentStatus"});
  return !(deployment.empty() || deployment == "New" || deployment == "Suspended" ||
           deployment == "Complete" || deployment == "Failed");
}

bool RayJobTranslator::PodsReady(const Json& obj, const v1::Workload& workload) const {
  if (GetString(obj, {"status", "jobDeploymentStatus"}) != "Running") return false;
  const std::string cluster_state = GetString(obj, {"status", "rayClusterStatus", "state"});
  return cluster_state.empty() || cluster_state == "ready";
}

}  // namespace tollgate::manifest
