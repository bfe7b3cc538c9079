#include "services/api_codec.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "core/names.h"
#include "core/quantity.h"
#include "core/status_macros.h"
#include "google/protobuf/timestamp.pb.h"

namespace tollgate::services {
namespace {

using ::google::protobuf::RepeatedPtrField;
using StringMap = ::google::protobuf::Map<std::string, std::string>;

// Kubernetes' limit on the summed size of an object's annotation keys and values.
constexpr int64_t kMaxAnnotationBytes = 256 * 1024;
// google.protobuf.Timestamp's range: 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999999999Z.
constexpr int64_t kMinTimestampSeconds = -62135596800;
constexpr int64_t kMaxTimestampSeconds = 253402300799;
constexpr int32_t kMaxTimestampNanos = 999999999;

constexpr absl::string_view kDefaultPodSetName = "main";
constexpr absl::string_view kReservedPodsResource = "pods";

std::string Quote(absl::string_view value) {
  return absl::StrCat("\"", absl::CHexEscape(value), "\"");
}

std::string Child(absl::string_view path, absl::string_view name) {
  return absl::StrCat(path, ".", name);
}
std::string Index(absl::string_view path, size_t i) { return absl::StrCat(path, "[", i, "]"); }
std::string Key(absl::string_view path, absl::string_view key) {
  return absl::StrCat(path, "[", absl::CHexEscape(key), "]");
}

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
        kind_, " ", ns_.empty() ? std::string() : absl::StrCat(absl::CHexEscape(ns_), "/"),
        name_.empty() ? "<unnamed>" : absl::CHexEscape(name_), ": ", path, ": ", reason));
  }

  // Places a validator's error (which already quotes the value) at `path`.
  absl::Status At(absl::string_view path, const absl::Status& status) const {
    if (status.ok()) return status;
    return Invalid(path, status.message());
  }

 private:
  absl::string_view kind_;
  absl::string_view ns_;
  absl::string_view name_;
};

// A field path built only when an error needs it (the success path allocates nothing).
using LazyPath = absl::FunctionRef<std::string()>;

Reporter WorkloadReporter(const v1::Workload& wl) {
  return Reporter("Workload", wl.metadata().namespace_(), wl.metadata().name());
}

// Proto maps iterate in an unspecified order; sorting makes the first reported error, and the
// core's maps, deterministic.
std::map<std::string, std::string> Sorted(const StringMap& map) {
  return std::map<std::string, std::string>(map.begin(), map.end());
}

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
constexpr EnumValue<core::StopPolicy> kStopPolicies[] = {
    {"None", core::StopPolicy::kNone},
    {"Hold", core::StopPolicy::kHold},
    {"HoldAndDrain", core::StopPolicy::kHoldAndDrain},
};
constexpr EnumValue<core::AdmissionMode> kAdmissionModes[] = {
    {"UsageBasedAdmissionFairSharing", core::AdmissionMode::kUsageBasedFairSharing},
    {"NoAdmissionFairSharing", core::AdmissionMode::kNoFairSharing},
};

constexpr std::initializer_list<absl::string_view> kTaintEffects = {
    "NoSchedule", "PreferNoSchedule", "NoExecute"};
constexpr absl::string_view kNoExecute = "NoExecute";
constexpr absl::string_view kOpEqual = "Equal";
constexpr absl::string_view kOpExists = "Exists";

// --- Quantities -------------------------------------------------------------------------------

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
  return core::ResourceScalar(resource, q);
}

// The same, with the path built only for an error.
absl::StatusOr<int64_t> ParseResourceAmount(const Reporter& r, LazyPath path,
                                            absl::string_view resource, absl::string_view text) {
  absl::StatusOr<core::Quantity> q = core::Quantity::Parse(text);
  if (!q.ok() || q->IsNegative()) return ParseResourceAmount(r, path(), resource, text).status();
  return core::ResourceScalar(resource, *q);
}

