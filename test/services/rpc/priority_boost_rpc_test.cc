// AdmissionService.SetPriorityBoost (Kueue's kueue.x-k8s.io/priority-boost annotation) on an
// in-process gRPC server on loopback, with the PriorityBoost gate on: its verb and priority cap,
// the engine's refusal of a value that is not an int32, the annotation as GetWorkload answers
// it and the pending order it makes; and Submit's cap counting a submitted boost.
#include <grpcpp/grpcpp.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "services/auth/authorizer.h"
#include "services/auth/token_file.h"
#include "services/rpc/access_gate.h"
#include "services/rpc/grpc_services.h"
#include "test/services/engine/executor_fixture.h"
#include "test/status_matchers.h"
#include "tollgate/v1/service.grpc.pb.h"

namespace tollgate::rpc {
namespace {

// root is in the bootstrap admins group; alice is a batch-user in "team" with a cap of 5;
// bob has no role.
constexpr char kTokens[] =
    "root-token,root,1,\"tollgate:admins\"\n"
    "alice-token,alice,2,\"\"\n"
    "bob-token,bob,3,\"\"\n";

constexpr char kBoostKey[] = "kueue.x-k8s.io/priority-boost";

class PriorityBoostRpcTest : public testing::Test {
 protected:
  void SetUp() override {
    core::SchedulerConfig config;
    config.priority_boost = true;
    ASSERT_OK(fx_.Open(engine::SettleByHand(), config));
    engine::OneQueueConfig queues;
    queues.nominal_cpu = "1";
    ASSERT_OK(fx_.ApplyOneQueue(queues));
    gate_ = std::make_unique<AccessGate>(*fx_.api, fx_.clock, nullptr);
    Authenticators authenticators;
    ASSERT_OK_AND_ASSIGN(auth::TokenTable tokens, auth::ParseTokenFile(kTokens, "tokens.csv"));
    authenticators.tokens = std::make_shared<const auth::TokenTable>(std::move(tokens));
    auth::Policy policy;
    auth::RoleBinding binding;
    binding.name = "alice-team";
    binding.role = "batch-user";
    binding.subjects.push_back({auth::Subject::Kind::kUser, "alice"});
    binding.namespaces = {"team"};
    binding.max_priority = 5;
    policy.bindings.push_back(binding);
    ASSERT_OK_AND_ASSIGN(auth::Authorizer authorizer, auth::Authorizer::Create(policy));
    gate_->Configure(std::move(authenticators),
                     std::make_shared<const auth::Authorizer>(std::move(authorizer)));
    service_ = std::make_unique<AdmissionGrpcService>(*fx_.api, gate_.get());
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    ASSERT_NE(port, 0);
    stub_ = v1::AdmissionService::NewStub(grpc::CreateChannel("127.0.0.1:" + std::to_string(port),
                                                              grpc::InsecureChannelCredentials()));
  }
  void TearDown() override {
    if (service_ != nullptr) service_->StopWatches();
    if (server_ != nullptr) server_->Shutdown();
  }

  static std::unique_ptr<grpc::ClientContext> As(const std::string& token) {
    auto context = std::make_unique<grpc::ClientContext>();
    context->AddMetadata("authorization", "Bearer " + token);
    return context;
  }

  grpc::Status Submit(const std::string& token, const std::string& name,
                      std::optional<std::string> boost = std::nullopt) {
    v1::SubmitRequest request = engine::OnePodSubmitRequest("team", name, "1", 0);
    if (boost.has_value()) {
      (*request.mutable_workload()->mutable_metadata()->mutable_annotations())[kBoostKey] = *boost;
    }
    v1::SubmitResponse response;
    grpc::Status status = stub_->Submit(As(token).get(), request, &response);
    EXPECT_OK(fx_.api->Settle());
    return status;
  }

  grpc::Status Boost(const std::string& token, const std::string& name,
                     std::optional<std::string> value, v1::SetPriorityBoostResponse* out) {
    v1::SetPriorityBoostRequest request;
    request.mutable_workload()->set_namespace_("team");
    request.mutable_workload()->set_name(name);
    if (value.has_value()) request.set_priority_boost(*value);
    grpc::Status status = stub_->SetPriorityBoost(As(token).get(), request, out);
    EXPECT_OK(fx_.api->Settle());
    return status;
  }

