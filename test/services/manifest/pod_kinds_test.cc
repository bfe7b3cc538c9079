#include "services/manifest/pod_kinds.h"

#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/manifest/gated_kinds_input.h"
#include "services/manifest/manifest_input.h"
#include "services/manifest/pod_admission.h"
#include "services/manifest/pod_role_hash.h"

// The gated kinds' workloads (services/manifest/pod_kinds.h), from the documented manifests in
// test/fixtures/ as `tollgate submit -f` reads them, and what an admission puts on a pod.

namespace tollgate::manifest {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string FixturePath(const std::string& name) {
  return std::string(TOLLGATE_FIXTURES_DIR) + "/" + name;
}

std::vector<v1::Workload> Read(const std::vector<std::string>& files) {
  std::istringstream none;
  std::vector<std::string> paths;
  for (const std::string& f : files) paths.push_back(FixturePath(f));
  absl::StatusOr<std::vector<Manifest>> manifests = ReadManifests(none, paths);
  EXPECT_TRUE(manifests.ok()) << manifests.status();
  std::vector<v1::Workload> out;
  if (!manifests.ok()) return out;
  for (const Manifest& m : *manifests) out.push_back(std::get<v1::Workload>(m.object));
  return out;
}

struct Set {
  std::string name;
  int32_t count;
  bool operator==(const Set&) const = default;
};
std::vector<Set> Sets(const v1::Workload& wl) {
  std::vector<Set> out;
  for (const v1::PodSet& ps : wl.spec().pod_sets()) out.push_back({ps.name(), ps.count()});
  return out;
}

TEST(PodKindsTest, APlainPodIsOneWorkloadOfOnePod) {
  std::vector<v1::Workload> wls = Read({"pod/pod.yaml"});
  ASSERT_EQ(wls.size(), 1u);
  EXPECT_THAT(wls[0].metadata().name(), StartsWith("pod-notebook-warmup-"));
  EXPECT_EQ(wls[0].metadata().namespace_(), "team-a");
  EXPECT_EQ(wls[0].spec().queue_name(), "user-queue");
  EXPECT_THAT(Sets(wls[0]), ElementsAre(Set{"main", 1}));
  EXPECT_EQ(wls[0].spec().pod_sets(0).requests().at("cpu"), "2");
  ASSERT_EQ(wls[0].metadata().owner_references_size(), 1);
  EXPECT_EQ(wls[0].metadata().owner_references(0).kind(), "Pod");
  // Twice the same file, the same workload (a stable stand-in for the uid).
  EXPECT_EQ(Read({"pod/pod.yaml"})[0].metadata().name(), wls[0].metadata().name());
}

TEST(PodKindsTest, AGroupIsOneWorkloadWithAPodSetPerRole) {
  std::vector<v1::Workload> wls = Read({"podgroup/podgroup.yaml"});
  ASSERT_EQ(wls.size(), 1u);
  EXPECT_EQ(wls[0].metadata().name(), "eval-sweep");
  EXPECT_EQ(wls[0].metadata().annotations().at("kueue.x-k8s.io/is-group-workload"), "true");
  std::istringstream none;
  const std::vector<Manifest> docs = *ReadManifests(none, {FixturePath("podgroup/podgroup.yaml")});
  // The roles, as Kueue hashes them: the driver's (cpu 1) and the two workers' (cpu 2).
  const Json driver_spec = Json::parse(R"({"restartPolicy": "Never", "containers": [
      {"name": "driver", "image": "python:3.12-slim", "command": ["python", "-m", "sweep.driver"],
       "resources": {"requests": {"cpu": "1"}}}]})");
  const Json worker_spec = Json::parse(R"({"restartPolicy": "Never", "containers": [
      {"name": "worker", "image": "python:3.12-slim", "command": ["python", "-m", "sweep.worker"],
       "resources": {"requests": {"cpu": "2"}}}]})");
  std::vector<Set> want = {{*RoleHashOfSpec(driver_spec), 1}, {*RoleHashOfSpec(worker_spec), 2}};
  std::sort(want.begin(), want.end(), [](const Set& a, const Set& b) { return a.name < b.name; });
  EXPECT_EQ(Sets(wls[0]), want);
}

TEST(PodKindsTest, AGroupMissingMembersOrWithAnotherVersionIsRefusedClearly) {
  const std::string text = R"(apiVersion: v1
kind: Pod
metadata:
  name: only-one
  labels: {kueue.x-k8s.io/pod-group-name: g, kueue.x-k8s.io/queue-name: q}
  annotations: {kueue.x-k8s.io/pod-group-total-count: "2"}
spec:
  containers: [{name: c, image: x}]
)";
  std::istringstream in(text);
  absl::StatusOr<std::vector<Manifest>> read = ReadManifests(in, {"-"});
  EXPECT_EQ(read.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(read.status().message(),
              HasSubstr("pod group default/g: 'g' group has fewer runnable pods than expected "
                        "(1 given, total 2)"));

  std::istringstream old(R"(apiVersion: apps/v1beta2
kind: StatefulSet
metadata: {name: db}
spec: {template: {spec: {containers: [{name: c, image: x}]}}}
)");
  absl::StatusOr<std::vector<Manifest>> refused = ReadManifests(old, {"-"});
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.status().message(),
              HasSubstr("StatefulSet: apiVersion \"apps/v1beta2\" is not apps/v1"));
}

