// ClusterState's Topology Aware Scheduling transitions: Topology objects, the node inventory,
// pods Tollgate does not place, the queues' TopologyNotFound, and node failures.

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
  } else if (!before.has_value() && after != nullptr && fixed_delay && !after->ready) {
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
  auto failed = [&](const std::string& host, const Workload& wl) {
    auto it = nodes.find(host);
    return PlacementFailedOn(it == nodes.end() ? nullptr : it->second, host, wl,
                             registry_.flavors(), fixed_delay_at);
  };
  std::vector<WorkloadId> affected;
  for (const auto& slot : workloads_.slots()) {
    // Kueue handles every workload whose placement names the node and that is neither finished
    // nor evicted (its node index), so a reservation still waiting for its checks has its
    // failed node replaced too (NeedsSecondPass asks for quota reserved, not admitted).
    if (slot == nullptr || !slot->status.admission.has_value() ||
        (slot->status.state != WorkloadState::kAdmitted &&
         slot->status.state != WorkloadState::kQuotaReserved)) {
      continue;
    }
    // Kueue's SkipReassignmentForPodOwnedWorkloads (on by default): the pod cannot move and the
    // workload ends with it, so a new placement would only differ from where the pod runs. The
    // placement stays and the node is not recorded as unhealthy.
    if (OwnedBySinglePod(*slot)) continue;
    for (const PodSetAssignment& psa : slot->status.admission->pod_sets) {
      if (!psa.topology_assignment.has_value() || psa.topology_assignment->levels.empty() ||
          psa.topology_assignment->levels.back() != kHostnameLabel) {
        continue;
      }
      bool lost = false;
      for (const TopologyDomainAssignment& d : psa.topology_assignment->domains) {
        // Kueue reconciles the node that changed; the workload's other nodes are looked at
        // when they change.
        if (!d.values.empty() && d.values.back() == changed_host && failed(changed_host, *slot)) {
          lost = true;
        }
      }
      if (lost) {
        affected.push_back(slot->id);
        break;
      }
    }
  }
  for (WorkloadId id : affected) {
    Workload& wl = *mutable_workload(id);
    const std::set<std::string> unhealthy = {changed_host};
    wl.status.mutable_history().unhealthy_nodes.assign(unhealthy.begin(), unhealthy.end());
    MarkDirty(id);
    // Kueue's failed-node replacement (fail fast on): the lost pods go elsewhere within the
    // domain the pod set requires, keeping the other domains; without one, the workload is
    // evicted.
    Admission replaced = *wl.status.admission;
    std::string failure;
    const bool topology_only = [&] {
      const ClusterQueueRuntime* cq = cluster_queue(replaced.cluster_queue);
      return cq != nullptr && IsTopologyOnly(cq->spec, topology_);
    }();
    for (PodSetAssignment& psa : replaced.pod_sets) {
      if (!psa.topology_assignment.has_value() || !failure.empty()) continue;
      const PodSetSpec* pod_set = nullptr;
      for (const PodSetSpec& ps : wl.spec.pod_sets) {
        if (ps.name == psa.name) pod_set = &ps;
      }
      std::vector<std::string> flavors;
      for (const auto& [resource, flavor] : psa.flavors) flavors.push_back(flavor);
      TopologyFlavor* tf = nullptr;
      for (const std::string& f : flavors) {
        if (topology_.IsTopologyFlavor(f)) tf = topology_.Flavor(f);
      }
      if (pod_set == nullptr || tf == nullptr) {
        failure = "no topology flavor";
        continue;
      }
      for (const std::string& node : unhealthy) {
        bool holds = false;
        for (const TopologyDomainAssignment& d : psa.topology_assignment->domains) {
          if (!d.values.empty() && d.values.back() == node) holds = true;
        }
        if (!holds) continue;
        const TopologyPlacementRequest r =
            PlacementRequestFor(*pod_set, psa.name, psa.count, topology_only);
        TopologyFlavor::Replacement rep = tf->FindReplacement(r, *psa.topology_assignment, node);
        if (!rep.assignment.has_value()) {
          failure = rep.failure;
          break;
        }
        psa.topology_assignment = std::move(*rep.assignment);
      }
    }
    if (failure.empty()) {
      RemoveUsageOf(wl);
      wl.status.admission = std::move(replaced);
      wl.status.mutable_history().unhealthy_nodes.clear();
      AddUsageOf(wl);
      AddEvent(wl.status, now, "NodeFailureReplaced",
               absl::StrCat("Pods of unhealthy node(s) ", absl::StrJoin(unhealthy, ","),
                            " placed on other nodes"));
      continue;
    }
    StartEviction(wl, now, "NodeFailures",
                  absl::StrCat("Workload was evicted as there was no replacement for unhealthy "
                               "node(s): ",
                               absl::StrJoin(unhealthy, ",")));
  }
  return !affected.empty();
}

}  // namespace tollgate::core
