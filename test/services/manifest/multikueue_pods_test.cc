// MultiKueue's projection of the gated kinds, the pure part (services/manifest/multikueue_pods.h):
// the manifest a manager's workload carries for a Pod or a StatefulSet, the object a worker
// creates from it, the pod's status report and Kueue's syncLocalPodWithRemote rule; a pod group's
// payload, pods and statuses.

#include "services/manifest/multikueue_pods.h"

#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/manifest/multikueue_job.h"
#include "services/manifest/pod_kinds.h"
#include "services/manifest/prebuilt_workload.h"

namespace tollgate::manifest {
namespace {

using ::testing::HasSubstr;

// A manager's gated pod as the API server serves it once tollgate-kube has seen it.
Json ManagerPod() {
  return Json::parse(R"({
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {
      "name": "p", "namespace": "team", "uid": "u-1", "resourceVersion": "42",
      "creationTimestamp": "2026-01-01T00:00:00Z", "managedFields": [{"manager": "kubectl"}],
      "labels": {"kueue.x-k8s.io/queue-name": "q", "app": "p"},
      "annotations": {"tollgate.dev/status": "pending: Waiting", "note": "kept"}
    },
    "spec": {
      "schedulingGates": [{"name": "kueue.x-k8s.io/admission"}],
      "containers": [{"name": "c", "image": "busybox"}]
    },
    "status": {"phase": "Pending", "conditions": [
      {"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}]}
  })");
}

Json ManagerStatefulSet() {
  return Json::parse(R"({
    "apiVersion": "apps/v1", "kind": "StatefulSet",
    "metadata": {"name": "db", "namespace": "team", "uid": "sts-uid", "generation": 2,
                 "labels": {"kueue.x-k8s.io/queue-name": "q"}},
    "spec": {"replicas": 2, "serviceName": "db",
             "template": {"metadata": {"annotations":
                              {"kueue.x-k8s.io/pod-suspending-parent": "statefulset"}},
                          "spec": {"schedulingGates": [{"name": "kueue.x-k8s.io/admission"}],
                                   "containers": [{"name": "c"}]}}},
    "status": {"replicas": 2}
  })");
}

Json DataOf(const v1::WorkloadPayload& payload) { return Json::parse(payload.data()); }

TEST(MultiKueuePodsTest, APodTravelsAsWrittenWithItsGateAndWithoutServerFields) {
  absl::StatusOr<v1::WorkloadPayload> payload = GatedObjectPayload(PodResource(), ManagerPod());
  ASSERT_TRUE(payload.ok()) << payload.status();
  EXPECT_EQ(payload->api_version(), "v1");
  EXPECT_EQ(payload->kind(), "Pod");
  EXPECT_EQ(payload->content_type(), kJsonContentType);
  const Json data = DataOf(*payload);
  EXPECT_EQ(data["metadata"], Json::parse(R"({"name": "p", "namespace": "team",
                            "labels": {"kueue.x-k8s.io/queue-name": "q", "app": "p"},
                            "annotations": {"note": "kept"}})"));
  EXPECT_EQ(data["spec"], ManagerPod()["spec"]);
  EXPECT_FALSE(data.contains("status"));
}

TEST(MultiKueuePodsTest, AStatefulSetCarriesItsOriginUid) {
  absl::StatusOr<v1::WorkloadPayload> payload =
      GatedObjectPayload(StatefulSetKind(), ManagerStatefulSet());
  ASSERT_TRUE(payload.ok()) << payload.status();
  EXPECT_EQ(payload->api_version(), "apps/v1");
  EXPECT_EQ(payload->kind(), "StatefulSet");
  const Json data = DataOf(*payload);
  EXPECT_EQ(GetString(data, {"metadata", "annotations", kMultiKueueOriginUidAnnotation}),
            "sts-uid");
  EXPECT_EQ(data["spec"], ManagerStatefulSet()["spec"]);
  EXPECT_FALSE(data["metadata"].contains("generation"));
}

TEST(MultiKueuePodsTest, OtherKindsAndObjectsWithoutSpecAreRefused) {
  const ResourceKind deployment{"apps", "v1", "deployments", "Deployment", true};
  absl::StatusOr<v1::WorkloadPayload> wrong_kind = GatedObjectPayload(deployment, ManagerPod());
  EXPECT_TRUE(absl::IsInvalidArgument(wrong_kind.status()));
  EXPECT_THAT(wrong_kind.status().message(), HasSubstr("apps/v1 Deployment"));
  Json no_spec = ManagerPod();
  no_spec.erase("spec");
  absl::StatusOr<v1::WorkloadPayload> missing = GatedObjectPayload(PodResource(), no_spec);
  EXPECT_TRUE(absl::IsInvalidArgument(missing.status()));
  EXPECT_THAT(missing.status().message(), HasSubstr("spec: Required value"));
}

TEST(MultiKueuePodsTest, TheWorkersObjectIsBoundToItsCopyAndMarkedWithTheOrigin) {
  absl::StatusOr<v1::WorkloadPayload> payload = GatedObjectPayload(PodResource(), ManagerPod());
  ASSERT_TRUE(payload.ok());
  absl::StatusOr<Json> pod =
      RemoteGatedObjectFromPayload(*payload, "team", "pod-p-abc12", "manager-1");
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_EQ(PrebuiltWorkloadName(*pod), "pod-p-abc12");
  EXPECT_EQ(GetString(*pod, {"metadata", "labels", kMultiKueueOriginLabel}), "manager-1");
  EXPECT_EQ(GetString(*pod, {"metadata", "labels", "kueue.x-k8s.io/queue-name"}), "q");
  EXPECT_EQ(GetString(*pod, {"metadata", "namespace"}), "team");
  EXPECT_EQ((*pod)["spec"]["schedulingGates"][0]["name"], "kueue.x-k8s.io/admission");

  absl::StatusOr<v1::WorkloadPayload> sts_payload =
      GatedObjectPayload(StatefulSetKind(), ManagerStatefulSet());
  ASSERT_TRUE(sts_payload.ok());
  absl::StatusOr<Json> sts =
      RemoteGatedObjectFromPayload(*sts_payload, "team", "statefulset-db-x", "manager-1");
  ASSERT_TRUE(sts.ok()) << sts.status();
  EXPECT_EQ((*sts)["kind"], "StatefulSet");
  EXPECT_EQ(PrebuiltWorkloadName(*sts), "statefulset-db-x");
  EXPECT_FALSE((*sts)["metadata"].contains("uid"));
}

TEST(MultiKueuePodsTest, APayloadOfAnotherKindOrFormatIsRefusedNamingTheField) {
  v1::WorkloadPayload job;
  job.set_content_type(std::string(kJsonContentType));
  job.set_api_version("batch/v1");
  job.set_kind("Job");
  job.set_data(R"({"metadata": {"name": "j"}, "spec": {}})");
  absl::StatusOr<Json> wrong = RemoteGatedObjectFromPayload(job, "team", "c", "o");
  EXPECT_TRUE(absl::IsInvalidArgument(wrong.status()));
  EXPECT_THAT(wrong.status().message(), HasSubstr("spec.payload: carries batch/v1 Job"));

  v1::WorkloadPayload yaml = job;
  yaml.set_api_version("v1");
  yaml.set_kind("Pod");
  yaml.set_content_type("application/yaml");
  EXPECT_THAT(RemoteGatedObjectFromPayload(yaml, "team", "c", "o").status().message(),
              HasSubstr("spec.payload.contentType"));

  v1::WorkloadPayload nameless = yaml;
  nameless.set_content_type(std::string(kJsonContentType));
  nameless.set_data(R"({"spec": {}})");
  EXPECT_THAT(RemoteGatedObjectFromPayload(nameless, "team", "c", "o").status().message(),
              HasSubstr("metadata.name"));
}

v1::WorkloadPayload RemoteReport(const std::string& status) {
  Json pod = {{"status", Json::parse(status)}};
  return PodStatusReport(pod);
}

TEST(MultiKueuePodsTest, AStatusReportCarriesThePodsStatus) {
  const v1::WorkloadPayload report = RemoteReport(R"({"phase": "Running"})");
  EXPECT_EQ(report.api_version(), "v1");
  EXPECT_EQ(report.kind(), "Pod");
  EXPECT_EQ(DataOf(report)["status"]["phase"], "Running");
}

TEST(MultiKueuePodsTest, AGatedPodKeepsItsSchedulingGatedConditionUntilTheRemoteIsScheduled) {
  const v1::WorkloadPayload unscheduled = RemoteReport(R"({"phase": "Pending", "conditions": [
      {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]})");
  absl::StatusOr<Json> status = ProjectedPodStatus(ManagerPod(), unscheduled);
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_EQ((*status)["phase"], "Pending");
  ASSERT_EQ((*status)["conditions"].size(), 1u);
  EXPECT_EQ((*status)["conditions"][0]["reason"], "SchedulingGated");

  // No PodScheduled condition on the remote yet: the local one is added.
  absl::StatusOr<Json> bare = ProjectedPodStatus(ManagerPod(), RemoteReport(R"({})"));
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ((*bare)["conditions"][0]["reason"], "SchedulingGated");
}

TEST(MultiKueuePodsTest, OnceTheRemoteIsScheduledItsStatusIsTakenWhole) {
  const v1::WorkloadPayload running = RemoteReport(R"({"phase": "Running", "podIP": "10.0.0.1",
      "conditions": [{"type": "PodScheduled", "status": "True"},
                     {"type": "Ready", "status": "True"}]})");
  absl::StatusOr<Json> status = ProjectedPodStatus(ManagerPod(), running);
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(*status, DataOf(running)["status"]);

