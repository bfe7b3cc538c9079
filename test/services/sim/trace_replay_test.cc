#include "services/sim/trace_replay.h"

#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/engine/admission_executor.h"
#include "services/engine/tollgate_api.h"
#include "storage/rocksdb_store.h"

namespace tollgate::sim {
namespace {

// Two teams of 8 GPUs in one cohort; `reclaim` lets team b take back what a borrowed.
std::string Queues(bool reclaim) {
  std::string out = R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata:
  name: gpu
)";
  for (const char* team : {"a", "b"}) {
    absl::StrAppend(&out, "---\n", R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: )",
                    team, R"(
spec:
  namespaceSelector: {}
  cohort: pool
  resourceGroups:
  - coveredResources: ["nvidia.com/gpu"]
    flavors:
    - name: gpu
      resources:
      - name: nvidia.com/gpu
        nominalQuota: 8
)",
                    reclaim ? "  preemption:\n    reclaimWithinCohort: Any\n" : "", "---\n",
                    R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata:
  namespace: )",
                    team, "\n  name: ", team, "\nspec:\n  clusterQueue: ", team, "\n");
  }
  return out;
}

// job, submit, duration, gpus, team
constexpr char kTrace[] =
    "job_id,submit_s,duration_s,gpus,team\n"
    "1,0,100,8,a\n"
    "2,1,50,8,a\n"
    "3,10,30,8,b\n"
    "4,20,10,4,a\n";

struct Loaded {
  std::vector<manifest::Manifest> objects;
  std::vector<TraceJob> jobs;
};

Loaded Load(bool reclaim, const std::string& trace = kTrace) {
  Loaded l;
  absl::StatusOr<std::vector<manifest::Manifest>> objects =
      manifest::ParseManifests(Queues(reclaim), "queues.yaml");
  EXPECT_TRUE(objects.ok()) << objects.status();
  l.objects = *objects;
  absl::StatusOr<std::vector<TraceJob>> jobs = ParseTrace(trace, TraceMapping{}, "trace.csv");
  EXPECT_TRUE(jobs.ok()) << jobs.status();
  l.jobs = *jobs;
  return l;
}

std::map<std::string, int64_t> WaitSeconds(const Loaded& l, const ReplayResult& r) {
  std::map<std::string, int64_t> out;
  for (size_t i = 0; i < l.jobs.size(); ++i) {
    out[l.jobs[i].name] = r.jobs[i].first_admitted.has_value()
                              ? absl::ToInt64Seconds(*r.jobs[i].first_admitted - l.jobs[i].submit)
                              : -1;
  }
  return out;
}

// Worked by hand: job 2 borrows b's idle quota at t=1; job 3 (b, within nominal) waits for it
// until t=51; job 4 (a, would borrow) goes after job 3, which orders first as it does not
// borrow, and starts when job 3 ends at t=81.
TEST(TraceReplayTest, BorrowingWithoutReclaimMatchesTheHandComputedSchedule) {
  const Loaded l = Load(/*reclaim=*/false);
  absl::StatusOr<ReplayResult> r = ReplayTrace(l.objects, l.jobs, ReplayOptions{});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(WaitSeconds(l, *r), (std::map<std::string, int64_t>{
                                    {"job-1", 0}, {"job-2", 0}, {"job-3", 41}, {"job-4", 61}}));
  EXPECT_EQ(r->jobs[0].finished, absl::Seconds(100));
  EXPECT_EQ(r->jobs[3].finished, absl::Seconds(91));
  for (const JobOutcome& j : r->jobs) EXPECT_EQ(j.preemptions, 0);
  EXPECT_EQ(r->end, absl::Seconds(100));
}

// With reclaim, job 3 preempts the borrower at t=10: of a's two jobs, the most recently
// admitted, job 2 (8 GPUs x 9 s lost). Job 2, older than job 4, runs again from t=40 to t=90,
// and job 4 follows it at t=90.
TEST(TraceReplayTest, ReclaimPreemptsTheBorrowerAndCountsTheLostWork) {
  const Loaded l = Load(/*reclaim=*/true);
  absl::StatusOr<ReplayResult> r = ReplayTrace(l.objects, l.jobs, ReplayOptions{});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(WaitSeconds(l, *r), (std::map<std::string, int64_t>{
                                    {"job-1", 0}, {"job-2", 0}, {"job-3", 0}, {"job-4", 70}}));
  EXPECT_EQ(r->jobs[1].preemptions, 1);
  EXPECT_DOUBLE_EQ(r->jobs[1].lost_resource_seconds, 72);
  EXPECT_EQ(r->jobs[1].finished, absl::Seconds(90));
  EXPECT_EQ(r->jobs[1].cluster_queue, "a");
  EXPECT_EQ(r->end, absl::Seconds(100));
}

