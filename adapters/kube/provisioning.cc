#include "adapters/kube/provisioning.h"

#include <openssl/sha.h>

#include <algorithm>
#include <optional>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/quantity.h"

namespace tollgate::kube::provisioning {
namespace {

constexpr size_t kHashLength = 5;
// The longest object name (253) less the "-" and the hash.
constexpr size_t kMaxPrefixLength = 252 - kHashLength;
constexpr absl::string_view kPodTemplatePrefix = "ppt";

absl::StatusOr<int32_t> NonNegativeInt(const Json& retry, absl::string_view field,
                                       int32_t fallback) {
  const Json* value = manifest::Find(retry, {field});
  if (value == nullptr || value->is_null()) return fallback;
  if (!value->is_number_integer() || value->get<int64_t>() < 0 ||
      value->get<int64_t>() > INT32_MAX) {
    return absl::InvalidArgumentError(absl::StrCat("spec.retryStrategy.", field,
                                                   ": must be a non-negative integer, got ",
                                                   manifest::Dump(*value)));
  }
  return static_cast<int32_t>(value->get<int64_t>());
}

bool IsTrue(const Json& request, absl::string_view type) {
  return manifest::HasTrueCondition(request, type);
}

std::string ConditionMessage(const Json& request, absl::string_view type) {
  const Json* condition = manifest::FindCondition(request, type);
  return condition == nullptr ? "" : manifest::GetString(*condition, {"message"});
}

const v1::PodSetAssignment* AssignmentOf(const v1::Workload& wl, absl::string_view pod_set) {
  for (const v1::PodSetAssignment& a : wl.status().admission().pod_set_assignments()) {
    if (a.name() == pod_set) return &a;
  }
  return nullptr;
}

bool Uses(const v1::PodSet& pod_set, const std::vector<std::string>& resources) {
  if (resources.empty()) return true;
  for (const std::string& r : resources) {
    if (pod_set.requests().contains(r)) return true;
  }
  return false;
}

// Kueue's requiredPodSets: pod sets with pods that use a managed resource.
std::vector<const v1::PodSet*> RequiredPodSets(const v1::Workload& wl, const Config& config) {
  std::vector<const v1::PodSet*> out;
  for (const v1::PodSet& ps : wl.spec().pod_sets()) {
    if (ps.count() > 0 && Uses(ps, config.managed_resources)) out.push_back(&ps);
  }
  return out;
}

int32_t AdmittedCount(const v1::PodSet& ps, const v1::PodSetAssignment& assignment) {
  // An assignment without a count (an older record) admits the pod set's count.
  return assignment.count() > 0 || ps.count() == 0 ? assignment.count() : ps.count();
}

Json FieldOrNull(const Json& obj, std::initializer_list<absl::string_view> path) {
  const Json* value = manifest::Find(obj, path);
  return value == nullptr ? Json(nullptr) : *value;
}

// A quantity as the API server would have read it: a JSON string, or a bare number written
// without quotes.
std::optional<core::Quantity> QuantityOf(const Json& value) {
  if (!value.is_string() && !value.is_number()) return std::nullopt;
  absl::StatusOr<core::Quantity> parsed =
      core::Quantity::Parse(value.is_string() ? value.get<std::string>() : value.dump());
  if (!parsed.ok()) return std::nullopt;
  return *std::move(parsed);
}

// resource.Quantity's Cmp == 0: "1" and "1000m", or "1Gi" and "1073741824", are one value.
// Quantities that do not parse (the API server would have refused them) compare as written.
bool SameQuantity(const Json& a, const Json& b) {
  const std::optional<core::Quantity> qa = QuantityOf(a);
  const std::optional<core::Quantity> qb = QuantityOf(b);
  if (!qa.has_value() || !qb.has_value()) return a == b;
  // Quantity has no comparison of its own; the exact difference is zero only for equal values.
  const core::Quantity minus_one =
      core::Quantity::FromValue(-1, core::Quantity::Format::kDecimalSI);
  return qa->Plus(qb->Times(minus_one)).IsZero();
}

// The fields of a pod template whose values are resource lists (name -> quantity): container
// requests and limits, and the pod's overhead.
bool IsResourceListField(absl::string_view key) {
  return key == "requests" || key == "limits" || key == "overhead";
}

// The fields whose value is a single quantity (an emptyDir's sizeLimit).
bool IsQuantityField(absl::string_view key) { return key == "sizeLimit"; }

bool SemanticallyEqual(const Json& a, const Json& b);

// Two resource lists with the same resources in equal amounts. A missing list equals an empty
// one, as a nil and an empty ResourceList do for equality.Semantic.
bool SameResourceList(const Json& a, const Json& b) {
  if (!(a.is_object() || a.is_null()) || !(b.is_object() || b.is_null())) {
    return SemanticallyEqual(a, b);
  }
  const size_t na = a.is_object() ? a.size() : 0;
  const size_t nb = b.is_object() ? b.size() : 0;
  if (na != nb) return false;
  if (na == 0) return true;
  for (const auto& [resource, amount] : a.items()) {
    auto other = b.find(resource);
    if (other == b.end() || !SameQuantity(amount, *other)) return false;
  }
  return true;
}

// Kueue's equality.Semantic.DeepEqual on pod template JSON: the structure must match, and
// quantities compare by value (Semantic's equality for resource.Quantity is Cmp == 0), not as
// spelled.
bool SemanticallyEqual(const Json& a, const Json& b) {
  if (a.is_array() && b.is_array()) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (!SemanticallyEqual(a[i], b[i])) return false;
    }
    return true;
  }
  if (!a.is_object() || !b.is_object()) return a == b;
  for (const auto& [key, value] : a.items()) {
    if (IsResourceListField(key)) continue;  // compared below, where a missing list is empty
    auto other = b.find(key);
    if (other == b.end()) return false;
    if (IsQuantityField(key) ? !SameQuantity(value, *other) : !SemanticallyEqual(value, *other)) {
      return false;
    }
  }
  for (const auto& [key, value] : b.items()) {
    if (!IsResourceListField(key) && !a.contains(key)) return false;
  }
  for (absl::string_view key : {"requests", "limits", "overhead"}) {
    const std::string field(key);
    if (!a.contains(field) && !b.contains(field)) continue;
    if (!SameResourceList(FieldOrNull(a, {key}), FieldOrNull(b, {key}))) return false;
  }
  return true;
}

