// Every job kind end to end: the real tollgated and tollgate-kube against the fake API server,
// which serves each kind's CRD and runs each kind's stand-in controller. One set of processes
// serves the whole binary (CI time); each kind lives in its own namespace, behind its own
// LocalQueue. For each kind, the manifest its project documents (test/fixtures/) is created
// and must be: suspended while its queue holds it, with the pod sets Kueue computes; started
// with the flavor's node selector and toleration on the right templates once admitted;
// suspended again, templates restored, when drained; and, once it finishes (or, for the kinds
// that never finish, is deleted), gone from the ClusterQueue's usage. Every wait polls a
// condition with a deadline.
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

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "clients/cpp/grpc_admission_client.h"
#include "common/file_util.h"
#include "services/kubeapi/kube_client.h"
#include "services/manifest/admission_enactment.h"
#include "services/manifest/job_kinds.h"
#include "services/manifest/yaml_json.h"
#include "test/adapters/kube/test_processes.h"

namespace tollgate::kube {
namespace {

using Json = manifest::Json;

using testing::ChildProcess;
using testing::WaitFor;

constexpr char kToken[] = "kinds-token";
constexpr absl::Duration kWait = absl::Seconds(60);
constexpr char kPoolLabel[] = "tollgate.dev/pool";

struct PodSetShape {
  std::string name;
  int32_t count;
  // Where the admission's node selector lands for this pod set.
  std::string node_selector_at;
};

struct KindCase {
  std::string kind;
  std::string fixture;
  // Objects created first (a TrainJob's runtime), from fixture files.
  std::vector<std::string> prerequisites;
  std::vector<PodSetShape> pod_sets;
};

std::vector<KindCase> Cases() {
  return {
      {"Job", "job/job.yaml", {}, {{"main", 3, "/spec/template/spec/nodeSelector"}}},
      // The CronJob's Job: the fake's CronJob controller creates it from the job template.
      {"CronJob", "cronjob/cronjob.yaml", {}, {{"main", 2, "/spec/template/spec/nodeSelector"}}},
      {"JobSet",
       "jobset/jobset.yaml",
       {},
       {{"workers", 6, "/spec/replicatedJobs/0/template/spec/template/spec/nodeSelector"},
        {"driver", 1, "/spec/replicatedJobs/1/template/spec/template/spec/nodeSelector"}}},
      {"MPIJob",
       "mpijob/mpijob.yaml",
       {},
       {{"launcher", 1, "/spec/mpiReplicaSpecs/Launcher/template/spec/nodeSelector"},
        {"worker", 2, "/spec/mpiReplicaSpecs/Worker/template/spec/nodeSelector"}}},
      {"PyTorchJob",
       "pytorchjob/pytorchjob.yaml",
       {},
       {{"master", 1, "/spec/pytorchReplicaSpecs/Master/template/spec/nodeSelector"},
        {"worker", 2, "/spec/pytorchReplicaSpecs/Worker/template/spec/nodeSelector"}}},
      {"TFJob",
       "tfjob/tfjob.yaml",
       {},
       {{"ps", 1, "/spec/tfReplicaSpecs/PS/template/spec/nodeSelector"},
        {"worker", 2, "/spec/tfReplicaSpecs/Worker/template/spec/nodeSelector"}}},
      {"JAXJob",
       "jaxjob/jaxjob.yaml",
       {},
       {{"worker", 2, "/spec/jaxReplicaSpecs/Worker/template/spec/nodeSelector"}}},
      {"PaddleJob",
       "paddlejob/paddlejob.yaml",
       {},
       {{"worker", 2, "/spec/paddleReplicaSpecs/Worker/template/spec/nodeSelector"}}},
      {"XGBoostJob",
       "xgboostjob/xgboostjob.yaml",
       {},
       {{"master", 1, "/spec/xgbReplicaSpecs/Master/template/spec/nodeSelector"},
        {"worker", 2, "/spec/xgbReplicaSpecs/Worker/template/spec/nodeSelector"}}},
      {"TrainJob",
       "trainjob/trainjob.yaml",
       {"trainjob/torch-distributed-runtime.yaml"},
       {{"node", 2,
         "/spec/runtimePatches/0/trainingRuntimeSpec/template/spec/replicatedJobs/0/template/spec/"
         "template/spec/nodeSelector"}}},
      {"RayJob",
       "rayjob/rayjob-with-configmap.yaml",
       {},
       {{"head", 1, "/spec/rayClusterSpec/headGroupSpec/template/spec/nodeSelector"},
        {"small-group", 1, "/spec/rayClusterSpec/workerGroupSpecs/0/template/spec/nodeSelector"},
        {"submitter", 1, "/spec/submitterPodTemplate/spec/nodeSelector"}}},
      {"RayCluster",
       "raycluster/raycluster.yaml",
       {},
       {{"head", 1, "/spec/headGroupSpec/template/spec/nodeSelector"},
        {"workergroup", 4, "/spec/workerGroupSpecs/0/template/spec/nodeSelector"}}},
      {"RayService",
       "rayservice/rayservice.yaml",
       {},
       {{"head", 1, "/spec/rayClusterConfig/headGroupSpec/template/spec/nodeSelector"},
        {"small-group", 1,
         "/spec/rayClusterConfig/workerGroupSpecs/0/template/spec/nodeSelector"}}},
      {"SparkApplication",
       "sparkapplication/spark-pi.yaml",
       {},
       {{"driver", 1, "/spec/driver/nodeSelector"},
        {"executor", 2, "/spec/executor/nodeSelector"}}},
      {"AppWrapper",
       "appwrapper/appwrapper.yaml",
       {},
       {{"wrapped-pytorch-0", 1, "/spec/components/0/podSetInfos/0/nodeSelector"},
        {"wrapped-pytorch-1", 2, "/spec/components/0/podSetInfos/1/nodeSelector"}}},
  };
}

std::vector<Json> Fixture(const std::string& file) {
  const std::string path = absl::StrCat(TOLLGATE_FIXTURES_DIR, "/", file);
  absl::StatusOr<std::string> text = common::ReadFileToString(path);
  EXPECT_TRUE(text.ok()) << text.status();
  absl::StatusOr<std::vector<Json>> docs =
      text.ok() ? manifest::JsonDocumentsFromYaml(*text, path) : text.status();
  EXPECT_TRUE(docs.ok()) << docs.status();
  return docs.ok() ? *docs : std::vector<Json>{};
}

manifest::ResourceKind KindOfObject(const Json& obj) {
  const std::string kind = manifest::GetString(obj, {"kind"});
  if (const manifest::JobKindTranslator* t = manifest::FindJobKind(kind)) return t->resource();
  if (kind == "ClusterTrainingRuntime") {
    return {"trainer.kubeflow.org", "v1alpha1", "clustertrainingruntimes", kind, false};
  }
  if (kind == "TrainingRuntime") {
    return {"trainer.kubeflow.org", "v1alpha1", "trainingruntimes", kind, true};
  }
  return {"", "v1", absl::AsciiStrToLower(kind) + "s", kind, true};
}

std::string Namespaces() {
  std::string out = "default,kube-system";
  for (const KindCase& c : Cases()) absl::StrAppend(&out, ",", absl::AsciiStrToLower(c.kind));
  return out;
}

// The processes, shared by every test of the binary.
struct Cluster {
  std::string scratch;
  testing::FakeApiServer apiserver;
  std::unique_ptr<kubeapi::CurlKubeClient> kube;
  std::unique_ptr<ChildProcess> tollgated;
  std::unique_ptr<client::GrpcAdmissionClient> admission;
  std::unique_ptr<ChildProcess> adapter;
};

bool HasEvent(const v1::Workload& wl, const std::string& reason) {
  for (const v1::WorkloadEvent& e : wl.status().events()) {
    if (e.reason() == reason) return true;
  }
  return false;
}

std::string MakeScratch(const std::string& prefix) {
  std::string templ = (std::filesystem::temp_directory_path() / (prefix + "XXXXXX")).string();
  const char* dir = mkdtemp(templ.data());
  return dir == nullptr ? "" : std::string(dir);
}

std::string KubeconfigFor(const testing::FakeApiServer& apiserver) {
  return absl::StrCat("apiVersion: v1\nkind: Config\ncurrent-context: fake\n",
                      "contexts: [{name: fake, context: {cluster: fake, user: tester}}]\n",
                      "clusters: [{name: fake, cluster: {server: \"", apiserver.url(), "\"}}]\n",
                      "users: [{name: tester, user: {token: ", kToken, "}}]\n");
}

// Every framework of the table that asks for workloads.
std::string AllFrameworks() {
  std::string out;
  for (const manifest::JobKindTranslator* t : manifest::AllJobKinds()) {
    if (t->traits().framework.empty()) continue;
    absl::StrAppend(&out, out.empty() ? "" : ",", t->traits().framework);
  }
  return out;
}

class KubeKindsE2eTest : public ::testing::TestWithParam<KindCase> {
 protected:
  static void SetUpTestSuite() {
    curl_global_init(CURL_GLOBAL_DEFAULT);
    cluster_ = new Cluster();
    Cluster& c = *cluster_;
    c.scratch = MakeScratch("tollgate-kinds-e2e-");
    ASSERT_FALSE(c.scratch.empty());
    absl::StatusOr<testing::FakeApiServer> server = testing::StartFakeApiServer(
        c.scratch, {"--token", kToken, "--namespaces", Namespaces(), "--job-duration", "3600"});
    ASSERT_TRUE(server.ok()) << server.status();
    c.apiserver = std::move(*server);
    manifest::KubeConfig config;
    config.server = c.apiserver.url();
    config.token = kToken;
    c.kube = *kubeapi::CurlKubeClient::Create(config, kubeapi::CurlKubeClient::Options());
    std::ofstream(c.scratch + "/kubeconfig") << KubeconfigFor(c.apiserver);

    const std::string port_file = c.scratch + "/tollgated.port";
    absl::StatusOr<std::unique_ptr<ChildProcess>> tollgated = ChildProcess::Start(
        {testing::TollgatedBinary(), "--listen=127.0.0.1:0", "--data-dir=" + c.scratch + "/data",
         "--port-file=" + port_file,
         "--manifests=" + std::string(TOLLGATE_KUBE_TESTDATA) + "/kinds-queues.yaml",
         "--evictions-need-ack"},
        c.scratch + "/tollgated.log");
    ASSERT_TRUE(tollgated.ok()) << tollgated.status();
    c.tollgated = std::move(*tollgated);
    absl::StatusOr<int> port = testing::WaitForPortFile(port_file, *c.tollgated, kWait);
    ASSERT_TRUE(port.ok()) << port.status();
    absl::StatusOr<std::unique_ptr<client::GrpcAdmissionClient>> admission =
        client::GrpcAdmissionClient::Connect(absl::StrCat("127.0.0.1:", *port), absl::Seconds(5));
    ASSERT_TRUE(admission.ok()) << admission.status();
    c.admission = std::move(*admission);
    absl::StatusOr<std::unique_ptr<ChildProcess>> adapter = ChildProcess::Start(
        {testing::TollgateKubeBinary(), "--kubeconfig=" + c.scratch + "/kubeconfig",
         absl::StrCat("--tollgate=127.0.0.1:", *port), "--frameworks=" + AllFrameworks(),
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

  Json Get(const manifest::ResourceKind& kind, const std::string& ns, const std::string& name) {
    absl::StatusOr<Json> obj = kube().Get(kind, ns, name);
    return obj.ok() ? *obj : Json(nullptr);
  }

  std::optional<v1::Workload> Workload(const std::string& ns, const std::string& name) {
    v1::WorkloadRef ref;
    ref.set_namespace_(ns);
    ref.set_name(name);
    absl::StatusOr<v1::Workload> wl = admission().GetWorkload(ref);
    if (!wl.ok()) return std::nullopt;
    return *wl;
  }

  void SetStopPolicy(const std::string& ns, const std::string& policy) {
    v1::ApplyRequest request;
    v1::LocalQueue* lq = request.add_objects()->mutable_local_queue();
    lq->mutable_metadata()->set_namespace_(ns);
    lq->mutable_metadata()->set_name("user-queue");
    lq->mutable_spec()->set_cluster_queue("kinds-cq");
    lq->mutable_spec()->set_stop_policy(policy);
    absl::StatusOr<v1::ApplyResponse> applied = admission().Apply(request);
    ASSERT_TRUE(applied.ok()) << applied.status();
  }

  bool NoUsage() {
    v1::ObjectRef ref;
    ref.set_kind(v1::CLUSTER_QUEUE);
    ref.set_name("kinds-cq");
    absl::StatusOr<v1::ConfigObject> cq = admission().GetObject(ref);
    if (!cq.ok()) return false;
    for (const v1::FlavorUsage& f : cq->cluster_queue().status().flavors_usage()) {
      for (const v1::ResourceUsage& r : f.resources()) {
        if (r.total() != "0") return false;
      }
    }
    return true;
  }

  // The flavor's label is at every pointer (or, with `present` false, at none).
  static bool SelectorsAt(const Json& obj, const KindCase& c, bool present) {
    for (const PodSetShape& ps : c.pod_sets) {
      const Json::json_pointer p(ps.node_selector_at);
      const bool has =
          obj.contains(p) && obj.at(p).is_object() && obj.at(p).value(kPoolLabel, "") == "kinds";
      if (has != present) return false;
      if (present) {
        const Json& tolerations = obj.at(p.parent_pointer() / "tolerations");
        if (!tolerations.is_array() || tolerations.empty() ||
            manifest::GetString(tolerations.back(), {"key"}) != "dedicated") {
          return false;
        }
      }
    }
    return true;
  }

  static Cluster* cluster_;
};

Cluster* KubeKindsE2eTest::cluster_ = nullptr;

TEST_P(KubeKindsE2eTest, QueuedAdmittedDrainedAndReleased) {
  ASSERT_NE(cluster_, nullptr);
  const KindCase& c = GetParam();
  const std::string ns = absl::AsciiStrToLower(c.kind);
  for (const std::string& file : c.prerequisites) {
    for (const Json& doc : Fixture(file)) {
      const manifest::ResourceKind kind = KindOfObject(doc);
      ASSERT_TRUE(kube().Create(kind, kind.namespaced ? ns : "", doc).ok());
    }
  }
  // The job as documented, created suspended (docs/kubernetes.md: without Kueue's webhook).
  const manifest::JobKindTranslator& translator = *manifest::FindJobKind(c.kind);
  Json created;
  for (Json doc : Fixture(c.fixture)) {
    const manifest::ResourceKind kind = KindOfObject(doc);
    if (manifest::GetString(doc, {"kind"}) != c.kind) {
      ASSERT_TRUE(kube().Create(kind, ns, doc).ok());  // e.g. the RayJob's ConfigMap
      continue;
    }
    doc["metadata"]["annotations"]["fake.tollgate.dev/duration-seconds"] = "3600";
    if (c.kind == "CronJob") {
      doc["spec"]["jobTemplate"]["spec"]["suspend"] = true;
    } else {
      translator.SetSuspended(doc, true);
    }
    absl::StatusOr<Json> made = kube().Create(kind, ns, doc);
    ASSERT_TRUE(made.ok()) << made.status();
    created = *made;
  }
  ASSERT_TRUE(created.is_object());
  // What carries the workload: the object, or for a CronJob the Job it created.
  const manifest::JobKindTranslator* carrier = &translator;
  if (c.kind == "CronJob") {
    carrier = manifest::FindJobKind("Job");
    ASSERT_TRUE(WaitFor(
        [&] {
          absl::StatusOr<kubeapi::ListResult> jobs = kube().List(carrier->resource(), ns);
          if (!jobs.ok()) return false;
          for (const Json& job : jobs->items) {
            const Json* owners = manifest::Find(job, {"metadata", "ownerReferences"});
            if (owners != nullptr && owners->is_array() && !owners->empty() &&
                manifest::GetString((*owners)[0], {"kind"}) == "CronJob") {
              created = job;
              return true;
            }
          }
          return false;
        },
        kWait));
  }
  const manifest::ResourceKind kind = carrier->resource();
  const std::string name = manifest::GetString(created, {"metadata", "name"});
  created["metadata"]["namespace"] = ns;
  const std::string workload = carrier->WorkloadName(created);

  // Held by its queue: a pending workload with Kueue's pod sets, the object suspended.
  std::optional<v1::Workload> wl;
  ASSERT_TRUE(WaitFor(
      [&] {
        wl = Workload(ns, workload);
        Json obj = Get(kind, ns, name);
        return wl.has_value() && !obj.is_null() && carrier->IsSuspended(obj) &&
               manifest::Annotation(obj, "tollgate.dev/status").rfind("pending", 0) == 0;
      },
      kWait))
      << workload;
  EXPECT_EQ(wl->status().state(), v1::WORKLOAD_STATE_PENDING);
  ASSERT_EQ(wl->spec().pod_sets_size(), static_cast<int>(c.pod_sets.size()));
  for (size_t i = 0; i < c.pod_sets.size(); ++i) {
    EXPECT_EQ(wl->spec().pod_sets(static_cast<int>(i)).name(), c.pod_sets[i].name);
    EXPECT_EQ(wl->spec().pod_sets(static_cast<int>(i)).count(), c.pod_sets[i].count);
  }

  // Released: admitted, started with the flavor on every pod set's template.
  SetStopPolicy(ns, "None");
  ASSERT_TRUE(WaitFor(
      [&] {
        Json obj = Get(kind, ns, name);
        return !obj.is_null() && !carrier->IsSuspended(obj) && SelectorsAt(obj, c, true) &&
               manifest::Annotation(obj, "tollgate.dev/status").rfind("admitted", 0) == 0;
      },
      kWait))
      << Get(kind, ns, name).dump(2);

  // Drained: evicted, suspended again with the templates as written, pending. (The object's
  // status annotation says "preempted" only until the adapter reports it stopped; then it
  // says why the workload waits.)
  SetStopPolicy(ns, "HoldAndDrain");
  ASSERT_TRUE(WaitFor(
      [&] {
        Json obj = Get(kind, ns, name);
        std::optional<v1::Workload> now = Workload(ns, workload);
        return !obj.is_null() && carrier->IsSuspended(obj) && SelectorsAt(obj, c, false) &&
               now.has_value() && now->status().state() == v1::WORKLOAD_STATE_PENDING &&
               HasEvent(*now, "EvictedDueToLocalQueueStopped");
      },
      kWait))
      << Get(kind, ns, name).dump(2);

  // Admitted again, then done: its quota is released.
  SetStopPolicy(ns, "None");
  ASSERT_TRUE(WaitFor(
      [&] {
        Json obj = Get(kind, ns, name);
        return !obj.is_null() && !carrier->IsSuspended(obj) && SelectorsAt(obj, c, true);
      },
      kWait));
  if (carrier->traits().finishes) {
    const Json patch = {
        {"metadata", {{"annotations", {{"fake.tollgate.dev/duration-seconds", "0"}}}}}};
    ASSERT_TRUE(kube().Patch(kind, ns, name, kubeapi::PatchType::kMerge, patch).ok());
    // The adapter reports the finish, then notes it on the object.
    ASSERT_TRUE(WaitFor(
        [&] {
          std::optional<v1::Workload> now = Workload(ns, workload);
          return now.has_value() && now->status().state() == v1::WORKLOAD_STATE_FINISHED &&
                 absl::StrContains(manifest::Annotation(Get(kind, ns, name), "tollgate.dev/status"),
                                   "finished");
        },
        kWait))
        << manifest::Annotation(Get(kind, ns, name), "tollgate.dev/status");
  } else {
    // A RayCluster or RayService holds its quota until deleted.
    ASSERT_TRUE(kube().Delete(kind, ns, name).ok());
    ASSERT_TRUE(WaitFor([&] { return !Workload(ns, workload).has_value(); }, kWait));
  }
  ASSERT_TRUE(WaitFor([&] { return NoUsage(); }, kWait));
}

INSTANTIATE_TEST_SUITE_P(Kinds, KubeKindsE2eTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<KindCase>& info) {
                           return info.param.kind;
                         });

// A kind whose CRD is not installed is skipped with a log line, not an error: tollgate-kube runs
// and manages the others. Its own fake API server serves no CRD at all.
TEST(KubeKindsWithoutCrdsTest, KindsWhoseCrdIsMissingAreSkippedWithALogLine) {
  const std::string scratch = MakeScratch("tollgate-kinds-nocrd-");
  ASSERT_FALSE(scratch.empty());
  std::string omit;
  for (const manifest::JobKindTranslator* t : manifest::AllJobKinds()) {
    if (t->resource().group == "batch") continue;
    absl::StrAppend(&omit, omit.empty() ? "" : ",", t->resource().plural);
  }
  absl::StatusOr<testing::FakeApiServer> server =
      testing::StartFakeApiServer(scratch, {"--token", kToken, "--omit-crds", omit});
  ASSERT_TRUE(server.ok()) << server.status();
  std::ofstream(scratch + "/kubeconfig") << KubeconfigFor(*server);
  // tollgated is not needed to see the kinds being sorted out; the adapter keeps retrying it.
  absl::StatusOr<std::unique_ptr<ChildProcess>> adapter =
      ChildProcess::Start({testing::TollgateKubeBinary(), "--kubeconfig=" + scratch + "/kubeconfig",
                           "--tollgate=127.0.0.1:1", "--frameworks=" + AllFrameworks(),
                           "--health-file=" + scratch + "/kube.health", "--sync-namespaces=false"},
                          scratch + "/tollgate-kube.log");
  ASSERT_TRUE(adapter.ok()) << adapter.status();
  EXPECT_TRUE(WaitFor(
      [&] {
        const std::string logs = (*adapter)->Logs();
        return logs.find("not served") != std::string::npos &&
               logs.find("sparkapplications") != std::string::npos;
      },
      kWait))
      << (*adapter)->Logs();
  EXPECT_TRUE(WaitFor(
      [&] {
        std::ifstream health(scratch + "/kube.health");
        std::string line;
        return std::getline(health, line) && line == "synced";
      },
      kWait))
      << (*adapter)->Logs();
  EXPECT_TRUE((*adapter)->Running());
}

}  // namespace
}  // namespace tollgate::kube