  // A local pod no longer gated takes the remote status as it is, too.
  Json ungated = ManagerPod();
  ungated["spec"].erase("schedulingGates");
  const v1::WorkloadPayload unscheduled = RemoteReport(R"({"phase": "Pending", "conditions": [
      {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]})");
  absl::StatusOr<Json> taken = ProjectedPodStatus(ungated, unscheduled);
  ASSERT_TRUE(taken.ok());
  EXPECT_EQ((*taken)["conditions"][0]["reason"], "Unschedulable");
}

TEST(MultiKueuePodsTest, AReportThatIsNotAPodStatusIsRefused) {
  v1::WorkloadPayload job = RemoteReport(R"({})");
  job.set_api_version("batch/v1");
  job.set_kind("Job");
  EXPECT_THAT(ProjectedPodStatus(ManagerPod(), job).status().message(),
              HasSubstr("status.jobStatus: reports batch/v1 Job"));
  v1::WorkloadPayload garbage = RemoteReport(R"({})");
  garbage.set_data("[1]");
  EXPECT_TRUE(absl::IsInvalidArgument(ProjectedPodStatus(ManagerPod(), garbage).status()));
}

// --- Pod groups -------------------------------------------------------------------------------

Json GroupPod(const std::string& name) {
  Json pod = ManagerPod();
  pod["metadata"]["name"] = name;
  pod["metadata"]["uid"] = "uid-" + name;
  pod["metadata"]["labels"]["kueue.x-k8s.io/pod-group-name"] = "g";
  pod["metadata"]["annotations"]["kueue.x-k8s.io/pod-group-total-count"] = "2";
  return pod;
}

