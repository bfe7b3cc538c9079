// End to end: `tollgated --config` with Kueue's own Configuration documents, and their effect
// through the real service. Every wait is on a condition with a deadline.

#include <stdio.h>
#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/file_util.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "test/e2e/cli_runner.h"
#include "test/e2e/tollgated_process.h"
#include "test/status_matchers.h"
#include "test/support/scratch_dir.h"
#include "tollgate/v1/service.grpc.pb.h"

namespace tollgate::e2e {
namespace {

constexpr absl::Duration kRpcTimeout = absl::Seconds(10);
constexpr absl::Duration kConditionTimeout = absl::Seconds(30);

std::unique_ptr<grpc::ClientContext> Context() {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(absl::ToChronoTime(absl::Now() + kRpcTimeout));
  return context;
}

// Kueue's admission fair sharing example (docs: concepts/admission_fair_sharing), unchanged.
constexpr char kAdmissionFairSharingConfig[] = R"(apiVersion: config.kueue.x-k8s.io/v1beta1
kind: Configuration
admissionFairSharing:
  usageHalfLifeTime: "168h"
  usageSamplingInterval: "5m"
  resourceWeights:
    cpu: 2.0 # cpu usage is twice more important than memory usage
    memory: 1.0
)";

// Kueue's waitForPodsReady example (docs: tasks/manage/setup_wait_for_pods_ready) in v1beta2,
// with the timeouts shortened from 30m to 5s so the test takes seconds, plus what Kueue's own
// controller_manager_config.yaml carries for its controller (ignored with warnings).
constexpr char kWaitForPodsReadyConfig[] = R"(apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
health:
  healthProbeBindAddress: :8081
metrics:
  bindAddress: :8443
leaderElection:
  leaderElect: true
  resourceName: c1f6bfd2.kueue.x-k8s.io
waitForPodsReady:
  timeout: 5s
  recoveryTimeout: 5s
  blockAdmission: false
  requeuingStrategy:
    timestamp: Eviction
    backoffLimitCount: 5
    backoffBaseSeconds: 60
    backoffMaxSeconds: 3600
)";

// Two ClusterQueues of 1 cpu: "fair" orders its LocalQueues' workloads by their usage, "fifo"
// by creation.
constexpr char kQueues[] = R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: default-flavor}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: fair}
spec:
  admissionScope: {admissionMode: UsageBasedAdmissionFairSharing}
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: default-flavor, resources: [{name: cpu, nominalQuota: 1}]}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: fifo}
spec:
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: default-flavor, resources: [{name: cpu, nominalQuota: 1}]}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: fa, namespace: ns}
spec: {clusterQueue: fair}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: fb, namespace: ns}
spec: {clusterQueue: fair}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: xa, namespace: ns}
spec: {clusterQueue: fifo}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: xb, namespace: ns}
spec: {clusterQueue: fifo}
)";

v1::Workload MakeWorkload(const std::string& name, const std::string& queue) {
  v1::Workload workload;
  workload.mutable_metadata()->set_namespace_("ns");
  workload.mutable_metadata()->set_name(name);
  workload.mutable_spec()->set_queue_name(queue);
  v1::PodSet* pod_set = workload.mutable_spec()->add_pod_sets();
  pod_set->set_name("main");
  pod_set->set_count(1);
  (*pod_set->mutable_requests())["cpu"] = "1";
  return workload;
}

