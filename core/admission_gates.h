#pragma once

// Kueue's AdmissionGatedBy (beta and on by default since Kueue 0.19): a workload whose
// kueue.x-k8s.io/admission-gated-by annotation is not empty is kept out of its queue until
// every gate named there is removed. The annotation's value is a comma-separated list of gates,
// each a domain-prefixed path (the controllers that must let the workload go).
//
// What the annotation may hold and how it may change (Kueue's workload webhook), and the
// QuotaReserved condition and events a gated workload gets (Kueue's workload controller).

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "core/types.h"
#include "core/workload.h"

namespace tollgate::core {

inline constexpr absl::string_view kAdmissionGatedByAnnotation =
    "kueue.x-k8s.io/admission-gated-by";

// The field every validation error names, as Kubernetes spells a map key in a field path.
inline constexpr absl::string_view kAdmissionGatedByField =
    "metadata.annotations[kueue.x-k8s.io/admission-gated-by]";

// Kubernetes' limit on a Job's spec.managedBy, which Kueue applies to each gate.
inline constexpr size_t kMaxAdmissionGateBytes = 63;

// The annotation's value, or nullopt when the workload does not carry it.
std::optional<std::string> AdmissionGatedByOf(const WorkloadSpec& spec);

// HasAdmissionGate (the annotation is present and not empty) is declared in core/workload.h,
// where Workload::Queueable reads it.

// Sets the annotation to `value`, or removes it (nullopt), leaving no empty metadata behind.
void SetAdmissionGatedBy(WorkloadSpec& spec, const std::optional<std::string>& value);

// The gates the value names, trimmed of spaces, in order (Kueue's csv.Parse): "" names none.
std::vector<std::string> ParseAdmissionGates(absl::string_view value);

// Kueue's create-time check: the value is empty, or a list of distinct domain-prefixed paths
// ("example.com/gate") of at most kMaxAdmissionGateBytes each. INVALID_ARGUMENT naming
// kAdmissionGatedByField and every problem otherwise.
absl::Status ValidateAdmissionGatesOnCreate(absl::string_view value);

// Kueue's update-time check: gates may only be removed. Adding the annotation to a workload
// that had none (or an empty one) and naming a gate the old value did not are forbidden; the
// new value must also pass the create-time check. nullopt: the annotation is absent.
absl::Status ValidateAdmissionGatesOnUpdate(const std::optional<std::string>& before,
                                            const std::optional<std::string>& after);

// The condition and event a workload gets when it is first seen gated, or when its gates
// change while it stays gated (the message follows the gates left). One place for every
// write of the gated state's condition, so a change of reasons touches only here.
void MarkAdmissionGated(WorkloadStatus& status, absl::string_view gates, absl::Time now,
                        bool first_seen);

// The condition and event a workload gets when its last gate is removed: it may be admitted.
void MarkAdmissionGateCleared(WorkloadStatus& status, absl::Time now);

}  // namespace tollgate::core
