#include "core/cohort_breakdown.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/cluster_state.h"
#include "core/preemption_planner.h"
#include "core/quantity.h"
#include "core/quota_requests.h"
#include "core/saturating.h"

namespace tollgate::core {
namespace {

const char* PolicyName(PreemptionPolicy policy) {
  switch (policy) {
    case PreemptionPolicy::kNever:
      return "Never";
    case PreemptionPolicy::kLowerPriority:
      return "LowerPriority";
    case PreemptionPolicy::kLowerOrNewerEqualPriority:
      return "LowerOrNewerEqualPriority";
    case PreemptionPolicy::kAny:
      return "Any";
  }
  return "Never";
}

std::string Amount(const std::string& resource, int64_t value) {
  return FormatResourceScalar(resource, value);
}

// Every nominal quota in the node's subtree, its own included.
int64_t SubtreeNominal(const QuotaNode& node, FrId fr) {
  int64_t total = node.Limits(fr).nominal;
  for (const QuotaNode* child : node.child_cohorts())
    total = SatAdd(total, SubtreeNominal(*child, fr));
  for (const QuotaNode* child : node.child_cluster_queues()) {
    total = SatAdd(total, child->Limits(fr).nominal);
  }
  return total;
}

// The usage of every ClusterQueue in the node's subtree.
int64_t SubtreeUsage(const QuotaNode& node, FrId fr) {
  if (node.kind() == QuotaNode::Kind::kClusterQueue) return node.Usage(fr);
  int64_t total = 0;
  for (const QuotaNode* child : node.child_cohorts())
    total = SatAdd(total, SubtreeUsage(*child, fr));
  for (const QuotaNode* child : node.child_cluster_queues()) {
    total = SatAdd(total, child->Usage(fr));
  }
  return total;
}

int64_t Borrowed(const QuotaNode& node, FrId fr) {
  return std::max<int64_t>(0, SatSub(node.Usage(fr), node.SubtreeQuota(fr)));
}

template <typename Fn>
void VisitTree(const QuotaNode& node, int depth, const Fn& fn) {
  fn(node, depth);
  std::vector<const QuotaNode*> cohorts(node.child_cohorts().begin(), node.child_cohorts().end());
  std::vector<const QuotaNode*> queues(node.child_cluster_queues().begin(),
                                       node.child_cluster_queues().end());
  auto by_name = [](const QuotaNode* a, const QuotaNode* b) { return a->name() < b->name(); };
  std::sort(cohorts.begin(), cohorts.end(), by_name);
  std::sort(queues.begin(), queues.end(), by_name);
  for (const QuotaNode* child : cohorts) VisitTree(*child, depth + 1, fn);
  for (const QuotaNode* child : queues) VisitTree(*child, depth + 1, fn);
}

// Flavor-resources in name order, so the rows read the same on every run.
std::vector<FrId> SortedByName(const FlavorResourceIndex& index, std::vector<FrId> frs) {
  std::sort(frs.begin(), frs.end(), [&index](FrId a, FrId b) {
    return std::tie(index.Flavor(a), index.Resource(a)) <
           std::tie(index.Flavor(b), index.Resource(b));
  });
  frs.erase(std::unique(frs.begin(), frs.end()), frs.end());
  return frs;
}

std::vector<QuotaHolder> Holders(const FlavorResourceIndex& index, const QuotaNode& root,
                                 const std::vector<FrId>& frs) {
  std::vector<QuotaHolder> out;
  for (FrId fr : frs) {
    VisitTree(root, 0, [&](const QuotaNode& node, int depth) {
      const QuotaLimits& limits = node.Limits(fr);
      QuotaHolder h;
      h.name = node.name();
      h.is_cohort = node.kind() == QuotaNode::Kind::kCohort;
      h.parent = node.HasParent() ? node.parent()->name() : "";
      h.depth = depth;
      h.flavor = index.Flavor(fr);
      h.resource = index.Resource(fr);
      h.nominal = limits.nominal;
      h.quota = node.SubtreeQuota(fr);
      h.usage = SubtreeUsage(node, fr);
      h.borrowed = Borrowed(node, fr);
      h.lendable = node.HasParent() ? SatSub(node.SubtreeQuota(fr), node.LocalQuota(fr)) : 0;
      h.borrowing_limit = limits.borrowing_limit;
      h.lending_limit = limits.lending_limit;
      out.push_back(std::move(h));
    });
  }
  return out;
}

CohortResourceTotals Totals(const FlavorResourceIndex& index, const QuotaNode& cohort, FrId fr) {
  CohortResourceTotals t;
  t.flavor = index.Flavor(fr);
  t.resource = index.Resource(fr);
  t.nominal = SubtreeNominal(cohort, fr);
  t.shared = cohort.SubtreeQuota(fr);
  t.usage = SubtreeUsage(cohort, fr);
  t.borrowed = Borrowed(cohort, fr);
  t.available = std::max<int64_t>(0, cohort.Available(fr));
  return t;
}

bool IsImplicit(const ClusterState& state, absl::string_view cohort) {
  return state.cohorts().find(std::string(cohort)) == state.cohorts().end();
}

// What the workload asks for in total, per flavor-resource its ClusterQueue could give it.
std::map<FrId, int64_t> Demand(const ClusterState& state, const ClusterQueueRuntime& cq,
                               const Workload& wl) {
  std::map<std::string, int64_t> per_resource;
  for (const PodSetSpec& ps : wl.spec.pod_sets) {
    // What quota sees: the requests after resources.transformations (a resource the queue
    // does not cover is left out below, as quotaCheckStrategy IgnoreUndeclared leaves it).
    for (const auto& [resource, per_pod] : TransformedRequestsPerPod(state.config(), ps)) {
      int64_t& total = per_resource[resource];
      total = SatAdd(total, SatMul(per_pod, ps.count));
    }
  }
  std::map<FrId, int64_t> demand;
  for (const auto& [resource, total] : per_resource) {
    if (total <= 0) continue;
    const int group = cq.GroupOf(resource);
    if (group < 0) continue;
    for (const FlavorQuotasSpec& flavor : cq.spec.resource_groups[group].flavors) {
      if (std::optional<FrId> fr = state.fr_index().Find(flavor.flavor, resource)) {
        demand[*fr] = total;
      }
    }
  }
  return demand;
}

// Why `wl`, pending in `cq`, cannot get `need` of `fr` although it is not above what the tree
// could ever give it, or nothing when it fits now.
class BlockerFinder {
 public:
  BlockerFinder(const ClusterState& state, const ClusterQueueRuntime& cq, const Workload& wl)
      : state_(state), cq_(cq), wl_(wl), node_(*cq.node) {}

