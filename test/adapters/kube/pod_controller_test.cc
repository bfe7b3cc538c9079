#include "adapters/kube/pod_controller.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "absl/time/time.h"
#include "core/clock.h"
#include "services/manifest/job_kind.h"
#include "services/manifest/pod_kinds.h"
#include "test/adapters/fakes/fake_admission_client.h"
#include "test/adapters/fakes/fake_kube_client.h"

// The pod controller's rules that the end-to-end tests' simulated StatefulSet controller cannot
// reach (it never shows a rollout in progress). The rest is covered by pod_kinds_e2e_test.

namespace tollgate::kube {
namespace {

constexpr char kStsUid[] = "5e1f0000-aaaa-bbbb-cccc-000000000007";

Json StatefulSet(const std::string& current, const std::string& update) {
  Json sts = Json::parse(R"({"apiVersion": "apps/v1", "kind": "StatefulSet",
    "metadata": {"name": "db", "namespace": "team-a",
                 "labels": {"kueue.x-k8s.io/queue-name": "user-queue"}},
    "spec": {"replicas": 2, "template": {"spec": {
      "schedulingGates": [{"name": "kueue.x-k8s.io/admission"}],
      "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}}})");
  sts["metadata"]["uid"] = kStsUid;
  sts["status"] = {{"currentRevision", current}, {"updateRevision", update}};
  return sts;
}

Json GatedPod(const std::string& name, const std::string& revision) {
  Json pod = Json::parse(R"({"apiVersion": "v1", "kind": "Pod",
    "metadata": {"namespace": "team-a",
                 "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet",
                                      "name": "db", "controller": true}]},
    "spec": {"schedulingGates": [{"name": "kueue.x-k8s.io/admission"},
                                 {"name": "kueue.x-k8s.io/topology"},
                                 {"name": "example.com/other"}],
             "containers": [{"name": "c"}]}})");
  pod["metadata"]["name"] = name;
  pod["metadata"]["labels"]["controller-revision-hash"] = revision;
  pod["metadata"]["ownerReferences"][0]["uid"] = kStsUid;
  return pod;
}

class PodControllerTest : public ::testing::Test {
 protected:
  PodControllerTest() : clock_(absl::FromUnixSeconds(1700000000)) {}

  absl::Status ReconcileStatefulSet() {
    PodController::Options options;
    options.statefulsets = true;
    PodController controller(kube_, admission_, clock_, options);
    return controller.Reconcile(ObjectKey{"statefulsets", "team-a", "db"});
  }
  Json Gates(const std::string& pod) const {
    return kube_.Object(PodResource(), "team-a", pod)["spec"].value("schedulingGates", Json());
  }

