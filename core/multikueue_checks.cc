#include "core/multikueue_checks.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tollgate::core {
namespace {

// Kueue prints the cluster lists with Go's %v: "[a b]".
std::string GoList(const std::vector<std::string>& names) {
  return absl::StrCat("[", absl::StrJoin(names, " "), "]");
}

}  // namespace

ConfigLookup FindMultiKueueConfig(const AdmissionCheckSpec& check,
                                  const std::map<std::string, MultiKueueConfigSpec>& configs) {
  ConfigLookup out;
  if (!check.parameters.has_value()) {
    out.error = "missing parameters reference";
    return out;
  }
  const AdmissionCheckParameters& ref = *check.parameters;
  if (ref.name.empty()) {
    out.error = "empty name: bad parameters reference";
  } else if (ref.api_group != kMultiKueueConfigGroup) {
    out.error = absl::StrCat("wrong group \"", ref.api_group, "\", expecting \"",
                             kMultiKueueConfigGroup, "\": bad parameters reference");
  } else if (ref.kind != kMultiKueueConfigKind) {
    out.error = absl::StrCat("wrong kind \"", ref.kind, "\", expecting \"", kMultiKueueConfigKind,
                             "\": bad parameters reference");
  } else if (auto it = configs.find(ref.name); it == configs.end()) {
    out.error = absl::StrCat("multikueueconfigs.kueue.x-k8s.io \"", ref.name, "\" not found");
  } else {
    out.config = &it->second;
  }
  return out;
}

CheckActivity MultiKueueCheckActivity(
    const AdmissionCheckSpec& check, const std::map<std::string, MultiKueueConfigSpec>& configs,
    const std::map<std::string, MultiKueueClusterRuntime>& clusters) {
  const ConfigLookup lookup = FindMultiKueueConfig(check, configs);
  if (lookup.config == nullptr) {
    return {false, "BadConfig",
            absl::StrCat("Cannot load the AdmissionChecks parameters: ", lookup.error)};
  }
  std::vector<std::string> missing;
  std::vector<std::string> inactive;
  for (const std::string& name : lookup.config->clusters) {
    auto it = clusters.find(name);
    if (it == clusters.end()) {
      missing.push_back(name);
    } else if (!it->second.IsActive()) {
      inactive.push_back(name);
    }
  }
  const size_t unusable = missing.size() + inactive.size();
  if (unusable == 0) return {true, "Active", "The admission check is active"};
  std::vector<std::string> parts;
  if (!missing.empty()) parts.push_back(absl::StrCat("Missing clusters: ", GoList(missing)));
  if (!inactive.empty()) parts.push_back(absl::StrCat("Inactive clusters: ", GoList(inactive)));
  // A check with some usable clusters stays active and dispatches to those.
  const bool some_usable = unusable < lookup.config->clusters.size();
  return {some_usable, some_usable ? "SomeActiveClusters" : "NoUsableClusters",
          absl::StrJoin(parts, ", ")};
}

}  // namespace tollgate::core