  // The workload's boost annotation as GetWorkload answers it; "none" without one.
  std::string StoredBoost(const std::string& name) {
    v1::GetWorkloadRequest get;
    get.mutable_workload()->set_namespace_("team");
    get.mutable_workload()->set_name(name);
    v1::Workload wl;
    grpc::Status status = stub_->GetWorkload(As("root-token").get(), get, &wl);
    EXPECT_TRUE(status.ok()) << status.error_message();
    auto it = wl.metadata().annotations().find(kBoostKey);
    return it == wl.metadata().annotations().end() ? "none" : it->second;
  }

  std::vector<std::string> PendingOrder() {
    v1::ListPendingWorkloadsRequest request;
    request.set_cluster_queue("cq");
    absl::StatusOr<v1::ListPendingWorkloadsResponse> pending =
        fx_.api->ListPendingWorkloads(request);
    EXPECT_OK(pending.status());
    std::vector<std::string> names;
    if (pending.ok()) {
      for (const v1::PendingWorkload& item : pending->items()) {
        names.push_back(item.workload().name());
      }
    }
    return names;
  }

  engine::ExecutorFixture fx_;
  std::unique_ptr<AccessGate> gate_;
  std::unique_ptr<AdmissionGrpcService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::AdmissionService::Stub> stub_;
};

TEST_F(PriorityBoostRpcTest, BoostReordersThePendingQueueAndIsAnsweredByGetWorkload) {
  ASSERT_TRUE(Submit("root-token", "running").ok());
  ASSERT_TRUE(Submit("root-token", "first").ok());
  ASSERT_TRUE(Submit("root-token", "second").ok());
  EXPECT_EQ(PendingOrder(), (std::vector<std::string>{"first", "second"}));

  v1::SetPriorityBoostResponse out;
  grpc::Status status = Boost("root-token", "second", "7", &out);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(out.workload().metadata().annotations().at(kBoostKey), "7");
  EXPECT_EQ(StoredBoost("second"), "7");
  EXPECT_EQ(PendingOrder(), (std::vector<std::string>{"second", "first"}));

  // Removing it puts the queue back in FIFO order.
  status = Boost("root-token", "second", std::nullopt, &out);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(StoredBoost("second"), "none");
  EXPECT_EQ(PendingOrder(), (std::vector<std::string>{"first", "second"}));
}

TEST_F(PriorityBoostRpcTest, ValueNotAnInt32IsInvalidArgumentNamingItAndChangesNothing) {
  ASSERT_TRUE(Submit("root-token", "w").ok());
  for (const std::string bad : {"abc", "99999999999", "1.5", ""}) {
    v1::SetPriorityBoostResponse out;
    grpc::Status status = Boost("root-token", "w", bad, &out);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << bad;
    EXPECT_TRUE(absl::StrContains(status.error_message(),
                                  "metadata.annotations[kueue.x-k8s.io/priority-boost]"))
        << status.error_message();
    EXPECT_TRUE(absl::StrContains(status.error_message(), "\"" + bad + "\""))
        << status.error_message();
    EXPECT_EQ(StoredBoost("w"), "none");
  }
}

TEST_F(PriorityBoostRpcTest, VerbIsReprioritizeAndAPositiveBoostIsCapped) {
  ASSERT_TRUE(Submit("root-token", "w").ok());
  v1::SetPriorityBoostResponse out;
  // bob holds no role at all.
  EXPECT_EQ(Boost("bob-token", "w", "1", &out).error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(StoredBoost("w"), "none");
  // alice may reprioritize up to 5: base 0 + 5 is within it, + 6 is not.
  grpc::Status status = Boost("alice-token", "w", "5", &out);
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(StoredBoost("w"), "5");
  EXPECT_EQ(Boost("alice-token", "w", "6", &out).error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(StoredBoost("w"), "5");
  // Lowering and removing never raise the workload.
  status = Boost("alice-token", "w", "-100", &out);
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(StoredBoost("w"), "-100");
  status = Boost("alice-token", "w", std::nullopt, &out);
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(StoredBoost("w"), "none");
}

// Submit's cap counts the boost a workload arrives with when the gate is on.
TEST_F(PriorityBoostRpcTest, SubmitCapCountsTheSubmittedBoost) {
  EXPECT_EQ(Submit("alice-token", "over", "6").error_code(), grpc::StatusCode::PERMISSION_DENIED);
  grpc::Status status = Submit("alice-token", "within", "5");
  EXPECT_TRUE(status.ok()) << status.error_message();
  status = Submit("alice-token", "lowered", "-3");
  EXPECT_TRUE(status.ok()) << status.error_message();
}

}  // namespace
}  // namespace tollgate::rpc