TEST(MultiKueuePodsTest, APodGroupTravelsAsAPodListOfItsPodsAsWritten) {
  absl::StatusOr<v1::WorkloadPayload> payload = PodGroupPayload({GroupPod("a"), GroupPod("b")});
  ASSERT_TRUE(payload.ok()) << payload.status();
  EXPECT_EQ(payload->api_version(), "v1");
  EXPECT_EQ(payload->kind(), "PodList");
  EXPECT_TRUE(IsMultiKueueGatedKind(payload->api_version(), payload->kind()));
  EXPECT_TRUE(IsMultiKueuePodGroup(payload->api_version(), payload->kind()));
  const Json data = DataOf(*payload);
  ASSERT_EQ(data["items"].size(), 2u);
  EXPECT_EQ(data["items"][1]["metadata"]["name"], "b");
  EXPECT_EQ(data["items"][1]["kind"], "Pod");
  EXPECT_FALSE(data["items"][1]["metadata"].contains("uid"));
  EXPECT_FALSE(data["items"][1].contains("status"));
  EXPECT_FALSE(data["items"][1]["metadata"]["annotations"].contains("tollgate.dev/status"));
  EXPECT_EQ(GetString(data["items"][0], {"metadata", "labels", "kueue.x-k8s.io/pod-group-name"}),
            "g");
  EXPECT_EQ(data["items"][0]["spec"], ManagerPod()["spec"]);
}

