#include "services/manifest/kueue_configuration.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "services/manifest/kueue_feature_gates.h"

namespace tollgate::manifest {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::Pair;

using Strategy = core::FairSharingStrategy;

absl::StatusOr<KueueConfiguration> Parse(const std::string& text) {
  return ParseKueueConfigurationText(text, "kueue.yaml");
}

// Every field Tollgate reads, in v1beta1 spelling.
constexpr char kAllFieldsV1beta1[] = R"(
apiVersion: config.kueue.x-k8s.io/v1beta1
kind: Configuration
manageJobsWithoutQueueName: true
managedJobsNamespaceSelector:
  matchLabels: {team: ml}
  matchExpressions:
  - {key: kubernetes.io/metadata.name, operator: NotIn, values: [kube-system, kueue-system]}
integrations:
  frameworks: [batch/job, ray.io/rayjob, kubeflow.org/pytorchjob]
  labelKeysToCopy: [team, cost-center]
objectRetentionPolicies:
  workloads: {afterFinished: 10m, afterDeactivatedByKueue: 0s}
fairSharing:
  enable: true
  preemptionStrategies: [LessThanInitialShare]
admissionFairSharing:
  usageHalfLifeTime: 168h
  usageSamplingInterval: 1m
  resourceWeights: {cpu: 2.0, memory: 0, example.com/gpu: 100}
waitForPodsReady:
  enable: true
  timeout: 7m
  blockAdmission: false
  recoveryTimeout: 3m
  requeuingStrategy:
    timestamp: Creation
    backoffLimitCount: 5
    backoffBaseSeconds: 10
    backoffMaxSeconds: 600
resources:
  excludeResourcePrefixes: [example.com/, ephemeral-storage]
multiKueue:
  gcInterval: 30s
  origin: fleet-a
  workerLostTimeout: 5m
  dispatcherName: kueue.x-k8s.io/multikueue-dispatcher-incremental
featureGates: {AdmissionFairSharing: true}
)";

// The same configuration in v1beta2 spelling: no `enable` flags, the sections' presence does it.
constexpr char kAllFieldsV1beta2[] = R"(
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
manageJobsWithoutQueueName: true
managedJobsNamespaceSelector:
  matchLabels: {team: ml}
  matchExpressions:
  - {key: kubernetes.io/metadata.name, operator: NotIn, values: [kube-system, kueue-system]}
integrations:
  frameworks: [batch/job, ray.io/rayjob, kubeflow.org/pytorchjob]
  labelKeysToCopy: [team, cost-center]
objectRetentionPolicies:
  workloads: {afterFinished: 10m, afterDeactivatedByKueue: 0s}
fairSharing:
  preemptionStrategies: [LessThanInitialShare]
admissionFairSharing:
  usageHalfLifeTime: 168h
  usageSamplingInterval: 1m
  resourceWeights: {cpu: 2.0, memory: 0, example.com/gpu: 100}
waitForPodsReady:
  timeout: 7m
  blockAdmission: false
  recoveryTimeout: 3m
  requeuingStrategy:
    timestamp: Creation
    backoffLimitCount: 5
    backoffBaseSeconds: 10
    backoffMaxSeconds: 600
resources:
  excludeResourcePrefixes: [example.com/, ephemeral-storage]
  quotaCheckStrategy: BlockUndeclared
multiKueue:
  gcInterval: 30s
  origin: fleet-a
  workerLostTimeout: 5m
  dispatcherName: kueue.x-k8s.io/multikueue-dispatcher-incremental
featureGates: {AdmissionFairSharing: true}
)";

void ExpectAllFields(const KueueConfiguration& c) {
  const core::SchedulerConfig& s = c.scheduler;
  EXPECT_EQ(c.multi_kueue.gc_interval, absl::Seconds(30));
  EXPECT_EQ(c.multi_kueue.origin, "fleet-a");
  EXPECT_EQ(c.multi_kueue.worker_lost_timeout, absl::Minutes(5));
  EXPECT_EQ(c.multi_kueue.dispatcher_name, core::kIncrementalDispatcherName);
  EXPECT_EQ(c.multi_kueue.incremental_step_size, 3);
  EXPECT_TRUE(c.adapter.manage_jobs_without_queue_name);
  ASSERT_TRUE(c.adapter.has_managed_jobs_namespace_selector);
  EXPECT_THAT(c.adapter.managed_jobs_namespace_selector.match_labels,
              ElementsAre(Pair("team", "ml")));
  ASSERT_EQ(c.adapter.managed_jobs_namespace_selector.match_expressions.size(), 1u);
  EXPECT_EQ(c.adapter.managed_jobs_namespace_selector.match_expressions[0].op, "NotIn");
  EXPECT_THAT(c.adapter.frameworks,
              ElementsAre("batch/job", "ray.io/rayjob", "kubeflow.org/pytorchjob"));
  EXPECT_TRUE(s.fair_sharing.enable);
  EXPECT_THAT(s.fair_sharing.preemption_strategies, ElementsAre(Strategy::kLessThanInitialShare));
  EXPECT_TRUE(s.admission_fair_sharing.enable);
  EXPECT_EQ(s.admission_fair_sharing.usage_half_life_time, absl::Hours(168));
  EXPECT_EQ(s.admission_fair_sharing.usage_sampling_interval, absl::Minutes(1));
  EXPECT_THAT(s.admission_fair_sharing.resource_weights,
              ElementsAre(Pair("cpu", 2.0), Pair("example.com/gpu", 100.0), Pair("memory", 0.0)));
  const core::SchedulerConfig::WaitForPodsReady& w = s.wait_for_pods_ready;
  EXPECT_TRUE(w.enable);
  EXPECT_EQ(w.timeout, absl::Minutes(7));
  EXPECT_FALSE(w.block_admission);
  EXPECT_EQ(w.recovery_timeout, absl::Minutes(3));
  EXPECT_EQ(w.requeuing_timestamp, core::RequeuingTimestamp::kCreation);
  EXPECT_EQ(w.backoff_limit_count, 5);
  EXPECT_EQ(w.backoff_base_seconds, 10);
  EXPECT_EQ(w.backoff_max_seconds, 600);
  EXPECT_THAT(s.exclude_resource_prefixes, ElementsAre("example.com/", "ephemeral-storage"));
  EXPECT_THAT(c.adapter.label_keys_to_copy, ElementsAre("team", "cost-center"));
  EXPECT_EQ(s.finished_workload_retention, absl::Minutes(10));
  EXPECT_EQ(c.adapter.after_deactivated_by_kueue, absl::ZeroDuration());
}

