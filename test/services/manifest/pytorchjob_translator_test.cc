#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "services/manifest/job_kinds.h"

namespace tollgate::manifest {
namespace {

const JobKindTranslator& PyTorchJobTranslatorKind() { return *FindJobKind("PyTorchJob"); }

Json MakePyTorchJob(int workers) {
  Json job = Json::parse(R"({
    "apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
    "metadata": {"name": "finetune", "namespace": "team-a",
                 "uid": "cccc0000-0000-0000-0000-000000000002",
                 "labels": {"kueue.x-k8s.io/queue-name": "eval-queue"}},
    "spec": {"runPolicy": {"suspend": true},
      "pytorchReplicaSpecs": {
        "Worker": {"replicas": 1, "template": {"spec": {"containers": [
          {"name": "pytorch", "resources": {"requests": {"cpu": "4", "nvidia.com/gpu": "1"}}}]}}},
        "Master": {"replicas": 1, "template": {"spec": {"priorityClassName": "train",
          "containers": [{"name": "pytorch", "resources": {"requests": {"cpu": "2"}}}]}}}}}})");
  job["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] = workers;
  return job;
}

TEST(PyTorchJobTranslatorTest, MasterThenWorkersAsOneGang) {
  absl::StatusOr<v1::Workload> wl =
      TranslateWorkload(PyTorchJobTranslatorKind(), MakePyTorchJob(16), "", NoObjects());
  ASSERT_TRUE(wl.ok()) << wl.status();
  EXPECT_EQ(wl->metadata().name(), "pytorchjob-finetune-2272f");
  EXPECT_EQ(wl->spec().priority_class_name(), "train");
  ASSERT_EQ(wl->spec().pod_sets_size(), 2);
  EXPECT_EQ(wl->spec().pod_sets(0).name(), "master");
  EXPECT_EQ(wl->spec().pod_sets(0).count(), 1);
  EXPECT_EQ(wl->spec().pod_sets(1).name(), "worker");
  EXPECT_EQ(wl->spec().pod_sets(1).count(), 16);
  EXPECT_EQ(wl->spec().pod_sets(1).requests().at("nvidia.com/gpu"), "1");
  for (const v1::PodSet& ps : wl->spec().pod_sets()) EXPECT_FALSE(ps.has_min_count());
}

TEST(PyTorchJobTranslatorTest, SchedulingPolicyPriorityWins) {
  Json job = MakePyTorchJob(2);
  job["spec"]["runPolicy"]["schedulingPolicy"] = {{"priorityClass", "urgent"}};
  EXPECT_EQ(PyTorchJobTranslatorKind().PodPriorityClassName(job, {}), "urgent");
}

TEST(PyTorchJobTranslatorTest, SuspendIsUnderRunPolicy) {
  Json job = MakePyTorchJob(2);
  EXPECT_TRUE(PyTorchJobTranslatorKind().IsSuspended(job));
  job["spec"]["runPolicy"]["suspend"] = false;
  EXPECT_FALSE(PyTorchJobTranslatorKind().IsSuspended(job));
}

TEST(PyTorchJobTranslatorTest, LifecycleFromStatus) {
  const JobKindTranslator& t = PyTorchJobTranslatorKind();
  Json job = MakePyTorchJob(2);
  v1::Workload wl;
  job["status"] = Json::parse(R"({"replicaStatuses": {"Master": {"active": 1},
                                                      "Worker": {"active": 2}},
                                  "conditions": [{"type": "Running", "status": "True"}]})");
  EXPECT_TRUE(t.IsActive(job));
  EXPECT_TRUE(t.PodsReady(job, {}, wl));
  EXPECT_FALSE(t.Finished(job).has_value());
  job["status"] = Json::parse(R"({"replicaStatuses": {"Master": {"active": 0}},
                                  "conditions": [{"type": "Succeeded", "status": "True"}]})");
  EXPECT_FALSE(t.IsActive(job));
  ASSERT_TRUE(t.Finished(job).has_value());
  EXPECT_TRUE(t.Finished(job)->succeeded);
}

TEST(PyTorchJobTranslatorTest, NoReplicaSpecsIsRefused) {
  Json job = MakePyTorchJob(1);
  job["spec"].erase("pytorchReplicaSpecs");
  EXPECT_EQ(PyTorchJobTranslatorKind().PodSets(job, NoObjects()).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tollgate::manifest
