#include "core/quantity.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tollgate::core {
namespace {

using Format = Quantity::Format;
using ::testing::HasSubstr;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

struct CanonicalCase {
  const char* input;
  const char* want;
};

// Expected strings follow k8s.io/apimachinery's Quantity.String() on the same input.
TEST(QuantityTest, ParsePrintsCanonicalForm) {
  const std::vector<CanonicalCase> cases = {
      // Forms named in the design.
      {"1.5Gi", "1536Mi"},
      {"1e3", "1e3"},
      {"0.5", "500m"},
      {"2000m", "2"},
      {"0", "0"},
      // Binary suffixes.
      {"1Ki", "1Ki"},
      {"8Ki", "8Ki"},
      {"7Mi", "7Mi"},
      {"6Gi", "6Gi"},
      {"5Ti", "5Ti"},
      {"4Pi", "4Pi"},
      {"3Ei", "3Ei"},
      {"1024Mi", "1Gi"},
      {"1025Mi", "1025Mi"},
      {"1048576Ki", "1Gi"},
      {"0.5Mi", "512Ki"},
      {"0.5Ki", "512"},
      {"1.1Ki", "1126400m"},
      {"100.035Ki", "102435840m"},
      {"0.05Gi", "53687091200m"},
      {".001Ki", "1024m"},
      {".000001Ki", "1024u"},
      {".000000001Ki", "1024n"},
      {".000000000001Ki", "2n"},
      {"0Ki", "0"},
      // Binary values are capped at INT64_MAX.
      {"8Ei", "9223372036854775807"},
      {"9Ei", "9223372036854775807"},
      {"9223372036854775807Ki", "9223372036854775807"},
      {"-8Ei", "-9223372036854775807"},
      // Decimal suffixes.
      {"5n", "5n"},
      {"4u", "4u"},
      {"3m", "3m"},
      {"8k", "8k"},
      {"50k", "50k"},
      {"7M", "7M"},
      {"6G", "6G"},
      {"5T", "5T"},
      {"300T", "300T"},
      {"2P", "2P"},
      {"1E", "1E"},
      {"12E", "12E"},
      {"1000M", "1G"},
      {"2.5P", "2500T"},
      {"1.01E", "1010P"},
      {"0.0005k", "500m"},
      {"0.00050k", "500m"},
      {"1.5", "1500m"},
      {"-1.5", "-1500m"},
      {"1.0", "1"},
      {"10000m", "10"},
      {".001", "1m"},
      {"000", "0"},
      {"-0", "0"},
      {"-0.0m", "0"},
      // Past "E" DecimalSI has no suffix and switches to an exponent.
      {"1000E", "1e21"},
      {"1000000000000000000000000000000", "1e30"},
      // Decimal exponents, shown in multiples of three.
      {"1e4", "10e3"},
      {"1.5e2", "150"},
      {"1.2e3", "1200"},
      {"1.3E+6", "1300e3"},
      {"1.40e9", "1400e6"},
      {"1e30", "1e30"},
      {"0.5e-2", "5e-3"},
      {"1e-10", "1e-9"},
      // Sub-nano values round away from zero.
      {"3.001n", "4n"},
      {"0.9n", "1n"},
      {"-0.9n", "-1n"},
      {"0.0000000001", "1n"},
      {"0.00000012345", "124n"},
      {"0.00000012354", "124n"},
      // Large decimals keep every digit.
      {"9999999999999999999.1", "9999999999999999999100m"},
      {"1.0000000000000000001E", "1000000000000000000100m"},
      {"10000000000000000000", "10E"},
      {"1000000000000000000", "1E"},
      {"-9223372036854775808", "-9223372036854775808"},
      {"9223372036854775808000m", "9223372036854775808"},
      {"123456789012345678901234567890123456789012345",
       "123456789012345678901234567890123456789012345"},
      // Kubernetes returns the input verbatim when its fast path judges it canonical.
      {"+1", "+1"},
      {"1.G", "1.G"},
      {"0100", "0100"},
      {"1E-3", "1E-3"},
      {"1.500k", "1.500k"},
      {"1e+3", "1e+3"},
      {"+1Ki", "+1Ki"},
      {"1.Gi", "1.Gi"},
      {"100.035k", "100.035k"},
      {"10.035M", "10.035M"},
      {"7.123456M", "7.123456M"},
      {"6.987654321G", "6.987654321G"},
      {"5.444T", "5.444T"},
      // ...but not when the fast path does not apply.
      {"1024Ki", "1Mi"},
      {"+1000", "1k"},
      {"1.0Gi", "1Gi"},
  };
  for (const CanonicalCase& c : cases) {
    absl::StatusOr<Quantity> q = Quantity::Parse(c.input);
    ASSERT_TRUE(q.ok()) << c.input << ": " << q.status();
    EXPECT_EQ(q->ToString(), c.want) << c.input;
  }
}

TEST(QuantityTest, CanonicalStringIgnoresInputSpelling) {
  const std::vector<CanonicalCase> cases = {
      {"+1", "1"},
      {"1.G", "1G"},
      {"0100", "100"},
      {"1E-3", "1e-3"},
      {"1.500k", "1500"},
      {"1e+3", "1e3"},
      {"+1Ki", "1Ki"},
      {"1.Gi", "1Gi"},
      {"100.035k", "100035"},
      {"10.035M", "10035k"},
      {"7.123456M", "7123456"},
      {"6.987654321G", "6987654321"},
      {"5.444T", "5444G"},
      {"1.5Gi", "1536Mi"},
      {"2000m", "2"},
      {"0", "0"},
  };
  for (const CanonicalCase& c : cases) {
    absl::StatusOr<Quantity> q = Quantity::Parse(c.input);
    ASSERT_TRUE(q.ok()) << c.input << ": " << q.status();
    EXPECT_EQ(q->CanonicalString(), c.want) << c.input;
  }
}

TEST(QuantityTest, CanonicalFormIsStable) {
  const std::vector<const char*> inputs = {
      "1.5Gi", "0.5", "2000m", "1e4", "1000E", "-1.5", "0.9n", "1.1Ki", "9Ei", "100.035k", "12E",
  };
  for (const char* input : inputs) {
    absl::StatusOr<Quantity> first = Quantity::Parse(input);
    ASSERT_TRUE(first.ok()) << input;
    absl::StatusOr<Quantity> second = Quantity::Parse(first->ToString());
    ASSERT_TRUE(second.ok()) << first->ToString();
    EXPECT_EQ(second->ToString(), first->ToString()) << input;
    EXPECT_EQ(second->MilliValue(), first->MilliValue()) << input;
    EXPECT_EQ(second->Value(), first->Value()) << input;
  }
}

struct FormatCase {
  const char* input;
  Format want;
};

TEST(QuantityTest, ParseRemembersFormat) {
  const std::vector<FormatCase> cases = {
      {"1", Format::kDecimalSI},
      {"1k", Format::kDecimalSI},
      {"1E", Format::kDecimalSI},
      {"1Ki", Format::kBinarySI},
      {"0.5Ki", Format::kBinarySI},
      {"1e3", Format::kDecimalExponent},
      {"1E3", Format::kDecimalExponent},
      // Non-zero binary values below one are kept as DecimalSI, as Kubernetes does.
      {".000000000001Ki", Format::kDecimalSI},
  };
  for (const FormatCase& c : cases) {
    absl::StatusOr<Quantity> q = Quantity::Parse(c.input);
    ASSERT_TRUE(q.ok()) << c.input;
    EXPECT_EQ(q->format(), c.want) << c.input;
  }
}

struct ValueCase {
  const char* input;
  int64_t value;
  int64_t milli;
};

TEST(QuantityTest, ValueAndMilliValueRoundAwayFromZeroAndSaturate) {
  const std::vector<ValueCase> cases = {
      {"0", 0, 0},
      {"1", 1, 1000},
      {"1n", 1, 1},
      {"-1n", -1, -1},
      {"1.5", 2, 1500},
      {"-1.5", -2, -1500},
      {"100m", 1, 100},
      {"1001u", 1, 2},
      {"1.0001m", 1, 2},
      {"1Ki", 1024, 1024000},
      {"1.5Gi", 1610612736, 1610612736000},
      {"1e3", 1000, 1000000},
      {"1e-3", 1, 1},
      {"1e-30", 1, 1},
      // Near and past the int64 limits.
      {"9223372036854775807", kMax, kMax},
      {"9223372036854775808", kMax, kMax},
      {"9223372036854775806.5", kMax, kMax},
      {"9223372036854775807.5", kMax, kMax},
      {"-9223372036854775808", kMin, kMin},
      {"-9223372036854775809", kMin, kMin},
      {"-9223372036854775807.5", kMin, kMin},
      {"9223372036854775807k", kMax, kMax},
      {"-9223372036854775807k", kMin, kMin},
      {"9223372036854775.807", 9223372036854776, kMax},
      {"9223372036854775.808", 9223372036854776, kMax},
      {"9223372036854775.8071", 9223372036854776, kMax},
      {"-9223372036854775.808", -9223372036854776, kMin},
      {"-9223372036854775.809", -9223372036854776, kMin},
      {"8Ei", kMax, kMax},
      {"-8Ei", -kMax, kMin},
      {"1e30", kMax, kMax},
      {"-1e30", kMin, kMin},
      {"1e2147483647", kMax, kMax},
      {"10E", kMax, kMax},
  };
  for (const ValueCase& c : cases) {
    absl::StatusOr<Quantity> q = Quantity::Parse(c.input);
    ASSERT_TRUE(q.ok()) << c.input << ": " << q.status();
    EXPECT_EQ(q->Value(), c.value) << c.input;
    EXPECT_EQ(q->MilliValue(), c.milli) << c.input;
  }
}

TEST(QuantityTest, MilliValueExactlyAtLimit) {
  absl::StatusOr<Quantity> q = Quantity::Parse("9223372036854775807m");
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->MilliValue(), kMax);
  EXPECT_EQ(q->Value(), 9223372036854776);
  q = Quantity::Parse("-9223372036854775808m");
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->MilliValue(), kMin);
}

