// Plain Pods, pod groups, Deployments, StatefulSets and LeaderWorkerSets end to end: the real
// tollgated and tollgate-kube against the fake API server, whose stand-ins play the kubelet and
// the Deployment, StatefulSet and LeaderWorkerSet controllers. One set of processes serves the
// whole binary (CI time); each kind has its own namespace and ClusterQueue
// (testdata/pod-kinds-queues.yaml). Each test creates the manifest its project documents
// (test/fixtures/<kind>/) and checks: gated until admitted; pod sets as Kueue computes them; the
// flavor's node selector and toleration, Kueue's queue labels and the cost-attribution labels on
// the admitted pods; preempted -> deleted (and, for a parent, gated again); finished or deleted
// -> quota released. Every wait polls a condition with a deadline.
#include <curl/curl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "adapters/kube/pod_controller.h"
#include "clients/cpp/grpc_admission_client.h"
#include "clients/cpp/tollgate_client.h"
#include "common/file_util.h"
#include "services/kubeapi/kube_client.h"
#include "services/manifest/admission_enactment.h"
#include "services/manifest/job_kind.h"
#include "services/manifest/pod_group.h"
#include "services/manifest/pod_role_hash.h"
#include "services/manifest/yaml_json.h"
#include "test/adapters/kube/test_processes.h"

