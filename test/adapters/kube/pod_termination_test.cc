// Which released pods tollgate-kube fails, ported from Kueue's node_controller_test.go
// (TestNodeFailureReconciler's wantPatchedPods cases, default feature gates) by reading them.

#include "adapters/kube/pod_termination.h"

#include <map>
#include <string>

#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace tollgate::kube {
namespace {

using manifest::Json;

constexpr char kNode[] = "test-node-name";
constexpr char kOtherNode[] = "test-node-name-2";

Json PendingPod() {
  return Json::parse(R"({
      "metadata": {"name": "pending-pod", "namespace": "default", "resourceVersion": "7",
                   "annotations": {"kueue.x-k8s.io/workload": "test-workload",
                                   "kueue.x-k8s.io/podset-unconstrained-topology": "true"}},
      "spec": {"nodeSelector": {"kubernetes.io/hostname": "test-node-name"}},
      "status": {"phase": "Pending",
                 "conditions": [{"type": "PodScheduled", "status": "False"}]}})");
}

TEST(ReleasedUnboundHostTest, APendingPodSentToAHostAndNotBound) {
  EXPECT_EQ(ReleasedUnboundHost(PendingPod()), kNode);

  Json bound = PendingPod();
  bound["spec"]["nodeName"] = kNode;
  EXPECT_EQ(ReleasedUnboundHost(bound), std::nullopt);
  Json running = PendingPod();
  running["status"]["phase"] = "Running";
  EXPECT_EQ(ReleasedUnboundHost(running), std::nullopt);
  Json failed = PendingPod();
  failed["status"]["phase"] = "Failed";
  EXPECT_EQ(ReleasedUnboundHost(failed), std::nullopt);
  // Kueue: "pod is Gated -> Healthy", nothing patched.
  Json gated = PendingPod();
  gated["spec"]["schedulingGates"] = Json::parse(R"([{"name": "kueue.x-k8s.io/topology"}])");
  EXPECT_EQ(ReleasedUnboundHost(gated), std::nullopt);
  // Kueue finds them by the hostname node selector only ("pending-pod-rack" is not patched).
  Json rack = PendingPod();
  rack["spec"]["nodeSelector"] = Json::parse(R"({"rack": "rack-1"})");
  EXPECT_EQ(ReleasedUnboundHost(rack), std::nullopt);
  // Not placed by topology-aware scheduling, or of no workload.
  Json plain = PendingPod();
  plain["metadata"]["annotations"].erase("kueue.x-k8s.io/podset-unconstrained-topology");
  EXPECT_EQ(ReleasedUnboundHost(plain), std::nullopt);
  Json orphan = PendingPod();
  orphan["metadata"]["annotations"].erase("kueue.x-k8s.io/workload");
  EXPECT_EQ(ReleasedUnboundHost(orphan), std::nullopt);
}

class FailsUnboundPodsOnTest : public ::testing::Test {
 protected:
  FailsUnboundPodsOnTest() {
    node_.name = kNode;
    node_.labels = {{core::kHostnameLabel, kNode}};
    wl_.spec.namespace_name = "default";
    wl_.spec.name = "test-workload";
    core::PodSetSpec ps;
    ps.name = "main";
    ps.count = 1;
    wl_.spec.pod_sets = {ps};
    wl_.status.state = core::WorkloadState::kAdmitted;
    PlaceOn(kNode);
    flavors_["unit-test-flavor"].name = "unit-test-flavor";
  }

  void PlaceOn(const std::string& host) {
    core::PodSetAssignment psa;
    psa.name = "main";
    psa.count = 1;
    psa.flavors = {{"cpu", "unit-test-flavor"}};
    core::TopologyAssignment ta;
    ta.levels = {core::kHostnameLabel};
    ta.domains.push_back({{host}, 1});
    psa.topology_assignment = ta;
    core::Admission admission;
    admission.cluster_queue = "cq";
    admission.pod_sets = {psa};
    wl_.status.admission = admission;
  }
  void Taint(const std::string& effect) { node_.taints = {{"foo", "", effect}}; }
  static core::Toleration Exists(const std::string& effect, std::optional<int64_t> seconds = {}) {
    core::Toleration t;
    t.key = "foo";
    t.op = "Exists";
    t.effect = effect;
    t.toleration_seconds = seconds;
    return t;
  }
  bool Fails() { return FailsUnboundPodsOn(node_, wl_, flavors_); }

