// End to end on loopback: the real tollgated and tollgate-kube binaries against the fake API
// server, whose stand-in controllers run unsuspended jobs. Every wait polls a condition with a
// deadline.
#include <curl/curl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "adapters/kube/provisioning.h"
#include "clients/cpp/grpc_admission_client.h"
#include "clients/cpp/tollgate_client.h"
#include "services/kubeapi/kube_client.h"
#include "services/manifest/admission_enactment.h"
#include "test/adapters/kube/test_processes.h"

namespace tollgate::kube {
namespace {

using Json = manifest::Json;

using testing::ChildProcess;
using ::testing::HasSubstr;
using testing::WaitFor;

constexpr char kToken[] = "e2e-token";
constexpr absl::Duration kWait = absl::Seconds(45);

std::string Testdata(const std::string& name) {
  return std::string(TOLLGATE_KUBE_TESTDATA) + "/" + name;
}

// Requests per pod, e.g. {"cpu", "4"}.
using Requests = std::map<std::string, std::string>;

Json Container(const Requests& requests) {
  Json r = Json::object();
  for (const auto& [k, v] : requests) r[k] = v;
  return {{"name", "main"}, {"image", "busybox"}, {"resources", {{"requests", r}}}};
}

Json PodTemplate(const Requests& requests) {
  return {
      {"spec", {{"restartPolicy", "Never"}, {"containers", Json::array({Container(requests)})}}}};
}

Json Labels(const std::string& queue, const std::string& priority) {
  Json labels = {{"kueue.x-k8s.io/queue-name", queue}};
  if (!priority.empty()) labels["kueue.x-k8s.io/priority-class"] = priority;
  return labels;
}

// A Job as a user would write it without Kueue's webhook: created suspended (see
// docs/kubernetes.md), with no node selector; tollgate-kube starts it with the flavor's.
// `seconds` is how long the fake runs it once started.
Json MakeJob(const std::string& name, const std::string& queue, const Requests& requests,
             int parallelism = 1, const std::string& priority = "", int seconds = 3600) {
  return {{"apiVersion", "batch/v1"},
          {"kind", "Job"},
          {"metadata",
           {{"name", name},
            {"labels", Labels(queue, priority)},
            {"annotations", {{"fake.tollgate.dev/duration-seconds", absl::StrCat(seconds)}}}}},
          {"spec",
           {{"suspend", true}, {"parallelism", parallelism}, {"template", PodTemplate(requests)}}}};
}

class KubeE2eTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { curl_global_init(CURL_GLOBAL_DEFAULT); }

  void SetUp() override {
    scratch_ = testing::ScratchDir();
    data_dir_ = scratch_ + "/tollgated-data";
    absl::StatusOr<testing::FakeApiServer> server = testing::StartFakeApiServer(
        scratch_, {"--token", kToken, "--namespaces",
                   "default,kube-system,team-a,team-b,solo,prov,topo", "--job-duration", "3600"});
    ASSERT_TRUE(server.ok()) << server.status();
    apiserver_ = std::move(*server);
    manifest::KubeConfig config;
    config.server = apiserver_.url();
    config.token = kToken;
    kube_ = *kubeapi::CurlKubeClient::Create(config, kubeapi::CurlKubeClient::Options());
    // tollgate-kube reads a kubeconfig, as it would outside a cluster.
    std::ofstream(scratch_ + "/kubeconfig")
        << absl::StrCat("apiVersion: v1\nkind: Config\ncurrent-context: fake\n",
                        "contexts: [{name: fake, context: {cluster: fake, user: tester}}]\n",
                        "clusters: [{name: fake, cluster: {server: \"", apiserver_.url(), "\"}}]\n",
                        "users: [{name: tester, user: {token: ", kToken, "}}]\n");
    ASSERT_NO_FATAL_FAILURE(StartTollgated(0));
    ASSERT_NO_FATAL_FAILURE(StartAdapter());
  }

  void TearDown() override {
    if (HasFailure()) {
      if (adapter_ != nullptr) std::cerr << "--- tollgate-kube log\n" << adapter_->Logs();
      if (tollgated_ != nullptr) std::cerr << "--- tollgated log\n" << tollgated_->Logs();
    }
    StopSampler();
    adapter_.reset();
    tollgated_.reset();
  }

  // `port` 0 picks one; a restart passes the previous port so the adapter finds it again.
  void StartTollgated(int port) {
    const std::string port_file = scratch_ + "/tollgated.port";
    const std::string metrics_port_file = scratch_ + "/tollgated.metrics-port";
    std::filesystem::remove(port_file);
    std::filesystem::remove(metrics_port_file);
    std::vector<std::string> argv = {testing::TollgatedBinary(),
                                     absl::StrCat("--listen=127.0.0.1:", port),
                                     "--data-dir=" + data_dir_,
                                     "--port-file=" + port_file,
                                     "--manifests=" + Testdata("queues.yaml"),
                                     "--evictions-need-ack",
                                     "--metrics-listen=127.0.0.1:0",
                                     "--metrics-port-file=" + metrics_port_file};
    if (!tollgated_config_.empty()) {
      const std::string config_file = scratch_ + "/tollgated-config.yaml";
      std::ofstream(config_file) << tollgated_config_;
      argv.push_back("--config=" + config_file);
    }
    absl::StatusOr<std::unique_ptr<ChildProcess>> process =
        ChildProcess::Start(argv, scratch_ + "/tollgated.log");
    ASSERT_TRUE(process.ok()) << process.status();
    tollgated_ = std::move(*process);
    absl::StatusOr<int> bound = testing::WaitForPortFile(port_file, *tollgated_, kWait);
    ASSERT_TRUE(bound.ok()) << bound.status();
    tollgate_port_ = *bound;
    absl::StatusOr<int> metrics_bound =
        testing::WaitForPortFile(metrics_port_file, *tollgated_, kWait);
    ASSERT_TRUE(metrics_bound.ok()) << metrics_bound.status();
    metrics_port_ = *metrics_bound;
    admission_ = std::make_unique<client::GrpcAdmissionClient>(
        absl::StrCat("127.0.0.1:", tollgate_port_), client::Credentials(), absl::Seconds(5));
  }

  void StartAdapter() {
    std::vector<std::string> argv = {testing::TollgateKubeBinary(),
                                     "--kubeconfig=" + scratch_ + "/kubeconfig",
                                     absl::StrCat("--tollgate=127.0.0.1:", tollgate_port_),
                                     "--enable-rayjobs",
                                     "--enable-pytorchjobs",
                                     "--state-file=" + scratch_ + "/kube.state",
                                     "--resync-period=20s",
                                     "--watch-timeout=60s",
                                     "--health-file=" + scratch_ + "/kube.health",
                                     "--provisioning-check-sync-period=1s"};
    argv.insert(argv.end(), extra_adapter_flags_.begin(), extra_adapter_flags_.end());
    absl::StatusOr<std::unique_ptr<ChildProcess>> process =
        ChildProcess::Start(argv, scratch_ + "/tollgate-kube.log");
    ASSERT_TRUE(process.ok()) << process.status();
    adapter_ = std::move(*process);
  }

  void Create(const manifest::ResourceKind& kind, const std::string& ns, const Json& obj) {
    absl::StatusOr<Json> created = kube_->Create(kind, ns, obj);
    ASSERT_TRUE(created.ok()) << created.status();
  }

  Json Get(const manifest::ResourceKind& kind, const std::string& ns, const std::string& name) {
    absl::StatusOr<Json> obj = kube_->Get(kind, ns, name);
    return obj.ok() ? *obj : Json(nullptr);
  }

  // Makes the fake finish the job at once.
  void Complete(const manifest::ResourceKind& kind, const std::string& ns,
                const std::string& name) {
    const Json patch = Json::parse(
        R"({"metadata": {"annotations": {"fake.tollgate.dev/duration-seconds": "0"}}})");
    ASSERT_TRUE(kube_->Patch(kind, ns, name, kubeapi::PatchType::kMerge, patch).ok());
  }

  // Pods are up, whoever started them.
  bool PodsActive(const std::string& ns, const std::string& name) {
    Json job = Get(manifest::JobResource(), ns, name);
    return !job.is_null() && manifest::GetBool(job, {"spec", "suspend"}) == false &&
           manifest::GetInt(job, {"status", "active"}).value_or(0) > 0;
  }
  // Running because Tollgate admitted it (a job created unsuspended runs briefly before the
  // adapter stops it; that is not this).
  bool Running(const std::string& ns, const std::string& name) {
    return PodsActive(ns, name) &&
           StatusOf(manifest::JobResource(), ns, name).rfind("admitted", 0) == 0;
  }
  bool Suspended(const std::string& ns, const std::string& name) {
    Json job = Get(manifest::JobResource(), ns, name);
    return !job.is_null() && manifest::GetBool(job, {"spec", "suspend"}) == true &&
           manifest::GetInt(job, {"status", "active"}).value_or(0) == 0;
  }
  std::string StatusOf(const manifest::ResourceKind& kind, const std::string& ns,
                       const std::string& name) {
    return manifest::Annotation(Get(kind, ns, name), "tollgate.dev/status");
  }

  std::optional<v1::Workload> Workload(const std::string& ns, const std::string& prefix) {
    v1::ListWorkloadsRequest request;
    request.set_namespace_(ns);
    absl::StatusOr<v1::ListWorkloadsResponse> list = admission_->ListWorkloads(request);
    if (!list.ok()) return std::nullopt;
    for (const v1::Workload& wl : list->workloads()) {
      if (wl.metadata().name().rfind(prefix, 0) == 0) return wl;
    }
    return std::nullopt;
  }
  v1::WorkloadState StateOf(const std::string& ns, const std::string& prefix) {
    std::optional<v1::Workload> wl = Workload(ns, prefix);
    return wl.has_value() ? wl->status().state() : v1::WORKLOAD_STATE_UNSPECIFIED;
  }

  std::vector<std::string> EventReasons(const std::string& ns, const std::string& name) {
    std::vector<std::string> reasons;
    absl::StatusOr<kubeapi::ListResult> events = kube_->List(manifest::EventResource(), ns);
    if (!events.ok()) return reasons;
    for (const Json& e : events->items) {
      if (manifest::GetString(e, {"involvedObject", "name"}) == name) {
        reasons.push_back(manifest::GetString(e, {"reason"}));
      }
    }
    return reasons;
  }