TEST(MultiKueuePodsTest, APodGroupWithoutPodsOrWithAPodWithoutSpecIsRefused) {
  EXPECT_THAT(PodGroupPayload({}).status().message(), HasSubstr("no pods"));
  Json no_spec = GroupPod("b");
  no_spec.erase("spec");
  absl::Status refused = PodGroupPayload({GroupPod("a"), no_spec}).status();
  EXPECT_TRUE(absl::IsInvalidArgument(refused));
  EXPECT_THAT(refused.message(), HasSubstr("pod b: spec: Required value"));
}

std::vector<std::string> NamesOf(const std::vector<Json>& pods) {
  std::vector<std::string> names;
  for (const Json& pod : pods) names.push_back(GetString(pod, {"metadata", "name"}));
  return names;
}

Json WithPhase(Json pod, const std::string& phase) {
  pod["status"]["phase"] = phase;
  return pod;
}

TEST(MultiKueuePodsTest, PodsMadeAfterTheWorkloadJoinItsPayloadInTheGroupsOrder) {
  // Fast admission: the workload was made at the first pod.
  absl::StatusOr<v1::WorkloadPayload> carried = PodGroupPayload({GroupPod("a")});
  ASSERT_TRUE(carried.ok());
  absl::StatusOr<std::vector<Json>> now =
      GroupPodsToCarry({GroupPod("a"), GroupPod("b")}, *carried);
  ASSERT_TRUE(now.ok()) << now.status();
  EXPECT_THAT(NamesOf(*now), ::testing::ElementsAre("a", "b"));
  // Nothing new: the same pods, so the same payload.
  absl::StatusOr<std::vector<Json>> same = GroupPodsToCarry({GroupPod("a")}, *carried);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(PodGroupPayload(*same)->data(), carried->data());
}

TEST(MultiKueuePodsTest, AFailedPodStaysCarriedAndItsReplacementJoins) {
  absl::StatusOr<v1::WorkloadPayload> carried = PodGroupPayload({GroupPod("a"), GroupPod("b")});
  ASSERT_TRUE(carried.ok());
  // a failed on the worker (its status projected here), c replaces it; d failed before it was
  // ever carried, so no worker needs it.
  absl::StatusOr<std::vector<Json>> now =
      GroupPodsToCarry({GroupPod("c"), GroupPod("b"), WithPhase(GroupPod("d"), "Failed"),
                        WithPhase(GroupPod("a"), "Failed")},
                       *carried);
  ASSERT_TRUE(now.ok()) << now.status();
  // The carried ones in their places, whatever order the pods come in.
  EXPECT_THAT(NamesOf(*now), ::testing::ElementsAre("a", "b", "c"));
}

TEST(MultiKueuePodsTest, APodBeingDeletedOrGoneIsNoLongerCarried) {
  absl::StatusOr<v1::WorkloadPayload> carried = PodGroupPayload({GroupPod("a"), GroupPod("b")});
  ASSERT_TRUE(carried.ok());
  Json deleting = GroupPod("b");
  deleting["metadata"]["deletionTimestamp"] = "2026-01-01T00:01:00Z";
  absl::StatusOr<std::vector<Json>> now = GroupPodsToCarry({GroupPod("a"), deleting}, *carried);
  ASSERT_TRUE(now.ok());
  EXPECT_THAT(NamesOf(*now), ::testing::ElementsAre("a"));
  now = GroupPodsToCarry({GroupPod("b")}, *carried);
  ASSERT_TRUE(now.ok());
  EXPECT_THAT(NamesOf(*now), ::testing::ElementsAre("b"));
}

