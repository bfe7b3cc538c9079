#include "core/usage_simulation.h"

namespace tollgate::core {

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
}

void UsageSimulation::AddWorkloadBack(const Workload& wl) {
  if (!wl.status.admission.has_value()) return;
  ClusterQueueRuntime* cq = state_.mutable_cluster_queue(wl.status.admission->cluster_queue);
  if (cq == nullptr || cq->node == nullptr) return;
  for (const auto& [fr, value] : wl.quota_usage) Apply(*cq->node, fr, value);
}

void UsageSimulation::AddUsage(QuotaNode& node, const std::map<FrId, int64_t>& usage) {
  for (const auto& [fr, value] : usage) Apply(node, fr, value);
}

void UsageSimulation::RemoveUsage(QuotaNode& node, const std::map<FrId, int64_t>& usage) {
  for (const auto& [fr, value] : usage) Apply(node, fr, -value);
}

void UsageSimulation::Restore() {
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
