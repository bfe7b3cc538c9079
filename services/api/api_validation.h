#pragma once

// Validation helpers shared by the API codec's converters (config_codec.cc, workload_codec.cc
// and the sub-object codecs): error reporting that names object, field path and value, field
// paths built lazily, enum tables, names, labels, annotations, metadata, item counts,
// quantities and timestamps. Internal to services/: callers outside go through api_codec.h.

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "core/error_text.h"
#include "core/quantity.h"
#include "core/types.h"
#include "core/workload.h"
#include "google/protobuf/map.h"
#include "google/protobuf/timestamp.pb.h"
#include "tollgate/v1/objects.pb.h"

namespace tollgate::api::codec {

using StringMap = ::google::protobuf::Map<std::string, std::string>;

// A value quoted and C-escaped for an error message, cut to a bounded length.
std::string Quote(absl::string_view value);

// Field paths: `path.name`, `path[i]`, `path[key]` (a long key cut as a quoted value is).
std::string Child(absl::string_view path, absl::string_view name);
std::string Index(absl::string_view path, size_t i);
std::string Key(absl::string_view path, absl::string_view key);

// Builds errors that name the object, so a message from a batch apply still says which object
// and field to fix.
//
// Holds views of the object's kind, namespace and name (which must outlive it) and formats
// them only for an error: stored workloads are decoded by the million on restart.
class Reporter {
 public:
  Reporter(absl::string_view kind, absl::string_view ns, absl::string_view name)
      : kind_(kind), ns_(ns), name_(name) {}

  absl::Status Invalid(absl::string_view path, absl::string_view reason) const {
    return absl::InvalidArgumentError(absl::StrCat(
        kind_, " ", ns_.empty() ? std::string() : absl::StrCat(core::EchoedText(ns_), "/"),
        name_.empty() ? "<unnamed>" : core::EchoedText(name_), ": ", path, ": ", reason));
  }

  // Places a validator's error (which already quotes the value) at `path`.
  absl::Status At(absl::string_view path, const absl::Status& status) const {
    if (status.ok()) return status;
    return Invalid(path, status.message());
  }

  // Names the object in front of a validator's error that names the field path itself.
  absl::Status Wrap(const absl::Status& status) const {
    if (status.ok()) return status;
    return absl::Status(
        status.code(),
        absl::StrCat(
            kind_, " ", ns_.empty() ? std::string() : absl::StrCat(core::EchoedText(ns_), "/"),
            name_.empty() ? "<unnamed>" : core::EchoedText(name_), ": ", status.message()));
  }

