// The CLI at 100,000 workloads: whole lists are read in pages (one message would be ~45 MB, over
// gRPC's 4 MB default) and `describe` asks only for what it prints. The workloads are written
// straight into the store and loaded the way a restart loads them, so the test takes seconds.

#include <grpcpp/grpcpp.h>

#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "clients/cpp/tollgate_client.h"
#include "cmd/tollgate/cli_commands.h"
#include "core/clock.h"
#include "core/scheduler_config.h"
#include "core/workload.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/api/api_codec.h"
#include "services/engine/admission_executor.h"
#include "services/engine/state_keys.h"
#include "services/engine/tollgate_api.h"
#include "services/rpc/grpc_services.h"
#include "test/services/engine/executor_fixture.h"
#include "test/status_matchers.h"

namespace tollgate::cli {
namespace {

using ::testing::HasSubstr;

constexpr int kWorkloads = 100000;
const absl::Time kEpoch = absl::FromUnixSeconds(1767225600);

std::string Name(int i) { return absl::StrCat("wl-", 100000 + i); }

class CliPagingTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto* fixture = new Fixture();
    // Configuration first (through the API, so it is stored as tollgated stores it), then the
    // workloads as stored records, then a reopen that loads them.
    ASSERT_NO_FATAL_FAILURE(fixture->Open());
    engine::OneQueueConfig config;
    config.nominal_cpu = "1";
    ASSERT_OK(fixture->fx.ApplyOneQueue(config));
    fixture->Close();
    storage::WriteBatch batch;
    for (int i = 0; i < kWorkloads; ++i) {
      core::Workload wl;
      wl.uid = absl::StrCat("uid-", i);
      wl.creation_time = kEpoch + absl::Milliseconds(i);
      wl.spec.namespace_name = "team";
      wl.spec.name = Name(i);
      wl.spec.queue_name = "q";
      // More than the ClusterQueue holds: every one stays pending.
      wl.spec.pod_sets = {core::PodSetSpec{"main", 1, std::nullopt, {{"cpu", 2000}}, {}, {}}};
      v1::Workload proto;
      api::WorkloadToProto(wl, &proto);
      batch.Put(engine::WorkloadStoreKey("team", wl.spec.name), proto.SerializeAsString());
    }
    ASSERT_TRUE(fixture->fx.store.Commit(batch).ok());
    ASSERT_NO_FATAL_FAILURE(fixture->Open());
    fixture_ = fixture;
  }

  static void TearDownTestSuite() {
    delete fixture_;
    fixture_ = nullptr;
  }

  void SetUp() override { ASSERT_NE(fixture_, nullptr); }

  struct Result {
    int code = -1;
    std::string out;
    std::string err;
  };

  static Result Run(std::vector<std::string> args) {
    std::istringstream in;
    std::ostringstream out;
    std::ostringstream err;
    CliEnv env{in, out, err, fixture_->address, fixture_->fx.clock};
    Result r;
    r.code = RunCli(args, env);
    r.out = out.str();
    r.err = err.str();
    return r;
  }

  struct Fixture {
    void Open() {
      // The queue is full; cycles would only re-find that.
      ASSERT_OK(fx.Open(engine::SettleByHand()));
      engine::TollgateApi& api = *fx.api;
      admission = std::make_unique<rpc::AdmissionGrpcService>(api);
      config = std::make_unique<rpc::ConfigGrpcService>(api);
      visibility = std::make_unique<rpc::VisibilityGrpcService>(api);
      grpc::ServerBuilder builder;
      int port = 0;
      builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
      builder.RegisterService(admission.get());
      builder.RegisterService(config.get());
      builder.RegisterService(visibility.get());
      server = builder.BuildAndStart();
      ASSERT_NE(server, nullptr);
      address = absl::StrCat("127.0.0.1:", port);
    }
    void Close() {
      if (server != nullptr) {
        admission->StopWatches();
        server->Shutdown(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
      }
      server.reset();
      // The services before what they use: the admission service's watch hub reads the
      // executor until the service is destroyed (as in CliTest's server, where ASan saw a use
      // after free when the executor went first). Then fx.Close() stops the executor before the
      // API, whose objects its queued operations use.
      visibility.reset();
      config.reset();
      admission.reset();
      fx.Close();
    }
    ~Fixture() { Close(); }

    engine::ExecutorFixture fx{kEpoch + absl::Minutes(5)};
    std::unique_ptr<rpc::AdmissionGrpcService> admission;
    std::unique_ptr<rpc::ConfigGrpcService> config;
    std::unique_ptr<rpc::VisibilityGrpcService> visibility;
    std::unique_ptr<grpc::Server> server;
    std::string address;
  };
  static Fixture* fixture_;
};

CliPagingTest::Fixture* CliPagingTest::fixture_ = nullptr;

TEST_F(CliPagingTest, GetWorkloadsReadsAllHundredThousandInPages) {
  const absl::Time start = absl::Now();
  Result r = Run({"get", "workloads", "-A"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  std::vector<absl::string_view> lines = absl::StrSplit(r.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), static_cast<size_t>(kWorkloads) + 1) << r.out.substr(0, 500);
  // Every workload once, in name order.
  std::set<std::string> names;
  for (size_t i = 1; i < lines.size(); ++i) {
    std::vector<absl::string_view> cells = absl::StrSplit(lines[i], ' ', absl::SkipEmpty());
    ASSERT_GE(cells.size(), 2u) << lines[i];
    names.insert(std::string(cells[1]));
  }
  EXPECT_EQ(names.size(), static_cast<size_t>(kWorkloads));
  EXPECT_THAT(std::string(lines[1]), HasSubstr(Name(0)));
  EXPECT_THAT(std::string(lines.back()), HasSubstr(Name(kWorkloads - 1)));
  std::cerr << "get workloads -A over " << kWorkloads << " workloads: " << absl::Now() - start
            << "\n";
}

TEST_F(CliPagingTest, OneMessageWouldNotFitPagesDo) {
  client::TollgateClient client(fixture_->address);
  v1::ListWorkloadsRequest one_message;
  one_message.set_limit(kWorkloads);
  absl::StatusOr<v1::ListWorkloadsResponse> whole = client.ListWorkloads(one_message);
  // The server ends a page before the message limit rather than fail.
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_LT(whole->workloads_size(), kWorkloads);
  EXPECT_FALSE(whole->continue_token().empty());
  EXPECT_EQ(whole->workloads_size() + whole->remaining_item_count(), kWorkloads);
}

TEST_F(CliPagingTest, DescribeClusterQueueShowsTheHeadAndTheCount) {
  Result r = Run({"describe", "clusterqueue", "cq"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr(absl::StrCat("Pending Workloads (", kWorkloads, ")")));
  EXPECT_THAT(r.out, HasSubstr(absl::StrCat("team/", Name(0))));
  EXPECT_THAT(r.out, HasSubstr(absl::StrCat("... and ", kWorkloads - 20, " more")));
}

TEST_F(CliPagingTest, DescribeWorkloadShowsItsPositionWithoutTheQueue) {
  Result r = Run({"describe", "workload", Name(54321), "-n", "team"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr(absl::StrCat("54322 of ", kWorkloads, " in LocalQueue team/q")));
  EXPECT_THAT(r.out, HasSubstr(absl::StrCat("54322 of ", kWorkloads, " in ClusterQueue cq")));
}

}  // namespace
}  // namespace tollgate::cli