TEST(KueueConfigurationTest, EveryFieldV1beta1) {
  absl::StatusOr<KueueConfiguration> c = Parse(kAllFieldsV1beta1);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->api_version, "config.kueue.x-k8s.io/v1beta1");
  EXPECT_EQ(c->source, "kueue.yaml");
  ExpectAllFields(*c);
}

TEST(KueueConfigurationTest, EveryFieldV1beta2) {
  absl::StatusOr<KueueConfiguration> c = Parse(kAllFieldsV1beta2);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->api_version, "config.kueue.x-k8s.io/v1beta2");
  ExpectAllFields(*c);
}

// Kueue's defaulting, per version (apis/config/v1beta1 and v1beta2 defaults).
TEST(KueueConfigurationTest, V1beta1DefaultsKeepEverythingOff) {
  absl::StatusOr<KueueConfiguration> c =
      Parse("apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\n");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_FALSE(c->scheduler.fair_sharing.enable);
  EXPECT_FALSE(c->scheduler.admission_fair_sharing.enable);
  EXPECT_FALSE(c->scheduler.wait_for_pods_ready.enable);
  EXPECT_FALSE(c->adapter.manage_jobs_without_queue_name);
  EXPECT_THAT(c->adapter.frameworks, ElementsAre("batch/job"));
  EXPECT_THAT(c->warnings, IsEmpty());
}

TEST(KueueConfigurationTest, V1beta1EnabledSectionsTakeKueueDefaults) {
  absl::StatusOr<KueueConfiguration> c = Parse(R"(
apiVersion: config.kueue.x-k8s.io/v1beta1
kind: Configuration
fairSharing: {enable: true}
admissionFairSharing: {usageHalfLifeTime: 10m, usageSamplingInterval: 0s}
waitForPodsReady: {enable: true}
)");
  ASSERT_TRUE(c.ok()) << c.status();
  const core::SchedulerConfig& s = c->scheduler;
  EXPECT_THAT(s.fair_sharing.preemption_strategies,
              ElementsAre(Strategy::kLessThanOrEqualToFinalShare, Strategy::kLessThanInitialShare));
  EXPECT_EQ(s.admission_fair_sharing.usage_sampling_interval, absl::Minutes(5));  // 0 = default
  EXPECT_EQ(s.wait_for_pods_ready.timeout, absl::Minutes(5));
  EXPECT_TRUE(s.wait_for_pods_ready.block_admission);  // v1beta1: defaults to enable
  EXPECT_EQ(s.wait_for_pods_ready.recovery_timeout, absl::Minutes(5));
  EXPECT_EQ(s.wait_for_pods_ready.requeuing_timestamp, core::RequeuingTimestamp::kEviction);
  EXPECT_EQ(s.wait_for_pods_ready.backoff_base_seconds, 60);
  EXPECT_EQ(s.wait_for_pods_ready.backoff_max_seconds, 3600);
  EXPECT_FALSE(s.wait_for_pods_ready.backoff_limit_count.has_value());
}

TEST(KueueConfigurationTest, V1beta1DisabledSectionStaysOffButIsChecked) {
  absl::StatusOr<KueueConfiguration> off = Parse(
      "apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\n"
      "waitForPodsReady: {enable: false, timeout: 1m}\nfairSharing: {enable: false}\n");
  ASSERT_TRUE(off.ok()) << off.status();
  EXPECT_FALSE(off->scheduler.wait_for_pods_ready.enable);
  EXPECT_FALSE(off->scheduler.fair_sharing.enable);
  absl::StatusOr<KueueConfiguration> typo = Parse(
      "apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\n"
      "waitForPodsReady: {enable: false, timeout: soon}\n");
  EXPECT_THAT(typo.status().message(),
              HasSubstr("kueue.yaml: waitForPodsReady.timeout: invalid duration \"soon\""));
}