  // Samples, until StopSampler, the GPUs held by running Jobs in `ns`: an overcommit would show
  // a double admission or a victim that kept running.
  void StartSampler(const std::string& ns) {
    sampler_ = std::thread([this, ns] {
      // Bounded by StopSampler, which every test reaches through TearDown.
      while (!stop_sampler_.load()) {
        absl::StatusOr<kubeapi::ListResult> jobs = kube_->List(manifest::JobResource(), ns);
        if (jobs.ok()) {
          int64_t gpus = 0;
          for (const Json& job : jobs->items) {
            if (manifest::GetInt(job, {"status", "active"}).value_or(0) == 0) continue;
            const int64_t parallelism = manifest::GetInt(job, {"spec", "parallelism"}).value_or(1);
            const Json* containers =
                manifest::Find(job, {"spec", "template", "spec", "containers"});
            if (containers == nullptr || !containers->is_array() || containers->empty()) continue;
            const std::string g = manifest::GetString(
                containers->front(), {"resources", "requests", "nvidia.com/gpu"}, "0");
            gpus += parallelism * std::stoll(g);
          }
          int64_t seen = max_gpus_.load();
          while (gpus > seen && !max_gpus_.compare_exchange_weak(seen, gpus)) {
          }
        }
        absl::SleepFor(absl::Milliseconds(20));
      }
    });
  }
  void StopSampler() {
    stop_sampler_.store(true);
    if (sampler_.joinable()) sampler_.join();
  }

  // Total quota in use by `cluster_queue`, per resource, as tollgated reports it.
  std::map<std::string, std::string> Usage(const std::string& cluster_queue) {
    v1::ObjectRef ref;
    ref.set_kind(v1::CLUSTER_QUEUE);
    ref.set_name(cluster_queue);
    std::map<std::string, std::string> usage;
    absl::StatusOr<v1::ConfigObject> cq = admission_->GetObject(ref);
    if (!cq.ok()) return usage;
    for (const v1::FlavorUsage& f : cq->cluster_queue().status().flavors_usage()) {
      for (const v1::ResourceUsage& r : f.resources()) usage[r.name()] = r.total();
    }
    return usage;
  }
  bool NoUsage(const std::string& cluster_queue) {
    for (const auto& [resource, total] : Usage(cluster_queue)) {
      if (total != "0") return false;
    }
    return true;
  }

  // The sum of a metric family's samples whose labels include every `labels` pair, as
  // tollgated's /metrics serves them; nullopt when the scrape fails.
  std::optional<double> MetricSum(const std::string& family,
                                  const std::vector<std::string>& labels) {
    CURL* curl = curl_easy_init();
    if (curl == nullptr) return std::nullopt;
    std::string body;
    const std::string url = absl::StrCat("http://127.0.0.1:", metrics_port_, "/metrics");
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
    long code = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_cleanup(curl);
    if (rc != CURLE_OK || code != 200) return std::nullopt;
    double sum = 0;
    for (absl::string_view line : absl::StrSplit(body, '\n')) {
      if (!absl::StartsWith(line, family + "{")) continue;
      const size_t close = line.rfind('}');
      if (close == absl::string_view::npos) continue;
      const absl::string_view label_text = line.substr(0, close);
      bool matches = true;
      for (const std::string& label : labels) {
        matches = matches && absl::StrContains(label_text, label);
      }
      double value = 0;
      if (matches && absl::SimpleAtod(absl::StripAsciiWhitespace(line.substr(close + 1)), &value)) {
        sum += value;
      }
    }
    return sum;
  }

