// The configuration kinds' codec: every validation rule rejects with the field path and the
// offending value in the message, valid objects convert with Kueue's defaults, and
// core -> proto -> core is the identity.

#include "services/api/config_codec.h"

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "core/quantity.h"
#include "core/types.h"
#include "core/workload.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/api/api_validation.h"
#include "test/services/api/codec_test_support.h"
#include "tollgate/v1/objects.pb.h"

namespace tollgate::api {
namespace {

using namespace ::tollgate::api::codec_test;  // NOLINT: the shared builders
using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(ClusterQueueFromProtoTest, RejectsEveryInvalidField) {
  using CQ = v1::ClusterQueue;
  auto rg = [](CQ& p, int i) { return p.mutable_spec()->mutable_resource_groups(i); };
  auto quota = [&](CQ& p, int g, int f, int r) {
    return rg(p, g)->mutable_flavors(f)->mutable_resources(r);
  };
  auto sel = [](CQ& p) { return p.mutable_spec()->mutable_namespace_selector(); };
  auto expr = [&](CQ& p, const std::string& key, const std::string& op,
                  std::vector<std::string> values) {
    v1::LabelSelectorRequirement* e = sel(p)->add_match_expressions();
    e->set_key(key);
    e->set_operator_(op);
    for (const std::string& v : values) e->add_values(v);
  };
  std::vector<InvalidCase<CQ>> cases = {
      {"name",
       [](CQ& p) { p.mutable_metadata()->set_name("Team_A"); },
       {"metadata.name", "\"Team_A\" is not a valid name"}},
      {"empty name",
       [](CQ& p) { p.mutable_metadata()->clear_name(); },
       {"ClusterQueue <unnamed>: metadata.name: required value"}},
      {"name too long",
       [](CQ& p) { p.mutable_metadata()->set_name(Repeat('a', 254)); },
       {"metadata.name", "no more than 253"}},
      {"cohort", [](CQ& p) { p.mutable_spec()->set_cohort("Org!"); }, {"spec.cohort", "\"Org!\""}},
      {"too many resource groups",
       [](CQ& p) {
         p.mutable_spec()->clear_resource_groups();
         for (int i = 0; i < 17; ++i) {
           *p.mutable_spec()->add_resource_groups() = WideGroup(1, i, 1, i);
         }
       },
       {"spec.resourceGroups:", "at most 16", "got 17"}},
      {"no covered resources",
       [&](CQ& p) { rg(p, 1)->clear_covered_resources(); },
       {"spec.resourceGroups[1].coveredResources:", "at least 1", "got 0"}},
      {"too many covered resources",
       [](CQ& p) { *p.mutable_spec()->mutable_resource_groups(1) = WideGroup(65, 0, 1, 0); },
       {"spec.resourceGroups[1].coveredResources:", "at most 64", "got 65"}},
      {"covered resource name",
       [&](CQ& p) { rg(p, 1)->set_covered_resources(0, "-gpu"); },
       {"spec.resourceGroups[1].coveredResources[0]:", "\"-gpu\""}},
      {"resource in two groups",
       [&](CQ& p) { rg(p, 1)->set_covered_resources(0, "cpu"); },
       {"spec.resourceGroups[1].coveredResources[0]:", "duplicate", "\"cpu\""}},
      {"resource twice in a group",
       [&](CQ& p) { rg(p, 0)->set_covered_resources(1, "cpu"); },
       {"spec.resourceGroups[0].coveredResources[1]:", "duplicate", "\"cpu\""}},
      {"no flavors",
       [&](CQ& p) { rg(p, 1)->clear_flavors(); },
       {"spec.resourceGroups[1].flavors:", "at least 1", "got 0"}},
      {"too many flavors",
       [](CQ& p) { *p.mutable_spec()->mutable_resource_groups(1) = WideGroup(1, 0, 65, 0); },
       {"spec.resourceGroups[1].flavors:", "at most 64", "got 65"}},
      {"flavor name",
       [&](CQ& p) { rg(p, 0)->mutable_flavors(1)->set_name("Spot_1"); },
       {"spec.resourceGroups[0].flavors[1].name:", "\"Spot_1\""}},
      {"empty flavor name",
       [&](CQ& p) { rg(p, 0)->mutable_flavors(1)->clear_name(); },
       {"spec.resourceGroups[0].flavors[1].name: required value"}},
      {"flavor in two groups",
       [&](CQ& p) { rg(p, 1)->mutable_flavors(0)->set_name("spot"); },
       {"spec.resourceGroups[1].flavors[0].name:", "duplicate", "\"spot\""}},
      {"flavor twice in a group",
       [&](CQ& p) { rg(p, 0)->mutable_flavors(1)->set_name("on-demand"); },
       {"spec.resourceGroups[0].flavors[1].name:", "duplicate", "\"on-demand\""}},
      {"flavor misses a resource",
       [&](CQ& p) { rg(p, 0)->mutable_flavors(1)->mutable_resources()->RemoveLast(); },
       {"spec.resourceGroups[0].flavors[1].resources:", "2 coveredResources", "got 1"}},
      {"flavor has an extra resource",
       [&](CQ& p) { *rg(p, 0)->mutable_flavors(1)->add_resources() = Quota("pods", "1"); },
       {"spec.resourceGroups[0].flavors[1].resources:", "got 3"}},
      {"flavor resources out of order",
       [&](CQ& p) { rg(p, 0)->mutable_flavors(1)->mutable_resources()->SwapElements(0, 1); },
       {"spec.resourceGroups[0].flavors[1].resources[0].name:", "\"cpu\"", "\"memory\""}},
      {"nominal quota not a quantity",
       [&](CQ& p) { quota(p, 0, 1, 0)->set_nominal_quota("abc"); },
       {"ClusterQueue team-a: spec.resourceGroups[0].flavors[1].resources[0].nominalQuota: "
        "invalid quantity \"abc\": "}},
      {"nominal quota empty",
       [&](CQ& p) { quota(p, 0, 1, 0)->clear_nominal_quota(); },
       {"spec.resourceGroups[0].flavors[1].resources[0].nominalQuota:", "\"\""}},
      {"nominal quota negative",
       [&](CQ& p) { quota(p, 0, 1, 1)->set_nominal_quota("-1Gi"); },
       {"spec.resourceGroups[0].flavors[1].resources[1].nominalQuota:",
        "greater than or equal to 0", "\"-1Gi\""}},
      {"borrowing limit not a quantity",
       [&](CQ& p) { quota(p, 0, 0, 0)->set_borrowing_limit("lots"); },
       {"spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit:", "\"lots\""}},
      {"borrowing limit negative",
       [&](CQ& p) { quota(p, 0, 0, 0)->set_borrowing_limit("-2"); },
       {"spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit:", "\"-2\""}},
      {"borrowing limit without cohort",
       [&](CQ& p) {
         p.mutable_spec()->clear_cohort();
         quota(p, 0, 0, 0)->clear_lending_limit();
       },
       {"spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit:", "spec.cohort", "\"5\""}},
      {"lending limit without cohort",
       [&](CQ& p) {
         p.mutable_spec()->clear_cohort();
         quota(p, 0, 0, 0)->clear_borrowing_limit();
       },
       {"spec.resourceGroups[0].flavors[0].resources[0].lendingLimit:", "spec.cohort", "\"4\""}},
      {"lending limit not a quantity",
       [&](CQ& p) { quota(p, 0, 0, 0)->set_lending_limit("1x"); },
       {"spec.resourceGroups[0].flavors[0].resources[0].lendingLimit:", "\"1x\""}},
      {"lending limit negative",
       [&](CQ& p) { quota(p, 0, 0, 0)->set_lending_limit("-4"); },
       {"spec.resourceGroups[0].flavors[0].resources[0].lendingLimit:", "\"-4\""}},
      {"lending limit above nominal",
       [&](CQ& p) { quota(p, 0, 0, 0)->set_lending_limit("10001m"); },
       {"spec.resourceGroups[0].flavors[0].resources[0].lendingLimit:", "nominalQuota \"10\"",
        "\"10001m\""}},
      {"too many flavors in total",
       [](CQ& p) {
         p.mutable_spec()->clear_resource_groups();
         for (int i = 0; i < 5; ++i) {
           *p.mutable_spec()->add_resource_groups() = WideGroup(1, i, 60, 60 * i);
         }
       },
       {"spec.resourceGroups:", "flavors", "got 300"}},
      {"too many covered resources in total",
       [](CQ& p) {
         p.mutable_spec()->clear_resource_groups();
         for (int i = 0; i < 5; ++i) {
           *p.mutable_spec()->add_resource_groups() = WideGroup(60, 60 * i, 1, i);
         }
       },
       {"spec.resourceGroups:", "covered resources", "got 300"}},
      {"too many flavor-resource combinations",
       [](CQ& p) { *p.mutable_spec()->mutable_resource_groups(1) = WideGroup(60, 0, 9, 0); },
       {"spec.resourceGroups[1]:", "combinations", "got 540"}},
      {"queueing strategy",
       [](CQ& p) { p.mutable_spec()->set_queueing_strategy("FIFO"); },
       {"spec.queueingStrategy:", "\"FIFO\"", "\"StrictFIFO\""}},
      {"within cluster queue",
       [](CQ& p) { p.mutable_spec()->mutable_preemption()->set_within_cluster_queue("Any"); },
       {"spec.preemption.withinClusterQueue:", "\"Any\""}},
      {"reclaim within cohort",
       [](CQ& p) {
         p.mutable_spec()->mutable_preemption()->set_reclaim_within_cohort("Sometimes");
       },
       {"spec.preemption.reclaimWithinCohort:", "\"Sometimes\""}},
      {"borrow within cohort policy",
       [](CQ& p) {
         p.mutable_spec()->mutable_preemption()->set_reclaim_within_cohort("Any");
         p.mutable_spec()->mutable_preemption()->mutable_borrow_within_cohort()->set_policy(
             "Always");
       },
       {"spec.preemption.borrowWithinCohort.policy:", "\"Always\""}},
      {"threshold without LowerPriority",
       [](CQ& p) {
         p.mutable_spec()
             ->mutable_preemption()
             ->mutable_borrow_within_cohort()
             ->set_max_priority_threshold(100);
       },
       {"spec.preemption.borrowWithinCohort.maxPriorityThreshold:", "100"}},
      {"borrow preemption without reclaim",
       [](CQ& p) {
         p.mutable_spec()->mutable_preemption()->set_reclaim_within_cohort("Never");
         p.mutable_spec()->mutable_preemption()->mutable_borrow_within_cohort()->set_policy(
             "LowerPriority");
       },
       {"spec.preemption:", "reclaimWithinCohort=Never", "\"LowerPriority\""}},
      {"borrow preemption with defaulted reclaim",
       [](CQ& p) {
         p.mutable_spec()->mutable_preemption()->mutable_borrow_within_cohort()->set_policy(
             "LowerPriority");
       },
       {"spec.preemption:", "\"LowerPriority\""}},
      {"when can borrow",
       [](CQ& p) { p.mutable_spec()->mutable_flavor_fungibility()->set_when_can_borrow("Maybe"); },
       {"spec.flavorFungibility.whenCanBorrow:", "\"Maybe\""}},
      {"when can preempt",
       [](CQ& p) {
         p.mutable_spec()->mutable_flavor_fungibility()->set_when_can_preempt("Borrow");
       },
       {"spec.flavorFungibility.whenCanPreempt:", "\"Borrow\""}},
      {"fungibility preference",
       [](CQ& p) {
         v1::FlavorFungibility* f = p.mutable_spec()->mutable_flavor_fungibility();
         f->set_when_can_borrow("TryNextFlavor");
         f->set_when_can_preempt("TryNextFlavor");
         f->set_preference("PreemptionFirst");
       },
       {"spec.flavorFungibility.preference:", "unsupported value \"PreemptionFirst\"",
        "\"PreemptionOverBorrowing\""}},
      {"fungibility preference with the default whenCanBorrow",
       [](CQ& p) {
         p.mutable_spec()->mutable_flavor_fungibility()->set_when_can_preempt("TryNextFlavor");
         p.mutable_spec()->mutable_flavor_fungibility()->set_preference("BorrowingOverPreemption");
       },
       {"spec.flavorFungibility.preference:", "\"BorrowingOverPreemption\"",
        "whenCanBorrow \"Borrow\" (the default)"}},
      {"fungibility preference with whenCanPreempt MayStopSearch",
       [](CQ& p) {
         v1::FlavorFungibility* f = p.mutable_spec()->mutable_flavor_fungibility();
         f->set_when_can_borrow("TryNextFlavor");
         f->set_when_can_preempt("MayStopSearch");
         f->set_preference("PreemptionOverBorrowing");
       },
       {"spec.flavorFungibility.preference:", "whenCanPreempt \"MayStopSearch\""}},
      {"weight not a quantity",
       [](CQ& p) { p.mutable_spec()->mutable_fair_sharing()->set_weight("heavy"); },
       {"spec.fairSharing.weight:", "invalid quantity \"heavy\""}},
      {"weight negative",
       [](CQ& p) { p.mutable_spec()->mutable_fair_sharing()->set_weight("-1"); },
       {"spec.fairSharing.weight:", "\"-1\""}},
      {"weight collapses to zero",
       [](CQ& p) { p.mutable_spec()->mutable_fair_sharing()->set_weight("1n"); },
       {"spec.fairSharing.weight:", "\"1n\""}},
      {"stop policy",
       [](CQ& p) { p.mutable_spec()->set_stop_policy("Pause"); },
       {"spec.stopPolicy:", "\"Pause\""}},
      {"admission mode",
       [](CQ& p) { p.mutable_spec()->mutable_admission_scope()->set_admission_mode("Fair"); },
       {"spec.admissionScope.admissionMode:", "\"Fair\""}},
      {"selector label key",
       [&](CQ& p) { (*sel(p)->mutable_match_labels())["bad key"] = "x"; },
       {"spec.namespaceSelector.matchLabels[bad key]:", "\"bad key\""}},
      {"selector label value",
       [&](CQ& p) { (*sel(p)->mutable_match_labels())["team"] = "a b"; },
       {"spec.namespaceSelector.matchLabels[team]:", "\"a b\""}},
      {"selector expression key",
       [&](CQ& p) { expr(p, "-team", "Exists", {}); },
       {"spec.namespaceSelector.matchExpressions[0].key:", "\"-team\""}},
      {"selector expression operator",
       [&](CQ& p) { expr(p, "team", "Like", {"a"}); },
       {"spec.namespaceSelector.matchExpressions[0].operator:", "\"Like\""}},
      {"selector expression empty operator",
       [&](CQ& p) { expr(p, "team", "", {"a"}); },
       {"spec.namespaceSelector.matchExpressions[0].operator:", "\"\""}},
      {"selector In without values",
       [&](CQ& p) { expr(p, "team", "In", {}); },
       {"spec.namespaceSelector.matchExpressions[0].values:", "\"In\""}},
      {"selector NotIn without values",
       [&](CQ& p) { expr(p, "team", "NotIn", {}); },
       {"spec.namespaceSelector.matchExpressions[0].values:", "\"NotIn\""}},
      {"selector Exists with values",
       [&](CQ& p) { expr(p, "team", "Exists", {"a"}); },
       {"spec.namespaceSelector.matchExpressions[0].values:", "\"Exists\"", "\"a\""}},
      {"selector DoesNotExist with values",
       [&](CQ& p) { expr(p, "team", "DoesNotExist", {"b"}); },
       {"spec.namespaceSelector.matchExpressions[0].values:", "\"DoesNotExist\"", "\"b\""}},
      {"selector expression value",
       [&](CQ& p) {
         expr(p, "team", "In", {"ok"});
         expr(p, "team", "In", {"a", "not ok"});
       },
       {"spec.namespaceSelector.matchExpressions[1].values[1]:", "\"not ok\""}},
      {"max preempted workloads",
       [](CQ& p) { p.mutable_spec()->set_max_preempted_workloads(-1); },
       {"spec.maxPreemptedWorkloads:", "got -1"}},
      {"preemption rate limit above history",
       [](CQ& p) { p.mutable_spec()->mutable_preemption_rate_limit()->set_max_preemptions(17); },
       {"spec.preemptionRateLimit.maxPreemptions:", "got 17"}},
      {"preemption rate limit without window",
       [](CQ& p) { p.mutable_spec()->mutable_preemption_rate_limit()->set_max_preemptions(2); },
       {"spec.preemptionRateLimit.windowSeconds:", "got 0"}},
  };
  Append(cases, MetadataCases<CQ>());
  ExpectAllRejected(ValidClusterQueue(), ClusterQueueFromProto, "ClusterQueue", cases);
}

TEST(ClusterQueueFromProtoTest, ConvertsQuantitiesAndPolicies) {
  v1::ClusterQueue cq = ValidClusterQueue();
  v1::ClusterQueueSpec* s = cq.mutable_spec();
  s->set_queueing_strategy("StrictFIFO");
  (*s->mutable_namespace_selector()->mutable_match_labels())["team"] = "a";
  v1::LabelSelectorRequirement* e = s->mutable_namespace_selector()->add_match_expressions();
  e->set_key("env");
  e->set_operator_("In");
  e->add_values("prod");
  e->add_values("staging");
  s->mutable_preemption()->set_within_cluster_queue("LowerOrNewerEqualPriority");
  s->mutable_preemption()->set_reclaim_within_cohort("Any");
  s->mutable_preemption()->mutable_borrow_within_cohort()->set_policy("LowerPriority");
  s->mutable_preemption()->mutable_borrow_within_cohort()->set_max_priority_threshold(-5);
  s->mutable_flavor_fungibility()->set_when_can_borrow("TryNextFlavor");
  s->mutable_flavor_fungibility()->set_when_can_preempt("Preempt");
  s->mutable_fair_sharing()->set_weight("0.5");
  s->set_stop_policy("HoldAndDrain");
  s->mutable_admission_scope()->set_admission_mode("UsageBasedAdmissionFairSharing");
  s->set_max_preempted_workloads(3);
  s->mutable_preemption_rate_limit()->set_max_preemptions(2);
  s->mutable_preemption_rate_limit()->set_window_seconds(3600);

  absl::StatusOr<core::ClusterQueueSpec> got = ClusterQueueFromProto(cq);
  ASSERT_TRUE(got.ok()) << got.status();

  core::ClusterQueueSpec want;
  want.name = "team-a";
  want.cohort = "org";
  want.resource_groups = {
      core::ResourceGroupSpec{
          {"cpu", "memory"},
          {{"on-demand", {Quota("cpu", 10000, 5000, 4000), Quota("memory", 64 * kGi)}},
           {"spot", {Quota("cpu", 1500), Quota("memory", 32 * kGi)}}}},
      core::ResourceGroupSpec{{"nvidia.com/gpu"}, {{"a100", {Quota("nvidia.com/gpu", 8)}}}},
  };
  want.queueing_strategy = core::QueueingStrategy::kStrictFifo;
  want.namespace_selector =
      core::LabelSelector{{{"team", "a"}}, {{"env", "In", {"prod", "staging"}}}};
  want.preemption = {core::PreemptionPolicy::kLowerOrNewerEqualPriority,
                     core::PreemptionPolicy::kAny, core::BorrowWithinCohortPolicy::kLowerPriority,
                     -5};
  want.flavor_fungibility.when_can_borrow = core::WhenCanBorrow::kTryNextFlavor;
  want.flavor_fungibility.when_can_preempt = core::WhenCanPreempt::kPreempt;
  want.fair_weight = 0.5;
  want.stop_policy = core::StopPolicy::kHoldAndDrain;
  want.admission_mode = core::AdmissionMode::kUsageBasedFairSharing;
  want.max_preempted_workloads = 3;
  want.max_preemptions_per_window = 2;
  want.preemption_window = absl::Hours(1);
  EXPECT_EQ(*got, want);
}

TEST(ClusterQueueFromProtoTest, EmptyStringsTakeKueueDefaults) {
  v1::ClusterQueue cq;
  cq.mutable_metadata()->set_name("minimal");
  // Cluster-scoped: a namespace is dropped, as the API server does.
  cq.mutable_metadata()->set_namespace_("ignored");
  absl::StatusOr<core::ClusterQueueSpec> got = ClusterQueueFromProto(cq);
  ASSERT_TRUE(got.ok()) << got.status();
  core::ClusterQueueSpec want;
  want.name = "minimal";
  EXPECT_EQ(*got, want);
  EXPECT_EQ(got->fair_weight, 1.0);
  EXPECT_EQ(got->queueing_strategy, core::QueueingStrategy::kBestEffortFifo);
  EXPECT_EQ(got->flavor_fungibility.when_can_borrow, core::WhenCanBorrow::kBorrow);
  EXPECT_EQ(got->flavor_fungibility.when_can_preempt, core::WhenCanPreempt::kTryNextFlavor);
  EXPECT_EQ(got->admission_mode, core::AdmissionMode::kDefault);
  EXPECT_FALSE(got->namespace_selector.has_value());

  // Present but empty selects everything, yet stays distinguishable from absent.
  cq.mutable_spec()->mutable_namespace_selector();
  got = ClusterQueueFromProto(cq);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->namespace_selector, core::LabelSelector{});
}

TEST(ClusterQueueFromProtoTest, AcceptsKueueV1beta2FungibilitySpelling) {
  v1::ClusterQueue cq = ValidClusterQueue();
  cq.mutable_spec()->mutable_flavor_fungibility()->set_when_can_borrow("MayStopSearch");
  cq.mutable_spec()->mutable_flavor_fungibility()->set_when_can_preempt("MayStopSearch");
  absl::StatusOr<core::ClusterQueueSpec> got = ClusterQueueFromProto(cq);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->flavor_fungibility.when_can_borrow, core::WhenCanBorrow::kBorrow);
  EXPECT_EQ(got->flavor_fungibility.when_can_preempt, core::WhenCanPreempt::kPreempt);
}

