#include "core/admission_planner.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/admission_checks.h"
#include "core/fair_sharing.h"
#include "core/pod_requests.h"
#include "core/prefetch.h"
#include "core/saturating.h"
#include "core/topology_scheduling.h"

namespace tollgate::core {
namespace {

// Kueue's scheduler's message for a head with a Retry or Rejected check.
constexpr absl::string_view kFailedChecksMessage = "The workload has failed admission checks";

// Kueue's HasRetryChecks || HasRejectedChecks.
bool HasFailedChecks(const std::vector<AdmissionCheckState>& checks) {
  return AnyCheckIn(checks, CheckState::kRetry) || AnyCheckIn(checks, CheckState::kRejected);
}

enum class RequeueReason {
  kGeneric,
  kNoFit,
  kPreemptionNoCandidates,
  kFailedAfterNomination,
  kPendingPreemption,
  kNamespaceMismatch,
};

struct Entry {
  const Workload* wl = nullptr;
  const ClusterQueueRuntime* cq = nullptr;
  AdmissionPlanner::Evaluation eval;
  FlavorMode mode = FlavorMode::kNoFit;
  // Its ClusterQueue's preemptor, ordered first (PrioritizePreemptorWorkloads).
  bool preemptor = false;
  bool deferred_fit = false;
  bool admitted = false;
  bool skipped = false;
  // Taken by a cycle that stopped before it (blockAdmission): left as it is until the cycle
  // goes on.
  bool awaits_held_cycle = false;
  // Set when the pending message is not the flavor assignment's own (built only for entries
  // that stay pending: most of a cycle's entries are admitted).
  std::optional<std::string> message;
  RequeueReason reason = RequeueReason::kGeneric;
  // What its QuotaReserved=False condition says, for an entry that stays pending.
  PendingReason pending_reason = PendingReason::kPendingEvaluation;

  std::string PendingMessage() const {
    return message.has_value() ? *message : eval.assignment.Message();
  }
};

// A ClusterQueue's head as a cycle takes it, with the priority and queue-order time the
// cycle's order sorts it by: the queue's key for it (the queue re-keys a workload on every
// change to them), so the order does not read the workload's conditions again.
struct Head {
  const ClusterQueueRuntime* cq;
  const Workload* wl;
  // The effective priority (core/priority_boost.h).
  int64_t priority;
  absl::Time order_time;
  // Its queue's preemptor, with PrioritizePreemptorWorkloads on (false otherwise).
  bool preemptor;
};

// Classical order: a preemptor first (PrioritizePreemptorWorkloads), then no borrowing, then
// higher priority (PrioritySortingWithinCohort; off, every key carries the same priority), then
// older, then lower id.
struct ClassicalKey {
  bool preemptor;
  int borrowing;
  int64_t priority;
  absl::Time order_time;
  WorkloadId id;
  // Into the cycle's entries.
  size_t index;

  bool operator<(const ClassicalKey& o) const {
    if (preemptor != o.preemptor) return preemptor;
    if (borrowing != o.borrowing) return borrowing < o.borrowing;
    if (priority != o.priority) return priority > o.priority;
    if (order_time != o.order_time) return order_time < o.order_time;
    return id < o.id;
  }
};

// How many heads ahead of the one evaluated its successors' data is fetched, in two steps
// (PrefetchHead at twice the distance, then PrefetchHeadData): a head's evaluation takes a few
// thousand instructions, enough for one step's misses to arrive.
constexpr size_t kHeadPrefetchDistance = 2;

// The objects a head's evaluation reads first: the workload, its ClusterQueue's spec and quota
// node.
void PrefetchHead(const Head& h) {
  PrefetchLines(h.wl, sizeof(Workload));
  PrefetchLines(&h.cq->group_index, sizeof(h.cq->group_index));
  PrefetchLines(&h.cq->spec, sizeof(ClusterQueueSpec));
  PrefetchLines(h.cq->node, QuotaNode::kHotBytes);
}

// What those objects point at (fetched by PrefetchHead by now): the pod sets and their
// requests.
void PrefetchHeadData(const Head& h) {
  const std::vector<PodSetSpec>& pod_sets = h.wl->spec.pod_sets;
  PrefetchLines(pod_sets.data(), pod_sets.size() * sizeof(PodSetSpec));
  for (const PodSetSpec& ps : pod_sets) {
    PrefetchLines(ps.requests.data(), ps.requests.size() * sizeof(ps.requests[0]));
  }
}

// The cohort trees a cycle's usage changed. A ClusterQueue outside any cohort is a tree of its
// own that only its one head changes. Filed for every head that takes usage (its queue), and
// resolved to roots only when a head is evaluated again for its topology, each filing once.
class ChangedTrees {
 public:
  void Add(const ClusterQueueRuntime& cq) {
    if (cq.node->HasParent()) nodes_.push_back(cq.node);
  }
  // Whether the usage of `cq`'s tree changed, other than by `cq`'s own head.
  bool Contains(const ClusterQueueRuntime& cq) {
    if (!cq.node->HasParent()) return false;
    size_t roots = resolved_;
    for (size_t i = resolved_; i < nodes_.size(); ++i) {
      const QuotaNode* root = nodes_[i]->Root();
      if (std::find(nodes_.begin(), nodes_.begin() + roots, root) == nodes_.begin() + roots) {
        nodes_[roots++] = root;
      }
    }
    nodes_.resize(roots);
    resolved_ = roots;
    return std::find(nodes_.begin(), nodes_.end(), cq.node->Root()) != nodes_.end();
  }

