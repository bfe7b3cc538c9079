#include "core/submit_preview.h"

#include <string>

#include "core/cluster_state.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tollgate::core {
namespace {

using ::testing::HasSubstr;

const absl::Time kNow = absl::FromUnixSeconds(1767225600);

WorkloadSpec Spec(std::string queue, std::string priority_class = "") {
  WorkloadSpec spec;
  spec.namespace_name = "team-a";
  spec.name = "job";
  spec.queue_name = std::move(queue);
  spec.priority_class_name = std::move(priority_class);
  spec.pod_sets = {PodSetSpec{"main", 1, std::nullopt, {{"cpu", 1000}}, {}, {}}};
  return spec;
}

class SubmitPreviewTest : public ::testing::Test {
 protected:
  SubmitPreviewTest() {
    EXPECT_TRUE(state_.ApplyNamespace({"team-a", {}}, kNow).ok());
    EXPECT_TRUE(
        state_.ApplyLocalQueue({"team-a", "default", "cq", StopPolicy::kNone, 1.0}, kNow).ok());
    EXPECT_TRUE(state_.ApplyPriorityClass({"high", 1000, false}, kNow).ok());
  }
  ClusterState state_{SchedulerConfig{}};
};

// The dry run answers what Submit would, and changes nothing.
TEST_F(SubmitPreviewTest, AnswersAsSubmitWouldWithoutChangingAnything) {
  absl::StatusOr<SubmitPreview> preview = PreviewSubmit(state_, Spec("", "high"));
  ASSERT_TRUE(preview.ok()) << preview.status();
  EXPECT_EQ(preview->spec.queue_name, "default");
  EXPECT_EQ(preview->priority, 1000);
  EXPECT_EQ(preview->existing, nullptr);
  EXPECT_TRUE(state_.AllWorkloads().empty());

  ASSERT_TRUE(state_.Submit(Spec("", "high"), "", kNow).ok());
  preview = PreviewSubmit(state_, Spec("", "high"));
  ASSERT_TRUE(preview.ok()) << preview.status();
  EXPECT_EQ(preview->existing, state_.FindWorkload("team-a/job"));

  WorkloadSpec other = Spec("", "high");
  other.pod_sets[0].count = 2;
  EXPECT_TRUE(absl::IsAlreadyExists(PreviewSubmit(state_, other).status()));
  EXPECT_EQ(state_.AllWorkloads().size(), 1u);
}

TEST_F(SubmitPreviewTest, RefusalsNameTheField) {
  WorkloadSpec no_default = Spec("");
  no_default.namespace_name = "team-b";
  absl::Status st = PreviewSubmit(state_, no_default).status();
  EXPECT_TRUE(absl::IsInvalidArgument(st));
  EXPECT_THAT(std::string(st.message()), HasSubstr("spec.queueName"));
  st = PreviewSubmit(state_, Spec("default", "nope")).status();
  EXPECT_FALSE(st.ok());
  EXPECT_THAT(std::string(st.message()), HasSubstr("nope"));
}

}  // namespace
}  // namespace tollgate::core
