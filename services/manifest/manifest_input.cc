#include "services/manifest/manifest_input.h"

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <random>
#include <system_error>
#include <utility>
#include <variant>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/file_util.h"
#include "core/object_kind.h"
#include "core/status_macros.h"
#include "services/manifest/gated_kinds_input.h"
#include "services/manifest/job_kinds.h"
#include "services/manifest/yaml_json.h"

namespace tollgate::manifest {
namespace {

// Kinds that carry no work of their own and may sit in a file beside jobs (the ConfigMap with a
// RayJob's code, the Service in front of a RayService, a TrainJob's runtime): `submit` skips
// them with a note instead of refusing the file.
bool CarriesNoWork(absl::string_view api_version, absl::string_view kind) {
  static constexpr std::pair<absl::string_view, absl::string_view> kKinds[] = {
      {"v1", "ConfigMap"},
      {"v1", "Secret"},
      {"v1", "Service"},
      {"v1", "ServiceAccount"},
      {"v1", "PersistentVolumeClaim"},
      {"networking.k8s.io/v1", "Ingress"},
      {"networking.k8s.io/v1", "NetworkPolicy"},
      {"policy/v1", "PodDisruptionBudget"},
      {"trainer.kubeflow.org/v1alpha1", "TrainingRuntime"},
      {"trainer.kubeflow.org/v1alpha1", "ClusterTrainingRuntime"},
  };
  for (const auto& [v, k] : kKinds) {
    if (v == api_version && k == kind) return true;
  }
  return false;
}

// The other documents of the files being read, for a kind that refers to one (a TrainJob's
// runtime). A namespaced object without a namespace is in "default", as kubectl would create it.
class DocumentLookup final : public ObjectLookup {
 public:
  explicit DocumentLookup(const std::vector<Json>& documents) : documents_(documents) {}
  absl::StatusOr<Json> Get(const ResourceKind& kind, absl::string_view ns,
                           absl::string_view name) const override {
    for (const Json& doc : documents_) {
      if (GetString(doc, {"kind"}) != kind.kind || GetString(doc, {"metadata", "name"}) != name) {
        continue;
      }
      const std::string doc_ns = GetString(doc, {"metadata", "namespace"}, "default");
      if (!kind.namespaced || doc_ns == ns) return doc;
    }
    return absl::NotFoundError(absl::StrCat(kind.kind, " ", ns, ns.empty() ? "" : "/", name,
                                            " not found; put it in the file (or a file) given "
                                            "with -f"));
  }

 private:
  const std::vector<Json>& documents_;
};

std::string Accepted() {
  std::string text = "Workload (kueue.x-k8s.io/v1beta1 or v1beta2), ";
  absl::StrAppend(&text, JobKindList());
  absl::StrAppend(&text,
                  ", Pod (v1), Deployment (apps/v1), StatefulSet (apps/v1), LeaderWorkerSet "
                  "(leaderworkerset.x-k8s.io/v1)");
  absl::StrAppend(&text, ", the configuration kinds");
  const char* separator = " ";
  for (const core::KindTraits& t : core::AllKinds()) {
    if (!t.config_kind.has_value()) continue;
    absl::StrAppend(&text, separator, t.name);
    separator = ", ";
  }
  absl::StrAppend(&text, ", or a List of these");
  return text;
}

// A stable 8-hex-digit stand-in for the uid tollgate-kube takes its workload name suffix from.
std::string StableSuffix(absl::string_view text) {
  uint32_t h = 2166136261u;  // FNV-1a
  for (unsigned char c : text) {
    h ^= c;
    h *= 16777619u;
  }
  return absl::StrFormat("%08x", h);
}

absl::StatusOr<Manifest> TranslateJob(const JobKindTranslator& kind, const YAML::Node& node,
                                      absl::string_view where, const ObjectLookup& lookup) {
  const std::string& kind_name = kind.resource().kind;
  Json obj = JsonFromYaml(node);
  Json& meta = obj["metadata"];
  if (!meta.is_object()) meta = Json::object();
  if (!meta.contains("namespace")) meta["namespace"] = "default";
  std::string name = GetString(obj, {"metadata", "name"});
  const std::string generate = GetString(obj, {"metadata", "generateName"});
  if (name.empty() && !generate.empty()) {
    // As the API server does for generateName: five random [a-z0-9].
    static constexpr char kChars[] = "bcdfghjklmnpqrstvwxz2456789";
    std::random_device random;
    name = generate;
    for (int i = 0; i < 5; ++i) name.push_back(kChars[random() % (sizeof(kChars) - 1)]);
    meta["name"] = name;
  }
  if (name.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": ", kind_name, ": metadata.name (or generateName) is required"));
  }
  const std::string ns = meta["namespace"].is_string() ? meta["namespace"].get<std::string>() : "";
  if (!meta.contains("uid")) {
    meta["uid"] = StableSuffix(absl::StrCat(kind_name, "/", ns, "/", name));
  }
  // Kueue manages a job without the queue label only when told to; the CLI submits it to the
  // namespace's "default" LocalQueue, which is what an empty queue name means.
  absl::StatusOr<v1::Workload> wl = TranslateWorkload(kind, obj, "", lookup);
  if (!wl.ok()) {
    return absl::Status(wl.status().code(), absl::StrCat(where, ": ", kind_name, " ", ns, "/", name,
                                                         ": ", wl.status().message()));
  }
  // The uid only named the workload; the server gives the workload its own, and there is no
  // object whose uid the workload could carry.
  wl->mutable_metadata()->clear_uid();
  wl->mutable_metadata()->mutable_labels()->erase(std::string(kJobUidLabel));
  Manifest m;
  m.kind = "Workload";
  m.object = *std::move(wl);
  return m;
}