// Quantity's value as a float, as Kueue reads fair-sharing weights. Works on the canonical text
// (an integer mantissa and an SI, binary or exponent suffix) so that spellings of one value
// give one double; decimal scaling goes through the string so it rounds only once.
std::optional<double> QuantityAsDouble(const core::Quantity& q) {
  const std::string text = q.CanonicalString();
  size_t end = 0;
  while (end < text.size() && (absl::ascii_isdigit(text[end]) || text[end] == '+' ||
                               text[end] == '-' || text[end] == '.')) {
    ++end;
  }
  const absl::string_view mantissa = absl::string_view(text).substr(0, end);
  const absl::string_view suffix = absl::string_view(text).substr(end);
  static constexpr std::pair<absl::string_view, int> kDecimal[] = {
      {"", 0},  {"n", -9}, {"u", -6}, {"m", -3}, {"k", 3},
      {"M", 6}, {"G", 9},  {"T", 12}, {"P", 15}, {"E", 18},
  };
  static constexpr absl::string_view kBinary[] = {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  double value = 0;
  for (const auto& [name, exponent] : kDecimal) {
    if (suffix == name) {
      if (!absl::SimpleAtod(absl::StrCat(mantissa, "e", exponent), &value)) return std::nullopt;
      return value;
    }
  }
  for (size_t i = 0; i < std::size(kBinary); ++i) {
    if (suffix == kBinary[i]) {
      if (!absl::SimpleAtod(mantissa, &value)) return std::nullopt;
      return std::ldexp(value, 10 * static_cast<int>(i + 1));
    }
  }
  // An exponent suffix ("e3", "E-2"): the whole text is a float literal.
  if (!absl::SimpleAtod(text, &value)) return std::nullopt;
  return value;
}

// Weights come from quantities, which sit on a nano grid, so nine decimals print them exactly.
std::string FormatWeight(double weight) {
  absl::StatusOr<core::Quantity> q = core::Quantity::Parse(absl::StrFormat("%.9f", weight));
  if (!q.ok()) return absl::StrCat(weight);  // only NaN or infinity, which validation rejects
  return q->CanonicalString();
}

absl::StatusOr<double> FairWeightFromProto(const Reporter& r, absl::string_view path,
                                           const v1::FairSharing& fs) {
  if (!fs.has_weight()) return 1.0;  // Kueue's default
  const std::string wpath = Child(path, "weight");
  TOLLGATE_ASSIGN_OR_RETURN(core::Quantity q, ParseNonNegativeQuantity(r, wpath, fs.weight()));
  std::optional<double> weight = QuantityAsDouble(q);
  if (!weight.has_value() || !std::isfinite(*weight)) {
    return r.Invalid(wpath,
                     absl::StrCat("not representable as a number, got ", Quote(fs.weight())));
  }
  // Kueue's webhook: a weight this small collapses to zero in its share arithmetic.
  if (*weight > 0 && *weight <= 1e-9) {
    return r.Invalid(wpath,
                     absl::StrCat("when not 0, must be greater than 1n, got ", Quote(fs.weight())));
  }
  return *weight;
}

void FairSharingToProto(double weight, v1::FairSharing* out) {
  if (weight != 1.0) out->set_weight(FormatWeight(weight));
}

// --- Times ------------------------------------------------------------------------------------

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

}  // namespace

absl::StatusOr<absl::Time> RequestTimeFromProto(absl::string_view field,
                                                const google::protobuf::Timestamp& ts) {
  if (std::optional<std::string> error = TimestampOutOfRange(ts)) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": ", *error));
  }
  return TimeOf(ts);
}