TEST(MultiKueuePodsTest, OnlyAPodListPayloadCarriesAGroupsPods) {
  absl::StatusOr<v1::WorkloadPayload> pod = GatedObjectPayload(PodResource(), ManagerPod());
  ASSERT_TRUE(pod.ok());
  absl::Status refused = GroupPodsToCarry({GroupPod("a")}, *pod).status();
  EXPECT_TRUE(absl::IsInvalidArgument(refused));
  EXPECT_THAT(refused.message(), HasSubstr("spec.payload: carries v1 Pod, not a v1 PodList"));
  v1::WorkloadPayload garbage = *PodGroupPayload({GroupPod("a")});
  garbage.set_data("{\"items\": 3}");
  refused = GroupPodsToCarry({GroupPod("a")}, garbage).status();
  EXPECT_TRUE(absl::IsInvalidArgument(refused));
  EXPECT_THAT(refused.message(), HasSubstr("spec.payload.data: items"));
}

TEST(MultiKueuePodsTest, TheWorkerMakesEachPodOfTheGroupBoundToItsCopy) {
  absl::StatusOr<v1::WorkloadPayload> payload = PodGroupPayload({GroupPod("a"), GroupPod("b")});
  ASSERT_TRUE(payload.ok());
  absl::StatusOr<std::vector<Json>> pods =
      RemotePodsFromGroupPayload(*payload, "team", "g", "manager-1");
  ASSERT_TRUE(pods.ok()) << pods.status();
  ASSERT_EQ(pods->size(), 2u);
  for (const Json& pod : *pods) {
    EXPECT_EQ(pod["kind"], "Pod");
    EXPECT_EQ(PrebuiltWorkloadName(pod), "g");
    EXPECT_EQ(GetString(pod, {"metadata", "labels", kMultiKueueOriginLabel}), "manager-1");
    EXPECT_EQ(GetString(pod, {"metadata", "labels", "kueue.x-k8s.io/pod-group-name"}), "g");
    EXPECT_EQ(GetString(pod, {"metadata", "namespace"}), "team");
    EXPECT_EQ(pod["spec"]["schedulingGates"][0]["name"], "kueue.x-k8s.io/admission");
  }
  EXPECT_EQ((*pods)[0]["metadata"]["name"], "a");
  // A group's payload is not one object, and one object's is not a group.
  EXPECT_TRUE(absl::IsInvalidArgument(
      RemoteGatedObjectFromPayload(*payload, "team", "g", "manager-1").status()));
  absl::StatusOr<v1::WorkloadPayload> single = GatedObjectPayload(PodResource(), ManagerPod());
  ASSERT_TRUE(single.ok());
  EXPECT_THAT(RemotePodsFromGroupPayload(*single, "team", "g", "o").status().message(),
              HasSubstr("not a v1 PodList"));
}

TEST(MultiKueuePodsTest, AGroupPayloadWithoutPodsOrWithABadPodIsRefusedNamingTheItem) {
  v1::WorkloadPayload empty = JsonPayload("v1", "PodList", {{"items", Json::array()}});
  EXPECT_THAT(RemotePodsFromGroupPayload(empty, "team", "g", "o").status().message(),
              HasSubstr("spec.payload.data: items"));
  v1::WorkloadPayload nameless =
      JsonPayload("v1", "PodList", {{"items", Json::array({{{"spec", Json::object()}}})}});
  absl::Status refused = RemotePodsFromGroupPayload(nameless, "team", "g", "o").status();
  EXPECT_TRUE(absl::IsInvalidArgument(refused));
  EXPECT_THAT(refused.message(), HasSubstr("items[0]"));
}

