#include "core/queue_router.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/admission_checks.h"
#include "core/cluster_queue_inactivity.h"

namespace tollgate::core {

Route QueueRouter::RouteOf(const Workload& wl) {
  Route route;
  const LocalQueueRuntime* lq = config_.FindLocalQueue(wl.spec.namespace_name, wl.spec.queue_name);
  if (lq == nullptr) {
    route.blocked_message = absl::StrCat("LocalQueue ", wl.spec.queue_name, " doesn't exist");
    route.blocked_reason = PendingReason::kMisconfigured;
    return route;
  }
  if (lq->spec.stop_policy != StopPolicy::kNone) {
    route.blocked_message = absl::StrCat("LocalQueue ", wl.spec.queue_name, " is inactive");
    route.blocked_reason = PendingReason::kSuspended;
    return route;
  }
  if (config_.IsTerminating(ObjectKind::kNamespace, wl.spec.namespace_name)) {
    route.blocked_message = absl::StrCat("Namespace ", wl.spec.namespace_name, " is terminating");
    // Its LocalQueues go with it: Kueue's "terminating or missing" queue.
    route.blocked_reason = PendingReason::kMisconfigured;
    return route;
  }
  const std::string& cq_name = lq->spec.cluster_queue;
  auto cq = cluster_queues_.find(cq_name);
  if (cq == cluster_queues_.end()) {
    route.blocked_message = absl::StrCat("ClusterQueue ", cq_name, " doesn't exist");
    route.blocked_reason = PendingReason::kMisconfigured;
    return route;
  }
  route.cluster_queue = &cq->second;
  if (!cq->second.active) {
    route.blocked_message = absl::StrCat("ClusterQueue ", cq_name, " is inactive");
    route.blocked_reason = PendingReason::kSuspended;
  }
  return route;
}

void QueueRouter::Rebuild(const QuotaTree& tree) {
  const std::map<std::string, ClusterQueueSpec>& specs = config_.cluster_queue_specs();
  // Keep queues of surviving ClusterQueues; drop the others (their workloads are re-routed).
  for (auto it = cluster_queues_.begin(); it != cluster_queues_.end();) {
    if (specs.count(it->first) == 0) {
      for (WorkloadId id : it->second.queue.InOrder()) queued_in_.erase(id);
      it = cluster_queues_.erase(it);
    } else {
      ++it;
    }
  }
  for (const auto& [name, spec] : specs) {
    ClusterQueueRuntime& cq = cluster_queues_[name];
    cq.spec = spec;
    cq.node = tree.ClusterQueue(name);
    // Validation lets a resource be covered by one group only.
    cq.group_index.clear();
    for (size_t g = 0; g < spec.resource_groups.size(); ++g) {
      for (const std::string& r : spec.resource_groups[g].covered_resources) {
        cq.group_index.emplace_back(r, static_cast<int>(g));
      }
    }
    std::sort(cq.group_index.begin(), cq.group_index.end());
    cq.covers_pods = cq.GroupOf("pods") >= 0;
    cq.topology_only_generation = -1;
    BumpAllocatableGeneration(cq);
    cq.holding.Clear();
  }
  by_name_.clear();
  by_node_.clear();
  in_order_.clear();
  for (auto& [name, cq] : cluster_queues_) {
    in_order_.push_back(&cq);
    by_name_[name] = &cq;
    if (cq.node != nullptr) by_node_[cq.node] = &cq;
  }
}

void QueueRouter::RecomputeActivity(const QuotaTree& tree) {
  for (auto& [name, cq] : cluster_queues_) {
    cq.inactive_reason.clear();
    cq.inactive_message.clear();
    // Terminating wins whatever else holds, as Kueue keeps that status.
    if (config_.IsTerminating(ObjectKind::kClusterQueue, cq.spec.name)) {
      cq.inactive_reason = "Terminating";
      cq.inactive_message = "Can't admit new workloads; clusterQueue is terminating";
    } else if (tree.InCycle(name)) {
      cq.inactive_reason = "CohortCycle";
    } else {
      // Kueue's order of causes; ClusterState adds missing topologies after these.
      if (cq.spec.stop_policy != StopPolicy::kNone) AddInactiveCause(cq, "Stopped", "is stopped");
      std::vector<absl::string_view> missing_flavors;
      for (const ResourceGroupSpec& group : cq.spec.resource_groups) {
        for (const FlavorQuotasSpec& f : group.flavors) {
          if (!config_.HasFlavor(f.flavor)) missing_flavors.push_back(f.flavor);
        }
      }
      if (!missing_flavors.empty()) {
        AddInactiveCause(cq, "FlavorNotFound",
                         absl::StrCat("references missing ResourceFlavor(s): ",
                                      absl::StrJoin(missing_flavors, ",")));
      }
      ApplyCheckActivity(cq);
    }
    cq.active = cq.inactive_reason.empty();
    if (cq.node != nullptr) cq.node->SetActive(cq.active);
  }
}

void QueueRouter::ApplyCheckActivity(ClusterQueueRuntime& cq) const {
  if (cq.spec.admission_checks.empty()) return;
  const CheckInactivity checks = ClusterQueueCheckInactivity(cq.spec, config_.admission_checks());
  for (size_t i = 0; i < checks.reasons.size(); ++i) {
    AddInactiveCause(cq, checks.reasons[i], checks.messages[i]);
  }
}

void QueueRouter::Unqueue(WorkloadId id) {
  auto it = queued_in_.find(id);
  if (it == queued_in_.end()) return;
  ClusterQueueRuntime* cq = it->second;
  if (cq->queue.sticky() == id) cq->queue.SetSticky(std::nullopt);
  if (cq->queue.preemptor() == id) cq->queue.SetPreemptor(std::nullopt);
  cq->queue.Remove(id);
  queued_in_.erase(it);
}

}  // namespace tollgate::core
