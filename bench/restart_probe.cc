#include "bench/restart_probe.h"

#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "bench/bench_setup.h"
#include "bench/bench_util.h"
#include "core/clock.h"
#include "core/cluster_state.h"
#include "core/real_clock.h"
#include "core/status_macros.h"
#include "services/engine/admission_executor.h"
#include "services/engine/tollgate_api.h"
#include "storage/rocksdb_store.h"

namespace tollgate::bench {
namespace {

constexpr char kNamespace[] = "restart";
constexpr char kQueue[] = "restart-lq";
constexpr char kHead[] = "r-head";

v1::SubmitRequest SubmitOf(const std::string& name, int32_t priority) {
  v1::SubmitRequest request;
  *request.mutable_workload() = OneCpuWorkload(kNamespace, name, kQueue, priority);
  return request;
}

absl::StatusOr<v1::WorkloadState> StateOf(engine::TollgateApi& api, const std::string& name) {
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
  // No cycles while filling: the stored workloads stay as submitted (pending, queued), which is
  // what a restart has to rebuild. The one admitted workload is settled explicitly.
  TOLLGATE_ASSIGN_OR_RETURN(std::unique_ptr<FillingService> filling, FillingService::Open(*store));
  engine::TollgateApi& api = filling->api();
  TOLLGATE_RETURN_IF_ERROR(
      api.Apply(CpuQueuesConfig(kNamespace, "restart-flavor", {{"restart-cq", kQueue, "1"}}))
          .status());
  TOLLGATE_RETURN_IF_ERROR(api.Submit(SubmitOf("r-0", 0)).status());
  TOLLGATE_RETURN_IF_ERROR(api.Settle());
  TOLLGATE_ASSIGN_OR_RETURN(v1::WorkloadState first, StateOf(api, "r-0"));
  if (first != v1::WORKLOAD_STATE_ADMITTED) {
    return absl::InternalError("the first workload was not admitted");
  }

  const double start = MonotonicSeconds();
  const int64_t last = workloads - 1;  // r-head is the last one
  TOLLGATE_RETURN_IF_ERROR(ForEachInParallel(
      1, last, 16,
      [&](int64_t i) { return api.Submit(SubmitOf(absl::StrCat("r-", i), 0)).status(); },
      [&](int64_t next) {
        std::printf("[populate] %lld of %lld submitted (%.0f/s)\n", static_cast<long long>(next),
                    static_cast<long long>(workloads),
                    static_cast<double>(next) / (MonotonicSeconds() - start));
        std::fflush(stdout);
      }));
  TOLLGATE_RETURN_IF_ERROR(api.Submit(SubmitOf(kHead, 10)).status());
  const double elapsed = MonotonicSeconds() - start;
  std::printf(
      "[populate] %lld workloads stored in %.1fs (%.0f submits/s through TollgateApi, "
      "16 threads)\n",
      static_cast<long long>(workloads), elapsed, static_cast<double>(workloads) / elapsed);
  filling.reset();
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
  core::RealClock clock;
  TOLLGATE_ASSIGN_OR_RETURN(std::unique_ptr<engine::AdmissionExecutor> executor,
                            engine::AdmissionExecutor::Open(*store, clock, core::SchedulerConfig{},
                                                            engine::AdmissionExecutor::Options()));
  const double t2 = MonotonicSeconds();
  const double cpu2 = ProcessCpuSeconds();
  const int64_t rss_after = ResidentBytes();
  engine::TollgateApi api(*executor);

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
  const engine::AdmissionExecutor::LoadStats load = executor->load_stats();
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