class ConfigE2eTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    setenv("GRPC_CLIENT_CHANNEL_BACKUP_POLL_INTERVAL_MS", "50", /*overwrite=*/0);
  }

  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(scratch_, test_support::MakeScratchDir("tollgate_config_e2e"));
    data_dir_ = scratch_ + "/data";
  }

  void TearDown() override {
    if (server_ != nullptr && HasFailure()) std::cerr << "tollgated log:\n" << server_->Logs();
    server_.reset();
    test_support::RemoveScratchDir(scratch_);
  }

  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = scratch_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }

  void StartServer(const std::vector<std::string>& args) {
    ASSERT_OK_AND_ASSIGN(server_, TollgatedProcess::Start(data_dir_, scratch_, args));
    admission_ = v1::AdmissionService::NewStub(server_->channel());
    config_ = v1::ConfigService::NewStub(server_->channel());
    info_ = v1::InfoService::NewStub(server_->channel());
  }

  void Submit(const v1::Workload& workload) {
    v1::SubmitRequest request;
    *request.mutable_workload() = workload;
    v1::SubmitResponse response;
    const grpc::Status status = admission_->Submit(Context().get(), request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }

  void Finish(const std::string& name) {
    v1::FinishRequest request;
    request.mutable_workload()->set_namespace_("ns");
    request.mutable_workload()->set_name(name);
    v1::FinishResponse response;
    const grpc::Status status = admission_->Finish(Context().get(), request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }

  v1::Workload GetWorkload(const std::string& name) {
    v1::GetWorkloadRequest request;
    request.mutable_workload()->set_namespace_("ns");
    request.mutable_workload()->set_name(name);
    v1::Workload workload;
    const grpc::Status status = admission_->GetWorkload(Context().get(), request, &workload);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return workload;
  }

  std::set<std::string> Admitted(const std::vector<std::string>& names) {
    std::set<std::string> out;
    for (const std::string& name : names) {
      if (GetWorkload(name).status().state() == v1::WORKLOAD_STATE_ADMITTED) out.insert(name);
    }
    return out;
  }

  // Polls `done` until it holds or the deadline passes.
  bool WaitUntil(const std::function<bool()>& done, absl::Duration timeout = kConditionTimeout) {
    const absl::Time deadline = absl::Now() + timeout;
    while (!done()) {
      if (absl::Now() > deadline) return false;
      absl::SleepFor(absl::Milliseconds(20));
    }
    return true;
  }

  std::string scratch_;
  std::string data_dir_;
  std::unique_ptr<TollgatedProcess> server_;
  std::unique_ptr<v1::AdmissionService::Stub> admission_;
  std::unique_ptr<v1::ConfigService::Stub> config_;
  std::unique_ptr<v1::InfoService::Stub> info_;
};

// Admission fair sharing from Kueue's example: fa1 is admitted and charges LocalQueue fa its
// usage (the entry penalty); fa2 and then fb1 queue behind it. When fa1 finishes, the freed cpu
// goes to fb1, whose LocalQueue has used less, although fa2 is older. The ClusterQueue without
// admissionScope stays FIFO (xa2 before xb1), so the difference is the configuration's doing.
TEST_F(ConfigE2eTest, AdmissionFairSharingExampleOrdersLocalQueuesByUsage) {
  const std::string config = Write("kueue-afs.yaml", kAdmissionFairSharingConfig);
  const std::string queues = Write("queues.yaml", kQueues);
  ASSERT_NO_FATAL_FAILURE(StartServer({"--config=" + config, "--manifests=" + queues}));

  ASSERT_NO_FATAL_FAILURE(Submit(MakeWorkload("fa1", "fa")));
  ASSERT_NO_FATAL_FAILURE(Submit(MakeWorkload("xa1", "xa")));
  ASSERT_TRUE(WaitUntil([&] { return Admitted({"fa1", "xa1"}).size() == 2; }));
  ASSERT_NO_FATAL_FAILURE(Submit(MakeWorkload("fa2", "fa")));
  ASSERT_NO_FATAL_FAILURE(Submit(MakeWorkload("fb1", "fb")));
  ASSERT_NO_FATAL_FAILURE(Submit(MakeWorkload("xa2", "xa")));
  ASSERT_NO_FATAL_FAILURE(Submit(MakeWorkload("xb1", "xb")));
  ASSERT_NO_FATAL_FAILURE(Finish("fa1"));
  ASSERT_NO_FATAL_FAILURE(Finish("xa1"));
  const std::vector<std::string> waiting = {"fa2", "fb1", "xa2", "xb1"};
  ASSERT_TRUE(WaitUntil([&] { return Admitted(waiting).size() == 2; }))
      << absl::StrJoin(Admitted(waiting), ",");
  EXPECT_EQ(Admitted(waiting), (std::set<std::string>{"fb1", "xa2"}));

  // The effective configuration, as `tollgate get config` shows it.
  v1::SchedulerConfiguration effective;
  ASSERT_TRUE(
      info_->GetConfiguration(Context().get(), v1::GetConfigurationRequest(), &effective).ok());
  EXPECT_EQ(effective.source(), config);
  EXPECT_EQ(effective.api_version(), "config.kueue.x-k8s.io/v1beta1");
  EXPECT_TRUE(absl::StrContains(effective.effective_json(),
                                R"("admissionFairSharing":{"usageHalfLifeTime":"168h")"))
      << effective.effective_json();
  EXPECT_TRUE(absl::StrContains(effective.effective_json(), R"("DisableWaitForPodsReady":true)"))
      << effective.effective_json();

  // The same through the CLI, as an admin sees it.
  std::string out;
  ASSERT_EQ(RunCli(absl::StrCat("--server=", server_->address(), " get config"), out), 0) << out;
  EXPECT_TRUE(absl::StrContains(out, "AdmissionFairSharing:  enabled")) << out;
  EXPECT_TRUE(absl::StrContains(out, "WaitForPodsReady:      disabled")) << out;
  ASSERT_EQ(RunCli(absl::StrCat("--server=", server_->address(), " get config -o yaml"), out), 0)
      << out;
  EXPECT_TRUE(absl::StrContains(out, "apiVersion: config.kueue.x-k8s.io/v1beta2")) << out;
  EXPECT_TRUE(absl::StrContains(out, "usageHalfLifeTime: 168h")) << out;
}

// waitForPodsReady from Kueue's example: a workload whose pods are reported ready keeps its
// admission; one that is not is evicted at the timeout and requeued with backoff.
TEST_F(ConfigE2eTest, WaitForPodsReadyExampleEvictsWorkloadsNotReadyInTime) {
  const std::string config = Write("kueue-podsready.yaml", kWaitForPodsReadyConfig);
  const std::string queues = Write("queues.yaml", kQueues);
  ASSERT_NO_FATAL_FAILURE(StartServer({"--config=" + config, "--manifests=" + queues}));
  // The controller-only fields were read past, each with a warning naming it.
  for (const char* field : {"health", "metrics", "leaderElection"}) {
    EXPECT_TRUE(absl::StrContains(server_->Logs(), absl::StrCat(field, ": ignored: configures")))
        << field;
  }

  // One in each ClusterQueue, so both are admitted at once.
  ASSERT_NO_FATAL_FAILURE(Submit(MakeWorkload("ready", "fa")));
  ASSERT_NO_FATAL_FAILURE(Submit(MakeWorkload("stuck", "xa")));
  ASSERT_TRUE(WaitUntil([&] { return Admitted({"ready", "stuck"}).size() == 2; }));
  v1::ReportPodsReadyRequest report;
  report.mutable_workload()->set_namespace_("ns");
  report.mutable_workload()->set_name("ready");
  v1::ReportPodsReadyResponse reported;
  ASSERT_TRUE(admission_->ReportPodsReady(Context().get(), report, &reported).ok());

  // Past the 5s timeout: "stuck" is evicted and waits out its first backoff (60s base).
  ASSERT_TRUE(WaitUntil([&] {
    const v1::Workload w = GetWorkload("stuck");
    return w.status().state() == v1::WORKLOAD_STATE_PENDING &&
           w.status().requeue_state().count() == 1;
  })) << GetWorkload("stuck").DebugString();
  const v1::Workload stuck = GetWorkload("stuck");
  bool evicted_for_timeout = false;
  for (const v1::Condition& c : stuck.status().conditions()) {
    if (c.type() == "Evicted" && c.reason() == "PodsReadyTimeout") evicted_for_timeout = true;
  }
  EXPECT_TRUE(evicted_for_timeout) << stuck.DebugString();
  EXPECT_EQ(GetWorkload("ready").status().state(), v1::WORKLOAD_STATE_ADMITTED);

  // recoveryTimeout (5s): "ready" loses a pod and is not ready again in time: evicted too.
  report.set_ready(false);
  ASSERT_TRUE(admission_->ReportPodsReady(Context().get(), report, &reported).ok());
  EXPECT_EQ(reported.workload().status().state(), v1::WORKLOAD_STATE_ADMITTED);
  bool waits_for_recovery = false;
  for (const v1::Condition& c : reported.workload().status().conditions()) {
    if (c.type() == "PodsReady" && c.reason() == "WaitForRecovery") waits_for_recovery = true;
  }
  EXPECT_TRUE(waits_for_recovery) << reported.workload().DebugString();
  ASSERT_TRUE(WaitUntil([&] {
    const v1::Workload w = GetWorkload("ready");
    return w.status().state() == v1::WORKLOAD_STATE_PENDING &&
           w.status().requeue_state().count() == 1;
  })) << GetWorkload("ready").DebugString();
  bool evicted_for_recovery = false;
  const v1::Workload lost = GetWorkload("ready");
  for (const v1::Condition& c : lost.status().conditions()) {
    // Kueue's message, the same for the start and the recovery timeout.
    if (c.type() == "Evicted" && c.reason() == "PodsReadyTimeout" &&
        absl::StrContains(c.message(), "Exceeded the PodsReady timeout")) {
      evicted_for_recovery = true;
    }
  }
  EXPECT_TRUE(evicted_for_recovery) << lost.DebugString();

  v1::SchedulerConfiguration effective;
  ASSERT_TRUE(
      info_->GetConfiguration(Context().get(), v1::GetConfigurationRequest(), &effective).ok());
  EXPECT_TRUE(absl::StrContains(effective.effective_json(), R"("timeout":"5s")"))
      << effective.effective_json();
  EXPECT_TRUE(absl::StrContains(effective.effective_json(), R"("backoffLimitCount":5)"))
      << effective.effective_json();
}

// A Configuration field Tollgate does not implement refuses the start, naming field and value.
TEST_F(ConfigE2eTest, UnsupportedFieldRefusesTheStart) {
  const std::string config =
      Write("bad.yaml",
            "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"
            "resources: {deviceClassMappings: [{name: gpu, deviceClassNames: [a]}]}\n");
  const std::string log_path = scratch_ + "/bad.log";
  ASSERT_OK_AND_ASSIGN(
      int exit_code,
      TollgatedProcess::RunToExit(
          {"--listen=127.0.0.1:0", "--data-dir=" + data_dir_, "--config=" + config}, log_path));
  EXPECT_NE(exit_code, 0);
  const std::string logs = common::ReadFileToString(log_path).value_or("");
  EXPECT_TRUE(absl::StrContains(logs, "resources.deviceClassMappings")) << logs;
  EXPECT_TRUE(absl::StrContains(logs, "not supported by Tollgate")) << logs;
  // Nothing was opened: a refused start leaves no store behind.
  EXPECT_FALSE(std::filesystem::exists(data_dir_));
}

// --manifests is declarative: what an admin deleted is re-created at the next start, and the
// log says so by kind and name.
TEST_F(ConfigE2eTest, ManifestsLogWhatTheyCreateAndChange) {
  const std::string queues = Write("queues.yaml", kQueues);
  ASSERT_NO_FATAL_FAILURE(StartServer({"--manifests=" + queues}));
  EXPECT_TRUE(absl::StrContains(server_->Logs(), R"("kind":"LocalQueue","name":"ns/fa")"))
      << server_->Logs();
  v1::DeleteObjectRequest del;
  del.mutable_ref()->set_kind(v1::LOCAL_QUEUE);
  del.mutable_ref()->set_namespace_("ns");
  del.mutable_ref()->set_name("xb");
  v1::DeleteObjectResponse deleted;
  ASSERT_TRUE(config_->Delete(Context().get(), del, &deleted).ok());
  ASSERT_OK_AND_ASSIGN(int exit_code, server_->Terminate());
  EXPECT_EQ(exit_code, 0);

  ASSERT_NO_FATAL_FAILURE(StartServer({"--manifests=" + queues}));
  const std::string logs = server_->Logs();
  EXPECT_TRUE(absl::StrContains(
      logs, R"("msg":"manifest object created","kind":"LocalQueue","name":"ns/xb")"))
      << logs;
  EXPECT_TRUE(absl::StrContains(logs, R"("created":"1","changed":"0","unchanged":"6")")) << logs;
}

// Kueue's objectRetentionPolicies.workloads.afterFinished, through the real tollgated: a finished
// workload is deleted once finished that long, as a real deletion (a DELETED watch event, gone
// after kill -9); one finished before a kill -9 and not yet due is deleted after the restart.
TEST_F(ConfigE2eTest, RetentionAfterFinishedDeletesFinishedWorkloadsDurably) {
  const std::string config =
      Write("kueue-retention.yaml", R"(apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
featureGates: {DisableWaitForPodsReady: true}
objectRetentionPolicies:
  workloads:
    afterFinished: 5s
)");
  const std::string queues = Write("queues.yaml", kQueues);
  const std::vector<std::string> args = {"--config=" + config, "--manifests=" + queues};
  ASSERT_NO_FATAL_FAILURE(StartServer(args));
  auto code_of = [&](const std::string& name) {
    v1::GetWorkloadRequest request;
    request.mutable_workload()->set_namespace_("ns");
    request.mutable_workload()->set_name(name);
    v1::Workload workload;
    return admission_->GetWorkload(Context().get(), request, &workload).error_code();
  };

  ASSERT_NO_FATAL_FAILURE(Submit(MakeWorkload("a", "fa")));
  ASSERT_NO_FATAL_FAILURE(Submit(MakeWorkload("b", "xa")));
  ASSERT_TRUE(WaitUntil([&] { return Admitted({"a", "b"}).size() == 2; }));
  const int64_t before_finish = GetWorkload("a").metadata().resource_version();

  ASSERT_NO_FATAL_FAILURE(Finish("a"));
  ASSERT_TRUE(WaitUntil([&] { return code_of("a") == grpc::StatusCode::NOT_FOUND; }))
      << GetWorkload("a").DebugString();
  // Watchers were told, as for any deletion.
  v1::WatchRequest watch;
  watch.set_namespace_("ns");
  watch.set_since_revision(before_finish);
  grpc::ClientContext watch_context;
  watch_context.set_deadline(absl::ToChronoTime(absl::Now() + kRpcTimeout));
  std::unique_ptr<grpc::ClientReader<v1::WatchEvent>> stream =
      admission_->Watch(&watch_context, watch);
  bool deleted_event = false;
  v1::WatchEvent event;
  while (!deleted_event && stream->Read(&event)) {
    deleted_event =
        event.type() == v1::WatchEvent::DELETED && event.workload().metadata().name() == "a";
  }
  watch_context.TryCancel();
  stream->Finish().IgnoreError();
  EXPECT_TRUE(deleted_event);
  EXPECT_EQ(GetWorkload("b").status().state(), v1::WORKLOAD_STATE_ADMITTED);

  // b finishes, and tollgated is killed before b's 5 s are up.
  ASSERT_NO_FATAL_FAILURE(Finish("b"));
  ASSERT_EQ(GetWorkload("b").status().state(), v1::WORKLOAD_STATE_FINISHED);
  ASSERT_OK(server_->Kill());
  ASSERT_NO_FATAL_FAILURE(StartServer(args));
  // The deletion of a survived the kill; b's retention counts from its stored Finished
  // condition, and it goes after the restart.
  EXPECT_EQ(code_of("a"), grpc::StatusCode::NOT_FOUND);
  ASSERT_TRUE(WaitUntil([&] { return code_of("b") == grpc::StatusCode::NOT_FOUND; }))
      << server_->Logs();

  v1::SchedulerConfiguration effective;
  ASSERT_TRUE(
      info_->GetConfiguration(Context().get(), v1::GetConfigurationRequest(), &effective).ok());
  EXPECT_TRUE(
      absl::StrContains(effective.effective_json(),
                        R"("objectRetentionPolicies":{"workloads":{"afterFinished":"5s"}})"))
      << effective.effective_json();
}

}  // namespace
}  // namespace tollgate::e2e
