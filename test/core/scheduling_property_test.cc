// Property test of the scheduling core: replays seeded random action sequences (submit, finish,
// evict, release evicted, change quota, stop or resume a ClusterQueue, delete or re-apply a
// Cohort, advance time; with admission checks also check states and activation) against real
// ClusterStates and checks after every step and every cycle that
//   (a) the quota tree's bookkeeping matches usage recomputed from the workloads,
//   (b) no admission creates or worsens a quota overdraw,
//   (c) no workload is admitted twice or held by two ClusterQueues,
//   (d) every preemption has a valid claim (classical preemption),
//   (e) the same inputs give the same plans,
//   (f) no workload of an inactive ClusterQueue is preempted by another queue's workload,
//   (g) admission checks: a workload carries exactly its queue's checks for its admission (or
//       for none), a reservation waiting on them has one not Ready, and no workload without
//       quota holds a Retry or Rejected check,
//   (h) every ClusterQueue's head key carries its head's current priority and queue-order time.
// A failure names the seed and step; TOLLGATE_PROPERTY_SEED=<seed> replays only that seed and
// prints the configuration, every action, who holds quota before each cycle, and every plan.

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <initializer_list>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "core/admission_checks.h"
#include "core/cluster_state.h"
#include "core/cycle_plan.h"
#include "core/preemption_planner.h"
#include "core/quota_tree.h"
#include "core/scheduler_config.h"
#include "core/types.h"
#include "core/workload.h"
#include "gtest/gtest.h"

namespace tollgate::core {
namespace {

const absl::Time kStart = absl::FromUnixSeconds(1767225600);
const std::vector<std::string> kResources = {"cpu", "gpu"};
const std::vector<int32_t> kPriorities = {0, 10, 100, 1000};
// Every cycle that makes progress admits, preempts or parks a workload, so a settle loop that
// neither converges nor repeats itself within this many cycles is broken.
constexpr int kMaxCyclesPerSettle = 1000;

// SplitMix64, spelled out because the standard distributions are implementation-defined: a seed
// must replay the same actions with every standard library.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}

  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [lo, hi].
  int64_t Between(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(Next() % static_cast<uint64_t>(hi - lo + 1));
  }
  bool Percent(int percent) { return Between(0, 99) < percent; }
  template <typename T>
  const T& Pick(const std::vector<T>& values) {
    return values[static_cast<size_t>(Between(0, static_cast<int64_t>(values.size()) - 1))];
  }

 private:
  uint64_t state_;
};

// Quantities are drawn in whole units; cpu is stored in milli-units as Kueue does.
int64_t Scaled(const std::string& resource, int64_t units) {
  return resource == "cpu" ? units * 1000 : units;
}

// --- Random configuration ------------------------------------------------------------------

struct Scenario {
  SchedulerConfig scheduler;
  // Admission checks (all active); empty unless the run tests them.
  std::vector<std::string> checks;
  std::vector<std::string> flavors;
  std::vector<CohortSpec> cohorts;
  std::vector<ClusterQueueSpec> cluster_queues;
  std::vector<LocalQueueSpec> local_queues;
};

// A random non-empty subset of the flavors, in random order (the queue's preference order).
std::vector<std::string> SomeFlavors(Rng& rng, std::vector<std::string> flavors) {
  for (size_t i = flavors.size(); i > 1; --i) {
    std::swap(flavors[i - 1], flavors[static_cast<size_t>(rng.Between(0, i - 1))]);
  }
  flavors.resize(static_cast<size_t>(rng.Between(1, static_cast<int64_t>(flavors.size()))));
  return flavors;
}

// Kueue only allows borrowing and lending limits on a node that has a parent, and a lending
// limit no larger than the nominal quota.
ResourceGroupSpec RandomGroup(Rng& rng, const std::vector<std::string>& flavors, bool has_parent,
                              int64_t max_nominal_units) {
  ResourceGroupSpec group;
  group.covered_resources = kResources;
  for (const std::string& flavor : SomeFlavors(rng, flavors)) {
    FlavorQuotasSpec quotas;
    quotas.flavor = flavor;
    for (const std::string& resource : kResources) {
      ResourceQuotaSpec quota;
      quota.resource = resource;
      const int64_t nominal = rng.Between(0, max_nominal_units);
      quota.nominal = Scaled(resource, nominal);
      if (has_parent && rng.Percent(40))
        quota.borrowing_limit = Scaled(resource, rng.Between(0, 6));
      if (has_parent && rng.Percent(30))
        quota.lending_limit = Scaled(resource, rng.Between(0, nominal));
      quotas.resources.push_back(std::move(quota));
    }
    group.flavors.push_back(std::move(quotas));
  }
  return group;
}

PreemptionSpec RandomPreemption(Rng& rng) {
  PreemptionSpec spec;
  spec.within_cluster_queue = rng.Pick(
      std::vector<PreemptionPolicy>{PreemptionPolicy::kNever, PreemptionPolicy::kLowerPriority,
                                    PreemptionPolicy::kLowerOrNewerEqualPriority});
  spec.reclaim_within_cohort = rng.Pick(std::vector<PreemptionPolicy>{
      PreemptionPolicy::kNever, PreemptionPolicy::kLowerPriority, PreemptionPolicy::kAny});
  // Kueue rejects borrowWithinCohort without reclaimWithinCohort.
  if (spec.reclaim_within_cohort != PreemptionPolicy::kNever && rng.Percent(40)) {
    spec.borrow_within_cohort = BorrowWithinCohortPolicy::kLowerPriority;
    if (rng.Percent(50)) spec.max_priority_threshold = rng.Pick(kPriorities);
  }
  return spec;
}

double RandomWeight(Rng& rng) {
  // Weight 0 is legal and means "only what nobody else wants".
  return rng.Pick(std::vector<double>{0.0, 0.5, 1.0, 1.0, 2.0, 3.0});
}

Scenario RandomScenario(Rng& rng, bool fair_sharing, bool with_checks, bool prioritize_preemptors) {
  Scenario s;
  s.scheduler.fair_sharing.enable = fair_sharing;
  s.scheduler.prioritize_preemptor_workloads = prioritize_preemptors;
  s.scheduler.evictions_need_ack = rng.Percent(50);
  s.scheduler.eviction_grace_period = absl::Minutes(2);

  const int flavor_count = static_cast<int>(rng.Between(1, 3));
  for (int i = 0; i < flavor_count; ++i) s.flavors.push_back(absl::StrCat("f", i));

  const int cohort_count = static_cast<int>(rng.Between(2, 3));
  for (int i = 0; i < cohort_count; ++i) {
    CohortSpec cohort;
    cohort.name = absl::StrCat("c", i);
    // Later cohorts may hang below earlier ones, so the forest never has a cycle.
    if (i > 0 && rng.Percent(50)) cohort.parent = absl::StrCat("c", rng.Between(0, i - 1));
    if (rng.Percent(40)) {
      cohort.resource_groups = {RandomGroup(rng, s.flavors, !cohort.parent.empty(), 4)};
    }
    if (fair_sharing) cohort.fair_weight = RandomWeight(rng);
    s.cohorts.push_back(std::move(cohort));
  }

  const int queue_count = static_cast<int>(rng.Between(3, 8));
  for (int i = 0; i < queue_count; ++i) {
    ClusterQueueSpec cq;
    cq.name = absl::StrCat("cq", i);
    if (rng.Percent(85)) cq.cohort = absl::StrCat("c", rng.Between(0, cohort_count - 1));
    cq.resource_groups = {RandomGroup(rng, s.flavors, !cq.cohort.empty(), 8)};
    cq.queueing_strategy =
        rng.Percent(70) ? QueueingStrategy::kBestEffortFifo : QueueingStrategy::kStrictFifo;
    cq.preemption = RandomPreemption(rng);
    cq.flavor_fungibility.when_can_borrow =
        rng.Percent(70) ? WhenCanBorrow::kBorrow : WhenCanBorrow::kTryNextFlavor;
    cq.flavor_fungibility.when_can_preempt =
        rng.Percent(70) ? WhenCanPreempt::kTryNextFlavor : WhenCanPreempt::kPreempt;
    // Allowed only with both policies TryNextFlavor. Picked by the queue's index, not drawn, so
    // the scenarios existing seeds generate stay as they were.
    if (cq.flavor_fungibility.when_can_borrow == WhenCanBorrow::kTryNextFlavor &&
        cq.flavor_fungibility.when_can_preempt == WhenCanPreempt::kTryNextFlavor && i % 2 == 1) {
      cq.flavor_fungibility.preference = FungibilityPreference::kPreemptionOverBorrowing;
    }
    if (rng.Percent(10)) cq.max_preempted_workloads = static_cast<int32_t>(rng.Between(1, 2));
    if (fair_sharing) cq.fair_weight = RandomWeight(rng);
    if (with_checks && rng.Percent(70)) {
      // One check for every workload, sometimes another for one flavor only.
      cq.admission_checks.push_back({"every", {}});
      if (rng.Percent(50)) {
        cq.admission_checks.push_back(
            {"one-flavor", {rng.Pick(cq.resource_groups[0].flavors).flavor}});
      }
    }
    s.cluster_queues.push_back(std::move(cq));

    const std::string ns = absl::StrCat("team", i);
    s.local_queues.push_back({ns, "lq", absl::StrCat("cq", i), StopPolicy::kNone, 1.0});
    // A second LocalQueue feeding a random ClusterQueue, so queues mix namespaces.
    if (rng.Percent(40)) {
      s.local_queues.push_back({ns, "shared", absl::StrCat("cq", rng.Between(0, queue_count - 1)),
                                StopPolicy::kNone, 1.0});
    }
  }
  if (with_checks) s.checks = {"every", "one-flavor"};
  return s;
}

// --- Actions -------------------------------------------------------------------------------

enum class ActionKind {
  kSubmit,
  kFinish,
  kEvict,
  kReleaseEvicted,
  kChangeQuota,
  kAdvanceTime,
  kSetStopPolicy,
  kDeleteCohort,
  kApplyCohort,
  kSetCheck,
  kActivate,
};

const char* StopPolicyName(StopPolicy policy) {
  switch (policy) {
    case StopPolicy::kNone:
      return "None";
    case StopPolicy::kHold:
      return "Hold";
    case StopPolicy::kHoldAndDrain:
      return "HoldAndDrain";
  }
  return "?";
}

struct Action {
  ActionKind kind = ActionKind::kSubmit;
  WorkloadSpec workload;
  std::string key;
  ClusterQueueSpec cluster_queue;
  CohortSpec cohort;
  absl::Duration advance = absl::ZeroDuration();
  CheckStateUpdate check;

