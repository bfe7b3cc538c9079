#include "core/admission_checks.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/status_matchers.h"

// The pure rules of admission checks, table by table, after Kueue's own tests
// (workload_controller_test.go TestSyncCheckStates and the admission-check assignment cases,
// admissionchecks_test.go, evict_test.go, clusterqueue_test.go's inactive reasons).

namespace tollgate::core {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const absl::Time kNow = absl::FromUnixSeconds(1767225600);

ClusterQueueSpec TwoFlavorQueue(std::vector<AdmissionCheckStrategyRule> checks) {
  ClusterQueueSpec cq;
  cq.name = "cq";
  cq.resource_groups = {{{"gpu"},
                         {{"on-demand", {{"gpu", 8, std::nullopt, std::nullopt}}},
                          {"spot", {{"gpu", 8, std::nullopt, std::nullopt}}}}}};
  cq.admission_checks = std::move(checks);
  return cq;
}

Admission AdmittedOn(const std::string& flavor) {
  Admission a;
  a.cluster_queue = "cq";
  a.pod_sets = {PodSetAssignment{"main", 1, {{"gpu", flavor}}, {{"gpu", 1}}}};
  return a;
}

AdmissionCheckState Check(std::string name, CheckState state, std::string message = "") {
  AdmissionCheckState c;
  c.name = std::move(name);
  c.state = state;
  c.message = std::move(message);
  c.last_transition_time = kNow - absl::Minutes(1);
  return c;
}

std::vector<std::string> Names(const std::vector<AdmissionCheckState>& checks) {
  std::vector<std::string> out;
  for (const AdmissionCheckState& c : checks) out.push_back(c.name);
  return out;
}

TEST(ChecksForWorkloadTest, FollowsKueuesAssignment) {
  struct Case {
    std::string name;
    std::vector<AdmissionCheckStrategyRule> rules;
    std::optional<std::string> admitted_on;
    std::vector<std::string> want;
  };
  const std::vector<Case> cases = {
      {"no checks in the queue", {}, std::nullopt, {}},
      {"v1beta1 admissionChecks apply before reservation",
       {{"b", {}}, {"a", {}}},
       std::nullopt,
       {"a", "b"}},
      {"before reservation only the checks covering every flavor",
       {{"spot-only", {"spot"}}, {"both", {"spot", "on-demand"}}, {"all", {}}},
       std::nullopt,
       {"all", "both"}},
      {"after reservation the checks of the assigned flavor",
       {{"spot-only", {"spot"}}, {"on-demand-only", {"on-demand"}}, {"all", {}}},
       "spot",
       {"all", "spot-only"}},
      {"after reservation a check of another flavor does not apply",
       {{"spot-only", {"spot"}}},
       "on-demand",
       {}},
  };
  for (const Case& c : cases) {
    const ClusterQueueSpec cq = TwoFlavorQueue(c.rules);
    std::optional<Admission> admission;
    if (c.admitted_on.has_value()) admission = AdmittedOn(*c.admitted_on);
    EXPECT_EQ(ChecksForWorkload(cq, admission.has_value() ? &*admission : nullptr), c.want)
        << c.name;
  }
}

TEST(SyncCheckStatesTest, AddsDropsAndKeepsSorted) {
  struct Case {
    std::string name;
    std::vector<AdmissionCheckState> checks;
    std::vector<std::string> names;
    bool want_changed;
    std::vector<std::string> want;
  };
  const std::vector<Case> cases = {
      {"nothing to nothing", {}, {}, false, {}},
      {"add to none", {}, {"ac1", "ac2"}, true, {"ac1", "ac2"}},
      {"add and remove",
       {Check("ac0", CheckState::kReady), Check("ac1", CheckState::kReady)},
       {"ac1", "ac2"},
       true,
       {"ac1", "ac2"}},
      {"clean up", {Check("ac0", CheckState::kReady)}, {}, true, {}},
      {"the same", {Check("ac1", CheckState::kReady)}, {"ac1"}, false, {"ac1"}},
  };
  for (Case c : cases) {
    EXPECT_EQ(SyncCheckStates(c.checks, c.names, kNow), c.want_changed) << c.name;
    EXPECT_EQ(Names(c.checks), c.want) << c.name;
  }
}

TEST(SyncCheckStatesTest, KeepsTheStateOfChecksThatStayAndAddsPendingAtNow) {
  std::vector<AdmissionCheckState> checks = {Check("ac1", CheckState::kReady, "fine")};
  checks[0].retry_count = 2;
  const AdmissionCheckState kept = checks[0];
  ASSERT_TRUE(SyncCheckStates(checks, {"ac0", "ac1"}, kNow));
  ASSERT_EQ(checks.size(), 2u);
  EXPECT_EQ(checks[0].name, "ac0");
  EXPECT_EQ(checks[0].state, CheckState::kPending);
  EXPECT_EQ(checks[0].last_transition_time, kNow);
  EXPECT_EQ(checks[1], kept);
}

TEST(ChecksInStateMessageTest, KueuesWording) {
  EXPECT_EQ(ChecksInStateMessage({Check("check", CheckState::kRejected)}, CheckState::kRejected),
            R"(AdmissionCheck in Rejected state: "check")");
  EXPECT_EQ(ChecksInStateMessage({Check("check", CheckState::kRejected, "quota exceeded")},
                                 CheckState::kRejected),
            R"(AdmissionCheck in Rejected state: "check" (quota exceeded))");
  EXPECT_EQ(
      ChecksInStateMessage({Check("check-1", CheckState::kRetry, "infrastructure not prepared"),
                            Check("check-2", CheckState::kReady),
                            Check("check-3", CheckState::kRetry, "budget exhausted")},
                           CheckState::kRetry),
      R"(AdmissionChecks in Retry state: "check-1" (infrastructure not prepared); )"
      R"("check-3" (budget exhausted))");
}

TEST(ResetChecksAfterEvictionTest, EveryCheckStartsOverAndRetriesAreCounted) {
  std::vector<AdmissionCheckState> checks = {
      Check("pending", CheckState::kPending, "still looking"), Check("ready", CheckState::kReady),
      Check("rejected", CheckState::kRejected), Check("retry", CheckState::kRetry)};
  checks[1].pod_set_updates = {PodSetUpdate{"main", {{"a", "b"}}, {}, {}, {}}};
  checks[1].retry_count = 3;
  checks[3].requeue_after_seconds = 60;
  checks[3].retry_count = 1;
  const AdmissionCheckState pending = checks[0];
  ASSERT_TRUE(ResetChecksAfterEviction(checks, kNow));
  // A Pending check is left as it is.
  EXPECT_EQ(checks[0], pending);
  for (size_t i = 1; i < checks.size(); ++i) {
    EXPECT_EQ(checks[i].state, CheckState::kPending) << checks[i].name;
    EXPECT_EQ(checks[i].last_transition_time, kNow);
    EXPECT_TRUE(checks[i].pod_set_updates.empty());
  }
  EXPECT_EQ(checks[1].message, "Reset to Pending after eviction. Previously: Ready");
  EXPECT_EQ(checks[2].message, "Reset to Pending after eviction. Previously: Rejected");
  EXPECT_EQ(checks[3].message, "Reset to Pending after eviction. Previously: Retry");
  // Kueue counts a Retry and drops the other states' counts.
  EXPECT_EQ(checks[1].retry_count, 0);
  EXPECT_EQ(checks[3].retry_count, 2);
  EXPECT_EQ(checks[3].requeue_after_seconds, 60);
  EXPECT_FALSE(ResetChecksAfterEviction(checks, kNow));
}

TEST(LatestRetryTimeTest, TheLatestTotalTimeNotTheLargestDelay) {
  std::vector<AdmissionCheckState> checks = {Check("check1", CheckState::kRetry),
                                             Check("check2", CheckState::kRetry),
                                             Check("ready", CheckState::kReady)};
  checks[0].requeue_after_seconds = 5;
  checks[0].last_transition_time = kNow + absl::Seconds(10);
  checks[1].requeue_after_seconds = 10;
  checks[1].last_transition_time = kNow;
  // A delay on a check that is not Retry does not count.
  checks[2].requeue_after_seconds = 100;
  EXPECT_EQ(LatestRetryTime(checks), kNow + absl::Seconds(15));
  EXPECT_EQ(LatestRetryTime({Check("no-delay", CheckState::kRetry)}), absl::InfinitePast());
}

TEST(DelayedTopologyFlavorsTest, ProvisioningOnItsFlavorsMultiKueueOnEvery) {
  std::map<std::string, AdmissionCheckRuntime> registry;
  auto add = [&registry](std::string name, absl::string_view controller) {
    AdmissionCheckRuntime rt;
    rt.spec.name = name;
    rt.spec.controller_name = std::string(controller);
    registry[name] = rt;
  };
  add("approval", "example.com/approval");
  add("prov", kProvisioningRequestControllerName);
  add("mk", kMultiKueueControllerName);

  EXPECT_TRUE(DelayedTopologyFlavors(TwoFlavorQueue({{"approval", {}}}), registry).empty());
  EXPECT_THAT(DelayedTopologyFlavors(TwoFlavorQueue({{"prov", {"spot"}}}), registry),
              ElementsAre("spot"));
  EXPECT_THAT(DelayedTopologyFlavors(TwoFlavorQueue({{"prov", {}}}), registry),
              ElementsAre("on-demand", "spot"));
  EXPECT_THAT(DelayedTopologyFlavors(TwoFlavorQueue({{"mk", {}}, {"approval", {}}}), registry),
              ElementsAre("on-demand", "spot"));
  // A check that does not exist delays nothing.
  EXPECT_TRUE(DelayedTopologyFlavors(TwoFlavorQueue({{"gone", {}}}), registry).empty());
}

TEST(ClusterQueueCheckInactivityTest, KueuesReasonsAndMessages) {
  std::map<std::string, AdmissionCheckRuntime> registry;
  auto add = [&registry](std::string name, std::string controller, bool active) {
    AdmissionCheckRuntime rt;
    rt.spec.name = name;
    rt.spec.controller_name = std::move(controller);
    if (active) rt.active = Condition{"Active", true, "Active", "", kNow};
    registry[name] = rt;
  };
  add("approval", "example.com/approval", true);
  add("sleepy", "example.com/sleepy", false);
  add("mk-1", std::string(kMultiKueueControllerName), true);
  add("mk-2", std::string(kMultiKueueControllerName), true);
  add("prov", std::string(kProvisioningRequestControllerName), true);

  EXPECT_TRUE(ClusterQueueCheckInactivity(TwoFlavorQueue({{"approval", {}}}), registry).empty());
  CheckInactivity missing =
      ClusterQueueCheckInactivity(TwoFlavorQueue({{"nope", {}}, {"sleepy", {}}}), registry);
  EXPECT_THAT(missing.reasons, ElementsAre("AdmissionCheckNotFound", "AdmissionCheckInactive"));
  EXPECT_THAT(missing.messages, ElementsAre("references missing AdmissionCheck(s): nope",
                                            "references inactive AdmissionCheck(s): sleepy"));
  EXPECT_THAT(
      ClusterQueueCheckInactivity(TwoFlavorQueue({{"mk-1", {}}, {"mk-2", {}}}), registry).reasons,
      ElementsAre("MultipleMultiKueueAdmissionChecks"));
  EXPECT_THAT(ClusterQueueCheckInactivity(TwoFlavorQueue({{"mk-1", {"spot"}}}), registry).reasons,
              ElementsAre("MultiKueueAdmissionCheckAppliedPerFlavor"));
  // onFlavors naming every flavor is the same as none.
  EXPECT_TRUE(
      ClusterQueueCheckInactivity(TwoFlavorQueue({{"mk-1", {"spot", "on-demand"}}}), registry)
          .empty());
  CheckInactivity both =
      ClusterQueueCheckInactivity(TwoFlavorQueue({{"mk-1", {}}, {"prov", {}}}), registry);
  EXPECT_THAT(both.reasons, ElementsAre("MultiKueueWithProvisioningRequest"));
  EXPECT_THAT(both.messages[0], HasSubstr("found: mk-1, prov"));
}

class MergePodSetUpdatesTest : public ::testing::Test {
 protected:
  MergePodSetUpdatesTest() {
    spec_.name = "wl";
    spec_.namespace_name = "ns";
    PodSetSpec main;
    main.name = "main";
    main.node_selector = {{"disk", "ssd"}};
    main.tolerations = {Toleration{"gpu", "Exists", "", "NoSchedule"}};
    PodSetSpec driver;
    driver.name = "driver";
    spec_.pod_sets = {main, driver};
    flavors_["spot"] = ResourceFlavorSpec{"spot", {{"pool", "spot"}}, {}, {}};
    flavors_["spot"].tolerations = {Toleration{"spot", "Equal", "true", "NoSchedule"}};
    status_.admission = Admission{"cq", {PodSetAssignment{"main", 1, {{"gpu", "spot"}}, {}}}};
  }

