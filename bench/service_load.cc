#include "bench/service_load.h"

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "bench/bench_setup.h"
#include "bench/bench_util.h"
#include "bench/tollgated_launcher.h"
#include "storage/rocksdb_store.h"
#include "tollgate/v1/service.grpc.pb.h"

namespace tollgate::bench {
namespace {

constexpr char kNamespace[] = "svc";
constexpr char kQueue[] = "svc-lq";

v1::Workload SubmitWorkload(const std::string& name) {
  return OneCpuWorkload(kNamespace, name, kQueue);
}

// CPU spent per successful call during a phase, in microseconds: by the server (negative when
// it was not spawned here, so its pid is unknown) and by this driver.
struct PhaseCpu {
  double server_us = -1;
  double driver_us = 0;
};

// Runs a phase (RunPhase) and measures the CPU both processes spent on it.
std::pair<PhaseResult, PhaseCpu> RunMeasuredPhase(
    const TollgatedTarget& target, const std::string& name, int threads, absl::Duration duration,
    const std::function<std::string(int, int64_t)>& call) {
  const pid_t server = target.pid();
  const double server0 = server >= 0 ? CpuSecondsOf(server) : 0;
  const double driver0 = ProcessCpuSeconds();
  PhaseResult result = RunPhase(name, threads, duration, call);
  PhaseCpu cpu;
  const double calls = static_cast<double>(std::max<int64_t>(result.ok, 1));
  cpu.driver_us = (ProcessCpuSeconds() - driver0) * 1e6 / calls;
  if (server >= 0) cpu.server_us = (CpuSecondsOf(server) - server0) * 1e6 / calls;
  return {std::move(result), cpu};
}

void PrintPhase(const std::pair<PhaseResult, PhaseCpu>& phase, double floor_throughput) {
  const PhaseResult& r = phase.first;
  std::printf(
      "  %-22s %4d %10.0f %9.3f %9.3f %9.3f %8s %8s %8.0f %lld\n", r.name.c_str(), r.concurrency,
      r.throughput(), Percentile(r.latency_ms, 0.5), Percentile(r.latency_ms, 0.99),
      Percentile(r.latency_ms, 0.999),
      floor_throughput > 0
          ? absl::StrCat(static_cast<int>(100 * r.throughput() / floor_throughput), "%").c_str()
          : "-",
      phase.second.server_us >= 0 ? absl::StrFormat("%.0f", phase.second.server_us).c_str() : "-",
      phase.second.driver_us, static_cast<long long>(r.errors));
  if (r.errors > 0) std::printf("    first error: %s\n", r.first_error.c_str());
}

struct WatchResult {
  int watchers = 0;
  int64_t events = 0;
  double seconds = 0;
  std::vector<double> latency_ms;
  int64_t missing = 0;
};

// Opens `watchers` Watch streams after the latest revision, submits `count` workloads from 8
// threads, and measures for every watcher the delay from sending each Submit to receiving its
// ADDED event.
WatchResult RunWatchFanOut(const TollgatedTarget& target, int watchers, int count,
                           const std::string& prefix) {
  WatchResult result;
  result.watchers = watchers;
  std::unique_ptr<v1::AdmissionService::Stub> stub =
      v1::AdmissionService::NewStub(target.NewChannel());
  // The revision to watch from: a probe submit's resource version.
  int64_t since = 0;
  {
    grpc::ClientContext context;
    v1::SubmitRequest request;
    *request.mutable_workload() = SubmitWorkload(prefix + "-probe");
    v1::SubmitResponse response;
    if (stub->Submit(&context, request, &response).ok()) {
      since = response.workload().metadata().resource_version();
    }
  }
  std::vector<double> sent(count, 0);
  std::vector<std::atomic<bool>> sent_ready(count);
  absl::flat_hash_map<std::string, int> index;
  for (int i = 0; i < count; ++i) index[absl::StrCat(prefix, "-", i)] = i;

  struct Watcher {
    grpc::ClientContext context;
    std::unique_ptr<grpc::ClientReader<v1::WatchEvent>> reader;
    std::vector<double> received;
    int64_t events = 0;
    int64_t seen = 0;
  };
  std::vector<std::unique_ptr<Watcher>> ws;
  std::vector<std::unique_ptr<v1::AdmissionService::Stub>> stubs;
  for (int w = 0; w < watchers; ++w) {
    auto watcher = std::make_unique<Watcher>();
    watcher->received.assign(count, -1);
    stubs.push_back(v1::AdmissionService::NewStub(target.NewChannel()));
    v1::WatchRequest request;
    request.set_since_revision(since);
    request.set_namespace_(kNamespace);
    watcher->reader = stubs.back()->Watch(&watcher->context, request);
    ws.push_back(std::move(watcher));
  }
  std::vector<std::thread> readers;
  for (auto& w : ws) {
    readers.emplace_back([&, wp = w.get()] {
      v1::WatchEvent event;
      while (wp->seen < count && wp->reader->Read(&event)) {
        ++wp->events;
        if (event.type() != v1::WatchEvent::ADDED) continue;
        auto it = index.find(event.workload().metadata().name());
        if (it == index.end() || wp->received[it->second] >= 0) continue;
        wp->received[it->second] = MonotonicSeconds();
        ++wp->seen;
      }
      wp->context.TryCancel();
      (void)wp->reader->Finish();  // cancelled on purpose: the status says so
    });
  }
  const double start = MonotonicSeconds();
  std::atomic<int> next{0};
  std::vector<std::thread> submitters;
  for (int t = 0; t < 8; ++t) {
    submitters.emplace_back([&] {
      std::unique_ptr<v1::AdmissionService::Stub> s =
          v1::AdmissionService::NewStub(target.NewChannel());
      for (int i = next.fetch_add(1); i < count; i = next.fetch_add(1)) {
        grpc::ClientContext context;
        v1::SubmitRequest request;
        *request.mutable_workload() = SubmitWorkload(absl::StrCat(prefix, "-", i));
        v1::SubmitResponse response;
        sent[i] = MonotonicSeconds();
        (void)s->Submit(&context, request, &response);  // a lost one shows as missing
      }
    });
  }
  for (std::thread& t : submitters) t.join();
  // Give the watchers up to 30 s to catch up, then cut them off.
  const double give_up = MonotonicSeconds() + 30;
  while (MonotonicSeconds() < give_up) {
    bool all = true;
    for (auto& w : ws) all = all && w->seen >= count;
    if (all) break;
    absl::SleepFor(absl::Milliseconds(10));
  }
  for (auto& w : ws) w->context.TryCancel();
  for (std::thread& t : readers) t.join();
  double last = start;
  for (auto& w : ws) {
    result.events += w->events;
    for (int i = 0; i < count; ++i) {
      if (w->received[i] < 0) {
        ++result.missing;
        continue;
      }
      result.latency_ms.push_back((w->received[i] - sent[i]) * 1e3);
      last = std::max(last, w->received[i]);
    }
  }
  result.seconds = last - start;
  return result;
}

}  // namespace

absl::Status RunServiceLoad(const TollgatedTarget& target, const ServiceLoadOptions& options) {
  // Everything submitted is admitted: the benchmark pays for the admission writes too.
  if (absl::Status s = ApplyOverGrpc(
          target.NewChannel(),
          CpuQueuesConfig(kNamespace, "svc-flavor", {{"svc-cq", kQueue, "100000000"}}));
      !s.ok()) {
    return s;
  }
  // Size of one Submit's durable write, for the raw RocksDB floor.
  absl::StatusOr<size_t> record_bytes =
      SubmitRecordBytes(target.NewChannel(), SubmitWorkload("size-probe"));
  if (!record_bytes.ok()) return record_bytes.status();
  absl::StatusOr<std::string> rocks_dir = MakeTempDir(options.scratch_dir, "rocksdb-floor-");
  if (!rocks_dir.ok()) return rocks_dir.status();
  absl::StatusOr<std::unique_ptr<storage::RocksDbStore>> store =
      storage::RocksDbStore::Open(*rocks_dir);
  if (!store.ok()) return store.status();

  std::printf(
      "Submit (durable) vs floors; each phase %.1fs; write size %zu bytes (state + "
      "change log each)\n",
      absl::ToDoubleSeconds(options.phase), *record_bytes);
  std::printf("  %-22s %4s %10s %9s %9s %9s %8s %8s %8s %s\n", "phase", "N", "ops/s", "p50 ms",
              "p99 ms", "p99.9 ms", "of floor", "srv us", "drv us", "errors");
  std::atomic<int64_t> serial{0};
  const std::string value(*record_bytes, 'x');
  for (int n : options.concurrency) {
    const int channels = std::min(n, 8);
    std::vector<std::unique_ptr<grpc::GenericStub>> generic;
    std::vector<std::unique_ptr<v1::AdmissionService::Stub>> stubs;
    for (int c = 0; c < channels; ++c) {
      std::shared_ptr<grpc::Channel> channel = target.NewChannel();
      generic.push_back(std::make_unique<grpc::GenericStub>(channel));
      stubs.push_back(v1::AdmissionService::NewStub(channel));
    }
    const auto health = RunMeasuredPhase(
        target, "health Check (floor)", n, options.phase, [&](int t, int64_t) -> std::string {
          grpc::Status s = HealthCheck(*generic[t % channels], absl::Seconds(10));
          return s.ok() ? "" : s.error_message();
        });
    const auto submit =
        RunMeasuredPhase(target, "Submit", n, options.phase, [&](int t, int64_t) -> std::string {
          return SubmitOnce(*stubs[t % channels],
                            SubmitWorkload(absl::StrCat("s-", serial.fetch_add(1))));
        });
    const auto rocks = RunMeasuredPhase(target, "RocksDB synced commit", n, options.phase,
                                        [&](int t, int64_t seq) -> std::string {
                                          storage::WriteBatch batch;
                                          batch.Put(absl::StrCat("w/", t, "/", seq), value);
                                          batch.AppendChange(value);
                                          absl::StatusOr<int64_t> r = (*store)->Commit(batch);
                                          return r.ok() ? "" : std::string(r.status().message());
                                        });
    PrintPhase(health, 0);
    PrintPhase(submit, health.first.throughput());
    PrintPhase(rocks, 0);
    const PhaseResult& h = health.first;
    const PhaseResult& sub = submit.first;
    const PhaseResult& rdb = rocks.first;
    std::printf(
        "  N=%d: Submit/health throughput %.2f, Submit/RocksDB %.2f; p99 Submit %.3f ms "
        "vs health %.3f ms vs RocksDB %.3f ms\n",
        n, h.throughput() > 0 ? sub.throughput() / h.throughput() : 0,
        rdb.throughput() > 0 ? sub.throughput() / rdb.throughput() : 0,
        Percentile(sub.latency_ms, 0.99), Percentile(h.latency_ms, 0.99),
        Percentile(rdb.latency_ms, 0.99));
    if (n == 1 && h.throughput() > 0 && rdb.throughput() > 0) {
      // One caller waits for its answer, and the answer waits for the commit: a Submit costs at
      // least one round trip plus one synced commit, one after the other. That sum bounds what
      // Submit/RocksDB can reach at one stream on this machine, whatever the service does.
      const double floor_ms = Percentile(h.latency_ms, 0.5) + Percentile(rdb.latency_ms, 0.5);
      const double floor_rate = 1.0 / (1.0 / h.throughput() + 1.0 / rdb.throughput());
      std::printf(
          "  N=1: serial floor (round trip + synced commit) %.0f/s = %.2f of RocksDB, p50 %.3f ms; "
          "Submit reaches %.2f of it, %.3f ms above its p50\n",
          floor_rate, floor_rate / rdb.throughput(), floor_ms, sub.throughput() / floor_rate,
          Percentile(sub.latency_ms, 0.5) - floor_ms);
    }
    if (health.second.server_us >= 0) {
      // Driver and server share this machine's cores: where the CPU is what limits both phases,
      // Submit's rate relative to health's is at most the inverse ratio of their CPU per call.
      const double health_cpu = health.second.server_us + health.second.driver_us;
      const double submit_cpu = submit.second.server_us + submit.second.driver_us;
      std::printf(
          "  N=%d: CPU per call (server + driver): health %.0f + %.0f us, Submit %.0f + %.0f us; "
          "on CPU alone Submit could reach %.2f of health\n",
          n, health.second.server_us, health.second.driver_us, submit.second.server_us,
          submit.second.driver_us, submit_cpu > 0 ? health_cpu / submit_cpu : 0);
    }
    std::fflush(stdout);
  }
  store->reset();
  std::error_code ec;
  std::filesystem::remove_all(*rocks_dir, ec);

  if (options.watch_workloads <= 0) return absl::OkStatus();
  std::printf(
      "\nWatch fan-out: %d workloads submitted from 8 threads; delay from Submit sent "
      "to ADDED received, per watcher\n",
      options.watch_workloads);
  std::printf("  %-9s %12s %9s %9s %9s %14s %8s\n", "watchers", "events/s", "p50 ms", "p99 ms",
              "max ms", "events total", "missing");
  // Each row submits its own workloads (prefix "watch<N>"), so N=1 must not run twice.
  std::vector<int> watcher_counts = {1};
  if (options.watchers != 1) watcher_counts.push_back(options.watchers);
  for (int w : watcher_counts) {
    WatchResult r = RunWatchFanOut(target, w, options.watch_workloads, absl::StrCat("watch", w));
    std::printf("  %-9d %12.0f %9.2f %9.2f %9.2f %14lld %8lld\n", r.watchers,
                r.seconds > 0 ? static_cast<double>(r.events) / r.seconds : 0,
                Percentile(r.latency_ms, 0.5), Percentile(r.latency_ms, 0.99),
                Percentile(r.latency_ms, 1.0), static_cast<long long>(r.events),
                static_cast<long long>(r.missing));
    std::fflush(stdout);
  }
  return absl::OkStatus();
}

}  // namespace tollgate::bench