// Kueue 0.19's v1beta2 defaulting enables waitForPodsReady (30m, no blocking) even when the
// section is absent; the DisableWaitForPodsReady gate turns it off.
TEST(KueueConfigurationTest, V1beta2WaitForPodsReadyOnByDefault) {
  absl::StatusOr<KueueConfiguration> c =
      Parse("apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n");
  ASSERT_TRUE(c.ok()) << c.status();
  const core::SchedulerConfig::WaitForPodsReady& w = c->scheduler.wait_for_pods_ready;
  EXPECT_TRUE(w.enable);
  EXPECT_EQ(w.timeout, absl::Minutes(30));
  EXPECT_FALSE(w.block_admission);
  EXPECT_EQ(w.recovery_timeout, absl::Minutes(30));
  EXPECT_THAT(c->warnings, Contains(HasSubstr("waitForPodsReady: not set; enabled")));
  EXPECT_FALSE(c->scheduler.fair_sharing.enable);
  EXPECT_FALSE(c->scheduler.admission_fair_sharing.enable);

  absl::StatusOr<KueueConfiguration> off = Parse(
      "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"
      "featureGates: {DisableWaitForPodsReady: true}\n");
  ASSERT_TRUE(off.ok()) << off.status();
  EXPECT_FALSE(off->scheduler.wait_for_pods_ready.enable);
}

// The gates that are one switch of the scheduler (kSchedulerGates), each at Kueue's default
// unless set.
struct SwitchGate {
  std::string name;
  bool core::SchedulerConfig::*field;
};

class SwitchGateTest : public ::testing::TestWithParam<SwitchGate> {};

TEST_P(SwitchGateTest, IsKueuesDefaultUnlessSet) {
  const SwitchGate& gate = GetParam();
  const KueueFeatureGate* known = FindKueueFeatureGate(gate.name);
  ASSERT_NE(known, nullptr);
  for (const char* version : {"v1beta1", "v1beta2"}) {
    const std::string head =
        absl::StrCat("apiVersion: config.kueue.x-k8s.io/", version, "\nkind: Configuration\n");
    absl::StatusOr<KueueConfiguration> unset = Parse(head);
    ASSERT_TRUE(unset.ok()) << unset.status();
    EXPECT_EQ(unset->scheduler.*gate.field, known->default_value);
    for (const bool on : {true, false}) {
      absl::StatusOr<KueueConfiguration> c = Parse(
          absl::StrCat(head, "featureGates: {", gate.name, ": ", on ? "true" : "false", "}\n"));
      ASSERT_TRUE(c.ok()) << c.status();
      EXPECT_EQ(c->scheduler.*gate.field, on);
      // Kept in the effective document, so tollgated --config reads it back the same.
      EXPECT_THAT(EffectiveConfigurationJson(*c),
                  HasSubstr(absl::StrCat("\"", gate.name, "\":", on ? "true" : "false")));
    }
    absl::StatusOr<KueueConfiguration> bad =
        Parse(absl::StrCat(head, "featureGates: {", gate.name, ": sometimes}\n"));
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(bad.status().message(), HasSubstr("featureGates." + gate.name));
    EXPECT_THAT(bad.status().message(), HasSubstr("sometimes"));
  }
}

