// The CLI end to end: every command runs in-process against a real gRPC server (the services of
// tollgated over TollgateApi, AdmissionExecutor and RocksDbStore in a temporary directory) on a
// loopback port, and its output is captured from the injected streams.
#include "cmd/tollgate/cli_commands.h"

#include <grpcpp/grpcpp.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <streambuf>
#include <string>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/civil_time.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "clients/cpp/tollgate_client.h"
#include "cmd/tollgate/client_config.h"
#include "common/file_util.h"
#include "core/clock.h"
#include "core/scheduler_config.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/engine/admission_executor.h"
#include "services/engine/tollgate_api.h"
#include "services/manifest/manifest_parser.h"
#include "services/rpc/grpc_services.h"
#include "services/rpc/inventory_service.h"
#include "storage/rocksdb_store.h"

namespace tollgate::cli {
namespace {

using ::testing::AllOf;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::StartsWith;

constexpr absl::Duration kWaitTimeout = absl::Seconds(20);

std::string DeployFile(absl::string_view name) {
  return absl::StrCat(TOLLGATE_DEPLOY_DIR, "/evalhub/", name);
}

absl::Time ServerEpoch() {
  return absl::FromCivil(absl::CivilSecond(2026, 1, 1, 0, 0, 0), absl::UTCTimeZone());
}

// A string sink that a watching thread writes while the test reads and waits on it.
class SyncStringBuf : public std::streambuf {
 public:
  std::string str() const {
    absl::MutexLock lock(&mu_);
    return data_;
  }
  // True once some line matches `pattern` (ECMAScript), false at the deadline.
  bool WaitForLine(const std::string& pattern, absl::Duration timeout) const {
    const std::regex re(pattern);
    auto found = [&] {
      for (absl::string_view line : absl::StrSplit(data_, '\n')) {
        if (std::regex_search(line.begin(), line.end(), re)) return true;
      }
      return false;
    };
    absl::MutexLock lock(&mu_);
    return mu_.AwaitWithTimeout(absl::Condition(&found), timeout);
  }

 protected:
  int_type overflow(int_type ch) override {
    if (ch == traits_type::eof()) return traits_type::not_eof(ch);
    absl::MutexLock lock(&mu_);
    data_.push_back(traits_type::to_char_type(ch));
    return ch;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    absl::MutexLock lock(&mu_);
    data_.append(s, static_cast<size_t>(n));
    return n;
  }

 private:
  mutable absl::Mutex mu_;
  std::string data_ ABSL_GUARDED_BY(mu_);
};

// tollgated's services on 127.0.0.1:0 over a fresh store, scheduling continuously like the real
// server, on a simulated clock so creation times (and so ages) are known.
class TestServer {
 public:
  // With `schedule_continuously` false nothing is admitted unless a client calls Admit.
  static std::unique_ptr<TestServer> Start(bool schedule_continuously) {
    auto server = std::unique_ptr<TestServer>(new TestServer());
    std::string dir =
        (std::filesystem::temp_directory_path() / "tollgate-cli-test-XXXXXX").string();
    if (mkdtemp(dir.data()) == nullptr) {
      ADD_FAILURE() << "mkdtemp: " << std::strerror(errno);
      return nullptr;
    }
    server->dir_ = dir;
    absl::StatusOr<std::unique_ptr<storage::RocksDbStore>> store =
        storage::RocksDbStore::Open(dir + "/db");
    if (!store.ok()) {
      ADD_FAILURE() << store.status();
      return nullptr;
    }
    server->store_ = *std::move(store);
    engine::AdmissionExecutor::Options options;
    options.schedule_continuously = schedule_continuously;
    absl::StatusOr<std::unique_ptr<engine::AdmissionExecutor>> executor =
        engine::AdmissionExecutor::Open(*server->store_, server->clock_, core::SchedulerConfig(),
                                        options);
    if (!executor.ok()) {
      ADD_FAILURE() << executor.status();
      return nullptr;
    }
    server->executor_ = *std::move(executor);
    server->api_ = std::make_unique<engine::TollgateApi>(*server->executor_);
    server->admission_ = std::make_unique<rpc::AdmissionGrpcService>(*server->api_);
    server->config_ = std::make_unique<rpc::ConfigGrpcService>(*server->api_);
    server->visibility_ = std::make_unique<rpc::VisibilityGrpcService>(*server->api_);
    server->checks_ = std::make_unique<rpc::AdmissionCheckGrpcService>(
        *server->api_, server->admission_->mutable_watch_hub());
    server->inventory_ = std::make_unique<rpc::InventoryGrpcService>(*server->api_);
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(server->admission_.get());
    builder.RegisterService(server->config_.get());
    builder.RegisterService(server->visibility_.get());
    builder.RegisterService(server->checks_.get());
    builder.RegisterService(server->inventory_.get());
    server->server_ = builder.BuildAndStart();
    if (server->server_ == nullptr || port == 0) {
      ADD_FAILURE() << "cannot start the gRPC server";
      return nullptr;
    }
    server->address_ = absl::StrCat("127.0.0.1:", port);
    return server;
  }

  ~TestServer() {
    if (server_ != nullptr) {
      admission_->StopWatches();
      server_->Shutdown(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
    }
    server_.reset();
    // The services before what they use: the admission service's watch thread waits on the
    // executor until the service is destroyed (ASan saw a use after free when the executor
    // went first).
    inventory_.reset();
    checks_.reset();
    visibility_.reset();
    config_.reset();
    admission_.reset();
    api_.reset();
    executor_.reset();
    store_.reset();
    std::error_code ignored;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ignored);
  }

  const std::string& address() const { return address_; }

 private:
  TestServer() : clock_(ServerEpoch()) {}

  std::string dir_;
  core::SimulatedClock clock_;
  std::unique_ptr<storage::RocksDbStore> store_;
  std::unique_ptr<engine::AdmissionExecutor> executor_;
  std::unique_ptr<engine::TollgateApi> api_;
  std::unique_ptr<rpc::AdmissionGrpcService> admission_;
  std::unique_ptr<rpc::ConfigGrpcService> config_;
  std::unique_ptr<rpc::VisibilityGrpcService> visibility_;
  std::unique_ptr<rpc::AdmissionCheckGrpcService> checks_;
  std::unique_ptr<rpc::InventoryGrpcService> inventory_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
};

struct CliResult {
  int code = -1;
  std::string out;
  std::string err;
};

std::ostream& operator<<(std::ostream& os, const CliResult& r) {
  return os << "exit " << r.code << "\n--- stdout\n" << r.out << "--- stderr\n" << r.err;
}

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = TestServer::Start(ScheduleContinuously());
    ASSERT_NE(server_, nullptr);
  }
  virtual bool ScheduleContinuously() const { return true; }

  // Runs `tollgate ARGS...` with the server taken from $TOLLGATE_SERVER, as a user would set it.
  CliResult Run(std::vector<std::string> args, const std::string& stdin_text = "") {
    std::istringstream in(stdin_text);
    std::ostringstream out;
    std::ostringstream err;
    CliEnv env{in, out, err, server_->address(), cli_clock_};
    CliResult result;
    result.code = RunCli(args, env);
    result.out = out.str();
    result.err = err.str();
    return result;
  }

  CliResult RunOk(std::vector<std::string> args, const std::string& stdin_text = "") {
    CliResult r = Run(std::move(args), stdin_text);
    EXPECT_EQ(r.code, kExitOk) << r;
    return r;
  }

  // Re-runs `args` until its stdout satisfies `done` or the deadline passes; admission runs on
  // the server's own thread, after the write that triggers it has been acknowledged.
  CliResult RunUntil(std::vector<std::string> args,
                     const std::function<bool(const std::string&)>& done) {
    const absl::Time deadline = absl::Now() + kWaitTimeout;
    CliResult r;
    while (true) {
      r = Run(args);
      if (r.code == kExitOk && done(r.out)) return r;
      if (absl::Now() > deadline) {
        ADD_FAILURE() << "condition not reached before the deadline; last output:\n" << r;
        return r;
      }
      absl::SleepFor(absl::Milliseconds(20));
    }
  }

  void ApplyEvalHub() {
    RunOk({"apply", "-f", DeployFile("queues.yaml"), "-f", DeployFile("priorities.yaml")});
    RunOk({"apply", "-f", DeployFile("workloads.yaml")});
    // 5 admitted and 2 waiting in team-b once admission settles (see deploy/evalhub).
    RunUntil({"get", "workloads", "-A"}, [](const std::string& out) {
      return CountLines(out, "Admitted") == 5 && CountLines(out, "Pending") == 2;
    });
  }

  static int CountLines(const std::string& text, absl::string_view needle) {
    int n = 0;
    for (absl::string_view line : absl::StrSplit(text, '\n')) n += absl::StrContains(line, needle);
    return n;
  }

  // The row of `name` in a table, "" when absent.
  static std::string RowOf(const std::string& table, absl::string_view name) {
    for (absl::string_view line : absl::StrSplit(table, '\n')) {
      std::vector<absl::string_view> cells = absl::StrSplit(line, ' ', absl::SkipEmpty());
      for (absl::string_view cell : cells) {
        if (cell == name) return std::string(line);
      }
    }
    return "";
  }

  std::unique_ptr<TestServer> server_;
  // The CLI's "now": five minutes after the server's clock, which stamps every creation.
  core::SimulatedClock cli_clock_{ServerEpoch() + absl::Minutes(5)};
};

// ---------------------------------------------------------------------------------------------
// The node inventory of topology-aware scheduling: get nodes, describe node, the topology tree.

v1::Node InventoryNode(const std::string& name, const std::string& rack, const std::string& gpus) {
  v1::Node node;
  node.mutable_metadata()->set_name(name);
  (*node.mutable_metadata()->mutable_labels())["rack"] = rack;
  (*node.mutable_metadata()->mutable_labels())["kubernetes.io/hostname"] = name;
  (*node.mutable_status()->mutable_allocatable())["gpu"] = gpus;
  (*node.mutable_status()->mutable_allocatable())["pods"] = "10";
  return node;
}

TEST_F(CliTest, NodesAndTheTopologyTreeShowWhatIsPlacedWhere) {
  RunOk({"apply", "-f", "-"}, R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: Topology
metadata: {name: racks}
spec:
  levels: [{nodeLabel: rack}, {nodeLabel: kubernetes.io/hostname}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: tas}
spec: {topologyName: racks}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
spec:
  resourceGroups:
  - coveredResources: [gpu]
    flavors: [{name: tas, resources: [{name: gpu, nominalQuota: 16}]}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: q, namespace: default}
spec: {clusterQueue: cq}
)");
  auto channel = grpc::CreateChannel(server_->address(), grpc::InsecureChannelCredentials());
  std::unique_ptr<v1::InventoryService::Stub> inventory = v1::InventoryService::NewStub(channel);
  v1::UpsertNodesRequest upsert;
  *upsert.add_nodes() = InventoryNode("n1", "r1", "4");
  *upsert.add_nodes() = InventoryNode("n2", "r2", "8");
  upsert.mutable_nodes(1)->mutable_spec()->set_unschedulable(true);
  // A third node, not ready since a known time, with no capacity to place on.
  *upsert.add_nodes() = InventoryNode("n3", "r3", "4");
  upsert.mutable_nodes(2)->mutable_status()->set_ready(false);
  upsert.mutable_nodes(2)->mutable_status()->mutable_not_ready_since()->set_seconds(1700000000);
  v1::UpsertNodesResponse upserted;
  grpc::ClientContext upsert_context;
  ASSERT_TRUE(inventory->UpsertNodes(&upsert_context, upsert, &upserted).ok());

  RunOk({"submit", "-f", "-"}, R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata: {name: train, namespace: default}
spec:
  queueName: q
  podSets:
  - name: workers
    count: 3
    topologyRequest: {required: rack}
    template: {spec: {containers: [{name: c, resources: {requests: {gpu: 1}}}]}}
)");
  RunUntil({"get", "workloads"},
           [](const std::string& out) { return absl::StrContains(out, "Admitted"); });

  // describe workload shows where its pods went.
  const CliResult workload = RunOk({"describe", "workload", "train"});
  EXPECT_THAT(workload.out, HasSubstr("Placement of workers (kubernetes.io/hostname):"));
  EXPECT_THAT(RowOf(workload.out, "n1"), HasSubstr("3"));

  const CliResult nodes = RunOk({"get", "nodes"});
  EXPECT_THAT(nodes.out, StartsWith("NAME"));
  // The cordoned node takes no pods, so the three sit on n1.
  EXPECT_THAT(RowOf(nodes.out, "n1"),
              AllOf(HasSubstr("Ready"), HasSubstr("tas"), HasSubstr("gpu=1")));
  EXPECT_THAT(RowOf(nodes.out, "n2"), HasSubstr("Ready,SchedulingDisabled"));
  EXPECT_THAT(RowOf(RunOk({"get", "nodes", "-o", "wide"}).out, "n1"), HasSubstr("rack=r1"));
  EXPECT_THAT(Run({"get", "node", "n9"}).err, HasSubstr("node \"n9\" not found"));
  EXPECT_THAT(RowOf(nodes.out, "n3"), HasSubstr("NotReady"));
  EXPECT_THAT(RunOk({"describe", "node", "n3"}).out,
              AllOf(HasSubstr("Not Ready Since:"), HasSubstr("2023-11-14T22:13:20Z")));
  EXPECT_THAT(RunOk({"describe", "node", "n1"}).out, Not(HasSubstr("Not Ready Since")));

  const CliResult described = RunOk({"describe", "node", "n1"});
  EXPECT_THAT(described.out, HasSubstr("Flavors:"));
  EXPECT_THAT(described.out, HasSubstr("Allocatable:"));
  EXPECT_THAT(RowOf(described.out, "default/train"),
              AllOf(HasSubstr("workers"), HasSubstr("tas"), HasSubstr(" 3 "), HasSubstr("gpu=1")));

  const CliResult tree = RunOk({"get", "topology", "-o", "usage"});
  EXPECT_THAT(tree.out, HasSubstr("Flavor tas (topology racks: rack > kubernetes.io/hostname)"));
  // Each rack, then its hosts indented under it; the cordoned node (and so its rack) offers no
  // capacity, as in Kueue's topology snapshot.
  const size_t r1 = tree.out.find("\n  r1 ");
  const size_t n1 = tree.out.find("\n    n1 ");
  ASSERT_NE(r1, std::string::npos) << tree.out;
  ASSERT_NE(n1, std::string::npos) << tree.out;
  EXPECT_LT(r1, n1);
  EXPECT_THAT(tree.out, Not(HasSubstr(" r2 ")));
  EXPECT_THAT(Run({"get", "topology", "other", "-o", "usage"}).err,
              HasSubstr("no ResourceFlavor uses topology \"other\""));
}

