#pragma once

// Kubernetes resource.Quantity semantics (k8s.io/apimachinery/pkg/api/resource), so that quotas
// and requests parse, round and print exactly as they would in a Kueue cluster.

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tollgate::core {

class Quantity {
 public:
  // How ToString() spells the value; mirrors resource.Format.
  enum class Format {
    kDecimalSI,        // 12M, 500m
    kBinarySI,         // 12Mi; falls back to DecimalSI when it cannot be exact
    kDecimalExponent,  // 12e6
  };

  // Zero, DecimalSI.
  Quantity() = default;

  // Accepts `[+-]<number><suffix>` where <number> is digits with an optional decimal point and
  // <suffix> is one of "", n u m k M G T P E, Ki Mi Gi Ti Pi Ei, or e/E followed by a signed
  // integer. Whitespace anywhere is rejected. As in Kubernetes, values finer than 1n are rounded
  // away from zero to 1n, and binary-suffixed values are capped at INT64_MAX in magnitude;
  // decimal values are kept exactly however large.
  static absl::StatusOr<Quantity> Parse(absl::string_view text);

  // Exact value `v` (or `milli`/1000) that prints in format `f`.
  static Quantity FromValue(int64_t v, Format f);
  static Quantity FromMilli(int64_t milli, Format f);

  // The value rounded away from zero to an integer (resp. to thousandths, times 1000), clamped
  // to [INT64_MIN, INT64_MAX] where Kubernetes would overflow.
  int64_t Value() const;
  int64_t MilliValue() const;
  // The same, or nullopt when the value does not fit in an int64 (including a binary-suffixed
  // value Parse capped at INT64_MAX): callers that must not store a saturated amount reject it.
  std::optional<int64_t> CheckedValue() const;
  std::optional<int64_t> CheckedMilliValue() const;

  // Exact arithmetic, as Kubernetes' inf.Dec math (Kueue's resource transformations multiply
  // and add quantities this way before anything is rounded). The product keeps this quantity's
  // format; the sum takes the format of its first non-zero term, as Quantity.Add does. Cost
  // grows with the digits and with the gap between the terms' exponents.
  Quantity Times(const Quantity& other) const;
  Quantity Plus(const Quantity& other) const;

  bool IsZero() const { return digits_.empty(); }
  bool IsNegative() const { return negative_ && !digits_.empty(); }
  Format format() const { return format_; }

  // Exactly what Quantity.String() returns. That includes its habit of returning the parsed text
  // verbatim when its parser's fast path deems it canonical, so Parse("+1") prints "+1" and
  // Parse("1.500k") prints "1.500k"; this is also what the API server stores and Kueue echoes.
  std::string ToString() const;

  // The computed canonical form, ignoring how the input was spelled: Parse("+1") gives "1" and
  // Parse("1.500k") gives "1500". Equal for equal values of the same format.
  std::string CanonicalString() const;

 private:
  Quantity(bool negative, std::string digits, int64_t exponent, Format format);

  // ceil(|value| / 10^scale) away from zero, with the sign applied and saturated; `fits` (when
  // not null) tells whether it was exact rather than saturated.
  int64_t ScaledValue(int64_t scale, bool* fits = nullptr) const;

  // value = (negative_ ? -1 : 1) * digits_ * 10^exponent_. digits_ has no leading or trailing
  // '0' (empty means zero), which makes the representation unique and lets rounding tell
  // exactness from the length alone.
  bool negative_ = false;
  std::string digits_;
  int64_t exponent_ = 0;
  Format format_ = Format::kDecimalSI;
  // Parse capped a binary-suffixed value at INT64_MAX, as Kubernetes does.
  bool capped_ = false;
  // Text ToString() returns as is; empty when it must be computed.
  std::string cached_;
};

// Kueue's int64 view of a quantity: milli-units for "cpu", whole units for everything else.
int64_t ResourceScalar(absl::string_view resource_name, const Quantity& q);
// The same without saturating: INVALID_ARGUMENT (saying the unit and the maximum) when the value
// does not fit, so `1e400`, `9223372036854775808` or `9Ei` are refused rather than stored as
// INT64_MAX. The caller adds the field and the text it parsed.
absl::StatusOr<int64_t> CheckedResourceScalar(absl::string_view resource_name, const Quantity& q);

// Inverse of ResourceScalar for display: "cpu" in DecimalSI milli-units, memory-like resources
// ("memory", "ephemeral-storage", "hugepages-*") in BinarySI, anything else in DecimalSI.
std::string FormatResourceScalar(absl::string_view resource_name, int64_t v);

}  // namespace tollgate::core