TEST(ClusterQueueFromProtoTest, FungibilityPreferenceRoundTripsAndStaysUnsetWhenUnset) {
  v1::ClusterQueue cq = ValidClusterQueue();
  v1::FlavorFungibility* f = cq.mutable_spec()->mutable_flavor_fungibility();
  f->set_when_can_borrow("TryNextFlavor");
  f->set_when_can_preempt("TryNextFlavor");
  absl::StatusOr<core::ClusterQueueSpec> unset = ClusterQueueFromProto(cq);
  ASSERT_TRUE(unset.ok()) << unset.status();
  EXPECT_FALSE(unset->flavor_fungibility.preference.has_value());
  // Written back unset: BorrowingOverPreemption would be refused with other policies.
  EXPECT_EQ(ClusterQueueToProto(*unset).spec().flavor_fungibility().preference(), "");

  for (const auto& [name, value] :
       {std::pair{"BorrowingOverPreemption", core::FungibilityPreference::kBorrowingOverPreemption},
        std::pair{"PreemptionOverBorrowing",
                  core::FungibilityPreference::kPreemptionOverBorrowing}}) {
    f->set_preference(name);
    absl::StatusOr<core::ClusterQueueSpec> got = ClusterQueueFromProto(cq);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(got->flavor_fungibility.preference, value);
    const v1::ClusterQueue proto = ClusterQueueToProto(*got);
    EXPECT_EQ(proto.spec().flavor_fungibility().preference(), name);
    absl::StatusOr<core::ClusterQueueSpec> again = ClusterQueueFromProto(proto);
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ(*again, *got);
  }
}

