// workload.codeflare.dev/v1beta2 AppWrapper (Kueue: pkg/controller/jobs/appwrapper, with the
// AppWrapper project's utils): one pod set per pod set of each component, in order, named
// "<appwrapper>-<index>": the component's declared podSets (path, replicas), else those the
// AppWrapper infers from the wrapped object's kind (Job, JobSet, PyTorchJob, RayCluster,
// RayJob, Pod, Deployment, StatefulSet); the pod template at each path, as the AppWrapper reads
// it (containers' and init containers' resources, overhead, nodeSelector, tolerations,
// priorityClassName). Suspended by spec.suspend; an admission is enacted as each component's
// podSetInfos, which the AppWrapper controller applies to the wrapped objects; finished in
// phase Succeeded, or Failed once its resources are gone; active while QuotaReserved is true,
// ready once PodsReady is.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "services/manifest/job_kinds.h"
#include "services/manifest/pod_set_info.h"

namespace tollgate::manifest {
namespace {

// One pod set of a component: where its template is inside the wrapped object (AppWrapper's
// path syntax, "template.spec.template") and how many pods.
struct ComponentPodSet {
  std::string path;
  int32_t replicas = 1;
};

// AppWrapper's path ("template", then ".field" and "[index]" steps) as a JSON pointer relative
// to the wrapped object; nullopt when malformed.
std::optional<std::string> PointerOf(absl::string_view path) {
  if (!absl::ConsumePrefix(&path, "template")) return std::nullopt;
  std::string pointer;
  while (!path.empty()) {
    if (path[0] == '[') {
      const size_t end = path.find(']');
      int index = 0;
      if (end == absl::string_view::npos || !absl::SimpleAtoi(path.substr(1, end - 1), &index) ||
          index < 0) {
        return std::nullopt;
      }
      absl::StrAppend(&pointer, "/", index);
      path.remove_prefix(end + 1);
    } else if (path[0] == '.') {
      path.remove_prefix(1);
      const size_t end = path.find_first_of(".[");
      const absl::string_view key = path.substr(0, end);
      if (key.empty()) return std::nullopt;
      absl::StrAppend(&pointer, "/", key);
      path.remove_prefix(key.size());
    } else {
      return std::nullopt;
    }
  }
  return pointer;
}

const Json* AtPath(const Json& wrapped, absl::string_view path) {
  std::optional<std::string> pointer = PointerOf(path);
  if (!pointer.has_value()) return nullptr;
  const Json::json_pointer p(*pointer);
  return wrapped.contains(p) ? &wrapped.at(p) : nullptr;
}

int32_t IntAt(const Json& wrapped, absl::string_view path, int32_t fallback) {
  const Json* value = AtPath(wrapped, path);
  return value != nullptr && value->is_number_integer() ? value->get<int32_t>() : fallback;
}

void InferRay(const Json& wrapped, const std::string& prefix, std::vector<ComponentPodSet>& out) {
  out.push_back({prefix + "headGroupSpec.template", 1});
  const Json* workers = AtPath(wrapped, prefix + "workerGroupSpecs");
  if (workers == nullptr || !workers->is_array()) return;
  for (size_t i = 0; i < workers->size(); ++i) {
    const std::string group = absl::StrCat(prefix, "workerGroupSpecs[", i, "].");
    if (AtPath(wrapped, group + "template") == nullptr) continue;
    out.push_back({group + "template", IntAt(wrapped, group + "replicas", 1)});
  }
}

// The AppWrapper's InferPodSets for the kinds it knows.
std::vector<ComponentPodSet> Infer(const Json& wrapped) {
  const std::string gvk =
      absl::StrCat(GetString(wrapped, {"apiVersion"}), "/", GetString(wrapped, {"kind"}));
  std::vector<ComponentPodSet> out;
  if (gvk == "batch/v1/Job") {
    int32_t replicas = IntAt(wrapped, "template.spec.parallelism", 1);
    replicas = std::min(replicas, IntAt(wrapped, "template.spec.completions", replicas));
    out.push_back({"template.spec.template", replicas});
  } else if (gvk == "jobset.x-k8s.io/v1alpha2/JobSet") {
    const Json* jobs = AtPath(wrapped, "template.spec.replicatedJobs");
    for (size_t i = 0; jobs != nullptr && jobs->is_array() && i < jobs->size(); ++i) {
      const std::string job = absl::StrCat("template.spec.replicatedJobs[", i, "].");
      if (AtPath(wrapped, job + "template") == nullptr) continue;
      int32_t pods = IntAt(wrapped, job + "template.spec.parallelism", 1);
      pods = std::min(pods, IntAt(wrapped, job + "template.spec.completions", pods));
      out.push_back({job + "template.spec.template", IntAt(wrapped, job + "replicas", 1) * pods});
    }
  } else if (gvk == "kubeflow.org/v1/PyTorchJob") {
    for (const char* type : {"Master", "Worker"}) {
      const std::string prefix = absl::StrCat("template.spec.pytorchReplicaSpecs.", type, ".");
      if (AtPath(wrapped, prefix + "template") == nullptr) continue;
      out.push_back({prefix + "template", IntAt(wrapped, prefix + "replicas", 1)});
    }
  } else if (gvk == "ray.io/v1/RayCluster") {
    InferRay(wrapped, "template.spec.", out);
  } else if (gvk == "ray.io/v1/RayJob") {
    InferRay(wrapped, "template.spec.rayClusterSpec.", out);
  } else if (gvk == "v1/Pod") {
    out.push_back({"template", 1});
  } else if (gvk == "apps/v1/Deployment" || gvk == "apps/v1/StatefulSet") {
    out.push_back({"template.spec.template", IntAt(wrapped, "template.spec.replicas", 1)});
  }
  return out;
}

// What the AppWrapper's GetPodTemplateSpec keeps of a template: what decides requests and
// placement.
Json ReadTemplate(const Json& tmpl) {
  Json spec = Json::object();
  const Json& source = JsonAt(tmpl, {"spec"});
  auto copy_containers = [&](const char* key) {
    const Json& list = JsonAt(source, {key});
    if (!list.is_array()) return;
    Json out = Json::array();
    for (const Json& c : list) {
      Json kept = {{"name", GetString(c, {"name"})}};
      if (const Json* r = Find(c, {"resources"}); r != nullptr) kept["resources"] = *r;
      out.push_back(std::move(kept));
    }
    spec[key] = std::move(out);
  };
  copy_containers("containers");
  copy_containers("initContainers");
  for (const char* key : {"nodeSelector", "tolerations", "priorityClassName", "overhead"}) {
    if (const Json* v = Find(source, {key}); v != nullptr) spec[key] = *v;
  }
  Json out = {{"spec", std::move(spec)}};
  for (const char* key : {"labels", "annotations"}) {
    if (const Json* v = Find(tmpl, {"metadata", key}); v != nullptr) out["metadata"][key] = *v;
  }
  return out;
}

// Each component's pod sets: the status's when it covers every component (the AppWrapper
// controller records them there), else the declared ones, else the inferred ones.
std::vector<std::vector<ComponentPodSet>> ComponentPodSets(const Json& obj) {
  const Json& components = JsonAt(obj, {"spec", "components"});
  const Json& statuses = JsonAt(obj, {"status", "componentStatus"});
  std::vector<std::vector<ComponentPodSet>> out;
  if (!components.is_array()) return out;
  const bool use_status = statuses.is_array() && statuses.size() == components.size();
  for (size_t i = 0; i < components.size(); ++i) {
    const Json& declared =
        use_status ? JsonAt(statuses[i], {"podSets"}) : JsonAt(components[i], {"podSets"});
    std::vector<ComponentPodSet> sets;
    if (declared.is_array() && !declared.empty()) {
      for (const Json& ps : declared) {
        sets.push_back(
            {GetString(ps, {"path"}), static_cast<int32_t>(GetInt(ps, {"replicas"}).value_or(1))});
      }
    } else {
      sets = Infer(JsonAt(components[i], {"template"}));
    }
    out.push_back(std::move(sets));
  }
  return out;
}

class AppWrapperTranslator final : public JobKindTranslator {
 public:
  const JobKindTraits& traits() const override {
    static const JobKindTraits* traits = new JobKindTraits{
        .resource = {"workload.codeflare.dev", "v1beta2", "appwrappers", "AppWrapper", true},
        .framework = "workload.codeflare.dev/appwrapper",
        .other_versions = {"v1beta1"},
    };
    return *traits;
  }