  std::string Describe() const {
    switch (kind) {
      case ActionKind::kSubmit: {
        const PodSetSpec& ps = workload.pod_sets[0];
        std::vector<std::string> requests;
        for (const auto& [r, v] : ps.requests) requests.push_back(absl::StrCat(r, "=", v));
        return absl::StrCat(
            "submit ", workload.namespace_name, "/", workload.name, " to ", workload.queue_name,
            " priority ", *workload.priority, " count ", ps.count,
            ps.min_count ? absl::StrCat(" (min ", *ps.min_count, ")") : "", " per pod {",
            absl::StrJoin(requests, ","), "}", workload.non_preemptible ? " non-preemptible" : "");
      }
      case ActionKind::kFinish:
        return absl::StrCat("finish ", key);
      case ActionKind::kEvict:
        return absl::StrCat("evict ", key);
      case ActionKind::kReleaseEvicted:
        return absl::StrCat("release evicted ", key);
      case ActionKind::kChangeQuota: {
        std::vector<std::string> quotas;
        for (const FlavorQuotasSpec& f : cluster_queue.resource_groups[0].flavors) {
          for (const ResourceQuotaSpec& q : f.resources) {
            quotas.push_back(absl::StrCat(f.flavor, "/", q.resource, "=", q.nominal));
          }
        }
        return absl::StrCat("change quota of ", cluster_queue.name, " to ",
                            absl::StrJoin(quotas, ","));
      }
      case ActionKind::kAdvanceTime:
        return absl::StrCat("advance time by ", absl::FormatDuration(advance));
      case ActionKind::kSetCheck:
        return absl::StrCat("set check ", check.check, " of ", key, " to ",
                            CheckStateName(check.state),
                            check.requeue_after_seconds
                                ? absl::StrCat(" retry after ", *check.requeue_after_seconds, "s")
                                : "");
      case ActionKind::kActivate:
        return absl::StrCat("activate ", key);
      case ActionKind::kSetStopPolicy:
        return absl::StrCat("set stopPolicy of ", cluster_queue.name, " to ",
                            StopPolicyName(cluster_queue.stop_policy));
      case ActionKind::kDeleteCohort:
        return absl::StrCat("delete cohort ", cohort.name);
      case ActionKind::kApplyCohort:
        return absl::StrCat("apply cohort ", cohort.name);
    }
    return "?";
  }
};

absl::Status ApplyAction(ClusterState& state, const Action& action, absl::Time now) {
  switch (action.kind) {
    case ActionKind::kSubmit:
      return state.Submit(action.workload, "", now).status();
    case ActionKind::kFinish:
      return state.Finish(action.key, "done", now);
    case ActionKind::kEvict:
      return state.Evict(action.key, "OperatorRequest", "evicted by the property test", now);
    case ActionKind::kReleaseEvicted:
      return state.ReleaseEvicted(action.key, now);
    case ActionKind::kChangeQuota:
    case ActionKind::kSetStopPolicy:
      return state.ApplyClusterQueue(action.cluster_queue, now);
    case ActionKind::kDeleteCohort:
      return state.DeleteObject(ObjectKind::kCohort, "", action.cohort.name, now);
    case ActionKind::kApplyCohort:
      return state.ApplyCohort(action.cohort, now);
    case ActionKind::kAdvanceTime:
      // FireTimers reports whether anything changed; either answer is fine here.
      state.FireTimers(now);
      return absl::OkStatus();
    case ActionKind::kSetCheck:
      return state.SetAdmissionCheckState(action.key, action.check, now);
    case ActionKind::kActivate:
      return state.SetActive(action.key, true, now);
  }
  return absl::InternalError("unknown action");
}

// --- Rendering -----------------------------------------------------------------------------

// Every field of a plan, so two plans render equal only when they are equal.
std::string RenderPlan(const CyclePlan& plan) {
  std::string out = absl::StrCat("cycle ", plan.cycle, "\n");
  for (const AdmissionDecision& a : plan.admissions) {
    absl::StrAppend(&out, "  admit ", a.id, " in ", a.admission.cluster_queue);
    for (const PodSetAssignment& ps : a.admission.pod_sets) {
      absl::StrAppend(&out, " [", ps.name, " x", ps.count);
      for (const auto& [r, f] : ps.flavors) absl::StrAppend(&out, " ", r, "->", f);
      for (const auto& [r, v] : ps.resource_usage) absl::StrAppend(&out, " ", r, "=", v);
      absl::StrAppend(&out, "]");
    }
    for (const auto& [fr, v] : a.usage) absl::StrAppend(&out, " fr", fr, "=", v);
    absl::StrAppend(&out, "\n");
  }
  for (const PreemptionDecision& p : plan.preemptions) {
    absl::StrAppend(&out, "  preempt ", p.victim, " for ", p.preemptor, " ", p.reason, ": ",
                    p.message, "\n");
  }
  for (const PendingDecision& p : plan.pending) {
    absl::StrAppend(&out, "  pending ", p.id,
                    p.requeue == RequeueKind::kPark ? " park" : " immediate",
                    p.sticky ? " sticky" : "", ": ", p.message, "\n");
  }
  return out;
}

// --- Independent quota model ---------------------------------------------------------------

// Kueue's hierarchical quota arithmetic recomputed from the specs alone, so the live quota tree
// can be checked against something it does not share code with:
//   subtree(n) = nominal(n) + sum over children c of (subtree(c) - local(c))
//   local(n)   = lendingLimit set ? max(0, subtree(n) - lendingLimit) : 0
//   usage(cq)  = sum of its workloads' usage
//   usage(cohort) = sum over children c of max(0, usage(c) - local(c))
// Built once per configuration; usage is derived on demand.
class QuotaModel {
 public:
  struct Node {
    std::string name;
    bool is_cluster_queue = false;
    int parent = -1;
    std::vector<int> children;
    std::vector<QuotaLimits> limits;  // by FrId
    std::vector<int64_t> subtree;
    std::vector<int64_t> local;
  };
  // Per node (indexed like nodes()), per FrId.
  using Table = std::vector<std::vector<int64_t>>;

