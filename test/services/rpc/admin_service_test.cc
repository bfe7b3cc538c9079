#include "services/rpc/admin_service.h"

#include <grpcpp/grpcpp.h>
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>
#include <system_error>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "services/auth/authorizer.h"
#include "services/auth/token_file.h"
#include "services/rpc/access_gate.h"
#include "storage/rocksdb_store.h"
#include "test/services/engine/executor_fixture.h"
#include "test/status_matchers.h"
#include "test/support/scratch_dir.h"
#include "tollgate/v1/service.grpc.pb.h"

namespace tollgate::rpc {
namespace {

namespace fs = std::filesystem;

// root is in the bootstrap admins group; alice has no role.
constexpr char kTokens[] =
    "root-token,root,1,\"tollgate:admins\"\n"
    "alice-token,alice,2,\"\"\n";

class AdminServiceTest : public testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(scratch_, test_support::MakeScratchDir("tollgate_admin"));
    ASSERT_OK(fx_.Open(engine::SettleByHand()));
    gate_ = std::make_unique<rpc::AccessGate>(*fx_.api, fx_.clock, nullptr);
    rpc::Authenticators authenticators;
    ASSERT_OK_AND_ASSIGN(auth::TokenTable tokens, auth::ParseTokenFile(kTokens, "tokens.csv"));
    authenticators.tokens = std::make_shared<const auth::TokenTable>(std::move(tokens));
    ASSERT_OK_AND_ASSIGN(auth::Authorizer authorizer, auth::Authorizer::Create(auth::Policy{}));
    gate_->Configure(std::move(authenticators),
                     std::make_shared<const auth::Authorizer>(std::move(authorizer)));
    ASSERT_OK_AND_ASSIGN(store_, storage::RocksDbStore::Open(scratch_ + "/data"));
  }
  void TearDown() override {
    if (server_ != nullptr) server_->Shutdown();
    test_support::RemoveScratchDir(scratch_);
  }

  // Serves `service` on loopback and returns a stub.
  std::unique_ptr<v1::AdminService::Stub> Serve(rpc::AdminGrpcService& service) {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&service);
    server_ = builder.BuildAndStart();
    EXPECT_NE(port, 0);
    return v1::AdminService::NewStub(grpc::CreateChannel("127.0.0.1:" + std::to_string(port),
                                                         grpc::InsecureChannelCredentials()));
  }

  static grpc::Status Backup(v1::AdminService::Stub& stub, const std::string& token,
                             const std::string& to, v1::BackupResponse* response) {
    grpc::ClientContext context;
    context.AddMetadata("authorization", "Bearer " + token);
    v1::BackupRequest request;
    request.set_to(to);
    return stub.Backup(&context, request, response);
  }

  std::string scratch_;
  engine::ExecutorFixture fx_;
  std::unique_ptr<rpc::AccessGate> gate_;
  std::unique_ptr<storage::RocksDbStore> store_;
  std::unique_ptr<grpc::Server> server_;
};

TEST_F(AdminServiceTest, WritesACheckpointForAnAdminOnly) {
  storage::WriteBatch batch;
  batch.Put("k", "v");
  ASSERT_OK(store_->Commit(batch).status());
  rpc::AdminGrpcService service(
      *gate_, [&](const std::string& dir) { return store_->Backup(dir); }, store_->Identity());
  std::unique_ptr<v1::AdminService::Stub> stub = Serve(service);
  const std::string to = scratch_ + "/backup";

  v1::BackupResponse response;
  grpc::Status denied = Backup(*stub, "alice-token", to, &response);
  EXPECT_EQ(denied.error_code(), grpc::StatusCode::PERMISSION_DENIED) << denied.error_message();
  EXPECT_FALSE(fs::exists(to));
  EXPECT_EQ(Backup(*stub, "wrong", to, &response).error_code(), grpc::StatusCode::UNAUTHENTICATED);

  grpc::Status done = Backup(*stub, "root-token", to, &response);
  ASSERT_TRUE(done.ok()) << done.error_message();
  EXPECT_EQ(response.revision(), store_->CurrentRevision());
  EXPECT_EQ(response.to(), to);
  EXPECT_EQ(response.store_id(), store_->Identity().store_id);
  EXPECT_TRUE(fs::exists(fs::path(to) / "CURRENT"));

  // The same target again: refused, the first backup untouched.
  grpc::Status again = Backup(*stub, "root-token", to, &response);
  EXPECT_EQ(again.error_code(), grpc::StatusCode::ALREADY_EXISTS);
  EXPECT_TRUE(absl::StrContains(again.error_message(), to)) << again.error_message();
}

TEST_F(AdminServiceTest, RefusesBadTargetsNamingThem) {
  rpc::AdminGrpcService service(
      *gate_, [&](const std::string& dir) { return store_->Backup(dir); }, store_->Identity());
  std::unique_ptr<v1::AdminService::Stub> stub = Serve(service);
  v1::BackupResponse response;
  struct Case {
    std::string to;
    grpc::StatusCode code;
    std::string text;
  };
  const Case cases[] = {
      {"", grpc::StatusCode::INVALID_ARGUMENT, "to: required"},
      {"relative/dir", grpc::StatusCode::INVALID_ARGUMENT, "not an absolute path"},
      {scratch_, grpc::StatusCode::ALREADY_EXISTS, "already exists"},
      {scratch_ + "/no/such/parent", grpc::StatusCode::FAILED_PRECONDITION, "parent"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.to);
    grpc::Status status = Backup(*stub, "root-token", c.to, &response);
    EXPECT_EQ(status.error_code(), c.code) << status.error_message();
    EXPECT_TRUE(absl::StrContains(status.error_message(), c.text)) << status.error_message();
  }
  EXPECT_FALSE(fs::exists(scratch_ + "/no"));
}

// With the etcd store there is no backup function: UNIMPLEMENTED, pointing at etcdctl.
TEST_F(AdminServiceTest, EtcdStoreAnswersUnimplementedNamingEtcdctl) {
  rpc::AdminGrpcService service(*gate_, nullptr, storage::StoreIdentity{"id", 1});
  std::unique_ptr<v1::AdminService::Stub> stub = Serve(service);
  v1::BackupResponse response;
  grpc::Status status = Backup(*stub, "root-token", scratch_ + "/etcd-backup", &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNIMPLEMENTED);
  EXPECT_TRUE(absl::StrContains(status.error_message(), "etcdctl snapshot save"))
      << status.error_message();
}

}  // namespace
}  // namespace tollgate::rpc