namespace tollgate::kube {
namespace {

using manifest::EventResource;
using manifest::Find;
using manifest::GetString;
using testing::ChildProcess;
using ::testing::Contains;
using ::testing::ElementsAre;
using testing::WaitFor;

constexpr char kToken[] = "pods-token";
constexpr absl::Duration kWait = absl::Seconds(60);
constexpr char kPoolLabel[] = "tollgate.dev/pool";
constexpr char kDuration[] = "fake.tollgate.dev/duration-seconds";

std::vector<Json> Fixture(const std::string& file) {
  const std::string path = absl::StrCat(TOLLGATE_FIXTURES_DIR, "/", file);
  absl::StatusOr<std::string> text = common::ReadFileToString(path);
  EXPECT_TRUE(text.ok()) << text.status();
  absl::StatusOr<std::vector<Json>> docs =
      text.ok() ? manifest::JsonDocumentsFromYaml(*text, path) : text.status();
  EXPECT_TRUE(docs.ok()) << docs.status();
  return docs.ok() ? *docs : std::vector<Json>{};
}

// What the documented MutatingAdmissionPolicy does at creation (docs/kubernetes.md): the
// scheduling gate on a queued pod. Kueue's webhook does the same.
Json Gated(Json pod) {
  pod["spec"]["schedulingGates"] = Json::array({{{"name", "kueue.x-k8s.io/admission"}}});
  return pod;
}

struct Cluster {
  std::string scratch;
  testing::FakeApiServer apiserver;
  std::unique_ptr<kubeapi::CurlKubeClient> kube;
  std::unique_ptr<ChildProcess> tollgated;
  std::unique_ptr<client::GrpcAdmissionClient> admission;
  // Calls an adapter does not make (Preempt).
  std::unique_ptr<client::TollgateClient> operator_client;
  std::unique_ptr<ChildProcess> adapter;
};

std::string MakeScratch(const std::string& prefix) {
  std::string templ = (std::filesystem::temp_directory_path() / (prefix + "XXXXXX")).string();
  const char* dir = mkdtemp(templ.data());
  return dir == nullptr ? "" : std::string(dir);
}

class PodKindsE2eTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    curl_global_init(CURL_GLOBAL_DEFAULT);
    cluster_ = new Cluster();
    Cluster& c = *cluster_;
    c.scratch = MakeScratch("tollgate-pods-e2e-");
    ASSERT_FALSE(c.scratch.empty());
    absl::StatusOr<testing::FakeApiServer> server = testing::StartFakeApiServer(
        c.scratch,
        {"--token", kToken, "--namespaces",
         "default,kube-system,pods,groups,deployments,statefulsets,lws", "--job-duration", "3600"});
    ASSERT_TRUE(server.ok()) << server.status();
    c.apiserver = std::move(*server);
    manifest::KubeConfig config;
    config.server = c.apiserver.url();
    config.token = kToken;
    c.kube = *kubeapi::CurlKubeClient::Create(config, kubeapi::CurlKubeClient::Options());
    std::ofstream(c.scratch + "/kubeconfig")
        << absl::StrCat("apiVersion: v1\nkind: Config\ncurrent-context: fake\n",
                        "contexts: [{name: fake, context: {cluster: fake, user: tester}}]\n",
                        "clusters: [{name: fake, cluster: {server: \"", c.apiserver.url(),
                        "\"}}]\n", "users: [{name: tester, user: {token: ", kToken, "}}]\n");
    const std::string port_file = c.scratch + "/tollgated.port";
    absl::StatusOr<std::unique_ptr<ChildProcess>> tollgated = ChildProcess::Start(
        {testing::TollgatedBinary(), "--listen=127.0.0.1:0", "--data-dir=" + c.scratch + "/data",
         "--port-file=" + port_file,
         "--manifests=" + std::string(TOLLGATE_KUBE_TESTDATA) + "/pod-kinds-queues.yaml",
         "--evictions-need-ack", "--cost-attribution-labels=team,cost-center"},
        c.scratch + "/tollgated.log");
    ASSERT_TRUE(tollgated.ok()) << tollgated.status();
    c.tollgated = std::move(*tollgated);
    absl::StatusOr<int> port = testing::WaitForPortFile(port_file, *c.tollgated, kWait);
    ASSERT_TRUE(port.ok()) << port.status();
    absl::StatusOr<std::unique_ptr<client::GrpcAdmissionClient>> admission =
        client::GrpcAdmissionClient::Connect(absl::StrCat("127.0.0.1:", *port), absl::Seconds(5));
    ASSERT_TRUE(admission.ok()) << admission.status();
    c.admission = std::move(*admission);
    c.operator_client = std::make_unique<client::TollgateClient>(absl::StrCat("127.0.0.1:", *port),
                                                                 absl::Seconds(5));
    absl::StatusOr<std::unique_ptr<ChildProcess>> adapter = ChildProcess::Start(
        {testing::TollgateKubeBinary(), "--kubeconfig=" + c.scratch + "/kubeconfig",
         absl::StrCat("--tollgate=127.0.0.1:", *port),
         "--frameworks=pod,deployment,statefulset,leaderworkerset.x-k8s.io/leaderworkerset",
         "--resync-period=30s", "--watch-timeout=60s", "--sync-namespaces=false"},
        c.scratch + "/tollgate-kube.log");
    ASSERT_TRUE(adapter.ok()) << adapter.status();
    c.adapter = std::move(*adapter);
  }

  static void TearDownTestSuite() {
    const std::string scratch = cluster_ != nullptr ? cluster_->scratch : "";
    delete cluster_;
    cluster_ = nullptr;
    testing::RemoveSuiteScratchUnlessFailed(scratch);
  }

  void TearDown() override {
    if (HasFailure() && cluster_ != nullptr) {
      if (cluster_->adapter) std::cerr << "--- tollgate-kube log\n" << cluster_->adapter->Logs();
      if (cluster_->tollgated) std::cerr << "--- tollgated log\n" << cluster_->tollgated->Logs();
    }
  }

  kubeapi::CurlKubeClient& kube() { return *cluster_->kube; }
  client::GrpcAdmissionClient& admission() { return *cluster_->admission; }

