#include "core/workload_queue.h"

#include <limits>
#include <optional>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace tollgate::core {
namespace {

const absl::Time kStart = absl::FromUnixSeconds(1767225600);

// Keys in no particular order, with ties in priority and time so the id decides.
std::vector<QueueKey> MixedKeys() {
  std::vector<QueueKey> keys;
  for (WorkloadId id = 1; id <= 200; ++id) {
    keys.push_back(QueueKey{1, static_cast<int32_t>((id * 7) % 5),
                            kStart + absl::Seconds((id * 13) % 17), (id * 37) % 211});
  }
  return keys;
}

TEST(WorkloadQueueTest, PushAllBuildsTheSameQueueAsPushingOneByOne) {
  for (const bool inadmissible : {false, true}) {
    WorkloadQueue one_by_one;
    WorkloadQueue bulk;
    // Something already queued, on both sides of the new keys.
    for (WorkloadQueue* q : {&one_by_one, &bulk}) {
      q->PushActive(QueueKey{1, 100, kStart, 1000});
      q->PushInadmissible(QueueKey{1, -100, kStart, 1001});
      q->SetSticky(1000);
    }
    for (const QueueKey& key : MixedKeys()) {
      if (inadmissible) {
        one_by_one.PushInadmissible(key);
      } else {
        one_by_one.PushActive(key);
      }
    }
    bulk.PushAll(MixedKeys(), inadmissible);
    EXPECT_EQ(bulk.InOrder(), one_by_one.InOrder());
    EXPECT_EQ(bulk.ActiveInOrder(), one_by_one.ActiveInOrder());
    EXPECT_EQ(bulk.size(), one_by_one.size());
    EXPECT_EQ(bulk.Head(), one_by_one.Head());
    for (const QueueKey& key : MixedKeys()) {
      EXPECT_EQ(bulk.IsInadmissible(key.id), inadmissible);
    }
  }
}

// What a restart hands over: creation order, a few workloads of higher priority late.
TEST(WorkloadQueueTest, PushAllOfAFewAscendingRuns) {
  std::vector<QueueKey> keys;
  for (WorkloadId id = 1; id <= 300; ++id) {
    const int32_t priority = id % 100 == 0 ? static_cast<int32_t>(id / 100) : 0;
    keys.push_back(QueueKey{1, priority, kStart + absl::Seconds(id / 2), id});
  }
  WorkloadQueue one_by_one;
  for (const QueueKey& key : keys) one_by_one.PushActive(key);
  WorkloadQueue bulk;
  bulk.PushAll(keys, /*inadmissible=*/false);
  EXPECT_EQ(bulk.ActiveInOrder(), one_by_one.ActiveInOrder());
  EXPECT_EQ(bulk.ActiveInOrder().front(), 300);
}

TEST(WorkloadQueueTest, PushAllMovesWorkloadsAlreadyQueued) {
  WorkloadQueue q;
  q.PushActive(QueueKey{1, 0, kStart, 7});
  q.PushAll({QueueKey{1, 5, kStart, 7}, QueueKey{1, 0, kStart, 8}}, /*inadmissible=*/true);
  EXPECT_EQ(q.size(), 2);
  EXPECT_EQ(q.active_size(), 0);
  EXPECT_EQ(q.InOrder(), (std::vector<WorkloadId>{7, 8}));
}

// The head record is kept by every change to the active set, including the removals that
// rebalance the set's nodes, and a copy records its own.
TEST(WorkloadQueueTest, HeadRecordFollowsEveryChange) {
  auto expect_head = [](const WorkloadQueue& q) {
    const std::vector<WorkloadId> active = q.ActiveInOrder();
    if (active.empty()) {
      EXPECT_EQ(q.Head(), std::nullopt);
      EXPECT_EQ(q.HeadKey(), nullptr);
      return;
    }
    ASSERT_EQ(q.Head(), active.front());
    ASSERT_NE(q.HeadKey(), nullptr);
    EXPECT_EQ(q.HeadKey()->id, active.front());
  };
  std::mt19937 rng(7);
  WorkloadQueue q;
  const std::vector<QueueKey> keys = MixedKeys();
  for (int step = 0; step < 4000; ++step) {
    const QueueKey& key = keys[rng() % keys.size()];
    switch (rng() % 8) {
      case 0:
      case 1:
        q.PushActive(key);
        break;
      case 2:
        q.PushInadmissible(key);
        break;
      case 3:
        // An admission: the head leaves.
        if (std::optional<WorkloadId> head = q.Head()) q.Remove(*head);
        break;
      case 4:
        q.Remove(key.id);
        break;
      case 5:
        q.Park(key.id);
        break;
      case 6:
        q.RequeueInadmissible(kStart + absl::Seconds(rng() % 20),
                              [](WorkloadId id) { return kStart + absl::Seconds(id % 20); });
        break;
      default:
        q.SetSticky(rng() % 3 == 0 ? std::nullopt : std::optional<WorkloadId>(key.id));
        break;
    }
    expect_head(q);
    if (step % 500 == 0) {
      WorkloadQueue copy(q);
      expect_head(copy);
      if (std::optional<WorkloadId> head = copy.Head()) copy.Remove(*head);
      expect_head(copy);
      expect_head(q);
      WorkloadQueue assigned;
      assigned = q;
      expect_head(assigned);
    }
  }
  // Down to empty by admissions.
  while (std::optional<WorkloadId> head = q.Head()) {
    q.Remove(*head);
    expect_head(q);
  }
}

// The key packs the sticky rank and a 64-bit effective priority (PriorityBoost: an int32
// priority plus an int32 boost) into one integer: each reads back, and the order is sticky
// first, then higher priority, whatever the extremes.
TEST(QueueKeyTest, PacksTheStickyRankAndA64BitPriority) {
  constexpr int64_t kMax = int64_t{std::numeric_limits<int32_t>::max()} * 2;
  constexpr int64_t kMin = int64_t{std::numeric_limits<int32_t>::min()} * 2;
  for (int64_t priority : {kMin, int64_t{-1}, int64_t{0}, int64_t{1}, kMax}) {
    for (int sticky : {0, 1}) {
      QueueKey key(sticky, priority, kStart, 9);
      EXPECT_EQ(key.priority(), priority);
      EXPECT_EQ(key.sticky_rank(), sticky);
      key.set_sticky_rank(1 - sticky);
      EXPECT_EQ(key.priority(), priority);
      EXPECT_EQ(key.sticky_rank(), 1 - sticky);
    }
  }
  EXPECT_LT(QueueKey(0, kMin, kStart, 2), QueueKey(1, kMax, kStart, 1));
  EXPECT_LT(QueueKey(1, kMax, kStart, 2), QueueKey(1, kMax - 1, kStart, 1));
  EXPECT_LT(QueueKey(1, int64_t{std::numeric_limits<int32_t>::max()} + 1, kStart, 2),
            QueueKey(1, std::numeric_limits<int32_t>::max(), kStart, 1));
  EXPECT_LT(QueueKey(1, 5, kStart, 2), QueueKey(1, 5, kStart + absl::Seconds(1), 1));
  EXPECT_LT(QueueKey(1, 5, kStart, 1), QueueKey(1, 5, kStart, 2));
}

}  // namespace
}  // namespace tollgate::core
