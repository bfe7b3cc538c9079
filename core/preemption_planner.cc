#include "core/preemption_planner.h"

#include <algorithm>

#include "core/saturating.h"

namespace tollgate::core {

void UsageSimulation::Apply(QuotaNode& node, FrId fr, int64_t delta) {
  if (delta >= 0) {
    node.AddUsage(fr, delta);
  } else {
    node.RemoveUsage(fr, -delta);
  }
  log_.push_back(Change{&node, fr, delta});
}

void UsageSimulation::RemoveWorkload(const Workload& wl) {
  if (!wl.status.admission.has_value()) return;
  ClusterQueueRuntime* cq = state_.mutable_cluster_queue(wl.status.admission->cluster_queue);
  if (cq == nullptr || cq->node == nullptr) return;
  for (const auto& [fr, value] : wl.quota_usage) Apply(*cq->node, fr, -value);
}

void UsageSimulation::AddWorkloadBack(const Workload& wl) {
  if (!wl.status.admission.has_value()) return;
  ClusterQueueRuntime* cq = state_.mutable_cluster_queue(wl.status.admission->cluster_queue);
  if (cq == nullptr || cq->node == nullptr) return;
  for (const auto& [fr, value] : wl.quota_usage) Apply(*cq->node, fr, value);
}

void UsageSimulation::AddUsage(QuotaNode& node, const std::map<FrId, int64_t>& usage) {
  for (const auto& [fr, value] : usage) Apply(node, fr, value);
}

void UsageSimulation::Restore() {
  // Undo in reverse so bubbling through lending limits retraces the same path.
  for (auto it = log_.rbegin(); it != log_.rend(); ++it) {
    if (it->delta >= 0) {
      it->node->RemoveUsage(it->fr, it->delta);
    } else {
      it->node->AddUsage(it->fr, -it->delta);
    }
  }
  log_.clear();
}

bool SatisfiesPreemptionPolicy(const ClusterState& state, const Workload& preemptor,
                               const Workload& candidate, PreemptionPolicy policy) {
  const bool lower_priority = preemptor.priority > candidate.priority;
  switch (policy) {
    case PreemptionPolicy::kNever:
      return false;
    case PreemptionPolicy::kLowerPriority:
      return lower_priority;
    case PreemptionPolicy::kLowerOrNewerEqualPriority:
      return lower_priority ||
             (preemptor.priority == candidate.priority &&
              state.QueueOrderTime(preemptor) < state.QueueOrderTime(candidate));
    case PreemptionPolicy::kAny:
      return true;
  }
  return false;
}

bool IsWithinNominalInResources(const QuotaNode& node, const std::vector<FrId>& frs) {
  for (FrId fr : frs) {
    if (node.SubtreeQuota(fr) < node.Usage(fr)) return false;
  }
  return true;
}

namespace {

bool UsesResources(const Workload& wl, const std::vector<FrId>& frs) {
  for (const auto& [fr, value] : wl.quota_usage) {
    if (std::find(frs.begin(), frs.end(), fr) != frs.end()) return true;
  }
  return false;
}

// Kueue's QuantitiesFitInQuota: whether `requests` fit in the node's subtree quota, and what
// is left to find higher up after the node's local capacity.
std::pair<bool, std::map<FrId, int64_t>> QuantitiesFitInQuota(
    const QuotaNode& node, const std::map<FrId, int64_t>& requests) {
  bool fits = true;
  std::map<FrId, int64_t> remaining;
  for (const auto& [fr, v] : requests) {
    if (node.SubtreeQuota(fr) < SatAdd(node.Usage(fr), v)) fits = false;
    remaining[fr] = std::max<int64_t>(0, SatSub(v, node.LocalAvailable(fr)));
  }
  return {fits, remaining};
}

}  // namespace

const char* PreemptionPlanner::ReasonOf(Variant variant) {
  switch (variant) {
    case Variant::kWithinClusterQueue:
      return "InClusterQueue";
    case Variant::kHierarchicalReclaim:
    case Variant::kReclaimWithoutBorrowing:
      return "InCohortReclamation";
    case Variant::kReclaimWhileBorrowing:
      return "InCohortReclaimWhileBorrowing";
    case Variant::kNever:
      break;
  }
  return "Unknown";
}

PreemptionPlanner::Variant PreemptionPlanner::Classify(const Context& ctx,
                                                       const Workload& candidate,
                                                       const ClusterQueueRuntime& candidate_cq,
                                                       bool hierarchical_advantage) const {
  if (candidate.spec.non_preemptible) return Variant::kNever;
  if (!UsesResources(candidate, ctx.frs)) return Variant::kNever;
  const bool same_queue = &candidate_cq == &ctx.cq;
  const PreemptionPolicy policy = same_queue ? ctx.cq.spec.preemption.within_cluster_queue
                                             : ctx.cq.spec.preemption.reclaim_within_cohort;
  if (!SatisfiesPreemptionPolicy(state_, ctx.preemptor, candidate, policy)) return Variant::kNever;
  if (same_queue) return Variant::kWithinClusterQueue;
  if (hierarchical_advantage) return Variant::kHierarchicalReclaim;
  const PreemptionSpec& spec = ctx.cq.spec.preemption;
  if (spec.borrow_within_cohort == BorrowWithinCohortPolicy::kNever) {
    return Variant::kReclaimWithoutBorrowing;
  }
  // Kueue's isAboveBorrowingThreshold.
  const bool above_threshold =
      candidate.priority >= ctx.preemptor.priority ||
      (spec.max_priority_threshold.has_value() &&
       candidate.priority > *spec.max_priority_threshold);
  return above_threshold ? Variant::kReclaimWithoutBorrowing : Variant::kReclaimWhileBorrowing;
}

void PreemptionPlanner::CollectFromQueue(const Context& ctx, const ClusterQueueRuntime& cq,
                                         const QuotaNode* lca, bool hierarchical_advantage,
                                         std::vector<Candidate>& out) const {
  for (WorkloadId id : cq.holding) {
    const Workload* wl = state_.workload(id);
    if (wl == nullptr) continue;
    const Variant variant = Classify(ctx, *wl, cq, hierarchical_advantage);
    if (variant == Variant::kNever) continue;
    out.push_back(Candidate{wl, &cq, lca, variant});
  }
}

void PreemptionPlanner::CollectInSubtree(const Context& ctx, const QuotaNode& current,
                                         const QuotaNode& subtree_root, const QuotaNode* skip,
                                         bool hierarchical_advantage,
                                         std::vector<Candidate>& out) const {
  for (const QuotaNode* child : current.child_cohorts()) {
    if (child == skip) continue;
    if (IsWithinNominalInResources(*child, ctx.frs)) continue;
    CollectInSubtree(ctx, *child, subtree_root, skip, hierarchical_advantage, out);
  }
  for (const QuotaNode* child : current.child_cluster_queues()) {
    if (child == ctx.cq.node) continue;
    if (IsWithinNominalInResources(*child, ctx.frs)) continue;
    const ClusterQueueRuntime* cq = state_.cluster_queue(child->name());
    if (cq == nullptr) continue;
    CollectFromQueue(ctx, *cq, &subtree_root, hierarchical_advantage, out);
  }
}

bool PreemptionPlanner::Before(const Context& ctx, const Candidate& a, const Candidate& b) const {
  const bool a_evicted = a.wl->status.state == WorkloadState::kEvicting;
  const bool b_evicted = b.wl->status.state == WorkloadState::kEvicting;
  if (a_evicted != b_evicted) return a_evicted;
  const bool a_own = a.cq == &ctx.cq;
  const bool b_own = b.cq == &ctx.cq;
  if (a_own != b_own) return !a_own;
  if (a.wl->priority != b.wl->priority) return a.wl->priority < b.wl->priority;
  if (a.wl->status.admission_time != b.wl->status.admission_time) {
    return a.wl->status.admission_time > b.wl->status.admission_time;
  }
  return a.wl->id < b.wl->id;
}

bool PreemptionPlanner::CandidateIsValid(const Context& ctx, const Candidate& c,
                                         bool borrowing) const {
  if (c.cq == &ctx.cq) return true;
  if (borrowing && c.variant == Variant::kReclaimWithoutBorrowing) return false;
  if (IsWithinNominalInResources(*c.cq->node, ctx.frs)) return false;
  for (const QuotaNode* node = c.cq->node->parent(); node != nullptr; node = node->parent()) {
    if (node == c.lca) break;
    if (IsWithinNominalInResources(*node, ctx.frs)) return false;
  }
  return true;
}

bool PreemptionPlanner::WorkloadFits(const Context& ctx, bool allow_borrowing) const {
  const QuotaNode& node = *ctx.cq.node;
  for (const auto& [fr, v] : ctx.usage) {
    if (!allow_borrowing && node.BorrowingWith(fr, v)) return false;
    if (v > std::max<int64_t>(0, node.Available(fr))) return false;
  }
  return true;
}

std::vector<PreemptionTarget> PreemptionPlanner::GetTargets(
    const Workload& preemptor, const ClusterQueueRuntime& cq,
    const std::map<FrId, int64_t>& usage, const std::vector<FrId>& frs_need_preemption) {
  Context ctx{preemptor, cq, usage, frs_need_preemption};
  std::vector<PreemptionTarget> targets = Classical(ctx);
  if (cq.spec.max_preempted_workloads > 0 &&
      static_cast<int32_t>(targets.size()) > cq.spec.max_preempted_workloads) {
    return {};
  }
  return targets;
}

std::vector<PreemptionTarget> PreemptionPlanner::Classical(const Context& ctx) {
  const PreemptionSpec& spec = ctx.cq.spec.preemption;
  std::vector<Candidate> same_queue;
  if (spec.within_cluster_queue != PreemptionPolicy::kNever) {
    CollectFromQueue(ctx, ctx.cq, nullptr, false, same_queue);
  }

  std::vector<Candidate> hierarchy;
  std::vector<Candidate> priority;
  const QuotaNode& cq_node = *ctx.cq.node;
  if (cq_node.HasParent() && spec.reclaim_within_cohort != PreemptionPolicy::kNever) {
    auto [advantage, remaining] = QuantitiesFitInQuota(cq_node, ctx.usage);
    const QuotaNode* previous_root = nullptr;
    for (const QuotaNode* current = cq_node.parent(); current != nullptr;
         current = current->parent()) {
      CollectInSubtree(ctx, *current, *current, previous_root, advantage,
                       advantage ? hierarchy : priority);
      auto [fits, next_remaining] = QuantitiesFitInQuota(*current, remaining);
      remaining = std::move(next_remaining);
      advantage = advantage || fits;
      previous_root = current;
    }
  }

  auto by_order = [&](const Candidate& a, const Candidate& b) { return Before(ctx, a, b); };
  std::sort(same_queue.begin(), same_queue.end(), by_order);
  std::sort(priority.begin(), priority.end(), by_order);
  std::sort(hierarchy.begin(), hierarchy.end(), by_order);

  std::vector<Candidate> all;
  all.reserve(same_queue.size() + priority.size() + hierarchy.size());
  auto evicted = [](const Candidate& c) { return c.wl->status.state == WorkloadState::kEvicting; };
  for (bool want_evicted : {true, false}) {
    for (const std::vector<Candidate>* list : {&hierarchy, &priority, &same_queue}) {
      for (const Candidate& c : *list) {
        if (evicted(c) == want_evicted) all.push_back(c);
      }
    }
  }

  const bool no_candidate_from_other_queues = hierarchy.empty() && priority.empty();
  const bool borrow_forbidden = spec.borrow_within_cohort == BorrowWithinCohortPolicy::kNever;
  bool under_nominal = true;
  for (FrId fr : ctx.frs) {
    if (cq_node.Limits(fr).nominal <= cq_node.Usage(fr)) under_nominal = false;
  }
  std::vector<bool> attempts;
  if (no_candidate_from_other_queues || (borrow_forbidden && !under_nominal)) {
    attempts = {true};
  } else if (borrow_forbidden && hierarchy.empty()) {
    attempts = {false, true};
  } else {
    attempts = {true, false};
  }

  for (bool borrowing : attempts) {
    UsageSimulation sim(state_);
    std::vector<const Candidate*> chosen;
    for (const Candidate& c : all) {
      if (!CandidateIsValid(ctx, c, borrowing)) continue;
      sim.RemoveWorkload(*c.wl);
      chosen.push_back(&c);
      if (!WorkloadFits(ctx, borrowing)) continue;
      // Add back, newest choice excluded, the ones the preemptor does not need.
      for (int i = static_cast<int>(chosen.size()) - 2; i >= 0; --i) {
        sim.AddWorkloadBack(*chosen[i]->wl);
        if (WorkloadFits(ctx, borrowing)) {
          chosen[i] = chosen.back();
          chosen.pop_back();
        } else {
          sim.RemoveWorkload(*chosen[i]->wl);
        }
      }
      std::vector<PreemptionTarget> targets;
      for (const Candidate* t : chosen) {
        targets.push_back(PreemptionTarget{t->wl->id, ReasonOf(t->variant)});
      }
      return targets;
    }
  }
  return {};
}

std::pair<PreemptionPossibility, int> PlannerPreemptionOracle::SimulatePreemption(
    FrId fr, int64_t quantity) {
  std::map<FrId, int64_t> usage = {{fr, quantity}};
  std::vector<PreemptionTarget> targets = planner_.GetTargets(preemptor_, cq_, usage, {fr});
  if (targets.empty()) {
    return {PreemptionPossibility::kNoCandidates,
            FindHeightOfLowestSubtreeThatFits(*cq_.node, fr, quantity).first};
  }
  int borrow_after = 0;
  {
    UsageSimulation sim(state_);
    for (const PreemptionTarget& t : targets) sim.RemoveWorkload(*state_.workload(t.id));
    borrow_after = FindHeightOfLowestSubtreeThatFits(*cq_.node, fr, quantity).first;
  }
  for (const PreemptionTarget& t : targets) {
    const Workload* wl = state_.workload(t.id);
    if (wl->status.admission.has_value() && wl->status.admission->cluster_queue == cq_.spec.name) {
      return {PreemptionPossibility::kPreempt, borrow_after};
    }
  }
  return {PreemptionPossibility::kReclaim, borrow_after};
}

}  // namespace tollgate::core
