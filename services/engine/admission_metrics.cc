#include "services/engine/admission_metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "core/admission_checks.h"
#include "core/fair_sharing.h"
#include "core/multikueue_dispatcher.h"
#include "core/workload.h"

namespace tollgate::engine {
namespace {

using metrics::Family;
using metrics::MetricType;
using metrics::TextWriter;

constexpr char kRole[] = "standalone";

// Tollgate's own latency buckets: a cycle or a commit takes microseconds to milliseconds.
std::vector<double> FastLatencyBuckets() {
  return {0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025,
          0.005,   0.01,     0.025,   0.05,   0.1,     0.25,   1};
}

std::vector<double> PowersOfTwo(int count) {
  std::vector<double> bounds;
  double bound = 1;
  for (int i = 0; i < count; ++i, bound *= 2) bounds.push_back(bound);
  return bounds;
}

// When the workload last joined its queue: its creation, or the start of its latest eviction
// (Kueue measures wait times from the last requeue).
absl::Time QueuedSince(const core::Workload& wl) {
  return std::max(wl.creation_time, wl.status.history().evicted_at);
}

// The events `matches` picks among those the workload recorded at `now`, newest first, less
// those an earlier commit at the same time counted already (a workload can be committed twice
// in a round: with the requests' changes and with the cycles'). `counted` keeps that number per
// workload; it is touched only for a workload with such events.
template <typename Matches>
std::vector<const core::WorkloadEvent*> UncountedEventsAt(
    const core::Workload& wl, absl::Time now, Matches matches,
    absl::flat_hash_map<core::WorkloadId, int>& counted) {
  std::vector<const core::WorkloadEvent*> events;
  for (auto it = wl.status.events.rbegin(); it != wl.status.events.rend() && it->time == now;
       ++it) {
    if (matches(*it)) events.push_back(&*it);
  }
  if (events.empty()) return events;
  int& seen = counted[wl.id];
  const int total = static_cast<int>(events.size());
  events.resize(static_cast<size_t>(std::max(0, total - seen)));
  seen = std::max(seen, total);
  return events;
}

// Whether the PodsReady timeout behind `eviction` was the recovery timeout: the workload lost a
// pod (reported not ready after being ready) since it was last admitted. Its PodsReady
// condition no longer tells, as the released workload waits for its pods to start again.
bool LostAPodBefore(const core::Workload& wl, const core::WorkloadEvent* eviction) {
  const std::vector<core::WorkloadEvent>& events = wl.status.events;
  for (size_t i = static_cast<size_t>(eviction - events.data()); i-- > 0;) {
    if (events[i].reason == "PodsNotReady") return true;
    if (events[i].reason == "Admitted") return false;
  }
  // Its admission fell out of the capped event list: the condition is all there is.
  return core::WaitsForRecovery(wl.status);
}

}  // namespace

AdmissionMetrics::AdmissionMetrics(metrics::Registry& registry)
    : admitted_(registry.AddCounter(
          "kueue_admitted_workloads_total",
          "Workloads admitted, per ClusterQueue and priority class: at quota reservation when "
          "no admission check applies, else once every check is Ready.",
          {"cluster_queue", "priority_class", "replica_role"})),
      quota_reserved_(registry.AddCounter(
          "kueue_quota_reserved_workloads_total",
          "Workloads that got a quota reservation, per ClusterQueue and priority class.",
          {"cluster_queue", "priority_class", "replica_role"})),
      admission_wait_(registry.AddHistogram(
          "kueue_admission_wait_time_seconds",
          "Seconds from a workload's creation or latest requeue to its admission (admission "
          "checks included).",
          {"cluster_queue", "priority_class", "replica_role"},
          metrics::KueueExponentialBuckets(16))),
      quota_reserved_wait_(registry.AddHistogram(
          "kueue_quota_reserved_wait_time_seconds",
          "Seconds from a workload's creation or latest requeue to its quota reservation.",
          {"cluster_queue", "priority_class", "replica_role"},
          metrics::KueueExponentialBuckets(14))),
      lq_admitted_(registry.AddCounter("kueue_local_queue_admitted_workloads_total",
                                       "Workloads admitted, per LocalQueue and priority class.",
                                       {"name", "namespace", "priority_class", "replica_role"})),
      lq_quota_reserved_(registry.AddCounter(
          "kueue_local_queue_quota_reserved_workloads_total",
          "Workloads that got a quota reservation, per LocalQueue and priority class.",
          {"name", "namespace", "priority_class", "replica_role"})),
      lq_admission_wait_(registry.AddHistogram(
          "kueue_local_queue_admission_wait_time_seconds",
          "Seconds from a workload's creation or latest requeue to its admission, per "
          "LocalQueue.",
          {"name", "namespace", "priority_class", "replica_role"},
          metrics::KueueExponentialBuckets(14))),
      lq_quota_reserved_wait_(registry.AddHistogram(
          "kueue_local_queue_quota_reserved_wait_time_seconds",
          "Seconds from a workload's creation or latest requeue to its quota reservation, per "
          "LocalQueue.",
          {"name", "namespace", "priority_class", "replica_role"},
          metrics::KueueExponentialBuckets(14))),
      checks_wait_(registry.AddHistogram(
          "kueue_admission_checks_wait_time_seconds",
          "Seconds from a workload's quota reservation to its admission (its admission checks' "
          "wait), per ClusterQueue.",
          {"cluster_queue", "priority_class", "replica_role"},
          metrics::KueueExponentialBuckets(14))),
      lq_checks_wait_(registry.AddHistogram(
          "kueue_local_queue_admission_checks_wait_time_seconds",
          "Seconds from a workload's quota reservation to its admission (its admission checks' "
          "wait), per LocalQueue.",
          {"name", "namespace", "priority_class", "replica_role"},
          metrics::KueueExponentialBuckets(14))),
      attempts_(registry.AddCounter(
          "kueue_admission_attempts_total",
          "Scheduling cycles that looked at pending workloads. result is 'success' when the "
          "cycle admitted at least one workload, 'inadmissible' when it admitted none.",
          {"result", "replica_role"})),
      attempt_duration_(registry.AddHistogram(
          "kueue_admission_attempt_duration_seconds",
          "Wall time of a scheduling cycle (plan and apply), by the same result as "
          "kueue_admission_attempts_total.",
          {"result", "replica_role"}, metrics::DefaultLatencyBuckets())),
      evicted_(registry.AddCounter(
          "kueue_evicted_workloads_total",
          "Workloads evicted, per ClusterQueue and reason: Preempted, PodsReadyTimeout, "
          "ClusterQueueStopped, LocalQueueStopped, AdmissionCheck or Deactivated. "
          "underlying_cause: WaitForStart or WaitForRecovery for PodsReadyTimeout; "
          "AdmissionCheck, RequeuingLimitExceeded or MaximumExecutionTimeExceeded for a "
          "deactivation by Tollgate; empty when reason is the root cause.",
          {"cluster_queue", "reason", "underlying_cause", "priority_class", "replica_role"})),
      lq_evicted_(registry.AddCounter(
          "kueue_local_queue_evicted_workloads_total",
          "Workloads evicted, per LocalQueue and reason.",
          {"name", "namespace", "reason", "underlying_cause", "priority_class", "replica_role"})),
      preempted_(registry.AddCounter(
          "kueue_preempted_workloads_total",
          "Workloads preempted, per ClusterQueue of the preemptor and reason: InClusterQueue, "
          "InCohortReclamation, InCohortFairSharing or InCohortReclaimWhileBorrowing.",
          {"preempting_cluster_queue", "reason", "replica_role"})),
      finished_(registry.AddCounter(
          "kueue_finished_workloads_total",
          "Workloads that finished, per ClusterQueue that admitted them and priority class.",
          {"cluster_queue", "priority_class", "replica_role"})),
      lq_finished_(
          registry.AddCounter("kueue_local_queue_finished_workloads_total",
                              "Workloads that finished, per LocalQueue and priority class.",
                              {"name", "namespace", "priority_class", "replica_role"})),
      cohort_subtree_admitted_(registry.AddCounter(
          "kueue_cohort_subtree_admitted_workloads_total",
          "Workloads admitted by a ClusterQueue anywhere in the cohort's subtree, per cohort "
          "(each ancestor cohort counts the admission) and priority class.",
          {"cohort", "priority_class", "replica_role"})),
      multikueue_dispatched_(registry.AddCounter(
          "multikueue_workloads_dispatched_total",
          "Worker clusters a MultiKueue workload was nominated to (the controller creates a "
          "copy on each once it is connected), per ClusterQueue and worker cluster.",
          {"cluster_queue", "cluster", "replica_role"})),
      multikueue_admitted_(registry.AddCounter(
          "multikueue_workloads_admitted_total",
          "MultiKueue workloads admitted on a worker cluster, per ClusterQueue and worker "
          "cluster. A workload evicted and admitted again counts again.",
          {"cluster_queue", "cluster", "replica_role"})),
      cycles_(registry.AddCounter("tollgate_executor_cycles_total",
                                  "Scheduling cycles run by the admission executor.", {})),
      cycle_duration_(registry.AddHistogram(
          "tollgate_executor_cycle_duration_seconds",
          "Wall time of one scheduling cycle (plan and apply), including cycles with nothing "
          "to do.",
          {}, FastLatencyBuckets())),
      round_operations_(registry.AddHistogram(
          "tollgate_executor_round_operations",
          "Requests the executor took from its queue in one round (they share one commit).", {},
          PowersOfTwo(14))),
      commit_duration_(registry.AddHistogram(
          "tollgate_store_commit_duration_seconds",
          "Wall time of one group commit to the store (synced write-ahead log).", {},
          FastLatencyBuckets())),
      commit_batches_(registry.AddHistogram(
          "tollgate_store_commit_batch_size",
          "Store batches (revisions) written by one group commit.", {}, PowersOfTwo(6))),
      commit_errors_(registry.AddCounter(
          "tollgate_store_commit_errors_total",
          "Group commits the store refused; their requests were answered UNAVAILABLE.", {})) {}

AdmissionMetrics::AdmissionSeries& AdmissionMetrics::SeriesFor(const std::string& cluster_queue,
                                                               const std::string& namespace_name,
                                                               const std::string& local_queue,
                                                               const std::string& priority_class) {
  std::string key =
      absl::StrCat(cluster_queue, std::string(1, '\0'), namespace_name, std::string(1, '\0'),
                   local_queue, std::string(1, '\0'), priority_class);
  auto [it, inserted] = admission_series_.try_emplace(std::move(key));
  AdmissionSeries& s = it->second;
  if (inserted) {
    const metrics::LabelValues cq = {cluster_queue, priority_class, kRole};
    const metrics::LabelValues lq = {local_queue, namespace_name, priority_class, kRole};
    s.admitted = &admitted_.Labels(cq);
    s.quota_reserved = &quota_reserved_.Labels(cq);
    s.admission_wait = &admission_wait_.Labels(cq);
    s.quota_reserved_wait = &quota_reserved_wait_.Labels(cq);
    s.lq_admitted = &lq_admitted_.Labels(lq);
    s.lq_quota_reserved = &lq_quota_reserved_.Labels(lq);
    s.lq_admission_wait = &lq_admission_wait_.Labels(lq);
    s.lq_quota_reserved_wait = &lq_quota_reserved_wait_.Labels(lq);
    s.checks_wait = &checks_wait_.Labels(cq);
    s.lq_checks_wait = &lq_checks_wait_.Labels(lq);
  }
  return s;
}

void AdmissionMetrics::CountCohortAdmission(const core::ClusterState& state,
                                            const std::string& cluster_queue,
                                            const std::string& priority_class) {
  // Every cohort above the admitting ClusterQueue (none for one outside any cohort).
  const core::QuotaNode* node = state.tree().ClusterQueue(cluster_queue);
  for (const core::QuotaNode* cohort = node != nullptr ? node->parent() : nullptr;
       cohort != nullptr; cohort = cohort->parent()) {
    cohort_subtree_admitted_.Add({cohort->name(), priority_class, kRole});
  }
}

void AdmissionMetrics::OnRound(int64_t operations) {
  if (operations > 0) round_operations_.Observe({}, static_cast<double>(operations));
}

void AdmissionMetrics::OnPlan(const core::CyclePlan& plan, const core::ClusterState& state,
                              absl::Time now) {
  for (const core::AdmissionDecision& admission : plan.admissions) {
    const core::Workload* wl = state.workload(admission.id);
    if (wl == nullptr) continue;
    const double wait = std::max(0.0, absl::ToDoubleSeconds(now - QueuedSince(*wl)));
    AdmissionSeries& s = SeriesFor(admission.admission.cluster_queue, wl->spec.namespace_name,
                                   wl->spec.queue_name, wl->spec.priority_class_name);
    s.quota_reserved->Add();
    s.quota_reserved_wait->Observe(wait);
    s.lq_quota_reserved->Add();
    s.lq_quota_reserved_wait->Observe(wait);
    // With admission checks the workload is admitted later, when the last one is Ready
    // (OnWorkloadCommitted counts it then).
    auto cq = state.cluster_queue_specs().find(admission.admission.cluster_queue);
    if (cq == state.cluster_queue_specs().end() ||
        core::ChecksForWorkload(cq->second, &admission.admission).empty()) {
      s.admitted->Add();
      s.admission_wait->Observe(wait);
      s.lq_admitted->Add();
      s.lq_admission_wait->Observe(wait);
      CountCohortAdmission(state, admission.admission.cluster_queue, wl->spec.priority_class_name);
    }
  }
  // Preemptions are rare next to admissions: no series cache. The victims' evictions are
  // counted when they are committed (OnWorkloadCommitted).
  for (const core::PreemptionDecision& preemption : plan.preemptions) {
    const core::Workload* preemptor = state.workload(preemption.preemptor);
    const std::string* preempting_queue =
        preemptor != nullptr ? state.QueuedIn(preemptor->id) : nullptr;
    preempted_.Add(
        {preempting_queue != nullptr ? *preempting_queue : "", preemption.reason, kRole});
  }
}

void AdmissionMetrics::OnCycle(const core::CyclePlan& plan, absl::Duration elapsed) {
  const double seconds = absl::ToDoubleSeconds(elapsed);
  cycles_.Add({});
  cycle_duration_.Observe({}, seconds);
  // As in Kueue, an attempt is a cycle that had heads to look at.
  if (plan.admissions.empty() && plan.pending.empty() && plan.preemptions.empty()) return;
  const char* result = plan.admissions.empty() ? "inadmissible" : "success";
  attempts_.Add({result, kRole});
  attempt_duration_.Observe({result, kRole}, seconds);
}

void AdmissionMetrics::OnWorkloadCommitted(const core::Workload& wl,
                                           const core::ClusterState& state, absl::Time now) {
  // Keyed by time, not by round: a simulated clock may not move between rounds.
  if (now != evictions_counted_at_) {
    evictions_counted_.clear();
    finishes_counted_.clear();
    admissions_counted_.clear();
    dispatch_events_counted_.clear();
    evictions_counted_at_ = now;
  }
  CountMultiKueueDispatch(wl, now);
  // As Kueue, a LocalQueue's series are recorded only while it exists: a workload admitted
  // before its LocalQueue was deleted counts for its ClusterQueue alone.
  const bool lq_exists =
      state.registry().FindLocalQueue(wl.spec.namespace_name, wl.spec.queue_name) != nullptr;
  // Admitted once its admission checks were all Ready: CompleteAdmission stamps the Admitted
  // condition with the round's time (a workload without checks was counted at reservation).
  if (wl.status.state == core::WorkloadState::kAdmitted && !wl.status.admission_checks().empty() &&
      wl.status.admission.has_value()) {
    const core::Condition* admitted = core::FindCondition(wl.status, "Admitted");
    if (admitted != nullptr && admitted->status && admitted->last_transition_time == now &&
        admissions_counted_.insert(wl.id).second) {
      AdmissionSeries& s = SeriesFor(wl.status.admission->cluster_queue, wl.spec.namespace_name,
                                     wl.spec.queue_name, wl.spec.priority_class_name);
      const double wait = std::max(0.0, absl::ToDoubleSeconds(now - QueuedSince(wl)));
      const double checks = std::max(0.0, absl::ToDoubleSeconds(now - wl.status.admission_time));
      s.admitted->Add();
      s.admission_wait->Observe(wait);
      s.checks_wait->Observe(checks);
      if (lq_exists) {
        s.lq_admitted->Add();
        s.lq_admission_wait->Observe(wait);
        s.lq_checks_wait->Observe(checks);
      }
      CountCohortAdmission(state, wl.status.admission->cluster_queue, wl.spec.priority_class_name);
    }
  }
  // Finish stamps the Finished condition with the round's time; a finished workload keeps the
  // admission it finished under.
  if (wl.status.state == core::WorkloadState::kFinished) {
    for (const core::Condition& condition : wl.status.conditions) {
      if (condition.type != "Finished" || condition.last_transition_time != now) continue;
      if (!finishes_counted_.insert(wl.id).second) break;
      const std::string cluster_queue =
          wl.status.admission.has_value() ? wl.status.admission->cluster_queue : "";
      finished_.Add({cluster_queue, wl.spec.priority_class_name, kRole});
      if (lq_exists) {
        lq_finished_.Add(
            {wl.spec.queue_name, wl.spec.namespace_name, wl.spec.priority_class_name, kRole});
      }
      break;
    }
  }
  // Every eviction stamps evicted_at and records an "EvictedDueTo<reason>" event at the round's
  // time; the events (not the Evicted condition) also show an eviction the same round's cycles
  // already undid by admitting the workload again.
  if (wl.status.history().evicted_at != now) return;
  constexpr absl::string_view kPrefix = "EvictedDueTo";
  const std::vector<const core::WorkloadEvent*> evictions = UncountedEventsAt(
      wl, now, [&](const core::WorkloadEvent& e) { return absl::StartsWith(e.reason, kPrefix); },
      evictions_counted_);
  if (evictions.empty()) return;
  // Still holding its quota (the adapter has to stop it), or already back in its queue.
  std::string cluster_queue;
  if (wl.status.admission.has_value()) {
    cluster_queue = wl.status.admission->cluster_queue;
  } else if (const std::string* queued = state.QueuedIn(wl.id)) {
    cluster_queue = *queued;
  }
  for (const core::WorkloadEvent* eviction : evictions) {
    // The Evicted reason of a deactivation names its cause (DeactivatedDueToAdmissionCheck);
    // Kueue's metrics carry it apart: reason Deactivated, underlying_cause AdmissionCheck.
    absl::string_view reason_view = absl::string_view(eviction->reason).substr(kPrefix.size());
    std::string underlying_cause;
    if (absl::ConsumePrefix(&reason_view, "DeactivatedDueTo")) {
      underlying_cause = std::string(reason_view);
      reason_view = "Deactivated";
    } else if (reason_view == "PodsReadyTimeout") {
      underlying_cause = LostAPodBefore(wl, eviction) ? "WaitForRecovery" : "WaitForStart";
    }
    const std::string reason(reason_view);
    evicted_.Add({cluster_queue, reason, underlying_cause, wl.spec.priority_class_name, kRole});
    if (lq_exists) {
      lq_evicted_.Add({wl.spec.queue_name, wl.spec.namespace_name, reason, underlying_cause,
                       wl.spec.priority_class_name, kRole});
    }
  }
}

void AdmissionMetrics::CountMultiKueueDispatch(const core::Workload& wl, absl::Time now) {
  // Dispatch events are recorded while the workload holds quota, so it has its ClusterQueue.
  if (!wl.status.admission.has_value()) return;
  const std::vector<const core::WorkloadEvent*> events = UncountedEventsAt(
      wl, now,
      [](const core::WorkloadEvent& e) {
        return e.reason == core::kNominatedEventReason ||
               e.reason == core::kAdmittedOnWorkerEventReason;
      },
      dispatch_events_counted_);
  const std::string& cluster_queue = wl.status.admission->cluster_queue;
  for (const core::WorkloadEvent* event : events) {
    if (event->reason == core::kAdmittedOnWorkerEventReason) {
      multikueue_admitted_.Add({cluster_queue, wl.status.history().cluster_name, kRole});
      continue;
    }
    for (const std::string& cluster : core::NominatedClustersOf(event->message)) {
      multikueue_dispatched_.Add({cluster_queue, cluster, kRole});
    }
  }
}

void AdmissionMetrics::OnObjectErased(const core::ObjectName& object) {
  if (object.kind == core::ObjectKind::kCohort) {
    cohort_subtree_admitted_.DeleteMatching({{"cohort", object.name}});
    return;
  }
  if (object.kind != core::ObjectKind::kLocalQueue) return;
  // The cached series are about to go: drop the cache entries first.
  const std::string infix = absl::StrCat(std::string(1, '\0'), object.namespace_name,
                                         std::string(1, '\0'), object.name, std::string(1, '\0'));
  for (auto it = admission_series_.begin(); it != admission_series_.end();) {
    if (absl::StrContains(it->first, infix)) {
      admission_series_.erase(it++);
    } else {
      ++it;
    }
  }
  const std::vector<std::pair<std::string, std::string>> labels = {
      {"name", object.name}, {"namespace", object.namespace_name}};
  for (metrics::Family* family : {&lq_admitted_, &lq_quota_reserved_, &lq_admission_wait_,
                                  &lq_quota_reserved_wait_, &lq_evicted_, &lq_finished_}) {
    family->DeleteMatching(labels);
  }
}

void AdmissionMetrics::OnCommit(int64_t batches, absl::Duration elapsed,
                                const absl::Status& status) {
  if (!status.ok()) {
    commit_errors_.Add({});
    return;
  }
  commit_duration_.Observe({}, absl::ToDoubleSeconds(elapsed));
  commit_batches_.Observe({}, static_cast<double>(batches));
}

// --- State gauges ------------------------------------------------------------------------------

namespace {

struct QuotaRow {
  std::string flavor;
  std::string resource;
  double nominal = 0;
  // Absent: no limit (+Inf, as Kueue reports it).
  std::optional<double> borrowing_limit;
  std::optional<double> lending_limit;
};

struct UsageRow {
  std::string flavor;
  std::string resource;
  double total = 0;
};

struct ClusterQueueRow {
  std::string name;
  std::string cohort;
  // The top of the cohort tree above it (its own cohort when that has no parent).
  std::string root_cohort;
  int64_t finished = 0;
  int64_t pending_active = 0;
  int64_t pending_inadmissible = 0;
  int64_t holding = 0;
  // Of `holding`: those still waiting for their admission checks (not admitted).
  int64_t quota_reserved = 0;
  // "active", "pending" (inactive) or "terminating" (Kueue's status values).
  std::string status;
  double weighted_share = 0;
  std::vector<QuotaRow> quota;
  std::vector<UsageRow> usage;
};

struct LocalQueueRow {
  std::string namespace_name;
  std::string name;
  int64_t pending_active = 0;
  int64_t pending_inadmissible = 0;
  int64_t holding = 0;
  int64_t quota_reserved = 0;
  int64_t finished = 0;
  bool active = false;
  std::vector<UsageRow> usage;
};

// A cohort's place in the tree and its subtree's totals (every ClusterQueue below it).
struct CohortRow {
  std::string name;
  std::string parent;
  std::string root;
  int64_t admitted_active = 0;
  // Kueue reports only positive subtree quotas and reservations.
  std::vector<UsageRow> subtree_quota;
  std::vector<UsageRow> subtree_reservations;
};

struct StateSnapshot {
  // Kueue reports the weighted-share gauges only with fair sharing enabled.
  bool fair_sharing = false;
  std::vector<ClusterQueueRow> cluster_queues;
  std::vector<LocalQueueRow> local_queues;
  std::vector<std::pair<std::string, double>> cohort_shares;
  std::vector<CohortRow> cohorts;
};

// Kueue's float view of the scheduler's integers: CPU in cores, everything else as is.
double ToMetricValue(const std::string& resource, int64_t scalar) {
  // INT64_MAX is an unlimited quota (a quantity beyond the scalar, docs/scheduling.md), which
  // Kueue's AsApproximateFloat64 exposes as +Inf.
  if (scalar == std::numeric_limits<int64_t>::max()) return std::numeric_limits<double>::infinity();
  return resource == "cpu" ? static_cast<double>(scalar) / 1000 : static_cast<double>(scalar);
}

std::vector<UsageRow> UsageRows(const std::vector<core::ResourceUsageRow>& rows) {
  std::vector<UsageRow> out;
  out.reserve(rows.size());
  for (const core::ResourceUsageRow& row : rows) {
    out.push_back({row.flavor, row.resource, ToMetricValue(row.resource, row.total)});
  }
  return out;
}

// The name of the topmost cohort above `node` (itself if a cohort without a parent); empty for
// a ClusterQueue outside any cohort.
std::string RootCohort(const core::QuotaNode* node) {
  if (node == nullptr) return "";
  while (node->parent() != nullptr) node = node->parent();
  return node->kind() == core::QuotaNode::Kind::kCohort ? node->name() : "";
}

CohortRow CohortSubtree(const core::ClusterState& state, core::QuotaNode& cohort) {
  CohortRow row;
  row.name = cohort.name();
  row.parent = cohort.parent() != nullptr ? cohort.parent()->name() : "";
  row.root = RootCohort(&cohort);
  std::map<core::FrId, int64_t> reserved;
  for (const core::QuotaNode* cq : state.tree().ClusterQueuesUnder(&cohort)) {
    if (const core::ClusterQueueRuntime* runtime = state.cluster_queue(cq->name())) {
      row.admitted_active +=
          static_cast<int64_t>(runtime->holding.size() - runtime->holding.quota_reserved());
    }
    for (const core::FrId fr : cq->ActiveResources()) reserved[fr] += cq->Usage(fr);
  }
  const core::FlavorResourceIndex& index = state.fr_index();
  for (const core::FrId fr : cohort.subtree_resources()) {
    if (cohort.SubtreeQuota(fr) <= 0) continue;
    row.subtree_quota.push_back({index.Flavor(fr), index.Resource(fr),
                                 ToMetricValue(index.Resource(fr), cohort.SubtreeQuota(fr))});
  }
  for (const auto& [fr, total] : reserved) {
    if (total <= 0) continue;
    row.subtree_reservations.push_back(
        {index.Flavor(fr), index.Resource(fr), ToMetricValue(index.Resource(fr), total)});
  }
  return row;
}

// Kueue's weighted-share gauges carry the precise share (status rounds it up), and a
// ClusterQueue's +Inf (weight 0 while borrowing) is exposed as NaN; a Cohort's stays +Inf.
double PreciseWeightedShare(const core::ClusterState& state, const core::QuotaNode* node,
                            bool cluster_queue) {
  if (node == nullptr) return 0;
  const double share = core::ComputeDrs(*node, state.fr_index()).PreciseWeightedShare();
  if (cluster_queue && std::isinf(share)) return std::numeric_limits<double>::quiet_NaN();
  return share;
}

// Runs on the executor thread: copies numbers, nothing else.
StateSnapshot TakeSnapshot(const core::ClusterState& state) {
  StateSnapshot snapshot;
  snapshot.fair_sharing = state.config().fair_sharing.enable;
  std::set<std::string> cohorts;
  for (const auto& [name, cohort] : state.cohorts()) cohorts.insert(name);
  for (const auto& [name, runtime] : state.cluster_queue_runtimes()) {
    ClusterQueueRow row;
    row.name = name;
    row.cohort = runtime.spec.cohort;
    if (!row.cohort.empty()) cohorts.insert(row.cohort);
    row.root_cohort = RootCohort(state.tree().ClusterQueue(name));
    // Kueue counts every pending workload of an inactive ClusterQueue as inadmissible: none of
    // them is a candidate for the next cycle.
    row.pending_active = runtime.active ? runtime.queue.active_size() : 0;
    row.pending_inadmissible = runtime.queue.size() - row.pending_active;
    row.holding = static_cast<int64_t>(runtime.holding.size());
    row.quota_reserved = static_cast<int64_t>(runtime.holding.quota_reserved());
    // Kueue's status values: a terminating ClusterQueue is "terminating", any other inactive
    // one "pending".
    row.status = runtime.active                             ? "active"
                 : runtime.inactive_reason == "Terminating" ? "terminating"
                                                            : "pending";
    if (snapshot.fair_sharing) {
      row.weighted_share =
          PreciseWeightedShare(state, state.tree().ClusterQueue(name), /*cluster_queue=*/true);
    }
    for (const core::ResourceGroupSpec& group : runtime.spec.resource_groups) {
      for (const core::FlavorQuotasSpec& flavor : group.flavors) {
        for (const core::ResourceQuotaSpec& quota : flavor.resources) {
          QuotaRow q{flavor.flavor, quota.resource, ToMetricValue(quota.resource, quota.nominal),
                     std::nullopt, std::nullopt};
          if (quota.borrowing_limit.has_value()) {
            q.borrowing_limit = ToMetricValue(quota.resource, *quota.borrowing_limit);
          }
          if (quota.lending_limit.has_value()) {
            q.lending_limit = ToMetricValue(quota.resource, *quota.lending_limit);
          }
          row.quota.push_back(std::move(q));
        }
      }
    }
    row.usage = UsageRows(state.ClusterQueueUsage(name));
    snapshot.cluster_queues.push_back(std::move(row));
  }
  for (const std::string& cohort : cohorts) {
    if (snapshot.fair_sharing) {
      snapshot.cohort_shares.emplace_back(
          cohort,
          PreciseWeightedShare(state, state.tree().Cohort(cohort), /*cluster_queue=*/false));
    }
    // Not in the tree: a cohort in a cycle, which Tollgate detaches (no subtree to report).
    if (core::QuotaNode* node = state.tree().Cohort(cohort)) {
      snapshot.cohorts.push_back(CohortSubtree(state, *node));
    }
  }
  // One pass over the workloads for every LocalQueue's counts (not one pass per queue).
  std::map<std::pair<std::string, std::string>, LocalQueueRow> local;
  for (const auto& [key, runtime] : state.local_queues()) {
    LocalQueueRow& row = local[{runtime.spec.namespace_name, runtime.spec.name}];
    row.namespace_name = runtime.spec.namespace_name;
    row.name = runtime.spec.name;
    const core::ClusterQueueRuntime* cq = state.cluster_queue(runtime.spec.cluster_queue);
    row.active = cq != nullptr && cq->active && runtime.spec.stop_policy == core::StopPolicy::kNone;
    row.usage = UsageRows(state.LocalQueueUsage(runtime.spec.namespace_name, runtime.spec.name));
  }
  std::map<std::string, int64_t> finished_by_cq;
  for (const core::Workload* wl : state.AllWorkloads()) {
    const bool finished = wl->status.state == core::WorkloadState::kFinished;
    if (finished && wl->status.admission.has_value()) {
      finished_by_cq[wl->status.admission->cluster_queue]++;
    }
    auto it = local.find({wl->spec.namespace_name, wl->spec.queue_name});
    if (it == local.end()) continue;
    if (finished) {
      it->second.finished++;
    } else if (wl->HoldsQuota()) {
      it->second.holding++;
      if (wl->status.state == core::WorkloadState::kQuotaReserved) it->second.quota_reserved++;
    } else if (wl->status.state == core::WorkloadState::kPending) {
      const std::string* queued = state.QueuedIn(wl->id);
      if (queued == nullptr) continue;
      const core::ClusterQueueRuntime* cq = state.cluster_queue(*queued);
      if (cq != nullptr && (!cq->active || cq->queue.IsInadmissible(wl->id))) {
        it->second.pending_inadmissible++;
      } else {
        it->second.pending_active++;
      }
    }
  }
  for (auto& [key, row] : local) snapshot.local_queues.push_back(std::move(row));
  for (ClusterQueueRow& cq : snapshot.cluster_queues) cq.finished = finished_by_cq[cq.name];
  return snapshot;
}

void WriteSnapshot(const StateSnapshot& s, TextWriter& w) {
  w.BeginFamily("kueue_pending_workloads",
                "Pending workloads per ClusterQueue: 'active' ones are candidates for the next "
                "cycle, 'inadmissible' ones wait for quota to free up.",
                MetricType::kGauge, {"cluster_queue", "status", "replica_role"});
  for (const ClusterQueueRow& cq : s.cluster_queues) {
    w.Sample({cq.name, "active", kRole}, static_cast<double>(cq.pending_active));
    w.Sample({cq.name, "inadmissible", kRole}, static_cast<double>(cq.pending_inadmissible));
  }
  w.BeginFamily("kueue_reserving_active_workloads",
                "Workloads holding a quota reservation in the ClusterQueue (waiting for "
                "admission checks, admitted or being evicted).",
                MetricType::kGauge, {"cluster_queue", "replica_role"});
  for (const ClusterQueueRow& cq : s.cluster_queues) {
    w.Sample({cq.name, kRole}, static_cast<double>(cq.holding));
  }
  w.BeginFamily("kueue_admitted_active_workloads",
                "Admitted workloads of the ClusterQueue that have not finished.",
                MetricType::kGauge, {"cluster_queue", "replica_role"});
  for (const ClusterQueueRow& cq : s.cluster_queues) {
    w.Sample({cq.name, kRole}, static_cast<double>(cq.holding - cq.quota_reserved));
  }
  w.BeginFamily("kueue_finished_workloads",
                "Finished workloads the ClusterQueue admitted that still exist (not deleted).",
                MetricType::kGauge, {"cluster_queue", "replica_role"});
  for (const ClusterQueueRow& cq : s.cluster_queues) {
    w.Sample({cq.name, kRole}, static_cast<double>(cq.finished));
  }
  w.BeginFamily("kueue_cluster_queue_info",
                "Always 1; the labels place the ClusterQueue in the cohort tree (empty outside "
                "any cohort).",
                MetricType::kGauge,
                {"cluster_queue", "parent_cohort", "root_cohort", "replica_role"});
  for (const ClusterQueueRow& cq : s.cluster_queues) {
    w.Sample({cq.name, cq.cohort, cq.root_cohort, kRole}, 1);
  }
  w.BeginFamily("kueue_cluster_queue_status",
                "1 for the ClusterQueue's current status ('pending', 'active' or 'terminating'), "
                "0 for the others.",
                MetricType::kGauge, {"cluster_queue", "status", "replica_role"});
  for (const ClusterQueueRow& cq : s.cluster_queues) {
    for (const char* status : {"pending", "active", "terminating"}) {
      w.Sample({cq.name, status, kRole}, cq.status == status ? 1 : 0);
    }
  }
  auto quota_family = [&](const char* name, const char* help, auto value) {
    w.BeginFamily(name, help, MetricType::kGauge,
                  {"cohort", "cluster_queue", "flavor", "resource", "replica_role"});
    for (const ClusterQueueRow& cq : s.cluster_queues) {
      for (const QuotaRow& q : cq.quota) {
        w.Sample({cq.cohort, cq.name, q.flavor, q.resource, kRole}, value(q));
      }
    }
  };
  constexpr double kInf = std::numeric_limits<double>::infinity();
  quota_family("kueue_cluster_queue_nominal_quota",
               "The ClusterQueue's nominal quota per flavor and resource (CPU in cores); +Inf when "
               "unlimited.",
               [](const QuotaRow& q) { return q.nominal; });
  quota_family("kueue_cluster_queue_borrowing_limit",
               "How much the ClusterQueue may borrow from its cohort per flavor and resource; "
               "+Inf when unlimited.",
               [&](const QuotaRow& q) { return q.borrowing_limit.value_or(kInf); });
  quota_family("kueue_cluster_queue_lending_limit",
               "How much of its quota the ClusterQueue lends to its cohort per flavor and "
               "resource; +Inf when unlimited.",
               [&](const QuotaRow& q) { return q.lending_limit.value_or(kInf); });
  auto usage_family = [&](const char* name, const char* help) {
    w.BeginFamily(name, help, MetricType::kGauge,
                  {"cohort", "cluster_queue", "flavor", "resource", "replica_role"});
    for (const ClusterQueueRow& cq : s.cluster_queues) {
      for (const UsageRow& u : cq.usage) {
        w.Sample({cq.cohort, cq.name, u.flavor, u.resource, kRole}, u.total);
      }
    }
  };
  usage_family("kueue_cluster_queue_resource_reservation",
               "Quota reserved in the ClusterQueue per flavor and resource, borrowed quota "
               "included.");
  usage_family("kueue_cluster_queue_resource_usage",
               "Quota used by the ClusterQueue's admitted workloads per flavor and resource.");
  if (s.fair_sharing) {
    w.BeginFamily("kueue_cluster_queue_weighted_share",
                  "The ClusterQueue's fair-sharing weighted share, unrounded (its status rounds "
                  "it up); 0 when it uses no more than its nominal quota, NaN when it borrows "
                  "with weight 0.",
                  MetricType::kGauge, {"cluster_queue", "cohort", "replica_role"});
    for (const ClusterQueueRow& cq : s.cluster_queues) {
      w.Sample({cq.name, cq.cohort, kRole}, cq.weighted_share);
    }
    w.BeginFamily("kueue_cohort_weighted_share",
                  "The cohort's fair-sharing weighted share within its parent, unrounded (its "
                  "status rounds it up); +Inf when it borrows with weight 0.",
                  MetricType::kGauge, {"cohort", "replica_role"});
    for (const auto& [cohort, share] : s.cohort_shares) w.Sample({cohort, kRole}, share);
  }
  w.BeginFamily("kueue_cohort_info",
                "Always 1; the labels place the cohort in the cohort tree (parent_cohort empty "
                "for a root).",
                MetricType::kGauge, {"cohort", "parent_cohort", "root_cohort", "replica_role"});
  for (const CohortRow& c : s.cohorts) w.Sample({c.name, c.parent, c.root, kRole}, 1);
  w.BeginFamily("kueue_cohort_subtree_admitted_active_workloads",
                "Workloads holding quota in any ClusterQueue of the cohort's subtree.",
                MetricType::kGauge, {"cohort", "replica_role"});
  for (const CohortRow& c : s.cohorts) {
    w.Sample({c.name, kRole}, static_cast<double>(c.admitted_active));
  }
  auto subtree_family = [&](const char* name, const char* help,
                            std::vector<UsageRow> CohortRow::*rows) {
    w.BeginFamily(name, help, MetricType::kGauge, {"cohort", "flavor", "resource", "replica_role"});
    for (const CohortRow& c : s.cohorts) {
      for (const UsageRow& row : c.*rows) {
        w.Sample({c.name, row.flavor, row.resource, kRole}, row.total);
      }
    }
  };
  subtree_family("kueue_cohort_subtree_quota",
                 "The cohort's subtree quota per flavor and resource: its own quota plus what "
                 "its children lend it (only positive values).",
                 &CohortRow::subtree_quota);
  subtree_family("kueue_cohort_subtree_resource_reservations",
                 "Quota reserved by the ClusterQueues of the cohort's subtree per flavor and "
                 "resource (only positive values).",
                 &CohortRow::subtree_reservations);

  w.BeginFamily("kueue_local_queue_pending_workloads",
                "Pending workloads per LocalQueue, 'active' or 'inadmissible' as in "
                "kueue_pending_workloads.",
                MetricType::kGauge, {"name", "namespace", "status", "replica_role"});
  for (const LocalQueueRow& lq : s.local_queues) {
    w.Sample({lq.name, lq.namespace_name, "active", kRole}, static_cast<double>(lq.pending_active));
    w.Sample({lq.name, lq.namespace_name, "inadmissible", kRole},
             static_cast<double>(lq.pending_inadmissible));
  }
  w.BeginFamily("kueue_local_queue_reserving_active_workloads",
                "Workloads of the LocalQueue holding quota (waiting for admission checks, "
                "admitted or being evicted).",
                MetricType::kGauge, {"name", "namespace", "replica_role"});
  for (const LocalQueueRow& lq : s.local_queues) {
    w.Sample({lq.name, lq.namespace_name, kRole}, static_cast<double>(lq.holding));
  }
  w.BeginFamily("kueue_local_queue_admitted_active_workloads",
                "Admitted workloads of the LocalQueue that have not finished.", MetricType::kGauge,
                {"name", "namespace", "replica_role"});
  for (const LocalQueueRow& lq : s.local_queues) {
    w.Sample({lq.name, lq.namespace_name, kRole},
             static_cast<double>(lq.holding - lq.quota_reserved));
  }
  w.BeginFamily("kueue_local_queue_finished_workloads",
                "Finished workloads of the LocalQueue that still exist (not deleted).",
                MetricType::kGauge, {"name", "namespace", "replica_role"});
  for (const LocalQueueRow& lq : s.local_queues) {
    w.Sample({lq.name, lq.namespace_name, kRole}, static_cast<double>(lq.finished));
  }
  w.BeginFamily("kueue_local_queue_status",
                "1 for the LocalQueue's Active condition status ('True', 'False', 'Unknown'), 0 "
                "for the others.",
                MetricType::kGauge, {"name", "namespace", "active", "replica_role"});
  for (const LocalQueueRow& lq : s.local_queues) {
    for (const char* status : {"True", "False", "Unknown"}) {
      const bool current = std::string(status) == (lq.active ? "True" : "False");
      w.Sample({lq.name, lq.namespace_name, status, kRole}, current ? 1 : 0);
    }
  }
  for (const char* name :
       {"kueue_local_queue_resource_reservation", "kueue_local_queue_resource_usage"}) {
    w.BeginFamily(name, "Quota held by the LocalQueue's workloads per flavor and resource.",
                  MetricType::kGauge, {"name", "namespace", "flavor", "resource", "replica_role"});
    for (const LocalQueueRow& lq : s.local_queues) {
      for (const UsageRow& u : lq.usage) {
        w.Sample({lq.name, lq.namespace_name, u.flavor, u.resource, kRole}, u.total);
      }
    }
  }
}

}  // namespace

void RegisterStateMetrics(metrics::Registry& registry, AdmissionExecutor& executor) {
  registry.AddCollector([&executor](TextWriter& writer) {
    writer.BeginFamily("tollgate_executor_queue_depth",
                       "Requests waiting for the admission executor to take them.",
                       MetricType::kGauge, {});
    writer.Sample({}, static_cast<double>(executor.queue_depth()));
    writer.BeginFamily("tollgate_store_revision", "The store's latest committed revision.",
                       MetricType::kGauge, {});
    writer.Sample({}, static_cast<double>(executor.revision()));
    absl::StatusOr<StateSnapshot> snapshot = executor.Run<StateSnapshot>(
        [](AdmissionExecutor::Txn& txn) -> absl::StatusOr<StateSnapshot> {
          return TakeSnapshot(txn.state());
        });
    // Shutting down: the state gauges are left out of this last scrape.
    if (snapshot.ok()) WriteSnapshot(*snapshot, writer);
  });
}

void RegisterBuildInfo(metrics::Registry& registry, const std::string& version) {
  registry
      .AddGauge("kueue_build_info",
                "Always 1; the labels describe the tollgated build (Kueue's label names).",
                {"git_version", "git_commit", "build_date", "go_version", "compiler", "platform"})
      .Set({version, "", "", "", "c++ " __VERSION__, "linux"}, 1);
}

}  // namespace tollgate::engine
