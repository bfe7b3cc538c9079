#include "core/priority_boost.h"

#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/error_text.h"

namespace tollgate::core {

const std::string* PriorityBoostAnnotationOf(const WorkloadSpec& spec) {
  if (!spec.metadata.has_value()) return nullptr;
  // Read per comparison with the gate on: a key built once, not per call.
  static const std::string* const kKey = new std::string(kPriorityBoostAnnotation);
  const Labels& annotations = spec.metadata->annotations;
  auto it = annotations.find(*kKey);
  return it == annotations.end() ? nullptr : &it->second;
}

void SetPriorityBoostAnnotation(WorkloadSpec& spec, const std::optional<std::string>& value) {
  if (value.has_value()) {
    spec.metadata.mutable_value().annotations[std::string(kPriorityBoostAnnotation)] = *value;
    return;
  }
  if (!spec.metadata.has_value()) return;
  Labels& annotations = spec.metadata.mutable_value().annotations;
  annotations.erase(std::string(kPriorityBoostAnnotation));
  if (annotations.empty() && spec.metadata->labels.empty()) spec.metadata.reset();
}

absl::StatusOr<int32_t> ParsePriorityBoost(absl::string_view value) {
  absl::string_view digits = value;
  bool negative = false;
  if (!digits.empty() && (digits.front() == '+' || digits.front() == '-')) {
    negative = digits.front() == '-';
    digits.remove_prefix(1);
  }
  if (digits.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("parsing ", QuoteValue(value), ": invalid syntax"));
  }
  // Beyond int32's magnitude the digits are still checked: a syntax error wins over a range
  // error, as in Go.
  constexpr int64_t kLimit = int64_t{1} << 31;
  int64_t magnitude = 0;
  bool out_of_range = false;
  for (char c : digits) {
    if (c < '0' || c > '9') {
      return absl::InvalidArgumentError(
          absl::StrCat("parsing ", QuoteValue(value), ": invalid syntax"));
    }
    if (!out_of_range) {
      magnitude = magnitude * 10 + (c - '0');
      out_of_range = magnitude > kLimit;
    }
  }
  const int64_t signed_value = negative ? -magnitude : magnitude;
  if (out_of_range || signed_value > std::numeric_limits<int32_t>::max() ||
      signed_value < std::numeric_limits<int32_t>::min()) {
    return absl::InvalidArgumentError(
        absl::StrCat("parsing ", QuoteValue(value), ": value out of range"));
  }
  return static_cast<int32_t>(signed_value);
}

absl::StatusOr<int32_t> PriorityBoostOf(const WorkloadSpec& spec, const SchedulerConfig& config) {
  if (!config.priority_boost) return 0;
  const std::string* value = PriorityBoostAnnotationOf(spec);
  if (value == nullptr || value->empty()) return 0;
  return ParsePriorityBoost(*value);
}

absl::StatusOr<int64_t> ParseEffectivePriority(const Workload& wl, const SchedulerConfig& config) {
  absl::StatusOr<int32_t> boost = PriorityBoostOf(wl.spec, config);
  if (!boost.ok()) return boost.status();
  return int64_t{wl.priority} + *boost;
}

int64_t BoostedPriority(const Workload& wl) {
  const std::string* value = PriorityBoostAnnotationOf(wl.spec);
  if (value == nullptr || value->empty()) return wl.priority;
  absl::StatusOr<int32_t> boost = ParsePriorityBoost(*value);
  return int64_t{wl.priority} + (boost.ok() ? *boost : 0);
}

absl::Status ValidatePriorityBoost(const WorkloadSpec& spec, const SchedulerConfig& config) {
  const std::string* value = PriorityBoostAnnotationOf(spec);
  if (value == nullptr) return absl::OkStatus();
  return ValidatePriorityBoostValue(*value, config);
}

absl::Status ValidatePriorityBoostValue(absl::string_view value, const SchedulerConfig& config) {
  if (!config.priority_boost) return absl::OkStatus();
  if (value.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(kPriorityBoostField, ": Invalid value: \"\": must be a valid signed ",
                     "integer; use \"0\" explicitly, empty string is not allowed"));
  }
  if (!ParsePriorityBoost(value).ok()) {
    return absl::InvalidArgumentError(absl::StrCat(kPriorityBoostField,
                                                   ": Invalid value: ", QuoteValue(value),
                                                   ": must be a valid signed integer"));
  }
  return absl::OkStatus();
}

}  // namespace tollgate::core