// A Configuration written for Kueue often spells out gates at their defaults (Kueue's tests turn
// TopologyAwareScheduling or PartialAdmission on explicitly); those load and change nothing, and
// so do either values of a gate that only switches a cache in Kueue.
TEST(KueueConfigurationTest, GatesAtWhatTollgateDoesAreAccepted) {
  struct Case {
    const char* gates;
    const char* kept;  // one of them, as the effective document writes it
  };
  for (const Case& c :
       {Case{"{TopologyAwareScheduling: true, PartialAdmission: true, FlavorFungibility: true}",
             R"("PartialAdmission":true)"},
        Case{"{ConcurrentAdmission: false, PriorityBoost: false, TASBalancedPlacement: false}",
             R"("PriorityBoost":false)"},
        Case{"{SchedulingEquivalenceHashing: false, TASCacheTopologyTree: false}",
             R"("TASCacheTopologyTree":false)"},
        Case{"{SchedulingEquivalenceHashing: true}", R"("SchedulingEquivalenceHashing":true)"}}) {
    SCOPED_TRACE(c.gates);
    absl::StatusOr<KueueConfiguration> config =
        Parse(absl::StrCat("apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n",
                           "featureGates: ", c.gates, "\n"));
    ASSERT_TRUE(config.ok()) << config.status();
    // Kept in the effective document, so tollgated --config reads it back the same.
    EXPECT_THAT(EffectiveConfigurationJson(*config), HasSubstr(c.kept));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Gates, SwitchGateTest,
    ::testing::Values(
        SwitchGate{"TASReplaceNodeDueToNotReadyOverFixedTime",
                   &core::SchedulerConfig::replace_node_not_ready_over_fixed_time},
        SwitchGate{"PrioritizePreemptorWorkloads",
                   &core::SchedulerConfig::prioritize_preemptor_workloads},
        SwitchGate{"PrioritySortingWithinCohort",
                   &core::SchedulerConfig::priority_sorting_within_cohort},
        SwitchGate{"RecomputeAssignmentUponPreemptionTargetsOverlap",
                   &core::SchedulerConfig::recompute_assignment_upon_preemption_targets_overlap},
        SwitchGate{"PartialAdmission", &core::SchedulerConfig::partial_admission},
        SwitchGate{"ReclaimablePods", &core::SchedulerConfig::reclaimable_pods},
        SwitchGate{"AdmissionGatedBy", &core::SchedulerConfig::admission_gated_by},
        SwitchGate{"TASFailedNodeReplacementFailFast",
                   &core::SchedulerConfig::tas_failed_node_replacement_fail_fast},
        SwitchGate{"TASRecomputeAssignmentWithinSchedulingCycle",
                   &core::SchedulerConfig::tas_recompute_assignment_within_scheduling_cycle},
        SwitchGate{"PriorityBoost", &core::SchedulerConfig::priority_boost},
        SwitchGate{"TASBalancedPlacement", &core::SchedulerConfig::tas_balanced_placement},
        SwitchGate{"TASRespectNodeAffinityPreferred",
                   &core::SchedulerConfig::tas_respect_node_affinity_preferred}),
    [](const auto& info) { return info.param.name; });

TEST(KueueConfigurationTest, AdmissionFairSharingGateOffDisablesIt) {
  absl::StatusOr<KueueConfiguration> c = Parse(
      "apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\n"
      "featureGates: {AdmissionFairSharing: false}\n"
      "admissionFairSharing: {usageHalfLifeTime: 1h}\n");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_FALSE(c->scheduler.admission_fair_sharing.enable);
  EXPECT_THAT(c->warnings, Contains(HasSubstr("featureGates.AdmissionFairSharing is false")));
}

// Kueue's own controller_manager_config.yaml: everything in it configures the controller
// process, so it loads with warnings naming each field.
TEST(KueueConfigurationTest, ControllerFieldsAreIgnoredWithAWarningNamingThem) {
  absl::StatusOr<KueueConfiguration> c = Parse(R"(
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: kueue-system
health:
  healthProbeBindAddress: :8081
metrics:
  bindAddress: :8443
webhook:
  port: 9443
leaderElection:
  leaderElect: true
  resourceName: c1f6bfd2.kueue.x-k8s.io
controller:
  groupKindConcurrency:
    Job.batch: 5
clientConnection:
  qps: 300
  burst: 500
internalCertManagement: {enable: false}
visibilityServer: {bindPort: 8082}
integrations:
  frameworks: [batch/job, pod, deployment]
featureGates: {DisableWaitForPodsReady: true}
)");
  ASSERT_TRUE(c.ok()) << c.status();
  for (const char* field :
       {"namespace", "health", "metrics", "webhook", "leaderElection", "controller",
        "clientConnection", "internalCertManagement", "visibilityServer"}) {
    EXPECT_THAT(c->warnings, Contains(HasSubstr(std::string(field) + ": ignored: configures")))
        << field;
  }
  EXPECT_THAT(c->adapter.frameworks, ElementsAre("batch/job", "pod", "deployment"));
}

struct BadCase {
  std::string name;
  std::string text;
  std::string error;
};

class BadConfigurationTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadConfigurationTest, RefusedNamingFieldAndValue) {
  absl::StatusOr<KueueConfiguration> c = Parse(GetParam().text);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(c.status().message(), HasSubstr(GetParam().error));
}

constexpr char kB1[] = "apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\n";
constexpr char kB2[] = "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n";