TEST(ClusterQueueFromProtoTest, LendingLimitMayEqualNominal) {
  v1::ClusterQueue cq = ValidClusterQueue();
  cq.mutable_spec()
      ->mutable_resource_groups(0)
      ->mutable_flavors(0)
      ->mutable_resources(0)
      ->set_lending_limit("10000m");
  absl::StatusOr<core::ClusterQueueSpec> got = ClusterQueueFromProto(cq);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->resource_groups[0].flavors[0].resources[0].lending_limit, 10000);
}

// Kueue's AmountFromQuantity: quotas too large for the int64 scalar are unlimited, not refused.
TEST(ClusterQueueFromProtoTest, QuotasBeyondInt64AreUnlimited) {
  v1::ClusterQueue cq = ValidClusterQueue();
  v1::ResourceQuota* cpu =
      cq.mutable_spec()->mutable_resource_groups(0)->mutable_flavors(0)->mutable_resources(0);
  cpu->set_nominal_quota("1E");
  cpu->set_borrowing_limit("2E");
  cpu->set_lending_limit("1E");
  absl::StatusOr<core::ClusterQueueSpec> got = ClusterQueueFromProto(cq);
  ASSERT_TRUE(got.ok()) << got.status();
  const core::ResourceQuotaSpec& quota = got->resource_groups[0].flavors[0].resources[0];
  const int64_t kUnlimited = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(quota.nominal, kUnlimited);
  EXPECT_EQ(quota.borrowing_limit, kUnlimited);
  EXPECT_EQ(quota.lending_limit, kUnlimited);
  // It reads back as the scalar, which parses to the same spec.
  const v1::ClusterQueue proto = ClusterQueueToProto(*got);
  EXPECT_EQ(proto.spec().resource_groups(0).flavors(0).resources(0).nominal_quota(),
            "9223372036854775807m");
  absl::StatusOr<core::ClusterQueueSpec> again = ClusterQueueFromProto(proto);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, *got);

  // Both unlimited, the lending limit still may not exceed the nominal quota, as Kueue compares
  // the quantities.
  cpu->set_lending_limit("3E");
  got = ClusterQueueFromProto(cq);
  ASSERT_FALSE(got.ok());
  EXPECT_THAT(got.status().message(), HasSubstr("lendingLimit"));
  EXPECT_THAT(got.status().message(), HasSubstr("\"3E\""));
}