bool ContainersRequestAlike(const Json& a, const Json& b, absl::string_view field) {
  const Json ca = FieldOrNull(a, {"spec", field});
  const Json cb = FieldOrNull(b, {"spec", field});
  const size_t na = ca.is_array() ? ca.size() : 0;
  const size_t nb = cb.is_array() ? cb.size() : 0;
  if (na != nb) return false;
  for (size_t i = 0; i < na; ++i) {
    if (!SameResourceList(FieldOrNull(ca[i], {"resources", "requests"}),
                          FieldOrNull(cb[i], {"resources", "requests"}))) {
      return false;
    }
  }
  return true;
}

// Kueue's canMergePodSets on the pod templates.
bool CanMerge(const Json& a, const Json& b, MergePolicy policy) {
  switch (policy) {
    case MergePolicy::kIdenticalPodTemplates:
      return SemanticallyEqual(a, b);
    case MergePolicy::kIdenticalWorkloadSchedulingRequirements:
      if (!ContainersRequestAlike(a, b, "containers") ||
          !ContainersRequestAlike(a, b, "initContainers")) {
        return false;
      }
      for (absl::string_view field :
           {"resources", "nodeSelector", "tolerations", "affinity", "resourceClaims"}) {
        if (!SemanticallyEqual(FieldOrNull(a, {"spec", field}), FieldOrNull(b, {"spec", field}))) {
          return false;
        }
      }
      return true;
    case MergePolicy::kNone:
      return false;
  }
  return false;
}