INSTANTIATE_TEST_SUITE_P(
    Cases, BadConfigurationTest,
    ::testing::Values(
        BadCase{"UnknownTopLevelField", std::string(kB1) + "fairShareing: {enable: true}\n",
                "kueue.yaml: fairShareing: unknown field"},
        BadCase{"UnknownNestedField",
                std::string(kB1) + "waitForPodsReady: {enable: true, timout: 1m}\n",
                "kueue.yaml: waitForPodsReady.timout: unknown field"},
        BadCase{"EnableIsV1beta1Only", std::string(kB2) + "fairSharing: {enable: true}\n",
                "fairSharing.enable: unknown field (config.kueue.x-k8s.io/v1beta1 only"},
        BadCase{"V1beta2StrategiesRequired", std::string(kB2) + "fairSharing: {}\n",
                "fairSharing.preemptionStrategies: required in v1beta2"},
        BadCase{"QueueVisibilityGoneInV1beta2",
                std::string(kB2) + "queueVisibility: {updateIntervalSeconds: 5}\n",
                "queueVisibility: unknown field"},
        BadCase{"BadDuration",
                std::string(kB1) + "admissionFairSharing: {usageHalfLifeTime: 1 week}\n",
                "admissionFairSharing.usageHalfLifeTime: invalid duration \"1 week\""},
        BadCase{"NegativeDuration", std::string(kB2) + "waitForPodsReady: {timeout: -5m}\n",
                "waitForPodsReady.timeout: must not be negative, got \"-5m\""},
        BadCase{
            "NegativeBackoff",
            std::string(kB2) + "waitForPodsReady: {requeuingStrategy: {backoffLimitCount: -1}}\n",
            "waitForPodsReady.requeuingStrategy.backoffLimitCount: expected an integer from 0 "
            "to 2147483647, got \"-1\""},
        BadCase{
            "BadTimestamp",
            std::string(kB2) + "waitForPodsReady: {requeuingStrategy: {timestamp: Admission}}\n",
            "requeuingStrategy.timestamp: expected Eviction or Creation, got \"Admission\""},
        BadCase{"NegativeWeight",
                std::string(kB1) + "admissionFairSharing: {resourceWeights: {cpu: -1}}\n",
                "admissionFairSharing.resourceWeights[cpu]: expected a non-negative number, got "
                "\"-1\""},
        BadCase{"BadStrategyList",
                std::string(kB2) + "fairSharing: {preemptionStrategies: [LessThanInitialShare, "
                                   "LessThanOrEqualToFinalShare]}\n",
                "fairSharing.preemptionStrategies: unsupported list [LessThanInitialShare, "
                "LessThanOrEqualToFinalShare]"},
        BadCase{"BadBool", std::string(kB1) + "manageJobsWithoutQueueName: maybe\n",
                "manageJobsWithoutQueueName"},
        BadCase{"UnknownFramework", std::string(kB1) + "integrations: {frameworks: [batch/jobs]}\n",
                "integrations.frameworks[0]: unknown framework \"batch/jobs\""},
        BadCase{"MultiKueueNegativeGcInterval",
                std::string(kB1) + "multiKueue: {gcInterval: -1m}\n",
                "multiKueue.gcInterval: must not be negative, got \"-1m\""},
        BadCase{"MultiKueueBadOrigin", std::string(kB2) + "multiKueue: {origin: \"a b\"}\n",
                "multiKueue.origin: invalid label value \"a b\""},
        BadCase{
            "MultiKueueExternalFrameworksUnsupported",
            std::string(kB2) + "multiKueue: {externalFrameworks: [{name: Foo.v1.example.com}]}\n",
            "multiKueue.externalFrameworks: not supported by Tollgate"},
        BadCase{"MultiKueueClusterProfileUnsupported",
                std::string(kB2) + "multiKueue: {clusterProfile: {accessProviders: [{name: a}]}}\n",
                "multiKueue.clusterProfile: not supported by Tollgate"},
        BadCase{"MultiKueueStepSizeWithoutIncremental",
                std::string(kB2) + "multiKueue: {incrementalDispatcherConfig: {stepSize: 2}}\n",
                "multiKueue.incrementalDispatcherConfig: only valid when dispatcherName is "
                "kueue.x-k8s.io/multikueue-dispatcher-incremental, got "
                "\"kueue.x-k8s.io/multikueue-dispatcher-all-at-once\""},
        BadCase{"MultiKueueStepSizeZero",
                std::string(kB2) + "multiKueue: {dispatcherName: "
                                   "kueue.x-k8s.io/multikueue-dispatcher-incremental, "
                                   "incrementalDispatcherConfig: {stepSize: 0}}\n",
                "multiKueue.incrementalDispatcherConfig.stepSize: must be greater than or equal "
                "to 1, got 0"},
        BadCase{"MultiKueueStepSizeIsV1beta2Only",
                std::string(kB1) + "multiKueue: {incrementalDispatcherConfig: {stepSize: 2}}\n",
                "multiKueue.incrementalDispatcherConfig: unknown field"},
        BadCase{"TransformationStrategyUnknown",
                std::string(kB2) +
                    "resources: {transformations: [{input: nvidia.com/mig-4g.5gb, strategy: "
                    "Swap}]}\n",
                "kueue.yaml: resources.transformations[0].strategy: unsupported value \"Swap\" "
                "(expected Retain or Replace)"},
        BadCase{"TransformationInputTwice",
                std::string(kB1) +
                    "resources: {transformations: [{input: a, outputs: {b: 1}}, {input: c}, "
                    "{input: a, strategy: Replace}]}\n",
                "resources.transformations[2].input: duplicate value \"a\""},
        BadCase{"TransformationInputMissing",
                std::string(kB2) + "resources: {transformations: [{outputs: {b: 1}}]}\n",
                "resources.transformations[0].input: required"},
        BadCase{"TransformationUnknownField",
                std::string(kB2) + "resources: {transformations: [{input: a, multiplyby: b}]}\n",
                "resources.transformations[0].multiplyby: unknown field"},
        BadCase{"TransformationBadQuantity",
                std::string(kB2) +
                    "resources: {transformations: [{input: a, outputs: {example.com/b: 2 "
                    "units}}]}\n",
                "resources.transformations[0].outputs[example.com/b]: malformed quantity \"2 "
                "units\""},
        BadCase{
            "TransformationFactorOutOfRange",
            std::string(kB2) + "resources: {transformations: [{input: a, outputs: {b: 1e30}}]}\n",
            "resources.transformations[0].outputs[b]: out of range: \"1e30\""},
        BadCase{"TransformationsNotAList",
                std::string(kB2) + "resources: {transformations: {input: a}}\n",
                "resources.transformations"},
        BadCase{"QuotaCheckStrategyUnknown",
                std::string(kB2) + "resources: {quotaCheckStrategy: ignoreUndeclared}\n",
                "kueue.yaml: resources.quotaCheckStrategy: unsupported value "
                "\"ignoreUndeclared\" (expected BlockUndeclared or IgnoreUndeclared)"},
        BadCase{"IgnoreUndeclaredWithExcludedPrefixes",
                std::string(kB2) +
                    "resources: {excludeResourcePrefixes: [example.com/], quotaCheckStrategy: "
                    "IgnoreUndeclared}\n",
                "resources.quotaCheckStrategy: \"IgnoreUndeclared\": excludeResourcePrefixes is "
                "not allowed when quotaCheckStrategy is IgnoreUndeclared"},
        BadCase{"QuotaCheckStrategyIsV1beta2Only",
                std::string(kB1) + "resources: {quotaCheckStrategy: IgnoreUndeclared}\n",
                "resources.quotaCheckStrategy: unknown field"},
        BadCase{"DeviceClassMappingsUnsupported",
                std::string(kB2) +
                    "resources: {deviceClassMappings: [{name: gpu, deviceClassNames: [a]}]}\n",
                "resources.deviceClassMappings: not supported by Tollgate"},
        // Kueue's validateObjectRetentionPolicies: negative durations, each named.
        BadCase{"NegativeAfterFinished",
                std::string(kB2) + "objectRetentionPolicies: {workloads: {afterFinished: -1s}}\n",
                "objectRetentionPolicies.workloads.afterFinished: must not be negative, got "
                "\"-1s\""},
        BadCase{"NegativeAfterDeactivatedByKueue",
                std::string(kB1) +
                    "objectRetentionPolicies: {workloads: {afterDeactivatedByKueue: -2m}}\n",
                "objectRetentionPolicies.workloads.afterDeactivatedByKueue: must not be negative, "
                "got \"-2m\""},
        BadCase{"RetentionUnknownField",
                std::string(kB2) + "objectRetentionPolicies: {workloads: {afterFinish: 1h}}\n",
                "objectRetentionPolicies.workloads.afterFinish: unknown field"},
        BadCase{"RetentionOtherObjects",
                std::string(kB2) + "objectRetentionPolicies: {jobs: {afterFinished: 1h}}\n",
                "objectRetentionPolicies.jobs: unknown field"},
        BadCase{"RetentionBadDuration",
                std::string(kB2) + "objectRetentionPolicies: {workloads: {afterFinished: 10}}\n",
                "objectRetentionPolicies.workloads.afterFinished: invalid duration"},
        BadCase{"LabelKeysToCopyNotAList",
                std::string(kB2) + "integrations: {labelKeysToCopy: team}\n",
                "integrations.labelKeysToCopy"},
        BadCase{"OtherFeatureGateAwayFromItsDefault",
                std::string(kB2) + "featureGates: {TopologyAwareScheduling: false}\n",
                "featureGates.TopologyAwareScheduling: feature gate not supported by Tollgate at "
                "this value (value false); Tollgate behaves as Kueue does with the gate at its "
                "default, true"},
        BadCase{"AlphaFeatureGateOn",
                std::string(kB2) + "featureGates: {MultiKueueOrchestratedPreemption: true}\n",
                "featureGates.MultiKueueOrchestratedPreemption: feature gate not supported by "
                "Tollgate at this value (value true)"},
        BadCase{"UnknownFeatureGate", std::string(kB2) + "featureGates: {LendingLimit: true}\n",
                "featureGates.LendingLimit: unrecognized feature gate"},
        BadCase{"WrongKind", "apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\n",
                "kind: expected Configuration, got \"ClusterQueue\""},
        BadCase{"WrongApiVersion", "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Configuration\n",
                "apiVersion: unsupported \"kueue.x-k8s.io/v1beta1\""},
        BadCase{"MissingApiVersion", "kind: Configuration\n", "apiVersion: required"},
        BadCase{"TwoDocuments", std::string(kB1) + "---\n" + kB1,
                "want exactly one Configuration document, found 2"}),
    [](const ::testing::TestParamInfo<BadCase>& info) { return info.param.name; });

