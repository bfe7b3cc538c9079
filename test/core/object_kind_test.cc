#include "core/object_kind.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "absl/strings/ascii.h"

namespace tollgate::core {
namespace {

constexpr ObjectKind kEveryConfigKind[] = {
    ObjectKind::kNamespace,        ObjectKind::kResourceFlavor,
    ObjectKind::kClusterQueue,     ObjectKind::kCohort,
    ObjectKind::kLocalQueue,       ObjectKind::kWorkloadPriorityClass,
    ObjectKind::kPriorityClass,    ObjectKind::kRole,
    ObjectKind::kRoleBinding,      ObjectKind::kQueueGrant,
    ObjectKind::kAdmissionCheck,   ObjectKind::kTopology,
    ObjectKind::kMultiKueueConfig, ObjectKind::kMultiKueueCluster};

TEST(ObjectKindTest, EveryConfigKindHasExactlyOneRow) {
  for (ObjectKind kind : kEveryConfigKind) {
    int rows = 0;
    for (const KindTraits& t : AllKinds()) rows += t.config_kind == kind ? 1 : 0;
    EXPECT_EQ(rows, 1) << ObjectKindName(kind);
    EXPECT_EQ(TraitsOf(kind).config_kind, kind);
  }
  // The config kinds and Workload, nothing else.
  EXPECT_EQ(AllKinds().size(), std::size(kEveryConfigKind) + 1);
  ASSERT_NE(FindKind("Workload"), nullptr);
  EXPECT_FALSE(FindKind("Workload")->config_kind.has_value());
}

TEST(ObjectKindTest, NamesAreUniqueAcrossEveryWayOfSpellingAKind) {
  // The CLI resolves a word against all of these; two kinds sharing one would be ambiguous.
  std::set<std::string> seen;
  for (const KindTraits& t : AllKinds()) {
    // Named: a temporary in the range's initializer list would die before the loop body runs.
    const std::string lower = absl::AsciiStrToLower(t.name);
    for (absl::string_view word : {absl::string_view(lower), t.plural}) {
      EXPECT_TRUE(seen.insert(std::string(word)).second) << word;
    }
    for (absl::string_view word : t.short_names) {
      EXPECT_TRUE(seen.insert(std::string(word)).second) << word;
    }
    EXPECT_FALSE(t.versions.empty()) << t.name;
  }
}

TEST(ObjectKindTest, FactsTheServiceReliesOn) {
  EXPECT_STREQ(ObjectKindName(ObjectKind::kClusterQueue), "ClusterQueue");
  EXPECT_TRUE(TraitsOf(ObjectKind::kLocalQueue).namespaced);
  EXPECT_FALSE(TraitsOf(ObjectKind::kClusterQueue).namespaced);
  EXPECT_EQ(TraitsOf(ObjectKind::kPriorityClass).group, "scheduling.k8s.io");
  EXPECT_EQ(TraitsOf(ObjectKind::kNamespace).group, "");
  // The authorization policy kinds are Tollgate's own and never reach the scheduler.
  for (ObjectKind kind : {ObjectKind::kRole, ObjectKind::kRoleBinding, ObjectKind::kQueueGrant}) {
    EXPECT_TRUE(IsPolicyKind(kind)) << ObjectKindName(kind);
    EXPECT_EQ(TraitsOf(kind).group, "tollgate.dev");
    EXPECT_FALSE(TraitsOf(kind).namespaced);
  }
  EXPECT_FALSE(IsPolicyKind(ObjectKind::kClusterQueue));
  EXPECT_LT(TraitsOf(ObjectKind::kRole).apply_order,
            TraitsOf(ObjectKind::kRoleBinding).apply_order);
  // References resolve on restart: flavors and priority classes before the queues using them,
  // cohorts before ClusterQueues, ClusterQueues before LocalQueues.
  EXPECT_LT(TraitsOf(ObjectKind::kNamespace).apply_order,
            TraitsOf(ObjectKind::kResourceFlavor).apply_order);
  EXPECT_LT(TraitsOf(ObjectKind::kResourceFlavor).apply_order,
            TraitsOf(ObjectKind::kCohort).apply_order);
  EXPECT_LT(TraitsOf(ObjectKind::kWorkloadPriorityClass).apply_order,
            TraitsOf(ObjectKind::kCohort).apply_order);
  EXPECT_LT(TraitsOf(ObjectKind::kCohort).apply_order,
            TraitsOf(ObjectKind::kClusterQueue).apply_order);
  EXPECT_LT(TraitsOf(ObjectKind::kClusterQueue).apply_order,
            TraitsOf(ObjectKind::kLocalQueue).apply_order);
  EXPECT_EQ(FindKind("clusterqueue"), nullptr);  // manifests spell kinds exactly
}

}  // namespace
}  // namespace tollgate::core
