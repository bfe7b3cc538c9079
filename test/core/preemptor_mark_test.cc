#include <optional>
#include <string>

#include "core/cluster_state.h"
#include "gtest/gtest.h"
#include "test/core/gpu_cluster_state_fixture.h"

// A ClusterQueue's preemptor (Kueue's preemptorWorkload): the workload requeued waiting for its
// victims, which PrioritizePreemptorWorkloads orders first. The cycle's order and what the
// preemptor holds back are checked through the service in
// test/scenarios/preemption/58-prioritize-preemptor-holds-freed-quota.yaml and its neighbours.

namespace tollgate::core {
namespace {

SchedulerConfig WithAckAndGate() {
  SchedulerConfig config;
  // Victims hold their quota until their pods stop: the preemptor waits for them.
  config.evictions_need_ack = true;
  config.prioritize_preemptor_workloads = true;
  return config;
}

class PreemptorMarkTest : public GpuClusterStateTest,
                          public ::testing::WithParamInterface<QueueingStrategy> {
 protected:
  PreemptorMarkTest() : GpuClusterStateTest(WithAckAndGate()) {
    ClusterQueueSpec cq = GpuQueue("cq", "", 8);
    cq.queueing_strategy = GetParam();
    cq.preemption.within_cluster_queue = PreemptionPolicy::kLowerPriority;
    AddQueue(std::move(cq), "ns");
  }

  const Workload& Wl(const std::string& name) { return *state_.FindWorkload("ns/" + name); }
  const WorkloadQueue& Queue() { return state_.cluster_queue("cq")->queue; }
  std::optional<WorkloadId> Preemptor() { return Queue().preemptor(); }

  // `low` runs; `urgent` preempts it and waits for its pods to stop.
  void UrgentWaitsForItsVictim() {
    Submit(GpuJob("low", "ns", 8, 0));
    Settle();
    Submit(GpuJob("urgent", "ns", 8, 100));
    Settle();
    ASSERT_EQ(Wl("low").status.state, WorkloadState::kEvicting);
    ASSERT_EQ(Wl("urgent").status.state, WorkloadState::kPending);
  }
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