// ---------------------------------------------------------------------------------------------
// The deploy/ examples.

TEST(DeployExamplesTest, ParseAsTheEvalHubSetup) {
  auto parse = [](absl::string_view file) {
    absl::StatusOr<std::string> text = common::ReadFileToString(DeployFile(file));
    EXPECT_TRUE(text.ok()) << text.status();
    absl::StatusOr<std::vector<manifest::Manifest>> parsed =
        manifest::ParseManifests(text.value_or(""), file);
    EXPECT_TRUE(parsed.ok()) << parsed.status();
    return parsed.ok() ? *parsed : std::vector<manifest::Manifest>();
  };

  std::vector<manifest::Manifest> queues = parse("queues.yaml");
  std::vector<std::string> kinds;
  for (const manifest::Manifest& m : queues) kinds.push_back(m.kind);
  EXPECT_THAT(kinds, ::testing::ElementsAre("ResourceFlavor", "ClusterQueue", "ClusterQueue",
                                            "Namespace", "Namespace", "LocalQueue", "LocalQueue"));
  for (const manifest::Manifest& m : queues) {
    const auto& object = std::get<v1::ConfigObject>(m.object);
    if (object.has_cluster_queue()) {
      const v1::ClusterQueue& cq = object.cluster_queue();
      EXPECT_EQ(cq.spec().cohort(), "evalhub");
      EXPECT_EQ(cq.spec().preemption().within_cluster_queue(), "LowerPriority");
      ASSERT_EQ(cq.spec().resource_groups_size(), 1);
      const v1::FlavorQuotas& flavor = cq.spec().resource_groups(0).flavors(0);
      EXPECT_EQ(flavor.name(), "default-flavor");
      ASSERT_EQ(flavor.resources_size(), 3);
      EXPECT_EQ(flavor.resources(0).nominal_quota(), "32");
      EXPECT_EQ(flavor.resources(1).nominal_quota(), "128Gi");
      EXPECT_EQ(flavor.resources(2).name(), "nvidia.com/gpu");
      EXPECT_EQ(flavor.resources(2).nominal_quota(), "4");
    }
    if (object.has_local_queue()) {
      const v1::LocalQueue& lq = object.local_queue();
      EXPECT_EQ(lq.metadata().name(), "eval-queue");
      EXPECT_EQ(lq.spec().cluster_queue(), lq.metadata().namespace_() + "-cq");
    }
  }

  std::map<std::string, int> priorities;
  for (const manifest::Manifest& m : parse("priorities.yaml")) {
    const auto& wpc = std::get<v1::ConfigObject>(m.object).workload_priority_class();
    priorities[wpc.metadata().name()] = wpc.value();
  }
  EXPECT_THAT(priorities, ::testing::UnorderedElementsAre(::testing::Pair("production", 1000),
                                                          ::testing::Pair("routine", 500),
                                                          ::testing::Pair("experimental", 100)));

  std::set<std::string> namespaces;
  std::vector<manifest::Manifest> workloads = parse("workloads.yaml");
  EXPECT_GE(workloads.size(), 4u);
  for (const manifest::Manifest& m : workloads) {
    const auto* wl = std::get_if<v1::Workload>(&m.object);
    ASSERT_NE(wl, nullptr) << m.kind;
    namespaces.insert(wl->metadata().namespace_());
    EXPECT_EQ(wl->spec().queue_name(), "eval-queue");
    EXPECT_EQ(priorities.count(wl->spec().priority_class_name()), 1u)
        << wl->spec().priority_class_name();
    EXPECT_EQ(wl->spec().priority(), priorities[wl->spec().priority_class_name()]);
  }
  EXPECT_THAT(namespaces, ::testing::ElementsAre("team-a", "team-b"));
}

// ---------------------------------------------------------------------------------------------
// apply / submit

// Admission checks from the CLI: the kind, a quota reservation that waits, an operator's
// decision by hand, and bad input refused naming field and value.
TEST_F(CliTest, AdmissionChecksFromTheCli) {
  RunOk({"apply", "-f", "-"}, R"(apiVersion: v1
kind: Namespace
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: rf}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: AdmissionCheck
metadata: {name: approval}
spec: {controllerName: example.com/approval}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
spec:
  admissionChecks: [approval]
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: rf, resources: [{name: cpu, nominalQuota: 4}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: q, namespace: default}
spec: {clusterQueue: cq}
)");
  EXPECT_THAT(RunOk({"get", "clusterqueues"}).out, HasSubstr("False (AdmissionCheckInactive)"));
  EXPECT_THAT(RunOk({"get", "ac"}).out,
              AllOf(HasSubstr("example.com/approval"), HasSubstr("False (NoCondition)")));
  EXPECT_THAT(RunOk({"check", "activate", "approval"}).out,
              HasSubstr("admissioncheck.kueue.x-k8s.io/approval activated"));
  EXPECT_THAT(RowOf(RunOk({"get", "admissionchecks"}).out, "approval"), HasSubstr("True"));

  RunOk({"submit", "-f", "-"}, R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: w, namespace: default}
spec:
  queueName: q
  podSets: [{name: main, count: 1, template: {spec: {containers: [{name: c, resources: {requests: {cpu: 1}}}]}}}]
)");
  const CliResult listed = RunUntil({"get", "workloads"}, [](const std::string& out) {
    return absl::StrContains(out, "QuotaReserved");
  });
  EXPECT_THAT(RowOf(listed.out, "w"), HasSubstr("waiting for checks: approval=Pending"));
  EXPECT_THAT(RowOf(RunOk({"get", "workloads", "--status", "quotareserved"}).out, "w"),
              HasSubstr("QuotaReserved"));
  EXPECT_THAT(RowOf(RunOk({"get", "workloads", "--status", "admitted"}).out, "w"), IsEmpty());
  EXPECT_THAT(RunOk({"describe", "workload", "w"}).out,
              AllOf(HasSubstr("Admission Checks:"), HasSubstr("approval"), HasSubstr("Pending")));

  // Bad input: the field and the value, and nothing changes.
  CliResult bad = Run({"check", "set", "w", "--check", "nope", "--state", "Ready"});
  EXPECT_EQ(bad.code, kExitFailure) << bad;
  EXPECT_THAT(bad.err, HasSubstr("AdmissionCheck \"nope\" not found"));
  bad = Run({"check", "set", "w", "--check", "approval", "--state", "Approved"});
  EXPECT_EQ(bad.code, kExitFailure) << bad;
  EXPECT_THAT(bad.err, HasSubstr("state: unsupported value \"Approved\""));
  bad = Run({"check", "set", "w", "--check", "approval"});
  EXPECT_EQ(bad.code, kExitUsage) << bad;
  bad = Run({"check", "set", "w", "--check", "approval", "--state", "Ready", "--label", "nope"});
  EXPECT_EQ(bad.code, kExitUsage) << bad;
  EXPECT_THAT(bad.err, HasSubstr("--label \"nope\": want POD_SET:KEY=VALUE"));
  bad = Run({"check", "set", "w", "--check", "approval", "--state", "Ready", "--revision", "1"});
  EXPECT_EQ(bad.code, kExitFailure) << bad;
  EXPECT_THAT(bad.err, HasSubstr("not the expected revision 1"));
  EXPECT_THAT(RowOf(RunOk({"get", "workloads"}).out, "w"), HasSubstr("QuotaReserved"));

  const CliResult approved =
      RunOk({"check", "set", "w", "--check", "approval", "--state", "Ready", "--message",
             "approved by ops", "--label", "main:approved=yes"});
  EXPECT_THAT(approved.out, HasSubstr("check approval set to Ready (Admitted; checks: "
                                      "approval=Ready)"));
  EXPECT_THAT(RunOk({"describe", "workload", "w"}).out,
              AllOf(HasSubstr("approved by ops"), HasSubstr("Pod Set Updates:"),
                    HasSubstr("approved=yes")));
  EXPECT_THAT(RunOk({"get", "workload", "w", "-o", "yaml"}).out,
              AllOf(HasSubstr("admissionChecks:"), HasSubstr("state: Ready")));
}

TEST_F(CliTest, MultiKueueKindsFromTheCli) {
  RunOk({"apply", "-f", "-"}, R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: MultiKueueConfig
metadata: {name: fleet}
spec: {clusters: [worker1, worker2]}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: MultiKueueCluster
metadata: {name: worker1}
spec: {kubeConfig: {locationType: Secret, location: worker1-secret}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: MultiKueueCluster
metadata: {name: worker2}
spec: {endpoint: {address: "127.0.0.1:7002", insecure: true}}
)");
  EXPECT_THAT(RowOf(RunOk({"get", "mkconf"}).out, "fleet"), HasSubstr("worker1,worker2"));
  // Kueue's CONNECTED column: nothing has connected to either worker.
  EXPECT_THAT(RowOf(RunOk({"get", "multikueueclusters"}).out, "worker1"),
              HasSubstr("False (NoCondition)"));
  EXPECT_THAT(RowOf(RunOk({"get", "mkc", "-o", "wide"}).out, "worker2"),
              HasSubstr("127.0.0.1:7002"));
  EXPECT_THAT(RunOk({"get", "mkc", "worker1", "-o", "yaml"}).out,
              AllOf(HasSubstr("kind: MultiKueueCluster"), HasSubstr("location: worker1-secret")));
}

// describe workload on a MultiKueue manager: the nominees, the winner and each worker's copy as
// the controller recorded it (status.multi_kueue_remotes), written here as the controller does.
TEST_F(CliTest, DescribeWorkloadShowsTheMultiKueueWorkers) {
  RunOk({"apply", "-f", "-"}, R"(apiVersion: v1
kind: Namespace
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: rf}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: MultiKueueConfig
metadata: {name: fleet}
spec: {clusters: [w1, w2]}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: AdmissionCheck
metadata: {name: mk}
spec:
  controllerName: kueue.x-k8s.io/multikueue
  parameters: {apiGroup: kueue.x-k8s.io, kind: MultiKueueConfig, name: fleet}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
spec:
  admissionChecks: [mk]
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: rf, resources: [{name: cpu, nominalQuota: 4}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: q, namespace: default}
spec: {clusterQueue: cq}
)");
  RunOk({"check", "activate", "mk"});
  RunOk({"submit", "-f", "-"}, R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: w, namespace: default}
spec:
  queueName: q
  podSets: [{name: main, count: 1, template: {spec: {containers: [{name: c, resources: {requests: {cpu: 1}}}]}}}]
)");
  RunUntil({"get", "workloads"},
           [](const std::string& out) { return absl::StrContains(out, "QuotaReserved"); });
  // Nothing recorded yet: no section.
  EXPECT_THAT(RunOk({"describe", "workload", "w"}).out, Not(HasSubstr("MultiKueue Workers:")));

  client::TollgateClient client(server_->address(), absl::Seconds(10));
  auto update = [&](const std::string& state, const std::string& winner,
                    const std::vector<std::string>& nominees,
                    const std::vector<std::pair<std::string, std::string>>& remotes) {
    v1::GetWorkloadRequest get;
    get.mutable_workload()->set_namespace_("default");
    get.mutable_workload()->set_name("w");
    absl::StatusOr<v1::Workload> wl = client.GetWorkload(get);
    ASSERT_TRUE(wl.ok()) << wl.status();
    v1::UpdateAdmissionCheckStateRequest request;
    *request.mutable_workload() = get.workload();
    request.set_check("mk");
    request.set_state(state);
    request.set_expected_revision(wl->metadata().resource_version());
    request.set_cluster_name(winner);
    if (!nominees.empty()) {
      request.set_set_nominated_cluster_names(true);
      for (const std::string& n : nominees) request.add_nominated_cluster_names(n);
    }
    request.set_set_multi_kueue_remotes(true);
    for (const auto& [cluster, remote_state] : remotes) {
      v1::MultiKueueRemoteState* remote = request.add_multi_kueue_remotes();
      remote->set_cluster(cluster);
      remote->set_state(remote_state);
    }
    absl::StatusOr<v1::UpdateAdmissionCheckStateResponse> updated =
        client.UpdateAdmissionCheckState(request);
    ASSERT_TRUE(updated.ok()) << updated.status();
  };

  // The MultiKueue Workers table, up to the next section.
  auto workers = [](const std::string& out) {
    const size_t start = out.find("MultiKueue Workers:");
    if (start == std::string::npos) return std::string();
    return out.substr(start, out.find("Conditions:", start) - start);
  };
  ASSERT_NO_FATAL_FAILURE(
      update("Pending", "", {"w1", "w2"}, {{"w1", "Pending"}, {"w2", "Unreachable"}}));
  std::string out = RunOk({"describe", "workload", "w"}).out;
  EXPECT_THAT(out, HasSubstr("Nominated Clusters:  w1, w2"));
  EXPECT_THAT(out, HasSubstr("MultiKueue Workers:"));
  EXPECT_THAT(out, ContainsRegex("CLUSTER +ROLE +COPY"));
  EXPECT_THAT(RowOf(workers(out), "w1"), ContainsRegex("nominated +Pending"));
  EXPECT_THAT(RowOf(workers(out), "w2"), ContainsRegex("nominated +Unreachable"));

  // w2 admitted its copy first and won; w1's copy is still there until the controller removes
  // it.
  ASSERT_NO_FATAL_FAILURE(update("Ready", "w2", {}, {{"w1", "Pending"}, {"w2", "Admitted"}}));
  out = RunOk({"describe", "workload", "w"}).out;
  EXPECT_THAT(out, HasSubstr("Cluster Name:  w2"));
  EXPECT_THAT(out, Not(HasSubstr("Nominated Clusters:")));
  EXPECT_THAT(RowOf(workers(out), "w1"), ContainsRegex("<none> +Pending"));
  EXPECT_THAT(RowOf(workers(out), "w2"), ContainsRegex("winner +Admitted"));
  // And the machine-readable form has it too.
  EXPECT_THAT(RunOk({"get", "workload", "w", "-o", "yaml"}).out,
              AllOf(HasSubstr("multiKueueRemotes:"), HasSubstr("state: Admitted")));
}

