#include "services/manifest/admission_enactment.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"

namespace tollgate::manifest {
namespace {

constexpr char kFields[] = "fields";
// The layout of earlier versions.
constexpr char kLegacyTemplates[] = "templates";
constexpr char kLegacyCreated[] = "created";
constexpr char kLegacyParallelism[] = "parallelism";

void ErasePointer(Json& obj, const Json::json_pointer& pointer) {
  if (pointer.empty() || !obj.contains(pointer)) return;
  Json& parent = obj.at(pointer.parent_pointer());
  if (parent.is_object()) parent.erase(pointer.back());
}

// Sets or (for null) erases the value at `pointer`.
void PutBack(Json& obj, const std::string& pointer_text, const Json& value) {
  const Json::json_pointer pointer(pointer_text);
  if (value.is_null()) {
    ErasePointer(obj, pointer);
  } else {
    obj[pointer] = value;
  }
}

// The legacy layout as pointer -> original value.
std::map<std::string, Json> LegacyFields(const Json& original) {
  std::map<std::string, Json> fields;
  if (const Json* templates = Find(original, {kLegacyTemplates});
      templates != nullptr && templates->is_object()) {
    for (auto it = templates->begin(); it != templates->end(); ++it) {
      for (const char* key : {"nodeSelector", "tolerations"}) {
        const Json* value = Find(it.value(), {key});
        fields[absl::StrCat(it.key(), "/spec/", key)] = value == nullptr ? Json() : *value;
      }
    }
  }
  if (const Json* created = Find(original, {kLegacyCreated});
      created != nullptr && created->is_array()) {
    for (const Json& p : *created) {
      if (p.is_string()) fields[p.get<std::string>()] = Json();
    }
  }
  if (original.is_object() && original.contains(kLegacyParallelism)) {
    fields["/spec/parallelism"] = original[kLegacyParallelism];
  }
  return fields;
}

absl::StatusOr<Json> RestoreOrThrow(const Json& obj) {
  Json out = obj;
  const std::string text = Annotation(obj, kOriginalTemplatesAnnotation);
  if (!text.empty()) {
    TOLLGATE_ASSIGN_OR_RETURN(
        Json original,
        ParseJson(text, absl::StrCat("metadata.annotations[", kOriginalTemplatesAnnotation, "]")));
    std::map<std::string, Json> fields;
    if (const Json* saved = Find(original, {kFields}); saved != nullptr && saved->is_object()) {
      for (auto it = saved->begin(); it != saved->end(); ++it) fields[it.key()] = it.value();
    } else {
      fields = LegacyFields(original);
    }
    // Longer pointers first, so a field inside a created template is not put back after the
    // template itself was removed.
    std::vector<std::pair<std::string, Json>> ordered(fields.begin(), fields.end());
    std::stable_sort(ordered.begin(), ordered.end(),
                     [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
    for (const auto& [pointer, value] : ordered) PutBack(out, pointer, value);
  }
  SetAnnotation(out, kOriginalTemplatesAnnotation, "");
  SetAnnotation(out, kAdmissionAnnotation, "");
  return out;
}

absl::StatusOr<Json> ApplyOrThrow(const JobKindTranslator& translator, const Json& obj,
                                  const std::vector<PodSetInfo>& infos,
                                  absl::string_view fingerprint, const ObjectLookup& lookup) {
  TOLLGATE_ASSIGN_OR_RETURN(Json out, RestoreOrThrow(obj));
  TOLLGATE_ASSIGN_OR_RETURN(std::vector<PodSetSource> sources, translator.PodSets(out, lookup));
  Json saved = Json::object();
  for (const std::string& field : translator.EnactedFields(out, sources)) {
    const Json::json_pointer pointer(field);
    saved[field] = out.contains(pointer) ? out.at(pointer) : Json();
  }
  TOLLGATE_RETURN_IF_ERROR(translator.Enact(out, sources, infos));
  SetAnnotation(out, kOriginalTemplatesAnnotation, Dump(Json{{kFields, saved}}));
  SetAnnotation(out, kAdmissionAnnotation, fingerprint);
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
absl::StatusOr<Json> RestoreOriginalFields(const Json& obj) {
  try {
    return RestoreOrThrow(obj);
  } catch (const Json::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("metadata.annotations[", kOriginalTemplatesAnnotation, "]: ", e.what()));
  }
}

absl::StatusOr<Json> ApplyAdmission(const JobKindTranslator& translator, const Json& obj,
                                    const std::vector<PodSetInfo>& infos,
                                    absl::string_view fingerprint, const ObjectLookup& lookup) {
  try {
    return ApplyOrThrow(translator, obj, infos, fingerprint, lookup);
  } catch (const Json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("applying admission: ", e.what()));
  }
}

}  // namespace tollgate::manifest
