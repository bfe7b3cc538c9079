#include "core/timer_set.h"

#include "gtest/gtest.h"

namespace tollgate::core {
namespace {

const absl::Time kStart = absl::FromUnixSeconds(1767225600);

TEST(TimerSetTest, PopsDueTimersEarliestFirstThenByKindAndId) {
  TimerSet timers;
  EXPECT_FALSE(timers.Next().has_value());
  timers.Arm(kStart + absl::Seconds(20), TimerKind::kEvictionGrace, 7);
  timers.Arm(kStart + absl::Seconds(10), TimerKind::kBackoffExpired, 3);
  timers.Arm(kStart + absl::Seconds(10), TimerKind::kPodsReadyTimeout, 9);
  timers.Arm(kStart + absl::Seconds(10), TimerKind::kPodsReadyTimeout, 2);
  EXPECT_EQ(timers.Next(), kStart + absl::Seconds(10));

  EXPECT_FALSE(timers.PopDue(kStart + absl::Seconds(9)).has_value());
  std::optional<Timer> t = timers.PopDue(kStart + absl::Seconds(15));
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->kind, TimerKind::kPodsReadyTimeout);
  EXPECT_EQ(t->id, 2);
  t = timers.PopDue(kStart + absl::Seconds(15));
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->id, 9);
  t = timers.PopDue(kStart + absl::Seconds(15));
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->kind, TimerKind::kBackoffExpired);
  EXPECT_FALSE(timers.PopDue(kStart + absl::Seconds(15)).has_value());
  EXPECT_EQ(timers.Next(), kStart + absl::Seconds(20));
}

TEST(TimerSetTest, ArmingTheSameTimerTwiceKeepsOne) {
  TimerSet timers;
  timers.Arm(kStart, TimerKind::kEvictionGrace, 1);
  timers.Arm(kStart, TimerKind::kEvictionGrace, 1);
  EXPECT_TRUE(timers.PopDue(kStart).has_value());
  EXPECT_FALSE(timers.PopDue(kStart).has_value());
}

}  // namespace
}  // namespace tollgate::core