  core::SimulatedClock clock_;
  FakeKubeClient kube_;
  client::FakeAdmissionClient admission_;
};

TEST_F(PodControllerTest, DuringARolloutPodsOfTheCurrentRevisionAreReleasedAtOnce) {
  kube_.Put(StatefulSetResource(), StatefulSet("db-old", "db-new"));
  kube_.Put(PodResource(), GatedPod("db-0", "db-old"));
  kube_.Put(PodResource(), GatedPod("db-1", "db-new"));
  ASSERT_TRUE(ReconcileStatefulSet().ok());
  // Kueue's ShouldUngatePod: the old revision's pod replaces one that ran; only Kueue's gates go.
  EXPECT_EQ(Gates("db-0"), Json::parse(R"([{"name": "example.com/other"}])"));
  // The new revision's pod waits for the admission.
  EXPECT_EQ(Gates("db-1").size(), 3u);
}

TEST_F(PodControllerTest, OutsideARolloutNothingIsReleased) {
  kube_.Put(StatefulSetResource(), StatefulSet("db-new", "db-new"));
  kube_.Put(PodResource(), GatedPod("db-0", "db-new"));
  ASSERT_TRUE(ReconcileStatefulSet().ok());
  EXPECT_EQ(Gates("db-0").size(), 3u);
}

// Kueue's WorkloadPriorityClassDefaulting for the pod-based kinds: a gated pod naming no
// WorkloadPriorityClass gets a workload of the class "default" when it exists.
TEST_F(PodControllerTest, AGatedPodNamingNoPriorityClassTakesTheDefaultWorkloadPriorityClass) {
  admission_.AddWorkloadPriorityClass("default", 1000);
  Json pod = Json::parse(R"({"apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "solo", "namespace": "team-a", "uid": "5e1f0000-aaaa-bbbb-cccc-00000000000a",
                 "labels": {"kueue.x-k8s.io/queue-name": "user-queue"}},
    "spec": {"priorityClassName": "pod-high",
             "schedulingGates": [{"name": "kueue.x-k8s.io/admission"}],
             "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}})");
  kube_.Put(PodResource(), pod);
  PodController::Options options;
  options.pods = true;
  PodController controller(kube_, admission_, clock_, options);
  ASSERT_TRUE(controller.Reconcile(ObjectKey{"pods", "team-a", "solo"}).ok());
  const std::string name = manifest::KueueWorkloadName("Pod", "", "solo", pod["metadata"]["uid"]);
  ASSERT_TRUE(admission_.Find("team-a", name).has_value());
  EXPECT_EQ(admission_.Find("team-a", name)->spec().priority_class_name(), "default");
}

// Kueue's AdmissionGatedBy for a plain pod: the pod's gates become its workload's, and a gate
// removed from the pod leaves the workload too.
TEST_F(PodControllerTest, APodsAdmissionGatesBecomeItsWorkloadsAndLeaveWithIt) {
  constexpr char kGatedBy[] = "kueue.x-k8s.io/admission-gated-by";
  Json pod = Json::parse(R"({"apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "solo", "namespace": "team-a", "uid": "5e1f0000-aaaa-bbbb-cccc-00000000000d",
                 "labels": {"kueue.x-k8s.io/queue-name": "user-queue"},
                 "annotations": {"kueue.x-k8s.io/admission-gated-by": "example.com/a,example.com/b"}},
    "spec": {"schedulingGates": [{"name": "kueue.x-k8s.io/admission"}],
             "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}})");
  kube_.Put(PodResource(), pod);
  PodController::Options options;
  options.pods = true;
  PodController controller(kube_, admission_, clock_, options);
  const std::string name = manifest::KueueWorkloadName("Pod", "", "solo", pod["metadata"]["uid"]);
  auto gates = [&]() -> std::string {
    const std::optional<v1::Workload> wl = admission_.Find("team-a", name);
    if (!wl.has_value()) return "<no workload>";
    auto it = wl->metadata().annotations().find(kGatedBy);
    return it == wl->metadata().annotations().end() ? "<none>" : it->second;
  };
  ASSERT_TRUE(controller.Reconcile(ObjectKey{"pods", "team-a", "solo"}).ok());
  EXPECT_EQ(gates(), "example.com/a,example.com/b");
  ASSERT_TRUE(controller.Reconcile(ObjectKey{"pods", "team-a", "solo"}).ok());
  EXPECT_EQ(admission_.Count("SetAdmissionGates"), 0);

  pod = kube_.Object(PodResource(), "team-a", "solo");
  pod["metadata"]["annotations"].erase(kGatedBy);
  kube_.Put(PodResource(), pod);
  ASSERT_TRUE(controller.Reconcile(ObjectKey{"pods", "team-a", "solo"}).ok());
  EXPECT_EQ(gates(), "<none>");
  EXPECT_EQ(admission_.Count("SetAdmissionGates"), 1);
}

constexpr char kGatedBy[] = "kueue.x-k8s.io/admission-gated-by";

// The admission gates a workload carries ("<none>" without, "<no workload>" when absent).
std::string WorkloadGates(const client::FakeAdmissionClient& admission, const std::string& name) {
  const std::optional<v1::Workload> wl = admission.Find("team-a", name);
  if (!wl.has_value()) return "<no workload>";
  auto it = wl->metadata().annotations().find(kGatedBy);
  return it == wl->metadata().annotations().end() ? "<none>" : it->second;
}

// Kueue's StatefulSet reconciler: the workload takes the StatefulSet's own gates (not its pod
// template's), and a gate removed from the StatefulSet leaves the workload too.
TEST_F(PodControllerTest, AStatefulSetsAdmissionGatesBecomeItsWorkloadsAndLeaveWithIt) {
  Json sts = StatefulSet("db-1", "db-1");
  sts["metadata"]["annotations"][kGatedBy] = "example.com/a,example.com/b";
  sts["spec"]["template"]["metadata"]["annotations"][kGatedBy] = "example.com/template";
  kube_.Put(StatefulSetResource(), sts);
  const std::string name = manifest::StatefulSetWorkloadName(sts);
  ASSERT_TRUE(ReconcileStatefulSet().ok());
  EXPECT_EQ(WorkloadGates(admission_, name), "example.com/a,example.com/b");
  ASSERT_TRUE(ReconcileStatefulSet().ok());
  EXPECT_EQ(admission_.Count("SetAdmissionGates"), 0);

  sts = kube_.Object(StatefulSetResource(), "team-a", "db");
  sts["metadata"]["annotations"][kGatedBy] = "example.com/b";
  kube_.Put(StatefulSetResource(), sts);
  ASSERT_TRUE(ReconcileStatefulSet().ok());
  EXPECT_EQ(WorkloadGates(admission_, name), "example.com/b");
  sts["metadata"]["annotations"].erase(kGatedBy);
  kube_.Put(StatefulSetResource(), sts);
  ASSERT_TRUE(ReconcileStatefulSet().ok());
  EXPECT_EQ(WorkloadGates(admission_, name), "<none>");
  EXPECT_EQ(admission_.Count("SetAdmissionGates"), 2);
}

// Kueue's LeaderWorkerSet reconciler: every group's workload takes the set's gates, and a gate
// removed from the set leaves each of them.
TEST_F(PodControllerTest, ALeaderWorkerSetsAdmissionGatesBecomeEachGroupsAndLeaveWithThem) {
  Json lws = Json::parse(R"({"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
    "metadata": {"name": "infer", "namespace": "team-a", "uid": "5e1f0000-aaaa-bbbb-cccc-00000000000e",
                 "labels": {"kueue.x-k8s.io/queue-name": "user-queue"},
                 "annotations": {"kueue.x-k8s.io/admission-gated-by": "example.com/a"}},
    "spec": {"replicas": 2, "leaderWorkerTemplate": {"size": 2, "workerTemplate": {"spec": {
      "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}}}})");
  kube_.Put(LeaderWorkerSetResource(), lws);
  PodController::Options options;
  options.leaderworkersets = true;
  PodController controller(kube_, admission_, clock_, options);
  const ObjectKey key{"leaderworkersets", "team-a", "infer"};
  ASSERT_TRUE(controller.Reconcile(key).ok());
  for (int32_t group : {0, 1}) {
    EXPECT_EQ(WorkloadGates(admission_, manifest::LeaderWorkerSetGroupName(lws, group)),
              "example.com/a")
        << group;
  }

  lws = kube_.Object(LeaderWorkerSetResource(), "team-a", "infer");
  lws["metadata"]["annotations"].erase(kGatedBy);
  kube_.Put(LeaderWorkerSetResource(), lws);
  ASSERT_TRUE(controller.Reconcile(key).ok());
  for (int32_t group : {0, 1}) {
    EXPECT_EQ(WorkloadGates(admission_, manifest::LeaderWorkerSetGroupName(lws, group)), "<none>")
        << group;
  }
  EXPECT_EQ(admission_.Count("SetAdmissionGates"), 2);
}

Json GroupPod(const std::string& name, const std::string& uid,
              const std::map<std::string, std::string>& labels) {
  Json pod = Json::parse(R"({"apiVersion": "v1", "kind": "Pod",
    "metadata": {"namespace": "team-a", "creationTimestamp": "2026-01-01T00:00:00Z",
                 "labels": {"kueue.x-k8s.io/queue-name": "user-queue",
                            "kueue.x-k8s.io/pod-group-name": "g"},
                 "annotations": {"kueue.x-k8s.io/pod-group-total-count": "2"}},
    "spec": {"schedulingGates": [{"name": "kueue.x-k8s.io/admission"}],
             "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}})");
  pod["metadata"]["name"] = name;
  pod["metadata"]["uid"] = uid;
  for (const auto& [k, v] : labels) pod["metadata"]["labels"][k] = v;
  return pod;
}

// Kueue's integrations.labelKeysToCopy for a plain pod: its listed labels reach its workload.
TEST_F(PodControllerTest, APlainPodsListedLabelsAreCopiedToItsWorkload) {
  Json pod = Json::parse(R"({"apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "solo", "namespace": "team-a", "uid": "5e1f0000-aaaa-bbbb-cccc-00000000000e",
                 "labels": {"kueue.x-k8s.io/queue-name": "user-queue", "toCopyKey": "toCopyValue",
                            "notToCopyKey": "x"}},
    "spec": {"schedulingGates": [{"name": "kueue.x-k8s.io/admission"}],
             "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}})");
  kube_.Put(PodResource(), pod);
  PodController::Options options;
  options.pods = true;
  options.label_keys_to_copy = {"toCopyKey", "keyAbsentInThePod"};
  PodController controller(kube_, admission_, clock_, options);
  ASSERT_TRUE(controller.Reconcile(ObjectKey{"pods", "team-a", "solo"}).ok());
  const std::string name = manifest::KueueWorkloadName("Pod", "", "solo", pod["metadata"]["uid"]);
  const std::optional<v1::Workload> wl = admission_.Find("team-a", name);
  ASSERT_TRUE(wl.has_value());
  EXPECT_EQ(wl->metadata().labels().count("toCopyKey"), 1u);
  EXPECT_EQ(wl->metadata().labels().at("toCopyKey"), "toCopyValue");
  EXPECT_EQ(wl->metadata().labels().count("notToCopyKey"), 0u);
  EXPECT_EQ(wl->metadata().labels().count("keyAbsentInThePod"), 0u);
}

// Kueue's pod group rule (getByKey): each listed key any member carries is copied; members
// without it do not count; two members with different values refuse the workload.
TEST_F(PodControllerTest, APodGroupsMembersMustAgreeOnTheLabelsToCopy) {
  PodController::Options options;
  options.pods = true;
  options.label_keys_to_copy = {"toCopyKey1", "toCopyKey2"};
  kube_.Put(PodResource(), GroupPod("p1", "5e1f0000-aaaa-bbbb-cccc-000000000011",
                                    {{"toCopyKey1", "v1"}, {"toCopyKey2", "only-here"}}));
  kube_.Put(PodResource(),
            GroupPod("p2", "5e1f0000-aaaa-bbbb-cccc-000000000012", {{"toCopyKey1", "v1"}}));
  {
    PodController controller(kube_, admission_, clock_, options);
    ASSERT_TRUE(controller.Reconcile(ObjectKey{"podgroups", "team-a", "g"}).ok());
  }
  std::optional<v1::Workload> wl = admission_.Find("team-a", "g");
  ASSERT_TRUE(wl.has_value());
  EXPECT_EQ(wl->metadata().labels().at("toCopyKey1"), "v1");
  EXPECT_EQ(wl->metadata().labels().at("toCopyKey2"), "only-here");
}

TEST_F(PodControllerTest, APodGroupWhoseMembersDisagreeGetsNoWorkload) {
  PodController::Options options;
  options.pods = true;
  options.label_keys_to_copy = {"toCopyKey1"};
  kube_.Put(PodResource(),
            GroupPod("p1", "5e1f0000-aaaa-bbbb-cccc-000000000021", {{"toCopyKey1", "a"}}));
  kube_.Put(PodResource(),
            GroupPod("p2", "5e1f0000-aaaa-bbbb-cccc-000000000022", {{"toCopyKey1", "b"}}));
  PodController controller(kube_, admission_, clock_, options);
  ASSERT_TRUE(controller.Reconcile(ObjectKey{"podgroups", "team-a", "g"}).ok());
  EXPECT_FALSE(admission_.Find("team-a", "g").has_value());
  bool warned = false;
  for (const Json& e : kube_.events()) {
    if (manifest::GetString(e, {"reason"}) == "ErrWorkloadCompose" &&
        manifest::GetString(e, {"message"}).find("pods have different label values: toCopyKey1") !=
            std::string::npos) {
      warned = true;
    }
  }
  EXPECT_TRUE(warned);
}

// Kueue's afterDeactivatedByKueue for a plain pod (its pod controller test "when workload is
// deactivated by kueue; afterDeactivatedByKueue=0; should delete the job"): the pod and its
// workload go once the retention ends; before, the pod is requeued for that moment.
TEST_F(PodControllerTest, APlainPodWhoseWorkloadKueueDeactivatedIsDeletedAfterTheRetention) {
  Json pod = Json::parse(R"({"apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "solo", "namespace": "team-a", "uid": "5e1f0000-aaaa-bbbb-cccc-00000000000f",
                 "labels": {"kueue.x-k8s.io/queue-name": "user-queue"}},
    "spec": {"schedulingGates": [{"name": "kueue.x-k8s.io/admission"}],
             "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}})");
  kube_.Put(PodResource(), pod);
  PodController::Options options;
  options.pods = true;
  options.after_deactivated_by_kueue = absl::Seconds(30);
  PodController controller(kube_, admission_, clock_, options);
  std::vector<absl::Time> requeued;
  controller.SetRequeueAt([&](const ObjectKey&, absl::Time at) { requeued.push_back(at); });
  const ObjectKey key{"pods", "team-a", "solo"};
  ASSERT_TRUE(controller.Reconcile(key).ok());
  const std::string name = manifest::KueueWorkloadName("Pod", "", "solo", pod["metadata"]["uid"]);
  ASSERT_TRUE(admission_.Find("team-a", name).has_value());
  admission_.DeactivateAndEvict("team-a", name, "DeactivatedDueToRequeuingLimitExceeded",
                                clock_.Now());

  ASSERT_TRUE(controller.Reconcile(key).ok());
  EXPECT_FALSE(kube_.Object(PodResource(), "team-a", "solo").is_null());
  EXPECT_THAT(requeued, ::testing::ElementsAre(clock_.Now() + absl::Seconds(30)));

  clock_.Advance(absl::Seconds(30));
  ASSERT_TRUE(controller.Reconcile(key).ok());
  EXPECT_TRUE(kube_.Object(PodResource(), "team-a", "solo").is_null());
  EXPECT_FALSE(admission_.Find("team-a", name).has_value());
}

// A Deployment is labelled when first seen, and its pods' template carries the class; one seen
// before the class existed keeps what it has (Kueue's webhook labels at creation only).
TEST_F(PodControllerTest, ADeploymentTakesTheDefaultWorkloadPriorityClassWhenFirstSeen) {
  Json deployment = Json::parse(R"({"apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "web", "namespace": "team-a", "uid": "5e1f0000-aaaa-bbbb-cccc-00000000000b",
                 "labels": {"kueue.x-k8s.io/queue-name": "user-queue"}},
    "spec": {"replicas": 1, "template": {"spec": {
      "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}}})");
  PodController::Options options;
  options.deployments = true;
  PodController controller(kube_, admission_, clock_, options);

  kube_.Put(DeploymentResource(), deployment);
  ASSERT_TRUE(controller.Reconcile(ObjectKey{"deployments", "team-a", "web"}).ok());
  Json stamped = kube_.Object(DeploymentResource(), "team-a", "web");
  EXPECT_FALSE(stamped["metadata"]["labels"].contains("kueue.x-k8s.io/priority-class"));
  admission_.AddWorkloadPriorityClass("default", 1000);
  ASSERT_TRUE(controller.Reconcile(ObjectKey{"deployments", "team-a", "web"}).ok());
  EXPECT_FALSE(kube_.Object(DeploymentResource(), "team-a", "web")["metadata"]["labels"].contains(
      "kueue.x-k8s.io/priority-class"));

  deployment["metadata"]["name"] = "api";
  deployment["metadata"]["uid"] = "5e1f0000-aaaa-bbbb-cccc-00000000000c";
  kube_.Put(DeploymentResource(), deployment);
  ASSERT_TRUE(controller.Reconcile(ObjectKey{"deployments", "team-a", "api"}).ok());
  Json api = kube_.Object(DeploymentResource(), "team-a", "api");
  EXPECT_EQ(api["metadata"]["labels"].value("kueue.x-k8s.io/priority-class", ""), "default");
  EXPECT_EQ(
      api["spec"]["template"]["metadata"]["labels"].value("kueue.x-k8s.io/priority-class", ""),
      "default");
}

}  // namespace
}  // namespace tollgate::kube