 private:
  // Distinct roots below `resolved_`, queues' nodes from there.
  std::vector<const QuotaNode*> nodes_;
  size_t resolved_ = 0;
};

// Whether `assignment` asks for every pod set's full count (Assign({})'s, not a partial
// admission's).
bool HasFullCounts(const Workload& wl, const FlavorAssignment& assignment, bool reclaimable_pods) {
  if (assignment.pod_sets.size() != wl.spec.pod_sets.size()) return false;
  for (size_t i = 0; i < assignment.pod_sets.size(); ++i) {
    if (assignment.pod_sets[i].count !=
        CountAfterReclaim(wl.status, wl.spec.pod_sets[i], reclaimable_pods)) {
      return false;
    }
  }
  return true;
}

// A head whose full assignment fit, evaluated again in its cycle while the usage its quota part
// read is unchanged: that part would choose the same flavors again (the assigner reads only
// its quota tree's usage and admitted workloads, which the cycle changes only through
// usage), so only the topology is placed again. False when the assignment no longer fits
// then: it is to be evaluated again in full (`fitting` is left changed).
bool PlaceTopologyAgain(const ClusterState& state, const Workload& wl,
                        const ClusterQueueRuntime& cq, FlavorAssignment& fitting) {
  fitting = FlavorAssigner::AssignTopologyAgain(state, cq, wl, std::move(fitting));
  return fitting.RepresentativeMode() == FlavorMode::kFit;
}

enum class CycleFit { kFits, kNoQuota, kNoTopology };

// Kueue's cq.Fits after the cycle's preemptions: quota, then the topology placements (a head
// evaluated before another took the same nodes this cycle no longer fits them).
CycleFit FitsAfterRemovals(ClusterState& state, const ClusterQueueRuntime& cq, const Workload& wl,
                           const FlavorAssignment& assignment,
                           const std::set<WorkloadId>& preempted,
                           const std::vector<PreemptionTarget>& targets) {
  auto fits = [&] {
    for (const auto& [fr, q] : assignment.usage) {
      if (std::max<int64_t>(0, cq.node->Available(fr)) < q) return CycleFit::kNoQuota;
    }
    if (!TopologyFits(wl.spec, assignment, state.topology())) return CycleFit::kNoTopology;
    return CycleFit::kFits;
  };
  // Most entries of a cycle neither preempt nor follow a preemption: nothing to simulate.
  if (preempted.empty() && targets.empty()) return fits();
  UsageSimulation sim(state);
  std::set<WorkloadId> merged = preempted;
  for (const PreemptionTarget& t : targets) merged.insert(t.id);
  for (WorkloadId id : merged) {
    if (const Workload* wl_removed = state.workload(id)) sim.RemoveWorkload(*wl_removed);
  }
  return fits();
}

bool HasAny(const std::set<WorkloadId>& preempted, const std::vector<PreemptionTarget>& targets) {
  for (const PreemptionTarget& t : targets) {
    if (preempted.count(t.id) > 0) return true;
  }
  return false;
}

// Kueue's HumanReadablePreemptionReasons: how a victim's message names why it was preempted.
absl::string_view HumanReadablePreemptionReason(absl::string_view reason) {
  if (reason == "InClusterQueue") return "prioritization in the ClusterQueue";
  if (reason == "InCohortReclamation") return "reclamation within the cohort";
  if (reason == "InCohortFairSharing") return "Fair Sharing within the cohort";
  if (reason == "InCohortReclaimWhileBorrowing") {
    return "reclamation within the cohort while borrowing";
  }
  return "UNKNOWN";
}

// Kueue's buildCQPath: "/root/.../parent/cq", the ClusterQueue's cohorts from the root down.
std::string ClusterQueuePath(const QuotaNode* node) {
  if (node == nullptr) return "UNKNOWN";
  std::vector<const QuotaNode*> chain;
  for (const QuotaNode* n = node; n != nullptr; n = n->parent()) chain.push_back(n);
  std::string path;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it)
    absl::StrAppend(&path, "/", (*it)->name());
  return path;
}

// Kueue's preemptionMessage, word for word: the victim's Evicted and Preempted conditions carry
// it, so whoever reads a preempted workload sees who took its place, why, and where each of the
// two queues sits in the cohort tree.
std::string PreemptionMessage(const ClusterState& state, const Workload& preemptor,
                              const QuotaNode* preemptor_node, const Workload& victim,
                              absl::string_view reason) {
  // The label Kueue's job reconcilers put on the workloads they create (Kueue's JobUIDLabel).
  static constexpr absl::string_view kJobUidLabel = "kueue.x-k8s.io/job-uid";
  const Labels& labels = preemptor.spec.metadata.value_or_default().labels;
  const auto job_uid = labels.find(std::string(kJobUidLabel));
  const QuotaNode* victim_node = nullptr;
  if (victim.status.admission.has_value()) {
    if (const ClusterQueueRuntime* cq =
            state.cluster_queue(victim.status.admission->cluster_queue)) {
      victim_node = cq->node;
    }
  }
  return absl::StrCat(
      "Preempted to accommodate a workload (UID: ",
      preemptor.uid.empty() ? "UNKNOWN" : preemptor.uid, ", JobUID: ",
      job_uid == labels.end() || job_uid->second.empty() ? "UNKNOWN" : job_uid->second, ") due to ",
      HumanReadablePreemptionReason(reason), "; preemptor path: ", ClusterQueuePath(preemptor_node),
      "; preemptee path: ", ClusterQueuePath(victim_node));
}

// The decisions a head that preempts adds to the plan: an eviction for each target not already
// evicting. Returns its pending message.
std::string PlanPreemptions(const ClusterState& state, const Workload& preemptor,
                            const ClusterQueueRuntime& cq, const AdmissionPlanner::Evaluation& eval,
                            CyclePlan& plan) {
  for (const PreemptionTarget& t : eval.targets) {
    const Workload* victim = state.workload(t.id);
    if (victim->status.state == WorkloadState::kEvicting) continue;
    plan.preemptions.push_back(
        PreemptionDecision{t.id, preemptor.id, t.reason,
                           PreemptionMessage(state, preemptor, cq.node, *victim, t.reason)});
  }
  return absl::StrCat(eval.assignment.Message(), ". Pending the preemption of ",
                      eval.targets.size(), " workload(s)");
}

// Adds the decision admitting a head with its assignment to the plan (built in place).
void PlanAdmission(const Workload& wl, const ClusterQueueRuntime& cq, FlavorAssignment&& assignment,
                   CyclePlan& plan) {
  AdmissionDecision& admission = plan.admissions.emplace_back();
  admission.id = wl.id;
  admission.usage = std::move(assignment.usage);
  // Names the carried placements from their leaves, which move to the decision after.
  admission.admission = std::move(assignment).ToAdmission(cq.spec.name);
  for (PodSetFlavors& ps : assignment.pod_sets) {
    if (ps.topology_leaves.tree != nullptr) {
      admission.topology_leaves.push_back(std::move(ps.topology_leaves));
    }
  }
  // The moved-from pod sets are freed now, while their lines are at hand, rather than with the
  // cycle's entries once every head was planned.
  assignment.pod_sets = std::vector<PodSetFlavors>();
}

// How a head that stays pending is requeued, as Kueue's requeueAndUpdate decides it.
PendingDecision PlanPending(const Workload& wl, const ClusterQueueRuntime& cq, RequeueReason reason,
                            bool skipped, std::string message, PendingReason pending_reason) {
  if (skipped && reason == RequeueReason::kGeneric) reason = RequeueReason::kFailedAfterNomination;
  bool immediate;
  if (cq.spec.queueing_strategy == QueueingStrategy::kStrictFifo) {
    immediate = reason != RequeueReason::kNamespaceMismatch;
  } else {
    immediate = reason == RequeueReason::kFailedAfterNomination ||
                reason == RequeueReason::kPendingPreemption;
  }
  PendingDecision p;
  p.id = wl.id;
  p.message = std::move(message);
  p.reason = pending_reason;
  p.requeue = immediate ? RequeueKind::kImmediate : RequeueKind::kPark;
  p.preemptor = reason == RequeueReason::kPendingPreemption;
  p.sticky = p.preemptor && cq.spec.queueing_strategy == QueueingStrategy::kBestEffortFifo;
  return p;
}

// Kueue's lastAssignmentOutdated with FlavorFungibilityPreserveScanProgress (beta, on by
// default): the progress of the cycle before holds whatever changed since (on a busy cluster
// quota is released every cycle, which would send the search back to the first flavor each
// time); older progress holds while no quota was released in the queue and its tree was not
// rebuilt. Null: the search starts from the first flavor.
const FlavorScanProgress* ResumableProgress(const Workload& wl, const ClusterQueueRuntime& cq,
                                            int64_t cycle) {
  if (!wl.scan_progress.has_value()) return nullptr;
  const FlavorScanProgress& progress = *wl.scan_progress;
  if (cycle - progress.cycle <= 1) return &progress;
  return progress.cluster_queue_generation == cq.allocatable_generation ? &progress : nullptr;
}

// Kueue's quotaResourcesToReserve: what a preemptor without candidates holds back this cycle so
// lower-priority work elsewhere in the cohort does not take it.
FrUsage ResourcesToReserve(const Entry& e) {
  if (e.mode != FlavorMode::kPreempt) return e.eval.assignment.usage;
  // In the usage's FrId order, so the result is sorted too.
  FrUsage reserved;
  reserved.reserve(e.eval.assignment.usage.size());
  const QuotaNode& node = *e.cq->node;
  for (const auto& [fr, usage] : e.eval.assignment.usage) {
    const QuotaLimits& limits = node.Limits(fr);
    if (e.eval.assignment.borrowing > 0) {
      if (!limits.borrowing_limit.has_value()) {
        reserved.emplace_back(fr, usage);
      } else {
        // A queue whose quota was cut can hold more than nominal + borrowingLimit: reserve
        // nothing then (a negative reservation would free cohort quota that is in use).
        reserved.emplace_back(
            fr, std::max<int64_t>(
                    0, std::min(usage, SatSub(SatAdd(limits.nominal, *limits.borrowing_limit),
                                              node.Usage(fr)))));
      }
    } else {
      reserved.emplace_back(
          fr, std::max<int64_t>(0, std::min(usage, SatSub(limits.nominal, node.Usage(fr)))));
    }
  }
  return reserved;
}

// Hands out a cycle's entries in Kueue's order. Classical: no borrowing first, then higher
// priority (unless PrioritySortingWithinCohort is off), then older. Fair sharing: per cohort tree,
// the winner of a tournament by dominant resource share. Each pick changes usage only along the
// picked ClusterQueue's path, so only the shares of entries sharing a node below the root with it
// are recomputed before the next pick.
class EntryOrder {
 public:
  // `keys` holds each entry's classical key (taken while its evaluation was at hand: read here,
  // after every head's evaluation, each entry and workload was a cache miss again).
  // `keep_given_order`: the entries are a held cycle's, already in its order.
  EntryOrder(ClusterState& state, std::vector<Entry>& entries, std::vector<ClassicalKey> keys,
             bool keep_given_order)
      : state_(state),
        entries_(entries),
        fair_(state.config().fair_sharing.enable && !keep_given_order) {
    if (!fair_) {
      if (!keep_given_order) std::sort(keys.begin(), keys.end());
      classical_.reserve(keys.size());
      for (const ClassicalKey& k : keys) classical_.push_back(k.index);
      return;
    }
    // Cohort trees do not share quota, so the order between trees does not matter; take them
    // in the order of their first ClusterQueue's name, for determinism.
    std::vector<size_t> by_name(entries_.size());
    for (size_t i = 0; i < entries_.size(); ++i) by_name[i] = i;
    std::stable_sort(by_name.begin(), by_name.end(), [this](size_t a, size_t b) {
      return entries_[a].cq->spec.name < entries_[b].cq->spec.name;
    });
    absl::flat_hash_map<const QuotaNode*, size_t> tree_of_root;
    shares_.resize(entries_.size());
    for (size_t idx : by_name) {
      const QuotaNode* root = entries_[idx].cq->node->Root();
      auto [it, inserted] = tree_of_root.try_emplace(root, trees_.size());
      if (inserted) trees_.push_back(Tree{root, {}, {}});
      Tree& tree = trees_[it->second];
      // Entries within a tree stay in submission (entries_) order, the tournament's input order.
      tree.remaining.insert(std::upper_bound(tree.remaining.begin(), tree.remaining.end(), idx),
                            idx);
      tree.by_queue[entries_[idx].cq->node].push_back(idx);
    }
    for (Tree& tree : trees_) {
      for (auto& [node, indexes] : tree.by_queue) std::sort(indexes.begin(), indexes.end());
    }
  }

