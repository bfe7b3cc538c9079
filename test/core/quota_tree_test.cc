#include "core/quota_tree.h"

#include <map>
#include <string>

#include "gtest/gtest.h"

namespace tollgate::core {
namespace {

ResourceGroupSpec Gpus(int64_t nominal, std::optional<int64_t> borrowing = std::nullopt,
                       std::optional<int64_t> lending = std::nullopt) {
  return ResourceGroupSpec{{"gpu"}, {{"a100", {{"gpu", nominal, borrowing, lending}}}}};
}

ClusterQueueSpec Queue(std::string name, std::string cohort, ResourceGroupSpec group) {
  ClusterQueueSpec spec;
  spec.name = std::move(name);
  spec.cohort = std::move(cohort);
  spec.resource_groups = {std::move(group)};
  return spec;
}

class QuotaTreeTest : public ::testing::Test {
 protected:
  void Build() {
    tree_.Build(cqs_, cohorts_, index_);
    fr_ = *index_.Find("a100", "gpu");
  }
  QuotaNode& Cq(const std::string& name) { return *tree_.ClusterQueue(name); }

  std::map<std::string, ClusterQueueSpec> cqs_;
  std::map<std::string, CohortSpec> cohorts_;
  FlavorResourceIndex index_;
  QuotaTree tree_;
  FrId fr_ = -1;
};

TEST_F(QuotaTreeTest, LoneQueueAvailableIsNominalMinusUsage) {
  cqs_["a"] = Queue("a", "", Gpus(8));
  Build();
  EXPECT_EQ(Cq("a").Available(fr_), 8);
  Cq("a").AddUsage(fr_, 5);
  EXPECT_EQ(Cq("a").Available(fr_), 3);
  EXPECT_EQ(Cq("a").PotentialAvailable(fr_), 8);
  EXPECT_FALSE(Cq("a").Borrowing(fr_));
}

TEST_F(QuotaTreeTest, BorrowingStopsAtBorrowingLimit) {
  for (const char* name : {"research", "vision", "speech"}) {
    cqs_[name] = Queue(name, "shared", Gpus(16, 8));
  }
  Build();
  EXPECT_EQ(tree_.Cohort("shared")->SubtreeQuota(fr_), 48);
  EXPECT_EQ(Cq("research").Available(fr_), 24);
  EXPECT_EQ(Cq("research").PotentialAvailable(fr_), 24);
  Cq("research").AddUsage(fr_, 24);
  EXPECT_EQ(Cq("research").Available(fr_), 0);
  EXPECT_TRUE(Cq("research").Borrowing(fr_));
  // The cohort saw everything above research's (zero) guaranteed quota.
  EXPECT_EQ(tree_.Cohort("shared")->Usage(fr_), 24);
  EXPECT_EQ(Cq("vision").Available(fr_), 24);
  Cq("research").RemoveUsage(fr_, 8);
  EXPECT_EQ(tree_.Cohort("shared")->Usage(fr_), 16);
}

TEST_F(QuotaTreeTest, LendingLimitKeepsGuaranteedQuotaLocal) {
  cqs_["inference"] = Queue("inference", "pool", Gpus(8, std::nullopt, 2));
  cqs_["training"] = Queue("training", "pool", Gpus(8));
  Build();
  // inference lends 2 of 8: the cohort has 8 + 2.
  EXPECT_EQ(tree_.Cohort("pool")->SubtreeQuota(fr_), 10);
  EXPECT_EQ(Cq("inference").LocalQuota(fr_), 6);
  EXPECT_EQ(Cq("training").Available(fr_), 10);
  Cq("training").AddUsage(fr_, 10);
  EXPECT_EQ(Cq("training").Available(fr_), 0);
  // inference still has its 6 guaranteed, and its usage within them never reaches the cohort.
  EXPECT_EQ(Cq("inference").Available(fr_), 6);
  Cq("inference").AddUsage(fr_, 6);
  EXPECT_EQ(tree_.Cohort("pool")->Usage(fr_), 10);
}

TEST_F(QuotaTreeTest, HierarchicalCohortWithOwnQuotaAndLendingLimit) {
  // root(4) <- child(lends at most 3 of its subtree) <- a(2), b(2); root <- c(0)
  CohortSpec root{"root", "", {Gpus(4)}, 1.0};
  CohortSpec child{"child", "root", {Gpus(0, std::nullopt, 3)}, 1.0};
  cohorts_["root"] = root;
  cohorts_["child"] = child;
  cqs_["a"] = Queue("a", "child", Gpus(2));
  cqs_["b"] = Queue("b", "child", Gpus(2));
  cqs_["c"] = Queue("c", "root", Gpus(0));
  Build();
  EXPECT_EQ(tree_.Cohort("child")->SubtreeQuota(fr_), 4);
  EXPECT_EQ(tree_.Cohort("child")->LocalQuota(fr_), 1);
  EXPECT_EQ(tree_.Cohort("root")->SubtreeQuota(fr_), 4 + 3);
  EXPECT_EQ(Cq("c").Available(fr_), 7);
  EXPECT_EQ(Cq("a").Available(fr_), 4 + 4);
  Cq("c").AddUsage(fr_, 7);
  // c took everything root could lend; child's subtree keeps the 1 it never lends.
  EXPECT_EQ(Cq("a").Available(fr_), 1);
  EXPECT_EQ(Cq("c").Available(fr_), 0);
}

TEST_F(QuotaTreeTest, CohortCycleDetachesAndFlagsQueues) {
  cohorts_["x"] = CohortSpec{"x", "y", {}, 1.0};
  cohorts_["y"] = CohortSpec{"y", "x", {}, 1.0};
  cqs_["a"] = Queue("a", "x", Gpus(2));
  cqs_["b"] = Queue("b", "", Gpus(2));
  Build();
  EXPECT_TRUE(tree_.InCycle("a"));
  EXPECT_FALSE(tree_.InCycle("b"));
}

// Kueue's getNodeHeight walks its scheduling snapshot, which holds active ClusterQueues only;
// an inactive one still counts in the quota.
TEST_F(QuotaTreeTest, HeightCountsActiveClusterQueuesOnly) {
  cohorts_["root"] = CohortSpec{"root", "", {}, 1.0};
  cohorts_["sub"] = CohortSpec{"sub", "root", {}, 1.0};
  cqs_["mine"] = Queue("mine", "root", Gpus(2));
  cqs_["held"] = Queue("held", "sub", Gpus(2));
  Build();
  EXPECT_EQ(tree_.Cohort("root")->Height(), 2);
  EXPECT_EQ(tree_.Cohort("sub")->Height(), 1);
  Cq("held").SetActive(false);
  EXPECT_EQ(tree_.Cohort("sub")->Height(), 0);
  EXPECT_EQ(tree_.Cohort("root")->Height(), 1);
  EXPECT_EQ(tree_.Cohort("root")->SubtreeQuota(fr_), 4);
}

TEST_F(QuotaTreeTest, ArithmeticSaturatesNearInt64Limit) {
  const int64_t huge = std::numeric_limits<int64_t>::max() - 1;
  cqs_["a"] = Queue("a", "pool", Gpus(huge, huge));
  cqs_["b"] = Queue("b", "pool", Gpus(huge));
  Build();
  EXPECT_EQ(tree_.Cohort("pool")->SubtreeQuota(fr_), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(Cq("a").PotentialAvailable(fr_), std::numeric_limits<int64_t>::max());
  Cq("a").AddUsage(fr_, huge);
  EXPECT_GE(Cq("a").Available(fr_), 0);
}

}  // namespace
}  // namespace tollgate::core
