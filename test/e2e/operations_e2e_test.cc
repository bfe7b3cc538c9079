// The operator verbs through the real binaries: tollgated on loopback and the `tollgate` CLI as
// a user runs it (stop/resume, deactivate/activate, reprioritize, preempt --hold, deleting what
// is in use), the deletion states surviving kill -9, and a workload's accumulated execution time
// (maximumExecutionTimeSeconds) surviving kill -9.

#include <stdio.h>
#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "google/protobuf/util/time_util.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "test/e2e/cli_runner.h"
#include "test/e2e/tollgated_process.h"
#include "test/status_matchers.h"
#include "test/support/scratch_dir.h"
#include "tollgate/v1/service.grpc.pb.h"

namespace tollgate::e2e {
namespace {

constexpr char kQueues[] = R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: default-flavor}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: team-cq}
spec:
  preemption: {withinClusterQueue: LowerPriority}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default-flavor
      resources: [{name: cpu, nominalQuota: 4}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: q, namespace: team}
spec: {clusterQueue: team-cq}
)";

std::string WorkloadYaml(const std::string& name, int cpu) {
  return absl::StrCat(R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata: {name: )",
                      name, R"(, namespace: team}
spec:
  queueName: q
  podSets:
  - name: main
    count: 1
    template:
      spec:
        containers:
        - name: c
          resources: {requests: {cpu: ")",
                      cpu, R"("}}
)");
}

class OperationsE2eTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    setenv("GRPC_CLIENT_CHANNEL_BACKUP_POLL_INTERVAL_MS", "50", /*overwrite=*/0);
  }

  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(scratch_, test_support::MakeScratchDir("tollgate_ops_e2e"));
    ASSERT_NO_FATAL_FAILURE(StartServer());
  }

  void TearDown() override {
    if (server_ != nullptr && HasFailure()) std::cerr << "tollgated log:\n" << server_->Logs();
    server_.reset();
    test_support::RemoveScratchDir(scratch_);
  }

  void StartServer() {
    server_.reset();
    absl::StatusOr<std::unique_ptr<TollgatedProcess>> server =
        TollgatedProcess::Start(scratch_ + "/data", scratch_);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
  }

  // Runs the real CLI against the server; stdout and stderr go to `out`.
  int Cli(const std::string& args, std::string& out) {
    return RunCli(absl::StrCat("--server=", server_->address(), " ", args), out);
  }

  std::string CliOk(const std::string& args) {
    std::string out;
    EXPECT_EQ(Cli(args, out), 0) << "tollgate " << args << ":\n" << out;
    return out;
  }

  void Apply(const std::string& name, const std::string& yaml) {
    const std::string path = absl::StrCat(scratch_, "/", name, ".yaml");
    std::ofstream(path) << yaml;
    CliOk(absl::StrCat("apply -f ", path));
  }

  // The row of `name` in `get workloads -n team`, awaited (with a deadline) until it contains
  // every one of `parts`: admission runs after the CLI returns.
  std::string AwaitRow(const std::string& name, std::initializer_list<std::string> parts) {
    const absl::Time deadline = absl::Now() + absl::Seconds(20);
    std::string row;
    while (true) {
      std::string out;
      Cli("get workloads -n team", out);
      row.clear();
      for (absl::string_view line : absl::StrSplit(out, '\n')) {
        if (absl::StartsWith(line, name + " ")) row = std::string(line);
      }
      bool all = !row.empty();
      for (const std::string& p : parts) all = all && absl::StrContains(row, p);
      if (all || absl::Now() > deadline) break;
      absl::SleepFor(
          absl::Milliseconds(20));  // polling interval of the condition, not a wait for it
    }
    EXPECT_FALSE(row.empty()) << name;
    for (const std::string& p : parts) EXPECT_TRUE(absl::StrContains(row, p)) << row;
    return row;
  }

  std::unique_ptr<grpc::ClientContext> Context() {
    auto context = std::make_unique<grpc::ClientContext>();
    context->set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(20)));
    return context;
  }

  v1::Workload GetWorkload(const std::string& name) {
    v1::GetWorkloadRequest request;
    request.mutable_workload()->set_namespace_("team");
    request.mutable_workload()->set_name(name);
    v1::Workload workload;
    const grpc::Status status = v1::AdmissionService::NewStub(server_->channel())
                                    ->GetWorkload(Context().get(), request, &workload);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return workload;
  }

  // The start estimate of pending workload `name` in LocalQueue q (the visibility API).
  v1::StartEstimate StartEstimateOf(const std::string& name) {
    v1::ListPendingWorkloadsRequest request;
    request.set_namespace_("team");
    request.set_local_queue("q");
    request.set_workload_name(name);
    request.set_include_start_estimates(true);
    v1::ListPendingWorkloadsResponse response;
    const grpc::Status status = v1::VisibilityService::NewStub(server_->channel())
                                    ->ListPendingWorkloads(Context().get(), request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    if (response.items_size() != 1) {
      ADD_FAILURE() << name << " is not pending: " << response.DebugString();
      return v1::StartEstimate();
    }
    return response.items(0).start_estimate();
  }

  std::string scratch_;
  std::unique_ptr<TollgatedProcess> server_;
};

