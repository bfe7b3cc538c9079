// tollgate-failover-bench: how long a replicated tollgated (--store=etcd, docs/ha.md) is without
// a leader. Starts a 3-member etcd cluster on loopback, stores N workloads in it, starts two
// tollgated replicas, then repeatedly kills the leader with SIGKILL and measures the time until
// the new leader has admitted a probe workload submitted right after the kill (by a client that
// retries across the replicas). The killed replica is started again, as a follower, before the
// next run. Prints every run and the median.
//
// Each run also prints how the new leader's promotion went (its "serving as leader" log line:
// whether it loaded from its warm copy, and where loading spent its time).
//
// usage: tollgate-failover-bench [--workloads=100000] [--lease-ttl=2s] [--runs=5]
//                                [--warm-followers=false]
#include <signal.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/bench_setup.h"
#include "clients/cpp/tollgate_client.h"
#include "core/status_macros.h"
#include "services/engine/tollgate_api.h"
#include "storage/etcd_store.h"
#include "test/e2e/tollgated_process.h"
#include "test/support/etcd_cluster.h"

namespace tollgate::bench {
namespace {

constexpr char kNamespace[] = "failover";

struct Options {
  int64_t workloads = 100000;
  absl::Duration lease_ttl = absl::Seconds(2);
  int runs = 5;
  // Passed to tollgated: false measures the promotion that loads the state from etcd.
  bool warm_followers = true;
};

// The last log line of `replica` that contains `what` ("" when none).
std::string LastLogLine(const e2e::TollgatedProcess& replica, absl::string_view what) {
  const std::string logs = replica.Logs();
  std::string found;
  for (absl::string_view line : absl::StrSplit(logs, '\n')) {
    if (absl::StrContains(line, what)) found = std::string(line);
  }
  return found;
}

v1::SubmitRequest SubmitOf(const std::string& name, const std::string& queue) {
  v1::SubmitRequest request;
  *request.mutable_workload() = OneCpuWorkload(kNamespace, name, queue);
  return request;
}

// Fills the store tollgated will use (--etcd-prefix=/tollgate/ puts it under /tollgate/store/)
// in process, through the same executor and API tollgated runs.
absl::Status Populate(const std::string& endpoints, int64_t workloads) {
  storage::EtcdStoreOptions store_options;
  TOLLGATE_ASSIGN_OR_RETURN(store_options.connection.endpoints,
                            storage::ParseEtcdEndpoints(endpoints));
  store_options.key_prefix = "/tollgate/store/";
  TOLLGATE_ASSIGN_OR_RETURN(std::unique_ptr<storage::EtcdStore> store,
                            storage::EtcdStore::Open(store_options));
  TOLLGATE_ASSIGN_OR_RETURN(std::unique_ptr<FillingService> filling, FillingService::Open(*store));
  engine::TollgateApi& api = filling->api();
  // Two queues of 1 cpu each: "stored" holds the N workloads (one admitted, the rest pending,
  // as a loaded system's backlog), "probe" stays free for the probe admitted after each
  // failover.
  TOLLGATE_RETURN_IF_ERROR(
      api.Apply(CpuQueuesConfig(kNamespace, "flavor",
                                {{"stored-cq", "stored", "1"}, {"probe-cq", "probe", "1"}}))
          .status());
  const absl::Time start = absl::Now();
  TOLLGATE_RETURN_IF_ERROR(ForEachInParallel(0, workloads, 32, [&](int64_t i) {
    return api.Submit(SubmitOf(absl::StrCat("s-", i), "stored")).status();
  }));
  TOLLGATE_RETURN_IF_ERROR(api.Settle());
  const absl::Duration elapsed = absl::Now() - start;
  std::printf("[populate] %lld workloads stored in etcd in %s (%.0f submits/s)\n",
              static_cast<long long>(workloads), absl::FormatDuration(elapsed).c_str(),
              static_cast<double>(workloads) / absl::ToDoubleSeconds(elapsed));
  std::fflush(stdout);
  return absl::OkStatus();
}

// Followers answer reads themselves and redirect InfoService: only the leader answers it.
bool Leads(const e2e::TollgatedProcess& replica) {
  auto stub = v1::InfoService::NewStub(replica.channel());
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(1)));
  v1::GetBuildInfoRequest request;
  v1::BuildInfo response;
  return stub->GetBuildInfo(&context, request, &response).ok();
}

