#include "services/sim/estimate_accuracy.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/manifest/manifest_parser.h"
#include "services/sim/trace_replay.h"

namespace tollgate::sim {
namespace {

using ::testing::HasSubstr;

constexpr char kQueues[] = R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata:
  name: gpu
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: a
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: ["nvidia.com/gpu"]
    flavors:
    - name: gpu
      resources:
      - name: nvidia.com/gpu
        nominalQuota: 8
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata:
  namespace: a
  name: a
spec:
  clusterQueue: a
)";

// One 8-GPU queue, jobs that each take all of it, one after the other.
constexpr char kTrace[] =
    "job_id,submit_s,duration_s,gpus,team\n"
    "1,0,100,8,a\n"
    "2,100,100,8,a\n"
    "3,150,100,8,a\n"
    "4,160,10,8,a\n";

absl::StatusOr<ReplayResult> Replay(const std::vector<TraceJob>& jobs) {
  absl::StatusOr<std::vector<manifest::Manifest>> objects =
      manifest::ParseManifests(kQueues, "queues.yaml");
  if (!objects.ok()) return objects.status();
  ReplayOptions options;
  options.estimate_every = 1;
  return ReplayTrace(*objects, jobs, options);
}

// Worked by hand. Job 1 (t=0) and job 2 (t=100, as job 1 ends) start at once: both methods say
// 0. Job 3 (t=150): job 2 has run 50 s; the queue's history holds job 1's 100 s, so Tollgate
// expects job 2 to end at 200 (wait 50, right), Slurm at its 1 h limit, 3700 (wait 3550). Job 4
// (t=160): Tollgate runs job 3 from 200 for 100 s, so 300 (wait 140, right); Slurm 3700 + 1 h
// = 7300 (wait 7140). Actual waits: 0, 0, 50, 140.
TEST(EstimateAccuracyTest, LearnedRuntimesBeatTimeLimitsOnTheHandComputedTrace) {
  absl::StatusOr<std::vector<TraceJob>> jobs = ParseTrace(kTrace, TraceMapping{}, "trace.csv");
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  absl::StatusOr<ReplayResult> r = Replay(*jobs);
  ASSERT_TRUE(r.ok()) << r.status();
  const int64_t learned[] = {0, 0, 50, 140};
  const int64_t slurm[] = {0, 0, 3550, 7140};
  for (size_t i = 0; i < 4; ++i) {
    ASSERT_TRUE(r->jobs[i].learned_estimate.has_value()) << i;
    EXPECT_EQ(r->jobs[i].learned_estimate->kind, core::StartEstimate::Kind::kEstimated) << i;
    EXPECT_EQ(r->jobs[i].learned_estimate->wait, absl::Seconds(learned[i])) << i;
    ASSERT_TRUE(r->jobs[i].slurm_estimate.has_value()) << i;
    EXPECT_EQ(r->jobs[i].slurm_estimate->wait, absl::Seconds(slurm[i])) << i;
  }
  // Declaring the limits changed no decision.
  EXPECT_EQ(*r->jobs[3].first_admitted - (*jobs)[3].submit, absl::Seconds(140));

  const std::vector<EstimateAccuracy> rows = MeasureEstimateAccuracy(*jobs, *r);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].method, "learned");
  EXPECT_EQ(rows[0].scored, 4);
  EXPECT_DOUBLE_EQ(rows[0].median_abs_error_seconds, 0);
  EXPECT_DOUBLE_EQ(rows[0].within_2x, 1.0);
  EXPECT_EQ(rows[1].method, "slurm");
  // Errors 0, 0, 3500, 7000: nearest-rank median 0, p90 7000, two of four within 2x.
  EXPECT_DOUBLE_EQ(rows[1].median_abs_error_seconds, 0);
  EXPECT_DOUBLE_EQ(rows[1].p90_abs_error_seconds, 7000);
  EXPECT_DOUBLE_EQ(rows[1].within_2x, 0.5);
  // Only job 4 waited more than a minute (job 3 waited 50 s): Slurm's error on it is 7000 s.
  EXPECT_EQ(rows[2].method, "learned>1m");
  EXPECT_EQ(rows[2].scored, 1);
  EXPECT_DOUBLE_EQ(rows[2].within_2x, 1.0);
  EXPECT_EQ(rows[3].method, "slurm>1m");
  EXPECT_DOUBLE_EQ(rows[3].median_abs_error_seconds, 7000);
  EXPECT_DOUBLE_EQ(rows[3].within_2x, 0);
  EXPECT_THAT(FormatEstimateAccuracy(rows), HasSubstr("(4 jobs sampled)"));
}

TEST(EstimateAccuracyTest, WithoutAnyFinishedJobLearnedRuntimesAreUnknown) {
  // Job 2 arrives while job 1 runs and nothing has finished yet.
  absl::StatusOr<std::vector<TraceJob>> jobs = ParseTrace(
      "job_id,submit_s,duration_s,gpus,team\n1,0,100,8,a\n2,10,100,8,a\n", TraceMapping{}, "t");
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  absl::StatusOr<ReplayResult> r = Replay(*jobs);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->jobs[1].learned_estimate->kind, core::StartEstimate::Kind::kUnknown);
  EXPECT_EQ(r->jobs[1].slurm_estimate->kind, core::StartEstimate::Kind::kEstimated);
  EXPECT_EQ(r->jobs[1].slurm_estimate->wait, absl::Seconds(3590));
  const std::vector<EstimateAccuracy> rows = MeasureEstimateAccuracy(*jobs, *r);
  EXPECT_EQ(rows[0].unknown, 1);
  EXPECT_EQ(rows[0].scored, 1);
}

TEST(EstimateAccuracyTest, SlurmLimitsAreTheNextOfOneFourTwentyFourHoursAndAWeek) {
  EXPECT_EQ(SlurmTimeLimit(absl::Seconds(1)), absl::Hours(1));
  EXPECT_EQ(SlurmTimeLimit(absl::Hours(1)), absl::Hours(1));
  EXPECT_EQ(SlurmTimeLimit(absl::Hours(1) + absl::Seconds(1)), absl::Hours(4));
  EXPECT_EQ(SlurmTimeLimit(absl::Hours(5)), absl::Hours(24));
  EXPECT_EQ(SlurmTimeLimit(absl::Hours(30)), absl::Hours(24 * 7));
  EXPECT_EQ(SlurmTimeLimit(absl::Hours(24 * 8)), absl::Hours(24 * 14));
}

TEST(EstimateAccuracyTest, WithinTwoTimesAllowsAMinuteForShortWaits) {
  EXPECT_TRUE(WithinFactorTwo(absl::ZeroDuration(), absl::ZeroDuration()));
  EXPECT_TRUE(WithinFactorTwo(absl::ZeroDuration(), absl::Seconds(50)));
  EXPECT_FALSE(WithinFactorTwo(absl::ZeroDuration(), absl::Minutes(5)));
  EXPECT_TRUE(WithinFactorTwo(absl::Hours(2), absl::Hours(1)));
  EXPECT_FALSE(WithinFactorTwo(absl::Hours(2) + absl::Minutes(2), absl::Hours(1)));
}

}  // namespace
}  // namespace tollgate::sim
