#pragma once

// Kueue's `Configuration` (config.kueue.x-k8s.io/v1beta1 and v1beta2), read as Kueue reads it:
// one parser and one type for tollgated (`--config`), tollgate-kube (`--config`), a scenario's
// `config:` block and `tollgate simulate --config`, so the same text means the same thing
// everywhere (docs/configuration.md).
//
// Every field of Kueue's Configuration falls in one of three groups:
//   - read: the scheduler's fields (fairSharing, admissionFairSharing, waitForPodsReady,
//     resources.excludeResourcePrefixes, resources.transformations,
//     resources.quotaCheckStrategy, objectRetentionPolicies.workloads.afterFinished, featureGates
//     that change them) and the adapter's (manageJobsWithoutQueueName, integrations.frameworks
//     and labelKeysToCopy, managedJobsNamespaceSelector,
//     objectRetentionPolicies.workloads.afterDeactivatedByKueue) and tollgate-multikueue's
//     (multiKueue);
//   - ignored with a warning: fields that configure the Kubernetes controller process and have
//     no meaning outside it (leaderElection, webhook, metrics, health, clientConnection, ...);
//   - refused: features Tollgate does not implement, when set (deviceClassMappings,
//     multiKueue.externalFrameworks, ...). An unknown field is refused
//     too, naming it.
// Errors are INVALID_ARGUMENT and name the file, the field path and the value.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/multikueue_dispatcher.h"
#include "core/scheduler_config.h"
#include "core/types.h"
#include "services/manifest/yaml_reader.h"
#include "yaml-cpp/yaml.h"

namespace tollgate::manifest {

inline constexpr absl::string_view kConfigV1beta1 = "config.kueue.x-k8s.io/v1beta1";
inline constexpr absl::string_view kConfigV1beta2 = "config.kueue.x-k8s.io/v1beta2";

// What tollgate-kube reads. Kueue's defaults.
struct AdapterConfiguration {
  bool manage_jobs_without_queue_name = false;
  // Kueue's framework names ("batch/job", "ray.io/rayjob", ...), as written.
  std::vector<std::string> frameworks = {"batch/job"};
  // managedJobsNamespaceSelector; absent = Kueue's default (every namespace but kube-system and
  // the controller's own).
  bool has_managed_jobs_namespace_selector = false;
  core::LabelSelector managed_jobs_namespace_selector;
  // integrations.labelKeysToCopy: the job's labels under these keys go onto the workload made
  // for it, when it is made (Kueue's NewWorkload).
  std::vector<std::string> label_keys_to_copy;
  // objectRetentionPolicies.workloads.afterDeactivatedByKueue: a job whose workload Kueue
  // deactivated (Evicted with a DeactivatedDueTo... reason, not a user's active: false) is
  // deleted this long after that eviction (zero: at once). Unset keeps it.
  std::optional<absl::Duration> after_deactivated_by_kueue;
};

// One parsed Configuration: the effective values, Kueue's defaults filled in.
struct KueueConfiguration {
  // The apiVersion it was read as; a scenario's `config:` without one reads as v1beta1.
  std::string api_version = std::string(kConfigV1beta1);
  // Where it came from ("tollgated.yaml", "scenario foo.yaml"); "" for the built-in defaults.
  std::string source;
  core::SchedulerConfig scheduler;
  AdapterConfiguration adapter;
  // The multiKueue section (tollgate-multikueue's), Kueue's defaults filled in.
  core::MultiKueueSettings multi_kueue;
  // featureGates as written.
  std::map<std::string, bool> feature_gates;
  // One line per field that was read but has no effect in Tollgate, each naming the field and
  // why ("leaderElection: configures the Kubernetes controller; no effect in Tollgate").
  std::vector<std::string> warnings;
};

// A Configuration document. `file_name` labels messages and becomes `source`.
absl::StatusOr<KueueConfiguration> ParseKueueConfigurationText(absl::string_view text,
                                                               absl::string_view file_name);
absl::StatusOr<KueueConfiguration> ParseKueueConfigurationFile(const std::string& path);

// The map of a Configuration already loaded (a scenario's `config:`). Field paths in messages
// start with `path` ("config"). apiVersion and kind are optional here; without apiVersion the
// map reads as v1beta1, whose `enable` flags the scenario format has always used.
absl::StatusOr<KueueConfiguration> ParseKueueConfigurationNode(const manifest::Where& where,
                                                               const YAML::Node& node,
                                                               absl::string_view path);

// The rule for a `--fair-sharing` flag next to a Configuration (tollgated, simulate): unset
// changes nothing; true enables fair sharing (with the file's strategies, or Kueue's default
// ones); false where the configuration enables it is refused as a conflict naming both.
absl::Status ApplyFairSharingFlag(std::optional<bool> flag, KueueConfiguration& config);

// The effective configuration as a Kueue v1beta2 Configuration document in JSON, defaults
// filled in, holding the fields Tollgate reads (for `tollgate get config`). Fields of the
// scheduler Kueue has no name for (evictions-need-ack, eviction grace) are under
// `tollgate` next to the source and the warnings.
std::string EffectiveConfigurationJson(const KueueConfiguration& config);

}  // namespace tollgate::manifest
