#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "services/manifest/job_kinds.h"

namespace tollgate::manifest {
namespace {

const JobKindTranslator& JobTranslatorKind() { return *FindJobKind("Job"); }

Json MakeJob(const std::string& spec_extra = "") {
  Json job = Json::parse(R"({
    "apiVersion": "batch/v1", "kind": "Job",
    "metadata": {"name": "llama3-70b-mmlu", "namespace": "team-a",
                 "uid": "3f1c9a7e-1111-2222-3333-444455556666",
                 "labels": {"kueue.x-k8s.io/queue-name": "eval-queue"}},
    "spec": {"suspend": true,
             "template": {"spec": {
               "nodeSelector": {"cloud.google.com/gke-nodepool": "gpu"},
               "containers": [{"name": "lm-eval", "resources": {
                 "requests": {"cpu": "16", "memory": "64Gi", "nvidia.com/gpu": "2"}}}]}}}})");
  if (!spec_extra.empty()) job["spec"].merge_patch(Json::parse(spec_extra));
  return job;
}

struct CountCase {
  std::string name;
  std::string spec;
  int32_t want;
};

class JobCountTest : public ::testing::TestWithParam<CountCase> {};

TEST_P(JobCountTest, IsMinOfParallelismAndCompletions) {
  absl::StatusOr<std::vector<PodSetSource>> sets =
      JobTranslatorKind().PodSets(MakeJob(GetParam().spec), NoObjects());
  ASSERT_TRUE(sets.ok()) << sets.status();
  ASSERT_EQ(sets->size(), 1u);
  EXPECT_EQ((*sets)[0].name, "main");
  EXPECT_EQ((*sets)[0].count, GetParam().want);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, JobCountTest,
    ::testing::Values(CountCase{"Defaults", "{}", 1},
                      CountCase{"ParallelismOnly", R"({"parallelism": 4})", 4},
                      CountCase{"CompletionsOnly", R"({"completions": 5})", 1},
                      CountCase{"FewerCompletions", R"({"parallelism": 8, "completions": 3})", 3},
                      CountCase{"MoreCompletions", R"({"parallelism": 2, "completions": 10})", 2},
                      CountCase{"ZeroParallelism", R"({"parallelism": 0})", 0}),
    [](const auto& info) { return info.param.name; });

TEST(JobTranslatorTest, TranslatesTheWorkload) {
  absl::StatusOr<v1::Workload> wl =
      TranslateWorkload(JobTranslatorKind(), MakeJob(), "", NoObjects());
  ASSERT_TRUE(wl.ok()) << wl.status();
  EXPECT_EQ(wl->metadata().name(), "job-llama3-70b-mmlu-e8286");
  EXPECT_EQ(wl->metadata().namespace_(), "team-a");
  EXPECT_EQ(wl->metadata().uid(), "3f1c9a7e-1111-2222-3333-444455556666");
  EXPECT_EQ(wl->spec().queue_name(), "eval-queue");
  ASSERT_EQ(wl->spec().pod_sets_size(), 1);
  const v1::PodSet& ps = wl->spec().pod_sets(0);
  EXPECT_EQ(ps.requests().at("cpu"), "16");
  EXPECT_EQ(ps.requests().at("memory"), "64Gi");
  EXPECT_EQ(ps.requests().at("nvidia.com/gpu"), "2");
  EXPECT_EQ(ps.node_selector().at("cloud.google.com/gke-nodepool"), "gpu");
}

// The template's node affinity is carried: the required terms and the preferred ones (read by
// placement with TASRespectNodeAffinityPreferred), each weight as given.
TEST(JobTranslatorTest, CarriesTheTemplatesNodeAffinity) {
  absl::StatusOr<v1::Workload> wl = TranslateWorkload(JobTranslatorKind(), MakeJob(R"({
    "template": {"spec": {"affinity": {"nodeAffinity": {
      "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]},
      "preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 40, "preference": {"matchExpressions": [
          {"key": "region", "operator": "In", "values": ["us-west"]}]}},
        {"weight": 2, "preference": {"matchFields": [
          {"key": "metadata.name", "operator": "NotIn", "values": ["n1"]}]}}]}}}}})"),
                                                      "", NoObjects());
  ASSERT_TRUE(wl.ok()) << wl.status();
  const v1::PodSet& ps = wl->spec().pod_sets(0);
  ASSERT_EQ(ps.required_node_affinity_size(), 1);
  ASSERT_EQ(ps.preferred_node_affinity_size(), 2);
  EXPECT_EQ(ps.preferred_node_affinity(0).weight(), 40);
  ASSERT_EQ(ps.preferred_node_affinity(0).preference().match_expressions_size(), 1);
  EXPECT_EQ(ps.preferred_node_affinity(0).preference().match_expressions(0).key(), "region");
  EXPECT_EQ(ps.preferred_node_affinity(0).preference().match_expressions(0).values(0), "us-west");
  EXPECT_EQ(ps.preferred_node_affinity(1).weight(), 2);
  ASSERT_EQ(ps.preferred_node_affinity(1).preference().match_fields_size(), 1);
  EXPECT_EQ(ps.preferred_node_affinity(1).preference().match_fields(0).operator_(), "NotIn");
}

