// ClusterState's Topology Aware Scheduling transitions: Topology objects, the node inventory,
// pods Tollgate does not place, the queues' TopologyNotFound, and node failures.

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/cluster_queue_inactivity.h"
#include "core/cluster_state.h"
#include "core/node_failure_rule.h"
#include "core/topology_scheduling.h"
#include "core/topology_validation.h"

namespace tollgate::core {
namespace {

// The hostname a placement names the node with.
std::string HostnameOf(const NodeSpec& node) {
  auto it = node.labels.find(kHostnameLabel);
  return it == node.labels.end() ? node.name : it->second;
}

// The inventory's nodes by the hostname a placement names them with.
std::map<std::string, const NodeSpec*> NodesByHostname(const TopologyInventory& inventory) {
  std::map<std::string, const NodeSpec*> out;
  for (const auto& [name, node] : inventory.nodes()) out[HostnameOf(node)] = &node;
  return out;
}

// Kueue's OwnedBySinglePod: the workload of one Pod (a bare pod, a Deployment's replica), not
// a pod group's, which may receive replacement pods.
bool OwnedBySinglePod(const Workload& wl) {
  if (!wl.owner.has_value() || wl.owner->api_version != "v1" || wl.owner->kind != "Pod") {
    return false;
  }
  if (wl.spec.metadata.has_value()) {
    const Labels& annotations = wl.spec.metadata->annotations;
    auto group = annotations.find("kueue.x-k8s.io/is-group-workload");
    if (group != annotations.end() && group->second == "true") return false;
  }
  return true;
}

}  // namespace

absl::Status ClusterState::CheckTopology(const TopologySpec& spec) const {
  if (absl::Status s = ValidateTopology(spec); !s.ok()) return s;
  if (const TopologySpec* existing = topology_.FindTopology(spec.name);
      existing != nullptr && existing->levels != spec.levels &&
      !(existing->levels.back() == kHostnameLabel && spec.levels.back() == kHostnameLabel)) {
    // Kueue's schema: levels change only with the hostname lowest before and after.
    return absl::InvalidArgumentError(
        "spec.levels: levels are mutable only when kubernetes.io/hostname is the lowest level both "
        "before and after the change");
  }
  return absl::OkStatus();
}

absl::Status ClusterState::ApplyTopology(TopologySpec spec, absl::Time now) {
  if (absl::Status s = CheckTopology(spec); !s.ok()) return s;
  topology_.ApplyTopology(std::move(spec));
  RecomputeActivity();
  RerouteAllPending(now);
  RequeueAllInadmissible(now);
  return absl::OkStatus();
}

absl::Status ClusterState::DeleteTopology(absl::string_view name, absl::Time now) {
  if (absl::Status s = topology_.DeleteTopology(name); !s.ok()) return s;
  RecomputeActivity();
  RerouteAllPending(now);
  return absl::OkStatus();
}

absl::Status ClusterState::UpsertNode(NodeSpec node, absl::Time now) {
  const std::string name = node.name;
  std::optional<NodeSpec> before;
  if (const NodeSpec* n = topology_.FindNode(name); n != nullptr) before = *n;
  // A feeder that does not know when the node went not ready: since this update, or since the
  // time kept from before when it already was.
  if (node.ready) {
    node.not_ready_since.reset();
  } else if (!node.not_ready_since.has_value()) {
    node.not_ready_since = before.has_value() && !before->ready && before->not_ready_since
                               ? *before->not_ready_since
                               : now;
  }
  if (absl::Status s = topology_.UpsertNode(std::move(node)); !s.ok()) return s;
  const NodeSpec* after = topology_.FindNode(name);
  const bool fixed_delay = config_.replace_node_not_ready_over_fixed_time;
  // Whether a workload waits for a replacement of `host`: every such workload is in the
  // second-pass set (HandleNodeFailures puts it there, a restore too).
  auto recorded_as_unhealthy = [this](const std::string& host) {
    return std::any_of(delayed_topology_.begin(), delayed_topology_.end(), [&](WorkloadId id) {
      const Workload* wl = workload(id);
      if (wl == nullptr) return false;
      const std::vector<std::string>& unhealthy = wl->status.history().unhealthy_nodes;
      return std::find(unhealthy.begin(), unhealthy.end(), host) != unhealthy.end();
    });
  };
  // What the node failure rule reads changed: a placement there may fail now (the node went not
  // ready, or got a taint or was cordoned), or once a workload's last pods there end. With the
  // fixed delay, also a node first seen not ready (Kueue reconciles a created node).
  if (before.has_value() && after != nullptr &&
      (before->ready != after->ready || before->taints != after->taints ||
       before->unschedulable != after->unschedulable ||
       before->running_workloads != after->running_workloads ||
       HostnameOf(*before) != HostnameOf(*after) ||
       (fixed_delay && before->not_ready_since != after->not_ready_since))) {
    if (HostnameOf(*before) != HostnameOf(*after)) HandleNodeFailures(HostnameOf(*before), now);
    HandleNodeFailures(HostnameOf(*after), now);
  } else if (!before.has_value() && after != nullptr &&
             ((fixed_delay && !after->ready) || recorded_as_unhealthy(HostnameOf(*after)))) {
    // Kueue reconciles a created node: with the fixed delay a node first seen not ready starts
    // its count, and a node created again under the hostname of a recorded failure is healthy
    // again (or fails again). Only placements on a deleted node can name a new one, so other
    // creations (an inventory's first feed) look at no workload.
    HandleNodeFailures(HostnameOf(*after), now);
  }
  // Kueue requeues the node for the delay's remaining time. Armed even when it has run out, so a
  // restore that brings the node back before the workloads placed on it still fails them.
  if (fixed_delay && after != nullptr) {
    if (std::optional<absl::Time> ends = NodeFailureDelayEnds(*after)) {
      node_timers_.Arm(*ends, name);
    }
  }
  RequeueAllInadmissible(now);
  return absl::OkStatus();
}

absl::Status ClusterState::DeleteNode(absl::string_view name, absl::Time now) {
  std::string host;
  if (const NodeSpec* n = topology_.FindNode(name); n != nullptr) host = HostnameOf(*n);
  if (absl::Status s = topology_.DeleteNode(name); !s.ok()) return s;
  HandleNodeFailures(host, now);
  RequeueAllInadmissible(now);
  return absl::OkStatus();
}

absl::Status ClusterState::ReportPod(std::string pod, std::string node, ResourceAmounts requests,
                                     absl::Time now) {
  absl::StatusOr<bool> freed =
      topology_.ReportPod(std::move(pod), std::move(node), std::move(requests));
  if (!freed.ok()) return freed.status();
  // A pod that moved or shrank may leave room for parked workloads, as one that ended does
  // (Kueue's #13764 with #8709).
  if (*freed) RequeueAllInadmissible(now);
  return absl::OkStatus();
}

absl::Status ClusterState::RemovePod(absl::string_view pod, absl::Time now) {
  if (absl::Status s = topology_.RemovePod(pod); !s.ok()) return s;
  RequeueAllInadmissible(now);
  return absl::OkStatus();
}

void ClusterState::RecomputeActivity() {
  router_.RecomputeActivity(tree_);
  for (const auto& [name, runtime] : router_.runtimes()) {
    ClusterQueueRuntime* cq = mutable_cluster_queue(name);
    if (cq->inactive_reason == "Terminating" || cq->inactive_reason == "CohortCycle") continue;
    for (const ResourceGroupSpec& group : cq->spec.resource_groups) {
      for (const FlavorQuotasSpec& f : group.flavors) {
        auto flavor = registry_.flavors().find(f.flavor);
        if (flavor == registry_.flavors().end() || flavor->second.topology_name.empty()) continue;
        if (topology_.FindTopology(flavor->second.topology_name) != nullptr) continue;
        AddInactiveCause(*cq, "TopologyNotFound",
                         absl::StrCat("there is no Topology \"", flavor->second.topology_name,
                                      "\" for TAS flavor \"", f.flavor, "\""));
      }
    }
    cq->active = cq->inactive_reason.empty();
    if (cq->node != nullptr) cq->node->SetActive(cq->active);
  }
}

bool ClusterState::FireNodeFailureDelays(absl::Time now) {
  bool changed = false;
  while (std::optional<std::pair<absl::Time, std::string>> due = node_timers_.PopDue(now)) {
    const NodeSpec* node = topology_.FindNode(due->second);
    if (!config_.replace_node_not_ready_over_fixed_time || node == nullptr) continue;
    // Stale when the node was ready again since, or went not ready again later.
    const std::optional<absl::Time> ends = NodeFailureDelayEnds(*node);
    if (!ends.has_value() || *ends > now) continue;
    changed = HandleNodeFailures(HostnameOf(*node), now) || changed;
  }
  return changed;
}

bool ClusterState::HandleNodeFailures(const std::string& changed_host, absl::Time now) {
  const std::map<std::string, const NodeSpec*> nodes = NodesByHostname(topology_);
  std::optional<absl::Time> fixed_delay_at;
  if (config_.replace_node_not_ready_over_fixed_time) fixed_delay_at = now;
  auto node_of = [&](const std::string& host) -> const NodeSpec* {
    auto it = nodes.find(host);
    return it == nodes.end() ? nullptr : it->second;
  };
  std::vector<WorkloadId> failed;
  std::vector<WorkloadId> healthy;
  for (const auto& slot : workloads_.slots()) {
    // Kueue's node controller looks at every workload whose placement names the node and that
    // is neither finished nor evicted (its node index): a reservation still waiting for its
    // checks too.
    if (slot == nullptr || !slot->status.admission.has_value() ||
        (slot->status.state != WorkloadState::kAdmitted &&
         slot->status.state != WorkloadState::kQuotaReserved)) {
      continue;
    }
    // Kueue's SkipReassignmentForPodOwnedWorkloads (on by default): the pod cannot move and the
    // workload ends with it, so a new placement would only differ from where the pod runs. The
    // placement stays and the node is not recorded as unhealthy.
    if (OwnedBySinglePod(*slot)) continue;
    const bool placed_there = std::any_of(
        slot->status.admission->pod_sets.begin(), slot->status.admission->pod_sets.end(),
        [&](const PodSetAssignment& psa) {
          if (!psa.topology_assignment.has_value() || psa.topology_assignment->levels.empty() ||
              psa.topology_assignment->levels.back() != kHostnameLabel) {
            return false;
          }
          return std::any_of(psa.topology_assignment->domains.begin(),
                             psa.topology_assignment->domains.end(),
                             [&](const TopologyDomainAssignment& d) {
                               return !d.values.empty() && d.values.back() == changed_host;
                             });
        });
    // Kueue reconciles the node that changed; the workload's other nodes are looked at when
    // they change.
    if (!placed_there) continue;
    if (PlacementFailedOn(node_of(changed_host), changed_host, *slot, registry_.flavors(),
                          fixed_delay_at)) {
      failed.push_back(slot->id);
    } else {
      healthy.push_back(slot->id);
    }
  }
  bool changed = false;
  for (WorkloadId id : failed) {
    Workload& wl = *mutable_workload(id);
    std::vector<std::string>& unhealthy = wl.status.mutable_history().unhealthy_nodes;
    if (std::find(unhealthy.begin(), unhealthy.end(), changed_host) != unhealthy.end()) continue;
    changed = true;
    if (!unhealthy.empty()) {
      // Kueue's evictWorkloadIfNeeded: a second failed node while the first still waits for its
      // replacement evicts the workload; the message names the recorded nodes, then this one.
      std::vector<std::string> all = unhealthy;
      all.push_back(changed_host);
      StartEviction(wl, now, "NodeFailures",
                    absl::StrCat(kMultipleNodeFailuresMessage, absl::StrJoin(all, ", ")));
      continue;
    }
    // Kueue's addUnhealthyNode: the scheduler replaces the lost pods in its next cycle
    // (PlanCycle), once the workload is admitted (a reservation waits for its checks first).
    unhealthy.push_back(changed_host);
    delayed_topology_.insert(id);
    second_pass_retries_.erase(id);
    MarkDirty(id);
  }
  for (WorkloadId id : healthy) {
    // Kueue's removeUnhealthyNodes: a node that is healthy again (ready, untainted, or created
    // again) before the scheduler replaced it is no longer waited on.
    Workload& wl = *mutable_workload(id);
    std::vector<std::string>& unhealthy = wl.status.mutable_history().unhealthy_nodes;
    auto it = std::find(unhealthy.begin(), unhealthy.end(), changed_host);
    if (it == unhealthy.end()) continue;
    unhealthy.erase(it);
    MarkDirty(id);
    changed = true;
  }
  return changed;
}

}  // namespace tollgate::core
