#pragma once

// Kueue's PriorityBoost (alpha gate, KEP-7990): a workload's kueue.x-k8s.io/priority-boost
// annotation, a signed 32-bit integer set by an external controller, is added to its priority
// wherever Kueue orders or compares workloads by priority (its queue, the cycle's heads, fair
// sharing's tie-break, preemption's candidates and policies). With the gate off the annotation
// means nothing, and EffectivePriority is the priority itself.
//
// The effective priority is 64-bit: an int32 priority plus an int32 boost may leave int32's
// range, and Kueue orders by the exact sum.

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/scheduler_config.h"
#include "core/workload.h"

namespace tollgate::core {

inline constexpr absl::string_view kPriorityBoostAnnotation = "kueue.x-k8s.io/priority-boost";

// The field a validation error names, as Kubernetes spells a map key in a field path.
inline constexpr absl::string_view kPriorityBoostField =
    "metadata.annotations[kueue.x-k8s.io/priority-boost]";

// The annotation's value, or null when the workload does not carry it.
const std::string* PriorityBoostAnnotationOf(const WorkloadSpec& spec);

// Sets the annotation to `value`, or removes it (nullopt), leaving no empty metadata behind.
void SetPriorityBoostAnnotation(WorkloadSpec& spec, const std::optional<std::string>& value);

// A boost as Go's strconv.ParseInt(value, 10, 32) reads it: an optional sign and decimal digits
// (leading zeros allowed; no spaces, underscores or base prefix), within int32. INVALID_ARGUMENT
// otherwise.
absl::StatusOr<int32_t> ParsePriorityBoost(absl::string_view value);

// Kueue's PriorityBoost: 0 with the gate off or without the annotation (or with it empty); the
// parsed value; or the parse error.
absl::StatusOr<int32_t> PriorityBoostOf(const WorkloadSpec& spec, const SchedulerConfig& config);

// Kueue's ParseEffectivePriority: the priority plus the boost, or the boost's parse error.
absl::StatusOr<int64_t> ParseEffectivePriority(const Workload& wl, const SchedulerConfig& config);

// The boost part of EffectivePriority with the gate on: a value that does not parse counts as 0
// (Kueue's EffectivePriority falls back to the base priority; the webhook keeps such values
// out, but one stored while the gate was off is still there when it is turned on).
int64_t BoostedPriority(const Workload& wl);

// Kueue's EffectivePriority: what every ordering and comparison by priority reads. The gate off
// costs one test of a flag.
inline int64_t EffectivePriority(const Workload& wl, const SchedulerConfig& config) {
  return config.priority_boost ? BoostedPriority(wl) : int64_t{wl.priority};
}

// Kueue's workload webhook (create and update) with the gate on: a present annotation must be a
// signed integer ("" included: "0" says no boost). INVALID_ARGUMENT naming kPriorityBoostField
// and the value otherwise; OK with the gate off, whatever the value.
absl::Status ValidatePriorityBoost(const WorkloadSpec& spec, const SchedulerConfig& config);
// The same check of a value the annotation is to be given.
absl::Status ValidatePriorityBoostValue(absl::string_view value, const SchedulerConfig& config);

}  // namespace tollgate::core
