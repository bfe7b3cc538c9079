// trainer.kubeflow.org/v1alpha1 TrainJob of Kubeflow Trainer v2 (Kueue:
// pkg/controller/jobs/trainjob): the pod sets of the JobSet the Trainer would create from the
// referenced TrainingRuntime or ClusterTrainingRuntime (replicated_jobs.h), after what changes
// counts and requests: the runtime's mlPolicy.numNodes and the TrainJob's trainer.numNodes on
// the trainer step (MPI: on the "node" job, one less with runLauncherAsNode), and
// trainer.resourcesPerNode merged into the "node" container's resources; the other runtime
// patches' node selectors, tolerations, labels and annotations. Suspended by spec.suspend; an
// admission is enacted as the runtimePatches entry of manager kueue.x-k8s.io/manager, which the
// Trainer applies to the JobSet; finished by the Complete or Failed condition; ready when
// every job runs or succeeded; the pods of succeeded jobs are reclaimable.
#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "services/manifest/job_kinds.h"
#include "services/manifest/pod_set_info.h"
#include "services/manifest/replicated_jobs.h"

namespace tollgate::manifest {
namespace {

constexpr absl::string_view kTrainerGroup = "trainer.kubeflow.org";
constexpr absl::string_view kKueuePatchManager = "kueue.x-k8s.io/manager";
constexpr absl::string_view kAncestorLabel = "trainer.kubeflow.org/trainjob-ancestor-step";
constexpr absl::string_view kAncestorTrainer = "trainer";
constexpr absl::string_view kNodeJob = "node";

const ResourceKind& RuntimeKind(bool cluster) {
  static const ResourceKind* namespaced = new ResourceKind{
      std::string(kTrainerGroup), "v1alpha1", "trainingruntimes", "TrainingRuntime", true};
  static const ResourceKind* clustered =
      new ResourceKind{std::string(kTrainerGroup), "v1alpha1", "clustertrainingruntimes",
                       "ClusterTrainingRuntime", false};
  return cluster ? *clustered : *namespaced;
}

// The referenced runtime's spec.
absl::StatusOr<Json> RuntimeSpec(const Json& obj, const ObjectLookup& lookup) {
  const std::string name = GetString(obj, {"spec", "runtimeRef", "name"});
  const std::string group = GetString(obj, {"spec", "runtimeRef", "apiGroup"}, kTrainerGroup);
  const std::string kind = GetString(obj, {"spec", "runtimeRef", "kind"}, "ClusterTrainingRuntime");
  if (name.empty()) return absl::InvalidArgumentError("spec.runtimeRef.name: required");
  if (group != kTrainerGroup || (kind != "ClusterTrainingRuntime" && kind != "TrainingRuntime")) {
    return absl::InvalidArgumentError(
        absl::StrCat("spec.runtimeRef: unsupported runtime ", kind, ".", group,
                     " (want TrainingRuntime or ClusterTrainingRuntime of ", kTrainerGroup, ")"));
  }
  const bool cluster = kind == "ClusterTrainingRuntime";
  absl::StatusOr<Json> runtime = lookup.Get(
      RuntimeKind(cluster), cluster ? "" : GetString(obj, {"metadata", "namespace"}), name);
  if (!runtime.ok()) {
    return absl::Status(runtime.status().code(),
                        absl::StrCat("spec.runtimeRef: ", runtime.status().message()));
  }
  return JsonAt(*runtime, {"spec"});
}

// Another manager's patch of the pod template: labels and annotations merged, node selector
// merged, tolerations replaced (the Trainer merges patches strategically; these are the parts
// that decide where pods go).
void ApplyTemplatePatch(Json& pod_template, const Json& patch) {
  for (const char* key : {"labels", "annotations"}) {
    if (const Json& m = JsonAt(patch, {"metadata", key}); m.is_object()) {
      for (auto it = m.begin(); it != m.end(); ++it) pod_template["metadata"][key][it.key()] = *it;
    }
  }
  if (const Json& m = JsonAt(patch, {"spec", "nodeSelector"}); m.is_object()) {
    for (auto it = m.begin(); it != m.end(); ++it)
      pod_template["spec"]["nodeSelector"][it.key()] = *it;
  }
  if (const Json& t = JsonAt(patch, {"spec", "tolerations"}); t.is_array()) {
    pod_template["spec"]["tolerations"] = t;
  }
}

// The replicated jobs as the Trainer builds the JobSet from the runtime for this TrainJob.
absl::StatusOr<Json> ChildReplicatedJobs(const Json& obj, const Json& runtime_spec) {
  Json jobs = JsonAt(runtime_spec, {"template", "spec", "replicatedJobs"});
  if (!jobs.is_array() || jobs.empty()) {
    return absl::InvalidArgumentError(
        "spec.runtimeRef: the runtime's spec.template.spec.replicatedJobs is empty");
  }
  if (const Json& patches = JsonAt(obj, {"spec", "runtimePatches"}); patches.is_array()) {
    for (const Json& patch : patches) {
      if (GetString(patch, {"manager"}) == kKueuePatchManager) continue;
      const Json& patched =
          JsonAt(patch, {"trainingRuntimeSpec", "template", "spec", "replicatedJobs"});
      if (!patched.is_array()) continue;
      for (const Json& p : patched) {
        for (Json& job : jobs) {
          if (GetString(job, {"name"}) != GetString(p, {"name"})) continue;
          ApplyTemplatePatch(job["template"]["spec"]["template"],
                             JsonAt(p, {"template", "spec", "template"}));
        }
      }
    }
  }
  const Json& ml = JsonAt(runtime_spec, {"mlPolicy"});
  const bool mpi = ml.is_object() && ml.contains("mpi");
  const bool launcher_as_node = GetBool(ml, {"mpi", "runLauncherAsNode"}).value_or(false);
  const std::optional<int64_t> num_nodes = GetInt(obj, {"spec", "trainer", "numNodes"});
  const Json& per_node = JsonAt(obj, {"spec", "trainer", "resourcesPerNode"});
  for (Json& job : jobs) {
    const std::string name = GetString(job, {"name"});
    const bool trainer =
        GetString(job, {"template", "metadata", "labels", kAncestorLabel}) == kAncestorTrainer;
    int64_t count = GetInt(job, {"template", "spec", "parallelism"}).value_or(1);
    if (trainer && ml.is_object()) count = GetInt(ml, {"numNodes"}).value_or(1);
    if (num_nodes.has_value()) {
      if (mpi && name == kNodeJob) {
        count = launcher_as_node ? std::max<int64_t>(*num_nodes - 1, 1) : *num_nodes;
      } else if (!mpi && trainer) {
        count = *num_nodes;
      }
    }
    count = std::max<int64_t>(count, 1);
    Json& spec = job["template"]["spec"];
    spec["parallelism"] = count;
    spec["completions"] = count;
    const bool gets_resources =
        (trainer && ml.is_object()) || (mpi && launcher_as_node && name == kNodeJob);
    if (per_node.is_object() && gets_resources) {
      Json& containers = spec["template"]["spec"]["containers"];
      for (Json& c : containers) {
        if (GetString(c, {"name"}) != kNodeJob) continue;
        for (const char* key : {"requests", "limits"}) {
          if (const Json& m = JsonAt(per_node, {key}); m.is_object()) {
            for (auto it = m.begin(); it != m.end(); ++it) c["resources"][key][it.key()] = *it;
          }
        }
        break;
      }
    }
  }
  return jobs;
}

class TrainJobTranslator final : public JobKindTranslator {
 public:
  const JobKindTraits& traits() const override {
    static const JobKindTraits* traits = new JobKindTraits{
        .resource = {std::string(kTrainerGroup), "v1alpha1", "trainjobs", "TrainJob", true},
        .framework = "trainer.kubeflow.org/trainjob",
    };
    return *traits;
  }

