// Kueue's failed-node replacement (findReplacementAssignment in tas_flavor_snapshot.go): the pods
// a lost node held are placed again, confined to the domain the pod set's constraint needs, and
// merged into the rest of the assignment.

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "core/topology_flavor.h"

namespace tollgate::core {

TopologyFlavor::Replacement TopologyFlavor::FindReplacement(const TopologyPlacementRequest& request,
                                                            const TopologyAssignment& existing,
                                                            absl::string_view lost_node) {
  Replacement out;
  TopologyAssignment kept = existing;
  int32_t lost = 0;
  kept.domains.clear();
  for (const TopologyDomainAssignment& d : existing.domains) {
    if (!d.values.empty() && d.values.back() == lost_node) {
      lost = d.count;
    } else {
      kept.domains.push_back(d);
    }
  }
  if (std::optional<std::string> stale = StaleDomain(kept)) {
    out.failure = absl::StrCat(
        "Cannot replace the node, because the existing topologyAssignment is invalid, as it "
        "contains the stale domain ",
        *stale);
    return out;
  }
  const PodSetTopologyRequest* t = request.request;
  int32_t slice_size = 1;
  if (t != nullptr && !t->slices.empty()) {
    slice_size = t->slices[0].size;
    if (slice_size <= 0) {
      out.failure = "slice topology requested, but slice size not provided";
      return out;
    }
  }
  const bool sliced = t != nullptr && !t->slices.empty();
  const int last = static_cast<int>(levels_.size()) - 1;

  // The leaf domain of an assignment entry (the hostname, or every value).
  auto leaf_domain = [&](const TopologyDomainAssignment& d) -> int {
    const int l = LeafFor(d.values);
    return l < 0 ? -1 : leaves_[l].domain;
  };
  auto ancestor_at = [&](int domain, int level) {
    for (int i = last; i > level && domain >= 0; --i) domain = domains_[domain].parent;
    return domain;
  };
  // Kueue's findIncompleteSliceDomain: the slice-level domain whose pods plus the lost ones make
  // whole slices again (the first in domain order).
  auto incomplete_slice_domain = [&](int32_t size, const std::string& level_key) -> std::string {
    const int level = LevelIndex(level_key);
    if (level < 0) return "";
    std::vector<std::pair<int, int32_t>> per_domain;
    for (const TopologyDomainAssignment& d : kept.domains) {
      const int a = ancestor_at(leaf_domain(d), level);
      if (a < 0) continue;
      auto it = std::find_if(per_domain.begin(), per_domain.end(),
                             [a](const auto& e) { return e.first == a; });
      if (it == per_domain.end()) {
        per_domain.emplace_back(a, d.count);
      } else {
        it->second += d.count;
      }
    }
    std::sort(per_domain.begin(), per_domain.end(),
              [this](const auto& a, const auto& b) { return ValuesLess(a.first, b.first); });
    for (const auto& [domain, count] : per_domain) {
      if ((count + lost) % size == 0) return DomainId(domains_[domain].values);
    }
    return "";
  };

  // Kueue's requiredReplacementDomain.
  std::string required_domain;
  const std::string* key = LevelKey(request);
  const int level = key != nullptr ? LevelIndex(*key) : -1;
  if (level >= 0 && !kept.domains.empty()) {
    if (sliced && lost % slice_size != 0) {
      bool found = false;
      if (t->slices.size() > 1) {
        for (auto it = t->slices.rbegin(); it != t->slices.rend(); ++it) {
          if (it->size > 0 && lost % it->size != 0) {
            required_domain = incomplete_slice_domain(it->size, it->level);
            found = true;
            break;
          }
        }
      }
      if (!found) required_domain = incomplete_slice_domain(slice_size, t->slices[0].level);
    } else if (t != nullptr && t->required.has_value()) {
      const int a = ancestor_at(leaf_domain(kept.domains[0]), level);
      if (a >= 0) required_domain = DomainId(domains_[a].values);
    }
  }

  // A replacement that cannot keep whole slices uses the innermost layer it can keep.
  TopologyPlacementRequest copy = request;
  copy.count = lost;
  PodSetTopologyRequest adjusted;
  if (t != nullptr) adjusted = *t;
  if (sliced && !required_domain.empty() && lost % slice_size != 0) {
    std::vector<SliceConstraint> layers = t->slices;
    adjusted.slices.clear();
    for (auto it = layers.rbegin(); it != layers.rend(); ++it) {
      if (it->size > 0 && lost % it->size == 0) {
        adjusted.slices.push_back(*it);
        break;
      }
    }
    if (adjusted.slices.empty()) adjusted.slices.push_back(SliceConstraint{levels_.back(), 1});
  }
  if (t != nullptr) copy.request = &adjusted;

  PlacedGroup placed;
  if (std::string failure =
          Place(copy, nullptr, /*simulate_empty=*/false, required_domain, &placed);
      !failure.empty()) {
    out.failure = std::move(failure);
    return out;
  }
  const Boxed<TopologyAssignment>& replacement = placed.workers;
  if (!replacement.has_value() || replacement->domains.empty()) {
    out.failure =
        absl::StrCat("cannot find replacement assignment for unhealthy node: ", lost_node);
    return out;
  }
  // Merge, sorted by the leaves' full values, adding counts on a shared domain.
  std::vector<std::pair<int, TopologyDomainAssignment>> all;
  for (const TopologyDomainAssignment& d : kept.domains) all.emplace_back(leaf_domain(d), d);
  for (const TopologyDomainAssignment& d : replacement->domains)
    all.emplace_back(leaf_domain(d), d);
  std::stable_sort(all.begin(), all.end(), [this](const auto& a, const auto& b) {
    return DomainId(domains_[a.first].values) < DomainId(domains_[b.first].values);
  });
  TopologyAssignment merged;
  merged.levels = existing.levels;
  for (auto& [domain, d] : all) {
    if (!merged.domains.empty() && merged.domains.back().values == d.values) {
      merged.domains.back().count += d.count;
    } else {
      merged.domains.push_back(std::move(d));
    }
  }
  out.assignment = std::move(merged);
  return out;
}

}  // namespace tollgate::core
