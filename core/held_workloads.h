#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "core/workload.h"

namespace tollgate::core {

// The workloads holding one ClusterQueue's quota (reserved, admitted or evicting), in id order for
// iteration and, apart, in the order preemption considers victims: lowest (effective) priority
// first, then the one losing the least work (latest admission or checkpoint), then id. Keeping that
// order up to date lets the planner walk candidates lazily and stop at the first that cannot be
// taken, instead of collecting and sorting every admitted workload of a cohort for each preemptor.
class HeldWorkloads {
 public:
  struct VictimKey {
    // The effective priority (core/priority_boost.h).
    int64_t priority = 0;
    absl::Time work_at_risk_since;
    WorkloadId id = 0;

    bool operator<(const VictimKey& other) const {
      if (priority != other.priority) return priority < other.priority;
      if (work_at_risk_since != other.work_at_risk_since) {
        return work_at_risk_since > other.work_at_risk_since;
      }
      return id < other.id;
    }
  };
  using VictimOrder = absl::btree_set<VictimKey>;
  using QuotaUsage = std::vector<std::pair<int32_t, int64_t>>;
  // Distinct quota usages (Workload::quota_usage) of the workloads whose usage the queue's quota
  // node counts, with how many use each.
  using UsageCounts = absl::btree_map<QuotaUsage, int64_t>;

  // Adds the workload, or re-files it after its state, checkpoint or effective priority changed.
  void Insert(const Workload& wl, int64_t effective_priority);
  // Returns false if the workload was not held.
  bool Erase(WorkloadId id);
  void Clear();

  // Kept beside the quota tree's own accounting (ClusterState::AddUsageOf, RemoveUsageOf), so
  // that it sees every change of a held workload's quota usage. Fair preemption asks it whether
  // any victim of the queue could pass its strategy without walking every victim.
  // Beyond kMaxCountedUsages distinct usages the counting stops until Clear (a queue of many
  // differently sized workloads): usages_known() is then false and usages() empty.
  static constexpr size_t kMaxCountedUsages = 32;
  void CountUsage(const QuotaUsage& usage);
  void UncountUsage(const QuotaUsage& usage);
  bool usages_known() const { return !usages_overflowed_; }
  const UsageCounts& usages() const { return usages_; }

  bool contains(WorkloadId id) const { return filed_.contains(id); }
  size_t count(WorkloadId id) const { return filed_.count(id); }
  size_t size() const { return ids_.size(); }
  bool empty() const { return ids_.empty(); }
  absl::btree_set<WorkloadId>::const_iterator begin() const { return ids_.begin(); }
  absl::btree_set<WorkloadId>::const_iterator end() const { return ids_.end(); }

  // Workloads whose quota is reserved but that wait for admission checks (also in admitted()).
  size_t quota_reserved() const { return quota_reserved_; }

  // Admitted workloads in victim order, those waiting for admission checks included: a
  // reservation is a preemption candidate like an admission.
  const VictimOrder& admitted() const { return admitted_; }
  // Evicting workloads (still holding quota) in victim order.
  const VictimOrder& evicting() const { return evicting_; }

 private:
  struct Filed {
    VictimKey key;
    bool evicting = false;
    bool quota_reserved = false;
  };

  absl::btree_set<WorkloadId> ids_;
  VictimOrder admitted_;
  VictimOrder evicting_;
  absl::flat_hash_map<WorkloadId, Filed> filed_;
  size_t quota_reserved_ = 0;
  UsageCounts usages_;
  bool usages_overflowed_ = false;
};

}  // namespace tollgate::core