namespace {

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

// --- Metadata, labels, names -------------------------------------------------------------------

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

enum class NameRule { kDns1123Label, kDns1123Subdomain };

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

v1::ObjectMeta MetadataToProto(absl::string_view ns, absl::string_view name) {
  v1::ObjectMeta meta;
  meta.set_name(std::string(name));
  meta.set_namespace_(std::string(ns));
  return meta;
}

absl::Status CheckMaxItems(const Reporter& r, absl::string_view path, int size, int max,
                           absl::string_view noun = "items") {
  if (size <= max) return absl::OkStatus();
  return r.Invalid(path, absl::StrCat("must have at most ", max, " ", noun, ", got ", size));
}

absl::Status CheckMinItems(const Reporter& r, absl::string_view path, int size, int min) {
  if (size >= min) return absl::OkStatus();
  return r.Invalid(
      path, absl::StrCat("must have at least ", min, " item", min == 1 ? "" : "s", ", got ", size));
}

// --- Taints, tolerations, selectors --------------------------------------------------------------

absl::StatusOr<std::vector<core::Taint>> TaintsFromProto(
    const Reporter& r, absl::string_view path, const RepeatedPtrField<v1::Taint>& taints) {
  std::vector<core::Taint> out;
  std::set<std::pair<std::string, std::string>> seen;  // (effect, key)
  for (int i = 0; i < taints.size(); ++i) {
    const v1::Taint& t = taints[i];
    const std::string tpath = Index(path, i);
    if (t.key().empty()) return r.Invalid(Child(tpath, "key"), "required value, got \"\"");
    TOLLGATE_RETURN_IF_ERROR(r.At(Child(tpath, "key"), core::ValidateQualifiedName(t.key())));
    TOLLGATE_RETURN_IF_ERROR(r.At(Child(tpath, "value"), core::ValidateLabelValue(t.value())));
    TOLLGATE_RETURN_IF_ERROR(
        CheckOneOf(r, Child(tpath, "effect"), t.effect(), kTaintEffects, /*allow_empty=*/false));
    if (!seen.emplace(t.effect(), t.key()).second) {
      return r.Invalid(
          tpath, absl::StrCat("duplicate taint with key ", Quote(t.key()), " and effect ",
                              Quote(t.effect()), ": taints must be unique by key and effect pair"));
    }
    out.push_back(core::Taint{t.key(), t.value(), t.effect()});
  }
  return out;
}

// Kueue's CRD rules for tolerations plus Kubernetes' pod validation of keys and values.
absl::StatusOr<std::vector<core::Toleration>> TolerationsFromProto(
    const Reporter& r, absl::string_view path, const RepeatedPtrField<v1::Toleration>& tols) {
  std::vector<core::Toleration> out;
  for (int i = 0; i < tols.size(); ++i) {
    const v1::Toleration& t = tols[i];
    const std::string tpath = Index(path, i);
    const std::string op_path = Child(tpath, "operator");
    TOLLGATE_RETURN_IF_ERROR(
        CheckOneOf(r, op_path, t.operator_(), {kOpEqual, kOpExists}, /*allow_empty=*/true));
    const std::string op = t.operator_().empty() ? std::string(kOpEqual) : t.operator_();
    if (t.key().empty()) {
      // An empty key matches every taint, which only makes sense without a value to compare.
      if (op != kOpExists) {
        return r.Invalid(op_path, absl::StrCat("must be \"Exists\" when key is empty, got ",
                                               Quote(t.operator_())));
      }
    } else {
      TOLLGATE_RETURN_IF_ERROR(r.At(Child(tpath, "key"), core::ValidateQualifiedName(t.key())));
    }
    if (op == kOpExists) {
      if (!t.value().empty()) {
        return r.Invalid(Child(tpath, "value"), absl::StrCat("must be empty when operator is "
                                                             "\"Exists\", got ",
                                                             Quote(t.value())));
      }
    } else {
      TOLLGATE_RETURN_IF_ERROR(r.At(Child(tpath, "value"), core::ValidateLabelValue(t.value())));
    }
    TOLLGATE_RETURN_IF_ERROR(
        CheckOneOf(r, Child(tpath, "effect"), t.effect(), kTaintEffects, /*allow_empty=*/true));
    if (t.has_toleration_seconds() && t.effect() != kNoExecute) {
      return r.Invalid(Child(tpath, "tolerationSeconds"),
                       absl::StrCat("may only be set when effect is \"NoExecute\", got ",
                                    t.toleration_seconds(), " with effect ", Quote(t.effect())));
    }
    out.push_back(core::Toleration{t.key(), op, t.value(), t.effect()});
  }
  return out;
}

// Kubernetes' ValidateLabelSelector.
absl::StatusOr<core::LabelSelector> LabelSelectorFromProto(const Reporter& r,
                                                           absl::string_view path,
                                                           const v1::LabelSelector& sel) {
  core::LabelSelector out;
  TOLLGATE_RETURN_IF_ERROR(
      LabelsFromProto(r, Child(path, "matchLabels"), sel.match_labels(), &out.match_labels));
  const std::string exprs_path = Child(path, "matchExpressions");
  for (int i = 0; i < sel.match_expressions_size(); ++i) {
    const v1::LabelSelectorRequirement& req = sel.match_expressions(i);
    const std::string epath = Index(exprs_path, i);
    TOLLGATE_RETURN_IF_ERROR(r.At(Child(epath, "key"), core::ValidateQualifiedName(req.key())));
    TOLLGATE_RETURN_IF_ERROR(CheckOneOf(r, Child(epath, "operator"), req.operator_(),
                                        {"In", "NotIn", "Exists", "DoesNotExist"},
                                        /*allow_empty=*/false));
    const std::string vpath = Child(epath, "values");
    const bool wants_values = req.operator_() == "In" || req.operator_() == "NotIn";
    if (wants_values && req.values_size() == 0) {
      return r.Invalid(vpath, absl::StrCat("must be specified when operator is ",
                                           Quote(req.operator_()), ", got none"));
    }
    if (!wants_values && req.values_size() > 0) {
      return r.Invalid(vpath, absl::StrCat("may not be specified when operator is ",
                                           Quote(req.operator_()), ", got ", Quote(req.values(0))));
    }
    for (int j = 0; j < req.values_size(); ++j) {
      TOLLGATE_RETURN_IF_ERROR(r.At(Index(vpath, j), core::ValidateLabelValue(req.values(j))));
    }
    out.match_expressions.push_back(core::LabelSelectorRequirement{
        req.key(), req.operator_(), {req.values().begin(), req.values().end()}});
  }
  return out;
}

// --- Resource groups
// ------------------------------------------------------------------------------

struct QuotaRules {
  // Borrowing and lending limits need somewhere to borrow from or lend to.
  bool has_parent = false;
  // The field that would provide it, for the message.
  absl::string_view parent_field;
  // Kueue checks lendingLimit <= nominalQuota for ClusterQueues only: a Cohort's nominal quota
  // is an addition to its members', so it may lend more than it holds itself.
  bool lending_within_nominal = false;
};

absl::StatusOr<core::ResourceQuotaSpec> ResourceQuotaFromProto(const Reporter& r,
                                                               absl::string_view path,
                                                               const v1::ResourceQuota& rq,
                                                               const QuotaRules& rules) {
  core::ResourceQuotaSpec out;
  out.resource = rq.name();
  TOLLGATE_ASSIGN_OR_RETURN(out.nominal, ParseResourceAmount(r, Child(path, "nominalQuota"),
                                                             rq.name(), rq.nominal_quota()));
  auto limit = [&](absl::string_view field, const std::string& text) -> absl::StatusOr<int64_t> {
    const std::string lpath = Child(path, field);
    TOLLGATE_ASSIGN_OR_RETURN(int64_t v, ParseResourceAmount(r, lpath, rq.name(), text));
    if (!rules.has_parent) {
      return r.Invalid(lpath, absl::StrCat("must not be set when ", rules.parent_field,
                                           " is empty, got ", Quote(text)));
    }
    return v;
  };
  if (rq.has_borrowing_limit()) {
    TOLLGATE_ASSIGN_OR_RETURN(out.borrowing_limit, limit("borrowingLimit", rq.borrowing_limit()));
  }
  if (rq.has_lending_limit()) {
    TOLLGATE_ASSIGN_OR_RETURN(out.lending_limit, limit("lendingLimit", rq.lending_limit()));
    if (rules.lending_within_nominal && *out.lending_limit > out.nominal) {
      return r.Invalid(
          Child(path, "lendingLimit"),
          absl::StrCat("must be less than or equal to nominalQuota ", Quote(rq.nominal_quota()),
                       ", got ", Quote(rq.lending_limit())));
    }
  }
  return out;
}

absl::StatusOr<std::vector<core::ResourceGroupSpec>> ResourceGroupsFromProto(
    const Reporter& r, const RepeatedPtrField<v1::ResourceGroup>& groups, const QuotaRules& rules) {
  const std::string path = "spec.resourceGroups";
  TOLLGATE_RETURN_IF_ERROR(CheckMaxItems(r, path, groups.size(), kMaxResourceGroups));
  std::vector<core::ResourceGroupSpec> out;
  // Each resource and each flavor belongs to one group, so a (flavor, resource) pair names one
  // quota.
  std::set<std::string> seen_resources;
  std::set<std::string> seen_flavors;
  int total_flavors = 0;
  int total_covered = 0;
  for (int i = 0; i < groups.size(); ++i) {
    const v1::ResourceGroup& g = groups[i];
    const std::string gpath = Index(path, i);
    core::ResourceGroupSpec group;

    const std::string cpath = Child(gpath, "coveredResources");
    TOLLGATE_RETURN_IF_ERROR(CheckMinItems(r, cpath, g.covered_resources_size(), 1));
    TOLLGATE_RETURN_IF_ERROR(
        CheckMaxItems(r, cpath, g.covered_resources_size(), kMaxCoveredResourcesPerGroup));
    for (int j = 0; j < g.covered_resources_size(); ++j) {
      const std::string& name = g.covered_resources(j);
      const std::string rpath = Index(cpath, j);
      TOLLGATE_RETURN_IF_ERROR(r.At(rpath, core::ValidateQualifiedName(name)));
      if (!seen_resources.insert(name).second) {
        return r.Invalid(rpath, absl::StrCat("duplicate value ", Quote(name),
                                             ": a resource may be covered by only one "
                                             "resourceGroup, once"));
      }
      group.covered_resources.push_back(name);
    }
    total_covered += g.covered_resources_size();

    const std::string fpath = Child(gpath, "flavors");
    TOLLGATE_RETURN_IF_ERROR(CheckMinItems(r, fpath, g.flavors_size(), 1));
    TOLLGATE_RETURN_IF_ERROR(CheckMaxItems(r, fpath, g.flavors_size(), kMaxFlavorsPerGroup));
    int combinations = 0;
    for (int j = 0; j < g.flavors_size(); ++j) {
      const v1::FlavorQuotas& f = g.flavors(j);
      const std::string flpath = Index(fpath, j);
      const std::string npath = Child(flpath, "name");
      TOLLGATE_RETURN_IF_ERROR(ValidateName(r, npath, f.name(), /*label=*/false));
      if (!seen_flavors.insert(f.name()).second) {
        return r.Invalid(npath, absl::StrCat("duplicate value ", Quote(f.name()),
                                             ": a flavor may appear in only one resourceGroup, "
                                             "once"));
      }
      const std::string qpath = Child(flpath, "resources");
      if (f.resources_size() != g.covered_resources_size()) {
        return r.Invalid(qpath, absl::StrCat("must list the ", g.covered_resources_size(),
                                             " coveredResources of its group, got ",
                                             f.resources_size(), " resources"));
      }
      combinations += f.resources_size();
      core::FlavorQuotasSpec flavor;
      flavor.flavor = f.name();
      for (int k = 0; k < f.resources_size(); ++k) {
        const v1::ResourceQuota& rq = f.resources(k);
        const std::string rqpath = Index(qpath, k);
        if (rq.name() != g.covered_resources(k)) {
          return r.Invalid(Child(rqpath, "name"),
                           absl::StrCat("must match coveredResources[", k, "] ",
                                        Quote(g.covered_resources(k)), ", got ", Quote(rq.name())));
        }
        TOLLGATE_ASSIGN_OR_RETURN(core::ResourceQuotaSpec quota,
                                  ResourceQuotaFromProto(r, rqpath, rq, rules));
        flavor.resources.push_back(std::move(quota));
      }
      group.flavors.push_back(std::move(flavor));
    }
    total_flavors += g.flavors_size();
    if (combinations > kMaxFlavorResourceCombinationsPerGroup) {
      return r.Invalid(
          gpath, absl::StrCat("number of flavor-resource combinations must be at "
                              "most ",
                              kMaxFlavorResourceCombinationsPerGroup, ", got ", combinations));
    }
    out.push_back(std::move(group));
  }
  if (total_flavors > kMaxTotalFlavors) {
    return r.Invalid(path, absl::StrCat("total number of flavors must be at most ",
                                        kMaxTotalFlavors, ", got ", total_flavors));
  }
  if (total_covered > kMaxTotalCoveredResources) {
    return r.Invalid(path, absl::StrCat("total number of covered resources must be at most ",
                                        kMaxTotalCoveredResources, ", got ", total_covered));
  }
  return out;
}

void ResourceGroupsToProto(const std::vector<core::ResourceGroupSpec>& groups,
                           RepeatedPtrField<v1::ResourceGroup>* out) {
  for (const core::ResourceGroupSpec& g : groups) {
    v1::ResourceGroup* pg = out->Add();
    for (const std::string& res : g.covered_resources) pg->add_covered_resources(res);
    for (const core::FlavorQuotasSpec& f : g.flavors) {
      v1::FlavorQuotas* pf = pg->add_flavors();
      pf->set_name(f.flavor);
      for (const core::ResourceQuotaSpec& q : f.resources) {
        v1::ResourceQuota* pq = pf->add_resources();
        pq->set_name(q.resource);
        pq->set_nominal_quota(core::FormatResourceScalar(q.resource, q.nominal));
        if (q.borrowing_limit.has_value()) {
          pq->set_borrowing_limit(core::FormatResourceScalar(q.resource, *q.borrowing_limit));
        }
        if (q.lending_limit.has_value()) {
          pq->set_lending_limit(core::FormatResourceScalar(q.resource, *q.lending_limit));
        }
      }
    }
  }
}

void TolerationsToProto(const std::vector<core::Toleration>& tols,
                        RepeatedPtrField<v1::Toleration>* out) {
  for (const core::Toleration& t : tols) {
    v1::Toleration* pt = out->Add();
    pt->set_key(t.key);
    pt->set_operator_(t.op);
    pt->set_value(t.value);
    pt->set_effect(t.effect);
  }
}

void LabelsToProto(const core::Labels& labels, StringMap* out) {
  for (const auto& [k, v] : labels) (*out)[k] = v;
}

// --- Workloads
// ------------------------------------------------------------------------------------

// `path` is built only for an error: workloads are decoded on every Submit and by the million
// on restart.
absl::StatusOr<core::PodSetSpec> PodSetFromProto(const Reporter& r, LazyPath path,
                                                 const v1::PodSet& ps) {
  core::PodSetSpec out;
  out.name = ps.name().empty() ? std::string(kDefaultPodSetName) : ps.name();
  TOLLGATE_RETURN_IF_ERROR(ValidateName(
      r, [&] { return Child(path(), "name"); }, out.name, /*label=*/true));
  if (ps.count() < 0) {
    return r.Invalid(Child(path(), "count"),
                     absl::StrCat("must be greater than or equal to 0, got ", ps.count()));
  }
  out.count = ps.count();
  if (ps.has_min_count()) {
    if (ps.min_count() < 1) {
      return r.Invalid(Child(path(), "minCount"),
                       absl::StrCat("must be greater than or equal to 1, got ", ps.min_count()));
    }
    if (ps.min_count() > ps.count()) {
      return r.Invalid(Child(path(), "minCount"),
                       absl::StrCat("must be less than or equal to count (", ps.count(), "), got ",
                                    ps.min_count()));
    }
    out.min_count = ps.min_count();
  }
  // In resource order, as Sorted() would give, without copying the map.
  using Request = google::protobuf::Map<std::string, std::string>::value_type;
  absl::InlinedVector<const Request*, 4> requests;
  for (const Request& request : ps.requests()) requests.push_back(&request);
  std::sort(requests.begin(), requests.end(),
            [](const Request* a, const Request* b) { return a->first < b->first; });
  out.requests.reserve(requests.size());
  for (const Request* request : requests) {
    const std::string& resource = request->first;
    auto kpath = [&] { return Key(Child(path(), "requests"), resource); };
    if (absl::Status valid = core::ValidateQualifiedName(resource); !valid.ok()) {
      return r.At(kpath(), valid);
    }
    if (resource == kReservedPodsResource) {
      return r.Invalid(kpath(), absl::StrCat("the resource name ", Quote(resource),
                                             " is reserved for internal Kueue use"));
    }
    TOLLGATE_ASSIGN_OR_RETURN(int64_t amount,
                              ParseResourceAmount(r, kpath, resource, request->second));
    out.requests.emplace_back(resource, amount);
  }
  if (!ps.node_selector().empty()) {
    TOLLGATE_RETURN_IF_ERROR(
        LabelsFromProto(r, Child(path(), "nodeSelector"), ps.node_selector(), &out.node_selector));
  }
  if (!ps.tolerations().empty()) {
    TOLLGATE_ASSIGN_OR_RETURN(
        out.tolerations, TolerationsFromProto(r, Child(path(), "tolerations"), ps.tolerations()));
  }
  return out;
}

constexpr EnumValue<core::WorkloadState> kWorkloadStates[] = {
    {"WORKLOAD_STATE_PENDING", core::WorkloadState::kPending},
    {"WORKLOAD_STATE_ADMITTED", core::WorkloadState::kAdmitted},
    {"WORKLOAD_STATE_EVICTING", core::WorkloadState::kEvicting},
    {"WORKLOAD_STATE_FINISHED", core::WorkloadState::kFinished},
};

v1::WorkloadState StateToProto(core::WorkloadState state) {
  switch (state) {
    case core::WorkloadState::kPending:
      return v1::WORKLOAD_STATE_PENDING;
    case core::WorkloadState::kAdmitted:
      return v1::WORKLOAD_STATE_ADMITTED;
    case core::WorkloadState::kEvicting:
      return v1::WORKLOAD_STATE_EVICTING;
    case core::WorkloadState::kFinished:
      return v1::WORKLOAD_STATE_FINISHED;
  }
  return v1::WORKLOAD_STATE_UNSPECIFIED;
}

absl::StatusOr<core::WorkloadState> StateFromProto(const Reporter& r, v1::WorkloadState state) {
  switch (state) {
    case v1::WORKLOAD_STATE_UNSPECIFIED:
    case v1::WORKLOAD_STATE_PENDING:
      return core::WorkloadState::kPending;
    case v1::WORKLOAD_STATE_ADMITTED:
      return core::WorkloadState::kAdmitted;
    case v1::WORKLOAD_STATE_EVICTING:
      return core::WorkloadState::kEvicting;
    case v1::WORKLOAD_STATE_FINISHED:
      return core::WorkloadState::kFinished;
    default:
      break;
  }
  // Open enums can carry numbers from a newer writer.
  return r.Invalid("status.state",
                   absl::StrCat("unsupported value ", static_cast<int>(state),
                                ": supported values: ", SupportedValues(kWorkloadStates)));
}

absl::StatusOr<core::Admission> AdmissionFromProto(const Reporter& r, const v1::Admission& a) {
  const std::string path = "status.admission";
  core::Admission out;
  TOLLGATE_RETURN_IF_ERROR(
      ValidateName(r, Child(path, "clusterQueue"), a.cluster_queue(), /*label=*/false));
  out.cluster_queue = a.cluster_queue();
  const std::string apath = Child(path, "podSetAssignments");
  for (int i = 0; i < a.pod_set_assignments_size(); ++i) {
    const v1::PodSetAssignment& psa = a.pod_set_assignments(i);
    const std::string ppath = Index(apath, i);
    core::PodSetAssignment assignment;
    assignment.name = psa.name();
    if (psa.count() < 0) {
      return r.Invalid(Child(ppath, "count"),
                       absl::StrCat("must be greater than or equal to 0, got ", psa.count()));
    }
    assignment.count = psa.count();
    for (const auto& [resource, flavor] : Sorted(psa.flavors())) {
      assignment.flavors.emplace_back(resource, flavor);
    }
    for (const auto& [resource, text] : Sorted(psa.resource_usage())) {
      TOLLGATE_ASSIGN_OR_RETURN(
          int64_t amount,
          ParseResourceAmount(r, Key(Child(ppath, "resourceUsage"), resource), resource, text));
      assignment.resource_usage.emplace_back(resource, amount);
    }
    out.pod_sets.push_back(std::move(assignment));
  }
  return out;
}

void AdmissionToProto(const core::Admission& a, v1::Admission* out) {
  out->set_cluster_queue(a.cluster_queue);
  for (const core::PodSetAssignment& psa : a.pod_sets) {
    v1::PodSetAssignment* p = out->add_pod_set_assignments();
    p->set_name(psa.name);
    p->set_count(psa.count);
    for (const auto& [resource, flavor] : psa.flavors) (*p->mutable_flavors())[resource] = flavor;
    for (const auto& [resource, amount] : psa.resource_usage) {
      (*p->mutable_resource_usage())[resource] = core::FormatResourceScalar(resource, amount);
    }
  }
}

absl::StatusOr<bool> ConditionStatusFromProto(const Reporter& r, LazyPath path,
                                              absl::string_view status) {
  if (status == "True") return true;
  // The core's conditions are two-valued; Unknown reads as not (yet) true.
  if (status == "False" || status == "Unknown") return false;
  return r.Invalid(path(), absl::StrCat("unsupported value ", Quote(status),
                                        ": supported values: \"True\", \"False\", \"Unknown\""));
}

}  // namespace

