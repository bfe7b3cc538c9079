// MultiKueue's job projection end to end (docs/multicluster.md, "The job itself"): three
// clusters, each a fake Kubernetes API server with its own tollgated and tollgate-kube, and
// tollgate-multikueue beside the manager; all real binaries on loopback. A Job created on the
// manager's cluster with spec.managedBy kueue.x-k8s.io/multikueue runs on the worker with room
// (w2; w1 is full): a Job bound to w2's copy appears there and runs; none appears on w1; the
// manager's cluster never runs it; its status (active, then succeeded with Complete) comes back
// onto the manager's Job, and the manager's workload finishes; a failing job fails them with
// reason Failed. Plain Pods (a Deployment's too), pod groups, StatefulSets and LeaderWorkerSets
// travel the same way (docs/multicluster.md, "The pod-based kinds"). Every wait has a deadline.

#include <curl/curl.h>
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "clients/cpp/grpc_admission_client.h"
#include "clients/cpp/tollgate_client.h"
#include "services/kubeapi/kube_client.h"
#include "services/manifest/job_kinds.h"
#include "services/manifest/json_util.h"
#include "services/manifest/kube_resource.h"
#include "services/manifest/multikueue_job.h"
#include "services/manifest/multikueue_pods.h"
#include "services/manifest/pod_group.h"
#include "services/manifest/prebuilt_workload.h"
#include "test/adapters/kube/test_processes.h"
#include "test/adapters/multikueue/multikueue_queues.h"
#include "test/support/local_files_and_ports.h"

namespace tollgate::kube {
namespace {

using Json = manifest::Json;
using testing::ChildProcess;
using testing::WaitFor;

constexpr char kToken[] = "e2e-token";
constexpr absl::Duration kWait = absl::Seconds(45);
constexpr char kOriginLabel[] = "kueue.x-k8s.io/multikueue-origin";

using multikueue_test::kWorkerQueues;
using multikueue_test::ManagerQueues;

// The reason of the workload's Finished condition; "" without one.
std::string FinishedReasonOf(const v1::Workload& wl) {
  for (const v1::Condition& c : wl.status().conditions()) {
    if (c.type() == "Finished") return c.reason();
  }
  return "";
}

// The pod template of every job here: one container asking 1 cpu, run once.
Json OneCpuPodTemplate() {
  return {{"spec",
           {{"restartPolicy", "Never"},
            {"containers", Json::array({{{"name", "main"},
                                         {"image", "busybox"},
                                         {"resources", {{"requests", {{"cpu", "1"}}}}}}})}}}};
}

// A plain Pod queued through Tollgate, created with Kueue's gate (Tollgate has no webhook to add
// it). The fake runs it `seconds` once released, or fails it.
Json GatedPod(const std::string& name, int seconds, bool fail = false) {
  Json annotations = {{"fake.tollgate.dev/duration-seconds", absl::StrCat(seconds)}};
  if (fail) annotations["fake.tollgate.dev/fail"] = "true";
  Json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata",
               {{"name", name},
                {"labels", {{"kueue.x-k8s.io/queue-name", "q"}}},
                {"annotations", annotations}}},
              {"spec", OneCpuPodTemplate()["spec"]}};
  pod["spec"]["schedulingGates"] = Json::array({{{"name", "kueue.x-k8s.io/admission"}}});
  return pod;
}

// A member of the pod group "train" of `total` pods (Kueue's pod-group-name label and
// pod-group-total-count annotation), gated as GatedPod.
Json GroupPod(const std::string& name, int total, int seconds) {
  Json pod = GatedPod(name, seconds);
  pod["metadata"]["labels"][manifest::kPodGroupNameKey] = "train";
  pod["metadata"]["annotations"][manifest::kPodGroupTotalCountAnnotation] = absl::StrCat(total);
  return pod;
}

// A Job handed to MultiKueue, as a user writes it for Kueue: suspended, with the queue label and
// managedBy. The fake runs it `seconds` once started (the annotation travels with the manifest).
Json MultiKueueJob(const std::string& name, int seconds, bool fail = false) {
  Json annotations = {{"fake.tollgate.dev/duration-seconds", absl::StrCat(seconds)}};
  if (fail) annotations["fake.tollgate.dev/fail"] = "true";
  return {{"apiVersion", "batch/v1"},
          {"kind", "Job"},
          {"metadata",
           {{"name", name},
            {"labels", {{"kueue.x-k8s.io/queue-name", "q"}}},
            {"annotations", annotations}}},
          {"spec",
           {{"managedBy", "kueue.x-k8s.io/multikueue"},
            {"suspend", true},
            {"parallelism", 1},
            {"template", OneCpuPodTemplate()}}}};
}

// The runs of jobs the fake API server started (GET /fake/runs).
Json FakeRuns(const testing::FakeApiServer& server) {
  CURL* curl = curl_easy_init();
  if (curl == nullptr) return Json();
  const std::string url = server.url() + "/fake/runs";
  std::string body;
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_PROXY, "");
  curl_easy_setopt(curl, CURLOPT_TIMEOUT, 10L);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
  curl_easy_setopt(
      curl, CURLOPT_WRITEFUNCTION, +[](char* data, size_t size, size_t n, void* out) {
        static_cast<std::string*>(out)->append(data, size * n);
        return size * n;
      });
  const CURLcode rc = curl_easy_perform(curl);
  curl_easy_cleanup(curl);
  if (rc != CURLE_OK) return Json();
  absl::StatusOr<Json> parsed = manifest::ParseJson(body, "runs");
  return parsed.ok() ? (*parsed)["runs"] : Json();
}

// Exactly-once dispatch, sampled until destroyed: which workers' clusters hold the Job "train"
// (never two at once), and which clusterName the manager's workload records (never two
// different ones). Its own clients, so the test's calls and its samples do not share one.
class DispatchInvariants {
 public:
  DispatchInvariants(const std::vector<std::pair<std::string, manifest::KubeConfig>>& workers,
                     const std::string& manager_address)
      : manager_(manager_address, client::Credentials(), absl::Seconds(5)) {
    for (const auto& [name, config] : workers) {
      absl::StatusOr<std::unique_ptr<kubeapi::KubeClient>> kube =
          kubeapi::CurlKubeClient::Create(config, kubeapi::CurlKubeClient::Options());
      if (kube.ok()) workers_.emplace_back(name, *std::move(kube));
    }
    thread_ = std::thread([this] {
      while (!stop_.load()) {
        Sample();
        absl::SleepFor(absl::Milliseconds(50));
      }
    });
  }
  ~DispatchInvariants() {
    stop_.store(true);
    thread_.join();
  }

  // Workers whose cluster ever held the job, and the clusterNames the manager ever recorded.
  std::set<std::string> job_seen_on() const {
    absl::MutexLock lock(&mu_);
    return job_seen_on_;
  }
  std::set<std::string> cluster_names() const {
    absl::MutexLock lock(&mu_);
    return cluster_names_;
  }
  bool jobs_on_two_at_once() const { return two_at_once_.load(); }

 private:
  void Sample() {
    std::vector<std::string> holding;
    for (const auto& [name, kube] : workers_) {
      if (kube->Get(manifest::JobResource(), "team", "train").ok()) holding.push_back(name);
    }
    if (holding.size() > 1) two_at_once_.store(true);
    v1::ListWorkloadsRequest request;
    request.set_namespace_("team");
    absl::StatusOr<v1::ListWorkloadsResponse> list = manager_.ListWorkloads(request);
    absl::MutexLock lock(&mu_);
    job_seen_on_.insert(holding.begin(), holding.end());
    if (list.ok()) {
      for (const v1::Workload& wl : list->workloads()) {
        if (!wl.status().cluster_name().empty()) cluster_names_.insert(wl.status().cluster_name());
      }
    }
  }

  client::GrpcAdmissionClient manager_;
  std::vector<std::pair<std::string, std::unique_ptr<kubeapi::KubeClient>>> workers_;
  mutable absl::Mutex mu_;
  std::set<std::string> job_seen_on_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> cluster_names_ ABSL_GUARDED_BY(mu_);
  std::atomic<bool> two_at_once_{false};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// One cluster: its API server, tollgated and tollgate-kube.
struct Cluster {
  std::string name;
  std::string dir;
  testing::FakeApiServer apiserver;
  std::unique_ptr<ChildProcess> tollgated;
  int port = 0;
  std::unique_ptr<ChildProcess> adapter;
  std::unique_ptr<kubeapi::KubeClient> kube;
  std::unique_ptr<client::GrpcAdmissionClient> admission;

