// The etcd harness itself: real members start, fail and come back as the store tests assume.

#include "test/support/etcd_cluster.h"

#include <memory>

#include "gtest/gtest.h"
#include "test/status_matchers.h"

namespace tollgate::test_support {
namespace {

TEST(EtcdClusterTest, SingleMemberStartsAndRestartsOnItsPort) {
  TOLLGATE_SKIP_WITHOUT_ETCD();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<EtcdCluster> etcd, EtcdCluster::Start({.members = 1}));
  EXPECT_TRUE(etcd->MemberHealthy(0, absl::Seconds(5)));
  ASSERT_OK(etcd->Kill(0));
  EXPECT_FALSE(etcd->Running(0));
  EXPECT_FALSE(etcd->MemberHealthy(0, absl::Milliseconds(300)));
  ASSERT_OK(etcd->Restart(0));
  ASSERT_OK(etcd->WaitHealthy(absl::Seconds(30)));
  EXPECT_EQ(etcd->ClientEndpoints(), etcd->ClientEndpoint(0));
}

TEST(EtcdClusterTest, ThreeMembersKeepAQuorumWithOneLostAndNotWithTwo) {
  TOLLGATE_SKIP_WITHOUT_ETCD();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<EtcdCluster> etcd, EtcdCluster::Start({.members = 3}));
  ASSERT_OK(etcd->Kill(0));
  ASSERT_OK(etcd->WaitHealthy(absl::Seconds(30)));
  EXPECT_TRUE(etcd->MemberAcceptsWrite(2, absl::Seconds(10)));
  ASSERT_OK(etcd->Pause(1));
  // One of three left: no quorum, so no write can commit.
  EXPECT_FALSE(etcd->MemberAcceptsWrite(2, absl::Seconds(2)));
  ASSERT_OK(etcd->Resume(1));
  ASSERT_OK(etcd->Restart(0));
  ASSERT_OK(etcd->WaitHealthy(absl::Seconds(30)));
}

TEST(EtcdClusterTest, RejectsUnsupportedSizes) {
  EXPECT_EQ(EtcdCluster::Start({.members = 2}).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tollgate::test_support
