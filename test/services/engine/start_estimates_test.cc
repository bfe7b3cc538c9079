// Start-time estimates through the API: the visibility API, Admit's and Submit's dry runs, the
// per-revision cache, and the runtime history surviving a restart.
#include "services/engine/start_estimates.h"

#include <memory>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "core/clock.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/time_util.h"
#include "gtest/gtest.h"
#include "services/engine/admission_executor.h"
#include "services/engine/tollgate_api.h"
#include "storage/memory_store.h"

namespace tollgate::engine {
namespace {

using ::google::protobuf::util::TimeUtil;
using ::testing::HasSubstr;

const absl::Time kStart = absl::FromUnixSeconds(1767225600);

// One ClusterQueue of 8 GPUs and its LocalQueue team/q.
constexpr char kQueues[] = R"pb(
  objects { resource_flavor { metadata { name: "gpu" } } }
  objects {
    cluster_queue {
      metadata { name: "cq" }
      spec {
        namespace_selector {}
        resource_groups {
          covered_resources: "nvidia.com/gpu"
          flavors {
            name: "gpu"
            resources { name: "nvidia.com/gpu" nominal_quota: "8" }
          }
        }
      }
    }
  }
  objects {
    local_queue {
      metadata { namespace: "team" name: "q" }
      spec { cluster_queue: "cq" }
    }
  }
)pb";

class StartEstimatesApiTest : public testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(Open());
    v1::ApplyRequest request;
    ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(kQueues, &request));
    absl::StatusOr<v1::ApplyResponse> applied = api_->Apply(request);
    ASSERT_TRUE(applied.ok()) << applied.status();
  }

  void Open() {
    executor_.reset();
    api_.reset();
    AdmissionExecutor::Options options;
    options.schedule_continuously = false;
    absl::StatusOr<std::unique_ptr<AdmissionExecutor>> executor =
        AdmissionExecutor::Open(store_, clock_, core::SchedulerConfig{}, options);
    ASSERT_TRUE(executor.ok()) << executor.status();
    executor_ = *std::move(executor);
    api_ = std::make_unique<TollgateApi>(*executor_);
  }

  static v1::SubmitRequest Job(const std::string& name, int32_t max_seconds = 0) {
    v1::SubmitRequest request;
    v1::Workload* wl = request.mutable_workload();
    wl->mutable_metadata()->set_namespace_("team");
    wl->mutable_metadata()->set_name(name);
    wl->mutable_spec()->set_queue_name("q");
    if (max_seconds != 0) wl->mutable_spec()->set_maximum_execution_time_seconds(max_seconds);
    v1::PodSet* ps = wl->mutable_spec()->add_pod_sets();
    ps->set_name("main");
    ps->set_count(1);
    (*ps->mutable_requests())["nvidia.com/gpu"] = "8";
    return request;
  }

  void SubmitAndSettle(const v1::SubmitRequest& request) {
    absl::StatusOr<v1::SubmitResponse> r = api_->Submit(request);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_TRUE(api_->Settle().ok());
  }

  void Finish(const std::string& name) {
    v1::FinishRequest request;
    request.mutable_workload()->set_namespace_("team");
    request.mutable_workload()->set_name(name);
    ASSERT_TRUE(api_->Finish(request).ok());
    ASSERT_TRUE(api_->Settle().ok());
  }

  v1::StartEstimate PendingEstimate(const std::string& name) {
    v1::ListPendingWorkloadsRequest request;
    request.set_namespace_("team");
    request.set_local_queue("q");
    request.set_workload_name(name);
    request.set_include_start_estimates(true);
    absl::StatusOr<v1::ListPendingWorkloadsResponse> r = api_->ListPendingWorkloads(request);
    EXPECT_TRUE(r.ok()) << r.status();
    if (!r.ok() || r->items_size() != 1) {
      ADD_FAILURE() << name << " is not pending";
      return {};
    }
    return r->items(0).start_estimate();
  }

  static absl::Time At(const google::protobuf::Timestamp& ts) {
    return absl::FromUnixSeconds(ts.seconds());
  }

  core::SimulatedClock clock_{kStart};
  storage::MemoryStore store_;
  std::unique_ptr<AdmissionExecutor> executor_;
  std::unique_ptr<TollgateApi> api_;
};