 private:
  absl::string_view kind_;
  absl::string_view ns_;
  absl::string_view name_;
};

// A field path built only when an error needs it (the success path allocates nothing).
using LazyPath = absl::FunctionRef<std::string()>;

// Proto maps iterate in an unspecified order; sorting makes the first reported error, and the
// core's maps, deterministic.
std::map<std::string, std::string> Sorted(const StringMap& map);

// --- Enums ------------------------------------------------------------------------------------

template <typename E>
struct EnumValue {
  absl::string_view name;
  E value;
};

// Values accepted for a field; the first entry for a value is its canonical spelling.
template <typename E, size_t N>
using EnumTable = EnumValue<E>[N];

template <typename E, size_t N>
std::string SupportedValues(const EnumTable<E, N>& table) {
  std::vector<std::string> names;
  for (const EnumValue<E>& v : table) names.push_back(Quote(v.name));
  return absl::StrJoin(names, ", ");
}

// An empty string selects `default_value`, as Kueue's CRD defaulting would.
template <typename E, size_t N>
absl::StatusOr<E> ParseEnum(const Reporter& r, absl::string_view path, absl::string_view text,
                            E default_value, const EnumTable<E, N>& table) {
  if (text.empty()) return default_value;
  for (const EnumValue<E>& v : table) {
    if (v.name == text) return v.value;
  }
  return r.Invalid(path, absl::StrCat("unsupported value ", Quote(text),
                                      ": supported values: ", SupportedValues(table)));
}

template <typename E, size_t N>
std::string EnumName(E value, const EnumTable<E, N>& table) {
  for (const EnumValue<E>& v : table) {
    if (v.value == value) return std::string(v.name);
  }
  return "";
}

// For string-valued fields the core keeps as strings. `allow_empty` covers fields whose empty
// value means "unset".
absl::Status CheckOneOf(const Reporter& r, absl::string_view path, absl::string_view text,
                        std::initializer_list<absl::string_view> allowed, bool allow_empty);

absl::Status CheckMaxItems(const Reporter& r, absl::string_view path, int size, int max,
                           absl::string_view noun = "items");
absl::Status CheckMinItems(const Reporter& r, absl::string_view path, int size, int min);

// --- Names, labels, annotations, metadata ----------------------------------------------------

// A required DNS-1123 label (`label`) or subdomain.
absl::Status ValidateName(const Reporter& r, LazyPath path, absl::string_view value, bool label);
absl::Status ValidateName(const Reporter& r, absl::string_view path, absl::string_view value,
                          bool label);

// Kubernetes' ValidateLabels: qualified-name keys, label values. Keys are reported at
// `path[key]` so the offending entry is visible even when the key itself is the problem.
// Fills `out` (sorted) when not null.
absl::Status LabelsFromProto(const Reporter& r, absl::string_view path, const StringMap& labels,
                             core::Labels* out);

// Kubernetes' ValidateAnnotations: keys are qualified names once lowercased, and all of it fits
// in 256 KiB.
absl::Status ValidateAnnotations(const Reporter& r, absl::string_view path,
                                 const StringMap& annotations);

enum class NameRule { kDns1123Label, kDns1123Subdomain };

absl::Status ValidateMetadata(const Reporter& r, const v1::ObjectMeta& meta, NameRule rule,
                              bool namespaced);

// The object's serialized size within kMaxObjectBytes; reported at `object`.
absl::Status CheckObjectSize(const Reporter& r, size_t bytes);

// --- Quantities --------------------------------------------------------------------------------

absl::StatusOr<core::Quantity> ParseNonNegativeQuantity(const Reporter& r, absl::string_view path,
                                                        absl::string_view text);
// A non-negative quantity as the core's scalar for `resource`.
absl::StatusOr<int64_t> ParseResourceAmount(const Reporter& r, absl::string_view path,
                                            absl::string_view resource, absl::string_view text);
// The same, with the path built only for an error.
absl::StatusOr<int64_t> ParseResourceAmount(const Reporter& r, LazyPath path,
                                            absl::string_view resource, absl::string_view text);
// A workload's request: a non-negative quantity as the core's scalar for `resource`, clamped to
// INT64_MAX when the scalar cannot hold it (Kueue's ResourceValue clamps rather than refuses; the
// core's request arithmetic saturates there, so such a workload fits no finite quota).
absl::StatusOr<int64_t> ParseRequestAmount(const Reporter& r, LazyPath path,
                                           absl::string_view resource, absl::string_view text);
// Kueue's AmountFromQuantity, for quota amounts (nominalQuota, borrowingLimit, lendingLimit): the
// core's scalar, or INT64_MAX (unlimited) when the scalar cannot hold it (for "cpu" from
// INT64_MAX / 1000 cores on) instead of refusing it; quota arithmetic saturates there. `q` is
// not negative.
int64_t QuotaScalar(absl::string_view resource, const core::Quantity& q);
// A quota amount: a non-negative quantity as QuotaScalar reads it.
absl::StatusOr<int64_t> ParseQuotaAmount(const Reporter& r, absl::string_view path,
                                         absl::string_view resource, absl::string_view text);

// --- Times -------------------------------------------------------------------------------------

// An unset timestamp (`has` false) reads as absl::InfinitePast().
absl::StatusOr<absl::Time> TimeFromProto(const Reporter& r, LazyPath path, bool has,
                                         const google::protobuf::Timestamp& ts);
absl::StatusOr<absl::Time> TimeFromProto(const Reporter& r, absl::string_view path, bool has,
                                         const google::protobuf::Timestamp& ts);

// The Active condition among `conditions` (an AdmissionCheck's or a MultiKueueCluster's status,
// set by its controller), its status and time checked; nullopt when there is none.
absl::StatusOr<std::optional<core::Condition>> ActiveConditionFromProto(
    const Reporter& r, const google::protobuf::RepeatedPtrField<v1::Condition>& conditions);

// Clamped to Timestamp's range, so InfiniteFuture still serializes.
void TimeToProto(absl::Time t, google::protobuf::Timestamp* out);

}  // namespace tollgate::api::codec