TEST(QuantityTest, IsNegativeAndIsZero) {
  struct Case {
    const char* input;
    bool negative;
    bool zero;
  };
  const std::vector<Case> cases = {
      {"1", false, false}, {"-1", true, false},  {"-0", false, true},
      {"0", false, true},  {"-1n", true, false}, {"-0.0000000001", true, false},
  };
  for (const Case& c : cases) {
    absl::StatusOr<Quantity> q = Quantity::Parse(c.input);
    ASSERT_TRUE(q.ok()) << c.input;
    EXPECT_EQ(q->IsNegative(), c.negative) << c.input;
    EXPECT_EQ(q->IsZero(), c.zero) << c.input;
  }
}

struct BadCase {
  const char* input;
  const char* reason;  // A substring of the message after the quoted input.
};

TEST(QuantityTest, RejectsMalformedInput) {
  const char* kFormat = "quantities must match the regular expression";
  const char* kSuffix = "unable to parse quantity's suffix";
  const std::vector<BadCase> cases = {
      {"", kFormat},
      {"12 cores", kFormat},
      {"1.2.3", kFormat},
      {"--1", kFormat},
      {"Kib", kFormat},
      {"1Kib", kFormat},
      {"1 Gi", kFormat},
      {" 1", kFormat},
      {"1 ", kFormat},
      {"1\n", kFormat},
      {"1.1.M", kFormat},
      {"1+1.0M", kFormat},
      {"0.1mi", kSuffix},
      {"0.1am", kFormat},
      {"aoeu", kFormat},
      {".5i", kSuffix},
      {"1i", kSuffix},
      {"-3.01i", kSuffix},
      {"-3.01e-", kSuffix},
      {"1e", kSuffix},
      {"1ee3", kSuffix},
      {"1e+", kSuffix},
      {"1e1.5", kFormat},
      {"1KI", kFormat},
      {"1ki", kSuffix},
      {"1Mi1", kSuffix},
      {"1E3i", kFormat},
      {"0x10", kFormat},
      {"1,5", kFormat},
      // No digits at all: Kubernetes' grammar requires one.
      {"Gi", kFormat},
      {".", kFormat},
      {"-", kFormat},
      {"+", kFormat},
      {"e3", kFormat},
      // Exponents must fit in int32 (Kubernetes would silently wrap them).
      {"1e2147483648", kSuffix},
      {"1e-2147483649", kSuffix},
      {"1e99999999999999999999", kSuffix},
  };
  for (const BadCase& c : cases) {
    absl::StatusOr<Quantity> q = Quantity::Parse(c.input);
    ASSERT_FALSE(q.ok()) << c.input << " parsed as " << q->ToString();
    EXPECT_EQ(q.status().code(), absl::StatusCode::kInvalidArgument) << c.input;
    EXPECT_THAT(q.status().message(), HasSubstr(c.reason)) << c.input;
  }
}