  std::string scratch_;
  std::string data_dir_;
  testing::FakeApiServer apiserver_;
  std::unique_ptr<kubeapi::CurlKubeClient> kube_;
  std::unique_ptr<ChildProcess> tollgated_;
  int tollgate_port_ = 0;
  int metrics_port_ = 0;
  std::unique_ptr<client::GrpcAdmissionClient> admission_;
  std::unique_ptr<ChildProcess> adapter_;
  // Appended to tollgate-kube's flags (set before SetUp).
  std::vector<std::string> extra_adapter_flags_;
  // When not empty, tollgated's --config (Kueue's Configuration; set before SetUp).
  std::string tollgated_config_;
  std::thread sampler_;
  std::atomic<bool> stop_sampler_{false};
  std::atomic<int64_t> max_gpus_{0};
};

TEST_F(KubeE2eTest, TwoTeamsJobsRunWithTheirFlavorsAndFinishingFreesQuota) {
  const Requests eval = {{"cpu", "8"}, {"memory", "32Gi"}, {"nvidia.com/gpu", "2"}};
  // Created running, as a manifest written for a cluster without Kueue's webhook would be:
  // tollgate-kube stops it, then starts it when admitted.
  Json running = MakeJob("mmlu-70b", "eval-queue", eval, 2);
  running["spec"]["suspend"] = false;
  Create(manifest::JobResource(), "team-a", running);
  Create(manifest::JobResource(), "team-b", MakeJob("gsm8k-8b", "eval-queue", eval, 2));
  ASSERT_TRUE(WaitFor(
      [&] { return Running("team-a", "mmlu-70b") && Running("team-b", "gsm8k-8b"); }, kWait));
  // The probes' file (deploy/kubernetes): "synced" once every informer has listed.
  EXPECT_TRUE(WaitFor(
      [&] {
        std::ifstream health(scratch_ + "/kube.health");
        std::string line;
        return std::getline(health, line) && line == "synced";
      },
      kWait));
  Json job = Get(manifest::JobResource(), "team-a", "mmlu-70b");
  const Json& spec = job["spec"]["template"]["spec"];
  EXPECT_EQ(manifest::GetString(spec, {"nodeSelector", "cloud.google.com/gke-accelerator"}),
            "nvidia-tesla-a100");
  EXPECT_EQ(manifest::GetString(spec, {"nodeSelector", "tollgate.dev/pool"}), "cpu");
  EXPECT_EQ(manifest::GetString(spec["tolerations"][0], {"key"}), "nvidia.com/gpu");
  EXPECT_THAT(manifest::Annotation(job, "tollgate.dev/status"), HasSubstr("admitted"));
  // The fake marks the pods ready; tollgate-kube reports it.
  ASSERT_TRUE(WaitFor(
      [&] {
        std::optional<v1::Workload> wl = Workload("team-a", "job-mmlu-70b-");
        return wl.has_value() && wl->status().pods_ready();
      },
      kWait));

  // The cohort's 8 GPUs are taken: a third eval waits, suspended, saying why.
  Create(manifest::JobResource(), "team-a",
         MakeJob("arc-8b", "eval-queue", {{"cpu", "1"}, {"nvidia.com/gpu", "1"}}));
  ASSERT_TRUE(WaitFor([&] { return Suspended("team-a", "arc-8b"); }, kWait));
  ASSERT_TRUE(WaitFor(
      [&] {
        return StatusOf(manifest::JobResource(), "team-a", "arc-8b").rfind("pending", 0) == 0;
      },
      kWait));
  EXPECT_EQ(StateOf("team-a", "job-arc-8b-"), v1::WORKLOAD_STATE_PENDING);

  // Finishing frees the quota.
  Complete(manifest::JobResource(), "team-b", "gsm8k-8b");
  ASSERT_TRUE(WaitFor([&] { return Running("team-a", "arc-8b"); }, kWait));
  EXPECT_EQ(StateOf("team-b", "job-gsm8k-8b-"), v1::WORKLOAD_STATE_FINISHED);
  EXPECT_THAT(StatusOf(manifest::JobResource(), "team-b", "gsm8k-8b"), HasSubstr("finished"));
  EXPECT_THAT(EventReasons("team-a", "arc-8b"), ::testing::IsSupersetOf({"Pending", "Admitted"}));
  EXPECT_THAT(EventReasons("team-a", "mmlu-70b"),
              ::testing::IsSupersetOf({"Suspended", "Admitted"}));
}

// Created suspended, as docs/kubernetes.md asks without Kueue's webhook. A RayJob created running
// races tollgate-kube: the fake's stand-in KubeRay runs it at once, and on a loaded machine its
// two seconds could end before tollgate-kube suspended it, after which it is finished and never
// started with flavors (the wait below then timed out). Created running is covered by
// TwoTeamsJobsRunWithTheirFlavorsAndFinishingFreesQuota, with a job that runs for an hour.
TEST_F(KubeE2eTest, RayJobWithTwoWorkerGroupsGetsEachGroupsFlavors) {
  Json rayjob = {
      {"apiVersion", "ray.io/v1"},
      {"kind", "RayJob"},
      {"metadata",
       {{"name", "sweep"},
        {"labels", Labels("eval-queue", "")},
        {"annotations", {{"fake.tollgate.dev/duration-seconds", "2"}}}}},
      {"spec",
       {{"suspend", true},
        {"entrypoint", "python sweep.py"},
        {"rayClusterSpec",
         {{"headGroupSpec", {{"template", PodTemplate({{"cpu", "2"}, {"memory", "8Gi"}})}}},
          {"workerGroupSpecs",
           Json::array(
               {{{"groupName", "cpu-workers"},
                 {"replicas", 2},
                 {"template", PodTemplate({{"cpu", "4"}})}},
                {{"groupName", "gpu-workers"},
                 {"replicas", 2},
                 {"template", PodTemplate({{"cpu", "4"}, {"nvidia.com/gpu", "1"}})}}})}}}}}};
  Create(manifest::RayJobResource(), "team-a", rayjob);
  ASSERT_TRUE(WaitFor(
      [&] {
        Json obj = Get(manifest::RayJobResource(), "team-a", "sweep");
        return manifest::GetBool(obj, {"spec", "suspend"}) == false &&
               manifest::GetString(obj, {"status", "jobDeploymentStatus"}) != "";
      },
      kWait));
  Json obj = Get(manifest::RayJobResource(), "team-a", "sweep");
  const Json& cluster = obj["spec"]["rayClusterSpec"];
  EXPECT_EQ(manifest::GetString(cluster["headGroupSpec"]["template"]["spec"],
                                {"nodeSelector", "tollgate.dev/pool"}),
            "cpu");
  const Json& cpu_group = cluster["workerGroupSpecs"][0]["template"]["spec"];
  const Json& gpu_group = cluster["workerGroupSpecs"][1]["template"]["spec"];
  EXPECT_EQ(manifest::Find(cpu_group, {"nodeSelector", "cloud.google.com/gke-accelerator"}),
            nullptr);
  EXPECT_EQ(manifest::GetString(gpu_group, {"nodeSelector", "cloud.google.com/gke-accelerator"}),
            "nvidia-tesla-a100");
  // KubeRay's default submitter was made explicit so it could carry the flavor too.
  EXPECT_EQ(manifest::GetString(obj["spec"]["submitterPodTemplate"]["spec"],
                                {"nodeSelector", "tollgate.dev/pool"}),
            "cpu");
  std::optional<v1::Workload> wl = Workload("team-a", "rayjob-sweep-");
  ASSERT_TRUE(wl.has_value());
  ASSERT_EQ(wl->spec().pod_sets_size(), 4);
  EXPECT_EQ(wl->spec().pod_sets(2).name(), "gpu-workers");
  ASSERT_TRUE(WaitFor(
      [&] { return StateOf("team-a", "rayjob-sweep-") == v1::WORKLOAD_STATE_FINISHED; }, kWait));
  ASSERT_TRUE(WaitFor([&] { return NoUsage("team-a-cq"); }, kWait));
}

// Created suspended for the same reason as the RayJob above (it runs for three seconds).
TEST_F(KubeE2eTest, PyTorchJobOfSixteenWorkersIsAdmittedAsOneGang) {
  Json job = {
      {"apiVersion", "kubeflow.org/v1"},
      {"kind", "PyTorchJob"},
      {"metadata",
       {{"name", "finetune"},
        {"labels", Labels("eval-queue", "")},
        {"annotations", {{"fake.tollgate.dev/duration-seconds", "3"}}}}},
      {"spec",
       {{"runPolicy", {{"suspend", true}}},
        {"pytorchReplicaSpecs",
         {{"Master", {{"replicas", 1}, {"template", PodTemplate({{"cpu", "1"}})}}},
          {"Worker",
           {{"replicas", 16}, {"template", PodTemplate({{"cpu", "1"}, {"memory", "4Gi"}})}}}}}}}};
  Create(manifest::PyTorchJobResource(), "team-b", job);
  ASSERT_TRUE(WaitFor(
      [&] {
        return manifest::GetBool(Get(manifest::PyTorchJobResource(), "team-b", "finetune"),
                                 {"spec", "runPolicy", "suspend"}) == false;
      },
      kWait));
  Json obj = Get(manifest::PyTorchJobResource(), "team-b", "finetune");
  for (const char* type : {"Master", "Worker"}) {
    EXPECT_EQ(manifest::GetString(obj["spec"]["pytorchReplicaSpecs"][type]["template"]["spec"],
                                  {"nodeSelector", "tollgate.dev/pool"}),
              "cpu")
        << type;
  }
  std::optional<v1::Workload> wl = Workload("team-b", "pytorchjob-finetune-");
  ASSERT_TRUE(wl.has_value());
  ASSERT_EQ(wl->spec().pod_sets_size(), 2);
  EXPECT_EQ(wl->spec().pod_sets(1).count(), 16);
  ASSERT_EQ(wl->status().admission().pod_set_assignments_size(), 2);
  EXPECT_EQ(wl->status().admission().pod_set_assignments(1).count(), 16);
  ASSERT_TRUE(WaitFor(
      [&] {
        std::optional<v1::Workload> w = Workload("team-b", "pytorchjob-finetune-");
        return w.has_value() &&
               (w->status().pods_ready() || w->status().state() == v1::WORKLOAD_STATE_FINISHED);
      },
      kWait));
  ASSERT_TRUE(WaitFor(
      [&] { return StateOf("team-b", "pytorchjob-finetune-") == v1::WORKLOAD_STATE_FINISHED; },
      kWait));
}

TEST_F(KubeE2eTest, HigherPriorityJobPreemptsAndTheVictimResumesLater) {
  StartSampler("solo");
  const Requests four_gpus = {{"cpu", "4"}, {"nvidia.com/gpu", "4"}};
  Create(manifest::JobResource(), "solo",
         MakeJob("sweep", "solo-queue", four_gpus, 1, "experimental"));
  ASSERT_TRUE(WaitFor([&] { return Running("solo", "sweep"); }, kWait));

  Create(manifest::JobResource(), "solo",
         MakeJob("release-gate", "solo-queue", four_gpus, 1, "production", /*seconds=*/3));
  ASSERT_TRUE(WaitFor([&] { return Running("solo", "release-gate"); }, kWait));
  // The victim was stopped with its original template back.
  Json victim = Get(manifest::JobResource(), "solo", "sweep");
  EXPECT_EQ(manifest::GetBool(victim, {"spec", "suspend"}), true);
  EXPECT_EQ(manifest::Find(victim, {"spec", "template", "spec", "nodeSelector"}), nullptr);
  EXPECT_THAT(EventReasons("solo", "sweep"), ::testing::Contains("Preempted"));
  std::optional<v1::Workload> wl = Workload("solo", "job-sweep-");
  ASSERT_TRUE(wl.has_value());
  EXPECT_GE(wl->status().preemption_count(), 1);

  // The preemptor finishes after 3s; the victim is admitted again and resumes.
  ASSERT_TRUE(WaitFor([&] { return Running("solo", "sweep"); }, kWait));
  EXPECT_EQ(StateOf("solo", "job-release-gate-"), v1::WORKLOAD_STATE_FINISHED);
  Json resumed = Get(manifest::JobResource(), "solo", "sweep");
  EXPECT_EQ(manifest::GetString(resumed["spec"]["template"]["spec"],
                                {"nodeSelector", "cloud.google.com/gke-accelerator"}),
            "nvidia-tesla-a100");
  StopSampler();
  EXPECT_LE(max_gpus_.load(), 4) << "two jobs held the same GPUs at once";
}

TEST_F(KubeE2eTest, RestartsOfEitherBinaryConvergeWithoutLeakingQuota) {
  StartSampler("solo");
  const Requests two_gpus = {{"cpu", "2"}, {"nvidia.com/gpu", "2"}};
  for (const char* name : {"j1", "j2", "j3"}) {
    Create(manifest::JobResource(), "solo", MakeJob(name, "solo-queue", two_gpus));
  }
  ASSERT_TRUE(WaitFor(
      [&] {
        int running = 0;
        for (const char* name : {"j1", "j2", "j3"}) running += Running("solo", name) ? 1 : 0;
        return running == 2;
      },
      kWait));
  const std::string waiting = Running("solo", "j1") ? (Running("solo", "j2") ? "j3" : "j2") : "j1";
  const std::string first = waiting == "j1" ? "j2" : "j1";
  const std::string second = waiting == "j3" ? "j2" : "j3";

  // The adapter dies; meanwhile one job completes and another is deleted.
  ASSERT_TRUE(adapter_->Kill().ok());
  Complete(manifest::JobResource(), "solo", first);
  ASSERT_TRUE(WaitFor(
      [&] {
        return manifest::HasTrueCondition(Get(manifest::JobResource(), "solo", first), "Complete");
      },
      kWait));
  ASSERT_TRUE(kube_->Delete(manifest::JobResource(), "solo", second).ok());
  Create(manifest::JobResource(), "solo",
         MakeJob("j4", "solo-queue", {{"cpu", "1"}, {"nvidia.com/gpu", "1"}}));
  ASSERT_NO_FATAL_FAILURE(StartAdapter());
  ASSERT_TRUE(WaitFor([&] { return Running("solo", waiting) && Running("solo", "j4"); }, kWait));
  ASSERT_TRUE(WaitFor(
      [&] { return StateOf("solo", "job-" + first + "-") == v1::WORKLOAD_STATE_FINISHED; }, kWait));
  ASSERT_TRUE(WaitFor([&] { return !Workload("solo", "job-" + second + "-").has_value(); }, kWait));

  // tollgated dies and comes back on the same port and data; meanwhile a job completes.
  ASSERT_TRUE(tollgated_->Kill().ok());
  Complete(manifest::JobResource(), "solo", waiting);
  ASSERT_NO_FATAL_FAILURE(StartTollgated(tollgate_port_));
  ASSERT_TRUE(WaitFor(
      [&] { return StateOf("solo", "job-" + waiting + "-") == v1::WORKLOAD_STATE_FINISHED; },
      kWait));

  // Both die; a new job is created while neither runs.
  ASSERT_TRUE(adapter_->Kill().ok());
  ASSERT_TRUE(tollgated_->Kill().ok());
  Create(manifest::JobResource(), "solo",
         MakeJob("j5", "solo-queue", two_gpus, 1, "", /*seconds=*/1));
  // The adapter comes back first and must wait for tollgated.
  ASSERT_NO_FATAL_FAILURE(StartAdapter());
  ASSERT_NO_FATAL_FAILURE(StartTollgated(tollgate_port_));
  ASSERT_TRUE(
      WaitFor([&] { return StateOf("solo", "job-j5-") == v1::WORKLOAD_STATE_FINISHED; }, kWait));

  Complete(manifest::JobResource(), "solo", "j4");
  ASSERT_TRUE(
      WaitFor([&] { return StateOf("solo", "job-j4-") == v1::WORKLOAD_STATE_FINISHED; }, kWait));
  ASSERT_TRUE(WaitFor([&] { return NoUsage("solo-cq"); }, kWait)) << "quota leaked";
  StopSampler();
  EXPECT_LE(max_gpus_.load(), 4) << "more GPUs running than the queue has";
}

TEST_F(KubeE2eTest, ExpiredWatchesRelistAndDeletionFreesQuota) {
  const Requests four_gpus = {{"cpu", "1"}, {"nvidia.com/gpu", "4"}};
  Create(manifest::JobResource(), "solo", MakeJob("holder", "solo-queue", four_gpus));
  ASSERT_TRUE(WaitFor([&] { return Running("solo", "holder"); }, kWait));
  // Every watch is cut and the history forgotten: the adapter's next watch gets 410 Gone.
  ASSERT_TRUE(testing::PostFake(apiserver_, "/fake/compact").ok());
  ASSERT_TRUE(testing::PostFake(apiserver_, "/fake/drop-watches").ok());
  Create(manifest::JobResource(), "solo", MakeJob("waiter", "solo-queue", four_gpus));
  // Seen only through the re-list: the adapter's old watch is gone and its version expired.
  ASSERT_TRUE(WaitFor(
      [&] { return StatusOf(manifest::JobResource(), "solo", "waiter").rfind("pending", 0) == 0; },
      kWait));
  ASSERT_TRUE(
      WaitFor([&] { return adapter_->Logs().find("relisting") != std::string::npos; }, kWait));
  ASSERT_TRUE(kube_->Delete(manifest::JobResource(), "solo", "holder").ok());
  ASSERT_TRUE(WaitFor([&] { return Running("solo", "waiter"); }, kWait));
  EXPECT_FALSE(Workload("solo", "job-holder-").has_value());
}

TEST_F(KubeE2eTest, UnlabeledJobsAreLeftAlone) {
  Json job = MakeJob("plain", "x", {{"cpu", "1"}});
  job["metadata"].erase("labels");
  job["spec"]["suspend"] = false;
  Create(manifest::JobResource(), "team-a", job);
  Create(manifest::JobResource(), "team-a", MakeJob("queued", "eval-queue", {{"cpu", "1"}}));
  ASSERT_TRUE(WaitFor([&] { return Running("team-a", "queued"); }, kWait));
  EXPECT_TRUE(PodsActive("team-a", "plain"));
  EXPECT_EQ(StatusOf(manifest::JobResource(), "team-a", "plain"), "");
}

// Kueue's WorkloadPriorityClassDefaulting: once the WorkloadPriorityClass "default" exists, a new
// job naming no class is labelled with it and queued at its value.
TEST_F(KubeE2eTest, AJobNamingNoPriorityClassRunsAtTheDefaultClassValue) {
  v1::ApplyRequest apply;
  v1::WorkloadPriorityClass* wpc = apply.add_objects()->mutable_workload_priority_class();
  wpc->mutable_metadata()->set_name("default");
  wpc->set_value(7);
  ASSERT_TRUE(admission_->Apply(apply).ok());
  Create(manifest::JobResource(), "team-a", MakeJob("unranked", "eval-queue", {{"cpu", "1"}}));
  ASSERT_TRUE(WaitFor([&] { return Running("team-a", "unranked"); }, kWait));
  EXPECT_EQ(manifest::GetString(Get(manifest::JobResource(), "team-a", "unranked"),
                                {"metadata", "labels", "kueue.x-k8s.io/priority-class"}),
            "default");
  std::optional<v1::Workload> wl = Workload("team-a", "job-unranked-");
  ASSERT_TRUE(wl.has_value());
  EXPECT_EQ(wl->spec().priority_class_name(), "default");
  EXPECT_EQ(wl->status().priority(), 7);
}

// --- The ProvisioningRequest check: the test plays cluster-autoscaler ---------------------------

namespace prov = provisioning;

// Writes a ProvisioningRequest's status as cluster-autoscaler does (the /status subresource,
// which kubeapi::KubeClient does not reach).
absl::Status PatchStatus(const std::string& url, const manifest::ResourceKind& kind,
                         const std::string& ns, const std::string& name, const Json& status) {
  CURL* curl = curl_easy_init();
  if (curl == nullptr) return absl::InternalError("curl_easy_init failed");
  const std::string target = url + kubeapi::ResourcePath(kind, ns, name) + "/status";
  const std::string body = manifest::Dump(Json{{"status", status}});
  struct curl_slist* headers = nullptr;
  headers = curl_slist_append(headers, "Content-Type: application/merge-patch+json");
  headers = curl_slist_append(headers, absl::StrCat("Authorization: Bearer ", kToken).c_str());
  curl_easy_setopt(curl, CURLOPT_URL, target.c_str());
  curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, "PATCH");
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_PROXY, "");
  curl_easy_setopt(curl, CURLOPT_TIMEOUT, 10L);
  curl_easy_setopt(
      curl, CURLOPT_WRITEFUNCTION, +[](char*, size_t size, size_t n, void*) { return size * n; });
  const CURLcode rc = curl_easy_perform(curl);
  long code = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &code);
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  if (rc != CURLE_OK || code != 200) {
    return absl::UnavailableError(absl::StrCat("PATCH ", target, ": HTTP ", code));
  }
  return absl::OkStatus();
}