absl::Time ToTime(const google::protobuf::Timestamp& t) {
  return absl::FromUnixNanos(google::protobuf::util::TimeUtil::TimestampToNanoseconds(t));
}

TEST_F(OperationsE2eTest, StopResumeDeactivateReprioritizeAndPreemptHold) {
  Apply("queues", kQueues);
  Apply("a", WorkloadYaml("a", 4));
  AwaitRow("a", {"Admitted"});

  EXPECT_EQ(CliOk("stop clusterqueue team-cq"),
            "clusterqueue.kueue.x-k8s.io \"team-cq\" stopped (stopPolicy Hold)\n");
  EXPECT_TRUE(absl::StrContains(CliOk("get clusterqueues"), "False (Stopped)"));
  Apply("b", WorkloadYaml("b", 4));
  AwaitRow("b", {"Pending", "ClusterQueue team-cq is inactive"});
  AwaitRow("a", {"Admitted"});
  CliOk("stop clusterqueue team-cq --drain");
  AwaitRow("a", {"Pending"});
  EXPECT_EQ(CliOk("resume clusterqueue team-cq"),
            "clusterqueue.kueue.x-k8s.io \"team-cq\" resumed\n");
  AwaitRow("a", {"Admitted"});

  EXPECT_TRUE(
      absl::StrContains(CliOk("deactivate workload b -n team"), "deactivated (Deactivated)"));
  AwaitRow("b", {"Deactivated"});
  CliOk("activate b -n team");
  AwaitRow("b", {"Pending"});

  // b outranks a now: it preempts a (withinClusterQueue LowerPriority).
  EXPECT_TRUE(absl::StrContains(CliOk("reprioritize workload b -n team --priority 10"),
                                "priority set to 10"));
  AwaitRow("b", {"Admitted", " 10 "});
  AwaitRow("a", {"Pending"});

  // Preempted on request, b is the highest priority: re-admitted in the same pass, and the
  // answer says so.
  std::string out = CliOk("preempt b -n team");
  EXPECT_TRUE(absl::StrContains(out, "evicted, then re-admitted by ClusterQueue team-cq")) << out;
  EXPECT_TRUE(absl::StrContains(out, "(Admitted)")) << out;
  out = CliOk("preempt b -n team --hold");
  EXPECT_TRUE(absl::StrContains(out, "evicted and deactivated")) << out;
  AwaitRow("b", {"Deactivated"});
  AwaitRow("a", {"Admitted"});

  // Refusals name what is wrong and change nothing.
  EXPECT_NE(Cli("stop cohort team-cq", out), 0);
  EXPECT_TRUE(absl::StrContains(out, "want clusterqueue or localqueue")) << out;
  EXPECT_NE(Cli("reprioritize b -n team --priority high", out), 0);
  EXPECT_TRUE(absl::StrContains(out, "--priority")) << out;
}