  explicit QuotaModel(const ClusterState& state) : fr_count_(state.fr_index().size()) {
    auto limits_of = [&state, this](const std::vector<ResourceGroupSpec>& groups) {
      std::vector<QuotaLimits> limits(fr_count_);
      for (const ResourceGroupSpec& g : groups) {
        for (const FlavorQuotasSpec& f : g.flavors) {
          for (const ResourceQuotaSpec& q : f.resources) {
            const FrId fr = *state.fr_index().Find(f.flavor, q.resource);
            limits[fr] = QuotaLimits{true, q.nominal, q.borrowing_limit, q.lending_limit};
          }
        }
      }
      return limits;
    };
    std::map<std::string, int> index;
    auto node_for = [&](const std::string& key, const std::string& name, bool is_cluster_queue) {
      auto [it, inserted] = index.emplace(key, static_cast<int>(nodes_.size()));
      if (inserted) {
        nodes_.push_back(
            Node{name, is_cluster_queue, -1, {}, std::vector<QuotaLimits>(fr_count_), {}, {}});
      }
      return it->second;
    };
    // Cohorts named only as a parent exist implicitly, without quota, as in Kueue.
    auto link = [&](int child, const std::string& parent_name) {
      const int parent = node_for("cohort/" + parent_name, parent_name, false);
      nodes_[child].parent = parent;
      nodes_[parent].children.push_back(child);
    };
    for (const auto& [name, spec] : state.cohorts()) {
      const int i = node_for("cohort/" + name, name, false);
      nodes_[i].limits = limits_of(spec.resource_groups);
      if (!spec.parent.empty()) link(i, spec.parent);
    }
    for (const auto& [name, spec] : state.cluster_queue_specs()) {
      const int i = node_for("cq/" + name, name, true);
      nodes_[i].limits = limits_of(spec.resource_groups);
      if (!spec.cohort.empty()) link(i, spec.cohort);
      queue_index_[name] = i;
    }
    for (int i = 0; i < static_cast<int>(nodes_.size()); ++i) {
      if (nodes_[i].parent < 0) ComputeQuota(i);
    }
  }

  const std::vector<Node>& nodes() const { return nodes_; }
  int32_t fr_count() const { return fr_count_; }
  int QueueIndex(const std::string& name) const { return queue_index_.at(name); }
  std::string Key(int i) const {
    return absl::StrCat(nodes_[i].is_cluster_queue ? "cq/" : "cohort/", nodes_[i].name);
  }

  // Every ClusterQueue's usage from the workloads it holds (with `admitted_only`, leaving out
  // the evicting ones); cohorts' usage is left at zero for Derive.
  Table QueueUsage(const ClusterState& state, bool admitted_only) const {
    Table usage(nodes_.size(), std::vector<int64_t>(fr_count_, 0));
    for (const auto& [name, i] : queue_index_) {
      for (WorkloadId id : state.cluster_queue(name)->holding) {
        const Workload* wl = state.workload(id);
        if (admitted_only && wl->status.state == WorkloadState::kEvicting) continue;
        for (const auto& [fr, value] : wl->quota_usage) usage[i][fr] += value;
      }
    }
    return usage;
  }

  // Fills in the cohorts' usage from their children's.
  void Derive(Table& usage) const {
    for (int i = 0; i < static_cast<int>(nodes_.size()); ++i) {
      if (nodes_[i].parent < 0) DeriveFrom(i, usage);
    }
  }

  // How far each node's usage exceeds what Kueue lets it use: the root must stay within its
  // subtree quota, any other node within its subtree quota plus its borrowing limit when it has
  // one (without a limit only its ancestors bound it).
  Table Overdraws(const Table& usage) const {
    Table out(nodes_.size(), std::vector<int64_t>(fr_count_, 0));
    for (size_t i = 0; i < nodes_.size(); ++i) {
      for (FrId fr = 0; fr < fr_count_; ++fr) {
        int64_t cap = nodes_[i].subtree[fr];
        if (nodes_[i].parent >= 0) {
          const QuotaLimits& limits = nodes_[i].limits[fr];
          if (!limits.borrowing_limit.has_value()) continue;
          cap += *limits.borrowing_limit;
        }
        out[i][fr] = std::max<int64_t>(0, usage[i][fr] - cap);
      }
    }
    return out;
  }

 private:
  void ComputeQuota(int i) {
    Node& node = nodes_[i];
    node.subtree.assign(fr_count_, 0);
    node.local.assign(fr_count_, 0);
    for (FrId fr = 0; fr < fr_count_; ++fr) {
      if (node.limits[fr].defined) node.subtree[fr] = node.limits[fr].nominal;
    }
    for (int c : node.children) {
      ComputeQuota(c);
      for (FrId fr = 0; fr < fr_count_; ++fr) {
        nodes_[i].subtree[fr] += nodes_[c].subtree[fr] - nodes_[c].local[fr];
      }
    }
    for (FrId fr = 0; fr < fr_count_; ++fr) {
      const QuotaLimits& limits = nodes_[i].limits[fr];
      if (limits.lending_limit.has_value()) {
        nodes_[i].local[fr] = std::max<int64_t>(0, nodes_[i].subtree[fr] - *limits.lending_limit);
      }
    }
  }

  void DeriveFrom(int i, Table& usage) const {
    for (int c : nodes_[i].children) {
      DeriveFrom(c, usage);
      for (FrId fr = 0; fr < fr_count_; ++fr) {
        usage[i][fr] += std::max<int64_t>(0, usage[c][fr] - nodes_[c].local[fr]);
      }
    }
  }

