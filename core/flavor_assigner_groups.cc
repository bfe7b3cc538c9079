// The flavor assigner's path for workloads with pod-set groups (Kueue's grouped
// FlavorAssigner, #5878). Kept apart from flavor_assigner.cc so that the path of workloads
// without groups compiles exactly as it did (its cost is measured per admission).
#include <algorithm>
#include <iterator>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "core/flavor_assigner.h"
#include "core/saturating.h"
#include "core/topology_inventory.h"
#include "core/workload.h"

namespace tollgate::core {
namespace {

int64_t AmountOf(const ResourceAmounts& amounts, absl::string_view resource) {
  for (const auto& [name, value] : amounts) {
    if (name == resource) return value;
  }
  return 0;
}

// Sorts flavors by resource, keeping each choice beside its flavor.
void SortByResource(std::vector<std::pair<std::string, std::string>>& flavors,
                    absl::InlinedVector<FlavorChoice, 2>& choices) {
  std::vector<size_t> order(flavors.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&flavors](size_t a, size_t b) { return flavors[a].first < flavors[b].first; });
  std::vector<std::pair<std::string, std::string>> sorted_flavors;
  absl::InlinedVector<FlavorChoice, 2> sorted_choices;
  for (size_t i : order) {
    sorted_flavors.push_back(std::move(flavors[i]));
    sorted_choices.push_back(choices[i]);
  }
  flavors = std::move(sorted_flavors);
  choices = std::move(sorted_choices);
}

}  // namespace

PodSetFlavors FlavorAssigner::PodSetWithRequests(size_t pod_set_index,
                                                 const std::vector<int32_t>& counts) const {
  const PodSetSpec& pod_set = wl_.spec.pod_sets[pod_set_index];
  const bool covers_pods = cq_.covers_pods;
  PodSetFlavors ps;
  ps.name = pod_set.name;
  // A pending workload asks only for the pods it still needs (Kueue's TotalRequests).
  ps.count = counts.empty() ? CountAfterReclaim(wl_.status, pod_set) : counts[pod_set_index];
  ps.requests.reserve(pod_set.requests.size() + (covers_pods ? 1 : 0));
  for (const auto& [name, per_pod] : pod_set.requests) {
    ps.requests.emplace_back(name, SatMul(per_pod, ps.count));
  }
  if (covers_pods) {
    auto it = std::find_if(ps.requests.begin(), ps.requests.end(),
                           [](const auto& r) { return r.first == "pods"; });
    if (it != ps.requests.end()) {
      it->second = ps.count;
    } else {
      ps.requests.emplace_back("pods", ps.count);
      std::sort(ps.requests.begin(), ps.requests.end());
    }
  }
  return ps;
}

bool FlavorAssigner::AssignResourceGroups(absl::Span<const size_t> pod_sets,
                                          const ResourceAmounts& requests,
                                          const FrUsage& assigned_usage, PodSetFlavors& out,
                                          ScanStops& scan_stops) {
  // Whether the queue covers each request's resource (its group index, -1: not covered),
  // looked up once here instead of in each loop below.
  absl::InlinedVector<int, 4> groups;
  groups.reserve(requests.size());
  for (const auto& request : requests) groups.push_back(cq_.GroupOf(request.first));
  // Resources the queue does not cover fail the pod set unless nothing is asked of them.
  for (size_t r = 0; r < requests.size(); ++r) {
    if (groups[r] < 0 && requests[r].second != 0) {
      out.reasons = {absl::StrCat("resource ", requests[r].first, " unavailable in ClusterQueue")};
      return false;
    }
  }
  for (size_t req = 0; req < requests.size(); ++req) {
    if (groups[req] < 0) continue;
    if (std::find(groups.begin(), groups.begin() + req, groups[req]) != groups.begin() + req) {
      continue;  // Assigned with its resource group.
    }
    ResourceResult r =
        FindFlavorForPodSets(pod_sets, requests, groups, groups[req], assigned_usage);
    if (r.last_tried_flavor >= 0) scan_stops.emplace_back(groups[req], r.last_tried_flavor);
    if (r.flavors.empty()) {
      out.flavors.clear();
      out.choices.clear();
      out.reasons = std::move(r.reasons);
      // A pod set left without flavors records no progress (Kueue's is per assigned flavor).
      scan_stops.clear();
      return false;
    }
    // The first group's lists are taken whole (most pod sets ask one group): no copy.
    if (out.flavors.empty()) {
      out.flavors = std::move(r.flavors);
      out.choices = std::move(r.choices);
    } else {
      out.flavors.insert(out.flavors.end(), std::make_move_iterator(r.flavors.begin()),
                         std::make_move_iterator(r.flavors.end()));
      out.choices.insert(out.choices.end(), r.choices.begin(), r.choices.end());
    }
    if (out.reasons.empty()) {
      out.reasons = std::move(r.reasons);
    } else {
      out.reasons.insert(out.reasons.end(), std::make_move_iterator(r.reasons.begin()),
                         std::make_move_iterator(r.reasons.end()));
    }
  }
  if (!std::is_sorted(out.flavors.begin(), out.flavors.end(),
                      [](const auto& a, const auto& b) { return a.first < b.first; })) {
    SortByResource(out.flavors, out.choices);
  }
  return true;
}