TEST_F(StartEstimatesApiTest, VisibilityListsEstimatesOnlyWhenAsked) {
  SubmitAndSettle(Job("running", 3600));
  SubmitAndSettle(Job("waiting", 3600));
  const v1::StartEstimate e = PendingEstimate("waiting");
  EXPECT_EQ(e.kind(), v1::StartEstimate::ESTIMATED);
  EXPECT_EQ(At(e.likely()), kStart + absl::Hours(1));
  EXPECT_FALSE(e.has_late());
  EXPECT_EQ(e.basis(), "runtimes: 1 declared, 0 from LocalQueue history, 0 unknown");
  EXPECT_GT(e.revision(), 0);

  v1::ListPendingWorkloadsRequest plain;
  plain.set_cluster_queue("cq");
  absl::StatusOr<v1::ListPendingWorkloadsResponse> r = api_->ListPendingWorkloads(plain);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->items_size(), 1);
  EXPECT_FALSE(r->items(0).has_start_estimate());

  v1::ListWorkloadsRequest list;
  list.set_include_start_estimates(true);
  absl::StatusOr<v1::ListWorkloadsResponse> listed = api_->ListWorkloads(list);
  ASSERT_TRUE(listed.ok()) << listed.status();
  EXPECT_EQ(listed->start_estimates().size(), 1u);
  EXPECT_EQ(listed->start_estimates().at("team/waiting").kind(), v1::StartEstimate::ESTIMATED);
}

TEST_F(StartEstimatesApiTest, SubmitDryRunEstimatesAndStoresNothing) {
  SubmitAndSettle(Job("running", 3600));
  v1::SubmitRequest request = Job("next", 600);
  request.set_dry_run(true);
  const int64_t revision = executor_->revision();
  absl::StatusOr<v1::SubmitResponse> r = api_->Submit(request);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->start_estimate().kind(), v1::StartEstimate::ESTIMATED);
  EXPECT_EQ(At(r->start_estimate().likely()), kStart + absl::Hours(1));
  EXPECT_TRUE(r->created());  // it would be new; nothing is stored
  EXPECT_EQ(executor_->revision(), revision);
  v1::GetWorkloadRequest get;
  get.mutable_workload()->set_namespace_("team");
  get.mutable_workload()->set_name("next");
  EXPECT_EQ(api_->GetWorkload(get).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(StartEstimatesApiTest, BadInputIsRefusedNamingTheField) {
  v1::SubmitRequest request = Job("bad", -5);
  request.set_dry_run(true);
  absl::StatusOr<v1::SubmitResponse> r = api_->Submit(request);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("spec.maximumExecutionTimeSeconds"));
  EXPECT_THAT(r.status().message(), HasSubstr("-5"));
  request = Job("nowhere");
  request.mutable_workload()->mutable_spec()->set_queue_name("missing");
  request.set_dry_run(true);
  // As in Kueue, a workload may be submitted before its LocalQueue exists: it waits.
  r = api_->Submit(request);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->start_estimate().kind(), v1::StartEstimate::UNKNOWN);
  EXPECT_EQ(r->start_estimate().reason(), "LocalQueue team/missing does not exist");
}

TEST_F(StartEstimatesApiTest, AdmitDryRunOfAPendingWorkloadCarriesItsEstimate) {
  SubmitAndSettle(Job("running", 1800));
  SubmitAndSettle(Job("waiting"));
  v1::AdmitRequest request;
  request.mutable_workload()->set_namespace_("team");
  request.mutable_workload()->set_name("waiting");
  request.set_dry_run(true);
  absl::StatusOr<v1::AdmitResponse> r = api_->Admit(request);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->outcome(), v1::AdmitResponse::PENDING);
  EXPECT_EQ(At(r->start_estimate().likely()), kStart + absl::Minutes(30));
}

// The history is rebuilt from the stored finished workloads, so estimates survive a restart.
TEST_F(StartEstimatesApiTest, LearnedRuntimesSurviveARestart) {
  for (int i = 0; i < 3; ++i) {
    const std::string name = absl::StrCat("old-", i);
    SubmitAndSettle(Job(name));
    clock_.Advance(absl::Minutes(20));
    ASSERT_NO_FATAL_FAILURE(Finish(name));
  }
  const absl::Time started = clock_.Now();
  SubmitAndSettle(Job("running"));
  SubmitAndSettle(Job("waiting"));
  EXPECT_EQ(At(PendingEstimate("waiting").likely()), started + absl::Minutes(20));
  ASSERT_NO_FATAL_FAILURE(Open());
  const v1::StartEstimate e = PendingEstimate("waiting");
  EXPECT_EQ(At(e.likely()), started + absl::Minutes(20));
  EXPECT_EQ(e.basis(), "runtimes: 0 declared, 1 from LocalQueue history, 0 unknown");
}

// Prepare on the executor's side, Resolve on the reader's, as TollgateApi does.
absl::StatusOr<std::shared_ptr<const core::StartEstimates>> Get(StartEstimateCache& cache,
                                                                const core::ClusterState& state,
                                                                int64_t revision, bool settled,
                                                                absl::Time now) {
  return cache.Resolve(cache.Prepare(state, revision, settled, now));
}