TEST(PodKindsTest, ADeploymentIsOneWorkloadPerReplica) {
  std::vector<v1::Workload> wls = Read({"deployment/deployment.yaml"});
  ASSERT_EQ(wls.size(), 2u);
  for (const v1::Workload& wl : wls) {
    EXPECT_THAT(wl.metadata().name(), StartsWith("pod-embedder-"));
    EXPECT_THAT(Sets(wl), ElementsAre(Set{"main", 1}));
    EXPECT_EQ(wl.spec().pod_sets(0).requests().at("cpu"), "500m");
    EXPECT_EQ(wl.spec().queue_name(), "user-queue");
  }
  EXPECT_NE(wls[0].metadata().name(), wls[1].metadata().name());
}

TEST(PodKindsTest, AStatefulSetIsOneGroupWorkloadOfItsReplicas) {
  std::vector<v1::Workload> wls = Read({"statefulset/statefulset.yaml"});
  ASSERT_EQ(wls.size(), 1u);
  EXPECT_THAT(wls[0].metadata().name(), StartsWith("statefulset-vector-db-"));
  EXPECT_THAT(Sets(wls[0]), ElementsAre(Set{"main", 3}));
  EXPECT_EQ(wls[0].metadata().owner_references(0).kind(), "StatefulSet");
  EXPECT_EQ(wls[0].metadata().owner_references(0).api_version(), "apps/v1");
}

TEST(PodKindsTest, ALeaderWorkerSetIsOneWorkloadPerGroup) {
  std::vector<v1::Workload> wls = Read({"leaderworkerset/leaderworkerset.yaml"});
  ASSERT_EQ(wls.size(), 2u);
  for (int i = 0; i < 2; ++i) {
    EXPECT_THAT(wls[i].metadata().name(),
                StartsWith(absl::StrCat("leaderworkerset-vllm-llama-", i, "-")));
    EXPECT_THAT(Sets(wls[i]), ElementsAre(Set{"leader", 1}, Set{"worker", 3}));
    EXPECT_EQ(wls[i].metadata().annotations().at("kueue.x-k8s.io/component-workload-index"),
              absl::StrCat(i));
    EXPECT_EQ(wls[i].spec().pod_sets(1).requests().at("nvidia.com/gpu"), "1");
  }
}

TEST(PodKindsTest, WorkloadNamesAreKueues) {
  // Kueue's GetWorkloadNameForOwnerWithGVK, as its workload_names_test pins it.
  EXPECT_EQ(KueueWorkloadName("Job", "batch", "name", "uid"), "job-name-ef3a1");
  EXPECT_EQ(KueueWorkloadName("Pod", "", "pod", "test-uid"), "pod-pod-43ebf");
}

TEST(PodAdmissionTest, AnAdmissionMergesIntoThePodAndConflictsAreRefused) {
  v1::Workload wl;
  wl.mutable_metadata()->set_name("w");
  wl.mutable_spec()->set_queue_name("user-queue");
  v1::Admission* admission = wl.mutable_status()->mutable_admission();
  admission->set_cluster_queue("team-cq");
  (*admission->mutable_pod_labels())["team"] = "vision";
  v1::PodSetAssignment* ps = admission->add_pod_set_assignments();
  ps->set_name("main");
  (*ps->mutable_flavors())["cpu"] = "pool";
  FlavorMap flavors;
  v1::ResourceFlavor& pool = flavors["pool"];
  (*pool.mutable_spec()->mutable_node_labels())["tollgate.dev/pool"] = "cpu";
  v1::Toleration* t = pool.mutable_spec()->add_tolerations();
  t->set_key("dedicated");
  t->set_operator_("Exists");
  absl::StatusOr<PodSetInfo> a = PodAdmissionFor(wl, "main", flavors);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->labels,
            (std::map<std::string, std::string>{{"kueue.x-k8s.io/cluster-queue-name", "team-cq"},
                                                {"kueue.x-k8s.io/local-queue-name", "user-queue"},
                                                {"kueue.x-k8s.io/podset", "main"},
                                                {"team", "vision"}}));
  Json pod = Json::parse(R"({"metadata": {"labels": {"app": "x"}},
      "spec": {"tolerations": [{"key": "dedicated", "operator": "Exists"}]}})");
  ASSERT_TRUE(MergePodAdmission(pod, *a).ok());
  EXPECT_EQ(pod["spec"]["nodeSelector"]["tollgate.dev/pool"], "cpu");
  EXPECT_EQ(pod["spec"]["tolerations"].size(), 1u);
  EXPECT_EQ(pod["metadata"]["labels"]["team"], "vision");
  Json clash = Json::parse(R"({"spec": {"nodeSelector": {"tollgate.dev/pool": "gpu"}}})");
  absl::Status refused = MergePodAdmission(clash, *a);
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.message(), HasSubstr("nodeSelector: key tollgate.dev/pool"));
  EXPECT_EQ(PodAdmissionFor(wl, "other", flavors).status().code(), absl::StatusCode::kNotFound);
}

