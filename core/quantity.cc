#include "core/quantity.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/error_text.h"

namespace tollgate::core {
namespace {

// Kubernetes' wording, so messages match what kubectl users already know.
constexpr absl::string_view kFormatWrong =
    "quantities must match the regular expression "
    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
constexpr absl::string_view kSuffixWrong = "unable to parse quantity's suffix";

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();
constexpr uint64_t kInt64MinMagnitude = uint64_t{1} << 63;
// Binary quantities are capped here at parse time, as in Kubernetes.
constexpr absl::string_view kInt64MaxDigits = "9223372036854775807";
// Suffixes sit on this nano grid; finer input is rounded away from zero onto it.
constexpr int64_t kNanoExponent = -9;

absl::Status InvalidQuantity(absl::string_view text, absl::string_view reason) {
  return absl::InvalidArgumentError(
      absl::StrCat("invalid quantity ", QuoteValue(text), ": ", reason));
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// The characters Kubernetes lets into the letter part of a suffix before validating it.
bool IsSuffixLetter(char c) {
  return absl::string_view("eEinumkKMGTP").find(c) != absl::string_view::npos;
}

struct DecimalSuffix {
  absl::string_view text;
  int64_t exponent;
};
constexpr DecimalSuffix kDecimalSuffixes[] = {
    {"n", -9}, {"u", -6}, {"m", -3}, {"", 0},   {"k", 3},
    {"M", 6},  {"G", 9},  {"T", 12}, {"P", 15}, {"E", 18},
};
// Index i is 1024^(i+1).
constexpr absl::string_view kBinarySuffixes[] = {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};

struct Suffix {
  bool binary = false;
  // Power of 10 for decimal suffixes, power of 1024 for binary ones.
  int64_t exponent = 0;
  Quantity::Format format = Quantity::Format::kDecimalSI;
};

// Accepts what Go's strconv.ParseInt(s, 10, 64) does, further limited to int32 because
// Kubernetes truncates the exponent to int32 and we would rather reject than wrap.
bool ParseExponent(absl::string_view s, int64_t* out) {
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return false;
  int64_t value = 0;
  for (char c : s) {
    if (!IsDigit(c)) return false;
    value = value * 10 + (c - '0');
    // Checking per digit keeps `value` far from int64 overflow.
    if (value > int64_t{std::numeric_limits<int32_t>::max()} + 1) return false;
  }
  if (negative) value = -value;
  if (value < std::numeric_limits<int32_t>::min() || value > std::numeric_limits<int32_t>::max()) {
    return false;
  }
  *out = value;
  return true;
}

bool InterpretSuffix(absl::string_view text, Suffix* out) {
  for (const DecimalSuffix& s : kDecimalSuffixes) {
    if (text == s.text) {
      *out = {false, s.exponent, Quantity::Format::kDecimalSI};
      return true;
    }
  }
  for (int i = 0; i < 6; ++i) {
    if (text == kBinarySuffixes[i]) {
      *out = {true, i + 1, Quantity::Format::kBinarySI};
      return true;
    }
  }
  // A lone "E" is exa (matched above); "e"/"E" followed by an integer is an exponent.
  int64_t exponent = 0;
  if (text.size() > 1 && (text[0] == 'e' || text[0] == 'E') &&
      ParseExponent(text.substr(1), &exponent)) {
    *out = {false, exponent, Quantity::Format::kDecimalExponent};
    return true;
  }
  return false;
}

// Decimal-digit bignum helpers. Values are (digits, exponent) pairs; performance is not a concern
// because the scheduler works on int64 scalars and only parses at the API boundary.

void MultiplyDigits(std::string* digits, uint32_t factor) {
  uint64_t carry = 0;
  for (auto it = digits->rbegin(); it != digits->rend(); ++it) {
    uint64_t product = static_cast<uint64_t>(*it - '0') * factor + carry;
    *it = static_cast<char>('0' + product % 10);
    carry = product / 10;
  }
  std::string prefix;
  while (carry > 0) {
    prefix.push_back(static_cast<char>('0' + carry % 10));
    carry /= 10;
  }
  digits->insert(0, std::string(prefix.rbegin(), prefix.rend()));
}

void IncrementDigits(std::string* digits) {
  for (auto it = digits->rbegin(); it != digits->rend(); ++it) {
    if (*it != '9') {
      ++*it;
      return;
    }
    *it = '0';
  }
  digits->insert(digits->begin(), '1');
}

// Strips leading zeros and moves trailing zeros into the exponent; zero becomes ("", 0).
void Normalize(std::string* digits, int64_t* exponent) {
  size_t first = digits->find_first_not_of('0');
  if (first == std::string::npos) {
    digits->clear();
    *exponent = 0;
    return;
  }
  size_t last = digits->find_last_not_of('0');
  *exponent += static_cast<int64_t>(digits->size() - 1 - last);
  *digits = digits->substr(first, last - first + 1);
}

// Position of the most significant digit: the number of integer digits when positive.
int64_t Order(const std::string& digits, int64_t exponent) {
  return static_cast<int64_t>(digits.size()) + exponent;
}

// Compares normalized non-negative values.
int CompareMagnitude(const std::string& a, int64_t a_exp, const std::string& b, int64_t b_exp) {
  if (a.empty() || b.empty()) return static_cast<int>(!a.empty()) - static_cast<int>(!b.empty());
  int64_t a_order = Order(a, a_exp);
  int64_t b_order = Order(b, b_exp);
  if (a_order != b_order) return a_order < b_order ? -1 : 1;
  // Same leading position, so the strings are aligned; normalization makes a proper prefix the
  // smaller value.
  int c = a.compare(b);
  return (c > 0) - (c < 0);
}

// The integer value of a normalized magnitude, if it is an integer that fits.
bool IntegerMagnitude(const std::string& digits, int64_t exponent, uint64_t* out) {
  if (exponent < 0 || Order(digits, exponent) > 20) return false;
  uint64_t value = 0;
  for (int64_t i = 0; i < Order(digits, exponent); ++i) {
    uint64_t digit = i < static_cast<int64_t>(digits.size()) ? digits[i] - '0' : 0;
    if (__builtin_mul_overflow(value, uint64_t{10}, &value) ||
        __builtin_add_overflow(value, digit, &value)) {
      return false;
    }
  }
  *out = value;
  return true;
}

int64_t FloorMod3(int64_t e) { return ((e % 3) + 3) % 3; }

// Schoolbook product of two digit strings (most significant digit first).
std::string MultiplyDigitStrings(const std::string& a, const std::string& b) {
  if (a.empty() || b.empty()) return "";
  std::vector<uint32_t> acc(a.size() + b.size(), 0);
  for (size_t i = a.size(); i-- > 0;) {
    for (size_t j = b.size(); j-- > 0;) {
      acc[i + j + 1] += static_cast<uint32_t>(a[i] - '0') * static_cast<uint32_t>(b[j] - '0');
    }
    // Carry after each row keeps every cell far below 2^32.
    for (size_t k = acc.size(); k-- > 1;) {
      acc[k - 1] += acc[k] / 10;
      acc[k] %= 10;
    }
  }
  std::string out;
  out.reserve(acc.size());
  for (uint32_t d : acc) out.push_back(static_cast<char>('0' + d));
  return out;
}

// `digits` shifted left by `zeros` places.
std::string Padded(const std::string& digits, int64_t zeros) {
  return digits + std::string(static_cast<size_t>(zeros), '0');
}

// a + b for digit strings of the same length.
std::string AddAligned(const std::string& a, const std::string& b) {
  std::string out(a.size() + 1, '0');
  int carry = 0;
  for (size_t i = a.size(); i-- > 0;) {
    const int sum = (a[i] - '0') + (b[i] - '0') + carry;
    out[i + 1] = static_cast<char>('0' + sum % 10);
    carry = sum / 10;
  }
  out[0] = static_cast<char>('0' + carry);
  return out;
}

// a - b for digit strings of the same length, a >= b.
std::string SubtractAligned(const std::string& a, const std::string& b) {
  std::string out(a.size(), '0');
  int borrow = 0;
  for (size_t i = a.size(); i-- > 0;) {
    int diff = (a[i] - '0') - (b[i] - '0') - borrow;
    borrow = diff < 0 ? 1 : 0;
    if (diff < 0) diff += 10;
    out[i] = static_cast<char>('0' + diff);
  }
  return out;
}

}  // namespace

Quantity::Quantity(bool negative, std::string digits, int64_t exponent, Format format)
    : digits_(std::move(digits)), exponent_(exponent), format_(format) {
  Normalize(&digits_, &exponent_);
  negative_ = negative && !digits_.empty();
}

absl::StatusOr<Quantity> Quantity::Parse(absl::string_view text) {
  if (text.empty()) return InvalidQuantity(text, kFormatWrong);
  if (text == "0") {
    Quantity zero;
    zero.cached_ = "0";
    return zero;
  }

  // Scan the same shape as Kubernetes' parseQuantityString: sign, integer digits, optional
  // fraction, then suffix letters, an optional sign and digits.
  const size_t end = text.size();
  size_t pos = 0;
  bool negative = false;
  if (text[0] == '+' || text[0] == '-') {
    negative = text[0] == '-';
    ++pos;
  }
  size_t start = pos;
  while (pos < end && IsDigit(text[pos])) ++pos;
  absl::string_view int_part = text.substr(start, pos - start);
  absl::string_view frac_part;
  if (pos < end && text[pos] == '.') {
    start = ++pos;
    while (pos < end && IsDigit(text[pos])) ++pos;
    frac_part = text.substr(start, pos - start);
  }
  // Kubernetes' scanner would read "", ".", "-" or "Ki" as zero, but its documented grammar and
  // the OpenAPI pattern on Kueue's CRDs both require a digit, so such input never reaches Kueue.
  if (int_part.empty() && frac_part.empty()) return InvalidQuantity(text, kFormatWrong);
  const size_t suffix_start = pos;
  while (pos < end && IsSuffixLetter(text[pos])) ++pos;
  if (pos < end && (text[pos] == '+' || text[pos] == '-')) ++pos;
  while (pos < end && IsDigit(text[pos])) ++pos;
  if (pos != end) return InvalidQuantity(text, kFormatWrong);

  Suffix suffix;
  if (!InterpretSuffix(text.substr(suffix_start), &suffix)) {
    return InvalidQuantity(text, kSuffixWrong);
  }

  size_t int_nonzero = int_part.find_first_not_of('0');
  absl::string_view int_stripped =
      int_nonzero == absl::string_view::npos ? absl::string_view() : int_part.substr(int_nonzero);

  std::string digits = absl::StrCat(int_stripped, frac_part);
  int64_t exponent = -static_cast<int64_t>(frac_part.size());
  if (suffix.binary) {
    for (int64_t i = 0; i < suffix.exponent; ++i) MultiplyDigits(&digits, 1024);
  } else {
    exponent += suffix.exponent;
  }
  Normalize(&digits, &exponent);

  // Anything asked for should yield something, so sub-nano amounts round away from zero.
  if (!digits.empty() && exponent < kNanoExponent) {
    const int64_t drop = kNanoExponent - exponent;
    if (drop >= static_cast<int64_t>(digits.size())) {
      digits = "1";
    } else {
      // Normalization guarantees the dropped digits are not all zero.
      digits.resize(digits.size() - static_cast<size_t>(drop));
      IncrementDigits(&digits);
    }
    exponent = kNanoExponent;
    Normalize(&digits, &exponent);
  }

  Format format = suffix.format;
  bool capped = false;
  if (suffix.binary) {
    if (CompareMagnitude(digits, exponent, std::string(kInt64MaxDigits), 0) > 0) {
      digits = std::string(kInt64MaxDigits);
      exponent = 0;
      capped = true;
    }
    if (!digits.empty() && Order(digits, exponent) <= 0) format = Format::kDecimalSI;
  }

  Quantity q(negative, std::move(digits), exponent, format);
  q.capped_ = capped;

  // Kubernetes' fast path keeps the input text as the String() result when it looks canonical.
  // That text can differ from the computed form ("+1", "1.G", "0100", "1E-3"), and Kueue echoes
  // whatever the API server stored, so reproduce the same test.
  const size_t num_len = int_stripped.empty() ? 1 : int_stripped.size();
  bool reuse_text = false;
  if (!suffix.binary) {
    const int64_t scale = suffix.exponent - static_cast<int64_t>(frac_part.size());
    const std::string shifted =
        absl::StrCat(int_stripped.empty() ? absl::string_view("0") : int_stripped, frac_part);
    reuse_text = num_len + frac_part.size() <= 18 && scale >= kNanoExponent && scale % 3 == 0 &&
                 !absl::EndsWith(shifted, "000") && shifted[0] != '0';
  } else if (frac_part.empty()) {
    // Kubernetes' digit budget: 1024^k contributes about 3k decimal digits.
    const int64_t precision = 15 - static_cast<int64_t>(num_len) - 3 * suffix.exponent - 1;
    if (precision >= 0) {
      // Only the last three digits matter for divisibility by 8.
      absl::string_view tail =
          int_stripped.substr(int_stripped.size() > 3 ? int_stripped.size() - 3 : 0);
      int low = 0;
      for (char c : tail) low = low * 10 + (c - '0');
      reuse_text = low % 8 != 0;
    }
  }
  if (reuse_text) q.cached_ = std::string(text);
  return q;
}

Quantity Quantity::FromValue(int64_t v, Format f) {
  // Negating through uint64 keeps INT64_MIN well defined.
  const uint64_t magnitude = v < 0 ? uint64_t{0} - static_cast<uint64_t>(v) : v;
  return Quantity(v < 0, std::to_string(magnitude), 0, f);
}

Quantity Quantity::FromMilli(int64_t milli, Format f) {
  const uint64_t magnitude = milli < 0 ? uint64_t{0} - static_cast<uint64_t>(milli) : milli;
  return Quantity(milli < 0, std::to_string(magnitude), -3, f);
}

Quantity Quantity::Times(const Quantity& other) const {
  return Quantity(negative_ != other.negative_, MultiplyDigitStrings(digits_, other.digits_),
                  exponent_ + other.exponent_, format_);
}

Quantity Quantity::Plus(const Quantity& other) const {
  if (other.digits_.empty()) return *this;
  if (digits_.empty())
    return Quantity(other.negative_, other.digits_, other.exponent_, other.format_);
  // Both terms at the smaller exponent, padded to one length.
  const int64_t exponent = std::min(exponent_, other.exponent_);
  std::string a = Padded(digits_, exponent_ - exponent);
  std::string b = Padded(other.digits_, other.exponent_ - exponent);
  const size_t width = std::max(a.size(), b.size());
  a.insert(0, width - a.size(), '0');
  b.insert(0, width - b.size(), '0');
  if (negative_ == other.negative_) {
    return Quantity(negative_, AddAligned(a, b), exponent, format_);
  }
  // Opposite signs: the larger magnitude keeps its sign.
  if (a >= b) return Quantity(negative_, SubtractAligned(a, b), exponent, format_);
  return Quantity(other.negative_, SubtractAligned(b, a), exponent, format_);
}

int64_t Quantity::Value() const { return ScaledValue(0); }

int64_t Quantity::MilliValue() const { return ScaledValue(-3); }

std::optional<int64_t> Quantity::CheckedValue() const {
  bool fits = false;
  const int64_t v = ScaledValue(0, &fits);
  if (!fits) return std::nullopt;
  return v;
}

std::optional<int64_t> Quantity::CheckedMilliValue() const {
  bool fits = false;
  const int64_t v = ScaledValue(-3, &fits);
  if (!fits) return std::nullopt;
  return v;
}

int64_t Quantity::ScaledValue(int64_t scale, bool* fits) const {
  if (fits != nullptr) *fits = !capped_;
  if (digits_.empty()) return 0;
  const int64_t order = Order(digits_, exponent_ - scale);
  uint64_t magnitude = 0;
  // 20 integer digits already exceed every int64, so saturate without materializing them.
  if (order > 19) {
    magnitude = std::numeric_limits<uint64_t>::max();
  } else {
    const int64_t int_digits = order > 0 ? order : 0;
    for (int64_t i = 0; i < int_digits; ++i) {
      const uint64_t digit = i < static_cast<int64_t>(digits_.size()) ? digits_[i] - '0' : 0;
      magnitude = magnitude * 10 + digit;  // At most 19 digits: cannot wrap.
    }
    // Normalized digits end in a non-zero, so any cut-off fraction is non-zero.
    if (int_digits < static_cast<int64_t>(digits_.size())) ++magnitude;
  }
  const uint64_t limit = negative_ ? kInt64MinMagnitude : static_cast<uint64_t>(kInt64Max);
  if (order > 19 || magnitude > limit) {
    if (fits != nullptr) *fits = false;
    return negative_ ? kInt64Min : kInt64Max;
  }
  // magnitude <= 2^63 here: negating through uint64 keeps INT64_MIN well defined.
  return negative_ ? static_cast<int64_t>(uint64_t{0} - magnitude)
                   : static_cast<int64_t>(magnitude);
}

std::string Quantity::ToString() const {
  if (!cached_.empty()) return cached_;
  return CanonicalString();
}

std::string Quantity::CanonicalString() const {
  if (digits_.empty()) return "0";
  const absl::string_view sign = negative_ ? "-" : "";

  Format format = format_;
  if (format == Format::kBinarySI) {
    uint64_t magnitude = 0;
    // Below 1024 there is no binary suffix to use, and a fraction cannot be spelled in binary
    // units without rounding, so both print as DecimalSI.
    if (IntegerMagnitude(digits_, exponent_, &magnitude) && magnitude >= 1024) {
      int power = 0;
      while (power < 6 && magnitude % 1024 == 0) {
        magnitude /= 1024;
        ++power;
      }
      return absl::StrCat(sign, magnitude, power == 0 ? "" : kBinarySuffixes[power - 1]);
    }
    format = Format::kDecimalSI;
  }

  // Exponents are shown in multiples of three so they line up with the SI suffixes.
  const int64_t pad = FloorMod3(exponent_);
  const int64_t exponent = exponent_ - pad;
  std::string out = absl::StrCat(sign, digits_, std::string(static_cast<size_t>(pad), '0'));
  if (format == Format::kDecimalSI) {
    for (const DecimalSuffix& s : kDecimalSuffixes) {
      if (s.exponent == exponent) return absl::StrCat(out, s.text);
    }
    // Past "E" there is no SI suffix; an exponent keeps the value intact.
  }
  if (exponent == 0) return out;
  return absl::StrCat(out, "e", exponent);
}

int64_t ResourceScalar(absl::string_view resource_name, const Quantity& q) {
  return resource_name == "cpu" ? q.MilliValue() : q.Value();
}

absl::StatusOr<int64_t> CheckedResourceScalar(absl::string_view resource_name, const Quantity& q) {
  const bool milli = resource_name == "cpu";
  const std::optional<int64_t> v = milli ? q.CheckedMilliValue() : q.CheckedValue();
  if (v.has_value()) return *v;
  return absl::InvalidArgumentError(absl::StrCat(
      "out of range: ", resource_name, " is counted in int64 ", milli ? "milli-units" : "units",
      ", so the largest amount is ", milli ? "9223372036854775807m" : "9223372036854775807"));
}

std::string FormatResourceScalar(absl::string_view resource_name, int64_t v) {
  if (resource_name == "cpu") {
    return Quantity::FromMilli(v, Quantity::Format::kDecimalSI).ToString();
  }
  if (resource_name == "memory" || resource_name == "ephemeral-storage" ||
      absl::StartsWith(resource_name, "hugepages-")) {
    std::string binary = Quantity::FromValue(v, Quantity::Format::kBinarySI).ToString();
    // Kueue's ResourceFormatter reads the binary form back as a Quantity: a bare number (no
    // power of 1024 divides it) reads as DecimalSI and prints in that canonical form, so
    // 1500000000 bytes show as 1500M, as in Kueue's messages and usage.
    if (!binary.empty() && absl::ascii_isdigit(static_cast<unsigned char>(binary.back()))) {
      return Quantity::FromValue(v, Quantity::Format::kDecimalSI).ToString();
    }
    return binary;
  }
  return Quantity::FromValue(v, Quantity::Format::kDecimalSI).ToString();
}

}  // namespace tollgate::core