  void Explain(FrId fr, int64_t need, std::vector<ReclaimBlocker>& out) const {
    const std::string& flavor = state_.fr_index().Flavor(fr);
    const std::string& resource = state_.fr_index().Resource(fr);
    auto add = [&](std::string policy, std::string kind, std::string object, std::string message) {
      out.push_back(ReclaimBlocker{std::move(policy), std::move(kind), std::move(object), flavor,
                                   resource, std::move(message)});
    };
    const std::string in = absl::StrCat(resource, " in flavor ", flavor);
    const int64_t available = std::max<int64_t>(0, node_.Available(fr));
    if (need <= available) return;
    const QuotaLimits& own = node_.Limits(fr);
    const int64_t usage = node_.Usage(fr);
    const bool borrows_after = SatAdd(usage, need) > node_.SubtreeQuota(fr);

    // Limits: more than the tree could ever give this queue.
    const int64_t potential = node_.PotentialAvailable(fr);
    if (need > potential) {
      if (own.borrowing_limit.has_value() && node_.HasParent()) {
        add("borrowingLimit", "ClusterQueue", cq_.spec.name,
            absl::StrCat(
                cq_.spec.name, " may borrow at most ", Amount(resource, *own.borrowing_limit), " ",
                in, " (borrowingLimit), so it can never hold more than ",
                Amount(resource, potential), "; ", wl_.Key(), " needs ", Amount(resource, need)));
      }
      AddLendingLimits(fr, resource, in, add);
      return;
    }
    if (!node_.HasParent()) return;  // Not in a cohort: only its own workloads hold the quota.

    if (wl_.spec.non_preemptible && borrows_after) {
      add("nonPreemptible", "Workload", wl_.Key(),
          absl::StrCat(wl_.Key(), " is non-preemptible and so runs on ", cq_.spec.name,
                       "'s nominal quota only (", Amount(resource, own.nominal), " ", in, ", ",
                       Amount(resource, usage), " in use)"));
    }

    std::vector<const ClusterQueueRuntime*> borrowers = Borrowers(fr);
    if (borrowers.empty()) {
      add("inUseByOwners", "Cohort", node_.Root()->name(),
          absl::StrCat("nobody in cohort ", node_.Root()->name(), " borrows ", in,
                       ": the quota is used by the queues that own it, which nothing reclaims"));
      AddLendingLimits(fr, resource, in, add);
      return;
    }
    // Kueue never preempts in an inactive ClusterQueue (preemption_planner.h,
    // IsPreemptionTarget): its borrowed quota comes back only when it resumes or its workloads
    // end.
    std::vector<std::string> inactive;
    std::vector<const ClusterQueueRuntime*> targets;
    for (const ClusterQueueRuntime* b : borrowers) {
      if (IsPreemptionTarget(*b)) {
        targets.push_back(b);
      } else {
        inactive.push_back(absl::StrCat(b->spec.name, " (", b->inactive_reason, ", ",
                                        Amount(resource, Borrowed(*b->node, fr)), " borrowed)"));
      }
    }
    if (targets.empty()) {
      add("inactiveClusterQueue", "ClusterQueue", absl::StrJoin(inactive, ", "),
          absl::StrCat("the ", in, " is borrowed by ", absl::StrJoin(inactive, ", "),
                       ", which admit nothing and whose workloads are not preempted while the "
                       "queue is inactive: it comes back when the queue is active again or its "
                       "workloads end"));
      return;
    }
    borrowers = std::move(targets);
    std::vector<std::string> named;
    for (const ClusterQueueRuntime* b : borrowers) {
      named.push_back(
          absl::StrCat(b->spec.name, " (", Amount(resource, Borrowed(*b->node, fr)), " borrowed)"));
    }
    const std::string who = absl::StrJoin(named, ", ");
    const PreemptionSpec& preemption = cq_.spec.preemption;
    if (preemption.reclaim_within_cohort == PreemptionPolicy::kNever) {
      add("reclaimWithinCohort", "ClusterQueue", cq_.spec.name,
          absl::StrCat(cq_.spec.name, " has reclaimWithinCohort: Never, so it does not preempt ",
                       who, " to take back the ", in, " they borrowed"));
      return;
    }
    if (state_.config().fair_sharing.enable) {
      add("fairSharing", "Cohort", node_.Root()->name(),
          absl::StrCat("fair sharing decides reclaim in cohort ", node_.Root()->name(),
                       ": borrowers ", who,
                       " are preempted only when their share stays above that of ", cq_.spec.name,
                       " (preemptionStrategies)"));
    } else if (borrows_after &&
               preemption.borrow_within_cohort == BorrowWithinCohortPolicy::kNever) {
      add("borrowWithinCohort", "ClusterQueue", cq_.spec.name,
          absl::StrCat(wl_.Key(), " would borrow (", cq_.spec.name, " uses ",
                       Amount(resource, usage), " of its nominal ",
                       Amount(resource, node_.SubtreeQuota(fr)), " ", in, ", needs ",
                       Amount(resource, need),
                       " more) and borrowWithinCohort: Never lets it preempt in the cohort only "
                       "to stay within its nominal quota"));
      return;
    }
    // The policy allows reclaim: is any borrowing workload a candidate?
    int eligible = 0;
    int protected_by_flag = 0;
    int above_threshold = 0;
    int evicting = 0;
    for (const ClusterQueueRuntime* b : borrowers) {
      for (WorkloadId id : b->holding) {
        const Workload* victim = state_.workload(id);
        if (victim == nullptr || !UsesResources(*victim, {fr})) continue;
        if (victim->status.state == WorkloadState::kEvicting) {
          ++evicting;
          continue;
        }
        if (!SatisfiesPreemptionPolicy(state_, wl_, *victim, preemption.reclaim_within_cohort)) {
          continue;
        }
        if (borrows_after && !state_.config().fair_sharing.enable &&
            preemption.max_priority_threshold.has_value() &&
            EffectivePriority(*victim, state_.config()) > *preemption.max_priority_threshold) {
          ++above_threshold;
          continue;
        }
        if (victim->spec.non_preemptible) {
          ++protected_by_flag;
          continue;
        }
        ++eligible;
      }
    }
    // Reclaim is possible, or quota is already being released: the next cycles may admit it.
    if (eligible > 0 || evicting > 0) return;
    if (above_threshold > 0) {
      add("borrowWithinCohort", "ClusterQueue", cq_.spec.name,
          absl::StrCat(wl_.Key(), " would borrow, and borrowWithinCohort's maxPriorityThreshold ",
                       *preemption.max_priority_threshold, " protects ", above_threshold,
                       " workload(s) of ", who, " with a higher priority"));
    }
    if (protected_by_flag > 0) {
      add("nonPreemptible", "ClusterQueue", who,
          absl::StrCat(protected_by_flag, " borrowing workload(s) of ", who,
                       " are non-preemptible"));
    }
    if (above_threshold == 0 && protected_by_flag == 0) {
      add("priority", "ClusterQueue", cq_.spec.name,
          absl::StrCat(cq_.spec.name,
                       " has reclaimWithinCohort: ", PolicyName(preemption.reclaim_within_cohort),
                       ", and no workload of ", who, " using ", in, " has a lower priority than ",
                       wl_.Key(), " (", EffectivePriority(wl_, state_.config()), ")"));
    }
  }

