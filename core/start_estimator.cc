#include "core/start_estimator.h"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <queue>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/cluster_state.h"
#include "core/config_registry.h"
#include "core/deletion_rule.h"
#include "core/object_kind.h"
#include "core/runtime_history.h"
#include "core/status_macros.h"

namespace tollgate::core {
namespace {

// A copy of `workload` for a snapshot: everything but its events (for people; the copy's
// decisions never read them).
std::shared_ptr<const Workload> CopyWithoutEvents(const Workload& wl) {
  auto copy = std::make_shared<Workload>();
  copy->id = wl.id;
  copy->uid = wl.uid;
  copy->creation_time = wl.creation_time;
  copy->spec = wl.spec;
  copy->priority = wl.priority;
  copy->resource_version = wl.resource_version;
  WorkloadStatus& s = copy->status;
  s.state = wl.status.state;
  s.admission = wl.status.admission;
  s.admission_time = wl.status.admission_time;
  s.pending_message = wl.status.pending_message;
  s.pods_ready = wl.status.pods_ready;
  s.deactivated = wl.status.deactivated;
  s.on_hold = wl.status.on_hold;
  s.waiting_for_replacement_pods = wl.status.waiting_for_replacement_pods;
  s.conditions = wl.status.conditions;
  s.set_admission_checks(wl.status.admission_checks());
  if (!(wl.status.history() == WorkloadHistory{})) s.mutable_history() = wl.status.history();
  return copy;
}

// A ClusterState to run forward, built from one tree of a snapshot: the global configuration
// objects, the tree's cohorts, ClusterQueues, LocalQueues and workloads, with their status. Two
// settings change, because the copy has no adapter to answer it: evictions release quota at once,
// and admitted workloads need no pods-ready report. It has no check controllers either: ForwardRun
// passes a reservation's admission checks at once.
absl::StatusOr<std::unique_ptr<ClusterState>> CopyForEstimate(const EstimateSnapshot& snap,
                                                              const EstimateTree& tree) {
  const absl::Time now = snap.now;
  SchedulerConfig config = snap.config;
  config.evictions_need_ack = false;
  config.wait_for_pods_ready.enable = false;
  auto sim = std::make_unique<ClusterState>(config);

  // Re-applied in the restart order, so references resolve as they did when written.
  std::vector<std::pair<int, std::function<absl::Status()>>> applies;
  auto add = [&](ObjectKind kind, std::function<absl::Status()> apply) {
    applies.emplace_back(TraitsOf(kind).apply_order, std::move(apply));
  };
  ClusterState& s = *sim;
  for (const auto& [name, spec] : snap.namespaces)
    add(ObjectKind::kNamespace, [&s, &spec, now] { return s.ApplyNamespace(spec, now); });
  for (const auto& [name, spec] : snap.flavors)
    add(ObjectKind::kResourceFlavor, [&s, &spec, now] { return s.ApplyResourceFlavor(spec, now); });
  auto in_tree = [&tree](const std::vector<std::string>& names, const std::string& name) {
    return tree.whole || std::binary_search(names.begin(), names.end(), name);
  };
  for (const auto& [name, spec] : snap.cohorts) {
    if (!in_tree(tree.cohorts, name)) continue;
    add(ObjectKind::kCohort, [&s, &spec, now] { return s.ApplyCohort(spec, now); });
  }
  for (const auto& [name, spec] : snap.cluster_queues) {
    if (!in_tree(tree.cluster_queues, name)) continue;
    add(ObjectKind::kClusterQueue, [&s, &spec, now] { return s.ApplyClusterQueue(spec, now); });
  }
  auto add_local_queue = [&](const LocalQueueSpec& spec) {
    add(ObjectKind::kLocalQueue, [&s, &spec, now] { return s.ApplyLocalQueue(spec, now); });
  };
  if (tree.whole) {
    for (const LocalQueueSpec& spec : snap.local_queues) add_local_queue(spec);
  } else {
    for (size_t i : tree.local_queues) add_local_queue(snap.local_queues[i]);
  }
  for (const auto& [name, spec] : snap.workload_priority_classes)
    add(ObjectKind::kWorkloadPriorityClass,
        [&s, &spec, now] { return s.ApplyPriorityClass(spec, now); });
  for (const auto& [name, spec] : snap.pod_priority_classes)
    add(ObjectKind::kPriorityClass, [&s, &spec, now] { return s.ApplyPriorityClass(spec, now); });
  for (const auto& entry : snap.admission_checks) {
    const AdmissionCheckRuntime& check = entry.second;
    add(ObjectKind::kAdmissionCheck, [&s, &check, now]() -> absl::Status {
      TOLLGATE_RETURN_IF_ERROR(s.ApplyAdmissionCheck(check.spec, now));
      if (!check.active.has_value()) return absl::OkStatus();
      return s.RestoreAdmissionCheckActive(check.spec.name, *check.active, now);
    });
  }
  for (const auto& [name, spec] : snap.topologies)
    add(ObjectKind::kTopology, [&s, &spec, now] { return s.ApplyTopology(spec, now); });
  std::stable_sort(applies.begin(), applies.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [order, apply] : applies) TOLLGATE_RETURN_IF_ERROR(apply());
  if (snap.nodes != nullptr) {
    for (const auto& [name, node] : *snap.nodes) TOLLGATE_RETURN_IF_ERROR(s.UpsertNode(node, now));
  }
  for (const auto& [name, pod] : snap.reported_pods) {
    TOLLGATE_RETURN_IF_ERROR(s.ReportPod(name, pod.node, pod.requests, now));
  }
  for (const auto& [kind_key, since] : snap.terminating) {
    const auto& [kind, key] = kind_key;
    // Only cluster-scoped kinds terminate (ClusterQueue, Namespace, AdmissionCheck): the key is
    // the name.
    if (!CanTerminate(kind)) continue;
    if (kind == ObjectKind::kClusterQueue && !in_tree(tree.cluster_queues, key)) continue;
    TOLLGATE_RETURN_IF_ERROR(sim->RestoreTerminating(kind, "", key, since, now));
  }

  std::vector<std::unique_ptr<Workload>> workloads;
  auto add_workload = [&workloads](const Workload& wl) {
    workloads.push_back(std::make_unique<Workload>(wl));
  };
  if (tree.whole) {
    workloads.reserve(snap.workloads.size());
    for (const std::shared_ptr<const Workload>& wl : snap.workloads) add_workload(*wl);
  } else {
    workloads.reserve(tree.workloads.size());
    for (size_t i : tree.workloads) add_workload(*snap.workloads[i]);
  }
  TOLLGATE_RETURN_IF_ERROR(sim->RestoreAll(std::move(workloads)));
  // Evictions that were waiting for an adapter's report end now.
  for (const Workload* wl : sim->AllWorkloads()) {
    if (wl->status.state == WorkloadState::kEvicting) {
      TOLLGATE_RETURN_IF_ERROR(sim->ReleaseEvicted(wl->Key(), now));
    }
  }
  return sim;
}

// How the runtimes of the workloads holding quota were obtained.
struct RuntimeCounts {
  int64_t declared = 0;
  int64_t learned = 0;
  int64_t unknown = 0;
};

struct RunResult {
  // By the copy's id: when each target started, and the runtimes its start rested on (those
  // placed before it started).
  std::map<WorkloadId, absl::Time> started;
  std::map<WorkloadId, RuntimeCounts> started_on;
  bool hit_bound = false;
  absl::Time stopped_at;
  // Workloads holding quota whose end the run could not place when it stopped.
  int64_t unknown_holders = 0;
  RuntimeCounts counts;
  int64_t steps = 0;
  int64_t cycles = 0;
};

// One forward run of the copy at one runtime quantile. Changes the copy.
class ForwardRun {
 public:
  ForwardRun(ClusterState& sim, const RuntimeHistory& history, const StartEstimateOptions& options,
             double quantile)
      : sim_(sim), history_(history), options_(options), quantile_(quantile) {}

