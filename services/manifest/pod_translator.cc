#include "services/manifest/pod_translator.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/quantity.h"
#include "core/status_macros.h"

namespace tollgate::manifest {
namespace {

absl::StatusOr<core::ResourceList> ParseResourceList(const Json* list, absl::string_view path) {
  core::ResourceList out;
  if (list == nullptr || !list->is_object()) return out;
  for (auto it = list->begin(); it != list->end(); ++it) {
    std::string text;
    if (it.value().is_string()) {
      text = it.value().get<std::string>();
    } else if (it.value().is_number()) {
      // Served objects always carry strings; a hand-written one may say `cpu: 2`.
      text = Dump(it.value());
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ".", it.key(), ": want a quantity, got ", Dump(it.value())));
    }
    absl::StatusOr<core::Quantity> q = core::Quantity::Parse(text);
    if (!q.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ".", it.key(), ": ", q.status().message()));
    }
    out.emplace(it.key(), *std::move(q));
  }
  return out;
}

// A `resources` stanza (container or pod level): requests and limits as written.
absl::Status ParseRequirements(const Json& owner, absl::string_view path,
                               core::ResourceList* requests, core::ResourceList* limits) {
  TOLLGATE_ASSIGN_OR_RETURN(*requests,
                            ParseResourceList(Find(owner, {"resources", "requests"}),
                                              absl::StrCat(path, ".resources.requests")));
  TOLLGATE_ASSIGN_OR_RETURN(*limits, ParseResourceList(Find(owner, {"resources", "limits"}),
                                                       absl::StrCat(path, ".resources.limits")));
  return absl::OkStatus();
}

absl::StatusOr<std::vector<core::ContainerResources>> ParseContainers(const Json& pod_spec,
                                                                      absl::string_view key,
                                                                      absl::string_view path) {
  std::vector<core::ContainerResources> out;
  const Json* list = Find(pod_spec, {key});
  if (list == nullptr || !list->is_array()) return out;
  for (size_t i = 0; i < list->size(); ++i) {
    const Json& c = (*list)[i];
    core::ContainerResources r;
    TOLLGATE_RETURN_IF_ERROR(
        ParseRequirements(c, absl::StrCat(path, ".", key, "[", i, "]"), &r.requests, &r.limits));
    r.restartable = GetString(c, {"restartPolicy"}) == "Always";
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace

absl::StatusOr<core::PodResources> PodResourcesFromJson(const Json& pod_spec,
                                                        absl::string_view path) {
  core::PodResources pod;
  TOLLGATE_ASSIGN_OR_RETURN(pod.containers, ParseContainers(pod_spec, "containers", path));
  TOLLGATE_ASSIGN_OR_RETURN(pod.init_containers, ParseContainers(pod_spec, "initContainers", path));
  TOLLGATE_ASSIGN_OR_RETURN(pod.overhead, ParseResourceList(Find(pod_spec, {"overhead"}),
                                                            absl::StrCat(path, ".overhead")));
  TOLLGATE_RETURN_IF_ERROR(ParseRequirements(pod_spec, path, &pod.pod_requests, &pod.pod_limits));
  return pod;
}

v1::Toleration TolerationFromJson(const Json& t) {
  v1::Toleration out;
  out.set_key(GetString(t, {"key"}));
  out.set_operator_(GetString(t, {"operator"}));
  out.set_value(GetString(t, {"value"}));
  out.set_effect(GetString(t, {"effect"}));
  if (std::optional<int64_t> s = GetInt(t, {"tolerationSeconds"}); s.has_value()) {
    out.set_toleration_seconds(*s);
  }
  return out;
}

Json TolerationToJson(const v1::Toleration& t) {
  Json out = Json::object();
  if (!t.key().empty()) out["key"] = t.key();
  if (!t.operator_().empty()) out["operator"] = t.operator_();
  if (!t.value().empty()) out["value"] = t.value();
  if (!t.effect().empty()) out["effect"] = t.effect();
  if (t.has_toleration_seconds()) out["tolerationSeconds"] = t.toleration_seconds();
  return out;
}

absl::StatusOr<v1::PodSet> PodSetFromTemplate(absl::string_view name, int32_t count,
                                              std::optional<int32_t> min_count,
                                              const Json& pod_template, absl::string_view path) {
  static const Json kEmpty = Json::object();
  const Json* spec = Find(pod_template, {"spec"});
  if (spec == nullptr) spec = &kEmpty;
  const std::string spec_path = absl::StrCat(path, ".spec");
  v1::PodSet out;
  out.set_name(std::string(name));
  out.set_count(count);
  if (min_count.has_value()) out.set_min_count(*min_count);
  TOLLGATE_ASSIGN_OR_RETURN(core::PodResources pod, PodResourcesFromJson(*spec, spec_path));
  for (const auto& [resource, quantity] : core::EffectivePodRequests(pod)) {
    (*out.mutable_requests())[resource] = quantity.ToString();
  }
  if (const Json* selector = Find(*spec, {"nodeSelector"});
      selector != nullptr && selector->is_object()) {
    for (auto it = selector->begin(); it != selector->end(); ++it) {
      if (it.value().is_string()) {
        (*out.mutable_node_selector())[it.key()] = it.value().get<std::string>();
      }
    }
  }
  if (const Json* tolerations = Find(*spec, {"tolerations"});
      tolerations != nullptr && tolerations->is_array()) {
    for (const Json& t : *tolerations) *out.add_tolerations() = TolerationFromJson(t);
  }
  return out;
}

}  // namespace tollgate::manifest
