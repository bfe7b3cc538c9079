#include "core/saturating.h"

#include <cstdint>
#include <limits>
#include <vector>

#include "gtest/gtest.h"

namespace tollgate::core {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

// The helpers are usable in constant expressions.
static_assert(SatAdd(kMax, 1) == kMax);
static_assert(SatSub(kMin, 1) == kMin);
static_assert(SatMul(kMax, 2) == kMax);

struct Case {
  int64_t a;
  int64_t b;
  int64_t want;
};

TEST(SaturatingTest, SatAdd) {
  const std::vector<Case> cases = {
      {1, 2, 3},           {-5, 3, -2},          {0, 0, 0},
      {kMax, 0, kMax},     {kMax, 1, kMax},      {kMax, kMax, kMax},
      {kMax - 1, 1, kMax}, {kMin, 0, kMin},      {kMin, -1, kMin},
      {kMin, kMin, kMin},  {kMin + 1, -1, kMin}, {kMax, kMin, -1},
      {kMin, kMax, -1},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(SatAdd(c.a, c.b), c.want) << c.a << " + " << c.b;
    EXPECT_EQ(SatAdd(c.b, c.a), c.want) << c.b << " + " << c.a;
  }
}

TEST(SaturatingTest, SatSub) {
  const std::vector<Case> cases = {
      {5, 3, 2},           {3, 5, -2},       {0, 0, 0},        {kMax, -1, kMax},
      {kMax, kMin, kMax},  {0, kMin, kMax},  {-1, kMin, kMax}, {kMin, 1, kMin},
      {kMin, kMax, kMin},  {-2, kMax, kMin}, {kMax, kMax, 0},  {kMin, kMin, 0},
      {kMin + 1, 1, kMin},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(SatSub(c.a, c.b), c.want) << c.a << " - " << c.b;
  }
}

TEST(SaturatingTest, SatMul) {
  const std::vector<Case> cases = {
      {6, 7, 42},
      {-6, 7, -42},
      {-6, -7, 42},
      {0, kMin, 0},
      {kMax, 1, kMax},
      {kMin, 1, kMin},
      {kMax, -1, kMin + 1},
      {kMin, -1, kMax},
      {kMax, 2, kMax},
      {kMax, -2, kMin},
      {kMin, 2, kMin},
      {kMin, -2, kMax},
      {kMin, kMin, kMax},
      {kMax, kMax, kMax},
      {kMax, kMin, kMin},
      {int64_t{1} << 32, int64_t{1} << 31, kMax},
      {int64_t{1} << 31, int64_t{1} << 31, int64_t{1} << 62},
      {-(int64_t{1} << 32), int64_t{1} << 31, kMin},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(SatMul(c.a, c.b), c.want) << c.a << " * " << c.b;
    EXPECT_EQ(SatMul(c.b, c.a), c.want) << c.b << " * " << c.a;
  }
}

}  // namespace
}  // namespace tollgate::core