  // Runs until every target started, nothing more can change, or a bound is hit.
  RunResult Run(const absl::flat_hash_set<WorkloadId>& targets, absl::Time now) {
    RunResult result;
    size_t remaining = targets.size();
    for (const Workload* wl : sim_.AllWorkloads()) {
      if (wl->status.state == WorkloadState::kQuotaReserved) PassChecks(*wl, now);
    }
    for (const Workload* wl : sim_.AllWorkloads()) {
      if (wl->status.state == WorkloadState::kAdmitted) Schedule(*wl, now, result);
    }
    absl::Time t = now;
    while (true) {
      // Time-based transitions (backoff expiry) are part of the rules too.
      (void)sim_.FireTimers(t);
      while (result.cycles < options_.max_cycles) {
        CyclePlan plan = sim_.PlanCycle(t);
        sim_.ApplyCycle(plan, t);
        ++result.cycles;
        for (const PreemptionDecision& p : plan.preemptions) {
          // It restarts from zero when admitted again; its old end no longer holds.
          end_of_.erase(p.victim);
          unknown_holders_.erase(p.victim);
        }
        for (const AdmissionDecision& a : plan.admissions) {
          if (targets.contains(a.id) && !result.started.contains(a.id)) {
            result.started.emplace(a.id, t);
            result.started_on.emplace(a.id, result.counts);
            --remaining;
          }
        }
        for (const AdmissionDecision& a : plan.admissions) {
          const Workload* wl = sim_.workload(a.id);
          if (wl == nullptr) continue;
          PassChecks(*wl, t);
          if (wl->status.state == WorkloadState::kAdmitted) Schedule(*wl, t, result);
        }
        if (!plan.MadeProgress()) break;
      }
      if (remaining == 0) break;
      std::optional<absl::Time> next = NextEnd();
      std::optional<absl::Time> timer = sim_.NextTimer();
      if (timer.has_value() && (!next.has_value() || *timer < *next)) next = timer;
      if (!next.has_value()) break;  // nothing more will ever change
      if (result.steps >= options_.max_steps || result.cycles >= options_.max_cycles ||
          *next - now > options_.horizon) {
        result.hit_bound = true;
        break;
      }
      ++result.steps;
      t = std::max(t, *next);
      while (!ends_.empty() && ends_.top().first <= t) {
        const auto [at, id] = ends_.top();
        ends_.pop();
        auto it = end_of_.find(id);
        if (it == end_of_.end() || it->second != at) continue;  // preempted since
        end_of_.erase(it);
        const Workload* wl = sim_.workload(id);
        if (wl == nullptr || wl->status.state != WorkloadState::kAdmitted) continue;
        (void)sim_.Finish(wl->Key(), "", t);  // cannot fail: it is admitted
      }
      // A terminating ClusterQueue whose last workload ended goes, with the quota it lent.
      (void)sim_.TakeFinalizedObjects(t);
    }
    result.stopped_at = t;
    result.unknown_holders = static_cast<int64_t>(unknown_holders_.size());
    return result;
  }

