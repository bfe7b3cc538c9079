#pragma once

// What tollgate-kube feeds Tollgate's node inventory (docs/topology.md): Kubernetes Nodes as
// inventory nodes, and the pods Tollgate does not place as usage on their nodes (Kueue's
// pkg/controller/tas node and pod-usage controllers). Pure; no I/O.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "services/manifest/json_util.h"
#include "tollgate/v1/inventory.pb.h"

namespace tollgate::kube {

// A core/v1 Node as an inventory node: name, labels, taints, unschedulable, allocatable, and
// ready when its Ready condition is True (a node without one is not ready, as Kueue reads it).
// INVALID_ARGUMENT for a node without a name.
absl::StatusOr<v1::Node> NodeFromKube(const manifest::Json& node);

// Pods placed by topology-aware scheduling, by the workload they name
// (kueue.x-k8s.io/workload): namespace -> workload -> pod name -> pod.
using WorkloadPods =
    std::map<std::string, std::map<std::string, std::map<std::string, manifest::Json>>>;

// Whether the inventory needs the node's running workloads: its Ready condition is not True, or
// it is ready with a NoSchedule or NoExecute taint. Tollgate fails a placement on such a node
// only once the workload's pods there are gone (Kueue's TASReplaceNodeOnPodTermination and
// TASReplaceNodeOnNodeTaints wait for them; core/node_failure_rule.h decides which taints a
// workload does not tolerate). A node without a Ready condition, or deleted, fails at once.
bool NeedsRunningWorkloads(const manifest::Json& node);

// Kueue's TASReplaceNodeOnPodTermination (hasProgressingPods): the workloads ("namespace/name",
// sorted) with a placed pod still progressing on `node`: bound to it (spec.nodeName), not
// Succeeded or Failed, not being deleted. A pod released onto the node but never bound does not
// count: it cannot start there, and tollgate-kube marks it Failed (pod_termination.h).
std::vector<std::string> RunningWorkloadsOn(const v1::Node& node, const WorkloadPods& pods);

// The pod's key in the inventory's reported pods: "namespace/name".
std::string ReportedPodName(const manifest::Json& pod);

// A pod that takes capacity Tollgate does not account for (Kueue's belongsToNonTASCache):
// bound to a node, not Succeeded or Failed, and not placed by topology-aware scheduling; with
// its effective requests. nullopt for any other pod, and for one whose requests cannot be
// read (it is then not counted, as Kueue skips a pod it cannot parse).
std::optional<v1::NodePod> ReportedPodFromKube(const manifest::Json& pod);

}  // namespace tollgate::kube
