#include "services/api/config_codec.h"

#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "core/status_macros.h"
#include "core/workload.h"
#include "services/api/api_limits.h"
#include "services/api/api_validation.h"
#include "services/api/quota_codec.h"
#include "services/api/selector_codec.h"

namespace tollgate::api {
namespace {

using codec::CheckMaxItems;
using codec::CheckObjectSize;
using codec::CheckOneOf;
using codec::EnumName;
using codec::EnumValue;
using codec::FairSharingToProto;
using codec::FairWeightFromProto;
using codec::LabelSelectorFromProto;
using codec::LabelsFromProto;
using codec::LabelsToProto;
using codec::NameRule;
using codec::ParseEnum;
using codec::QuotaRules;
using codec::Quote;
using codec::Reporter;
using codec::ResourceGroupsFromProto;
using codec::ResourceGroupsToProto;
using codec::TaintsFromProto;
using codec::TimeFromProto;
using codec::TimeToProto;
using codec::TolerationsFromProto;
using codec::TolerationsToProto;
using codec::ValidateAnnotations;
using codec::ValidateMetadata;
using codec::ValidateName;

constexpr EnumValue<core::QueueingStrategy> kQueueingStrategies[] = {
    {"BestEffortFIFO", core::QueueingStrategy::kBestEffortFifo},
    {"StrictFIFO", core::QueueingStrategy::kStrictFifo},
};
constexpr EnumValue<core::PreemptionPolicy> kWithinClusterQueuePolicies[] = {
    {"Never", core::PreemptionPolicy::kNever},
    {"LowerPriority", core::PreemptionPolicy::kLowerPriority},
    {"LowerOrNewerEqualPriority", core::PreemptionPolicy::kLowerOrNewerEqualPriority},
};
constexpr EnumValue<core::PreemptionPolicy> kReclaimWithinCohortPolicies[] = {
    {"Never", core::PreemptionPolicy::kNever},
    {"LowerPriority", core::PreemptionPolicy::kLowerPriority},
    {"Any", core::PreemptionPolicy::kAny},
};
constexpr EnumValue<core::BorrowWithinCohortPolicy> kBorrowWithinCohortPolicies[] = {
    {"Never", core::BorrowWithinCohortPolicy::kNever},
    {"LowerPriority", core::BorrowWithinCohortPolicy::kLowerPriority},
};
// Kueue v1beta2 renamed Borrow and Preempt to MayStopSearch; manifests carry either spelling.
constexpr EnumValue<core::WhenCanBorrow> kWhenCanBorrow[] = {
    {"Borrow", core::WhenCanBorrow::kBorrow},
    {"TryNextFlavor", core::WhenCanBorrow::kTryNextFlavor},
    {"MayStopSearch", core::WhenCanBorrow::kBorrow},
};
constexpr EnumValue<core::WhenCanPreempt> kWhenCanPreempt[] = {
    {"TryNextFlavor", core::WhenCanPreempt::kTryNextFlavor},
    {"Preempt", core::WhenCanPreempt::kPreempt},
    {"MayStopSearch", core::WhenCanPreempt::kPreempt},
};
constexpr EnumValue<core::FungibilityPreference> kFungibilityPreferences[] = {
    {"BorrowingOverPreemption", core::FungibilityPreference::kBorrowingOverPreemption},
    {"PreemptionOverBorrowing", core::FungibilityPreference::kPreemptionOverBorrowing},
};
constexpr EnumValue<core::StopPolicy> kStopPolicies[] = {
    {"None", core::StopPolicy::kNone},
    {"Hold", core::StopPolicy::kHold},
    {"HoldAndDrain", core::StopPolicy::kHoldAndDrain},
};
constexpr EnumValue<core::AdmissionMode> kAdmissionModes[] = {
    {"UsageBasedAdmissionFairSharing", core::AdmissionMode::kUsageBasedFairSharing},
    {"NoAdmissionFairSharing", core::AdmissionMode::kNoFairSharing},
};

// Kueue's patterns for an AdmissionCheck's parameters reference.
bool IsDnsLabelLike(absl::string_view value, bool kind) {
  if (value.empty() || value.size() > 63) return false;
  auto lower_alnum = [kind](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (kind && c >= 'A' && c <= 'Z');
  };
  // A kind starts with a letter; a name with a letter or digit.
  const char first = value.front();
  if (kind ? !((first >= 'a' && first <= 'z') || (first >= 'A' && first <= 'Z'))
           : !lower_alnum(first)) {
    return false;
  }
  if (!lower_alnum(value.back())) return false;
  for (char c : value) {
    if (!lower_alnum(c) && c != '-') return false;
  }
  return true;
}

// spec.admissionChecks (v1beta1) or spec.admissionChecksStrategy, as the core's rules: at most
// one entry per check, onFlavors naming flavors of the queue's resource groups (Kueue's
// webhook), not both fields (Kueue's v1beta1 schema).
absl::StatusOr<std::vector<core::AdmissionCheckStrategyRule>> AdmissionChecksFromProto(
    const Reporter& r, const v1::ClusterQueueSpec& s,
    const std::vector<core::ResourceGroupSpec>& groups) {
  std::vector<core::AdmissionCheckStrategyRule> out;
  const bool has_strategy = s.has_admission_checks_strategy() &&
                            s.admission_checks_strategy().admission_checks_size() > 0;
  if (s.admission_checks_size() > 0 && has_strategy) {
    return r.Invalid("spec.admissionChecksStrategy",
                     "cannot be used along with spec.admissionChecks: give one of them");
  }
  std::set<std::string> flavors;
  for (const core::ResourceGroupSpec& g : groups) {
    for (const core::FlavorQuotasSpec& f : g.flavors) flavors.insert(f.flavor);
  }
  std::set<std::string> seen;
  TOLLGATE_RETURN_IF_ERROR(
      CheckMaxItems(r, "spec.admissionChecks", s.admission_checks_size(), kMaxAdmissionChecks));
  for (int i = 0; i < s.admission_checks_size(); ++i) {
    const std::string& name = s.admission_checks(i);
    const std::string path = absl::StrCat("spec.admissionChecks[", i, "]");
    TOLLGATE_RETURN_IF_ERROR(ValidateName(r, path, name, /*label=*/false));
    if (!seen.insert(name).second)
      return r.Invalid(path, absl::StrCat(Quote(name), " is named twice"));
    out.push_back({name, {}});
  }
  const google::protobuf::RepeatedPtrField<v1::AdmissionCheckStrategyRule>& rules =
      s.admission_checks_strategy().admission_checks();
  TOLLGATE_RETURN_IF_ERROR(CheckMaxItems(r, "spec.admissionChecksStrategy.admissionChecks",
                                         rules.size(), kMaxAdmissionChecks));
  for (int i = 0; i < rules.size(); ++i) {
    const v1::AdmissionCheckStrategyRule& rule = rules[i];
    const std::string path = absl::StrCat("spec.admissionChecksStrategy.admissionChecks[", i, "]");
    TOLLGATE_RETURN_IF_ERROR(ValidateName(r, path + ".name", rule.name(), /*label=*/false));
    if (!seen.insert(rule.name()).second) {
      return r.Invalid(path + ".name", absl::StrCat(Quote(rule.name()), " is named twice"));
    }
    TOLLGATE_RETURN_IF_ERROR(
        CheckMaxItems(r, path + ".onFlavors", rule.on_flavors_size(), kMaxCheckOnFlavors));
    core::AdmissionCheckStrategyRule core_rule{rule.name(), {}};
    std::set<std::string> on;
    for (int j = 0; j < rule.on_flavors_size(); ++j) {
      const std::string& flavor = rule.on_flavors(j);
      const std::string flavor_path = absl::StrCat(path, ".onFlavors[", j, "]");
      if (flavors.count(flavor) == 0) {
        std::vector<std::string> supported;
        for (const std::string& f : flavors) supported.push_back(Quote(f));
        return r.Invalid(flavor_path,
                         absl::StrCat("unsupported value ", Quote(flavor),
                                      ": not a flavor of this queue's resourceGroups; supported "
                                      "values: ",
                                      absl::StrJoin(supported, ", ")));
      }
      if (!on.insert(flavor).second) {
        return r.Invalid(flavor_path, absl::StrCat(Quote(flavor), " is named twice"));
      }
      core_rule.on_flavors.push_back(flavor);
    }
    out.push_back(std::move(core_rule));
  }
  return out;
}

v1::ObjectMeta MetadataToProto(absl::string_view ns, absl::string_view name) {
  v1::ObjectMeta meta;
  meta.set_name(std::string(name));
  meta.set_namespace_(std::string(ns));
  return meta;
}

}  // namespace

// --- API -> core -------------------------------------------------------------------------------

absl::StatusOr<core::NamespaceSpec> NamespaceFromProto(const v1::Namespace& ns) {
  const Reporter r("Namespace", "", ns.metadata().name());
  TOLLGATE_RETURN_IF_ERROR(CheckObjectSize(r, ns.ByteSizeLong()));
  TOLLGATE_RETURN_IF_ERROR(ValidateName(r, "metadata.name", ns.metadata().name(), /*label=*/true));
  core::NamespaceSpec out;
  out.name = ns.metadata().name();
  TOLLGATE_RETURN_IF_ERROR(
      LabelsFromProto(r, "metadata.labels", ns.metadata().labels(), &out.labels));
  TOLLGATE_RETURN_IF_ERROR(
      ValidateAnnotations(r, "metadata.annotations", ns.metadata().annotations()));
  return out;
}

absl::StatusOr<core::ResourceFlavorSpec> ResourceFlavorFromProto(const v1::ResourceFlavor& rf) {
  const Reporter r("ResourceFlavor", "", rf.metadata().name());
  TOLLGATE_RETURN_IF_ERROR(CheckObjectSize(r, rf.ByteSizeLong()));
  TOLLGATE_RETURN_IF_ERROR(
      ValidateMetadata(r, rf.metadata(), NameRule::kDns1123Subdomain, /*namespaced=*/false));
  const v1::ResourceFlavorSpec& s = rf.spec();
  core::ResourceFlavorSpec out;
  out.name = rf.metadata().name();
  TOLLGATE_RETURN_IF_ERROR(
      CheckMaxItems(r, "spec.nodeLabels", s.node_labels_size(), kMaxFlavorNodeLabels, "entries"));
  TOLLGATE_RETURN_IF_ERROR(
      LabelsFromProto(r, "spec.nodeLabels", s.node_labels(), &out.node_labels));
  TOLLGATE_RETURN_IF_ERROR(
      CheckMaxItems(r, "spec.nodeTaints", s.node_taints_size(), kMaxFlavorNodeTaints));
  TOLLGATE_ASSIGN_OR_RETURN(out.node_taints,
                            TaintsFromProto(r, "spec.nodeTaints", s.node_taints()));
  TOLLGATE_RETURN_IF_ERROR(
      CheckMaxItems(r, "spec.tolerations", s.tolerations_size(), kMaxFlavorTolerations));
  TOLLGATE_ASSIGN_OR_RETURN(out.tolerations,
                            TolerationsFromProto(r, "spec.tolerations", s.tolerations()));
  if (!s.topology_name().empty()) {
    TOLLGATE_RETURN_IF_ERROR(
        ValidateName(r, "spec.topologyName", s.topology_name(), /*label=*/false));
  }
  out.topology_name = s.topology_name();
  return out;
}

absl::StatusOr<core::ClusterQueueSpec> ClusterQueueFromProto(const v1::ClusterQueue& cq) {
  const Reporter r("ClusterQueue", "", cq.metadata().name());
  TOLLGATE_RETURN_IF_ERROR(CheckObjectSize(r, cq.ByteSizeLong()));
  TOLLGATE_RETURN_IF_ERROR(
      ValidateMetadata(r, cq.metadata(), NameRule::kDns1123Subdomain, /*namespaced=*/false));
  const v1::ClusterQueueSpec& s = cq.spec();
  core::ClusterQueueSpec out;
  out.name = cq.metadata().name();

  if (!s.cohort().empty()) {
    TOLLGATE_RETURN_IF_ERROR(ValidateName(r, "spec.cohort", s.cohort(), /*label=*/false));
  }
  out.cohort = s.cohort();
  TOLLGATE_ASSIGN_OR_RETURN(out.resource_groups,
                            ResourceGroupsFromProto(r, s.resource_groups(),
                                                    QuotaRules{.has_parent = !s.cohort().empty(),
                                                               .parent_field = "spec.cohort",
                                                               .lending_within_nominal = true}));
  TOLLGATE_ASSIGN_OR_RETURN(
      out.queueing_strategy,
      ParseEnum(r, "spec.queueingStrategy", s.queueing_strategy(),
                core::QueueingStrategy::kBestEffortFifo, kQueueingStrategies));
  if (s.has_namespace_selector()) {
    TOLLGATE_ASSIGN_OR_RETURN(
        out.namespace_selector,
        LabelSelectorFromProto(r, "spec.namespaceSelector", s.namespace_selector()));
  }

  const v1::ClusterQueuePreemption& p = s.preemption();
  core::PreemptionSpec& pre = out.preemption;
  TOLLGATE_ASSIGN_OR_RETURN(
      pre.within_cluster_queue,
      ParseEnum(r, "spec.preemption.withinClusterQueue", p.within_cluster_queue(),
                core::PreemptionPolicy::kNever, kWithinClusterQueuePolicies));
  TOLLGATE_ASSIGN_OR_RETURN(
      pre.reclaim_within_cohort,
      ParseEnum(r, "spec.preemption.reclaimWithinCohort", p.reclaim_within_cohort(),
                core::PreemptionPolicy::kNever, kReclaimWithinCohortPolicies));
  TOLLGATE_ASSIGN_OR_RETURN(
      pre.borrow_within_cohort,
      ParseEnum(r, "spec.preemption.borrowWithinCohort.policy", p.borrow_within_cohort().policy(),
                core::BorrowWithinCohortPolicy::kNever, kBorrowWithinCohortPolicies));
  if (p.borrow_within_cohort().has_max_priority_threshold()) {
    // The threshold narrows the LowerPriority policy; with Never nothing is preempted anyway.
    if (pre.borrow_within_cohort != core::BorrowWithinCohortPolicy::kLowerPriority) {
      return r.Invalid("spec.preemption.borrowWithinCohort.maxPriorityThreshold",
                       absl::StrCat("may only be set when policy is \"LowerPriority\", got ",
                                    p.borrow_within_cohort().max_priority_threshold(),
                                    " with policy ", Quote(p.borrow_within_cohort().policy())));
    }
    pre.max_priority_threshold = p.borrow_within_cohort().max_priority_threshold();
  }
  // Kueue's CRD rule: preempting while borrowing presupposes reclaiming within the cohort.
  if (pre.reclaim_within_cohort == core::PreemptionPolicy::kNever &&
      pre.borrow_within_cohort != core::BorrowWithinCohortPolicy::kNever) {
    return r.Invalid("spec.preemption",
                     absl::StrCat("reclaimWithinCohort=Never and borrowWithinCohort.policy!=Never:"
                                  " borrowWithinCohort.policy ",
                                  Quote(p.borrow_within_cohort().policy()),
                                  " requires reclaimWithinCohort other than \"Never\", got ",
                                  Quote(p.reclaim_within_cohort())));
  }

  TOLLGATE_ASSIGN_OR_RETURN(
      out.flavor_fungibility.when_can_borrow,
      ParseEnum(r, "spec.flavorFungibility.whenCanBorrow", s.flavor_fungibility().when_can_borrow(),
                core::WhenCanBorrow::kBorrow, kWhenCanBorrow));
  TOLLGATE_ASSIGN_OR_RETURN(out.flavor_fungibility.when_can_preempt,
                            ParseEnum(r, "spec.flavorFungibility.whenCanPreempt",
                                      s.flavor_fungibility().when_can_preempt(),
                                      core::WhenCanPreempt::kTryNextFlavor, kWhenCanPreempt));
  if (const std::string& preference = s.flavor_fungibility().preference(); !preference.empty()) {
    TOLLGATE_ASSIGN_OR_RETURN(
        out.flavor_fungibility.preference,
        ParseEnum(r, "spec.flavorFungibility.preference", preference,
                  core::FungibilityPreference::kBorrowingOverPreemption, kFungibilityPreferences));
    // Kueue's CRD rule and webhook: a preference only with both policies TryNextFlavor.
    if (out.flavor_fungibility.when_can_borrow != core::WhenCanBorrow::kTryNextFlavor ||
        out.flavor_fungibility.when_can_preempt != core::WhenCanPreempt::kTryNextFlavor) {
      auto as_written = [](const std::string& text, absl::string_view default_name) {
        return text.empty() ? absl::StrCat(Quote(default_name), " (the default)") : Quote(text);
      };
      return r.Invalid(
          "spec.flavorFungibility.preference",
          absl::StrCat(Quote(preference),
                       " may only be set when both whenCanBorrow and whenCanPreempt are "
                       "\"TryNextFlavor\", got whenCanBorrow ",
                       as_written(s.flavor_fungibility().when_can_borrow(), "Borrow"),
                       " and whenCanPreempt ",
                       as_written(s.flavor_fungibility().when_can_preempt(), "TryNextFlavor")));
    }
  }
  TOLLGATE_ASSIGN_OR_RETURN(out.fair_weight,
                            FairWeightFromProto(r, "spec.fairSharing", s.fair_sharing()));
  TOLLGATE_ASSIGN_OR_RETURN(out.stop_policy, ParseEnum(r, "spec.stopPolicy", s.stop_policy(),
                                                       core::StopPolicy::kNone, kStopPolicies));
  TOLLGATE_ASSIGN_OR_RETURN(
      out.admission_mode,
      ParseEnum(r, "spec.admissionScope.admissionMode", s.admission_scope().admission_mode(),
                core::AdmissionMode::kDefault, kAdmissionModes));
  if (s.max_preempted_workloads() < 0) {
    return r.Invalid(
        "spec.maxPreemptedWorkloads",
        absl::StrCat("must be greater than or equal to 0, got ", s.max_preempted_workloads()));
  }
  out.max_preempted_workloads = s.max_preempted_workloads();
  const v1::PreemptionRateLimit& limit = s.preemption_rate_limit();
  if (limit.max_preemptions() < 0 ||
      limit.max_preemptions() > static_cast<int32_t>(core::kMaxRecentPreemptions)) {
    return r.Invalid("spec.preemptionRateLimit.maxPreemptions",
                     absl::StrCat("must be between 0 and ", core::kMaxRecentPreemptions, ", got ",
                                  limit.max_preemptions()));
  }
  if (limit.max_preemptions() > 0 && limit.window_seconds() <= 0) {
    return r.Invalid("spec.preemptionRateLimit.windowSeconds",
                     absl::StrCat("must be greater than 0 when maxPreemptions is set, got ",
                                  limit.window_seconds()));
  }
  out.max_preemptions_per_window = limit.max_preemptions();
  out.preemption_window = absl::Seconds(limit.window_seconds());
  TOLLGATE_ASSIGN_OR_RETURN(out.admission_checks,
                            AdmissionChecksFromProto(r, s, out.resource_groups));
  return out;
}

absl::StatusOr<core::AdmissionCheckSpec> AdmissionCheckFromProto(const v1::AdmissionCheck& ac) {
  const Reporter r("AdmissionCheck", "", ac.metadata().name());
  TOLLGATE_RETURN_IF_ERROR(CheckObjectSize(r, ac.ByteSizeLong()));
  TOLLGATE_RETURN_IF_ERROR(
      ValidateMetadata(r, ac.metadata(), NameRule::kDns1123Subdomain, /*namespaced=*/false));
  core::AdmissionCheckSpec out;
  out.name = ac.metadata().name();
  const std::string& controller = ac.spec().controller_name();
  if (controller.empty()) return r.Invalid("spec.controllerName", "is required");
  if (controller.size() > kMaxControllerNameBytes) {
    return r.Invalid("spec.controllerName", absl::StrCat(Quote(controller), " is longer than ",
                                                         kMaxControllerNameBytes, " bytes"));
  }
  out.controller_name = controller;
  if (ac.spec().has_parameters()) {
    const v1::AdmissionCheckParametersReference& p = ac.spec().parameters();
    if (!p.api_group().empty() || !p.kind().empty() || !p.name().empty()) {
      TOLLGATE_RETURN_IF_ERROR(
          ValidateName(r, "spec.parameters.apiGroup", p.api_group(), /*label=*/false));
      if (!IsDnsLabelLike(p.kind(), /*kind=*/true)) {
        return r.Invalid("spec.parameters.kind",
                         absl::StrCat(Quote(p.kind()),
                                      " is not a kind: 1-63 letters, digits and '-', starting "
                                      "with a letter"));
      }
      TOLLGATE_RETURN_IF_ERROR(ValidateName(r, "spec.parameters.name", p.name(), /*label=*/true));
      out.parameters = core::AdmissionCheckParameters{p.api_group(), p.kind(), p.name()};
    }
  }
  return out;
}

absl::StatusOr<std::optional<core::Condition>> AdmissionCheckActiveFromProto(
    const v1::AdmissionCheck& ac) {
  return ActiveConditionFromProto(Reporter("AdmissionCheck", "", ac.metadata().name()),
                                  ac.status().conditions());
}

absl::StatusOr<core::CohortSpec> CohortFromProto(const v1::Cohort& cohort) {
  const Reporter r("Cohort", "", cohort.metadata().name());
  TOLLGATE_RETURN_IF_ERROR(CheckObjectSize(r, cohort.ByteSizeLong()));
  TOLLGATE_RETURN_IF_ERROR(
      ValidateMetadata(r, cohort.metadata(), NameRule::kDns1123Subdomain, /*namespaced=*/false));
  const v1::CohortSpec& s = cohort.spec();
  core::CohortSpec out;
  out.name = cohort.metadata().name();
  if (!s.parent().empty()) {
    // A Cohort naming itself is accepted, as Kueue's webhook does: it is a cycle of one, and
    // the quota tree leaves it and everything under it out like any other cycle.
    TOLLGATE_RETURN_IF_ERROR(ValidateName(r, "spec.parent", s.parent(), /*label=*/false));
  }
  out.parent = s.parent();
  TOLLGATE_ASSIGN_OR_RETURN(out.resource_groups,
                            ResourceGroupsFromProto(r, s.resource_groups(),
                                                    QuotaRules{.has_parent = !s.parent().empty(),
                                                               .parent_field = "spec.parent",
                                                               .lending_within_nominal = false}));
  TOLLGATE_ASSIGN_OR_RETURN(out.fair_weight,
                            FairWeightFromProto(r, "spec.fairSharing", s.fair_sharing()));
  return out;
}

absl::StatusOr<core::LocalQueueSpec> LocalQueueFromProto(const v1::LocalQueue& lq) {
  const Reporter r("LocalQueue", lq.metadata().namespace_(), lq.metadata().name());
  TOLLGATE_RETURN_IF_ERROR(CheckObjectSize(r, lq.ByteSizeLong()));
  TOLLGATE_RETURN_IF_ERROR(
      ValidateMetadata(r, lq.metadata(), NameRule::kDns1123Subdomain, /*namespaced=*/true));
  const v1::LocalQueueSpec& s = lq.spec();
  core::LocalQueueSpec out;
  out.namespace_name = lq.metadata().namespace_();
  out.name = lq.metadata().name();
  TOLLGATE_RETURN_IF_ERROR(
      ValidateName(r, "spec.clusterQueue", s.cluster_queue(), /*label=*/false));
  out.cluster_queue = s.cluster_queue();
  TOLLGATE_ASSIGN_OR_RETURN(out.stop_policy, ParseEnum(r, "spec.stopPolicy", s.stop_policy(),
                                                       core::StopPolicy::kNone, kStopPolicies));
  TOLLGATE_ASSIGN_OR_RETURN(out.fair_weight,
                            FairWeightFromProto(r, "spec.fairSharing", s.fair_sharing()));
  // Copied onto the workloads it admits under the configured cost-attribution keys.
  TOLLGATE_RETURN_IF_ERROR(
      LabelsFromProto(r, "metadata.labels", lq.metadata().labels(), &out.labels));
  return out;
}

absl::StatusOr<core::PriorityClassSpec> PriorityClassFromProto(
    const v1::WorkloadPriorityClass& pc) {
  const Reporter r("WorkloadPriorityClass", "", pc.metadata().name());
  TOLLGATE_RETURN_IF_ERROR(CheckObjectSize(r, pc.ByteSizeLong()));
  TOLLGATE_RETURN_IF_ERROR(
      ValidateMetadata(r, pc.metadata(), NameRule::kDns1123Subdomain, /*namespaced=*/false));
  if (pc.description().size() > kMaxPriorityClassDescriptionLength) {
    return r.Invalid("description",
                     absl::StrCat("must be at most ", kMaxPriorityClassDescriptionLength,
                                  " bytes, got ", pc.description().size()));
  }
  return core::PriorityClassSpec{
      .name = pc.metadata().name(), .value = pc.value(), .is_pod_priority_class = false};
}

absl::StatusOr<core::PriorityClassSpec> PriorityClassFromProto(const v1::PriorityClass& pc) {
  const Reporter r("PriorityClass", "", pc.metadata().name());
  TOLLGATE_RETURN_IF_ERROR(CheckObjectSize(r, pc.ByteSizeLong()));
  TOLLGATE_RETURN_IF_ERROR(
      ValidateMetadata(r, pc.metadata(), NameRule::kDns1123Subdomain, /*namespaced=*/false));
  TOLLGATE_RETURN_IF_ERROR(CheckOneOf(r, "preemptionPolicy", pc.preemption_policy(),
                                      {"PreemptLowerPriority", "Never"}, /*allow_empty=*/true));
  // Kubernetes reserves values above 1e9 for its two built-in system classes.
  const bool builtin =
      (pc.metadata().name() == "system-cluster-critical" &&
       pc.value() == kSystemClusterCriticalPriority) ||
      (pc.metadata().name() == "system-node-critical" && pc.value() == kSystemNodeCriticalPriority);
  if (pc.value() > kMaxUserPriority && !builtin) {
    return r.Invalid("value", absl::StrCat("must be no more than ", kMaxUserPriority,
                                           " (higher values are reserved for system classes), got ",
                                           pc.value()));
  }
  return core::PriorityClassSpec{
      .name = pc.metadata().name(), .value = pc.value(), .is_pod_priority_class = true};
}

// --- core -> API -------------------------------------------------------------------------------

v1::Namespace NamespaceToProto(const core::NamespaceSpec& ns) {
  v1::Namespace out;
  *out.mutable_metadata() = MetadataToProto("", ns.name);
  LabelsToProto(ns.labels, out.mutable_metadata()->mutable_labels());
  return out;
}

v1::ResourceFlavor ResourceFlavorToProto(const core::ResourceFlavorSpec& rf) {
  v1::ResourceFlavor out;
  *out.mutable_metadata() = MetadataToProto("", rf.name);
  v1::ResourceFlavorSpec* s = out.mutable_spec();
  LabelsToProto(rf.node_labels, s->mutable_node_labels());
  for (const core::Taint& t : rf.node_taints) {
    v1::Taint* pt = s->add_node_taints();
    pt->set_key(t.key);
    pt->set_value(t.value);
    pt->set_effect(t.effect);
  }
  TolerationsToProto(rf.tolerations, s->mutable_tolerations());
  s->set_topology_name(rf.topology_name);
  return out;
}

v1::ClusterQueue ClusterQueueToProto(const core::ClusterQueueSpec& cq) {
  v1::ClusterQueue out;
  *out.mutable_metadata() = MetadataToProto("", cq.name);
  v1::ClusterQueueSpec* s = out.mutable_spec();
  s->set_cohort(cq.cohort);
  ResourceGroupsToProto(cq.resource_groups, s->mutable_resource_groups());
  s->set_queueing_strategy(EnumName(cq.queueing_strategy, kQueueingStrategies));
  if (cq.namespace_selector.has_value()) {
    v1::LabelSelector* sel = s->mutable_namespace_selector();
    LabelsToProto(cq.namespace_selector->match_labels, sel->mutable_match_labels());
    for (const core::LabelSelectorRequirement& req : cq.namespace_selector->match_expressions) {
      v1::LabelSelectorRequirement* pr = sel->add_match_expressions();
      pr->set_key(req.key);
      pr->set_operator_(req.op);
      for (const std::string& v : req.values) pr->add_values(v);
    }
  }
  v1::ClusterQueuePreemption* p = s->mutable_preemption();
  p->set_within_cluster_queue(
      EnumName(cq.preemption.within_cluster_queue, kWithinClusterQueuePolicies));
  p->set_reclaim_within_cohort(
      EnumName(cq.preemption.reclaim_within_cohort, kReclaimWithinCohortPolicies));
  p->mutable_borrow_within_cohort()->set_policy(
      EnumName(cq.preemption.borrow_within_cohort, kBorrowWithinCohortPolicies));
  if (cq.preemption.max_priority_threshold.has_value()) {
    p->mutable_borrow_within_cohort()->set_max_priority_threshold(
        *cq.preemption.max_priority_threshold);
  }
  s->mutable_flavor_fungibility()->set_when_can_borrow(
      EnumName(cq.flavor_fungibility.when_can_borrow, kWhenCanBorrow));
  s->mutable_flavor_fungibility()->set_when_can_preempt(
      EnumName(cq.flavor_fungibility.when_can_preempt, kWhenCanPreempt));
  if (cq.flavor_fungibility.preference.has_value()) {
    s->mutable_flavor_fungibility()->set_preference(
        EnumName(*cq.flavor_fungibility.preference, kFungibilityPreferences));
  }
  FairSharingToProto(cq.fair_weight, s->mutable_fair_sharing());
  s->set_stop_policy(EnumName(cq.stop_policy, kStopPolicies));
  // Kueue has no default mode: an unset admissionScope defers to the global configuration.
  if (cq.admission_mode != core::AdmissionMode::kDefault) {
    s->mutable_admission_scope()->set_admission_mode(EnumName(cq.admission_mode, kAdmissionModes));
  }
  s->set_max_preempted_workloads(cq.max_preempted_workloads);
  if (cq.max_preemptions_per_window > 0) {
    s->mutable_preemption_rate_limit()->set_max_preemptions(cq.max_preemptions_per_window);
    s->mutable_preemption_rate_limit()->set_window_seconds(
        absl::ToInt64Seconds(cq.preemption_window));
  }
  // v1beta2's single form; v1beta1's admissionChecks are its entries without onFlavors.
  for (const core::AdmissionCheckStrategyRule& rule : cq.admission_checks) {
    v1::AdmissionCheckStrategyRule* pr =
        s->mutable_admission_checks_strategy()->add_admission_checks();
    pr->set_name(rule.name);
    for (const std::string& f : rule.on_flavors) pr->add_on_flavors(f);
  }
  return out;
}

v1::AdmissionCheck AdmissionCheckToProto(const core::AdmissionCheckSpec& ac,
                                         const std::optional<core::Condition>& active) {
  v1::AdmissionCheck out;
  *out.mutable_metadata() = MetadataToProto("", ac.name);
  out.mutable_spec()->set_controller_name(ac.controller_name);
  if (ac.parameters.has_value()) {
    v1::AdmissionCheckParametersReference* p = out.mutable_spec()->mutable_parameters();
    p->set_api_group(ac.parameters->api_group);
    p->set_kind(ac.parameters->kind);
    p->set_name(ac.parameters->name);
  }
  if (active.has_value()) {
    v1::Condition* c = out.mutable_status()->add_conditions();
    c->set_type("Active");
    c->set_status(active->status ? "True" : "False");
    c->set_reason(active->reason);
    c->set_message(active->message);
    TimeToProto(active->last_transition_time, c->mutable_last_transition_time());
  }
  return out;
}

v1::Cohort CohortToProto(const core::CohortSpec& cohort) {
  v1::Cohort out;
  *out.mutable_metadata() = MetadataToProto("", cohort.name);
  v1::CohortSpec* s = out.mutable_spec();
  s->set_parent(cohort.parent);
  ResourceGroupsToProto(cohort.resource_groups, s->mutable_resource_groups());
  FairSharingToProto(cohort.fair_weight, s->mutable_fair_sharing());
  return out;
}

v1::LocalQueue LocalQueueToProto(const core::LocalQueueSpec& lq) {
  v1::LocalQueue out;
  *out.mutable_metadata() = MetadataToProto(lq.namespace_name, lq.name);
  LabelsToProto(lq.labels, out.mutable_metadata()->mutable_labels());
  v1::LocalQueueSpec* s = out.mutable_spec();
  s->set_cluster_queue(lq.cluster_queue);
  s->set_stop_policy(EnumName(lq.stop_policy, kStopPolicies));
  FairSharingToProto(lq.fair_weight, s->mutable_fair_sharing());
  return out;
}

v1::WorkloadPriorityClass WorkloadPriorityClassToProto(const core::PriorityClassSpec& pc) {
  v1::WorkloadPriorityClass out;
  *out.mutable_metadata() = MetadataToProto("", pc.name);
  out.set_value(pc.value);
  return out;
}

v1::PriorityClass PriorityClassToProto(const core::PriorityClassSpec& pc) {
  v1::PriorityClass out;
  *out.mutable_metadata() = MetadataToProto("", pc.name);
  out.set_value(pc.value);
  return out;
}

}  // namespace tollgate::api
