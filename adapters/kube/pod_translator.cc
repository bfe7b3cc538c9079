#include "adapters/kube/pod_translator.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/quantity.h"
#include "core/saturating.h"
#include "core/status_macros.h"

namespace tollgate::adapters::kube {
namespace {

absl::StatusOr<ResourceAmounts> ParseResourceList(const Json* list, absl::string_view path) {
  ResourceAmounts out;
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
    out[it.key()] = core::ResourceScalar(it.key(), *q);
  }
  return out;
}

// Requests with limits filling in the resources that have no request.
absl::StatusOr<ResourceAmounts> ContainerRequests(const Json& container, absl::string_view path) {
  TOLLGATE_ASSIGN_OR_RETURN(ResourceAmounts requests,
                            ParseResourceList(Find(container, {"resources", "requests"}),
                                              absl::StrCat(path, ".resources.requests")));
  TOLLGATE_ASSIGN_OR_RETURN(ResourceAmounts limits,
                            ParseResourceList(Find(container, {"resources", "limits"}),
                                              absl::StrCat(path, ".resources.limits")));
  for (const auto& [name, amount] : limits) requests.emplace(name, amount);
  return requests;
}

void AddTo(ResourceAmounts& total, const ResourceAmounts& add) {
  for (const auto& [name, amount] : add) {
    total[name] = core::SatAdd(total[name], amount);
  }
}

void MaxInto(ResourceAmounts& total, const ResourceAmounts& other) {
  for (const auto& [name, amount] : other) {
    int64_t& slot = total[name];
    slot = std::max(slot, amount);
  }
}

}  // namespace

absl::StatusOr<ResourceAmounts> EffectivePodRequests(const Json& pod_spec, absl::string_view path) {
  ResourceAmounts containers;
  if (const Json* list = Find(pod_spec, {"containers"}); list != nullptr && list->is_array()) {
    for (size_t i = 0; i < list->size(); ++i) {
      TOLLGATE_ASSIGN_OR_RETURN(
          ResourceAmounts r,
          ContainerRequests((*list)[i], absl::StrCat(path, ".containers[", i, "]")));
      AddTo(containers, r);
    }
  }
  ResourceAmounts sidecars;
  ResourceAmounts init_peak;
  if (const Json* list = Find(pod_spec, {"initContainers"}); list != nullptr && list->is_array()) {
    for (size_t i = 0; i < list->size(); ++i) {
      const Json& c = (*list)[i];
      TOLLGATE_ASSIGN_OR_RETURN(
          ResourceAmounts r, ContainerRequests(c, absl::StrCat(path, ".initContainers[", i, "]")));
      if (GetString(c, {"restartPolicy"}) == "Always") {
        // A sidecar keeps running next to the app containers and every later init container.
        AddTo(containers, r);
        AddTo(sidecars, r);
        MaxInto(init_peak, sidecars);
      } else {
        ResourceAmounts with_sidecars = r;
        AddTo(with_sidecars, sidecars);
        MaxInto(init_peak, with_sidecars);
      }
    }
  }
  ResourceAmounts total = containers;
  MaxInto(total, init_peak);
  TOLLGATE_ASSIGN_OR_RETURN(
      ResourceAmounts overhead,
      ParseResourceList(Find(pod_spec, {"overhead"}), absl::StrCat(path, ".overhead")));
  AddTo(total, overhead);
  for (auto it = total.begin(); it != total.end();) {
    it = it->second == 0 ? total.erase(it) : std::next(it);
  }
  return total;
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
  TOLLGATE_ASSIGN_OR_RETURN(ResourceAmounts requests, EffectivePodRequests(*spec, spec_path));
  for (const auto& [resource, amount] : requests) {
    (*out.mutable_requests())[resource] = core::FormatResourceScalar(resource, amount);
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

}  // namespace tollgate::adapters::kube