 private:
  // The time admission checks take is not modelled (docs/start-estimates.md): a reservation's
  // checks pass at once, which admits it.
  void PassChecks(const Workload& wl, absl::Time now) {
    if (wl.status.state != WorkloadState::kQuotaReserved) return;
    const std::string key = wl.Key();
    std::vector<std::string> names;
    for (const AdmissionCheckState& c : wl.status.admission_checks()) names.push_back(c.name);
    for (const std::string& name : names) {
      CheckStateUpdate ready;
      ready.check = name;
      ready.state = CheckState::kReady;
      // Cannot fail: the check is the workload's own and the update names no pod set.
      (void)sim_.SetAdmissionCheckState(key, std::move(ready), now);
    }
  }

  // Places the end of an admitted workload of the copy, or counts it as unknown.
  void Schedule(const Workload& wl, absl::Time now, RunResult& result) {
    const absl::Duration elapsed = std::max(absl::ZeroDuration(), now - wl.status.admission_time);
    std::optional<absl::Duration> run;
    const bool use_declared = options_.runtimes != RuntimeSource::kHistoryOnly;
    const bool use_history = options_.runtimes != RuntimeSource::kDeclaredOnly;
    std::optional<absl::Duration> declared;
    if (use_declared) {
      if (options_.declared_runtime) {
        declared = options_.declared_runtime(wl);
      } else if (wl.spec.maximum_execution_time_seconds.has_value()) {
        // Enforced (ExecutionDeadline): it ends when what is left of its limit runs out.
        declared = absl::Seconds(*wl.spec.maximum_execution_time_seconds) -
                   wl.status.history().past_execution;
      }
    }
    if (declared.has_value()) {
      run = *declared;
      ++result.counts.declared;
    } else if (use_history) {
      const RuntimeDistribution& dist = DistributionOf(wl);
      if (!dist.empty()) {
        // A workload that has outrun every recorded duration is assumed to end now.
        run = dist.QuantileGiven(quantile_, elapsed).value_or(elapsed);
        ++result.counts.learned;
      }
    }
    if (!run.has_value()) {
      ++result.counts.unknown;
      unknown_holders_.insert(wl.id);
      return;
    }
    const absl::Time end = std::max(now, wl.status.admission_time + *run);
    end_of_[wl.id] = end;
    ends_.emplace(end, wl.id);
  }

