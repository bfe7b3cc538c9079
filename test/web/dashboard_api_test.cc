#include "web/dashboard_api.h"

#include <memory>
#include <optional>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "services/engine/admission_executor.h"
#include "services/engine/tollgate_api.h"
#include "test/services/engine/executor_fixture.h"
#include "test/status_matchers.h"

namespace tollgate::web {
namespace {

using ::testing::HasSubstr;

// The JSON API over the real executor and facade (settled by hand on a simulated clock).
class DashboardApiTest : public testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK(fx_.Open(engine::SettleByHand()));
    dashboard_ =
        std::make_unique<DashboardApi>(*fx_.api, [this] { return fx_.executor->revision(); });
    engine::OneQueueConfig config;
    config.cohort = "all";
    ASSERT_OK(fx_.ApplyOneQueue(config));
    for (const char* name : {"first", "second"}) {
      ASSERT_OK(fx_.api->Submit(engine::OnePodSubmitRequest("team", name, "3")).status());
    }
    ASSERT_TRUE(fx_.api->Settle().ok());
  }

  nlohmann::json Json(const absl::StatusOr<std::string>& text) {
    EXPECT_TRUE(text.ok()) << text.status();
    if (!text.ok()) return nlohmann::json();
    nlohmann::json json = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
    EXPECT_FALSE(json.is_discarded()) << *text;
    return json;
  }

  engine::ExecutorFixture fx_;
  std::unique_ptr<DashboardApi> dashboard_;
};

TEST_F(DashboardApiTest, ClusterQueuesCarryTheApisStatusCounts) {
  nlohmann::json json = Json(dashboard_->ListObjects("clusterqueues", {}));
  ASSERT_EQ(json["objects"].size(), 1u);
  const nlohmann::json& status = json["objects"][0]["clusterQueue"]["status"];
  // Printed even when zero-valued fields would be omitted by default.
  EXPECT_EQ(status["pendingWorkloads"], 1);
  EXPECT_EQ(status["admittedWorkloads"], 1);
  EXPECT_EQ(status["flavorsUsage"][0]["resources"][0]["total"], "3");
}

TEST_F(DashboardApiTest, WorkloadsFilterByState) {
  nlohmann::json all = Json(dashboard_->ListWorkloads({}));
  EXPECT_EQ(all["workloads"].size(), 2u);
  nlohmann::json pending = Json(dashboard_->ListWorkloads({{"state", "pending"}}));
  ASSERT_EQ(pending["workloads"].size(), 1u);
  EXPECT_EQ(pending["workloads"][0]["metadata"]["name"], "second");
}

TEST_F(DashboardApiTest, PendingWorkloadShowsPositionAndWhoHoldsTheQuota) {
  nlohmann::json json = Json(dashboard_->GetWorkload("team", "second"));
  EXPECT_EQ(json["workload"]["status"]["state"], "WORKLOAD_STATE_PENDING");
  EXPECT_EQ(json["pending"]["clusterQueue"], "cq");
  EXPECT_EQ(json["pending"]["positionInClusterQueue"], 0);
  EXPECT_EQ(json["cohort"], "all");
  ASSERT_EQ(json["quotaHolders"].size(), 1u);
  EXPECT_EQ(json["quotaHolders"][0]["metadata"]["name"], "first");
  // An admitted one has neither.
  nlohmann::json admitted = Json(dashboard_->GetWorkload("team", "first"));
  EXPECT_FALSE(admitted.contains("pending"));
  EXPECT_FALSE(admitted.contains("quotaHolders"));
}

TEST_F(DashboardApiTest, BadInputNamesTheParameterAndValue) {
  absl::StatusOr<std::string> kind = dashboard_->ListObjects("widgets", {});
  EXPECT_EQ(kind.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(kind.status().message()), HasSubstr("\"widgets\""));
  absl::StatusOr<std::string> state = dashboard_->ListWorkloads({{"state", "sleeping"}});
  EXPECT_EQ(state.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(state.status().message()), HasSubstr("state: \"sleeping\""));
  EXPECT_EQ(dashboard_->GetWorkload("team", "nope").status().code(), absl::StatusCode::kNotFound);
}

TEST_F(DashboardApiTest, StreamSendsChangesAfterTheRevision) {
  const int64_t since = fx_.executor->revision();
  v1::FinishRequest finish;
  finish.mutable_workload()->set_namespace_("team");
  finish.mutable_workload()->set_name("first");
  ASSERT_TRUE(fx_.api->Finish(finish).ok());
  std::optional<nlohmann::json> finished;
  absl::Status status = dashboard_->Stream(
      since,
      [&](int64_t revision, const std::string& text) {
        EXPECT_GT(revision, since);
        nlohmann::json event = nlohmann::json::parse(text);
        if (event["name"] == "first") finished = event;
        return !finished.has_value();
      },
      [&] { return finished.has_value(); });
  EXPECT_TRUE(status.ok()) << status;
  ASSERT_TRUE(finished.has_value());
  EXPECT_EQ((*finished)["type"], "MODIFIED");
  EXPECT_EQ((*finished)["namespace"], "team");
  EXPECT_EQ((*finished)["state"], "WORKLOAD_STATE_FINISHED");
}

}  // namespace
}  // namespace tollgate::web