  absl::StatusOr<std::vector<PodSetSource>> PodSets(const Json& obj,
                                                    const ObjectLookup& lookup) const override {
    TOLLGATE_ASSIGN_OR_RETURN(Json runtime, RuntimeSpec(obj, lookup));
    TOLLGATE_ASSIGN_OR_RETURN(Json jobs, ChildReplicatedJobs(obj, runtime));
    TOLLGATE_ASSIGN_OR_RETURN(
        std::vector<PodSetSource> sources,
        ReplicatedJobPodSets(jobs, "", "the runtime's spec.template.spec.replicatedJobs"));
    // The templates are the runtime's, not the TrainJob's: admissions go into a runtime patch.
    for (PodSetSource& s : sources) s.template_path.clear();
    return sources;
  }

  std::vector<std::string> EnactedFields(const Json& obj,
                                         const std::vector<PodSetSource>& sources) const override {
    return {"/spec/runtimePatches"};
  }

  absl::Status Enact(Json& obj, const std::vector<PodSetSource>& sources,
                     const std::vector<PodSetInfo>& infos) const override {
    Json replicated = Json::array();
    for (const PodSetSource& source : sources) {
      const PodSetInfo* info = FindInfo(infos, source.name);
      if (info == nullptr) continue;
      // The info as the JobSet's pod template will get it: merged with what the runtime and
      // the other patches already put there, so a conflict is found here and not by the Trainer.
      PodSetInfo merged;
      merged.labels = StringMap(Find(source.pod_template, {"metadata", "labels"}));
      merged.annotations = StringMap(Find(source.pod_template, {"metadata", "annotations"}));
      merged.node_selector = StringMap(Find(source.pod_template, {"spec", "nodeSelector"}));
      TOLLGATE_RETURN_IF_ERROR(MergeInfo(merged, *info, absl::StrCat("pod set ", source.name)));
      Json pod = Json::object();
      for (const auto& [key, values] :
           {std::pair{"labels", &info->labels}, {"annotations", &info->annotations}}) {
        for (const auto& [k, v] : *values) pod["metadata"][key][k] = v;
      }
      for (const auto& [k, v] : info->node_selector) pod["spec"]["nodeSelector"][k] = v;
      if (!info->tolerations.empty()) pod["spec"]["tolerations"] = Json(info->tolerations);
      if (!info->scheduling_gates.empty()) {
        pod["spec"]["schedulingGates"] = Json(info->scheduling_gates);
      }
      replicated.push_back({{"name", source.name}, {"template", {{"spec", {{"template", pod}}}}}});
    }
    Json& patches = obj["spec"]["runtimePatches"];
    if (!patches.is_array()) patches = Json::array();
    Json* ours = nullptr;
    for (Json& p : patches) {
      if (GetString(p, {"manager"}) == kKueuePatchManager) ours = &p;
    }
    if (ours == nullptr) {
      // Kueue's webhook adds an empty entry at creation; Tollgate has no webhook.
      patches.push_back({{"manager", std::string(kKueuePatchManager)}});
      ours = &patches.back();
    }
    (*ours)["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"] = std::move(replicated);
    return absl::OkStatus();
  }

  std::optional<JobFinish> Finished(const Json& obj) const override {
    return FinishFromConditions(obj, "Complete", "Failed", "TrainJob");
  }

  bool IsActive(const Json& obj) const override {
    return AnyReplicaActive(JsonAt(obj, {"status", "jobsStatus"}));
  }

  bool PodsReady(const Json& obj, const std::vector<PodSetSource>& sources,
                 const v1::Workload& workload) const override {
    return AllReplicasReady(sources, JsonAt(obj, {"status", "jobsStatus"}));
  }

  std::vector<ReclaimablePod> ReclaimablePods(
      const Json& obj, const std::vector<PodSetSource>& sources) const override {
    return SucceededReplicaPods(sources, JsonAt(obj, {"status", "jobsStatus"}));
  }
};

}  // namespace

std::unique_ptr<JobKindTranslator> NewTrainJobTranslator() {
  return std::make_unique<TrainJobTranslator>();
}

}  // namespace tollgate::manifest