  std::string address() const { return absl::StrCat("127.0.0.1:", port); }
  manifest::KubeConfig kube_config() const {
    manifest::KubeConfig config;
    config.server = apiserver.url();
    config.token = kToken;
    return config;
  }
};

class MultiKueueJobsE2eTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    curl_global_init(CURL_GLOBAL_DEFAULT);
    setenv("GRPC_CLIENT_CHANNEL_BACKUP_POLL_INTERVAL_MS", "50", /*overwrite=*/0);
  }

  void SetUp() override {
    scratch_ = testing::ScratchDir();
    for (const char* name : {"w1", "w2", "manager"}) {
      auto cluster = std::make_unique<Cluster>();
      cluster->name = name;
      cluster->dir = scratch_ + "/" + name;
      std::filesystem::create_directories(cluster->dir);
      clusters_.push_back(std::move(cluster));
    }
    ASSERT_NO_FATAL_FAILURE(StartCluster(*clusters_[0], kWorkerQueues));
    ASSERT_NO_FATAL_FAILURE(StartCluster(*clusters_[1], kWorkerQueues));
    ASSERT_NO_FATAL_FAILURE(StartCluster(
        *clusters_[2], ManagerQueues(clusters_[0]->address(), clusters_[1]->address())));

    // w1 is full: a workload of its own (no origin label) takes its 4 cpu.
    v1::SubmitRequest blocker;
    v1::Workload* wl = blocker.mutable_workload();
    wl->mutable_metadata()->set_namespace_("team");
    wl->mutable_metadata()->set_name("blocker");
    wl->mutable_spec()->set_queue_name("q");
    v1::PodSet* ps = wl->mutable_spec()->add_pod_sets();
    ps->set_name("main");
    ps->set_count(1);
    (*ps->mutable_requests())["cpu"] = "4";
    ASSERT_TRUE(W1().admission->Submit(blocker).ok());
    ASSERT_TRUE(WaitFor(
        [&] {
          v1::WorkloadRef ref;
          ref.set_namespace_("team");
          ref.set_name("blocker");
          absl::StatusOr<v1::Workload> got = W1().admission->GetWorkload(ref);
          return got.ok() && got->status().state() == v1::WORKLOAD_STATE_ADMITTED;
        },
        kWait));

    absl::StatusOr<std::unique_ptr<ChildProcess>> controller = ChildProcess::Start(
        {TOLLGATE_MULTIKUEUE_PATH, absl::StrCat("--manager=", Manager().address()),
         "--worker-lost-timeout=5s", "--gc-interval=1s", "--config-sync-period=1s"},
        scratch_ + "/controller.log");
    ASSERT_TRUE(controller.ok()) << controller.status();
    controller_ = std::move(*controller);

    // Nothing named like the job (a Job, a Pod or a StatefulSet) may ever exist on w1, nor run
    // on the manager's cluster: sampled until TearDown.
    sampler_ = std::thread([this] {
      while (!stop_sampler_.load()) {
        for (const manifest::ResourceKind* kind :
             {&manifest::JobResource(), &manifest::PodResource(), &manifest::StatefulSetKind()}) {
          if (W1().kube->Get(*kind, "team", "train").ok()) seen_on_w1_ = true;
        }
        absl::SleepFor(absl::Milliseconds(50));
      }
    });
  }

  void TearDown() override {
    stop_sampler_.store(true);
    if (sampler_.joinable()) sampler_.join();
    if (HasFailure()) {
      if (controller_ != nullptr) std::cerr << "--- controller log\n" << controller_->Logs();
      for (const auto& c : clusters_) {
        if (c->adapter != nullptr)
          std::cerr << "--- " << c->name << " tollgate-kube log\n" << c->adapter->Logs();
        if (c->tollgated != nullptr)
          std::cerr << "--- " << c->name << " tollgated log\n" << c->tollgated->Logs();
      }
    }
    controller_.reset();
    for (const auto& c : clusters_) {
      c->adapter.reset();
      c->tollgated.reset();
      c->apiserver.process.reset();
    }
  }

  void StartCluster(Cluster& c, const std::string& queues) {
    absl::StatusOr<testing::FakeApiServer> server = testing::StartFakeApiServer(
        c.dir, {"--token", kToken, "--namespaces", "default,team", "--job-duration", "3600"});
    ASSERT_TRUE(server.ok()) << server.status();
    c.apiserver = std::move(*server);
    manifest::KubeConfig config;
    config.server = c.apiserver.url();
    config.token = kToken;
    c.kube = *kubeapi::CurlKubeClient::Create(config, kubeapi::CurlKubeClient::Options());
    std::ofstream(c.dir + "/kubeconfig")
        << absl::StrCat("apiVersion: v1\nkind: Config\ncurrent-context: fake\n",
                        "contexts: [{name: fake, context: {cluster: fake, user: tester}}]\n",
                        "clusters: [{name: fake, cluster: {server: \"", c.apiserver.url(),
                        "\"}}]\n", "users: [{name: tester, user: {token: ", kToken, "}}]\n");
    std::ofstream(c.dir + "/queues.yaml") << queues;
    // Below the ephemeral port range: a test kills this tollgated and starts it again on the
    // same port, which an outgoing connection could otherwise take meanwhile.
    absl::StatusOr<int> port = test_support::PickRestartablePort();
    ASSERT_TRUE(port.ok()) << port.status();
    ASSERT_NO_FATAL_FAILURE(StartTollgated(c, *port));
    c.admission = std::make_unique<client::GrpcAdmissionClient>(c.address(), client::Credentials(),
                                                                absl::Seconds(5));
    absl::StatusOr<std::unique_ptr<ChildProcess>> adapter = ChildProcess::Start(
        {testing::TollgateKubeBinary(), "--kubeconfig=" + c.dir + "/kubeconfig",
         "--tollgate=" + c.address(), "--state-file=" + c.dir + "/kube.state",
         "--resync-period=20s", "--watch-timeout=60s", "--health-file=" + c.dir + "/kube.health",
         "--frameworks=batch/job,jobset.x-k8s.io/jobset,pod,deployment,statefulset,"
         "leaderworkerset.x-k8s.io/leaderworkerset"},
        c.dir + "/tollgate-kube.log");
    ASSERT_TRUE(adapter.ok()) << adapter.status();
    c.adapter = std::move(*adapter);
  }

  // The cluster's tollgated on `port` (0: any) with its data directory; again after a kill -9,
  // on the same port and data.
  void StartTollgated(Cluster& c, int port) {
    const std::string port_file = c.dir + "/tollgated.port";
    std::filesystem::remove(port_file);
    absl::StatusOr<std::unique_ptr<ChildProcess>> tollgated =
        ChildProcess::Start({testing::TollgatedBinary(), absl::StrCat("--listen=127.0.0.1:", port),
                             "--data-dir=" + c.dir + "/data", "--port-file=" + port_file,
                             "--manifests=" + c.dir + "/queues.yaml"},
                            c.dir + "/tollgated.log");
    ASSERT_TRUE(tollgated.ok()) << tollgated.status();
    c.tollgated = std::move(*tollgated);
    absl::StatusOr<int> bound = testing::WaitForPortFile(port_file, *c.tollgated, kWait);
    ASSERT_TRUE(bound.ok()) << bound.status();
    c.port = *bound;
  }

  Cluster& W1() { return *clusters_[0]; }
  Cluster& W2() { return *clusters_[1]; }
  Cluster& Manager() { return *clusters_[2]; }

  Json GetJob(Cluster& c, const std::string& name) {
    absl::StatusOr<Json> job = c.kube->Get(manifest::JobResource(), "team", name);
    return job.ok() ? *job : Json(nullptr);
  }
  Json GetPod(Cluster& c, const std::string& name) {
    absl::StatusOr<Json> pod = c.kube->Get(manifest::PodResource(), "team", name);
    return pod.ok() ? *pod : Json(nullptr);
  }
  // Waits until pod `name` on `c` is in `phase`; `pod` is the pod as last read.
  bool AwaitPodPhase(Cluster& c, const std::string& name, const std::string& phase, Json& pod) {
    return WaitFor(
        [&] {
          pod = GetPod(c, name);
          return manifest::GetString(pod, {"status", "phase"}) == phase;
        },
        kWait);
  }

  // Creates LeaderWorkerSet "train" on the manager's cluster: two groups of a leader and a
  // worker, 1 cpu each, gated as written (Tollgate has no webhook to gate the first pods in
  // time); `uid` is the manager's object's.
  void CreateTwoGroupLeaderWorkerSet(std::string& uid) {
    const Json gated_one_cpu = {
        {"schedulingGates", Json::array({{{"name", "kueue.x-k8s.io/admission"}}})},
        {"containers", Json::array({{{"name", "main"},
                                     {"image", "busybox"},
                                     {"resources", {{"requests", {{"cpu", "1"}}}}}}})}};
    const Json lws = {
        {"apiVersion", "leaderworkerset.x-k8s.io/v1"},
        {"kind", "LeaderWorkerSet"},
        {"metadata", {{"name", "train"}, {"labels", {{"kueue.x-k8s.io/queue-name", "q"}}}}},
        {"spec",
         {{"replicas", 2},
          {"leaderWorkerTemplate",
           {{"size", 2},
            {"leaderTemplate", {{"spec", gated_one_cpu}}},
            {"workerTemplate", {{"spec", gated_one_cpu}}}}}}}};
    absl::StatusOr<Json> created =
        Manager().kube->Create(manifest::LeaderWorkerSetKind(), "team", lws);
    ASSERT_TRUE(created.ok()) << created.status();
    uid = manifest::GetString(*created, {"metadata", "uid"});
  }

  // Group `g`'s workload of the manager's LeaderWorkerSet "train" (uid `manager_uid`) on `c`: the
  // manager's own, or a worker's copy of it (same name).
  std::optional<v1::Workload> GroupWorkload(Cluster& c, const std::string& manager_uid, int g) {
    v1::WorkloadRef ref;
    ref.set_namespace_("team");
    ref.set_name(manifest::KueueWorkloadName("LeaderWorkerSet", "leaderworkerset.x-k8s.io",
                                             absl::StrCat("train-", g), manager_uid));
    absl::StatusOr<v1::Workload> wl = c.admission->GetWorkload(ref);
    return wl.ok() ? std::optional<v1::Workload>(*wl) : std::nullopt;
  }

  // The manager's workload of the job (the only one in team on the manager).
  std::optional<v1::Workload> ManagerWorkload() {
    v1::ListWorkloadsRequest request;
    request.set_namespace_("team");
    absl::StatusOr<v1::ListWorkloadsResponse> list = Manager().admission->ListWorkloads(request);
    if (!list.ok() || list->workloads_size() != 1) return std::nullopt;
    return list->workloads(0);
  }

  // Waits until the manager's Job "train" shows one active pod (the remote run's status
  // projected); `job` is the Job as last read.
  bool AwaitManagerJobActive(Json& job) {
    return WaitFor(
        [&] {
          job = GetJob(Manager(), "train");
          return manifest::GetInt(job, {"status", "active"}) == 1;
        },
        kWait);
  }

  // Waits until the manager's Job "train" has condition `type` True and status.`count` == 1;
  // `job` is the Job as last read.
  bool AwaitManagerJobEnded(const char* type, const char* count, Json& job) {
    return WaitFor(
        [&] {
          job = GetJob(Manager(), "train");
          return manifest::HasTrueCondition(job, type) &&
                 manifest::GetInt(job, {"status", count}) == 1;
        },
        kWait);
  }

  // The job ran `runs` times, all on w2: none on the manager's cluster or w1, and no copy was
  // ever seen on w1.
  void ExpectRanOnlyOnW2(size_t runs) {
    const Json w2_runs = FakeRuns(W2().apiserver);
    ASSERT_TRUE(w2_runs.is_array());
    EXPECT_EQ(w2_runs.size(), runs) << w2_runs.dump();
    EXPECT_EQ(FakeRuns(Manager().apiserver), Json::array());
    EXPECT_EQ(FakeRuns(W1().apiserver), Json::array());
    EXPECT_FALSE(seen_on_w1_.load());
  }

  // The manager's workload once it finished; nullopt when it did not within kWait.
  std::optional<v1::Workload> AwaitManagerWorkloadFinished() {
    std::optional<v1::Workload> wl;
    const bool finished = WaitFor(
        [&] {
          wl = ManagerWorkload();
          return wl.has_value() && wl->status().state() == v1::WORKLOAD_STATE_FINISHED;
        },
        kWait);
    return finished ? wl : std::nullopt;
  }

  std::string scratch_;
  std::vector<std::unique_ptr<Cluster>> clusters_;
  std::unique_ptr<ChildProcess> controller_;
  std::thread sampler_;
  std::atomic<bool> stop_sampler_{false};
  std::atomic<bool> seen_on_w1_{false};
};