  Json Create(const manifest::ResourceKind& kind, const std::string& ns, Json obj) {
    // As kubectl -n: the fixture's own namespace gives way to the test's (the API server
    // refuses a body whose namespace differs from the request's).
    obj["metadata"]["namespace"] = ns;
    absl::StatusOr<Json> made = kube().Create(kind, ns, obj);
    EXPECT_TRUE(made.ok()) << made.status();
    return made.ok() ? *made : Json(nullptr);
  }
  Json Get(const manifest::ResourceKind& kind, const std::string& ns, const std::string& name) {
    absl::StatusOr<Json> obj = kube().Get(kind, ns, name);
    return obj.ok() ? *obj : Json(nullptr);
  }
  void Patch(const manifest::ResourceKind& kind, const std::string& ns, const std::string& name,
             const Json& patch) {
    absl::StatusOr<Json> patched = kube().Patch(kind, ns, name, kubeapi::PatchType::kMerge, patch);
    ASSERT_TRUE(patched.ok()) << patched.status();
  }
  std::vector<Json> Pods(const std::string& ns) {
    absl::StatusOr<kubeapi::ListResult> pods = kube().List(PodResource(), ns);
    return pods.ok() ? pods->items : std::vector<Json>{};
  }

  std::optional<v1::Workload> Workload(const std::string& ns, const std::string& name) {
    v1::WorkloadRef ref;
    ref.set_namespace_(ns);
    ref.set_name(name);
    absl::StatusOr<v1::Workload> wl = admission().GetWorkload(ref);
    if (!wl.ok()) return std::nullopt;
    return *wl;
  }
  v1::WorkloadState StateOf(const std::string& ns, const std::string& name) {
    std::optional<v1::Workload> wl = Workload(ns, name);
    return wl.has_value() ? wl->status().state() : v1::WORKLOAD_STATE_UNSPECIFIED;
  }
  std::vector<v1::Workload> Workloads(const std::string& ns) {
    v1::ListWorkloadsRequest request;
    request.set_namespace_(ns);
    absl::StatusOr<v1::ListWorkloadsResponse> list = admission().ListWorkloads(request);
    if (!list.ok()) return {};
    return {list->workloads().begin(), list->workloads().end()};
  }
  void Preempt(const std::string& ns, const std::string& name) {
    v1::PreemptRequest request;
    request.mutable_workload()->set_namespace_(ns);
    request.mutable_workload()->set_name(name);
    ASSERT_TRUE(cluster_->operator_client->Preempt(request).ok());
  }

  bool NoUsage(const std::string& cluster_queue) {
    v1::ObjectRef ref;
    ref.set_kind(v1::CLUSTER_QUEUE);
    ref.set_name(cluster_queue);
    absl::StatusOr<v1::ConfigObject> cq = admission().GetObject(ref);
    if (!cq.ok()) return false;
    for (const v1::FlavorUsage& f : cq->cluster_queue().status().flavors_usage()) {
      for (const v1::ResourceUsage& r : f.resources()) {
        if (r.total() != "0") return false;
      }
    }
    return true;
  }

  std::vector<std::string> EventReasons(const std::string& ns, const std::string& name) {
    std::vector<std::string> reasons;
    absl::StatusOr<kubeapi::ListResult> events = kube().List(EventResource(), ns);
    if (!events.ok()) return reasons;
    for (const Json& e : events->items) {
      if (GetString(e, {"involvedObject", "name"}) == name) {
        reasons.push_back(GetString(e, {"reason"}));
      }
    }
    return reasons;
  }

  // Admitted and running as Tollgate started it: ungated, with the flavor's node label and
  // toleration, Kueue's queue labels and the LocalQueue's cost-attribution label.
  static bool RunsWithFlavor(const Json& pod, const std::string& pool_value,
                             const std::string& team,
                             const std::string& local_queue = "user-queue") {
    if (pod.is_null() || manifest::IsGated(pod)) return false;
    if (GetString(pod, {"spec", "nodeSelector", kPoolLabel}) != pool_value) return false;
    const Json* tolerations = Find(pod, {"spec", "tolerations"});
    if (tolerations == nullptr || !tolerations->is_array() || tolerations->empty()) return false;
    return manifest::PodLabel(pod, "kueue.x-k8s.io/local-queue-name") == local_queue &&
           !manifest::PodLabel(pod, "kueue.x-k8s.io/cluster-queue-name").empty() &&
           manifest::PodLabel(pod, "team") == team && manifest::PodPhase(pod) == "Running";
  }

