// The flavor assigner's path for workloads with pod-set groups (Kueue's grouped
// FlavorAssigner, #5878): the group's pod sets share one search for the sum of their requests.
// The search itself (AssignResourceGroups) is the one every workload uses (flavor_assigner.cc).
#include <algorithm>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "core/flavor_assigner.h"
#include "core/saturating.h"
#include "core/topology_inventory.h"
#include "core/workload.h"

namespace tollgate::core {

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
      ps.flavor_tried = joint.flavor_tried;
      ps.no_fit_cause = joint.no_fit_cause;
      ps.other_groups_no_fit_cause = joint.other_groups_no_fit_cause;
      ps.no_fit_group = joint.no_fit_group;
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
