#include <string>
#include <utility>

#include "core/cluster_state.h"
#include "gtest/gtest.h"
#include "test/core/gpu_cluster_state_fixture.h"

// A ClusterQueue's Active condition as Kueue's clusterQueue.inactiveReason builds it: the
// reason of the first cause (stopped, missing flavors, admission checks, missing topologies),
// every cause in the message.

namespace tollgate::core {
namespace {

class ClusterQueueActivityTest : public GpuClusterStateTest {};

TEST_F(ClusterQueueActivityTest, MissingFlavorsAreTheReasonAndListedInTheMessage) {
  ClusterQueueSpec cq = GpuQueue("cq", "", 4);
  cq.resource_groups[0].flavors.push_back({"h100", {{"gpu", 4, std::nullopt, std::nullopt}}});
  cq.resource_groups[0].flavors.push_back({"l4", {{"gpu", 4, std::nullopt, std::nullopt}}});
  AddQueue(std::move(cq), "ns");
  const ClusterQueueRuntime* runtime = state_.cluster_queue("cq");
  EXPECT_FALSE(runtime->active);
  EXPECT_EQ(runtime->inactive_reason, "FlavorNotFound");
  EXPECT_EQ(runtime->inactive_message,
            "Can't admit new workloads: references missing ResourceFlavor(s): h100,l4.");

  ASSERT_TRUE(state_.ApplyResourceFlavor({"h100", {}, {}, {}}, now_).ok());
  ASSERT_TRUE(state_.ApplyResourceFlavor({"l4", {}, {}, {}}, now_).ok());
  EXPECT_TRUE(state_.cluster_queue("cq")->active);
  EXPECT_EQ(state_.cluster_queue("cq")->inactive_reason, "");
  EXPECT_EQ(state_.cluster_queue("cq")->inactive_message, "");
}

TEST_F(ClusterQueueActivityTest, StoppedComesFirstAndEveryCauseIsInTheMessage) {
  ClusterQueueSpec cq = GpuQueue("cq", "", 4);
  cq.stop_policy = StopPolicy::kHold;
  cq.resource_groups[0].flavors.push_back({"h100", {{"gpu", 4, std::nullopt, std::nullopt}}});
  AddQueue(std::move(cq), "ns");
  const ClusterQueueRuntime* runtime = state_.cluster_queue("cq");
  EXPECT_EQ(runtime->inactive_reason, "Stopped");
  EXPECT_EQ(runtime->inactive_message,
            "Can't admit new workloads: is stopped, references missing ResourceFlavor(s): h100.");
}

TEST_F(ClusterQueueActivityTest, TerminatingKeepsItsOwnMessage) {
  AddQueue(GpuQueue("cq", "", 4), "ns");
  Submit(GpuJob("a", "ns", 1));
  Settle();
  ASSERT_TRUE(state_.DeleteObject(ObjectKind::kClusterQueue, "", "cq", now_).ok());
  const ClusterQueueRuntime* runtime = state_.cluster_queue("cq");
  EXPECT_EQ(runtime->inactive_reason, "Terminating");
  EXPECT_EQ(runtime->inactive_message, "Can't admit new workloads; clusterQueue is terminating");
}

}  // namespace
}  // namespace tollgate::core
