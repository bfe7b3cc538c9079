#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "core/fair_sharing.h"
#include "core/held_workloads.h"
#include "core/preemption_planner.h"

// PreemptionPlanner's fair-sharing variant (Kueue's fair preemption): victims come from the
// ClusterQueues with the highest dominant resource share first, as long as the configured
// strategies say the preemptor's share stays below the victim's. The classical variant and the
// candidate rules both share are in preemption_planner.cc.

namespace tollgate::core {

namespace {

// One ClusterQueue's victim candidates in victim order, produced only as far as the search asks
// for them: a queue's held workloads are filed in Before's order for workloads of one queue
// (evicting first, then by priority, work at risk and id), so its candidates are that order
// filtered. A queue whose LocalQueues admission fair sharing reorders, and the second strategy's
// leftovers, come as a list instead.
class VictimCursor {
 public:
  using Accept = std::function<bool(const Workload&, const ClusterQueueRuntime&, PreemptionPolicy)>;

  VictimCursor(const ClusterState& state, const ClusterQueueRuntime& cq, PreemptionPolicy policy,
               const Accept& accept)
      : state_(&state), cq_(&cq), policy_(policy), accept_(&accept) {
    it_ = cq.holding.evicting().begin();
    end_ = cq.holding.evicting().end();
  }
  VictimCursor(const ClusterQueueRuntime& cq, std::vector<const Workload*> list)
      : cq_(&cq), list_(std::move(list)), from_list_(true) {}

  const ClusterQueueRuntime& cluster_queue() const { return *cq_; }
  bool empty() { return !Fill(); }
  const Workload* front() {
    Fill();
    return current_;
  }
  const Workload* Pop() {
    Fill();
    const Workload* wl = current_;
    current_ = nullptr;
    return wl;
  }
  // None of the remaining candidates is wanted.
  void Exhaust() {
    current_ = nullptr;
    done_ = true;
  }

 private:
  bool Fill() {
    if (current_ != nullptr) return true;
    if (done_) return false;
    if (from_list_) {
      if (next_ < list_.size()) {
        current_ = list_[next_++];
        return true;
      }
      done_ = true;
      return false;
    }
    while (true) {
      for (; it_ != end_; ++it_) {
        const Workload* wl = state_->workload(it_->id);
        if (wl != nullptr && (*accept_)(*wl, *cq_, policy_)) {
          current_ = wl;
          ++it_;
          return true;
        }
      }
      if (in_admitted_) break;
      in_admitted_ = true;
      it_ = cq_->holding.admitted().begin();
      end_ = cq_->holding.admitted().end();
    }
    done_ = true;
    return false;
  }

  const ClusterState* state_ = nullptr;
  const ClusterQueueRuntime* cq_;
  PreemptionPolicy policy_ = PreemptionPolicy::kNever;
  const Accept* accept_ = nullptr;
  HeldWorkloads::VictimOrder::const_iterator it_;
  HeldWorkloads::VictimOrder::const_iterator end_;
  bool in_admitted_ = false;
  std::vector<const Workload*> list_;
  size_t next_ = 0;
  bool from_list_ = false;
  const Workload* current_ = nullptr;
  bool done_ = false;
};

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
                     std::function<bool(const Candidate&, const Candidate&)> before)
      : index_(index), preemptor_cq_(preemptor_cq), before_(std::move(before)) {
    // One allocation for a cohort of a few queues instead of growing the map step by step.
    nodes_.reserve(16);
    for (const QuotaNode* a = preemptor_cq.parent(); a != nullptr; a = a->parent()) {
      nodes_[a].on_preemptor_path = true;
    }
  }

  void Add(const QuotaNode* cq, VictimCursor cursor) {
    nodes_[cq].cursor = static_cast<int>(cursors_.size());
    cursors_.push_back(std::move(cursor));
  }
  bool Any() {
    for (VictimCursor& cursor : cursors_) {
      if (!cursor.empty()) return true;
    }
    return false;
  }