// Kueue's UseLimitsAsMissingRequestsInPod.
void LimitsAsMissingRequests(Json& pod_template) {
  for (absl::string_view list : {"containers", "initContainers"}) {
    Json* containers = pod_template.contains("spec") && pod_template["spec"].contains(list)
                           ? &pod_template["spec"][std::string(list)]
                           : nullptr;
    if (containers == nullptr || !containers->is_array()) continue;
    for (Json& container : *containers) {
      const Json* limits = manifest::Find(container, {"resources", "limits"});
      if (limits == nullptr || !limits->is_object()) continue;
      const Json limits_copy = *limits;
      Json& requests = manifest::Ensure(container, {"resources", "requests"});
      for (const auto& [resource, quantity] : limits_copy.items()) {
        if (!requests.contains(resource)) requests[resource] = quantity;
      }
    }
  }
}

// A request that no longer matches its config (class or parameters changed) is replaced.
bool SyncedWithConfig(const Json& request, const Config& config) {
  if (manifest::GetString(request, {"spec", "provisioningClassName"}) !=
      config.provisioning_class_name) {
    return false;
  }
  for (const auto& [key, value] : config.parameters) {
    if (manifest::GetString(request, {"spec", "parameters", key}) != value) return false;
    if (manifest::Find(request, {"spec", "parameters", key}) == nullptr) return false;
  }
  return true;
}

// Kueue's podSetUpdates: the two annotations on each pod set of the request, plus the config's
// node selector from the class details the autoscaler reported.
std::vector<v1::PodSetUpdate> ReadyUpdates(const v1::Workload& wl, const Json& request,
                                           const Config& config) {
  const std::string request_name = manifest::GetString(request, {"metadata", "name"});
  std::map<std::string, std::string> pod_set_of_template;
  for (const v1::PodSet& ps : wl.spec().pod_sets()) {
    pod_set_of_template[PodTemplateName(request_name, ps.name())] = ps.name();
  }
  std::vector<v1::PodSetUpdate> updates;
  const Json* pod_sets = manifest::Find(request, {"spec", "podSets"});
  if (pod_sets == nullptr || !pod_sets->is_array()) return updates;
  for (const Json& ps : *pod_sets) {
    v1::PodSetUpdate update;
    update.set_name(pod_set_of_template[manifest::GetString(ps, {"podTemplateRef", "name"})]);
    (*update.mutable_annotations())[std::string(kConsumeAnnotation)] = request_name;
    (*update.mutable_annotations())[std::string(kClassAnnotation)] =
        manifest::GetString(request, {"spec", "provisioningClassName"});
    for (const NodeSelectorFromDetail& entry : config.node_selector_updates) {
      const Json* value =
          manifest::Find(request, {"status", "provisioningClassDetails", entry.detail});
      // A detail the autoscaler did not report is skipped, as Kueue does.
      if (value == nullptr || !value->is_string()) continue;
      (*update.mutable_node_selector())[entry.key] = value->get<std::string>();
    }
    updates.push_back(std::move(update));
  }
  return updates;
}

bool SameUpdates(const google::protobuf::RepeatedPtrField<v1::PodSetUpdate>& a,
                 const std::vector<v1::PodSetUpdate>& b) {
  if (static_cast<size_t>(a.size()) != b.size()) return false;
  for (size_t i = 0; i < b.size(); ++i) {
    if (a[static_cast<int>(i)].SerializeAsString() != b[i].SerializeAsString()) return false;
  }
  return true;
}

}  // namespace

const manifest::ResourceKind& ProvisioningRequestResource() {
  static const manifest::ResourceKind* kind = new manifest::ResourceKind{
      "autoscaling.x-k8s.io", "v1", "provisioningrequests", "ProvisioningRequest", true};
  return *kind;
}
const manifest::ResourceKind& PodTemplateResource() {
  static const manifest::ResourceKind* kind =
      new manifest::ResourceKind{"", "v1", "podtemplates", "PodTemplate", true};
  return *kind;
}
const manifest::ResourceKind& ProvisioningRequestConfigResource() {
  static const manifest::ResourceKind* kind =
      new manifest::ResourceKind{"kueue.x-k8s.io", "v1beta1", "provisioningrequestconfigs",
                                 "ProvisioningRequestConfig", false};
  return *kind;
}

