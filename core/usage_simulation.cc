#include "core/usage_simulation.h"

#include "core/topology_scheduling.h"

namespace tollgate::core {
namespace {

// An admitted workload's placements, by names (what its admission says).
WorkloadTopologyUsage NamedUsageOf(const Workload& wl, const TopologyInventory& inventory) {
  WorkloadTopologyUsage usage;
  usage.named = TopologyUsageOf(wl, inventory);
  return usage;
}

}  // namespace

void UsageSimulation::Apply(QuotaNode& node, FrId fr, int64_t delta) {
  if (delta >= 0) {
    node.AddUsage(fr, delta);
  } else {
    node.RemoveUsage(fr, -delta);
  }
  log_.push_back(Change{&node, fr, delta});
}

void UsageSimulation::RemoveWorkload(const Workload& wl) {
  if (!wl.status.admission.has_value()) return;
  ClusterQueueRuntime* cq = state_.mutable_cluster_queue(wl.status.admission->cluster_queue);
  if (cq == nullptr || cq->node == nullptr) return;
  for (const auto& [fr, value] : wl.quota_usage) Apply(*cq->node, fr, -value);
  ApplyTopologyUsage(NamedUsageOf(wl, state_.topology()), -1);
}

void UsageSimulation::AddWorkloadBack(const Workload& wl) {
  if (!wl.status.admission.has_value()) return;
  ClusterQueueRuntime* cq = state_.mutable_cluster_queue(wl.status.admission->cluster_queue);
  if (cq == nullptr || cq->node == nullptr) return;
  for (const auto& [fr, value] : wl.quota_usage) Apply(*cq->node, fr, value);
  ApplyTopologyUsage(NamedUsageOf(wl, state_.topology()), +1);
}

void UsageSimulation::AddUsage(QuotaNode& node, const std::map<FrId, int64_t>& usage) {
  for (const auto& [fr, value] : usage) Apply(node, fr, value);
}

void UsageSimulation::AddUsage(QuotaNode& node, absl::Span<const std::pair<FrId, int64_t>> usage) {
  for (const auto& [fr, value] : usage) Apply(node, fr, value);
}

void UsageSimulation::RemoveUsage(QuotaNode& node, const std::map<FrId, int64_t>& usage) {
  for (const auto& [fr, value] : usage) Apply(node, fr, -value);
}

void UsageSimulation::RemoveQuotaUsage(QuotaNode& node,
                                       const std::vector<std::pair<FrId, int64_t>>& usage) {
  for (const auto& [fr, value] : usage) Apply(node, fr, -value);
}

void UsageSimulation::ApplyTopologyUsage(WorkloadTopologyUsage&& usage, int sign) {
  if (usage.empty()) return;
  topology_log_.push_back(state_.topology().ApplyTemporary(std::move(usage), sign));
}

void UsageSimulation::HoldLastTopologyUsage(WorkloadId workload) {
  if (!topology_log_.empty()) state_.topology().HoldTemporary(topology_log_.back(), workload);
}

void UsageSimulation::Restore() {
  for (auto it = topology_log_.rbegin(); it != topology_log_.rend(); ++it) {
    state_.topology().UndoTemporary(*it);
  }
  topology_log_.clear();
  // Undo in reverse so bubbling through lending limits retraces the same path.
  for (auto it = log_.rbegin(); it != log_.rend(); ++it) {
    if (it->delta >= 0) {
      it->node->RemoveUsage(it->fr, it->delta);
    } else {
      it->node->AddUsage(it->fr, -it->delta);
    }
  }
  log_.clear();
}

}  // namespace tollgate::core