TEST_F(MultiKueueJobsE2eTest, AManagedByMultiKueueJobRunsOnTheWinnerAndItsStatusComesBack) {
  absl::StatusOr<Json> created =
      Manager().kube->Create(manifest::JobResource(), "team", MultiKueueJob("train", 4));
  ASSERT_TRUE(created.ok()) << created.status();

  // Carried with its workload, without the status or managedBy.
  ASSERT_TRUE(WaitFor([&] { return ManagerWorkload().has_value(); }, kWait));
  const v1::Workload submitted = *ManagerWorkload();
  EXPECT_EQ(submitted.spec().payload().kind(), "Job");
  EXPECT_EQ(submitted.spec().payload().data().find("managedBy"), std::string::npos);
  const std::string workload = submitted.metadata().name();

  // The job appears on w2, bound to w2's copy, and runs there.
  Json remote;
  ASSERT_TRUE(WaitFor(
      [&] {
        remote = GetJob(W2(), "train");
        return !remote.is_null() && manifest::GetInt(remote, {"status", "active"}) == 1;
      },
      kWait))
      << remote.dump();
  EXPECT_EQ(manifest::PrebuiltWorkloadName(remote), workload);
  EXPECT_EQ(manifest::GetString(remote, {"metadata", "labels", kOriginLabel}), "multikueue");
  EXPECT_EQ(manifest::GetString(remote, {"metadata", "labels", "kueue.x-k8s.io/queue-name"}), "q");
  EXPECT_TRUE(manifest::GetString(remote, {"spec", "managedBy"}).empty());
  std::optional<v1::Workload> manager_wl = ManagerWorkload();
  ASSERT_TRUE(manager_wl.has_value());
  EXPECT_EQ(manager_wl->status().cluster_name(), "w2");

  // Its status comes back onto the manager's Job, which is unsuspended but runs nowhere here.
  Json local;
  ASSERT_TRUE(AwaitManagerJobActive(local)) << local.dump();
  EXPECT_EQ(manifest::GetBool(local, {"spec", "suspend"}), false);
  EXPECT_EQ(manifest::GetString(local, {"spec", "managedBy"}), "kueue.x-k8s.io/multikueue");

  // Then its completion, and the manager's workload finishes.
  ASSERT_TRUE(AwaitManagerJobEnded("Complete", "succeeded", local)) << local.dump();
  manager_wl = AwaitManagerWorkloadFinished();
  ASSERT_TRUE(manager_wl.has_value()) << "the manager's workload did not finish";
  EXPECT_EQ(FinishedReasonOf(*manager_wl), "Succeeded") << manager_wl->DebugString();
  // The finished copy goes from w2, and its job with it.
  EXPECT_TRUE(WaitFor([&] { return GetJob(W2(), "train").is_null(); }, kWait));

  // Ran once, on w2 only.
  ASSERT_NO_FATAL_FAILURE(ExpectRanOnlyOnW2(1));
}

// Another kind with managedBy goes the same way (Kueue's JobSet MultiKueue adapter): the JobSet
// travels without managedBy, the one created on w2 runs there, its status is copied onto the
// manager's JobSet as it is (which runs nowhere on the manager's cluster), and its completion
// finishes the manager's workload.
TEST_F(MultiKueueJobsE2eTest, AManagedByMultiKueueJobSetRunsOnTheWinnerAndItsStatusComesBack) {
  const manifest::ResourceKind& jobsets = manifest::FindJobKind("JobSet")->resource();
  const Json job_template = {
      {"spec", {{"parallelism", 1}, {"completions", 1}, {"template", OneCpuPodTemplate()}}}};
  const Json jobset = {
      {"apiVersion", "jobset.x-k8s.io/v1alpha2"},
      {"kind", "JobSet"},
      {"metadata",
       {{"name", "train"},
        {"labels", {{"kueue.x-k8s.io/queue-name", "q"}}},
        {"annotations", {{"fake.tollgate.dev/duration-seconds", "4"}}}}},
      {"spec",
       {{"managedBy", "kueue.x-k8s.io/multikueue"},
        {"suspend", true},
        {"replicatedJobs",
         Json::array({{{"name", "workers"}, {"replicas", 1}, {"template", job_template}}})}}}};
  absl::StatusOr<Json> created = Manager().kube->Create(jobsets, "team", jobset);
  ASSERT_TRUE(created.ok()) << created.status();

  ASSERT_TRUE(WaitFor([&] { return ManagerWorkload().has_value(); }, kWait));
  const v1::Workload submitted = *ManagerWorkload();
  EXPECT_EQ(submitted.spec().payload().kind(), "JobSet");
  EXPECT_EQ(submitted.spec().payload().data().find("managedBy"), std::string::npos);

  auto active_workers = [](const Json& js) {
    const Json* statuses = manifest::Find(js, {"status", "replicatedJobsStatus"});
    return statuses != nullptr && statuses->is_array() && statuses->size() == 1
               ? manifest::GetInt((*statuses)[0], {"active"}).value_or(0)
               : 0;
  };
  Json remote;
  ASSERT_TRUE(WaitFor(
      [&] {
        absl::StatusOr<Json> got = W2().kube->Get(jobsets, "team", "train");
        remote = got.ok() ? *got : Json(nullptr);
        return got.ok() && active_workers(remote) == 1;
      },
      kWait))
      << remote.dump();
  EXPECT_EQ(manifest::PrebuiltWorkloadName(remote), submitted.metadata().name());
  EXPECT_EQ(manifest::GetString(remote, {"metadata", "labels", kOriginLabel}), "multikueue");
  EXPECT_TRUE(manifest::GetString(remote, {"spec", "managedBy"}).empty());

  Json local;
  ASSERT_TRUE(WaitFor(
      [&] {
        local = *Manager().kube->Get(jobsets, "team", "train");
        return active_workers(local) == 1;
      },
      kWait))
      << local.dump();
  EXPECT_EQ(manifest::GetBool(local, {"spec", "suspend"}), false);
  EXPECT_EQ(manifest::GetString(local, {"spec", "managedBy"}), "kueue.x-k8s.io/multikueue");

  ASSERT_TRUE(WaitFor(
      [&] {
        local = *Manager().kube->Get(jobsets, "team", "train");
        return manifest::HasTrueCondition(local, "Completed");
      },
      kWait))
      << local.dump();
  std::optional<v1::Workload> manager_wl = AwaitManagerWorkloadFinished();
  ASSERT_TRUE(manager_wl.has_value()) << "the manager's workload did not finish";
  EXPECT_EQ(manager_wl->status().cluster_name(), "w2");
  EXPECT_TRUE(WaitFor([&] { return !W2().kube->Get(jobsets, "team", "train").ok(); }, kWait));
  ASSERT_NO_FATAL_FAILURE(ExpectRanOnlyOnW2(1));
}