// Kueue's pod, StatefulSet and LeaderWorkerSet reconcilers read the topology annotations of the
// pod (or template) with the kind's own pod index label.
TEST(PodKindsTest, TopologyAnnotationsBecomeRequestsWithEachKindsIndexLabel) {
  const Json pod = Json::parse(R"({"metadata": {"name": "p", "namespace": "ns", "uid": "u",
      "annotations": {"kueue.x-k8s.io/podset-required-topology": "cloud.com/rack"}},
      "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}})");
  absl::StatusOr<v1::Workload> plain = PodWorkload(pod, "q");
  ASSERT_TRUE(plain.ok()) << plain.status();
  const v1::PodSetTopologyRequest& request = plain->spec().pod_sets(0).topology_request();
  EXPECT_EQ(request.required(), "cloud.com/rack");
  EXPECT_EQ(request.pod_index_label(), "kueue.x-k8s.io/pod-group-pod-index");

  const Json sts = Json::parse(R"({"metadata": {"name": "db", "namespace": "ns", "uid": "u"},
      "spec": {"replicas": 2, "template": {
        "metadata": {"annotations": {"kueue.x-k8s.io/podset-preferred-topology": "cloud.com/rack"}},
        "spec": {"containers": [{"name": "c"}]}}}})");
  absl::StatusOr<v1::Workload> stateful = StatefulSetWorkload(sts, "q");
  ASSERT_TRUE(stateful.ok()) << stateful.status();
  EXPECT_EQ(stateful->spec().pod_sets(0).topology_request().preferred(), "cloud.com/rack");
  EXPECT_EQ(stateful->spec().pod_sets(0).topology_request().pod_index_label(),
            "apps.kubernetes.io/pod-index");

  const Json lws = Json::parse(R"({"metadata": {"name": "llm", "namespace": "ns", "uid": "u"},
      "spec": {"replicas": 1, "leaderWorkerTemplate": {"size": 3,
        "leaderTemplate": {"metadata": {"annotations": {
            "kueue.x-k8s.io/podset-required-topology": "cloud.com/rack",
            "kueue.x-k8s.io/podset-group-name": "g"}},
          "spec": {"containers": [{"name": "c"}]}},
        "workerTemplate": {"metadata": {"annotations": {
            "kueue.x-k8s.io/podset-required-topology": "cloud.com/rack",
            "kueue.x-k8s.io/podset-group-name": "g"}},
          "spec": {"containers": [{"name": "c"}]}}}}})");
  absl::StatusOr<std::vector<v1::Workload>> groups = LeaderWorkerSetWorkloads(lws, "q");
  ASSERT_TRUE(groups.ok()) << groups.status();
  const v1::PodSetTopologyRequest& leader = (*groups)[0].spec().pod_sets(0).topology_request();
  const v1::PodSetTopologyRequest& worker = (*groups)[0].spec().pod_sets(1).topology_request();
  EXPECT_EQ(leader.pod_set_group_name(), "g");
  EXPECT_FALSE(leader.has_pod_index_label());
  EXPECT_EQ(worker.pod_set_group_name(), "g");
  EXPECT_EQ(worker.pod_index_label(), "leaderworkerset.sigs.k8s.io/worker-index");

  Json bad = pod;
  bad["metadata"]["annotations"]["kueue.x-k8s.io/podset-preferred-topology"] = "cloud.com/rack";
  EXPECT_EQ(PodWorkload(bad, "q").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(PodAdmissionTest, APlacedPodSetKeepsTheTopologyGateAndNamesItsWorkload) {
  v1::Workload wl;
  wl.mutable_metadata()->set_name("w");
  v1::PodSet* set = wl.mutable_spec()->add_pod_sets();
  set->set_name("main");
  set->mutable_topology_request()->set_required("cloud.com/rack");
  v1::PodSetAssignment* ps = wl.mutable_status()->mutable_admission()->add_pod_set_assignments();
  ps->set_name("main");
  ps->mutable_topology_assignment()->add_levels("kubernetes.io/hostname");
  absl::StatusOr<PodSetInfo> placed = PodAdmissionFor(wl, "main", {});
  ASSERT_TRUE(placed.ok()) << placed.status();
  EXPECT_THAT(placed->scheduling_gates,
              ElementsAre(Json::parse(R"({"name": "kueue.x-k8s.io/topology"})")));
  EXPECT_EQ(placed->annotations.at("kueue.x-k8s.io/workload"), "w");

  ps->clear_topology_assignment();
  absl::StatusOr<PodSetInfo> unplaced = PodAdmissionFor(wl, "main", {});
  ASSERT_TRUE(unplaced.ok()) << unplaced.status();
  EXPECT_TRUE(unplaced->scheduling_gates.empty());
}

}  // namespace
}  // namespace tollgate::manifest