  int32_t fr_count_;
  std::vector<Node> nodes_;
  std::map<std::string, int> queue_index_;
};

std::string FrName(const ClusterState& state, FrId fr) {
  return absl::StrCat(state.fr_index().Flavor(fr), "/", state.fr_index().Resource(fr));
}

// --- Invariants ----------------------------------------------------------------------------
// Each check returns an empty string when the invariant holds, else what is wrong.

// (a) The live tree's subtree quota and usage, per node and flavor-resource, equal the model's
// recomputation from the specs and the holding sets.
std::string CheckBookkeeping(const ClusterState& state, const QuotaModel& model) {
  QuotaModel::Table usage = model.QueueUsage(state, /*admitted_only=*/false);
  model.Derive(usage);
  for (int i = 0; i < static_cast<int>(model.nodes().size()); ++i) {
    const QuotaModel::Node& node = model.nodes()[i];
    const QuotaNode* live = node.is_cluster_queue ? state.tree().ClusterQueue(node.name)
                                                  : state.tree().Cohort(node.name);
    if (live == nullptr) return absl::StrCat("(a) no quota tree node for ", model.Key(i));
    for (FrId fr = 0; fr < model.fr_count(); ++fr) {
      if (live->SubtreeQuota(fr) != node.subtree[fr]) {
        return absl::StrCat("(a) ", model.Key(i), " subtree quota of ", FrName(state, fr), " is ",
                            live->SubtreeQuota(fr), ", expected ", node.subtree[fr]);
      }
      if (live->Usage(fr) != usage[i][fr]) {
        return absl::StrCat(
            "(a) ", model.Key(i), " usage of ", FrName(state, fr), " is ", live->Usage(fr),
            ", expected ", usage[i][fr],
            node.is_cluster_queue ? " (sum of its holding set)" : " (from its children)");
      }
    }
  }
  return "";
}

// (c), state part: every workload holding quota is in exactly the holding set of the
// ClusterQueue it was admitted to (a deactivated one in none), nothing else is in a holding set,
// and pending workloads are queued while holders are not.
std::string CheckHolding(const ClusterState& state) {
  const std::vector<const Workload*> workloads = state.AllWorkloads();
  std::vector<int> holders(workloads.empty() ? 1 : workloads.back()->id + 1, 0);
  for (const auto& [name, cq] : state.cluster_queue_runtimes()) {
    for (WorkloadId id : cq.holding) {
      if (id <= 0 || id >= static_cast<WorkloadId>(holders.size())) {
        return absl::StrCat("(c) ", name, " holds unknown workload ", id);
      }
      holders[id]++;
      const Workload* wl = state.workload(id);
      if (wl == nullptr || !wl->HoldsQuota()) {
        return absl::StrCat("(c) ", name, " holds workload ", id, " which holds no quota");
      }
      if (wl->status.admission->cluster_queue != name) {
        return absl::StrCat("(c) ", name, " holds ", wl->Key(), " admitted to ",
                            wl->status.admission->cluster_queue);
      }
    }
  }
  for (const Workload* wl : workloads) {
    const int count = holders[wl->id];
    // A deactivated workload whose pods still stop keeps its admission but not its quota (Kueue's
    // scheduler cache drops it at once): it is in no holding set.
    const int want = HoldsActiveReservation(*wl) ? 1 : 0;
    if (wl->HoldsQuota() && count != want) {
      return absl::StrCat("(c) ", wl->Key(), " holds quota but is in ", count,
                          " holding sets (want ", want, ")");
    }
    if (wl->HoldsQuota() && state.QueuedIn(wl->id) != nullptr) {
      return absl::StrCat("(c) ", wl->Key(), " holds quota and is still queued");
    }
    const bool inactive = wl->status.deactivated || !wl->spec.active;
    if (wl->status.state == WorkloadState::kPending && !inactive &&
        state.QueuedIn(wl->id) == nullptr) {
      return absl::StrCat("(c) pending ", wl->Key(), " is in no queue");
    }
    if (inactive && state.QueuedIn(wl->id) != nullptr) {
      return absl::StrCat("(c) deactivated ", wl->Key(), " is still queued");
    }
  }
  return "";
}

// (h) Every ClusterQueue's head key (what a cycle orders its head by) carries the head
// workload's priority and queue-order time as they are now: every change to either re-keys.
std::string CheckHeadKeys(const ClusterState& state) {
  for (const auto& [name, cq] : state.cluster_queue_runtimes()) {
    const QueueKey* key = cq.queue.HeadKey();
    if (key == nullptr) continue;
    const Workload* wl = state.workload(key->id);
    if (wl == nullptr) return absl::StrCat("(h) ", name, "'s head ", key->id, " is unknown");
    if (key->priority() != EffectivePriority(*wl, state.config()) ||
        key->timestamp != state.QueueOrderTime(*wl)) {
      return absl::StrCat("(h) ", name, "'s head key for ", wl->Key(), " is priority ",
                          key->priority(), " at ", absl::FormatTime(key->timestamp),
                          ", the workload's ", wl->priority, " at ",
                          absl::FormatTime(state.QueueOrderTime(*wl)));
    }
  }
  return "";
}

// The usage an admission decision claims, recomputed from its pod set assignments.
std::map<FrId, int64_t> UsageFromAdmission(const ClusterState& state, const Admission& admission) {
  std::map<FrId, int64_t> usage;
  for (const PodSetAssignment& ps : admission.pod_sets) {
    for (const auto& [resource, flavor] : ps.flavors) {
      for (const auto& [r, amount] : ps.resource_usage) {
        if (r == resource && amount != 0) usage[*state.fr_index().Find(flavor, resource)] += amount;
      }
    }
  }
  return usage;
}

const QuotaNode* RootOf(const QuotaNode* node) {
  while (node->parent() != nullptr) node = node->parent();
  return node;
}

// (c), plan part, and (d), checked against the state the plan was made from.
std::string CheckPlanBeforeApply(const ClusterState& state, const QuotaModel& model,
                                 const CyclePlan& plan, bool check_policies) {
  std::set<WorkloadId> admitted;
  for (const AdmissionDecision& a : plan.admissions) {
    if (!admitted.insert(a.id).second)
      return absl::StrCat("(c) workload ", a.id, " admitted twice");
    const Workload* wl = state.workload(a.id);
    if (wl == nullptr) return absl::StrCat("(c) admitted unknown workload ", a.id);
    if (wl->HoldsQuota()) return absl::StrCat("(c) admitted ", wl->Key(), " already holds quota");
    if (wl->status.state != WorkloadState::kPending) {
      return absl::StrCat("(c) admitted ", wl->Key(), " in state ",
                          WorkloadStateName(wl->status.state));
    }
    const std::string* queued = state.QueuedIn(a.id);
    if (queued == nullptr || *queued != a.admission.cluster_queue) {
      return absl::StrCat("(c) ", wl->Key(), " admitted to ", a.admission.cluster_queue,
                          " but queued in ", queued == nullptr ? "nothing" : *queued);
    }
    const std::map<FrId, int64_t> claimed(a.usage.begin(), a.usage.end());
    if (claimed != UsageFromAdmission(state, a.admission)) {
      return absl::StrCat("(c) admission of ", wl->Key(),
                          " claims usage that differs from its pod set assignments");
    }
  }
  // Queue usage plus this plan's admissions; only reclaiming preemptions need it.
  std::optional<QuotaModel::Table> usage_with_admissions;
  auto usage_of = [&](const std::string& queue) -> const std::vector<int64_t>& {
    if (!usage_with_admissions.has_value()) {
      usage_with_admissions = model.QueueUsage(state, /*admitted_only=*/false);
      for (const AdmissionDecision& a : plan.admissions) {
        for (const auto& [fr, v] : a.usage) {
          (*usage_with_admissions)[model.QueueIndex(a.admission.cluster_queue)][fr] += v;
        }
      }
    }
    return (*usage_with_admissions)[model.QueueIndex(queue)];
  };

  std::set<WorkloadId> victims;
  for (const PreemptionDecision& p : plan.preemptions) {
    const Workload* victim = state.workload(p.victim);
    const Workload* preemptor = state.workload(p.preemptor);
    if (victim == nullptr || preemptor == nullptr) return "(d) preemption names unknown workloads";
    const std::string what =
        absl::StrCat(p.reason, " preemption of ", victim->Key(), " (priority ", victim->priority,
                     ") for ", preemptor->Key(), " (priority ", preemptor->priority, ")");
    if (!victims.insert(p.victim).second) return absl::StrCat("(d) duplicate ", what);
    if (victim->status.state != WorkloadState::kAdmitted &&
        victim->status.state != WorkloadState::kQuotaReserved) {
      return absl::StrCat("(d) ", what, ": victim is ", WorkloadStateName(victim->status.state));
    }
    if (victim->spec.non_preemptible) return absl::StrCat("(d) ", what, ": victim non-preemptible");
    if (preemptor->status.state != WorkloadState::kPending) {
      return absl::StrCat("(d) ", what, ": preemptor is ",
                          WorkloadStateName(preemptor->status.state));
    }
    if (admitted.contains(p.preemptor)) {
      return absl::StrCat("(d) ", what, ": preemptor admitted in the same plan");
    }
    if (admitted.contains(p.victim)) return absl::StrCat("(d) ", what, ": victim admitted too");
    const std::string* queued_in = state.QueuedIn(p.preemptor);
    const std::string& victim_cq = victim->status.admission->cluster_queue;
    if (queued_in != nullptr && *queued_in != victim_cq &&
        !state.cluster_queue(victim_cq)->active) {
      return absl::StrCat("(f) ", what, ": victim's ClusterQueue ", victim_cq, " is inactive (",
                          state.cluster_queue(victim_cq)->inactive_reason, ")");
    }
    if (!check_policies) continue;

    const std::string* preemptor_queue = state.QueuedIn(p.preemptor);
    if (preemptor_queue == nullptr) return absl::StrCat("(d) ", what, ": preemptor not queued");
    const ClusterQueueRuntime& pcq = *state.cluster_queue(*preemptor_queue);
    const std::string& victim_queue = victim->status.admission->cluster_queue;
    const PreemptionSpec& policy = pcq.spec.preemption;
    if (victim_queue == *preemptor_queue) {
      if (p.reason != "InClusterQueue") return absl::StrCat("(d) ", what, ": wrong reason");
      if (!SatisfiesPreemptionPolicy(state, *preemptor, *victim, policy.within_cluster_queue)) {
        return absl::StrCat("(d) ", what, ": withinClusterQueue policy forbids it");
      }
      continue;
    }
    const QuotaNode* pnode = pcq.node;
    const QuotaNode* vnode = state.cluster_queue(victim_queue)->node;
    if (!pnode->HasParent() || !vnode->HasParent() || RootOf(pnode) != RootOf(vnode)) {
      return absl::StrCat("(d) ", what, ": victim's queue ", victim_queue,
                          " is outside the preemptor's cohort tree");
    }
    if (!SatisfiesPreemptionPolicy(state, *preemptor, *victim, policy.reclaim_within_cohort)) {
      return absl::StrCat("(d) ", what, ": reclaimWithinCohort policy forbids it");
    }
    if (p.reason == "InCohortReclaimWhileBorrowing") {
      // borrowWithinCohort: only strictly lower priorities, at or under the threshold.
      if (policy.borrow_within_cohort != BorrowWithinCohortPolicy::kLowerPriority ||
          victim->priority >= preemptor->priority ||
          (policy.max_priority_threshold.has_value() &&
           victim->priority > *policy.max_priority_threshold)) {
        return absl::StrCat("(d) ", what, ": borrowWithinCohort policy forbids it");
      }
    } else if (p.reason != "InCohortReclamation") {
      return absl::StrCat("(d) ", what, ": wrong reason");
    }
    // Quota is only reclaimed from a queue using more than its nominal quota (counting what
    // this plan admits to it, since the planner sees earlier admissions of the cycle).
    bool over_nominal = false;
    const std::vector<int64_t>& usage = usage_of(victim_queue);
    for (FrId fr = 0; fr < static_cast<FrId>(usage.size()); ++fr) {
      if (usage[fr] > vnode->SubtreeQuota(fr)) over_nominal = true;
    }
    if (!over_nominal) {
      return absl::StrCat("(d) ", what, ": victim's queue ", victim_queue,
                          " is within its nominal quota");
    }
  }
  return "";
}

// (f) Every workload's admission checks are what its queue asks for, in a state its own state
// allows.
std::string CheckAdmissionChecks(const ClusterState& state) {
  for (const Workload* wl : state.AllWorkloads()) {
    const std::vector<AdmissionCheckState>& checks = wl->status.admission_checks();
    // A Rejected check may stay on a workload without quota (Kueue acts on it only during a
    // reservation), and so may a Retry beside it; a Retry alone starts the checks over. No cycle
    // reserves a workload with a Rejected check, and a reservation one reaches is evicted at
    // once.
    const bool rejected = AnyCheckIn(checks, CheckState::kRejected);
    if (!wl->HoldsQuota() && !rejected && AnyCheckIn(checks, CheckState::kRetry)) {
      return absl::StrCat("(f) ", wl->Key(), " holds no quota but has a Retry check");
    }
    if ((wl->status.state == WorkloadState::kQuotaReserved ||
         wl->status.state == WorkloadState::kAdmitted) &&
        rejected) {
      return absl::StrCat("(f) ", wl->Key(), " holds a reservation with a Rejected check");
    }
    if (wl->status.state == WorkloadState::kQuotaReserved && AllChecksReady(checks)) {
      return absl::StrCat("(f) ", wl->Key(), " waits for its checks but they are all Ready");
    }
    if (wl->status.state == WorkloadState::kFinished ||
        wl->status.state == WorkloadState::kEvicting) {
      continue;
    }
    const std::string cq_name =
        wl->HoldsQuota() ? wl->status.admission->cluster_queue
                         : state.local_queues()
                               .at(absl::StrCat(wl->spec.namespace_name, "/", wl->spec.queue_name))
                               .spec.cluster_queue;
    const std::vector<std::string> want =
        ChecksForWorkload(state.cluster_queue_specs().at(cq_name),
                          wl->HoldsQuota() ? &*wl->status.admission : nullptr);
    std::vector<std::string> got;
    for (const AdmissionCheckState& c : checks) got.push_back(c.name);
    if (got != want) {
      return absl::StrCat("(f) ", wl->Key(), " carries checks [", absl::StrJoin(got, ","),
                          "], its queue asks for [", absl::StrJoin(want, ","), "]");
    }
  }
  return "";
}

// Per node and flavor-resource overdraw counting admitted workloads only.
//
// Why admitted only: Kueue (and Tollgate) let a cycle admit a workload that fits once the
// workloads already being preempted are gone, while those may still hold quota until their pods
// stop (evictions_need_ack). Usage without evicting workloads is what the planner guarantees; with
// evictions released at once it is exactly the held usage.
//
// Why "never worse" rather than "never over": lowering a queue's nominal quota legitimately
// leaves it, and its cohort, over quota until workloads finish. An admission must never create
// an overdraw nor add to one, so across a cycle no node's overdraw may grow.
QuotaModel::Table Overdraws(const ClusterState& state, const QuotaModel& model) {
  QuotaModel::Table usage = model.QueueUsage(state, /*admitted_only=*/true);
  model.Derive(usage);
  return model.Overdraws(usage);
}

// (b) Applying the plan grew no overdraw.
std::string CheckNoOverdrawGrew(const ClusterState& state, const QuotaModel& model,
                                const QuotaModel::Table& before, const QuotaModel::Table& after,
                                const CyclePlan& plan) {
  for (size_t i = 0; i < after.size(); ++i) {
    for (FrId fr = 0; fr < model.fr_count(); ++fr) {
      if (after[i][fr] <= before[i][fr]) continue;
      std::vector<std::string> admitted;
      for (const AdmissionDecision& a : plan.admissions) {
        admitted.push_back(
            absl::StrCat(state.workload(a.id)->Key(), "->", a.admission.cluster_queue));
      }
      return absl::StrCat("(b) ", model.Key(static_cast<int>(i)), " over quota on ",
                          FrName(state, fr), " by ", after[i][fr], " (was ", before[i][fr],
                          ") after admitting ", absl::StrJoin(admitted, ", "));
    }
  }
  return "";
}

// --- Driver --------------------------------------------------------------------------------

// Two ClusterStates fed the same actions: the primary is checked, the replica only has to make
// the same plans.
class Simulation {
 public:
  Simulation(uint64_t seed, bool fair_sharing, bool with_checks, bool verbose)
      : rng_(seed),
        // PrioritizePreemptorWorkloads on odd seeds: decided by the seed, not drawn, so the even
        // seeds' scenarios and actions stay what they were without the gate.
        scenario_(RandomScenario(rng_, fair_sharing, with_checks, seed % 2 == 1)),
        primary_(scenario_.scheduler),
        replica_(scenario_.scheduler),
        verbose_(verbose) {}

