#include "core/quota_tree.h"

#include <algorithm>
#include <set>

#include "core/saturating.h"

namespace tollgate::core {

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

const QuotaLimits& QuotaNode::Limits(FrId fr) const {
  static const QuotaLimits kNone;
  return fr < static_cast<FrId>(limits_.size()) ? limits_[fr] : kNone;
}

std::vector<FrId> QuotaNode::ActiveResources() const {
  std::vector<FrId> out;
  const size_t n = std::max(subtree_quota_.size(), usage_.size());
  for (size_t i = 0; i < n; ++i) {
    const FrId fr = static_cast<FrId>(i);
    if (SubtreeQuota(fr) != 0 || Usage(fr) != 0 || Limits(fr).defined) out.push_back(fr);
  }
  return out;
}

int64_t QuotaNode::LocalQuota(FrId fr) const {
  const QuotaLimits& limits = Limits(fr);
  if (!limits.lending_limit.has_value()) return 0;
  return std::max<int64_t>(0, SatSub(SubtreeQuota(fr), *limits.lending_limit));
}

int64_t QuotaNode::LocalAvailable(FrId fr) const {
  return std::max<int64_t>(0, SatSub(LocalQuota(fr), Usage(fr)));
}

int64_t QuotaNode::Available(FrId fr) const {
  if (parent_ == nullptr) return SatSub(SubtreeQuota(fr), Usage(fr));
  int64_t parent_available = parent_->Available(fr);
  const QuotaLimits& limits = Limits(fr);
  if (limits.borrowing_limit.has_value()) {
    const int64_t local = LocalQuota(fr);
    const int64_t stored_in_parent = SatSub(SubtreeQuota(fr), local);
    const int64_t used_in_parent = std::max<int64_t>(0, SatSub(Usage(fr), local));
    const int64_t with_max_from_parent =
        SatAdd(SatSub(stored_in_parent, used_in_parent), *limits.borrowing_limit);
    parent_available = std::min(with_max_from_parent, parent_available);
  }
  return SatAdd(LocalAvailable(fr), parent_available);
}

int64_t QuotaNode::PotentialAvailable(FrId fr) const {
  if (parent_ == nullptr) return SubtreeQuota(fr);
  int64_t available = SatAdd(LocalQuota(fr), parent_->PotentialAvailable(fr));
  const QuotaLimits& limits = Limits(fr);
  if (limits.borrowing_limit.has_value()) {
    available = std::min(available, SatAdd(SubtreeQuota(fr), *limits.borrowing_limit));
  }
  return available;
}

bool QuotaNode::BorrowingWith(FrId fr, int64_t val) const {
  return SubtreeQuota(fr) < SatAdd(Usage(fr), val);
}

void QuotaNode::AddUsage(FrId fr, int64_t val) {
  const int64_t local_available = LocalAvailable(fr);
  int64_t& usage = Grow(usage_, fr);
  usage = SatAdd(usage, val);
  if (parent_ != nullptr && val > local_available) {
    parent_->AddUsage(fr, SatSub(val, local_available));
  }
}

void QuotaNode::RemoveUsage(FrId fr, int64_t val) {
  int64_t& usage = Grow(usage_, fr);
  const int64_t stored_in_parent = SatSub(usage, LocalQuota(fr));
  usage = SatSub(usage, val);
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

namespace {

void ApplyQuotas(const std::vector<ResourceGroupSpec>& groups, FlavorResourceIndex& fr_index,
                 std::vector<QuotaLimits>& limits, std::vector<FrId>& defined) {
  for (const ResourceGroupSpec& group : groups) {
    for (const FlavorQuotasSpec& flavor : group.flavors) {
      for (const ResourceQuotaSpec& quota : flavor.resources) {
        const FrId fr = fr_index.Intern(flavor.flavor, quota.resource);
        if (fr >= static_cast<FrId>(limits.size())) limits.resize(fr + 1);
        limits[fr] = QuotaLimits{true, quota.nominal, quota.borrowing_limit, quota.lending_limit};
        defined.push_back(fr);
      }
    }
  }
  std::sort(defined.begin(), defined.end());
  defined.erase(std::unique(defined.begin(), defined.end()), defined.end());
}

}  // namespace

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
    ApplyQuotas(spec.resource_groups, fr_index, node->limits_, node->defined_);
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
    ApplyQuotas(spec.resource_groups, fr_index, node->limits_, node->defined_);
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
  node->subtree_quota_.assign(node->limits_.size(), 0);
  node->usage_.clear();
  node->subtree_keys_ = node->defined_;
  for (FrId fr : node->defined_) node->subtree_quota_[fr] = node->limits_[fr].nominal;
  auto accumulate = [node](QuotaNode* child) {
    node->subtree_keys_.insert(node->subtree_keys_.end(), child->subtree_keys_.begin(),
                               child->subtree_keys_.end());
    for (size_t i = 0; i < child->subtree_quota_.size(); ++i) {
      const FrId fr = static_cast<FrId>(i);
      int64_t& mine = QuotaNode::Grow(node->subtree_quota_, fr);
      mine = SatAdd(mine, SatSub(child->SubtreeQuota(fr), child->LocalQuota(fr)));
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
