// CliClient with a comma-separated --server list (docs/ha.md): an unreachable replica is
// skipped, a follower's "not the leader" answer (the real LeaderRedirectService) is followed to
// the leader it names, and an answer that is not a redirect is returned unchanged.
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "clients/cpp/tollgate_client.h"
#include "core/clock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "services/engine/admission_executor.h"
#include "services/engine/tollgate_api.h"
#include "services/ha/leader_redirect_service.h"
#include "services/rpc/grpc_services.h"
#include "storage/memory_store.h"

namespace tollgate::cli {
namespace {

// A leader: tollgated's services over an in-memory store.
class Leader {
 public:
  Leader() : clock_(absl::FromUnixSeconds(1700000000)) {
    engine::AdmissionExecutor::Options options;
    executor_ = *engine::AdmissionExecutor::Open(store_, clock_, core::SchedulerConfig(), options);
    api_ = std::make_unique<engine::TollgateApi>(*executor_);
    admission_ = std::make_unique<rpc::AdmissionGrpcService>(*api_);
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(admission_.get());
    server_ = builder.BuildAndStart();
    address_ = absl::StrCat("127.0.0.1:", port);
  }
  ~Leader() {
    admission_->StopWatches();
    server_->Shutdown(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
  }
  const std::string& address() const { return address_; }

 private:
  storage::MemoryStore store_;
  core::SimulatedClock clock_;
  std::unique_ptr<engine::AdmissionExecutor> executor_;
  std::unique_ptr<engine::TollgateApi> api_;
  std::unique_ptr<rpc::AdmissionGrpcService> admission_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
};

// A follower replica: answers every tollgate.v1 call with the redirect, counting them.
class Follower {
 public:
  explicit Follower(std::string leader)
      : leader_(std::move(leader)), redirect_([this] {
          absl::MutexLock lock(&mu_);
          ++calls_;
          return leader_;
        }) {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterCallbackGenericService(&redirect_);
    server_ = builder.BuildAndStart();
    address_ = absl::StrCat("127.0.0.1:", port);
  }
  ~Follower() { server_->Shutdown(absl::ToChronoTime(absl::Now() + absl::Seconds(5))); }
  const std::string& address() const { return address_; }
  int calls() const {
    absl::MutexLock lock(&mu_);
    return calls_;
  }

 private:
  const std::string leader_;
  mutable absl::Mutex mu_;
  int calls_ ABSL_GUARDED_BY(mu_) = 0;
  ha::LeaderRedirectService redirect_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
};

v1::SubmitRequest SubmitOf(const std::string& name) {
  v1::SubmitRequest request;
  request.mutable_workload()->mutable_metadata()->set_namespace_("team");
  request.mutable_workload()->mutable_metadata()->set_name(name);
  request.mutable_workload()->mutable_spec()->set_queue_name("q");
  v1::PodSet* pod_set = request.mutable_workload()->mutable_spec()->add_pod_sets();
  pod_set->set_name("main");
  pod_set->set_count(1);
  (*pod_set->mutable_requests())["cpu"] = "1";
  return request;
}

TEST(CliReplicasTest, SkipsAnUnreachableReplicaAndFollowsTheNamedLeader) {
  Leader leader;
  Follower follower(leader.address());
  // Port 1 refuses connections; the leader itself is not in the list.
  client::TollgateClient client(absl::StrCat("127.0.0.1:1,", follower.address()),
                                absl::Seconds(10));
  absl::StatusOr<v1::SubmitResponse> submitted = client.Submit(SubmitOf("first"));
  ASSERT_TRUE(submitted.ok()) << submitted.status();
  EXPECT_EQ(follower.calls(), 1);
  // The leader is used from now on.
  v1::GetWorkloadRequest get;
  get.mutable_workload()->set_namespace_("team");
  get.mutable_workload()->set_name("first");
  ASSERT_TRUE(client.GetWorkload(get).ok());
  EXPECT_EQ(follower.calls(), 1);
  // Errors that are not redirects come back as they are, without trying elsewhere.
  get.mutable_workload()->set_name("absent");
  EXPECT_TRUE(absl::IsNotFound(client.GetWorkload(get).status()));
}

TEST(CliReplicasTest, NoLeaderAnywhereIsUnavailableOnceTheTimeoutPasses) {
  Follower follower("");
  client::TollgateClient client(follower.address(), absl::Milliseconds(500));
  const absl::Time start = absl::Now();
  absl::StatusOr<v1::SubmitResponse> submitted = client.Submit(SubmitOf("x"));
  EXPECT_TRUE(absl::IsUnavailable(submitted.status())) << submitted.status();
  EXPECT_TRUE(absl::StrContains(submitted.status().message(), "no leader is elected"))
      << submitted.status();
  EXPECT_GE(follower.calls(), 2) << "the follower should have been asked again";
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
}

}  // namespace
}  // namespace tollgate::cli
