#include <algorithm>
#include <cmath>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "core/fair_sharing.h"
#include "core/held_workloads.h"
#include "core/preemption_planner.h"

// PreemptionPlanner's fair-sharing variant (Kueue's fair preemption): victims come from the
// ClusterQueues with the highest dominant resource share first, as long as the configured
// strategies say the preemptor's share stays below the victim's. The classical variant and the
// candidate rules both share are in preemption_planner.cc.

namespace tollgate::core {

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
  // Only the order within each ClusterQueue matters to FairTargetOrdering. A queue's held
  // workloads are already filed in Before's order (evicting first, then by priority, work at
  // risk and id), so walking those orders replaces sorting every candidate of the cohort for each
  // preemptor; a queue whose LocalQueues admission fair sharing reorders is sorted instead.
  std::vector<Candidate> candidates;
  auto by_order = [&](const Candidate& a, const Candidate& b) { return Before(ctx, a, b); };
  auto collect = [&](const ClusterQueueRuntime& from, PreemptionPolicy policy, Variant variant) {
    const size_t first = candidates.size();
    for (const HeldWorkloads::VictimOrder* order :
         {&from.holding.evicting(), &from.holding.admitted()}) {
      for (const HeldWorkloads::VictimKey& key : *order) {
        const Workload* wl = state_.workload(key.id);
        if (wl == nullptr || !MayBeVictim(*wl, from) || !UsesResources(*wl, ctx.frs)) continue;
        if (!SatisfiesPreemptionPolicy(state_, ctx.preemptor, *wl, policy)) continue;
        candidates.push_back(Candidate{wl, &from, nullptr, variant});
      }
    }
    if (state_.UsesAdmissionFairSharing(from.spec)) {
      std::sort(candidates.begin() + static_cast<std::ptrdiff_t>(first), candidates.end(),
                by_order);
    }
  };
  if (spec.within_cluster_queue != PreemptionPolicy::kNever) {
    collect(ctx.cq, spec.within_cluster_queue, Variant::kWithinClusterQueue);
  }
  const QuotaNode& cq_node = *ctx.cq.node;
  if (cq_node.HasParent() && spec.reclaim_within_cohort != PreemptionPolicy::kNever) {
    QuotaNode* root = ctx.cq.node->Root();
    for (QuotaNode* other : state_.tree().ClusterQueuesUnder(root)) {
      if (other == ctx.cq.node) continue;
      bool borrowing = false;
      for (FrId fr : ctx.frs) borrowing = borrowing || other->Borrowing(fr);
      if (!borrowing) continue;
      const ClusterQueueRuntime* other_cq = state_.cluster_queue(other);
      if (other_cq == nullptr || !IsPreemptionTarget(*other_cq)) continue;
      collect(*other_cq, spec.reclaim_within_cohort, Variant::kReclaimWhileBorrowing);
    }
  }
  if (candidates.empty()) return {};

  std::vector<FairTargetOrdering::Candidate> ordered;
  for (const Candidate& c : candidates) ordered.push_back({c.wl, c.cq->node});
  auto before = [&](const FairTargetOrdering::Candidate& a,
                    const FairTargetOrdering::Candidate& b) {
    const ClusterQueueRuntime* acq = state_.cluster_queue(a.cq);
    const ClusterQueueRuntime* bcq = state_.cluster_queue(b.cq);
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
      // Nothing changes between the candidates of one queue until one is taken, so a candidate
      // using exactly what one that failed the strategy used fails it too.
      std::vector<const std::vector<std::pair<int32_t, int64_t>>*> failed_usages;
      while (first.HasWorkload(target_cq)) {
        FairTargetOrdering::Candidate c = first.Pop(target_cq);
        const bool admitted = c.wl->status.admission.has_value();
        if (admitted &&
            std::any_of(failed_usages.begin(), failed_usages.end(),
                        [&](const auto* usage) { return *usage == c.wl->quota_usage; })) {
          retry.push_back(c);
          continue;
        }
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
        if (admitted) failed_usages.push_back(&c.wl->quota_usage);
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

}  // namespace tollgate::core