// Kueue's AmountFromQuantity: for cpu the line is INT64_MAX / 1000 whole cores, a little below
// INT64_MAX milli-units; other resources are unlimited from INT64_MAX units on.
TEST(QuotaScalarTest, QuotasTooLargeForInt64AreUnlimited) {
  struct Case {
    std::string resource;
    std::string text;
    int64_t scalar;
  };
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  for (const Case& c : std::vector<Case>{
           {"cpu", "1E", kMax},
           {"cpu", "9223372036854776", kMax},
           {"cpu", "9223372036854775", kMax},
           {"cpu", "9223372036854774999m", 9223372036854774999},
           {"cpu", "1500m", 1500},
           {"memory", "9Ei", kMax},
           {"memory", "1e400", kMax},
           {"memory", "9223372036854775807", kMax},
           {"memory", "9223372036854775806", 9223372036854775806},
           {"memory", "64Gi", int64_t{64} << 30},
           {"example.com/gpu", "1e19", kMax},
           {"example.com/gpu", "0", 0},
       }) {
    SCOPED_TRACE(c.resource + " " + c.text);
    absl::StatusOr<core::Quantity> q = core::Quantity::Parse(c.text);
    ASSERT_TRUE(q.ok()) << q.status();
    EXPECT_EQ(codec::QuotaScalar(c.resource, *q), c.scalar);
  }
}

