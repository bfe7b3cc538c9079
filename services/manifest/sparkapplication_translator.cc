// sparkoperator.k8s.io/v1beta2 SparkApplication (Kueue: pkg/controller/jobs/sparkapplication):
// pod sets "driver" (1 pod) and "executor" (spec.executor.instances, default 0), whose pods are
// built as the Spark operator's pod defaulter builds them from the driver and executor fields
// (one Spark container with coreRequest, coreLimit, memory, memoryLimit and the GPU limit, plus
// initContainers, sidecars, nodeSelector, tolerations and priorityClassName); suspended by
// spec.suspend; an admission is enacted on the driver and executor fields (labels,
// annotations, nodeSelector, tolerations, template.spec.schedulingGates), the global
// spec.nodeSelector folded into both; finished in state COMPLETED, FAILED or
// SUBMISSION_FAILED; ready when the driver runs and every requested executor runs.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "services/manifest/job_kinds.h"
#include "services/manifest/pod_set_info.h"

namespace tollgate::manifest {
namespace {

constexpr absl::string_view kDriverContainer = "spark-kubernetes-driver";
constexpr absl::string_view kExecutorContainer = "spark-kubernetes-executor";

// Java's memory notation ("512m", "2g", "1gb") as a Kubernetes quantity ("512Mi", "2Gi"),
// as the Spark operator converts it. The suffix is matched without regard to case.
std::string JavaMemoryToQuantity(const std::string& memory) {
  static constexpr std::pair<absl::string_view, absl::string_view> kUnits[] = {
      {"kb", "Ki"}, {"mb", "Mi"}, {"gb", "Gi"}, {"tb", "Ti"}, {"pb", "Pi"},
      {"k", "Ki"},  {"m", "Mi"},  {"g", "Gi"},  {"t", "Ti"},  {"p", "Pi"}};
  const std::string lower = absl::AsciiStrToLower(memory);
  for (const auto& [unit, k8s] : kUnits) {
    if (absl::EndsWith(lower, unit)) {
      return absl::StrCat(memory.substr(0, memory.size() - unit.size()), k8s);
    }
  }
  return memory;
}

bool HasContainer(const Json& list, const Json& c) {
  if (!list.is_array()) return false;
  for (const Json& e : list) {
    if (GetString(e, {"name"}) == GetString(c, {"name"}) &&
        GetString(e, {"image"}) == GetString(c, {"image"})) {
      return true;
    }
  }
  return false;
}

// The Spark operator's defaulter for the resource-related fields, on a pod with one container.
Json BuildPod(const Json& role, absl::string_view container_name) {
  Json spec = {{"containers", Json::array({{{"name", std::string(container_name)}}})}};
  Json& containers = spec["containers"];
  if (const Json& inits = JsonAt(role, {"initContainers"}); inits.is_array()) {
    Json init = Json::array();
    for (const Json& c : inits) {
      if (!HasContainer(init, c)) init.push_back(c);
    }
    if (!init.empty()) spec["initContainers"] = std::move(init);
  }
  if (const Json& sidecars = JsonAt(role, {"sidecars"}); sidecars.is_array()) {
    for (const Json& c : sidecars) {
      if (!HasContainer(containers, c)) containers.push_back(c);
    }
  }
  if (std::string pc = GetString(role, {"priorityClassName"}); !pc.empty()) {
    spec["priorityClassName"] = pc;
  }
  if (const Json& selector = JsonAt(role, {"nodeSelector"}); selector.is_object()) {
    spec["nodeSelector"] = selector;
  }
  if (const Json& tolerations = JsonAt(role, {"tolerations"}); tolerations.is_array()) {
    spec["tolerations"] = tolerations;
  }
  Json& main = containers[0];
  if (std::string v = GetString(role, {"coreRequest"}); !v.empty()) {
    main["resources"]["requests"]["cpu"] = v;
  }
  if (std::string v = GetString(role, {"coreLimit"}); !v.empty()) {
    main["resources"]["limits"]["cpu"] = v;
  }
  if (std::string v = GetString(role, {"memory"}); !v.empty()) {
    main["resources"]["requests"]["memory"] = JavaMemoryToQuantity(v);
  }
  if (std::string v = GetString(role, {"memoryLimit"}); !v.empty()) {
    main["resources"]["limits"]["memory"] = JavaMemoryToQuantity(v);
  }
  const std::string gpu = GetString(role, {"gpu", "name"});
  const int64_t gpus = GetInt(role, {"gpu", "quantity"}).value_or(0);
  if (!gpu.empty() && gpus > 0) main["resources"]["limits"][gpu] = gpus;
  return Json{{"spec", std::move(spec)}};
}

class SparkApplicationTranslator final : public JobKindTranslator {
 public:
  const JobKindTraits& traits() const override {
    static const JobKindTraits* traits = new JobKindTraits{
        .resource = {"sparkoperator.k8s.io", "v1beta2", "sparkapplications", "SparkApplication",
                     true},
        .framework = "sparkoperator.k8s.io/sparkapplication",
        .other_versions = {"v1beta1"},
    };
    return *traits;
  }