// objectRetentionPolicies' afterFinished in a replay: finished workloads are deleted (at once,
// or 30 s later), and the report is the one without it: a deletion is not a new outcome (job
// 2's preemption stays counted) and does not move the end past the last job.
TEST(TraceReplayTest, DeletingFinishedWorkloadsLeavesTheReportAsItWas) {
  const Loaded l = Load(/*reclaim=*/true);
  for (const absl::Duration retention : {absl::ZeroDuration(), absl::Seconds(30)}) {
    ReplayOptions options;
    options.config.finished_workload_retention = retention;
    absl::StatusOr<ReplayResult> r = ReplayTrace(l.objects, l.jobs, options);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(WaitSeconds(l, *r), (std::map<std::string, int64_t>{
                                      {"job-1", 0}, {"job-2", 0}, {"job-3", 0}, {"job-4", 70}}));
    EXPECT_EQ(r->jobs[1].preemptions, 1) << retention;
    EXPECT_DOUBLE_EQ(r->jobs[1].lost_resource_seconds, 72);
    EXPECT_EQ(r->jobs[1].finished, absl::Seconds(90));
    EXPECT_EQ(r->jobs[1].cluster_queue, "a");
    EXPECT_EQ(r->end, absl::Seconds(100)) << retention;
  }
}

// The same schedule as without checks, every admission 5 s after its reservation: job 1 and
// job 2 are admitted at t=5 and t=6, job 3 is reserved when job 2 ends (t=56) and admitted at
// t=61, job 4 reserved when job 3 ends (t=91) and admitted at t=96. Each reservation held its
// GPUs 5 s without running.
TEST(TraceReplayTest, ACheckDelayShiftsEveryAdmissionAndHoldsTheQuotaMeanwhile) {
  const Loaded l = Load(/*reclaim=*/false);
  ReplayOptions options;
  options.check_delays["provisioning"] = absl::Seconds(5);
  absl::StatusOr<ReplayResult> r = ReplayTrace(l.objects, l.jobs, options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->has_checks);
  EXPECT_EQ(WaitSeconds(l, *r), (std::map<std::string, int64_t>{
                                    {"job-1", 5}, {"job-2", 5}, {"job-3", 51}, {"job-4", 76}}));
  for (const JobOutcome& j : r->jobs) EXPECT_EQ(j.check_wait, absl::Seconds(5));
  EXPECT_DOUBLE_EQ(r->jobs[0].reserved_idle_resource_seconds, 40);
  EXPECT_DOUBLE_EQ(r->jobs[3].reserved_idle_resource_seconds, 20);
  EXPECT_EQ(r->jobs[0].finished, absl::Seconds(105));
  EXPECT_EQ(r->end, absl::Seconds(106));

  // Without a delay, a check the queues define is Ready at once: the schedule is unchanged.
  ReplayOptions instant;
  instant.check_delays["provisioning"] = absl::ZeroDuration();
  r = ReplayTrace(l.objects, l.jobs, instant);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(WaitSeconds(l, *r), (std::map<std::string, int64_t>{
                                    {"job-1", 0}, {"job-2", 0}, {"job-3", 41}, {"job-4", 61}}));
}

TEST(TraceReplayTest, SamplesUsageAndBorrowing) {
  const Loaded l = Load(/*reclaim=*/false);
  ReplayOptions options;
  options.sample_every = absl::Seconds(5);
  absl::StatusOr<ReplayResult> r = ReplayTrace(l.objects, l.jobs, options);
  ASSERT_TRUE(r.ok()) << r.status();
  // The sample at t=5 sees jobs 1 and 2 running, a borrowing 8 of b's.
  ASSERT_GT(r->samples.size(), 1u);
  const Sample& s = r->samples[1];
  EXPECT_EQ(s.at, absl::Seconds(5));
  EXPECT_DOUBLE_EQ(s.queues.at("a").used, 16);
  EXPECT_DOUBLE_EQ(s.queues.at("a").borrowed, 8);
  EXPECT_DOUBLE_EQ(s.queues.at("b").used, 0);
  EXPECT_DOUBLE_EQ(r->queues.at("a").nominal, 8);
}

// As in Kueue, a workload for a LocalQueue that does not exist waits; the replay ends when
// nothing more can change and reports it as never admitted.
TEST(TraceReplayTest, AJobForAMissingQueueIsReportedNeverAdmitted) {
  Loaded l = Load(false, "job_id,submit_s,duration_s,gpus,team\n1,0,10,1,nosuchteam\n2,5,10,1,a\n");
  absl::StatusOr<ReplayResult> r = ReplayTrace(l.objects, l.jobs, ReplayOptions{});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->jobs[0].first_admitted.has_value());
  EXPECT_FALSE(r->jobs[0].finished.has_value());
  EXPECT_EQ(r->jobs[1].finished, absl::Seconds(15));
}

