// Toleration matching: Kubernetes' ToleratesTaint as Kueue's scheduling calls it (comparison
// operators enabled) and as its node controller calls it (disabled). Required node affinity:
// Kubernetes' NodeSelector against a node, and Kueue's flavorSelector against a flavor. Preferred
// node affinity: Kubernetes' PreferredSchedulingTerms.Score.

#include "core/node_matching.h"

#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace tollgate::core {
namespace {

Taint TierTaint(const std::string& value) { return Taint{"tier", value, "NoSchedule"}; }

Toleration TierToleration(const std::string& op, const std::string& value) {
  return Toleration{"tier", op, value, "NoSchedule"};
}

TEST(ToleratesWhenSchedulingTest, GtToleratesGreaterTaintValues) {
  EXPECT_TRUE(ToleratesWhenScheduling(TierToleration("Gt", "3"), TierTaint("5")));
  EXPECT_FALSE(ToleratesWhenScheduling(TierToleration("Gt", "3"), TierTaint("3")));
  EXPECT_FALSE(ToleratesWhenScheduling(TierToleration("Gt", "3"), TierTaint("1")));
  EXPECT_TRUE(ToleratesWhenScheduling(TierToleration("Gt", "-10"), TierTaint("-2")));
}

TEST(ToleratesWhenSchedulingTest, LtToleratesSmallerTaintValues) {
  EXPECT_TRUE(ToleratesWhenScheduling(TierToleration("Lt", "3"), TierTaint("1")));
  EXPECT_TRUE(ToleratesWhenScheduling(TierToleration("Lt", "3"), TierTaint("0")));
  EXPECT_FALSE(ToleratesWhenScheduling(TierToleration("Lt", "3"), TierTaint("3")));
  EXPECT_FALSE(ToleratesWhenScheduling(TierToleration("Lt", "3"), TierTaint("5")));
}

TEST(ToleratesWhenSchedulingTest, ValuesThatAreNoCanonicalIntegerTolerateNothing) {
  EXPECT_FALSE(ToleratesWhenScheduling(TierToleration("Gt", "3"), TierTaint("high")));
  EXPECT_FALSE(ToleratesWhenScheduling(TierToleration("Gt", "3"), TierTaint("05")));
  EXPECT_FALSE(ToleratesWhenScheduling(TierToleration("Gt", "3"), TierTaint("+5")));
  EXPECT_FALSE(ToleratesWhenScheduling(TierToleration("Lt", "3"), TierTaint("-0")));
  EXPECT_FALSE(ToleratesWhenScheduling(TierToleration("Lt", "3"), TierTaint("")));
  EXPECT_FALSE(
      ToleratesWhenScheduling(TierToleration("Lt", "3"), TierTaint("99999999999999999999")));
}

TEST(ToleratesWhenSchedulingTest, KeyAndEffectStillHaveToMatch) {
  EXPECT_FALSE(
      ToleratesWhenScheduling(Toleration{"zone", "Gt", "3", "NoSchedule"}, TierTaint("5")));
  EXPECT_FALSE(ToleratesWhenScheduling(Toleration{"tier", "Gt", "3", "NoExecute"}, TierTaint("5")));
  EXPECT_TRUE(ToleratesWhenScheduling(Toleration{"tier", "Gt", "3", ""}, TierTaint("5")));
}

TEST(ToleratesWhenSchedulingTest, EqualAndExistsAsBefore) {
  EXPECT_TRUE(ToleratesWhenScheduling(TierToleration("Equal", "5"), TierTaint("5")));
  EXPECT_FALSE(ToleratesWhenScheduling(TierToleration("Equal", "5"), TierTaint("6")));
  EXPECT_TRUE(ToleratesWhenScheduling(TierToleration("Exists", ""), TierTaint("6")));
}

// Kueue's node controller (TolerationsTolerateTaint with comparison operators disabled): a
// numeric toleration tolerates nothing when it decides whether a taint fails a placement.
TEST(ToleratesTest, NumericOperatorsTolerateNothing) {
  EXPECT_FALSE(Tolerates(TierToleration("Gt", "3"), TierTaint("5")));
  EXPECT_FALSE(Tolerates(TierToleration("Lt", "3"), TierTaint("1")));
  EXPECT_FALSE(Tolerates(TierToleration("Gt", "5"), TierTaint("5")));
  EXPECT_TRUE(Tolerates(TierToleration("Equal", "5"), TierTaint("5")));
}

TEST(FindUntoleratedTaintTest, FlavorTaintsCompareNumerically) {
  ResourceFlavorSpec flavor;
  flavor.node_taints = {TierTaint("5")};
  EXPECT_EQ(FindUntoleratedTaint(flavor, {TierToleration("Gt", "3")}), nullptr);
  const Taint* untolerated = FindUntoleratedTaint(flavor, {TierToleration("Lt", "3")});
  ASSERT_NE(untolerated, nullptr);
  EXPECT_EQ(untolerated->value, "5");
}

LabelSelectorRequirement NameIs(const std::string& op, const std::string& name) {
  return LabelSelectorRequirement{std::string(kNodeNameField), op, {name}};
}

NodeSelectorTerm Term(std::vector<LabelSelectorRequirement> expressions,
                      std::vector<LabelSelectorRequirement> fields) {
  NodeSelectorTerm term;
  term.match_expressions = std::move(expressions);
  term.match_fields = std::move(fields);
  return term;
}

TEST(NodeAffinityMatchesTest, MatchFieldsCompareTheNodesName) {
  const std::vector<NodeSelectorTerm> only_n1 = {Term({}, {NameIs("In", "n1")})};
  EXPECT_TRUE(NodeAffinityMatches(only_n1, {}, "n1"));
  EXPECT_FALSE(NodeAffinityMatches(only_n1, {}, "n2"));
  const std::vector<NodeSelectorTerm> not_n1 = {Term({}, {NameIs("NotIn", "n1")})};
  EXPECT_FALSE(NodeAffinityMatches(not_n1, {}, "n1"));
  EXPECT_TRUE(NodeAffinityMatches(not_n1, {}, "n2"));
}

TEST(NodeAffinityMatchesTest, ExpressionsAndFieldsOfATermAreAnded) {
  const std::vector<NodeSelectorTerm> terms = {Term({{"zone", "In", {"a"}}}, {NameIs("In", "n1")})};
  EXPECT_TRUE(NodeAffinityMatches(terms, {{"zone", "a"}}, "n1"));
  EXPECT_FALSE(NodeAffinityMatches(terms, {{"zone", "b"}}, "n1"));
  EXPECT_FALSE(NodeAffinityMatches(terms, {{"zone", "a"}}, "n2"));
}

TEST(NodeAffinityMatchesTest, TermsAreOredAndAnEmptyTermMatchesNothing) {
  const std::vector<NodeSelectorTerm> terms = {Term({}, {NameIs("In", "n1")}),
                                               Term({{"zone", "In", {"b"}}}, {})};
  EXPECT_TRUE(NodeAffinityMatches(terms, {{"zone", "b"}}, "n2"));
  EXPECT_FALSE(NodeAffinityMatches(terms, {{"zone", "a"}}, "n2"));
  EXPECT_FALSE(NodeAffinityMatches({NodeSelectorTerm{}}, {{"zone", "a"}}, "n1"));
}

// Kubernetes' PreferredSchedulingTerms.Score: the weights of the matching terms add up; a term
// of weight 0 or an empty preference counts for nothing.
TEST(PreferredAffinityScoreTest, SumsTheWeightsOfTheMatchingTerms) {
  const std::vector<PreferredSchedulingTerm> terms = {
      {10, Term({{"zone", "In", {"a"}}}, {})},
      {100, Term({{"gpu", "Exists", {}}}, {})},
      {7, Term({}, {NameIs("In", "n1")})},
      {1, Term({{"zone", "In", {"a"}}}, {NameIs("In", "n2")})},
      {0, Term({{"zone", "In", {"a"}}}, {})},
      {50, NodeSelectorTerm{}}};
  EXPECT_EQ(PreferredAffinityScore(terms, {{"zone", "a"}, {"gpu", "x"}}, "n1"), 117);
  EXPECT_EQ(PreferredAffinityScore(terms, {{"zone", "a"}}, "n2"), 11);
  EXPECT_EQ(PreferredAffinityScore(terms, {{"zone", "b"}}, "n3"), 0);
  EXPECT_EQ(PreferredAffinityScore({}, {{"zone", "a"}}, "n1"), 0);
}

// Kueue's flavorSelector keeps only the expressions on the flavor's label keys: a term left with
// none, as one with only matchFields is, lets every flavor through.
TEST(RequiredAffinityMatchesFlavorTest, MatchFieldsDoNotNarrowFlavors) {
  ResourceFlavorSpec flavor;
  flavor.name = "spot";
  flavor.node_labels = {{"zone", "a"}};
  EXPECT_TRUE(RequiredAffinityMatchesFlavor({Term({}, {NameIs("In", "n9")})}, flavor));
  EXPECT_TRUE(
      RequiredAffinityMatchesFlavor({Term({{"zone", "In", {"a"}}}, {NameIs("In", "n9")})}, flavor));
  EXPECT_FALSE(
      RequiredAffinityMatchesFlavor({Term({{"zone", "In", {"b"}}}, {NameIs("In", "n9")})}, flavor));
}

}  // namespace
}  // namespace tollgate::core