// Kueue's resources.transformations, in either version: strategy defaults to Retain, outputs
// keep their quantities exactly, multiplyBy is optional.
TEST(KueueConfigurationTest, TransformationsAreRead) {
  for (const char* header : {kB1, kB2}) {
    absl::StatusOr<KueueConfiguration> c = Parse(std::string(header) + R"(
resources:
  transformations:
  - input: nvidia.com/mig-1g.5gb
    strategy: Replace
    outputs: {example.com/accelerator-memory: 5Ki, example.com/credits: "10"}
  - input: nvidia.com/gpumem
    multiplyBy: nvidia.com/gpu
    outputs: {quota.example.com/gpu-memory: 500m}
  - input: cpu
    strategy: ""
)");
    ASSERT_TRUE(c.ok()) << c.status();
    const std::vector<core::ResourceTransformation>& t = c->scheduler.resource_transformations;
    ASSERT_EQ(t.size(), 3u);
    EXPECT_EQ(t[0].input, "nvidia.com/mig-1g.5gb");
    EXPECT_EQ(t[0].strategy, core::TransformationStrategy::kReplace);
    EXPECT_EQ(t[0].multiply_by, "");
    ASSERT_EQ(t[0].outputs.size(), 2u);
    EXPECT_EQ(t[0].outputs[0].first, "example.com/accelerator-memory");
    EXPECT_EQ(t[0].outputs[0].second.Value(), 5120);
    EXPECT_EQ(t[0].outputs[1].first, "example.com/credits");
    EXPECT_EQ(t[0].outputs[1].second.Value(), 10);
    EXPECT_EQ(t[1].strategy, core::TransformationStrategy::kRetain);
    EXPECT_EQ(t[1].multiply_by, "nvidia.com/gpu");
    EXPECT_EQ(t[1].outputs[0].second.MilliValue(), 500);
    EXPECT_EQ(t[2].strategy, core::TransformationStrategy::kRetain);
    EXPECT_TRUE(t[2].outputs.empty());
  }
}

