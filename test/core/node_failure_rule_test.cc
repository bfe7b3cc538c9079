// Kueue's node controller rule for one workload on one node (node_controller_test.go,
// TestNodeFailureReconciler and TestGetWorkloadStatus with the default feature gates:
// TASReplaceNodeOnPodTermination and TASReplaceNodeOnNodeTaints on), ported by reading them.
// "Pods running" is the feeder listing the workload in the node's running_workloads.

#include "core/node_failure_rule.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace tollgate::core {
namespace {

constexpr char kNode[] = "test-node-name";
constexpr char kOtherNode[] = "test-node-name-2";

class NodeFailureRuleTest : public ::testing::Test {
 protected:
  NodeFailureRuleTest() {
    node_.name = kNode;
    node_.labels = {{kHostnameLabel, kNode}};
    wl_.spec.namespace_name = "default";
    wl_.spec.name = "test-workload";
    PodSetSpec ps;
    ps.name = "main";
    ps.count = 1;
    wl_.spec.pod_sets = {ps};
    Admission admission;
    admission.cluster_queue = "cq";
    admission.pod_sets = {Placed("main", {{kNode, 1}})};
    wl_.status.admission = admission;
    flavors_["unit-test-flavor"].name = "unit-test-flavor";
  }

  static PodSetAssignment Placed(const std::string& name,
                                 std::vector<std::pair<std::string, int32_t>> hosts,
                                 const std::string& flavor = "unit-test-flavor") {
    PodSetAssignment psa;
    psa.name = name;
    psa.flavors = {{"cpu", flavor}};
    TopologyAssignment ta;
    ta.levels = {kHostnameLabel};
    for (const auto& [host, count] : hosts) ta.domains.push_back({{host}, count});
    psa.topology_assignment = ta;
    return psa;
  }

  void Taint(const std::string& effect) { node_.taints = {{"foo", "", effect}}; }
  void PodsRunning() { node_.running_workloads = {wl_.Key()}; }
  static Toleration Exists(const std::string& effect, std::optional<int64_t> seconds = {}) {
    Toleration t;
    t.key = "foo";
    t.op = "Exists";
    t.effect = effect;
    t.toleration_seconds = seconds;
    return t;
  }

  bool Failed() { return PlacementFailedOn(&node_, kNode, wl_, flavors_); }