TEST(QuantityTest, ErrorMessageQuotesInput) {
  absl::StatusOr<Quantity> q = Quantity::Parse("12 cores");
  ASSERT_FALSE(q.ok());
  EXPECT_EQ(q.status().message(),
            "invalid quantity \"12 cores\": quantities must match the regular expression "
            "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
  // Control characters are escaped so the message stays on one line.
  q = Quantity::Parse("1\n");
  ASSERT_FALSE(q.ok());
  EXPECT_THAT(q.status().message(), HasSubstr("\"1\\n\""));
}

struct FactoryCase {
  bool milli;  // FromMilli rather than FromValue.
  int64_t v;
  Format format;
  const char* want;
  // Parsing caps binary values at INT64_MAX in magnitude, so "-8Ei" does not come back as-is.
  bool round_trips = true;
};

TEST(QuantityTest, FactoriesPrintCanonicalForm) {
  const std::vector<FactoryCase> cases = {
      {true, 8000, Format::kDecimalSI, "8"},
      {true, 500, Format::kDecimalSI, "500m"},
      {true, 1500, Format::kDecimalSI, "1500m"},
      {true, 1, Format::kDecimalSI, "1m"},
      {true, 1234000, Format::kDecimalSI, "1234"},
      {true, -500, Format::kDecimalSI, "-500m"},
      {true, 0, Format::kDecimalSI, "0"},
      {true, 1024, Format::kBinarySI, "1024m"},
      {true, 1048576, Format::kBinarySI, "1048576m"},
      {true, 2048500, Format::kBinarySI, "2048500m"},
      {true, 2048000, Format::kBinarySI, "2Ki"},
      {true, 1000000, Format::kDecimalExponent, "1e3"},
      {true, 500, Format::kDecimalExponent, "500e-3"},
      {true, kMax, Format::kDecimalSI, "9223372036854775807m"},
      {false, 1000, Format::kDecimalSI, "1k"},
      {false, 1500, Format::kDecimalSI, "1500"},
      {false, 1234000, Format::kDecimalSI, "1234k"},
      {false, 9000000000000000000, Format::kDecimalSI, "9E"},
      {false, 0, Format::kDecimalSI, "0"},
      {false, 0, Format::kBinarySI, "0"},
      {false, 0, Format::kDecimalExponent, "0"},
      {false, -1000, Format::kDecimalSI, "-1k"},
      {false, 10737418240, Format::kBinarySI, "10Gi"},
      {false, 1610612736, Format::kBinarySI, "1536Mi"},
      {false, -1610612736, Format::kBinarySI, "-1536Mi"},
      {false, 1000, Format::kBinarySI, "1k"},
      {false, 1023, Format::kBinarySI, "1023"},
      {false, -1023, Format::kBinarySI, "-1023"},
      {false, 1024, Format::kBinarySI, "1Ki"},
      {false, 1025, Format::kBinarySI, "1025"},
      {false, 5, Format::kBinarySI, "5"},
      {false, 68719476736, Format::kBinarySI, "64Gi"},
      {false, kMax, Format::kDecimalSI, "9223372036854775807"},
      {false, kMax, Format::kBinarySI, "9223372036854775807"},
      {false, kMin, Format::kDecimalSI, "-9223372036854775808"},
      {false, kMin, Format::kBinarySI, "-8Ei", /*round_trips=*/false},
      {false, int64_t{1} << 62, Format::kBinarySI, "4Ei"},
      {false, 1000000, Format::kDecimalExponent, "1e6"},
      {false, 10000, Format::kDecimalExponent, "10e3"},
      {false, 1500, Format::kDecimalExponent, "1500"},
  };
  for (const FactoryCase& c : cases) {
    Quantity q = c.milli ? Quantity::FromMilli(c.v, c.format) : Quantity::FromValue(c.v, c.format);
    const std::string label = absl::StrCat(c.milli ? "FromMilli(" : "FromValue(", c.v, ", ",
                                           static_cast<int>(c.format), ")");
    EXPECT_EQ(q.ToString(), c.want) << label;
    EXPECT_EQ(c.milli ? q.MilliValue() : q.Value(), c.v) << label;
    EXPECT_EQ(q.format(), c.format) << label;

    // What we print must parse back to the same amount.
    if (!c.round_trips) continue;
    absl::StatusOr<Quantity> parsed = Quantity::Parse(q.ToString());
    ASSERT_TRUE(parsed.ok()) << label << ": " << parsed.status();
    EXPECT_EQ(parsed->ToString(), c.want) << label;
    EXPECT_EQ(c.milli ? parsed->MilliValue() : parsed->Value(), c.v) << label;
  }
}

struct ScalarCase {
  const char* resource;
  const char* quantity;
  int64_t scalar;
};

TEST(QuantityTest, ResourceScalarUsesMilliForCpuOnly) {
  const std::vector<ScalarCase> cases = {
      {"cpu", "500m", 500},
      {"cpu", "2", 2000},
      {"cpu", "1n", 1},
      {"cpu", "1.5", 1500},
      {"memory", "1Gi", 1073741824},
      {"memory", "1.5", 2},
      {"memory", "100m", 1},
      {"nvidia.com/gpu", "5", 5},
      {"pods", "1k", 1000},
      {"cpu", "9223372036854775807k", kMax},
      // Kueue's pkg/resources/requests_test.go, TestResourceValueClampsOutsideInt64.
      {"example.com/gpu", "9223372036854775807", kMax},
      {"example.com/gpu", "9223372036854775808", kMax},
      {"example.com/gpu", "100000000000000000000", kMax},
      {"example.com/gpu", "-3", -3},
      {"example.com/gpu", "-100000000000000000000", std::numeric_limits<int64_t>::min()},
      {"memory", "100Ei", kMax},
      {"cpu", "1500m", 1500},
      {"cpu", "10000000000000000", kMax},
  };
  for (const ScalarCase& c : cases) {
    absl::StatusOr<Quantity> q = Quantity::Parse(c.quantity);
    ASSERT_TRUE(q.ok()) << c.quantity;
    EXPECT_EQ(ResourceScalar(c.resource, *q), c.scalar) << c.resource << " " << c.quantity;
  }
}

struct FormatScalarCase {
  const char* resource;
  int64_t scalar;
  const char* want;
};

TEST(QuantityTest, FormatResourceScalarPicksFormatByResource) {
  const std::vector<FormatScalarCase> cases = {
      {"cpu", 8000, "8"},
      {"cpu", 1500, "1500m"},
      {"cpu", 0, "0"},
      {"cpu", -500, "-500m"},
      {"memory", 68719476736, "64Gi"},
      {"memory", 1000, "1k"},
      {"memory", kMax, "9223372036854775807"},
      // No power of 1024 divides these: Kueue's formatter falls back to DecimalSI.
      {"memory", 1000000000, "1G"},
      {"memory", 1500000000, "1500M"},
      {"memory", 2000000000, "1953125Ki"},
      {"memory", 500, "500"},
      {"ephemeral-storage", -3000000, "-3M"},
      {"ephemeral-storage", 1610612736, "1536Mi"},
      {"hugepages-2Mi", 4194304, "4Mi"},
      {"hugepages-1Gi", 1073741824, "1Gi"},
      {"nvidia.com/gpu", 5, "5"},
      {"pods", 1000, "1k"},
      // Only the exact names are memory-like.
      {"example.com/memory", 1024, "1024"},
  };
  for (const FormatScalarCase& c : cases) {
    const std::string got = FormatResourceScalar(c.resource, c.scalar);
    EXPECT_EQ(got, c.want) << c.resource << " " << c.scalar;
    absl::StatusOr<Quantity> parsed = Quantity::Parse(got);
    ASSERT_TRUE(parsed.ok()) << got;
    EXPECT_EQ(ResourceScalar(c.resource, *parsed), c.scalar) << c.resource << " " << got;
  }
}

// Kueue's pkg/resources/requests_test.go, TestResourceQuantityRoundTrips: memory prints in its
// BinarySI form read back as a Quantity, so a byte count 1024 does not divide is DecimalSI.
TEST(QuantityTest, FormatResourceScalarMemoryAsKueueRoundTripsIt) {
  const std::vector<FormatScalarCase> cases = {
      {"memory", 1, "1"},
      {"memory", 1000, "1k"},
      {"memory", 100000, "100k"},
      {"memory", 1000000, "1M"},
      {"memory", 1500000, "1500k"},
      {"memory", 1024, "1Ki"},
      {"memory", 128000, "125Ki"},
      {"memory", 1024 * 1024, "1Mi"},
      {"memory", 1024 * 1024 * 3 / 2, "1536Ki"},
      {"memory", 1024 * 1024 * 1024, "1Gi"},
      {"memory", 10000000000, "9765625Ki"},
  };
  for (const FormatScalarCase& c : cases) {
    const std::string got = FormatResourceScalar(c.resource, c.scalar);
    EXPECT_EQ(got, c.want) << c.scalar;
    absl::StatusOr<Quantity> parsed = Quantity::Parse(got);
    ASSERT_TRUE(parsed.ok()) << got;
    EXPECT_EQ(parsed->ToString(), got);
    EXPECT_EQ(ResourceScalar(c.resource, *parsed), c.scalar) << got;
  }
}

// Exercises core/status_macros.h through the API it was written for.
absl::StatusOr<int64_t> SumMilli(absl::string_view a, absl::string_view b) {
  TOLLGATE_ASSIGN_OR_RETURN(auto qa, Quantity::Parse(a));
  TOLLGATE_ASSIGN_OR_RETURN(const Quantity qb, Quantity::Parse(b));
  int64_t extra = 0;
  TOLLGATE_ASSIGN_OR_RETURN(extra, absl::StatusOr<int64_t>(1));
  TOLLGATE_RETURN_IF_ERROR(qa.IsNegative() ? absl::OutOfRangeError("negative") : absl::OkStatus());
  return qa.MilliValue() + qb.MilliValue() + extra;
}

absl::Status CheckPositive(absl::string_view a) {
  TOLLGATE_ASSIGN_OR_RETURN(Quantity q, Quantity::Parse(a));
  if (q.IsNegative()) {
    TOLLGATE_RETURN_IF_ERROR(absl::OutOfRangeError("negative"));
  }
  return absl::OkStatus();
}

TEST(StatusMacrosTest, PropagateErrorsAndValues) {
  absl::StatusOr<int64_t> sum = SumMilli("1", "500m");
  ASSERT_TRUE(sum.ok()) << sum.status();
  EXPECT_EQ(*sum, 1501);
  EXPECT_EQ(SumMilli("x", "1").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(SumMilli("1", "x").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(SumMilli("-1", "1").status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_TRUE(CheckPositive("1").ok());
  EXPECT_EQ(CheckPositive("-1").code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(CheckPositive("?").code(), absl::StatusCode::kInvalidArgument);
}

// Kueue's int64 scalars cannot hold these; a checked read refuses them instead of storing
// INT64_MAX (Value() and MilliValue() keep Kubernetes' saturation).
TEST(CheckedResourceScalarTest, RefusesWhatInt64UnitsCannotHold) {
  struct Case {
    std::string resource;
    std::string text;
    bool fits;
    int64_t scalar;
  };
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  for (const Case& c : std::vector<Case>{
           {"memory", "1e400", false, 0},
           {"memory", "9223372036854775808", false, 0},
           {"memory", "9Ei", false, 0},
           {"memory", "7Ei", true, int64_t{7} << 60},
           {"memory", "9223372036854775807", true, kMax},
           {"cpu", "9223372036854775807m", true, kMax},
           {"cpu", "9223372036854775808m", false, 0},
           {"cpu", "9223372036854776", false, 0},
           {"cpu", "9223372036854775", true, 9223372036854775000},
           {"cpu", "0.0000000001", true, 1},
           {"example.com/gpu", "1e19", false, 0},
       }) {
    SCOPED_TRACE(c.resource + " " + c.text);
    absl::StatusOr<Quantity> q = Quantity::Parse(c.text);
    ASSERT_TRUE(q.ok()) << q.status();
    absl::StatusOr<int64_t> got = CheckedResourceScalar(c.resource, *q);
    if (c.fits) {
      ASSERT_TRUE(got.ok()) << got.status();
      EXPECT_EQ(*got, c.scalar);
      EXPECT_EQ(*got, ResourceScalar(c.resource, *q));
    } else {
      EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
      EXPECT_THAT(got.status().message(), HasSubstr("out of range"));
      EXPECT_THAT(got.status().message(), HasSubstr("9223372036854775807"));
    }
  }
  // Saturation is still what the unchecked reads do.
  EXPECT_EQ(Quantity::Parse("9Ei")->Value(), kMax);
  EXPECT_FALSE(Quantity::Parse("9Ei")->CheckedValue().has_value());
  EXPECT_EQ(Quantity::Parse("-9223372036854775808")->CheckedValue(),
            std::numeric_limits<int64_t>::min());
  EXPECT_FALSE(Quantity::Parse("-9223372036854775809")->CheckedValue().has_value());
}

TEST(QuantityParseTest, ErrorsCutAHugeValue) {
  absl::StatusOr<Quantity> q = Quantity::Parse(std::string(100000, 'x'));
  ASSERT_FALSE(q.ok());
  EXPECT_THAT(q.status().message(), HasSubstr("(100000 bytes)"));
  EXPECT_LT(q.status().message().size(), 512u);
}

struct ArithmeticCase {
  const char* a;
  const char* b;
  // Canonical strings of a x b and a + b (in a's format).
  const char* product;
  const char* sum;
};

// Exact decimal arithmetic, as inf.Dec's (what Kueue's resource transformations compute with).
TEST(QuantityArithmeticTest, TimesAndPlusAreExact) {
  const std::vector<ArithmeticCase> cases = {
      {"2", "5Ki", "10240", "5122"},
      {"100m", "3000", "300", "3000100m"},
      {"100M", "3m", "300k", "100000000003m"},
      {"1024", "-1024", "-1048576", "0"},
      {"512", "-1024", "-524288", "-512"},
      {"0", "7", "0", "7"},
      {"1.5", "0.5", "750m", "2"},
      {"10000000000", "10000000000", "100E", "20G"},
      {"-3", "-4", "12", "-7"},
      {"1n", "1n", "1e-18", "2n"},
  };
  for (const ArithmeticCase& c : cases) {
    SCOPED_TRACE(absl::StrCat(c.a, " and ", c.b));
    const Quantity a = *Quantity::Parse(c.a);
    const Quantity b = *Quantity::Parse(c.b);
    EXPECT_EQ(a.Times(b).CanonicalString(), c.product);
    EXPECT_EQ(a.Plus(b).CanonicalString(), c.sum);
    EXPECT_EQ(b.Plus(a).Value(), a.Plus(b).Value());
  }
}

TEST(QuantityArithmeticTest, AProductPastInt64SaturatesOnlyWhenRead) {
  const Quantity big = *Quantity::Parse("10000000000");
  const Quantity product = big.Times(big);
  EXPECT_EQ(product.Value(), kMax);
  // Still exact: taking the same amount away gives zero, not a saturated difference.
  EXPECT_TRUE(product.Plus(product.Times(*Quantity::Parse("-1"))).IsZero());
}

}  // namespace
}  // namespace tollgate::core