TEST_F(MultiKueueJobsE2eTest, ARemoteFailureFailsTheManagersJobAndWorkload) {
  absl::StatusOr<Json> created = Manager().kube->Create(manifest::JobResource(), "team",
                                                        MultiKueueJob("train", 1, /*fail=*/true));
  ASSERT_TRUE(created.ok()) << created.status();
  Json local;
  ASSERT_TRUE(AwaitManagerJobEnded("Failed", "failed", local)) << local.dump();
  std::optional<v1::Workload> manager_wl = AwaitManagerWorkloadFinished();
  ASSERT_TRUE(manager_wl.has_value()) << "the manager's workload did not finish";
  EXPECT_EQ(FinishedReasonOf(*manager_wl), "Failed") << manager_wl->DebugString();
  EXPECT_EQ(manager_wl->status().cluster_name(), "w2");
  EXPECT_EQ(FakeRuns(Manager().apiserver), Json::array());
  EXPECT_FALSE(seen_on_w1_.load());
}

// The worker evicts its copy while the job runs (an operator's preemption with hold on w2,
// which has just enough room for a local workload that takes its place). The worker's job
// stops; the manager's check goes to Retry, the manager's workload is evicted and requeued,
// and its Job is suspended again while no worker has room (Kueue's projection: a suspended
// local job keeps no running status). When w2 has room again the job is dispatched anew and
// runs there to completion: two runs on w2, one after the other, none on w1 nor on the
// manager's cluster.
TEST_F(MultiKueueJobsE2eTest, ARemoteEvictionOfARunningJobSuspendsItAndRunsItAgain) {
  absl::StatusOr<Json> created =
      Manager().kube->Create(manifest::JobResource(), "team", MultiKueueJob("train", 4));
  ASSERT_TRUE(created.ok()) << created.status();
  Json remote;
  ASSERT_TRUE(WaitFor(
      [&] {
        remote = GetJob(W2(), "train");
        return !remote.is_null() && manifest::GetInt(remote, {"status", "active"}) == 1;
      },
      kWait))
      << remote.dump();
  const std::string first_uid = manifest::GetString(remote, {"metadata", "uid"});
  Json local;
  ASSERT_TRUE(AwaitManagerJobActive(local)) << local.dump();
  std::optional<v1::Workload> manager_wl = ManagerWorkload();
  ASSERT_TRUE(manager_wl.has_value());
  const std::string workload = manager_wl->metadata().name();

  // A local workload of w2 waits for the 4 cpu the copy (1 cpu) keeps it from.
  client::TollgateClient w2(W2().address(), absl::Seconds(10));
  v1::SubmitRequest squatter;
  squatter.mutable_workload()->mutable_metadata()->set_namespace_("team");
  squatter.mutable_workload()->mutable_metadata()->set_name("squatter");
  squatter.mutable_workload()->mutable_spec()->set_queue_name("q");
  v1::PodSet* ps = squatter.mutable_workload()->mutable_spec()->add_pod_sets();
  ps->set_name("main");
  ps->set_count(1);
  (*ps->mutable_requests())["cpu"] = "4";
  ASSERT_TRUE(w2.Submit(squatter).ok());

  v1::PreemptRequest preempt;
  preempt.mutable_workload()->set_namespace_("team");
  preempt.mutable_workload()->set_name(workload);
  preempt.set_reason("drained by the worker's operator");
  preempt.set_hold(true);
  absl::StatusOr<v1::PreemptResponse> preempted = w2.Preempt(preempt);
  ASSERT_TRUE(preempted.ok()) << preempted.status();

  // The manager gives the workload up and takes it again; no worker has room now.
  ASSERT_TRUE(WaitFor(
      [&] {
        manager_wl = ManagerWorkload();
        if (!manager_wl.has_value()) return false;
        bool retried = false;
        for (const v1::WorkloadEvent& e : manager_wl->status().events()) {
          if (e.message().find("Workload evicted on worker cluster: \"w2\"") != std::string::npos)
            retried = true;
        }
        return retried;
      },
      kWait))
      << (manager_wl.has_value() ? manager_wl->DebugString() : "no workload");
  // The first remote job is gone with its copy.
  ASSERT_TRUE(WaitFor(
      [&] {
        Json now = GetJob(W2(), "train");
        return now.is_null() || manifest::GetString(now, {"metadata", "uid"}) != first_uid;
      },
      kWait));
  // The manager's Job is suspended again and shows nothing running.
  ASSERT_TRUE(WaitFor(
      [&] {
        local = GetJob(Manager(), "train");
        return manifest::GetBool(local, {"spec", "suspend"}) == true &&
               manifest::GetInt(local, {"status", "active"}).value_or(0) == 0;
      },
      kWait))
      << local.dump();
  EXPECT_TRUE(manifest::HasTrueCondition(local, "Suspended")) << local.dump();
  EXPECT_FALSE(manifest::Find(local, {"status", "startTime"}) != nullptr) << local.dump();
  EXPECT_FALSE(manifest::HasTrueCondition(local, "Complete")) << local.dump();

  // w2 has room again: the job runs there anew and completes.
  v1::FinishRequest finish;
  finish.mutable_workload()->set_namespace_("team");
  finish.mutable_workload()->set_name("squatter");
  ASSERT_TRUE(w2.Finish(finish).ok());
  ASSERT_TRUE(AwaitManagerJobEnded("Complete", "succeeded", local)) << local.dump();
  manager_wl = AwaitManagerWorkloadFinished();
  ASSERT_TRUE(manager_wl.has_value()) << "the manager's workload did not finish";
  EXPECT_EQ(manager_wl->status().cluster_name(), "w2");
  ASSERT_NO_FATAL_FAILURE(ExpectRanOnlyOnW2(2));
}

// The winning worker's tollgated is killed (-9) while the job runs there, and started again on
// the same port and data within workerLostTimeout: the job, which lives in the worker's
// cluster, runs on untouched, the copy is read back admitted, and the job completes through it:
// one run, on w2 only, and the manager's Job and workload finish as usual.
TEST_F(MultiKueueJobsE2eTest, AWorkerRestartWhileItsJobRunsKeepsTheJobThere) {
  controller_.reset();
  absl::StatusOr<std::unique_ptr<ChildProcess>> controller = ChildProcess::Start(
      {TOLLGATE_MULTIKUEUE_PATH, absl::StrCat("--manager=", Manager().address()),
       "--worker-lost-timeout=5m", "--gc-interval=1s", "--config-sync-period=1s"},
      scratch_ + "/controller-long-timeout.log");
  ASSERT_TRUE(controller.ok()) << controller.status();
  controller_ = std::move(*controller);

  absl::StatusOr<Json> created =
      Manager().kube->Create(manifest::JobResource(), "team", MultiKueueJob("train", 6));
  ASSERT_TRUE(created.ok()) << created.status();
  Json remote;
  ASSERT_TRUE(WaitFor(
      [&] {
        remote = GetJob(W2(), "train");
        return !remote.is_null() && manifest::GetInt(remote, {"status", "active"}) == 1;
      },
      kWait))
      << remote.dump();
  const std::string job_uid = manifest::GetString(remote, {"metadata", "uid"});

  const int port = W2().port;
  ASSERT_TRUE(W2().tollgated->Kill().ok());
  ASSERT_NO_FATAL_FAILURE(StartTollgated(W2(), port));
  ASSERT_EQ(W2().port, port);
  // The job was not touched by the restart (the same object, while it still exists).
  const Json after_restart = GetJob(W2(), "train");
  if (!after_restart.is_null()) {
    EXPECT_EQ(manifest::GetString(after_restart, {"metadata", "uid"}), job_uid);
  }

  Json local;
  ASSERT_TRUE(AwaitManagerJobEnded("Complete", "succeeded", local)) << local.dump();
  std::optional<v1::Workload> manager_wl = AwaitManagerWorkloadFinished();
  ASSERT_TRUE(manager_wl.has_value()) << "the manager's workload did not finish";
  EXPECT_EQ(manager_wl->status().cluster_name(), "w2");
  for (const v1::WorkloadEvent& e : manager_wl->status().events()) {
    EXPECT_EQ(e.message().find("Admitting remote"), std::string::npos) << manager_wl->DebugString();
  }
  ASSERT_NO_FATAL_FAILURE(ExpectRanOnlyOnW2(1));
}