  Entry* Next() {
    if (!fair_) {
      if (next_classical_ == classical_.size()) return nullptr;
      return &entries_[classical_[next_classical_++]];
    }
    while (next_tree_ < trees_.size() && trees_[next_tree_].remaining.empty()) ++next_tree_;
    if (next_tree_ == trees_.size()) return nullptr;
    Tree& tree = trees_[next_tree_];
    // A ClusterQueue outside any cohort is a tree of its own, with nothing to compare.
    const size_t pick = tree.root->kind() == QuotaNode::Kind::kClusterQueue ? tree.remaining.front()
                                                                            : FairPick(tree);
    Remove(tree, pick);
    return &entries_[pick];
  }

 private:
  struct Tree {
    const QuotaNode* root;
    // Unpicked entries in entries_ order.
    std::vector<size_t> remaining;
    // Unpicked entries per ClusterQueue node, in entries_ order.
    absl::flat_hash_map<const QuotaNode*, std::vector<size_t>> by_queue;
  };
  // An entry's share at each cohort on its path: the dominant resource share of the cohort's
  // child on that path, with the entry's usage added.
  struct Shares {
    bool fresh = false;
    std::vector<std::pair<const QuotaNode*, DominantResourceShare>> at;
  };

  bool PriorityThenAge(const Entry& a, const Entry& b) const {
    if (state_.config().priority_sorting_within_cohort) {
      const int64_t pa = EffectivePriority(*a.wl, state_.config());
      const int64_t pb = EffectivePriority(*b.wl, state_.config());
      if (pa != pb) return pa > pb;
    }
    const absl::Time ta = state_.QueueOrderTime(*a.wl);
    const absl::Time tb = state_.QueueOrderTime(*b.wl);
    if (ta != tb) return ta < tb;
    return a.wl->id < b.wl->id;
  }

