// ClusterState's MultiKueue objects: MultiKueueConfigs and MultiKueueClusters with the Active
// condition their connections report (core/multikueue_checks.h has the rules).

#include <utility>

#include "absl/strings/str_cat.h"
#include "core/cluster_state.h"
#include "core/multikueue_checks.h"

namespace tollgate::core {

absl::Status ClusterState::ApplyMultiKueueConfig(MultiKueueConfigSpec spec, absl::Time /*now*/) {
  registry_.PutMultiKueueConfig(std::move(spec));
  return absl::OkStatus();
}

absl::Status ClusterState::ApplyMultiKueueCluster(MultiKueueClusterSpec spec, absl::Time /*now*/) {
  registry_.PutMultiKueueCluster(std::move(spec));
  return absl::OkStatus();
}

absl::Status ClusterState::SetMultiKueueClusterActive(absl::string_view name, bool active,
                                                      absl::string_view reason,
                                                      absl::string_view message, absl::Time now) {
  auto it = registry_.multikueue_clusters().find(std::string(name));
  if (it == registry_.multikueue_clusters().end()) {
    return absl::NotFoundError(absl::StrCat("MultiKueueCluster ", name, " not found"));
  }
  Condition condition{"Active", active, std::string(reason), std::string(message), now};
  const std::optional<Condition>& previous = it->second.active;
  if (previous.has_value() && previous->status == active) {
    condition.last_transition_time = previous->last_transition_time;
  }
  registry_.SetMultiKueueClusterActive(std::string(name), std::move(condition));
  return absl::OkStatus();
}

absl::Status ClusterState::RestoreMultiKueueClusterActive(absl::string_view name,
                                                          Condition active) {
  active.type = "Active";
  if (!registry_.SetMultiKueueClusterActive(std::string(name), std::move(active))) {
    return absl::NotFoundError(absl::StrCat("MultiKueueCluster ", name, " not found"));
  }
  return absl::OkStatus();
}

std::optional<CheckActivity> ClusterState::MultiKueueCheckActivityOf(
    absl::string_view check) const {
  const AdmissionCheckRuntime* runtime = registry_.FindAdmissionCheck(check);
  if (runtime == nullptr || runtime->spec.controller_name != kMultiKueueControllerName) {
    return std::nullopt;
  }
  return MultiKueueCheckActivity(runtime->spec, registry_.multikueue_configs(),
                                 registry_.multikueue_clusters());
}

}  // namespace tollgate::core