  static Cluster* cluster_;
};

Cluster* PodKindsE2eTest::cluster_ = nullptr;

TEST_F(PodKindsE2eTest, PlainPodsWaitGatedRunWithTheirFlavorAndAreDeletedOnPreemption) {
  ASSERT_NE(cluster_, nullptr);
  const std::string ns = "pods";
  Json documented = Fixture("pod/pod.yaml").at(0);
  documented["metadata"]["annotations"][kDuration] = "3600";
  // The queue holds cpu 2: the first pod (cpu 2) runs, the second waits gated. The second is
  // made once the first runs: two pods made at once are queued in the order their workloads are
  // made, which is the order the adapter happens to see them.
  Json first = Create(PodResource(), ns, Gated(documented));
  const std::string first_wl = manifest::KueueWorkloadName("Pod", "", "notebook-warmup",
                                                           GetString(first, {"metadata", "uid"}));
  ASSERT_TRUE(WaitFor(
      [&] { return RunsWithFlavor(Get(PodResource(), ns, "notebook-warmup"), "cpu", "notebooks"); },
      kWait))
      << Get(PodResource(), ns, "notebook-warmup").dump(2);
  Json second_doc = Gated(documented);
  second_doc["metadata"]["name"] = "notebook-second";
  Json second = Create(PodResource(), ns, second_doc);
  const std::string second_wl = manifest::KueueWorkloadName("Pod", "", "notebook-second",
                                                            GetString(second, {"metadata", "uid"}));
  ASSERT_TRUE(WaitFor(
      [&] {
        return StateOf(ns, second_wl) == v1::WORKLOAD_STATE_PENDING &&
               manifest::IsGated(Get(PodResource(), ns, "notebook-second"));
      },
      kWait))
      << Get(PodResource(), ns, "notebook-warmup").dump(2);
  // Kueue's pod set: one "main" pod with the pod's requests; the cost labels on the admission.
  std::optional<v1::Workload> wl = Workload(ns, first_wl);
  ASSERT_TRUE(wl.has_value());
  ASSERT_EQ(wl->spec().pod_sets_size(), 1);
  EXPECT_EQ(wl->spec().pod_sets(0).name(), "main");
  EXPECT_EQ(wl->spec().pod_sets(0).count(), 1);
  EXPECT_EQ(wl->spec().pod_sets(0).requests().at("cpu"), "2");
  EXPECT_EQ(wl->status().admission().pod_labels().at("cost-center"), "cc-7");
  EXPECT_EQ(manifest::PodAnnotation(Get(PodResource(), ns, "notebook-warmup"),
                                    manifest::kRoleHashAnnotation),
            *manifest::RoleHashOfSpec(documented["spec"]));

  // Preempted: a gate cannot be put back, so the pod is deleted and its quota released; the
  // waiting pod is admitted.
  Preempt(ns, first_wl);
  ASSERT_TRUE(WaitFor(
      [&] {
        return Get(PodResource(), ns, "notebook-warmup").is_null() &&
               !Workload(ns, first_wl).has_value() &&
               RunsWithFlavor(Get(PodResource(), ns, "notebook-second"), "cpu", "notebooks");
      },
      kWait));
  // Finished: quota released.
  Patch(PodResource(), ns, "notebook-second",
        {{"metadata", {{"annotations", {{kDuration, "0"}}}}}});
  ASSERT_TRUE(
      WaitFor([&] { return StateOf(ns, second_wl) == v1::WORKLOAD_STATE_FINISHED; }, kWait));
  ASSERT_TRUE(WaitFor([&] { return NoUsage("pods-cq"); }, kWait));

  // Without the gate (no webhook added it) the pod is left alone and its owner told why.
  Json ungated = documented;
  ungated["metadata"]["name"] = "ungated";
  Create(PodResource(), ns, ungated);
  ASSERT_TRUE(WaitFor([&] { return !EventReasons(ns, "ungated").empty(); }, kWait));
  EXPECT_THAT(EventReasons(ns, "ungated"), Contains("NotGated"));
  // One list: begin() and end() of two calls would walk two different vectors.
  const std::vector<v1::Workload> after = Workloads(ns);
  EXPECT_TRUE(std::none_of(after.begin(), after.end(), [](const v1::Workload& w) {
    return absl::StrContains(w.metadata().name(), "ungated");
  }));
}

