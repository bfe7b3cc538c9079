#include "services/manifest/workload_labels.h"

#include "absl/strings/str_cat.h"

namespace tollgate::manifest {

std::map<std::string, std::string> LabelsToCopyAt(const Json& obj,
                                                  std::initializer_list<absl::string_view> path,
                                                  const std::vector<std::string>& keys) {
  std::map<std::string, std::string> out;
  if (keys.empty()) return out;
  const Json* labels = Find(obj, path);
  if (labels == nullptr || !labels->is_object()) return out;
  for (const std::string& key : keys) {
    auto it = labels->find(key);
    if (it != labels->end() && it->is_string()) out[key] = it->get<std::string>();
  }
  return out;
}

std::map<std::string, std::string> LabelsToCopy(const Json& obj,
                                                const std::vector<std::string>& keys) {
  return LabelsToCopyAt(obj, {"metadata", "labels"}, keys);
}

absl::StatusOr<std::map<std::string, std::string>> GroupLabelsToCopy(
    const std::vector<Json>& pods, const std::vector<std::string>& keys) {
  std::map<std::string, std::string> out;
  std::map<std::string, std::string> from_pod;
  for (const Json& pod : pods) {
    const std::string name = GetString(pod, {"metadata", "name"});
    for (const auto& [key, value] : LabelsToCopy(pod, keys)) {
      auto [it, inserted] = out.emplace(key, value);
      if (!inserted && it->second != value) {
        return absl::InvalidArgumentError(
            absl::StrCat("constructing workload: pods have different label values: ", key, " is \"",
                         it->second, "\" on pod ", from_pod[key], " and \"", value, "\" on pod ",
                         name, " (integrations.labelKeysToCopy)"));
      }
      from_pod.emplace(key, name);
    }
  }
  return out;
}

void AddCopiedLabels(const std::map<std::string, std::string>& labels, v1::Workload& wl) {
  auto& target = *wl.mutable_metadata()->mutable_labels();
  for (const auto& [key, value] : labels) target.insert({key, value});
}

}  // namespace tollgate::manifest
