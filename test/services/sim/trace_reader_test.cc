#include "services/sim/trace_reader.h"

#include <string>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tollgate::sim {
namespace {

using ::testing::HasSubstr;

TEST(TraceReaderTest, ReadsRowsOrderedBySubmitTimeWithGangsSplitIntoPods) {
  const std::string csv =
      "job_id,submit_s,duration_s,gpus,team\n"
      "1,20,600,16,cluster01\n"
      "2,10,700,1,cluster02\n"
      "3,10,800.0,4,cluster01\n";
  absl::StatusOr<std::vector<TraceJob>> jobs = ParseTrace(csv, TraceMapping{}, "t.csv");
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_EQ(jobs->size(), 3u);
  // Submit order, ties in row order.
  EXPECT_EQ((*jobs)[0].name, "job-2");
  EXPECT_EQ((*jobs)[1].name, "job-3");
  EXPECT_EQ((*jobs)[1].duration, absl::Seconds(800));
  EXPECT_EQ((*jobs)[1].pods, 1);
  EXPECT_EQ((*jobs)[1].per_pod, 4);
  const TraceJob& gang = (*jobs)[2];
  EXPECT_EQ(gang.name, "job-1");
  EXPECT_EQ(gang.submit, absl::Seconds(20));
  EXPECT_EQ(gang.pods, 2);
  EXPECT_EQ(gang.per_pod, 8);
  EXPECT_EQ(gang.total(), 16);
  EXPECT_EQ(gang.namespace_name, "cluster01");
  EXPECT_EQ(gang.local_queue, "cluster01");
}

TEST(TraceReaderTest, MapsQueuesAndOptionalColumns) {
  TraceMapping mapping;
  mapping.columns.queue = "vc";
  mapping.columns.priority = "prio";
  mapping.columns.name = "id";
  mapping.queues = {{"a", "team-a/main"}};
  mapping.default_queue = "shared/rest";
  const std::string csv =
      "id,submit_s,duration_s,gpus,vc,prio\n"
      "train-1,0,60,2,a,100\n"
      "train-2,0,60,2,b,-5\n";
  absl::StatusOr<std::vector<TraceJob>> jobs = ParseTrace(csv, mapping, "t.csv");
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  EXPECT_EQ((*jobs)[0].name, "train-1");
  EXPECT_EQ((*jobs)[0].namespace_name, "team-a");
  EXPECT_EQ((*jobs)[0].local_queue, "main");
  EXPECT_EQ((*jobs)[0].priority, 100);
  EXPECT_EQ((*jobs)[1].namespace_name, "shared");
  EXPECT_EQ((*jobs)[1].local_queue, "rest");
  EXPECT_EQ((*jobs)[1].priority, -5);
}

TEST(TraceReaderTest, ErrorsNameRowColumnAndValue) {
  struct Case {
    std::string name;
    std::string csv;
    std::string message;
  };
  const std::string header = "job_id,submit_s,duration_s,gpus,team\n";
  const Case cases[] = {
      {"not a number", header + "1,0,600,x,a\n",
       "t.csv: row 1: column \"gpus\": expected an integer, got \"x\""},
      {"zero gpus", header + "1,0,600,0,a\n", "column \"gpus\": expected an integer from 1"},
      {"negative submit", header + "1,-1,600,1,a\n", "column \"submit_s\""},
      {"gang not divisible", header + "1,0,600,12,a\n", "12 is not a multiple of --gpus-per-pod=8"},
      {"short row", header + "1,0,600\n", "row 1: 3 cells, the header has 5"},
      {"empty team", header + "1,0,600,1,\n", "column \"team\": must not be empty"},
      {"empty file", "", "empty trace"},
      {"missing column", "job_id,submit_s,duration_s,team\n", "--gpus-column: no column \"gpus\""},
  };
  for (const Case& c : cases) {
    absl::StatusOr<std::vector<TraceJob>> jobs = ParseTrace(c.csv, TraceMapping{}, "t.csv");
    ASSERT_FALSE(jobs.ok()) << c.name;
    EXPECT_EQ(jobs.status().code(), absl::StatusCode::kInvalidArgument) << c.name;
    EXPECT_THAT(std::string(jobs.status().message()), HasSubstr(c.message)) << c.name;
  }
}

TEST(TraceReaderTest, QueueMapRejectsMalformedPairs) {
  absl::StatusOr<std::map<std::string, std::string>> ok = ParseQueueMap("a=ns/lq, b=ns2/lq2");
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->at("b"), "ns2/lq2");
  EXPECT_THAT(std::string(ParseQueueMap("a=nslq").status().message()),
              HasSubstr("expected namespace/localQueue, got \"nslq\""));
  EXPECT_THAT(std::string(ParseQueueMap("a").status().message()),
              HasSubstr("expected value=namespace/localQueue"));
  EXPECT_THAT(std::string(ParseQueueMap("a=x/y,a=z/w").status().message()),
              HasSubstr("mapped twice"));
}

}  // namespace
}  // namespace tollgate::sim