TEST_F(PodKindsE2eTest, APodGroupIsOneWorkloadByRoleWithExcessRemovedAndReplacementsAwaited) {
  ASSERT_NE(cluster_, nullptr);
  const std::string ns = "groups";
  std::vector<Json> docs = Fixture("podgroup/podgroup.yaml");
  ASSERT_EQ(docs.size(), 3u);
  for (Json& doc : docs) {
    doc["metadata"]["annotations"][kDuration] = "3600";
    doc = Gated(doc);
  }
  // Two of three: no workload yet.
  Create(PodResource(), ns, docs[0]);
  Create(PodResource(), ns, docs[1]);
  ASSERT_TRUE(WaitFor(
      [&] {
        return absl::StartsWith(
            manifest::Annotation(Get(PodResource(), ns, "eval-driver"), "tollgate.dev/status"),
            "pending: 'eval-sweep' group has fewer runnable pods than expected");
      },
      kWait));
  EXPECT_FALSE(Workload(ns, "eval-sweep").has_value());
  Create(PodResource(), ns, docs[2]);
  // All three: one workload named after the group, a pod set per role (the driver's hash with
  // one pod, the workers' with two), admitted (cpu 1 + 2 x 2 = 5 fits), every pod started.
  ASSERT_TRUE(WaitFor(
      [&] {
        for (const char* name : {"eval-driver", "eval-worker-0", "eval-worker-1"}) {
          if (!RunsWithFlavor(Get(PodResource(), ns, name), "cpu", "evals")) return false;
        }
        return StateOf(ns, "eval-sweep") == v1::WORKLOAD_STATE_ADMITTED;
      },
      kWait));
  std::optional<v1::Workload> wl = Workload(ns, "eval-sweep");
  ASSERT_TRUE(wl.has_value());
  const std::string driver_role =
      *manifest::RoleHashOfSpec(Fixture("podgroup/podgroup.yaml")[0]["spec"]);
  const std::string worker_role =
      *manifest::RoleHashOfSpec(Fixture("podgroup/podgroup.yaml")[1]["spec"]);
  std::map<std::string, int32_t> roles;
  for (const v1::PodSet& ps : wl->spec().pod_sets()) roles[ps.name()] = ps.count();
  EXPECT_EQ(roles, (std::map<std::string, int32_t>{{driver_role, 1}, {worker_role, 2}}));

  // A fourth worker is one too many: deleted.
  Json extra = docs[2];
  extra["metadata"]["name"] = "eval-worker-2";
  Create(PodResource(), ns, extra);
  ASSERT_TRUE(WaitFor([&] { return Get(PodResource(), ns, "eval-worker-2").is_null(); }, kWait));
  // A member with another total count is refused with an event; the workload keeps running.
  Json other_total = docs[2];
  other_total["metadata"]["name"] = "eval-worker-3";
  other_total["metadata"]["annotations"]["kueue.x-k8s.io/pod-group-total-count"] = "4";
  Create(PodResource(), ns, other_total);
  ASSERT_TRUE(WaitFor(
      [&] {
        std::vector<std::string> reasons = EventReasons(ns, "eval-driver");
        return std::find(reasons.begin(), reasons.end(), "ErrWorkloadCompose") != reasons.end();
      },
      kWait));
  EXPECT_EQ(StateOf(ns, "eval-sweep"), v1::WORKLOAD_STATE_ADMITTED);
  ASSERT_TRUE(kube().Delete(PodResource(), ns, "eval-worker-3").ok());

  // Preempted: every member deleted; the workload waits for replacements, not queued.
  Preempt(ns, "eval-sweep");
  ASSERT_TRUE(WaitFor(
      [&] {
        std::optional<v1::Workload> now = Workload(ns, "eval-sweep");
        return Pods(ns).empty() && now.has_value() &&
               now->status().state() == v1::WORKLOAD_STATE_PENDING &&
               now->status().waiting_for_replacement_pods() && NoUsage("groups-cq");
      },
      kWait));
  // The group's owner makes them again: admitted and started again.
  for (const Json& doc : docs) Create(PodResource(), ns, doc);
  ASSERT_TRUE(WaitFor(
      [&] {
        for (const char* name : {"eval-driver", "eval-worker-0", "eval-worker-1"}) {
          if (!RunsWithFlavor(Get(PodResource(), ns, name), "cpu", "evals")) return false;
        }
        return StateOf(ns, "eval-sweep") == v1::WORKLOAD_STATE_ADMITTED;
      },
      kWait));
  // All succeed: finished, quota released.
  for (const char* name : {"eval-driver", "eval-worker-0", "eval-worker-1"}) {
    Patch(PodResource(), ns, name, {{"metadata", {{"annotations", {{kDuration, "0"}}}}}});
  }
  ASSERT_TRUE(
      WaitFor([&] { return StateOf(ns, "eval-sweep") == v1::WORKLOAD_STATE_FINISHED; }, kWait));
  ASSERT_TRUE(WaitFor([&] { return NoUsage("groups-cq"); }, kWait));
}

