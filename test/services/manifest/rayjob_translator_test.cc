#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "services/manifest/job_kinds.h"

namespace tollgate::manifest {
namespace {

const JobKindTranslator& RayJobTranslatorKind() { return *FindJobKind("RayJob"); }

Json MakeRayJob() {
  return Json::parse(R"({
    "apiVersion": "ray.io/v1", "kind": "RayJob",
    "metadata": {"name": "sweep", "namespace": "team-b",
                 "uid": "aaaabbbb-0000-0000-0000-000000000001",
                 "labels": {"kueue.x-k8s.io/queue-name": "eval-queue"}},
    "spec": {"suspend": true, "entrypoint": "python sweep.py",
      "rayClusterSpec": {
        "headGroupSpec": {"template": {"spec": {"containers": [
          {"name": "ray-head", "image": "rayproject/ray:2.9.0",
           "resources": {"requests": {"cpu": "2", "memory": "8Gi"}}}]}}},
        "workerGroupSpecs": [
          {"groupName": "cpu-workers", "replicas": 3, "minReplicas": 1, "template": {"spec": {
            "containers": [{"name": "w", "resources": {"requests": {"cpu": "4"}}}]}}},
          {"groupName": "GPU_Workers", "replicas": 2, "numOfHosts": 2, "template": {"spec": {
            "containers": [{"name": "w", "resources": {"requests": {"cpu": "8",
                                                                    "nvidia.com/gpu": "1"}}}]}}}
        ]}}})");
}

TEST(RayJobTranslatorTest, HeadWorkerGroupsAndDefaultSubmitter) {
  absl::StatusOr<v1::Workload> wl =
      TranslateWorkload(RayJobTranslatorKind(), MakeRayJob(), "", NoObjects());
  ASSERT_TRUE(wl.ok()) << wl.status();
  EXPECT_EQ(wl->metadata().name(), "rayjob-sweep-faee8");
  ASSERT_EQ(wl->spec().pod_sets_size(), 4);
  const auto& sets = wl->spec().pod_sets();
  EXPECT_EQ(sets[0].name(), "head");
  EXPECT_EQ(sets[0].count(), 1);
  EXPECT_EQ(sets[0].requests().at("cpu"), "2");
  EXPECT_EQ(sets[1].name(), "cpu-workers");
  EXPECT_EQ(sets[1].count(), 3);
  EXPECT_FALSE(sets[1].has_min_count());
  EXPECT_EQ(sets[2].name(), "gpu-workers");
  EXPECT_EQ(sets[2].count(), 4);  // replicas x numOfHosts
  EXPECT_EQ(sets[2].requests().at("nvidia.com/gpu"), "1");
  EXPECT_EQ(sets[3].name(), "submitter");
  EXPECT_EQ(sets[3].requests().at("cpu"), "500m");
  EXPECT_EQ(sets[3].requests().at("memory"), "200Mi");
}

TEST(RayJobTranslatorTest, HttpModeHasNoSubmitter) {
  Json job = MakeRayJob();
  job["spec"]["submissionMode"] = "HTTPMode";
  absl::StatusOr<std::vector<PodSetSource>> sets = RayJobTranslatorKind().PodSets(job, NoObjects());
  ASSERT_TRUE(sets.ok());
  EXPECT_EQ(sets->size(), 3u);
}

TEST(RayJobTranslatorTest, ExplicitSubmitterTemplate) {
  Json job = MakeRayJob();
  job["spec"]["submitterPodTemplate"] = Json::parse(
      R"({"spec": {"containers": [{"name": "s", "resources": {"requests": {"cpu": "1"}}}]}})");
  absl::StatusOr<std::vector<PodSetSource>> sets = RayJobTranslatorKind().PodSets(job, NoObjects());
  ASSERT_TRUE(sets.ok());
  EXPECT_TRUE(sets->back().template_present);
  EXPECT_EQ(sets->back().template_path, "/spec/submitterPodTemplate");
}

TEST(RayJobTranslatorTest, RefusesClusterSelectorAndDuplicateGroups) {
  Json job = MakeRayJob();
  job["spec"]["clusterSelector"] = {{"ray.io/cluster", "shared"}};
  EXPECT_EQ(RayJobTranslatorKind().PodSets(job, NoObjects()).status().code(),
            absl::StatusCode::kInvalidArgument);
  job = MakeRayJob();
  job["spec"]["rayClusterSpec"]["workerGroupSpecs"][1]["groupName"] = "cpu-workers";
  EXPECT_EQ(RayJobTranslatorKind().PodSets(job, NoObjects()).status().code(),
            absl::StatusCode::kInvalidArgument);
  job = MakeRayJob();
  job["spec"]["rayClusterSpec"]["workerGroupSpecs"][1]["groupName"] = "head";
  EXPECT_EQ(RayJobTranslatorKind().PodSets(job, NoObjects()).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(RayJobTranslatorTest, LifecycleFromStatus) {
  const JobKindTranslator& t = RayJobTranslatorKind();
  Json job = MakeRayJob();
  v1::Workload wl;
  EXPECT_FALSE(t.IsActive(job));
  job["status"] = {{"jobDeploymentStatus", "Initializing"}};
  EXPECT_TRUE(t.IsActive(job));
  EXPECT_FALSE(t.PodsReady(job, {}, wl));
  job["status"] = {{"jobDeploymentStatus", "Running"}, {"rayClusterStatus", {{"state", "ready"}}}};
  EXPECT_TRUE(t.PodsReady(job, {}, wl));
  job["status"] = {{"jobDeploymentStatus", "Suspended"}};
  EXPECT_FALSE(t.IsActive(job));
  EXPECT_FALSE(t.Finished(job).has_value());
  job["status"] = {{"jobDeploymentStatus", "Complete"}, {"jobStatus", "SUCCEEDED"}};
  ASSERT_TRUE(t.Finished(job).has_value());
  EXPECT_TRUE(t.Finished(job)->succeeded);
  job["status"] = {{"jobDeploymentStatus", "Failed"}, {"jobStatus", "FAILED"}};
  ASSERT_TRUE(t.Finished(job).has_value());
  EXPECT_FALSE(t.Finished(job)->succeeded);
  EXPECT_FALSE(t.IsOnHold(job));
  // Kueue's JobWithOnHold: KubeRay refused the spec.
  job["status"] = {{"jobDeploymentStatus", "ValidationFailed"}};
  EXPECT_TRUE(t.IsOnHold(job));
  EXPECT_FALSE(t.Finished(job).has_value());
}

}  // namespace
}  // namespace tollgate::manifest