TEST(KueueConfigurationTest, QuotaCheckStrategyIsRead) {
  absl::StatusOr<KueueConfiguration> c = Parse(kB2);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->scheduler.quota_check_strategy, core::QuotaCheckStrategy::kBlockUndeclared);
  c = Parse(std::string(kB2) + "resources: {quotaCheckStrategy: IgnoreUndeclared}\n");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->scheduler.quota_check_strategy, core::QuotaCheckStrategy::kIgnoreUndeclared);
  // BlockUndeclared goes with excluded prefixes.
  c = Parse(std::string(kB2) +
            "resources: {excludeResourcePrefixes: [a/], quotaCheckStrategy: BlockUndeclared}\n");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->scheduler.quota_check_strategy, core::QuotaCheckStrategy::kBlockUndeclared);
}

// Kueue's QuotaCheckStrategy gate (beta, on): off, the field is neither checked nor read.
TEST(KueueConfigurationTest, QuotaCheckStrategyGateOffIgnoresTheField) {
  absl::StatusOr<KueueConfiguration> c =
      Parse(std::string(kB2) +
            "resources: {excludeResourcePrefixes: [a/], quotaCheckStrategy: Whatever}\n"
            "featureGates: {QuotaCheckStrategy: false}\n");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->scheduler.quota_check_strategy, core::QuotaCheckStrategy::kBlockUndeclared);
  EXPECT_THAT(c->warnings, Contains(HasSubstr("resources.quotaCheckStrategy: ignored")));
  c = Parse(std::string(kB2) +
            "resources: {quotaCheckStrategy: IgnoreUndeclared}\n"
            "featureGates: {QuotaCheckStrategy: false}\n");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->scheduler.quota_check_strategy, core::QuotaCheckStrategy::kBlockUndeclared);
}

// recoveryTimeout takes effect (ReportPodsReady ready=false; scenario
// preemption/54-podsready-recovery-timeout): read without a warning, 0s turning it off.
TEST(KueueConfigurationTest, RecoveryTimeoutIsReadWithoutAWarning) {
  absl::StatusOr<KueueConfiguration> c =
      Parse(std::string(kB2) + "waitForPodsReady: {timeout: 2m, recoveryTimeout: 1m}\n");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_THAT(c->warnings, Not(Contains(HasSubstr("recoveryTimeout"))));
  EXPECT_EQ(c->scheduler.wait_for_pods_ready.recovery_timeout, absl::Minutes(1));
  c = Parse(std::string(kB2) + "waitForPodsReady: {timeout: 2m, recoveryTimeout: 0s}\n");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->scheduler.wait_for_pods_ready.recovery_timeout, absl::ZeroDuration());
}

TEST(KueueConfigurationTest, FairSharingFlagAddsButDoesNotContradict) {
  KueueConfiguration none;
  ASSERT_TRUE(ApplyFairSharingFlag(std::nullopt, none).ok());
  EXPECT_FALSE(none.scheduler.fair_sharing.enable);
  ASSERT_TRUE(ApplyFairSharingFlag(true, none).ok());
  EXPECT_TRUE(none.scheduler.fair_sharing.enable);

  absl::StatusOr<KueueConfiguration> file =
      Parse(std::string(kB2) + "fairSharing: {preemptionStrategies: [LessThanInitialShare]}\n");
  ASSERT_TRUE(file.ok()) << file.status();
  ASSERT_TRUE(ApplyFairSharingFlag(true, *file).ok());
  EXPECT_THAT(file->scheduler.fair_sharing.preemption_strategies,
              ElementsAre(Strategy::kLessThanInitialShare));
  absl::Status conflict = ApplyFairSharingFlag(false, *file);
  EXPECT_THAT(conflict.message(), HasSubstr("--fair-sharing=false conflicts with kueue.yaml"));
}