TEST(StartEstimateCacheTest, ComputesOncePerRevisionAndRecomputesWhenStale) {
  core::ClusterState state{core::SchedulerConfig{}};
  StartEstimateCache cache;
  ASSERT_TRUE(Get(cache, state, 5, true, kStart).ok());
  ASSERT_TRUE(Get(cache, state, 5, true, kStart + absl::Seconds(30)).ok());
  EXPECT_EQ(cache.computations(), 1);
  ASSERT_TRUE(Get(cache, state, 6, true, kStart + absl::Seconds(30)).ok());
  EXPECT_EQ(cache.computations(), 2);
  // Uncommitted changes at the same revision are never cached.
  ASSERT_TRUE(Get(cache, state, 6, false, kStart + absl::Seconds(30)).ok());
  ASSERT_TRUE(Get(cache, state, 6, false, kStart + absl::Seconds(30)).ok());
  EXPECT_EQ(cache.computations(), 4);
  ASSERT_TRUE(Get(cache, state, 6, true, kStart + absl::Minutes(5)).ok());
  EXPECT_EQ(cache.computations(), 5);
}

TEST(StartEstimateCacheTest, ReadersOfOneRevisionOnOtherThreadsShareOneComputation) {
  core::ClusterState state{core::SchedulerConfig{}};
  StartEstimateCache cache;
  // Both tickets are taken before either is resolved, as two reads in one executor batch.
  const StartEstimateCache::Ticket a = cache.Prepare(state, 7, true, kStart);
  const StartEstimateCache::Ticket b = cache.Prepare(state, 7, true, kStart);
  ASSERT_NE(a.snapshot, nullptr);
  EXPECT_EQ(a.snapshot, b.snapshot) << "one snapshot per settled revision";
  absl::StatusOr<std::shared_ptr<const core::StartEstimates>> from_b;
  std::thread reader([&] { from_b = cache.Resolve(b); });
  absl::StatusOr<std::shared_ptr<const core::StartEstimates>> from_a = cache.Resolve(a);
  reader.join();
  ASSERT_TRUE(from_a.ok() && from_b.ok());
  EXPECT_EQ(*from_a, *from_b);
  EXPECT_EQ(cache.computations(), 1);
}

// Two ClusterQueues without a cohort, each full with one workload waiting: two independent trees.
TEST(StartEstimateCacheTest, ANewRevisionSimulatesOnlyTheTreesItChanged) {
  core::ClusterState state{core::SchedulerConfig{}};
  ASSERT_TRUE(state.ApplyResourceFlavor({"a100", {}, {}, {}}, kStart).ok());
  for (const std::string name : {"a", "b"}) {
    core::ClusterQueueSpec cq;
    cq.name = name;
    cq.resource_groups = {{{"gpu"}, {{"a100", {{"gpu", 4, std::nullopt, std::nullopt}}}}}};
    ASSERT_TRUE(state.ApplyClusterQueue(cq, kStart).ok());
    ASSERT_TRUE(
        state.ApplyLocalQueue({name, "q", name, core::StopPolicy::kNone, 1.0}, kStart).ok());
  }
  int64_t revision = 0;
  auto submit_and_commit = [&](const std::string& ns, const std::string& name) {
    core::WorkloadSpec spec;
    spec.namespace_name = ns;
    spec.name = name;
    spec.queue_name = std::string(1, 'q');
    spec.maximum_execution_time_seconds = 600;
    spec.pod_sets = {core::PodSetSpec{"main", 4, std::nullopt, {{"gpu", 1}}, {}, {}}};
    ASSERT_TRUE(state.Submit(std::move(spec), "", kStart).ok());
    while (true) {
      core::CyclePlan plan = state.PlanCycle(kStart);
      state.ApplyCycle(plan, kStart);
      if (!plan.MadeProgress()) break;
    }
    ++revision;  // what the executor does when it commits
    for (core::WorkloadId id : state.TakeDirtyWorkloads()) {
      state.mutable_workload(id)->resource_version = revision;
    }
  };
  for (const std::string ns : {"a", "b"}) {
    submit_and_commit(ns, "running");
    submit_and_commit(ns, "waiting");
  }
  StartEstimateCache cache;
  ASSERT_TRUE(Get(cache, state, revision, true, kStart).ok());
  EXPECT_EQ(cache.trees_simulated(), 2);
  submit_and_commit("b", "later");
  absl::StatusOr<std::shared_ptr<const core::StartEstimates>> estimates =
      Get(cache, state, revision, true, kStart);
  ASSERT_TRUE(estimates.ok());
  EXPECT_EQ(cache.computations(), 2);
  EXPECT_EQ(cache.trees_simulated(), 3) << "only b's tree again";
  absl::StatusOr<core::StartEstimates> fresh = core::EstimatePendingStarts(state, kStart, {});
  ASSERT_TRUE(fresh.ok());
  EXPECT_EQ((*estimates)->by_id, fresh->by_id);
  EXPECT_EQ((*estimates)->by_id.size(), 3u);
}

}  // namespace
}  // namespace tollgate::engine
