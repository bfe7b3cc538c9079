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
#include "services/manifest/job_translator.h"
#include "services/manifest/pytorchjob_translator.h"
#include "services/manifest/rayjob_translator.h"
#include "services/manifest/workload_translator.h"

namespace tollgate::cli {
namespace {

using manifest::Json;

// The job kinds `submit` takes, each with its apiVersion and translator.
struct JobKind {
  absl::string_view kind;
  absl::string_view api_version;
  const manifest::JobKindTranslator& translator;
};

const std::vector<JobKind>& JobKinds() {
  static const manifest::JobTranslator job;
  static const manifest::RayJobTranslator ray_job;
  static const manifest::PyTorchJobTranslator pytorch_job;
  static const auto* kinds = new std::vector<JobKind>{
      {"Job", "batch/v1", job},
      {"RayJob", "ray.io/v1", ray_job},
      {"PyTorchJob", "kubeflow.org/v1", pytorch_job},
  };
  return *kinds;
}

std::string Accepted() {
  std::string text = "Workload (kueue.x-k8s.io/v1beta1 or v1beta2)";
  for (const JobKind& k : JobKinds()) {
    absl::StrAppend(&text, ", ", k.kind, " (", k.api_version, ")");
  }
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

// YAML as Kubernetes reads it: plain scalars that look like numbers, booleans or null are those;
// quoted ones stay strings.
manifest::Json ToJson(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      manifest::Json j = manifest::Json::object();
      for (const auto& kv : node) j[kv.first.Scalar()] = ToJson(kv.second);
      return j;
    }
    case YAML::NodeType::Sequence: {
      manifest::Json j = manifest::Json::array();
      for (const auto& item : node) j.push_back(ToJson(item));
      return j;
    }
    case YAML::NodeType::Scalar: {
      const std::string& s = node.Scalar();
      if (node.Tag() == "!") return s;  // quoted
      if (s == "true" || s == "True") return true;
      if (s == "false" || s == "False") return false;
      if (s == "null" || s == "~") return nullptr;
      int64_t i = 0;
      if (absl::SimpleAtoi(s, &i)) return i;
      double d = 0;
      if (!s.empty() && (absl::ascii_isdigit(static_cast<unsigned char>(s[0])) || s[0] == '-') &&
          absl::SimpleAtod(s, &d)) {
        return d;
      }
      return s;
    }
    default:
      return nullptr;
  }
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

absl::StatusOr<manifest::Manifest> TranslateJob(const JobKind& kind, const YAML::Node& node,
                                                absl::string_view where) {
  manifest::Json obj = ToJson(node);
  manifest::Json& meta = obj["metadata"];
  if (!meta.is_object()) meta = manifest::Json::object();
  if (!meta.contains("namespace")) meta["namespace"] = "default";
  std::string name = manifest::GetString(obj, {"metadata", "name"});
  const std::string generate = manifest::GetString(obj, {"metadata", "generateName"});
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
        absl::StrCat(where, ": ", kind.kind, ": metadata.name (or generateName) is required"));
  }
  const std::string ns = meta["namespace"].is_string() ? meta["namespace"].get<std::string>() : "";
  if (!meta.contains("uid")) {
    meta["uid"] = StableSuffix(absl::StrCat(kind.kind, "/", ns, "/", name));
  }
  // Kueue manages a job without the queue label only when told to; the CLI submits it to the
  // namespace's "default" LocalQueue, which is what an empty queue name means.
  absl::StatusOr<v1::Workload> wl = manifest::TranslateWorkload(kind.translator, obj, "");
  if (!wl.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": ", kind.kind, " ", ns, "/", name, ": ", wl.status().message()));
  }
  // The uid only named the workload; the server gives the workload its own.
  wl->mutable_metadata()->clear_uid();
  // The workload records where it came from, as Kueue's owner reference would.
  (*wl->mutable_metadata()->mutable_labels())["tollgate.dev/job-kind"] = std::string(kind.kind);
  (*wl->mutable_metadata()->mutable_annotations())["tollgate.dev/job-name"] = name;
  manifest::Manifest m;
  m.kind = "Workload";
  m.object = *std::move(wl);
  return m;
}

absl::Status ParseStream(absl::string_view text, absl::string_view source,
                         std::vector<manifest::Manifest>& out) {
  std::vector<YAML::Node> documents;
  try {
    documents = YAML::LoadAll(std::string(text));
  } catch (const YAML::ParserException& e) {
    return absl::InvalidArgumentError(absl::StrCat(source, ":", e.mark.line + 1, ":",
                                                   e.mark.column + 1, ": invalid YAML: ", e.msg));
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": invalid YAML: ", e.what()));
  }
  for (size_t i = 0; i < documents.size(); ++i) {
    if (documents[i].IsNull()) continue;  // `---` with nothing after it
    absl::StatusOr<std::vector<manifest::Manifest>> parsed =
        ParseInputDocument(documents[i], absl::StrCat(source, ": document ", i + 1));
    if (!parsed.ok()) return parsed.status();
    std::move(parsed->begin(), parsed->end(), std::back_inserter(out));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<manifest::Manifest>> ParseInputDocument(const YAML::Node& node,
                                                                   absl::string_view where) {
  std::vector<manifest::Manifest> out;
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
        absl::StatusOr<std::vector<manifest::Manifest>> parsed =
            ParseInputDocument(item, absl::StrCat(where, ": items[", i++, "]"));
        if (!parsed.ok()) return parsed.status();
        std::move(parsed->begin(), parsed->end(), std::back_inserter(out));
      }
      return out;
    }
    for (const JobKind& job : JobKinds()) {
      if (job.kind != kind) continue;
      const YAML::Node api = node["apiVersion"];
      const std::string api_version = api.IsDefined() && api.IsScalar() ? api.Scalar() : "";
      if (api_version != job.api_version) {
        return absl::InvalidArgumentError(absl::StrCat(where, ": ", kind, ": apiVersion \"",
                                                       api_version, "\" is not ", job.api_version));
      }
      absl::StatusOr<manifest::Manifest> m = TranslateJob(job, node, where);
      if (!m.ok()) return m.status();
      out.push_back(*std::move(m));
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
  absl::StatusOr<manifest::Manifest> m = manifest::ParseManifestNode(node, where);
  if (!m.ok()) return m.status();
  out.push_back(*std::move(m));
  return out;
}

absl::StatusOr<std::vector<manifest::Manifest>> ReadManifests(
    std::istream& in, const std::vector<std::string>& paths) {
  std::vector<manifest::Manifest> manifests;
  for (const std::string& path : paths) {
    if (path == "-") {
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (absl::Status st = ParseStream(text, "<stdin>", manifests); !st.ok()) return st;
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
      if (absl::Status st = ParseStream(*text, file, manifests); !st.ok()) return st;
    }
  }
  return manifests;
}

void UseNamespace(absl::string_view ns, std::vector<manifest::Manifest>& manifests) {
  for (manifest::Manifest& m : manifests) {
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

}  // namespace tollgate::cli
