#pragma once

// Kueue's ProvisioningRequest admission check (pkg/controller/admissionchecks/provisioning/), the
// deciding part: a ProvisioningRequestConfig read from its JSON, the check's Active condition,
// the names and content of the cluster-autoscaler ProvisioningRequests and PodTemplates, and what
// a request's conditions mean for the check's state. Pure: no I/O, time passed in. The
// controller that reads and writes is provisioning_controller.{h,cc}; docs/admission-checks.md
// has the mapping table.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "services/manifest/json_util.h"
#include "services/manifest/kube_resource.h"
#include "tollgate/v1/objects.pb.h"

namespace tollgate::kube::provisioning {

using Json = manifest::Json;

inline constexpr absl::string_view kControllerName = "kueue.x-k8s.io/provisioning-request";
inline constexpr absl::string_view kConfigGroup = "kueue.x-k8s.io";
inline constexpr absl::string_view kConfigKind = "ProvisioningRequestConfig";
// The pod annotations cluster-autoscaler matches pods to the capacity it booked with.
inline constexpr absl::string_view kConsumeAnnotation =
    "autoscaling.x-k8s.io/consume-provisioning-request";
inline constexpr absl::string_view kClassAnnotation =
    "autoscaling.x-k8s.io/provisioning-class-name";
// A job's annotations with this prefix become the request's parameters (prefix dropped).
inline constexpr absl::string_view kParameterAnnotationPrefix = "provreq.kueue.x-k8s.io/";
inline constexpr absl::string_view kManagedLabel = "kueue.x-k8s.io/managed";
// Which Tollgate workload a request belongs to (Kueue uses an owner reference to its Workload
// object, which Tollgate does not have in the API server).
inline constexpr absl::string_view kWorkloadAnnotation = "tollgate.dev/workload";
inline constexpr absl::string_view kCheckInactiveMessage = "the check is not active";
inline constexpr absl::string_view kNoRequestNeeded = "the provisioning request is not needed";

const manifest::ResourceKind& ProvisioningRequestResource();
const manifest::ResourceKind& PodTemplateResource();
const manifest::ResourceKind& ProvisioningRequestConfigResource();

enum class MergePolicy { kNone, kIdenticalPodTemplates, kIdenticalWorkloadSchedulingRequirements };

// A node selector entry whose value the autoscaler reports in status.provisioningClassDetails.
struct NodeSelectorFromDetail {
  std::string key;
  std::string detail;
};

// kueue.x-k8s.io/v1beta1 ProvisioningRequestConfig's spec, with Kueue's defaults.
struct Config {
  std::string name;
  std::string provisioning_class_name;
  std::map<std::string, std::string> parameters;
  std::vector<std::string> managed_resources;
  int32_t backoff_limit_count = 3;
  int32_t backoff_base_seconds = 60;
  int32_t backoff_max_seconds = 1800;
  bool has_pod_set_updates = false;
  std::vector<NodeSelectorFromDetail> node_selector_updates;
  MergePolicy merge_policy = MergePolicy::kNone;
};
// INVALID_ARGUMENT naming the field for what Kueue's CRD validation refuses.
absl::StatusOr<Config> ParseConfig(const Json& obj);

// The ProvisioningRequestConfig an AdmissionCheck's parameters name; INVALID_ARGUMENT with
// Kueue's messages ("missing parameters reference", "wrong kind ...: bad parameters reference").
absl::StatusOr<std::string> ConfigNameOf(const v1::AdmissionCheckSpec& spec);

// The check's Active condition: True "Active" when its config was found and read, else False
// "BadParametersRef" with the error's message.
struct Activation {
  bool active = false;
  std::string reason;
  std::string message;
  bool operator==(const Activation&) const = default;
};
Activation ActivationFor(const absl::Status& config_status);
// Whether `check`'s Active condition already says `activation`.
bool ActivationIsCurrent(const v1::AdmissionCheck& check, const Activation& activation);

// Names as Kueue's: "<workload>-<check>-<attempt>" and "ppt-<request>-<pod set>", cut to 247
// characters plus "-" and 5 hex digits of the full name's SHA-1 when longer than 252.
std::string LimitObjectName(const std::string& full_name);
std::string RequestName(absl::string_view workload, absl::string_view check, int32_t attempt);
std::string PodTemplateName(absl::string_view request, absl::string_view pod_set);
// The attempt in a request's name when it is one of `workload`'s for `check`.
std::optional<int32_t> AttemptOf(absl::string_view request_name, absl::string_view workload,
                                 absl::string_view check);

// Whether some pod set with pods admitted uses one of the config's managed resources (every pod
// set when there are none). FAILED_PRECONDITION when a pod set has no assignment.
absl::StatusOr<bool> RequestNeeded(const v1::Workload& wl, const Config& config);

// Kueue's retry delay for the next Retry of a check that has `retry_count` retries.
int32_t BackoffSeconds(const Config& config, int32_t retry_count);

// The request and its PodTemplates for one attempt. `pod_templates` are the job's pod templates
// by pod set name, with the flavors' node selectors and tolerations already applied (what the
// pods will run with); `job_annotations` the job's, whose provreq.kueue.x-k8s.io/ ones become
// parameters; `owner` (optional) an ownerReference for the request (the job).
struct RequestObjects {
  Json request;
  std::vector<Json> pod_templates;
};
absl::StatusOr<RequestObjects> BuildRequest(
    const v1::Workload& wl, absl::string_view check, int32_t attempt, const Config& config,
    const std::map<std::string, Json>& pod_templates,
    const std::map<std::string, std::string>& job_annotations, const Json& owner);

// A state to post for a check.
struct CheckUpdate {
  std::string state;
  std::string message;
  std::optional<int32_t> requeue_after_seconds;
  std::vector<v1::PodSetUpdate> pod_set_updates;
};

// What to do for one of the workload's provisioning checks.
struct CheckPlan {
  // The state to post (unset: it already says this).
  std::optional<CheckUpdate> update;
  // The request of this check that stays (Kueue's "active or last"), if any.
  std::optional<std::string> kept_request;
  // Create the request of this attempt (after posting `update`).
  std::optional<int32_t> create_attempt;
};

// `state` is the check's state on `wl` (which holds quota); `config` null when the check has no
// usable config; `requests` the workload's requests in the API server (any check). Kueue's
// syncCheckStates and syncOwnedProvisionRequest for one check.
absl::StatusOr<CheckPlan> PlanCheck(const v1::Workload& wl, const v1::AdmissionCheckState& state,
                                    const Config* config, const std::vector<Json>& requests);

// The requests to delete: every one of the workload's not kept by a plan.
std::vector<std::string> UnusedRequests(const std::vector<Json>& requests,
                                        const std::vector<CheckPlan>& plans);

// Whether posting `update` changes `state`.
bool Changes(const v1::AdmissionCheckState& state, const CheckUpdate& update);

}  // namespace tollgate::kube::provisioning