  void AddCheck(std::string name, PodSetUpdate update) {
    AdmissionCheckState c = Check(std::move(name), CheckState::kReady);
    c.pod_set_updates = {std::move(update)};
    std::vector<AdmissionCheckState> checks = status_.admission_checks();
    checks.push_back(std::move(c));
    status_.set_admission_checks(std::move(checks));
  }

  WorkloadSpec spec_;
  WorkloadStatus status_;
  std::map<std::string, ResourceFlavorSpec> flavors_;
};

TEST_F(MergePodSetUpdatesTest, AddsFlavorsAndChecksToEachPodSet) {
  PodSetUpdate prov{"main",
                    {{"team", "a"}},
                    {{"autoscaling.x-k8s.io/consume", "pr-1"}},
                    {{"zone", "a"}},
                    {Toleration{"spot", "Equal", "true", "NoSchedule"}}};
  AddCheck("prov", prov);
  ASSERT_OK_AND_ASSIGN(std::vector<PodSetInfo> infos, MergePodSetUpdates(spec_, status_, flavors_));
  ASSERT_EQ(infos.size(), 2u);
  EXPECT_EQ(infos[0].name, "main");
  EXPECT_EQ(infos[0].node_selector, (Labels{{"disk", "ssd"}, {"pool", "spot"}, {"zone", "a"}}));
  EXPECT_EQ(infos[0].labels, (Labels{{"team", "a"}}));
  EXPECT_EQ(infos[0].annotations, (Labels{{"autoscaling.x-k8s.io/consume", "pr-1"}}));
  // The toleration the flavor and the check both add is there once.
  EXPECT_EQ(infos[0].tolerations.size(), 2u);
  EXPECT_EQ(infos[1], (PodSetInfo{"driver", {}, {}, {}, {}}));
}

TEST_F(MergePodSetUpdatesTest, AConflictNamesBothSourcesAndBothValues) {
  AddCheck("a", PodSetUpdate{"main", {{"team", "x"}}, {}, {}, {}});
  AddCheck("b", PodSetUpdate{"main", {{"team", "y"}}, {}, {}, {}});
  absl::StatusOr<std::vector<PodSetInfo>> merged = MergePodSetUpdates(spec_, status_, flavors_);
  ASSERT_EQ(merged.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      merged.status().message(),
      R"(admission check "b": labels "team": "y" conflicts with "x" from admission check "a")");
}

TEST_F(MergePodSetUpdatesTest, AConflictWithAFlavorOrThePodSetItself) {
  AddCheck("a", PodSetUpdate{"main", {}, {}, {{"pool", "on-demand"}}, {}});
  EXPECT_THAT(MergePodSetUpdates(spec_, status_, flavors_).status().message(),
              HasSubstr(R"("on-demand" conflicts with "spot" from ResourceFlavor "spot")"));
  status_.set_admission_checks({});
  AddCheck("a", PodSetUpdate{"main", {}, {}, {{"disk", "hdd"}}, {}});
  EXPECT_THAT(MergePodSetUpdates(spec_, status_, flavors_).status().message(),
              HasSubstr(R"("hdd" conflicts with "ssd" from pod set "main")"));
  // The same value twice is no conflict.
  status_.set_admission_checks({});
  AddCheck("a", PodSetUpdate{"main", {}, {}, {{"disk", "ssd"}}, {}});
  EXPECT_TRUE(MergePodSetUpdates(spec_, status_, flavors_).ok());
}

}  // namespace
}  // namespace tollgate::core
