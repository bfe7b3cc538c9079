#include "core/priority_boost.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "core/cluster_state.h"
#include "core/preemption_planner.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tollgate::core {
namespace {

using ::testing::HasSubstr;

const absl::Time kStart = absl::FromUnixSeconds(1767225600);

SchedulerConfig Gate(bool on) {
  SchedulerConfig config;
  config.priority_boost = on;
  return config;
}

Workload WithBoost(int32_t priority, std::optional<std::string> boost) {
  Workload wl;
  wl.priority = priority;
  SetPriorityBoostAnnotation(wl.spec, boost);
  return wl;
}

// --- ParsePriorityBoost: Go's strconv.ParseInt(value, 10, 32) ---------------------------------

struct ParseCase {
  std::string name;
  std::string value;
  std::optional<int32_t> want;  // nullopt: refused
};

class ParsePriorityBoostTest : public ::testing::TestWithParam<ParseCase> {};

TEST_P(ParsePriorityBoostTest, ReadsAsGoParseIntBase10Bits32) {
  const ParseCase& c = GetParam();
  absl::StatusOr<int32_t> got = ParsePriorityBoost(c.value);
  if (!c.want.has_value()) {
    EXPECT_FALSE(got.ok()) << *got;
    return;
  }
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, *c.want);
}

INSTANTIATE_TEST_SUITE_P(
    Values, ParsePriorityBoostTest,
    ::testing::Values(
        ParseCase{"Positive", "100", 100}, ParseCase{"Negative", "-50", -50},
        ParseCase{"Zero", "0", 0}, ParseCase{"MinusZero", "-0", 0}, ParseCase{"PlusSign", "+7", 7},
        ParseCase{"LeadingZeros", "0007", 7},
        ParseCase{"Int32Max", "2147483647", std::numeric_limits<int32_t>::max()},
        ParseCase{"Int32Min", "-2147483648", std::numeric_limits<int32_t>::min()},
        ParseCase{"AboveInt32", "2147483648", std::nullopt},
        ParseCase{"BelowInt32", "-2147483649", std::nullopt},
        ParseCase{"ManyDigits", "99999999999999999999999", std::nullopt},
        ParseCase{"Word", "invalid", std::nullopt}, ParseCase{"Empty", "", std::nullopt},
        ParseCase{"SignOnly", "-", std::nullopt}, ParseCase{"Spaces", " 5", std::nullopt},
        ParseCase{"Underscore", "1_000", std::nullopt},
        ParseCase{"HexPrefix", "0x10", std::nullopt}, ParseCase{"Decimal", "1.5", std::nullopt}),
    [](const ::testing::TestParamInfo<ParseCase>& info) { return info.param.name; });

// --- Kueue's TestPriorityBoost, TestParseEffectivePriority, TestEffectivePriority ------------

TEST(PriorityBoostTest, AnnotationMissingOrEmptyIsZero) {
  EXPECT_EQ(*PriorityBoostOf(WithBoost(0, std::nullopt).spec, Gate(true)), 0);
  EXPECT_EQ(*PriorityBoostOf(WithBoost(0, "").spec, Gate(true)), 0);
}

TEST(PriorityBoostTest, ReadsTheAnnotationWithTheGateOn) {
  EXPECT_EQ(*PriorityBoostOf(WithBoost(0, "100").spec, Gate(true)), 100);
  EXPECT_EQ(*PriorityBoostOf(WithBoost(0, "-50").spec, Gate(true)), -50);
  EXPECT_EQ(*PriorityBoostOf(WithBoost(0, "0").spec, Gate(true)), 0);
  EXPECT_FALSE(PriorityBoostOf(WithBoost(0, "invalid").spec, Gate(true)).ok());
}

TEST(PriorityBoostTest, GateOffIgnoresTheAnnotation) {
  EXPECT_EQ(*PriorityBoostOf(WithBoost(0, "100").spec, Gate(false)), 0);
  EXPECT_EQ(*PriorityBoostOf(WithBoost(0, "invalid").spec, Gate(false)), 0);
  EXPECT_EQ(EffectivePriority(WithBoost(200, "100"), Gate(false)), 200);
  EXPECT_EQ(*ParseEffectivePriority(WithBoost(200, "invalid"), Gate(false)), 200);
}