  // Settle loops cut off because they repeated a plan (see Settle).
  int thrashing() const { return thrashing_; }

  // Empty on success, else the first violation with the step that caused it.
  std::string Run(int steps) {
    for (ClusterState* state : {&primary_, &replica_}) {
      if (std::string e = Configure(*state); !e.empty()) return absl::StrCat("config: ", e);
    }
    model_ = std::make_unique<QuotaModel>(primary_);
    if (verbose_) std::cout << DescribeScenario();
    if (std::string e = Settle(); !e.empty()) return absl::StrCat("initial settle: ", e);
    for (step_ = 0; step_ < steps; ++step_) {
      const Action action = NextAction();
      if (verbose_) std::cout << "step " << step_ << ": " << action.Describe() << "\n";
      overdraws_.reset();
      for (ClusterState* state : {&primary_, &replica_}) {
        if (absl::Status s = ApplyAction(*state, action, now_); !s.ok()) {
          return Where(action, absl::StrCat("action failed: ", s.ToString()));
        }
      }
      if (action.kind == ActionKind::kChangeQuota || action.kind == ActionKind::kDeleteCohort ||
          action.kind == ActionKind::kApplyCohort) {
        model_ = std::make_unique<QuotaModel>(primary_);
      }
      std::string e = CheckBookkeeping(primary_, *model_);
      if (e.empty()) e = CheckHolding(primary_);
      if (e.empty()) e = CheckHeadKeys(primary_);
      if (e.empty()) e = CheckAdmissionChecks(primary_);
      if (e.empty()) e = Settle();
      if (!e.empty()) return Where(action, e);
    }
    return "";
  }

