#include "core/held_workloads.h"

#include <vector>

#include "gtest/gtest.h"

namespace tollgate::core {
namespace {

const absl::Time kStart = absl::FromUnixSeconds(1767225600);

Workload Held(WorkloadId id, int32_t priority, absl::Duration admitted_after,
              WorkloadState state = WorkloadState::kAdmitted) {
  Workload wl;
  wl.id = id;
  wl.priority = priority;
  wl.status.state = state;
  wl.status.admission_time = kStart + admitted_after;
  return wl;
}

// Files the workload at its own priority (no boost).
void Insert(HeldWorkloads& held, const Workload& wl) { held.Insert(wl, wl.priority); }

std::vector<WorkloadId> Ids(const HeldWorkloads::VictimOrder& order) {
  std::vector<WorkloadId> ids;
  for (const HeldWorkloads::VictimKey& key : order) ids.push_back(key.id);
  return ids;
}

TEST(HeldWorkloadsTest, VictimOrderIsPriorityThenLeastWorkAtRiskThenId) {
  HeldWorkloads held;
  Insert(held, Held(1, 5, absl::Minutes(1)));
  Insert(held, Held(2, 1, absl::Minutes(1)));
  Insert(held, Held(3, 1, absl::Minutes(9)));  // admitted later: loses less
  Insert(held, Held(4, 1, absl::Minutes(9)));
  Insert(held, Held(5, 3, absl::Minutes(2), WorkloadState::kEvicting));
  EXPECT_EQ(Ids(held.admitted()), (std::vector<WorkloadId>{3, 4, 2, 1}));
  EXPECT_EQ(Ids(held.evicting()), (std::vector<WorkloadId>{5}));
  EXPECT_EQ(std::vector<WorkloadId>(held.begin(), held.end()),
            (std::vector<WorkloadId>{1, 2, 3, 4, 5}));
  EXPECT_EQ(held.size(), 5u);
}

TEST(HeldWorkloadsTest, InsertRefilesAfterACheckpointOrEviction) {
  HeldWorkloads held;
  Workload early = Held(1, 0, absl::Minutes(1));
  Insert(held, early);
  Insert(held, Held(2, 0, absl::Minutes(5)));
  EXPECT_EQ(Ids(held.admitted()), (std::vector<WorkloadId>{2, 1}));
  early.status.mutable_history().last_checkpoint_time = kStart + absl::Minutes(8);
  Insert(held, early);
  EXPECT_EQ(Ids(held.admitted()), (std::vector<WorkloadId>{1, 2}));
  early.status.state = WorkloadState::kEvicting;
  Insert(held, early);
  EXPECT_EQ(Ids(held.admitted()), (std::vector<WorkloadId>{2}));
  EXPECT_EQ(Ids(held.evicting()), (std::vector<WorkloadId>{1}));
  EXPECT_EQ(held.size(), 2u);
}

TEST(HeldWorkloadsTest, EraseForgetsEverywhere) {
  HeldWorkloads held;
  Insert(held, Held(1, 0, absl::Minutes(1)));
  Insert(held, Held(2, 0, absl::Minutes(2), WorkloadState::kEvicting));
  EXPECT_TRUE(held.Erase(2));
  EXPECT_FALSE(held.Erase(2));
  EXPECT_FALSE(held.contains(2));
  EXPECT_TRUE(held.evicting().empty());
  held.Clear();
  EXPECT_TRUE(held.empty());
  EXPECT_TRUE(held.admitted().empty());
}

TEST(HeldWorkloadsTest, UsageCountsKeepEachDistinctUsageWhileOneHoldsIt) {
  HeldWorkloads held;
  const HeldWorkloads::QuotaUsage one_gpu = {{0, 1}};
  const HeldWorkloads::QuotaUsage two_gpus = {{0, 2}};
  held.CountUsage(one_gpu);
  held.CountUsage(one_gpu);
  held.CountUsage(two_gpus);
  EXPECT_EQ(held.usages(), (HeldWorkloads::UsageCounts{{one_gpu, 2}, {two_gpus, 1}}));
  held.UncountUsage(one_gpu);
  held.UncountUsage(two_gpus);
  EXPECT_EQ(held.usages(), (HeldWorkloads::UsageCounts{{one_gpu, 1}}));
  // Never counted: left alone rather than dropping a usage another workload holds.
  held.UncountUsage(two_gpus);
  EXPECT_EQ(held.usages(), (HeldWorkloads::UsageCounts{{one_gpu, 1}}));
  held.Clear();
  EXPECT_TRUE(held.usages().empty());
}

TEST(HeldWorkloadsTest, UsageCountsStopBeyondTheirLimitUntilCleared) {
  HeldWorkloads held;
  for (int64_t gpus = 1; gpus <= static_cast<int64_t>(HeldWorkloads::kMaxCountedUsages); ++gpus) {
    held.CountUsage({{0, gpus}});
  }
  EXPECT_TRUE(held.usages_known());
  EXPECT_EQ(held.usages().size(), HeldWorkloads::kMaxCountedUsages);
  held.CountUsage({{0, 1000}});
  EXPECT_FALSE(held.usages_known());
  EXPECT_TRUE(held.usages().empty());
  held.Clear();
  held.CountUsage({{0, 1}});
  EXPECT_TRUE(held.usages_known());
  EXPECT_EQ(held.usages().size(), 1u);
}

}  // namespace
}  // namespace tollgate::core