TEST_F(PodKindsE2eTest, EachPodOfADeploymentIsItsOwnWorkload) {
  ASSERT_NE(cluster_, nullptr);
  const std::string ns = "deployments";
  // The queue holds cpu 1: one of the two pods (cpu 500m each) ... both fit; a third waits.
  Create(DeploymentResource(), ns, Fixture("deployment/deployment.yaml").at(0));
  auto running = [&] {
    int n = 0;
    for (const Json& pod : Pods(ns)) n += RunsWithFlavor(pod, "cpu", "search") ? 1 : 0;
    return n;
  };
  ASSERT_TRUE(WaitFor([&] { return running() == 2; }, kWait));
  // Its template got the gate, so every pod it makes waits for admission.
  EXPECT_FALSE(manifest::IsGated(Get(DeploymentResource(), ns, "embedder")));
  Json deployment = Get(DeploymentResource(), ns, "embedder");
  EXPECT_EQ(GetString(deployment["spec"]["template"]["spec"]["schedulingGates"][0], {"name"}),
            "kueue.x-k8s.io/admission");
  std::vector<v1::Workload> workloads = Workloads(ns);
  ASSERT_EQ(workloads.size(), 2u);
  for (const v1::Workload& wl : workloads) {
    EXPECT_TRUE(absl::StartsWith(wl.metadata().name(), "pod-embedder-"));
    ASSERT_EQ(wl.spec().pod_sets_size(), 1);
    EXPECT_EQ(wl.spec().pod_sets(0).count(), 1);
  }
  Patch(DeploymentResource(), ns, "embedder", {{"spec", {{"replicas", 3}}}});
  ASSERT_TRUE(WaitFor(
      [&] {
        int gated = 0;
        for (const Json& pod : Pods(ns)) gated += manifest::IsGated(pod) ? 1 : 0;
        return Pods(ns).size() == 3 && gated == 1 && running() == 2;
      },
      kWait));
  // Preempting one pod's workload deletes that pod; the Deployment makes a new gated one, which
  // is admitted into the quota the deleted pod gave back.
  Preempt(ns, workloads[0].metadata().name());
  ASSERT_TRUE(WaitFor(
      [&] {
        return !Workload(ns, workloads[0].metadata().name()).has_value() && running() == 2 &&
               Pods(ns).size() == 3;
      },
      kWait));
  ASSERT_TRUE(kube().Delete(DeploymentResource(), ns, "embedder").ok());
  ASSERT_TRUE(WaitFor([&] { return Workloads(ns).empty() && NoUsage("deployments-cq"); }, kWait));
}