// A file (or stdin) read but not yet parsed.
struct InputFile {
  std::string text;
  std::string source;
};

}  // namespace

absl::StatusOr<std::vector<Manifest>> ParseInputDocument(const YAML::Node& node,
                                                         absl::string_view where) {
  std::vector<std::string> notes;
  return ParseInputDocument(node, where, NoObjects(), notes);
}

absl::StatusOr<std::vector<Manifest>> ParseInputDocument(const YAML::Node& node,
                                                         absl::string_view where,
                                                         const ObjectLookup& lookup,
                                                         std::vector<std::string>& notes,
                                                         GatedKindsInput* gated) {
  std::vector<Manifest> out;
  try {
    const YAML::Node kind_node = node.IsMap() ? node["kind"] : YAML::Node();
    const std::string kind =
        kind_node.IsDefined() && kind_node.IsScalar() ? kind_node.Scalar() : "";
    if (kind == "List" || (absl::EndsWith(kind, "List") && node["items"].IsDefined())) {
      const YAML::Node items = node["items"];
      if (items.IsDefined() && !items.IsNull() && !items.IsSequence()) {
        return absl::InvalidArgumentError(absl::StrCat(where, ": List items: want a list"));
      }
      size_t i = 0;
      for (const auto& item : items) {
        absl::StatusOr<std::vector<Manifest>> parsed = ParseInputDocument(
            item, absl::StrCat(where, ": items[", i++, "]"), lookup, notes, gated);
        if (!parsed.ok()) return parsed.status();
        std::move(parsed->begin(), parsed->end(), std::back_inserter(out));
      }
      return out;
    }
    if (GatedKindsInput::Handles(kind)) {
      // Pods, pod groups, Deployments, StatefulSets, LeaderWorkerSets (docs/pod-integrations.md).
      GatedKindsInput single;
      GatedKindsInput& input = gated != nullptr ? *gated : single;
      TOLLGATE_RETURN_IF_ERROR(input.Add(JsonFromYaml(node), where, out));
      if (gated == nullptr) TOLLGATE_RETURN_IF_ERROR(input.Finish(out));
      return out;
    }
    const YAML::Node api = node.IsMap() ? node["apiVersion"] : YAML::Node();
    const std::string api_version = api.IsDefined() && api.IsScalar() ? api.Scalar() : "";
    absl::StatusOr<const JobKindTranslator*> job = JobKindOfManifest(api_version, kind);
    if (!job.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": ", job.status().message()));
    }
    if (*job != nullptr) {
      const Json obj = JsonFromYaml(node);
      const std::string name = GetString(obj, {"metadata", "name"});
      if (!(*job)->traits().creates_workload) {
        // A CronJob: its Jobs are queued when it creates them, from its job template's labels.
        const std::string queue =
            GetString(obj, {"spec", "jobTemplate", "metadata", "labels", kQueueNameLabel});
        notes.push_back(absl::StrCat(
            where, ": skipped ", kind, " ", name, ": it creates Jobs, which are queued",
            queue.empty() ? " only with the queue label on spec.jobTemplate.metadata.labels "
                            "(it has none)"
                          : absl::StrCat(" in ", queue, " when it creates them")));
        return out;
      }
      absl::StatusOr<Manifest> m = TranslateJob(**job, node, where, lookup);
      if (!m.ok()) return m.status();
      out.push_back(*std::move(m));
      return out;
    }
    if (CarriesNoWork(api_version, kind)) {
      const YAML::Node meta = node["metadata"];
      const std::string name = meta.IsMap() && meta["name"].IsScalar() ? meta["name"].Scalar() : "";
      notes.push_back(
          absl::StrCat(where, ": skipped ", kind, " ", name, ": it carries no work to queue"));
      return out;
    }
    if (!kind.empty() && core::FindKind(kind) == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": unknown kind \"", kind, "\"; tollgate takes ", Accepted(),
                       ". Describe any other job as a Kueue Workload (kind: Workload, spec.podSets "
                       "with pod templates); see docs/cli.md"));
    }
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": malformed YAML: ", e.what()));
  }
  absl::StatusOr<Manifest> m = ParseManifestNode(node, where);
  if (!m.ok()) return m.status();
  out.push_back(*std::move(m));
  return out;
}

