#include "core/preemption_planner.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <set>

#include "core/fair_sharing.h"
#include "core/saturating.h"

namespace tollgate::core {

bool SatisfiesPreemptionPolicy(const ClusterState& state, const Workload& preemptor,
                               const Workload& candidate, PreemptionPolicy policy) {
  const int64_t preemptor_priority = EffectivePriority(preemptor, state.config());
  const int64_t candidate_priority = EffectivePriority(candidate, state.config());
  const bool lower_priority = preemptor_priority > candidate_priority;
  switch (policy) {
    case PreemptionPolicy::kNever:
      return false;
    case PreemptionPolicy::kLowerPriority:
      return lower_priority;
    case PreemptionPolicy::kLowerOrNewerEqualPriority:
      return lower_priority || (preemptor_priority == candidate_priority &&
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

bool UsesResources(const Workload& wl, const std::vector<FrId>& frs) {
  for (const auto& [fr, value] : wl.quota_usage) {
    if (std::find(frs.begin(), frs.end(), fr) != frs.end()) return true;
  }
  return false;
}

namespace {

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
  if (!MayBeVictim(candidate, candidate_cq)) return Variant::kNever;
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
  // Kueue's isAboveBorrowingThreshold, on effective priorities.
  const int64_t candidate_priority = EffectivePriority(candidate, state_.config());
  const bool above_threshold = candidate_priority >= ctx.preemptor_priority ||
                               (spec.max_priority_threshold.has_value() &&
                                candidate_priority > *spec.max_priority_threshold);
  return above_threshold ? Variant::kReclaimWithoutBorrowing : Variant::kReclaimWhileBorrowing;
}

void PreemptionPlanner::CollectSources(const Context& ctx, const QuotaNode& current,
                                       const QuotaNode& subtree_root, const QuotaNode* skip,
                                       bool hierarchical_advantage,
                                       std::vector<Source>& out) const {
  for (const QuotaNode* child : current.child_cohorts()) {
    if (child == skip) continue;
    if (IsWithinNominalInResources(*child, ctx.frs)) continue;
    CollectSources(ctx, *child, subtree_root, skip, hierarchical_advantage, out);
  }
  for (const QuotaNode* child : current.child_cluster_queues()) {
    if (child == ctx.cq.node) continue;
    if (IsWithinNominalInResources(*child, ctx.frs)) continue;
    const ClusterQueueRuntime* cq = state_.cluster_queue(child);
    if (cq == nullptr || !IsPreemptionTarget(*cq)) continue;
    out.push_back(Source{cq, &subtree_root, hierarchical_advantage});
  }
}

// Merges the victim orders of several ClusterQueues into one stream in Before order, yielding
// only the workloads Classify accepts. A ClusterQueue's workloads are filed by (priority,
// work at risk, id), which is Before's order for workloads of one queue unless admission fair
// sharing reorders them by LocalQueue; such a queue's candidates are sorted up front instead.
class PreemptionPlanner::CandidateStream {
 public:
  CandidateStream(const PreemptionPlanner& planner, const Context& ctx,
                  const std::vector<Source>& sources, bool evicting)
      : planner_(planner), ctx_(ctx) {
    cursors_.reserve(sources.size());
    for (const Source& source : sources) {
      const HeldWorkloads::VictimOrder& order =
          evicting ? source.cq->holding.evicting() : source.cq->holding.admitted();
      if (order.empty()) continue;
      Cursor cursor{source, order.begin(), order.end(), true, {}, 0, {}, false};
      if (planner_.state_.UsesAdmissionFairSharing(source.cq->spec)) {
        cursor.by_priority = false;
        for (const HeldWorkloads::VictimKey& key : order) {
          if (std::optional<Candidate> c = Accept(source, key.id)) cursor.sorted.push_back(*c);
        }
        std::sort(
            cursor.sorted.begin(), cursor.sorted.end(),
            [&](const Candidate& a, const Candidate& b) { return planner_.Before(ctx_, a, b); });
      }
      cursors_.push_back(std::move(cursor));
    }
    for (size_t i = 0; i < cursors_.size(); ++i) {
      if (Advance(cursors_[i])) heap_.push_back(i);
    }
    std::make_heap(heap_.begin(), heap_.end(), HeapOrder{this});
  }

  bool empty() const { return heap_.empty(); }

  std::optional<Candidate> Next() {
    while (!heap_.empty()) {
      std::pop_heap(heap_.begin(), heap_.end(), HeapOrder{this});
      Cursor& cursor = cursors_[heap_.back()];
      heap_.pop_back();
      if (cursor.dropped) continue;
      const Candidate candidate = cursor.current;
      if (Advance(cursor)) {
        heap_.push_back(static_cast<size_t>(&cursor - cursors_.data()));
        std::push_heap(heap_.begin(), heap_.end(), HeapOrder{this});
      }
      return candidate;
    }
    return std::nullopt;
  }

  // None of the queue's remaining workloads can be taken: stop producing them.
  void DropQueueOf(const Candidate& c) {
    for (Cursor& cursor : cursors_) {
      if (cursor.source.cq == c.cq) cursor.dropped = cursor.by_priority;
    }
  }

 private:
  struct Cursor {
    Source source;
    HeldWorkloads::VictimOrder::const_iterator it;
    HeldWorkloads::VictimOrder::const_iterator end;
    // False for a queue under admission fair sharing, whose candidates are in `sorted`.
    bool by_priority = true;
    std::vector<Candidate> sorted;
    size_t next_sorted = 0;
    Candidate current{};
    bool dropped = false;
  };

  // std::*_heap keep the greatest on top: invert Before so the first candidate is.
  struct HeapOrder {
    const CandidateStream* stream;
    bool operator()(size_t a, size_t b) const {
      return stream->planner_.Before(stream->ctx_, stream->cursors_[b].current,
                                     stream->cursors_[a].current);
    }
  };

  std::optional<Candidate> Accept(const Source& source, WorkloadId id) const {
    const Workload* wl = planner_.state_.workload(id);
    if (wl == nullptr) return std::nullopt;
    const Variant variant = planner_.Classify(ctx_, *wl, *source.cq, source.hierarchical_advantage);
    if (variant == Variant::kNever) return std::nullopt;
    return Candidate{wl, source.cq, source.lca, variant};
  }

  // Moves the cursor to its next acceptable candidate; false when it has none left.
  bool Advance(Cursor& cursor) {
    if (!cursor.by_priority) {
      if (cursor.next_sorted == cursor.sorted.size()) return false;
      cursor.current = cursor.sorted[cursor.next_sorted++];
      return true;
    }
    const bool same_queue = cursor.source.cq == &ctx_.cq;
    const PreemptionPolicy policy = same_queue ? ctx_.cq.spec.preemption.within_cluster_queue
                                               : ctx_.cq.spec.preemption.reclaim_within_cohort;
    for (; cursor.it != cursor.end; ++cursor.it) {
      // Filed by ascending priority: past the policy's priority bound nothing else qualifies.
      const int64_t priority = cursor.it->priority;
      if (policy == PreemptionPolicy::kLowerPriority && priority >= ctx_.preemptor_priority) break;
      if (policy == PreemptionPolicy::kLowerOrNewerEqualPriority &&
          priority > ctx_.preemptor_priority) {
        break;
      }
      if (std::optional<Candidate> c = Accept(cursor.source, cursor.it->id)) {
        cursor.current = *c;
        ++cursor.it;
        return true;
      }
    }
    cursor.it = cursor.end;
    return false;
  }

  const PreemptionPlanner& planner_;
  const Context& ctx_;
  std::vector<Cursor> cursors_;
  std::vector<size_t> heap_;
};

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
  const int64_t a_priority = EffectivePriority(*a.wl, state_.config());
  const int64_t b_priority = EffectivePriority(*b.wl, state_.config());
  if (a_priority != b_priority) return a_priority < b_priority;
  // Kueue prefers the most recently admitted; with reported checkpoints that generalises to the
  // workload that loses the least work (the same order when nothing was reported).
  const absl::Time a_since = WorkAtRiskSince(a.wl->status);
  const absl::Time b_since = WorkAtRiskSince(b.wl->status);
  if (a_since != b_since) return a_since > b_since;
  return a.wl->id < b.wl->id;
}

bool IsPreemptionTarget(const ClusterQueueRuntime& cq) { return cq.active; }

bool PreemptionPlanner::MayBeVictim(const Workload& wl, const ClusterQueueRuntime& cq) const {
  if (gone_ != nullptr && gone_->contains(wl.id)) return false;
  return !wl.spec.non_preemptible && !PreemptionProtectedUntil(wl.status, cq.spec, now_);
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
  if (ctx.topology != nullptr && !ctx.topology->empty()) {
    return PlaceTopology(*ctx.topology, state_.topology(), /*simulate_empty=*/false).ok;
  }
  return true;
}

std::vector<PreemptionTarget> PreemptionPlanner::GetTargets(
    const Workload& preemptor, const ClusterQueueRuntime& cq, const std::map<FrId, int64_t>& usage,
    const std::vector<FrId>& frs_need_preemption, const WorkloadTopologyRequests* topology) {
  Context ctx{
      preemptor, EffectivePriority(preemptor, state_.config()), cq, usage, frs_need_preemption,
      topology};
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
  std::vector<Source> same_queue;
  if (spec.within_cluster_queue != PreemptionPolicy::kNever) {
    same_queue.push_back(Source{&ctx.cq, nullptr, false});
  }

  std::vector<Source> hierarchy;
  std::vector<Source> priority;
  const QuotaNode& cq_node = *ctx.cq.node;
  if (cq_node.HasParent() && spec.reclaim_within_cohort != PreemptionPolicy::kNever) {
    auto [advantage, remaining] = QuantitiesFitInQuota(cq_node, ctx.usage);
    const QuotaNode* previous_root = nullptr;
    for (const QuotaNode* current = cq_node.parent(); current != nullptr;
         current = current->parent()) {
      CollectSources(ctx, *current, *current, previous_root, advantage,
                     advantage ? hierarchy : priority);
      auto [fits, next_remaining] = QuantitiesFitInQuota(*current, remaining);
      remaining = std::move(next_remaining);
      advantage = advantage || fits;
      previous_root = current;
    }
  }

  // Kueue's order: evicting workloads first, then for each of them and for the rest, the
  // hierarchical-reclaim candidates, the cohort-reclaim candidates, and the preemptor's own
  // queue's; each list in Before order.
  auto streams = [&]() {
    std::vector<std::unique_ptr<CandidateStream>> out;
    for (bool evicting : {true, false}) {
      for (const std::vector<Source>* list : {&hierarchy, &priority, &same_queue}) {
        out.push_back(std::make_unique<CandidateStream>(*this, ctx, *list, evicting));
      }
    }
    return out;
  };

  bool no_candidate_from_other_queues = true;
  bool no_hierarchy_candidate = true;
  {
    const std::vector<std::unique_ptr<CandidateStream>> probe = streams();
    bool any = false;
    for (const auto& stream : probe) any = any || !stream->empty();
    if (!any) return {};
    no_hierarchy_candidate = probe[0]->empty() && probe[3]->empty();
    no_candidate_from_other_queues =
        no_hierarchy_candidate && probe[1]->empty() && probe[4]->empty();
  }
  const bool borrow_forbidden = spec.borrow_within_cohort == BorrowWithinCohortPolicy::kNever;
  bool under_nominal = true;
  for (FrId fr : ctx.frs) {
    if (cq_node.Limits(fr).nominal <= cq_node.Usage(fr)) under_nominal = false;
  }
  std::vector<bool> attempts;
  if (no_candidate_from_other_queues || (borrow_forbidden && !under_nominal)) {
    attempts = {true};
  } else if (borrow_forbidden && no_hierarchy_candidate) {
    attempts = {false, true};
  } else {
    attempts = {true, false};
  }

  for (bool borrowing : attempts) {
    UsageSimulation sim(state_);
    std::vector<Candidate> chosen;
    for (const std::unique_ptr<CandidateStream>& stream : streams()) {
      while (std::optional<Candidate> c = stream->Next()) {
        if (!CandidateIsValid(ctx, *c, borrowing)) {
          // Removing victims only lowers usage, so a queue (or an ancestor) that is within its
          // nominal quota stays so, and the priority threshold only rises along the queue's
          // victim order: none of its later workloads can be valid either.
          stream->DropQueueOf(*c);
          continue;
        }
        sim.RemoveWorkload(*c->wl);
        chosen.push_back(*c);
        if (!WorkloadFits(ctx, borrowing)) continue;
        // Add back, newest choice excluded, the ones the preemptor does not need.
        for (int i = static_cast<int>(chosen.size()) - 2; i >= 0; --i) {
          sim.AddWorkloadBack(*chosen[i].wl);
          if (WorkloadFits(ctx, borrowing)) {
            chosen[i] = chosen.back();
            chosen.pop_back();
          } else {
            sim.RemoveWorkload(*chosen[i].wl);
          }
        }
        std::vector<PreemptionTarget> targets;
        for (const Candidate& t : chosen) {
          targets.push_back(PreemptionTarget{t.wl->id, ReasonOf(t.variant)});
        }
        return targets;
      }
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
