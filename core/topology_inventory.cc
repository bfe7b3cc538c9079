#include "core/topology_inventory.h"

#include <algorithm>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "core/error_text.h"
#include "core/names.h"

namespace tollgate::core {
namespace {

absl::Status Invalid(absl::string_view path, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", message));
}

absl::Status ValidateNode(const NodeSpec& node) {
  if (absl::Status s = ValidateDns1123Subdomain(node.name); !s.ok()) {
    return Invalid("metadata.name", s.message());
  }
  for (const auto& [key, value] : node.labels) {
    const std::string path = absl::StrCat("metadata.labels[", QuoteValue(key), "]");
    if (absl::Status s = ValidateQualifiedName(key); !s.ok()) return Invalid(path, s.message());
    if (absl::Status s = ValidateLabelValue(value); !s.ok()) return Invalid(path, s.message());
  }
  for (size_t i = 0; i < node.taints.size(); ++i) {
    const Taint& t = node.taints[i];
    const std::string path = absl::StrCat("spec.taints[", i, "]");
    if (absl::Status s = ValidateQualifiedName(t.key); !s.ok()) {
      return Invalid(path + ".key", s.message());
    }
    if (t.effect != "NoSchedule" && t.effect != "PreferNoSchedule" && t.effect != "NoExecute") {
      return Invalid(path + ".effect",
                     absl::StrCat(QuoteValue(t.effect),
                                  ": must be one of NoSchedule, PreferNoSchedule, NoExecute"));
    }
  }
  for (const auto& [resource, amount] : node.allocatable) {
    const std::string path = absl::StrCat("status.allocatable[", QuoteValue(resource), "]");
    if (absl::Status s = ValidateQualifiedName(resource); !s.ok())
      return Invalid(path, s.message());
    if (amount < 0) return Invalid(path, "must be greater than or equal to 0");
  }
  return absl::OkStatus();
}

}  // namespace

void TopologyInventory::ApplyTopology(TopologySpec spec) {
  ReleaseHeld();
  auto it = topologies_.find(spec.name);
  if (it != topologies_.end() && it->second == spec) return;
  std::string name = spec.name;
  topologies_[name] = std::move(spec);
  Invalidate();
}

absl::Status TopologyInventory::DeleteTopology(absl::string_view name) {
  ReleaseHeld();
  auto it = topologies_.find(std::string(name));
  if (it == topologies_.end()) {
    return absl::NotFoundError(absl::StrCat("Topology ", QuoteValue(name), " not found"));
  }
  topologies_.erase(it);
  Invalidate();
  return absl::OkStatus();
}

const TopologySpec* TopologyInventory::FindTopology(absl::string_view name) const {
  auto it = topologies_.find(std::string(name));
  return it == topologies_.end() ? nullptr : &it->second;
}

absl::Status TopologyInventory::UpsertNode(NodeSpec node) {
  ReleaseHeld();
  if (absl::Status s = ValidateNode(node); !s.ok()) return s;
  std::sort(node.allocatable.begin(), node.allocatable.end());
  auto it = nodes_.find(node.name);
  if (it != nodes_.end() && it->second == node) return absl::OkStatus();
  std::string name = node.name;
  nodes_[name] = std::move(node);
  Invalidate();
  return absl::OkStatus();
}

absl::Status TopologyInventory::DeleteNode(absl::string_view name) {
  ReleaseHeld();
  auto it = nodes_.find(std::string(name));
  if (it == nodes_.end()) {
    return absl::NotFoundError(absl::StrCat("Node ", QuoteValue(name), " not found"));
  }
  nodes_.erase(it);
  Invalidate();
  return absl::OkStatus();
}

const NodeSpec* TopologyInventory::FindNode(absl::string_view name) const {
  auto it = nodes_.find(std::string(name));
  return it == nodes_.end() ? nullptr : &it->second;
}

namespace {

// A reported pod's requests plus the `pods` slot it takes, negated when `sign` is -1.
ResourceAmounts PodFootprint(const ResourceAmounts& requests, int sign) {
  ResourceAmounts out = requests;
  auto p = std::find_if(out.begin(), out.end(), [](const auto& e) { return e.first == "pods"; });
  if (p == out.end()) {
    out.emplace_back("pods", 1);
  } else {
    p->second += 1;
  }
  for (auto& [resource, amount] : out) amount *= sign;
  return out;
}

// Whether `after` asks for less of some resource than `before` (absent: none); both sorted.
bool AsksLessOfSome(const ResourceAmounts& before, const ResourceAmounts& after) {
  for (const auto& [resource, amount] : before) {
    auto it = std::lower_bound(
        after.begin(), after.end(), resource,
        [](const std::pair<std::string, int64_t>& e, const std::string& r) { return e.first < r; });
    const int64_t now = it != after.end() && it->first == resource ? it->second : 0;
    if (now < amount) return true;
  }
  return false;
}

}  // namespace

void TopologyInventory::ApplyPodToBuilt(const PodUsage& pod, int sign) {
  // Capacity only: the trees stay, so pod churn does not rebuild 10,000-node flavors.
  const ResourceAmounts footprint = PodFootprint(pod.requests, sign);
  for (auto& [name, entry] : flavors_) {
    if (entry.built != nullptr && entry.built_generation == generation_) {
      entry.built->AddNonTasUsage(pod.node, footprint);
    }
  }
}

absl::StatusOr<bool> TopologyInventory::ReportPod(std::string pod, std::string node,
                                                  ResourceAmounts requests) {
  if (pod.empty()) return Invalid("pod", "must not be empty");
  if (absl::Status s = ValidateDns1123Subdomain(node); !s.ok()) {
    return Invalid("nodeName", s.message());
  }
  for (const auto& [resource, amount] : requests) {
    const std::string path = absl::StrCat("requests[", QuoteValue(resource), "]");
    if (absl::Status s = ValidateQualifiedName(resource); !s.ok())
      return Invalid(path, s.message());
    if (amount < 0) return Invalid(path, "must be greater than or equal to 0");
  }
  std::sort(requests.begin(), requests.end());
  bool freed = false;
  auto it = pods_.find(pod);
  if (it != pods_.end()) {
    if (it->second.node == node && it->second.requests == requests) return false;
    freed = it->second.node != node || AsksLessOfSome(it->second.requests, requests);
    ApplyPodToBuilt(it->second, -1);
    pods_.erase(it);
  }
  auto [added, inserted] =
      pods_.emplace(std::move(pod), PodUsage{std::move(node), std::move(requests)});
  ApplyPodToBuilt(added->second, +1);
  return freed;
}

absl::Status TopologyInventory::RemovePod(absl::string_view pod) {
  auto it = pods_.find(std::string(pod));
  if (it == pods_.end()) {
    return absl::NotFoundError(absl::StrCat("Pod ", QuoteValue(pod), " not found"));
  }
  ApplyPodToBuilt(it->second, -1);
  pods_.erase(it);
  return absl::OkStatus();
}

void TopologyInventory::SetFlavors(const std::map<std::string, ResourceFlavorSpec>& flavors) {
  ReleaseHeld();
  // The same names (as many, each found) with the same specs: nothing changes.
  bool changed = flavors.size() != flavors_.size();
  for (auto f = flavors.begin(); !changed && f != flavors.end(); ++f) {
    auto it = flavors_.find(f->first);
    changed = it == flavors_.end() || !(it->second.spec == f->second);
  }
  if (!changed) return;
  // Before a flavor's tree goes with its entry.
  Invalidate();
  for (auto it = flavors_.begin(); it != flavors_.end();) {
    auto f = flavors.find(it->first);
    if (f == flavors.end()) {
      it = flavors_.erase(it);
    } else {
      it->second.spec = f->second;
      ++it;
    }
  }
  for (const auto& [name, spec] : flavors) {
    if (flavors_.find(name) == flavors_.end()) flavors_[name].spec = spec;
  }
}

void TopologyInventory::Invalidate() {
  // Carried placements index the trees the new generation rebuilds: named while those exist.
  for (WorkloadTopologyUsage& usage : slots_) NamePlaced(usage);
  for (Temporary& t : temporary_) NamePlaced(t.usage);
  ++generation_;
}

const std::pair<const std::string, TopologyInventory::FlavorEntry>* TopologyInventory::EntryOf(
    const PlacedTopology& placed) const {
  if (placed.tree == nullptr || placed.generation != generation_) return nullptr;
  for (const auto& entry : flavors_) {
    if (entry.second.built.get() == placed.tree && entry.second.built_generation == generation_) {
      return &entry;
    }
  }
  return nullptr;
}

TopologyFlavor* TopologyInventory::CurrentTree(const PlacedTopology& placed) const {
  const auto* entry = EntryOf(placed);
  return entry == nullptr ? nullptr : entry->second.built.get();
}

void TopologyInventory::NamePlaced(WorkloadTopologyUsage& usage) const {
  for (const PlacedTopology& p : usage.placed) {
    // Current by construction: carried placements are named at every change of generation.
    const auto* entry = EntryOf(p);
    if (entry == nullptr) continue;
    const ResourceAmounts per_pod = p.tree->PerPodOf(*p.usage);
    for (const auto& [leaf, count] : p.usage->leaves) {
      usage.named.push_back(
          TopologyUsage{entry->first, "", p.tree->LeafValues(leaf), per_pod, count});
    }
  }
  usage.placed.clear();
}

namespace {

// The flavor's entry. Clusters have a handful of flavors and every evaluation looks its flavor
// up several times: comparing for equality (lengths first) beats the map's three-way string
// comparisons there.
template <typename Map>
auto FindFlavor(Map& flavors, absl::string_view flavor) {
  if (flavors.size() <= 8) {
    for (auto it = flavors.begin(); it != flavors.end(); ++it) {
      if (it->first.size() == flavor.size() && it->first == flavor) return it;
    }
    return flavors.end();
  }
  return flavors.find(flavor);
}

// A placement carried on another tree, counted on `to` by its leaves' names (two trees that end
// at the hostname share the nodes).
void AddByLeafNames(const PlacedTopology& p, int sign, TopologyFlavor& to) {
  const ResourceAmounts per_pod = p.tree->PerPodOf(*p.usage);
  for (const auto& [leaf, count] : p.usage->leaves) {
    to.AddUsage(p.tree->LeafValues(leaf), per_pod, count, sign);
  }
}

}  // namespace

bool TopologyInventory::IsTopologyFlavor(absl::string_view flavor) const {
  auto it = FindFlavor(flavors_, flavor);
  return it != flavors_.end() && !it->second.spec.topology_name.empty();
}

TopologyFlavor* TopologyInventory::Flavor(absl::string_view flavor) {
  ReleaseHeld();
  auto it = FindFlavor(flavors_, flavor);
  if (it == flavors_.end() || it->second.spec.topology_name.empty()) return nullptr;
  // Built at this generation: its topology exists (deleting or changing one bumps it).
  if (it->second.built != nullptr && it->second.built_generation == generation_) {
    return it->second.built.get();
  }
  if (FindTopology(it->second.spec.topology_name) == nullptr) return nullptr;
  if (it->second.built_generation != generation_) Build(it->second);
  return it->second.built.get();
}

void TopologyInventory::set_balanced_placement(bool on) {
  balanced_placement_ = on;
  for (auto& [name, entry] : flavors_) {
    if (entry.built != nullptr) entry.built->set_balanced_placement(on);
  }
}

void TopologyInventory::set_respect_node_affinity_preferred(bool on) {
  respect_preferred_ = on;
  for (auto& [name, entry] : flavors_) {
    if (entry.built != nullptr) entry.built->set_respect_node_affinity_preferred(on);
  }
}

void TopologyInventory::Build(FlavorEntry& entry) {
  std::vector<const NodeSpec*> nodes;
  nodes.reserve(nodes_.size());
  for (const auto& [name, node] : nodes_) nodes.push_back(&node);
  entry.built =
      std::make_unique<TopologyFlavor>(*FindTopology(entry.spec.topology_name), entry.spec, nodes);
  entry.built->set_respect_node_affinity_preferred(respect_preferred_);
  entry.built->set_balanced_placement(balanced_placement_);
  entry.built_generation = generation_;
  for (const auto& [pod, usage] : pods_) {
    entry.built->AddNonTasUsage(usage.node, PodFootprint(usage.requests, +1));
  }
  for (const WorkloadTopologyUsage& usage : slots_) Replay(entry, usage, +1);
  for (const Temporary& t : temporary_) Replay(entry, t.usage, t.sign);
}

void TopologyInventory::Replay(FlavorEntry& entry, const WorkloadTopologyUsage& usage,
                               int sign) const {
  const bool hostname = entry.built->lowest_is_hostname();
  for (const TopologyUsage& u : usage.named) {
    if (u.count == 0 || !Counts(entry, u.flavor, hostname)) continue;
    entry.built->AddUsage(u.values, u.per_pod, u.count, sign);
  }
  // Carried on another flavor's tree of this generation: counted here only when both trees
  // end at the hostname (they share the nodes), by the leaves' names.
  for (const PlacedTopology& p : usage.placed) {
    if (!hostname || CurrentTree(p) == nullptr || !p.tree->lowest_is_hostname()) continue;
    AddByLeafNames(p, sign, *entry.built);
  }
}

bool TopologyInventory::Counts(const FlavorEntry& entry, absl::string_view flavor,
                               bool hostname) const {
  if (flavor == entry.spec.name) return true;
  if (!hostname) return false;
  auto other = flavors_.find(flavor);
  if (other == flavors_.end()) return false;
  const TopologySpec* t = FindTopology(other->second.spec.topology_name);
  return t != nullptr && !t->levels.empty() && t->levels.back() == kHostnameLabel;
}

template <typename Fn>
void TopologyInventory::ForEachSharing(absl::string_view flavor, Fn fn) {
  auto own = FindFlavor(flavors_, flavor);
  if (own == flavors_.end()) return;
  bool hostname;
  if (own->second.built != nullptr && own->second.built_generation == generation_) {
    // Built now: its topology exists, and its tree knows whether the hostname is lowest.
    hostname = own->second.built->lowest_is_hostname();
  } else {
    const TopologySpec* t = FindTopology(own->second.spec.topology_name);
    hostname = t != nullptr && !t->levels.empty() && t->levels.back() == kHostnameLabel;
  }
  for (auto& [name, entry] : flavors_) {
    if (entry.built == nullptr || entry.built_generation != generation_) continue;
    if (name != flavor && !(hostname && entry.built->lowest_is_hostname())) continue;
    fn(*entry.built);
  }
}

namespace {

// Whether two usages carry the same placements (the same blocks on the same trees), none by
// names.
bool SameCarried(const WorkloadTopologyUsage& a, const WorkloadTopologyUsage& b) {
  if (!a.named.empty() || !b.named.empty() || a.placed.size() != b.placed.size()) return false;
  for (size_t i = 0; i < a.placed.size(); ++i) {
    if (a.placed[i].tree != b.placed[i].tree || a.placed[i].generation != b.placed[i].generation ||
        a.placed[i].usage != b.placed[i].usage) {
      return false;
    }
  }
  return true;
}

}  // namespace

void TopologyInventory::SetWorkloadUsage(int64_t workload, WorkloadTopologyUsage usage) {
  // The cycle counted this placement already and held it for this admission: taken over.
  bool counted = false;
  if (held_ > 0) {
    for (Temporary& t : temporary_) {
      if (!t.held || t.held_for != workload || t.sign == 0) continue;
      if (SameCarried(t.usage, usage)) {
        t.sign = 0;
        counted = true;
      }
      break;
    }
  }
  // The others stay held: nothing reads the trees here.
  if (!counted) ReleaseHeld();
  if (usage.empty()) {
    // (Without topology placements at all, as in a cluster without topology flavors, no
    // lookup.)
    auto it = by_workload_.empty() ? by_workload_.end() : by_workload_.find(workload);
    if (it == by_workload_.end()) return;
    ApplyToBuilt(slots_[it->second], -1);
    FreeSlot(it);
    return;
  }
  // One lookup: an admission's workload is usually new here.
  auto [it, added] = by_workload_.try_emplace(workload, 0);
  if (!added) ApplyToBuilt(slots_[it->second], -1);
  if (!counted) ApplyToBuilt(usage, +1);
  if (!added) {
    slots_[it->second] = std::move(usage);
  } else if (!free_slots_.empty()) {
    it->second = free_slots_.back();
    free_slots_.pop_back();
    slots_[it->second] = std::move(usage);
  } else {
    it->second = static_cast<uint32_t>(slots_.size());
    slots_.push_back(std::move(usage));
  }
}

void TopologyInventory::FreeSlot(absl::flat_hash_map<int64_t, uint32_t>::iterator it) {
  slots_[it->second] = WorkloadTopologyUsage{};
  free_slots_.push_back(it->second);
  by_workload_.erase(it);
}

void TopologyInventory::HoldTemporary(int64_t token, int64_t workload) {
  for (auto it = temporary_.rbegin(); it != temporary_.rend(); ++it) {
    if (it->token != token) continue;
    if (it->sign > 0) it->held_for = workload;
    return;
  }
}

void TopologyInventory::ReleaseAllHeld() {
  for (const Temporary& t : temporary_) {
    if (t.held && t.sign != 0) ApplyToBuilt(t.usage, -t.sign);
  }
  temporary_.erase(std::remove_if(temporary_.begin(), temporary_.end(),
                                  [](const Temporary& t) { return t.held; }),
                   temporary_.end());
  held_ = 0;
}

void TopologyInventory::ClearWorkloadUsage(int64_t workload) {
  ReleaseHeld();
  auto it = by_workload_.find(workload);
  if (it == by_workload_.end()) return;
  ApplyToBuilt(slots_[it->second], -1);
  FreeSlot(it);
}

int64_t TopologyInventory::ApplyTemporary(WorkloadTopologyUsage&& usage, int sign) {
  ApplyToBuilt(usage, sign);
  const int64_t token = ++next_token_;
  temporary_.emplace_back(token, sign, std::move(usage));
  return token;
}

void TopologyInventory::UndoTemporary(int64_t token) {
  for (auto it = temporary_.rbegin(); it != temporary_.rend(); ++it) {
    if (it->token != token) continue;
    if (it->held_for >= 0) {
      // Stays counted for the admission (HoldTemporary).
      it->held = true;
      ++held_;
      return;
    }
    // Named meanwhile if the generation changed: the names then count on the rebuilt trees.
    ApplyToBuilt(it->usage, -it->sign);
    temporary_.erase(std::next(it).base());
    return;
  }
}

void TopologyInventory::ApplyToBuilt(const WorkloadTopologyUsage& usage, int sign) {
  for (const PlacedTopology& p : usage.placed) ApplyToBuilt(p, sign);
  for (const TopologyUsage& u : usage.named) ApplyToBuilt(u, sign);
}

void TopologyInventory::ApplyToBuilt(const TopologyUsage& u, int sign) {
  ForEachSharing(u.flavor,
                 [&u, sign](TopologyFlavor& f) { f.AddUsage(u.values, u.per_pod, u.count, sign); });
}

void TopologyInventory::ApplyToBuilt(const PlacedTopology& p, int sign) {
  // ForEachSharing by the tree instead of the flavor's name: the tree itself by its leaves,
  // and every other hostname tree by the leaves' names. Carried placements are current here
  // (named when the generation changes); the check keeps a stale one from reading a freed tree.
  if (CurrentTree(p) == nullptr) return;
  const bool hostname = p.tree->lowest_is_hostname();
  for (auto& [name, entry] : flavors_) {
    if (entry.built == nullptr || entry.built_generation != generation_) continue;
    if (entry.built.get() == p.tree) {
      entry.built->AddUsage(*p.usage, sign);
    } else if (hostname && entry.built->lowest_is_hostname()) {
      AddByLeafNames(p, sign, *entry.built);
    }
  }
}

}  // namespace tollgate::core