Json Conditions(const std::vector<std::pair<std::string, std::string>>& true_conditions) {
  Json out = Json::array();
  for (const auto& [type, message] : true_conditions) {
    out.push_back({{"type", type},
                   {"status", "True"},
                   {"reason", type},
                   {"message", message},
                   {"lastTransitionTime", "2026-11-29T00:00:00Z"}});
  }
  return out;
}

class ProvisioningE2eTest : public KubeE2eTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(KubeE2eTest::SetUp());
    // Backoff of 1s (then 2s) so a retry comes back at once.
    Create(prov::ProvisioningRequestConfigResource(), "", Json::parse(R"({
        "apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ProvisioningRequestConfig",
        "metadata": {"name": "capacity-config"},
        "spec": {"provisioningClassName": "check-capacity.autoscaling.x-k8s.io",
                 "parameters": {"ValidUntilSeconds": "600"},
                 "retryStrategy": {"backoffLimitCount": 2, "backoffBaseSeconds": 1,
                                   "backoffMaxSeconds": 2},
                 "podSetUpdates": {"nodeSelector": [
                   {"key": "topology.kubernetes.io/zone",
                    "valueFromProvisioningClassDetail": "zone"}]}}})"));
    // The controller finds the config and activates the check.
    ASSERT_TRUE(WaitFor([&] { return CheckActive(); }, kWait));
  }

  bool CheckActive() {
    v1::ObjectRef ref;
    ref.set_kind(v1::ADMISSION_CHECK);
    ref.set_name("capacity");
    absl::StatusOr<v1::ConfigObject> check = admission_->GetObject(ref);
    if (!check.ok()) return false;
    for (const v1::Condition& c : check->admission_check().status().conditions()) {
      if (c.type() == "Active") return c.status() == "True";
    }
    return false;
  }

  Json MakeProvJob(const std::string& name) {
    Json job = MakeJob(name, "prov-queue", {{"cpu", "1"}, {"nvidia.com/gpu", "1"}}, 2);
    job["metadata"]["annotations"]["provreq.kueue.x-k8s.io/maxRunDurationSeconds"] = "900";
    return job;
  }

  std::string WorkloadName(const std::string& job) {
    std::string name;
    EXPECT_TRUE(WaitFor(
        [&] {
          std::optional<v1::Workload> wl = Workload("prov", "job-" + job + "-");
          if (wl.has_value()) name = wl->metadata().name();
          return wl.has_value();
        },
        kWait));
    return name;
  }

  std::optional<v1::AdmissionCheckState> Check(const std::string& job) {
    std::optional<v1::Workload> wl = Workload("prov", "job-" + job + "-");
    if (!wl.has_value()) return std::nullopt;
    for (const v1::AdmissionCheckState& s : wl->status().admission_checks()) {
      if (s.name() == "capacity") return s;
    }
    return std::nullopt;
  }

  bool Exists(const manifest::ResourceKind& kind, const std::string& name) {
    return !Get(kind, "prov", name).is_null();
  }
};