  NodeSpec node_;
  Workload wl_;
  std::map<std::string, ResourceFlavorSpec> flavors_;
};

TEST_F(NodeFailureRuleTest, AHealthyNodeWithRunningPodsKeepsThePlacement) {
  PodsRunning();
  EXPECT_FALSE(Failed());
}

TEST_F(NodeFailureRuleTest, AReadyUntaintedNodeKeepsThePlacementEvenWithoutPods) {
  EXPECT_FALSE(Failed());
}

TEST_F(NodeFailureRuleTest, AGoneNodeFailsAtOnce) {
  EXPECT_TRUE(PlacementFailedOn(nullptr, kNode, wl_, flavors_));
}

TEST_F(NodeFailureRuleTest, ANotReadyNodeWaitsForThePodsToTerminate) {
  node_.ready = false;
  PodsRunning();
  EXPECT_FALSE(Failed());
  node_.running_workloads.clear();
  EXPECT_TRUE(Failed());
}

// "Node Found and Unhealthy (NotReady), delay not passed" and "Node NotReady, delay passed, pod
// running, fixed-time marking enabled - marked" (TASReplaceNodeDueToNotReadyOverFixedTime on).
TEST_F(NodeFailureRuleTest, WithTheFixedDelayANotReadyNodeFailsAfterThirtySecondsWithPods) {
  const absl::Time since = absl::FromUnixSeconds(1767225600);
  node_.ready = false;
  node_.not_ready_since = since;
  PodsRunning();
  EXPECT_EQ(NodeFailureDelayEnds(node_), since + absl::Seconds(30));
  EXPECT_FALSE(PlacementFailedOn(&node_, kNode, wl_, flavors_, since + absl::Seconds(29)));
  EXPECT_TRUE(PlacementFailedOn(&node_, kNode, wl_, flavors_, since + absl::Seconds(30)));
  // Before the delay the pods ending still fail it (TASReplaceNodeOnPodTermination stays on).
  node_.running_workloads.clear();
  EXPECT_TRUE(PlacementFailedOn(&node_, kNode, wl_, flavors_, since));
}

// "Node NotReady, delay passed, pod running, fixed-time marking disabled - not marked".
TEST_F(NodeFailureRuleTest, WithoutTheFixedDelayTheNotReadyTimeIsNotRead) {
  node_.ready = false;
  node_.not_ready_since = absl::FromUnixSeconds(0);
  PodsRunning();
  EXPECT_FALSE(Failed());
}

TEST_F(NodeFailureRuleTest, AReadyNodeOrOneWithoutATimeHasNoDelay) {
  EXPECT_EQ(NodeFailureDelayEnds(node_), std::nullopt);
  node_.ready = false;
  EXPECT_EQ(NodeFailureDelayEnds(node_), std::nullopt);
  PodsRunning();
  EXPECT_FALSE(PlacementFailedOn(&node_, kNode, wl_, flavors_, absl::InfiniteFuture()));
}

// "Node has untolerated NoExecute taint, ReplaceNodeOnPodTermination on, pod running -> Healthy
// (wait)", "... pod terminating -> Unhealthy", "... no pods -> Unhealthy (immediate)".
TEST_F(NodeFailureRuleTest, AnUntoleratedNoExecuteTaintFailsOnceThePodsAreGone) {
  Taint("NoExecute");
  PodsRunning();
  EXPECT_FALSE(Failed());
  node_.running_workloads.clear();
  EXPECT_TRUE(Failed());
}

// "Node has NoExecute taint and pods missing -> Unhealthy (immediate)" (a taint with a value).
TEST_F(NodeFailureRuleTest, ANoExecuteTaintWithAValueAndNoPodsFailsAtOnce) {
  node_.taints = {{"key1", "value1", "NoExecute"}};
  EXPECT_TRUE(Failed());
}

// "Node has NoExecute taint with TolerationSeconds -> Healthy (wait for eviction)" and
// "..., pod terminating -> Unhealthy": a toleration for a while is waited on like none.
TEST_F(NodeFailureRuleTest, ANoExecuteTaintToleratedForAWhileFailsOnceThePodsAreEvicted) {
  Taint("NoExecute");
  wl_.spec.pod_sets[0].tolerations = {Exists("NoExecute", 300)};
  PodsRunning();
  EXPECT_FALSE(Failed());
  node_.running_workloads.clear();
  EXPECT_TRUE(Failed());
}

// "Node has NoSchedule taint, ReplaceNodeOnPodTermination on, pod running -> Healthy", and
// "Node has untolerated NoSchedule taint, workload has no pods at all -> Unhealthy".
TEST_F(NodeFailureRuleTest, AnUntoleratedNoScheduleTaintKeepsRunningPodsAndFailsWithoutThem) {
  Taint("NoSchedule");
  PodsRunning();
  EXPECT_FALSE(Failed());
  node_.running_workloads.clear();
  EXPECT_TRUE(Failed());
}

// "Node has NoSchedule taint, tolerated -> Healthy".
TEST_F(NodeFailureRuleTest, ATaintThePodSetToleratesForGoodKeepsThePlacement) {
  Taint("NoSchedule");
  wl_.spec.pod_sets[0].tolerations = {Exists("NoSchedule")};
  EXPECT_FALSE(Failed());
  Taint("NoExecute");
  wl_.spec.pod_sets[0].tolerations = {Exists("")};
  EXPECT_FALSE(Failed());
}

// "Node has NoSchedule taint tolerated by assigned ResourceFlavor -> Healthy".
TEST_F(NodeFailureRuleTest, ATaintTheAssignedFlavorToleratesKeepsThePlacement) {
  Taint("NoSchedule");
  flavors_["rf-toleration-flavor"].name = "rf-toleration-flavor";
  flavors_["rf-toleration-flavor"].tolerations = {Exists("NoSchedule")};
  wl_.status.admission->pod_sets[0] = Placed("main", {{kNode, 1}}, "rf-toleration-flavor");
  EXPECT_FALSE(Failed());
  // Another flavor's tolerations do not count.
  wl_.status.admission->pod_sets[0] = Placed("main", {{kNode, 1}});
  EXPECT_TRUE(Failed());
}

// "Assigned node gets NoSchedule taint tolerated by AdmissionCheck PodSetUpdate -> Healthy".
TEST_F(NodeFailureRuleTest, ATaintAnAdmissionChecksPodSetUpdateToleratesKeepsThePlacement) {
  Taint("NoSchedule");
  AdmissionCheckState check;
  check.name = "check";
  check.state = CheckState::kReady;
  PodSetUpdate update;
  update.name = "main";
  update.tolerations = {Exists("NoSchedule")};
  check.pod_set_updates = {update};
  wl_.status.set_admission_checks({check});
  EXPECT_FALSE(Failed());
}

TEST_F(NodeFailureRuleTest, PreferNoScheduleIsNoFailure) {
  Taint("PreferNoSchedule");
  EXPECT_FALSE(Failed());
}

// KEP-2724: "Nodes with .spec.unschedulable set to true are treated as having the NoSchedule
// taint": running pods keep the placement, none fail it, a toleration of the taint keeps it.
TEST_F(NodeFailureRuleTest, ACordonedNodeCountsAsTaintedNoSchedule) {
  node_.unschedulable = true;
  PodsRunning();
  EXPECT_FALSE(Failed());
  node_.running_workloads.clear();
  EXPECT_TRUE(Failed());
  Toleration cordon;
  cordon.key = kUnschedulableTaintKey;
  cordon.op = "Exists";
  wl_.spec.pod_sets[0].tolerations = {cordon};
  EXPECT_FALSE(Failed());
}

// Kueue looks only at the pod sets whose assignment names the node.
TEST_F(NodeFailureRuleTest, OnlyThePodSetsPlacedOnTheNodeCount) {
  Taint("NoSchedule");
  PodSetSpec workers;
  workers.name = "workers";
  workers.count = 1;
  wl_.spec.pod_sets[0].tolerations = {Exists("NoSchedule")};
  wl_.spec.pod_sets.push_back(workers);
  wl_.status.admission->pod_sets.push_back(Placed("workers", {{kOtherNode, 1}}));
  EXPECT_FALSE(Failed());
  wl_.status.admission->pod_sets[1] = Placed("workers", {{kOtherNode, 1}, {kNode, 1}});
  EXPECT_TRUE(Failed());
}

// Kueue's workloadHealthUnknown: tolerations that cannot be merged decide nothing.
TEST_F(NodeFailureRuleTest, ConflictingPodSetUpdatesDecideNothing) {
  Taint("NoSchedule");
  std::vector<AdmissionCheckState> checks;
  for (const std::string value : {"a", "b"}) {
    AdmissionCheckState check;
    check.name = std::string("check-") + value;
    PodSetUpdate update;
    update.name = "main";
    update.node_selector = {{"zone", value}};
    check.pod_set_updates = {update};
    checks.push_back(check);
  }
  wl_.status.set_admission_checks(checks);
  EXPECT_FALSE(Failed());
}

TEST(ClassifyTaintTest, FollowsKueuesClassifyTaints) {
  const Taint taint{"foo", "bar", "NoExecute"};
  const std::vector<Toleration> none;
  const std::vector<Toleration> for_good = {{"foo", "Equal", "bar", "NoExecute"}};
  std::vector<Toleration> for_a_while = for_good;
  for_a_while[0].toleration_seconds = 60;
  const std::vector<Toleration> other_value = {{"foo", "Equal", "baz", "NoExecute"}};
  EXPECT_EQ(ClassifyTaint(taint, {&for_good}), TaintToleration::kPermanently);
  EXPECT_EQ(ClassifyTaint(taint, {&for_good, &for_a_while}), TaintToleration::kTemporarily);
  EXPECT_EQ(ClassifyTaint(taint, {&for_a_while, &none}), TaintToleration::kNot);
  EXPECT_EQ(ClassifyTaint(taint, {&other_value}), TaintToleration::kNot);
  EXPECT_EQ(ClassifyTaint(taint, {}), TaintToleration::kPermanently);
}

// Kueue's second-pass queue (second_pass_queue.go: 1 s, factor 2, cap 30 s) asks for the wait of
// iteration n + 1 after the n-th failed try: 2 s, 4 s, 8 s, 16 s, then 30 s for good.
TEST(SecondPassRetryDelayTest, DoublesFromTwoSecondsUpToThirty) {
  EXPECT_EQ(SecondPassRetryDelay(1), absl::Seconds(2));
  EXPECT_EQ(SecondPassRetryDelay(2), absl::Seconds(4));
  EXPECT_EQ(SecondPassRetryDelay(3), absl::Seconds(8));
  EXPECT_EQ(SecondPassRetryDelay(4), absl::Seconds(16));
  EXPECT_EQ(SecondPassRetryDelay(5), absl::Seconds(30));
  EXPECT_EQ(SecondPassRetryDelay(1000), absl::Seconds(30));
}

}  // namespace
}  // namespace tollgate::core
