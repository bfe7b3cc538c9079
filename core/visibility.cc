#include "core/visibility.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "core/cluster_state.h"
#include "core/fair_sharing.h"
#include "core/prefetch.h"
#include "core/saturating.h"

namespace tollgate::core {
namespace {

// A LocalQueue named by views into a workload's spec: the walks below count per LocalQueue
// without building a key string per workload.
using LocalQueueView = std::pair<absl::string_view, absl::string_view>;

LocalQueueView LocalQueueOf(const Workload& wl) {
  return {wl.spec.namespace_name, wl.spec.queue_name};
}

// Calls `visit(id, workload)` for each workload of `order`, asking for the LocalQueue names of
// those a few places ahead: a deep queue's workloads are cold in the cache, and a walk that
// waited on each one in turn took most of a visibility page's time.
template <typename Visit>
void ForEachInOrder(const ClusterState& state, const std::vector<WorkloadId>& order, Visit visit) {
  constexpr size_t kAhead = 16;
  for (size_t i = 0; i < order.size(); ++i) {
    if (i + kAhead < order.size()) {
      const WorkloadSpec& ahead = state.workload(order[i + kAhead])->spec;
      PrefetchLines(&ahead.namespace_name, sizeof(ahead.namespace_name));
      PrefetchLines(&ahead.queue_name, sizeof(ahead.queue_name));
    }
    visit(order[i], *state.workload(order[i]));
  }
}

// A ClusterQueue's pending workloads in admission order: queue order, or under admission fair
// sharing by their LocalQueue's usage first.
std::vector<WorkloadId> OrderForVisibility(const ClusterState& state,
                                           const ClusterQueueRuntime& cq) {
  std::vector<WorkloadId> order = cq.queue.InOrder();
  if (!state.UsesAdmissionFairSharing(cq.spec)) return order;
  absl::flat_hash_map<LocalQueueView, double> usage_of_local_queue;
  std::vector<std::pair<double, WorkloadId>> by_usage;
  by_usage.reserve(order.size());
  for (WorkloadId id : order) {
    const Workload* wl = state.workload(id);
    auto [it, inserted] = usage_of_local_queue.try_emplace(LocalQueueOf(*wl), 0.0);
    if (inserted) {
      it->second = state.LocalQueueFairUsage(wl->spec.namespace_name, wl->spec.queue_name);
    }
    by_usage.emplace_back(it->second, id);
  }
  std::stable_sort(by_usage.begin(), by_usage.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 0; i < order.size(); ++i) order[i] = by_usage[i].second;
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
          // Kueue's getUsage: only a queue in a cohort has anyone to borrow from, so usage a
          // lone queue holds above a lowered nominal quota is not reported as borrowed.
          if (cq->node->HasParent()) {
            row.borrowed = std::max<int64_t>(0, SatSub(row.total, quota.nominal));
          }
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
  // Kueue's pendingWorkloads is the size of the queue manager's LocalQueue: the workloads its
  // IsAdmissible lets in (not gated, deactivated, held or waiting for replacement pods), whether
  // or not their ClusterQueue exists. A stopped LocalQueue is out of the queue manager, and its
  // controller reports 0 for it.
  const LocalQueueRuntime* lq = state.registry().FindLocalQueue(namespace_name, name);
  const bool counts_pending = lq != nullptr && lq->spec.stop_policy == StopPolicy::kNone;
  for (const auto& wl : state.workload_table().slots()) {
    if (wl == nullptr || wl->spec.namespace_name != namespace_name || wl->spec.queue_name != name) {
      continue;
    }
    if (counts_pending && wl->Queueable(state.config().admission_gated_by)) counts.pending++;
    // Kueue counts these from its scheduler cache, which a deactivated workload has left.
    if (!HoldsActiveReservation(*wl)) continue;
    counts.reserving++;
    if (wl->status.state != WorkloadState::kQuotaReserved) counts.admitted++;
  }
  return counts;
}

std::vector<PendingPosition> PendingInClusterQueue(const ClusterState& state,
                                                   absl::string_view name) {
  std::vector<PendingPosition> out;
  const ClusterQueueRuntime* cq = state.cluster_queue(name);
  if (cq == nullptr) return out;
  const std::vector<WorkloadId> order = OrderForVisibility(state, *cq);
  out.reserve(order.size());
  absl::flat_hash_map<LocalQueueView, int64_t> per_local_queue;
  int64_t position = 0;
  ForEachInOrder(state, order, [&](WorkloadId id, const Workload& wl) {
    out.push_back({id, std::string(name), position++, per_local_queue[LocalQueueOf(wl)]++});
  });
  return out;
}

std::vector<PendingPosition> PendingInLocalQueue(const ClusterState& state,
                                                 absl::string_view namespace_name,
                                                 absl::string_view name) {
  std::vector<PendingPosition> out;
  const LocalQueueRuntime* lq = state.registry().FindLocalQueue(namespace_name, name);
  if (lq == nullptr) return out;
  const ClusterQueueRuntime* cq = state.cluster_queue(lq->spec.cluster_queue);
  if (cq == nullptr) return out;
  // Only this LocalQueue's count is needed: the others' workloads just take a place in the
  // ClusterQueue.
  const LocalQueueView wanted{namespace_name, name};
  int64_t position = 0;
  int64_t in_local_queue = 0;
  ForEachInOrder(state, OrderForVisibility(state, *cq), [&](WorkloadId id, const Workload& wl) {
    if (LocalQueueOf(wl) == wanted) {
      out.push_back({id, lq->spec.cluster_queue, position, in_local_queue++});
    }
    ++position;
  });
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