absl::StatusOr<int> AwaitLeader(const std::vector<std::unique_ptr<e2e::TollgatedProcess>>& replicas,
                                absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    for (int i = 0; i < static_cast<int>(replicas.size()); ++i) {
      if (Leads(*replicas[i])) return i;
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  return absl::DeadlineExceededError("no leader");
}

struct Run {
  absl::Duration serving;   // kill -> the probe's submit acknowledged by the new leader
  absl::Duration admitted;  // kill -> the probe seen admitted
};

absl::Status Main(const Options& options) {
  test_support::EtcdClusterOptions etcd_options;
  etcd_options.members = 3;
  TOLLGATE_ASSIGN_OR_RETURN(std::unique_ptr<test_support::EtcdCluster> etcd,
                            test_support::EtcdCluster::Start(etcd_options));
  TOLLGATE_RETURN_IF_ERROR(Populate(etcd->ClientEndpoints(), options.workloads));

  std::string scratch = "/tmp/tollgate_failover_XXXXXX";
  if (mkdtemp(scratch.data()) == nullptr) return absl::InternalError("mkdtemp failed");
  const std::vector<std::string> args = {
      "--store=etcd", absl::StrCat("--etcd-endpoints=", etcd->ClientEndpoints()),
      absl::StrCat("--lease-ttl=", absl::ToInt64Seconds(options.lease_ttl), "s"),
      "--shutdown-grace=1s",
      options.warm_followers ? "--warm-followers=true" : "--warm-followers=false"};
  std::vector<std::unique_ptr<e2e::TollgatedProcess>> replicas;
  for (int i = 0; i < 2; ++i) {
    TOLLGATE_ASSIGN_OR_RETURN(std::unique_ptr<e2e::TollgatedProcess> replica,
                              e2e::TollgatedProcess::Start("", scratch, args, absl::Minutes(5)));
    replicas.push_back(std::move(replica));
  }
  std::vector<Run> runs;
  for (int r = 0; r < options.runs; ++r) {
    TOLLGATE_ASSIGN_OR_RETURN(const int leader, AwaitLeader(replicas, absl::Minutes(5)));
    std::vector<std::string> others;
    for (int i = 0; i < static_cast<int>(replicas.size()); ++i) {
      if (i != leader) others.push_back(replicas[i]->address());
    }
    client::TollgateClient client(absl::StrJoin(others, ","), absl::Seconds(5));
    const std::string probe = absl::StrCat("probe-", r);
    const absl::Time killed = absl::Now();
    TOLLGATE_RETURN_IF_ERROR(replicas[leader]->Kill());
    Run run;
    while (true) {
      absl::StatusOr<v1::SubmitResponse> submitted = client.Submit(SubmitOf(probe, "probe"));
      if (submitted.ok()) break;
      if (absl::Now() - killed > absl::Minutes(5)) return submitted.status();
    }
    run.serving = absl::Now() - killed;
    while (true) {
      v1::GetWorkloadRequest get;
      get.mutable_workload()->set_namespace_(kNamespace);
      get.mutable_workload()->set_name(probe);
      absl::StatusOr<v1::Workload> got = client.GetWorkload(get);
      if (got.ok() && got->status().state() == v1::WORKLOAD_STATE_ADMITTED) break;
      if (absl::Now() - killed > absl::Minutes(5)) return absl::DeadlineExceededError("probe");
      absl::SleepFor(absl::Milliseconds(5));
    }
    run.admitted = absl::Now() - killed;
    runs.push_back(run);
    std::printf("[run %d] kill -9 -> new leader acknowledged a submit: %s, admitted it: %s\n",
                r + 1, absl::FormatDuration(run.serving).c_str(),
                absl::FormatDuration(run.admitted).c_str());
    for (int i = 0; i < static_cast<int>(replicas.size()); ++i) {
      if (i == leader) continue;
      const std::string line = LastLogLine(*replicas[i], "serving as leader");
      if (!line.empty()) std::printf("  new leader: %s\n", line.c_str());
    }
    std::fflush(stdout);
    v1::FinishRequest finish;
    finish.mutable_workload()->set_namespace_(kNamespace);
    finish.mutable_workload()->set_name(probe);
    TOLLGATE_RETURN_IF_ERROR(client.Finish(finish).status());
    TOLLGATE_ASSIGN_OR_RETURN(replicas[leader],
                              e2e::TollgatedProcess::Start("", scratch, args, absl::Minutes(5)));
  }
  std::vector<absl::Duration> admitted;
  for (const Run& run : runs) admitted.push_back(run.admitted);
  std::sort(admitted.begin(), admitted.end());
  std::printf(
      "failover with %lld stored workloads, lease TTL %s, %d runs: median kill -9 -> first "
      "admission by the new leader %s (min %s, max %s); target <= 2 x TTL = %s\n",
      static_cast<long long>(options.workloads), absl::FormatDuration(options.lease_ttl).c_str(),
      options.runs, absl::FormatDuration(admitted[admitted.size() / 2]).c_str(),
      absl::FormatDuration(admitted.front()).c_str(), absl::FormatDuration(admitted.back()).c_str(),
      absl::FormatDuration(2 * options.lease_ttl).c_str());
  replicas.clear();
  std::error_code ignored;
  std::filesystem::remove_all(scratch, ignored);
  return absl::OkStatus();
}

}  // namespace
}  // namespace tollgate::bench

int main(int argc, char** argv) {
  tollgate::bench::Options options;
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    bool ok = true;
    if (absl::ConsumePrefix(&arg, "--workloads=")) {
      ok = absl::SimpleAtoi(arg, &options.workloads) && options.workloads > 0;
    } else if (absl::ConsumePrefix(&arg, "--lease-ttl=")) {
      ok = absl::ParseDuration(arg, &options.lease_ttl) && options.lease_ttl >= absl::Seconds(1);
    } else if (absl::ConsumePrefix(&arg, "--warm-followers=")) {
      ok = arg == "true" || arg == "false";
      options.warm_followers = arg == "true";
    } else if (absl::ConsumePrefix(&arg, "--runs=")) {
      ok = absl::SimpleAtoi(arg, &options.runs) && options.runs > 0;
    } else {
      ok = false;
    }
    if (!ok) {
      std::fprintf(stderr,
                   "bad argument %s\nusage: tollgate-failover-bench [--workloads=N] "
                   "[--lease-ttl=2s] [--runs=5] [--warm-followers=false]\n",
                   argv[i]);
      return 2;
    }
  }
  absl::Status status = tollgate::bench::Main(options);
  if (!status.ok()) {
    std::fprintf(stderr, "failover bench: %s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}