  const RuntimeDistribution& DistributionOf(const Workload& wl) {
    const std::string key = LocalQueueKey(wl.spec.namespace_name, wl.spec.queue_name);
    auto it = distributions_.find(key);
    if (it == distributions_.end()) {
      it = distributions_.emplace(key, RuntimeDistribution(history_, key)).first;
    }
    return it->second;
  }

  std::optional<absl::Time> NextEnd() {
    while (!ends_.empty()) {
      auto it = end_of_.find(ends_.top().second);
      if (it != end_of_.end() && it->second == ends_.top().first) return ends_.top().first;
      ends_.pop();
    }
    return std::nullopt;
  }

  ClusterState& sim_;
  const RuntimeHistory& history_;
  const StartEstimateOptions& options_;
  const double quantile_;
  absl::flat_hash_map<std::string, RuntimeDistribution> distributions_;
  std::priority_queue<std::pair<absl::Time, WorkloadId>,
                      std::vector<std::pair<absl::Time, WorkloadId>>, std::greater<>>
      ends_;
  absl::flat_hash_map<WorkloadId, absl::Time> end_of_;
  std::set<WorkloadId> unknown_holders_;
};

std::string Basis(const RuntimeCounts& c) {
  return absl::StrCat("runtimes: ", c.declared, " declared, ", c.learned,
                      " from LocalQueue history, ", c.unknown, " unknown");
}

// Why a workload of the copy that never started did not: the answer for it.
StartEstimate Unstarted(const ClusterState& sim, const Workload& wl, const RunResult& r) {
  StartEstimate e;
  e.basis = Basis(r.counts);
  if (!wl.spec.active || wl.status.deactivated) {
    e.reason = "the workload is deactivated";
    return e;
  }
  if (wl.status.on_hold) {
    e.reason = "the workload is on hold";
    return e;
  }
  if (wl.status.waiting_for_replacement_pods) {
    e.reason = "the workload waits for replacement pods";
    return e;
  }
  const LocalQueueRuntime* lq =
      sim.registry().FindLocalQueue(wl.spec.namespace_name, wl.spec.queue_name);
  if (lq == nullptr) {
    e.reason = absl::StrCat("LocalQueue ", wl.spec.namespace_name, "/", wl.spec.queue_name,
                            " does not exist");
    return e;
  }
  if (lq->spec.stop_policy != StopPolicy::kNone) {
    e.reason = absl::StrCat("LocalQueue ", wl.spec.queue_name, " is stopped");
    return e;
  }
  auto cq = sim.cluster_queue_specs().find(lq->spec.cluster_queue);
  if (cq == sim.cluster_queue_specs().end()) {
    e.reason = absl::StrCat("ClusterQueue ", lq->spec.cluster_queue, " does not exist");
    return e;
  }
  if (cq->second.stop_policy != StopPolicy::kNone) {
    e.reason = absl::StrCat("ClusterQueue ", cq->first, " is stopped");
    return e;
  }
  if (sim.TerminatingSince(ObjectKind::kClusterQueue, "", cq->first).has_value()) {
    e.reason = absl::StrCat("ClusterQueue ", cq->first, " is terminating");
    return e;
  }
  if (r.hit_bound) {
    e.kind = StartEstimate::Kind::kNotBefore;
    e.likely = r.stopped_at;
    e.reason = "not started within the estimate's bounds (simulated instants, cycles or horizon)";
    return e;
  }
  if (r.unknown_holders > 0) {
    e.reason = absl::StrCat(r.unknown_holders,
                            " workloads holding quota have no known runtime (no declared "
                            "maximumExecutionTimeSeconds and no finished workload in their "
                            "LocalQueue)");
    return e;
  }
  e.reason = absl::StrCat("it does not fit even after every workload ahead of it has ended",
                          wl.status.pending_message.empty() ? "" : ": ", wl.status.pending_message);
  return e;
}

// Runs the copy forward at the likely quantile and, when history mattered, again at the late
// one (on a fresh copy), and answers for each target (by the copy's id).
absl::StatusOr<std::map<WorkloadId, StartEstimate>> EstimateTargets(
    const RuntimeHistory& history,
    const std::function<absl::StatusOr<std::unique_ptr<ClusterState>>()>& make_copy,
    const std::function<absl::flat_hash_set<WorkloadId>(const ClusterState&)>& pick_targets,
    const StartEstimateOptions& options, absl::Time now, int64_t* steps, int64_t* cycles) {
  TOLLGATE_ASSIGN_OR_RETURN(std::unique_ptr<ClusterState> sim, make_copy());
  const absl::flat_hash_set<WorkloadId> targets = pick_targets(*sim);
  // Answers are by id of the copy; keep each target's key to find it in a second copy.
  std::map<WorkloadId, StartEstimate> out;
  ForwardRun likely_run(*sim, history, options, options.likely_quantile);
  const RunResult likely = likely_run.Run(targets, now);
  *steps += likely.steps;
  *cycles += likely.cycles;
  for (WorkloadId id : targets) {
    auto it = likely.started.find(id);
    if (it != likely.started.end()) {
      StartEstimate& e = out[id];
      e.kind = StartEstimate::Kind::kEstimated;
      e.likely = it->second;
      e.basis = Basis(likely.started_on.at(id));
    } else {
      out[id] = Unstarted(*sim, *sim->workload(id), likely);
    }
  }
  if (options.late_quantile <= 0 || likely.counts.learned == 0) return out;

  TOLLGATE_ASSIGN_OR_RETURN(std::unique_ptr<ClusterState> sim2, make_copy());
  const absl::flat_hash_set<WorkloadId> targets2 = pick_targets(*sim2);
  ForwardRun late_run(*sim2, history, options, options.late_quantile);
  const RunResult late = late_run.Run(targets2, now);
  *steps += late.steps;
  *cycles += late.cycles;
  // Both copies are built the same way, so the same workload has the same id in each.
  for (auto& [id, e] : out) {
    if (e.kind != StartEstimate::Kind::kEstimated) continue;
    auto it = late.started.find(id);
    // Scheduling is not monotone in runtimes; a range reads as one, so late >= likely.
    if (it != late.started.end()) e.late = std::max(it->second, e.likely);
  }
  return out;
}

}  // namespace

std::shared_ptr<const EstimateSnapshot> TakeEstimateSnapshot(const ClusterState& state,
                                                             absl::Time now,
                                                             const EstimateSnapshot* previous) {
  auto snap = std::make_shared<EstimateSnapshot>();
  snap->now = now;
  snap->config = state.config();
  snap->namespaces = state.namespaces();
  snap->flavors = state.flavors();
  snap->cohorts = state.cohorts();
  snap->cluster_queues = state.cluster_queue_specs();
  for (const auto& [key, lq] : state.local_queues()) snap->local_queues.push_back(lq.spec);
  snap->workload_priority_classes = state.workload_priority_classes();
  snap->pod_priority_classes = state.pod_priority_classes();
  snap->admission_checks = state.admission_checks();
  const TopologyInventory& inventory = state.topology();
  snap->topologies = inventory.topologies();
  snap->topology_generation = inventory.generation();
  if (previous != nullptr && previous->nodes != nullptr &&
      previous->topology_generation == inventory.generation()) {
    snap->nodes = previous->nodes;
  } else if (!inventory.nodes().empty()) {
    snap->nodes = std::make_shared<const std::map<std::string, NodeSpec>>(inventory.nodes());
  }
  snap->reported_pods = inventory.pods();
  snap->terminating = state.registry().terminating();
  snap->history = state.runtime_history();
  // Both lists are in id order, so the previous copies are found by walking along.
  size_t p = 0;
  const size_t previous_size = previous == nullptr ? 0 : previous->workloads.size();
  for (const Workload* wl : state.AllWorkloads()) {
    if (wl->status.state != WorkloadState::kPending && !wl->HoldsQuota()) continue;
    while (p < previous_size && previous->workloads[p]->id < wl->id) ++p;
    if (p < previous_size && previous->workloads[p]->id == wl->id && wl->resource_version != 0 &&
        previous->workloads[p]->resource_version == wl->resource_version &&
        !state.IsDirty(wl->id)) {
      snap->workloads.push_back(previous->workloads[p]);
      ++snap->reused;
      continue;
    }
    snap->workloads.push_back(CopyWithoutEvents(*wl));
  }
  return snap;
}

namespace {

// Union-find over the names a tree links: cohorts, ClusterQueues and LocalQueues.
class TreeLinks {
 public:
  int Node(std::string name) {
    auto [it, inserted] = ids_.try_emplace(std::move(name), static_cast<int>(parent_.size()));
    if (inserted) parent_.push_back(it->second);
    return it->second;
  }
  int Root(int n) {
    while (parent_[n] != n) n = parent_[n] = parent_[parent_[n]];
    return n;
  }
  void Link(int a, int b) {
    a = Root(a);
    b = Root(b);
    if (a != b) parent_[std::max(a, b)] = std::min(a, b);
  }

