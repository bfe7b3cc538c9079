#include "core/topology_views.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "core/cluster_state.h"
#include "core/saturating.h"
#include "core/topology_flavor.h"
#include "core/topology_scheduling.h"

namespace tollgate::core {
namespace {

std::string HostnameOf(const NodeSpec& node) {
  auto it = node.labels.find(kHostnameLabel);
  return it == node.labels.end() ? node.name : it->second;
}

void Subtract(ResourceAmounts& from, const std::string& resource, int64_t amount) {
  auto it = std::lower_bound(from.begin(), from.end(), resource,
                             [](const auto& e, const std::string& r) { return e.first < r; });
  if (it == from.end() || it->first != resource) it = from.emplace(it, resource, 0);
  it->second = SatSub(it->second, amount);
}

bool HostnameTopology(const ClusterState& state, const std::string& flavor) {
  auto f = state.flavors().find(flavor);
  if (f == state.flavors().end()) return false;
  const TopologySpec* t = state.topology().FindTopology(f->second.topology_name);
  return t != nullptr && !t->levels.empty() && t->levels.back() == kHostnameLabel;
}

// Builds the views; `only` (may be empty) limits the details to one node.
std::vector<NodeView> Build(const ClusterState& state, absl::string_view only, bool details) {
  const TopologyInventory& inventory = state.topology();
  std::vector<NodeView> out;
  std::map<std::string, std::vector<size_t>> by_hostname;
  for (const auto& [name, node] : inventory.nodes()) {
    if (!only.empty() && name != only) continue;
    NodeView view;
    view.node = node;
    view.free = node.allocatable;
    for (const auto& [flavor_name, flavor] : state.flavors()) {
      if (flavor.topology_name.empty()) continue;
      const TopologySpec* t = inventory.FindTopology(flavor.topology_name);
      if (t != nullptr && NodeInTopologyFlavor(node, *t, flavor))
        view.flavors.push_back(flavor_name);
    }
    by_hostname[HostnameOf(node)].push_back(out.size());
    out.push_back(std::move(view));
  }
  if (out.empty()) return out;
  std::map<std::string, size_t> by_name;
  for (size_t i = 0; i < out.size(); ++i) by_name[out[i].node.name] = i;
  for (const auto& [pod, usage] : inventory.pods()) {
    auto it = by_name.find(usage.node);
    if (it == by_name.end()) continue;
    NodeView& view = out[it->second];
    ++view.reported_pods;
    for (const auto& [resource, amount] : usage.requests) Subtract(view.free, resource, amount);
    Subtract(view.free, "pods", 1);
    if (details) view.reported.push_back(pod);
  }
  std::map<std::string, bool> hostname_flavor;
  for (const Workload* wl : state.AllWorkloads()) {
    if (!wl->HoldsQuota()) continue;
    const std::string key = wl->Key();
    for (const TopologyUsage& u : TopologyUsageOf(*wl, inventory)) {
      auto [h, inserted] = hostname_flavor.emplace(u.flavor, false);
      if (inserted) h->second = HostnameTopology(state, u.flavor);
      if (!h->second || u.values.empty()) continue;
      auto nodes = by_hostname.find(u.values.back());
      if (nodes == by_hostname.end()) continue;
      for (size_t i : nodes->second) {
        NodeView& view = out[i];
        view.placed_pods += u.count;
        for (const auto& [resource, amount] : u.per_pod) {
          Subtract(view.free, resource, SatMul(amount, u.count));
        }
        Subtract(view.free, "pods", u.count);
        if (details) {
          view.placements.push_back(
              NodePlacementView{key, u.pod_set, u.flavor, u.count, u.per_pod});
        }
      }
    }
    if (details) {
      for (const std::string& unhealthy : wl->status.history().unhealthy_nodes) {
        auto nodes = by_hostname.find(unhealthy);
        if (nodes == by_hostname.end()) continue;
        for (size_t i : nodes->second) out[i].unhealthy_for.push_back(key);
      }
    }
  }
  return out;
}

}  // namespace

std::vector<NodeView> NodeViews(const ClusterState& state) { return Build(state, "", false); }

std::optional<NodeView> NodeDetails(const ClusterState& state, absl::string_view name) {
  if (name.empty() || state.topology().FindNode(name) == nullptr) return std::nullopt;
  std::vector<NodeView> views = Build(state, name, true);
  if (views.empty()) return std::nullopt;
  return std::move(views.front());
}

std::vector<FlavorTopologyView> TopologyViews(const ClusterState& state, absl::string_view flavor) {
  TopologyInventory& inventory = state.topology();
  std::vector<FlavorTopologyView> out;
  for (const auto& [name, spec] : state.flavors()) {
    if (spec.topology_name.empty() || (!flavor.empty() && name != flavor)) continue;
    FlavorTopologyView view;
    view.flavor = name;
    view.topology = spec.topology_name;
    const TopologySpec* topology = inventory.FindTopology(spec.topology_name);
    TopologyFlavor* tf = inventory.Flavor(name);
    if (topology == nullptr || tf == nullptr) {
      view.topology_missing = true;
      out.push_back(std::move(view));
      continue;
    }
    view.levels = topology->levels;
    for (TopologyFlavor::DomainCapacity& c : tf->Capacities()) {
      TopologyDomainView d;
      d.level = c.level;
      d.values = std::move(c.values);
      d.nodes = c.nodes;
      d.free = c.free;
      for (const auto& [resource, amount] : c.used) Subtract(d.free, resource, amount);
      d.capacity = std::move(c.free);
      d.used = std::move(c.used);
      view.domains.push_back(std::move(d));
    }
    out.push_back(std::move(view));
  }
  return out;
}

}  // namespace tollgate::core