// Both workers have room (w1's blocker finishes first), so both copies may be admitted at
// once: the job runs on exactly one worker, the winner the manager recorded, and never appears
// on the other; the other's copy goes; clusterName never changes; the job's status and its
// completion come back to the manager.
TEST_F(MultiKueueJobsE2eTest, WithRoomOnBothWorkersTheJobRunsOnExactlyOne) {
  v1::FinishRequest free_w1;
  free_w1.mutable_workload()->set_namespace_("team");
  free_w1.mutable_workload()->set_name("blocker");
  ASSERT_TRUE(W1().admission->Finish(free_w1).ok());
  DispatchInvariants invariants({{"w1", W1().kube_config()}, {"w2", W2().kube_config()}},
                                Manager().address());

  absl::StatusOr<Json> created =
      Manager().kube->Create(manifest::JobResource(), "team", MultiKueueJob("train", 4));
  ASSERT_TRUE(created.ok()) << created.status();
  std::optional<v1::Workload> manager_wl;
  ASSERT_TRUE(WaitFor(
      [&] {
        manager_wl = ManagerWorkload();
        return manager_wl.has_value() && !manager_wl->status().cluster_name().empty();
      },
      kWait));
  const std::string winner = manager_wl->status().cluster_name();
  const std::string workload = manager_wl->metadata().name();
  ASSERT_TRUE(winner == "w1" || winner == "w2") << winner;
  Cluster& won = winner == "w1" ? W1() : W2();
  Cluster& lost = winner == "w1" ? W2() : W1();

  // The job runs on the winner, bound to its copy.
  Json remote;
  ASSERT_TRUE(WaitFor(
      [&] {
        remote = GetJob(won, "train");
        return !remote.is_null() && manifest::GetInt(remote, {"status", "active"}) == 1;
      },
      kWait))
      << remote.dump();
  EXPECT_EQ(manifest::PrebuiltWorkloadName(remote), workload);
  // The other's copy goes (it may have been admitted there too, but never marked).
  v1::WorkloadRef copy_ref;
  copy_ref.set_namespace_("team");
  copy_ref.set_name(workload);
  ASSERT_TRUE(WaitFor(
      [&] { return absl::IsNotFound(lost.admission->GetWorkload(copy_ref).status()); }, kWait));
  // The manager records what it sees: only the winner's copy, admitted.
  ASSERT_TRUE(WaitFor(
      [&] {
        manager_wl = ManagerWorkload();
        return manager_wl.has_value() && manager_wl->status().multi_kueue_remotes_size() == 1 &&
               manager_wl->status().multi_kueue_remotes(0).cluster() == winner &&
               manager_wl->status().multi_kueue_remotes(0).state() == "Admitted";
      },
      kWait))
      << (manager_wl.has_value() ? manager_wl->DebugString() : "no workload");

  // The status, then the completion, come back onto the manager's Job.
  Json local;
  ASSERT_TRUE(AwaitManagerJobActive(local)) << local.dump();
  ASSERT_TRUE(AwaitManagerJobEnded("Complete", "succeeded", local)) << local.dump();
  manager_wl = AwaitManagerWorkloadFinished();
  ASSERT_TRUE(manager_wl.has_value()) << "the manager's workload did not finish";
  EXPECT_EQ(manager_wl->status().cluster_name(), winner);
  EXPECT_EQ(FinishedReasonOf(*manager_wl), "Succeeded") << manager_wl->DebugString();
  EXPECT_TRUE(WaitFor([&] { return GetJob(won, "train").is_null(); }, kWait));

  // Exactly once: one run, on the winner; nothing on the other worker nor the manager's cluster.
  const Json won_runs = FakeRuns(won.apiserver);
  ASSERT_TRUE(won_runs.is_array());
  EXPECT_EQ(won_runs.size(), 1u) << won_runs.dump();
  EXPECT_EQ(FakeRuns(lost.apiserver), Json::array());
  EXPECT_EQ(FakeRuns(Manager().apiserver), Json::array());
  EXPECT_EQ(invariants.job_seen_on(), std::set<std::string>{winner});
  EXPECT_EQ(invariants.cluster_names(), std::set<std::string>{winner});
  EXPECT_FALSE(invariants.jobs_on_two_at_once());
}

// The gated kinds have no managedBy (Kueue's pod MultiKueue adapter): a plain Pod created gated
// on the manager's cluster travels with its workload, the Pod created on w2 (bound to w2's copy)
// is released there and runs, the manager's Pod stays gated throughout (a gate cannot be added
// back, so gated at the end is gated all along) while the remote Pod's status is projected onto
// it (Running, then Succeeded), the manager's workload finishes Succeeded, and w2's Pod goes with
// its copy.
TEST_F(MultiKueueJobsE2eTest, APlainPodRunsOnTheWinnerAndItsStatusComesBack) {
  absl::StatusOr<Json> created =
      Manager().kube->Create(manifest::PodResource(), "team", GatedPod("train", 4));
  ASSERT_TRUE(created.ok()) << created.status();

  ASSERT_TRUE(WaitFor([&] { return ManagerWorkload().has_value(); }, kWait));
  const v1::Workload submitted = *ManagerWorkload();
  EXPECT_EQ(submitted.spec().payload().kind(), "Pod");
  const std::string workload = submitted.metadata().name();

  // The Pod appears on w2, bound to w2's copy, released and running there.
  Json remote;
  ASSERT_TRUE(AwaitPodPhase(W2(), "train", "Running", remote)) << remote.dump();
  EXPECT_EQ(manifest::PrebuiltWorkloadName(remote), workload);
  EXPECT_EQ(manifest::GetString(remote, {"metadata", "labels", kOriginLabel}), "multikueue");
  EXPECT_FALSE(manifest::IsGated(remote));
  std::optional<v1::Workload> manager_wl = ManagerWorkload();
  ASSERT_TRUE(manager_wl.has_value());
  EXPECT_EQ(manager_wl->status().cluster_name(), "w2");

  // The remote status comes back onto the manager's Pod, which stays gated.
  Json local;
  ASSERT_TRUE(AwaitPodPhase(Manager(), "train", "Running", local)) << local.dump();
  EXPECT_TRUE(manifest::IsGated(local)) << local.dump();
  ASSERT_TRUE(WaitFor(
      [&] {
        local = GetPod(Manager(), "train");
        return manifest::GetString(local, {"status", "phase"}) == "Succeeded";
      },
      kWait))
      << local.dump();

  manager_wl = AwaitManagerWorkloadFinished();
  ASSERT_TRUE(manager_wl.has_value()) << "the manager's workload did not finish";
  EXPECT_EQ(FinishedReasonOf(*manager_wl), "Succeeded") << manager_wl->DebugString();
  EXPECT_EQ(manager_wl->status().cluster_name(), "w2");
  // The finished copy goes from w2, and its Pod with it.
  EXPECT_TRUE(WaitFor(
      [&] {
        return absl::IsNotFound(W2().kube->Get(manifest::PodResource(), "team", "train").status());
      },
      kWait));
  EXPECT_TRUE(manifest::IsGated(GetPod(Manager(), "train")));

  ASSERT_NO_FATAL_FAILURE(ExpectRanOnlyOnW2(1));
}

// A plain Pod that fails on the winner: the manager's Pod shows Failed (still gated), and the
// manager's workload finishes with reason Failed, as the worker's copy did.
TEST_F(MultiKueueJobsE2eTest, APlainPodThatFailsOnTheWinnerFailsTheManagersPodAndWorkload) {
  absl::StatusOr<Json> created =
      Manager().kube->Create(manifest::PodResource(), "team", GatedPod("train", 1, /*fail=*/true));
  ASSERT_TRUE(created.ok()) << created.status();
  Json local;
  ASSERT_TRUE(AwaitPodPhase(Manager(), "train", "Failed", local)) << local.dump();
  EXPECT_TRUE(manifest::IsGated(local)) << local.dump();
  std::optional<v1::Workload> manager_wl = AwaitManagerWorkloadFinished();
  ASSERT_TRUE(manager_wl.has_value()) << "the manager's workload did not finish";
  EXPECT_EQ(FinishedReasonOf(*manager_wl), "Failed") << manager_wl->DebugString();
  EXPECT_EQ(manager_wl->status().cluster_name(), "w2");
  ASSERT_NO_FATAL_FAILURE(ExpectRanOnlyOnW2(1));
}