TEST_F(CliTest, ApplyPrintsKubectlLinesAndSendsEveryObject) {
  CliResult r = RunOk({"apply", "-f", DeployFile("queues.yaml")});
  EXPECT_EQ(r.out,
            "resourceflavor.kueue.x-k8s.io/default-flavor created\n"
            "clusterqueue.kueue.x-k8s.io/team-a-cq created\n"
            "clusterqueue.kueue.x-k8s.io/team-b-cq created\n"
            "namespace/team-a created\n"
            "namespace/team-b created\n"
            "localqueue.kueue.x-k8s.io/eval-queue created\n"
            "localqueue.kueue.x-k8s.io/eval-queue created\n");
  EXPECT_THAT(r.err, IsEmpty());

  r = RunOk({"apply", "-f", DeployFile("priorities.yaml")});
  EXPECT_EQ(r.out,
            "workloadpriorityclass.kueue.x-k8s.io/production created\n"
            "workloadpriorityclass.kueue.x-k8s.io/routine created\n"
            "workloadpriorityclass.kueue.x-k8s.io/experimental created\n");

  // The objects are on the server.
  r = RunOk({"get", "clusterqueues"});
  EXPECT_THAT(RowOf(r.out, "team-a-cq"),
              ContainsRegex("team-a-cq +evalhub +BestEffortFIFO +0 +0 +True"));
  EXPECT_THAT(RowOf(r.out, "team-b-cq"),
              ContainsRegex("team-b-cq +evalhub +BestEffortFIFO +0 +0 +True"));
  r = RunOk({"get", "workloadpriorityclasses"});
  EXPECT_THAT(RowOf(r.out, "production"), ContainsRegex("production +1000 +5m"));

  // Applying again changes nothing, as kubectl reports.
  r = RunOk({"apply", "-f", DeployFile("priorities.yaml")});
  EXPECT_EQ(r.out,
            "workloadpriorityclass.kueue.x-k8s.io/production unchanged\n"
            "workloadpriorityclass.kueue.x-k8s.io/routine unchanged\n"
            "workloadpriorityclass.kueue.x-k8s.io/experimental unchanged\n");
}

TEST_F(CliTest, ApplyFromStdinConfiguresChangedObjects) {
  RunOk({"apply", "-f", DeployFile("queues.yaml")});
  const std::string raised = R"(
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: team-a-cq
spec:
  cohortName: evalhub
  preemption:
    withinClusterQueue: LowerPriority
  resourceGroups:
  - coveredResources: ["cpu", "memory", "nvidia.com/gpu"]
    flavors:
    - name: default-flavor
      resources:
      - {name: cpu, nominalQuota: 64}
      - {name: memory, nominalQuota: 256Gi}
      - {name: nvidia.com/gpu, nominalQuota: 8}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata:
  name: default-flavor
)";
  CliResult r = RunOk({"apply", "-f", "-"}, raised);
  EXPECT_EQ(r.out,
            "clusterqueue.kueue.x-k8s.io/team-a-cq configured\n"
            "resourceflavor.kueue.x-k8s.io/default-flavor unchanged\n");
  r = RunOk({"usage", "team-a-cq"});
  EXPECT_THAT(RowOf(r.out, "nvidia.com/gpu"),
              ContainsRegex("default-flavor +nvidia.com/gpu +8 +0 +0"));
}

TEST_F(CliTest, ApplyRefusesABadFileAndChangesNothing) {
  const std::string bad = R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: ok-flavor}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: broken}
spec:
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: ok-flavor, resources: [{name: cpu, nominalQuote: 1}]}]
)";
  CliResult r = Run({"apply", "-f", "-"}, bad);
  EXPECT_EQ(r.code, kExitFailure) << r;
  EXPECT_THAT(r.err, AllOf(StartsWith("tollgate: "), HasSubstr("nominalQuote")));
  EXPECT_THAT(r.out, IsEmpty());
  r = RunOk({"get", "flavors"});
  EXPECT_THAT(r.out, IsEmpty());
  EXPECT_THAT(r.err, HasSubstr("No resources found"));
}

TEST_F(CliTest, ApplyTakesAFolderConfigurationFirst) {
  CliResult r = RunOk({"apply", "-f", absl::StrCat(TOLLGATE_DEPLOY_DIR, "/evalhub")});
  // Configuration goes in one request before any workload, whatever the file order.
  EXPECT_THAT(r.out, StartsWith("workloadpriorityclass.kueue.x-k8s.io/production created\n"));
  EXPECT_THAT(r.out, HasSubstr("localqueue.kueue.x-k8s.io/eval-queue created\n"
                               "workload.kueue.x-k8s.io/llama3-70b-mmlu created\n"));
  EXPECT_EQ(CountLines(r.out, "created"), 17) << r;
}

TEST_F(CliTest, ApplyReportsAMissingFile) {
  CliResult r = Run({"apply", "-f", "/nonexistent/queues.yaml"});
  EXPECT_EQ(r.code, kExitFailure) << r;
  EXPECT_THAT(r.err, HasSubstr("cannot read /nonexistent/queues.yaml"));
}

TEST_F(CliTest, SubmitTakesOnlyWorkloadsAndIsIdempotent) {
  RunOk({"apply", "-f", DeployFile("queues.yaml"), "-f", DeployFile("priorities.yaml")});
  CliResult r = Run({"submit", "-f", DeployFile("queues.yaml")});
  EXPECT_EQ(r.code, kExitFailure) << r;
  EXPECT_THAT(r.err, HasSubstr("is not a Workload"));

  r = RunOk({"submit", "-f", DeployFile("workloads.yaml")});
  EXPECT_THAT(r.out, HasSubstr("workload.kueue.x-k8s.io/llama3-70b-mmlu created\n"));
  EXPECT_THAT(r.out, HasSubstr("workload.kueue.x-k8s.io/qwen2-7b-arc created\n"));
  r = RunOk({"submit", "-f", DeployFile("workloads.yaml")});
  EXPECT_THAT(r.out, HasSubstr("workload.kueue.x-k8s.io/llama3-70b-mmlu unchanged\n"));
  EXPECT_THAT(r.out, Not(HasSubstr("created")));

  // -n places manifests that name no namespace, as with kubectl.
  r = RunOk({"submit", "-n", "team-b", "-f", "-"}, R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata: {name: gemma-2b-piqa}
spec:
  queueName: eval-queue
  podSets:
  - name: main
    count: 1
    template: {spec: {containers: [{name: c, resources: {requests: {cpu: 1}}}]}}
)");
  EXPECT_EQ(r.out, "workload.kueue.x-k8s.io/gemma-2b-piqa created\n");
  r = RunOk({"get", "workload", "gemma-2b-piqa", "-n", "team-b"});
  EXPECT_THAT(RowOf(r.out, "gemma-2b-piqa"), StartsWith("gemma-2b-piqa "));
}

// ---------------------------------------------------------------------------------------------
// get / usage

TEST_F(CliTest, GetTablesShowTheEvalHubState) {
  ApplyEvalHub();

  CliResult r = RunOk({"get", "workloads", "-A"});
  EXPECT_THAT(r.out, StartsWith("NAMESPACE   NAME"));
  EXPECT_THAT(r.out.substr(0, r.out.find('\n')),
              ContainsRegex(
                  "^NAMESPACE +NAME +QUEUE +STATE +ADMITTED-BY +PRIORITY +POSITION +AGE +REASON$"));
  EXPECT_THAT(RowOf(r.out, "llama3-70b-mmlu"),
              ContainsRegex("^team-a +llama3-70b-mmlu +eval-queue +Admitted +team-a-cq +1000 "
                            "+<none> +5m +<none>$"));
  EXPECT_THAT(RowOf(r.out, "qwen2-72b-helm"),
              ContainsRegex("^team-b +qwen2-72b-helm +eval-queue +Admitted +team-b-cq +1000 "
                            "+<none> +5m +<none>$"));
  // POSITION: the place in the ClusterQueue, by priority; REASON: why it waits.
  EXPECT_THAT(RowOf(r.out, "qwen2-7b-arc"),
              ContainsRegex("^team-b +qwen2-7b-arc +eval-queue +Pending +<none> +500 +1 +5m +\\S"));
  EXPECT_THAT(RowOf(r.out, "phi3-mini-truthfulqa"),
              ContainsRegex("team-b +phi3-mini-truthfulqa +eval-queue +Pending +<none> +100 +2 "
                            "+5m +\\S"));

  // Columns line up: every row's STATE starts where the header's does.
  const size_t state_column = r.out.find("STATE");
  for (absl::string_view line : absl::StrSplit(r.out, '\n', absl::SkipEmpty())) {
    ASSERT_GT(line.size(), state_column);
    EXPECT_NE(line[state_column], ' ') << line;
    EXPECT_EQ(line[state_column - 1], ' ') << line;
  }

  // Without -A: the -n namespace only (default "default", which is empty), and no NAMESPACE
  // column, as kubectl.
  r = RunOk({"get", "workloads", "-n", "team-b"});
  EXPECT_THAT(r.out, StartsWith("NAME "));
  EXPECT_EQ(CountLines(r.out, "eval-queue"), 3);
  EXPECT_EQ(CountLines(r.out, "team-a-cq"), 0);
  r = RunOk({"get", "workloads"});
  EXPECT_THAT(r.out, IsEmpty());
  EXPECT_EQ(r.err, "No resources found in default namespace.\n");

  r = RunOk({"get", "clusterqueues"});
  EXPECT_THAT(r.out,
              StartsWith("NAME        COHORT    STRATEGY         PENDING   ADMITTED   ACTIVE\n"));
  EXPECT_THAT(RowOf(r.out, "team-a-cq"),
              ContainsRegex("team-a-cq +evalhub +BestEffortFIFO +0 +4 +True"));
  EXPECT_THAT(RowOf(r.out, "team-b-cq"),
              ContainsRegex("team-b-cq +evalhub +BestEffortFIFO +2 +1 +True"));

  r = RunOk({"get", "localqueues", "-A"});
  EXPECT_THAT(r.out, StartsWith("NAMESPACE   NAME         CLUSTERQUEUE   PENDING   ADMITTED   "
                                "STATUS\n"));
  EXPECT_THAT(r.out, ContainsRegex("team-a +eval-queue +team-a-cq +0 +4 +Active\n"));
  EXPECT_THAT(r.out, ContainsRegex("team-b +eval-queue +team-b-cq +2 +1 +Active\n"));

  r = RunOk({"get", "flavors"});
  EXPECT_EQ(r.out,
            "NAME             NODE-LABELS   TAINTS\n"
            "default-flavor   <none>        <none>\n");

  // The cohort exists only because the ClusterQueues name it, as in Kueue.
  r = RunOk({"get", "cohorts"});
  EXPECT_EQ(r.out,
            "NAME      PARENT   IMPLICIT\n"
            "evalhub   <none>   true\n");

  r = RunOk({"get", "workload", "qwen2-7b-arc", "-n", "team-b"});
  EXPECT_EQ(static_cast<int>(std::count(r.out.begin(), r.out.end(), '\n')), 2);
}

TEST_F(CliTest, UsageShowsNominalUsedAndBorrowed) {
  ApplyEvalHub();
  // team-a runs 48 CPU / 192Gi / 6 GPUs on a 32 / 128Gi / 4 quota: it borrows the rest.
  const std::string want =
      "FLAVOR           RESOURCE         NOMINAL   USED    BORROWED\n"
      "default-flavor   cpu              32        48      16\n"
      "default-flavor   memory           128Gi     192Gi   64Gi\n"
      "default-flavor   nvidia.com/gpu   4         6       2\n";
  EXPECT_EQ(RunOk({"usage", "team-a-cq"}).out, want);
  EXPECT_EQ(RunOk({"get", "clusterqueue", "team-a-cq", "-o", "usage"}).out, want);
  EXPECT_EQ(RunOk({"get", "cq", "team-b-cq", "-o=usage"}).out,
            "FLAVOR           RESOURCE         NOMINAL   USED   BORROWED\n"
            "default-flavor   cpu              32        16     0\n"
            "default-flavor   memory           128Gi     64Gi   0\n"
            "default-flavor   nvidia.com/gpu   4         2      0\n");

  CliResult r = Run({"usage", "no-such-cq"});
  EXPECT_EQ(r.code, kExitFailure) << r;
  EXPECT_THAT(r.err,
              AllOf(StartsWith("tollgate: "), HasSubstr("no-such-cq"), HasSubstr("not found")));
}

// ---------------------------------------------------------------------------------------------
// describe

TEST_F(CliTest, DescribePendingWorkloadShowsReasonPositionAndEvents) {
  ApplyEvalHub();
  CliResult r = RunOk({"describe", "workload", "phi3-mini-truthfulqa", "-n", "team-b"});
  EXPECT_THAT(r.out, ContainsRegex("Name: +phi3-mini-truthfulqa\n"));
  EXPECT_THAT(r.out, ContainsRegex("Namespace: +team-b\n"));
  EXPECT_THAT(r.out, ContainsRegex("Queue: +eval-queue\n"));
  EXPECT_THAT(r.out, ContainsRegex("Priority: +100 \\(experimental\\)\n"));
  EXPECT_THAT(r.out, ContainsRegex("State: +Pending\n"));
  EXPECT_THAT(r.out, ContainsRegex("Pending Reason: +[^<\n]*nvidia.com/gpu"));
  // Lower priority than qwen2-7b-arc, so second in both queues.
  EXPECT_THAT(r.out, ContainsRegex("Position: +2 of 2 in LocalQueue team-b/eval-queue, 2 of 2 in "
                                   "ClusterQueue team-b-cq\n"));
  EXPECT_THAT(r.out,
              ContainsRegex("Pod Sets:\n +NAME +COUNT +MIN +REQUESTS \\(PER POD\\)\n +main +1 "
                            "+- +cpu=8, memory=32Gi, nvidia.com/gpu=1\n"));
  EXPECT_THAT(r.out, HasSubstr("Admission:  <none>\n"));
  // Kueue 0.19's Admitted condition of a workload that never held quota.
  EXPECT_THAT(r.out, ContainsRegex("Conditions:\n(.*\n)* +QuotaReserved +False +[A-Za-z]+ +"));
  EXPECT_THAT(r.out, ContainsRegex("\n +Admitted +False +NoReservation +[-0-9T:Z]+ +The workload "
                                   "has no reservation\n"));
  EXPECT_THAT(r.out,
              ContainsRegex("Events:\n +TIME +AGE +REASON +MESSAGE\n +2026-01-01T00:00:00Z +5m "));

  r = RunOk({"describe", "wl", "llama3-70b-mmlu", "-n", "team-a"});
  EXPECT_THAT(r.out, ContainsRegex("State: +Admitted\n"));
  EXPECT_THAT(r.out, ContainsRegex("Admission:\n +ClusterQueue: +team-a-cq\n"));
  EXPECT_THAT(r.out, ContainsRegex(" +main +1 +default-flavor \\(cpu, memory, nvidia.com/gpu\\) +"
                                   "cpu=16, memory=64Gi, nvidia.com/gpu=2\n"));
  EXPECT_THAT(r.out, Not(HasSubstr("Pending Reason")));
  EXPECT_THAT(r.out, ContainsRegex("Events:\n(.*\n)* +2026-01-01T00:00:00Z +5m +QuotaReserved +"));

  r = Run({"describe", "workload", "nope", "-n", "team-a"});
  EXPECT_EQ(r.code, kExitFailure) << r;
  EXPECT_THAT(r.err, HasSubstr("not found"));
}