TEST(PriorityBoostTest, ParseEffectivePriorityAddsTheBoost) {
  EXPECT_EQ(*ParseEffectivePriority(WithBoost(200, std::nullopt), Gate(true)), 200);
  EXPECT_EQ(*ParseEffectivePriority(WithBoost(200, "50"), Gate(true)), 250);
  EXPECT_EQ(*ParseEffectivePriority(WithBoost(200, "-100"), Gate(true)), 100);
  // Crosses priority class boundaries (low 100 + 150 is above mid 200).
  EXPECT_EQ(*ParseEffectivePriority(WithBoost(100, "150"), Gate(true)), 250);
  EXPECT_FALSE(ParseEffectivePriority(WithBoost(200, "invalid"), Gate(true)).ok());
}

TEST(PriorityBoostTest, EffectivePriorityWidensBeyondInt32) {
  constexpr int32_t kMax = std::numeric_limits<int32_t>::max();
  constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
  EXPECT_EQ(*ParseEffectivePriority(WithBoost(kMax, "1"), Gate(true)), int64_t{kMax} + 1);
  EXPECT_EQ(*ParseEffectivePriority(WithBoost(kMin, "-1"), Gate(true)), int64_t{kMin} - 1);
  EXPECT_EQ(EffectivePriority(WithBoost(kMax, "2147483647"), Gate(true)), int64_t{kMax} * 2);
}

TEST(PriorityBoostTest, EffectivePriorityFallsBackToTheBasePriorityOnAnInvalidValue) {
  EXPECT_EQ(EffectivePriority(WithBoost(200, std::nullopt), Gate(true)), 200);
  EXPECT_EQ(EffectivePriority(WithBoost(200, "50"), Gate(true)), 250);
  EXPECT_EQ(EffectivePriority(WithBoost(200, "-100"), Gate(true)), 100);
  EXPECT_EQ(EffectivePriority(WithBoost(200, "invalid"), Gate(true)), 200);
  EXPECT_EQ(EffectivePriority(WithBoost(200, "9999999999"), Gate(true)), 200);
}

TEST(PriorityBoostTest, SettingAndRemovingLeavesNoEmptyMetadata) {
  Workload wl = WithBoost(0, "5");
  ASSERT_NE(PriorityBoostAnnotationOf(wl.spec), nullptr);
  SetPriorityBoostAnnotation(wl.spec, std::nullopt);
  EXPECT_EQ(PriorityBoostAnnotationOf(wl.spec), nullptr);
  EXPECT_FALSE(wl.spec.metadata.has_value());
}

// --- Kueue's workload webhook: TestValidateWorkload's priority-boost cases -------------------

struct ValidationCase {
  std::string name;
  bool gate;
  std::optional<std::string> value;
  std::string error;  // "" : accepted
};

class ValidatePriorityBoostTest : public ::testing::TestWithParam<ValidationCase> {};

TEST_P(ValidatePriorityBoostTest, AsKueuesWebhook) {
  const ValidationCase& c = GetParam();
  absl::Status status = ValidatePriorityBoost(WithBoost(0, c.value).spec, Gate(c.gate));
  if (c.error.empty()) {
    EXPECT_TRUE(status.ok()) << status;
    return;
  }
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), c.error);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ValidatePriorityBoostTest,
    ::testing::Values(
        ValidationCase{"Valid", true, "10", ""}, ValidationCase{"ValidZero", true, "0", ""},
        ValidationCase{"ValidNegative", true, "-5", ""},
        ValidationCase{"Invalid", true, "invalid",
                       "metadata.annotations[kueue.x-k8s.io/priority-boost]: Invalid value: "
                       "\"invalid\": must be a valid signed integer"},
        ValidationCase{"OutOfRange", true, "2147483648",
                       "metadata.annotations[kueue.x-k8s.io/priority-boost]: Invalid value: "
                       "\"2147483648\": must be a valid signed integer"},
        ValidationCase{"EmptyString", true, "",
                       "metadata.annotations[kueue.x-k8s.io/priority-boost]: Invalid value: "
                       "\"\": must be a valid signed integer; use \"0\" explicitly, empty "
                       "string is not allowed"},
        ValidationCase{"Missing", true, std::nullopt, ""},
        ValidationCase{"InvalidWithGateOff", false, "invalid", ""}),
    [](const ::testing::TestParamInfo<ValidationCase>& info) { return info.param.name; });

