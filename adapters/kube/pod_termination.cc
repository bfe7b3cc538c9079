#include "adapters/kube/pod_termination.h"

#include <algorithm>

#include "core/node_failure_rule.h"
#include "services/manifest/topology_annotations.h"
#include "services/manifest/topology_enactment.h"

namespace tollgate::kube {
namespace {

using manifest::Find;
using manifest::GetString;
using manifest::Json;

std::string HostnameOf(const core::NodeSpec& node) {
  auto it = node.labels.find(core::kHostnameLabel);
  return it == node.labels.end() ? node.name : it->second;
}

// Kueue's HasTASAssignmentOnNode.
bool PlacedOn(const core::Workload& wl, const std::string& host) {
  if (!wl.status.admission.has_value()) return false;
  for (const core::PodSetAssignment& psa : wl.status.admission->pod_sets) {
    if (!psa.topology_assignment.has_value() || psa.topology_assignment->levels.empty() ||
        psa.topology_assignment->levels.back() != core::kHostnameLabel) {
      continue;
    }
    for (const core::TopologyDomainAssignment& d : psa.topology_assignment->domains) {
      if (!d.values.empty() && d.values.back() == host) return true;
    }
  }
  return false;
}

bool HasSchedulingTaint(const core::NodeSpec& node) {
  return node.unschedulable ||
         std::any_of(node.taints.begin(), node.taints.end(), [](const core::Taint& taint) {
           return taint.effect == "NoSchedule" || taint.effect == "NoExecute";
         });
}

bool HasTopologyGate(const Json& pod) {
  const Json* gates = Find(pod, {"spec", "schedulingGates"});
  if (gates == nullptr || !gates->is_array()) return false;
  return std::any_of(gates->begin(), gates->end(), [](const Json& gate) {
    return GetString(gate, {"name"}) == manifest::kTopologySchedulingGate;
  });
}

}  // namespace

std::optional<std::string> ReleasedUnboundHost(const Json& pod) {
  if (!manifest::IsTopologyPod(pod) ||
      GetString(pod, {"metadata", "annotations", manifest::kWorkloadAnnotation}).empty() ||
      !GetString(pod, {"spec", "nodeName"}).empty() ||
      GetString(pod, {"status", "phase"}) != "Pending" || HasTopologyGate(pod)) {
    return std::nullopt;
  }
  const std::string host = GetString(pod, {"spec", "nodeSelector", core::kHostnameLabel});
  if (host.empty()) return std::nullopt;
  return host;
}

bool NeedsFlavors(const core::NodeSpec& node, const core::Workload& wl) {
  return node.ready && HasSchedulingTaint(node) && PlacedOn(wl, HostnameOf(node));
}

bool FailsUnboundPodsOn(const core::NodeSpec& node, const core::Workload& wl,
                        const std::map<std::string, core::ResourceFlavorSpec>& flavors) {
  // Kueue skips finished and evicted workloads (Evicted stays True until quota is reserved
  // again): their pods are the job's to stop.
  if (wl.status.state == core::WorkloadState::kFinished) return false;
  if (const core::Condition* evicted = core::FindCondition(wl.status, "Evicted");
      evicted != nullptr && evicted->status) {
    return false;
  }
  const std::string host = HostnameOf(node);
  if (!PlacedOn(wl, host)) return true;
  // The rule of the placement, without its wait for the pods that run there.
  core::NodeSpec without_running = node;
  without_running.running_workloads.clear();
  return core::PlacementFailedOn(&without_running, host, wl, flavors);
}

Json TerminationStatusPatch(const Json& pod, absl::Time now) {
  Json conditions = Json::array();
  if (const Json* existing = Find(pod, {"status", "conditions"});
      existing != nullptr && existing->is_array()) {
    conditions = *existing;
  }
  conditions.push_back(
      {{"type", kTerminatedByKueueCondition},
       {"status", "True"},
       {"reason", kTerminatedByKueueReason},
       {"message", kTerminatedByKueueMessage},
       {"lastTransitionTime", absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", now, absl::UTCTimeZone())}});
  return {{"metadata", {{"resourceVersion", GetString(pod, {"metadata", "resourceVersion"})}}},
          {"status", {{"phase", "Failed"}, {"conditions", std::move(conditions)}}}};
}

}  // namespace tollgate::kube
