#include "services/manifest/admission_translator.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "services/manifest/pod_translator.h"

namespace tollgate::manifest {
namespace {

// Annotation layout:
//   {"templates": {"<json pointer to PodTemplateSpec>": {"nodeSelector": {...} | null,
//                                                        "tolerations": [...] | null}},
//    "created": ["<json pointer>", ...],
//    "parallelism": <int> | null}            (Job only, when partially admitted)
constexpr char kTemplates[] = "templates";
constexpr char kCreated[] = "created";
constexpr char kParallelism[] = "parallelism";

// Reads a member or null.
Json MemberOrNull(const Json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() ? Json(nullptr) : *it;
}

void SetOrErase(Json& obj, const char* key, const Json& value) {
  if (value.is_null()) {
    obj.erase(key);
  } else {
    obj[key] = value;
  }
}

void ErasePointer(Json& obj, const Json::json_pointer& pointer) {
  if (!obj.contains(pointer)) return;
  Json& parent = obj.at(pointer.parent_pointer());
  if (parent.is_object()) parent.erase(pointer.back());
}

absl::StatusOr<Json> RestoreOrThrow(const Json& obj) {
  Json out = obj;
  const std::string text = Annotation(obj, kOriginalTemplatesAnnotation);
  if (!text.empty()) {
    TOLLGATE_ASSIGN_OR_RETURN(
        Json original,
        ParseJson(text, absl::StrCat("metadata.annotations[", kOriginalTemplatesAnnotation, "]")));
    std::set<std::string> created;
    if (const Json* list = Find(original, {kCreated}); list != nullptr && list->is_array()) {
      for (const Json& p : *list) {
        if (p.is_string()) created.insert(p.get<std::string>());
      }
    }
    if (const Json* templates = Find(original, {kTemplates});
        templates != nullptr && templates->is_object()) {
      for (auto it = templates->begin(); it != templates->end(); ++it) {
        const Json::json_pointer pointer(it.key());
        if (created.count(it.key()) > 0) {
          ErasePointer(out, pointer);
          continue;
        }
        Json& tmpl = out[pointer];
        Json& spec = Ensure(tmpl, {"spec"});
        SetOrErase(spec, "nodeSelector", MemberOrNull(it.value(), "nodeSelector"));
        SetOrErase(spec, "tolerations", MemberOrNull(it.value(), "tolerations"));
      }
    }
    if (original.is_object() && original.contains(kParallelism)) {
      SetOrErase(Ensure(out, {"spec"}), kParallelism, original[kParallelism]);
    }
  }
  SetAnnotation(out, kOriginalTemplatesAnnotation, "");
  SetAnnotation(out, kAdmissionAnnotation, "");
  return out;
}

bool ContainsToleration(const Json& list, const Json& t) {
  for (const Json& existing : list) {
    if (existing == t) return true;
  }
  return false;
}

absl::StatusOr<Json> ApplyOrThrow(const JobKindTranslator& translator, const Json& obj,
                                  const v1::Admission& admission, const FlavorMap& flavors) {
  TOLLGATE_ASSIGN_OR_RETURN(Json out, RestoreOrThrow(obj));
  TOLLGATE_ASSIGN_OR_RETURN(std::vector<PodSetSource> sources, translator.PodSets(out));
  Json original = {{kTemplates, Json::object()}, {kCreated, Json::array()}};
  for (const PodSetSource& source : sources) {
    const v1::PodSetAssignment* assignment = nullptr;
    for (const v1::PodSetAssignment& a : admission.pod_set_assignments()) {
      if (a.name() == source.name) assignment = &a;
    }
    if (assignment == nullptr) continue;
    const Json::json_pointer pointer(source.template_path);
    if (!source.template_present) {
      out[pointer] = source.pod_template;
      original[kCreated].push_back(source.template_path);
    }
    Json& spec = Ensure(out[pointer], {"spec"});
    original[kTemplates][source.template_path] = {
        {"nodeSelector", MemberOrNull(spec, "nodeSelector")},
        {"tolerations", MemberOrNull(spec, "tolerations")}};

    std::set<std::string> names;
    for (const auto& [resource, flavor] : assignment->flavors()) names.insert(flavor);
    for (const std::string& name : names) {
      auto it = flavors.find(name);
      if (it == flavors.end()) {
        return absl::NotFoundError(absl::StrCat("ResourceFlavor ", name, " not found"));
      }
      const v1::ResourceFlavorSpec& flavor = it->second.spec();
      if (!flavor.node_labels().empty()) {
        Json& selector = spec["nodeSelector"];
        if (!selector.is_object()) selector = Json::object();
        std::map<std::string, std::string> sorted(flavor.node_labels().begin(),
                                                  flavor.node_labels().end());
        for (const auto& [key, value] : sorted) selector[key] = value;
      }
      for (const v1::Toleration& t : flavor.tolerations()) {
        Json& list = spec["tolerations"];
        if (!list.is_array()) list = Json::array();
        Json json = TolerationToJson(t);
        if (!ContainsToleration(list, json)) list.push_back(std::move(json));
      }
    }
    if (translator.resource() == JobResource() && assignment->count() > 0 &&
        assignment->count() < source.count) {
      Json& job_spec = Ensure(out, {"spec"});
      original[kParallelism] = MemberOrNull(job_spec, kParallelism);
      job_spec[kParallelism] = assignment->count();
    }
  }
  SetAnnotation(out, kOriginalTemplatesAnnotation, Dump(original));
  SetAnnotation(out, kAdmissionAnnotation, AdmissionFingerprint(admission));
  return out;
}

}  // namespace

std::string Annotation(const Json& obj, absl::string_view key) {
  return GetString(obj, {"metadata", "annotations", key});
}

void SetAnnotation(Json& obj, absl::string_view key, absl::string_view value) {
  if (value.empty()) {
    if (!obj.is_object()) return;
    auto meta = obj.find("metadata");
    if (meta == obj.end() || !meta->is_object()) return;
    auto annotations = meta->find("annotations");
    if (annotations != meta->end() && annotations->is_object()) {
      annotations->erase(std::string(key));
      // The API server drops empty maps; keeping one would make every diff a change.
      if (annotations->empty()) meta->erase(annotations);
    }
    return;
  }
  Ensure(obj, {"metadata", "annotations"})[std::string(key)] = std::string(value);
}

std::vector<std::string> AssignedFlavors(const v1::Admission& admission) {
  std::set<std::string> names;
  for (const v1::PodSetAssignment& a : admission.pod_set_assignments()) {
    for (const auto& [resource, flavor] : a.flavors()) names.insert(flavor);
  }
  return {names.begin(), names.end()};
}

std::string AdmissionFingerprint(const v1::Admission& admission) {
  std::vector<std::string> parts;
  for (const v1::PodSetAssignment& a : admission.pod_set_assignments()) {
    std::map<std::string, std::string> sorted(a.flavors().begin(), a.flavors().end());
    std::vector<std::string> flavors;
    for (const auto& [resource, flavor] : sorted) flavors.push_back(resource + "=" + flavor);
    parts.push_back(absl::StrCat(a.name(), ":", a.count(), ":", absl::StrJoin(flavors, ",")));
  }
  std::sort(parts.begin(), parts.end());
  return absl::StrCat(admission.cluster_queue(), ";", absl::StrJoin(parts, ";"));
}

// nlohmann reports a malformed JSON pointer (from a hand-edited annotation) or a type clash by
// throwing; both become INVALID_ARGUMENT here rather than escaping into the controller.
absl::StatusOr<Json> RestoreOriginalTemplates(const Json& obj) {
  try {
    return RestoreOrThrow(obj);
  } catch (const Json::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("metadata.annotations[", kOriginalTemplatesAnnotation, "]: ", e.what()));
  }
}

absl::StatusOr<Json> ApplyAdmission(const JobKindTranslator& translator, const Json& obj,
                                    const v1::Admission& admission, const FlavorMap& flavors) {
  try {
    return ApplyOrThrow(translator, obj, admission, flavors);
  } catch (const Json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("applying admission: ", e.what()));
  }
}

}  // namespace tollgate::manifest