absl::StatusOr<Config> ParseConfig(const Json& obj) {
  Config config;
  config.name = manifest::GetString(obj, {"metadata", "name"});
  const Json spec = FieldOrNull(obj, {"spec"});
  if (!spec.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat("ProvisioningRequestConfig ", config.name, ": spec is required"));
  }
  config.provisioning_class_name = manifest::GetString(spec, {"provisioningClassName"});
  if (config.provisioning_class_name.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("ProvisioningRequestConfig ", config.name,
                                                   ": spec.provisioningClassName is required"));
  }
  if (const Json* params = manifest::Find(spec, {"parameters"});
      params != nullptr && !params->is_null()) {
    if (!params->is_object()) {
      return absl::InvalidArgumentError("spec.parameters: must be a map of strings");
    }
    for (const auto& [key, value] : params->items()) {
      if (!value.is_string()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "spec.parameters.", key, ": must be a string, got ", manifest::Dump(value)));
      }
      config.parameters[key] = value.get<std::string>();
    }
  }
  if (const Json* managed = manifest::Find(spec, {"managedResources"});
      managed != nullptr && managed->is_array()) {
    for (const Json& r : *managed) {
      if (r.is_string()) config.managed_resources.push_back(r.get<std::string>());
    }
  }
  const Json retry = FieldOrNull(spec, {"retryStrategy"});
  if (retry.is_object()) {
    absl::StatusOr<int32_t> limit = NonNegativeInt(retry, "backoffLimitCount", 3);
    absl::StatusOr<int32_t> base = NonNegativeInt(retry, "backoffBaseSeconds", 60);
    absl::StatusOr<int32_t> max = NonNegativeInt(retry, "backoffMaxSeconds", 1800);
    for (const absl::StatusOr<int32_t>* v : {&limit, &base, &max}) {
      if (!v->ok()) return v->status();
    }
    config.backoff_limit_count = *limit;
    config.backoff_base_seconds = *base;
    config.backoff_max_seconds = *max;
  }
  if (const Json* updates = manifest::Find(spec, {"podSetUpdates"});
      updates != nullptr && updates->is_object()) {
    config.has_pod_set_updates = true;
    if (const Json* selectors = manifest::Find(*updates, {"nodeSelector"});
        selectors != nullptr && selectors->is_array()) {
      for (const Json& s : *selectors) {
        NodeSelectorFromDetail entry{manifest::GetString(s, {"key"}),
                                     manifest::GetString(s, {"valueFromProvisioningClassDetail"})};
        if (entry.key.empty() || entry.detail.empty()) {
          return absl::InvalidArgumentError(
              "spec.podSetUpdates.nodeSelector[]: key and valueFromProvisioningClassDetail are "
              "required");
        }
        config.node_selector_updates.push_back(std::move(entry));
      }
    }
  }
  const std::string policy = manifest::GetString(spec, {"podSetMergePolicy"});
  if (policy == "IdenticalPodTemplates") {
    config.merge_policy = MergePolicy::kIdenticalPodTemplates;
  } else if (policy == "IdenticalWorkloadSchedulingRequirements") {
    config.merge_policy = MergePolicy::kIdenticalWorkloadSchedulingRequirements;
  } else if (!policy.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("spec.podSetMergePolicy: \"", policy,
                     "\" is not IdenticalPodTemplates or IdenticalWorkloadSchedulingRequirements"));
  }
  return config;
}

absl::StatusOr<std::string> ConfigNameOf(const v1::AdmissionCheckSpec& spec) {
  if (!spec.has_parameters()) return absl::InvalidArgumentError("missing parameters reference");
  const v1::AdmissionCheckParametersReference& ref = spec.parameters();
  if (ref.name().empty()) {
    return absl::InvalidArgumentError("empty name: bad parameters reference");
  }
  if (ref.api_group() != kConfigGroup) {
    return absl::InvalidArgumentError(absl::StrCat("wrong group \"", ref.api_group(),
                                                   "\", expecting \"", kConfigGroup,
                                                   "\": bad parameters reference"));
  }
  if (ref.kind() != kConfigKind) {
    return absl::InvalidArgumentError(absl::StrCat("wrong kind \"", ref.kind(), "\", expecting \"",
                                                   kConfigKind, "\": bad parameters reference"));
  }
  return ref.name();
}