// Kueue's rule per kind: a ClusterQueue in use terminates (its in-use finalizer), a flavor a
// queue names is refused (Tollgate's clearer stand-in for Kueue's terminating flavor), a
// LocalQueue goes at once while what it admitted runs on; kill -9 keeps each so.
TEST_F(OperationsE2eTest, DeletingWhatIsInUseTerminatesAndSurvivesKill9) {
  Apply("queues", kQueues);
  Apply("a", WorkloadYaml("a", 2));
  AwaitRow("a", {"Admitted"});

  std::string out;
  EXPECT_NE(Cli("delete resourceflavor default-flavor", out), 0);
  EXPECT_TRUE(absl::StrContains(out, "in use by ClusterQueue team-cq")) << out;

  out = CliOk("delete clusterqueue team-cq");
  EXPECT_TRUE(absl::StrContains(out, "terminating")) << out;
  EXPECT_TRUE(absl::StrContains(out, "team/a")) << out;
  out = CliOk("delete localqueue q -n team");
  EXPECT_TRUE(absl::StrContains(out, "\"q\" deleted")) << out;
  EXPECT_TRUE(absl::StrContains(CliOk("get clusterqueues"), "False (Terminating)"));

  ASSERT_TRUE(server_->Kill().ok());
  ASSERT_NO_FATAL_FAILURE(StartServer());
  EXPECT_TRUE(absl::StrContains(CliOk("get clusterqueues"), "False (Terminating)"));
  EXPECT_FALSE(absl::StrContains(CliOk("get localqueues -n team"), "team-cq"));
  AwaitRow("a", {"Admitted"});
  Apply("b", WorkloadYaml("b", 1));
  AwaitRow("b", {"Pending", "LocalQueue q doesn't exist"});
  out = CliOk("describe workload b -n team");
  EXPECT_TRUE(absl::StrContains(out, "LocalQueue q doesn't exist")) << out;
  EXPECT_TRUE(absl::StrContains(out, "not queued")) << out;

  CliOk("finish a -n team");
  EXPECT_NE(Cli("get clusterqueue team-cq", out), 0);
  EXPECT_TRUE(absl::StrContains(out, "not found")) << out;
  // Re-created, the LocalQueue routes b again: now to a ClusterQueue that is gone.
  Apply("q", R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: q, namespace: team}
spec: {clusterQueue: team-cq}
)");
  AwaitRow("b", {"Pending", "ClusterQueue team-cq doesn't exist"});
  // Nothing names the flavor any more.
  CliOk("delete resourceflavor default-flavor");
}

// Kueue's AdmissionGatedBy from the CLI, kubectl annotate's way: a gated workload waits although
// it fits, `describe` names its gates, a removal acknowledged survives kill -9, and removing the
// last gate admits it. Adding a gate or another annotation is refused.
TEST_F(OperationsE2eTest, AnnotateRemovesAdmissionGatesDurably) {
  Apply("queues", kQueues);
  Apply("g", absl::StrReplaceAll(WorkloadYaml("g", 1), {{"namespace: team}",
                                                         "namespace: team, annotations: "
                                                         "{kueue.x-k8s.io/admission-gated-by: "
                                                         "\"example.com/a,example.com/b\"}}"}}));
  AwaitRow("g", {"Pending", "Admission is gated by: example.com/a,example.com/b"});
  std::string out = CliOk("describe workload g -n team");
  EXPECT_TRUE(absl::StrContains(out, "example.com/a,example.com/b")) << out;
  EXPECT_TRUE(absl::StrContains(out, "AdmissionGated")) << out;

  EXPECT_NE(Cli("annotate workload g -n team kueue.x-k8s.io/admission-gated-by=example.com/b", out),
            0);
  EXPECT_TRUE(absl::StrContains(out, "--overwrite")) << out;
  EXPECT_NE(Cli("annotate workload g -n team team.example.com/owner=me", out), 0);
  EXPECT_TRUE(absl::StrContains(out, "only the kueue.x-k8s.io/admission-gated-by")) << out;
  EXPECT_NE(Cli("annotate workload g -n team "
                "kueue.x-k8s.io/admission-gated-by=example.com/c --overwrite",
                out),
            0);
  EXPECT_TRUE(absl::StrContains(out, "can only remove gates")) << out;
  out = CliOk(
      "annotate workload g -n team kueue.x-k8s.io/admission-gated-by=example.com/b --overwrite");
  EXPECT_TRUE(absl::StrContains(out, "annotated")) << out;

  ASSERT_TRUE(server_->Kill().ok());
  ASSERT_NO_FATAL_FAILURE(StartServer());
  AwaitRow("g", {"Pending", "Admission is gated by: example.com/b"});
  CliOk("annotate workload g -n team kueue.x-k8s.io/admission-gated-by-");
  AwaitRow("g", {"Admitted"});
  EXPECT_NE(
      Cli("annotate g -n team kueue.x-k8s.io/admission-gated-by=example.com/b --overwrite", out),
      0);
  EXPECT_TRUE(absl::StrContains(out, "cannot add admission gate after creation")) << out;
}

