#pragma once

#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "metrics/metric_registry.h"
#include "services/engine/admission_executor.h"
#include "services/engine/executor_observer.h"

namespace tollgate::engine {

// Kueue's scheduler metrics (admissions, wait times, attempts, evictions, preemptions) and
// Tollgate's executor and store metrics, recorded from what the executor reports. Names,
// types and labels follow Kueue's pkg/metrics so Kueue's dashboards and alert rules apply
// unchanged; replica_role is always "standalone" (one tollgated owns the state).
//
// The ExecutorObserver methods run on the executor thread only; they cache the series they
// touch so recording an admission is a hash lookup and a few atomic adds.
class AdmissionMetrics final : public ExecutorObserver {
 public:
  explicit AdmissionMetrics(metrics::Registry& registry);

  void OnRound(int64_t operations) override;
  void OnPlan(const core::CyclePlan& plan, const core::ClusterState& state,
              absl::Time now) override;
  void OnCycle(const core::CyclePlan& plan, absl::Duration elapsed) override;
  // Counts evictions, whatever started them (a cycle's preemption, Preempt, pods-ready timeout,
  // a stop policy, deactivation), by the Evicted condition's reason; and finished workloads.
  // Also counts MultiKueue dispatches: the workers nominated and the one that admitted.
  void OnWorkloadCommitted(const core::Workload& wl, const core::ClusterState& state,
                           absl::Time now) override;
  // A deleted LocalQueue's series go (Kueue's ClearLocalQueueMetrics), and a deleted Cohort's
  // admitted-workload counters (ClearCohortAdmittedWorkloadsMetrics); the state gauges follow
  // the state at the next scrape.
  void OnObjectErased(const core::ObjectName& object) override;
  void OnCommit(int64_t batches, absl::Duration elapsed, const absl::Status& status) override;

 private:
  // The series one (queue, priority class) pair records admissions into.
  struct AdmissionSeries {
    metrics::Family::Series* admitted = nullptr;
    metrics::Family::Series* quota_reserved = nullptr;
    metrics::Family::Series* admission_wait = nullptr;
    metrics::Family::Series* quota_reserved_wait = nullptr;
    metrics::Family::Series* lq_admitted = nullptr;
    metrics::Family::Series* lq_quota_reserved = nullptr;
    metrics::Family::Series* lq_admission_wait = nullptr;
    metrics::Family::Series* lq_quota_reserved_wait = nullptr;
    metrics::Family::Series* checks_wait = nullptr;
    metrics::Family::Series* lq_checks_wait = nullptr;
  };
  void CountMultiKueueDispatch(const core::Workload& wl, absl::Time now);
  AdmissionSeries& SeriesFor(const std::string& cluster_queue, const std::string& namespace_name,
                             const std::string& local_queue, const std::string& priority_class);
  void CountCohortAdmission(const core::ClusterState& state, const std::string& cluster_queue,
                            const std::string& priority_class);

  metrics::Family& admitted_;
  metrics::Family& quota_reserved_;
  metrics::Family& admission_wait_;
  metrics::Family& quota_reserved_wait_;
  metrics::Family& lq_admitted_;
  metrics::Family& lq_quota_reserved_;
  metrics::Family& lq_admission_wait_;
  metrics::Family& lq_quota_reserved_wait_;
  metrics::Family& checks_wait_;
  metrics::Family& lq_checks_wait_;
  metrics::Family& attempts_;
  metrics::Family& attempt_duration_;
  metrics::Family& evicted_;
  metrics::Family& lq_evicted_;
  metrics::Family& preempted_;
  metrics::Family& finished_;
  metrics::Family& lq_finished_;
  metrics::Family& cohort_subtree_admitted_;
  metrics::Family& multikueue_dispatched_;
  metrics::Family& multikueue_admitted_;
  metrics::Family& cycles_;
  metrics::Family& cycle_duration_;
  metrics::Family& round_operations_;
  metrics::Family& commit_duration_;
  metrics::Family& commit_batches_;
  metrics::Family& commit_errors_;
  // Executor thread only. Keyed by "cq\0namespace\0local queue\0priority class".
  absl::flat_hash_map<std::string, AdmissionSeries> admission_series_;
  // Evictions at `evictions_counted_at_` already counted, per workload (a workload can be
  // committed twice in a round: with the requests' changes and with the cycles').
  absl::flat_hash_map<core::WorkloadId, int> evictions_counted_;
  // Likewise the workloads whose finish at `evictions_counted_at_` was counted.
  absl::flat_hash_set<core::WorkloadId> finishes_counted_;
  // Likewise the workloads whose admission after their checks was counted.
  absl::flat_hash_set<core::WorkloadId> admissions_counted_;
  // Likewise the MultiKueue dispatch events counted, per workload.
  absl::flat_hash_map<core::WorkloadId, int> dispatch_events_counted_;
  absl::Time evictions_counted_at_ = absl::InfinitePast();
};

// Registers a collector that computes Kueue's state gauges (pending workloads by status, active
// and finished workloads, queue status, quota, usage, reservation, weighted shares, cohort
// subtree totals and hierarchy info, LocalQueue variants) at
// scrape time. The executor copies the numbers out in one short operation (no per-workload
// work but one pass counting LocalQueue membership); formatting happens on the scraping
// thread. `executor` must outlive the registry's scrapes.
void RegisterStateMetrics(metrics::Registry& registry, AdmissionExecutor& executor);

// kueue_build_info, with Tollgate's version and build in Kueue's label names.
void RegisterBuildInfo(metrics::Registry& registry, const std::string& version);

}  // namespace tollgate::engine
