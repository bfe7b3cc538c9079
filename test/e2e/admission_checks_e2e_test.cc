// Admission checks through the real binaries: tollgated on loopback, a check controller played
// by the test over gRPC (AdmissionCheckService: watch, compare-and-swap updates, the Active
// condition), Kueue YAML with admission checks applied by the `tollgate` CLI, an operator's
// decision from the CLI, and everything surviving kill -9.

#include <stdlib.h>

#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "test/e2e/cli_runner.h"
#include "test/e2e/tollgated_process.h"
#include "test/status_matchers.h"
#include "test/support/scratch_dir.h"
#include "tollgate/v1/service.grpc.pb.h"

namespace tollgate::e2e {
namespace {

constexpr char kQueues[] = R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default-flavor}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: AdmissionCheck
metadata: {name: prov}
spec:
  controllerName: example.com/prov
  parameters: {apiGroup: example.com, kind: ProvisioningPolicy, name: fast}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: team-cq}
spec:
  admissionChecks: [prov]
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default-flavor
      resources: [{name: cpu, nominalQuota: 4}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: q, namespace: team}
spec: {clusterQueue: team-cq}
)";

constexpr char kController[] = "example.com/prov";
constexpr absl::Duration kWait = absl::Seconds(20);

const v1::AdmissionCheckState* CheckOf(const v1::Workload& wl, const std::string& name) {
  for (const v1::AdmissionCheckState& c : wl.status().admission_checks()) {
    if (c.name() == name) return &c;
  }
  return nullptr;
}

class AdmissionChecksE2eTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    setenv("GRPC_CLIENT_CHANNEL_BACKUP_POLL_INTERVAL_MS", "50", /*overwrite=*/0);
  }

  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(scratch_, test_support::MakeScratchDir("tollgate_checks_e2e"));
    data_dir_ = scratch_ + "/data";
    ASSERT_NO_FATAL_FAILURE(Start());
    const std::string queues = scratch_ + "/queues.yaml";
    std::ofstream(queues) << kQueues;
    std::string out;
    ASSERT_EQ(RunCli(absl::StrCat("--server=", server_->address(), " apply -f ", queues), out), 0)
        << out;
  }

  void TearDown() override {
    if (server_ != nullptr && HasFailure()) std::cerr << "tollgated log:\n" << server_->Logs();
    server_.reset();
    test_support::RemoveScratchDir(scratch_);
  }

  void Start() {
    server_.reset();
    ASSERT_OK_AND_ASSIGN(server_, TollgatedProcess::Start(data_dir_, scratch_));
    admission_ = v1::AdmissionService::NewStub(server_->channel());
    checks_ = v1::AdmissionCheckService::NewStub(server_->channel());
  }

  std::string Cli(const std::string& args, int want_exit = 0) {
    std::string out;
    EXPECT_EQ(RunCli(absl::StrCat("--server=", server_->address(), " ", args), out), want_exit)
        << args << ": " << out;
    return out;
  }

  void Submit(const std::string& name, int cpu) {
    v1::SubmitRequest request;
    v1::Workload* wl = request.mutable_workload();
    wl->mutable_metadata()->set_namespace_("team");
    wl->mutable_metadata()->set_name(name);
    wl->mutable_spec()->set_queue_name("q");
    v1::PodSet* ps = wl->mutable_spec()->add_pod_sets();
    ps->set_name("main");
    ps->set_count(1);
    (*ps->mutable_requests())["cpu"] = absl::StrCat(cpu);
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + kWait));
    v1::SubmitResponse response;
    const grpc::Status status = admission_->Submit(&context, request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }

  v1::Workload Get(const std::string& name) {
    v1::GetWorkloadRequest request;
    request.mutable_workload()->set_namespace_("team");
    request.mutable_workload()->set_name(name);
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + kWait));
    v1::Workload wl;
    const grpc::Status status = admission_->GetWorkload(&context, request, &wl);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return wl;
  }

  grpc::Status Update(const v1::Workload& seen, const std::string& state, int64_t revision,
                      v1::UpdateAdmissionCheckStateResponse* response,
                      std::optional<int32_t> delay = std::nullopt) {
    v1::UpdateAdmissionCheckStateRequest request;
    request.mutable_workload()->set_namespace_(seen.metadata().namespace_());
    request.mutable_workload()->set_name(seen.metadata().name());
    request.set_check("prov");
    request.set_state(state);
    request.set_message(absl::StrCat("controller says ", state));
    request.set_expected_revision(revision);
    if (delay.has_value()) request.set_requeue_after_seconds(*delay);
    if (state == "Ready") {
      v1::PodSetUpdate* update = request.add_pod_set_updates();
      update->set_name("main");
      (*update->mutable_annotations())["autoscaling.x-k8s.io/consume-provisioning-request"] =
          "pr-1";
    }
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + kWait));
    return checks_->UpdateAdmissionCheckState(&context, request, response);
  }

  void SetActive(bool active) {
    v1::SetAdmissionCheckActiveRequest request;
    request.set_name("prov");
    request.set_active(active);
    request.set_reason("ControllerReady");
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + kWait));
    v1::SetAdmissionCheckActiveResponse response;
    const grpc::Status status = checks_->SetAdmissionCheckActive(&context, request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    ASSERT_EQ(response.admission_check().status().conditions_size(), 1);
    EXPECT_EQ(response.admission_check().status().conditions(0).status(),
              active ? "True" : "False");
  }

  // A WatchAdmissionChecks stream for kController, read event by event with a deadline.
  class CheckWatch {
   public:
    CheckWatch(v1::AdmissionCheckService::Stub& stub, int64_t since) {
      context_.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(60)));
      v1::WatchAdmissionChecksRequest request;
      request.set_controller_name(kController);
      request.set_since_revision(since);
      reader_ = stub.WatchAdmissionChecks(&context_, request);
    }
    ~CheckWatch() {
      context_.TryCancel();
      v1::WatchEvent drain;
      while (reader_->Read(&drain)) {
      }
      (void)reader_->Finish();
    }
    // The next event other than a bookmark about `name`.
    v1::WatchEvent Next(const std::string& name) {
      v1::WatchEvent event;
      while (reader_->Read(&event)) {
        if (event.type() == v1::WatchEvent::BOOKMARK) continue;
        if (event.workload().metadata().name() == name) return event;
      }
      ADD_FAILURE() << "the check watch ended: " << reader_->Finish().error_message();
      return event;
    }

   private:
    grpc::ClientContext context_;
    std::unique_ptr<grpc::ClientReader<v1::WatchEvent>> reader_;
  };

  std::string scratch_;
  std::string data_dir_;
  std::unique_ptr<TollgatedProcess> server_;
  std::unique_ptr<v1::AdmissionService::Stub> admission_;
  std::unique_ptr<v1::AdmissionCheckService::Stub> checks_;
};