  // The next ClusterQueue to consider, or null when every queue has been pruned.
  const QuotaNode* Next() {
    if (!preemptor_cq_.HasParent()) {
      if (Pruned(&preemptor_cq_) || !HasWorkload(&preemptor_cq_)) return nullptr;
      return &preemptor_cq_;
    }
    const QuotaNode* root = preemptor_cq_.parent();
    while (root->parent() != nullptr) root = root->parent();
    while (!Pruned(root)) {
      if (const QuotaNode* target = NextTarget(*root)) return target;
    }
    return nullptr;
  }

  bool HasWorkload(const QuotaNode* cq) {
    VictimCursor* cursor = CursorOf(cq);
    return cursor != nullptr && !cursor->empty();
  }
  Candidate Peek(const QuotaNode* cq) { return Candidate{CursorOf(cq)->front(), cq}; }
  Candidate Pop(const QuotaNode* cq) { return Candidate{CursorOf(cq)->Pop(), cq}; }
  void Exhaust(const QuotaNode* cq) { CursorOf(cq)->Exhaust(); }
  const ClusterQueueRuntime& RuntimeOf(const QuotaNode* cq) {
    return CursorOf(cq)->cluster_queue();
  }
  void Drop(const QuotaNode* cq) { nodes_[cq].pruned = true; }
  bool OnPreemptorPath(const QuotaNode* cohort) const {
    auto it = nodes_.find(cohort);
    return it != nodes_.end() && it->second.on_preemptor_path;
  }

 private:
  static DominantResourceShare Negative() {
    DominantResourceShare d;
    d.unweighted_ratio = -1;
    return d;
  }

  // What the search knows of a ClusterQueue or Cohort: one lookup for all of it.
  struct NodeState {
    int cursor = -1;
    bool pruned = false;
    bool on_preemptor_path = false;
  };

  bool Pruned(const QuotaNode* node) const {
    auto it = nodes_.find(node);
    return it != nodes_.end() && it->second.pruned;
  }
  VictimCursor* CursorOf(const QuotaNode* cq) {
    auto it = nodes_.find(cq);
    return it == nodes_.end() || it->second.cursor < 0 ? nullptr : &cursors_[it->second.cursor];
  }

