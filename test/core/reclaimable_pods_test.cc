// Kueue's reclaimable pods in ClusterState: pods a running workload no longer needs give their
// quota back at once (and to whom it goes next), a pending workload asks only for the rest, the
// counts may not shrink while quota is held, and a restart derives the same usage.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/cluster_state.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tollgate::core {
namespace {

const absl::Time kStart = absl::FromUnixSeconds(1767225600);

class ReclaimablePodsTest : public ::testing::Test {
 protected:
  ReclaimablePodsTest() : state_(SchedulerConfig{}) { Configure(state_); }

  void Configure(ClusterState& state) {
    EXPECT_TRUE(state.ApplyResourceFlavor({"default", {}, {}, {}}, now_).ok());
    ClusterQueueSpec cq;
    cq.name = "cq";
    cq.resource_groups = {{{"cpu"}, {{"default", {{"cpu", 10, std::nullopt, std::nullopt}}}}}};
    EXPECT_TRUE(state.ApplyClusterQueue(cq, now_).ok());
    EXPECT_TRUE(state.ApplyLocalQueue({"ns", "q", "cq", StopPolicy::kNone, 1.0}, now_).ok());
  }

  // A JobSet-like workload: `workers` pods of 1 cpu and a driver of 2 cpu.
  static WorkloadSpec JobSet(std::string name, int32_t workers) {
    WorkloadSpec spec;
    spec.name = std::move(name);
    spec.namespace_name = "ns";
    spec.queue_name = "q";
    spec.pod_sets = {PodSetSpec{"workers", workers, std::nullopt, {{"cpu", 1}}, {}, {}},
                     PodSetSpec{"driver", 1, std::nullopt, {{"cpu", 2}}, {}, {}}};
    return spec;
  }

  void Submit(const WorkloadSpec& spec) {
    ASSERT_TRUE(state_.Submit(spec, "uid-" + spec.name, now_).ok());
  }

  void Settle() {
    while (true) {
      CyclePlan plan = state_.PlanCycle(now_);
      state_.ApplyCycle(plan, now_);
      if (!plan.MadeProgress()) return;
    }
  }

  int64_t UsedCpu(const ClusterState& state) const {
    int64_t used = 0;
    for (const Workload* wl : state.AllWorkloads()) {
      for (const auto& [fr, value] : wl->quota_usage) used += value;
    }
    return used;
  }

  WorkloadState StateOf(const std::string& name) {
    return state_.FindWorkload("ns/" + name)->status.state;
  }