  core::NodeSpec node_;
  core::Workload wl_;
  std::map<std::string, core::ResourceFlavorSpec> flavors_;
};

TEST_F(FailsUnboundPodsOnTest, AHealthyNodeOfThePlacementKeepsItsPods) {
  EXPECT_FALSE(Fails());
  // PreferNoSchedule is no scheduling taint.
  Taint("PreferNoSchedule");
  EXPECT_FALSE(Fails());
}

TEST_F(FailsUnboundPodsOnTest, AnUntoleratedNoScheduleOrNoExecuteTaintFailsThem) {
  // Kueue: "Node has NoSchedule taint, pod is Pending and on node ... pod patched".
  Taint("NoSchedule");
  EXPECT_TRUE(Fails());
  Taint("NoExecute");
  EXPECT_TRUE(Fails());
  // Whether or not the workload still runs pods there: a pod never bound cannot start.
  node_.running_workloads = {wl_.Key()};
  EXPECT_TRUE(Fails());
}

TEST_F(FailsUnboundPodsOnTest, ACordonedNodeCountsAsTaintedNoSchedule) {
  node_.unschedulable = true;
  EXPECT_TRUE(NeedsFlavors(node_, wl_));
  EXPECT_TRUE(Fails());
}

TEST_F(FailsUnboundPodsOnTest, TolerationsForGoodKeepThemAndForAWhileDoNot) {
  Taint("NoExecute");
  wl_.spec.pod_sets[0].tolerations = {Exists("NoExecute")};
  EXPECT_FALSE(Fails());
  // Kueue's temporarily tolerated taint: checkPodsOnNode fails the pending pods too.
  wl_.spec.pod_sets[0].tolerations = {Exists("NoExecute", 300)};
  EXPECT_TRUE(Fails());
  // The flavor's tolerations count.
  wl_.spec.pod_sets[0].tolerations.clear();
  flavors_["unit-test-flavor"].tolerations = {Exists("NoExecute")};
  EXPECT_TRUE(NeedsFlavors(node_, wl_));
  EXPECT_FALSE(Fails());
}

TEST_F(FailsUnboundPodsOnTest, ANotReadyNodeFailsThem) {
  node_.ready = false;
  EXPECT_FALSE(NeedsFlavors(node_, wl_));
  EXPECT_TRUE(Fails());
}

TEST_F(FailsUnboundPodsOnTest, PodsLeftOnANodeThePlacementNoLongerNamesFailOnAnyNode) {
  // Kueue: "workload missing TAS assignment but has late pod -> ... pod patched", and the pods
  // of a workload without admission.
  PlaceOn(kOtherNode);
  EXPECT_FALSE(NeedsFlavors(node_, wl_));
  EXPECT_TRUE(Fails());
  wl_.status.admission.reset();
  wl_.status.state = core::WorkloadState::kPending;
  EXPECT_TRUE(Fails());
}

TEST_F(FailsUnboundPodsOnTest, FinishedAndEvictedWorkloadsAreLeftAlone) {
  node_.ready = false;
  wl_.status.state = core::WorkloadState::kFinished;
  EXPECT_FALSE(Fails());
  wl_.status.state = core::WorkloadState::kEvicting;
  wl_.status.conditions.push_back(
      core::Condition{"Evicted", true, "NodeFailures", "", absl::UnixEpoch()});
  EXPECT_FALSE(Fails());
  // Admitted again: Evicted is False.
  wl_.status.state = core::WorkloadState::kAdmitted;
  wl_.status.conditions.back().status = false;
  EXPECT_TRUE(Fails());
}

TEST(TerminationStatusPatchTest, FailsThePodAndAppendsKueuesCondition) {
  const Json patch = TerminationStatusPatch(PendingPod(), absl::FromUnixSeconds(1795000000));
  EXPECT_EQ(patch, Json::parse(R"({
      "metadata": {"resourceVersion": "7"},
      "status": {"phase": "Failed",
                 "conditions": [
                   {"type": "PodScheduled", "status": "False"},
                   {"type": "TerminatedByKueue", "status": "True",
                    "reason": "UnschedulableOnAssignedNode",
                    "message": "Pod terminated by Kueue NodeController due to node taint",
                    "lastTransitionTime": "2026-11-18T11:06:40Z"}]}})"));
}

}  // namespace
}  // namespace tollgate::kube