 private:
  // ClusterQueues of the tree, other than this one, using more than their quota of `fr`.
  std::vector<const ClusterQueueRuntime*> Borrowers(FrId fr) const {
    std::vector<const ClusterQueueRuntime*> out;
    VisitTree(*node_.Root(), 0, [&](const QuotaNode& node, int) {
      if (node.kind() != QuotaNode::Kind::kClusterQueue || &node == &node_) return;
      if (Borrowed(node, fr) <= 0) return;
      if (const ClusterQueueRuntime* cq = state_.cluster_queue(&node)) out.push_back(cq);
    });
    return out;
  }

  template <typename Add>
  void AddLendingLimits(FrId fr, const std::string& resource, const std::string& in,
                        const Add& add) const {
    VisitTree(*node_.Root(), 0, [&](const QuotaNode& node, int) {
      if (&node == &node_ || !node.HasParent()) return;
      const QuotaLimits& limits = node.Limits(fr);
      if (!limits.lending_limit.has_value() || *limits.lending_limit >= node.SubtreeQuota(fr)) {
        return;
      }
      add("lendingLimit", node.kind() == QuotaNode::Kind::kCohort ? "Cohort" : "ClusterQueue",
          node.name(),
          absl::StrCat(node.name(), " lends at most ", Amount(resource, *limits.lending_limit),
                       " of its ", Amount(resource, node.SubtreeQuota(fr)), " ", in,
                       " (lendingLimit)"));
    });
  }