struct WeightCase {
  std::string text;
  double want;
};

TEST(ClusterQueueFromProtoTest, FairSharingWeightIsTheQuantityAsAFloat) {
  const std::vector<WeightCase> cases = {
      {"0.5", 0.5},
      {"2", 2.0},
      {"500m", 0.5},
      {"0", 0.0},
      {"1.5k", 1500.0},
      {"1e3", 1e3},
      {"2Ki", 2048},
      {"2n", 2e-9},
      {"+3", 3.0},
      {"0.1", 0.1},
      {"1", 1.0},
      {"10", 10.0},
      {"333333333n", 0.333333333},
  };
  for (const WeightCase& c : cases) {
    SCOPED_TRACE(c.text);
    v1::ClusterQueue cq = ValidClusterQueue();
    cq.mutable_spec()->mutable_fair_sharing()->set_weight(c.text);
    absl::StatusOr<core::ClusterQueueSpec> got = ClusterQueueFromProto(cq);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_DOUBLE_EQ(got->fair_weight, c.want);
    // And back, canonically, to the same float.
    v1::ClusterQueue back = ClusterQueueToProto(*got);
    absl::StatusOr<core::ClusterQueueSpec> again = ClusterQueueFromProto(back);
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ(again->fair_weight, got->fair_weight);
  }
}

struct WeightFormatCase {
  double weight;
  // Empty: the default weight is left unset.
  std::string want;
};

TEST(ClusterQueueToProtoTest, WeightsPrintCanonically) {
  const std::vector<WeightFormatCase> cases = {
      {0.5, "500m"}, {2.0, "2"},       {1.0, ""},
      {0.0, "0"},    {1500.0, "1500"}, {0.333333333, "333333333n"},
  };
  for (const WeightFormatCase& c : cases) {
    SCOPED_TRACE(c.weight);
    core::ClusterQueueSpec spec;
    spec.name = "q";
    spec.fair_weight = c.weight;
    const v1::ClusterQueue proto = ClusterQueueToProto(spec);
    EXPECT_EQ(proto.spec().fair_sharing().has_weight(), !c.want.empty());
    EXPECT_EQ(proto.spec().fair_sharing().weight(), c.want);
  }
}

TEST(ClusterQueueToProtoTest, RoundTripsWithCanonicalQuantities) {
  v1::ClusterQueue cq = ValidClusterQueue();
  // Spelled unusually; printed canonically.
  cq.mutable_spec()
      ->mutable_resource_groups(0)
      ->mutable_flavors(1)
      ->mutable_resources(0)
      ->set_nominal_quota("1500m");
  cq.mutable_spec()
      ->mutable_resource_groups(0)
      ->mutable_flavors(1)
      ->mutable_resources(1)
      ->set_nominal_quota("34359738368");
  cq.mutable_spec()
      ->mutable_resource_groups(1)
      ->mutable_flavors(0)
      ->mutable_resources(0)
      ->set_nominal_quota("8000m");
  cq.mutable_spec()->mutable_preemption()->set_reclaim_within_cohort("LowerPriority");
  cq.mutable_spec()->mutable_preemption()->mutable_borrow_within_cohort()->set_policy(
      "LowerPriority");
  cq.mutable_spec()
      ->mutable_preemption()
      ->mutable_borrow_within_cohort()
      ->set_max_priority_threshold(7);
  cq.mutable_spec()->mutable_namespace_selector()->add_match_expressions()->set_key("gone");
  cq.mutable_spec()->mutable_namespace_selector()->mutable_match_expressions(0)->set_operator_(
      "DoesNotExist");
  cq.mutable_spec()->mutable_fair_sharing()->set_weight("0.25");
  cq.mutable_spec()->mutable_admission_scope()->set_admission_mode("NoAdmissionFairSharing");
  absl::StatusOr<core::ClusterQueueSpec> spec = ClusterQueueFromProto(cq);
  ASSERT_TRUE(spec.ok()) << spec.status();

  const v1::ClusterQueue proto = ClusterQueueToProto(*spec);
  EXPECT_EQ(proto.metadata().name(), "team-a");
  EXPECT_EQ(proto.metadata().namespace_(), "");
  const v1::ResourceGroup& g0 = proto.spec().resource_groups(0);
  EXPECT_EQ(g0.flavors(0).resources(0).nominal_quota(), "10");
  EXPECT_EQ(g0.flavors(0).resources(0).borrowing_limit(), "5");
  EXPECT_EQ(g0.flavors(0).resources(0).lending_limit(), "4");
  EXPECT_FALSE(g0.flavors(0).resources(1).has_borrowing_limit());
  EXPECT_FALSE(g0.flavors(0).resources(1).has_lending_limit());
  EXPECT_EQ(g0.flavors(0).resources(1).nominal_quota(), "64Gi");
  EXPECT_EQ(g0.flavors(1).resources(0).nominal_quota(), "1500m");
  EXPECT_EQ(g0.flavors(1).resources(1).nominal_quota(), "32Gi");
  EXPECT_EQ(proto.spec().resource_groups(1).flavors(0).resources(0).nominal_quota(), "8");
  // Defaults are spelled out, as on a defaulted Kueue object.
  EXPECT_EQ(proto.spec().queueing_strategy(), "BestEffortFIFO");
  EXPECT_EQ(proto.spec().stop_policy(), "None");
  EXPECT_EQ(proto.spec().preemption().within_cluster_queue(), "Never");
  EXPECT_EQ(proto.spec().flavor_fungibility().when_can_borrow(), "Borrow");
  EXPECT_EQ(proto.spec().flavor_fungibility().when_can_preempt(), "TryNextFlavor");
  EXPECT_EQ(proto.spec().fair_sharing().weight(), "250m");
  EXPECT_EQ(proto.spec().admission_scope().admission_mode(), "NoAdmissionFairSharing");

  absl::StatusOr<core::ClusterQueueSpec> again = ClusterQueueFromProto(proto);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, *spec);

  // The default admission mode has no spelling; it leaves admissionScope unset.
  core::ClusterQueueSpec plain;
  plain.name = "plain";
  EXPECT_FALSE(ClusterQueueToProto(plain).spec().has_admission_scope());
  EXPECT_FALSE(ClusterQueueToProto(plain).spec().has_namespace_selector());
}