TEST_F(PodKindsE2eTest, AStatefulSetIsOneGroupWorkloadOnHoldAtZero) {
  ASSERT_NE(cluster_, nullptr);
  const std::string ns = "statefulsets";
  Json sts = Create(StatefulSetResource(), ns, Fixture("statefulset/statefulset.yaml").at(0));
  const std::string wl_name = manifest::KueueWorkloadName("StatefulSet", "apps", "vector-db",
                                                          GetString(sts, {"metadata", "uid"}));
  std::string queue = "user-queue";
  auto all_running = [&] {
    for (int i = 0; i < 3; ++i) {
      if (!RunsWithFlavor(Get(PodResource(), ns, absl::StrCat("vector-db-", i)), "cpu", "search",
                          queue)) {
        return false;
      }
    }
    return true;
  };
  // One workload of three pods, owned by the StatefulSet; its ordered pods come one by one and
  // each starts, as fast admission admits the group before all of them exist.
  ASSERT_TRUE(WaitFor([&] { return all_running(); }, kWait));
  std::optional<v1::Workload> wl = Workload(ns, wl_name);
  ASSERT_TRUE(wl.has_value());
  ASSERT_EQ(wl->spec().pod_sets_size(), 1);
  EXPECT_EQ(wl->spec().pod_sets(0).name(), "main");
  EXPECT_EQ(wl->spec().pod_sets(0).count(), 3);
  ASSERT_EQ(wl->metadata().owner_references_size(), 1);
  EXPECT_EQ(wl->metadata().owner_references(0).kind(), "StatefulSet");
  ASSERT_TRUE(WaitFor([&] { return Workload(ns, wl_name)->status().pods_ready(); }, kWait));

  // Scaled to zero: on hold, quota released, no eviction.
  Patch(StatefulSetResource(), ns, "vector-db", {{"spec", {{"replicas", 0}}}});
  ASSERT_TRUE(WaitFor(
      [&] {
        std::optional<v1::Workload> now = Workload(ns, wl_name);
        return Pods(ns).empty() && now.has_value() && now->status().on_hold() &&
               NoUsage("statefulsets-cq");
      },
      kWait));
  // Scaled up again, relabelled to another queue: released, moved, admitted, running.
  queue = "search-queue";
  Patch(StatefulSetResource(), ns, "vector-db",
        {{"metadata", {{"labels", {{"kueue.x-k8s.io/queue-name", "search-queue"}}}}},
         {"spec", {{"replicas", 3}}}});
  ASSERT_TRUE(WaitFor(
      [&] {
        std::optional<v1::Workload> now = Workload(ns, wl_name);
        return all_running() && now.has_value() && !now->status().on_hold() &&
               now->spec().queue_name() == "search-queue";
      },
      kWait));
  // Preempted: the pods are deleted, the StatefulSet makes them again (gated), and they run once
  // the workload is admitted again.
  Preempt(ns, wl_name);
  ASSERT_TRUE(WaitFor(
      [&] { return all_running() && StateOf(ns, wl_name) == v1::WORKLOAD_STATE_ADMITTED; }, kWait));
  EXPECT_GE(Workload(ns, wl_name)->status().preemption_count(), 1);
  ASSERT_TRUE(kube().Delete(StatefulSetResource(), ns, "vector-db").ok());
  ASSERT_TRUE(WaitFor(
      [&] { return !Workload(ns, wl_name).has_value() && NoUsage("statefulsets-cq"); }, kWait));
}