// A StatefulSet (Kueue's statefulset MultiKueue adapter): created on the manager's cluster, its
// group workload carries it; w2 creates it bound to its copy, with the manager's uid, and its pod
// runs there while the manager's pod stays gated; no status is synced (the manager's StatefulSet
// controller owns it there, as in Kueue). Deleting the manager's StatefulSet removes its
// workload, the copy and w2's StatefulSet with its pods.
TEST_F(MultiKueueJobsE2eTest, AStatefulSetRunsOnTheWinnerAndGoesWithTheManagersObject) {
  const Json sts = {
      {"apiVersion", "apps/v1"},
      {"kind", "StatefulSet"},
      {"metadata", {{"name", "train"}, {"labels", {{"kueue.x-k8s.io/queue-name", "q"}}}}},
      {"spec",
       {{"replicas", 1},
        {"serviceName", "train"},
        {"selector", {{"matchLabels", {{"app", "train"}}}}},
        {"template",
         {{"metadata", {{"labels", {{"app", "train"}}}}},
          // Gated as written: Tollgate has no webhook to gate the first pod in time.
          {"spec",
           {{"schedulingGates", Json::array({{{"name", "kueue.x-k8s.io/admission"}}})},
            {"containers", Json::array({{{"name", "main"},
                                         {"image", "busybox"},
                                         {"resources", {{"requests", {{"cpu", "1"}}}}}}})}}}}}}}};
  absl::StatusOr<Json> created = Manager().kube->Create(manifest::StatefulSetKind(), "team", sts);
  ASSERT_TRUE(created.ok()) << created.status();
  const std::string manager_uid = manifest::GetString(*created, {"metadata", "uid"});

  ASSERT_TRUE(WaitFor([&] { return ManagerWorkload().has_value(); }, kWait));
  const v1::Workload submitted = *ManagerWorkload();
  EXPECT_EQ(submitted.spec().payload().kind(), "StatefulSet");
  const std::string workload = submitted.metadata().name();

  // w2's StatefulSet, bound to its copy, and its pod running there.
  Json remote_pod;
  ASSERT_TRUE(AwaitPodPhase(W2(), "train-0", "Running", remote_pod)) << remote_pod.dump();
  absl::StatusOr<Json> remote = W2().kube->Get(manifest::StatefulSetKind(), "team", "train");
  ASSERT_TRUE(remote.ok()) << remote.status();
  EXPECT_EQ(manifest::PrebuiltWorkloadName(*remote), workload);
  EXPECT_EQ(manifest::GetString(*remote, {"metadata", "labels", kOriginLabel}), "multikueue");
  EXPECT_EQ(manifest::GetString(
                *remote, {"metadata", "annotations", manifest::kMultiKueueOriginUidAnnotation}),
            manager_uid);
  EXPECT_EQ(
      manifest::GetString(remote_pod, {"metadata", "annotations", manifest::kPrebuiltWorkloadKey}),
      workload);
  std::optional<v1::Workload> manager_wl = ManagerWorkload();
  ASSERT_TRUE(manager_wl.has_value());
  EXPECT_EQ(manager_wl->status().cluster_name(), "w2");
  EXPECT_EQ(manager_wl->status().state(), v1::WORKLOAD_STATE_ADMITTED);

  // The manager's pod exists, gated, and never ran.
  absl::StatusOr<Json> local_pod = Manager().kube->Get(manifest::PodResource(), "team", "train-0");
  ASSERT_TRUE(local_pod.ok()) << local_pod.status();
  EXPECT_TRUE(manifest::IsGated(*local_pod)) << local_pod->dump();

  // Deleting the manager's StatefulSet removes the workload, the copy, and w2's objects.
  ASSERT_TRUE(Manager().kube->Delete(manifest::StatefulSetKind(), "team", "train").ok());
  EXPECT_TRUE(WaitFor([&] { return !ManagerWorkload().has_value(); }, kWait));
  EXPECT_TRUE(WaitFor(
      [&] {
        return absl::IsNotFound(
                   W2().kube->Get(manifest::StatefulSetKind(), "team", "train").status()) &&
               absl::IsNotFound(
                   W2().kube->Get(manifest::PodResource(), "team", "train-0").status());
      },
      kWait));
  v1::WorkloadRef copy;
  copy.set_namespace_("team");
  copy.set_name(workload);
  EXPECT_TRUE(absl::IsNotFound(W2().admission->GetWorkload(copy).status()));

  ASSERT_NO_FATAL_FAILURE(ExpectRanOnlyOnW2(1));
}

// A pod group (Kueue's pod MultiKueue adapter syncs every pod of the group): its workload is made
// once both pods exist and carries them; both run on w2, bound to w2's copy, while the manager's
// stay gated and show the remote statuses, Running then Succeeded; the group's workload finishes
// Succeeded, and w2's pods go with the copy.
TEST_F(MultiKueueJobsE2eTest, APodGroupRunsOnTheWinnerAndItsPodsStatusesComeBack) {
  // Fast admission, as Kueue does it: the workload is made at the first pod and admitted on a
  // worker before the group is complete; the second pod, made later on the manager, joins the
  // workload's payload and is created on the winner, bound to its copy.
  Json first = GroupPod("train", 2, 8);
  Json second = GroupPod("train-b", 2, 4);
  for (Json* pod : {&first, &second}) {
    (*pod)["metadata"]["annotations"][manifest::kPodGroupFastAdmissionAnnotation] = "true";
  }
  ASSERT_TRUE(Manager().kube->Create(manifest::PodResource(), "team", first).ok());
  std::optional<v1::Workload> admitted;
  ASSERT_TRUE(WaitFor(
      [&] {
        admitted = ManagerWorkload();
        return admitted.has_value() && admitted->status().cluster_name() == "w2";
      },
      kWait))
      << (admitted.has_value() ? admitted->DebugString() : "no workload");
  EXPECT_EQ(admitted->metadata().name(), "train");
  EXPECT_EQ(admitted->spec().payload().kind(), "PodList");
  Json remote;
  ASSERT_TRUE(AwaitPodPhase(W2(), "train", "Running", remote)) << remote.dump();
  // Admitted on w2 and running there while the group has one pod.
  EXPECT_TRUE(GetPod(Manager(), "train-b").is_null());
  EXPECT_TRUE(GetPod(W2(), "train-b").is_null());

  ASSERT_TRUE(Manager().kube->Create(manifest::PodResource(), "team", second).ok());
  ASSERT_TRUE(AwaitPodPhase(W2(), "train-b", "Running", remote)) << remote.dump();
  EXPECT_FALSE(manifest::IsGated(remote));
  for (const char* name : {"train", "train-b"}) {
    remote = GetPod(W2(), name);
    EXPECT_EQ(manifest::PrebuiltWorkloadName(remote), "train");
    EXPECT_EQ(manifest::GetString(remote, {"metadata", "labels", kOriginLabel}), "multikueue");
    EXPECT_EQ(manifest::GetString(remote, {"metadata", "labels", manifest::kPodGroupNameKey}),
              "train");
  }
  // The same copy all along: the manager's workload still names w2, and its payload has both.
  std::optional<v1::Workload> grown = ManagerWorkload();
  ASSERT_TRUE(grown.has_value());
  EXPECT_EQ(grown->status().cluster_name(), "w2");
  EXPECT_TRUE(absl::StrContains(grown->spec().payload().data(), "train-b"));
  // The payload update was acknowledged (the controller carried what the manager's watch showed):
  // a kill -9 of the manager's tollgated keeps it.
  const int manager_port = Manager().port;
  ASSERT_TRUE(Manager().tollgated->Kill().ok());
  ASSERT_NO_FATAL_FAILURE(StartTollgated(Manager(), manager_port));
  std::optional<v1::Workload> restarted;
  ASSERT_TRUE(WaitFor(
      [&] {
        restarted = ManagerWorkload();
        return restarted.has_value();
      },
      kWait));
  EXPECT_EQ(restarted->spec().payload().data(), grown->spec().payload().data());
  for (const char* name : {"train", "train-b"}) {
    Json local;
    ASSERT_TRUE(AwaitPodPhase(Manager(), name, "Succeeded", local)) << local.dump();
    EXPECT_TRUE(manifest::IsGated(local)) << local.dump();
  }
  std::optional<v1::Workload> manager_wl = AwaitManagerWorkloadFinished();
  ASSERT_TRUE(manager_wl.has_value()) << "the manager's workload did not finish";
  EXPECT_EQ(FinishedReasonOf(*manager_wl), "Succeeded") << manager_wl->DebugString();
  EXPECT_EQ(manager_wl->status().cluster_name(), "w2");
  EXPECT_TRUE(WaitFor(
      [&] {
        return absl::IsNotFound(
                   W2().kube->Get(manifest::PodResource(), "team", "train").status()) &&
               absl::IsNotFound(
                   W2().kube->Get(manifest::PodResource(), "team", "train-b").status());
      },
      kWait));
  ASSERT_NO_FATAL_FAILURE(ExpectRanOnlyOnW2(2));
}

// A pod of a group (without fast admission) fails on the winner; its status comes back, and the
// replacement the user makes on the manager's cluster is created on the winner, bound to the same
// copy, and completes the group there (Kueue's syncPodGroup at the next reconcile).
TEST_F(MultiKueueJobsE2eTest, AReplacementForAFailedPodOfAGroupIsCreatedOnTheWinner) {
  Json failing = GroupPod("train", 2, 1);
  failing["metadata"]["annotations"]["fake.tollgate.dev/fail"] = "true";
  ASSERT_TRUE(Manager().kube->Create(manifest::PodResource(), "team", failing).ok());
  ASSERT_TRUE(
      Manager().kube->Create(manifest::PodResource(), "team", GroupPod("train-b", 2, 4)).ok());
  Json local;
  ASSERT_TRUE(AwaitPodPhase(Manager(), "train", "Failed", local)) << local.dump();
  EXPECT_TRUE(manifest::IsGated(local));
  std::optional<v1::Workload> running = ManagerWorkload();
  ASSERT_TRUE(running.has_value());
  EXPECT_EQ(running->status().cluster_name(), "w2");
  const std::string copy_uid = [&] {
    v1::WorkloadRef ref;
    ref.set_namespace_("team");
    ref.set_name("train");
    absl::StatusOr<v1::Workload> copy = W2().admission->GetWorkload(ref);
    return copy.ok() ? copy->metadata().uid() : std::string();
  }();
  ASSERT_FALSE(copy_uid.empty());

  ASSERT_TRUE(
      Manager().kube->Create(manifest::PodResource(), "team", GroupPod("train-c", 2, 2)).ok());
  Json remote;
  // Seen while it exists: it goes with the copy once the group is done.
  ASSERT_TRUE(WaitFor(
      [&] {
        remote = GetPod(W2(), "train-c");
        return !remote.is_null();
      },
      kWait));
  EXPECT_EQ(manifest::PrebuiltWorkloadName(remote), "train");
  EXPECT_EQ(manifest::GetString(
                remote, {"metadata", "annotations", manifest::kMultiKueueCopyUidAnnotation}),
            copy_uid);
  ASSERT_TRUE(AwaitPodPhase(Manager(), "train-c", "Succeeded", local)) << local.dump();
  EXPECT_TRUE(manifest::IsGated(local));
  std::optional<v1::Workload> manager_wl = AwaitManagerWorkloadFinished();
  ASSERT_TRUE(manager_wl.has_value()) << "the manager's workload did not finish";
  EXPECT_EQ(FinishedReasonOf(*manager_wl), "Succeeded") << manager_wl->DebugString();
  EXPECT_EQ(manager_wl->status().cluster_name(), "w2");
  // The failed pod, its sibling and the replacement: all on w2.
  ASSERT_NO_FATAL_FAILURE(ExpectRanOnlyOnW2(3));
}