// The replay follows the change log to learn decisions. Cross-check it against a plain driver
// of the same service code on the persistent store tollgated uses: submit and finish at the
// same virtual instants, and read states back with ListWorkloads.
TEST(TraceReplayTest, DecisionsEqualThoseOfTheServiceOnItsPersistentStore) {
  std::string trace = "job_id,submit_s,duration_s,gpus,team\n";
  // A deterministic mix of sizes, teams and gaps that makes queues form and drain.
  for (int i = 1; i <= 60; ++i) {
    absl::StrAppend(&trace, i, ",", (i * 7) % 50 + i, ",", 20 + (i * 13) % 90, ",",
                    (i % 5 == 0) ? 8 : (i % 3) + 1, ",", (i % 2 == 0) ? "a" : "b", "\n");
  }
  const Loaded l = Load(/*reclaim=*/true, trace);
  absl::StatusOr<ReplayResult> replay = ReplayTrace(l.objects, l.jobs, ReplayOptions{});
  ASSERT_TRUE(replay.ok()) << replay.status();

  const std::string dir = ::testing::TempDir() + "/replay_oracle";
  std::filesystem::remove_all(dir);
  absl::StatusOr<std::unique_ptr<storage::RocksDbStore>> store = storage::RocksDbStore::Open(dir);
  ASSERT_TRUE(store.ok()) << store.status();
  const absl::Time start = absl::FromUnixSeconds(1767225600);
  core::SimulatedClock clock(start);
  engine::AdmissionExecutor::Options executor_options;
  executor_options.schedule_continuously = false;
  absl::StatusOr<std::unique_ptr<engine::AdmissionExecutor>> executor =
      engine::AdmissionExecutor::Open(**store, clock, core::SchedulerConfig{}, executor_options);
  ASSERT_TRUE(executor.ok()) << executor.status();
  engine::TollgateApi api(**executor);
  for (const manifest::Manifest& m : l.objects) {
    v1::ApplyRequest request;
    *request.add_objects() = std::get<v1::ConfigObject>(m.object);
    ASSERT_TRUE(api.Apply(request).ok());
  }
  // Admission time per job, as the service reports it; a job finishes `duration` after its
  // latest admission.
  std::map<std::string, absl::Time> admitted;
  std::map<std::string, absl::Time> first_admitted;
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < l.jobs.size(); ++i) index[l.jobs[i].name] = i;
  size_t next = 0;
  std::set<std::string> done;
  for (int64_t t = 0; done.size() < l.jobs.size() && t < 100000; ++t) {
    clock.Set(start + absl::Seconds(t));
    bool changed = false;
    for (const auto& [name, at] : admitted) {
      if (done.count(name) || at + l.jobs[index[name]].duration != clock.Now()) continue;
      v1::FinishRequest finish;
      finish.mutable_workload()->set_namespace_(l.jobs[index[name]].namespace_name);
      finish.mutable_workload()->set_name(name);
      ASSERT_TRUE(api.Finish(finish).ok());
      done.insert(name);
      changed = true;
    }
    while (next < l.jobs.size() && l.jobs[next].submit == absl::Seconds(t)) {
      const TraceJob& j = l.jobs[next++];
      v1::SubmitRequest submit;
      submit.mutable_workload()->mutable_metadata()->set_namespace_(j.namespace_name);
      submit.mutable_workload()->mutable_metadata()->set_name(j.name);
      submit.mutable_workload()->mutable_spec()->set_queue_name(j.local_queue);
      v1::PodSet& ps = *submit.mutable_workload()->mutable_spec()->add_pod_sets();
      ps.set_name("main");
      ps.set_count(j.pods);
      (*ps.mutable_requests())["nvidia.com/gpu"] = absl::StrCat(j.per_pod);
      ASSERT_TRUE(api.Submit(submit).ok());
      changed = true;
    }
    if (!changed) continue;
    ASSERT_TRUE(api.Settle().ok());
    absl::StatusOr<v1::ListWorkloadsResponse> list = api.ListWorkloads(v1::ListWorkloadsRequest{});
    ASSERT_TRUE(list.ok());
    for (const v1::Workload& wl : list->workloads()) {
      const std::string& name = wl.metadata().name();
      if (wl.status().state() == v1::WORKLOAD_STATE_ADMITTED) {
        const absl::Time at = absl::FromUnixSeconds(wl.status().admission_time().seconds());
        if (!admitted.count(name) || admitted[name] != at) admitted[name] = at;
        first_admitted.emplace(name, at);
      } else if (wl.status().state() == v1::WORKLOAD_STATE_PENDING) {
        admitted.erase(name);
      }
    }
  }
  ASSERT_EQ(done.size(), l.jobs.size());
  int preempted = 0;
  for (size_t i = 0; i < l.jobs.size(); ++i) {
    const std::string& name = l.jobs[i].name;
    ASSERT_TRUE(replay->jobs[i].first_admitted.has_value()) << name;
    EXPECT_EQ(start + *replay->jobs[i].first_admitted, first_admitted[name]) << name;
    preempted += replay->jobs[i].preemptions;
  }
  // The trace is built to make team b reclaim from a at least once.
  EXPECT_GT(preempted, 0);
}

}  // namespace
}  // namespace tollgate::sim
