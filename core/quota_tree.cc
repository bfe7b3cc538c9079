#include "core/quota_tree.h"

#include <algorithm>
#include <set>

#include "core/saturating.h"

namespace tollgate::core {

namespace {

// What a node can still use of its local quota (the part it does not lend) before it borrows.
int64_t LocalAvailableOf(int64_t local_quota, int64_t usage) {
  return std::max<int64_t>(0, SatSub(local_quota, usage));
}

}  // namespace

FrId FlavorResourceIndex::Intern(absl::string_view flavor, absl::string_view resource) {
  std::pair<std::string, std::string> key(flavor, resource);
  auto it = ids_.find(key);
  if (it != ids_.end()) return it->second;
  const FrId id = static_cast<FrId>(pairs_.size());
  pairs_.push_back(key);
  ids_.emplace(std::move(key), id);
  return id;
}

std::optional<FrId> FlavorResourceIndex::Find(absl::string_view flavor,
                                              absl::string_view resource) const {
  auto it = ids_.find(PairView(flavor, resource));
  if (it == ids_.end()) return std::nullopt;
  return it->second;
}

QuotaNode* QuotaNode::Root() {
  QuotaNode* node = this;
  while (node->parent_ != nullptr) node = node->parent_;
  return node;
}

const QuotaNode* QuotaNode::Root() const {
  const QuotaNode* node = this;
  while (node->parent_ != nullptr) node = node->parent_;
  return node;
}

QuotaLimits QuotaNode::Limits(FrId fr) const {
  const FrSlot& slot = Slot(fr);
  QuotaLimits limits;
  limits.defined = slot.defined;
  limits.nominal = slot.nominal;
  if (slot.has_borrowing_limit) limits.borrowing_limit = slot.borrowing_limit;
  if (slot.has_lending_limit) limits.lending_limit = slot.lending_limit;
  return limits;
}

void QuotaNode::SetLimits(FrId fr, const QuotaLimits& limits) {
  FrSlot& slot = MutableSlot(fr);
  slot.defined = limits.defined;
  slot.nominal = limits.nominal;
  slot.has_borrowing_limit = limits.borrowing_limit.has_value();
  slot.borrowing_limit = limits.borrowing_limit.value_or(0);
  slot.has_lending_limit = limits.lending_limit.has_value();
  slot.lending_limit = limits.lending_limit.value_or(0);
}

std::vector<FrId> QuotaNode::ActiveResources() const {
  std::vector<FrId> out;
  const FrId n = SlotCount();
  for (FrId fr = 0; fr < n; ++fr) {
    const FrSlot& slot = Slot(fr);
    if (slot.subtree_quota != 0 || slot.usage != 0 || slot.defined) out.push_back(fr);
  }
  return out;
}

int64_t QuotaNode::SlotLocalQuota(const FrSlot& slot) {
  if (!slot.has_lending_limit) return 0;
  return std::max<int64_t>(0, SatSub(slot.subtree_quota, slot.lending_limit));
}

int64_t QuotaNode::LocalQuota(FrId fr) const { return SlotLocalQuota(Slot(fr)); }

int64_t QuotaNode::LocalAvailable(FrId fr) const {
  const FrSlot& slot = Slot(fr);
  return LocalAvailableOf(SlotLocalQuota(slot), slot.usage);
}

int64_t QuotaNode::Available(FrId fr) const {
  const FrSlot& slot = Slot(fr);
  if (parent_ == nullptr) return SatSub(slot.subtree_quota, slot.usage);
  int64_t parent_available = parent_->Available(fr);
  const int64_t local = SlotLocalQuota(slot);
  if (slot.has_borrowing_limit) {
    const int64_t stored_in_parent = SatSub(slot.subtree_quota, local);
    const int64_t used_in_parent = std::max<int64_t>(0, SatSub(slot.usage, local));
    const int64_t with_max_from_parent =
        SatAdd(SatSub(stored_in_parent, used_in_parent), slot.borrowing_limit);
    parent_available = std::min(with_max_from_parent, parent_available);
  }
  return SatAdd(LocalAvailableOf(local, slot.usage), parent_available);
}

int64_t QuotaNode::PotentialAvailable(FrId fr) const {
  const FrSlot& slot = Slot(fr);
  if (parent_ == nullptr) return slot.subtree_quota;
  int64_t available = SatAdd(SlotLocalQuota(slot), parent_->PotentialAvailable(fr));
  if (slot.has_borrowing_limit) {
    available = std::min(available, SatAdd(slot.subtree_quota, slot.borrowing_limit));
  }
  return available;
}

bool QuotaNode::BorrowingWith(FrId fr, int64_t val) const {
  const FrSlot& slot = Slot(fr);
  return slot.subtree_quota < SatAdd(slot.usage, val);
}

void QuotaNode::AddUsage(FrId fr, int64_t val) {
  FrSlot& slot = MutableSlot(fr);
  const int64_t local_available = LocalAvailableOf(SlotLocalQuota(slot), slot.usage);
  slot.usage = SatAdd(slot.usage, val);
  if (parent_ != nullptr && val > local_available) {
    parent_->AddUsage(fr, SatSub(val, local_available));
  }
}

void QuotaNode::RemoveUsage(FrId fr, int64_t val) {
  FrSlot& slot = MutableSlot(fr);
  const int64_t stored_in_parent = SatSub(slot.usage, SlotLocalQuota(slot));
  slot.usage = SatSub(slot.usage, val);
  if (stored_in_parent <= 0 || parent_ == nullptr) return;
  parent_->RemoveUsage(fr, std::min(val, stored_in_parent));
}

int QuotaNode::Height() const {
  if (kind_ == Kind::kClusterQueue) return 0;
  int children = static_cast<int>(child_cohorts_.size());
  for (const QuotaNode* cq : child_cqs_) children += cq->active() ? 1 : 0;
  int height = std::min(children, 1);
  for (const QuotaNode* child : child_cohorts_) height = std::max(height, child->Height() + 1);
  return height;
}

void QuotaTree::ApplyQuotas(const std::vector<ResourceGroupSpec>& groups,
                            FlavorResourceIndex& fr_index, QuotaNode& node) {
  std::vector<FrId>& defined = node.defined_;
  for (const ResourceGroupSpec& group : groups) {
    for (const FlavorQuotasSpec& flavor : group.flavors) {
      for (const ResourceQuotaSpec& quota : flavor.resources) {
        const FrId fr = fr_index.Intern(flavor.flavor, quota.resource);
        node.SetLimits(
            fr, QuotaLimits{true, quota.nominal, quota.borrowing_limit, quota.lending_limit});
        defined.push_back(fr);
      }
    }
  }
  std::sort(defined.begin(), defined.end());
  defined.erase(std::unique(defined.begin(), defined.end()), defined.end());
}

void QuotaTree::Build(const std::map<std::string, ClusterQueueSpec>& cluster_queues,
                      const std::map<std::string, CohortSpec>& cohorts,
                      FlavorResourceIndex& fr_index) {
  cluster_queues_.clear();
  cohorts_.clear();
  cq_in_cycle_.clear();

  auto cohort_node = [&](const std::string& name) -> QuotaNode* {
    auto it = cohorts_.find(name);
    if (it != cohorts_.end()) return it->second.get();
    auto node = std::make_unique<QuotaNode>(QuotaNode::Kind::kCohort, name);
    QuotaNode* raw = node.get();
    cohorts_.emplace(name, std::move(node));
    return raw;
  };

  for (const auto& [name, spec] : cohorts) {
    QuotaNode* node = cohort_node(name);
    ApplyQuotas(spec.resource_groups, fr_index, *node);
    node->fair_weight_ = spec.fair_weight;
    if (!spec.parent.empty()) cohort_node(spec.parent);
  }

  // Detect cycles before linking so a cycle never makes the arithmetic recurse forever.
  std::set<std::string> in_cycle;
  for (const auto& [name, spec] : cohorts) {
    std::vector<std::string> path;
    std::set<std::string> seen;
    std::string current = name;
    while (!current.empty()) {
      if (in_cycle.count(current) > 0) break;
      if (!seen.insert(current).second) {
        // Everything from the first visit of `current` onwards is on the cycle.
        bool on_cycle = false;
        for (const std::string& p : path) {
          if (p == current) on_cycle = true;
          if (on_cycle) in_cycle.insert(p);
        }
        break;
      }
      path.push_back(current);
      auto it = cohorts.find(current);
      current = it == cohorts.end() ? std::string() : it->second.parent;
    }
  }

  for (const auto& [name, spec] : cohorts) {
    if (spec.parent.empty() || in_cycle.count(name) > 0) continue;
    QuotaNode* node = cohort_node(name);
    QuotaNode* parent = cohort_node(spec.parent);
    node->parent_ = parent;
    parent->child_cohorts_.push_back(node);
  }

  for (const auto& [name, spec] : cluster_queues) {
    auto node = std::make_unique<QuotaNode>(QuotaNode::Kind::kClusterQueue, name);
    ApplyQuotas(spec.resource_groups, fr_index, *node);
    node->fair_weight_ = spec.fair_weight;
    bool cycle = false;
    if (!spec.cohort.empty()) {
      QuotaNode* parent = cohort_node(spec.cohort);
      node->parent_ = parent;
      parent->child_cqs_.push_back(node.get());
      // A cohort below a cycle is detached from it, so walk the spec chain to find it.
      std::string current = spec.cohort;
      std::set<std::string> seen;
      while (!current.empty() && seen.insert(current).second) {
        if (in_cycle.count(current) > 0) {
          cycle = true;
          break;
        }
        auto it = cohorts.find(current);
        current = it == cohorts.end() ? std::string() : it->second.parent;
      }
    }
    cq_in_cycle_[name] = cycle;
    cluster_queues_.emplace(name, std::move(node));
  }

  for (auto& [name, node] : cohorts_) {
    if (node->parent_ == nullptr) ComputeSubtreeQuota(node.get());
  }
  for (auto& [name, node] : cluster_queues_) {
    if (node->parent_ == nullptr) ComputeSubtreeQuota(node.get());
  }
}

void QuotaTree::ComputeSubtreeQuota(QuotaNode* node) {
  const FrId slots = node->SlotCount();
  for (FrId fr = 0; fr < slots; ++fr) {
    QuotaNode::FrSlot& slot = node->MutableSlot(fr);
    slot.subtree_quota = slot.defined ? slot.nominal : 0;
    slot.usage = 0;
  }
  node->subtree_keys_ = node->defined_;
  auto accumulate = [node](QuotaNode* child) {
    node->subtree_keys_.insert(node->subtree_keys_.end(), child->subtree_keys_.begin(),
                               child->subtree_keys_.end());
    const FrId child_slots = child->SlotCount();
    for (FrId fr = 0; fr < child_slots; ++fr) {
      const int64_t lent = SatSub(child->SubtreeQuota(fr), child->LocalQuota(fr));
      if (lent == 0) continue;  // SatAdd(mine, 0) is mine; no slot to grow
      int64_t& mine = node->MutableSlot(fr).subtree_quota;
      mine = SatAdd(mine, lent);
    }
  };
  for (QuotaNode* child : node->child_cohorts_) {
    ComputeSubtreeQuota(child);
    accumulate(child);
  }
  for (QuotaNode* child : node->child_cqs_) {
    ComputeSubtreeQuota(child);
    accumulate(child);
  }
  std::sort(node->subtree_keys_.begin(), node->subtree_keys_.end());
  node->subtree_keys_.erase(std::unique(node->subtree_keys_.begin(), node->subtree_keys_.end()),
                            node->subtree_keys_.end());
}

QuotaNode* QuotaTree::ClusterQueue(absl::string_view name) const {
  auto it = cluster_queues_.find(name);
  return it == cluster_queues_.end() ? nullptr : it->second.get();
}

QuotaNode* QuotaTree::Cohort(absl::string_view name) const {
  auto it = cohorts_.find(name);
  return it == cohorts_.end() ? nullptr : it->second.get();
}

bool QuotaTree::InCycle(absl::string_view cluster_queue) const {
  auto it = cq_in_cycle_.find(cluster_queue);
  return it != cq_in_cycle_.end() && it->second;
}

std::vector<QuotaNode*> QuotaTree::ClusterQueuesUnder(QuotaNode* root) const {
  std::vector<QuotaNode*> out;
  std::vector<QuotaNode*> stack = {root};
  while (!stack.empty()) {
    QuotaNode* node = stack.back();
    stack.pop_back();
    if (node->kind() == QuotaNode::Kind::kClusterQueue) {
      out.push_back(node);
      continue;
    }
    for (QuotaNode* c : node->child_cohorts()) stack.push_back(c);
    for (QuotaNode* c : node->child_cluster_queues()) stack.push_back(c);
  }
  std::sort(out.begin(), out.end(),
            [](const QuotaNode* a, const QuotaNode* b) { return a->name() < b->name(); });
  return out;
}

}  // namespace tollgate::core