// Deleting a running pod group's pods on the manager's cluster removes its workload, w2's copy
// and w2's pods (Kueue's DeleteRemoteObject for a group).
TEST_F(MultiKueueJobsE2eTest, DeletingAPodGroupOnTheManagerRemovesItsPodsFromTheWinner) {
  for (const char* name : {"train", "train-b"}) {
    ASSERT_TRUE(
        Manager().kube->Create(manifest::PodResource(), "team", GroupPod(name, 2, 3600)).ok());
  }
  for (const char* name : {"train", "train-b"}) {
    Json remote;
    ASSERT_TRUE(AwaitPodPhase(W2(), name, "Running", remote)) << remote.dump();
  }
  for (const char* name : {"train", "train-b"}) {
    ASSERT_TRUE(Manager().kube->Delete(manifest::PodResource(), "team", name).ok());
  }
  EXPECT_TRUE(WaitFor([&] { return !ManagerWorkload().has_value(); }, kWait));
  EXPECT_TRUE(WaitFor(
      [&] {
        return absl::IsNotFound(
                   W2().kube->Get(manifest::PodResource(), "team", "train").status()) &&
               absl::IsNotFound(
                   W2().kube->Get(manifest::PodResource(), "team", "train-b").status());
      },
      kWait));
  v1::WorkloadRef copy;
  copy.set_namespace_("team");
  copy.set_name("train");
  EXPECT_TRUE(absl::IsNotFound(W2().admission->GetWorkload(copy).status()));
  ASSERT_NO_FATAL_FAILURE(ExpectRanOnlyOnW2(2));
}

// A LeaderWorkerSet of two groups (a leader and a worker at 1 cpu each: 2 cpu a group) with room
// on both workers (w1's blocker gone) for both groups: Kueue's multi-workload rule keeps them
// together. Group 1's copy is made only once group 0 was admitted on a worker, and only there
// (sampled every 50 ms: never on the other worker, never before group 0 had its clusterName);
// the winner makes one LeaderWorkerSet with the manager's uid, bound to both copies, and all four
// pods run there while the manager's stay gated. Deleting the manager's LeaderWorkerSet removes
// both workloads, both copies and the winner's LeaderWorkerSet with its pods.
TEST_F(MultiKueueJobsE2eTest, ALeaderWorkerSetsGroupsRunTogetherOnOneWorker) {
  v1::DeleteWorkloadRequest unblock;
  unblock.mutable_workload()->set_namespace_("team");
  unblock.mutable_workload()->set_name("blocker");
  ASSERT_TRUE(W1().admission->DeleteWorkload(unblock).ok());

  std::string manager_uid;
  ASSERT_NO_FATAL_FAILURE(CreateTwoGroupLeaderWorkerSet(manager_uid));
  auto manager_workload = [&](int g) { return GroupWorkload(Manager(), manager_uid, g); };
  auto has_copy = [&](Cluster& c, int g) { return GroupWorkload(c, manager_uid, g).has_value(); };

  // Where group 1's copy is ever seen, and whether before group 0 was admitted on a worker.
  absl::Mutex mu;
  std::set<std::string> group1_copies;
  bool group1_copied_early = false;
  std::atomic<bool> stop{false};
  std::thread sampler([&] {
    while (!stop.load()) {
      std::set<std::string> holders;
      for (Cluster* c : {&W1(), &W2()}) {
        if (has_copy(*c, 1)) holders.insert(c->name);
      }
      std::optional<v1::Workload> primary = manager_workload(0);
      {
        absl::MutexLock lock(&mu);
        group1_copies.insert(holders.begin(), holders.end());
        if (!holders.empty() &&
            (!primary.has_value() || primary->status().cluster_name().empty())) {
          group1_copied_early = true;
        }
      }
      absl::SleepFor(absl::Milliseconds(50));
    }
  });
  struct StopSampler {
    std::atomic<bool>& stop;
    std::thread& thread;
    ~StopSampler() {
      stop.store(true);
      if (thread.joinable()) thread.join();
    }
  } stop_sampler{stop, sampler};

  std::string winner;
  ASSERT_TRUE(WaitFor(
      [&] {
        std::optional<v1::Workload> g0 = manager_workload(0);
        std::optional<v1::Workload> g1 = manager_workload(1);
        if (!g0.has_value() || !g1.has_value() || g0->status().cluster_name().empty()) {
          return false;
        }
        winner = g0->status().cluster_name();
        return g1->status().cluster_name() == winner;
      },
      kWait));
  for (int g = 0; g < 2; ++g) {
    std::optional<v1::Workload> wl = manager_workload(g);
    ASSERT_TRUE(wl.has_value());
    EXPECT_EQ(wl->spec().payload().kind(), "LeaderWorkerSet");
    EXPECT_EQ(wl->metadata().annotations().at("tollgate.dev/component-workload-count"), "2");
  }
  Cluster& there = winner == "w1" ? W1() : W2();
  Cluster& elsewhere = winner == "w1" ? W2() : W1();

  // The winner's LeaderWorkerSet, with the manager's uid, and all four pods running there.
  for (const char* pod : {"train-0", "train-0-1", "train-1", "train-1-1"}) {
    Json remote;
    ASSERT_TRUE(AwaitPodPhase(there, pod, "Running", remote)) << pod << " " << remote.dump();
  }
  absl::StatusOr<Json> remote = there.kube->Get(manifest::LeaderWorkerSetKind(), "team", "train");
  ASSERT_TRUE(remote.ok()) << remote.status();
  EXPECT_EQ(manifest::GetString(*remote, {"metadata", "labels", kOriginLabel}), "multikueue");
  EXPECT_EQ(manifest::GetString(
                *remote, {"metadata", "annotations", manifest::kMultiKueueOriginUidAnnotation}),
            manager_uid);
  EXPECT_TRUE(absl::IsNotFound(
      elsewhere.kube->Get(manifest::LeaderWorkerSetKind(), "team", "train").status()));
  for (const char* pod : {"train-0", "train-0-1", "train-1", "train-1-1"}) {
    absl::StatusOr<Json> local = Manager().kube->Get(manifest::PodResource(), "team", pod);
    ASSERT_TRUE(local.ok()) << pod << " " << local.status();
    EXPECT_TRUE(manifest::IsGated(*local)) << local->dump();
  }
  {
    absl::MutexLock lock(&mu);
    EXPECT_EQ(group1_copies, std::set<std::string>{winner});
    EXPECT_FALSE(group1_copied_early);
  }

  // Deleting the manager's LeaderWorkerSet removes its workloads, the copies and the winner's
  // objects.
  ASSERT_TRUE(Manager().kube->Delete(manifest::LeaderWorkerSetKind(), "team", "train").ok());
  EXPECT_TRUE(WaitFor(
      [&] { return !manager_workload(0).has_value() && !manager_workload(1).has_value(); }, kWait));
  EXPECT_TRUE(WaitFor(
      [&] {
        if (!absl::IsNotFound(
                there.kube->Get(manifest::LeaderWorkerSetKind(), "team", "train").status())) {
          return false;
        }
        for (const char* pod : {"train-0", "train-0-1", "train-1", "train-1-1"}) {
          if (!absl::IsNotFound(there.kube->Get(manifest::PodResource(), "team", pod).status())) {
            return false;
          }
        }
        return !has_copy(there, 0) && !has_copy(there, 1);
      },
      kWait));
  const Json runs = FakeRuns(there.apiserver);
  ASSERT_TRUE(runs.is_array());
  EXPECT_EQ(runs.size(), 4u) << runs.dump();
  EXPECT_EQ(FakeRuns(elsewhere.apiserver), Json::array());
  EXPECT_EQ(FakeRuns(Manager().apiserver), Json::array());
}

