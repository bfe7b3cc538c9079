#include "core/multikueue_checks.h"

#include <map>
#include <string>
#include <vector>

#include "core/admission_checks.h"
#include "core/cluster_state.h"
#include "core/deletion_rule.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/status_matchers.h"

// A MultiKueue AdmissionCheck's Active condition, after Kueue's admissioncheck_test.go, and the
// MultiKueue objects in ClusterState.

namespace tollgate::core {
namespace {

using ::testing::ElementsAre;

const absl::Time kNow = absl::FromUnixSeconds(1767225600);

AdmissionCheckSpec MultiKueueCheck(std::optional<AdmissionCheckParameters> parameters) {
  AdmissionCheckSpec check;
  check.name = "ac1";
  check.controller_name = std::string(kMultiKueueControllerName);
  check.parameters = std::move(parameters);
  return check;
}

AdmissionCheckParameters ConfigRef(std::string name) {
  return {std::string(kMultiKueueConfigGroup), std::string(kMultiKueueConfigKind), std::move(name)};
}

MultiKueueClusterRuntime Cluster(std::string name, std::optional<bool> active) {
  MultiKueueClusterRuntime c;
  c.spec.name = std::move(name);
  c.spec.endpoint = MultiKueueWorkerEndpoint{"127.0.0.1:7000", "", "", "", "", true};
  if (active.has_value()) {
    c.active = Condition{"Active", *active, *active ? "Active" : "ByTest", "", kNow};
  }
  return c;
}

TEST(MultiKueueCheckActivityTest, FollowsKueuesAdmissionCheckReconciler) {
  struct Case {
    std::string name;
    std::optional<AdmissionCheckParameters> parameters;
    std::vector<std::string> config_clusters;  // config "config1"; empty: no config
    std::vector<MultiKueueClusterRuntime> clusters;
    CheckActivity want;
  };
  const std::vector<Case> cases = {
      {"missing config",
       ConfigRef("config1"),
       {},
       {},
       {false, "BadConfig",
        "Cannot load the AdmissionChecks parameters: multikueueconfigs.kueue.x-k8s.io "
        "\"config1\" not found"}},
      {"no parameters",
       std::nullopt,
       {"worker1"},
       {Cluster("worker1", true)},
       {false, "BadConfig",
        "Cannot load the AdmissionChecks parameters: missing parameters reference"}},
      {"wrong kind",
       AdmissionCheckParameters{"kueue.x-k8s.io", "ProvisioningRequestConfig", "config1"},
       {"worker1"},
       {Cluster("worker1", true)},
       {false, "BadConfig",
        "Cannot load the AdmissionChecks parameters: wrong kind \"ProvisioningRequestConfig\", "
        "expecting \"MultiKueueConfig\": bad parameters reference"}},
      {"wrong group",
       AdmissionCheckParameters{"example.com", "MultiKueueConfig", "config1"},
       {"worker1"},
       {Cluster("worker1", true)},
       {false, "BadConfig",
        "Cannot load the AdmissionChecks parameters: wrong group \"example.com\", expecting "
        "\"kueue.x-k8s.io\": bad parameters reference"}},
      {"missing cluster",
       ConfigRef("config1"),
       {"worker1"},
       {},
       {false, "NoUsableClusters", "Missing clusters: [worker1]"}},
      {"inactive cluster",
       ConfigRef("config1"),
       {"worker1"},
       {Cluster("worker1", false)},
       {false, "NoUsableClusters", "Inactive clusters: [worker1]"}},
      {"cluster never reported counts as inactive",
       ConfigRef("config1"),
       {"worker1"},
       {Cluster("worker1", std::nullopt)},
       {false, "NoUsableClusters", "Inactive clusters: [worker1]"}},
      {"all clusters unusable, listed in config order",
       ConfigRef("config1"),
       {"worker3", "worker1", "worker2"},
       {Cluster("worker1", false), Cluster("worker2", false)},
       {false, "NoUsableClusters",
        "Missing clusters: [worker3], Inactive clusters: [worker1 worker2]"}},
      {"some active clusters keep the check active",
       ConfigRef("config1"),
       {"worker1", "worker2", "worker3"},
       {Cluster("worker1", true), Cluster("worker2", false)},
       {true, "SomeActiveClusters", "Missing clusters: [worker3], Inactive clusters: [worker2]"}},
      {"all active",
       ConfigRef("config1"),
       {"worker1", "worker2"},
       {Cluster("worker1", true), Cluster("worker2", true)},
       {true, "Active", "The admission check is active"}},
  };
  for (const Case& c : cases) {
    std::map<std::string, MultiKueueConfigSpec> configs;
    if (!c.config_clusters.empty()) configs["config1"] = {"config1", c.config_clusters};
    std::map<std::string, MultiKueueClusterRuntime> clusters;
    for (const MultiKueueClusterRuntime& cluster : c.clusters) {
      clusters[cluster.spec.name] = cluster;
    }
    EXPECT_EQ(MultiKueueCheckActivity(MultiKueueCheck(c.parameters), configs, clusters), c.want)
        << c.name;
  }
}

class MultiKueueStateTest : public ::testing::Test {
 protected:
  ClusterState state_{SchedulerConfig{}};
};

TEST_F(MultiKueueStateTest, CheckActivityFollowsConfigAndClusterReports) {
  ASSERT_OK(state_.ApplyAdmissionCheck(MultiKueueCheck(ConfigRef("config1")), kNow));
  EXPECT_EQ(state_.MultiKueueCheckActivityOf("ac1")->reason, "BadConfig");

  ASSERT_OK(state_.ApplyMultiKueueConfig({"config1", {"worker1", "worker2"}}, kNow));
  EXPECT_EQ(state_.MultiKueueCheckActivityOf("ac1")->message,
            "Missing clusters: [worker1 worker2]");

  MultiKueueClusterSpec worker1;
  worker1.name = "worker1";
  worker1.kube_config = MultiKueueKubeConfig{"worker1-secret", KubeConfigLocationType::kSecret};
  ASSERT_OK(state_.ApplyMultiKueueCluster(worker1, kNow));
  ASSERT_OK(state_.ApplyMultiKueueCluster(Cluster("worker2", std::nullopt).spec, kNow));
  EXPECT_EQ(state_.MultiKueueCheckActivityOf("ac1")->reason, "NoUsableClusters");

  ASSERT_OK(state_.SetMultiKueueClusterActive("worker1", true, "Active", "Connected", kNow));
  const CheckActivity some = *state_.MultiKueueCheckActivityOf("ac1");
  EXPECT_TRUE(some.active);
  EXPECT_EQ(some.reason, "SomeActiveClusters");
  EXPECT_EQ(some.message, "Inactive clusters: [worker2]");

  // Re-applying a cluster keeps what its connection reported.
  ASSERT_OK(state_.ApplyMultiKueueCluster(worker1, kNow + absl::Seconds(5)));
  EXPECT_TRUE(state_.multikueue_clusters().at("worker1").IsActive());
  ASSERT_OK(state_.SetMultiKueueClusterActive("worker2", true, "Active", "Connected", kNow));
  EXPECT_EQ(*state_.MultiKueueCheckActivityOf("ac1"),
            (CheckActivity{true, "Active", "The admission check is active"}));

  // Deleting a cluster a config names goes at once (Kueue keeps no finalizer on it); the check
  // reports it missing.
  ASSERT_OK(state_.DeleteObject(ObjectKind::kMultiKueueCluster, "", "worker2", kNow));
  EXPECT_EQ(state_.multikueue_clusters().count("worker2"), 0u);
  EXPECT_EQ(state_.MultiKueueCheckActivityOf("ac1")->message, "Missing clusters: [worker2]");
  ASSERT_OK(state_.DeleteObject(ObjectKind::kMultiKueueConfig, "", "config1", kNow));
  EXPECT_EQ(state_.MultiKueueCheckActivityOf("ac1")->reason, "BadConfig");
  EXPECT_EQ(state_.DeleteObject(ObjectKind::kMultiKueueConfig, "", "config1", kNow).code(),
            absl::StatusCode::kNotFound);
}

TEST_F(MultiKueueStateTest, ClusterActiveKeepsItsTransitionTimeWhileTheStatusHolds) {
  ASSERT_OK(state_.ApplyMultiKueueCluster(Cluster("worker1", std::nullopt).spec, kNow));
  ASSERT_OK(state_.SetMultiKueueClusterActive("worker1", false, "ClientConnectionFailed",
                                              "dial failed", kNow));
  ASSERT_OK(state_.SetMultiKueueClusterActive("worker1", false, "ClientConnectionFailed",
                                              "dial failed again", kNow + absl::Minutes(1)));
  const Condition& down = *state_.multikueue_clusters().at("worker1").active;
  EXPECT_EQ(down.last_transition_time, kNow);
  EXPECT_EQ(down.message, "dial failed again");
  ASSERT_OK(state_.SetMultiKueueClusterActive("worker1", true, "Active", "Connected",
                                              kNow + absl::Minutes(2)));
  EXPECT_EQ(state_.multikueue_clusters().at("worker1").active->last_transition_time,
            kNow + absl::Minutes(2));
  EXPECT_EQ(state_.SetMultiKueueClusterActive("nope", true, "Active", "", kNow).code(),
            absl::StatusCode::kNotFound);
}

TEST_F(MultiKueueStateTest, OnlyMultiKueueChecksHaveAMultiKueueActivity) {
  AdmissionCheckSpec other;
  other.name = "approval";
  other.controller_name = "example.com/approval";
  ASSERT_OK(state_.ApplyAdmissionCheck(other, kNow));
  EXPECT_FALSE(state_.MultiKueueCheckActivityOf("approval").has_value());
  EXPECT_FALSE(state_.MultiKueueCheckActivityOf("absent").has_value());
}

TEST(MultiKueueDeletionRuleTest, BothKindsGoAtOnce) {
  EXPECT_EQ(DeletionRuleOf(ObjectKind::kMultiKueueConfig), DeletionRule::kAtOnce);
  EXPECT_EQ(DeletionRuleOf(ObjectKind::kMultiKueueCluster), DeletionRule::kAtOnce);
}

// The ClusterQueue side (Kueue's pkg/cache clusterqueue.go): the reasons a queue with a
// MultiKueue check is inactive, all at once and in Kueue's order.
TEST(MultiKueueClusterQueueTest, EveryMultiKueueRuleAtOnce) {
  ClusterQueueSpec cq;
  cq.name = "cq";
  cq.resource_groups = {{{"gpu"},
                         {{"a", {{"gpu", 8, std::nullopt, std::nullopt}}},
                          {"b", {{"gpu", 8, std::nullopt, std::nullopt}}}}}};
  cq.admission_checks = {{"mk-1", {"a"}}, {"mk-2", {}}, {"prov", {}}};
  std::map<std::string, AdmissionCheckRuntime> checks;
  auto add = [&](std::string name, absl::string_view controller) {
    AdmissionCheckRuntime& c = checks[name];
    c.spec.name = name;
    c.spec.controller_name = std::string(controller);
    c.active = Condition{"Active", true, "Active", "", kNow};
  };
  add("mk-1", kMultiKueueControllerName);
  add("mk-2", kMultiKueueControllerName);
  add("prov", kProvisioningRequestControllerName);
  const CheckInactivity inactivity = ClusterQueueCheckInactivity(cq, checks);
  EXPECT_THAT(inactivity.reasons, ElementsAre("MultipleMultiKueueAdmissionChecks",
                                              "MultiKueueAdmissionCheckAppliedPerFlavor",
                                              "MultiKueueWithProvisioningRequest"));
}

}  // namespace
}  // namespace tollgate::core