 private:
  std::string Where(const Action& action, const std::string& error) const {
    return absl::StrCat("step ", step_, " (", action.Describe(), "): ", error);
  }

  std::string DescribeScenario() const {
    auto group = [](const std::vector<ResourceGroupSpec>& groups) {
      std::string out;
      for (const ResourceGroupSpec& g : groups) {
        for (const FlavorQuotasSpec& f : g.flavors) {
          for (const ResourceQuotaSpec& q : f.resources) {
            absl::StrAppend(&out, " ", f.flavor, "/", q.resource, "=", q.nominal);
            if (q.borrowing_limit) absl::StrAppend(&out, " borrow<=", *q.borrowing_limit);
            if (q.lending_limit) absl::StrAppend(&out, " lend<=", *q.lending_limit);
          }
        }
      }
      return out;
    };
    std::string out = absl::StrCat("evictions_need_ack=", scenario_.scheduler.evictions_need_ack,
                                   " fair_sharing=", scenario_.scheduler.fair_sharing.enable,
                                   " prioritize_preemptor_workloads=",
                                   scenario_.scheduler.prioritize_preemptor_workloads, "\n");
    for (const CohortSpec& c : scenario_.cohorts) {
      absl::StrAppend(&out, "cohort ", c.name, " parent=", c.parent, " weight=", c.fair_weight,
                      group(c.resource_groups), "\n");
    }
    for (const ClusterQueueSpec& cq : scenario_.cluster_queues) {
      absl::StrAppend(
          &out, "cq ", cq.name, " cohort=", cq.cohort, " weight=", cq.fair_weight,
          cq.queueing_strategy == QueueingStrategy::kStrictFifo ? " StrictFIFO" : " BestEffortFIFO",
          " within=", static_cast<int>(cq.preemption.within_cluster_queue),
          " reclaim=", static_cast<int>(cq.preemption.reclaim_within_cohort),
          " borrowWithin=", static_cast<int>(cq.preemption.borrow_within_cohort),
          " threshold=", cq.preemption.max_priority_threshold.value_or(-1),
          " whenCanBorrow=", static_cast<int>(cq.flavor_fungibility.when_can_borrow),
          " whenCanPreempt=", static_cast<int>(cq.flavor_fungibility.when_can_preempt),
          " preference=",
          static_cast<int>(cq.flavor_fungibility.preference.value_or(
              FungibilityPreference::kBorrowingOverPreemption)),
          " maxPreempted=", cq.max_preempted_workloads, group(cq.resource_groups), "\n");
    }
    for (const LocalQueueSpec& lq : scenario_.local_queues) {
      absl::StrAppend(&out, "lq ", lq.namespace_name, "/", lq.name, " -> ", lq.cluster_queue, "\n");
    }
    return out;
  }

  // Who holds what, for the verbose replay.
  std::string DescribeHolding() const {
    std::string out;
    for (const auto& [name, cq] : primary_.cluster_queue_runtimes()) {
      absl::StrAppend(&out, "  ", name, ":");
      for (WorkloadId id : cq.holding) {
        const Workload* wl = primary_.workload(id);
        absl::StrAppend(&out, " ", id, "(p", wl->priority,
                        wl->status.state == WorkloadState::kEvicting ? ",evicting" : "", ")");
      }
      absl::StrAppend(&out, "\n");
    }
    return out;
  }

  std::string Configure(ClusterState& state) {
    for (const std::string& f : scenario_.flavors) {
      if (!state.ApplyResourceFlavor({f, {}, {}, {}}, now_).ok()) return "flavor";
    }
    for (const std::string& check : scenario_.checks) {
      if (!state.ApplyAdmissionCheck({check, "example.com/" + check, std::nullopt}, now_).ok() ||
          !state.SetAdmissionCheckActive(check, true, "Active", "", now_).ok()) {
        return "admission check";
      }
    }
    for (const CohortSpec& c : scenario_.cohorts) {
      if (!state.ApplyCohort(c, now_).ok()) return "cohort";
    }
    for (const ClusterQueueSpec& cq : scenario_.cluster_queues) {
      if (!state.ApplyClusterQueue(cq, now_).ok()) return "cluster queue";
    }
    for (const LocalQueueSpec& lq : scenario_.local_queues) {
      if (!state.ApplyLocalQueue(lq, now_).ok()) return "local queue";
    }
    return "";
  }

  std::vector<const Workload*> InState(std::initializer_list<WorkloadState> states) const {
    std::vector<const Workload*> out;
    for (const Workload* wl : primary_.AllWorkloads()) {
      for (WorkloadState s : states) {
        if (wl->status.state == s) out.push_back(wl);
      }
    }
    return out;
  }