TEST_F(CliTest, DescribeClusterQueueShowsSpecUsageAndPendingInOrder) {
  ApplyEvalHub();
  CliResult r = RunOk({"describe", "clusterqueue", "team-b-cq"});
  EXPECT_THAT(r.out, ContainsRegex("Name: +team-b-cq\n"));
  EXPECT_THAT(r.out, ContainsRegex("Cohort: +evalhub\n"));
  EXPECT_THAT(r.out, ContainsRegex("Preemption: +withinClusterQueue=LowerPriority, "
                                   "reclaimWithinCohort=Never"));
  EXPECT_THAT(r.out, ContainsRegex("Workloads: +2 pending, 1 admitted\n"));
  EXPECT_THAT(r.out, ContainsRegex("Usage:\n +FLAVOR +RESOURCE +NOMINAL +USED +BORROWED\n"));
  EXPECT_THAT(r.out, ContainsRegex("Pending Workloads \\(2\\):\n +POSITION +WORKLOAD +LOCALQUEUE "
                                   "+PRIORITY +MESSAGE\n +1 +team-b/qwen2-7b-arc +eval-queue +500 "
                                   "+.*\n +2 +team-b/phi3-mini-truthfulqa +eval-queue +100 "));
}

// The issue's question: team-b's queue shows 16 of 32 CPU used, yet its eval waits. The answer
// names who borrowed the cohort's quota and the policy that keeps team-b from taking it back,
// next to Kueue's own message.
TEST_F(CliTest, DescribeWaitingWorkloadNamesTheBorrowerAndThePolicy) {
  ApplyEvalHub();
  CliResult r = RunOk({"describe", "workload", "qwen2-7b-arc", "-n", "team-b"});
  EXPECT_THAT(r.out, ContainsRegex("Quota:\n +ClusterQueue: +team-b-cq\n +Cohort: +evalhub "
                                   "\\(implicit\\)\n +Borrowers: +team-a-cq borrows 16 cpu in "
                                   "default-flavor; team-a-cq borrows 64Gi memory in "
                                   "default-flavor; team-a-cq borrows 2 nvidia.com/gpu in "
                                   "default-flavor\n"));
  EXPECT_THAT(r.out, ContainsRegex("\n +NAME +KIND +FLAVOR +RESOURCE +NOMINAL +QUOTA +USED "
                                   "+BORROWED +LENDABLE +LIMITS\n +evalhub +Cohort +default-flavor "
                                   "+cpu +0 +64 +64 +0 +<none> +<none>\n"));
  EXPECT_THAT(r.out, ContainsRegex("\n +team-a-cq +ClusterQueue +default-flavor +cpu +32 +32 +48 "
                                   "+16 +32 +<none>\n"));
  EXPECT_THAT(r.out, ContainsRegex("\n +team-b-cq +ClusterQueue +default-flavor +cpu +32 +32 +16 "
                                   "+0 +32 +<none>\n"));
  EXPECT_THAT(r.out, HasSubstr("Blocked By:\n  reclaimWithinCohort (ClusterQueue team-b-cq): "
                               "team-b-cq has reclaimWithinCohort: Never, so it does not preempt "
                               "team-a-cq (16 borrowed) to take back the cpu in flavor "
                               "default-flavor they borrowed\n"));
  // Kueue's message stays the condition's message; the reason is Kueue 0.19's for quota that
  // preemption cannot free (reclaimWithinCohort: Never).
  EXPECT_THAT(r.out, ContainsRegex("QuotaReserved +False +WaitingForQuota +\\S+ +couldn't assign "
                                   "flavors to pod set main: insufficient unused quota"));

  r = RunOk({"describe", "clusterqueue", "team-b-cq"});
  EXPECT_THAT(r.out, ContainsRegex("Cohort:\n +Name: +evalhub \\(implicit\\)\n +Borrowers: "
                                   "+team-a-cq borrows 16 cpu"));
  EXPECT_THAT(r.out, HasSubstr("Head Workload team-b/qwen2-7b-arc:\n  reclaimWithinCohort "
                               "(ClusterQueue team-b-cq): "));
  r = RunOk({"describe", "clusterqueue", "team-a-cq"});
  EXPECT_THAT(r.out, Not(HasSubstr("Head Workload")));

  // Reclaim allowed: the scheduler takes team-b's quota back, and describe shows it admitted.
  RunOk({"apply", "-f", "-"}, R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: team-b-cq}
spec:
  cohort: evalhub
  preemption: {withinClusterQueue: LowerPriority, reclaimWithinCohort: Any}
  resourceGroups:
  - coveredResources: ["cpu", "memory", "nvidia.com/gpu"]
    flavors:
    - name: default-flavor
      resources: [{name: cpu, nominalQuota: 32}, {name: memory, nominalQuota: 128Gi},
                  {name: nvidia.com/gpu, nominalQuota: 4}]
)");
  r = RunUntil({"describe", "workload", "qwen2-7b-arc", "-n", "team-b"},
               [](const std::string& out) { return absl::StrContains(out, "Admission:\n"); });
  EXPECT_THAT(r.out, Not(HasSubstr("Blocked By:")));
}

// `get cohort NAME` finds what `get cohorts` lists, implicit or not, and cohorts have a usage
// view and a describe, as do LocalQueues and ResourceFlavors.
TEST_F(CliTest, CohortsLocalQueuesAndFlavorsDescribeAndShowUsage) {
  ApplyEvalHub();
  CliResult r = RunOk({"get", "cohort", "evalhub"});
  EXPECT_EQ(r.out,
            "NAME      PARENT   IMPLICIT\n"
            "evalhub   <none>   true\n");
  r = RunOk({"get", "cohorts/evalhub", "-o", "yaml"});
  EXPECT_THAT(r.out, AllOf(HasSubstr("kind: Cohort\n"), HasSubstr("name: evalhub\n"),
                           HasSubstr("type: Implicit\n")));
  r = Run({"get", "cohort", "nope"});
  EXPECT_EQ(r.code, kExitFailure) << r;
  EXPECT_THAT(r.err, HasSubstr("not found"));

  r = RunOk({"get", "cohort", "evalhub", "-o", "usage"});
  EXPECT_THAT(r.out, StartsWith("FLAVOR           RESOURCE         NOMINAL   SHARED   USED    "
                                "BORROWED   AVAILABLE\n"));
  EXPECT_THAT(r.out, ContainsRegex("default-flavor +cpu +64 +64 +64 +0 +0\n"));
  EXPECT_THAT(r.out, ContainsRegex("default-flavor +memory +256Gi +256Gi +256Gi +0 +0\n"));
  EXPECT_THAT(r.out, ContainsRegex("default-flavor +nvidia.com/gpu +8 +8 +8 +0 +0\n"));
  r = Run({"get", "localqueues", "-o", "usage"});
  EXPECT_EQ(r.code, kExitUsage) << r;

  r = RunOk({"describe", "cohort", "evalhub"});
  EXPECT_THAT(r.out, ContainsRegex("Name: +evalhub\nObject: +<none> \\(implicit: "));
  EXPECT_THAT(r.out, ContainsRegex("ClusterQueues: +team-a-cq, team-b-cq\n"));
  EXPECT_THAT(r.out, ContainsRegex("Workloads: +2 pending, 5 admitted"));
  EXPECT_THAT(r.out, ContainsRegex("Borrowers: +team-a-cq borrows 16 cpu in default-flavor"));
  EXPECT_THAT(r.out, ContainsRegex("Usage:\n +FLAVOR +RESOURCE +NOMINAL +SHARED +USED +BORROWED "
                                   "+AVAILABLE\n"));
  EXPECT_THAT(r.out, HasSubstr("Quota Holders (tree of evalhub):\n"));

  // A Cohort object for it, under an implicit parent: hierarchical cohorts.
  r = RunOk({"apply", "-f", "-"}, R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: Cohort
metadata: {name: evalhub}
spec: {parentName: org}
)");
  EXPECT_EQ(r.out, "cohort.kueue.x-k8s.io/evalhub created\n");
  r = RunOk({"get", "cohorts"});
  EXPECT_EQ(r.out,
            "NAME      PARENT   IMPLICIT\n"
            "evalhub   org      false\n"
            "org       <none>   true\n");
  r = RunOk({"describe", "cohort", "org"});
  EXPECT_THAT(r.out, ContainsRegex("Cohorts: +evalhub\n"));
  EXPECT_THAT(r.out, ContainsRegex("ClusterQueues: +<none>\n"));
  EXPECT_THAT(r.out, ContainsRegex("\n +evalhub +Cohort +default-flavor +cpu +0 +64 +64 +0 +64 "));
  EXPECT_THAT(r.out, ContainsRegex("\n +team-a-cq +ClusterQueue +default-flavor +cpu +32 +32 +48 "
                                   "+16 +32 "));
  r = RunOk({"describe", "cohort", "evalhub"});
  EXPECT_THAT(r.out, ContainsRegex("Created: +2026-01-01T00:00:00Z"));
  EXPECT_THAT(r.out, ContainsRegex("Parent: +org\n"));

  r = RunOk({"describe", "localqueue", "eval-queue", "-n", "team-b"});
  EXPECT_THAT(r.out, ContainsRegex("Name: +eval-queue\nNamespace: +team-b\n"));
  EXPECT_THAT(r.out, ContainsRegex("ClusterQueue: +team-b-cq\n"));
  EXPECT_THAT(r.out, ContainsRegex("Workloads: +2 pending, 1 admitted\n"));
  EXPECT_THAT(r.out,
              ContainsRegex("Usage:\n +FLAVOR +RESOURCE +USED\n +default-flavor +cpu +16\n"));
  EXPECT_THAT(r.out, ContainsRegex("Pending Workloads \\(2\\):\n +POSITION +IN CLUSTERQUEUE "
                                   "+WORKLOAD +PRIORITY +MESSAGE\n +1 +1 +qwen2-7b-arc +500 "));
  r = Run({"describe", "lq", "eval-queue", "-n", "nowhere"});
  EXPECT_EQ(r.code, kExitFailure) << r;

  r = RunOk({"describe", "resourceflavor", "default-flavor"});
  EXPECT_THAT(r.out, ContainsRegex("Name: +default-flavor\n"));
  EXPECT_THAT(r.out, ContainsRegex("Node Labels: +<none>\n"));
  EXPECT_THAT(r.out, ContainsRegex("Quota:\n +NAME +KIND +RESOURCE +NOMINAL +USED +BORROWED\n"
                                   " +team-a-cq +ClusterQueue +cpu +32 +48 +16\n"));
  EXPECT_THAT(r.out, ContainsRegex("\n +team-b-cq +ClusterQueue +nvidia.com/gpu +4 +2 +0\n"));

  r = Run({"describe", "priorityclass", "x"});
  EXPECT_EQ(r.code, kExitUsage) << r;
  EXPECT_THAT(r.err, HasSubstr("supported: workload, clusterqueue, cohort, localqueue, "
                               "resourceflavor"));
}

// ---------------------------------------------------------------------------------------------
// finish / preempt / delete / admit

TEST_F(CliTest, FinishFreesQuotaForTheWaitingWorkloads) {
  ApplyEvalHub();
  CliResult r = RunOk({"finish", "llama3-8b-safety-sweep", "-n", "team-a"});
  EXPECT_EQ(r.out, "workload.kueue.x-k8s.io/llama3-8b-safety-sweep finished\n");
  // Two GPUs came back to the cohort: both team-b evals fit now.
  RunUntil({"get", "workloads", "-n", "team-b"},
           [](const std::string& out) { return CountLines(out, "Admitted") == 3; });
  r = RunOk({"get", "workloads", "-n", "team-a"});
  EXPECT_THAT(RowOf(r.out, "llama3-8b-safety-sweep"), HasSubstr("Finished"));

  // Finishing a workload that never ran is refused with the server's reason.
  RunOk({"submit", "-f", "-"}, R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata: {name: no-queue, namespace: team-a}
spec:
  queueName: missing
  podSets:
  - name: main
    count: 1
    template: {spec: {containers: [{name: c, resources: {requests: {cpu: 1}}}]}}
)");
  r = Run({"finish", "no-queue", "-n", "team-a"});
  EXPECT_EQ(r.code, kExitFailure) << r;
  EXPECT_THAT(r.err, StartsWith("tollgate: "));
}

// kubectl annotate's syntax for Kueue's admission gates: only that annotation, only removals,
// a value replaced only with --overwrite; describe shows the gates while there are any.
TEST_F(CliTest, AnnotateRemovesAdmissionGates) {
  ApplyEvalHub();
  RunOk({"submit", "-f", "-"}, R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata:
  name: gated
  namespace: team-a
  annotations: {kueue.x-k8s.io/admission-gated-by: "example.com/a,example.com/b"}
spec:
  queueName: eval-queue
  podSets:
  - name: main
    count: 1
    template: {spec: {containers: [{name: c, resources: {requests: {nvidia.com/gpu: 1}}}]}}
)");
  CliResult r = RunOk({"describe", "workload", "gated", "-n", "team-a"});
  EXPECT_THAT(r.out, HasSubstr("Admission Gated By:"));
  EXPECT_THAT(r.out, HasSubstr("example.com/a,example.com/b"));
  // Pending, but out of its queue: neither queue counts it (Kueue's queue manager keeps it out).
  r = RunOk({"get", "workloads", "-n", "team-a"});
  EXPECT_THAT(RowOf(r.out, "gated"), HasSubstr("Pending"));
  r = RunOk({"get", "localqueues", "-n", "team-a"});
  EXPECT_THAT(r.out, ContainsRegex("eval-queue +team-a-cq +0 +4 +Active\n"));
  r = RunOk({"get", "clusterqueues"});
  EXPECT_THAT(RowOf(r.out, "team-a-cq"), ContainsRegex("team-a-cq +evalhub +BestEffortFIFO +0 +4"));

  r = Run({"annotate", "workload", "gated", "-n", "team-a",
           "kueue.x-k8s.io/admission-gated-by=example.com/b"});
  EXPECT_NE(r.code, kExitOk) << r;
  EXPECT_THAT(r.err, HasSubstr("--overwrite"));
  r = Run({"annotate", "workload", "gated", "-n", "team-a", "owner=me"});
  EXPECT_NE(r.code, kExitOk) << r;
  EXPECT_THAT(r.err, HasSubstr("only the kueue.x-k8s.io/admission-gated-by annotation"));
  r = Run({"annotate", "workload", "gated", "-n", "team-a",
           "kueue.x-k8s.io/admission-gated-by=example.com/c", "--overwrite"});
  EXPECT_EQ(r.code, kExitFailure) << r;
  EXPECT_THAT(r.err, HasSubstr("can only remove gates"));

  r = RunOk({"annotate", "workload", "gated", "-n", "team-a",
             "kueue.x-k8s.io/admission-gated-by=example.com/b", "--overwrite"});
  EXPECT_THAT(r.out, StartsWith("workload.kueue.x-k8s.io/gated annotated"));
  r = RunOk({"annotate", "gated", "-n", "team-a", "kueue.x-k8s.io/admission-gated-by-"});
  EXPECT_THAT(r.out, StartsWith("workload.kueue.x-k8s.io/gated annotated"));
  r = RunOk({"describe", "workload", "gated", "-n", "team-a"});
  EXPECT_THAT(r.out, Not(HasSubstr("Admission Gated By:")));
}

