#include "metrics/metric_registry.h"

#include <cmath>
#include <limits>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tollgate::metrics {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(EscapeTest, HelpEscapesBackslashAndNewlineOnly) {
  EXPECT_EQ(EscapeHelp("a\\b\nc\"d"), "a\\\\b\\nc\"d");
}

TEST(EscapeTest, LabelValueEscapesQuoteBackslashNewline) {
  EXPECT_EQ(EscapeLabelValue("say \"hi\"\\\n"), "say \\\"hi\\\"\\\\\\n");
  EXPECT_EQ(EscapeLabelValue("plain-value_1"), "plain-value_1");
}

TEST(FormatValueTest, SpecialAndRoundTripValues) {
  struct Case {
    double value;
    std::string text;
  };
  const Case cases[] = {
      {0, "0"},
      {42, "42"},
      {-3, "-3"},
      {2.5, "2.5"},
      {0.1, "0.1"},
      {1e21, "1e+21"},
      {std::numeric_limits<double>::infinity(), "+Inf"},
      {-std::numeric_limits<double>::infinity(), "-Inf"},
      {std::nan(""), "NaN"},
      {9007199254740993.0, "9007199254740992"},
  };
  for (const Case& c : cases) EXPECT_EQ(FormatValue(c.value), c.text) << c.text;
}

TEST(ValidateNameTest, MetricAndLabelNames) {
  EXPECT_TRUE(ValidateName("kueue_pending_workloads", false).ok());
  EXPECT_TRUE(ValidateName("job:rate5m", false).ok());
  EXPECT_FALSE(ValidateName("job:rate5m", true).ok());
  EXPECT_FALSE(ValidateName("1abc", false).ok());
  EXPECT_FALSE(ValidateName("", true).ok());
  EXPECT_FALSE(ValidateName("__reserved", true).ok());
  EXPECT_FALSE(ValidateName("with-dash", false).ok());
}

TEST(BucketsTest, KueueExponentialBucketsMatchKueue) {
  // Kueue: 1 followed by 2.5 * 2^i.
  EXPECT_THAT(KueueExponentialBuckets(5), ::testing::ElementsAre(1, 2.5, 5, 10, 20));
  const std::vector<double> sixteen = KueueExponentialBuckets(16);
  ASSERT_EQ(sixteen.size(), 16u);
  EXPECT_EQ(sixteen.back(), 2.5 * std::pow(2, 14));
}

TEST(TextWriterTest, CounterFamilyWithLabels) {
  TextWriter w;
  w.BeginFamily("kueue_admitted_workloads_total", "Admitted.\nSecond line", MetricType::kCounter,
                {"cluster_queue", "priority_class"});
  w.Sample({"cq-a", ""}, 3);
  w.Sample({"cq \"b\"", "high"}, 1);
  EXPECT_EQ(
      w.text(),
      "# HELP kueue_admitted_workloads_total Admitted.\\nSecond line\n"
      "# TYPE kueue_admitted_workloads_total counter\n"
      "kueue_admitted_workloads_total{cluster_queue=\"cq-a\",priority_class=\"\"} 3\n"
      "kueue_admitted_workloads_total{cluster_queue=\"cq \\\"b\\\"\",priority_class=\"high\"} "
      "1\n");
}

TEST(TextWriterTest, UnlabelledGauge) {
  TextWriter w;
  w.BeginFamily("tollgate_executor_queue_depth", "Depth.", MetricType::kGauge, {});
  w.Sample({}, 7);
  EXPECT_EQ(w.text(),
            "# HELP tollgate_executor_queue_depth Depth.\n"
            "# TYPE tollgate_executor_queue_depth gauge\n"
            "tollgate_executor_queue_depth 7\n");
}