  Action NextAction() {
    // Mostly small steps so creation times are distinct, sometimes none so they tie.
    if (rng_.Percent(80)) now_ += absl::Milliseconds(rng_.Between(1, 50));
    Action action;
    const int64_t roll = rng_.Between(0, 99);
    if (roll < 40) {
      action.kind = ActionKind::kSubmit;
    } else if (roll < 58) {
      action.kind = ActionKind::kFinish;
    } else if (roll < 64) {
      action.kind = ActionKind::kEvict;
    } else if (roll < 76) {
      action.kind = ActionKind::kReleaseEvicted;
    } else if (roll < 85) {
      action.kind = ActionKind::kChangeQuota;
    } else if (roll < 95) {
      action.kind = ActionKind::kAdvanceTime;
    } else if (roll < 98) {
      action.kind = ActionKind::kSetStopPolicy;
    } else {
      action.kind = ActionKind::kDeleteCohort;
    }
    // With checks, a third of the steps are a controller's or an operator's word instead.
    if (!scenario_.checks.empty() && rng_.Percent(35)) {
      action.kind = rng_.Percent(90) ? ActionKind::kSetCheck : ActionKind::kActivate;
    }

    std::vector<const Workload*> candidates;
    if (action.kind == ActionKind::kFinish) {
      candidates = InState(
          {WorkloadState::kAdmitted, WorkloadState::kQuotaReserved, WorkloadState::kEvicting});
    } else if (action.kind == ActionKind::kEvict) {
      candidates = InState({WorkloadState::kAdmitted, WorkloadState::kQuotaReserved});
    } else if (action.kind == ActionKind::kReleaseEvicted) {
      candidates = InState({WorkloadState::kEvicting});
    } else if (action.kind == ActionKind::kSetCheck) {
      // Mostly reservations waiting on their checks, sometimes any workload carrying one.
      candidates = InState({WorkloadState::kQuotaReserved});
      if (candidates.empty() || rng_.Percent(25)) {
        candidates.clear();
        for (const Workload* wl : primary_.AllWorkloads()) {
          if (!wl->status.admission_checks().empty() &&
              wl->status.state != WorkloadState::kFinished) {
            candidates.push_back(wl);
          }
        }
      }
    } else if (action.kind == ActionKind::kActivate) {
      for (const Workload* wl : primary_.AllWorkloads()) {
        if (wl->status.deactivated && wl->status.state != WorkloadState::kFinished) {
          candidates.push_back(wl);
        }
      }
    }
    if (!candidates.empty()) {
      const Workload* wl = rng_.Pick(candidates);
      action.key = wl->Key();
      if (action.kind == ActionKind::kSetCheck) action.check = RandomCheckUpdate(*wl);
      return action;
    }
    if (action.kind == ActionKind::kChangeQuota) {
      action.cluster_queue = RandomQuotaChange();
      return action;
    }
    if (action.kind == ActionKind::kSetStopPolicy) {
      // Mostly held, so a held queue often borrows while others want their quota back.
      const ClusterQueueSpec& current = rng_.Pick(scenario_.cluster_queues);
      action.cluster_queue = primary_.cluster_queue_specs().at(current.name);
      action.cluster_queue.stop_policy =
          rng_.Pick(std::vector<StopPolicy>{StopPolicy::kNone, StopPolicy::kNone, StopPolicy::kHold,
                                            StopPolicy::kHold, StopPolicy::kHoldAndDrain});
      return action;
    }
    if (action.kind == ActionKind::kDeleteCohort) {
      // A deleted cohort comes back with its original spec on the next draw.
      action.cohort = rng_.Pick(scenario_.cohorts);
      if (primary_.cohorts().count(action.cohort.name) == 0) {
        action.kind = ActionKind::kApplyCohort;
      }
      return action;
    }
    if (action.kind == ActionKind::kAdvanceTime) {
      action.advance =
          rng_.Percent(50) ? absl::Seconds(rng_.Between(1, 60)) : absl::Minutes(rng_.Between(1, 5));
      now_ += action.advance;
      return action;
    }
    action.kind = ActionKind::kSubmit;
    action.workload = RandomWorkload();
    return action;
  }

  CheckStateUpdate RandomCheckUpdate(const Workload& wl) {
    CheckStateUpdate update;
    update.check = rng_.Pick(wl.status.admission_checks()).name;
    const int64_t roll = rng_.Between(0, 99);
    update.state = roll < 60   ? CheckState::kReady
                   : roll < 70 ? CheckState::kPending
                   : roll < 93 ? CheckState::kRetry
                               : CheckState::kRejected;
    if (update.state == CheckState::kRetry && rng_.Percent(60)) {
      update.requeue_after_seconds = static_cast<int32_t>(rng_.Between(0, 120));
    }
    return update;
  }

  ClusterQueueSpec RandomQuotaChange() {
    const ClusterQueueSpec& current = rng_.Pick(scenario_.cluster_queues);
    ClusterQueueSpec spec = primary_.cluster_queue_specs().at(current.name);
    FlavorQuotasSpec& flavor = spec.resource_groups[0].flavors[static_cast<size_t>(
        rng_.Between(0, static_cast<int64_t>(spec.resource_groups[0].flavors.size()) - 1))];
    ResourceQuotaSpec& quota = flavor.resources[static_cast<size_t>(rng_.Between(0, 1))];
    quota.nominal = Scaled(quota.resource, rng_.Between(0, 8));
    if (quota.lending_limit.has_value() && *quota.lending_limit > quota.nominal) {
      quota.lending_limit = quota.nominal;
    }
    return spec;
  }

  WorkloadSpec RandomWorkload() {
    const LocalQueueSpec& lq = rng_.Pick(scenario_.local_queues);
    WorkloadSpec spec;
    spec.namespace_name = lq.namespace_name;
    spec.name = absl::StrCat("w", next_workload_++);
    spec.queue_name = lq.name;
    spec.priority = rng_.Pick(kPriorities);
    spec.non_preemptible = rng_.Percent(10);
    PodSetSpec ps;
    ps.name = "main";
    ps.count = static_cast<int32_t>(rng_.Between(1, 4));
    if (ps.count > 1 && rng_.Percent(15))
      ps.min_count = static_cast<int32_t>(rng_.Between(1, ps.count));
    int64_t cpu = 500 * rng_.Between(0, 4);
    const int64_t gpu = rng_.Between(0, 2);
    if (cpu == 0 && gpu == 0) cpu = 500;
    if (cpu > 0) ps.requests.emplace_back("cpu", cpu);
    if (gpu > 0) ps.requests.emplace_back("gpu", gpu);
    spec.pod_sets = {std::move(ps)};
    return spec;
  }

  // Who holds quota, and in which state, plus the plan without its cycle number: when this
  // repeats within one settle loop, the same decisions will keep repeating.
  std::string Fingerprint(const std::string& rendered_plan) const {
    std::string out = rendered_plan.substr(rendered_plan.find('\n'));
    for (const auto& [name, cq] : primary_.cluster_queue_runtimes()) {
      absl::StrAppend(&out, name, ":");
      for (WorkloadId id : cq.holding) {
        absl::StrAppend(&out, " ", id,
                        primary_.workload(id)->status.state == WorkloadState::kEvicting ? "e" : "");
      }
      absl::StrAppend(&out, "\n");
    }
    return out;
  }

  // Cycles until no progress, checking every plan; replica plans must match.
  std::string Settle() {
    // Hashes: comparing whole fingerprints costs more than the rare collision, which would only
    // end a settle loop early.
    std::set<size_t> seen;
    for (int cycle = 0; cycle < kMaxCyclesPerSettle; ++cycle) {
      const CyclePlan plan = primary_.PlanCycle(now_);
      const CyclePlan replica_plan = replica_.PlanCycle(now_);
      const std::string rendered = RenderPlan(plan);
      if (verbose_) std::cout << DescribeHolding() << rendered;
      if (rendered != RenderPlan(replica_plan)) {
        return absl::StrCat("(e) plans differ:\n", rendered, "vs\n", RenderPlan(replica_plan));
      }
      if (std::string e = CheckPlanBeforeApply(primary_, *model_, plan,
                                               !scenario_.scheduler.fair_sharing.enable);
          !e.empty()) {
        return absl::StrCat(e, "\nplan:\n", rendered);
      }
      // The previous cycle's result still holds unless an action came in between.
      const QuotaModel::Table overdraws_before =
          overdraws_.has_value() ? *std::move(overdraws_) : Overdraws(primary_, *model_);
      overdraws_.reset();
      // Kueue itself can thrash: a preemptor's freed quota goes to an earlier-ordered workload
      // (often its own victim) and it preempts again next cycle (kubernetes-sigs/kueue #6947,
      // #6929). That is a liveness problem, not a broken invariant: each plan of the loop has
      // been checked once it repeats, so count it and stop settling.
      const bool repeating = plan.MadeProgress() &&
                             !seen.insert(std::hash<std::string>{}(Fingerprint(rendered))).second;
      primary_.ApplyCycle(plan, now_);
      replica_.ApplyCycle(replica_plan, now_);
      std::string e = CheckBookkeeping(primary_, *model_);
      if (e.empty()) e = CheckHolding(primary_);
      if (e.empty()) e = CheckHeadKeys(primary_);
      if (e.empty()) e = CheckAdmissionChecks(primary_);
      if (e.empty()) {
        overdraws_ = Overdraws(primary_, *model_);
        e = CheckNoOverdrawGrew(primary_, *model_, overdraws_before, *overdraws_, plan);
      }
      if (!e.empty()) return absl::StrCat(e, "\nplan:\n", rendered);
      if (!plan.MadeProgress()) return "";
      if (repeating) {
        ++thrashing_;
        return "";
      }
    }
    return absl::StrCat("no fixpoint after ", kMaxCyclesPerSettle, " cycles and no repeated plan");
  }