// Adds a pod set's quota and borrowing level to the assignment's.
static void AddPodSetUsage(const PodSetFlavors& ps, FlavorAssignment& assignment) {
  for (size_t f = 0; f < ps.flavors.size(); ++f) {
    const FlavorChoice& choice = ps.choices[f];
    assignment.borrowing = std::max(assignment.borrowing, choice.borrow);
    const int64_t amount = AmountOf(ps.requests, ps.flavors[f].first);
    if (amount == 0 || choice.fr < 0) continue;
    AddFrUsage(assignment.usage, choice.fr, amount);
  }
}

FlavorAssignment FlavorAssigner::Assign(const std::vector<int32_t>& counts) {
  // Decided once per assignment: workloads without pod-set groups pay nothing for the groups.
  const bool has_groups =
      std::any_of(wl_.spec.pod_sets.begin(), wl_.spec.pod_sets.end(), [](const PodSetSpec& ps) {
        return ps.topology_request.has_value() && ps.topology_request->pod_set_group.has_value();
      });
  return has_groups ? AssignWithGroups(counts) : AssignPodSetByPodSet(counts);
}

FlavorAssignment FlavorAssigner::AssignWithGroups(const std::vector<int32_t>& counts) {
  const std::vector<PodSetSpec>& spec_pod_sets = wl_.spec.pod_sets;
  auto group_name = [&spec_pod_sets](size_t index) -> const std::string* {
    const auto& request = spec_pod_sets[index].topology_request;
    return request.has_value() && request->pod_set_group.has_value() ? &*request->pod_set_group
                                                                     : nullptr;
  };
  // Kueue's orderedgroups: pod sets that share a group name are one group, any other pod set is
  // a group of its own, and groups are assigned in the order of their first pod set.
  std::vector<absl::InlinedVector<size_t, 2>> evaluation_order;
  for (size_t i = 0; i < spec_pod_sets.size(); ++i) {
    const std::string* name = group_name(i);
    auto same_group = std::find_if(evaluation_order.begin(), evaluation_order.end(),
                                   [&](const absl::InlinedVector<size_t, 2>& members) {
                                     const std::string* other = group_name(members[0]);
                                     return name != nullptr && other != nullptr && *name == *other;
                                   });
    if (same_group != evaluation_order.end()) {
      same_group->push_back(i);
    } else {
      evaluation_order.push_back({i});
    }
  }

  FlavorAssignment assignment;
  // Filled as the groups are assigned; the assignment lists them in spec order (the admission's
  // order, which Kueue's matches whenever a group's pod sets are adjacent, as LWS makes them).
  std::vector<PodSetFlavors> evaluated(spec_pod_sets.size());
  std::vector<bool> assigned(spec_pod_sets.size(), false);
  TopologyInventory& inventory = state_.topology();
  for (const absl::InlinedVector<size_t, 2>& members : evaluation_order) {
    // The group asks for the sum of its pod sets' requests, resource by resource.
    ResourceAmounts total;
    for (size_t m : members) {
      evaluated[m] = PodSetWithRequests(m, counts);
      for (const auto& [name, amount] : evaluated[m].requests) {
        auto at = std::lower_bound(total.begin(), total.end(), name,
                                   [](const std::pair<std::string, int64_t>& e,
                                      const std::string& n) { return e.first < n; });
        if (at != total.end() && at->first == name) {
          at->second = SatAdd(at->second, amount);
        } else {
          total.emplace(at, name, amount);
        }
      }
    }
    PodSetFlavors joint;
    ScanStops scan_stops;
    const bool failed = !AssignResourceGroups(members, total, assignment.usage, joint, scan_stops);
    for (size_t m : members) {
      PodSetFlavors& ps = evaluated[m];
      assigned[m] = true;
      // Kueue's resolvePodSetFlavors: every pod set of the group shares the group's status.
      ps.reasons = joint.reasons;
      if (failed) continue;
      for (size_t f = 0; f < joint.flavors.size(); ++f) {
        const auto& [resource, flavor] = joint.flavors[f];
        // A pod set takes the group's flavors of the resources it requests; one requesting
        // nothing (an LWS leader) takes the group's topology flavors, so it can be placed.
        const bool keep =
            ps.requests.empty()
                ? group_name(m) != nullptr && inventory.IsTopologyFlavor(flavor)
                : std::any_of(ps.requests.begin(), ps.requests.end(),
                              [&resource](const auto& r) { return r.first == resource; });
        if (!keep) continue;
        ps.flavors.push_back(joint.flavors[f]);
        ps.choices.push_back(joint.choices[f]);
      }
      // Each pod set records the search's progress for the resource groups it took flavors in.
      for (const auto& [group, flavor] : scan_stops) {
        if (std::any_of(ps.flavors.begin(), ps.flavors.end(),
                        [&](const auto& f) { return cq_.GroupOf(f.first) == group; })) {
          assignment.scan_stops.push_back(FlavorScanStop{static_cast<int32_t>(m), group, flavor});
        }
      }
      AddPodSetUsage(ps, assignment);
    }
    if (failed) break;
  }
  assignment.pod_sets.reserve(spec_pod_sets.size());
  for (size_t i = 0; i < spec_pod_sets.size(); ++i) {
    if (assigned[i]) assignment.pod_sets.push_back(std::move(evaluated[i]));
  }
  AssignTopology(assignment);
  return assignment;
}

}  // namespace tollgate::core