// kubectl annotate's syntax for Kueue's priority boost: set, replaced only with --overwrite when
// the value differs, the same value again accepted, removed with KEY-; any other key is refused
// naming the annotations that can be changed. The server here runs with the PriorityBoost gate
// off, where the annotation is stored as given (the gate-on checks are the RPC's tests).
TEST_F(CliTest, AnnotateSetsAndRemovesPriorityBoost) {
  ApplyEvalHub();
  RunOk({"submit", "-f", "-"}, R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata:
  name: boosted
  namespace: team-a
spec:
  queueName: eval-queue
  podSets:
  - name: main
    count: 1
    template: {spec: {containers: [{name: c, resources: {requests: {nvidia.com/gpu: 1}}}]}}
)");
  CliResult r = RunOk(
      {"annotate", "workload", "boosted", "-n", "team-a", "kueue.x-k8s.io/priority-boost=10"});
  EXPECT_THAT(r.out, StartsWith("workload.kueue.x-k8s.io/boosted annotated"));
  r = RunOk({"get", "workload", "boosted", "-n", "team-a", "-o", "yaml"});
  EXPECT_THAT(r.out, HasSubstr("kueue.x-k8s.io/priority-boost: \"10\""));
  // The same value again is no change, as in kubectl; another one needs --overwrite.
  RunOk({"annotate", "boosted", "-n", "team-a", "kueue.x-k8s.io/priority-boost=10"});
  r = Run({"annotate", "boosted", "-n", "team-a", "kueue.x-k8s.io/priority-boost=20"});
  EXPECT_NE(r.code, kExitOk) << r;
  EXPECT_THAT(r.err, HasSubstr("--overwrite is false but found the following declared "
                               "annotation(s): 'kueue.x-k8s.io/priority-boost' already has a "
                               "value (10)"));
  RunOk({"annotate", "boosted", "-n", "team-a", "kueue.x-k8s.io/priority-boost=20", "--overwrite"});
  r = RunOk({"get", "workload", "boosted", "-n", "team-a", "-o", "yaml"});
  EXPECT_THAT(r.out, HasSubstr("kueue.x-k8s.io/priority-boost: \"20\""));
  r = Run({"annotate", "boosted", "-n", "team-a", "example.com/owner=me"});
  EXPECT_NE(r.code, kExitOk) << r;
  EXPECT_THAT(r.err, HasSubstr("kueue.x-k8s.io/priority-boost annotation"));
  RunOk({"annotate", "workload", "boosted", "-n", "team-a", "kueue.x-k8s.io/priority-boost-"});
  r = RunOk({"get", "workload", "boosted", "-n", "team-a", "-o", "yaml"});
  EXPECT_THAT(r.out, Not(HasSubstr("priority-boost")));
}

TEST_F(CliTest, PreemptEvictsAndRecordsTheReason) {
  ApplyEvalHub();
  CliResult r = RunOk({"checkpoint", "llama3-8b-gsm8k", "-n", "team-a"});
  EXPECT_EQ(r.out, "workload.kueue.x-k8s.io/llama3-8b-gsm8k checkpoint recorded\n");
  r = RunOk({"describe", "workload", "llama3-8b-gsm8k", "-n", "team-a"});
  EXPECT_THAT(r.out, HasSubstr("Last Checkpoint:"));
  r = Run({"checkpoint", "no-such-workload", "-n", "team-a"});
  EXPECT_EQ(r.code, kExitFailure) << r;
  EXPECT_THAT(r.err, HasSubstr("not found"));
  r = RunOk(
      {"preempt", "llama3-8b-gsm8k", "-n", "team-a", "--reason", "node drain for maintenance"});
  EXPECT_THAT(r.out, StartsWith("workload.kueue.x-k8s.io/llama3-8b-gsm8k preempted"));
  r = RunUntil(
      {"describe", "workload", "llama3-8b-gsm8k", "-n", "team-a"},
      [](const std::string& out) { return absl::StrContains(out, "node drain for maintenance"); });
  EXPECT_THAT(r.out, ContainsRegex("EvictedDueToPreempted +node drain for maintenance\n"));
}

TEST_F(CliTest, DeleteRemovesWorkloadsAndObjects) {
  ApplyEvalHub();
  CliResult r = RunOk({"delete", "workload", "phi3-mini-truthfulqa", "-n", "team-b"});
  EXPECT_EQ(r.out, "workload.kueue.x-k8s.io \"phi3-mini-truthfulqa\" deleted\n");
  r = RunOk({"get", "workloads", "-n", "team-b"});
  EXPECT_EQ(RowOf(r.out, "phi3-mini-truthfulqa"), "");

  r = RunOk({"delete", "workloadpriorityclass", "experimental"});
  EXPECT_EQ(r.out, "workloadpriorityclass.kueue.x-k8s.io \"experimental\" deleted\n");
  r = RunOk({"get", "wpc"});
  EXPECT_EQ(RowOf(r.out, "experimental"), "");

  // In use (a team-b workload runs through it): Kueue has no in-use finalizer on LocalQueues,
  // so it goes at once; what it admitted runs on, what waits says why.
  r = RunOk({"delete", "lq", "eval-queue", "-n", "team-b"});
  EXPECT_EQ(r.out, "localqueue.kueue.x-k8s.io \"eval-queue\" deleted\n");
  r = RunOk({"get", "localqueues", "-n", "team-b"});
  EXPECT_THAT(r.out, Not(HasSubstr("eval-queue")));
  r = RunOk({"get", "workloads", "-n", "team-b"});
  EXPECT_THAT(RowOf(r.out, "qwen2-72b-helm"), HasSubstr("Admitted"));
  EXPECT_THAT(RowOf(r.out, "qwen2-7b-arc"), HasSubstr("LocalQueue eval-queue doesn't exist"));
  r = RunOk({"describe", "workload", "qwen2-7b-arc", "-n", "team-b"});
  EXPECT_THAT(r.out, ContainsRegex("Pending Reason: +LocalQueue eval-queue doesn't exist\n"));
  EXPECT_THAT(r.out, ContainsRegex("Position: +not queued\n"));

  r = Run({"delete", "clusterqueue", "no-such-cq"});
  EXPECT_EQ(r.code, kExitFailure) << r;
  EXPECT_THAT(r.err, HasSubstr("not found"));

  r = Run({"delete", "gadget", "x"});
  EXPECT_EQ(r.code, kExitUsage) << r;
  EXPECT_THAT(r.err, HasSubstr("unknown kind \"gadget\""));
}

// A server that admits only when asked, so `admit` meets a known state.
class CliAdmitTest : public CliTest {
 protected:
  bool ScheduleContinuously() const override { return false; }
};

TEST_F(CliAdmitTest, AdmitReportsFlavorsVictimsOrWhyItWaits) {
  RunOk({"apply", "-f", DeployFile("queues.yaml"), "-f", DeployFile("priorities.yaml")});
  RunOk({"submit", "-f", DeployFile("workloads.yaml")});
  CliResult r = RunOk({"get", "workloads", "-A"});
  EXPECT_EQ(CountLines(r.out, "Pending"), 7) << r;

  r = RunOk({"admit", "llama3-8b-safety-sweep", "-n", "team-a"});
  EXPECT_EQ(r.out,
            "workload team-a/llama3-8b-safety-sweep admitted to ClusterQueue team-a-cq\n"
            "  POD SET   COUNT   FLAVORS                                        USAGE\n"
            "  main      2       default-flavor (cpu, memory, nvidia.com/gpu)   cpu=16, "
            "memory=64Gi, nvidia.com/gpu=2\n");
  r = RunOk({"admit", "llama3-8b-safety-sweep", "-n", "team-a", "--dry-run"});
  EXPECT_THAT(r.out, StartsWith("workload team-a/llama3-8b-safety-sweep is already admitted to "
                                "ClusterQueue team-a-cq\n"));
  // Fill the rest of the cohort: team-a's routine evals and all of team-b.
  for (const auto& [ns, name] :
       std::vector<std::pair<std::string, std::string>>{{"team-a", "llama3-8b-gsm8k"},
                                                        {"team-a", "mistral-7b-humaneval"},
                                                        {"team-b", "qwen2-72b-helm"},
                                                        {"team-b", "qwen2-7b-arc"},
                                                        {"team-b", "phi3-mini-truthfulqa"}}) {
    r = RunOk({"admit", name, "-n", ns});
    EXPECT_THAT(r.out, StartsWith(absl::StrCat("workload ", ns, "/", name, " admitted")));
  }

  // The production eval fits only in place of team-a's experimental sweep.
  r = RunOk({"admit", "llama3-70b-mmlu", "-n", "team-a", "--dry-run"});
  EXPECT_THAT(r.out, StartsWith("workload team-a/llama3-70b-mmlu would be admitted to "
                                "ClusterQueue team-a-cq after preempting 1 workload:\n"
                                "  team-a/llama3-8b-safety-sweep\n"));
  // A dry run changed nothing.
  r = RunOk({"get", "workload", "llama3-70b-mmlu", "-n", "team-a"});
  EXPECT_THAT(RowOf(r.out, "llama3-70b-mmlu"), HasSubstr("Pending"));

  // Nothing in team-b has a lower priority than another experimental eval: it waits.
  RunOk({"submit", "-f", "-"}, R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata: {name: gemma-7b-bbh, namespace: team-b}
spec:
  queueName: eval-queue
  priorityClassName: experimental
  priority: 100
  podSets:
  - name: main
    count: 1
    template:
      spec:
        containers:
        - name: lm-eval
          resources: {requests: {cpu: "8", memory: 32Gi, nvidia.com/gpu: "1"}}
)");
  r = RunOk({"admit", "gemma-7b-bbh", "-n", "team-b"});
  EXPECT_THAT(r.out, StartsWith("workload team-b/gemma-7b-bbh waits: "));
  EXPECT_THAT(r.out, HasSubstr("nvidia.com/gpu"));

  r = Run({"admit", "no-such-workload", "-n", "team-b"});
  EXPECT_EQ(r.code, kExitFailure) << r;
  EXPECT_THAT(r.err, HasSubstr("not found"));
}

// A workload evicted and waiting again shows that eviction, not its old admission as current.
TEST_F(CliAdmitTest, DescribeShowsAnEvictionNotAStaleAdmission) {
  RunOk({"apply", "-f", DeployFile("queues.yaml"), "-f", DeployFile("priorities.yaml")});
  RunOk({"submit", "-f", DeployFile("workloads.yaml")});
  RunOk({"admit", "llama3-8b-gsm8k", "-n", "team-a"});
  CliResult r = RunOk({"describe", "workload", "llama3-8b-gsm8k", "-n", "team-a"});
  EXPECT_THAT(r.out, ContainsRegex("\nState: +Admitted\nAdmitted: +2026-01-01T00:00:00Z"));
  EXPECT_THAT(r.out, Not(HasSubstr("Last Evicted")));

  RunOk({"preempt", "llama3-8b-gsm8k", "-n", "team-a", "--reason", "node drain"});
  r = RunOk({"describe", "workload", "llama3-8b-gsm8k", "-n", "team-a"});
  EXPECT_THAT(r.out, ContainsRegex("\nState: +Pending \\(evicted, waiting to be admitted again\\)\n"
                                   "Last Admitted: +2026-01-01T00:00:00Z \\(5m ago\\)\n"
                                   "Last Evicted: +2026-01-01T00:00:00Z \\(5m ago\\), Preempted: "
                                   "node drain\n"));
  EXPECT_THAT(r.out, Not(ContainsRegex("\nAdmitted: ")));
  EXPECT_THAT(r.out, HasSubstr("Admission:  <none>\n"));

  // Admitted again: the current admission, no eviction line.
  RunOk({"admit", "llama3-8b-gsm8k", "-n", "team-a"});
  r = RunOk({"describe", "workload", "llama3-8b-gsm8k", "-n", "team-a"});
  EXPECT_THAT(r.out, ContainsRegex("\nState: +Admitted\nAdmitted: "));
  EXPECT_THAT(r.out, Not(HasSubstr("Last Evicted")));
  EXPECT_THAT(r.out, ContainsRegex("Preemptions: +1 "));
}

// `submit --dry-run=server`: the server checks each workload as it would submit it and stores
// nothing; a client dry run cannot see what only the server knows.
TEST_F(CliAdmitTest, SubmitServerDryRunChecksWithoutStoring) {
  RunOk({"apply", "-f", DeployFile("queues.yaml"), "-f", DeployFile("priorities.yaml")});
  CliResult r = RunOk({"submit", "--dry-run=server", "-f", DeployFile("workloads.yaml")});
  EXPECT_EQ(CountLines(r.out, "created (server dry run)"), 7) << r;
  r = RunOk({"get", "workloads", "-A"});
  EXPECT_EQ(r.err, "No resources found\n");

  const std::string no_queue = R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata: {name: lost, namespace: team-a}
spec:
  priorityClassName: PRIORITY
  podSets:
  - name: main
    count: 1
    template: {spec: {containers: [{name: c, resources: {requests: {cpu: 1}}}]}}
)";
  auto with = [&](const std::string& priority) {
    std::string text = no_queue;
    text.replace(text.find("PRIORITY"), 8, priority);
    return text;
  };
  // No queueName and no LocalQueue "default" in team-a: only the server knows.
  r = RunOk({"submit", "--dry-run=client", "-f", "-"}, with("routine"));
  EXPECT_EQ(r.out, "workload.kueue.x-k8s.io/lost created (dry run)\n");
  r = Run({"submit", "--dry-run=server", "-f", "-"}, with("routine"));
  EXPECT_EQ(r.code, kExitFailure) << r;
  EXPECT_THAT(r.err, HasSubstr("spec.queueName"));
  RunOk({"apply", "-f", "-"}, R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: default, namespace: team-a}
