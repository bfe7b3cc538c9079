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

// The node reports a Ready condition that is not True. Only such a node waits for its
// workloads' pods before its placements fail (Kueue fails a node without the condition, or
// deleted, at once).
bool ReportsNotReady(const manifest::Json& node);

// Kueue's TASReplaceNodeOnPodTermination: the workloads ("namespace/name", sorted) with a placed
// pod still progressing on `node` (bound to it, or sent to it by its hostname node selector; not
// Succeeded or Failed, not being deleted).
std::vector<std::string> RunningWorkloadsOn(const v1::Node& node, const WorkloadPods& pods);

// The pod's key in the inventory's reported pods: "namespace/name".
std::string ReportedPodName(const manifest::Json& pod);

// A pod that takes capacity Tollgate does not account for (Kueue's belongsToNonTASCache):
// bound to a node, not Succeeded or Failed, and not placed by topology-aware scheduling; with
// its effective requests. nullopt for any other pod, and for one whose requests cannot be
// read (it is then not counted, as Kueue skips a pod it cannot parse).
std::optional<v1::NodePod> ReportedPodFromKube(const manifest::Json& pod);

}  // namespace tollgate::kube
