// Kueue's deprecated fixed node-failure delay (feature gate
// TASReplaceNodeDueToNotReadyOverFixedTime, pkg/controller/tas/node_controller.go): through
// ClusterState on a simulated clock, the timer firing when the delay runs out. Ported by
// reading node_controller_test.go ("Node Found and Unhealthy (NotReady), delay not passed / delay
// passed", "Node NotReady, delay passed, pod running, fixed-time marking enabled / disabled").

#include <optional>
#include <string>
#include <utility>

#include "absl/time/time.h"
#include "core/clock.h"
#include "core/cluster_state.h"
#include "core/node_failure_rule.h"
#include "gtest/gtest.h"

namespace tollgate::core {
namespace {

constexpr char kRack[] = "cloud.com/topology-rack";

SchedulerConfig WithFixedDelay(bool on) {
  SchedulerConfig config;
  config.replace_node_not_ready_over_fixed_time = on;
  return config;
}

class NodeFailureDelayTest : public ::testing::TestWithParam<bool> {
 protected:
  NodeFailureDelayTest() : state_(WithFixedDelay(GetParam())) {
    EXPECT_TRUE(state_.ApplyNamespace({"ns", {}}, Now()).ok());
    EXPECT_TRUE(state_.ApplyTopology({"default", {kRack, kHostnameLabel}}, Now()).ok());
    ResourceFlavorSpec flavor;
    flavor.name = "tas-flavor";
    flavor.topology_name = "default";
    EXPECT_TRUE(state_.ApplyResourceFlavor(flavor, Now()).ok());
    ClusterQueueSpec cq;
    cq.name = "cq";
    cq.resource_groups = {{{"gpu"}, {{"tas-flavor", {{"gpu", 16, std::nullopt, std::nullopt}}}}}};
    EXPECT_TRUE(state_.ApplyClusterQueue(cq, Now()).ok());
    EXPECT_TRUE(state_.ApplyLocalQueue({"ns", "q", "cq", StopPolicy::kNone, 1.0}, Now()).ok());
    for (const char* host : {"x1", "x2", "x3"}) {
      NodeSpec n;
      n.name = host;
      n.labels = {{kRack, "r1"}, {kHostnameLabel, host}};
      n.allocatable = {{"gpu", 2}, {"pods", 110}};
      EXPECT_TRUE(state_.UpsertNode(n, Now()).ok());
    }
    WorkloadSpec spec;
    spec.name = "job";
    spec.namespace_name = "ns";
    spec.queue_name = "q";
    PodSetSpec ps;
    ps.name = "main";
    ps.count = 4;
    ps.requests = {{"gpu", 1}};
    PodSetTopologyRequest required;
    required.required = kRack;
    ps.topology_request = required;
    spec.pod_sets = {ps};
    EXPECT_TRUE(state_.Submit(std::move(spec), "", Now()).ok());
    for (int i = 0; i < 10; ++i) {
      CyclePlan plan = state_.PlanCycle(Now());
      state_.ApplyCycle(plan, Now());
      if (!plan.MadeProgress()) break;
    }
  }

  absl::Time Now() const { return clock_.Now(); }
  bool FixedDelay() const { return GetParam(); }

  std::string Placement() {
    const Workload& wl = *state_.FindWorkload("ns/job");
    if (wl.status.state != WorkloadState::kAdmitted) return "<not admitted>";
    std::string out;
    for (const TopologyDomainAssignment& d :
         wl.status.admission->pod_sets[0].topology_assignment->domains) {
      if (!out.empty()) out += " ";
      out += d.values.back() + ":" + std::to_string(d.count);
    }
    return out;
  }

  // x2 stops being ready with the workload's pods still running there; `since` is what the
  // feeder says (unset: it does not know).
  void X2NotReady(std::optional<absl::Time> since) {
    NodeSpec x2 = *state_.topology().FindNode("x2");
    x2.ready = false;
    x2.not_ready_since = since;
    x2.running_workloads = {"ns/job"};
    ASSERT_TRUE(state_.UpsertNode(x2, Now()).ok());
  }

  void X2Ready() {
    NodeSpec x2 = *state_.topology().FindNode("x2");
    x2.ready = true;
    x2.not_ready_since.reset();
    x2.running_workloads.clear();
    ASSERT_TRUE(state_.UpsertNode(x2, Now()).ok());
  }

  // A scheduling cycle: Kueue's scheduler replaces the failed nodes its node controller recorded
  // in its next cycle (ClusterState::PlanCycle).
  void Cycle() {
    CyclePlan plan = state_.PlanCycle(Now());
    state_.ApplyCycle(plan, Now());
  }

  // Moves the clock and fires what is due, then runs a cycle, as the service's timer loop does.
  bool AdvanceAndFire(absl::Duration d) {
    clock_.Advance(d);
    const bool fired = state_.FireTimers(Now());
    Cycle();
    return fired;
  }