spec: {clusterQueue: team-a-cq}
)");
  r = Run({"submit", "--dry-run=server", "-f", "-"}, with("no-such-class"));
  EXPECT_EQ(r.code, kExitFailure) << r;
  EXPECT_THAT(r.err, HasSubstr("spec.priorityClassName"));
  r = RunOk({"submit", "--dry-run=server", "-f", "-"}, with("routine"));
  // A new workload's dry run also says when it would start.
  EXPECT_THAT(r.out, StartsWith("workload.kueue.x-k8s.io/lost created (server dry run); would "
                                "start now"));

  // Against a stored workload: the same spec is unchanged, another is refused.
  RunOk({"submit", "-f", "-"}, with("routine"));
  r = RunOk({"submit", "--dry-run=server", "-f", "-"}, with("routine"));
  EXPECT_EQ(r.out, "workload.kueue.x-k8s.io/lost unchanged (server dry run)\n");
  r = Run({"submit", "--dry-run=server", "-f", "-"}, with("production"));
  EXPECT_EQ(r.code, kExitFailure) << r;
  EXPECT_THAT(r.err, HasSubstr("already exists with a different spec"));
  r = RunOk({"get", "workloads", "-n", "team-a", "-o", "name"});
  EXPECT_EQ(r.out, "workload.kueue.x-k8s.io/lost\n");
}

// ---------------------------------------------------------------------------------------------
// watch

TEST_F(CliTest, WatchPrintsOneLinePerChangeUntilCancelled) {
  RunOk({"apply", "-f", DeployFile("queues.yaml"), "-f", DeployFile("priorities.yaml")});
  SyncStringBuf buf;
  std::ostream out(&buf);
  std::ostringstream err;
  std::istringstream in;
  client::WatchCanceller canceller;
  CliEnv env{in, out, err, server_->address(), cli_clock_, &canceller};
  int code = -1;
  std::thread watcher([&] { code = RunCli({"watch", "workloads", "-n", "team-a"}, env); });

  RunOk({"apply", "-f", DeployFile("workloads.yaml")});
  // A watch that connects after the admission (a loaded machine) sees it ADDED as admitted.
  EXPECT_TRUE(
      buf.WaitForLine("^ADDED +team-a/llama3-8b-safety-sweep +(Pending +<none> +Created: |"
                      "Admitted +team-a-cq +)",
                      kWaitTimeout))
      << buf.str();
  EXPECT_TRUE(
      buf.WaitForLine("^(ADDED|MODIFIED) +team-a/llama3-8b-safety-sweep +Admitted "
                      "+team-a-cq +",
                      kWaitTimeout))
      << buf.str();
  RunOk({"finish", "llama3-70b-mmlu", "-n", "team-a", "--message", "Job succeeded"});
  EXPECT_TRUE(
      buf.WaitForLine("^MODIFIED +team-a/llama3-70b-mmlu +Finished +team-a-cq +"
                      "Finished: Job succeeded$",
                      kWaitTimeout))
      << buf.str();

  canceller.Cancel();
  watcher.join();
  EXPECT_EQ(code, kExitOk) << err.str();
  EXPECT_THAT(buf.str(), Not(HasSubstr("team-b/")));
  for (absl::string_view line : absl::StrSplit(buf.str(), '\n', absl::SkipEmpty())) {
    EXPECT_THAT(std::string(line), ContainsRegex("^(ADDED|MODIFIED|DELETED) +team-a/")) << line;
  }
}

// ---------------------------------------------------------------------------------------------
// kubectl habits (issue 15's table, one test per row).

std::string TestData(absl::string_view name) {
  return absl::StrCat(TOLLGATE_TESTDATA_DIR, "/", name);
}

// -o yaml|json|wide|name|jsonpath=, and yaml/json round-tripping into apply -f.
TEST_F(CliTest, OutputFormatsAreKubectlsAndRoundTripIntoApply) {
  ApplyEvalHub();
  CliResult r = RunOk({"get", "clusterqueue", "team-a-cq", "-o", "yaml"});
  EXPECT_THAT(r.out, StartsWith("apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\n"));
  EXPECT_THAT(r.out, HasSubstr("\nspec:\n  cohort: evalhub\n"));
  EXPECT_THAT(r.out, HasSubstr("\nstatus:\n"));
  EXPECT_THAT(r.out, HasSubstr("  - coveredResources:\n    - cpu\n"));

  // The YAML of everything applies back unchanged.
  for (const char* kind : {"clusterqueues", "localqueues", "flavors", "workloadpriorityclasses"}) {
    CliResult yaml = RunOk({"get", kind, "-A", "-o", "yaml"});
    EXPECT_THAT(yaml.out, StartsWith("apiVersion: v1\nitems:\n- apiVersion: "));
    CliResult again = RunOk({"apply", "-f", "-"}, yaml.out);
    EXPECT_THAT(again.out, Not(HasSubstr("configured"))) << kind;
    EXPECT_THAT(again.out, Not(HasSubstr("created"))) << kind;
    EXPECT_THAT(again.out, HasSubstr("unchanged")) << kind;
  }
  CliResult json = RunOk({"get", "workloads", "-n", "team-a", "-o", "json"});
  EXPECT_THAT(json.out, StartsWith("{\n    \"apiVersion\": \"v1\",\n    \"items\": [\n"));
  EXPECT_THAT(json.out, HasSubstr("\"kind\": \"List\""));
  CliResult resubmit = RunOk({"apply", "-f", "-"}, json.out);
  EXPECT_THAT(resubmit.out, HasSubstr("workload.kueue.x-k8s.io/llama3-70b-mmlu unchanged\n"));
  EXPECT_THAT(resubmit.out, Not(HasSubstr("created")));

  r = RunOk({"get", "workloads", "-n", "team-b", "-o", "name"});
  EXPECT_EQ(r.out,
            "workload.kueue.x-k8s.io/phi3-mini-truthfulqa\n"
            "workload.kueue.x-k8s.io/qwen2-72b-helm\n"
            "workload.kueue.x-k8s.io/qwen2-7b-arc\n");
  r = RunOk(
      {"get", "cq", "-o",
       "jsonpath={range .items[*]}{.metadata.name}:{.status.admittedWorkloads}{\"\\n\"}{end}"});
  EXPECT_EQ(r.out, "team-a-cq:4\nteam-b-cq:1\n");
  r = RunOk({"get", "cq/team-b-cq", "-o", "jsonpath={.spec.cohort}"});
  EXPECT_EQ(r.out, "evalhub");

  r = RunOk({"get", "workloads", "-n", "team-a", "-o", "wide"});
  EXPECT_THAT(r.out.substr(0, r.out.find('\n')),
              ContainsRegex("^NAME .* AGE +PRIORITY-CLASS +FLAVORS +ESTIMATED-START +REASON$"));
  EXPECT_THAT(RowOf(r.out, "llama3-70b-mmlu"),
              ContainsRegex(" production +default-flavor \\(cpu, memory, nvidia.com/gpu\\)"));
  r = RunOk({"get", "cq", "-o", "wide"});
  EXPECT_THAT(RowOf(r.out, "team-a-cq"), ContainsRegex(" True +4 +default-flavor$"));
}

// -o yaml is printed as kubectl prints it: re-emitting it through kubectl's own YAML writer
// (`kubectl kustomize`, offline) changes nothing.
TEST_F(CliTest, YamlOutputIsWhatKubectlPrints) {
  if (std::system("kubectl version --client >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "kubectl not installed (Debian: kubernetes-client)";
  }
  ApplyEvalHub();
  std::string dir = (std::filesystem::temp_directory_path() / "tollgate-kubectl-XXXXXX").string();
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  const std::vector<std::vector<std::string>> gets = {
      {"get", "clusterqueue", "team-a-cq", "-o", "yaml"},
      {"get", "localqueue", "eval-queue", "-n", "team-b", "-o", "yaml"},
      {"get", "flavor", "default-flavor", "-o", "yaml"},
      {"get", "wpc", "production", "-o", "yaml"},
      {"get", "workload", "qwen2-7b-arc", "-n", "team-b", "-o", "yaml"},
      {"get", "workload", "llama3-70b-mmlu", "-n", "team-a", "-o", "yaml"}};
  for (const std::vector<std::string>& get : gets) {
    const std::string ours = RunOk(get).out;
    {
      std::ofstream(dir + "/object.yaml") << ours;
      std::ofstream(dir + "/kustomization.yaml") << "resources:\n- object.yaml\n";
    }
    FILE* pipe = popen(absl::StrCat("kubectl kustomize '", dir, "' 2>&1").c_str(), "r");
    ASSERT_NE(pipe, nullptr);
    std::string theirs;
    char buffer[4096];
    size_t n = 0;
    while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) theirs.append(buffer, n);
    EXPECT_EQ(pclose(pipe), 0) << theirs;
    EXPECT_EQ(ours, theirs) << get[1] << " " << get[2];
  }
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
}

// -l/--selector, --clusterqueue, --queue, --status, --sort-by, --no-headers.
TEST_F(CliTest, SelectorsFiltersSortingAndNoHeaders) {
  ApplyEvalHub();
  CliResult r =
      RunOk({"get", "workloads", "-A", "--status", "pending", "--no-headers", "-o", "name"});
  EXPECT_EQ(r.out,
            "workload.kueue.x-k8s.io/phi3-mini-truthfulqa\n"
            "workload.kueue.x-k8s.io/qwen2-7b-arc\n");
  r = RunOk({"get", "workloads", "-A", "--clusterqueue", "team-b-cq", "-o", "name"});
  EXPECT_EQ(CountLines(r.out, "workload"), 3) << r;
  r = RunOk({"get", "workloads", "-A", "--clusterqueue", "team-a-cq", "--status", "admitted", "-o",
             "name"});
  EXPECT_EQ(CountLines(r.out, "workload"), 4) << r;
  r = RunOk({"get", "workloads", "-A", "--queue", "eval-queue", "-o", "name"});
  EXPECT_EQ(CountLines(r.out, "workload"), 7) << r;
  r = RunOk({"get", "workloads", "-n", "team-a", "--queue", "other-queue"});
  EXPECT_EQ(r.err, "No resources found in team-a namespace.\n");

  // Workloads keep their labels, so -l selects them (every EvalHub eval carries part-of).
  r = RunOk({"get", "workloads", "-A", "-l", "app.kubernetes.io/part-of=evalhub", "-o", "name"});
  EXPECT_EQ(CountLines(r.out, "workload"), 7) << r;
  RunOk({"submit", "-f", "-"}, R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata: {name: labelled, namespace: team-b, labels: {tier: gpu, owner: ml-platform}}
spec:
  queueName: eval-queue
  podSets:
  - name: main
    count: 1
    template: {spec: {containers: [{name: c, resources: {requests: {cpu: 1}}}]}}
)");
  r = RunOk({"get", "workloads", "-A", "-l", "tier=gpu,owner in (ml-platform)", "-o", "name"});
  EXPECT_EQ(r.out, "workload.kueue.x-k8s.io/labelled\n");
  r = RunOk({"get", "workloads", "-n", "team-b", "--selector", "!app.kubernetes.io/part-of"});
  EXPECT_THAT(r.out, HasSubstr("labelled"));
  EXPECT_EQ(CountLines(r.out, "eval-queue"), 1) << r;
  RunOk({"delete", "workload", "labelled", "-n", "team-b"});

  // Labels select configuration objects too.
  RunOk({"apply", "-f", "-"}, R"(
apiVersion: v1
kind: Namespace
metadata: {name: team-c, labels: {org: research, tier: gpu}}
)");
  r = RunOk({"get", "namespaces", "-l", "org=research,tier in (gpu, cpu)", "-o", "name"});
  EXPECT_EQ(r.out, "namespace/team-c\n");
  r = RunOk({"get", "namespaces", "--selector", "org!=research", "-o", "name"});
  EXPECT_THAT(r.out, Not(HasSubstr("team-c")));
  EXPECT_THAT(r.out, HasSubstr("namespace/team-a\n"));
  r = RunOk({"get", "namespaces", "-l", "!org,tier"});
  EXPECT_EQ(r.err, "No resources found\n");

  r = RunOk({"get", "workloads", "-n", "team-b", "--sort-by", ".status.priority", "--no-headers"});
  std::vector<std::string> lines = absl::StrSplit(r.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 3u) << r;
  EXPECT_THAT(lines[0], StartsWith("phi3-mini-truthfulqa "));
  EXPECT_THAT(lines[1], StartsWith("qwen2-7b-arc "));
  EXPECT_THAT(lines[2], StartsWith("qwen2-72b-helm "));
  // Without headers the columns are as wide as the rows alone.
  EXPECT_THAT(lines[0], StartsWith("phi3-mini-truthfulqa   eval-queue"));
  r = RunOk({"get", "cq", "--sort-by", "{.metadata.name}", "--no-headers"});
  EXPECT_THAT(r.out, StartsWith("team-a-cq "));
}

// POSITION and REASON in the workload list.
TEST_F(CliTest, WorkloadListShowsPositionAndReason) {
  ApplyEvalHub();
  CliResult describe = RunOk({"describe", "workload", "qwen2-7b-arc", "-n", "team-b"});
  CliResult r = RunOk({"get", "workloads", "-n", "team-b"});
  const std::string row = RowOf(r.out, "qwen2-7b-arc");
  EXPECT_THAT(row, ContainsRegex(" Pending +<none> +500 +1 +5m +"));
  // REASON is describe's Pending Reason.
  const size_t at = describe.out.find("Pending Reason:");
  ASSERT_NE(at, std::string::npos) << describe;
  std::string reason = describe.out.substr(at + 15, describe.out.find('\n', at) - at - 15);
  reason = std::string(absl::StripAsciiWhitespace(reason));
  EXPECT_FALSE(reason.empty());
  EXPECT_THAT(row, ::testing::EndsWith(reason));
}

// get -w with a header, resuming from a revision.
TEST_F(CliTest, GetWatchPrintsHeaderRowsAndResumesFromARevision) {
  RunOk({"apply", "-f", DeployFile("queues.yaml"), "-f", DeployFile("priorities.yaml")});
  auto watch = [&](std::vector<std::string> args, SyncStringBuf& buf, std::ostringstream& err,
                   const std::function<void()>& while_watching) {
    std::ostream out(&buf);
    std::istringstream in;
    client::WatchCanceller canceller;
    CliEnv env{in, out, err, server_->address(), cli_clock_, &canceller};
    int code = -1;
    std::thread watcher([&] { code = RunCli(args, env); });
    while_watching();
    canceller.Cancel();
    watcher.join();
    return code;
  };
  SyncStringBuf first;
  std::ostringstream first_err;
  int code = watch({"get", "workloads", "-n", "team-a", "-w"}, first, first_err, [&] {
    EXPECT_TRUE(
        first.WaitForLine("^NAME +QUEUE +STATE +ADMITTED-BY +PRIORITY +POSITION +AGE "
                          "+REASON$",
                          kWaitTimeout))
        << first.str();
    RunOk({"apply", "-f", DeployFile("workloads.yaml")});
    EXPECT_TRUE(first.WaitForLine("^llama3-8b-safety-sweep +eval-queue +Admitted +team-a-cq ",
                                  kWaitTimeout))
        << first.str();
  });
  EXPECT_EQ(code, kExitOk) << first_err.str();
  EXPECT_THAT(first.str(), Not(HasSubstr("qwen2")));  // team-b's
  std::smatch m;
  const std::string err_text = first_err.str();
  ASSERT_TRUE(std::regex_search(err_text, m, std::regex("--since-revision=([0-9]+)"))) << err_text;
  const std::string revision = m[1];

  // Resuming: no list, only what changed after the revision.
  SyncStringBuf second;
  std::ostringstream second_err;
  code = watch(
      {"get", "workloads", "-n", "team-a", "-w", "--since-revision", revision}, second, second_err,
      [&] {
        RunOk({"finish", "llama3-70b-mmlu", "-n", "team-a"});
        EXPECT_TRUE(second.WaitForLine("^llama3-70b-mmlu +eval-queue +Finished ", kWaitTimeout))
            << second.str();
      });
  EXPECT_EQ(code, kExitOk) << second_err.str();
  EXPECT_THAT(second.str(), Not(HasSubstr("llama3-8b-safety-sweep")));
  EXPECT_THAT(second.str(), StartsWith("NAME "));
}

