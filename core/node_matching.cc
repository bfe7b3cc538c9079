#include "core/node_matching.h"

#include <algorithm>

namespace tollgate::core {

bool Tolerates(const Toleration& toleration, const Taint& taint) {
  if (!toleration.effect.empty() && toleration.effect != taint.effect) return false;
  if (!toleration.key.empty() && toleration.key != taint.key) return false;
  if (toleration.op == "Exists") return true;
  return toleration.value == taint.value;
}

const Taint* FindUntoleratedTaint(const ResourceFlavorSpec& flavor,
                                  const std::vector<Toleration>& pod_tolerations) {
  for (const Taint& taint : flavor.node_taints) {
    if (taint.effect != "NoSchedule" && taint.effect != "NoExecute") continue;
    auto tolerated = [&taint](const Toleration& t) { return Tolerates(t, taint); };
    if (std::any_of(pod_tolerations.begin(), pod_tolerations.end(), tolerated)) continue;
    if (std::any_of(flavor.tolerations.begin(), flavor.tolerations.end(), tolerated)) continue;
    return &taint;
  }
  return nullptr;
}

bool NodeSelectorMatchesFlavor(const Labels& node_selector, const ResourceFlavorSpec& flavor) {
  for (const auto& [key, value] : node_selector) {
    auto it = flavor.node_labels.find(key);
    if (it == flavor.node_labels.end()) continue;
    if (it->second != value) return false;
  }
  return true;
}

bool SelectorMatches(const LabelSelector& selector, const Labels& labels) {
  for (const auto& [key, value] : selector.match_labels) {
    auto it = labels.find(key);
    if (it == labels.end() || it->second != value) return false;
  }
  for (const LabelSelectorRequirement& req : selector.match_expressions) {
    auto it = labels.find(req.key);
    const bool has = it != labels.end();
    const bool in_values =
        has && std::find(req.values.begin(), req.values.end(), it->second) != req.values.end();
    if (req.op == "In" && !in_values) return false;
    if (req.op == "NotIn" && in_values) return false;
    if (req.op == "Exists" && !has) return false;
    if (req.op == "DoesNotExist" && has) return false;
  }
  return true;
}

}  // namespace tollgate::core
