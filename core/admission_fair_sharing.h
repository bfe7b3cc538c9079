#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>

#include "absl/time/time.h"
#include "core/scheduler_config.h"
#include "core/types.h"
#include "core/workload.h"
#include "core/workload_table.h"

namespace tollgate::core {

struct ClusterQueueRuntime;

// Admission fair sharing's usage ledger: per LocalQueue (keyed by LocalQueueKey) the usage its
// admitted workloads consumed, per resource in whole units (cpu in cores), decayed with the
// configured half-life and sampled every usageSamplingInterval. A reservation also records an
// entry penalty at once, so a LocalQueue's next workload already sees the cost; the penalty is
// settled into the usage when the workload is admitted and dropped when it no longer can be
// (Kueue's AfsUsageLedger, #14153). Not thread-safe.
class AdmissionFairSharingLedger {
 public:
  explicit AdmissionFairSharingLedger(const SchedulerConfig::AdmissionFairSharing& config)
      : config_(config) {}

  // Whether the ClusterQueue orders its heads by its LocalQueues' usage.
  bool Applies(const ClusterQueueSpec& cq) const {
    return config_.enable && cq.admission_mode == AdmissionMode::kUsageBasedFairSharing;
  }
  // Starts a ledger for a new LocalQueue (nothing when the feature is off or it has one).
  void Track(const std::string& local_queue_key, absl::Time now);
  // Drops a deleted LocalQueue's ledger.
  void Forget(const std::string& local_queue_key) {
    if (ledgers_.erase(local_queue_key) > 0) changed_.insert(local_queue_key);
  }
  // A restart seeds a tracked LocalQueue's decayed usage with what was persisted before it, as
  // Kueue seeds its ledger from the LocalQueue's status: the usage counts from `now` (the
  // downtime does not decay it) and unsettled entry penalties are gone.
  void Seed(const std::string& local_queue_key, std::map<std::string, double> consumed,
            absl::Time now);
  // The LocalQueues whose decayed usage changed since the last call, each with that usage, or
  // nullopt when its ledger is gone: what the store must keep for a restart.
  std::map<std::string, std::optional<std::map<std::string, double>>> TakeChanged();
  // Whether any LocalQueue has a ledger: without admission fair sharing none does, and a
  // workload's exit need not build its LocalQueue's key to find nothing.
  bool TracksAny() const { return !ledgers_.empty(); }
  // Records the entry penalty the workload's reservation costs its LocalQueue (the usage of one
  // sampling interval of `requests`, EntryPenaltyRequests), in place of what an earlier
  // reservation of the workload recorded: a reservation retried before its admission is charged
  // once. It counts in the LocalQueue's usage until settled or dropped.
  void PushEntryPenalty(const std::string& local_queue_key, WorkloadId workload,
                        const std::map<std::string, int64_t>& requests);
  // The workload is admitted: the usage is decayed to `now` and the workload's recorded penalty,
  // if any, joins it. `workloads` already holds the admission.
  void SettleEntryPenalty(const std::string& local_queue_key, WorkloadId workload,
                          const WorkloadTable& workloads, absl::Time now);
  // The workload's recorded penalty can no longer settle (deleted, finished or deactivated
  // without its admission): it stops counting, or it would weigh on the LocalQueue for good.
  void DropEntryPenalty(const std::string& local_queue_key, WorkloadId workload);
  // Decays every ledger whose sample is due at `now`; true if any was.
  bool SampleDue(const WorkloadTable& workloads, absl::Time now);
  // The earliest future sample.
  std::optional<absl::Time> NextSample() const;
  // The LocalQueue's decayed usage weighted by resource, over the LocalQueue's fair weight
  // (infinite for a weight of 0).
  double WeightedUsage(const std::string& local_queue_key, double local_queue_weight) const;

 private:
  struct Ledger {
    std::map<std::string, double> consumed;
    // Entry penalties not settled yet, per workload, and their sum per resource (recomputed from
    // the records, so a dropped record leaves no rounding behind).
    std::map<WorkloadId, std::map<std::string, double>> penalties;
    std::map<std::string, double> pending;
    absl::Time last_update = absl::InfinitePast();
    absl::Time next_sample = absl::InfiniteFuture();
  };
  void Decay(const std::string& local_queue_key, absl::Time now,
             const std::map<std::string, double>& penalty, const WorkloadTable& workloads);
  static void SumPending(Ledger& ledger);

  const SchedulerConfig::AdmissionFairSharing& config_;
  std::map<std::string, Ledger> ledgers_;
  // LocalQueues whose `consumed` changed (or whose ledger went) since TakeChanged.
  std::set<std::string> changed_;
};

// What Kueue's entry penalty is computed from (SumTotalRequests): each pod set's quota requests
// per pod (after resources.transformations; under IgnoreUndeclared only what `cq` covers) times
// the pods it still needs, its spec count less reclaimable pods. Not the smaller count a partial
// admission gives it, and not the `pods` a ClusterQueue may cover: Kueue's flavor assigner adds
// those to the assignment, not to the workload's requests.
std::map<std::string, int64_t> EntryPenaltyRequests(const SchedulerConfig& config,
                                                    const Workload& wl,
                                                    const ClusterQueueRuntime& cq);

}  // namespace tollgate::core