// apply --dry-run=server and diff.
TEST_F(CliTest, DryRunAndDiffChangeNothing) {
  CliResult r = RunOk({"apply", "--dry-run=server", "-f", DeployFile("queues.yaml")});
  EXPECT_THAT(r.out, HasSubstr("clusterqueue.kueue.x-k8s.io/team-a-cq created (server dry run)\n"));
  r = RunOk({"get", "cq"});
  EXPECT_EQ(r.err, "No resources found\n");
  // The server validates: a ClusterQueue naming a flavor twice is refused without storing.
  r = Run({"apply", "--dry-run=server", "-f", "-"}, R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: bad}
spec:
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - {name: f, resources: [{name: cpu, nominalQuota: 1}]}
    - {name: f, resources: [{name: cpu, nominalQuota: 1}]}
)");
  EXPECT_EQ(r.code, kExitFailure) << r;
  r = RunOk({"apply", "--dry-run", "-f", DeployFile("queues.yaml")});
  EXPECT_THAT(r.out, HasSubstr("team-a-cq created (dry run)\n"));

  RunOk({"apply", "-f", DeployFile("queues.yaml"), "-f", DeployFile("priorities.yaml")});
  r = Run({"diff", "-f", DeployFile("queues.yaml")});
  EXPECT_EQ(r.code, 0) << r;
  EXPECT_THAT(r.out, IsEmpty());
  std::ifstream in(DeployFile("queues.yaml"));
  std::stringstream text;
  text << in.rdbuf();
  std::string changed = text.str();
  const size_t at = changed.find("nominalQuota: 32");
  ASSERT_NE(at, std::string::npos);
  changed.replace(at, 16, "nominalQuota: 40");
  r = Run({"diff", "-f", "-"}, changed);
  EXPECT_EQ(r.code, 1) << r;
  EXPECT_THAT(r.out, HasSubstr("-        nominalQuota: \"32\"\n"));
  EXPECT_THAT(r.out, HasSubstr("+        nominalQuota: \"40\"\n"));
  EXPECT_THAT(r.out, HasSubstr("kueue.x-k8s.io.v1beta1.ClusterQueue..team-a-cq"));
  r = Run({"diff", "-f", DeployFile("workloads.yaml")});
  EXPECT_EQ(r.code, 1) << r;  // not submitted yet: all added
  EXPECT_THAT(r.out, HasSubstr("+  name: llama3-70b-mmlu\n"));
  // diff changed nothing.
  r = RunOk({"get", "workloads", "-A"});
  EXPECT_EQ(r.err, "No resources found\n");
}

// kind: List input.
TEST_F(CliTest, ApplyTakesAList) {
  CliResult r = RunOk({"apply", "-f", "-"}, R"(
apiVersion: v1
kind: List
items:
- apiVersion: kueue.x-k8s.io/v1beta1
  kind: ResourceFlavor
  metadata: {name: listed-flavor}
- apiVersion: kueue.x-k8s.io/v1beta1
  kind: WorkloadPriorityClass
  metadata: {name: listed-priority}
  value: 5
)");
  EXPECT_EQ(r.out,
            "resourceflavor.kueue.x-k8s.io/listed-flavor created\n"
            "workloadpriorityclass.kueue.x-k8s.io/listed-priority created\n");
  r = Run({"apply", "-f", "-"},
          "apiVersion: v1\nkind: List\nitems:\n- kind: Gizmo\n  metadata: {name: g}\n");
  EXPECT_EQ(r.code, kExitFailure);
  EXPECT_THAT(r.err, HasSubstr("<stdin>: document 1: items[0]: unknown kind \"Gizmo\""));
  // As kubectl, and as tollgated --manifests: every document names its apiVersion.
  r = Run({"apply", "-f", "-"}, "kind: List\nitems: []\n");
  EXPECT_EQ(r.code, kExitFailure);
  EXPECT_EQ(r.err, "tollgate: <stdin>: document 1: List: apiVersion: required value, got none\n");
}

// version (client and server).
TEST_F(CliTest, VersionShowsClientAndServerBuilds) {
  CliResult r = RunOk({"version", "--client"});
  EXPECT_THAT(r.out, ContainsRegex("^Client Version: \\S+ \\([A-Za-z]+, [A-Za-z]+ [0-9.]+; gRPC "
                                   "[0-9.]+, Protobuf [0-9.]+, Abseil [0-9]+, RocksDB [0-9.]+, "
                                   "yaml-cpp \\S+\\)\n$"));
  // One version string: the project's version, with the git commit as build metadata.
  EXPECT_THAT(r.out, ContainsRegex(absl::StrCat("^Client Version: ", TOLLGATE_PROJECT_VERSION,
                                                "(\\+\\S+)? ")));
  // The in-process test server has no InfoService: the server half fails, clearly.
  r = Run({"version"});
  EXPECT_EQ(r.code, kExitFailure);
  EXPECT_THAT(r.out, StartsWith("Client Version: "));
  EXPECT_THAT(r.err, HasSubstr("tollgate: "));
}

// Shell completion, with object names from the server.
TEST_F(CliTest, CompletionOffersCommandsKindsFlagsAndNames) {
  ApplyEvalHub();
  CliResult r = RunOk({"__complete", "de"});
  EXPECT_EQ(r.out, "deactivate\ndelete\ndescribe\n");
  r = RunOk({"__complete", "get", "cl"});
  EXPECT_EQ(r.out, "clusterqueues\n");
  EXPECT_EQ(RunOk({"__complete", "get", "no"}).out, "nodes\n");
  EXPECT_EQ(RunOk({"__complete", "delete", "no"}).out, "");
  r = RunOk({"__complete", "get", "clusterqueues", ""});
  EXPECT_EQ(r.out, "team-a-cq\nteam-b-cq\n");
  r = RunOk({"__complete", "describe", "workload", "-n", "team-b", "qwen2-7"});
  EXPECT_EQ(r.out, "qwen2-72b-helm\nqwen2-7b-arc\n");
  r = RunOk({"__complete", "finish", "-n", "team-a", "llama3-70"});
  EXPECT_EQ(r.out, "llama3-70b-mmlu\n");
  r = RunOk({"__complete", "get", "workloads", "--no"});
  EXPECT_EQ(r.out, "--no-headers\n");
  r = RunOk({"__complete", "get", "workloads", "-n", ""});
  EXPECT_THAT(r.out, HasSubstr("team-a\nteam-b\n"));
  r = RunOk({"__complete", "get", "workloads", "-o", "j"});
  EXPECT_EQ(r.out, "json\njsonpath=\n");
}

// ---------------------------------------------------------------------------------------------
// submit -f with Kubernetes job manifests.

TEST_F(CliTest, SubmitTakesKueueSampleJobs) {
  RunOk({"apply", "-f", TestData("queues.yaml")});
  CliResult r = RunOk({"submit", "-f", TestData("sample-job.yaml")});
  // Named as Kueue names a job's workload: kind, name and a hash (docs/job-kinds.md).
  EXPECT_THAT(r.out,
              ContainsRegex("^workload.kueue.x-k8s.io/job-sample-job-[a-z0-9]{5}-[0-9a-f]{5} "
                            "\\(Job sample-job-[a-z0-9]{5}\\) created\n$"));
  r = RunOk({"submit", "-f", TestData("sample-rayjob.yaml")});
  EXPECT_THAT(r.out, ContainsRegex("^workload.kueue.x-k8s.io/rayjob-rayjob-sample-[0-9a-f]{5} "
                                   "\\(RayJob rayjob-sample\\) created\n$"));
  // The same named job again: the same workload, unchanged.
  r = RunOk({"submit", "-f", TestData("sample-rayjob.yaml")});
  EXPECT_THAT(r.out, HasSubstr(" unchanged\n"));
  r = RunOk({"submit", "-f", TestData("sample-pytorchjob.yaml")});
  EXPECT_THAT(r.out, ContainsRegex("^workload.kueue.x-k8s.io/pytorchjob-pytorch-simple-[0-9a-f]{5} "
                                   "\\(PyTorchJob pytorch-simple\\) created\n$"));

  // Pod sets as tollgate-kube makes them: the Job's 3 pods, the RayJob's head, workers and
  // submitter, the PyTorchJob's master and worker.
  r = RunOk(
      {"get", "workloads", "-o",
       "jsonpath={range .items[*]}{.metadata.name}:{.spec.queueName}:{.spec.priorityClassName}"
       ":{range .spec.podSets[*]}{.name}={.count},{end}{\"\\n\"}{end}"});
  EXPECT_THAT(r.out, ContainsRegex("job-sample-job-[a-z0-9-]+:user-queue::main=3,\n"));
  EXPECT_THAT(r.out, ContainsRegex("rayjob-rayjob-sample-[0-9a-f]+:user-queue:batch-high:head=1,"
                                   "small-group=2,submitter=1,\n"));
  EXPECT_THAT(
      r.out, ContainsRegex("pytorchjob-pytorch-simple-[0-9a-f]+:user-queue::master=1,worker=1,\n"));
  // Sorted by name, the Job's workload comes first.
  r = RunOk(
      {"get", "workloads", "-o",
       "jsonpath={.items[0].spec.podSets[0].template.spec.containers[0].resources.requests}"});
  EXPECT_EQ(r.out, "{\"cpu\":\"1\",\"memory\":\"200Mi\"}");
  // Quota: 3 + 4 CPU admitted; the PyTorchJob's 2 GPUs fit too (9 CPU, 2 GPU).
  RunUntil({"get", "workloads", "--status", "admitted", "-o", "name"},
           [](const std::string& out) { return CountLines(out, "workload") == 3; });
}

TEST_F(CliTest, SubmitRefusesUnknownKindsAndPointsToTheWorkloadForm) {
  CliResult r = Run({"submit", "-f", "-"}, R"(
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: web}
)");
  EXPECT_EQ(r.code, kExitFailure);
  EXPECT_THAT(r.err, HasSubstr("unknown kind \"DaemonSet\""));
  EXPECT_THAT(r.err,
              HasSubstr("Job (batch/v1), CronJob (batch/v1), JobSet (jobset.x-k8s.io/v1alpha2)"));
  EXPECT_THAT(r.err, HasSubstr("as a Kueue Workload"));
  r = Run({"submit", "-f", "-"}, "apiVersion: batch/v2\nkind: Job\nmetadata: {name: j}\n");
  EXPECT_EQ(r.code, kExitFailure);
  EXPECT_THAT(r.err,
              HasSubstr("apiVersion \"batch/v2\" is not served; Tollgate reads Job as batch/v1"));
  // An older version of a kind Kueue reads in another: named, with the version to convert to.
  r = Run({"submit", "-f", "-"},
          "apiVersion: kubeflow.org/v1\nkind: MPIJob\nmetadata: {name: m}\n");
  EXPECT_EQ(r.code, kExitFailure);
  EXPECT_THAT(r.err, HasSubstr("Tollgate reads MPIJob as kubeflow.org/v2beta1 (convert"));
  r = Run({"submit", "-f", "-"}, "apiVersion: batch/v1\nkind: Job\nmetadata: {namespace: x}\n");
  EXPECT_EQ(r.code, kExitFailure);
  EXPECT_THAT(r.err, HasSubstr("metadata.name (or generateName) is required"));
}

