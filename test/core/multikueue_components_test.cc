#include "core/multikueue_components.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

// Kueue's rule for the component workloads of one object (MultiKueueMultiWorkloadAdapter in the
// multikueue workload reconciler: allExpectedWorkloadsExist, getComponentWorkloadsClusterName,
// isPrimaryComponentWorkload): all must exist, the primary nominates, the others follow.

namespace tollgate::core {
namespace {

using ::testing::HasSubstr;

ComponentWorkload Component(const std::string& name, int index, const std::string& cluster = "") {
  return ComponentWorkload{name, index, cluster};
}

TEST(ComponentDispatchTest, NothingIsNominatedUntilEveryComponentExists) {
  const ComponentDecision d = DecideComponentDispatch(Component("g0", 0), {Component("g1", 1)}, 3);
  EXPECT_EQ(d.step, ComponentStep::kWaitForComponents);
  EXPECT_THAT(d.message, HasSubstr("(2/3)"));
  // Not even a follower of a cluster already chosen.
  EXPECT_EQ(DecideComponentDispatch(Component("g1", 1), {Component("g0", 0, "w1")}, 3).step,
            ComponentStep::kWaitForComponents);
}

TEST(ComponentDispatchTest, ThePrimaryIsNominatedAsAnyWorkload) {
  const ComponentDecision d =
      DecideComponentDispatch(Component("g0", 0), {Component("g1", 1), Component("g2", 2)}, 3);
  EXPECT_EQ(d.step, ComponentStep::kNominate);
  // The lowest index present is the primary, whatever the names.
  EXPECT_EQ(DecideComponentDispatch(Component("a", 4), {Component("b", 7)}, 2).step,
            ComponentStep::kNominate);
  // An unknown count is not waited for.
  EXPECT_EQ(DecideComponentDispatch(Component("g0", 0), {}, 0).step, ComponentStep::kNominate);
}

TEST(ComponentDispatchTest, TheOthersWaitForThePrimary) {
  const ComponentDecision d =
      DecideComponentDispatch(Component("g1", 1), {Component("g0", 0), Component("g2", 2)}, 3);
  EXPECT_EQ(d.step, ComponentStep::kWaitForPrimary);
  // A workload without a readable index is never the primary.
  EXPECT_EQ(DecideComponentDispatch(Component("x", -1), {Component("g0", 0)}, 2).step,
            ComponentStep::kWaitForPrimary);
}

TEST(ComponentDispatchTest, OnceOneIsAdmittedOnAWorkerTheOthersFollowIt) {
  ComponentDecision d = DecideComponentDispatch(Component("g1", 1),
                                                {Component("g0", 0, "w2"), Component("g2", 2)}, 3);
  EXPECT_EQ(d.step, ComponentStep::kFollow);
  EXPECT_EQ(d.cluster, "w2");
  // The primary follows too, once another component runs somewhere (it was evicted meanwhile).
  d = DecideComponentDispatch(Component("g0", 0), {Component("g1", 1, "w1")}, 2);
  EXPECT_EQ(d.step, ComponentStep::kFollow);
  EXPECT_EQ(d.cluster, "w1");
  // Its own cluster is not the others'.
  EXPECT_EQ(DecideComponentDispatch(Component("g0", 0, "w1"), {Component("g1", 1)}, 2).step,
            ComponentStep::kNominate);
}

TEST(ComponentDispatchTest, ComponentsOnDifferentClustersAreAConflict) {
  const ComponentDecision d = DecideComponentDispatch(
      Component("g2", 2), {Component("g0", 0, "w1"), Component("g1", 1, "w2")}, 3);
  EXPECT_EQ(d.step, ComponentStep::kConflict);
  EXPECT_THAT(d.message, HasSubstr("\"w1\" and \"w2\""));
}

TEST(ComponentDispatchTest, AnIndexIsANonNegativeInteger) {
  EXPECT_EQ(ComponentIndexOf("3"), 3);
  EXPECT_EQ(ComponentIndexOf("0"), 0);
  EXPECT_EQ(ComponentIndexOf("-1"), -1);
  EXPECT_EQ(ComponentIndexOf("x"), -1);
  EXPECT_EQ(ComponentIndexOf(""), -1);
}

}  // namespace
}  // namespace tollgate::core