  SimulatedClock clock_{absl::FromUnixSeconds(1767225600)};
  ClusterState state_;
};

TEST_P(NodeFailureDelayTest, NotReadyWithPodsRunningFailsAtThirtySecondsNotBefore) {
  ASSERT_EQ(Placement(), "x1:2 x2:2");
  X2NotReady(Now());
  EXPECT_EQ(Placement(), "x1:2 x2:2");
  if (FixedDelay()) {
    EXPECT_EQ(state_.NextTimer(), Now() + kNodeFailureDelay);
  } else {
    EXPECT_EQ(state_.NextTimer(), std::nullopt);
  }
  EXPECT_FALSE(AdvanceAndFire(absl::Seconds(29)));
  EXPECT_EQ(Placement(), "x1:2 x2:2");
  // 30 s: with the gate the pods running there no longer hold the placement.
  EXPECT_EQ(AdvanceAndFire(absl::Seconds(1)), FixedDelay());
  if (FixedDelay()) {
    EXPECT_EQ(Placement(), "x1:2 x3:2");
    EXPECT_TRUE(state_.FindWorkload("ns/job")->status.history().unhealthy_nodes.empty());
  } else {
    // Without it an hour changes nothing: only the pods ending there do.
    EXPECT_FALSE(AdvanceAndFire(absl::Hours(1)));
    EXPECT_EQ(Placement(), "x1:2 x2:2");
    NodeSpec x2 = *state_.topology().FindNode("x2");
    x2.running_workloads.clear();
    ASSERT_TRUE(state_.UpsertNode(x2, Now()).ok());
    Cycle();
    EXPECT_EQ(Placement(), "x1:2 x3:2");
  }
}

TEST_P(NodeFailureDelayTest, ReadyAgainBeforeThirtySecondsCancels) {
  X2NotReady(Now());
  EXPECT_FALSE(AdvanceAndFire(absl::Seconds(20)));
  X2Ready();
  EXPECT_FALSE(AdvanceAndFire(absl::Seconds(10)));
  EXPECT_FALSE(AdvanceAndFire(absl::Hours(1)));
  EXPECT_EQ(Placement(), "x1:2 x2:2");
  EXPECT_EQ(state_.NextTimer(), std::nullopt);
}

TEST_P(NodeFailureDelayTest, NotReadyAgainStartsTheDelayAgain) {
  const absl::Time first = Now();
  X2NotReady(std::nullopt);
  EXPECT_EQ(state_.topology().FindNode("x2")->not_ready_since, first);
  clock_.Advance(absl::Seconds(10));
  X2Ready();
  EXPECT_EQ(state_.topology().FindNode("x2")->not_ready_since, std::nullopt);
  clock_.Advance(absl::Seconds(10));
  const absl::Time second = Now();
  X2NotReady(std::nullopt);
  // The first timer (at first + 30 s) is stale: the node has been not ready for 10 s only.
  EXPECT_FALSE(AdvanceAndFire(absl::Seconds(10)));
  EXPECT_EQ(Placement(), "x1:2 x2:2");
  EXPECT_FALSE(AdvanceAndFire(second + absl::Seconds(29) - Now()));
  EXPECT_EQ(Placement(), "x1:2 x2:2");
  EXPECT_EQ(AdvanceAndFire(absl::Seconds(1)), FixedDelay());
  EXPECT_EQ(Placement(), FixedDelay() ? "x1:2 x3:2" : "x1:2 x2:2");
}

TEST_P(NodeFailureDelayTest, AFeederWithoutATimeKeepsTheFirstOne) {
  const absl::Time first = Now();
  X2NotReady(std::nullopt);
  clock_.Advance(absl::Seconds(20));
  // The same node again (say another workload's pods there changed): still not ready since
  // `first`, so the delay runs out at first + 30 s.
  X2NotReady(std::nullopt);
  EXPECT_EQ(state_.topology().FindNode("x2")->not_ready_since, first);
  EXPECT_EQ(AdvanceAndFire(absl::Seconds(10)), FixedDelay());
}

TEST_P(NodeFailureDelayTest, NotReadyForLongerThanTheDelayAlreadyFailsAtOnce) {
  X2NotReady(Now() - kNodeFailureDelay);
  Cycle();
  EXPECT_EQ(Placement(), FixedDelay() ? "x1:2 x3:2" : "x1:2 x2:2");
}

TEST_P(NodeFailureDelayTest, WithoutARoomLeftTheWorkloadIsEvicted) {
  NodeSpec x3 = *state_.topology().FindNode("x3");
  x3.unschedulable = true;
  ASSERT_TRUE(state_.UpsertNode(x3, Now()).ok());
  X2NotReady(Now());
  AdvanceAndFire(kNodeFailureDelay);
  const Workload& wl = *state_.FindWorkload("ns/job");
  if (!FixedDelay()) {
    EXPECT_EQ(wl.status.state, WorkloadState::kAdmitted);
    return;
  }
  const Condition* evicted = FindCondition(wl.status, "Evicted");
  ASSERT_NE(evicted, nullptr);
  EXPECT_EQ(evicted->reason, "NodeFailures");
  EXPECT_EQ(evicted->message,
            "Workload was evicted as there was no replacement for unhealthy node(s): x2");
}

INSTANTIATE_TEST_SUITE_P(Gate, NodeFailureDelayTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "On" : "Off";
                         });

}  // namespace
}  // namespace tollgate::core