TEST(MultiKueuePodsTest, EachGatedPodOfAGroupTakesTheStatusOfTheWorkersPodOfItsName) {
  Json a = GroupPod("a");
  a["status"] = Json::parse(R"({"phase": "Running", "podIP": "10.0.0.1",
      "conditions": [{"type": "PodScheduled", "status": "True"}]})");
  Json b = GroupPod("b");
  b["status"] = Json::parse(R"({"phase": "Pending", "conditions": [
      {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]})");
  const v1::WorkloadPayload report = PodGroupStatusReport({a, b});
  EXPECT_EQ(report.kind(), "PodList");
  EXPECT_EQ(DataOf(report)["items"][0],
            Json({{"metadata", {{"name", "a"}}}, {"status", a["status"]}}));

  absl::StatusOr<Json> for_a = ProjectedPodStatus(GroupPod("a"), report);
  ASSERT_TRUE(for_a.ok()) << for_a.status();
  EXPECT_EQ(*for_a, a["status"]);
  // b's remote is not scheduled: its gated pod keeps SchedulingGated.
  absl::StatusOr<Json> for_b = ProjectedPodStatus(GroupPod("b"), report);
  ASSERT_TRUE(for_b.ok()) << for_b.status();
  EXPECT_EQ((*for_b)["phase"], "Pending");
  EXPECT_EQ((*for_b)["conditions"][0]["reason"], "SchedulingGated");
  // A pod the worker has not made yet.
  EXPECT_TRUE(absl::IsNotFound(ProjectedPodStatus(GroupPod("c"), report).status()));
  v1::WorkloadPayload no_items = JsonPayload("v1", "PodList", Json::object());
  EXPECT_THAT(ProjectedPodStatus(GroupPod("a"), no_items).status().message(),
              HasSubstr("items: must be a list"));
}

// --- LeaderWorkerSet --------------------------------------------------------------------------

Json ManagerLeaderWorkerSet() {
  return Json::parse(R"({
    "apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
    "metadata": {"name": "lws", "namespace": "team", "uid": "lws-uid",
                 "labels": {"kueue.x-k8s.io/queue-name": "q"}},
    "spec": {"replicas": 2, "leaderWorkerTemplate": {"size": 2,
             "workerTemplate": {"spec": {"containers": [{"name": "c"}]}}}},
    "status": {"replicas": 2}
  })");
}

TEST(MultiKueuePodsTest, ALeaderWorkerSetTravelsWithItsOriginUidAndIsBoundToAllItsGroupsCopies) {
  absl::StatusOr<v1::WorkloadPayload> payload =
      GatedObjectPayload(LeaderWorkerSetKind(), ManagerLeaderWorkerSet());
  ASSERT_TRUE(payload.ok()) << payload.status();
  EXPECT_EQ(payload->api_version(), "leaderworkerset.x-k8s.io/v1");
  EXPECT_EQ(payload->kind(), "LeaderWorkerSet");
  EXPECT_TRUE(IsMultiKueueGatedKind(payload->api_version(), payload->kind()));
  const Json data = DataOf(*payload);
  EXPECT_EQ(GetString(data, {"metadata", "annotations", kMultiKueueOriginUidAnnotation}),
            "lws-uid");
  EXPECT_FALSE(data.contains("status"));

  absl::StatusOr<Json> remote =
      RemoteGatedObjectFromPayload(*payload, "team", "some-group-copy", "manager-1");
  ASSERT_TRUE(remote.ok()) << remote.status();
  // No one copy's: it runs under all of them.
  EXPECT_EQ(PrebuiltWorkloadName(*remote), "");
  EXPECT_EQ(GetString(*remote, {"metadata", "labels", kMultiKueueOriginLabel}), "manager-1");
  // Its groups' copies have the names the manager gave its groups' workloads.
  (*remote)["metadata"]["uid"] = "worker-uid";
  EXPECT_EQ(RemoteLeaderWorkerSetCopies(*remote),
            (std::vector<std::string>{LeaderWorkerSetGroupName(ManagerLeaderWorkerSet(), 0),
                                      LeaderWorkerSetGroupName(ManagerLeaderWorkerSet(), 1)}));
  // Without the origin uid there is nothing to name them by.
  EXPECT_TRUE(RemoteLeaderWorkerSetCopies(ManagerLeaderWorkerSet()).empty());
}

}  // namespace
}  // namespace tollgate::manifest
