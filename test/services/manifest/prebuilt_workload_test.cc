#include "services/manifest/prebuilt_workload.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "services/manifest/job_kinds.h"

namespace tollgate::manifest {
namespace {

using ::testing::HasSubstr;

TEST(PrebuiltWorkloadNameTest, TheAnnotationWinsOverTheLabel) {
  EXPECT_EQ(PrebuiltWorkloadName(nlohmann::json::parse(R"({"metadata": {}})")), "");
  EXPECT_EQ(PrebuiltWorkloadName(nlohmann::json::parse(
                R"({"metadata": {"labels": {"kueue.x-k8s.io/prebuilt-workload-name": "a"}}})")),
            "a");
  EXPECT_EQ(PrebuiltWorkloadName(nlohmann::json::parse(R"({"metadata": {
                "labels": {"kueue.x-k8s.io/prebuilt-workload-name": "a"},
                "annotations": {"kueue.x-k8s.io/prebuilt-workload-name": "b"}}})")),
            "b");
}

TEST(PrebuiltWorkloadSupportTest, KueuesListOfKinds) {
  for (const char* kind :
       {"Job", "JobSet", "PyTorchJob", "TFJob", "PaddleJob", "XGBoostJob", "MPIJob", "TrainJob",
        "RayJob", "RayCluster", "RayService", "AppWrapper"}) {
    const JobKindTranslator* translator = FindJobKind(kind);
    ASSERT_NE(translator, nullptr) << kind;
    EXPECT_TRUE(CheckPrebuiltWorkloadSupported(translator->resource()).ok()) << kind;
  }
  for (const char* kind : {"JAXJob", "SparkApplication"}) {
    const JobKindTranslator* translator = FindJobKind(kind);
    ASSERT_NE(translator, nullptr) << kind;
    const absl::Status status = CheckPrebuiltWorkloadSupported(translator->resource());
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << kind;
    EXPECT_THAT(status.message(),
                HasSubstr("metadata.labels[kueue.x-k8s.io/prebuilt-workload-name]: Forbidden"));
    EXPECT_THAT(status.message(), HasSubstr(kind));
  }
}

v1::Workload OneSet(const std::string& cpu, int32_t count) {
  v1::Workload wl;
  wl.mutable_metadata()->set_namespace_("team-a");
  wl.mutable_metadata()->set_name("planned");
  v1::PodSet* set = wl.mutable_spec()->add_pod_sets();
  set->set_name("main");
  set->set_count(count);
  (*set->mutable_requests())["cpu"] = cpu;
  return wl;
}

TEST(EquivalentToPrebuiltTest, ComparesPodSetsAsTheCoreReadsThem) {
  EXPECT_TRUE(*EquivalentToPrebuilt(OneSet("1", 2), OneSet("1000m", 2)));
  EXPECT_FALSE(*EquivalentToPrebuilt(OneSet("1", 2), OneSet("1", 3)));
  EXPECT_FALSE(*EquivalentToPrebuilt(OneSet("1", 2), OneSet("2", 2)));
}

TEST(EquivalentToPrebuiltTest, TheQueueIsThePrebuiltWorkloadsOwn) {
  v1::Workload prebuilt = OneSet("1", 2);
  prebuilt.mutable_spec()->set_queue_name("planned-queue");
  EXPECT_TRUE(*EquivalentToPrebuilt(OneSet("1", 2), prebuilt));
}

TEST(EquivalentToPrebuiltTest, TheMaximumExecutionTimeMustMatch) {
  v1::Workload prebuilt = OneSet("1", 2);
  prebuilt.mutable_spec()->set_maximum_execution_time_seconds(600);
  EXPECT_FALSE(*EquivalentToPrebuilt(OneSet("1", 2), prebuilt));
  v1::Workload job = OneSet("1", 2);
  job.mutable_spec()->set_maximum_execution_time_seconds(600);
  EXPECT_TRUE(*EquivalentToPrebuilt(job, prebuilt));
}

TEST(EquivalentToPrebuiltTest, AnUnreadableWorkloadIsAnError) {
  EXPECT_EQ(EquivalentToPrebuilt(OneSet("lots", 2), OneSet("1", 2)).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tollgate::manifest
