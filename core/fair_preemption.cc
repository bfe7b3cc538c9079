#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/container/node_hash_map.h"
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

// Positions of a search's tree nodes in a list. A search runs for every head that must preempt
// and a tree usually has a few nodes, so while the list is short a node is found by a scan,
// without allocating or hashing; past kScanLimit nodes (a cohort of hundreds of queues) a hash
// index takes over, so no lookup costs a scan of the whole tree.
class NodePositions {
 public:
  static constexpr size_t kScanLimit = 16;

  // The position of `node`, or -1 when it was not added.
  int Find(const QuotaNode* node) const {
    if (!hashed_.empty()) {
      auto it = hashed_.find(node);
      return it == hashed_.end() ? -1 : it->second;
    }
    for (size_t i = 0; i < nodes_.size(); ++i) {
      if (nodes_[i] == node) return static_cast<int>(i);
    }
    return -1;
  }
  // Gives `node` (not added yet) the next position, which it returns.
  int Add(const QuotaNode* node) {
    const int position = static_cast<int>(nodes_.size());
    nodes_.push_back(node);
    if (!hashed_.empty()) {
      hashed_.emplace(node, position);
    } else if (nodes_.size() > kScanLimit) {
      for (size_t i = 0; i < nodes_.size(); ++i) hashed_.emplace(nodes_[i], static_cast<int>(i));
    }
    return position;
  }

 private:
  absl::InlinedVector<const QuotaNode*, kScanLimit> nodes_;
  absl::flat_hash_map<const QuotaNode*, int> hashed_;
};

// The shares of the cohort tree's nodes as the search's simulated usage stands. Within one
// search the usage changes only when a victim is taken (the per-usage share simulations and the
// fit checks undo theirs before the next step), but the ordering asks every queue's share at
// every step: each share is computed once per taken victim instead. The entries are one list
// reserved for the whole tree, which never moves them: the ordering holds references to shares
// while it asks for others.
class ShareCache {
 public:
  ShareCache(const FlavorResourceIndex& index, const QuotaNode& any_node) : index_(index) {
    size_t nodes = 0;
    absl::InlinedVector<const QuotaNode*, 8> pending = {any_node.Root()};
    while (!pending.empty()) {
      const QuotaNode* node = pending.back();
      pending.pop_back();
      nodes += 1 + node->child_cluster_queues().size();
      for (const QuotaNode* child : node->child_cohorts()) pending.push_back(child);
    }
    entries_.reserve(nodes);
  }

  const DominantResourceShare& Of(const QuotaNode& node) {
    Entry* entry;
    if (const int position = positions_.Find(&node); position >= 0) {
      entry = &entries_[position];
    } else if (entries_.size() < entries_.capacity()) {
      positions_.Add(&node);
      entry = &entries_.emplace_back();
    } else {
      // Every node of the tree fits; another one (none is asked for) goes where nothing moves.
      entry = &overflow_[&node];
    }
    if (entry->generation != generation_) {
      entry->drs = ComputeDrs(node, index_);
      entry->generation = generation_;
    }
    return entry->drs;
  }
  // The simulated usage changed.
  void Invalidate() { ++generation_; }

 private:
  struct Entry {
    int64_t generation = -1;
    DominantResourceShare drs;
  };
  const FlavorResourceIndex& index_;
  int64_t generation_ = 0;
  std::vector<Entry> entries_;
  NodePositions positions_;
  absl::node_hash_map<const QuotaNode*, Entry> overflow_;
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

  FairTargetOrdering(ShareCache& shares, const QuotaNode& preemptor_cq,
                     std::function<bool(const Candidate&, const Candidate&)> before)
      : shares_(shares), preemptor_cq_(preemptor_cq), before_(std::move(before)) {
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
    const NodeState* state = nodes_.find(cohort);
    return state != nullptr && state->on_preemptor_path;
  }

 private:
  static const DominantResourceShare& Negative() {
    static const DominantResourceShare* const negative = [] {
      auto* d = new DominantResourceShare();
      d->unweighted_ratio = -1;
      return d;
    }();
    return *negative;
  }

  // What the search knows of a ClusterQueue or Cohort: one lookup for all of it.
  struct NodeState {
    int cursor = -1;
    bool pruned = false;
    bool on_preemptor_path = false;
  };
  // Hashed: NextTarget looks up every child queue of a cohort at every step, and with many
  // borrowing queues a list searched in place made that quadratic in the cohort's size
  // (BM_FairVictimSearch/cqs:100: 2x slower).
  class NodeStates {
   public:
    const NodeState* find(const QuotaNode* node) const {
      auto it = states_.find(node);
      return it == states_.end() ? nullptr : &it->second;
    }
    NodeState* find(const QuotaNode* node) {
      return const_cast<NodeState*>(std::as_const(*this).find(node));
    }
    NodeState& operator[](const QuotaNode* node) { return states_[node]; }

