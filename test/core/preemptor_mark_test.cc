#include <string>

#include "core/cluster_state.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

// A ClusterQueue's preemptor (Kueue's preemptorWorkload): the workload requeued waiting for its
// victims, which PrioritizePreemptorWorkloads orders first. The cycle's order and what the
// preemptor holds back are checked through the service in
// test/scenarios/preemption/58-prioritize-preemptor-holds-freed-quota.yaml and its neighbours.

namespace tollgate::core {
namespace {

const absl::Time kStart = absl::FromUnixSeconds(1767225600);

WorkloadSpec GpuJob(std::string name, int32_t gpus, int32_t priority) {
  WorkloadSpec spec;
  spec.name = std::move(name);
  spec.namespace_name = "ns";
  spec.queue_name = "q";
  spec.priority = priority;
  spec.pod_sets = {PodSetSpec{"main", gpus, std::nullopt, {{"gpu", 1}}, {}, {}}};
  return spec;
}

SchedulerConfig WithAckAndGate() {
  SchedulerConfig config;
  // Victims hold their quota until their pods stop: the preemptor waits for them.
  config.evictions_need_ack = true;
  config.prioritize_preemptor_workloads = true;
  return config;
}

class PreemptorMarkTest : public ::testing::TestWithParam<QueueingStrategy> {
 protected:
  PreemptorMarkTest() : state_(WithAckAndGate()) {
    EXPECT_TRUE(state_.ApplyResourceFlavor({"a100", {}, {}, {}}, now_).ok());
    ClusterQueueSpec cq;
    cq.name = "cq";
    cq.queueing_strategy = GetParam();
    cq.resource_groups = {{{"gpu"}, {{"a100", {{"gpu", 8, std::nullopt, std::nullopt}}}}}};
    cq.preemption.within_cluster_queue = PreemptionPolicy::kLowerPriority;
    EXPECT_TRUE(state_.ApplyClusterQueue(cq, now_).ok());
    EXPECT_TRUE(state_.ApplyLocalQueue({"ns", "q", "cq", StopPolicy::kNone, 1.0}, now_).ok());
  }

  void Submit(WorkloadSpec spec) {
    now_ += absl::Milliseconds(1);
    ASSERT_TRUE(state_.Submit(std::move(spec), "", now_).ok());
  }

  void Settle() {
    while (true) {
      CyclePlan plan = state_.PlanCycle(now_);
      state_.ApplyCycle(plan, now_);
      if (!plan.MadeProgress()) return;
    }
  }

  const Workload& Wl(const std::string& name) { return *state_.FindWorkload("ns/" + name); }
  const WorkloadQueue& Queue() { return state_.cluster_queue("cq")->queue; }
  std::optional<WorkloadId> Preemptor() { return Queue().preemptor(); }

  // `low` runs; `urgent` preempts it and waits for its pods to stop.
  void UrgentWaitsForItsVictim() {
    Submit(GpuJob("low", 8, 0));
    Settle();
    Submit(GpuJob("urgent", 8, 100));
    Settle();
    ASSERT_EQ(Wl("low").status.state, WorkloadState::kEvicting);
    ASSERT_EQ(Wl("urgent").status.state, WorkloadState::kPending);
  }

  absl::Time now_ = kStart;
  ClusterState state_;
};

TEST_P(PreemptorMarkTest, APreemptorWaitingForItsVictimsIsItsQueuesPreemptor) {
  UrgentWaitsForItsVictim();
  EXPECT_EQ(Preemptor(), Wl("urgent").id);
  // Only a BestEffortFIFO queue keeps it at its head as well (Kueue's sticky preemptor).
  EXPECT_EQ(Queue().sticky().has_value(), GetParam() == QueueingStrategy::kBestEffortFifo);
}

TEST_P(PreemptorMarkTest, AdmittedItIsNoLongerThePreemptor) {
  UrgentWaitsForItsVictim();
  ASSERT_TRUE(state_.ReleaseEvicted("ns/low", now_).ok());
  Settle();
  ASSERT_EQ(Wl("urgent").status.state, WorkloadState::kAdmitted);
  // low is queued again in the same queue, which has no preemptor now.
  ASSERT_NE(state_.QueuedIn(Wl("low").id), nullptr);
  EXPECT_EQ(Preemptor(), std::nullopt);
}

TEST_P(PreemptorMarkTest, ItsSpecChangedItIsNoLongerThePreemptor) {
  UrgentWaitsForItsVictim();
  ASSERT_EQ(Preemptor(), Wl("urgent").id);
  // Kueue compares the generation the preemptor was evaluated at with the workload's (and takes
  // an updated workload out of its queue); here the new priority requeues it.
  ASSERT_TRUE(state_.SetPriority("ns/urgent", 200, now_).ok());
  EXPECT_EQ(Preemptor(), std::nullopt);
}

TEST_P(PreemptorMarkTest, DeactivatedItIsNoLongerThePreemptor) {
  UrgentWaitsForItsVictim();
  ASSERT_TRUE(state_.SetActive("ns/urgent", false, now_).ok());
  ASSERT_TRUE(state_.SetActive("ns/urgent", true, now_).ok());
  EXPECT_EQ(Preemptor(), std::nullopt);
}

INSTANTIATE_TEST_SUITE_P(Strategies, PreemptorMarkTest,
                         ::testing::Values(QueueingStrategy::kBestEffortFifo,
                                           QueueingStrategy::kStrictFifo),
                         [](const auto& info) {
                           return info.param == QueueingStrategy::kStrictFifo
                                      ? std::string("StrictFIFO")
                                      : std::string("BestEffortFIFO");
                         });

}  // namespace
}  // namespace tollgate::core
