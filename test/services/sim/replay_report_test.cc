#include "services/sim/replay_report.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tollgate::sim {
namespace {

using ::testing::HasSubstr;

TraceJob Job(const std::string& name, int submit, int duration, int gpus) {
  TraceJob j;
  j.name = name;
  j.team = "t";
  j.submit = absl::Seconds(submit);
  j.duration = absl::Seconds(duration);
  j.per_pod = gpus;
  return j;
}

JobOutcome Outcome(std::optional<int> admitted, std::optional<int> finished, int preemptions = 0,
                   double lost = 0) {
  JobOutcome o;
  o.cluster_queue = "q";
  if (admitted) o.first_admitted = absl::Seconds(*admitted);
  if (finished) o.finished = absl::Seconds(*finished);
  o.preemptions = preemptions;
  o.lost_resource_seconds = lost;
  return o;
}

// Twenty jobs waiting 0..19 s and one never admitted: nearest-rank p50 is the 11th value (10 s),
// p95 the 20th (19 s), p99 the 21st, which never came.
TEST(ReplayReportTest, PercentilesUseNearestRankAndCountNeverAdmittedAsInfinite) {
  std::vector<TraceJob> jobs;
  ReplayResult result;
  result.queues["q"] = QueueInfo{16, 1, ""};
  for (int i = 0; i < 20; ++i) {
    jobs.push_back(Job("j" + std::to_string(i), 100, 50, 1));
    result.jobs.push_back(Outcome(100 + i, 150 + i));
  }
  jobs.push_back(Job("never", 100, 50, 1));
  result.jobs.push_back(Outcome(std::nullopt, std::nullopt));
  const ReplayReport report = Summarize(jobs, result, "nvidia.com/gpu");
  ASSERT_EQ(report.queues.size(), 1u);
  const QueueReport& q = report.queues[0];
  EXPECT_EQ(q.jobs, 21);
  EXPECT_EQ(q.never_admitted, 1);
  EXPECT_DOUBLE_EQ(q.wait_seconds.p50, 10);
  EXPECT_DOUBLE_EQ(q.wait_seconds.p95, 19);
  EXPECT_TRUE(std::isinf(q.wait_seconds.p99));
  EXPECT_DOUBLE_EQ(q.completion_seconds.p50, 60);
  EXPECT_DOUBLE_EQ(q.mean_wait_seconds, 9.5);
  EXPECT_DOUBLE_EQ(report.capacity, 16);
}

TEST(ReplayReportTest, UtilizationFairnessAndLostWork) {
  std::vector<TraceJob> jobs = {Job("a", 0, 10, 8), Job("b", 0, 10, 8)};
  ReplayResult result;
  result.queues["q"] = QueueInfo{8, 1, "pool"};
  result.queues["r"] = QueueInfo{8, 1, "pool"};
  result.jobs = {Outcome(0, 10, 1, 7200), Outcome(0, 10)};
  result.jobs[1].cluster_queue = "r";
  // Sample 1: q uses 8 of 8 and r 0 with work waiting in both: Jain over (1, 0) = 0.5.
  // Sample 2: both at quota: utilization 1, Jain 1.
  Sample s1{absl::ZeroDuration(), {{"q", {8, 0, 1, 1, 0}}, {"r", {0, 0, 1, 0, 0}}}};
  Sample s2{absl::Seconds(5), {{"q", {8, 0, 1, 1, 0}}, {"r", {8, 0, 1, 1, 0}}}};
  result.samples = {s1, s2};
  const ReplayReport report = Summarize(jobs, result, "nvidia.com/gpu");
  EXPECT_DOUBLE_EQ(report.mean_utilization, 0.75);
  EXPECT_DOUBLE_EQ(report.mean_fairness, 0.75);
  EXPECT_EQ(report.overall.preemptions, 1);
  EXPECT_DOUBLE_EQ(report.overall.lost_hours, 2);
  EXPECT_THAT(FormatSummary(report), HasSubstr("utilization 75.0 %"));
  EXPECT_THAT(FormatComparison({{"pooled", report}}), HasSubstr("pooled"));
}

TEST(ReplayReportTest, CheckWaitsAndIdleReservedHoursOnlyWithChecks) {
  std::vector<TraceJob> jobs = {Job("a", 0, 10, 8), Job("b", 0, 10, 8)};
  ReplayResult result;
  result.queues["q"] = QueueInfo{16, 1, ""};
  result.jobs = {Outcome(600, 610), Outcome(60, 70)};
  result.jobs[0].check_wait = absl::Seconds(600);
  result.jobs[0].reserved_idle_resource_seconds = 8 * 600;
  result.jobs[1].check_wait = absl::Seconds(60);
  result.jobs[1].reserved_idle_resource_seconds = 8 * 60;
  ReplayReport report = Summarize(jobs, result, "nvidia.com/gpu");
  EXPECT_FALSE(report.has_checks);
  EXPECT_THAT(FormatSummary(report), ::testing::Not(HasSubstr("CHECK-WAIT")));
  result.has_checks = true;
  report = Summarize(jobs, result, "nvidia.com/gpu");
  EXPECT_DOUBLE_EQ(report.overall.check_wait_seconds.p50, 60);
  EXPECT_DOUBLE_EQ(report.overall.check_wait_seconds.p95, 600);
  EXPECT_DOUBLE_EQ(report.overall.idle_reserved_hours, 8 * 660 / 3600.0);
  EXPECT_THAT(FormatSummary(report), HasSubstr("CHECK-WAIT-P95"));
  EXPECT_THAT(FormatSummary(report), HasSubstr("IDLE-RESERVED-H"));
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(ReplayReportTest, WritesTheSameFilesForTheSameReplay) {
  std::vector<TraceJob> jobs = {Job("a", 0, 10, 8)};
  ReplayResult result;
  result.queues["q"] = QueueInfo{8, 1, ""};
  result.jobs = {Outcome(3, 13)};
  result.samples = {Sample{absl::Hours(24), {{"q", {8, 2, 0, 1, 0}}}}};
  const ReplayReport report = Summarize(jobs, result, "nvidia.com/gpu");
  const std::string dir1 = ::testing::TempDir() + "/report1";
  const std::string dir2 = ::testing::TempDir() + "/report2";
  for (const std::string& d : {dir1, dir2}) {
    std::filesystem::create_directories(d);
    ASSERT_TRUE(WriteReplayFiles(d, jobs, result, report).ok());
  }
  for (const char* f : {"summary.txt", "jobs.csv", "queues.csv", "timeseries.csv", "usage.gp"}) {
    EXPECT_EQ(ReadAll(dir1 + "/" + f), ReadAll(dir2 + "/" + f)) << f;
  }
  EXPECT_EQ(ReadAll(dir1 + "/jobs.csv"),
            "name,team,cluster_queue,submit_s,duration_s,pods,per_pod,admitted_s,finished_s,"
            "wait_s,preemptions,lost_resource_s\n"
            "a,t,q,0,10,1,8,3,13,3,0,0.000\n");
  EXPECT_THAT(
      ReadAll(dir1 + "/timeseries.csv"),
      HasSubstr("t_days,utilization,used_q,borrowed_q,share_q\n1.000,1.000,8.000,2.000,1.000\n"));
}

}  // namespace
}  // namespace tollgate::sim
