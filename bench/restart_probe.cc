#include "bench/restart_probe.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "bench/bench_util.h"
#include "core/clock.h"
#include "core/cluster_state.h"
#include "core/status_macros.h"
#include "services/admission_executor.h"
#include "services/real_clock.h"
#include "services/tollgate_api.h"
#include "storage/rocksdb_store.h"

namespace tollgate::bench {
namespace {

constexpr char kNamespace[] = "restart";
constexpr char kQueue[] = "restart-lq";
constexpr char kHead[] = "r-head";

v1::SubmitRequest SubmitOf(const std::string& name, int32_t priority) {
  v1::SubmitRequest request;
  v1::Workload* wl = request.mutable_workload();
  wl->mutable_metadata()->set_name(name);
  wl->mutable_metadata()->set_namespace_(kNamespace);
  wl->mutable_spec()->set_queue_name(kQueue);
  wl->mutable_spec()->set_priority(priority);
  v1::PodSet* ps = wl->mutable_spec()->add_pod_sets();
  ps->set_name("main");
  ps->set_count(1);
  (*ps->mutable_requests())["cpu"] = "1";
  return request;
}

v1::ApplyRequest RestartConfig() {
  v1::ApplyRequest request;
  request.add_objects()->mutable_namespace_()->mutable_metadata()->set_name(kNamespace);
  request.add_objects()->mutable_resource_flavor()->mutable_metadata()->set_name("restart-flavor");
  v1::ClusterQueue* cq = request.add_objects()->mutable_cluster_queue();
  cq->mutable_metadata()->set_name("restart-cq");
  v1::ResourceGroup* group = cq->mutable_spec()->add_resource_groups();
  group->add_covered_resources("cpu");
  v1::FlavorQuotas* flavor = group->add_flavors();
  flavor->set_name("restart-flavor");
  v1::ResourceQuota* quota = flavor->add_resources();
  quota->set_name("cpu");
  quota->set_nominal_quota("1");
  v1::LocalQueue* lq = request.add_objects()->mutable_local_queue();
  lq->mutable_metadata()->set_name(kQueue);
  lq->mutable_metadata()->set_namespace_(kNamespace);
  lq->mutable_spec()->set_cluster_queue("restart-cq");
  return request;
}

absl::StatusOr<v1::WorkloadState> StateOf(services::TollgateApi& api, const std::string& name) {
  v1::GetWorkloadRequest get;
  get.mutable_workload()->set_namespace_(kNamespace);
  get.mutable_workload()->set_name(name);
  TOLLGATE_ASSIGN_OR_RETURN(v1::Workload wl, api.GetWorkload(get));
  return wl.status().state();
}

}  // namespace

absl::Status PopulateRestartStore(const std::string& data_dir, int64_t workloads, PopulateEnd end) {
  TOLLGATE_ASSIGN_OR_RETURN(std::unique_ptr<storage::RocksDbStore> store,
                            storage::RocksDbStore::Open(data_dir));
  services::RealClock clock;
  services::AdmissionExecutor::Options options;
  // No cycles while filling: the stored workloads stay as submitted (pending, queued), which is
  // what a restart has to rebuild. The one admitted workload is settled explicitly.
  options.schedule_continuously = false;
  TOLLGATE_ASSIGN_OR_RETURN(
      std::unique_ptr<services::AdmissionExecutor> executor,
      services::AdmissionExecutor::Open(*store, clock, core::SchedulerConfig{}, options));
  services::TollgateApi api(*executor);
  TOLLGATE_RETURN_IF_ERROR(api.Apply(RestartConfig()).status());
  TOLLGATE_RETURN_IF_ERROR(api.Submit(SubmitOf("r-0", 0)).status());
  TOLLGATE_RETURN_IF_ERROR(api.Settle());
  TOLLGATE_ASSIGN_OR_RETURN(v1::WorkloadState first, StateOf(api, "r-0"));
  if (first != v1::WORKLOAD_STATE_ADMITTED) {
    return absl::InternalError("the first workload was not admitted");
  }

  const double start = MonotonicSeconds();
  std::atomic<int64_t> next{1};
  std::atomic<int64_t> failures{0};
  std::atomic<bool> done{false};
  const int64_t last = workloads - 1;  // r-head is the last one
  std::vector<std::thread> threads;
  for (int t = 0; t < 16; ++t) {
    threads.emplace_back([&] {
      for (int64_t i = next.fetch_add(1); i < last; i = next.fetch_add(1)) {
        if (!api.Submit(SubmitOf(absl::StrCat("r-", i), 0)).ok()) failures.fetch_add(1);
      }
    });
  }
  std::thread progress([&] {
    while (!done.load()) {
      absl::SleepFor(absl::Seconds(5));
      if (done.load()) break;
      std::printf("[populate] %lld of %lld submitted (%.0f/s)\n",
                  static_cast<long long>(std::min(next.load(), last)),
                  static_cast<long long>(workloads),
                  static_cast<double>(next.load()) / (MonotonicSeconds() - start));
      std::fflush(stdout);
    }
  });
  for (std::thread& t : threads) t.join();
  done.store(true);
  progress.join();
  if (failures.load() > 0) {
    return absl::InternalError(absl::StrCat(failures.load(), " submits failed"));
  }
  TOLLGATE_RETURN_IF_ERROR(api.Submit(SubmitOf(kHead, 10)).status());
  const double elapsed = MonotonicSeconds() - start;
  std::printf(
      "[populate] %lld workloads stored in %.1fs (%.0f submits/s through TollgateApi, "
      "16 threads)\n",
      static_cast<long long>(workloads), elapsed, static_cast<double>(workloads) / elapsed);
  executor.reset();
  // The restart reads state, not the change log; drop the log so it does not dominate the disk.
  TOLLGATE_RETURN_IF_ERROR(store->CompactChanges(store->CurrentRevision()));
  if (end == PopulateEnd::kExitUnclean) {
    std::printf("[populate] store left in %s without closing it\n", data_dir.c_str());
    std::fflush(stdout);
    _exit(0);
  }
  return absl::OkStatus();
}

absl::Status ProbeRestart(const std::string& data_dir, int64_t workloads) {
  const int64_t rss_before = ResidentBytes();
  const double cpu0 = ProcessCpuSeconds();
  const double t0 = MonotonicSeconds();
  TOLLGATE_ASSIGN_OR_RETURN(std::unique_ptr<storage::RocksDbStore> store,
                            storage::RocksDbStore::Open(data_dir));
  const double t1 = MonotonicSeconds();
  services::RealClock clock;
  TOLLGATE_ASSIGN_OR_RETURN(
      std::unique_ptr<services::AdmissionExecutor> executor,
      services::AdmissionExecutor::Open(*store, clock, core::SchedulerConfig{},
                                        services::AdmissionExecutor::Options()));
  const double t2 = MonotonicSeconds();
  const double cpu2 = ProcessCpuSeconds();
  const int64_t rss_after = ResidentBytes();
  services::TollgateApi api(*executor);

  // First admission: free the quota and wait for the head of 1M pending to take it.
  v1::FinishRequest finish;
  finish.mutable_workload()->set_namespace_(kNamespace);
  finish.mutable_workload()->set_name("r-0");
  TOLLGATE_RETURN_IF_ERROR(api.Finish(finish).status());
  const double t3 = MonotonicSeconds();
  const absl::Time deadline = absl::Now() + absl::Seconds(120);
  while (true) {
    TOLLGATE_ASSIGN_OR_RETURN(v1::WorkloadState state, StateOf(api, kHead));
    if (state == v1::WORKLOAD_STATE_ADMITTED) break;
    if (absl::Now() > deadline) return absl::DeadlineExceededError("no admission within 120s");
    absl::SleepFor(absl::Microseconds(200));
  }
  const double t4 = MonotonicSeconds();
  std::printf("restart with %lld stored workloads (%lld pending):\n",
              static_cast<long long>(workloads), static_cast<long long>(workloads - 1));
  std::printf("  RocksDbStore::Open          %8.3f s\n", t1 - t0);
  const services::AdmissionExecutor::LoadStats load = executor->load_stats();
  std::printf("  AdmissionExecutor::Open     %8.3f s  (scan, parse, Restore)\n", t2 - t1);
  std::printf(
      "    config %.3f s, scan (parsing alongside) %.3f s, rest of parse %.3f s, sort %.3f s, "
      "RestoreAll %.3f s\n",
      absl::ToDoubleSeconds(load.config), absl::ToDoubleSeconds(load.scan),
      absl::ToDoubleSeconds(load.parse_tail), absl::ToDoubleSeconds(load.sort),
      absl::ToDoubleSeconds(load.restore));
  std::printf("  Finish -> first admission   %8.3f s  (Finish durable %.3f s, then cycle)\n",
              t4 - t2, t3 - t2);
  std::printf("  restart-to-first-admission  %8.3f s  (target <= 3 s at 1M)\n", t4 - t0);
  std::printf(
      "  CPU used by both opens      %8.3f s  (all threads; wall is this over the cores "
      "the machine left us)\n",
      cpu2 - cpu0);
  std::printf("  RSS before open %.1f MiB, after %.1f MiB: %.0f bytes per stored workload\n",
              static_cast<double>(rss_before) / (1 << 20),
              static_cast<double>(rss_after) / (1 << 20),
              static_cast<double>(rss_after - rss_before) / static_cast<double>(workloads));
  std::fflush(stdout);
  return absl::OkStatus();
}

absl::Status ProbeEngineMemory(int64_t workloads) {
  const absl::Time now = absl::FromUnixSeconds(1767225600);
  auto state = std::make_unique<core::ClusterState>(core::SchedulerConfig{});
  TOLLGATE_RETURN_IF_ERROR(state->ApplyNamespace({"bench", {}}, now));
  TOLLGATE_RETURN_IF_ERROR(state->ApplyResourceFlavor({"default", {}, {}, {}}, now));
  for (int i = 0; i < 1000; ++i) {
    core::ClusterQueueSpec cq;
    cq.name = absl::StrCat("cq-", i);
    cq.cohort = absl::StrCat("cohort-", i / 10);
    cq.resource_groups = {{{"cpu"}, {{"default", {{"cpu", 0, std::nullopt, std::nullopt}}}}}};
    TOLLGATE_RETURN_IF_ERROR(state->ApplyClusterQueue(std::move(cq), now));
    TOLLGATE_RETURN_IF_ERROR(state->ApplyLocalQueue(
        {"bench", absl::StrCat("lq-", i), absl::StrCat("cq-", i), core::StopPolicy::kNone, 1.0},
        now));
  }
  const int64_t before = ResidentBytes();
  const double t0 = MonotonicSeconds();
  for (int64_t i = 0; i < workloads; ++i) {
    core::WorkloadSpec spec;
    spec.namespace_name = "bench";
    spec.name = absl::StrCat("wl-", i);
    spec.queue_name = absl::StrCat("lq-", i % 1000);
    spec.priority = static_cast<int32_t>(i % 10);
    spec.pod_sets = {core::PodSetSpec{"main", 1, std::nullopt, {{"cpu", 1000}}, {}, {}}};
    TOLLGATE_RETURN_IF_ERROR(state->Submit(std::move(spec), "", now).status());
  }
  const double t1 = MonotonicSeconds();
  state->TakeDirtyWorkloads();
  const int64_t after = ResidentBytes();
  std::printf(
      "engine only: %lld pending workloads over 1,000 ClusterQueues: RSS +%.1f MiB = "
      "%.0f bytes per pending workload (target <= 1024); %.2f us per Submit\n",
      static_cast<long long>(workloads), static_cast<double>(after - before) / (1 << 20),
      static_cast<double>(after - before) / static_cast<double>(workloads),
      (t1 - t0) * 1e6 / static_cast<double>(workloads));
  std::printf("  sizeof(core::Workload) = %zu bytes (before its strings, vectors and indexes)\n",
              sizeof(core::Workload));
  std::fflush(stdout);
  return absl::OkStatus();
}

}  // namespace tollgate::bench