Activation ActivationFor(const absl::Status& config_status) {
  if (config_status.ok()) return {true, "Active", "The admission check is active"};
  return {false, "BadParametersRef", std::string(config_status.message())};
}

bool ActivationIsCurrent(const v1::AdmissionCheck& check, const Activation& activation) {
  for (const v1::Condition& c : check.status().conditions()) {
    if (c.type() != "Active") continue;
    return c.status() == (activation.active ? "True" : "False") &&
           c.reason() == activation.reason && c.message() == activation.message;
  }
  return false;
}

std::string LimitObjectName(const std::string& full_name) {
  if (full_name.size() <= kMaxPrefixLength) return full_name;
  unsigned char digest[SHA_DIGEST_LENGTH];
  SHA1(reinterpret_cast<const unsigned char*>(full_name.data()), full_name.size(), digest);
  std::string hex;
  for (unsigned char byte : digest) absl::StrAppendFormat(&hex, "%02x", byte);
  return absl::StrCat(full_name.substr(0, kMaxPrefixLength), "-", hex.substr(0, kHashLength));
}

std::string RequestName(absl::string_view workload, absl::string_view check, int32_t attempt) {
  return LimitObjectName(absl::StrCat(workload, "-", check, "-", attempt));
}

std::string PodTemplateName(absl::string_view request, absl::string_view pod_set) {
  return LimitObjectName(absl::StrCat(kPodTemplatePrefix, "-", request, "-", pod_set));
}

std::optional<int32_t> AttemptOf(absl::string_view request_name, absl::string_view workload,
                                 absl::string_view check) {
  const std::string prefix = LimitObjectName(absl::StrCat(workload, "-", check, "-"));
  if (!absl::StartsWith(request_name, prefix)) return std::nullopt;
  absl::string_view digits = request_name.substr(prefix.size());
  if (digits.empty() ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return absl::ascii_isdigit(c); })) {
    return std::nullopt;
  }
  int32_t attempt = 0;
  if (!absl::SimpleAtoi(digits, &attempt)) return std::nullopt;
  return attempt;
}

absl::StatusOr<bool> RequestNeeded(const v1::Workload& wl, const Config& config) {
  for (const v1::PodSet* ps : RequiredPodSets(wl, config)) {
    const v1::PodSetAssignment* assignment = AssignmentOf(wl, ps->name());
    if (assignment == nullptr) {
      return absl::FailedPreconditionError(absl::StrCat(
          "inconsistent podSet assignments: missing assignment for PodSet \"", ps->name(), "\""));
    }
    if (AdmittedCount(*ps, *assignment) > 0) return true;
  }
  return false;
}

int32_t BackoffSeconds(const Config& config, int32_t retry_count) {
  // base * 2^retry_count, capped (Kueue's wait.Backoff with factor 2 and a negligible jitter).
  int64_t seconds = config.backoff_base_seconds;
  for (int32_t i = 0; i < retry_count && seconds < config.backoff_max_seconds; ++i) seconds *= 2;
  return static_cast<int32_t>(std::min<int64_t>(seconds, config.backoff_max_seconds));
}