// Kueue's status.accumulatedPastExexcutionTimeSeconds is stored: after kill -9 and a restart,
// the deadline of a workload evicted earlier still counts its earlier admission. The deadline is
// read through the start estimate of a workload waiting behind it (it starts when the limited
// one is deactivated), so nothing waits for the limit itself.
TEST_F(OperationsE2eTest, AccumulatedExecutionTimeSurvivesKill9) {
  constexpr int kLimitSeconds = 3600;
  Apply("queues", kQueues);
  std::string limited = WorkloadYaml("a", 4);
  absl::StrAppend(&limited, "  maximumExecutionTimeSeconds: ", kLimitSeconds, "\n");
  Apply("a", limited);
  AwaitRow("a", {"Admitted"});
  const absl::Time first_admission = ToTime(GetWorkload("a").status().admission_time());

  // tollgated runs on the real clock and counts whole seconds, as Kueue: the first admission must
  // have lasted a second for the accumulated time to show. What this waits for is time itself.
  while (absl::Now() < first_admission + absl::Milliseconds(1100)) {
    absl::SleepFor(absl::Milliseconds(20));  // polling interval of the condition
  }
  // Evicted, then re-admitted in the same pass (nothing else is queued).
  std::string out = CliOk("preempt a -n team");
  ASSERT_TRUE(absl::StrContains(out, "re-admitted")) << out;
  AwaitRow("a", {"Admitted"});
  const v1::Workload readmitted = GetWorkload("a");
  ASSERT_TRUE(readmitted.status().has_accumulated_past_execution_time_seconds());
  const int accumulated = readmitted.status().accumulated_past_execution_time_seconds();
  const absl::Time second_admission = ToTime(readmitted.status().admission_time());
  EXPECT_GE(accumulated, 1);
  EXPECT_LE(absl::Seconds(accumulated), second_admission - first_admission);
  const absl::Time deadline =
      second_admission + absl::Seconds(kLimitSeconds) - absl::Seconds(accumulated);

  // b waits behind a; a ends at its deadline at the latest, so b is expected to start then.
  Apply("b", WorkloadYaml("b", 4));
  AwaitRow("b", {"Pending"});
  v1::StartEstimate estimate = StartEstimateOf("b");
  ASSERT_EQ(estimate.kind(), v1::StartEstimate::ESTIMATED) << estimate.DebugString();
  EXPECT_EQ(ToTime(estimate.likely()), deadline);

  ASSERT_TRUE(server_->Kill().ok());
  ASSERT_NO_FATAL_FAILURE(StartServer());

  const v1::Workload restored = GetWorkload("a");
  EXPECT_EQ(restored.status().state(), v1::WORKLOAD_STATE_ADMITTED);
  EXPECT_EQ(restored.status().accumulated_past_execution_time_seconds(), accumulated);
  EXPECT_EQ(ToTime(restored.status().admission_time()), second_admission);
  estimate = StartEstimateOf("b");
  ASSERT_EQ(estimate.kind(), v1::StartEstimate::ESTIMATED) << estimate.DebugString();
  EXPECT_EQ(ToTime(estimate.likely()), deadline);

  // Shown as Kueue names it, and in describe with the limit it counts against.
  out = CliOk("get workload a -n team -o yaml");
  EXPECT_TRUE(absl::StrContains(
      out, absl::StrCat("accumulatedPastExexcutionTimeSeconds: ", accumulated, "\n")))
      << out;
  out = CliOk("describe workload a -n team");
  EXPECT_TRUE(absl::StrContains(out, "Past Execution Time:")) << out;
  EXPECT_TRUE(absl::StrContains(out, absl::StrCat(" ", accumulated, "s of ", kLimitSeconds, "s\n")))
      << out;
}

}  // namespace
}  // namespace tollgate::e2e
