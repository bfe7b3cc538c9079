#include "core/submit_preview.h"

#include <string>
#include <utility>

#include "absl/algorithm/container.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/admission_gates.h"
#include "core/cluster_state.h"
#include "core/priority_boost.h"
#include "core/status_macros.h"

namespace tollgate::core {

namespace {

// A resubmit of the spec `found` was created with, before an operator deactivated, activated
// or reprioritized it: Kueue's job reconciler would find its workload equivalent (it compares
// the pod sets, not spec.active or the priority), so it is the same workload, and the
// operator's values stay.
bool MatchesAsSubmitted(const Workload& found, const WorkloadSpec& spec) {
  const std::optional<SubmittedControls>& submitted = found.status.history().submitted_controls;
  const std::optional<std::string> resubmitted_gates = AdmissionGatedByOf(spec);
  const bool gates_differ = AdmissionGatedByOf(found.spec) != resubmitted_gates;
  const std::string* found_boost = PriorityBoostAnnotationOf(found.spec);
  const std::string* resubmitted_boost = PriorityBoostAnnotationOf(spec);
  const bool boost_differs = (found_boost == nullptr) != (resubmitted_boost == nullptr) ||
                             (found_boost != nullptr && *found_boost != *resubmitted_boost);
  if (!submitted.has_value() && !gates_differ && !boost_differs) return false;
  WorkloadSpec original = found.spec;
  if (submitted.has_value()) {
    original.active = submitted->active;
    original.priority = submitted->priority;
  }
  // The admission gates do not make another workload: Kueue's job reconciler finds a workload
  // equivalent to its job without looking at annotations, and the gates change only through
  // SetAdmissionGates (admission_gates.h), which may only remove them. A resubmit naming other
  // gates is the same workload, and its gates stay as they are.
  if (gates_differ) SetAdmissionGatedBy(original, resubmitted_gates);
  // Nor does the priority boost: an external controller sets it on the workload (Kueue never
  // copies it from a job), through SetPriorityBoost, and a resubmit leaves it as it is.
  if (boost_differs) {
    SetPriorityBoostAnnotation(original, resubmitted_boost == nullptr
                                             ? std::nullopt
                                             : std::optional<std::string>(*resubmitted_boost));
  }
  return original == spec;
}

}  // namespace

absl::StatusOr<SubmitPreview> PreviewSubmit(const ClusterState& state, WorkloadSpec spec,
                                            const WorkloadOwner* owner) {
  if (spec.queue_name.empty()) {
    if (state.registry().FindLocalQueue(spec.namespace_name, "default") == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("spec.queueName: workload ", spec.namespace_name, "/", spec.name,
                       " names no queue and namespace ", spec.namespace_name,
                       " has no LocalQueue named \"default\""));
    }
    spec.queue_name = "default";
  }
  if (!state.config().exclude_resource_prefixes.empty()) {
    // Kueue's resources.excludeResourcePrefixes, before the identity check, so a retried
    // submit of the same spec still matches.
    for (PodSetSpec& pod_set : spec.pod_sets) {
      std::erase_if(pod_set.requests, [&](const std::pair<std::string, int64_t>& r) {
        return absl::c_any_of(
            state.config().exclude_resource_prefixes,
            [&](const std::string& prefix) { return absl::StartsWith(r.first, prefix); });
      });
    }
  }
  // Kueue's workload webhook checks the gates' format on create (and on a resubmit, which
  // would be an update of the same object), with the AdmissionGatedBy gate on.
  if (const std::optional<std::string> gates = AdmissionGatedByOf(spec);
      gates.has_value() && state.config().admission_gated_by) {
    TOLLGATE_RETURN_IF_ERROR(ValidateAdmissionGatesOnCreate(*gates));
  }
  // Kueue's workload webhook with PriorityBoost on: the boost must be a signed integer.
  TOLLGATE_RETURN_IF_ERROR(ValidatePriorityBoost(spec, state.config()));
  SubmitPreview preview;
  if (const Workload* found =
          state.FindWorkload(absl::StrCat(spec.namespace_name, "/", spec.name))) {
    if (found->spec != spec && !MatchesAsSubmitted(*found, spec)) {
      return absl::AlreadyExistsError(
          absl::StrCat("workload ", found->Key(),
                       " already exists with a different spec; delete it first or use a new "
                       "name"));
    }
    if (owner != nullptr && found->owner.has_value() && found->owner->uid != owner->uid) {
      return absl::AlreadyExistsError(
          absl::StrCat("workload ", found->Key(), " already exists, controlled by ",
                       found->owner->kind, " ", found->owner->name, " (uid ", found->owner->uid,
                       "), not by ", owner->kind, " ", owner->name, " (uid ", owner->uid, ")"));
    }
    preview.existing = found;
    preview.priority = found->priority;
    preview.spec = std::move(spec);
    return preview;
  }
  absl::StatusOr<int32_t> priority = state.registry().ResolvePriority(spec);
  if (!priority.ok()) return priority.status();
  preview.priority = *priority;
  preview.spec = std::move(spec);
  return preview;
}

}  // namespace tollgate::core