  static const QuotaNode* BelowRoot(const QuotaNode* node) {
    while (node->parent() != nullptr && node->parent()->parent() != nullptr) {
      node = node->parent();
    }
    return node;
  }

  void Remove(Tree& tree, size_t pick) {
    tree.remaining.erase(std::find(tree.remaining.begin(), tree.remaining.end(), pick));
    std::vector<size_t>& queue = tree.by_queue[entries_[pick].cq->node];
    queue.erase(std::find(queue.begin(), queue.end(), pick));
    // The planner now adds usage along the picked queue's path: every entry whose path shares
    // a node with it below the root sees different shares.
    const QuotaNode* branch = BelowRoot(entries_[pick].cq->node);
    for (size_t idx : tree.remaining) {
      if (BelowRoot(entries_[idx].cq->node) == branch) shares_[idx].fresh = false;
    }
  }

  void ComputeShares(size_t idx) {
    Entry& e = entries_[idx];
    Shares& shares = shares_[idx];
    shares.at.clear();
    UsageSimulation sim(state_);
    sim.AddUsage(*e.cq->node, e.eval.assignment.usage);
    DominantResourceShare drs = ComputeDrs(*e.cq->node, state_.fr_index());
    for (const QuotaNode* ancestor = e.cq->node->parent(); ancestor != nullptr;
         ancestor = ancestor->parent()) {
      shares.at.emplace_back(ancestor, drs);
      drs = ComputeDrs(*ancestor, state_.fr_index());
    }
    shares.fresh = true;
  }

  const DominantResourceShare& ShareAt(size_t idx, const QuotaNode& cohort) const {
    for (const auto& [node, drs] : shares_[idx].at) {
      if (node == &cohort) return drs;
    }
    static const DominantResourceShare kNone;
    return kNone;
  }

  size_t FairPick(Tree& tree) {
    for (size_t idx : tree.remaining) {
      if (!shares_[idx].fresh) ComputeShares(idx);
    }
    std::optional<size_t> winner = Tournament(tree, *tree.root);
    return winner.has_value() ? *winner : tree.remaining.front();
  }

