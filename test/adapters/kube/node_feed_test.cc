#include "adapters/kube/node_feed.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tollgate::kube {
namespace {

using manifest::Json;

using ::testing::Pair;
using ::testing::UnorderedElementsAre;

Json NodeJson() {
  return Json::parse(R"({
    "apiVersion": "v1", "kind": "Node",
    "metadata": {"name": "n1", "labels": {"cloud.com/rack": "r1", "kubernetes.io/hostname": "n1"}},
    "spec": {"unschedulable": true,
             "taints": [{"key": "gpu", "value": "true", "effect": "NoSchedule"}]},
    "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"},
               "conditions": [{"type": "MemoryPressure", "status": "False"},
                              {"type": "Ready", "status": "True"}]}})");
}

TEST(NodeFromKubeTest, CarriesLabelsTaintsCapacityAndReadiness) {
  absl::StatusOr<v1::Node> node = NodeFromKube(NodeJson());
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(node->metadata().name(), "n1");
  EXPECT_THAT(
      node->metadata().labels(),
      UnorderedElementsAre(Pair("cloud.com/rack", "r1"), Pair("kubernetes.io/hostname", "n1")));
  ASSERT_EQ(node->spec().taints_size(), 1);
  EXPECT_EQ(node->spec().taints(0).key(), "gpu");
  EXPECT_EQ(node->spec().taints(0).effect(), "NoSchedule");
  EXPECT_TRUE(node->spec().unschedulable());
  EXPECT_THAT(node->status().allocatable(),
              UnorderedElementsAre(Pair("cpu", "8"), Pair("memory", "32Gi"), Pair("pods", "110")));
  EXPECT_TRUE(node->status().ready());
}

TEST(NodeFromKubeTest, ANodeWithoutATrueReadyConditionIsNotReady) {
  Json json = NodeJson();
  json["status"]["conditions"][1]["status"] = "Unknown";
  EXPECT_FALSE(NodeFromKube(json)->status().ready());
  json["status"].erase("conditions");
  EXPECT_FALSE(NodeFromKube(json)->status().ready());
  EXPECT_FALSE(NodeFromKube(Json::object()).ok());
}

// For Kueue's fixed node-failure delay (TASReplaceNodeDueToNotReadyOverFixedTime), counted from
// the Ready condition's last transition.
TEST(NodeFromKubeTest, ANotReadyNodeCarriesItsReadyConditionsLastTransitionTime) {
  Json json = NodeJson();
  json["status"]["conditions"][1]["lastTransitionTime"] = "2026-01-01T00:00:10Z";
  EXPECT_FALSE(NodeFromKube(json)->status().has_not_ready_since());
  json["status"]["conditions"][1]["status"] = "False";
  absl::StatusOr<v1::Node> node = NodeFromKube(json);
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(node->status().not_ready_since().seconds(), 1767225610);
  EXPECT_EQ(node->status().not_ready_since().nanos(), 0);
  // A missing or unreadable time is left to tollgated, which counts from when it hears of it.
  json["status"]["conditions"][1]["lastTransitionTime"] = "yesterday";
  EXPECT_FALSE(NodeFromKube(json)->status().has_not_ready_since());
  json["status"]["conditions"][1].erase("lastTransitionTime");
  EXPECT_FALSE(NodeFromKube(json)->status().has_not_ready_since());
}

Json PodJson() {
  return Json::parse(R"({
    "metadata": {"name": "p", "namespace": "ns"},
    "spec": {"nodeName": "n1",
             "containers": [{"name": "a", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}},
                            {"name": "b", "resources": {"requests": {"cpu": "500m"}}}],
             "initContainers": [{"name": "i", "resources": {"requests": {"cpu": "2"}}}]},
    "status": {"phase": "Running"}})");
}

