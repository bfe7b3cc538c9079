// PriorityBoost through ClusterState: the queue key, SetPriorityBoost on a pending and on an
// admitted workload, Submit's validation, and a stored invalid value read at the base priority.

#include <optional>
#include <string>

#include "core/cluster_state.h"
#include "core/priority_boost.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/core/gpu_cluster_state_fixture.h"

namespace tollgate::core {
namespace {

using ::testing::HasSubstr;

SchedulerConfig BoostOn() {
  SchedulerConfig config;
  config.priority_boost = true;
  return config;
}

std::string HeadOf(const ClusterState& state) {
  const QueueKey* key = state.cluster_queue("cq")->queue.HeadKey();
  if (key == nullptr) return "";
  const Workload* wl = state.workload(key->id);
  EXPECT_EQ(key->priority(), EffectivePriority(*wl, state.config())) << wl->Key();
  return wl->spec.name;
}

WorkloadSpec Boosted(WorkloadSpec spec, std::string boost) {
  SetPriorityBoostAnnotation(spec, std::move(boost));
  return spec;
}

TEST(PriorityBoostStateTest, TheQueueOrdersByTheEffectivePriority) {
  ClusterState state{BoostOn()};
  absl::Time now = kFixtureStart;
  ASSERT_NO_FATAL_FAILURE(AddFourGpuQueue(state, now));
  ASSERT_TRUE(state.Submit(GpuJob("v", "ns", 4, 100), "", now).ok());
  // Lower class, boosted above v: first (Kueue's "boost crosses priority class boundaries").
  ASSERT_TRUE(
      state.Submit(Boosted(GpuJob("u", "ns", 4, 50), "60"), "", now + absl::Milliseconds(1)).ok());
  EXPECT_EQ(HeadOf(state), "u");
  ASSERT_TRUE(state.SetPriorityBoost("ns/u", "-1", now).ok());
  EXPECT_EQ(HeadOf(state), "v");
  ASSERT_TRUE(state.SetPriorityBoost("ns/u", "50", now).ok());
  EXPECT_EQ(HeadOf(state), "v");  // equal at 100: the older first
  ASSERT_TRUE(state.SetPriorityBoost("ns/u", "51", now).ok());
  EXPECT_EQ(HeadOf(state), "u");
  ASSERT_TRUE(state.SetPriorityBoost("ns/u", std::nullopt, now).ok());
  EXPECT_EQ(HeadOf(state), "v");
  EXPECT_EQ(PriorityBoostAnnotationOf(state.FindWorkload("ns/u")->spec), nullptr);
}

TEST(PriorityBoostStateTest, GateOffStoresTheAnnotationAndIgnoresIt) {
  ClusterState state{SchedulerConfig{}};
  absl::Time now = kFixtureStart;
  ASSERT_NO_FATAL_FAILURE(AddFourGpuQueue(state, now));
  ASSERT_TRUE(state.Submit(GpuJob("v", "ns", 4, 100), "", now).ok());
  ASSERT_TRUE(
      state.Submit(Boosted(GpuJob("u", "ns", 4, 50), "nonsense"), "", now + absl::Milliseconds(1))
          .ok());
  ASSERT_TRUE(state.SetPriorityBoost("ns/u", "1000", now).ok());
  EXPECT_EQ(HeadOf(state), "v");
  EXPECT_EQ(*PriorityBoostAnnotationOf(state.FindWorkload("ns/u")->spec), "1000");
}

TEST(PriorityBoostStateTest, InvalidValuesAreRefusedWithTheGateOn) {
  ClusterState state{BoostOn()};
  absl::Time now = kFixtureStart;
  ASSERT_NO_FATAL_FAILURE(AddFourGpuQueue(state, now));
  absl::StatusOr<SubmitOutcome> bad = state.Submit(Boosted(GpuJob("x", "ns", 4), "ten"), "", now);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(),
              HasSubstr("metadata.annotations[kueue.x-k8s.io/priority-boost]: Invalid value: "
                        "\"ten\": must be a valid signed integer"));
  EXPECT_EQ(state.FindWorkload("ns/x"), nullptr);
  ASSERT_TRUE(state.Submit(GpuJob("w", "ns", 4), "", now).ok());
  absl::Status empty = state.SetPriorityBoost("ns/w", "", now);
  EXPECT_EQ(empty.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(empty.message(), HasSubstr("use \"0\" explicitly"));
  EXPECT_EQ(PriorityBoostAnnotationOf(state.FindWorkload("ns/w")->spec), nullptr);
  EXPECT_EQ(state.SetPriorityBoost("ns/none", "1", now).code(), absl::StatusCode::kNotFound);
}

TEST(PriorityBoostStateTest, AResubmitKeepsTheBoostItWasGiven) {
  ClusterState state{BoostOn()};
  absl::Time now = kFixtureStart;
  ASSERT_NO_FATAL_FAILURE(AddFourGpuQueue(state, now));
  ASSERT_TRUE(state.Submit(GpuJob("w", "ns", 4), "", now).ok());
  ASSERT_TRUE(state.SetPriorityBoost("ns/w", "7", now).ok());
  absl::StatusOr<SubmitOutcome> again = state.Submit(GpuJob("w", "ns", 4), "", now);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*PriorityBoostAnnotationOf(state.FindWorkload("ns/w")->spec), "7");
}

// A value stored while the gate was off (no webhook then) counts as no boost once it is on:
// Kueue's EffectivePriority falls back to the base priority.
TEST(PriorityBoostStateTest, AStoredInvalidValueReadsAsTheBasePriority) {
  absl::Time now = kFixtureStart;
  ClusterState before{SchedulerConfig{}};
  ASSERT_NO_FATAL_FAILURE(AddFourGpuQueue(before, now));
  ASSERT_TRUE(before.Submit(Boosted(GpuJob("u", "ns", 4, 50), "lots"), "", now).ok());
  ASSERT_TRUE(before.Submit(GpuJob("v", "ns", 4, 60), "", now + absl::Milliseconds(1)).ok());

  ClusterState after{BoostOn()};
  ASSERT_NO_FATAL_FAILURE(AddFourGpuQueue(after, now));
  for (const char* key : {"ns/u", "ns/v"}) {
    Workload copy = *before.FindWorkload(key);
    copy.id = 0;
    ASSERT_TRUE(after.Restore(std::move(copy)).ok());
  }
  EXPECT_EQ(EffectivePriority(*after.FindWorkload("ns/u"), after.config()), 50);
  EXPECT_EQ(HeadOf(after), "v");
}

// An admitted workload's boost changes whom it may be preempted by. Losing it lets the
// inadmissible workloads of its tree try again only when it has a WorkloadPriorityClass
// (Kueue's PriorityChanged); with a PriorityClass the parked preemptor waits for another event.
struct AdmittedCase {
  std::string name;
  bool pod_priority_class;
  bool requeued;
};

class AdmittedBoostTest : public ::testing::TestWithParam<AdmittedCase> {};

TEST_P(AdmittedBoostTest, ProtectsItUntilRemoved) {
  const AdmittedCase& c = GetParam();
  ClusterState state{BoostOn()};
  absl::Time now = kFixtureStart;
  ASSERT_TRUE(state.ApplyResourceFlavor({"a100", {}, {}, {}}, now).ok());
  ASSERT_TRUE(state.ApplyPriorityClass({"low", 100, c.pod_priority_class}, now).ok());
  ASSERT_TRUE(state.ApplyPriorityClass({"mid", 200, c.pod_priority_class}, now).ok());
  ClusterQueueSpec cq = GpuQueue("cq", "", 4);
  cq.preemption.within_cluster_queue = PreemptionPolicy::kLowerPriority;
  ASSERT_TRUE(state.ApplyClusterQueue(cq, now).ok());
  ASSERT_TRUE(state.ApplyLocalQueue({"ns", "q", "cq", StopPolicy::kNone, 1.0}, now).ok());
  auto job = [](std::string name, std::string priority_class) {
    WorkloadSpec spec = GpuJob(std::move(name), "ns", 4);
    spec.priority.reset();
    spec.priority_class_name = std::move(priority_class);
    return spec;
  };
  ASSERT_TRUE(state.Submit(job("low", "low"), "", now).ok());
  SettleAt(state, now);
  ASSERT_EQ(state.FindWorkload("ns/low")->status.state, WorkloadState::kAdmitted);
  ASSERT_TRUE(state.SetPriorityBoost("ns/low", "150", now).ok());
  ASSERT_TRUE(state.Submit(job("mid", "mid"), "", now).ok());
  SettleAt(state, now);
  EXPECT_EQ(state.FindWorkload("ns/low")->status.state, WorkloadState::kAdmitted);
  EXPECT_EQ(state.FindWorkload("ns/mid")->status.state, WorkloadState::kPending);
  ASSERT_TRUE(state.SetPriorityBoost("ns/low", std::nullopt, now).ok());
  now += absl::Seconds(1);
  SettleAt(state, now);
  EXPECT_EQ(state.FindWorkload("ns/low")->status.state == WorkloadState::kAdmitted, !c.requeued);
}

INSTANTIATE_TEST_SUITE_P(Classes, AdmittedBoostTest,
                         ::testing::Values(AdmittedCase{"WorkloadPriorityClass", false, true},
                                           AdmittedCase{"PodPriorityClass", true, false}),
                         [](const ::testing::TestParamInfo<AdmittedCase>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace tollgate::core