  absl::Time now_ = kStart;
  ClusterState state_;
};

TEST_F(ReclaimablePodsTest, FinishedPodsOfARunningWorkloadMakeRoomForTheNext) {
  Submit(JobSet("big", 6));   // 8 cpu
  Submit(JobSet("next", 2));  // 4 cpu: waits behind big
  Settle();
  ASSERT_EQ(StateOf("big"), WorkloadState::kAdmitted);
  ASSERT_EQ(StateOf("next"), WorkloadState::kPending);
  EXPECT_EQ(UsedCpu(state_), 8);

  // Three workers succeeded: big needs 5 cpu now, and next fits beside it.
  ASSERT_TRUE(state_.SetReclaimablePods("ns/big", {{"workers", 3}}, now_).ok());
  EXPECT_EQ(UsedCpu(state_), 5);
  // The queue's usage counts (what fair preemption asks) follow the smaller usage.
  const HeldWorkloads::UsageCounts& usages = state_.cluster_queue("cq")->holding.usages();
  ASSERT_EQ(usages.size(), 1u);
  EXPECT_EQ(usages.begin()->first, state_.FindWorkload("ns/big")->quota_usage);
  EXPECT_EQ(usages.begin()->second, 1);
  Settle();
  EXPECT_EQ(StateOf("next"), WorkloadState::kAdmitted);
  EXPECT_EQ(UsedCpu(state_), 9);
}

TEST_F(ReclaimablePodsTest, APendingWorkloadAsksOnlyForWhatItStillNeeds) {
  Submit(JobSet("filler", 2));  // 4 cpu
  Submit(JobSet("big", 6));     // 8 cpu: does not fit beside filler
  Settle();
  ASSERT_EQ(StateOf("big"), WorkloadState::kPending);
  // Its first run finished two workers before it was preempted: 6 cpu still fit.
  ASSERT_TRUE(state_.SetReclaimablePods("ns/big", {{"workers", 2}}, now_).ok());
  Settle();
  ASSERT_EQ(StateOf("big"), WorkloadState::kAdmitted);
  const Workload& big = *state_.FindWorkload("ns/big");
  EXPECT_EQ(big.status.admission->pod_sets[0].count, 4);
  EXPECT_EQ(UsedCpu(state_), 10);
}

// Kueue's PodSetReducer walks down from the spec's counts: the driver is asked at its spec count
// (4, its 2 reclaimable pods included) while the workers shrink, and the queue then counts only
// the driver's 2 pods still needed.
TEST_F(ReclaimablePodsTest, PartialAdmissionAsksOtherPodSetsAtTheirSpecCount) {
  WorkloadSpec spec;
  spec.name = "mixed";
  spec.namespace_name = "ns";
  spec.queue_name = "q";
  spec.pod_sets = {PodSetSpec{"driver", 4, std::nullopt, {{"cpu", 1}}, {}, {}},
                   PodSetSpec{"workers", 10, 2, {{"cpu", 1}}, {}, {}}};
  Submit(spec);
  ASSERT_TRUE(state_.SetReclaimablePods("ns/mixed", {{"driver", 2}}, now_).ok());
  Settle();
  ASSERT_EQ(StateOf("mixed"), WorkloadState::kAdmitted);
  const Admission& admission = *state_.FindWorkload("ns/mixed")->status.admission;
  ASSERT_EQ(admission.pod_sets.size(), 2u);
  EXPECT_EQ(admission.pod_sets[0].count, 4);
  EXPECT_EQ(admission.pod_sets[1].count, 6);
  EXPECT_EQ(UsedCpu(state_), 8);
}

TEST_F(ReclaimablePodsTest, CountsAreCheckedAndDoNotShrinkWhileQuotaIsHeld) {
  Submit(JobSet("big", 6));
  Settle();
  EXPECT_TRUE(absl::IsInvalidArgument(state_.SetReclaimablePods("ns/big", {{"ps", 1}}, now_)));
  EXPECT_TRUE(absl::IsInvalidArgument(state_.SetReclaimablePods("ns/big", {{"workers", 7}}, now_)));
  EXPECT_TRUE(
      absl::IsInvalidArgument(state_.SetReclaimablePods("ns/big", {{"workers", -1}}, now_)));
  ASSERT_TRUE(state_.SetReclaimablePods("ns/big", {{"workers", 3}}, now_).ok());
  const absl::Status shrink = state_.SetReclaimablePods("ns/big", {{"workers", 2}}, now_);
  EXPECT_TRUE(absl::IsInvalidArgument(shrink));
  EXPECT_NE(shrink.message().find("cannot go below 3"), std::string::npos) << shrink;
  EXPECT_TRUE(absl::IsInvalidArgument(state_.SetReclaimablePods("ns/big", {}, now_)));
  // The same report again changes nothing; more is fine.
  EXPECT_TRUE(state_.SetReclaimablePods("ns/big", {{"workers", 3}}, now_).ok());
  EXPECT_TRUE(state_.SetReclaimablePods("ns/big", {{"driver", 0}, {"workers", 6}}, now_).ok());
  EXPECT_EQ(UsedCpu(state_), 2);
  ASSERT_TRUE(state_.Finish("ns/big", "done", now_).ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(state_.SetReclaimablePods("ns/big", {}, now_)));
}

TEST_F(ReclaimablePodsTest, ARestartDerivesTheSameUsage) {
  Submit(JobSet("big", 6));
  Settle();
  ASSERT_TRUE(state_.SetReclaimablePods("ns/big", {{"workers", 4}}, now_).ok());
  ClusterState restarted{SchedulerConfig{}};
  Configure(restarted);
  std::vector<std::unique_ptr<Workload>> stored;
  stored.push_back(std::make_unique<Workload>(*state_.FindWorkload("ns/big")));
  stored.back()->quota_usage.clear();
  ASSERT_TRUE(restarted.RestoreAll(std::move(stored)).ok());
  EXPECT_EQ(UsedCpu(restarted), 4);
  EXPECT_EQ(UsedCpu(state_), 4);
}

// Kueue's ReclaimablePods gate off: the report is still checked and recorded (the workload's
// status says what was reported), but neither a running nor a pending workload gives anything
// back.
TEST_F(ReclaimablePodsTest, WithTheGateOffReportsAreRecordedButFreeNothing) {
  SchedulerConfig config;
  config.reclaimable_pods = false;
  ClusterState state(config);
  Configure(state);
  ASSERT_TRUE(state.Submit(JobSet("big", 6), "uid-big", now_).ok());    // 8 cpu
  ASSERT_TRUE(state.Submit(JobSet("next", 2), "uid-next", now_).ok());  // 4 cpu
  auto settle = [&] {
    while (true) {
      CyclePlan plan = state.PlanCycle(now_);
      state.ApplyCycle(plan, now_);
      if (!plan.MadeProgress()) return;
    }
  };
  settle();
  ASSERT_TRUE(state.SetReclaimablePods("ns/big", {{"workers", 3}}, now_).ok());
  ASSERT_TRUE(state.SetReclaimablePods("ns/next", {{"workers", 1}}, now_).ok());
  EXPECT_THAT(state.FindWorkload("ns/big")->status.history().reclaimable_pods,
              ::testing::ElementsAre(std::pair<std::string, int32_t>("workers", 3)));
  EXPECT_FALSE(state.SetReclaimablePods("ns/big", {{"workers", 7}}, now_).ok());
  settle();
  EXPECT_EQ(UsedCpu(state), 8);
  EXPECT_EQ(state.FindWorkload("ns/next")->status.state, WorkloadState::kPending);
}

}  // namespace
}  // namespace tollgate::core