  std::optional<size_t> Tournament(const Tree& tree, const QuotaNode& cohort) {
    std::vector<size_t> candidates;
    for (const QuotaNode* child : cohort.child_cohorts()) {
      if (std::optional<size_t> c = Tournament(tree, *child)) candidates.push_back(*c);
    }
    for (const QuotaNode* child : cohort.child_cluster_queues()) {
      auto it = tree.by_queue.find(child);
      if (it == tree.by_queue.end()) continue;
      candidates.insert(candidates.end(), it->second.begin(), it->second.end());
    }
    if (candidates.empty()) return std::nullopt;
    size_t best = candidates[0];
    for (size_t i = 1; i < candidates.size(); ++i) {
      if (FairLess(candidates[i], best, cohort)) best = candidates[i];
    }
    return best;
  }

  bool FairLess(size_t a, size_t b, const QuotaNode& cohort) const {
    if (entries_[a].preemptor != entries_[b].preemptor) return entries_[a].preemptor;
    const DominantResourceShare& da = ShareAt(a, cohort);
    const DominantResourceShare& db = ShareAt(b, cohort);
    const bool a_borrows = da.IsBorrowingOn(entries_[a].eval.assignment.usage);
    const bool b_borrows = db.IsBorrowingOn(entries_[b].eval.assignment.usage);
    if (a_borrows != b_borrows) return !a_borrows;
    if (int c = CompareDrs(da, db); c != 0) return c < 0;
    return PriorityThenAge(entries_[a], entries_[b]);
  }

  ClusterState& state_;
  std::vector<Entry>& entries_;
  const bool fair_;
  std::vector<size_t> classical_;
  size_t next_classical_ = 0;
  std::vector<Tree> trees_;
  size_t next_tree_ = 0;
  std::vector<Shares> shares_;
};

}  // namespace