TEST_F(AdmissionChecksE2eTest, AControllerDrivesACheckOverGrpcAndItSurvivesKill9) {
  // The ClusterQueue names a check its controller has not activated: it admits nothing.
  Submit("a", 2);
  EXPECT_TRUE(absl::StrContains(Cli("get clusterqueues"), "AdmissionCheckInactive"))
      << Cli("get clusterqueues");
  EXPECT_EQ(Get("a").status().state(), v1::WORKLOAD_STATE_PENDING);

  auto watch = std::make_unique<CheckWatch>(*checks_, 0);
  SetActive(true);
  v1::WatchEvent reserved = watch->Next("a");
  ASSERT_EQ(reserved.type(), v1::WatchEvent::ADDED);
  ASSERT_EQ(reserved.check_controllers_size(), 1);
  EXPECT_EQ(reserved.check_controllers(0).controller_name(), kController);
  EXPECT_TRUE(reserved.check_controllers(0).holds_quota());
  const v1::Workload& seen = reserved.workload();
  EXPECT_EQ(seen.status().state(), v1::WORKLOAD_STATE_QUOTA_RESERVED);
  EXPECT_TRUE(absl::StrContains(Cli("get workloads -n team"), "QuotaReserved"));

  // A decision on a revision that is not the workload's is refused and changes nothing.
  v1::UpdateAdmissionCheckStateResponse response;
  grpc::Status stale = Update(seen, "Ready", seen.metadata().resource_version() - 1, &response);
  EXPECT_EQ(stale.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_TRUE(absl::StrContains(
      stale.error_message(),
      absl::StrCat("is at revision ", seen.metadata().resource_version(),
                   ", not the expected revision ", seen.metadata().resource_version() - 1)))
      << stale.error_message();
  EXPECT_EQ(CheckOf(Get("a"), "prov")->state(), "Pending");

  // Retry: evicted (the controller hears DELETED), requeued after the delay, reserved again.
  ASSERT_TRUE(Update(seen, "Retry", seen.metadata().resource_version(), &response, 1).ok());
  EXPECT_EQ(watch->Next("a").type(), v1::WatchEvent::DELETED);
  v1::WatchEvent again = watch->Next("a");
  ASSERT_EQ(again.type(), v1::WatchEvent::ADDED);
  EXPECT_EQ(again.workload().status().state(), v1::WORKLOAD_STATE_QUOTA_RESERVED);
  EXPECT_EQ(CheckOf(again.workload(), "prov")->retry_count(), 1);

  // Ready with podSetUpdates: admitted.
  ASSERT_TRUE(
      Update(again.workload(), "Ready", again.workload().metadata().resource_version(), &response)
          .ok());
  EXPECT_EQ(response.workload().status().state(), v1::WORKLOAD_STATE_ADMITTED);
  const std::string described = Cli("describe workload a -n team");
  EXPECT_TRUE(absl::StrContains(described, "controller says Ready")) << described;
  EXPECT_TRUE(absl::StrContains(described, "prov")) << described;

  // An operator rejects a second workload by hand from the CLI.
  Submit("b", 2);
  ASSERT_EQ(watch->Next("b").workload().status().state(), v1::WORKLOAD_STATE_QUOTA_RESERVED);
  Cli("check set b -n team --check prov --state Rejected --message \"not today\"");
  const v1::Workload b = Get("b");
  EXPECT_TRUE(b.status().deactivated());
  EXPECT_TRUE(absl::StrContains(b.status().pending_message(), "not today"));
  const int64_t last = watch->Next("b").revision();  // DELETED: the reservation is gone
  watch.reset();

  // kill -9: the admission, the check states and the Active condition come back as they were.
  const v1::Workload before = Get("a");
  ASSERT_OK(server_->Kill());
  ASSERT_NO_FATAL_FAILURE(Start());
  const v1::Workload after = Get("a");
  EXPECT_EQ(after.status().state(), v1::WORKLOAD_STATE_ADMITTED);
  EXPECT_EQ(after.status().admission_checks_size(), 1);
  EXPECT_EQ(CheckOf(after, "prov")->state(), "Ready");
  EXPECT_EQ(CheckOf(after, "prov")->pod_set_updates_size(), 1);
  EXPECT_EQ(CheckOf(after, "prov")->retry_count(), 1);
  EXPECT_EQ(CheckOf(after, "prov")->SerializeAsString(),
            CheckOf(before, "prov")->SerializeAsString());
  EXPECT_TRUE(absl::StrContains(Cli("get admissionchecks"), "True"));
  // The check watch resumes from the revision the controller had: nothing new to deliver for
  // a, b's deactivation was already seen.
  Submit("c", 1);
  CheckWatch resumed(*checks_, last);
  v1::WatchEvent c = resumed.Next("c");
  EXPECT_EQ(c.type(), v1::WatchEvent::ADDED);
  EXPECT_GT(c.revision(), last);
}

TEST_F(AdmissionChecksE2eTest, BadCheckInputIsRefusedWithTheFieldAndValue) {
  SetActive(true);
  Submit("a", 1);
  v1::Workload seen;
  for (absl::Time deadline = absl::Now() + kWait; absl::Now() < deadline;) {
    seen = Get("a");
    if (seen.status().state() == v1::WORKLOAD_STATE_QUOTA_RESERVED) break;
    absl::SleepFor(absl::Milliseconds(20));
  }
  ASSERT_EQ(seen.status().state(), v1::WORKLOAD_STATE_QUOTA_RESERVED);
  v1::UpdateAdmissionCheckStateResponse response;
  grpc::Status bad_state = Update(seen, "Approved", seen.metadata().resource_version(), &response);
  EXPECT_EQ(bad_state.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StrContains(bad_state.error_message(), "state: unsupported value \"Approved\""))
      << bad_state.error_message();
  grpc::Status no_revision = Update(seen, "Ready", 0, &response);
  EXPECT_EQ(no_revision.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StrContains(no_revision.error_message(), "expected_revision"));
  // A ClusterQueue naming a check, and an onFlavors flavor it does not have: refused on apply.
  const std::string bad = scratch_ + "/bad.yaml";
  std::ofstream(bad) << (R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: bad-cq}
spec:
  admissionChecksStrategy: {admissionChecks: [{name: prov, onFlavors: [gpu-flavor]}]}
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: default-flavor, resources: [{name: cpu, nominalQuota: 1}]}]
)");
  const std::string refused = Cli(absl::StrCat("apply -f ", bad), 1);
  EXPECT_TRUE(absl::StrContains(refused, "onFlavors[0]")) << refused;
  EXPECT_TRUE(absl::StrContains(refused, "gpu-flavor")) << refused;
  EXPECT_EQ(CheckOf(Get("a"), "prov")->state(), "Pending");
}

}  // namespace
}  // namespace tollgate::e2e
