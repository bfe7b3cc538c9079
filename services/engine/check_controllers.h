#pragma once

// Which admission check controllers a workload concerns (WatchEvent.check_controllers,
// docs/admission-checks.md): those of its checks' AdmissionChecks, with whether the workload
// holds quota for them (reserved or admitted; for the MultiKueue controller also while it
// evicts, until its job stops and the quota is released). The change that ends a controller's
// concern (an eviction, a finish, a deletion, the check dropped) must still reach that controller,
// so the tracker remembers, per workload, whom it concerned at its last commit.

#include <map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/cluster_state.h"
#include "tollgate/v1/objects.pb.h"
#include "tollgate/v1/service.pb.h"

namespace tollgate::engine {

// AdmissionCheck name -> its controllerName.
using CheckControllerNames = std::map<std::string, std::string>;
CheckControllerNames ControllerNamesOf(const core::ClusterState& state);

// The controllers a stored workload's checks belong to, each with its checks on the workload,
// sorted by controller name; holds_quota when the workload is reserved or admitted, or, for
// kueue.x-k8s.io/multikueue alone, evicting (Kueue's MultiKueue controller deactivates the
// remote copy then, and removes it once the quota is gone). Checks of
// AdmissionChecks that do not exist belong to no one.
std::vector<v1::CheckControllerRef> CheckControllersOf(const v1::Workload& wl,
                                                       const CheckControllerNames& controllers);

// Tracks, per workload ("ns/name"), the controllers whose concern it was at its last commit.
// Executor thread only.
class CheckControllerTracker {
 public:
  // Forgets everything and learns what the workloads of a freshly loaded state concern.
  void Reset(const core::ClusterState& state);
  // Whether Changed can return anything for the workload: it carries checks, or some workload
  // concerned a controller at its last commit. False for every workload of a cluster without
  // admission checks, which then pays nothing.
  bool MayConcern(const v1::Workload& wl) const {
    return wl.status().admission_checks_size() > 0 || !concerned_.empty();
  }
  // The entries of a changed workload's change record: every controller it concerns now, and
  // (holds_quota false) those it concerned at its last commit and no longer does.
  std::vector<v1::CheckControllerRef> Changed(const v1::Workload& wl,
                                              const CheckControllerNames& controllers);
  // The entries of a deleted workload's change record: the controllers it concerned, with
  // holds_quota false.
  std::vector<v1::CheckControllerRef> Deleted(const std::string& key);

 private:
  absl::flat_hash_map<std::string, std::vector<std::string>> concerned_;
};

}  // namespace tollgate::engine
