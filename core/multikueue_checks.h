#pragma once

// MultiKueue's configuration objects as ClusterState holds them, and Kueue's rule for the Active
// condition of a MultiKueue AdmissionCheck (Kueue's multikueue ACReconciler): what its
// MultiKueueConfig and that config's MultiKueueClusters say about whether the check can
// dispatch. The ClusterQueue-side rules (one MultiKueue check per queue, for every flavor, not
// with a ProvisioningRequest check) are ClusterQueueCheckInactivity's (core/admission_checks.h).
// docs/multicluster.md describes the whole state machine.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "core/types.h"
#include "core/workload.h"

namespace tollgate::core {

// The group and kind an AdmissionCheck's parameters name for a MultiKueue check.
inline constexpr absl::string_view kMultiKueueConfigGroup = "kueue.x-k8s.io";
inline constexpr absl::string_view kMultiKueueConfigKind = "MultiKueueConfig";
// Kueue's limits on MultiKueueConfig.spec.clusters.
inline constexpr int kMaxMultiKueueConfigClusters = 20;

// A MultiKueueCluster as ClusterState holds it: the spec as applied and the Active condition
// its connection last reported (unset until the first report: the cluster counts as inactive).
struct MultiKueueClusterRuntime {
  MultiKueueClusterSpec spec;
  std::optional<Condition> active;
  bool IsActive() const { return active.has_value() && active->status; }
  bool operator==(const MultiKueueClusterRuntime&) const = default;
};

// Kueue's reasons on a MultiKueueCluster's Active condition, as its connection reports them.
inline constexpr absl::string_view kClusterActiveReason = "Active";
inline constexpr absl::string_view kClusterBadKubeConfigReason = "BadKubeConfig";
inline constexpr absl::string_view kClusterInsecureKubeConfigReason = "InsecureKubeConfig";
inline constexpr absl::string_view kClusterClientConnectionFailedReason = "ClientConnectionFailed";

// The Active condition a MultiKueue AdmissionCheck should carry (Kueue's ACReconciler):
//  - True "Active" when every cluster of its config is present and active;
//  - True "SomeActiveClusters" when some but not all are (it still dispatches to the others);
//  - False "NoUsableClusters" when none is;
//  - False "BadConfig" when its parameters do not name a MultiKueueConfig that exists.
// The message lists the missing and the inactive clusters in config order. The transition time
// is left unset: ClusterState::SetAdmissionCheckActive keeps it while the status holds.
struct CheckActivity {
  bool active = false;
  std::string reason;
  std::string message;
  bool operator==(const CheckActivity&) const = default;
};
CheckActivity MultiKueueCheckActivity(
    const AdmissionCheckSpec& check, const std::map<std::string, MultiKueueConfigSpec>& configs,
    const std::map<std::string, MultiKueueClusterRuntime>& clusters);

// The MultiKueueConfig a check's parameters name, or an error text saying why none (Kueue's
// "Cannot load the AdmissionChecks parameters: ..." cause).
struct ConfigLookup {
  const MultiKueueConfigSpec* config = nullptr;
  std::string error;
};
ConfigLookup FindMultiKueueConfig(const AdmissionCheckSpec& check,
                                  const std::map<std::string, MultiKueueConfigSpec>& configs);

}  // namespace tollgate::core