TEST_F(PodKindsE2eTest, LeaderWorkerSetGroupsAreAdmittedOneByOne) {
  ASSERT_NE(cluster_, nullptr);
  const std::string ns = "lws";
  // Two groups of a leader and three workers at one GPU each; the queue holds 4 GPUs: one group.
  Json lws =
      Create(LeaderWorkerSetResource(), ns, Fixture("leaderworkerset/leaderworkerset.yaml").at(0));
  const std::string uid = GetString(lws, {"metadata", "uid"});
  auto group_wl = [&](int i) {
    return manifest::KueueWorkloadName("LeaderWorkerSet", "leaderworkerset.x-k8s.io",
                                       absl::StrCat("vllm-llama-", i), uid);
  };
  auto group_running = [&](int g) {
    for (const std::string& name :
         {absl::StrCat("vllm-llama-", g), absl::StrCat("vllm-llama-", g, "-1"),
          absl::StrCat("vllm-llama-", g, "-2"), absl::StrCat("vllm-llama-", g, "-3")}) {
      Json pod = Get(PodResource(), ns, name);
      if (pod.is_null() || manifest::IsGated(pod) ||
          GetString(pod, {"spec", "nodeSelector", "cloud.google.com/gke-accelerator"}) !=
              "nvidia-tesla-a100") {
        return false;
      }
    }
    return true;
  };
  auto group_gated = [&](int g) {
    Json leader = Get(PodResource(), ns, absl::StrCat("vllm-llama-", g));
    return !leader.is_null() && manifest::IsGated(leader);
  };
  ASSERT_TRUE(WaitFor(
      [&] {
        return StateOf(ns, group_wl(0)) != v1::WORKLOAD_STATE_UNSPECIFIED &&
               StateOf(ns, group_wl(1)) != v1::WORKLOAD_STATE_UNSPECIFIED &&
               ((group_running(0) && group_gated(1)) || (group_running(1) && group_gated(0)));
      },
      kWait));
  for (int i = 0; i < 2; ++i) {
    std::optional<v1::Workload> wl = Workload(ns, group_wl(i));
    ASSERT_TRUE(wl.has_value());
    ASSERT_EQ(wl->spec().pod_sets_size(), 2);
    EXPECT_EQ(wl->spec().pod_sets(0).name(), "leader");
    EXPECT_EQ(wl->spec().pod_sets(0).count(), 1);
    EXPECT_EQ(wl->spec().pod_sets(1).name(), "worker");
    EXPECT_EQ(wl->spec().pod_sets(1).count(), 3);
    EXPECT_EQ(wl->metadata().owner_references(0).uid(), uid);
  }
  const int admitted = StateOf(ns, group_wl(0)) == v1::WORKLOAD_STATE_ADMITTED ? 0 : 1;
  const int waiting = 1 - admitted;
  EXPECT_EQ(StateOf(ns, group_wl(waiting)), v1::WORKLOAD_STATE_PENDING);
  // Preempting the running group deletes its pods; the LeaderWorkerSet makes them again, gated.
  // The preempted group keeps its place in the queue (Kueue orders by creation time; a
  // preemption does not move a workload back), so it is admitted again ahead of the waiting one.
  const std::string old_leader =
      GetString(Get(PodResource(), ns, absl::StrCat("vllm-llama-", admitted)), {"metadata", "uid"});
  Preempt(ns, group_wl(admitted));
  ASSERT_TRUE(WaitFor(
      [&] {
        const std::string leader = GetString(
            Get(PodResource(), ns, absl::StrCat("vllm-llama-", admitted)), {"metadata", "uid"});
        return !leader.empty() && leader != old_leader && group_running(admitted) &&
               group_gated(waiting) &&
               StateOf(ns, group_wl(admitted)) == v1::WORKLOAD_STATE_ADMITTED;
      },
      kWait));
  EXPECT_GE(Workload(ns, group_wl(admitted))->status().preemption_count(), 1);
  EXPECT_EQ(StateOf(ns, group_wl(waiting)), v1::WORKLOAD_STATE_PENDING);
  // Scaled down to one group: group 1's workload goes with its pods.
  Patch(LeaderWorkerSetResource(), ns, "vllm-llama", {{"spec", {{"replicas", 1}}}});
  ASSERT_TRUE(WaitFor([&] { return !Workload(ns, group_wl(1)).has_value(); }, kWait));
  ASSERT_TRUE(kube().Delete(LeaderWorkerSetResource(), ns, "vllm-llama").ok());
  ASSERT_TRUE(WaitFor([&] { return Workloads(ns).empty() && NoUsage("lws-cq"); }, kWait));
}

}  // namespace
}  // namespace tollgate::kube