TEST(NeedsRunningWorkloadsTest, ANotReadyNodeOrAReadyNodeWithASchedulingTaint) {
  Json node = NodeJson();
  // Ready, tainted NoSchedule (TASReplaceNodeOnNodeTaints waits for the pods too).
  EXPECT_TRUE(NeedsRunningWorkloads(node));
  node["spec"]["taints"][0]["effect"] = "NoExecute";
  EXPECT_TRUE(NeedsRunningWorkloads(node));
  node["spec"]["taints"][0]["effect"] = "PreferNoSchedule";
  EXPECT_FALSE(NeedsRunningWorkloads(node));
  node["spec"].erase("taints");
  EXPECT_FALSE(NeedsRunningWorkloads(node));
  node["status"]["conditions"][1]["status"] = "Unknown";
  EXPECT_TRUE(NeedsRunningWorkloads(node));
  // Without a Ready condition the placements fail at once, tainted or not.
  node = NodeJson();
  node["status"].erase("conditions");
  EXPECT_FALSE(NeedsRunningWorkloads(node));
}

TEST(RunningWorkloadsOnTest, WorkloadsWithAPodStillProgressingOnTheNode) {
  absl::StatusOr<v1::Node> node = NodeFromKube(NodeJson());
  ASSERT_TRUE(node.ok());
  auto pod = [](const std::string& json) { return Json::parse(json); };
  WorkloadPods pods;
  pods["a"]["bound"]["p0"] = pod(R"({"spec": {"nodeName": "n1"}, "status": {"phase": "Running"}})");
  // Sent by its node selector, not yet bound: not progressing there (Kueue's hasProgressingPods
  // lists pods by spec.nodeName).
  pods["a"]["selected"]["p0"] = pod(
      R"({"spec": {"nodeSelector": {"kubernetes.io/hostname": "n1"}}, "status": {"phase": "Pending"}})");
  pods["a"]["ended"]["p0"] = pod(R"({"spec": {"nodeName": "n1"}, "status": {"phase": "Failed"}})");
  pods["a"]["deleting"]["p0"] = pod(R"({"metadata": {"deletionTimestamp": "2026-11-29T10:00:00Z"},
              "spec": {"nodeName": "n1"}})");
  pods["b"]["elsewhere"]["p0"] = pod(R"({"spec": {"nodeName": "n2"}})");
  pods["b"]["mixed"]["p0"] = pod(R"({"spec": {"nodeName": "n2"}})");
  pods["b"]["mixed"]["p1"] = pod(R"({"spec": {"nodeName": "n1"}})");
  EXPECT_THAT(RunningWorkloadsOn(*node, pods), ::testing::ElementsAre("a/bound", "b/mixed"));
}

TEST(ReportedPodFromKubeTest, ABoundPodReportsItsEffectiveRequests) {
  std::optional<v1::NodePod> pod = ReportedPodFromKube(PodJson());
  ASSERT_TRUE(pod.has_value());
  EXPECT_EQ(pod->name(), "ns/p");
  EXPECT_EQ(pod->node_name(), "n1");
  // max(init 2, sum 1.5) CPUs.
  EXPECT_THAT(pod->requests(), UnorderedElementsAre(Pair("cpu", "2"), Pair("memory", "1Gi")));
}

TEST(ReportedPodFromKubeTest, UnboundTerminatedAndTopologyPlacedPodsAreNotReported) {
  Json unbound = PodJson();
  unbound["spec"].erase("nodeName");
  EXPECT_FALSE(ReportedPodFromKube(unbound).has_value());
  Json done = PodJson();
  done["status"]["phase"] = "Succeeded";
  EXPECT_FALSE(ReportedPodFromKube(done).has_value());
  Json placed = PodJson();
  placed["metadata"]["annotations"]["kueue.x-k8s.io/podset-required-topology"] = "cloud.com/rack";
  EXPECT_FALSE(ReportedPodFromKube(placed).has_value());
}

}  // namespace
}  // namespace tollgate::kube
