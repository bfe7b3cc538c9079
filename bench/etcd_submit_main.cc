// tollgate-etcd-bench: Submit throughput with the state in etcd (storage::EtcdStore) on a
// 3-member etcd cluster on loopback, beside etcd's own Txn throughput measured in the same run
// at the same concurrency (the floor). docs/performance.md has the command and the results.
//
// The server is Tollgate's real service stack (AdmissionExecutor, TollgateApi, the gRPC
// services) in this process on 127.0.0.1 port 0, over an EtcdStore fenced on a leased
// leadership key as an elected leader's is; the clients are N synchronous threads over 8
// channels, as in `tollgate-bench service`.

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "bench/bench_setup.h"
#include "bench/bench_util.h"
#include "core/real_clock.h"
#include "services/engine/admission_executor.h"
#include "services/engine/tollgate_api.h"
#include "services/rpc/grpc_services.h"
#include "storage/etcd_store.h"
#include "test/support/etcd_cluster.h"
#include "tollgate/v1/service.grpc.pb.h"

namespace tollgate::bench {
namespace {

constexpr char kNamespace[] = "svc";
constexpr char kQueue[] = "svc-lq";

void PrintPhase(const PhaseResult& phase, int streams) {
  std::printf("  %-34s %4d %9.0f %8.2f %8.2f %7lld\n", phase.name.c_str(), streams,
              phase.throughput(), Percentile(phase.latency_ms, 0.5),
              Percentile(phase.latency_ms, 0.99), static_cast<long long>(phase.errors));
  if (phase.errors > 0) std::printf("    first error: %s\n", phase.first_error.c_str());
  std::fflush(stdout);
}

v1::Workload SubmitWorkload(const std::string& name) {
  return OneCpuWorkload(kNamespace, name, kQueue);
}

struct EtcdBenchFlags {
  int streams = 64;
  absl::Duration phase = absl::Seconds(5);
  int members = 3;
  int rounds = 2;
};

absl::Status ParseFlags(int argc, char** argv, EtcdBenchFlags& flags) {
  for (int i = 1; i < argc; ++i) {
    const absl::string_view arg = argv[i];
    int value = 0;
    const auto int_flag = [&](absl::string_view name, int& out) {
      if (!absl::StartsWith(arg, name)) return false;
      if (!absl::SimpleAtoi(arg.substr(name.size()), &value) || value < 1) return false;
      out = value;
      return true;
    };
    int seconds = 0;
    if (int_flag("--streams=", flags.streams) || int_flag("--members=", flags.members) ||
        int_flag("--rounds=", flags.rounds)) {
      continue;
    }
    if (int_flag("--seconds=", seconds)) {
      flags.phase = absl::Seconds(seconds);
      continue;
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown or bad flag \"", arg,
        "\"; flags: --streams=N (64) --seconds=S per phase (5) --members=1|3 (3) --rounds=R (2)"));
  }
  return absl::OkStatus();
}

absl::Status Run(const EtcdBenchFlags& flags) {
  if (!test_support::EtcdCluster::Available()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "etcd not found at ", test_support::EtcdCluster::BinaryPath(), " (install etcd-server)"));
  }
  absl::StatusOr<std::unique_ptr<test_support::EtcdCluster>> etcd =
      test_support::EtcdCluster::Start({.members = flags.members});
  if (!etcd.ok()) return etcd.status();
  absl::StatusOr<std::vector<std::string>> endpoints =
      storage::ParseEtcdEndpoints((*etcd)->ClientEndpoints());
  if (!endpoints.ok()) return endpoints.status();

  // The server: Tollgate's service stack over an EtcdStore fenced on a leased key.
  storage::EtcdStoreOptions store_options;
  store_options.connection.endpoints = *endpoints;
  store_options.key_prefix = "/tollgate/";
  absl::StatusOr<std::unique_ptr<storage::EtcdStore>> store =
      storage::EtcdStore::Open(store_options);
  if (!store.ok()) return store.status();
  absl::StatusOr<etcdserverpb::LeaseGrantResponse> lease = (*store)->client().LeaseGrant(600);
  if (!lease.ok()) return lease.status();
  etcdserverpb::TxnRequest campaign;
  auto* put = campaign.add_success()->mutable_request_put();
  put->set_key("/tollgate-bench/leader");
  put->set_value("bench");
  put->set_lease(lease->id());
  absl::StatusOr<etcdserverpb::TxnResponse> won = (*store)->client().Txn(campaign);
  if (!won.ok()) return won.status();
  (*store)->SetFence(storage::EtcdFence{.key = "/tollgate-bench/leader",
                                        .create_revision = won->header().revision()});

  core::RealClock clock;
  absl::StatusOr<std::unique_ptr<engine::AdmissionExecutor>> executor =
      engine::AdmissionExecutor::Open(**store, clock, core::SchedulerConfig{}, {});
  if (!executor.ok()) return executor.status();
  engine::TollgateApi api(**executor);
  rpc::AdmissionGrpcService admission(api);
  rpc::ConfigGrpcService config(api);
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&admission);
  builder.RegisterService(&config);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) return absl::InternalError("cannot start the gRPC server");
  const std::string target = absl::StrCat("127.0.0.1:", port);
  const auto new_channel = [&] {
    grpc::ChannelArguments args;
    // Separate connections, not one shared subchannel.
    args.SetInt("tollgate.bench.channel", std::rand());
    return grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args);
  };
  // Everything submitted is admitted: the benchmark pays for the admission writes too.
  if (absl::Status s = ApplyOverGrpc(
          new_channel(),
          CpuQueuesConfig(kNamespace, "svc-flavor", {{"svc-cq", kQueue, "100000000"}}));
      !s.ok()) {
    return s;
  }
  // The size of one Submit's durable write (the workload, in state and change log).
  absl::StatusOr<size_t> record_bytes =
      SubmitRecordBytes(new_channel(), SubmitWorkload("size-probe"));
  if (!record_bytes.ok()) return record_bytes.status();

  // The floor's client: its own connections to every member, as the store has.
  storage::EtcdConnectionOptions floor_options;
  floor_options.endpoints = *endpoints;
  absl::StatusOr<std::unique_ptr<storage::EtcdClient>> floor_client =
      storage::EtcdClient::Connect(floor_options);
  if (!floor_client.ok()) return floor_client.status();
  const std::string value(*record_bytes, 'x');

  const int channels = std::min(flags.streams, 8);
  std::vector<std::unique_ptr<v1::AdmissionService::Stub>> stubs;
  for (int c = 0; c < channels; ++c) stubs.push_back(v1::AdmissionService::NewStub(new_channel()));
  std::atomic<int64_t> serial{0};

  std::printf(
      "Submit on EtcdStore vs etcd Txn (floor); %d-member etcd on loopback; %d streams; "
      "phases of %.0f s; write size %zu bytes (state + change log each)\n",
      flags.members, flags.streams, absl::ToDoubleSeconds(flags.phase), *record_bytes);
  std::printf("  %-34s %4s %9s %8s %8s %7s\n", "phase", "N", "ops/s", "p50 ms", "p99 ms", "errors");
  double floor_sum = 0, submit_sum = 0;
  for (int round = 0; round < flags.rounds; ++round) {
    PhaseResult floor =
        RunPhase("etcd Txn, 2 puts (floor)", flags.streams, flags.phase,
                 [&](int t, int64_t seq) -> std::string {
                   etcdserverpb::TxnRequest txn;
                   const std::string key = absl::StrCat("/floor/", round, "/", t, "/", seq);
                   auto* state = txn.add_success()->mutable_request_put();
                   state->set_key(key + "/state");
                   state->set_value(value);
                   auto* log = txn.add_success()->mutable_request_put();
                   log->set_key(key + "/log");
                   log->set_value(value);
                   absl::StatusOr<etcdserverpb::TxnResponse> r = (*floor_client)->Txn(txn);
                   return r.ok() ? "" : std::string(r.status().message());
                 });
    const int64_t revision_before = (*store)->CurrentRevision();
    PhaseResult submit =
        RunPhase("Submit (tollgate on EtcdStore)", flags.streams, flags.phase,
                 [&](int t, int64_t) -> std::string {
                   return SubmitOnce(*stubs[t % channels],
                                     SubmitWorkload(absl::StrCat("s-", serial.fetch_add(1))));
                 });
    const int64_t commits = (*store)->CurrentRevision() - revision_before;
    PrintPhase(floor, flags.streams);
    PrintPhase(submit, flags.streams);
    std::printf("  round %d: Submit/floor %.2f; %lld store commits (%.1f Submits per commit)\n",
                round + 1, floor.throughput() > 0 ? submit.throughput() / floor.throughput() : 0,
                static_cast<long long>(commits),
                commits > 0 ? static_cast<double>(submit.ok) / static_cast<double>(commits) : 0);
    floor_sum += floor.throughput();
    submit_sum += submit.throughput();
  }
  std::printf("overall: Submit %.0f/s, floor %.0f/s, ratio %.2f\n", submit_sum / flags.rounds,
              floor_sum / flags.rounds, floor_sum > 0 ? submit_sum / floor_sum : 0);
  server->Shutdown(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
  return absl::OkStatus();
}

}  // namespace
}  // namespace tollgate::bench

int main(int argc, char** argv) {
  tollgate::bench::EtcdBenchFlags flags;
  absl::Status status = tollgate::bench::ParseFlags(argc, argv, flags);
  if (status.ok()) status = tollgate::bench::Run(flags);
  if (!status.ok()) {
    std::fprintf(stderr, "tollgate-etcd-bench: %s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}
