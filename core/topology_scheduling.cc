#include "core/topology_scheduling.h"

#include <algorithm>
#include <set>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/saturating.h"

namespace tollgate::core {
namespace {

const PodSetSpec* FindPodSet(const WorkloadSpec& spec, absl::string_view name) {
  for (const PodSetSpec& ps : spec.pod_sets) {
    if (ps.name == name) return &ps;
  }
  return nullptr;
}

// What a workload's pods placed on one hostname flavor take of a node, for its pod sets on
// other hostname flavors over the same nodes (Kueue's aggregatedDomainUsages under
// TASHandleOverlappingFlavors, which FindTopologyAssignmentsForWorkload shares between the
// flavors it places in turn): without it, two pod sets on sibling flavors would both count the
// node's free room. Counted on the sibling's tree as pods Tollgate does not place while that
// flavor is placed, so it holds with `simulate_empty` too, as Kueue's assumed usage does.
struct SiblingNodeUsage {
  std::string node;
  ResourceAmounts footprint;
};

void AddSiblingUsage(const TopologyAssignment& assignment, const ResourceAmounts& per_pod,
                     const TopologyInventory& inventory, std::vector<SiblingNodeUsage>& out) {
  for (const TopologyDomainAssignment& domain : assignment.domains) {
    if (domain.values.empty() || domain.count <= 0) continue;
    // A hostname flavor's assignment names the hostname alone; the trees key nodes by name.
    const std::string& hostname = domain.values.back();
    const NodeSpec* node = inventory.FindNode(hostname);
    if (node == nullptr || node->labels.count(kHostnameLabel) == 0 ||
        node->labels.at(kHostnameLabel) != hostname) {
      node = nullptr;
      for (const auto& [name, spec] : inventory.nodes()) {
        auto it = spec.labels.find(kHostnameLabel);
        if (it != spec.labels.end() && it->second == hostname) {
          node = &spec;
          break;
        }
      }
    }
    if (node == nullptr) continue;
    SiblingNodeUsage& usage = out.emplace_back();
    usage.node = node->name;
    for (const auto& [resource, amount] : per_pod) {
      if (resource == "pods") continue;
      usage.footprint.emplace_back(resource, SatMul(amount, domain.count));
    }
    usage.footprint.emplace_back("pods", domain.count);
  }
}

void ApplySiblingUsage(TopologyFlavor& tree, const std::vector<SiblingNodeUsage>& siblings,
                       int sign) {
  for (const SiblingNodeUsage& s : siblings) {
    ResourceAmounts footprint = s.footprint;
    for (auto& [resource, amount] : footprint) amount *= sign;
    tree.AddNonTasUsage(s.node, footprint);
  }
}

// The same for the `index`th pod set of an assignment, which is the spec's `index`th (the
// assigner builds them in spec order) unless the names say otherwise.
const PodSetSpec* FindPodSet(const WorkloadSpec& spec, size_t index, absl::string_view name) {
  if (index < spec.pod_sets.size() && spec.pod_sets[index].name == name) {
    return &spec.pod_sets[index];
  }
  return FindPodSet(spec, name);
}

// The flavor names of a pod set's assignment (a pod set has a handful of resources).
using FlavorNames = absl::InlinedVector<absl::string_view, 4>;

// Kueue's onlyTASFlavor: the one topology flavor among the pod set's flavors.
absl::string_view OnlyTopologyFlavor(const FlavorNames& flavors, const TopologyInventory& inventory,
                                     std::string* error) {
  // Usually one flavor, named once per resource: the set is built only for the error text.
  absl::string_view only;
  bool several = false;
  for (absl::string_view f : flavors) {
    if (f == only || !inventory.IsTopologyFlavor(f)) continue;
    if (only.empty()) {
      only = f;
    } else {
      several = true;
    }
  }
  if (only.empty()) {
    *error = "no TAS flavor assigned";
    return "";
  }
  if (several) {
    std::set<std::string> found;
    for (absl::string_view f : flavors) {
      if (inventory.IsTopologyFlavor(f)) found.insert(std::string(f));
    }
    *error = absl::StrCat("more than one TAS flavor assigned: ", absl::StrJoin(found, ", "));
    return "";
  }
  return only;
}

// The same for a pod set's assignment whose resources all take one flavor (the usual case),
// without listing them; null when they do not.
const std::string* OnlyFlavorOf(const std::vector<std::pair<std::string, std::string>>& flavors) {
  if (flavors.empty()) return nullptr;
  const std::string& first = flavors.front().second;
  for (size_t i = 1; i < flavors.size(); ++i) {
    if (flavors[i].second != first) return nullptr;
  }
  return &first;
}

// Kueue's resolvePodSetFlavors: the flavor names of `own`, one entry of an assignment's pod sets
// (the planner's or the admission's); a pod set without requests in a group (a leader) takes its
// group's topology flavors.
template <typename PodSets>
FlavorNames ResolvedFlavorNames(const WorkloadSpec& spec, const PodSetSpec& pod_set,
                                const PodSets& pod_sets, const typename PodSets::value_type& own,
                                const TopologyInventory& inventory) {
  FlavorNames flavors;
  for (const auto& [resource, flavor] : own.flavors) flavors.push_back(flavor);
  if (!flavors.empty() || !pod_set.topology_request.has_value() ||
      !pod_set.topology_request->pod_set_group.has_value()) {
    return flavors;
  }
  for (const auto& other : pod_sets) {
    const PodSetSpec* other_spec = FindPodSet(spec, other.name);
    if (&other == &own || other_spec == nullptr || !other_spec->topology_request.has_value() ||
        other_spec->topology_request->pod_set_group != pod_set.topology_request->pod_set_group) {
      continue;
    }
    for (const auto& [resource, flavor] : other.flavors) {
      if (inventory.IsTopologyFlavor(flavor)) flavors.push_back(flavor);
    }
  }
  return flavors;
}

// Appends the usage of one pod set's assignment to `out`.
void AppendUsageOfAssignment(const PodSetSpec& pod_set, const std::string& flavor,
                             const TopologyAssignment& assignment,
                             std::vector<TopologyUsage>& out) {
  out.reserve(out.size() + assignment.domains.size());
  for (const TopologyDomainAssignment& d : assignment.domains) {
    out.push_back(TopologyUsage{flavor, pod_set.name, d.values, pod_set.requests, d.count});
  }
}

}  // namespace

bool IsTopologyOnly(const ClusterQueueSpec& cq, const TopologyInventory& inventory) {
  bool any = false;
  for (const ResourceGroupSpec& group : cq.resource_groups) {
    for (const FlavorQuotasSpec& f : group.flavors) {
      if (!inventory.IsTopologyFlavor(f.flavor)) return false;
      any = true;
    }
  }
  return any;
}

bool ExplicitlyRequestsTopology(const PodSetSpec& pod_set) {
  if (!pod_set.topology_request.has_value()) return false;
  const PodSetTopologyRequest& r = *pod_set.topology_request;
  return r.required.has_value() || r.preferred.has_value() || r.unconstrained || !r.slices.empty();
}

bool TopologyRequested(const PodSetSpec& pod_set, bool topology_only) {
  return ExplicitlyRequestsTopology(pod_set) || topology_only;
}

TopologyPlacementRequest PlacementRequestFor(const PodSetSpec& pod_set, const std::string& name,
                                             int32_t count, bool topology_only) {
  TopologyPlacementRequest r;
  r.pod_set = name;
  r.count = count;
  r.per_pod = pod_set.requests;
  r.request = pod_set.topology_request.has_value() ? &*pod_set.topology_request : nullptr;
  r.implied = !ExplicitlyRequestsTopology(pod_set) && topology_only;
  r.node_selector = &pod_set.node_selector;
  r.tolerations = pod_set.tolerations;
  r.required_node_affinity = pod_set.required_node_affinity();
  r.preferred_node_affinity = pod_set.preferred_node_affinity();
  return r;
}

std::string CheckTopologyFlavor(const PodSetSpec& pod_set, const ResourceFlavorSpec& flavor,
                                const std::vector<std::string>& covered, bool topology_only,
                                TopologyInventory& inventory) {
  // Only a failure's text quotes the name: most checks pass.
  auto quoted = [&flavor] { return absl::StrCat("\"", flavor.name, "\""); };
  if (TopologyRequested(pod_set, topology_only)) {
    // In a topology-only queue every flavor is a topology flavor.
    if (!ExplicitlyRequestsTopology(pod_set)) return "";
    if (flavor.topology_name.empty()) {
      // A quota-only flavor may still serve resources the topology flavor does not provide.
      bool overlap = false;
      for (const auto& [resource, amount] : pod_set.requests) {
        if (std::find(covered.begin(), covered.end(), resource) != covered.end()) overlap = true;
      }
      if (!overlap) return "";
      return absl::StrCat("Flavor ", quoted(), " does not support TopologyAwareScheduling");
    }
    TopologyFlavor* tf = inventory.Flavor(flavor.name);
    if (tf == nullptr)
      return absl::StrCat("Flavor ", quoted(), " information missing in TAS cache");
    if (!tf->HasLevels(pod_set.topology_request.has_value() ? &*pod_set.topology_request
                                                            : nullptr)) {
      return absl::StrCat("Flavor ", quoted(), " does not contain the requested level");
    }
    return "";
  }
  if (!flavor.topology_name.empty()) {
    return absl::StrCat("Flavor ", quoted(), " supports only TopologyAwareScheduling");
  }
  return "";
}

void TopologyRequestsDeleter::operator()(const WorkloadTopologyRequests* requests) const {
  delete requests;
}

WorkloadTopologyRequests::FlavorRequests& WorkloadTopologyRequests::Of(absl::string_view flavor) {
  // Usually the first flavor, or the last one again: no search, no insertion in the middle.
  if (by_flavor.empty() || absl::string_view(by_flavor.back().flavor) < flavor) {
    FlavorRequests& added = by_flavor.emplace_back();
    added.flavor = std::string(flavor);
    return added;
  }
  if (by_flavor.back().flavor == flavor) return by_flavor.back();
  auto it = std::lower_bound(by_flavor.begin(), by_flavor.end(), flavor,
                             [](const FlavorRequests& f, absl::string_view name) {
                               return absl::string_view(f.flavor) < name;
                             });
  if (it != by_flavor.end() && it->flavor == flavor) return *it;
  // Appended and rotated into place: no temporary to move in.
  const auto pos = it - by_flavor.begin();
  by_flavor.emplace_back().flavor = std::string(flavor);
  std::rotate(by_flavor.begin() + pos, by_flavor.end() - 1, by_flavor.end());
  return by_flavor[static_cast<size_t>(pos)];
}

void InheritGroupTopologyFlavors(const WorkloadSpec& spec, FlavorAssignment& assignment,
                                 const TopologyInventory& inventory) {
  for (size_t i = 0; i < assignment.pod_sets.size(); ++i) {
    PodSetFlavors& own = assignment.pod_sets[i];
    if (!own.flavors.empty()) continue;
    const PodSetSpec* pod_set = FindPodSet(spec, i, own.name);
    if (pod_set == nullptr || !pod_set->topology_request.has_value() ||
        !pod_set->topology_request->pod_set_group.has_value()) {
      continue;
    }
    const std::string& group = *pod_set->topology_request->pod_set_group;
    for (size_t j = 0; j < assignment.pod_sets.size(); ++j) {
      if (j == i) continue;
      const PodSetFlavors& other = assignment.pod_sets[j];
      const PodSetSpec* other_spec = FindPodSet(spec, j, other.name);
      if (other_spec == nullptr || !other_spec->topology_request.has_value() ||
          other_spec->topology_request->pod_set_group != group) {
        continue;
      }
      for (size_t k = 0; k < other.flavors.size(); ++k) {
        const auto& [resource, flavor] = other.flavors[k];
        if (!inventory.IsTopologyFlavor(flavor)) continue;
        // Kept sorted by resource, `choices` parallel, one entry per resource.
        auto at = std::lower_bound(own.flavors.begin(), own.flavors.end(), resource,
                                   [](const std::pair<std::string, std::string>& e,
                                      const std::string& r) { return e.first < r; });
        if (at != own.flavors.end() && at->first == resource) continue;
        const auto pos = at - own.flavors.begin();
        own.flavors.insert(at, {resource, flavor});
        own.choices.insert(own.choices.begin() + pos,
                           k < other.choices.size() ? other.choices[k] : FlavorChoice{});
      }
    }
  }
}

WorkloadTopologyRequests TopologyRequestsFor(const Workload& wl, const FlavorAssignment& assignment,
                                             bool topology_only, const TopologyInventory& inventory,
                                             const std::set<std::string>& delayed_flavors) {
  WorkloadTopologyRequests out;
  for (size_t i = 0; i < assignment.pod_sets.size(); ++i) {
    const PodSetFlavors& psa = assignment.pod_sets[i];
    const PodSetSpec* pod_set = FindPodSet(wl.spec, i, psa.name);
    if (pod_set == nullptr || !TopologyRequested(*pod_set, topology_only)) continue;
    if (psa.Mode() == FlavorMode::kNoFit || psa.count == 0) continue;
    absl::string_view flavor;
    if (const std::string* only = OnlyFlavorOf(psa.flavors);
        only != nullptr && inventory.IsTopologyFlavor(*only)) {
      flavor = *only;
    } else {
      const FlavorNames flavors =
          ResolvedFlavorNames(wl.spec, *pod_set, assignment.pod_sets, psa, inventory);
      std::string error;
      flavor = OnlyTopologyFlavor(flavors, inventory, &error);
      if (!error.empty()) {
        out.errors.emplace_back(i, std::move(error));
        continue;
      }
    }
    // Placed once the checks are Ready (ClusterState::PlaceDelayedTopology): quota alone decides
    // now.
    if (!delayed_flavors.empty() && delayed_flavors.count(std::string(flavor)) > 0) continue;
    WorkloadTopologyRequests::FlavorRequests& of = out.Of(flavor);
    // Named by the spec (the same name), which outlives the assignment's moves.
    of.requests.push_back(PlacementRequestFor(*pod_set, pod_set->name, psa.count, topology_only));
    of.pod_set_index.push_back(i);
  }
  return out;
}

WorkloadTopologyRequests DelayedTopologyRequestsOf(const Workload& wl, bool topology_only,
                                                   const TopologyInventory& inventory) {
  WorkloadTopologyRequests out;
  if (!wl.status.admission.has_value()) return out;
  const std::vector<PodSetAssignment>& assigned = wl.status.admission->pod_sets;
  for (size_t i = 0; i < assigned.size(); ++i) {
    const PodSetAssignment& psa = assigned[i];
    const PodSetSpec* pod_set = FindPodSet(wl.spec, psa.name);
    if (pod_set == nullptr || psa.topology_assignment.has_value() || psa.count == 0 ||
        !TopologyRequested(*pod_set, topology_only)) {
      continue;
    }
    FlavorNames flavors;
    for (const auto& [resource, flavor] : psa.flavors) flavors.push_back(flavor);
    std::string error;
    const absl::string_view flavor = OnlyTopologyFlavor(flavors, inventory, &error);
    if (flavor.empty()) continue;  // not placed by topology (a quota-only flavor)
    TopologyPlacementRequest r = PlacementRequestFor(*pod_set, psa.name, psa.count, topology_only);
    // The updates join the pod set's own selector and tolerations in filters owned here.
    WorkloadTopologyRequests::Filters* merged = nullptr;
    for (const AdmissionCheckState& check : wl.status.admission_checks()) {
      if (check.state != CheckState::kReady) continue;
      for (const PodSetUpdate& update : check.pod_set_updates) {
        if (update.name != psa.name) continue;
        if (merged == nullptr) {
          merged = out.merged_filters
                       .emplace_back(std::make_unique<WorkloadTopologyRequests::Filters>(
                           WorkloadTopologyRequests::Filters{pod_set->node_selector,
                                                             pod_set->tolerations}))
                       .get();
        }
        for (const auto& [key, value] : update.node_selector) merged->node_selector[key] = value;
        merged->tolerations.insert(merged->tolerations.end(), update.tolerations.begin(),
                                   update.tolerations.end());
      }
    }
    if (merged != nullptr) {
      r.node_selector = &merged->node_selector;
      r.tolerations = merged->tolerations;
    }
    WorkloadTopologyRequests::FlavorRequests& of = out.Of(flavor);
    of.requests.push_back(std::move(r));
    of.pod_set_index.push_back(i);
  }
  return out;
}

TopologyOutcome PlaceTopology(const WorkloadTopologyRequests& requests,
                              TopologyInventory& inventory, bool simulate_empty, bool names) {
  TopologyOutcome out;
  // Only a workload spanning several flavors has placements on a sibling flavor.
  const bool several_flavors = requests.by_flavor.size() > 1;
  std::vector<SiblingNodeUsage> siblings;
  for (const WorkloadTopologyRequests::FlavorRequests& of : requests.by_flavor) {
    const std::string& flavor = of.flavor;
    const auto& reqs = of.requests;
    const auto& index = of.pod_set_index;
    TopologyFlavor* tf = inventory.Flavor(flavor);
    if (tf == nullptr) {
      out.ok = false;
      out.failed_pod_set = index.front();
      out.reason = absl::StrCat("Flavor \"", flavor, "\" information missing in TAS cache");
      return out;
    }
    const bool shares_nodes = several_flavors && tf->lowest_is_hostname();
    if (shares_nodes) ApplySiblingUsage(*tf, siblings, +1);
    TopologyPlacementResult result = tf->FindAssignments(reqs, simulate_empty, names);
    if (shares_nodes) ApplySiblingUsage(*tf, siblings, -1);
    if (!result.ok()) {
      out.ok = false;
      out.reason = std::move(result.failure);
      out.failed_pod_set = index.front();
      for (size_t k = 0; k < reqs.size(); ++k) {
        if (reqs[k].pod_set == result.failed_pod_set) out.failed_pod_set = index[k];
      }
      return out;
    }
    for (size_t k = 0; k < reqs.size(); ++k) {
      if (result.leaves[k] == nullptr) continue;
      if (shares_nodes) {
        const ResourceAmounts per_pod(reqs[k].per_pod.begin(), reqs[k].per_pod.end());
        if (result.assignments[k].has_value()) {
          AddSiblingUsage(*result.assignments[k], per_pod, inventory, siblings);
        } else {
          AddSiblingUsage(tf->AssignmentOf(*result.leaves[k]), per_pod, inventory, siblings);
        }
      }
      TopologyOutcome::Placed& placed = out.placed.emplace_back();
      placed.pod_set = index[k];
      placed.assignment = std::move(result.assignments[k]);
      placed.leaves = PlacedTopology{tf, inventory.generation(), std::move(result.leaves[k])};
    }
  }
  return out;
}

std::vector<TopologyUsage> TopologyUsageOf(const Workload& wl, const TopologyInventory& inventory) {
  std::vector<TopologyUsage> out;
  if (!wl.status.admission.has_value()) return out;
  for (const PodSetAssignment& psa : wl.status.admission->pod_sets) {
    if (!psa.topology_assignment.has_value()) continue;
    const PodSetSpec* pod_set = FindPodSet(wl.spec, psa.name);
    if (pod_set == nullptr) continue;
    // A leader without requests was placed on its group's topology flavor.
    const FlavorNames flavors =
        ResolvedFlavorNames(wl.spec, *pod_set, wl.status.admission->pod_sets, psa, inventory);
    std::string error;
    const std::string flavor(OnlyTopologyFlavor(flavors, inventory, &error));
    if (!error.empty()) continue;
    AppendUsageOfAssignment(*pod_set, flavor, *psa.topology_assignment, out);
  }
  return out;
}

WorkloadTopologyUsage AdmittedTopologyUsage(const Workload& wl,
                                            absl::Span<const PlacedTopology> carried,
                                            const TopologyInventory& inventory) {
  WorkloadTopologyUsage out;
  size_t placed = 0;
  if (wl.status.admission.has_value()) {
    for (const PodSetAssignment& psa : wl.status.admission->pod_sets) {
      if (psa.topology_assignment.has_value()) ++placed;
    }
  }
  const bool all_current =
      placed == carried.size() &&
      std::all_of(carried.begin(), carried.end(),
                  [&](const PlacedTopology& p) { return inventory.CurrentTree(p) != nullptr; });
  if (all_current) {
    out.placed.assign(carried.begin(), carried.end());
  } else {
    out.named = TopologyUsageOf(wl, inventory);
  }
  return out;
}

WorkloadTopologyUsage PlannedTopologyUsage(const WorkloadSpec& spec,
                                           const FlavorAssignment& assignment,
                                           const TopologyInventory& inventory) {
  WorkloadTopologyUsage out;
  for (const PodSetFlavors& psa : assignment.pod_sets) {
    if (!psa.Placed()) continue;
    if (inventory.CurrentTree(psa.topology_leaves) != nullptr) {
      out.placed.push_back(psa.topology_leaves);
      continue;
    }
    // Named while its tree was current (a placement is named at the latest when admitted).
    if (!psa.topology.has_value()) continue;
    const PodSetSpec* pod_set = FindPodSet(spec, psa.name);
    if (pod_set == nullptr) continue;
    FlavorNames flavors;
    for (const auto& [resource, flavor_name] : psa.flavors) flavors.push_back(flavor_name);
    std::string error;
    const std::string flavor(OnlyTopologyFlavor(flavors, inventory, &error));
    if (!error.empty()) continue;
    AppendUsageOfAssignment(*pod_set, flavor, *psa.topology, out.named);
  }
  return out;
}

// Defined here, with the rest of the scheduler's topology glue, rather than with the quota
// assignment.
FlavorAssignment FlavorAssigner::AssignTopologyAgain(const ClusterState& state,
                                                     const ClusterQueueRuntime& cq,
                                                     const Workload& wl, FlavorAssignment fitting) {
  // AssignTopology turns modes and files reasons but never simulates preemption.
  class NoOracle : public PreemptionOracle {
   public:
    std::pair<PreemptionPossibility, int> SimulatePreemption(FrId, int64_t) override {
      return {PreemptionPossibility::kNoCandidates, 0};
    }
  } no_oracle;
  // A fitting assignment differs from its quota part only by its placements: a placement that
  // fails or an error in the requests turns its mode from Fit. Its requests (kept from the
  // placement it replaces) stand: the flavors and counts they were built from are the same.
  for (PodSetFlavors& ps : fitting.pod_sets) {
    ps.topology.reset();
    ps.topology_leaves = PlacedTopology{};
  }
  FlavorAssigner(state, cq, wl, no_oracle).AssignTopology(fitting);
  return fitting;
}

bool TopologyFits(const WorkloadSpec& spec, const FlavorAssignment& assignment,
                  TopologyInventory& inventory) {
  for (const PodSetFlavors& psa : assignment.pod_sets) {
    if (!psa.Placed()) continue;
    // The tree that computed the placement answers by its leaves while it is current.
    if (const TopologyFlavor* tree = inventory.CurrentTree(psa.topology_leaves)) {
      if (!tree->Fits(*psa.topology_leaves.usage)) return false;
      continue;
    }
    // Without names, nothing tells where it was placed once its tree is gone.
    if (!psa.topology.has_value()) return false;
    const PodSetSpec* pod_set = FindPodSet(spec, psa.name);
    if (pod_set == nullptr) continue;
    FlavorNames flavors;
    for (const auto& [resource, flavor_name] : psa.flavors) flavors.push_back(flavor_name);
    std::string error;
    const std::string flavor(OnlyTopologyFlavor(flavors, inventory, &error));
    if (!error.empty()) continue;
    TopologyFlavor* tf = inventory.Flavor(flavor);
    if (tf == nullptr || !tf->Fits(*psa.topology, pod_set->requests)) return false;
  }
  return true;
}

}  // namespace tollgate::core
