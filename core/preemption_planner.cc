#include "core/preemption_planner.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <set>

#include "core/fair_sharing.h"
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

void UsageSimulation::RemoveUsage(QuotaNode& node, const std::map<FrId, int64_t>& usage) {
  for (const auto& [fr, value] : usage) Apply(node, fr, -value);
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
      return lower_priority || (preemptor.priority == candidate.priority &&
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
  const bool above_threshold = candidate.priority >= ctx.preemptor.priority ||
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
  // Admission fair sharing: within one ClusterQueue, the LocalQueue that used more gives first.
  if (a.cq == b.cq && a.wl->spec.queue_name != b.wl->spec.queue_name &&
      state_.UsesAdmissionFairSharing(a.cq->spec)) {
    const double ua = state_.LocalQueueFairUsage(a.wl->spec.namespace_name, a.wl->spec.queue_name);
    const double ub = state_.LocalQueueFairUsage(b.wl->spec.namespace_name, b.wl->spec.queue_name);
    if (ua != ub) return ua > ub;
  }
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
    const Workload& preemptor, const ClusterQueueRuntime& cq, const std::map<FrId, int64_t>& usage,
    const std::vector<FrId>& frs_need_preemption) {
  Context ctx{preemptor, cq, usage, frs_need_preemption};
  std::vector<PreemptionTarget> targets =
      state_.config().fair_sharing.enable ? Fair(ctx) : Classical(ctx);
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

namespace {

// Kueue's TargetClusterQueueOrdering: yields the ClusterQueue to take the next victim from,
// always descending towards the child with the highest dominant resource share, pruning
// ClusterQueues and Cohorts that do not borrow (the preemptor's own queue and path excepted).
class FairTargetOrdering {
 public:
  struct Candidate {
    const Workload* wl;
    const QuotaNode* cq;
  };

  FairTargetOrdering(const FlavorResourceIndex& index, const QuotaNode& preemptor_cq,
                     const std::vector<Candidate>& candidates,
                     std::function<bool(const Candidate&, const Candidate&)> before)
      : index_(index), preemptor_cq_(preemptor_cq), before_(std::move(before)) {
    for (const QuotaNode* a = preemptor_cq.parent(); a != nullptr; a = a->parent()) {
      preemptor_path_.insert(a);
    }
    for (const Candidate& c : candidates) targets_[c.cq].push_back(c);
  }

  // The next ClusterQueue to consider, or null when every queue has been pruned.
  const QuotaNode* Next() {
    if (!preemptor_cq_.HasParent()) {
      if (pruned_cqs_.count(&preemptor_cq_) > 0 || !HasWorkload(&preemptor_cq_)) return nullptr;
      return &preemptor_cq_;
    }
    const QuotaNode* root = preemptor_cq_.parent();
    while (root->parent() != nullptr) root = root->parent();
    while (pruned_cohorts_.count(root) == 0) {
      if (const QuotaNode* target = NextTarget(*root)) return target;
    }
    return nullptr;
  }

  bool HasWorkload(const QuotaNode* cq) const {
    auto it = targets_.find(cq);
    return it != targets_.end() && !it->second.empty();
  }
  const Candidate& Peek(const QuotaNode* cq) const { return targets_.at(cq).front(); }
  Candidate Pop(const QuotaNode* cq) {
    Candidate c = targets_[cq].front();
    targets_[cq].pop_front();
    return c;
  }
  void Drop(const QuotaNode* cq) { pruned_cqs_.insert(cq); }
  bool OnPreemptorPath(const QuotaNode* cohort) const { return preemptor_path_.count(cohort) > 0; }

 private:
  static DominantResourceShare Negative() {
    DominantResourceShare d;
    d.unweighted_ratio = -1;
    return d;
  }

  const QuotaNode* NextTarget(const QuotaNode& cohort) {
    const QuotaNode* best_cq = nullptr;
    DominantResourceShare best_cq_drs = Negative();
    for (const QuotaNode* cq : cohort.child_cluster_queues()) {
      if (pruned_cqs_.count(cq) > 0) continue;
      const DominantResourceShare drs = ComputeDrs(*cq, index_);
      const int cmp = CompareDrs(drs, best_cq_drs);
      if ((!drs.borrowing && cq != &preemptor_cq_) || !HasWorkload(cq)) {
        pruned_cqs_.insert(cq);
      } else if (cmp == 0 && best_cq != nullptr) {
        if (before_(Peek(cq), Peek(best_cq))) best_cq = cq;
      } else if (cmp > 0) {
        best_cq_drs = drs;
        best_cq = cq;
      }
    }
    const QuotaNode* best_cohort = nullptr;
    DominantResourceShare best_cohort_drs = Negative();
    for (const QuotaNode* child : cohort.child_cohorts()) {
      if (pruned_cohorts_.count(child) > 0) continue;
      const DominantResourceShare drs = ComputeDrs(*child, index_);
      if (!drs.borrowing && !OnPreemptorPath(child)) {
        pruned_cohorts_.insert(child);
      } else if (CompareDrs(drs, best_cohort_drs) >= 0) {
        best_cohort_drs = drs;
        best_cohort = child;
      }
    }
    if (best_cohort == nullptr && best_cq == nullptr) {
      pruned_cohorts_.insert(&cohort);
      return nullptr;
    }
    if (best_cohort != nullptr && CompareDrs(best_cohort_drs, best_cq_drs) >= 0) {
      return NextTarget(*best_cohort);
    }
    return best_cq;
  }

  const FlavorResourceIndex& index_;
  const QuotaNode& preemptor_cq_;
  std::function<bool(const Candidate&, const Candidate&)> before_;
  std::set<const QuotaNode*> preemptor_path_;
  std::map<const QuotaNode*, std::deque<Candidate>> targets_;
  std::set<const QuotaNode*> pruned_cqs_;
  std::set<const QuotaNode*> pruned_cohorts_;
};

// The nodes just below the lowest common ancestor of the preemptor's and the target's queue
// (Kueue's "almost LCAs"); their shares are what the fair-sharing strategies compare.
std::pair<const QuotaNode*, const QuotaNode*> AlmostLcas(const QuotaNode& preemptor,
                                                         const QuotaNode& target,
                                                         const FairTargetOrdering& ordering) {
  const QuotaNode* lca = nullptr;
  for (const QuotaNode* a = target.parent(); a != nullptr; a = a->parent()) {
    if (ordering.OnPreemptorPath(a)) {
      lca = a;
      break;
    }
  }
  auto below = [lca](const QuotaNode& cq) {
    const QuotaNode* node = &cq;
    while (node->parent() != nullptr && node->parent() != lca) node = node->parent();
    return node;
  };
  return {below(preemptor), below(target)};
}

}  // namespace

bool PreemptionPlanner::FitsForFairSharing(const Context& ctx) {
  // The preemptor's own usage is simulated while shares are computed; take it out to ask
  // whether the workload itself would now fit.
  UsageSimulation without_preemptor(state_);
  without_preemptor.RemoveUsage(*ctx.cq.node, ctx.usage);
  return WorkloadFits(ctx, true);
}

std::vector<PreemptionTarget> PreemptionPlanner::Fair(const Context& ctx) {
  const PreemptionSpec& spec = ctx.cq.spec.preemption;
  std::vector<Candidate> candidates;
  if (spec.within_cluster_queue != PreemptionPolicy::kNever) {
    for (WorkloadId id : ctx.cq.holding) {
      const Workload* wl = state_.workload(id);
      if (wl == nullptr || wl->spec.non_preemptible || !UsesResources(*wl, ctx.frs)) continue;
      if (!SatisfiesPreemptionPolicy(state_, ctx.preemptor, *wl, spec.within_cluster_queue)) {
        continue;
      }
      candidates.push_back(Candidate{wl, &ctx.cq, nullptr, Variant::kWithinClusterQueue});
    }
  }
  const QuotaNode& cq_node = *ctx.cq.node;
  if (cq_node.HasParent() && spec.reclaim_within_cohort != PreemptionPolicy::kNever) {
    QuotaNode* root = ctx.cq.node->Root();
    for (QuotaNode* other : state_.tree().ClusterQueuesUnder(root)) {
      if (other == ctx.cq.node) continue;
      bool borrowing = false;
      for (FrId fr : ctx.frs) borrowing = borrowing || other->Borrowing(fr);
      if (!borrowing) continue;
      const ClusterQueueRuntime* other_cq = state_.cluster_queue(other->name());
      if (other_cq == nullptr) continue;
      for (WorkloadId id : other_cq->holding) {
        const Workload* wl = state_.workload(id);
        if (wl == nullptr || wl->spec.non_preemptible || !UsesResources(*wl, ctx.frs)) continue;
        if (!SatisfiesPreemptionPolicy(state_, ctx.preemptor, *wl, spec.reclaim_within_cohort)) {
          continue;
        }
        candidates.push_back(Candidate{wl, other_cq, nullptr, Variant::kReclaimWhileBorrowing});
      }
    }
  }
  if (candidates.empty()) return {};
  auto by_order = [&](const Candidate& a, const Candidate& b) { return Before(ctx, a, b); };
  std::sort(candidates.begin(), candidates.end(), by_order);

  std::vector<FairTargetOrdering::Candidate> ordered;
  for (const Candidate& c : candidates) ordered.push_back({c.wl, c.cq->node});
  auto before = [&](const FairTargetOrdering::Candidate& a,
                    const FairTargetOrdering::Candidate& b) {
    const ClusterQueueRuntime* acq = state_.cluster_queue(a.cq->name());
    const ClusterQueueRuntime* bcq = state_.cluster_queue(b.cq->name());
    return Before(ctx, Candidate{a.wl, acq, nullptr, Variant::kNever},
                  Candidate{b.wl, bcq, nullptr, Variant::kNever});
  };

  std::vector<FairSharingStrategy> strategies = state_.config().fair_sharing.preemption_strategies;
  if (strategies.empty()) {
    strategies = {FairSharingStrategy::kLessThanOrEqualToFinalShare,
                  FairSharingStrategy::kLessThanInitialShare};
  }
  auto passes = [](FairSharingStrategy strategy, const DominantResourceShare& preemptor_new,
                   const DominantResourceShare& target_old,
                   const DominantResourceShare& target_new) {
    if (strategy == FairSharingStrategy::kLessThanOrEqualToFinalShare) {
      return CompareDrs(preemptor_new, target_new) <= 0;
    }
    return CompareDrs(preemptor_new, target_old) < 0;
  };
  const FlavorResourceIndex& index = state_.fr_index();

  UsageSimulation sim(state_);
  std::vector<PreemptionTarget> targets;
  std::vector<const Workload*> removed;
  auto take = [&](const Workload* wl, const char* reason) {
    sim.RemoveWorkload(*wl);
    removed.push_back(wl);
    targets.push_back(PreemptionTarget{wl->id, reason});
  };
  bool fits = false;
  {
    UsageSimulation preemptor_usage(state_);
    preemptor_usage.AddUsage(*ctx.cq.node, ctx.usage);

    bool preemptor_within_nominal = true;
    for (FrId fr : ctx.frs) {
      if (cq_node.Borrowing(fr)) preemptor_within_nominal = false;
    }

    std::vector<FairTargetOrdering::Candidate> retry;
    FairTargetOrdering first(index, cq_node, ordered, before);
    while (!fits) {
      const QuotaNode* target_cq = first.Next();
      if (target_cq == nullptr) break;
      if (target_cq == &cq_node) {
        take(first.Pop(target_cq).wl, "InClusterQueue");
        fits = FitsForFairSharing(ctx);
        continue;
      }
      if (preemptor_within_nominal) {
        take(first.Pop(target_cq).wl, "InCohortReclamation");
        fits = FitsForFairSharing(ctx);
        continue;
      }
      auto [preemptor_lca, target_lca] = AlmostLcas(cq_node, *target_cq, first);
      const DominantResourceShare preemptor_new = ComputeDrs(*preemptor_lca, index);
      const DominantResourceShare target_old = ComputeDrs(*target_lca, index);
      if (std::isinf(preemptor_new.PreciseWeightedShare()) &&
          !std::isinf(target_old.PreciseWeightedShare())) {
        while (first.HasWorkload(target_cq)) retry.push_back(first.Pop(target_cq));
        continue;
      }
      while (first.HasWorkload(target_cq)) {
        FairTargetOrdering::Candidate c = first.Pop(target_cq);
        DominantResourceShare target_new;
        {
          UsageSimulation removal(state_);
          removal.RemoveWorkload(*c.wl);
          target_new = ComputeDrs(*target_lca, index);
        }
        if (passes(strategies[0], preemptor_new, target_old, target_new)) {
          take(c.wl, "InCohortFairSharing");
          fits = FitsForFairSharing(ctx);
          break;
        }
        retry.push_back(c);
      }
    }
    if (!fits && strategies.size() > 1) {
      FairTargetOrdering second(index, cq_node, retry, before);
      while (!fits) {
        const QuotaNode* target_cq = second.Next();
        if (target_cq == nullptr) break;
        auto [preemptor_lca, target_lca] = AlmostLcas(cq_node, *target_cq, second);
        const DominantResourceShare preemptor_new = ComputeDrs(*preemptor_lca, index);
        const DominantResourceShare target_old = ComputeDrs(*target_lca, index);
        FairTargetOrdering::Candidate c = second.Pop(target_cq);
        if (passes(FairSharingStrategy::kLessThanInitialShare, preemptor_new, target_old,
                   DominantResourceShare())) {
          take(c.wl, "InCohortFairSharing");
          fits = FitsForFairSharing(ctx);
        }
        second.Drop(target_cq);
      }
    }
  }
  if (!fits) return {};
  // Add back, newest choice excluded, the victims the preemptor does not need.
  for (int i = static_cast<int>(removed.size()) - 2; i >= 0; --i) {
    sim.AddWorkloadBack(*removed[i]);
    if (WorkloadFits(ctx, true)) {
      removed[i] = removed.back();
      removed.pop_back();
      targets[i] = targets.back();
      targets.pop_back();
    } else {
      sim.RemoveWorkload(*removed[i]);
    }
  }
  return targets;
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