  Rng rng_;
  Scenario scenario_;
  ClusterState primary_;
  ClusterState replica_;
  bool verbose_;
  // Rebuilt whenever the quota configuration changes.
  std::unique_ptr<QuotaModel> model_;
  // Overdraws after the last cycle, while no action has changed the state since.
  std::optional<QuotaModel::Table> overdraws_;
  absl::Time now_ = kStart;
  int step_ = 0;
  int next_workload_ = 0;
  int thrashing_ = 0;
};

std::optional<uint64_t> OnlySeed() {
  const char* env = std::getenv("TOLLGATE_PROPERTY_SEED");
  if (env == nullptr || *env == '\0') return std::nullopt;
  return std::strtoull(env, nullptr, 10);
}

// How many seeds may end a settle in a repeating preemption loop (see Simulation::Settle).
// Kueue loops the same way (kubernetes-sigs/kueue#6947, #6929; its fix, #13797, is not
// implemented here: docs/preemption.md), so a loop is not a broken invariant and a seed that
// hits one still passes. The bound is about twice today's count (2026-11: 5 of 200 classical
// seeds, 4 of 60 with fair sharing), so a change that makes such loops common fails here
// instead of passing unnoticed; the seeds are fixed, so the count only moves with the code.
int MaxThrashingSeeds(bool fair_sharing, int seeds) {
  return fair_sharing ? seeds / 10 : seeds / 20;
}

void RunSeeds(bool fair_sharing, uint64_t first_seed, int seeds, int steps,
              bool with_checks = false) {
  const std::optional<uint64_t> only = OnlySeed();
  int failures = 0;
  std::vector<uint64_t> thrashing;
  for (uint64_t seed = first_seed; seed < first_seed + static_cast<uint64_t>(seeds); ++seed) {
    if (only.has_value() && seed != *only) continue;
    Simulation sim(seed, fair_sharing, with_checks, only.has_value());
    const std::string error = sim.Run(steps);
    if (sim.thrashing() > 0) thrashing.push_back(seed);
    if (error.empty()) continue;
    ADD_FAILURE() << "seed " << seed << " " << error
                  << "\nreproduce: TOLLGATE_PROPERTY_SEED=" << seed << " core_test --gtest_filter="
                  << testing::UnitTest::GetInstance()->current_test_info()->test_suite_name() << "."
                  << testing::UnitTest::GetInstance()->current_test_info()->name();
    // A handful of distinct seeds says enough; hundreds would bury them.
    if (++failures == 5) break;
  }
  std::cout << "[ INFO     ] " << thrashing.size()
            << " seed(s) hit a repeating preemption loop: " << absl::StrJoin(thrashing, " ")
            << "\n";
  if (!only.has_value()) {
    EXPECT_LE(static_cast<int>(thrashing.size()), MaxThrashingSeeds(fair_sharing, seeds))
        << "repeating preemption loops became common; seeds: " << absl::StrJoin(thrashing, " ");
  }
}

TEST(SchedulingPropertyTest, ClassicalInvariantsHoldOverRandomActionSequences) {
  RunSeeds(/*fair_sharing=*/false, /*first_seed=*/1, /*seeds=*/200, /*steps=*/150);
}

// Admission checks between reservation and admission: reservations are victims, Retry evicts and
// delays, Rejected deactivates a reservation and holds back a workload without one; every
// invariant above and (f) must hold throughout.
TEST(SchedulingPropertyTest, AdmissionCheckInvariantsHoldOverRandomActionSequences) {
  RunSeeds(/*fair_sharing=*/false, /*first_seed=*/200001, /*seeds=*/100, /*steps=*/150,
           /*with_checks=*/true);
}

// Fair sharing changes the admission order and the victims; (d)'s policy rules are classical
// preemption's, so only its basic checks (victim holds quota, preemptor pending) apply here.
TEST(SchedulingPropertyTest, FairSharingInvariantsHoldOverRandomActionSequences) {
  RunSeeds(/*fair_sharing=*/true, /*first_seed=*/100001, /*seeds=*/60, /*steps=*/150);
}

// --- Regressions found by the property test ----------------------------------------------

// Found by seed 197 of the property test. A head that needs preemption but has
// no candidates reserves quota for the rest of the cycle (Kueue's quotaResourcesToReserve). When
// its queue borrows, the reservation is min(request, nominal + borrowingLimit - usage), which is
// negative once the queue holds more than nominal + borrowingLimit (its quota was cut). Adding
// that negative reservation to the simulated usage removes usage from the queue and its cohort,
// so later heads of the cycle are admitted into quota that is not free. Kueue never reserves less
// than nothing: its addUsage only propagates positive amounts to the cohort.
TEST(SchedulingRegressionTest, NegativeReservationNeverFreesCohortQuota) {
  const absl::Time now = kStart;
  ClusterState state{SchedulerConfig{}};
  ASSERT_TRUE(state.ApplyResourceFlavor({"a100", {}, {}, {}}, now).ok());
  auto gpus = [](int64_t nominal, std::optional<int64_t> borrowing) {
    return std::vector<ResourceGroupSpec>{
        {{"gpu"}, {{"a100", {{"gpu", nominal, borrowing, std::nullopt}}}}}};
  };
  ASSERT_TRUE(state.ApplyCohort({"pool", "", gpus(5, std::nullopt), 1.0}, now).ok());
  ClusterQueueSpec shrinking;
  shrinking.name = "shrinking";
  shrinking.cohort = "pool";
  shrinking.resource_groups = gpus(4, 1);
  ASSERT_TRUE(state.ApplyClusterQueue(shrinking, now).ok());
  for (const char* name : {"a", "b"}) {
    ClusterQueueSpec cq;
    cq.name = name;
    cq.cohort = "pool";
    cq.resource_groups = gpus(0, std::nullopt);
    ASSERT_TRUE(state.ApplyClusterQueue(cq, now).ok());
  }
  for (const char* name : {"shrinking", "a", "b"}) {
    ASSERT_TRUE(state.ApplyLocalQueue({name, "q", name, StopPolicy::kNone, 1.0}, now).ok());
  }
  auto submit = [&](const std::string& ns, const std::string& name, int32_t gpu_count,
                    int32_t priority) {
    WorkloadSpec spec;
    spec.namespace_name = ns;
    spec.name = name;
    spec.queue_name = "q";
    spec.priority = priority;
    spec.pod_sets = {PodSetSpec{"main", gpu_count, std::nullopt, {{"gpu", 1}}, {}, {}}};
    ASSERT_TRUE(state.Submit(std::move(spec), "", now).ok());
  };
  submit("shrinking", "running", 4, 0);
  state.ApplyCycle(state.PlanCycle(now), now);
  ASSERT_EQ(state.FindWorkload("shrinking/running")->status.state, WorkloadState::kAdmitted);

  // shrinking now holds 4 with room for 1 + 1: the pool's quota is 5 + 1 = 6, 4 of it used.
  shrinking.resource_groups = gpus(1, 1);
  ASSERT_TRUE(state.ApplyClusterQueue(shrinking, now).ok());
  // Ordered first (all three borrow; it has the highest priority); needs preemption, has no
  // candidates, so it reserves min(1, 1 + 1 - 4) = -2.
  submit("shrinking", "reserver", 1, 100);
  // Each fits in the 2 free on its own; both together need 4.
  submit("a", "first", 2, 0);
  submit("b", "second", 2, 0);

  const CyclePlan plan = state.PlanCycle(now);
  std::vector<std::string> admitted;
  for (const AdmissionDecision& a : plan.admissions) {
    admitted.push_back(state.workload(a.id)->Key());
  }
  EXPECT_EQ(admitted, std::vector<std::string>{"a/first"});
  state.ApplyCycle(plan, now);
  const QuotaNode& pool = *state.tree().Cohort("pool");
  const FrId fr = *state.fr_index().Find("a100", "gpu");
  EXPECT_LE(pool.Usage(fr), pool.SubtreeQuota(fr));
}

}  // namespace
}  // namespace tollgate::core