 private:
  absl::flat_hash_map<std::string, int> ids_;
  std::vector<int> parent_;
};

std::string CohortNode(const std::string& name) { return absl::StrCat("C", name); }
std::string ClusterQueueNode(const std::string& name) { return absl::StrCat("Q", name); }
std::string LocalQueueNode(const std::string& key) { return absl::StrCat("L", key); }

// Whether some input links every tree: Topology Aware Scheduling (every tree's pods on the
// same nodes), or a terminating Namespace or AdmissionCheck (it goes when the last workload of
// any tree using it ends, which changes the trees that use it).
bool TreesAreLinked(const EstimateSnapshot& snapshot) {
  if (!snapshot.topologies.empty() || !snapshot.reported_pods.empty()) return true;
  if (snapshot.nodes != nullptr && !snapshot.nodes->empty()) return true;
  for (const auto& [kind_key, since] : snapshot.terminating) {
    if (kind_key.first != ObjectKind::kClusterQueue) return true;
  }
  return false;
}

}  // namespace

std::vector<EstimateTree> SplitIntoTrees(const EstimateSnapshot& snapshot,
                                         const StartEstimateOptions& options) {
  if (!options.independent_trees || TreesAreLinked(snapshot)) {
    EstimateTree whole;
    whole.whole = true;
    for (size_t i = 0; i < snapshot.workloads.size(); ++i) {
      whole.workloads.push_back(i);
      whole.pending += snapshot.workloads[i]->status.state == WorkloadState::kPending;
    }
    for (const LocalQueueSpec& lq : snapshot.local_queues) {
      whole.history_keys.push_back(LocalQueueKey(lq.namespace_name, lq.name));
    }
    for (const auto& wl : snapshot.workloads) {
      whole.history_keys.push_back(LocalQueueKey(wl->spec.namespace_name, wl->spec.queue_name));
    }
    std::sort(whole.history_keys.begin(), whole.history_keys.end());
    whole.history_keys.erase(std::unique(whole.history_keys.begin(), whole.history_keys.end()),
                             whole.history_keys.end());
    return {std::move(whole)};
  }
  TreeLinks links;
  for (const auto& [name, spec] : snapshot.cohorts) {
    const int node = links.Node(CohortNode(name));
    if (!spec.parent.empty()) links.Link(node, links.Node(CohortNode(spec.parent)));
  }
  for (const auto& [name, spec] : snapshot.cluster_queues) {
    const int node = links.Node(ClusterQueueNode(name));
    if (!spec.cohort.empty()) links.Link(node, links.Node(CohortNode(spec.cohort)));
  }
  std::vector<int> local_queue_nodes;
  for (const LocalQueueSpec& lq : snapshot.local_queues) {
    const int node = links.Node(LocalQueueNode(LocalQueueKey(lq.namespace_name, lq.name)));
    links.Link(node, links.Node(ClusterQueueNode(lq.cluster_queue)));
    local_queue_nodes.push_back(node);
  }
  // A workload belongs to its LocalQueue's tree; one holding quota also to the tree of the
  // ClusterQueue it holds it in (they differ only when its LocalQueue was pointed elsewhere since:
  // preempted in the copy, it would queue in the other tree, so both are one).
  std::vector<int> workload_nodes;
  for (const auto& wl : snapshot.workloads) {
    const int node =
        links.Node(LocalQueueNode(LocalQueueKey(wl->spec.namespace_name, wl->spec.queue_name)));
    if (wl->HoldsQuota() && wl->status.admission.has_value()) {
      links.Link(node, links.Node(ClusterQueueNode(wl->status.admission->cluster_queue)));
    }
    workload_nodes.push_back(node);
  }

  // Trees in order of their root node; names are settled at the end.
  std::map<int, EstimateTree> by_root;
  for (const auto& [name, spec] : snapshot.cohorts) {
    by_root[links.Root(links.Node(CohortNode(name)))].cohorts.push_back(name);
  }
  for (const auto& [name, spec] : snapshot.cluster_queues) {
    by_root[links.Root(links.Node(ClusterQueueNode(name)))].cluster_queues.push_back(name);
  }
  for (size_t i = 0; i < snapshot.local_queues.size(); ++i) {
    EstimateTree& tree = by_root[links.Root(local_queue_nodes[i])];
    tree.local_queues.push_back(i);
    const LocalQueueSpec& lq = snapshot.local_queues[i];
    tree.history_keys.push_back(LocalQueueKey(lq.namespace_name, lq.name));
  }
  for (size_t i = 0; i < snapshot.workloads.size(); ++i) {
    EstimateTree& tree = by_root[links.Root(workload_nodes[i])];
    const Workload& wl = *snapshot.workloads[i];
    tree.workloads.push_back(i);
    tree.pending += wl.status.state == WorkloadState::kPending;
    tree.history_keys.push_back(LocalQueueKey(wl.spec.namespace_name, wl.spec.queue_name));
  }
  std::vector<EstimateTree> trees;
  trees.reserve(by_root.size());
  for (auto& [root, tree] : by_root) {
    // Cohorts named by ClusterQueues or parents but with no object are links, not members.
    std::sort(tree.cohorts.begin(), tree.cohorts.end());
    std::sort(tree.cluster_queues.begin(), tree.cluster_queues.end());
    std::sort(tree.history_keys.begin(), tree.history_keys.end());
    tree.history_keys.erase(std::unique(tree.history_keys.begin(), tree.history_keys.end()),
                            tree.history_keys.end());
    if (!tree.cluster_queues.empty()) {
      tree.name = tree.cluster_queues.front();
    } else if (!tree.history_keys.empty()) {
      tree.name = absl::StrCat("LocalQueue ", tree.history_keys.front());
    } else if (!tree.cohorts.empty()) {
      tree.name = absl::StrCat("Cohort ", tree.cohorts.front());
    }
    trees.push_back(std::move(tree));
  }
  std::sort(trees.begin(), trees.end(),
            [](const EstimateTree& a, const EstimateTree& b) { return a.name < b.name; });
  return trees;
}

absl::StatusOr<StartEstimates> EstimateTreeStarts(const EstimateSnapshot& snapshot,
                                                  const EstimateTree& tree,
                                                  const StartEstimateOptions& options) {
  StartEstimates result;
  result.now = snapshot.now;
  // Pending workloads of the tree, in id order: the copy keeps that order, so the i-th pending
  // workload of the copy is the i-th here.
  std::vector<WorkloadId> live_pending;
  for (size_t i : tree.workloads) {
    const Workload& wl = *snapshot.workloads[i];
    if (wl.status.state == WorkloadState::kPending) live_pending.push_back(wl.id);
  }
  if (live_pending.empty()) return result;
  result.trees = 1;
  result.trees_simulated = 1;
  auto make_copy = [&snapshot, &tree] { return CopyForEstimate(snapshot, tree); };
  std::vector<WorkloadId> sim_pending;
  auto pick = [&sim_pending](const ClusterState& sim) {
    sim_pending.clear();
    absl::flat_hash_set<WorkloadId> targets;
    for (const Workload* wl : sim.AllWorkloads()) {
      if (wl->status.state != WorkloadState::kPending) continue;
      sim_pending.push_back(wl->id);
      targets.insert(wl->id);
    }
    return targets;
  };
  TOLLGATE_ASSIGN_OR_RETURN(
      auto by_sim_id, EstimateTargets(snapshot.history, make_copy, pick, options, snapshot.now,
                                      &result.steps, &result.cycles));
  if (sim_pending.size() != live_pending.size()) {
    return absl::InternalError("start estimate: the copy's pending workloads differ");
  }
  for (size_t i = 0; i < live_pending.size(); ++i) {
    result.by_id[live_pending[i]] = std::move(by_sim_id[sim_pending[i]]);
  }
  return result;
}

absl::StatusOr<StartEstimates> EstimatePendingStarts(const EstimateSnapshot& snapshot,
                                                     const StartEstimateOptions& options) {
  StartEstimates result;
  result.now = snapshot.now;
  for (const EstimateTree& tree : SplitIntoTrees(snapshot, options)) {
    if (tree.pending == 0) continue;
    TOLLGATE_ASSIGN_OR_RETURN(StartEstimates part, EstimateTreeStarts(snapshot, tree, options));
    result.by_id.merge(part.by_id);
    result.steps += part.steps;
    result.cycles += part.cycles;
    result.trees += part.trees;
    result.trees_simulated += part.trees_simulated;
  }
  return result;
}

absl::StatusOr<StartEstimates> EstimatePendingStarts(const ClusterState& state, absl::Time now,
                                                     const StartEstimateOptions& options) {
  return EstimatePendingStarts(*TakeEstimateSnapshot(state, now), options);
}

absl::StatusOr<StartEstimate> EstimateSubmission(const EstimateSnapshot& snapshot,
                                                 WorkloadSpec spec,
                                                 const StartEstimateOptions& options) {
  const std::string key = WorkloadKey{spec.namespace_name, spec.name}.ToString();
  for (const std::shared_ptr<const Workload>& wl : snapshot.workloads) {
    if (wl->spec.namespace_name == spec.namespace_name && wl->spec.name == spec.name) {
      return absl::AlreadyExistsError(absl::StrCat("workload ", key, " already exists"));
    }
  }
  // Only the tree of the workload's LocalQueue bears on its start (an empty tree when that
  // LocalQueue does not exist: Submit answers why).
  const std::string local_queue = LocalQueueKey(spec.namespace_name, spec.queue_name);
  EstimateTree tree;
  for (EstimateTree& t : SplitIntoTrees(snapshot, options)) {
    if (t.whole || std::binary_search(t.history_keys.begin(), t.history_keys.end(), local_queue)) {
      tree = std::move(t);
      break;
    }
  }
  auto make_copy = [&]() -> absl::StatusOr<std::unique_ptr<ClusterState>> {
    TOLLGATE_ASSIGN_OR_RETURN(std::unique_ptr<ClusterState> sim, CopyForEstimate(snapshot, tree));
    TOLLGATE_RETURN_IF_ERROR(sim->Submit(spec, "estimate", snapshot.now).status());
    return sim;
  };
  auto pick = [&key](const ClusterState& sim) {
    absl::flat_hash_set<WorkloadId> targets;
    if (const Workload* wl = sim.FindWorkload(key)) targets.insert(wl->id);
    return targets;
  };
  int64_t steps = 0, cycles = 0;
  TOLLGATE_ASSIGN_OR_RETURN(
      auto by_sim_id,
      EstimateTargets(snapshot.history, make_copy, pick, options, snapshot.now, &steps, &cycles));
  if (by_sim_id.size() != 1) return absl::InternalError("start estimate: no estimate made");
  return std::move(by_sim_id.begin()->second);
}

absl::StatusOr<StartEstimate> EstimateSubmission(const ClusterState& state, WorkloadSpec spec,
                                                 absl::Time now,
                                                 const StartEstimateOptions& options) {
  const std::string key = WorkloadKey{spec.namespace_name, spec.name}.ToString();
  if (state.FindWorkload(key) != nullptr) {
    return absl::AlreadyExistsError(absl::StrCat("workload ", key, " already exists"));
  }
  return EstimateSubmission(*TakeEstimateSnapshot(state, now), std::move(spec), options);
}

namespace {

std::string Rounded(absl::Duration d) {
  if (d < absl::Minutes(1)) return absl::StrCat(absl::ToInt64Seconds(d), "s");
  if (d < absl::Hours(1)) return absl::StrCat(absl::ToInt64Minutes(d), "m");
  if (d < absl::Hours(48)) {
    const int64_t minutes = absl::ToInt64Minutes(d);
    return minutes % 60 == 0 ? absl::StrCat(minutes / 60, "h")
                             : absl::StrCat(minutes / 60, "h", minutes % 60, "m");
  }
  return absl::StrCat(absl::ToInt64Hours(d) / 24, "d", absl::ToInt64Hours(d) % 24, "h");
}

}  // namespace

std::string FormatStartEstimate(const StartEstimate& e, absl::Time now) {
  switch (e.kind) {
    case StartEstimate::Kind::kEstimated: {
      std::string out = e.likely <= now ? "now" : absl::StrCat("in ", Rounded(e.likely - now));
      if (e.late.has_value() && *e.late > e.likely) {
        absl::StrAppend(&out, " (late: ", Rounded(*e.late - now), ")");
      }
      return out;
    }
    case StartEstimate::Kind::kNotBefore:
      return absl::StrCat("not before ", Rounded(e.likely - now));
    case StartEstimate::Kind::kUnknown:
      return "unknown";
  }
  return "unknown";
}

}  // namespace tollgate::core