  absl::StatusOr<std::vector<PodSetSource>> PodSets(const Json& obj,
                                                    const ObjectLookup& lookup) const override {
    const Json& components = JsonAt(obj, {"spec", "components"});
    if (!components.is_array() || components.empty()) {
      return absl::InvalidArgumentError("spec.components: at least one component required");
    }
    const std::string name = GetString(obj, {"metadata", "name"});
    const auto all = ComponentPodSets(obj);
    std::vector<PodSetSource> out;
    for (size_t c = 0; c < all.size(); ++c) {
      const Json& wrapped = JsonAt(components[c], {"template"});
      for (size_t p = 0; p < all[c].size(); ++p) {
        const ComponentPodSet& ps = all[c][p];
        const std::string where = absl::StrCat("spec.components[", c, "].podSets[", p, "]");
        const Json* tmpl = AtPath(wrapped, ps.path);
        if (tmpl == nullptr || !tmpl->is_object() || !JsonAt(*tmpl, {"spec"}).is_object()) {
          return absl::InvalidArgumentError(absl::StrCat(
              where, ".path: \"", ps.path, "\" does not name a pod template in the component"));
        }
        if (ps.replicas < 0) {
          return absl::InvalidArgumentError(
              absl::StrCat(where, ".replicas: must not be negative, got ", ps.replicas));
        }
        out.push_back(PodSetSource{absl::AsciiStrToLower(absl::StrCat(name, "-", out.size())),
                                   ps.replicas, std::nullopt, "", ReadTemplate(*tmpl), true});
      }
    }
    return out;
  }

