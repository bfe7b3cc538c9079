#include "core/visibility.h"

#include <algorithm>
#include <map>
#include <utility>

#include "core/cluster_state.h"
#include "core/fair_sharing.h"
#include "core/saturating.h"

namespace tollgate::core {
namespace {

// A ClusterQueue's pending workloads in admission order: queue order, or under admission fair
// sharing by their LocalQueue's usage first.
std::vector<WorkloadId> OrderForVisibility(const ClusterState& state,
                                           const ClusterQueueRuntime& cq) {
  std::vector<WorkloadId> order = cq.queue.InOrder();
  if (!state.UsesAdmissionFairSharing(cq.spec)) return order;
  std::map<WorkloadId, double> usage;
  for (WorkloadId id : order) {
    const Workload* wl = state.workload(id);
    usage[id] = state.LocalQueueFairUsage(wl->spec.namespace_name, wl->spec.queue_name);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&usage](WorkloadId a, WorkloadId b) { return usage[a] < usage[b]; });
  return order;
}

}  // namespace

std::vector<ResourceUsageRow> ClusterQueueUsage(const ClusterState& state, absl::string_view name) {
  std::vector<ResourceUsageRow> rows;
  const ClusterQueueRuntime* cq = state.cluster_queue(name);
  if (cq == nullptr || cq->node == nullptr) return rows;
  for (const ResourceGroupSpec& group : cq->spec.resource_groups) {
    for (const FlavorQuotasSpec& flavor : group.flavors) {
      for (const ResourceQuotaSpec& quota : flavor.resources) {
        ResourceUsageRow row{flavor.flavor, quota.resource, 0, 0};
        if (auto fr = state.fr_index().Find(flavor.flavor, quota.resource)) {
          row.total = cq->node->Usage(*fr);
          row.borrowed = std::max<int64_t>(0, SatSub(row.total, quota.nominal));
        }
        rows.push_back(std::move(row));
      }
    }
  }
  return rows;
}

std::vector<ResourceUsageRow> LocalQueueUsage(const ClusterState& state,
                                              absl::string_view namespace_name,
                                              absl::string_view name) {
  const FlavorResourceIndex& fr_index = state.fr_index();
  std::map<std::pair<std::string, std::string>, int64_t> totals;
  for (const auto& wl : state.workload_table().slots()) {
    if (wl == nullptr || !wl->HoldsQuota() || wl->spec.namespace_name != namespace_name ||
        wl->spec.queue_name != name) {
      continue;
    }
    for (const auto& [fr, value] : wl->quota_usage) {
      int64_t& total = totals[{fr_index.Flavor(fr), fr_index.Resource(fr)}];
      total = SatAdd(total, value);
    }
  }
  std::vector<ResourceUsageRow> rows;
  for (const auto& [key, total] : totals) rows.push_back({key.first, key.second, total, 0});
  return rows;
}

QueueCounts ClusterQueueCounts(const ClusterState& state, absl::string_view name) {
  QueueCounts counts;
  const ClusterQueueRuntime* cq = state.cluster_queue(name);
  if (cq == nullptr) return counts;
  counts.pending = cq->queue.size();
  counts.reserving = static_cast<int64_t>(cq->holding.size());
  counts.admitted = counts.reserving - static_cast<int64_t>(cq->holding.quota_reserved());
  return counts;
}

QueueCounts LocalQueueCounts(const ClusterState& state, absl::string_view namespace_name,
                             absl::string_view name) {
  QueueCounts counts;
  for (const auto& wl : state.workload_table().slots()) {
    if (wl == nullptr || wl->spec.namespace_name != namespace_name || wl->spec.queue_name != name) {
      continue;
    }
    if (wl->status.state == WorkloadState::kPending) counts.pending++;
    if (wl->HoldsQuota()) counts.reserving++;
    if (wl->HoldsQuota() && wl->status.state != WorkloadState::kQuotaReserved) counts.admitted++;
  }
  return counts;
}

std::vector<PendingPosition> PendingInClusterQueue(const ClusterState& state,
                                                   absl::string_view name) {
  std::vector<PendingPosition> out;
  const ClusterQueueRuntime* cq = state.cluster_queue(name);
  if (cq == nullptr) return out;
  std::map<std::string, int64_t> per_local_queue;
  int64_t position = 0;
  for (WorkloadId id : OrderForVisibility(state, *cq)) {
    const Workload* wl = state.workload(id);
    PendingPosition p;
    p.id = id;
    p.cluster_queue = std::string(name);
    p.position_in_cluster_queue = position++;
    p.position_in_local_queue =
        per_local_queue[LocalQueueKey(wl->spec.namespace_name, wl->spec.queue_name)]++;
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<PendingPosition> PendingInLocalQueue(const ClusterState& state,
                                                 absl::string_view namespace_name,
                                                 absl::string_view name) {
  std::vector<PendingPosition> out;
  const LocalQueueRuntime* lq = state.registry().FindLocalQueue(namespace_name, name);
  if (lq == nullptr) return out;
  for (PendingPosition& p : PendingInClusterQueue(state, lq->spec.cluster_queue)) {
    const Workload* wl = state.workload(p.id);
    if (wl->spec.namespace_name == namespace_name && wl->spec.queue_name == name) {
      out.push_back(std::move(p));
    }
  }
  return out;
}

int64_t WeightedShare(const ClusterState& state, absl::string_view name) {
  const QuotaNode* node = state.tree().ClusterQueue(name);
  if (node == nullptr) node = state.tree().Cohort(name);
  if (node == nullptr) return 0;
  return ComputeDrs(*node, state.fr_index()).RoundedWeightedShare();
}

// --- ClusterState's forwarders, kept so callers of the facade need not change.

std::vector<ResourceUsageRow> ClusterState::ClusterQueueUsage(absl::string_view name) const {
  return core::ClusterQueueUsage(*this, name);
}
std::vector<ResourceUsageRow> ClusterState::LocalQueueUsage(absl::string_view namespace_name,
                                                            absl::string_view name) const {
  return core::LocalQueueUsage(*this, namespace_name, name);
}
QueueCounts ClusterState::ClusterQueueCounts(absl::string_view name) const {
  return core::ClusterQueueCounts(*this, name);
}
QueueCounts ClusterState::LocalQueueCounts(absl::string_view namespace_name,
                                           absl::string_view name) const {
  return core::LocalQueueCounts(*this, namespace_name, name);
}
std::vector<PendingPosition> ClusterState::PendingInClusterQueue(absl::string_view name) const {
  return core::PendingInClusterQueue(*this, name);
}
std::vector<PendingPosition> ClusterState::PendingInLocalQueue(absl::string_view namespace_name,
                                                               absl::string_view name) const {
  return core::PendingInLocalQueue(*this, namespace_name, name);
}
int64_t ClusterState::WeightedShare(absl::string_view name) const {
  return core::WeightedShare(*this, name);
}

}  // namespace tollgate::core
