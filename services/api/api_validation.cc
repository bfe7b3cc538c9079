#include "services/api/api_validation.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/error_text.h"
#include "core/names.h"
#include "core/status_macros.h"
#include "services/api/api_codec.h"
#include "services/api/api_limits.h"

namespace tollgate::api {
namespace codec {
namespace {

// Kubernetes' limit on the summed size of an object's annotation keys and values.
constexpr int64_t kMaxAnnotationBytes = 256 * 1024;
// google.protobuf.Timestamp's range: 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999999999Z.
constexpr int64_t kMinTimestampSeconds = -62135596800;
constexpr int64_t kMaxTimestampSeconds = 253402300799;
constexpr int32_t kMaxTimestampNanos = 999999999;

std::optional<std::string> TimestampOutOfRange(const google::protobuf::Timestamp& ts) {
  if (ts.seconds() < kMinTimestampSeconds || ts.seconds() > kMaxTimestampSeconds ||
      ts.nanos() < 0 || ts.nanos() > kMaxTimestampNanos) {
    return absl::StrCat("timestamp out of range, got seconds=", ts.seconds(),
                        " nanos=", ts.nanos());
  }
  return std::nullopt;
}

absl::Time TimeOf(const google::protobuf::Timestamp& ts) {
  return absl::FromUnixSeconds(ts.seconds()) + absl::Nanoseconds(ts.nanos());
}

// Most amounts are small whole numbers ("1", "8"), decoded by the million on restart: read
// without building a Quantity. 15 digits times 1000 still fit in int64.
std::optional<int64_t> WholeNumberScalar(absl::string_view resource, absl::string_view text) {
  if (text.empty() || text.size() > 15 || (text[0] == '0' && text.size() > 1) ||
      !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  int64_t whole = 0;
  for (char c : text) whole = whole * 10 + (c - '0');
  return resource == "cpu" ? whole * 1000 : whole;
}

}  // namespace

std::string Quote(absl::string_view value) { return core::QuoteValue(value); }

std::string Child(absl::string_view path, absl::string_view name) {
  return absl::StrCat(path, ".", name);
}
std::string Index(absl::string_view path, size_t i) { return absl::StrCat(path, "[", i, "]"); }
std::string Key(absl::string_view path, absl::string_view key) {
  return absl::StrCat(path, "[", core::EchoedText(key), "]");
}

// Proto maps iterate in an unspecified order; sorting makes the first reported error, and the
// core's maps, deterministic.
std::map<std::string, std::string> Sorted(const StringMap& map) {
  return std::map<std::string, std::string>(map.begin(), map.end());
}

// For string-valued fields the core keeps as strings. `allow_empty` covers fields whose empty
// value means "unset".
absl::Status CheckOneOf(const Reporter& r, absl::string_view path, absl::string_view text,
                        std::initializer_list<absl::string_view> allowed, bool allow_empty) {
  if (text.empty() && allow_empty) return absl::OkStatus();
  std::vector<std::string> names;
  for (absl::string_view a : allowed) {
    if (a == text) return absl::OkStatus();
    names.push_back(Quote(a));
  }
  return r.Invalid(path, absl::StrCat("unsupported value ", Quote(text),
                                      ": supported values: ", absl::StrJoin(names, ", ")));
}

absl::Status CheckMaxItems(const Reporter& r, absl::string_view path, int size, int max,
                           absl::string_view noun) {
  if (size <= max) return absl::OkStatus();
  return r.Invalid(path, absl::StrCat("must have at most ", max, " ", noun, ", got ", size));
}

absl::Status CheckMinItems(const Reporter& r, absl::string_view path, int size, int min) {
  if (size >= min) return absl::OkStatus();
  return r.Invalid(
      path, absl::StrCat("must have at least ", min, " item", min == 1 ? "" : "s", ", got ", size));
}

absl::Status ValidateName(const Reporter& r, LazyPath path, absl::string_view value, bool label) {
  if (value.empty()) return r.Invalid(path(), "required value, got \"\"");
  absl::Status status =
      label ? core::ValidateDns1123Label(value) : core::ValidateDns1123Subdomain(value);
  if (status.ok()) return status;
  return r.At(path(), status);
}

absl::Status ValidateName(const Reporter& r, absl::string_view path, absl::string_view value,
                          bool label) {
  return ValidateName(
      r, [path] { return std::string(path); }, value, label);
}

// Kubernetes' ValidateLabels: qualified-name keys, label values. Keys are reported at
// `path[key]` so the offending entry is visible even when the key itself is the problem.
absl::Status LabelsFromProto(const Reporter& r, absl::string_view path, const StringMap& labels,
                             core::Labels* out) {
  TOLLGATE_RETURN_IF_ERROR(
      CheckMaxItems(r, path, static_cast<int>(labels.size()), kMaxLabels, "entries"));
  core::Labels sorted = Sorted(labels);
  for (const auto& [key, value] : sorted) {
    const std::string kpath = Key(path, key);
    TOLLGATE_RETURN_IF_ERROR(r.At(kpath, core::ValidateQualifiedName(key)));
    TOLLGATE_RETURN_IF_ERROR(r.At(kpath, core::ValidateLabelValue(value)));
  }
  if (out != nullptr) *out = std::move(sorted);
  return absl::OkStatus();
}

// Kubernetes' ValidateAnnotations: keys are qualified names once lowercased, and all of it fits
// in 256 KiB.
absl::Status ValidateAnnotations(const Reporter& r, absl::string_view path,
                                 const StringMap& annotations) {
  TOLLGATE_RETURN_IF_ERROR(
      CheckMaxItems(r, path, static_cast<int>(annotations.size()), kMaxAnnotations, "entries"));
  int64_t total = 0;
  for (const auto& [key, value] : Sorted(annotations)) {
    TOLLGATE_RETURN_IF_ERROR(
        r.At(Key(path, key), core::ValidateQualifiedName(absl::AsciiStrToLower(key))));
    total += static_cast<int64_t>(key.size() + value.size());
  }
  if (total > kMaxAnnotationBytes) {
    return r.Invalid(path, absl::StrCat("may not be more than ", kMaxAnnotationBytes,
                                        " bytes in total, got ", total));
  }
  return absl::OkStatus();
}

absl::Status ValidateMetadata(const Reporter& r, const v1::ObjectMeta& meta, NameRule rule,
                              bool namespaced) {
  TOLLGATE_RETURN_IF_ERROR(
      ValidateName(r, "metadata.name", meta.name(), rule == NameRule::kDns1123Label));
  if (namespaced) {
    TOLLGATE_RETURN_IF_ERROR(
        ValidateName(r, "metadata.namespace", meta.namespace_(), /*label=*/true));
  }
  TOLLGATE_RETURN_IF_ERROR(LabelsFromProto(r, "metadata.labels", meta.labels(), nullptr));
  return ValidateAnnotations(r, "metadata.annotations", meta.annotations());
}

absl::Status CheckObjectSize(const Reporter& r, size_t bytes) {
  if (static_cast<int64_t>(bytes) <= kMaxObjectBytes) return absl::OkStatus();
  return r.Invalid("object", absl::StrCat("must be at most ", kMaxObjectBytes,
                                          " bytes serialized, got ", bytes));
}

absl::StatusOr<core::Quantity> ParseNonNegativeQuantity(const Reporter& r, absl::string_view path,
                                                        absl::string_view text) {
  absl::StatusOr<core::Quantity> q = core::Quantity::Parse(text);
  if (!q.ok()) return r.At(path, q.status());
  if (q->IsNegative()) {
    return r.Invalid(path, absl::StrCat("must be greater than or equal to 0, got ", Quote(text)));
  }
  return q;
}

absl::StatusOr<int64_t> ParseResourceAmount(const Reporter& r, absl::string_view path,
                                            absl::string_view resource, absl::string_view text) {
  TOLLGATE_ASSIGN_OR_RETURN(core::Quantity q, ParseNonNegativeQuantity(r, path, text));
  absl::StatusOr<int64_t> amount = core::CheckedResourceScalar(resource, q);
  if (!amount.ok()) {
    return r.Invalid(path,
                     absl::StrCat("quantity ", Quote(text), " is ", amount.status().message()));
  }
  return amount;
}

// The same, with the path built only for an error.
absl::StatusOr<int64_t> ParseResourceAmount(const Reporter& r, LazyPath path,
                                            absl::string_view resource, absl::string_view text) {
  if (std::optional<int64_t> whole = WholeNumberScalar(resource, text)) return *whole;
  absl::StatusOr<core::Quantity> q = core::Quantity::Parse(text);
  if (!q.ok() || q->IsNegative()) return ParseResourceAmount(r, path(), resource, text).status();
  std::optional<int64_t> amount = resource == "cpu" ? q->CheckedMilliValue() : q->CheckedValue();
  if (!amount.has_value()) return ParseResourceAmount(r, path(), resource, text).status();
  return *amount;
}

absl::StatusOr<int64_t> ParseRequestAmount(const Reporter& r, LazyPath path,
                                           absl::string_view resource, absl::string_view text) {
  if (std::optional<int64_t> whole = WholeNumberScalar(resource, text)) return *whole;
  absl::StatusOr<core::Quantity> q = core::Quantity::Parse(text);
  if (!q.ok() || q->IsNegative()) return ParseResourceAmount(r, path(), resource, text).status();
  const std::optional<int64_t> amount =
      resource == "cpu" ? q->CheckedMilliValue() : q->CheckedValue();
  return amount.value_or(std::numeric_limits<int64_t>::max());
}

int64_t QuotaScalar(absl::string_view resource, const core::Quantity& q) {
  constexpr int64_t kUnlimited = std::numeric_limits<int64_t>::max();
  if (resource == "cpu") {
    // Kueue compares the quantity with INT64_MAX / 1000 whole cores, not with INT64_MAX milli.
    constexpr int64_t kFirstUnlimited = kUnlimited / 1000 * 1000;
    const std::optional<int64_t> milli = q.CheckedMilliValue();
    return milli.has_value() && *milli < kFirstUnlimited ? *milli : kUnlimited;
  }
  const std::optional<int64_t> value = q.CheckedValue();
  return value.has_value() ? *value : kUnlimited;
}

absl::StatusOr<int64_t> ParseQuotaAmount(const Reporter& r, absl::string_view path,
                                         absl::string_view resource, absl::string_view text) {
  TOLLGATE_ASSIGN_OR_RETURN(core::Quantity q, ParseNonNegativeQuantity(r, path, text));
  return QuotaScalar(resource, q);
}

absl::StatusOr<absl::Time> TimeFromProto(const Reporter& r, LazyPath path, bool has,
                                         const google::protobuf::Timestamp& ts) {
  if (!has) return absl::InfinitePast();
  if (std::optional<std::string> error = TimestampOutOfRange(ts)) return r.Invalid(path(), *error);
  return TimeOf(ts);
}

absl::StatusOr<absl::Time> TimeFromProto(const Reporter& r, absl::string_view path, bool has,
                                         const google::protobuf::Timestamp& ts) {
  return TimeFromProto(
      r, [path] { return std::string(path); }, has, ts);
}

absl::StatusOr<std::optional<core::Condition>> ActiveConditionFromProto(
    const Reporter& r, const google::protobuf::RepeatedPtrField<v1::Condition>& conditions) {
  for (int i = 0; i < conditions.size(); ++i) {
    const v1::Condition& c = conditions[i];
    if (c.type() != "Active") continue;
    const std::string path = absl::StrCat("status.conditions[", i, "]");
    TOLLGATE_RETURN_IF_ERROR(
        CheckOneOf(r, path + ".status", c.status(), {"True", "False"}, /*allow_empty=*/false));
    TOLLGATE_ASSIGN_OR_RETURN(
        absl::Time since, TimeFromProto(r, path + ".lastTransitionTime",
                                        c.has_last_transition_time(), c.last_transition_time()));
    return core::Condition{"Active", c.status() == "True", c.reason(), c.message(), since};
  }
  return std::optional<core::Condition>();
}

void TimeToProto(absl::Time t, google::protobuf::Timestamp* out) {
  // Clamped rather than rejected: InfiniteFuture (never) must still serialize.
  const absl::Time lo = absl::FromUnixSeconds(kMinTimestampSeconds);
  const absl::Time hi =
      absl::FromUnixSeconds(kMaxTimestampSeconds) + absl::Nanoseconds(kMaxTimestampNanos);
  if (t < lo) t = lo;
  if (t > hi) t = hi;
  const int64_t seconds = absl::ToUnixSeconds(t);  // rounds toward the past
  out->set_seconds(seconds);
  out->set_nanos(
      static_cast<int32_t>(absl::ToInt64Nanoseconds(t - absl::FromUnixSeconds(seconds))));
}

}  // namespace codec

absl::StatusOr<absl::Time> RequestTimeFromProto(absl::string_view field,
                                                const google::protobuf::Timestamp& ts) {
  if (std::optional<std::string> error = codec::TimestampOutOfRange(ts)) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": ", *error));
  }
  return codec::TimeOf(ts);
}

}  // namespace tollgate::api
