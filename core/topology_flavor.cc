#include "core/topology_flavor.h"

#include <algorithm>
#include <set>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_join.h"
#include "core/node_matching.h"
#include "core/saturating.h"
#include "core/topology_count_cache.h"

namespace tollgate::core {

namespace {

// How many pods of `req` fit on the leaf's free capacity for admitted workloads (free minus
// used), without copying it.
template <typename Request>
int32_t CountOnLeaf(const Request& req, const int64_t* free, const int64_t* used) {
  return SmallestPodCount(
      req, [free, used](int r) { return SatSub(free[r], used[r]); }, nullptr);
}

}  // namespace

std::string DomainId(const std::vector<std::string>& values) { return absl::StrJoin(values, ","); }

int32_t TopologyAssignment::PodCount() const {
  int32_t total = 0;
  for (const TopologyDomainAssignment& d : domains) total += d.count;
  return total;
}

std::string TaintString(const Taint& taint) {
  std::string out = taint.key;
  if (!taint.value.empty()) out += "=" + taint.value;
  if (!taint.effect.empty()) out += ":" + taint.effect;
  return out;
}

bool NodeInTopologyFlavor(const NodeSpec& node, const TopologySpec& topology,
                          const ResourceFlavorSpec& flavor) {
  if (!node.ready || node.unschedulable) return false;
  for (const auto& [key, value] : flavor.node_labels) {
    auto it = node.labels.find(key);
    if (it == node.labels.end() || it->second != value) return false;
  }
  for (const std::string& level : topology.levels) {
    if (node.labels.find(level) == node.labels.end()) return false;
  }
  return true;
}

TopologyFlavor::TopologyFlavor(const TopologySpec& topology, const ResourceFlavorSpec& flavor,
                               const std::vector<const NodeSpec*>& nodes)
    : topology_name_(topology.name),
      levels_(topology.levels),
      lowest_is_hostname_(!levels_.empty() && levels_.back() == kHostnameLabel),
      flavor_tolerations_(flavor.tolerations) {
  std::set<std::string> resources = {"pods"};
  std::vector<const NodeSpec*> matching;
  for (const NodeSpec* node : nodes) {
    // Kueue's nodes cache holds only ready, schedulable nodes; the flavor takes those with its
    // node labels and a label for every level.
    if (!NodeInTopologyFlavor(*node, topology, flavor)) continue;
    matching.push_back(node);
    for (const auto& [resource, amount] : node->allocatable) resources.insert(resource);
  }
  // Node names decide which node a shared hostname leaf keeps: sort for determinism.
  std::sort(matching.begin(), matching.end(),
            [](const NodeSpec* a, const NodeSpec* b) { return a->name < b->name; });
  resource_names_.assign(resources.begin(), resources.end());
  pods_index_ = ResourceIndex("pods");
  capacity_.resources = resource_names_.size();
  ids_.resize(levels_.size());
  by_level_.resize(levels_.size());
  if (levels_.empty()) return;
  for (const NodeSpec* node : matching) AddNode(*node);
  std::vector<int> order(domains_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::sort(order.begin(), order.end(),
            [this](int a, int b) { return domains_[a].values < domains_[b].values; });
  rank_.resize(domains_.size());
  for (size_t i = 0; i < order.size(); ++i) rank_[order[i]] = static_cast<int>(i);
  for (size_t level = 0; level < by_level_.size(); ++level) {
    std::sort(by_level_[level].begin(), by_level_[level].end(),
              [this](int a, int b) { return ValuesLess(a, b); });
  }
  for (Domain& d : domains_) {
    std::sort(d.children.begin(), d.children.end(),
              [this](int a, int b) { return ValuesLess(a, b); });
  }
  roots_ = by_level_[0];
  level_pos_.resize(domains_.size());
  for (const std::vector<int>& level : by_level_) {
    for (size_t i = 0; i < level.size(); ++i) level_pos_[level[i]] = static_cast<int32_t>(i);
  }
  state_.resize(domains_.size());
}

TopologyFlavor::~TopologyFlavor() = default;

int TopologyFlavor::ResourceIndex(absl::string_view resource) const {
  // Nodes offer a handful of resources: comparing for equality beats a binary search of
  // three-way string comparisons.
  if (resource_names_.size() <= 8) {
    for (size_t i = 0; i < resource_names_.size(); ++i) {
      const std::string& name = resource_names_[i];
      // Length and first letter first: most names differ there, without a call to memcmp.
      if (name.size() != resource.size() || (!name.empty() && name[0] != resource[0])) continue;
      if (name == resource) return static_cast<int>(i);
    }
    return -1;
  }
  auto it = std::lower_bound(resource_names_.begin(), resource_names_.end(), resource);
  if (it == resource_names_.end() || *it != resource) return -1;
  return static_cast<int>(it - resource_names_.begin());
}

int TopologyFlavor::FindOrAddDomain(const std::vector<std::string>& values) {
  const int level = static_cast<int>(values.size()) - 1;
  const std::string id = DomainId(values);
  auto it = ids_[level].find(id);
  if (it != ids_[level].end()) return it->second;
  int parent = -1;
  if (level > 0) {
    parent = FindOrAddDomain(std::vector<std::string>(values.begin(), values.end() - 1));
  }
  const int index = static_cast<int>(domains_.size());
  domains_.push_back(Domain{parent, level, {}, values, -1});
  if (parent >= 0) domains_[parent].children.push_back(index);
  ids_[level].emplace(id, index);
  by_level_[level].push_back(index);
  return index;
}

void TopologyFlavor::AddNode(const NodeSpec& node) {
  std::vector<std::string> values;
  values.reserve(levels_.size());
  for (const std::string& level : levels_) values.push_back(node.labels.at(level));
  const int last = static_cast<int>(levels_.size()) - 1;
  // A hostname leaf is known by the hostname alone (as in Kueue's assignments); other leaves
  // by all their values.
  const std::string leaf_id = lowest_is_hostname_ ? values.back() : DomainId(values);
  int leaf_index;
  auto it = ids_[last].find(leaf_id);
  if (it != ids_[last].end()) {
    leaf_index = domains_[it->second].leaf;
  } else {
    int parent = -1;
    if (last > 0)
      parent = FindOrAddDomain(std::vector<std::string>(values.begin(), values.end() - 1));
    const int index = static_cast<int>(domains_.size());
    domains_.push_back(Domain{parent, last, {}, values, static_cast<int>(leaves_.size())});
    if (parent >= 0) domains_[parent].children.push_back(index);
    ids_[last].emplace(leaf_id, index);
    by_level_[last].push_back(index);
    leaf_index = static_cast<int>(leaves_.size());
    leaves_.push_back(Leaf{index, 0});
    capacity_.values.resize(capacity_.values.size() + 2 * capacity_.resources, 0);
    assumed_.emplace_back();
    if (lowest_is_hostname_) {
      leaf_nodes_.push_back(node);
      if (!node.taints.empty()) tainted_leaves_.push_back(leaf_index);
    }
  }
  ++leaves_[leaf_index].nodes;
  int64_t* free = capacity_.free(leaf_index);
  for (const auto& [resource, amount] : node.allocatable) {
    const int r = ResourceIndex(resource);
    free[r] = SatAdd(free[r], amount);
  }
  leaf_of_node_[node.name] = leaf_index;
}

int TopologyFlavor::LeafFor(const std::vector<std::string>& values) const {
  if (levels_.empty() || values.empty()) return -1;
  const absl::flat_hash_map<std::string, int>& leaves = ids_.back();
  // A hostname is looked up as it is, without a copy.
  auto it = lowest_is_hostname_ ? leaves.find(absl::string_view(values.back()))
                                : leaves.find(DomainId(values));
  return it == leaves.end() ? -1 : domains_[it->second].leaf;
}

void TopologyFlavor::AddNonTasUsage(absl::string_view node, const ResourceAmounts& usage) {
  auto it = leaf_of_node_.find(node);
  if (it == leaf_of_node_.end()) return;
  int64_t* free = capacity_.free(it->second);
  for (const auto& [resource, amount] : usage) {
    const int r = ResourceIndex(resource);
    if (r >= 0) free[r] = SatSub(free[r], amount);
  }
  Touch(it->second);
}

void TopologyFlavor::AddUsage(const std::vector<std::string>& values,
                              const ResourceAmounts& per_pod, int32_t count, int sign) {
  const int l = LeafFor(values);
  if (l < 0) return;
  int64_t* used = capacity_.used(l);
  for (const auto& [resource, amount] : per_pod) {
    const int r = ResourceIndex(resource);
    if (r >= 0) used[r] = SatAdd(used[r], sign * SatMul(amount, count));
  }
  used[pods_index_] = SatAdd(used[pods_index_], int64_t{sign} * count);
  Touch(l);
}

void TopologyFlavor::AddUsage(const TopologyLeafUsage& usage, int sign) {
  // AddUsage by values with the leaf and the resources already found: the per-pod amounts
  // include the one `pods`, so `pods` moves by the same count.
  for (const auto& [l, count] : usage.leaves) {
    int64_t* used = capacity_.used(l);
    for (const auto& [r, amount] : usage.per_pod) {
      if (r >= 0) used[r] = SatAdd(used[r], sign * SatMul(amount, count));
    }
    Touch(l);
  }
}

std::vector<std::string> TopologyFlavor::LeafValues(int32_t leaf) const {
  const std::vector<std::string>& values = domains_[leaves_[leaf].domain].values;
  if (lowest_is_hostname_) return {values.back()};
  return values;
}

ResourceAmounts TopologyFlavor::PerPodOf(const TopologyLeafUsage& usage) const {
  ResourceAmounts out;
  for (const auto& [r, amount] : usage.per_pod) {
    // A resource no node of the tree has: its amount is 0 in a placement that succeeded.
    if (r < 0) continue;
    const int64_t per_pod = r == pods_index_ ? amount - 1 : amount;
    if (per_pod != 0) out.emplace_back(resource_names_[r], per_pod);
  }
  return out;
}

void TopologyFlavor::Touch(int leaf) {
  if (caches_.empty()) return;
  // A cache further behind than this recomputes every leaf, which is as cheap as replaying.
  if (changes_.size() >= leaves_.size() + 1024) {
    changes_base_ += static_cast<int64_t>(changes_.size());
    changes_.clear();
  }
  changes_.push_back(leaf);
}

bool TopologyFlavor::Fits(const TopologyAssignment& assignment,
                          const ResourceAmounts& per_pod) const {
  // Resolve's amounts without its order or names: the smallest count does not depend on them.
  struct Amounts {
    absl::InlinedVector<std::pair<int, int64_t>, 4> amounts;
  } req;
  bool has_pods = false;
  for (const auto& [resource, amount] : per_pod) {
    if (resource == "pods") {
      has_pods = true;
      req.amounts.emplace_back(pods_index_, amount + 1);
    } else {
      req.amounts.emplace_back(ResourceIndex(resource), amount);
    }
  }
  if (!has_pods) req.amounts.emplace_back(pods_index_, 1);
  for (const TopologyDomainAssignment& d : assignment.domains) {
    const int l = LeafFor(d.values);
    if (l < 0) return false;
    if (CountOnLeaf(req, capacity_.free(l), capacity_.used(l)) < d.count) return false;
  }
  return true;
}

bool TopologyFlavor::Fits(const TopologyLeafUsage& usage) const {
  struct Amounts {
    const absl::InlinedVector<std::pair<int32_t, int64_t>, 4>& amounts;
  } req{usage.per_pod};
  for (const auto& [l, count] : usage.leaves) {
    if (CountOnLeaf(req, capacity_.free(l), capacity_.used(l)) < count) return false;
  }
  return true;
}

std::optional<std::string> TopologyFlavor::StaleDomain(const TopologyAssignment& assignment) const {
  for (const TopologyDomainAssignment& d : assignment.domains) {
    if (LeafFor(d.values) < 0) return d.values.empty() ? std::string() : d.values.front();
  }
  return std::nullopt;
}

std::vector<TopologyFlavor::DomainCapacity> TopologyFlavor::Capacities() const {
  std::vector<DomainCapacity> out;
  out.reserve(domains_.size());
  // Sums per domain, leaves first, then bubbled up.
  std::vector<std::vector<int64_t>> free(domains_.size(),
                                         std::vector<int64_t>(resource_names_.size()));
  std::vector<std::vector<int64_t>> used = free;
  std::vector<int32_t> nodes(domains_.size(), 0);
  for (size_t l = 0; l < leaves_.size(); ++l) {
    const int64_t* leaf_free = capacity_.free(static_cast<int>(l));
    const int64_t* leaf_used = capacity_.used(static_cast<int>(l));
    for (int d = leaves_[l].domain; d >= 0; d = domains_[d].parent) {
      nodes[d] += leaves_[l].nodes;
      for (size_t r = 0; r < resource_names_.size(); ++r) {
        free[d][r] = SatAdd(free[d][r], leaf_free[r]);
        used[d][r] = SatAdd(used[d][r], leaf_used[r]);
      }
    }
  }
  auto visit = [&](auto&& self, int d) -> void {
    DomainCapacity c;
    c.level = domains_[d].level;
    c.values = domains_[d].values;
    c.nodes = nodes[d];
    for (size_t r = 0; r < resource_names_.size(); ++r) {
      c.free.emplace_back(resource_names_[r], free[d][r]);
      if (used[d][r] != 0) c.used.emplace_back(resource_names_[r], used[d][r]);
    }
    out.push_back(std::move(c));
    for (int child : domains_[d].children) self(self, child);
  };
  for (int root : roots_) visit(visit, root);
  return out;
}

TopologyFlavor::ResolvedRequest TopologyFlavor::Resolve(
    absl::Span<const std::pair<std::string, int64_t>> per_pod) const {
  // The per-pod request plus one `pods`: added to an existing `pods`, else inserted and the
  // whole list sorted (by name, then amount).
  static constexpr absl::string_view kPods = "pods";
  ResolvedRequest req;
  auto add = [&](absl::string_view resource, int64_t amount) {
    req.amounts.emplace_back(resource == kPods ? pods_index_ : ResourceIndex(resource), amount);
    req.names.push_back(resource);
  };
  const bool has_pods =
      std::any_of(per_pod.begin(), per_pod.end(), [](const auto& e) { return e.first == kPods; });
  if (has_pods) {
    for (const auto& [resource, amount] : per_pod)
      add(resource, resource == kPods ? amount + 1 : amount);
    return req;
  }
  absl::InlinedVector<const std::pair<std::string, int64_t>*, 4> order;
  for (const auto& e : per_pod) order.push_back(&e);
  if (!std::is_sorted(per_pod.begin(), per_pod.end())) {
    std::sort(order.begin(), order.end(), [](const auto* a, const auto* b) { return *a < *b; });
  }
  bool pods_added = false;
  for (const auto* e : order) {
    if (!pods_added && absl::string_view(e->first) > kPods) {
      add(kPods, 1);
      pods_added = true;
    }
    add(e->first, e->second);
  }
  if (!pods_added) add(kPods, 1);
  return req;
}

void TopologyFlavor::AddAssumed(const TopologyAssignment& assignment,
                                absl::Span<const std::pair<std::string, int64_t>> per_pod) {
  const int pods = pods_index_;
  for (const TopologyDomainAssignment& d : assignment.domains) {
    const int l = LeafFor(d.values);
    if (l < 0) continue;
    std::vector<int64_t>& usage = assumed_[l];
    if (usage.empty()) {
      usage.resize(resource_names_.size(), 0);
      assumed_leaves_.push_back(l);
    }
    for (const auto& [resource, amount] : per_pod) {
      const int r = ResourceIndex(resource);
      if (r >= 0) usage[r] = SatAdd(usage[r], SatMul(amount, d.count));
    }
    usage[pods] = SatAdd(usage[pods], d.count);
    Touch(l);
  }
}

void TopologyFlavor::ClearAssumed() {
  for (int l : assumed_leaves_) {
    assumed_[l].clear();
    Touch(l);
  }
  assumed_leaves_.clear();
}

}  // namespace tollgate::core