AdmissionPlanner::Evaluation AdmissionPlanner::Evaluate(const Workload& wl,
                                                        const ClusterQueueRuntime& cq,
                                                        absl::Time now,
                                                        const FlavorAssignment* nominated,
                                                        const FlavorScanProgress* resume,
                                                        const std::set<WorkloadId>* gone) {
  PreemptionPlanner preemptor(state_, now, gone);
  PlannerPreemptionOracle oracle(state_, preemptor, wl, cq);
  FlavorAssigner assigner(state_, cq, wl, oracle);
  if (nominated != nullptr) assigner.PinToNomination(*nominated);
  if (resume != nullptr) assigner.ResumeFrom(*resume);

  // Kueue's GetTargets with TAS requests, then updateAssignmentForTAS: the placement a
  // preemptor claims, on the nodes its victims free (or on empty nodes when it has none, so
  // lower-priority work does not take them this cycle). Only a head that must preempt gets
  // here: most heads fit.
  auto targets_for = [&](Evaluation& e) {
    const bool topology_only = IsTopologyOnly(cq.spec, state_.topology());
    const std::set<std::string> delayed_flavors =
        DelayedTopologyFlavors(cq.spec, state_.registry().admission_checks());
    WorkloadTopologyRequests requests =
        TopologyRequestsFor(wl, e.assignment, topology_only, state_.topology(), delayed_flavors);
    // Only a head that must preempt gets here: the usage as the preemption planner takes it.
    const std::map<FrId, int64_t> usage(e.assignment.usage.begin(), e.assignment.usage.end());
    e.targets = preemptor.GetTargets(wl, cq, usage, e.assignment.ResourcesNeedingPreemption(),
                                     requests.empty() ? nullptr : &requests);
    if (requests.empty() || !wl.status.history().unhealthy_nodes.empty()) return;
    UsageSimulation removal(state_);
    for (const PreemptionTarget& t : e.targets) removal.RemoveWorkload(*state_.workload(t.id));
    TopologyOutcome outcome =
        PlaceTopology(requests, state_.topology(), /*simulate_empty=*/e.targets.empty());
    for (TopologyOutcome::Placed& placed : outcome.placed) {
      PodSetFlavors& ps = e.assignment.pod_sets[placed.pod_set];
      ps.topology = std::move(placed.assignment);
      ps.topology_leaves = std::move(placed.leaves);
    }
  };

  Evaluation full{assigner.Assign({}), {}};
  const FlavorMode mode = full.assignment.RepresentativeMode();
  if (mode == FlavorMode::kFit) return full;
  if (mode == FlavorMode::kPreempt) {
    targets_for(full);
    if (!full.targets.empty()) return full;
  }

  // Without PartialAdmission Kueue does not search for fewer pods, so a workload stored with a
  // minCount while the gate was on is admitted whole or not at all.
  if (!state_.config().partial_admission) {
    full.targets.clear();
    return full;
  }

  // Partial admission: Kueue's PodSetReducer binary search over the total reducible pods. As
  // in Kueue, the search walks down from the spec's counts, not the counts after reclaim: every
  // pod set is asked at its spec count less its share of the reduction, reclaimable pods
  // included, except one whose pods are all reclaimable, which asks for nothing (Kueue's
  // PodSetResources.ScaledTo keeps a zero count). The admission's usage drops the reclaimable
  // pods again (DeriveQuotaUsage).
  std::vector<int32_t> full_counts;
  std::vector<int32_t> deltas;
  std::vector<bool> all_reclaimed;
  int64_t total_delta = 0;
  for (const PodSetSpec& ps : wl.spec.pod_sets) {
    full_counts.push_back(ps.count);
    all_reclaimed.push_back(CountAfterReclaim(wl.status, ps, state_.config().reclaimable_pods) ==
                            0);
    const int32_t delta = ps.count - ps.min_count.value_or(ps.count);
    deltas.push_back(std::max(delta, 0));
    total_delta += deltas.back();
  }
  if (total_delta > 0) {
    std::optional<Evaluation> last_good;
    int64_t lo = 0;
    int64_t hi = total_delta + 1;
    // Smallest index (least reduction) that fits; fits is monotone in the reduction.
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      std::vector<int32_t> counts(full_counts.size());
      for (size_t i = 0; i < counts.size(); ++i) {
        counts[i] =
            all_reclaimed[i]
                ? 0
                : full_counts[i] - static_cast<int32_t>(int64_t{deltas[i]} * mid / total_delta);
      }
      Evaluation attempt{assigner.Assign(counts), {}};
      bool fits = false;
      const FlavorMode m = attempt.assignment.RepresentativeMode();
      if (m == FlavorMode::kFit) {
        fits = true;
      } else if (m == FlavorMode::kPreempt) {
        targets_for(attempt);
        fits = !attempt.targets.empty();
      }
      if (fits) {
        last_good = std::move(attempt);
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    if (last_good.has_value()) return std::move(*last_good);
  }
  full.targets.clear();
  return full;
}

CyclePlan AdmissionPlanner::PlanCycle(absl::Time now, int64_t cycle) {
  CyclePlan plan;
  plan.cycle = cycle;

  // The heads first (finding one changes nothing), then their evaluations in the same order,
  // each head's data prefetched a few heads ahead: with deep queues every head is a workload
  // no cycle has touched, and waiting for its cache misses one at a time was most of a head's
  // evaluation.
  const std::vector<ClusterQueueRuntime*>& queues = state_.cluster_queues_in_order();
  const bool prioritize_preemptors = state_.config().prioritize_preemptor_workloads;
  const bool sort_by_priority = state_.config().priority_sorting_within_cohort;
  const bool recompute_topology = state_.config().tas_recompute_assignment_within_scheduling_cycle;
  // RecomputeAssignmentUponPreemptionTargetsOverlap: off, a head whose targets another head of
  // the cycle already preempts is not assigned again but skipped (below) for this cycle.
  const bool recompute_overlap =
      state_.config().recompute_assignment_upon_preemption_targets_overlap;
  std::vector<Head> heads;
  // A held cycle goes on, once its block has lifted, with the entries it stopped at, in its
  // order and before any fresh head (Kueue's loop over the cycle's entries continues after
  // waitForPodsReadyIfNeeded returns). Those still queued are evaluated again: what changed
  // during the block (an eviction, a deletion) only frees quota.
  const std::vector<WorkloadId>& held_cycle = state_.held_cycle();
  const bool resuming = !held_cycle.empty();
  plan.resumed_held_cycle = resuming;
  for (WorkloadId id : held_cycle) {
    const Workload* wl = state_.workload(id);
    const ClusterQueueRuntime* cq = state_.QueuedRuntime(id);
    if (wl == nullptr || cq == nullptr || !cq->active || cq->node == nullptr) continue;
    heads.push_back(Head{cq, wl, EffectivePriority(*wl, state_.config()),
                         state_.QueueOrderTime(*wl),
                         prioritize_preemptors && cq->queue.preemptor() == id});
  }
  heads.reserve(queues.size());
  // A queue's node, activity and head record share its runtime's first line: asked for a few
  // queues ahead, so the lines of several queues are on their way at once.
  constexpr size_t kQueuePrefetchDistance = 8;
  for (size_t i = 0; i < std::min(queues.size(), kQueuePrefetchDistance); ++i) {
    if (resuming) break;
    PrefetchLines(queues[i], kCacheLineBytes);
  }
  for (size_t i = 0; i < queues.size() && !resuming; ++i) {
    if (i + kQueuePrefetchDistance < queues.size()) {
      PrefetchLines(queues[i + kQueuePrefetchDistance], kCacheLineBytes);
    }
    const ClusterQueueRuntime& cq = *queues[i];
    if (!cq.active || cq.node == nullptr) continue;
    std::optional<WorkloadId> head = state_.HeadOf(cq);
    if (!head.has_value()) continue;
    const Workload* wl = state_.workload(*head);
    const bool preemptor = prioritize_preemptors && cq.queue.preemptor() == *head;
    if (const QueueKey* key = cq.queue.HeadKey(); key != nullptr && key->id == *head) {
      heads.push_back(Head{&cq, wl, key->priority(), key->timestamp, preemptor});
    } else {
      // Admission fair sharing chose another LocalQueue's first workload.
      heads.push_back(Head{&cq, wl, EffectivePriority(*wl, state_.config()),
                           state_.QueueOrderTime(*wl), preemptor});
    }
  }
  std::vector<Entry> entries;
  entries.reserve(heads.size());
  std::vector<Entry> inadmissible;
  std::vector<ClassicalKey> keys;
  keys.reserve(heads.size());
  for (size_t i = 0; i < std::min(heads.size(), 2 * kHeadPrefetchDistance); ++i) {
    PrefetchHead(heads[i]);
  }
  for (size_t i = 0; i < heads.size(); ++i) {
    if (i + 2 * kHeadPrefetchDistance < heads.size()) {
      PrefetchHead(heads[i + 2 * kHeadPrefetchDistance]);
    }
    if (i + kHeadPrefetchDistance < heads.size()) {
      PrefetchHeadData(heads[i + kHeadPrefetchDistance]);
    }
    const ClusterQueueRuntime* cq = heads[i].cq;
    const Workload* wl = heads[i].wl;
    if (HasFailedChecks(wl->status.admission_checks())) {
      // Kueue's nominate, before anything else: a check left Retry or Rejected on a workload
      // without a reservation (its controller wrote it after the eviction reset the checks, or
      // before any reservation) keeps the workload from reserving until the check changes.
      Entry& e = inadmissible.emplace_back();
      e.wl = wl;
      e.cq = cq;
      e.message = std::string(kFailedChecksMessage);
      e.pending_reason = PendingReason::kPendingEvaluation;
      continue;
    }
    if (!state_.NamespaceMatches(cq->spec, wl->spec.namespace_name)) {
      Entry& e = inadmissible.emplace_back();
      e.wl = wl;
      e.cq = cq;
      e.message = "workload namespace doesn't match ClusterQueue selector";
      e.reason = RequeueReason::kNamespaceMismatch;
      e.pending_reason = PendingReason::kMisconfigured;
      continue;
    }
    // Tested a pointer per pod set first: the message is built only for the rare head that
    // has errors.
    if (std::any_of(wl->spec.pod_sets.begin(), wl->spec.pod_sets.end(),
                    [](const PodSetSpec& ps) { return ps.resource_errors() != nullptr; })) {
      // Kueue's ValidateAdmissibility, after the namespace: a request above its limit.
      Entry& e = inadmissible.emplace_back();
      e.wl = wl;
      e.cq = cq;
      e.message = InvalidResourcesMessage(wl->spec);
      e.pending_reason = PendingReason::kMisconfigured;
      continue;
    }
    // Built in place: an entry carries its whole evaluation.
    Entry& e = entries.emplace_back();
    e.wl = wl;
    e.cq = cq;
    e.preemptor = heads[i].preemptor;
    e.eval = Evaluate(*e.wl, *cq, now, /*nominated=*/nullptr, ResumableProgress(*wl, *cq, cycle));
    e.mode = e.eval.assignment.RepresentativeMode();
    keys.push_back(ClassicalKey{e.preemptor, e.eval.assignment.borrowing,
                                sort_by_priority ? heads[i].priority : 0, heads[i].order_time,
                                wl->id, entries.size() - 1});
  }

  plan.admissions.reserve(entries.size());
  // Usage taken by this cycle's admissions (and reservations) stays simulated until the end.
  UsageSimulation cycle_usage(state_);
  // The quota trees this cycle's usage changed so far: an entry evaluated in a tree left alone
  // sees the quota its evaluation saw.
  ChangedTrees changed_trees;
  std::set<WorkloadId> preempted;
  EntryOrder order(state_, entries, std::move(keys), /*keep_given_order=*/resuming);
  while (Entry* next = order.Next()) {
    Entry& e = *next;
    CycleFit fit =
        FitsAfterRemovals(state_, *e.cq, *e.wl, e.eval.assignment, preempted, e.eval.targets);
    const bool overlap = recompute_overlap && HasAny(preempted, e.eval.targets);
    if (overlap || (fit == CycleFit::kNoTopology && recompute_topology)) {
      // Kueue recomputes the assignment as if the other preemptions had completed (a workload
      // that then fits without preempting anything more waits for them: DeferredFit), and when
      // only the topology no longer fits (another head took its nodes this cycle), unless
      // TASRecomputeAssignmentWithinSchedulingCycle is off: then such a head is skipped below
      // and evaluated afresh in the next cycle. Either way only the flavors of the nomination
      // are considered again. When only the topology no longer fits and no usage of this cycle
      // changed the quota tree the full assignment fit in, the quota part would choose the same
      // flavors again: only the topology is placed again.
      const bool same_quota =
          !overlap && e.mode == FlavorMode::kFit && !changed_trees.Contains(*e.cq) &&
          HasFullCounts(*e.wl, e.eval.assignment, state_.config().reclaimable_pods);
      bool placed_again = false;
      {
        UsageSimulation removal(state_);
        if (overlap) {
          for (WorkloadId id : preempted) removal.RemoveWorkload(*state_.workload(id));
        }
        placed_again = same_quota && PlaceTopologyAgain(state_, *e.wl, *e.cq, e.eval.assignment);
        if (!placed_again) {
          // PlaceTopologyAgain changes the placements only: the flavors are the nomination's.
          const FlavorAssignment nominated = std::move(e.eval.assignment);
          // The other preemptions' victims are gone: no candidates either (Kueue's
          // SimulateWorkloadRemoval deletes them from the snapshot's ClusterQueues).
          e.eval = Evaluate(*e.wl, *e.cq, now, &nominated, /*resume=*/nullptr,
                            overlap ? &preempted : nullptr);
        }
      }
      e.mode = e.eval.assignment.RepresentativeMode();
      if (overlap && e.mode == FlavorMode::kFit) e.deferred_fit = true;
      // Placed again where it fits now, with its quota (which fit) unchanged: it fits, and the
      // cycle's removals only free capacity.
      fit = placed_again ? CycleFit::kFits
                         : FitsAfterRemovals(state_, *e.cq, *e.wl, e.eval.assignment, preempted,
                                             e.eval.targets);
    }
    const bool fits = fit == CycleFit::kFits;
    // Refers to the current evaluation.
    const FrUsage& usage = e.eval.assignment.usage;
    // Whether the entry took topology usage (the cycle's last).
    auto take_topology = [&] {
      // Only pod sets placed on a topology have usage there (most heads have none).
      if (std::none_of(e.eval.assignment.pod_sets.begin(), e.eval.assignment.pod_sets.end(),
                       [](const PodSetFlavors& ps) { return ps.Placed(); })) {
        return false;
      }
      WorkloadTopologyUsage planned =
          PlannedTopologyUsage(e.wl->spec, e.eval.assignment, state_.topology());
      if (planned.empty()) return false;
      cycle_usage.ApplyTopologyUsage(std::move(planned), +1);
      return true;
    };

    if (e.mode == FlavorMode::kNoFit) {
      e.reason = RequeueReason::kNoFit;
      e.pending_reason = PendingReasonOf(e.eval.assignment.ResolveNoFitCause());
      continue;
    }
    if (e.mode == FlavorMode::kPreempt && e.eval.targets.empty()) {
      e.reason = RequeueReason::kPreemptionNoCandidates;
      e.pending_reason = PendingReason::kWaitingForQuota;
      // A queue that can always reclaim its quota takes it back later, so it holds nothing
      // back, unless the head is a preemptor waiting for its victims: what they free is its.
      if (e.cq->spec.preemption.reclaim_within_cohort != PreemptionPolicy::kAny || e.preemptor) {
        cycle_usage.AddUsage(*e.cq->node, ResourcesToReserve(e));
        changed_trees.Add(*e.cq);
        take_topology();
      }
      continue;
    }
    if (e.deferred_fit) {
      e.message =
          "Workload has overlapping preemption targets with another workload, but will fit after "
          "these preemptions complete";
      e.reason = RequeueReason::kPendingPreemption;
      e.pending_reason = PendingReason::kWaitingForPreemptedWorkloads;
      cycle_usage.AddUsage(*e.cq->node, usage);
      changed_trees.Add(*e.cq);
      take_topology();
      continue;
    }
    if (HasAny(preempted, e.eval.targets)) {
      e.skipped = true;
      e.message = "Workload has overlapping preemption targets with another workload";
      e.pending_reason = PendingReason::kWaitingForQuota;
      continue;
    }
    if (!fits) {
      e.skipped = true;
      e.message = "Workload no longer fits after processing another workload";
      e.pending_reason = PendingReason::kWaitingForQuota;
      continue;
    }
    for (const PreemptionTarget& t : e.eval.targets) preempted.insert(t.id);
    cycle_usage.AddUsage(*e.cq->node, usage);
    changed_trees.Add(*e.cq);
    const bool took_topology = take_topology();

    if (e.mode == FlavorMode::kPreempt) {
      e.message = PlanPreemptions(state_, *e.wl, *e.cq, e.eval, plan);
      e.reason = RequeueReason::kPendingPreemption;
      e.pending_reason = PendingReason::kWaitingForPreemptedWorkloads;
      continue;
    }

    const SchedulerConfig::WaitForPodsReady& pods_ready = state_.config().wait_for_pods_ready;
    if (pods_ready.enable && pods_ready.block_admission &&
        (!plan.admissions.empty() || !state_.AllAdmittedPodsReady())) {
      // Kueue admits one workload at a time until its pods run: its scheduler waits here, in
      // the middle of the cycle (waitForPodsReadyIfNeeded), after the preemptions of the
      // entries before this one; the cycle stops and is taken up again once the block lifts.
      e.skipped = true;
      e.message = "waiting for all admitted workloads to be in PodsReady condition";
      e.pending_reason = PendingReason::kWaitingForPodsReady;
      plan.held_cycle.push_back(e.wl->id);
      while (Entry* later = order.Next()) {
        later->awaits_held_cycle = true;
        plan.held_cycle.push_back(later->wl->id);
      }
      break;
    }

    e.admitted = true;
    // The admission takes over the usage its placements have in the cycle (applied right
    // after the plan, it counts nothing again).
    if (took_topology) cycle_usage.HoldLastTopologyUsage(e.wl->id);
    // An admitted entry's evaluation is not read again.
    PlanAdmission(*e.wl, *e.cq, std::move(e.eval.assignment), plan);
  }

  auto requeue = [&plan, cycle](const Entry& e) {
    PendingDecision& p = plan.pending.emplace_back(
        PlanPending(*e.wl, *e.cq, e.reason, e.skipped, e.PendingMessage(), e.pending_reason));
    // Kueue keeps the search's progress for the next cycle (and retries the workload then rather
    // than parking it: it has flavors left to try), except once it preempts or waits for other
    // heads' victims: the cluster changes then, and a better flavor may free up.
    if (e.eval.assignment.scan_stops.empty() || e.reason == RequeueReason::kPendingPreemption) {
      return;
    }
    p.scan_progress =
        FlavorScanProgress{cycle, e.cq->allocatable_generation, e.eval.assignment.scan_stops};
    p.requeue = RequeueKind::kImmediate;
  };
  for (const Entry& e : entries) {
    if (!e.admitted && !e.awaits_held_cycle) requeue(e);
  }
  for (const Entry& e : inadmissible) requeue(e);
  return plan;
}

AdmissionPlanner::SinglePlan AdmissionPlanner::PlanOne(const Workload& wl,
                                                       const ClusterQueueRuntime& cq,
                                                       absl::Time now, int64_t cycle) {
  SinglePlan single;
  single.plan.cycle = cycle;
  Evaluation eval = Evaluate(wl, cq, now);
  const FlavorMode mode = eval.assignment.RepresentativeMode();
  if (mode == FlavorMode::kFit) {
    single.outcome = SinglePlan::Outcome::kAdmit;
    PlanAdmission(wl, cq, std::move(eval.assignment), single.plan);
  } else if (mode == FlavorMode::kPreempt && !eval.targets.empty()) {
    single.outcome = SinglePlan::Outcome::kPreempt;
    single.admission = eval.assignment.ToAdmission(cq.spec.name);
    for (const PreemptionTarget& t : eval.targets) single.victims.push_back(t.id);
    std::string message = PlanPreemptions(state_, wl, cq, eval, single.plan);
    single.plan.pending.push_back(PlanPending(wl, cq, RequeueReason::kPendingPreemption,
                                              /*skipped=*/false, std::move(message),
                                              PendingReason::kWaitingForPreemptedWorkloads));
  } else {
    single.message = eval.assignment.Message();
  }
  return single;
}

}  // namespace tollgate::core