  std::string SuspendPath() const override { return "/spec/suspend"; }

  std::vector<std::string> EnactedFields(const Json& obj,
                                         const std::vector<PodSetSource>& sources) const override {
    std::vector<std::string> out;
    const Json& components = JsonAt(obj, {"spec", "components"});
    for (size_t c = 0; components.is_array() && c < components.size(); ++c) {
      out.push_back(absl::StrCat("/spec/components/", c, "/podSetInfos"));
    }
    return out;
  }

  absl::Status Enact(Json& obj, const std::vector<PodSetSource>& sources,
                     const std::vector<PodSetInfo>& infos) const override {
    const auto all = ComponentPodSets(obj);
    size_t flat = 0;
    for (size_t c = 0; c < all.size(); ++c) {
      Json list = Json::array();
      for (size_t p = 0; p < all[c].size(); ++p, ++flat) {
        const PodSetInfo* info =
            flat < sources.size() ? FindInfo(infos, sources[flat].name) : nullptr;
        Json entry = Json::object();
        if (info != nullptr) {
          auto put_map = [&](const char* key, const std::map<std::string, std::string>& m) {
            if (m.empty()) return;
            for (const auto& [k, v] : m) entry[key][k] = v;
          };
          put_map("annotations", info->annotations);
          put_map("labels", info->labels);
          put_map("nodeSelector", info->node_selector);
          if (!info->tolerations.empty()) entry["tolerations"] = Json(info->tolerations);
          if (!info->scheduling_gates.empty()) {
            entry["schedulingGates"] = Json(info->scheduling_gates);
          }
        }
        list.push_back(std::move(entry));
      }
      obj["spec"]["components"][c]["podSetInfos"] = std::move(list);
    }
    return absl::OkStatus();
  }

  std::optional<JobFinish> Finished(const Json& obj) const override {
    const std::string phase = GetString(obj, {"status", "phase"});
    if (phase == "Succeeded") return JobFinish{true, "AppWrapper finished successfully"};
    // A failed AppWrapper still deleting its resources holds its quota until they are gone.
    if (phase == "Failed" && !HasTrueCondition(obj, "ResourcesDeployed")) {
      return JobFinish{false, "AppWrapper failed"};
    }
    return std::nullopt;
  }

  bool IsActive(const Json& obj) const override { return HasTrueCondition(obj, "QuotaReserved"); }

  bool PodsReady(const Json& obj, const std::vector<PodSetSource>& sources,
                 const v1::Workload& workload) const override {
    return HasTrueCondition(obj, "PodsReady");
  }
};

}  // namespace

std::unique_ptr<JobKindTranslator> NewAppWrapperTranslator() {
  return std::make_unique<AppWrapperTranslator>();
}

}  // namespace tollgate::manifest