absl::StatusOr<RequestObjects> BuildRequest(
    const v1::Workload& wl, absl::string_view check, int32_t attempt, const Config& config,
    const std::map<std::string, Json>& pod_templates,
    const std::map<std::string, std::string>& job_annotations, const Json& owner) {
  const std::string ns = wl.metadata().namespace_();
  const std::string name = RequestName(wl.metadata().name(), check, attempt);
  struct Merged {
    std::string name;
    const Json* pod_template;
    int32_t count;
  };
  std::vector<Merged> merged;
  for (const v1::PodSet* ps : RequiredPodSets(wl, config)) {
    const v1::PodSetAssignment* assignment = AssignmentOf(wl, ps->name());
    if (assignment == nullptr) {
      return absl::FailedPreconditionError(absl::StrCat(
          "inconsistent podSet assignments: missing assignment for PodSet \"", ps->name(), "\""));
    }
    const int32_t count = AdmittedCount(*ps, *assignment);
    if (count <= 0) continue;
    auto found = pod_templates.find(ps->name());
    if (found == pod_templates.end()) {
      return absl::FailedPreconditionError(
          absl::StrCat("the job of workload ", ns, "/", wl.metadata().name(),
                       " has no pod template for pod set \"", ps->name(), "\""));
    }
    bool joined = false;
    for (Merged& m : merged) {
      if (CanMerge(*m.pod_template, found->second, config.merge_policy)) {
        m.count += count;
        joined = true;
        break;
      }
    }
    if (!joined) merged.push_back({ps->name(), &found->second, count});
  }

  const Json labels = {{std::string(kManagedLabel), "true"}};
  const Json annotations = {{std::string(kWorkloadAnnotation), wl.metadata().name()}};
  RequestObjects out;
  Json parameters = Json::object();
  for (const auto& [key, value] : config.parameters) parameters[key] = value;
  for (const auto& [key, value] : job_annotations) {
    if (absl::StartsWith(key, kParameterAnnotationPrefix)) {
      parameters[key.substr(kParameterAnnotationPrefix.size())] = value;
    }
  }
  Json pod_sets = Json::array();
  for (const Merged& m : merged) {
    const std::string template_name = PodTemplateName(name, m.name);
    Json pod_template = *m.pod_template;
    LimitsAsMissingRequests(pod_template);
    out.pod_templates.push_back({{"apiVersion", "v1"},
                                 {"kind", "PodTemplate"},
                                 {"metadata",
                                  {{"name", template_name},
                                   {"namespace", ns},
                                   {"labels", labels},
                                   {"annotations", annotations}}},
                                 {"template", pod_template}});
    pod_sets.push_back({{"podTemplateRef", {{"name", template_name}}}, {"count", m.count}});
  }
  Json metadata = {
      {"name", name}, {"namespace", ns}, {"labels", labels}, {"annotations", annotations}};
  if (!owner.is_null()) metadata["ownerReferences"] = Json::array({owner});
  out.request = {{"apiVersion", ProvisioningRequestResource().ApiVersion()},
                 {"kind", "ProvisioningRequest"},
                 {"metadata", metadata},
                 {"spec",
                  {{"provisioningClassName", config.provisioning_class_name},
                   {"parameters", parameters},
                   {"podSets", pod_sets}}}};
  return out;
}

bool Changes(const v1::AdmissionCheckState& state, const CheckUpdate& update) {
  if (state.state() != update.state || state.message() != update.message) return true;
  if (update.requeue_after_seconds.has_value() &&
      (!state.has_requeue_after_seconds() ||
       state.requeue_after_seconds() != *update.requeue_after_seconds)) {
    return true;
  }
  return update.state == "Ready" && !SameUpdates(state.pod_set_updates(), update.pod_set_updates);
}