  absl::StatusOr<std::vector<PodSetSource>> PodSets(const Json& obj,
                                                    const ObjectLookup& lookup) const override {
    // What Kueue's webhook refuses for a queued application.
    const std::string mode = GetString(obj, {"spec", "mode"}, "cluster");
    if (mode != "cluster") {
      return absl::InvalidArgumentError(absl::StrCat(
          "spec.mode: \"", mode, "\": only cluster mode can be queued (the driver runs as a pod)"));
    }
    if (GetBool(obj, {"spec", "dynamicAllocation", "enabled"}).value_or(false)) {
      return absl::InvalidArgumentError(
          "spec.dynamicAllocation.enabled: a queued application cannot allocate executors "
          "dynamically (Kueue allows it only for elastic workloads)");
    }
    const int64_t instances = GetInt(obj, {"spec", "executor", "instances"}).value_or(0);
    if (instances < 0 || instances > INT32_MAX) {
      return absl::InvalidArgumentError(
          absl::StrCat("spec.executor.instances: out of range: ", instances));
    }
    std::vector<PodSetSource> out;
    out.push_back(PodSetSource{"driver", 1, std::nullopt, "",
                               BuildPod(JsonAt(obj, {"spec", "driver"}), kDriverContainer), true});
    out.push_back(PodSetSource{"executor", static_cast<int32_t>(instances), std::nullopt, "",
                               BuildPod(JsonAt(obj, {"spec", "executor"}), kExecutorContainer),
                               true});
    return out;
  }

  std::vector<std::string> EnactedFields(const Json& obj,
                                         const std::vector<PodSetSource>& sources) const override {
    std::vector<std::string> out = {"/spec/nodeSelector"};
    for (const char* role : {"driver", "executor"}) {
      for (const char* field :
           {"labels", "annotations", "nodeSelector", "tolerations", "template"}) {
        out.push_back(absl::StrCat("/spec/", role, "/", field));
      }
    }
    return out;
  }

  absl::Status Enact(Json& obj, const std::vector<PodSetSource>& sources,
                     const std::vector<PodSetInfo>& infos) const override {
    const Json global = JsonAt(obj, {"spec", "nodeSelector"});
    for (const auto& [role, container] :
         {std::pair{"driver", kDriverContainer}, {"executor", kExecutorContainer}}) {
      const PodSetInfo* info = FindInfo(infos, role);
      if (info == nullptr) continue;
      Json& spec = Ensure(obj, {"spec", role});
      if (!spec.contains("template") || !spec["template"].is_object()) {
        spec["template"] = {{"spec", {{"containers", Json::array({{{"name", container}}})}}}};
      }
      // spec.nodeSelector and the role's are mutually exclusive; the global one moves down.
      PodSetInfo current;
      current.labels = StringMap(Find(spec, {"labels"}));
      current.annotations = StringMap(Find(spec, {"annotations"}));
      current.node_selector =
          global.is_object() ? StringMap(&global) : StringMap(Find(spec, {"nodeSelector"}));
      if (const Json* t = Find(spec, {"tolerations"}); t != nullptr && t->is_array()) {
        current.tolerations.assign(t->begin(), t->end());
      }
      if (const Json* g = Find(spec, {"template", "spec", "schedulingGates"});
          g != nullptr && g->is_array()) {
        current.scheduling_gates.assign(g->begin(), g->end());
      }
      TOLLGATE_RETURN_IF_ERROR(MergeInfo(current, *info, absl::StrCat("pod set ", role)));
      auto put_map = [&](const char* key, const std::map<std::string, std::string>& values) {
        if (values.empty()) return;
        Json object = Json::object();
        for (const auto& [k, v] : values) object[k] = v;
        spec[key] = std::move(object);
      };
      put_map("labels", current.labels);
      put_map("annotations", current.annotations);
      put_map("nodeSelector", current.node_selector);
      if (!current.tolerations.empty()) spec["tolerations"] = Json(current.tolerations);
      if (!current.scheduling_gates.empty()) {
        Ensure(spec, {"template", "spec"})["schedulingGates"] = Json(current.scheduling_gates);
      }
    }
    if (global.is_object()) obj["spec"].erase("nodeSelector");
    return absl::OkStatus();
  }

  std::optional<JobFinish> Finished(const Json& obj) const override {
    const std::string state = GetString(obj, {"status", "applicationState", "state"});
    const std::string message = GetString(obj, {"status", "applicationState", "errorMessage"});
    if (state == "COMPLETED") {
      return JobFinish{true, message.empty() ? "SparkApplication completed" : message};
    }
    if (state == "FAILED" || state == "SUBMISSION_FAILED") {
      return JobFinish{false, message.empty() ? absl::StrCat("SparkApplication ", state) : message};
    }
    return std::nullopt;
  }

  bool IsActive(const Json& obj) const override {
    return GetString(obj, {"status", "applicationState", "state"}) == "RUNNING";
  }

  bool PodsReady(const Json& obj, const std::vector<PodSetSource>& sources,
                 const v1::Workload& workload) const override {
    if (GetString(obj, {"status", "applicationState", "state"}) != "RUNNING") return false;
    const int64_t expected = GetInt(obj, {"spec", "executor", "instances"}).value_or(0);
    int64_t ready = 0;
    if (const Json& states = JsonAt(obj, {"status", "executorState"}); states.is_object()) {
      for (auto it = states.begin(); it != states.end(); ++it) {
        if (it.value() == "RUNNING" || it.value() == "COMPLETED") ++ready;
      }
    }
    return ready >= expected;
  }
};

}  // namespace

std::unique_ptr<JobKindTranslator> NewSparkApplicationTranslator() {
  return std::make_unique<SparkApplicationTranslator>();
}

}  // namespace tollgate::manifest