TEST(TextWriterTest, HistogramIsCumulativeWithInfSumAndCount) {
  TextWriter w;
  w.BeginFamily("wait_seconds", "Wait.", MetricType::kHistogram, {"cq"});
  // 1 at <=1, 2 in (1,2.5], 0 in (2.5,5], 1 above 5.
  w.Histogram({"a"}, {1, 2.5, 5}, {1, 2, 0, 1}, 20.5);
  EXPECT_EQ(w.text(),
            "# HELP wait_seconds Wait.\n"
            "# TYPE wait_seconds histogram\n"
            "wait_seconds_bucket{cq=\"a\",le=\"1\"} 1\n"
            "wait_seconds_bucket{cq=\"a\",le=\"2.5\"} 3\n"
            "wait_seconds_bucket{cq=\"a\",le=\"5\"} 3\n"
            "wait_seconds_bucket{cq=\"a\",le=\"+Inf\"} 4\n"
            "wait_seconds_sum{cq=\"a\"} 20.5\n"
            "wait_seconds_count{cq=\"a\"} 4\n");
}

TEST(FamilyTest, ObserveFallsIntoFirstBoundAtOrAboveValue) {
  Registry registry;
  Family& h = registry.AddHistogram("h", "H.", {}, {1, 2});
  h.Observe({}, 1);    // le=1 (bounds are inclusive)
  h.Observe({}, 1.5);  // le=2
  h.Observe({}, 3);    // +Inf
  const std::string text = registry.Render();
  EXPECT_THAT(text, HasSubstr("h_bucket{le=\"1\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("h_bucket{le=\"2\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("h_bucket{le=\"+Inf\"} 3\n"));
  EXPECT_THAT(text, HasSubstr("h_sum 5.5\n"));
  EXPECT_THAT(text, HasSubstr("h_count 3\n"));
}

TEST(FamilyTest, DeleteMatchingRemovesEverySeriesWithThoseLabelValues) {
  Registry registry;
  Family& c = registry.AddCounter("lq_total", "C.", {"name", "namespace", "priority_class"});
  c.Add({"q", "a", "high"});
  c.Add({"q", "a", "low"});
  c.Add({"q", "b", "low"});
  c.Add({"r", "a", "low"});
  EXPECT_EQ(c.DeleteMatching({{"name", "q"}, {"namespace", "a"}}), 2);
  const std::string text = registry.Render();
  EXPECT_THAT(text, Not(HasSubstr("namespace=\"a\",priority_class=\"high\"")));
  EXPECT_THAT(text, HasSubstr("lq_total{name=\"q\",namespace=\"b\",priority_class=\"low\"} 1"));
  EXPECT_THAT(text, HasSubstr("lq_total{name=\"r\",namespace=\"a\",priority_class=\"low\"} 1"));
  // A label the family does not have matches nothing; recording again starts from zero.
  EXPECT_EQ(c.DeleteMatching({{"cohort", "q"}}), 0);
  c.Add({"q", "a", "low"});
  EXPECT_THAT(registry.Render(),
              HasSubstr("lq_total{name=\"q\",namespace=\"a\",priority_class=\"low\"} 1"));
}

TEST(RegistryTest, CountersGaugesAndCollectorsRenderInOrder) {
  Registry registry;
  Family& c = registry.AddCounter("c_total", "C.", {"result"});
  Family& g = registry.AddGauge("g", "G.", {});
  c.Add({"success"}, 2);
  c.Add({"inadmissible"});
  Family::Series& series = c.Labels({"success"});
  series.Add(3);
  g.Set({}, -1.5);
  registry.AddCollector([](TextWriter& w) {
    w.BeginFamily("collected", "From a collector.", MetricType::kGauge, {});
    w.Sample({}, 9);
  });
  const std::string text = registry.Render();
  // Series sorted by label values, so scrapes are stable.
  EXPECT_THAT(text,
              HasSubstr("c_total{result=\"inadmissible\"} 1\nc_total{result=\"success\"} 5\n"));
  EXPECT_THAT(text, HasSubstr("g -1.5\n"));
  EXPECT_LT(text.find("# TYPE g gauge"), text.find("# TYPE collected gauge"));
  EXPECT_THAT(text, HasSubstr("collected 9\n"));
}

}  // namespace
}  // namespace tollgate::metrics
