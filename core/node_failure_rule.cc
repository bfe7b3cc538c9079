#include "core/node_failure_rule.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "core/admission_checks.h"
#include "core/node_matching.h"
#include "core/topology_scheduling.h"

namespace tollgate::core {
namespace {

bool IsSchedulingTaint(const Taint& taint) {
  return taint.effect == "NoSchedule" || taint.effect == "NoExecute";
}

bool PlacedOn(const PodSetAssignment& psa, const std::string& host) {
  if (!psa.topology_assignment.has_value()) return false;
  return std::any_of(psa.topology_assignment->domains.begin(),
                     psa.topology_assignment->domains.end(),
                     [&](const TopologyDomainAssignment& d) {
                       return !d.values.empty() && d.values.back() == host;
                     });
}

// Some NoSchedule/NoExecute taint of the node is not tolerated for good by the workload's pod
// sets placed on it. False when the tolerations cannot be merged (health unknown).
bool HasFailingTaint(const NodeSpec& node, const std::string& host, const Workload& wl,
                     const std::map<std::string, ResourceFlavorSpec>& flavors) {
  std::vector<Taint> taints = node.taints;
  // KEP-2724: a cordoned node counts as tainted NoSchedule, as Kubernetes taints it.
  const Taint cordoned{kUnschedulableTaintKey, "", "NoSchedule"};
  if (node.unschedulable && std::find(taints.begin(), taints.end(), cordoned) == taints.end()) {
    taints.push_back(cordoned);
  }
  if (std::none_of(taints.begin(), taints.end(), IsSchedulingTaint)) return false;
  if (!wl.status.admission.has_value()) return false;
  absl::StatusOr<std::vector<PodSetInfo>> infos = MergePodSetUpdates(wl.spec, wl.status, flavors);
  if (!infos.ok()) return false;
  std::vector<const std::vector<Toleration>*> pod_sets;
  for (const PodSetAssignment& psa : wl.status.admission->pod_sets) {
    if (!PlacedOn(psa, host)) continue;
    for (const PodSetInfo& info : *infos) {
      if (info.name == psa.name) pod_sets.push_back(&info.tolerations);
    }
  }
  return std::any_of(taints.begin(), taints.end(), [&](const Taint& taint) {
    return IsSchedulingTaint(taint) &&
           ClassifyTaint(taint, pod_sets) != TaintToleration::kPermanently;
  });
}

}  // namespace

TaintToleration ClassifyTaint(const Taint& taint,
                              const std::vector<const std::vector<Toleration>*>& pod_sets) {
  TaintToleration out = TaintToleration::kPermanently;
  for (const std::vector<Toleration>* tolerations : pod_sets) {
    auto tolerates = [&](const Toleration& t) { return Tolerates(t, taint); };
    if (std::none_of(tolerations->begin(), tolerations->end(), tolerates)) {
      return TaintToleration::kNot;
    }
    auto for_good = [&](const Toleration& t) {
      return !t.toleration_seconds.has_value() && Tolerates(t, taint);
    };
    if (std::none_of(tolerations->begin(), tolerations->end(), for_good)) {
      out = TaintToleration::kTemporarily;
    }
  }
  return out;
}

std::optional<absl::Time> NodeFailureDelayEnds(const NodeSpec& node) {
  if (node.ready || !node.not_ready_since.has_value()) return std::nullopt;
  return *node.not_ready_since + kNodeFailureDelay;
}

bool PlacementFailedOn(const NodeSpec* node, const std::string& host, const Workload& wl,
                       const std::map<std::string, ResourceFlavorSpec>& flavors,
                       std::optional<absl::Time> fixed_delay_at) {
  if (node == nullptr) return true;
  if (fixed_delay_at.has_value()) {
    const std::optional<absl::Time> ends = NodeFailureDelayEnds(*node);
    if (ends.has_value() && *ends <= *fixed_delay_at) return true;
  }
  const bool failing = !node->ready || HasFailingTaint(*node, host, wl, flavors);
  return failing && !std::binary_search(node->running_workloads.begin(),
                                        node->running_workloads.end(), wl.Key());
}

bool PlacedOnUnhealthyNode(const Workload& wl) {
  const std::vector<std::string>& unhealthy = wl.status.history().unhealthy_nodes;
  if (unhealthy.empty() || !wl.status.admission.has_value()) return false;
  return std::any_of(wl.status.admission->pod_sets.begin(), wl.status.admission->pod_sets.end(),
                     [&](const PodSetAssignment& psa) {
                       return std::any_of(
                           unhealthy.begin(), unhealthy.end(),
                           [&](const std::string& host) { return PlacedOn(psa, host); });
                     });
}

NodeReplacement ReplaceUnhealthyNodes(const Workload& wl, bool topology_only,
                                      TopologyInventory& inventory) {
  NodeReplacement out;
  Admission replaced = *wl.status.admission;
  for (PodSetAssignment& psa : replaced.pod_sets) {
    if (!psa.topology_assignment.has_value()) continue;
    const PodSetSpec* pod_set = nullptr;
    for (const PodSetSpec& ps : wl.spec.pod_sets) {
      if (ps.name == psa.name) pod_set = &ps;
    }
    TopologyFlavor* flavor = nullptr;
    for (const auto& [resource, name] : psa.flavors) {
      if (inventory.IsTopologyFlavor(name)) flavor = inventory.Flavor(name);
    }
    if (pod_set == nullptr || flavor == nullptr) {
      out.failure = "no topology flavor";
      return out;
    }
    for (const std::string& node : wl.status.history().unhealthy_nodes) {
      if (!PlacedOn(psa, node)) continue;
      const TopologyPlacementRequest request =
          PlacementRequestFor(*pod_set, psa.name, psa.count, topology_only);
      TopologyFlavor::Replacement found =
          flavor->FindReplacement(request, *psa.topology_assignment, node);
      if (!found.assignment.has_value()) {
        out.failure =
            absl::StrCat("couldn't assign flavors to pod set ", psa.name, ": ", found.failure);
        return out;
      }
      psa.topology_assignment = std::move(*found.assignment);
    }
  }
  out.admission = std::move(replaced);
  return out;
}

absl::Duration SecondPassRetryDelay(int failures) {
  // Kueue asks its backoff for the wait of iteration failures + 1, whose first step is 1 s.
  constexpr absl::Duration kMax = absl::Seconds(30);
  absl::Duration delay = absl::Seconds(1);
  for (int i = 0; i < failures && delay < kMax; ++i) delay *= 2;
  return std::min(delay, kMax);
}

}  // namespace tollgate::core