   private:
    absl::flat_hash_map<const QuotaNode*, NodeState> states_;
  };

  bool Pruned(const QuotaNode* node) const {
    const NodeState* state = nodes_.find(node);
    return state != nullptr && state->pruned;
  }
  VictimCursor* CursorOf(const QuotaNode* cq) {
    NodeState* state = nodes_.find(cq);
    return state == nullptr || state->cursor < 0 ? nullptr : &cursors_[state->cursor];
  }

  const QuotaNode* NextTarget(const QuotaNode& cohort) {
    const QuotaNode* best_cq = nullptr;
    const DominantResourceShare* best_cq_drs = &Negative();
    for (const QuotaNode* cq : cohort.child_cluster_queues()) {
      NodeState* state = nodes_.find(cq);
      // A queue without candidates is pruned whatever its share.
      if (state == nullptr || state->pruned || state->cursor < 0 ||
          cursors_[state->cursor].empty()) {
        continue;
      }
      const DominantResourceShare& drs = shares_.Of(*cq);
      const int cmp = CompareDrs(drs, *best_cq_drs);
      if (!drs.borrowing && cq != &preemptor_cq_) {
        state->pruned = true;
      } else if (cmp == 0 && best_cq != nullptr) {
        if (before_(Peek(cq), Peek(best_cq))) best_cq = cq;
      } else if (cmp > 0) {
        best_cq_drs = &drs;
        best_cq = cq;
      }
    }
    const QuotaNode* best_cohort = nullptr;
    const DominantResourceShare* best_cohort_drs = &Negative();
    for (const QuotaNode* child : cohort.child_cohorts()) {
      if (Pruned(child)) continue;
      const DominantResourceShare& drs = shares_.Of(*child);
      if (!drs.borrowing && !OnPreemptorPath(child)) {
        nodes_[child].pruned = true;
      } else if (CompareDrs(drs, *best_cohort_drs) >= 0) {
        best_cohort_drs = &drs;
        best_cohort = child;
      }
    }
    if (best_cohort == nullptr && best_cq == nullptr) {
      nodes_[&cohort].pruned = true;
      return nullptr;
    }
    if (best_cohort != nullptr && CompareDrs(*best_cohort_drs, *best_cq_drs) >= 0) {
      return NextTarget(*best_cohort);
    }
    return best_cq;
  }

  ShareCache& shares_;
  const QuotaNode& preemptor_cq_;
  std::function<bool(const Candidate&, const Candidate&)> before_;
  absl::InlinedVector<VictimCursor, 16> cursors_;
  // Cohorts and ClusterQueues share one list: a node is either, never both.
  NodeStates nodes_;
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
  ShareCache shares(index, cq_node);
  FairTargetOrdering first(shares, cq_node, before);
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
    absl::InlinedVector<const QuotaNode*, 8> cohorts = {ctx.cq.node->Root()};
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
    shares.Invalidate();
    removed.push_back(wl);
    targets.push_back(PreemptionTarget{wl->id, reason});
  };
  // The candidates the first strategy did not take, for the second. The second takes at most
  // the first of each queue, so only that one is kept.
  absl::InlinedVector<std::pair<const QuotaNode*, const Workload*>, 16> retry;
  auto keep_for_retry = [&](const QuotaNode* cq, const Workload* wl) {
    for (const auto& [kept, unused] : retry) {
      if (kept == cq) return;
    }
    retry.emplace_back(cq, wl);
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
      const DominantResourceShare& preemptor_new = shares.Of(*preemptor_lca);
      const DominantResourceShare& target_old = shares.Of(*target_lca);
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
      absl::InlinedVector<std::pair<const HeldWorkloads::QuotaUsage*, bool>, 8> answers;
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
      FairTargetOrdering second(shares, cq_node, before);
      for (const auto& [cq, wl] : retry) {
        second.Add(cq, VictimCursor(*state_.cluster_queue(cq), {wl}));
      }
      while (!fits) {
        const QuotaNode* target_cq = second.Next();
        if (target_cq == nullptr) break;
        auto [preemptor_lca, target_lca] = AlmostLcas(cq_node, *target_cq, second);
        const DominantResourceShare& preemptor_new = shares.Of(*preemptor_lca);
        const DominantResourceShare& target_old = shares.Of(*target_lca);
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