// --- API -> core
// ----------------------------------------------------------------------------------

absl::StatusOr<core::NamespaceSpec> NamespaceFromProto(const v1::Namespace& ns) {
  const Reporter r("Namespace", "", ns.metadata().name());
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
  return out;
}

absl::StatusOr<core::ClusterQueueSpec> ClusterQueueFromProto(const v1::ClusterQueue& cq) {
  const Reporter r("ClusterQueue", "", cq.metadata().name());
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
  return out;
}

absl::StatusOr<core::CohortSpec> CohortFromProto(const v1::Cohort& cohort) {
  const Reporter r("Cohort", "", cohort.metadata().name());
  TOLLGATE_RETURN_IF_ERROR(
      ValidateMetadata(r, cohort.metadata(), NameRule::kDns1123Subdomain, /*namespaced=*/false));
  const v1::CohortSpec& s = cohort.spec();
  core::CohortSpec out;
  out.name = cohort.metadata().name();
  if (!s.parent().empty()) {
    TOLLGATE_RETURN_IF_ERROR(ValidateName(r, "spec.parent", s.parent(), /*label=*/false));
    if (s.parent() == out.name) {
      return r.Invalid("spec.parent",
                       absl::StrCat("must not be the cohort itself, got ", Quote(s.parent())));
    }
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
  return out;
}

absl::StatusOr<core::PriorityClassSpec> PriorityClassFromProto(
    const v1::WorkloadPriorityClass& pc) {
  const Reporter r("WorkloadPriorityClass", "", pc.metadata().name());
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
  TOLLGATE_RETURN_IF_ERROR(
      ValidateMetadata(r, pc.metadata(), NameRule::kDns1123Subdomain, /*namespaced=*/false));
  TOLLGATE_RETURN_IF_ERROR(CheckOneOf(r, "preemptionPolicy", pc.preemption_policy(),
                                      {"PreemptLowerPriority", "Never"}, /*allow_empty=*/true));
  return core::PriorityClassSpec{
      .name = pc.metadata().name(), .value = pc.value(), .is_pod_priority_class = true};
}

absl::StatusOr<core::WorkloadSpec> WorkloadSpecFromProto(const v1::Workload& wl) {
  const Reporter r = WorkloadReporter(wl);
  TOLLGATE_RETURN_IF_ERROR(
      ValidateMetadata(r, wl.metadata(), NameRule::kDns1123Subdomain, /*namespaced=*/true));
  const v1::WorkloadSpec& s = wl.spec();
  core::WorkloadSpec out;
  out.namespace_name = wl.metadata().namespace_();
  out.name = wl.metadata().name();

  // An empty queue name stays empty: the core resolves it to the namespace's "default"
  // LocalQueue, or refuses the workload when the namespace has none.
  if (!s.queue_name().empty()) {
    TOLLGATE_RETURN_IF_ERROR(ValidateName(r, "spec.queueName", s.queue_name(), /*label=*/false));
  }
  out.queue_name = s.queue_name();
  if (!s.priority_class_name().empty()) {
    TOLLGATE_RETURN_IF_ERROR(
        ValidateName(r, "spec.priorityClassName", s.priority_class_name(), /*label=*/false));
  }
  out.priority_class_name = s.priority_class_name();
  if (s.has_priority()) out.priority = s.priority();

  TOLLGATE_RETURN_IF_ERROR(CheckMinItems(r, "spec.podSets", s.pod_sets_size(), 1));
  TOLLGATE_RETURN_IF_ERROR(CheckMaxItems(r, "spec.podSets", s.pod_sets_size(), kMaxPodSets));
  int with_min_count = 0;
  out.pod_sets.reserve(s.pod_sets_size());
  for (int i = 0; i < s.pod_sets_size(); ++i) {
    auto path = [i] { return Index("spec.podSets", i); };
    TOLLGATE_ASSIGN_OR_RETURN(core::PodSetSpec ps, PodSetFromProto(r, path, s.pod_sets(i)));
    // At most kMaxPodSets, so a scan beats building a set.
    for (const core::PodSetSpec& earlier : out.pod_sets) {
      if (earlier.name == ps.name) {
        return r.Invalid(Child(path(), "name"), absl::StrCat("duplicate value ", Quote(ps.name)));
      }
    }
    if (ps.min_count.has_value()) ++with_min_count;
    out.pod_sets.push_back(std::move(ps));
  }
  // Kueue's webhook: partial admission shrinks a single pod set.
  if (with_min_count > 1) {
    return r.Invalid("spec.podSets",
                     absl::StrCat("at most one podSet can use minCount, got ", with_min_count));
  }

  out.active = s.has_active() ? s.active() : true;
  out.non_preemptible = s.non_preemptible();
  if (s.checkpoint_grace_seconds() < 0) {
    return r.Invalid(
        "spec.checkpointGraceSeconds",
        absl::StrCat("must be greater than or equal to 0, got ", s.checkpoint_grace_seconds()));
  }
  out.checkpoint_grace_seconds = s.checkpoint_grace_seconds();
  return out;
}

absl::StatusOr<core::Workload> WorkloadFromStoredProto(const v1::Workload& wl) {
  const Reporter r = WorkloadReporter(wl);
  core::Workload out;
  TOLLGATE_ASSIGN_OR_RETURN(out.spec, WorkloadSpecFromProto(wl));
  out.uid = wl.metadata().uid();
  TOLLGATE_ASSIGN_OR_RETURN(out.creation_time, TimeFromProto(r, "metadata.creationTimestamp",
                                                             wl.metadata().has_creation_timestamp(),
                                                             wl.metadata().creation_timestamp()));

  const v1::WorkloadStatus& s = wl.status();
  core::WorkloadStatus& st = out.status;
  out.priority = s.priority();
  TOLLGATE_ASSIGN_OR_RETURN(st.state, StateFromProto(r, s.state()));
  if (s.has_admission()) {
    TOLLGATE_ASSIGN_OR_RETURN(st.admission, AdmissionFromProto(r, s.admission()));
  }
  TOLLGATE_ASSIGN_OR_RETURN(
      st.admission_time,
      TimeFromProto(r, "status.admissionTime", s.has_admission_time(), s.admission_time()));
  st.pending_message = s.pending_message();
  st.pods_ready = s.pods_ready();
  st.deactivated = s.deactivated();
  // Most stored workloads have no history: allocate it only when something is set.
  core::WorkloadHistory history;
  history.preemption_count = s.preemption_count();
  history.last_preemption_reason = s.last_preemption_reason();
  history.requeue_count = s.requeue_state().count();
  TOLLGATE_ASSIGN_OR_RETURN(history.requeue_at, TimeFromProto(r, "status.requeueState.requeueAt",
                                                              s.requeue_state().has_requeue_at(),
                                                              s.requeue_state().requeue_at()));
  TOLLGATE_ASSIGN_OR_RETURN(
      history.pods_ready_eviction_time,
      TimeFromProto(r, "status.podsReadyEvictionTime", s.has_pods_ready_eviction_time(),
                    s.pods_ready_eviction_time()));
  TOLLGATE_ASSIGN_OR_RETURN(
      history.evicted_at, TimeFromProto(r, "status.evictedAt", s.has_evicted_at(), s.evicted_at()));
  TOLLGATE_ASSIGN_OR_RETURN(history.eviction_deadline,
                            TimeFromProto(r, "status.evictionDeadline", s.has_eviction_deadline(),
                                          s.eviction_deadline()));
  for (int i = 0; i < s.recent_preemptions_size(); ++i) {
    TOLLGATE_ASSIGN_OR_RETURN(absl::Time t,
                              TimeFromProto(
                                  r, [i] { return Index("status.recentPreemptions", i); }, true,
                                  s.recent_preemptions(i)));
    history.recent_preemptions.push_back(t);
  }
  TOLLGATE_ASSIGN_OR_RETURN(history.last_checkpoint_time,
                            TimeFromProto(r, "status.lastCheckpointTime",
                                          s.has_last_checkpoint_time(), s.last_checkpoint_time()));
  if (!(history == core::WorkloadHistory{})) st.mutable_history() = std::move(history);

  st.conditions.reserve(s.conditions_size());
  for (int i = 0; i < s.conditions_size(); ++i) {
    const v1::Condition& c = s.conditions(i);
    auto cpath = [i] { return Index("status.conditions", i); };
    core::Condition cond;
    cond.type = c.type();
    TOLLGATE_ASSIGN_OR_RETURN(cond.status,
                              ConditionStatusFromProto(
                                  r, [&] { return Child(cpath(), "status"); }, c.status()));
    cond.reason = c.reason();
    cond.message = c.message();
    TOLLGATE_ASSIGN_OR_RETURN(cond.last_transition_time,
                              TimeFromProto(
                                  r, [&] { return Child(cpath(), "lastTransitionTime"); },
                                  c.has_last_transition_time(), c.last_transition_time()));
    st.conditions.push_back(std::move(cond));
  }
  // Keep the core's bound even if an older build stored more events.
  const int first_event = s.events_size() > static_cast<int>(core::kMaxWorkloadEvents)
                              ? s.events_size() - static_cast<int>(core::kMaxWorkloadEvents)
                              : 0;
  st.events.reserve(s.events_size() - first_event);
  for (int i = first_event; i < s.events_size(); ++i) {
    const v1::WorkloadEvent& e = s.events(i);
    core::WorkloadEvent event;
    TOLLGATE_ASSIGN_OR_RETURN(
        event.time,
        TimeFromProto(
            r, [i] { return Child(Index("status.events", i), "time"); }, e.has_time(), e.time()));
    event.reason = e.reason();
    event.message = e.message();
    st.events.push_back(std::move(event));
  }
  return out;
}

// --- core -> API
// ----------------------------------------------------------------------------------

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

void WorkloadToProto(const core::Workload& wl, v1::Workload* out) {
  v1::ObjectMeta* meta = out->mutable_metadata();
  meta->set_name(wl.spec.name);
  meta->set_namespace_(wl.spec.namespace_name);
  meta->set_uid(wl.uid);
  // InfinitePast means "never" in the core and "unset" in the API, here and below.
  if (wl.creation_time != absl::InfinitePast()) {
    TimeToProto(wl.creation_time, meta->mutable_creation_timestamp());
  } else {
    meta->clear_creation_timestamp();
  }

  v1::WorkloadSpec* s = out->mutable_spec();
  s->Clear();
  s->set_queue_name(wl.spec.queue_name);
  s->set_priority_class_name(wl.spec.priority_class_name);
  if (wl.spec.priority.has_value()) s->set_priority(*wl.spec.priority);
  for (const core::PodSetSpec& ps : wl.spec.pod_sets) {
    v1::PodSet* p = s->add_pod_sets();
    p->set_name(ps.name);
    p->set_count(ps.count);
    if (ps.min_count.has_value()) p->set_min_count(*ps.min_count);
    for (const auto& [resource, amount] : ps.requests) {
      (*p->mutable_requests())[resource] = core::FormatResourceScalar(resource, amount);
    }
    LabelsToProto(ps.node_selector, p->mutable_node_selector());
    TolerationsToProto(ps.tolerations, p->mutable_tolerations());
  }
  s->set_active(wl.spec.active);
  s->set_non_preemptible(wl.spec.non_preemptible);
  s->set_checkpoint_grace_seconds(wl.spec.checkpoint_grace_seconds);

  const core::WorkloadStatus& st = wl.status;
  v1::WorkloadStatus* ps = out->mutable_status();
  ps->Clear();
  ps->set_state(StateToProto(st.state));
  if (st.admission.has_value()) AdmissionToProto(*st.admission, ps->mutable_admission());
  for (const core::Condition& c : st.conditions) {
    v1::Condition* pc = ps->add_conditions();
    pc->set_type(c.type);
    pc->set_status(c.status ? "True" : "False");
    pc->set_reason(c.reason);
    pc->set_message(c.message);
    if (c.last_transition_time != absl::InfinitePast()) {
      TimeToProto(c.last_transition_time, pc->mutable_last_transition_time());
    }
  }
  ps->set_pending_message(st.pending_message);
  ps->set_priority(wl.priority);
  const core::WorkloadHistory& history = st.history();
  ps->set_preemption_count(history.preemption_count);
  ps->set_last_preemption_reason(history.last_preemption_reason);
  if (history.requeue_count != 0 || history.requeue_at != absl::InfinitePast()) {
    v1::RequeueState* rq = ps->mutable_requeue_state();
    rq->set_count(history.requeue_count);
    if (history.requeue_at != absl::InfinitePast())
      TimeToProto(history.requeue_at, rq->mutable_requeue_at());
  }
  if (st.admission_time != absl::InfinitePast()) {
    TimeToProto(st.admission_time, ps->mutable_admission_time());
  }
  for (const core::WorkloadEvent& e : st.events) {
    v1::WorkloadEvent* pe = ps->add_events();
    if (e.time != absl::InfinitePast()) TimeToProto(e.time, pe->mutable_time());
    pe->set_reason(e.reason);
    pe->set_message(e.message);
  }
  ps->set_pods_ready(st.pods_ready);
  ps->set_deactivated(st.deactivated);
  if (history.evicted_at != absl::InfinitePast())
    TimeToProto(history.evicted_at, ps->mutable_evicted_at());
  if (history.eviction_deadline != absl::InfinitePast()) {
    TimeToProto(history.eviction_deadline, ps->mutable_eviction_deadline());
  }
  if (history.pods_ready_eviction_time != absl::InfinitePast()) {
    TimeToProto(history.pods_ready_eviction_time, ps->mutable_pods_ready_eviction_time());
  }
  for (absl::Time t : history.recent_preemptions) TimeToProto(t, ps->add_recent_preemptions());
  if (history.last_checkpoint_time != absl::InfinitePast()) {
    TimeToProto(history.last_checkpoint_time, ps->mutable_last_checkpoint_time());
  }
}

}  // namespace tollgate::services
