#pragma once

// Saturating int64 arithmetic. Quota sums and borrowing limits are compared against "unlimited"
// values near INT64_MAX, so clamping keeps those comparisons meaningful where wrapping (or UB)
// would flip signs.

#include <cstdint>
#include <limits>

namespace tollgate::core {

inline constexpr int64_t SatAdd(int64_t a, int64_t b) {
  int64_t result = 0;
  if (__builtin_add_overflow(a, b, &result)) {
    // Overflow needs both operands on the same side of zero, so b's sign gives the direction.
    return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
  }
  return result;
}

inline constexpr int64_t SatSub(int64_t a, int64_t b) {
  int64_t result = 0;
  if (__builtin_sub_overflow(a, b, &result)) {
    // Subtracting a negative can only overflow upwards, a positive only downwards.
    return b < 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
  }
  return result;
}

inline constexpr int64_t SatMul(int64_t a, int64_t b) {
  int64_t result = 0;
  if (__builtin_mul_overflow(a, b, &result)) {
    return (a < 0) != (b < 0) ? std::numeric_limits<int64_t>::min()
                              : std::numeric_limits<int64_t>::max();
  }
  return result;
}

}  // namespace tollgate::core