// --- Cohort --------------------------------------------------------------------------------------

TEST(CohortFromProtoTest, RejectsEveryInvalidField) {
  using C = v1::Cohort;
  auto quota = [](C& p) {
    return p.mutable_spec()->mutable_resource_groups(0)->mutable_flavors(0)->mutable_resources(0);
  };
  std::vector<InvalidCase<C>> cases = {
      {"name", [](C& p) { p.mutable_metadata()->set_name("Org"); }, {"metadata.name:", "\"Org\""}},
      {"parent",
       [](C& p) { p.mutable_spec()->set_parent("Company_1"); },
       {"spec.parent:", "\"Company_1\""}},
      {"borrowing limit without parent",
       [&](C& p) {
         p.mutable_spec()->clear_parent();
         quota(p)->clear_lending_limit();
       },
       {"spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit:", "spec.parent", "\"2\""}},
      {"lending limit without parent",
       [&](C& p) {
         p.mutable_spec()->clear_parent();
         quota(p)->clear_borrowing_limit();
       },
       {"spec.resourceGroups[0].flavors[0].resources[0].lendingLimit:", "spec.parent", "\"8\""}},
      {"nominal quota",
       [&](C& p) { quota(p)->set_nominal_quota("four"); },
       {"spec.resourceGroups[0].flavors[0].resources[0].nominalQuota:", "\"four\""}},
      {"resource name mismatch",
       [&](C& p) { quota(p)->set_name("memory"); },
       {"spec.resourceGroups[0].flavors[0].resources[0].name:", "\"memory\""}},
      {"no covered resources",
       [](C& p) { p.mutable_spec()->mutable_resource_groups(0)->clear_covered_resources(); },
       {"spec.resourceGroups[0].coveredResources:", "got 0"}},
      {"too many resource groups",
       [](C& p) {
         p.mutable_spec()->clear_resource_groups();
         for (int i = 0; i < 17; ++i) {
           *p.mutable_spec()->add_resource_groups() = WideGroup(1, i, 1, i);
         }
       },
       {"spec.resourceGroups:", "got 17"}},
      {"weight",
       [](C& p) { p.mutable_spec()->mutable_fair_sharing()->set_weight("-0.5"); },
       {"spec.fairSharing.weight:", "\"-0.5\""}},
  };
  Append(cases, MetadataCases<C>());
  ExpectAllRejected(ValidCohort(), CohortFromProto, "Cohort", cases);
}

// Kueue's webhook lets a Cohort name itself as its parent: a cycle of one, which the quota tree
// leaves out as it does any cycle (cache_test.go TestCohortCycles, "self cycle").
TEST(CohortFromProtoTest, AcceptsItselfAsParent) {
  v1::Cohort proto = ValidCohort();
  proto.mutable_spec()->set_parent(proto.metadata().name());
  absl::StatusOr<core::CohortSpec> got = CohortFromProto(proto);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->parent, got->name);
}

TEST(CohortFromProtoTest, ConvertsAndRoundTrips) {
  // Unlike a ClusterQueue, a Cohort may lend more than its own nominal quota: its quota adds to
  // its members'.
  absl::StatusOr<core::CohortSpec> got = CohortFromProto(ValidCohort());
  ASSERT_TRUE(got.ok()) << got.status();
  core::CohortSpec want;
  want.name = "org";
  want.parent = "company";
  want.resource_groups = {
      core::ResourceGroupSpec{{"cpu"}, {{"on-demand", {Quota("cpu", 4000, 2000, 8000)}}}}};
  EXPECT_EQ(*got, want);

  got->fair_weight = 3;
  const v1::Cohort proto = CohortToProto(*got);
  EXPECT_EQ(proto.metadata().name(), "org");
  EXPECT_EQ(proto.spec().parent(), "company");
  EXPECT_EQ(proto.spec().fair_sharing().weight(), "3");
  EXPECT_EQ(proto.spec().resource_groups(0).flavors(0).resources(0).lending_limit(), "8");
  absl::StatusOr<core::CohortSpec> again = CohortFromProto(proto);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, *got);
}

// --- LocalQueue ----------------------------------------------------------------------------------

TEST(LocalQueueFromProtoTest, RejectsEveryInvalidField) {
  using LQ = v1::LocalQueue;
  std::vector<InvalidCase<LQ>> cases = {
      {"name",
       [](LQ& p) { p.mutable_metadata()->set_name("Main"); },
       {"metadata.name:", "\"Main\""}},
      {"namespace",
       [](LQ& p) { p.mutable_metadata()->set_namespace_("team.a"); },
       {"metadata.namespace:", "\"team.a\""}},
      {"missing namespace",
       [](LQ& p) { p.mutable_metadata()->clear_namespace_(); },
       {"metadata.namespace: required value"}},
      {"missing cluster queue",
       [](LQ& p) { p.mutable_spec()->clear_cluster_queue(); },
       {"spec.clusterQueue: required value"}},
      {"cluster queue",
       [](LQ& p) { p.mutable_spec()->set_cluster_queue("CQ!"); },
       {"spec.clusterQueue:", "\"CQ!\""}},
      {"stop policy",
       [](LQ& p) { p.mutable_spec()->set_stop_policy("Drain"); },
       {"spec.stopPolicy:", "\"Drain\""}},
      {"weight",
       [](LQ& p) { p.mutable_spec()->mutable_fair_sharing()->set_weight("1 "); },
       {"spec.fairSharing.weight:", "\"1 \""}},
  };
  Append(cases, MetadataCases<LQ>());
  ExpectAllRejected(ValidLocalQueue(), LocalQueueFromProto, "LocalQueue", cases);
}