  const ClusterState& state_;
  const ClusterQueueRuntime& cq_;
  const Workload& wl_;
  const QuotaNode& node_;
};

}  // namespace

absl::StatusOr<CohortBreakdown> CohortBreakdownOf(const ClusterState& state,
                                                  absl::string_view name) {
  const QuotaNode* node = state.tree().Cohort(name);
  if (node == nullptr) {
    return absl::NotFoundError(absl::StrCat(
        "cohort \"", name, "\" not found: no Cohort object and no ClusterQueue names it"));
  }
  CohortBreakdown out;
  out.cohort = std::string(name);
  out.parent = node->HasParent() ? node->parent()->name() : "";
  out.implicit = IsImplicit(state, name);
  const QuotaNode* root = node->Root();
  out.root = root->name();
  std::vector<FrId> frs = node->subtree_resources();
  if (frs.empty()) frs = root->subtree_resources();
  frs = SortedByName(state.fr_index(), std::move(frs));
  for (FrId fr : frs) out.totals.push_back(Totals(state.fr_index(), *node, fr));
  out.holders = Holders(state.fr_index(), *root, frs);
  return out;
}

absl::StatusOr<CohortBreakdown> ClusterQueueBreakdown(const ClusterState& state,
                                                      absl::string_view name,
                                                      const Workload* pending) {
  const ClusterQueueRuntime* cq = state.cluster_queue(name);
  if (cq == nullptr || cq->node == nullptr) {
    return absl::NotFoundError(absl::StrCat("ClusterQueue \"", name, "\" not found"));
  }
  if (pending != nullptr) {
    const std::string* queued_in = state.QueuedIn(pending->id);
    if (pending->status.state != WorkloadState::kPending || queued_in == nullptr ||
        *queued_in != name) {
      return absl::InvalidArgumentError(
          absl::StrCat("workload ", pending->Key(), " is not pending in ClusterQueue ", name));
    }
  } else {
    const std::vector<PendingPosition> queue = PendingInClusterQueue(state, name);
    if (!queue.empty()) pending = state.workload(queue.front().id);
  }
  const QuotaNode& node = *cq->node;
  CohortBreakdown out;
  out.cluster_queue = std::string(name);
  out.cohort = node.HasParent() ? node.parent()->name() : "";
  std::map<FrId, int64_t> demand;
  std::vector<FrId> frs = node.defined_resources();
  if (pending != nullptr) {
    out.workload = pending->id;
    demand = Demand(state, *cq, *pending);
    frs.clear();
    for (const auto& [fr, need] : demand) frs.push_back(fr);
  }
  frs = SortedByName(state.fr_index(), std::move(frs));
  if (node.HasParent()) {
    const QuotaNode& cohort = *node.parent();
    out.parent = cohort.HasParent() ? cohort.parent()->name() : "";
    out.implicit = IsImplicit(state, cohort.name());
    out.root = cohort.Root()->name();
    for (FrId fr : frs) out.totals.push_back(Totals(state.fr_index(), cohort, fr));
    out.holders = Holders(state.fr_index(), *node.parent()->Root(), frs);
  } else {
    out.holders = Holders(state.fr_index(), node, frs);
  }
  if (pending != nullptr) {
    const BlockerFinder finder(state, *cq, *pending);
    for (FrId fr : frs) finder.Explain(fr, demand[fr], out.blockers);
  }
  return out;
}

}  // namespace tollgate::core
