// tollgate-follower-reads-bench: what a follower's read view (services/ha/follower_reads.h,
// docs/ha.md "Follower reads") costs. Starts a 1-member etcd on loopback, stores N workloads in
// it through Tollgate's own executor and API, then, in process, as tollgated's follower does:
// loads the warm copy (EtcdMirror), opens the read view over it, and measures
//   * open:    the first view (freeze the copy + load the state, the promotion's loader);
//   * freeze:  copying the copy's index (the values are shared);
//   * reload:  one more write, then a read that asks for its revision (tollgate-min-revision):
//              wait for the copy + freeze + load + swap; median of --reloads;
//   * reads:   ListWorkloads (limit 100) from --readers threads for --read-seconds without
//              writes and then with a writer submitting all along: reads per second, and how
//              many reloads the view made (at most one per max_view_age, 1 s, plus none per read).
//
// usage: tollgate-follower-reads-bench [--workloads=10000] [--reloads=5] [--readers=4]
//                                      [--read-seconds=3]
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/bench_setup.h"
#include "core/real_clock.h"
#include "core/status_macros.h"
#include "services/ha/follower_reads.h"
#include "storage/etcd_mirror.h"
#include "storage/etcd_store.h"
#include "test/support/etcd_cluster.h"

namespace tollgate::bench {
namespace {

constexpr char kNamespace[] = "reads";

struct Options {
  int64_t workloads = 10000;
  int reloads = 5;
  int readers = 4;
  absl::Duration read_time = absl::Seconds(3);
};

absl::StatusOr<std::unique_ptr<storage::EtcdStore>> OpenStore(const std::string& endpoints) {
  storage::EtcdStoreOptions options;
  TOLLGATE_ASSIGN_OR_RETURN(options.connection.endpoints, storage::ParseEtcdEndpoints(endpoints));
  options.key_prefix = "/bench/store/";
  return storage::EtcdStore::Open(options);
}

double Ms(absl::Duration d) { return absl::ToDoubleMilliseconds(d); }

absl::Status Main(const Options& options) {
  TOLLGATE_ASSIGN_OR_RETURN(std::unique_ptr<test_support::EtcdCluster> etcd,
                            test_support::EtcdCluster::Start(test_support::EtcdClusterOptions()));
  TOLLGATE_ASSIGN_OR_RETURN(std::unique_ptr<storage::EtcdStore> leader_store,
                            OpenStore(etcd->ClientEndpoints()));
  TOLLGATE_ASSIGN_OR_RETURN(std::unique_ptr<FillingService> filling,
                            FillingService::Open(*leader_store));
  engine::TollgateApi& leader = filling->api();
  TOLLGATE_RETURN_IF_ERROR(
      leader.Apply(CpuQueuesConfig(kNamespace, "flavor", {{"stored-cq", "stored", "1"}})).status());
  const absl::Time fill_start = absl::Now();
  TOLLGATE_RETURN_IF_ERROR(ForEachInParallel(0, options.workloads, 32, [&](int64_t i) {
    v1::SubmitRequest request;
    *request.mutable_workload() = OneCpuWorkload(kNamespace, absl::StrCat("s-", i), "stored");
    return leader.Submit(request).status();
  }));
  std::printf("[populate] %lld workloads stored in etcd in %s\n",
              static_cast<long long>(options.workloads),
              absl::FormatDuration(absl::Now() - fill_start).c_str());

  TOLLGATE_ASSIGN_OR_RETURN(std::unique_ptr<storage::EtcdStore> follower_store,
                            OpenStore(etcd->ClientEndpoints()));
  TOLLGATE_ASSIGN_OR_RETURN(std::unique_ptr<storage::EtcdMirror> started,
                            storage::EtcdMirror::Start(std::move(follower_store)));
  std::shared_ptr<storage::EtcdMirror> mirror = std::move(started);
  std::printf("[warm copy] %lld keys loaded in %.0f ms\n",
              static_cast<long long>(mirror->stats().keys), Ms(mirror->stats().last_load));

  core::RealClock clock;
  ha::FollowerReads::Options reads_options;
  const absl::Time open_start = absl::Now();
  TOLLGATE_ASSIGN_OR_RETURN(std::unique_ptr<ha::FollowerReads> reads,
                            ha::FollowerReads::Open(mirror, clock, reads_options));
  std::printf("[open] first view at revision %lld in %.0f ms\n",
              static_cast<long long>(reads->revision()), Ms(absl::Now() - open_start));

  std::vector<double> freezes;
  for (int i = 0; i < options.reloads; ++i) {
    const absl::Time start = absl::Now();
    const std::shared_ptr<const storage::EtcdMirror::Frozen> frozen = mirror->Freeze();
    freezes.push_back(Ms(absl::Now() - start));
  }
  std::sort(freezes.begin(), freezes.end());
  std::printf("[freeze] median %.1f ms\n", freezes[freezes.size() / 2]);

  std::vector<double> reloads;
  for (int i = 0; i < options.reloads; ++i) {
    v1::SubmitRequest request;
    *request.mutable_workload() = OneCpuWorkload(kNamespace, absl::StrCat("r-", i), "stored");
    TOLLGATE_ASSIGN_OR_RETURN(v1::SubmitResponse submitted, leader.Submit(request));
    const absl::Time start = absl::Now();
    TOLLGATE_RETURN_IF_ERROR(reads->Refresh(submitted.workload().metadata().resource_version(),
                                            absl::Now() + absl::Seconds(60)));
    reloads.push_back(Ms(absl::Now() - start));
    std::printf("[reload] %d: %.0f ms (the view's own load: %.0f ms)\n", i, reloads.back(),
                Ms(reads->stats().last_reload));
  }
  std::sort(reloads.begin(), reloads.end());
  std::printf("[reload] median %.0f ms over %d\n", reloads[reloads.size() / 2], options.reloads);

  std::atomic<int64_t> failures{0};
  int64_t before = reads->stats().reloads;
  // The gate's filter is what refreshes on a read; the bench calls it as a read would.
  auto read_through_filter = [&] { return reads->Refresh(0, absl::Now() + absl::Seconds(5)); };
  auto filtered_load = [&](absl::Duration time) {
    std::vector<std::thread> threads;
    const absl::Time end = absl::Now() + time;
    std::atomic<int64_t> count{0};
    for (int t = 0; t < options.readers; ++t) {
      threads.emplace_back([&] {
        v1::ListWorkloadsRequest request;
        request.set_namespace_(kNamespace);
        request.set_limit(100);
        while (absl::Now() < end) {
          if (!read_through_filter().ok() || !reads->api().ListWorkloads(request).ok()) {
            failures.fetch_add(1);
          }
          count.fetch_add(1);
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
    return static_cast<double>(count.load()) / absl::ToDoubleSeconds(time);
  };
  const double idle_rate = filtered_load(options.read_time);
  std::printf("[reads, no writes] %.0f reads/s from %d threads, %lld reloads\n", idle_rate,
              options.readers, static_cast<long long>(reads->stats().reloads - before));

  before = reads->stats().reloads;
  std::atomic<bool> writing{true};
  std::atomic<int64_t> written{0};
  std::thread writer([&] {
    for (int64_t i = 0; writing.load(); ++i) {
      v1::SubmitRequest request;
      *request.mutable_workload() = OneCpuWorkload(kNamespace, absl::StrCat("w-", i), "stored");
      if (leader.Submit(request).ok()) written.fetch_add(1);
    }
  });
  const double busy_rate = filtered_load(options.read_time);
  writing.store(false);
  writer.join();
  std::printf(
      "[reads, with writes] %.0f reads/s from %d threads while %lld writes landed, "
      "%lld reloads\n",
      busy_rate, options.readers, static_cast<long long>(written.load()),
      static_cast<long long>(reads->stats().reloads - before));
  if (failures.load() > 0) {
    return absl::InternalError(absl::StrCat(failures.load(), " reads failed"));
  }
  return absl::OkStatus();
}

bool ParseFlag(absl::string_view arg, absl::string_view name, absl::string_view& value) {
  return absl::ConsumePrefix(&arg, name) && absl::ConsumePrefix(&arg, "=") && (value = arg, true);
}

}  // namespace
}  // namespace tollgate::bench

int main(int argc, char** argv) {
  tollgate::bench::Options options;
  for (int i = 1; i < argc; ++i) {
    absl::string_view value;
    const absl::string_view arg = argv[i];
    bool ok = true;
    if (tollgate::bench::ParseFlag(arg, "--workloads", value)) {
      ok = absl::SimpleAtoi(value, &options.workloads) && options.workloads > 0;
    } else if (tollgate::bench::ParseFlag(arg, "--reloads", value)) {
      ok = absl::SimpleAtoi(value, &options.reloads) && options.reloads > 0;
    } else if (tollgate::bench::ParseFlag(arg, "--readers", value)) {
      ok = absl::SimpleAtoi(value, &options.readers) && options.readers > 0;
    } else if (tollgate::bench::ParseFlag(arg, "--read-seconds", value)) {
      int seconds = 0;
      ok = absl::SimpleAtoi(value, &seconds) && seconds > 0;
      options.read_time = absl::Seconds(seconds);
    } else {
      ok = false;
    }
    if (!ok) {
      std::fprintf(stderr, "tollgate-follower-reads-bench: bad argument %s\n", argv[i]);
      return 2;
    }
  }
  absl::Status status = tollgate::bench::Main(options);
  if (!status.ok()) {
    std::fprintf(stderr, "tollgate-follower-reads-bench: %s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}