TEST(LocalQueueFromProtoTest, ConvertsAndRoundTrips) {
  v1::LocalQueue lq = ValidLocalQueue();
  lq.mutable_spec()->set_stop_policy("Hold");
  lq.mutable_spec()->mutable_fair_sharing()->set_weight("2");
  absl::StatusOr<core::LocalQueueSpec> got = LocalQueueFromProto(lq);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got,
            (core::LocalQueueSpec{"team-a", "main.queue", "team-a", core::StopPolicy::kHold, 2.0}));
  const v1::LocalQueue proto = LocalQueueToProto(*got);
  EXPECT_EQ(proto.metadata().namespace_(), "team-a");
  EXPECT_EQ(proto.metadata().name(), "main.queue");
  EXPECT_EQ(proto.spec().stop_policy(), "Hold");
  absl::StatusOr<core::LocalQueueSpec> again = LocalQueueFromProto(proto);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, *got);
}

// --- Namespace -----------------------------------------------------------------------------------

TEST(NamespaceFromProtoTest, RejectsEveryInvalidField) {
  using NS = v1::Namespace;
  std::vector<InvalidCase<NS>> cases = {
      // A namespace name is a single DNS label.
      {"dotted name",
       [](NS& p) { p.mutable_metadata()->set_name("team.a"); },
       {"metadata.name:", "\"team.a\""}},
      {"long name",
       [](NS& p) { p.mutable_metadata()->set_name(Repeat('n', 64)); },
       {"metadata.name:", "no more than 63"}},
  };
  Append(cases, MetadataCases<NS>());
  ExpectAllRejected(ValidNamespace(), NamespaceFromProto, "Namespace", cases);
}

TEST(NamespaceFromProtoTest, KeepsLabelsAndRoundTrips) {
  absl::StatusOr<core::NamespaceSpec> got = NamespaceFromProto(ValidNamespace());
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, (core::NamespaceSpec{"team-a", {{"kubernetes.io/metadata.name", "team-a"}}}));
  absl::StatusOr<core::NamespaceSpec> again = NamespaceFromProto(NamespaceToProto(*got));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, *got);
}

// --- ResourceFlavor ------------------------------------------------------------------------------

TEST(ResourceFlavorFromProtoTest, RejectsEveryInvalidField) {
  using RF = v1::ResourceFlavor;
  auto taint = [](RF& p, const std::string& key, const std::string& value,
                  const std::string& effect) {
    v1::Taint* t = p.mutable_spec()->add_node_taints();
    t->set_key(key);
    t->set_value(value);
    t->set_effect(effect);
  };
  auto tol = [](RF& p) {
    p.mutable_spec()->clear_tolerations();
    return p.mutable_spec()->add_tolerations();
  };
  std::vector<InvalidCase<RF>> cases = {
      {"name",
       [](RF& p) { p.mutable_metadata()->set_name("Spot"); },
       {"metadata.name:", "\"Spot\""}},
      {"node label key",
       [](RF& p) { (*p.mutable_spec()->mutable_node_labels())["zone/a/b"] = "x"; },
       {"spec.nodeLabels[zone/a/b]:", "\"zone/a/b\""}},
      {"node label value",
       [](RF& p) { (*p.mutable_spec()->mutable_node_labels())["zone"] = "-us"; },
       {"spec.nodeLabels[zone]:", "\"-us\""}},
      {"too many node labels",
       [](RF& p) {
         for (int i = 0; i < 8; ++i) {
           (*p.mutable_spec()->mutable_node_labels())[absl::StrCat("l", i)] = "v";
         }
       },
       {"spec.nodeLabels:", "at most 8", "got 9"}},
      {"taint without key",
       [&](RF& p) { taint(p, "", "v", "NoSchedule"); },
       {"spec.nodeTaints[1].key: required value"}},
      {"taint key",
       [&](RF& p) { taint(p, "bad key", "v", "NoSchedule"); },
       {"spec.nodeTaints[1].key:", "\"bad key\""}},
      {"taint value",
       [&](RF& p) { taint(p, "k", "bad value", "NoSchedule"); },
       {"spec.nodeTaints[1].value:", "\"bad value\""}},
      {"taint without effect",
       [&](RF& p) { taint(p, "k", "v", ""); },
       {"spec.nodeTaints[1].effect:", "\"\"", "\"NoExecute\""}},
      {"taint effect",
       [&](RF& p) { taint(p, "k", "v", "NoRun"); },
       {"spec.nodeTaints[1].effect:", "\"NoRun\""}},
      {"duplicate taint",
       [&](RF& p) { taint(p, "spot", "false", "NoSchedule"); },
       {"spec.nodeTaints[1]:", "\"spot\"", "\"NoSchedule\""}},
      {"too many taints",
       [&](RF& p) {
         for (int i = 0; i < 8; ++i) taint(p, absl::StrCat("t", i), "", "NoExecute");
       },
       {"spec.nodeTaints:", "at most 8", "got 9"}},
      {"toleration operator",
       [&](RF& p) {
         v1::Toleration* t = tol(p);
         t->set_key("k");
         t->set_operator_("Matches");
       },
       {"spec.tolerations[0].operator:", "\"Matches\""}},
      {"toleration Exists with value",
       [&](RF& p) {
         v1::Toleration* t = tol(p);
         t->set_key("k");
         t->set_operator_("Exists");
         t->set_value("v1");
       },
       {"spec.tolerations[0].value:", "\"v1\""}},
      {"toleration without key needs Exists",
       [&](RF& p) { tol(p)->set_value("v"); },
       {"spec.tolerations[0].operator:", "\"Exists\"", "\"\""}},
      {"toleration key",
       [&](RF& p) { tol(p)->set_key("-k"); },
       {"spec.tolerations[0].key:", "\"-k\""}},
      {"toleration value",
       [&](RF& p) {
         v1::Toleration* t = tol(p);
         t->set_key("k");
         t->set_value("a value");
       },
       {"spec.tolerations[0].value:", "\"a value\""}},
      {"toleration effect",
       [&](RF& p) {
         v1::Toleration* t = tol(p);
         t->set_key("k");
         t->set_effect("Always");
       },
       {"spec.tolerations[0].effect:", "\"Always\""}},
      {"toleration seconds without NoExecute",
       [&](RF& p) {
         v1::Toleration* t = tol(p);
         t->set_key("k");
         t->set_effect("NoSchedule");
         t->set_toleration_seconds(30);
       },
       {"spec.tolerations[0].tolerationSeconds:", "30", "\"NoSchedule\""}},
      {"too many tolerations",
       [](RF& p) {
         for (int i = 0; i < 8; ++i) {
           v1::Toleration* t = p.mutable_spec()->add_tolerations();
           t->set_key(absl::StrCat("t", i));
         }
       },
       {"spec.tolerations:", "at most 8", "got 9"}},
  };
  Append(cases, MetadataCases<RF>());
  ExpectAllRejected(ValidResourceFlavor(), ResourceFlavorFromProto, "ResourceFlavor", cases);
}