// --- Kueue's TestSatisfiesPreemptionPolicy, the cases with a boost ----------------------------

struct BoostedPolicyCase {
  std::string name;
  PreemptionPolicy policy;
  int32_t preemptor_priority;
  std::optional<std::string> preemptor_boost;
  int32_t candidate_priority;
  std::optional<std::string> candidate_boost;
  // Candidate creation relative to the preemptor's.
  absl::Duration candidate_created_after;
  bool satisfied;
};

class BoostedPreemptionPolicyTest : public ::testing::TestWithParam<BoostedPolicyCase> {};

TEST_P(BoostedPreemptionPolicyTest, ComparesEffectivePriorities) {
  const BoostedPolicyCase& c = GetParam();
  ClusterState state{Gate(true)};
  Workload preemptor = WithBoost(c.preemptor_priority, c.preemptor_boost);
  preemptor.creation_time = kStart;
  Workload candidate = WithBoost(c.candidate_priority, c.candidate_boost);
  candidate.creation_time = kStart + c.candidate_created_after;
  EXPECT_EQ(SatisfiesPreemptionPolicy(state, preemptor, candidate, c.policy), c.satisfied);
  // With the gate off the base priorities decide.
  ClusterState off{Gate(false)};
  const bool base = c.policy == PreemptionPolicy::kAny ||
                    (c.policy != PreemptionPolicy::kNever &&
                     (c.preemptor_priority > c.candidate_priority ||
                      (c.policy == PreemptionPolicy::kLowerOrNewerEqualPriority &&
                       c.preemptor_priority == c.candidate_priority &&
                       c.candidate_created_after > absl::ZeroDuration())));
  EXPECT_EQ(SatisfiesPreemptionPolicy(off, preemptor, candidate, c.policy), base);
}

INSTANTIATE_TEST_SUITE_P(
    Policies, BoostedPreemptionPolicyTest,
    ::testing::Values(
        BoostedPolicyCase{"LowerPriorityBoostMakesLowImmuneToMedium",
                          PreemptionPolicy::kLowerPriority, 200, std::nullopt, 100, "150",
                          absl::ZeroDuration(), false},
        BoostedPolicyCase{"LowerPriorityBoostedPreemptorTakesHigherRawPriority",
                          PreemptionPolicy::kLowerPriority, 100, "200", 200, std::nullopt,
                          absl::ZeroDuration(), true},
        BoostedPolicyCase{"LowerOrNewerEqualBoostEqualizesOlderPreemptorTakesNewer",
                          PreemptionPolicy::kLowerOrNewerEqualPriority, 100, "100", 200,
                          std::nullopt, absl::Seconds(1), true},
        BoostedPolicyCase{"LowerOrNewerEqualEqualEffectiveNewerPreemptorCannotTakeOlder",
                          PreemptionPolicy::kLowerOrNewerEqualPriority, 100, "100", 200,
                          std::nullopt, -absl::Seconds(1), false},
        BoostedPolicyCase{"AnyRegardlessOfBoost", PreemptionPolicy::kAny, 50, std::nullopt, 100,
                          "200", absl::ZeroDuration(), true},
        BoostedPolicyCase{"InvalidBoostCountsAsNone", PreemptionPolicy::kLowerPriority, 150,
                          std::nullopt, 100, "lots", absl::ZeroDuration(), true}),
    [](const ::testing::TestParamInfo<BoostedPolicyCase>& info) { return info.param.name; });

}  // namespace
}  // namespace tollgate::core