absl::StatusOr<std::vector<Manifest>> ReadManifests(std::istream& in,
                                                    const std::vector<std::string>& paths) {
  std::vector<std::string> notes;
  return ReadManifests(in, paths, notes);
}

absl::StatusOr<std::vector<Manifest>> ReadManifests(std::istream& in,
                                                    const std::vector<std::string>& paths,
                                                    std::vector<std::string>& notes) {
  // Every file first: a job may refer to an object defined later or in another file.
  std::vector<InputFile> inputs;
  for (const std::string& path : paths) {
    if (path == "-") {
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      inputs.push_back({std::move(text), "<stdin>"});
      continue;
    }
    std::error_code ec;
    std::vector<std::string> files;
    if (std::filesystem::is_directory(path, ec)) {
      for (const auto& entry : std::filesystem::directory_iterator(path, ec)) {
        const std::string ext = entry.path().extension().string();
        if (entry.is_regular_file() && (ext == ".yaml" || ext == ".yml" || ext == ".json")) {
          files.push_back(entry.path().string());
        }
      }
      if (ec) return absl::NotFoundError(absl::StrCat("cannot read ", path, ": ", ec.message()));
      std::sort(files.begin(), files.end());
    } else {
      files.push_back(path);
    }
    for (const std::string& file : files) {
      absl::StatusOr<std::string> text = common::ReadFileToString(file);
      if (!text.ok()) return text.status();
      inputs.push_back({*std::move(text), file});
    }
  }
  std::vector<Json> json;
  for (const InputFile& input : inputs) {
    TOLLGATE_ASSIGN_OR_RETURN(std::vector<Json> documents,
                              JsonDocumentsFromYaml(input.text, input.source));
    std::move(documents.begin(), documents.end(), std::back_inserter(json));
  }
  const DocumentLookup lookup(json);
  std::vector<Manifest> manifests;
  GatedKindsInput gated;
  for (const InputFile& input : inputs) {
    TOLLGATE_ASSIGN_OR_RETURN(std::vector<Manifest> parsed,
                              ParseManifests(input.text, input.source, lookup, notes, &gated));
    std::move(parsed.begin(), parsed.end(), std::back_inserter(manifests));
  }
  // A pod group becomes one workload once every file has been read.
  TOLLGATE_RETURN_IF_ERROR(gated.Finish(manifests));
  return manifests;
}

void UseNamespace(absl::string_view ns, std::vector<Manifest>& manifests) {
  for (Manifest& m : manifests) {
    v1::ObjectMeta* meta = nullptr;
    if (auto* wl = std::get_if<v1::Workload>(&m.object)) {
      meta = wl->mutable_metadata();
    } else if (auto* object = std::get_if<v1::ConfigObject>(&m.object); object->has_local_queue()) {
      meta = object->mutable_local_queue()->mutable_metadata();
    }
    if (meta != nullptr && (meta->namespace_().empty() || meta->namespace_() == "default")) {
      meta->set_namespace_(std::string(ns));
    }
  }
}

}  // namespace tollgate::manifest
