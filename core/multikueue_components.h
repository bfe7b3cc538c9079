#pragma once

// Kueue's rule for a job that makes several workloads at once (MultiKueueMultiWorkloadAdapter,
// used by the LeaderWorkerSet: one workload per replica group): the component workloads of one
// object must all run on one worker. Nothing is nominated until every component workload the
// object makes exists; the primary (the lowest component index) is nominated as any workload;
// the others wait for it and then follow the cluster a component was admitted on. Pure: the
// caller lists the components as the manager holds them. docs/multicluster.md, "LeaderWorkerSet".

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace tollgate::core {

// The annotations a component workload carries: its index among its object's workloads
// (Kueue's), and how many workloads the object makes (Tollgate's: Kueue reads the object).
inline constexpr absl::string_view kComponentWorkloadIndexAnnotation =
    "kueue.x-k8s.io/component-workload-index";
inline constexpr absl::string_view kComponentWorkloadCountAnnotation =
    "tollgate.dev/component-workload-count";

struct ComponentWorkload {
  std::string name;
  // The component index; negative when the workload has none or it cannot be read.
  int index = -1;
  // status.clusterName: the worker that admitted it; empty while none has.
  std::string cluster_name;
};

enum class ComponentStep {
  // The primary, with every component present and none admitted anywhere: nominate as usual.
  kNominate,
  // Not every component workload exists yet.
  kWaitForComponents,
  // Not the primary, and no component was admitted anywhere yet.
  kWaitForPrimary,
  // Another component was admitted on `cluster`: nominate only that one.
  kFollow,
  // Other components were admitted on different clusters: nothing is nominated.
  kConflict,
};

struct ComponentDecision {
  ComponentStep step = ComponentStep::kNominate;
  std::string cluster;
  // Why it waits or refuses, for the log.
  std::string message;
};

// The step for `self` given the other components of its object (`others`, without `self`) and
// how many the object makes (`expected`; zero or less: unknown, not waited for).
ComponentDecision DecideComponentDispatch(const ComponentWorkload& self,
                                          const std::vector<ComponentWorkload>& others,
                                          int expected);

// The component index an annotation value names; -1 when it is not a non-negative integer.
int ComponentIndexOf(absl::string_view value);

}  // namespace tollgate::core