TEST(JobTranslatorTest, PriorityLabelWinsOverPodPriorityClass) {
  Json job = MakeJob(R"({"template": {"spec": {"priorityClassName": "high"}}})");
  absl::StatusOr<v1::Workload> wl = TranslateWorkload(JobTranslatorKind(), job, "", NoObjects());
  ASSERT_TRUE(wl.ok());
  EXPECT_EQ(wl->spec().priority_class_name(), "high");
  job["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] = "production";
  wl = TranslateWorkload(JobTranslatorKind(), job, "", NoObjects());
  ASSERT_TRUE(wl.ok());
  EXPECT_EQ(wl->spec().priority_class_name(), "production");
}

TEST(JobTranslatorTest, QueueFromAnnotationOrOverride) {
  Json job = MakeJob();
  job["metadata"].erase("labels");
  job["metadata"]["annotations"] = {{"kueue.x-k8s.io/queue-name", "legacy"}};
  EXPECT_EQ(QueueName(job), "legacy");
  absl::StatusOr<v1::Workload> wl =
      TranslateWorkload(JobTranslatorKind(), job, "default", NoObjects());
  ASSERT_TRUE(wl.ok());
  EXPECT_EQ(wl->spec().queue_name(), "default");
}

TEST(JobTranslatorTest, MinParallelismAnnotationGivesMinCount) {
  Json job = MakeJob(R"({"parallelism": 6})");
  job["metadata"]["annotations"] = {{"kueue.x-k8s.io/job-min-parallelism", "2"}};
  absl::StatusOr<std::vector<PodSetSource>> sets = JobTranslatorKind().PodSets(job, NoObjects());
  ASSERT_TRUE(sets.ok());
  EXPECT_EQ((*sets)[0].min_count, 2);
  job["metadata"]["annotations"]["kueue.x-k8s.io/job-min-parallelism"] = "zero";
  EXPECT_EQ(JobTranslatorKind().PodSets(job, NoObjects()).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(JobTranslatorTest, MissingUidIsRefused) {
  Json job = MakeJob();
  job["metadata"].erase("uid");
  EXPECT_EQ(TranslateWorkload(JobTranslatorKind(), job, "", NoObjects()).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(JobTranslatorTest, FinishedFromConditions) {
  const JobKindTranslator& t = JobTranslatorKind();
  Json job = MakeJob();
  EXPECT_FALSE(t.Finished(job).has_value());
  job["status"]["conditions"] = Json::parse(R"([{"type": "Complete", "status": "True"}])");
  ASSERT_TRUE(t.Finished(job).has_value());
  EXPECT_TRUE(t.Finished(job)->succeeded);
  job["status"]["conditions"] =
      Json::parse(R"([{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded"}])");
  ASSERT_TRUE(t.Finished(job).has_value());
  EXPECT_FALSE(t.Finished(job)->succeeded);
  EXPECT_THAT(t.Finished(job)->message, ::testing::HasSubstr("BackoffLimitExceeded"));
  job["status"]["conditions"] = Json::parse(R"([{"type": "Failed", "status": "False"}])");
  EXPECT_FALSE(t.Finished(job).has_value());
}

TEST(JobTranslatorTest, ActiveAndReady) {
  const JobKindTranslator& t = JobTranslatorKind();
  Json job = MakeJob(R"({"parallelism": 3})");
  v1::Workload wl;
  wl.mutable_spec()->add_pod_sets()->set_count(3);
  EXPECT_FALSE(t.IsActive(job));
  job["status"] = {{"active", 3}, {"ready", 2}};
  EXPECT_TRUE(t.IsActive(job));
  EXPECT_FALSE(t.PodsReady(job, {}, wl));
  job["status"]["ready"] = 3;
  EXPECT_TRUE(t.PodsReady(job, {}, wl));
}

TEST(JobTranslatorTest, SuspendPath) {
  Json job = MakeJob();
  EXPECT_TRUE(JobTranslatorKind().IsSuspended(job));
  job["spec"]["suspend"] = false;
  EXPECT_FALSE(JobTranslatorKind().IsSuspended(job));
  job["spec"].erase("suspend");
  EXPECT_FALSE(JobTranslatorKind().IsSuspended(job));
}

TEST(WorkloadNameTest, EarlierVersionsNamesAreDnsLabelsOfAtMost63Bytes) {
  const std::string uid = "ABCDEF12-3456-7890-abcd-ef1234567890";
  EXPECT_EQ(LegacyWorkloadName("job", "train.v2_final", uid), "job-train-v2-final-abcdef12");
  const std::string long_name(200, 'x');
  const std::string name = LegacyWorkloadName("pytorchjob", long_name, uid);
  EXPECT_LE(name.size(), 63u);
  EXPECT_TRUE(name.ends_with("-abcdef12"));
  EXPECT_EQ(LegacyWorkloadName("job", "a-", uid), "job-a-abcdef12");
}

TEST(PodSetNameFromTest, LowerCasesAndReplaces) {
  EXPECT_EQ(PodSetNameFrom("Worker"), "worker");
  EXPECT_EQ(PodSetNameFrom("small_group.1"), "small-group-1");
  EXPECT_EQ(PodSetNameFrom("--"), "");
}

}  // namespace
}  // namespace tollgate::manifest
