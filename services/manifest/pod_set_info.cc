#include "services/manifest/pod_set_info.h"

#include <set>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "services/manifest/pod_translator.h"

namespace tollgate::manifest {
namespace {

absl::Status Conflict(absl::string_view what, absl::string_view field, absl::string_view key,
                      absl::string_view have, absl::string_view want) {
  return MarkPermanent(absl::FailedPreconditionError(
      absl::StrCat(what, ": conflict for ", field, ": key ", key, " is \"", have,
                   "\" and must also be \"", want, "\"")));
}

absl::Status MergeMap(std::map<std::string, std::string>& into,
                      const std::map<std::string, std::string>& from, absl::string_view what,
                      absl::string_view field) {
  // Check every key before changing any, so a conflict leaves `into` as it was.
  for (const auto& [key, value] : from) {
    auto it = into.find(key);
    if (it != into.end() && it->second != value) {
      return Conflict(what, field, key, it->second, value);
    }
  }
  for (const auto& [key, value] : from) into[key] = value;
  return absl::OkStatus();
}

std::string Operator(const Json& t) {
  std::string op = GetString(t, {"operator"});
  return op.empty() ? "Equal" : op;
}

void AppendTolerations(std::vector<Json>& into, const std::vector<Json>& from) {
  for (const Json& t : from) {
    bool present = false;
    for (const Json& e : into) present = present || SameToleration(e, t);
    if (!present) into.push_back(t);
  }
}

void AppendGates(std::vector<Json>& into, const std::vector<Json>& from) {
  for (const Json& g : from) {
    bool present = false;
    for (const Json& e : into) present = present || e == g;
    if (!present) into.push_back(g);
  }
}

std::vector<Json> ArrayItems(const Json* list) {
  std::vector<Json> out;
  if (list != nullptr && list->is_array()) out.assign(list->begin(), list->end());
  return out;
}

// Writes a merged map back as a JSON object member. An empty one was empty before the merge
// too, and stays as it was (absent or {}), so an admission that adds nothing leaves no trace.
void SetMap(Json& parent, const char* key, const std::map<std::string, std::string>& values) {
  if (values.empty()) return;
  Json object = Json::object();
  for (const auto& [k, v] : values) object[k] = v;
  parent[key] = std::move(object);
}

void SetList(Json& parent, const char* key, const std::vector<Json>& values) {
  if (values.empty()) return;
  parent[key] = Json(values);
}

}  // namespace

std::map<std::string, std::string> StringMap(const Json* object) {
  std::map<std::string, std::string> out;
  if (object == nullptr || !object->is_object()) return out;
  for (auto it = object->begin(); it != object->end(); ++it) {
    if (it.value().is_string()) out[it.key()] = it.value().get<std::string>();
  }
  return out;
}

bool SameToleration(const Json& a, const Json& b) {
  return GetString(a, {"key"}) == GetString(b, {"key"}) &&
         GetString(a, {"effect"}) == GetString(b, {"effect"}) &&
         GetString(a, {"value"}) == GetString(b, {"value"}) && Operator(a) == Operator(b);
}

const PodSetInfo* FindInfo(const std::vector<PodSetInfo>& infos, absl::string_view name) {
  for (const PodSetInfo& info : infos) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

absl::Status MergeInfo(PodSetInfo& into, const PodSetInfo& from, absl::string_view what) {
  // All three maps are checked before any is changed.
  PodSetInfo merged = into;
  TOLLGATE_RETURN_IF_ERROR(MergeMap(merged.annotations, from.annotations, what, "annotations"));
  TOLLGATE_RETURN_IF_ERROR(MergeMap(merged.labels, from.labels, what, "labels"));
  TOLLGATE_RETURN_IF_ERROR(
      MergeMap(merged.node_selector, from.node_selector, what, "nodeSelector"));
  AppendTolerations(merged.tolerations, from.tolerations);
  AppendGates(merged.scheduling_gates, from.scheduling_gates);
  into = std::move(merged);
  return absl::OkStatus();
}

std::vector<PodSetUpdate> PodSetUpdatesOf(const v1::Workload& workload) {
  std::vector<PodSetUpdate> out;
  for (const v1::PodSetUpdate& merged : workload.status().admitted_pod_sets()) {
    PodSetUpdate update;
    update.check = "admission checks";
    update.pod_set = merged.name();
    update.labels =
        std::map<std::string, std::string>(merged.labels().begin(), merged.labels().end());
    update.annotations = std::map<std::string, std::string>(merged.annotations().begin(),
                                                            merged.annotations().end());
    update.node_selector = std::map<std::string, std::string>(merged.node_selector().begin(),
                                                              merged.node_selector().end());
    for (const v1::Toleration& t : merged.tolerations()) {
      update.tolerations.push_back(TolerationToJson(t));
    }
    out.push_back(std::move(update));
  }
  return out;
}

absl::StatusOr<std::vector<PodSetInfo>> PodSetInfosFromAdmission(
    const v1::Admission& admission, const FlavorMap& flavors,
    const std::vector<PodSetUpdate>& updates) {
  std::vector<PodSetInfo> out;
  for (const v1::PodSetAssignment& assignment : admission.pod_set_assignments()) {
    PodSetInfo info;
    info.name = assignment.name();
    info.count = assignment.count();
    // Kueue walks the assignment's flavors in resource order and skips repeats.
    std::map<std::string, std::string> by_resource(assignment.flavors().begin(),
                                                   assignment.flavors().end());
    std::set<std::string> seen;
    for (const auto& [resource, name] : by_resource) {
      if (!seen.insert(name).second) continue;
      auto it = flavors.find(name);
      if (it == flavors.end()) {
        return absl::NotFoundError(absl::StrCat("ResourceFlavor ", name, " not found"));
      }
      const v1::ResourceFlavorSpec& flavor = it->second.spec();
      std::map<std::string, std::string> labels(flavor.node_labels().begin(),
                                                flavor.node_labels().end());
      for (const auto& [key, value] : labels) info.node_selector[key] = value;
      for (const v1::Toleration& t : flavor.tolerations()) {
        info.tolerations.push_back(TolerationToJson(t));
      }
    }
    info.labels[std::string(kPodSetLabel)] = assignment.name();
    for (const PodSetUpdate& update : updates) {
      if (update.pod_set != assignment.name()) continue;
      PodSetInfo from;
      from.labels = update.labels;
      from.annotations = update.annotations;
      from.node_selector = update.node_selector;
      from.tolerations = update.tolerations;
      TOLLGATE_RETURN_IF_ERROR(MergeInfo(
          info, from,
          absl::StrCat("pod set ", assignment.name(), ": admission check ", update.check)));
    }
    out.push_back(std::move(info));
  }
  return out;
}

absl::Status MergeIntoTemplate(Json& pod_template, const PodSetInfo& info,
                               absl::string_view where) {
  if (!pod_template.is_object()) pod_template = Json::object();
  Json& meta = Ensure(pod_template, {"metadata"});
  Json& spec = Ensure(pod_template, {"spec"});
  PodSetInfo current;
  current.labels = StringMap(Find(meta, {"labels"}));
  current.annotations = StringMap(Find(meta, {"annotations"}));
  current.node_selector = StringMap(Find(spec, {"nodeSelector"}));
  current.tolerations = ArrayItems(Find(spec, {"tolerations"}));
  current.scheduling_gates = ArrayItems(Find(spec, {"schedulingGates"}));
  TOLLGATE_RETURN_IF_ERROR(MergeInfo(current, info, where));
  SetMap(meta, "labels", current.labels);
  SetMap(meta, "annotations", current.annotations);
  SetMap(spec, "nodeSelector", current.node_selector);
  SetList(spec, "tolerations", current.tolerations);
  SetList(spec, "schedulingGates", current.scheduling_gates);
  if (meta.empty()) pod_template.erase("metadata");
  return absl::OkStatus();
}

}  // namespace tollgate::manifest
