#include "adapters/kube/work_queue.h"

#include <gtest/gtest.h>

#include "core/clock.h"
#include "core/real_clock.h"

namespace tollgate::kube {
namespace {

const ObjectKey kA{"jobs", "ns", "a"};
const ObjectKey kB{"jobs", "ns", "b"};

TEST(WorkQueueTest, DeduplicatesQueuedKeys) {
  core::RealClock clock;
  WorkQueue queue(clock, absl::Milliseconds(1), absl::Milliseconds(10));
  queue.Add(kA);
  queue.Add(kB);
  queue.Add(kA);
  EXPECT_EQ(queue.Size(), 2u);
  EXPECT_EQ(queue.Get(), kA);
  EXPECT_EQ(queue.Get(), kB);
}

TEST(WorkQueueTest, AKeyAddedWhileProcessingComesBackAfterDone) {
  core::RealClock clock;
  WorkQueue queue(clock, absl::Milliseconds(1), absl::Milliseconds(10));
  queue.Add(kA);
  ASSERT_EQ(queue.Get(), kA);
  queue.Add(kA);
  // Not handed out twice at once.
  queue.Add(kB);
  EXPECT_EQ(queue.Get(), kB);
  queue.Done(kB);
  queue.Done(kA);
  EXPECT_EQ(queue.Get(), kA);
}

TEST(WorkQueueTest, FailedKeysReturnAfterBackoff) {
  core::SimulatedClock clock(absl::FromUnixSeconds(1000));
  WorkQueue queue(clock, absl::Seconds(1), absl::Seconds(4));
  queue.Add(kA);
  ASSERT_EQ(queue.Get(), kA);
  queue.AddRateLimited(kA);
  queue.Done(kA);
  queue.Add(kB);
  EXPECT_EQ(queue.Get(), kB);
  clock.Set(absl::FromUnixSeconds(1001));
  EXPECT_EQ(queue.Get(), kA);
}

TEST(WorkQueueTest, ShutDownEndsGet) {
  core::RealClock clock;
  WorkQueue queue(clock, absl::Milliseconds(1), absl::Milliseconds(10));
  queue.ShutDown();
  EXPECT_EQ(queue.Get(), std::nullopt);
}

}  // namespace
}  // namespace tollgate::kube