  const QuotaNode* NextTarget(const QuotaNode& cohort) {
    const QuotaNode* best_cq = nullptr;
    DominantResourceShare best_cq_drs = Negative();
    for (const QuotaNode* cq : cohort.child_cluster_queues()) {
      auto it = nodes_.find(cq);
      // A queue without candidates is pruned whatever its share.
      if (it == nodes_.end() || it->second.pruned || it->second.cursor < 0 ||
          cursors_[it->second.cursor].empty()) {
        continue;
      }
      const DominantResourceShare drs = ComputeDrs(*cq, index_);
      const int cmp = CompareDrs(drs, best_cq_drs);
      if (!drs.borrowing && cq != &preemptor_cq_) {
        it->second.pruned = true;
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
      if (Pruned(child)) continue;
      const DominantResourceShare drs = ComputeDrs(*child, index_);
      if (!drs.borrowing && !OnPreemptorPath(child)) {
        nodes_[child].pruned = true;
      } else if (CompareDrs(drs, best_cohort_drs) >= 0) {
        best_cohort_drs = drs;
        best_cohort = child;
      }
    }
    if (best_cohort == nullptr && best_cq == nullptr) {
      nodes_[&cohort].pruned = true;
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
  std::vector<VictimCursor> cursors_;
  // Cohorts and ClusterQueues share one map: a node is either, never both.
  absl::flat_hash_map<const QuotaNode*, NodeState> nodes_;
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
  const QuotaNode& cq_node = *ctx.cq.node;
  const FlavorResourceIndex& index = state_.fr_index();
  auto before = [&](const FairTargetOrdering::Candidate& a,
                    const FairTargetOrdering::Candidate& b) {
    const ClusterQueueRuntime* acq = state_.cluster_queue(a.cq);
    const ClusterQueueRuntime* bcq = state_.cluster_queue(b.cq);
    return Before(ctx, Candidate{a.wl, acq, nullptr, Variant::kNever},
                  Candidate{b.wl, bcq, nullptr, Variant::kNever});
  };
  const VictimCursor::Accept accept = [&](const Workload& wl, const ClusterQueueRuntime& from,
                                          PreemptionPolicy policy) {
    return MayBeVictim(wl, from) && UsesResources(wl, ctx.frs) &&
           SatisfiesPreemptionPolicy(state_, ctx.preemptor, wl, policy);
  };

  // Only the order within each ClusterQueue matters to FairTargetOrdering, and the search takes
  // few candidates of most queues: each queue's candidates are read from its victim order as far
  // as they are asked for; a queue whose LocalQueues admission fair sharing reorders is sorted.
  FairTargetOrdering first(index, cq_node, before);
  auto add = [&](const ClusterQueueRuntime& from, PreemptionPolicy policy) {
    if (!state_.UsesAdmissionFairSharing(from.spec)) {
      first.Add(from.node, VictimCursor(state_, from, policy, accept));
      return;
    }
    std::vector<Candidate> sorted;
    for (const HeldWorkloads::VictimOrder* order :
         {&from.holding.evicting(), &from.holding.admitted()}) {
      for (const HeldWorkloads::VictimKey& key : *order) {
        const Workload* wl = state_.workload(key.id);
        if (wl != nullptr && accept(*wl, from, policy)) {
          sorted.push_back(Candidate{wl, &from, nullptr, Variant::kNever});
        }
      }
    }
    std::sort(sorted.begin(), sorted.end(),
              [&](const Candidate& a, const Candidate& b) { return Before(ctx, a, b); });
    std::vector<const Workload*> list;
    list.reserve(sorted.size());
    for (const Candidate& c : sorted) list.push_back(c.wl);
    first.Add(from.node, VictimCursor(from, std::move(list)));
  };
  if (spec.within_cluster_queue != PreemptionPolicy::kNever) {
    add(ctx.cq, spec.within_cluster_queue);
  }
  if (cq_node.HasParent() && spec.reclaim_within_cohort != PreemptionPolicy::kNever) {
    // Every ClusterQueue of the tree, walked in place: the order queues are added in does not
    // matter (each keeps its own cursor), so QuotaTree::ClusterQueuesUnder's sorted copy is not
    // needed on this path, taken for every head that must preempt.
    std::vector<const QuotaNode*> cohorts = {ctx.cq.node->Root()};
    while (!cohorts.empty()) {
      const QuotaNode* cohort = cohorts.back();
      cohorts.pop_back();
      for (const QuotaNode* child : cohort->child_cohorts()) cohorts.push_back(child);
      for (const QuotaNode* other : cohort->child_cluster_queues()) {
        if (other == ctx.cq.node) continue;
        bool borrowing = false;
        for (FrId fr : ctx.frs) borrowing = borrowing || other->Borrowing(fr);
        if (!borrowing) continue;
        const ClusterQueueRuntime* other_cq = state_.cluster_queue(other);
        if (other_cq == nullptr || !IsPreemptionTarget(*other_cq)) continue;
        add(*other_cq, spec.reclaim_within_cohort);
      }
    }
  }
  if (!first.Any()) return {};

  // Kueue's default is both strategies, LessThanOrEqualToFinalShare first. Read in place: the
  // search runs for every head that must preempt.
  const std::vector<FairSharingStrategy>& configured =
      state_.config().fair_sharing.preemption_strategies;
  const FairSharingStrategy first_strategy =
      configured.empty() ? FairSharingStrategy::kLessThanOrEqualToFinalShare : configured[0];
  const bool second_strategy = configured.empty() || configured.size() > 1;
  auto passes = [](FairSharingStrategy strategy, const DominantResourceShare& preemptor_new,
                   const DominantResourceShare& target_old,
                   const DominantResourceShare& target_new) {
    if (strategy == FairSharingStrategy::kLessThanOrEqualToFinalShare) {
      return CompareDrs(preemptor_new, target_new) <= 0;
    }
    return CompareDrs(preemptor_new, target_old) < 0;
  };

  UsageSimulation sim(state_);
  std::vector<PreemptionTarget> targets;
  std::vector<const Workload*> removed;
  auto take = [&](const Workload* wl, const char* reason) {
    sim.RemoveWorkload(*wl);
    removed.push_back(wl);
    targets.push_back(PreemptionTarget{wl->id, reason});
  };
  // The candidates the first strategy did not take, for the second. The second takes at most
  // the first of each queue, so only that one is kept.
  std::vector<std::pair<const QuotaNode*, const Workload*>> retry;
  absl::flat_hash_set<const QuotaNode*> retried;
  auto keep_for_retry = [&](const QuotaNode* cq, const Workload* wl) {
    if (retried.insert(cq).second) retry.emplace_back(cq, wl);
  };
  bool fits = false;
  {
    UsageSimulation preemptor_usage(state_);
    preemptor_usage.AddUsage(*ctx.cq.node, ctx.usage);

    bool preemptor_within_nominal = true;
    for (FrId fr : ctx.frs) {
      if (cq_node.Borrowing(fr)) preemptor_within_nominal = false;
    }

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
        keep_for_retry(target_cq, first.Pop(target_cq).wl);
        first.Exhaust(target_cq);
        continue;
      }
      // Nothing changes between the candidates of one queue until one is taken, and the target's
      // share after taking one depends only on the quota it holds: the strategy is asked once
      // per distinct usage. A workload without an admission frees nothing, so its answer is the
      // share as it is.
      const ClusterQueueRuntime& target_rt = first.RuntimeOf(target_cq);
      const bool unchanged_passes = passes(first_strategy, preemptor_new, target_old, target_old);
      std::vector<std::pair<const HeldWorkloads::QuotaUsage*, bool>> answers;
      auto passes_without = [&](const HeldWorkloads::QuotaUsage& usage) {
        for (const auto& [known, ok] : answers) {
          if (*known == usage) return ok;
        }
        DominantResourceShare target_new;
        {
          UsageSimulation removal(state_);
          removal.RemoveQuotaUsage(*target_rt.node, usage);
          target_new = ComputeDrs(*target_lca, index);
        }
        const bool ok = passes(first_strategy, preemptor_new, target_old, target_new);
        answers.emplace_back(&usage, ok);
        return ok;
      };
      // The queue's usage counts cover every candidate: when none passes, no candidate can, and
      // only the first is kept for the second strategy.
      const HeldWorkloads::UsageCounts& usages = target_rt.holding.usages();
      if (!unchanged_passes && target_rt.holding.usages_known()) {
        bool any = false;
        for (const auto& [usage, count] : usages) {
          if (passes_without(usage)) {
            any = true;
            break;
          }
        }
        if (!any) {
          keep_for_retry(target_cq, first.Pop(target_cq).wl);
          first.Exhaust(target_cq);
          continue;
        }
      }
      while (first.HasWorkload(target_cq)) {
        const FairTargetOrdering::Candidate c = first.Pop(target_cq);
        const bool ok = c.wl->status.admission.has_value() ? passes_without(c.wl->quota_usage)
                                                           : unchanged_passes;
        if (ok) {
          take(c.wl, "InCohortFairSharing");
          fits = FitsForFairSharing(ctx);
          break;
        }
        keep_for_retry(target_cq, c.wl);
      }
    }
    if (!fits && second_strategy) {
      FairTargetOrdering second(index, cq_node, before);
      for (const auto& [cq, wl] : retry) {
        second.Add(cq, VictimCursor(*state_.cluster_queue(cq), {wl}));
      }
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
