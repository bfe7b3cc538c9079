#pragma once

#include "core/object_kind.h"

namespace tollgate::core {

// What deleting a configuration object does while workloads still depend on it. Kueue puts its
// resource-in-use finalizer on ClusterQueues, ResourceFlavors, AdmissionChecks and Topologies
// (among the kinds Tollgate serves) and on nothing else; docs/api.md "Deleting objects" has the
// reasons.
enum class DeletionRule {
  // Erased at once. What was admitted through it keeps running and keeps its quota; pending
  // workloads that need it wait until it exists again (Cohort, LocalQueue, priority classes,
  // the policy kinds, MultiKueueConfig and MultiKueueCluster).
  kAtOnce,
  // Kept and marked terminating while workloads hold quota through it: it admits nothing new,
  // keeps accounting for what runs, and goes with its last such workload (ClusterQueue, as
  // Kueue's finalizer; Namespace, as Kubernetes keeps a namespace until its objects are gone).
  kTerminatesWhileInUse,
  // Kept and marked terminating while something names it, erased when the last one stops
  // naming it: an AdmissionCheck while a ClusterQueue names it, a Topology while a
  // ResourceFlavor names it in spec.topologyName (Kueue's finalizers on both). A terminating
  // Topology still places pods, as Kueue's cache keeps it until the finalizer goes.
  kTerminatesWhileNamed,
  // Refused while a ClusterQueue or Cohort names it (ResourceFlavor). Kueue keeps it
  // terminating instead (its resource-in-use finalizer), a documented deviation.
  kRefusedWhileNamed,
};

DeletionRule DeletionRuleOf(ObjectKind kind);

// Whether a deletion of this kind can leave the object terminating (stored so, restored so).
bool CanTerminate(ObjectKind kind);

}  // namespace tollgate::core