absl::StatusOr<CheckPlan> PlanCheck(const v1::Workload& wl, const v1::AdmissionCheckState& state,
                                    const Config* config, const std::vector<Json>& requests) {
  CheckPlan plan;
  CheckUpdate next{state.state(),
                   state.message(),
                   std::nullopt,
                   {state.pod_set_updates().begin(), state.pod_set_updates().end()}};
  auto finish = [&]() -> CheckPlan {
    if (Changes(state, next)) plan.update = next;
    return plan;
  };
  if (config == nullptr) {
    next.state = "Pending";
    next.message = std::string(kCheckInactiveMessage);
    return finish();
  }
  absl::StatusOr<bool> needed = RequestNeeded(wl, *config);
  if (!needed.ok()) return needed.status();
  if (!*needed) {
    if (state.state() != "Ready") {
      next = {"Ready", std::string(kNoRequestNeeded), std::nullopt, {}};
    }
    return finish();
  }

  const std::string& wl_name = wl.metadata().name();
  const Json* last = nullptr;
  int32_t last_attempt = 0;
  for (const Json& request : requests) {
    std::optional<int32_t> attempt =
        AttemptOf(manifest::GetString(request, {"metadata", "name"}), wl_name, state.name());
    if (!attempt.has_value() || !SyncedWithConfig(request, *config)) continue;
    if (last == nullptr || *attempt > last_attempt) {
      last = &request;
      last_attempt = *attempt;
    }
  }
  const bool admitted = wl.status().state() == v1::WORKLOAD_STATE_ADMITTED;
  const bool active = !wl.spec().has_active() || wl.spec().active();
  const bool finished = wl.status().state() == v1::WORKLOAD_STATE_FINISHED;
  const int32_t retries = state.has_retry_count() ? state.retry_count() : 0;
  // A failed (or expired) attempt within the limit asks for a retry once; beyond it, rejects.
  auto retry_or_reject = [&](absl::string_view condition, absl::string_view prefix) {
    const std::string message = ConditionMessage(*last, condition);
    if (last_attempt <= config->backoff_limit_count) {
      next.message = absl::StrCat(prefix, message);
      // An attempt already counted (the retry the eviction recorded) asks for nothing more.
      if (last_attempt > retries) {
        next.state = "Retry";
        next.requeue_after_seconds = BackoffSeconds(*config, retries);
      }
    } else {
      next.state = "Rejected";
      next.message = message;
    }
  };
  if (last != nullptr) {
    plan.kept_request = manifest::GetString(*last, {"metadata", "name"});
    if (IsTrue(*last, "Failed")) {
      retry_or_reject("Failed", "Retrying after failure: ");
    } else if (IsTrue(*last, "CapacityRevoked")) {
      // Rejecting deactivates the workload: its replacement pods would wait forever for nodes
      // the autoscaler has taken away.
      if (active && !finished) {
        next.state = "Rejected";
        next.message = ConditionMessage(*last, "CapacityRevoked");
      }
    } else if (IsTrue(*last, "BookingExpired")) {
      // Once admitted, the pods hold the capacity; an expired booking no longer matters.
      if (!admitted) retry_or_reject("BookingExpired", "Retrying after booking expired: ");
    } else if (IsTrue(*last, "Provisioned")) {
      if (state.state() != "Ready") {
        next.state = "Ready";
        next.pod_set_updates = ReadyUpdates(wl, *last, *config);
        next.message = ConditionMessage(*last, "Provisioned");
      }
    } else if (IsTrue(*last, "Accepted")) {
      // The autoscaler's estimate travels in the Provisioned condition's message.
      if (manifest::FindCondition(*last, "Provisioned") != nullptr) {
        next.state = "Pending";
        next.message = ConditionMessage(*last, "Provisioned");
      }
    } else {
      next.state = "Pending";
      next.message = "";
    }
  }

  if (next.state == "Ready") return finish();
  int32_t attempt = retries + 1;
  bool create = last == nullptr;
  if (last != nullptr && next.state == "Pending" &&
      (IsTrue(*last, "Failed") || (IsTrue(*last, "BookingExpired") && !admitted))) {
    attempt = last_attempt + 1;
    create = true;
  }
  if (create) plan.create_attempt = attempt;
  return finish();
}

std::vector<std::string> UnusedRequests(const std::vector<Json>& requests,
                                        const std::vector<CheckPlan>& plans) {
  std::set<std::string> kept;
  for (const CheckPlan& plan : plans) {
    if (plan.kept_request.has_value()) kept.insert(*plan.kept_request);
  }
  std::vector<std::string> unused;
  for (const Json& request : requests) {
    std::string name = manifest::GetString(request, {"metadata", "name"});
    if (!kept.contains(name)) unused.push_back(std::move(name));
  }
  std::sort(unused.begin(), unused.end());
  return unused;
}

}  // namespace tollgate::kube::provisioning