// `tollgate get config -o yaml` output is a v1beta2 Configuration that reads back to the same
// effective configuration, whichever version it came from.
TEST(KueueConfigurationTest, EffectiveJsonRoundTrips) {
  const std::string transformed = std::string(kB2) + R"(
resources:
  quotaCheckStrategy: IgnoreUndeclared
  transformations:
  - {input: nvidia.com/mig-1g.5gb, strategy: Replace, outputs: {example.com/memory: 5Ki, b: "-1.5"}}
  - {input: nvidia.com/gpumem, multiplyBy: nvidia.com/gpu, outputs: {c: 3m}}
)";
  for (const std::string& text : {std::string(kAllFieldsV1beta1), std::string(kAllFieldsV1beta2),
                                  std::string(kB1), std::string(kB2), transformed}) {
    absl::StatusOr<KueueConfiguration> c = Parse(text);
    ASSERT_TRUE(c.ok()) << c.status();
    const std::string json = EffectiveConfigurationJson(*c);
    ASSERT_TRUE(nlohmann::json::accept(json)) << json;
    absl::StatusOr<KueueConfiguration> back = ParseKueueConfigurationText(json, "effective.json");
    ASSERT_TRUE(back.ok()) << back.status() << "\n" << json;
    const core::SchedulerConfig& a = c->scheduler;
    const core::SchedulerConfig& b = back->scheduler;
    EXPECT_EQ(a.fair_sharing.enable, b.fair_sharing.enable) << json;
    EXPECT_EQ(
        a.fair_sharing.enable ? a.fair_sharing.preemption_strategies : std::vector<Strategy>{},
        b.fair_sharing.enable ? b.fair_sharing.preemption_strategies : std::vector<Strategy>{});
    EXPECT_EQ(a.admission_fair_sharing.enable, b.admission_fair_sharing.enable) << json;
    EXPECT_EQ(a.admission_fair_sharing.usage_half_life_time,
              b.admission_fair_sharing.usage_half_life_time);
    EXPECT_EQ(a.admission_fair_sharing.resource_weights, b.admission_fair_sharing.resource_weights);
    EXPECT_EQ(a.wait_for_pods_ready.enable, b.wait_for_pods_ready.enable) << json;
    if (a.wait_for_pods_ready.enable) {
      EXPECT_EQ(a.wait_for_pods_ready.timeout, b.wait_for_pods_ready.timeout);
      EXPECT_EQ(a.wait_for_pods_ready.block_admission, b.wait_for_pods_ready.block_admission);
      EXPECT_EQ(a.wait_for_pods_ready.backoff_limit_count,
                b.wait_for_pods_ready.backoff_limit_count);
      EXPECT_EQ(a.wait_for_pods_ready.requeuing_timestamp,
                b.wait_for_pods_ready.requeuing_timestamp);
    }
    EXPECT_EQ(a.exclude_resource_prefixes, b.exclude_resource_prefixes);
    EXPECT_EQ(a.quota_check_strategy, b.quota_check_strategy) << json;
    ASSERT_EQ(a.resource_transformations.size(), b.resource_transformations.size()) << json;
    for (size_t i = 0; i < a.resource_transformations.size(); ++i) {
      const core::ResourceTransformation& x = a.resource_transformations[i];
      const core::ResourceTransformation& y = b.resource_transformations[i];
      EXPECT_EQ(x.input, y.input);
      EXPECT_EQ(x.strategy, y.strategy);
      EXPECT_EQ(x.multiply_by, y.multiply_by);
      ASSERT_EQ(x.outputs.size(), y.outputs.size());
      for (size_t o = 0; o < x.outputs.size(); ++o) {
        EXPECT_EQ(x.outputs[o].first, y.outputs[o].first);
        EXPECT_EQ(x.outputs[o].second.CanonicalString(), y.outputs[o].second.CanonicalString());
      }
    }
    EXPECT_EQ(c->adapter.frameworks, back->adapter.frameworks);
    EXPECT_EQ(c->adapter.manage_jobs_without_queue_name,
              back->adapter.manage_jobs_without_queue_name);
    EXPECT_EQ(c->multi_kueue, back->multi_kueue) << json;
    EXPECT_EQ(a.finished_workload_retention, b.finished_workload_retention) << json;
    EXPECT_EQ(c->adapter.after_deactivated_by_kueue, back->adapter.after_deactivated_by_kueue)
        << json;
    EXPECT_EQ(c->adapter.label_keys_to_copy, back->adapter.label_keys_to_copy) << json;
  }
}

// objectRetentionPolicies: unset keeps everything (Kueue's nil), each duration on its own, and
// an empty section or workloads map is the same as none.
TEST(KueueConfigurationTest, RetentionUnsetKeepsObjects) {
  for (const std::string& text :
       {std::string(kB2), std::string(kB2) + "objectRetentionPolicies: {}\n",
        std::string(kB2) + "objectRetentionPolicies: {workloads: {}}\n",
        std::string(kB1) + "objectRetentionPolicies: {workloads: {afterFinished: null}}\n"}) {
    absl::StatusOr<KueueConfiguration> c = Parse(text);
    ASSERT_TRUE(c.ok()) << c.status();
    EXPECT_EQ(c->scheduler.finished_workload_retention, std::nullopt) << text;
    EXPECT_EQ(c->adapter.after_deactivated_by_kueue, std::nullopt) << text;
    EXPECT_THAT(
        nlohmann::json::parse(EffectiveConfigurationJson(*c)).contains("objectRetentionPolicies"),
        false);
  }
  absl::StatusOr<KueueConfiguration> c =
      Parse(std::string(kB1) + "objectRetentionPolicies: {workloads: {afterFinished: 0s}}\n");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->scheduler.finished_workload_retention, absl::ZeroDuration());
  EXPECT_EQ(c->adapter.after_deactivated_by_kueue, std::nullopt);
  EXPECT_THAT(c->warnings, IsEmpty());
}

// The multiKueue section (tollgate-multikueue --config): Kueue's defaults when absent or empty,
// the Incremental dispatcher's step size in v1beta2.
TEST(KueueConfigurationTest, MultiKueueDefaultsAndStepSize) {
  for (const std::string& text :
       {std::string(kB1),
        std::string(kB2) + "multiKueue: {origin: \"\", dispatcherName: \"\"}\n"}) {
    absl::StatusOr<KueueConfiguration> c = Parse(text);
    ASSERT_TRUE(c.ok()) << c.status();
    EXPECT_EQ(c->multi_kueue, core::MultiKueueSettings{}) << text;
  }
  absl::StatusOr<KueueConfiguration> c = Parse(std::string(kB2) +
                                               "multiKueue: {gcInterval: 0s, dispatcherName: "
                                               "kueue.x-k8s.io/multikueue-dispatcher-incremental, "
                                               "incrementalDispatcherConfig: {stepSize: 2}}\n");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->multi_kueue.gc_interval, absl::ZeroDuration());
  EXPECT_EQ(c->multi_kueue.incremental_step_size, 2);
  EXPECT_THAT(EffectiveConfigurationJson(*c),
              HasSubstr("\"incrementalDispatcherConfig\":{\"stepSize\":2}"));
}

}  // namespace
}  // namespace tollgate::manifest