TEST(ResourceFlavorFromProtoTest, ConvertsAndRoundTrips) {
  v1::ResourceFlavor rf = ValidResourceFlavor();
  v1::Toleration* t = rf.mutable_spec()->add_tolerations();
  t->set_key("dedicated");
  t->set_value("ml");  // operator defaults to Equal
  t = rf.mutable_spec()->add_tolerations();
  t->set_operator_("Exists");  // tolerates everything
  t = rf.mutable_spec()->add_tolerations();
  t->set_key("node.kubernetes.io/unreachable");
  t->set_operator_("Exists");
  t->set_effect("NoExecute");
  t->set_toleration_seconds(300);
  absl::StatusOr<core::ResourceFlavorSpec> got = ResourceFlavorFromProto(rf);
  ASSERT_TRUE(got.ok()) << got.status();
  core::ResourceFlavorSpec want;
  want.name = "spot";
  want.node_labels = {{"cloud.example.com/spot", "true"}};
  want.node_taints = {{"spot", "true", "NoSchedule"}};
  want.tolerations = {{"spot", "Exists", "", "NoSchedule"},
                      {"dedicated", "Equal", "ml", ""},
                      {"", "Exists", "", ""},
                      {"node.kubernetes.io/unreachable", "Exists", "", "NoExecute", 300}};
  EXPECT_EQ(*got, want);
  const v1::ResourceFlavor proto = ResourceFlavorToProto(*got);
  EXPECT_EQ(proto.spec().tolerations(1).operator_(), "Equal");
  EXPECT_FALSE(proto.spec().tolerations(1).has_toleration_seconds());
  EXPECT_EQ(proto.spec().tolerations(3).toleration_seconds(), 300);
  absl::StatusOr<core::ResourceFlavorSpec> again = ResourceFlavorFromProto(proto);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, *got);
}

// --- Priority classes ----------------------------------------------------------------------------

TEST(PriorityClassFromProtoTest, RejectsEveryInvalidField) {
  using WPC = v1::WorkloadPriorityClass;
  std::vector<InvalidCase<WPC>> wpc_cases = {
      {"name",
       [](WPC& p) { p.mutable_metadata()->set_name("High!"); },
       {"metadata.name:", "\"High!\""}},
      {"description",
       [](WPC& p) { p.set_description(Repeat('d', 2049)); },
       {"description:", "2048", "got 2049"}},
  };
  Append(wpc_cases, MetadataCases<WPC>());
  ExpectAllRejected(
      ValidWorkloadPriorityClass(), [](const WPC& p) { return PriorityClassFromProto(p); },
      "WorkloadPriorityClass", wpc_cases);

  using PC = v1::PriorityClass;
  std::vector<InvalidCase<PC>> pc_cases = {
      {"name",
       [](PC& p) { p.mutable_metadata()->set_name("_critical"); },
       {"metadata.name:", "\"_critical\""}},
      {"preemption policy",
       [](PC& p) { p.set_preemption_policy("Sometimes"); },
       {"preemptionPolicy:", "\"Sometimes\""}},
  };
  Append(pc_cases, MetadataCases<PC>());
  ExpectAllRejected(
      ValidPodPriorityClass(), [](const PC& p) { return PriorityClassFromProto(p); },
      "PriorityClass", pc_cases);
}

TEST(PriorityClassFromProtoTest, ValuesUpToTheUserCapAndKindFlag) {
  for (int32_t value : {std::numeric_limits<int32_t>::min(), -1, 0, 1000000000,
                        std::numeric_limits<int32_t>::max()}) {
    SCOPED_TRACE(value);
    v1::WorkloadPriorityClass wpc = ValidWorkloadPriorityClass();
    wpc.set_value(value);
    absl::StatusOr<core::PriorityClassSpec> w = PriorityClassFromProto(wpc);
    ASSERT_TRUE(w.ok()) << w.status();
    EXPECT_EQ(*w, (core::PriorityClassSpec{"high", value, false}));
    EXPECT_EQ(WorkloadPriorityClassToProto(*w).value(), value);
    EXPECT_EQ(WorkloadPriorityClassToProto(*w).metadata().name(), "high");

    if (value > 1000000000) continue;  // a pod PriorityClass stops there (below)
    v1::PriorityClass pc = ValidPodPriorityClass();
    pc.set_value(value);
    pc.set_preemption_policy("Never");
    absl::StatusOr<core::PriorityClassSpec> p = PriorityClassFromProto(pc);
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_EQ(*p, (core::PriorityClassSpec{"system-critical", value, true}));
    absl::StatusOr<core::PriorityClassSpec> again =
        PriorityClassFromProto(PriorityClassToProto(*p));
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ(*again, *p);
  }
}

TEST(PriorityClassFromProtoTest, UserClassesStopAtOneBillion) {
  v1::PriorityClass pc = ValidPodPriorityClass();
  pc.set_value(1000000001);
  absl::StatusOr<core::PriorityClassSpec> got = PriorityClassFromProto(pc);
  ASSERT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(got.status().message(), HasSubstr("value: must be no more than 1000000000"));
  EXPECT_THAT(got.status().message(), HasSubstr("1000000001"));
  // Kubernetes' built-in classes keep their values; their names with other values do not.
  pc.mutable_metadata()->set_name("system-cluster-critical");
  pc.set_value(2000000000);
  EXPECT_TRUE(PriorityClassFromProto(pc).ok());
  pc.mutable_metadata()->set_name("system-node-critical");
  pc.set_value(2000001000);
  EXPECT_TRUE(PriorityClassFromProto(pc).ok());
  pc.set_value(2000000000);
  EXPECT_FALSE(PriorityClassFromProto(pc).ok());
}

TEST(ConfigCodecTest, EmptyObjectsAreRejectedNotFatal) {
  // Whatever arrives, conversion answers with a status.
  EXPECT_EQ(ClusterQueueFromProto(v1::ClusterQueue()).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CohortFromProto(v1::Cohort()).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(LocalQueueFromProto(v1::LocalQueue()).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ResourceFlavorFromProto(v1::ResourceFlavor()).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(NamespaceFromProto(v1::Namespace()).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(PriorityClassFromProto(v1::PriorityClass()).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(PriorityClassFromProto(v1::WorkloadPriorityClass()).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tollgate::api