TEST_F(ProvisioningE2eTest, ProvisionedJobRunsWithTheAnnotationsAndRevokingDeactivatesIt) {
  Create(manifest::JobResource(), "prov", MakeProvJob("train"));
  const std::string wl = WorkloadName("train");
  const std::string request = prov::RequestName(wl, "capacity", 1);
  ASSERT_TRUE(WaitFor([&] { return Exists(prov::ProvisioningRequestResource(), request); }, kWait));
  // Quota is reserved, but the job waits for its nodes.
  EXPECT_EQ(StateOf("prov", "job-train-"), v1::WORKLOAD_STATE_QUOTA_RESERVED);
  EXPECT_TRUE(Suspended("prov", "train"));
  const Json pr = Get(prov::ProvisioningRequestResource(), "prov", request);
  EXPECT_EQ(pr["spec"]["provisioningClassName"], "check-capacity.autoscaling.x-k8s.io");
  EXPECT_EQ(pr["spec"]["parameters"],
            Json::parse(R"({"ValidUntilSeconds": "600", "maxRunDurationSeconds": "900"})"));
  ASSERT_EQ(pr["spec"]["podSets"].size(), 1u);
  EXPECT_EQ(pr["spec"]["podSets"][0]["count"], 2);
  const std::string template_name = prov::PodTemplateName(request, "main");
  EXPECT_EQ(pr["spec"]["podSets"][0]["podTemplateRef"]["name"], template_name);
  // The template carries the flavor's placement, so the autoscaler books the right nodes.
  const Json pt = Get(prov::PodTemplateResource(), "prov", template_name);
  ASSERT_FALSE(pt.is_null());
  EXPECT_EQ(manifest::GetString(
                pt, {"template", "spec", "nodeSelector", "cloud.google.com/gke-accelerator"}),
            "nvidia-tesla-a100");

  // An estimate first, then the capacity.
  ASSERT_TRUE(PatchStatus(apiserver_.url(), prov::ProvisioningRequestResource(), "prov", request,
                          {{"conditions", Json::parse(R"([
      {"type": "Accepted", "status": "True", "reason": "Accepted", "message": "",
       "lastTransitionTime": "2026-11-29T00:00:00Z"},
      {"type": "Provisioned", "status": "False", "reason": "Waiting",
       "message": "ETA 2026-11-29T01:00:00Z", "lastTransitionTime": "2026-11-29T00:00:00Z"}])")}})
                  .ok());
  ASSERT_TRUE(WaitFor(
      [&] {
        std::optional<v1::AdmissionCheckState> s = Check("train");
        return s.has_value() && s->message() == "ETA 2026-11-29T01:00:00Z";
      },
      kWait));
  EXPECT_EQ(Check("train")->state(), "Pending");
  ASSERT_TRUE(
      PatchStatus(apiserver_.url(), prov::ProvisioningRequestResource(), "prov", request,
                  {{"conditions", Conditions({{"Accepted", ""}, {"Provisioned", "on 2 nodes"}})},
                   {"provisioningClassDetails", {{"zone", "us-central1-b"}}}})
          .ok());
  ASSERT_TRUE(WaitFor([&] { return Running("prov", "train"); }, kWait));
  EXPECT_EQ(StateOf("prov", "job-train-"), v1::WORKLOAD_STATE_ADMITTED);
  EXPECT_EQ(Check("train")->state(), "Ready");
  // Kueue's metrics: one reservation, then one admission after the check's wait.
  const std::vector<std::string> prov_cq = {R"(cluster_queue="prov-cq")"};
  EXPECT_EQ(MetricSum("kueue_quota_reserved_workloads_total", prov_cq).value_or(-1), 1);
  EXPECT_EQ(MetricSum("kueue_admitted_workloads_total", prov_cq).value_or(-1), 1);
  EXPECT_EQ(MetricSum("kueue_admission_checks_wait_time_seconds_count", prov_cq).value_or(-1), 1);
  const Json job = Get(manifest::JobResource(), "prov", "train");
  const Json& tmpl = job["spec"]["template"];
  EXPECT_EQ(manifest::GetString(tmpl, {"metadata", "annotations",
                                       "autoscaling.x-k8s.io/consume-provisioning-request"}),
            request);
  EXPECT_EQ(manifest::GetString(
                tmpl, {"metadata", "annotations", "autoscaling.x-k8s.io/provisioning-class-name"}),
            "check-capacity.autoscaling.x-k8s.io");
  EXPECT_EQ(manifest::GetString(tmpl, {"spec", "nodeSelector", "topology.kubernetes.io/zone"}),
            "us-central1-b");

  // The autoscaler takes the nodes back: the workload is deactivated and its job stopped.
  ASSERT_TRUE(PatchStatus(apiserver_.url(), prov::ProvisioningRequestResource(), "prov", request,
                          {{"conditions", Conditions({{"Accepted", ""},
                                                      {"Provisioned", "on 2 nodes"},
                                                      {"CapacityRevoked", "reclaimed"}})}})
                  .ok());
  ASSERT_TRUE(WaitFor(
      [&] {
        std::optional<v1::Workload> w = Workload("prov", "job-train-");
        return w.has_value() && w->status().deactivated() && Suspended("prov", "train");
      },
      kWait));
  // The eviction that followed reset the check to Pending (as Kueue's does); the reason stays.
  EXPECT_EQ(Check("train")->message(), "Reset to Pending after eviction. Previously: Rejected");
  EXPECT_THAT(Workload("prov", "job-train-")->status().DebugString(),
              HasSubstr(R"(AdmissionCheck in Rejected state: \"capacity\" (reclaimed))"));
  EXPECT_EQ(MetricSum("kueue_evicted_workloads_total",
                      {R"(cluster_queue="prov-cq")", R"(reason="Deactivated")",
                       R"(underlying_cause="AdmissionCheck")"})
                .value_or(-1),
            1);
  // Out of quota, its request is gone.
  ASSERT_TRUE(
      WaitFor([&] { return !Exists(prov::ProvisioningRequestResource(), request); }, kWait));
  EXPECT_FALSE(Exists(prov::PodTemplateResource(), template_name));
}

TEST_F(ProvisioningE2eTest, AFailedRequestIsRetriedWithANewAttemptThatSucceeds) {
  Create(manifest::JobResource(), "prov", MakeProvJob("flaky"));
  const std::string wl = WorkloadName("flaky");
  const std::string first = prov::RequestName(wl, "capacity", 1);
  ASSERT_TRUE(WaitFor([&] { return Exists(prov::ProvisioningRequestResource(), first); }, kWait));
  ASSERT_TRUE(PatchStatus(apiserver_.url(), prov::ProvisioningRequestResource(), "prov", first,
                          {{"conditions", Conditions({{"Failed", "no capacity"}})}})
                  .ok());
  // Retry: evicted, its request deleted, requeued after the 1s backoff, and a second attempt.
  const std::string second = prov::RequestName(wl, "capacity", 2);
  ASSERT_TRUE(WaitFor([&] { return Exists(prov::ProvisioningRequestResource(), second); }, kWait));
  EXPECT_TRUE(WaitFor([&] { return !Exists(prov::ProvisioningRequestResource(), first); }, kWait));
  std::optional<v1::AdmissionCheckState> check = Check("flaky");
  ASSERT_TRUE(check.has_value());
  EXPECT_EQ(check->retry_count(), 1);
  EXPECT_TRUE(Suspended("prov", "flaky"));
  EXPECT_EQ(MetricSum("kueue_evicted_workloads_total",
                      {R"(cluster_queue="prov-cq")", R"(reason="AdmissionCheck")"})
                .value_or(-1),
            1);

  ASSERT_TRUE(PatchStatus(apiserver_.url(), prov::ProvisioningRequestResource(), "prov", second,
                          {{"conditions", Conditions({{"Provisioned", "ok"}})}})
                  .ok());
  ASSERT_TRUE(WaitFor([&] { return Running("prov", "flaky"); }, kWait));
  EXPECT_EQ(manifest::GetString(Get(manifest::JobResource(), "prov", "flaky"),
                                {"spec", "template", "metadata", "annotations",
                                 "autoscaling.x-k8s.io/consume-provisioning-request"}),
            second);

  // Finished: the request goes.
  Complete(manifest::JobResource(), "prov", "flaky");
  ASSERT_TRUE(
      WaitFor([&] { return StateOf("prov", "job-flaky-") == v1::WORKLOAD_STATE_FINISHED; }, kWait));
  ASSERT_TRUE(WaitFor([&] { return !Exists(prov::ProvisioningRequestResource(), second); }, kWait));
}

TEST_F(ProvisioningE2eTest, ABookingThatExpiresBeforeAdmissionIsRetried) {
  Create(manifest::JobResource(), "prov", MakeProvJob("late"));
  const std::string wl = WorkloadName("late");
  const std::string first = prov::RequestName(wl, "capacity", 1);
  ASSERT_TRUE(WaitFor([&] { return Exists(prov::ProvisioningRequestResource(), first); }, kWait));
  // The autoscaler booked the capacity, but the booking lapsed before the pods were created.
  ASSERT_TRUE(
      PatchStatus(apiserver_.url(), prov::ProvisioningRequestResource(), "prov", first,
                  {{"conditions", Conditions({{"Accepted", ""}, {"BookingExpired", "lapsed"}})}})
          .ok());
  const std::string second = prov::RequestName(wl, "capacity", 2);
  ASSERT_TRUE(WaitFor([&] { return Exists(prov::ProvisioningRequestResource(), second); }, kWait));
  std::optional<v1::AdmissionCheckState> check = Check("late");
  ASSERT_TRUE(check.has_value());
  EXPECT_EQ(check->retry_count(), 1);
  EXPECT_THAT(Workload("prov", "job-late-")->status().DebugString(),
              HasSubstr("Retrying after booking expired: lapsed"));
  EXPECT_TRUE(Suspended("prov", "late"));
  ASSERT_TRUE(PatchStatus(apiserver_.url(), prov::ProvisioningRequestResource(), "prov", second,
                          {{"conditions", Conditions({{"Provisioned", "ok"}})}})
                  .ok());
  ASSERT_TRUE(WaitFor([&] { return Running("prov", "late"); }, kWait));
}

TEST_F(ProvisioningE2eTest, FailingPastTheBackoffLimitRejects) {
  Create(manifest::JobResource(), "prov", MakeProvJob("doomed"));
  const std::string wl = WorkloadName("doomed");
  // backoffLimitCount 2: attempts 1 and 2 are retried, attempt 3 rejects.
  for (int attempt = 1; attempt <= 3; ++attempt) {
    const std::string name = prov::RequestName(wl, "capacity", attempt);
    ASSERT_TRUE(WaitFor([&] { return Exists(prov::ProvisioningRequestResource(), name); }, kWait))
        << "attempt " << attempt;
    ASSERT_TRUE(PatchStatus(apiserver_.url(), prov::ProvisioningRequestResource(), "prov", name,
                            {{"conditions", Conditions({{"Failed", "stockout"}})}})
                    .ok());
  }
  ASSERT_TRUE(WaitFor(
      [&] {
        std::optional<v1::Workload> w = Workload("prov", "job-doomed-");
        return w.has_value() && w->status().deactivated();
      },
      kWait));
  EXPECT_EQ(Check("doomed")->message(), "Reset to Pending after eviction. Previously: Rejected");
  EXPECT_THAT(Workload("prov", "job-doomed-")->status().DebugString(),
              HasSubstr(R"(AdmissionCheck in Rejected state: \"capacity\" (stockout))"));
  EXPECT_TRUE(Suspended("prov", "doomed"));
}

// Topology-aware scheduling through tollgate-kube (docs/topology.md): Nodes and the pods it
// does not place feed tollgated's inventory; a rack-required Job is placed where its pods fit,
// its pods are created gated and released onto their domains by completion index.
class TopologyE2eTest : public KubeE2eTest {
 protected:
  void SetUp() override {
    extra_adapter_flags_ = {"--enable-topology", "--topology-resync-period=1s",
                            "--frameworks=batch/job,pod"};
    ASSERT_NO_FATAL_FAILURE(KubeE2eTest::SetUp());
    inventory_ = std::make_unique<client::TollgateClient>(
        absl::StrCat("127.0.0.1:", tollgate_port_), absl::Seconds(5));
    // Racks r1 (n1, n2) and r2 (n3, n4), two CPUs a node; n5 is outside the pool.
    for (int i = 1; i <= 5; ++i) {
      const std::string name = absl::StrCat("n", i);
      Json labels = {{"kubernetes.io/hostname", name}, {"cloud.com/rack", i <= 2 ? "r1" : "r2"}};
      if (i <= 4) labels["pool"] = "tas";
      Create(manifest::NodeResource(), "",
             {{"apiVersion", "v1"},
              {"kind", "Node"},
              {"metadata", {{"name", name}, {"labels", labels}}}});
      // As the kubelet reports it, through the status subresource.
      ASSERT_TRUE(
          PatchStatus(apiserver_.url(), manifest::NodeResource(), "", name,
                      {{"allocatable", {{"cpu", "2"}, {"pods", "110"}}},
                       {"conditions", Json::array({{{"type", "Ready"}, {"status", "True"}}})}})
              .ok());
    }
  }

  std::optional<v1::NodeSummary> InventoryNode(const std::string& name) {
    absl::StatusOr<v1::ListNodesResponse> nodes = inventory_->ListNodes({});
    if (!nodes.ok()) return std::nullopt;
    for (const v1::NodeSummary& node : nodes->nodes()) {
      if (node.node().metadata().name() == name) return node;
    }
    return std::nullopt;
  }

  // The host of each rank, in the assignment's order, of the workload's first pod set (empty
  // while it is not placed).
  static std::vector<std::string> HostsByRank(const std::optional<v1::Workload>& wl) {
    std::vector<std::string> out;
    if (!wl.has_value() || wl->status().admission().pod_set_assignments_size() == 0) return out;
    for (const v1::TopologyDomainAssignment& d :
         wl->status().admission().pod_set_assignments(0).topology_assignment().domains()) {
      for (int i = 0; i < d.count(); ++i) out.push_back(d.values(d.values_size() - 1));
    }
    return out;
  }

  // What the Job controller would create: pod `index` of an Indexed Job from its template, named
  // <job>-<index><suffix>, with `annotations` added.
  void CreateJobPod(const Json& job, int index, const std::string& suffix = "",
                    const Json& annotations = Json::object()) {
    const Json& tmpl = job["spec"]["template"];
    Json pod = {{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata", tmpl.value("metadata", Json::object())},
                {"spec", tmpl["spec"]}};
    pod["metadata"]["name"] =
        absl::StrCat(manifest::GetString(job, {"metadata", "name"}), "-", index, suffix);
    pod["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"] = absl::StrCat(index);
    for (auto it = annotations.begin(); it != annotations.end(); ++it) {
      pod["metadata"]["annotations"][it.key()] = it.value();
    }
    Create(manifest::PodResource(), "topo", pod);
  }

  // A rack-required Indexed Job "heal" of two pods, admitted, its pods created, released onto
  // their hosts and bound there (but for `unbound_ranks`: the fake's scheduler holds those back
  // for an hour, so they stay released and unbound), and seen by tollgate-kube: the start of the
  // node failure tests. Sets `placed` to the hosts by rank and `workload` to "topo/NAME".
  void PlaceHealJob(std::vector<std::string>* placed, std::string* workload,
                    const std::set<int>& unbound_ranks = {}) {
    ASSERT_TRUE(WaitFor([&] { return InventoryNode("n4").has_value(); }, kWait));
    Json job = MakeJob("heal", "tas-queue", {{"cpu", "1"}}, 2);
    job["spec"]["completions"] = 2;
    job["spec"]["completionMode"] = "Indexed";
    job["spec"]["template"]["metadata"]["annotations"]["kueue.x-k8s.io/podset-required-topology"] =
        "cloud.com/rack";
    Create(manifest::JobResource(), "topo", job);
    ASSERT_TRUE(WaitFor([&] { return PodsActive("topo", "heal"); }, kWait));
    *placed = HostsByRank(Workload("topo", "job-heal-"));
    ASSERT_EQ(placed->size(), 2u);
    *workload = absl::StrCat("topo/", Workload("topo", "job-heal-")->metadata().name());
    job = Get(manifest::JobResource(), "topo", "heal");
    for (int i = 0; i < 2; ++i) {
      const Json held = {{"fake.tollgate.dev/bind-delay-seconds", "3600"}};
      ASSERT_NO_FATAL_FAILURE(
          CreateJobPod(job, i, "", unbound_ranks.count(i) > 0 ? held : Json::object()));
    }
    ASSERT_TRUE(WaitFor(
        [&] {
          for (int i = 0; i < 2; ++i) {
            Json pod = Get(manifest::PodResource(), "topo", absl::StrCat("heal-", i));
            if (pod.is_null() || manifest::Find(pod, {"spec", "schedulingGates"}) != nullptr) {
              return false;
            }
            // Bound to its host by the scheduler (the kubelet then runs it), unless held back.
            if (unbound_ranks.count(i) == 0 &&
                manifest::GetString(pod, {"spec", "nodeName"}) != (*placed)[i]) {
              return false;
            }
          }
          return true;
        },
        kWait));
    // A barrier: tollgate-kube reads pods in order, so once it reports a pod made after the
    // releases, it has seen them (the node failure must not overtake them).
    Create(manifest::PodResource(), "topo", Json::parse(R"({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "barrier"},
        "spec": {"nodeName": "n5",
                 "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}})"));
    ASSERT_TRUE(WaitFor(
        [&] {
          std::optional<v1::NodeSummary> n5 = InventoryNode("n5");
          return n5.has_value() && n5->reported_pods() == 1;
        },
        kWait));
  }

  // After the node `broken` (a host of `placed`) stopped taking the heal job's released,
  // unbound pods: each of them there ends Failed with Kueue's TerminatedByKueue condition and
  // event, the placement there is replaced inside the rack, pods elsewhere are left alone, and
  // the pods the job controller creates instead are released onto their rank's new host.
  void ExpectUnboundPodsFailedAndReplaced(const std::vector<std::string>& placed,
                                          const std::string& broken) {
    auto hosts = [&] { return HostsByRank(Workload("topo", "job-heal-")); };
    // The pod's TerminatedByKueue condition once it is Failed; null before.
    auto termination = [&](const std::string& pod_name) {
      Json pod = Get(manifest::PodResource(), "topo", pod_name);
      if (pod.is_null() || manifest::GetString(pod, {"status", "phase"}) != "Failed") {
        return Json(nullptr);
      }
      const Json* condition = manifest::FindCondition(pod, "TerminatedByKueue");
      return condition == nullptr ? Json(nullptr) : *condition;
    };
    for (int i = 0; i < 2; ++i) {
      const std::string name = absl::StrCat("heal-", i);
      if (placed[i] != broken) continue;
      ASSERT_TRUE(WaitFor([&] { return !termination(name).is_null(); }, kWait))
          << Get(manifest::PodResource(), "topo", name).dump();
      const Json condition = termination(name);
      EXPECT_EQ(manifest::GetString(condition, {"status"}), "True");
      EXPECT_EQ(manifest::GetString(condition, {"reason"}), "UnschedulableOnAssignedNode");
      EXPECT_EQ(manifest::GetString(condition, {"message"}),
                "Pod terminated by Kueue NodeController due to node taint");
      // Kueue's event, on the pod.
      Json event;
      ASSERT_TRUE(WaitFor(
          [&] {
            absl::StatusOr<kubeapi::ListResult> events =
                kube_->List(manifest::EventResource(), "topo");
            if (!events.ok()) return false;
            for (const Json& e : events->items) {
              if (manifest::GetString(e, {"involvedObject", "name"}) == name &&
                  manifest::GetString(e, {"reason"}) == "PodTerminatedByKueue") {
                event = e;
              }
            }
            return !event.is_null();
          },
          kWait));
      EXPECT_EQ(manifest::GetString(event, {"involvedObject", "kind"}), "Pod");
      EXPECT_EQ(manifest::GetString(event, {"type"}), "Normal");
      EXPECT_EQ(manifest::GetString(event, {"action"}), "PodTerminated");
      EXPECT_EQ(manifest::GetString(event, {"message"}),
                "Pod terminated by Kueue NodeController due to node taint");
    }
    // The placement there failed at once and was replaced inside the rack.
    ASSERT_TRUE(WaitFor([&] { return !absl::c_linear_search(hosts(), broken); }, kWait))
        << Workload("topo", "job-heal-")->DebugString();
    EXPECT_EQ(StateOf("topo", "job-heal-"), v1::WORKLOAD_STATE_ADMITTED);
    const std::vector<std::string> now_placed = hosts();
    ASSERT_EQ(now_placed.size(), 2u);
    for (const std::string& host : now_placed) {
      EXPECT_EQ(host <= "n2", broken <= "n2") << host << " is outside the rack of " << broken;
    }
    // A pod on a healthy host is left alone.
    for (int i = 0; i < 2; ++i) {
      if (placed[i] == broken) continue;
      Json pod = Get(manifest::PodResource(), "topo", absl::StrCat("heal-", i));
      EXPECT_EQ(manifest::GetString(pod, {"status", "phase"}), "Pending") << pod.dump();
    }

    // The job controller replaces the failed pods; they go to their rank's new host.
    const Json job = Get(manifest::JobResource(), "topo", "heal");
    for (int i = 0; i < 2; ++i) {
      if (placed[i] != broken) continue;
      ASSERT_NO_FATAL_FAILURE(CreateJobPod(job, i, "-again"));
      const std::string name = absl::StrCat("heal-", i, "-again");
      ASSERT_TRUE(WaitFor(
          [&] {
            Json pod = Get(manifest::PodResource(), "topo", name);
            return !pod.is_null() && manifest::Find(pod, {"spec", "schedulingGates"}) == nullptr;
          },
          kWait))
          << name;
      Json pod = Get(manifest::PodResource(), "topo", name);
      EXPECT_EQ(manifest::GetString(pod, {"spec", "nodeSelector", "kubernetes.io/hostname"}),
                now_placed[i])
          << name;
      EXPECT_NE(now_placed[i], broken);
    }
  }

  std::unique_ptr<client::TollgateClient> inventory_;
};

TEST_F(TopologyE2eTest, PodsOfARackRequiredJobAreReleasedOntoTheRackThatHasRoom) {
  ASSERT_TRUE(WaitFor([&] { return InventoryNode("n5").has_value(); }, kWait));
  // A pod Tollgate does not place takes a CPU of n1: rack r1 has 3 free, r2 has 4.
  Create(manifest::PodResource(), "topo", Json::parse(R"({
      "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "daemon"},
      "spec": {"nodeName": "n1",
               "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}})"));
  ASSERT_TRUE(WaitFor(
      [&] {
        std::optional<v1::NodeSummary> n1 = InventoryNode("n1");
        return n1.has_value() && n1->reported_pods() == 1;
      },
      kWait));

  Json job = MakeJob("train", "tas-queue", {{"cpu", "1"}}, 4);
  job["spec"]["completions"] = 4;
  job["spec"]["completionMode"] = "Indexed";
  job["spec"]["template"]["metadata"]["annotations"]["kueue.x-k8s.io/podset-required-topology"] =
      "cloud.com/rack";
  Create(manifest::JobResource(), "topo", job);
  const bool started = WaitFor([&] { return PodsActive("topo", "train"); }, kWait);
  std::optional<v1::Workload> wl = Workload("topo", "job-train-");
  ASSERT_TRUE(started) << (wl.has_value() ? wl->DebugString() : "no workload");
  ASSERT_TRUE(wl.has_value());
  const v1::TopologyAssignment& assignment =
      wl->status().admission().pod_set_assignments(0).topology_assignment();
  const std::vector<std::string> host_of_rank = HostsByRank(wl);
  ASSERT_EQ(host_of_rank.size(), 4u) << assignment.DebugString();
  for (const std::string& host : host_of_rank) {
    EXPECT_TRUE(host == "n3" || host == "n4") << assignment.DebugString();
  }

  // The running Job's template holds its pods back until they have a domain.
  job = Get(manifest::JobResource(), "topo", "train");
  EXPECT_EQ(job["spec"]["template"]["spec"]["schedulingGates"],
            Json::parse(R"([{"name": "kueue.x-k8s.io/topology"}])"));
  EXPECT_EQ(manifest::GetString(
                job, {"spec", "template", "metadata", "annotations", "kueue.x-k8s.io/workload"}),
            wl->metadata().name());
  for (int i = 0; i < 4; ++i) ASSERT_NO_FATAL_FAILURE(CreateJobPod(job, i));
  for (int i = 0; i < 4; ++i) {
    const std::string name = absl::StrCat("train-", i);
    ASSERT_TRUE(WaitFor(
        [&] {
          Json pod = Get(manifest::PodResource(), "topo", name);
          return !pod.is_null() && manifest::Find(pod, {"spec", "schedulingGates"}) == nullptr;
        },
        kWait))
        << name;
    Json pod = Get(manifest::PodResource(), "topo", name);
    EXPECT_EQ(manifest::GetString(pod, {"spec", "nodeSelector", "kubernetes.io/hostname"}),
              host_of_rank[i])
        << name;
    // The flavor's node labels stay.
    EXPECT_EQ(manifest::GetString(pod, {"spec", "nodeSelector", "pool"}), "tas") << name;
  }

  // A node that leaves the cluster leaves the inventory; a pod that ends stops counting.
  ASSERT_TRUE(kube_->Delete(manifest::NodeResource(), "", "n5").ok());
  ASSERT_TRUE(kube_->Delete(manifest::PodResource(), "topo", "daemon").ok());
  ASSERT_TRUE(WaitFor(
      [&] {
        std::optional<v1::NodeSummary> n1 = InventoryNode("n1");
        return !InventoryNode("n5").has_value() && n1.has_value() && n1->reported_pods() == 0;
      },
      kWait));
}

// Kueue's pod webhook creates every pod with both gates; Tollgate's users (or the
// MutatingAdmissionPolicy in docs/kubernetes.md) do the same.
TEST_F(TopologyE2eTest, APodGroupIsPlacedInOneRackAndEachMemberReleasedOntoItsHost) {
  ASSERT_TRUE(WaitFor([&] { return InventoryNode("n4").has_value(); }, kWait));
  for (int i = 0; i < 3; ++i) {
    Json pod = Json::parse(R"({
      "apiVersion": "v1", "kind": "Pod",
      "metadata": {"labels": {"kueue.x-k8s.io/queue-name": "tas-queue",
                              "kueue.x-k8s.io/pod-group-name": "infer"},
                   "annotations": {"kueue.x-k8s.io/pod-group-total-count": "3",
                                   "kueue.x-k8s.io/podset-required-topology": "cloud.com/rack",
                                   "kueue.x-k8s.io/pod-group-pod-index-label": "app/index"}},
      "spec": {"schedulingGates": [{"name": "kueue.x-k8s.io/admission"},
                                   {"name": "kueue.x-k8s.io/topology"}],
               "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}})");
    pod["metadata"]["name"] = absl::StrCat("infer-", i);
    pod["metadata"]["labels"]["app/index"] = absl::StrCat(i);
    Create(manifest::PodResource(), "topo", pod);
  }
  std::vector<std::string> hosts(3);
  for (int i = 0; i < 3; ++i) {
    const std::string name = absl::StrCat("infer-", i);
    const bool released = WaitFor(
        [&] {
          Json pod = Get(manifest::PodResource(), "topo", name);
          return !pod.is_null() && manifest::Find(pod, {"spec", "schedulingGates"}) == nullptr;
        },
        kWait);
    std::optional<v1::Workload> wl = Workload("topo", "infer");
    ASSERT_TRUE(released) << name << ": " << (wl.has_value() ? wl->DebugString() : "no workload");
    Json pod = Get(manifest::PodResource(), "topo", name);
    hosts[i] = manifest::GetString(pod, {"spec", "nodeSelector", "kubernetes.io/hostname"});
    EXPECT_EQ(
        manifest::GetString(pod, {"metadata", "labels", "kueue.x-k8s.io/pod-group-pod-index"}),
        absl::StrCat(i));
    EXPECT_EQ(manifest::GetString(pod, {"spec", "nodeSelector", "pool"}), "tas") << name;
  }
  // Three CPUs in one rack of two-CPU nodes: both nodes of one rack, in rank order.
  std::optional<v1::Workload> wl = Workload("topo", "infer");
  ASSERT_TRUE(wl.has_value());
  EXPECT_EQ(hosts, HostsByRank(wl)) << wl->DebugString();
  const bool one_rack = (hosts[0] <= "n2") == (hosts[2] <= "n2");
  EXPECT_TRUE(one_rack) << hosts[0] << " " << hosts[1] << " " << hosts[2];

  // A placed pod created without the topology gate cannot get it: it stays gated and says why.
  Create(manifest::PodResource(), "topo", Json::parse(R"({
      "apiVersion": "v1", "kind": "Pod",
      "metadata": {"name": "ungated", "labels": {"kueue.x-k8s.io/queue-name": "tas-queue"},
                   "annotations": {"kueue.x-k8s.io/podset-required-topology": "cloud.com/rack"}},
      "spec": {"schedulingGates": [{"name": "kueue.x-k8s.io/admission"}],
               "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}})"));
  ASSERT_TRUE(WaitFor(
      [&] { return absl::c_linear_search(EventReasons("topo", "ungated"), "FailedToStart"); },
      kWait));
  EXPECT_EQ(Get(manifest::PodResource(), "topo", "ungated")["spec"]["schedulingGates"],
            Json::parse(R"([{"name": "kueue.x-k8s.io/admission"}])"));
}

// Kueue's TASReplaceNodeOnPodTermination: a node that stops being ready fails the placement on
// it only once the workload's pods there have ended.
TEST_F(TopologyE2eTest, ANotReadyNodeFailsItsPlacementOnceItsPodsAreGone) {
  std::vector<std::string> placed;
  std::string workload;
  ASSERT_NO_FATAL_FAILURE(PlaceHealJob(&placed, &workload));
  auto hosts = [&] { return HostsByRank(Workload("topo", "job-heal-")); };

  // The node of rank 0 stops being ready while its pod still runs: nothing fails yet.
  const std::string failed = placed[0];
  ASSERT_TRUE(PatchStatus(apiserver_.url(), manifest::NodeResource(), "", failed,
                          {{"allocatable", {{"cpu", "2"}, {"pods", "110"}}},
                           {"conditions", Json::array({{{"type", "Ready"}, {"status", "False"}}})}})
                  .ok());
  ASSERT_TRUE(WaitFor(
      [&] {
        std::optional<v1::NodeSummary> node = InventoryNode(failed);
        return node.has_value() && !node->node().status().ready() &&
               absl::c_linear_search(node->node().status().running_workloads(), workload);
      },
      kWait))
      << InventoryNode(failed)->DebugString();
  EXPECT_EQ(hosts(), placed);
  EXPECT_EQ(StateOf("topo", "job-heal-"), v1::WORKLOAD_STATE_ADMITTED);

  // Its pods there end: the placement there fails and is replaced inside the rack.
  for (int i = 0; i < 2; ++i) {
    if (placed[i] == failed) {
      ASSERT_TRUE(kube_->Delete(manifest::PodResource(), "topo", absl::StrCat("heal-", i)).ok());
    }
  }
  ASSERT_TRUE(WaitFor([&] { return !absl::c_linear_search(hosts(), failed); }, kWait))
      << Workload("topo", "job-heal-")->DebugString();
  EXPECT_EQ(StateOf("topo", "job-heal-"), v1::WORKLOAD_STATE_ADMITTED);
  EXPECT_EQ(hosts().size(), 2u);
}

// Kueue's deprecated TASReplaceNodeDueToNotReadyOverFixedTime, on in tollgated's Configuration.
class TopologyFixedDelayE2eTest : public TopologyE2eTest {
 protected:
  void SetUp() override {
    tollgated_config_ =
        "apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\n"
        "featureGates: {TASReplaceNodeDueToNotReadyOverFixedTime: true}\n";
    ASSERT_NO_FATAL_FAILURE(TopologyE2eTest::SetUp());
  }
};

// A node whose Ready condition turned False 20 s ago: tollgate-kube sends that time, and 10 s
// later (30 s after it) the placement there fails though the job's pod still runs on it.
TEST_F(TopologyFixedDelayE2eTest, ANodeNotReadyForThirtySecondsFailsItsPlacementWithPodsRunning) {
  std::vector<std::string> placed;
  std::string workload;
  ASSERT_NO_FATAL_FAILURE(PlaceHealJob(&placed, &workload));
  auto hosts = [&] { return HostsByRank(Workload("topo", "job-heal-")); };

  const std::string failed = placed[0];
  const absl::Time since = absl::FromUnixSeconds(absl::ToUnixSeconds(absl::Now()) - 20);
  const std::string since_text = absl::FormatTime(absl::RFC3339_sec, since, absl::UTCTimeZone());
  ASSERT_TRUE(PatchStatus(apiserver_.url(), manifest::NodeResource(), "", failed,
                          {{"allocatable", {{"cpu", "2"}, {"pods", "110"}}},
                           {"conditions", Json::array({{{"type", "Ready"},
                                                        {"status", "False"},
                                                        {"lastTransitionTime", since_text}}})}})
                  .ok());
  ASSERT_TRUE(WaitFor(
      [&] {
        std::optional<v1::NodeSummary> node = InventoryNode(failed);
        return node.has_value() && !node->node().status().ready() &&
               node->node().status().not_ready_since().seconds() == absl::ToUnixSeconds(since) &&
               absl::c_linear_search(node->node().status().running_workloads(), workload);
      },
      kWait))
      << InventoryNode(failed)->DebugString();
  // The pod runs there and the delay has not run out.
  if (absl::Now() < since + absl::Seconds(28)) {
    EXPECT_EQ(hosts(), placed);
  }

  // 30 s after the transition the placement fails, the pod still running there.
  ASSERT_TRUE(WaitFor([&] { return !absl::c_linear_search(hosts(), failed); }, kWait))
      << Workload("topo", "job-heal-")->DebugString();
  EXPECT_GE(absl::Now(), since + absl::Seconds(30));
  EXPECT_EQ(StateOf("topo", "job-heal-"), v1::WORKLOAD_STATE_ADMITTED);
  EXPECT_EQ(hosts().size(), 2u);
  EXPECT_EQ(
      manifest::GetString(Get(manifest::PodResource(), "topo", "heal-0"), {"spec", "nodeName"}),
      failed);
}

// Kueue's TASReplaceNodeOnNodeTaints: `kubectl drain` taints a ready node NoExecute; the job
// does not tolerate it, so once Kubernetes evicted its pod there (the taint manager; the test
// deletes it) the placement fails and the pod goes to another node of the rack.
TEST_F(TopologyE2eTest, AnUntoleratedNoExecuteTaintFailsThePlacementOnceThePodIsEvicted) {
  std::vector<std::string> placed;
  std::string workload;
  ASSERT_NO_FATAL_FAILURE(PlaceHealJob(&placed, &workload));
  auto hosts = [&] { return HostsByRank(Workload("topo", "job-heal-")); };

  const std::string drained = placed[0];
  ASSERT_TRUE(kube_
                  ->Patch(manifest::NodeResource(), "", drained, kubeapi::PatchType::kMerge,
                          Json::parse(R"({"spec": {"taints": [
                               {"key": "node.kubernetes.io/drain", "effect": "NoExecute"}]}})"))
                  .ok());
  ASSERT_TRUE(WaitFor(
      [&] {
        std::optional<v1::NodeSummary> node = InventoryNode(drained);
        return node.has_value() && node->node().status().ready() &&
               node->node().spec().taints_size() == 1 &&
               absl::c_linear_search(node->node().status().running_workloads(), workload);
      },
      kWait))
      << InventoryNode(drained)->DebugString();
  EXPECT_EQ(hosts(), placed);
  EXPECT_EQ(StateOf("topo", "job-heal-"), v1::WORKLOAD_STATE_ADMITTED);

  for (int i = 0; i < 2; ++i) {
    if (placed[i] == drained) {
      ASSERT_TRUE(kube_->Delete(manifest::PodResource(), "topo", absl::StrCat("heal-", i)).ok());
    }
  }
  ASSERT_TRUE(WaitFor([&] { return !absl::c_linear_search(hosts(), drained); }, kWait))
      << Workload("topo", "job-heal-")->DebugString();
  EXPECT_EQ(StateOf("topo", "job-heal-"), v1::WORKLOAD_STATE_ADMITTED);
  EXPECT_EQ(hosts().size(), 2u);
}

// Kueue's node controller (markPodsFailed): a pod released onto a node that is tainted before
// the scheduler bound it there can never start; it is marked Failed with the TerminatedByKueue
// condition and an event, the placement there fails at once (no pod of the job runs there) and
// is replaced inside the rack, and the pod the job controller creates instead is released onto
// the new host.
TEST_F(TopologyE2eTest, APodReleasedOntoANodeTaintedBeforeItIsBoundIsFailedAndReplaced) {
  std::vector<std::string> placed;
  std::string workload;
  ASSERT_NO_FATAL_FAILURE(PlaceHealJob(&placed, &workload, /*unbound_ranks=*/{0, 1}));
  const std::string tainted = placed[0];

  ASSERT_TRUE(kube_
                  ->Patch(manifest::NodeResource(), "", tainted, kubeapi::PatchType::kMerge,
                          Json::parse(R"({"spec": {"taints": [
                               {"key": "maintenance", "value": "true", "effect": "NoSchedule"}]}})"))
                  .ok());
  ASSERT_NO_FATAL_FAILURE(ExpectUnboundPodsFailedAndReplaced(placed, tainted));
}

// Kueue's TASReplaceNodeOnPodTermination with a pod that was never bound: a node that stops
// being ready fails the placement at once (no pod of the job runs there), and the released pod
// waiting for it is failed the same way.
TEST_F(TopologyE2eTest, APodReleasedOntoANodeThatStopsBeingReadyIsFailedAndReplaced) {
  std::vector<std::string> placed;
  std::string workload;
  ASSERT_NO_FATAL_FAILURE(PlaceHealJob(&placed, &workload, /*unbound_ranks=*/{0, 1}));
  const std::string failed = placed[0];
  ASSERT_TRUE(PatchStatus(apiserver_.url(), manifest::NodeResource(), "", failed,
                          {{"allocatable", {{"cpu", "2"}, {"pods", "110"}}},
                           {"conditions", Json::array({{{"type", "Ready"}, {"status", "False"}}})}})
                  .ok());
  ASSERT_NO_FATAL_FAILURE(ExpectUnboundPodsFailedAndReplaced(placed, failed));
}

// Kueue's node controller with a pod of the job still running there: the placement waits for it
// (TASReplaceNodeOnNodeTaints), but the released pod that was never bound is failed at once, as
// the node's taint (the job tolerates neither directly nor through its flavor) keeps it out.
TEST_F(TopologyE2eTest, AReleasedPodIsFailedWhileAnotherPodOfTheJobStillRunsOnTheTaintedNode) {
  std::vector<std::string> placed;
  std::string workload;
  ASSERT_NO_FATAL_FAILURE(PlaceHealJob(&placed, &workload, /*unbound_ranks=*/{1}));
  // Two one-CPU pods in a rack of two-CPU nodes: BestFit puts both on one node.
  ASSERT_EQ(placed[0], placed[1]);
  const std::string tainted = placed[0];
  ASSERT_TRUE(kube_
                  ->Patch(manifest::NodeResource(), "", tainted, kubeapi::PatchType::kMerge,
                          Json::parse(R"({"spec": {"taints": [
                               {"key": "maintenance", "value": "true", "effect": "NoSchedule"}]}})"))
                  .ok());
  ASSERT_TRUE(WaitFor(
      [&] {
        Json pod = Get(manifest::PodResource(), "topo", "heal-1");
        return manifest::GetString(pod, {"status", "phase"}) == "Failed" &&
               manifest::FindCondition(pod, "TerminatedByKueue") != nullptr;
      },
      kWait))
      << Get(manifest::PodResource(), "topo", "heal-1").dump();
  ASSERT_TRUE(WaitFor(
      [&] { return absl::c_linear_search(EventReasons("topo", "heal-1"), "PodTerminatedByKueue"); },
      kWait));
  // The running pod keeps running and the placement stays: NoSchedule does not evict it.
  std::optional<v1::NodeSummary> node = InventoryNode(tainted);
  ASSERT_TRUE(node.has_value());
  EXPECT_THAT(node->node().status().running_workloads(), ::testing::ElementsAre(workload));
  EXPECT_EQ(HostsByRank(Workload("topo", "job-heal-")), placed);
  EXPECT_EQ(
      manifest::GetString(Get(manifest::PodResource(), "topo", "heal-0"), {"status", "phase"}),
      "Running");
  EXPECT_TRUE(EventReasons("topo", "heal-0").empty());

  // As in Kueue, the pod created instead goes to the node the placement still names, and is
  // failed again.
  ASSERT_NO_FATAL_FAILURE(CreateJobPod(Get(manifest::JobResource(), "topo", "heal"), 1, "-again"));
  ASSERT_TRUE(WaitFor(
      [&] {
        Json pod = Get(manifest::PodResource(), "topo", "heal-1-again");
        return manifest::GetString(pod, {"spec", "nodeSelector", "kubernetes.io/hostname"}) ==
                   tainted &&
               manifest::GetString(pod, {"status", "phase"}) == "Failed" &&
               manifest::FindCondition(pod, "TerminatedByKueue") != nullptr;
      },
      kWait))
      << Get(manifest::PodResource(), "topo", "heal-1-again").dump();
}

TEST_F(TopologyE2eTest, WhatChangedWhileTollgateKubeWasDownIsSetRightAtStart) {
  Create(manifest::PodResource(), "topo", Json::parse(R"({
      "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "daemon"},
      "spec": {"nodeName": "n2",
               "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}})"));
  ASSERT_TRUE(WaitFor(
      [&] {
        std::optional<v1::NodeSummary> n2 = InventoryNode("n2");
        return n2.has_value() && n2->reported_pods() == 1;
      },
      kWait));
  // While tollgate-kube is down the pod ends and a node leaves: the new process reads back what
  // the last one reported and takes both out.
  ASSERT_TRUE(adapter_->Terminate().ok());
  ASSERT_TRUE(kube_->Delete(manifest::PodResource(), "topo", "daemon").ok());
  ASSERT_TRUE(kube_->Delete(manifest::NodeResource(), "", "n4").ok());
  ASSERT_NO_FATAL_FAILURE(StartAdapter());
  ASSERT_TRUE(WaitFor(
      [&] {
        std::optional<v1::NodeSummary> n2 = InventoryNode("n2");
        return n2.has_value() && n2->reported_pods() == 0 && !InventoryNode("n4").has_value();
      },
      kWait));
}

}  // namespace
}  // namespace tollgate::kube