// One group of a LeaderWorkerSet evicted on its worker (its copy preempted there with hold) is
// dispatched again, back to the worker the other group runs on (Kueue's multi-workload rule).
// The worker's LeaderWorkerSet goes with the pods of both groups once that group's copy is
// removed (Kueue's DeleteRemoteObject), and is made again, a new object, once the group's new
// copy is admitted and marked there; all four pods run there again, new pods. Group 0 keeps its
// copy, its clusterName and its Ready check throughout; w1 (full) never gets anything.
TEST_F(MultiKueueJobsE2eTest, ALeaderWorkerSetGroupsEvictionRemakesTheObjectOnItsWorker) {
  std::string manager_uid;
  ASSERT_NO_FATAL_FAILURE(CreateTwoGroupLeaderWorkerSet(manager_uid));
  const std::vector<std::string> pods = {"train-0", "train-0-1", "train-1", "train-1-1"};
  std::map<std::string, std::string> first_pods;
  for (const std::string& pod : pods) {
    Json remote;
    ASSERT_TRUE(AwaitPodPhase(W2(), pod, "Running", remote)) << pod << " " << remote.dump();
    first_pods[pod] = manifest::GetString(remote, {"metadata", "uid"});
  }
  for (int g = 0; g < 2; ++g) {
    std::optional<v1::Workload> wl = GroupWorkload(Manager(), manager_uid, g);
    ASSERT_TRUE(wl.has_value());
    ASSERT_EQ(wl->status().cluster_name(), "w2") << wl->DebugString();
  }
  absl::StatusOr<Json> first_lws = W2().kube->Get(manifest::LeaderWorkerSetKind(), "team", "train");
  ASSERT_TRUE(first_lws.ok()) << first_lws.status();
  const std::string first_lws_uid = manifest::GetString(*first_lws, {"metadata", "uid"});
  const std::optional<v1::Workload> copy0 = GroupWorkload(W2(), manager_uid, 0);
  const std::optional<v1::Workload> copy1 = GroupWorkload(W2(), manager_uid, 1);
  ASSERT_TRUE(copy0.has_value() && copy1.has_value());

  client::TollgateClient w2(W2().address(), absl::Seconds(10));
  v1::PreemptRequest preempt;
  preempt.mutable_workload()->set_namespace_("team");
  preempt.mutable_workload()->set_name(copy1->metadata().name());
  preempt.set_reason("drained by the worker's operator");
  preempt.set_hold(true);
  absl::StatusOr<v1::PreemptResponse> preempted = w2.Preempt(preempt);
  ASSERT_TRUE(preempted.ok()) << preempted.status();

  std::optional<v1::Workload> group1;
  ASSERT_TRUE(WaitFor(
      [&] {
        group1 = GroupWorkload(Manager(), manager_uid, 1);
        if (!group1.has_value()) return false;
        for (const v1::WorkloadEvent& e : group1->status().events()) {
          if (absl::StrContains(e.message(), "Workload evicted on worker cluster: \"w2\"")) {
            return true;
          }
        }
        return false;
      },
      kWait))
      << (group1.has_value() ? group1->DebugString() : "no workload");

  // Group 1 back on w2, a new copy there, admitted and marked; a new LeaderWorkerSet there, and
  // its four pods, new ones, running.
  std::optional<v1::Workload> again;
  ASSERT_TRUE(WaitFor(
      [&] {
        again = GroupWorkload(W2(), manager_uid, 1);
        return again.has_value() && again->metadata().uid() != copy1->metadata().uid() &&
               again->status().state() == v1::WORKLOAD_STATE_ADMITTED &&
               again->status().multi_kueue_winner();
      },
      kWait))
      << (again.has_value() ? again->DebugString() : "no copy");
  Json remade;
  ASSERT_TRUE(WaitFor(
      [&] {
        absl::StatusOr<Json> lws = W2().kube->Get(manifest::LeaderWorkerSetKind(), "team", "train");
        if (!lws.ok()) return false;
        remade = *lws;
        return manifest::GetString(remade, {"metadata", "uid"}) != first_lws_uid;
      },
      kWait))
      << remade.dump();
  for (const std::string& pod : pods) {
    Json remote;
    EXPECT_TRUE(WaitFor(
        [&] {
          remote = GetPod(W2(), pod);
          return manifest::GetString(remote, {"metadata", "uid"}) != first_pods[pod] &&
                 manifest::GetString(remote, {"status", "phase"}) == "Running";
        },
        kWait))
        << pod << " " << remote.dump();
  }
  std::optional<v1::Workload> group0 = GroupWorkload(Manager(), manager_uid, 0);
  ASSERT_TRUE(group0.has_value());
  EXPECT_EQ(group0->status().cluster_name(), "w2") << group0->DebugString();
  for (const v1::WorkloadEvent& e : group0->status().events()) {
    EXPECT_FALSE(absl::StrContains(e.message(), "resetting for re-admission")) << e.message();
  }
  std::optional<v1::Workload> kept0 = GroupWorkload(W2(), manager_uid, 0);
  ASSERT_TRUE(kept0.has_value());
  EXPECT_EQ(kept0->metadata().uid(), copy0->metadata().uid());
  EXPECT_EQ(kept0->status().state(), v1::WORKLOAD_STATE_ADMITTED);
  for (const std::string& pod : pods) {
    Json local = GetPod(Manager(), pod);
    EXPECT_TRUE(manifest::IsGated(local)) << local.dump();
  }
  EXPECT_TRUE(
      absl::IsNotFound(W1().kube->Get(manifest::LeaderWorkerSetKind(), "team", "train").status()));
  EXPECT_FALSE(GroupWorkload(W1(), manager_uid, 0).has_value());
  EXPECT_FALSE(GroupWorkload(W1(), manager_uid, 1).has_value());
  EXPECT_EQ(FakeRuns(W1().apiserver), Json::array());
  EXPECT_EQ(FakeRuns(Manager().apiserver), Json::array());
}

// A Deployment's pod (Kueue has no MultiKueue adapter for the Deployment: its pods are plain pods
// with workloads of their own) travels as a plain pod: it runs on w2 bound to its copy, without
// the Deployment's owner reference, while the manager's pod stays gated and shows its status.
// Deleting the Deployment on the manager's cluster takes its pod, the workload, the copy and
// w2's pod.
TEST_F(MultiKueueJobsE2eTest, ADeploymentsPodRunsOnTheWinnerAsAPlainPod) {
  const Json deployment = {
      {"apiVersion", "apps/v1"},
      {"kind", "Deployment"},
      {"metadata", {{"name", "serve"}, {"labels", {{"kueue.x-k8s.io/queue-name", "q"}}}}},
      {"spec",
       {{"replicas", 1},
        {"selector", {{"matchLabels", {{"app", "serve"}}}}},
        {"template",
         {{"metadata", {{"labels", {{"app", "serve"}}}}},
          // Gated as written: Tollgate has no webhook to gate the first pod in time.
          {"spec",
           {{"schedulingGates", Json::array({{{"name", "kueue.x-k8s.io/admission"}}})},
            {"containers", Json::array({{{"name", "main"},
                                         {"image", "busybox"},
                                         {"resources", {{"requests", {{"cpu", "1"}}}}}}})}}}}}}}};
  const manifest::ResourceKind deployments{"apps", "v1", "deployments", "Deployment", true};
  ASSERT_TRUE(Manager().kube->Create(deployments, "team", deployment).ok());

  std::optional<v1::Workload> submitted;
  ASSERT_TRUE(WaitFor(
      [&] {
        submitted = ManagerWorkload();
        return submitted.has_value();
      },
      kWait));
  EXPECT_EQ(submitted->spec().payload().kind(), "Pod");
  absl::StatusOr<Json> carried = manifest::ParseJson(submitted->spec().payload().data(), "data");
  ASSERT_TRUE(carried.ok()) << carried.status();
  const std::string pod = manifest::GetString(*carried, {"metadata", "name"});
  ASSERT_TRUE(absl::StartsWith(pod, "serve-")) << pod;

  Json remote;
  ASSERT_TRUE(AwaitPodPhase(W2(), pod, "Running", remote)) << remote.dump();
  EXPECT_EQ(manifest::PrebuiltWorkloadName(remote), submitted->metadata().name());
  EXPECT_EQ(manifest::GetString(remote, {"metadata", "labels", kOriginLabel}), "multikueue");
  EXPECT_FALSE(remote["metadata"].contains("ownerReferences")) << remote.dump();
  Json local;
  ASSERT_TRUE(AwaitPodPhase(Manager(), pod, "Running", local)) << local.dump();
  EXPECT_TRUE(manifest::IsGated(local)) << local.dump();
  EXPECT_EQ(ManagerWorkload()->status().cluster_name(), "w2");
  EXPECT_TRUE(absl::IsNotFound(W1().kube->Get(manifest::PodResource(), "team", pod).status()));

  ASSERT_TRUE(Manager().kube->Delete(deployments, "team", "serve").ok());
  EXPECT_TRUE(WaitFor([&] { return !ManagerWorkload().has_value(); }, kWait));
  EXPECT_TRUE(WaitFor(
      [&] {
        return absl::IsNotFound(W2().kube->Get(manifest::PodResource(), "team", pod).status());
      },
      kWait));
  ASSERT_NO_FATAL_FAILURE(ExpectRanOnlyOnW2(1));
}

}  // namespace
}  // namespace tollgate::kube