// Every kind's manifest as its project documents it (test/fixtures/): each becomes the workload
// tollgate-kube would submit, objects beside it that carry no work are skipped with a note.
TEST_F(CliTest, SubmitTakesEveryKindsDocumentedManifest) {
  RunOk({"apply", "-f", TestData("queues.yaml")});
  const std::string fixtures = TOLLGATE_FIXTURES_DIR;
  struct Case {
    std::vector<std::string> files;
    std::string kind;
    std::string job;
  };
  const std::vector<Case> cases = {
      {{"jobset/jobset.yaml"}, "JobSet", "sleep-jobset"},
      {{"mpijob/mpijob.yaml"}, "MPIJob", "pi"},
      {{"tfjob/tfjob.yaml"}, "TFJob", "tf-dist-mnist"},
      {{"jaxjob/jaxjob.yaml"}, "JAXJob", "jaxjob-simple"},
      {{"paddlejob/paddlejob.yaml"}, "PaddleJob", "paddle-simple-cpu"},
      {{"xgboostjob/xgboostjob.yaml"}, "XGBoostJob", "xgboost-dist-iris"},
      {{"trainjob/trainjob.yaml", "trainjob/torch-distributed-runtime.yaml"},
       "TrainJob",
       "pytorch-simple"},
      {{"raycluster/raycluster.yaml"}, "RayCluster", "raycluster-interactive"},
      {{"rayservice/rayservice.yaml"}, "RayService", "rayservice-fruit"},
      {{"sparkapplication/spark-pi.yaml"}, "SparkApplication", "spark-pi"},
      {{"appwrapper/appwrapper.yaml"}, "AppWrapper", "wrapped-pytorch"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {"submit"};
    for (const std::string& f : c.files) {
      args.push_back("-f");
      args.push_back(absl::StrCat(fixtures, "/", f));
    }
    CliResult r = RunOk(args);
    EXPECT_THAT(r.out, ContainsRegex(absl::StrCat("^workload.kueue.x-k8s.io/[a-z]+-", c.job,
                                                  "-[0-9a-f]{5} \\(", c.kind, " ", c.job,
                                                  "\\) created\n$")))
        << c.kind;
  }
  // A TrainJob's runtime rides along and is skipped with a note; without it the TrainJob is
  // refused naming the runtime.
  CliResult r = Run({"submit", "-f", fixtures + "/trainjob/trainjob.yaml"});
  EXPECT_EQ(r.code, kExitFailure);
  EXPECT_THAT(r.err, HasSubstr("ClusterTrainingRuntime torch-distributed not found"));
  // The ConfigMap with a RayJob's code carries no work: skipped, named, the RayJob submitted.
  r = RunOk({"submit", "-f", fixtures + "/rayjob/rayjob-with-configmap.yaml"});
  EXPECT_THAT(r.err, HasSubstr("skipped ConfigMap ray-job-code-sample: it carries no work"));
  EXPECT_THAT(r.out, HasSubstr("(RayJob ray-job-sample) created"));
  // A CronJob's Jobs are the workloads.
  r = RunOk({"submit", "-f", fixtures + "/cronjob/cronjob.yaml"});
  EXPECT_EQ(r.out, "");
  EXPECT_THAT(r.err, HasSubstr("skipped CronJob nightly-eval: it creates Jobs, which are queued "
                               "in user-queue when it creates them"));
  // Pod sets as Kueue computes them, e.g. the JobSet's replicas x pods per job.
  r = RunOk({"get", "workloads", "-o",
             "jsonpath={range .items[*]}{.metadata.name}:{range .spec.podSets[*]}{.name}="
             "{.count},{end}{\"\\n\"}{end}"});
  EXPECT_THAT(r.out, ContainsRegex("jobset-sleep-jobset-[0-9a-f]{5}:workers=6,driver=1,\n"));
  EXPECT_THAT(r.out, ContainsRegex("raycluster-raycluster-interactive-[0-9a-f]{5}:head=1,"
                                   "workergroup=4,\n"));
  EXPECT_THAT(r.out, ContainsRegex("trainjob-pytorch-simple-[0-9a-f]{5}:node=2,\n"));
  EXPECT_THAT(r.out, ContainsRegex("sparkapplication-spark-pi-[0-9a-f]{5}:driver=1,executor=2,\n"));
}

// ---------------------------------------------------------------------------------------------
// Connection and command line.

TEST(CliConnectionTest, UnreachableServerGivesAClearError) {
  // A socket bound but not listening: connecting to its port is refused, and no other process
  // can take the port while the test runs.
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const std::string target = absl::StrCat("127.0.0.1:", ntohs(addr.sin_port));

  core::SimulatedClock clock(ServerEpoch());
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"get", "workloads", "--server", target},
                                             {"--server", target, "watch", "workloads"},
                                             {"finish", "x", "--server=" + target}}) {
    std::istringstream in;
    std::ostringstream out, err;
    CliEnv env{in, out, err, "", clock};
    EXPECT_EQ(RunCli(args, env), kExitFailure) << args[0];
    EXPECT_EQ(err.str(), absl::StrCat("tollgate: cannot reach tollgated at ", target,
                                      ": connection refused (is tollgated running? set --server "
                                      "or TOLLGATE_SERVER)\n"));
    EXPECT_THAT(out.str(), IsEmpty());
  }
  close(fd);
}

TEST(CliConnectionTest, ServerComesFromFlagThenEnvThenDefault) {
  EXPECT_EQ(ResolveServer("h:1", "e:2"), "h:1");
  EXPECT_EQ(ResolveServer("", "e:2"), "e:2");
  EXPECT_EQ(ResolveServer("", ""), "127.0.0.1:50051");
}

struct UsageCase {
  std::string name;
  std::vector<std::string> args;
  int code;
  // Expected in stdout (exit 0) or stderr (exit 2).
  std::string text;
};

class CliUsageTest : public ::testing::TestWithParam<UsageCase> {};

TEST_P(CliUsageTest, PrintsUsage) {
  const UsageCase& c = GetParam();
  core::SimulatedClock clock(ServerEpoch());
  std::istringstream in;
  std::ostringstream out, err;
  // Unroutable on purpose: none of these may contact a server.
  CliEnv env{in, out, err, "192.0.2.1:1", clock};
  EXPECT_EQ(RunCli(c.args, env), c.code) << err.str();
  if (c.code == kExitOk) {
    EXPECT_THAT(out.str(), HasSubstr(c.text));
    EXPECT_THAT(err.str(), IsEmpty());
  } else {
    EXPECT_THAT(err.str(), HasSubstr(c.text));
    EXPECT_THAT(out.str(), IsEmpty());
  }
}

INSTANTIATE_TEST_SUITE_P(
    Commands, CliUsageTest,
    ::testing::Values(
        UsageCase{"NoArguments", {}, kExitUsage, "usage: tollgate COMMAND"},
        UsageCase{"TopLevelHelp",
                  {"--help"},
                  kExitOk,
                  "describe workload|clusterqueue|cohort|localqueue|resourceflavor|node NAME"},
        UsageCase{"HelpCommand", {"help", "apply"}, kExitOk, "usage: tollgate apply -f FILE"},
        UsageCase{"UnknownCommand", {"frobnicate"}, kExitUsage, "unknown command \"frobnicate\""},
        UsageCase{
            "UnknownFlag", {"get", "workloads", "--colour"}, kExitUsage, "unknown flag --colour"},
        UsageCase{"FlagWithoutValue", {"get", "workloads", "-n"}, kExitUsage, "needs a value"},
        UsageCase{"ApplyHelp", {"apply", "--help"}, kExitOk, "-f, --filename FILE"},
        UsageCase{"GetHelp", {"get", "-h"}, kExitOk, "usage: tollgate get TYPE"},
        UsageCase{"DescribeHelp", {"describe", "--help"}, kExitOk, "position in its LocalQueue"},
        UsageCase{"WatchHelp", {"watch", "--help"}, kExitOk, "until interrupted"},
        UsageCase{"FinishHelp", {"finish", "--help"}, kExitOk, "--message TEXT"},
        UsageCase{"PreemptHelp", {"preempt", "--help"}, kExitOk, "--reason TEXT"},
        UsageCase{"AdmitHelp", {"admit", "--help"}, kExitOk, "--dry-run"},
        UsageCase{"DeleteHelp", {"delete", "--help"}, kExitOk, "workloadpriorityclass"},
        UsageCase{"SubmitHelp", {"submit", "--help"}, kExitOk, "usage: tollgate submit -f FILE"},
        UsageCase{"UsageHelp", {"usage", "--help"}, kExitOk, "NOMINAL, USED, BORROWED"},
        UsageCase{"ScenarioHelp", {"scenario", "--help"}, kExitOk, "scenario run PATH..."},
        UsageCase{"ApplyWithoutFile", {"apply"}, kExitUsage, "-f FILE"},
        UsageCase{"GetUnknownType", {"get", "gizmos"}, kExitUsage, "unknown resource type"},
        UsageCase{"GetBadOutput",
                  {"get", "cq", "x", "-o", "xml"},
                  kExitUsage,
                  "unsupported output format"},
        UsageCase{"FinishWithoutName", {"finish"}, kExitUsage, "name the workload"},
        UsageCase{"DescribeUnsupportedKind",
                  {"describe", "priorityclass", "x"},
                  kExitUsage,
                  "cannot describe"},
        UsageCase{"WatchOnlyWorkloads",
                  {"watch", "clusterqueues"},
                  kExitUsage,
                  "only workloads can be watched"},
        UsageCase{"BadTimeout", {"get", "workloads", "--timeout", "soon"}, kExitUsage, "--timeout"},
        UsageCase{"ScenarioHelpListsOnlyItsFlags",
                  {"scenario", "run", "--help"},
                  kExitOk,
                  "Flags:\n  -h, --help   show this help\n"},
        UsageCase{"GetBadSelector", {"get", "workloads", "-l", "a in (x"}, kExitUsage, "missing )"},
        UsageCase{"GetBadStatus",
                  {"get", "workloads", "--status", "sleeping"},
                  kExitUsage,
                  "want pending, quotareserved, admitted, evicting or finished"},
        UsageCase{
            "FieldFilterOnConfig", {"get", "cq", "--queue", "x"}, kExitUsage, "filter workloads"},
        UsageCase{"WatchConfigKind", {"get", "cq", "-w"}, kExitUsage, "only workloads"},
        UsageCase{"SinceRevisionWithoutWatch",
                  {"get", "wl", "--since-revision", "3"},
                  kExitUsage,
                  "add -w"},
        UsageCase{"BadJsonPath", {"get", "wl", "-o", "jsonpath={.a"}, kExitUsage, "unclosed {"},
        UsageCase{"BadDryRun",
                  {"apply", "-f", "x.yaml", "--dry-run=maybe"},
                  kExitUsage,
                  "want none, client or server"},
        UsageCase{"CompletionBash", {"completion", "bash"}, kExitOk, "complete -o default -F"},
        UsageCase{"CompletionZsh", {"completion", "zsh"}, kExitOk, "compdef _tollgate tollgate"},
        UsageCase{"CompletionFish", {"completion", "fish"}, kExitUsage, "unsupported shell"},
        UsageCase{"VersionClient", {"version", "--client"}, kExitOk, "Client Version: "},
        UsageCase{"DashDashVersion", {"--version"}, kExitOk, "tollgate "},
        UsageCase{"ScenarioWithoutPaths",
                  {"scenario", "run"},
                  kExitUsage,
                  "name at least one file or folder"}),
    [](const ::testing::TestParamInfo<UsageCase>& info) { return info.param.name; });

TEST(CliScenarioTest, ScenarioRunStillDispatches) {
  core::SimulatedClock clock(ServerEpoch());
  std::istringstream in;
  std::ostringstream out, err;
  CliEnv env{in, out, err, "", clock};
  const std::string file =
      absl::StrCat(TOLLGATE_SCENARIOS_DIR, "/admission/01-flavor-order-per-workload.yaml");
  EXPECT_EQ(RunCli({"scenario", "run", file}, env), kExitOk) << out.str() << err.str();
  EXPECT_THAT(out.str(), HasSubstr("1 passed, 0 failed"));
}

// ---------------------------------------------------------------------------------------------
// Start-time estimates (docs/start-estimates.md): describe, -o wide, admit and submit dry runs.

// One 8-GPU queue; "first" holds it and declares a one-hour limit, "second" waits for it.
constexpr char kEstimateQueues[] = R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: gpu}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: gpu
      resources: [{name: nvidia.com/gpu, nominalQuota: 8}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: q, namespace: ml}
spec: {clusterQueue: cq}
)";

std::string EightGpuJob(absl::string_view name, absl::string_view limit_line) {
  return absl::StrCat(R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata: {name: )",
                      name, R"(, namespace: ml}
spec:
  queueName: q
)",
                      limit_line, R"(
  podSets:
  - name: main
    count: 1
    template: {spec: {containers: [{name: c, resources: {requests: {nvidia.com/gpu: 8}}}]}}
)");
}

class CliStartEstimateTest : public CliTest {
 protected:
  void SetUpQueue() {
    RunOk({"apply", "-f", "-"}, kEstimateQueues);
    RunOk({"submit", "-f", "-"}, EightGpuJob("first", "  maximumExecutionTimeSeconds: 3600"));
    RunOk({"submit", "-f", "-"}, EightGpuJob("second", "  maximumExecutionTimeSeconds: 3600"));
    RunUntil({"get", "workloads", "-n", "ml"}, [](const std::string& out) {
      return CountLines(out, "Admitted") == 1 && CountLines(out, "Pending") == 1;
    });
  }
};

// The server's clock stands at 00:00 and the CLI's at 00:05: "first" ends at 01:00.
TEST_F(CliStartEstimateTest, DescribeShowsWhenAPendingWorkloadWillStart) {
  SetUpQueue();
  CliResult r = RunOk({"describe", "workload", "second", "-n", "ml"});
  EXPECT_THAT(r.out, ContainsRegex("Estimated Start: +in 55m \\(2026-01-01T01:00:00Z\\); "
                                   "runtimes: 1 declared, 0 from LocalQueue history, 0 unknown\n"))
      << r;
  r = RunOk({"describe", "workload", "first", "-n", "ml"});
  EXPECT_THAT(r.out, Not(HasSubstr("Estimated Start")));
}

TEST_F(CliStartEstimateTest, WideListingHasAnEstimatedStartColumn) {
  SetUpQueue();
  CliResult r = RunOk({"get", "workloads", "-n", "ml", "-o", "wide"});
  EXPECT_THAT(r.out, HasSubstr("ESTIMATED-START"));
  EXPECT_THAT(RowOf(r.out, "second"), HasSubstr(" 55m "));
  EXPECT_THAT(RowOf(r.out, "first"), Not(HasSubstr("55m")));
  r = RunOk({"get", "workloads", "-n", "ml"});
  EXPECT_THAT(r.out, Not(HasSubstr("ESTIMATED-START")));
}

TEST_F(CliStartEstimateTest, AdmitDryRunSaysWhenItWouldStart) {
  SetUpQueue();
  CliResult r = RunOk({"admit", "second", "-n", "ml", "--dry-run"});
  EXPECT_THAT(r.out, HasSubstr("would wait: "));
  EXPECT_THAT(r.out, HasSubstr("  estimated start: in 55m (2026-01-01T01:00:00Z)"));
}

TEST_F(CliStartEstimateTest, SubmitServerDryRunEstimatesAndStoresNothing) {
  SetUpQueue();
  // Behind "second": first ends at 01:00, second runs to its limit, 02:00.
  CliResult r = RunOk({"submit", "--dry-run=server", "-f", "-"},
                      EightGpuJob("third", "  maximumExecutionTimeSeconds: 600"));
  EXPECT_THAT(r.out, HasSubstr("workload.kueue.x-k8s.io/third created (server dry run); would "
                               "start in 1h55m (2026-01-01T02:00:00Z)"));
  r = Run({"get", "workload", "third", "-n", "ml"});
  EXPECT_EQ(r.code, kExitFailure) << r;
  EXPECT_THAT(r.err, HasSubstr("not found"));
}

TEST_F(CliStartEstimateTest, UnknownWhenNothingSaysHowLongTheRunningJobTakes) {
  RunOk({"apply", "-f", "-"}, kEstimateQueues);
  RunOk({"submit", "-f", "-"}, EightGpuJob("first", ""));
  RunOk({"submit", "-f", "-"}, EightGpuJob("second", ""));
  RunUntil({"get", "workloads", "-n", "ml"},
           [](const std::string& out) { return CountLines(out, "Pending") == 1; });
  CliResult r = RunOk({"describe", "workload", "second", "-n", "ml"});
  EXPECT_THAT(r.out, ContainsRegex("Estimated Start: +unknown: 1 workloads holding quota have no "
                                   "known runtime"));
  r = RunOk({"get", "workloads", "-n", "ml", "-o", "wide"});
  EXPECT_THAT(RowOf(r.out, "second"), HasSubstr(" unknown "));
}

}  // namespace
}  // namespace tollgate::cli
