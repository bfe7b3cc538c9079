#include "services/sim/multikueue_sim.h"

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/sim/scenario_parser.h"
#include "services/sim/scenario_runner.h"

namespace tollgate::sim {
namespace {

using ::testing::HasSubstr;

// A manager with one MultiKueue check over workers w1 and w2, both answering, and `steps`.
ScenarioResult RunWithWorkers(const std::string& steps) {
  const std::string text = absl::StrCat(R"(
name: t
objects:
  - {kind: ResourceFlavor, metadata: {name: default}}
  - {apiVersion: kueue.x-k8s.io/v1beta2, kind: MultiKueueConfig, metadata: {name: fleet},
     spec: {clusters: [w1, w2]}}
  - {apiVersion: kueue.x-k8s.io/v1beta2, kind: MultiKueueCluster, metadata: {name: w1},
     spec: {endpoint: {address: "127.0.0.1:7001", insecure: true}}}
  - {apiVersion: kueue.x-k8s.io/v1beta2, kind: MultiKueueCluster, metadata: {name: w2},
     spec: {endpoint: {address: "127.0.0.1:7002", insecure: true}}}
  - {apiVersion: kueue.x-k8s.io/v1beta2, kind: AdmissionCheck, metadata: {name: mk},
     spec: {controllerName: kueue.x-k8s.io/multikueue,
            parameters: {apiGroup: kueue.x-k8s.io, kind: MultiKueueConfig, name: fleet}}}
  - kind: ClusterQueue
    metadata: {name: cq}
    spec:
      admissionChecks: [mk]
      resourceGroups:
        - coveredResources: [cpu]
          flavors: [{name: default, resources: [{name: cpu, nominalQuota: 4}]}]
  - {kind: LocalQueue, metadata: {name: q, namespace: ns}, spec: {clusterQueue: cq}}
multiKueue: {workers: [w1, w2]}
steps:
  - submit: [{name: a, namespace: ns, queue: q, podSets: [{count: 1, requests: {cpu: 1}}]}]
  - settle: {}
)",
                                        steps);
  absl::StatusOr<Scenario> scenario = ParseScenarioText(text, "t.yaml");
  EXPECT_TRUE(scenario.ok()) << scenario.status();
  if (!scenario.ok()) return {};
  absl::StatusOr<ScenarioResult> result = RunScenario(*scenario);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? *result : ScenarioResult{};
}

TEST(MultiKueueSimTest, CopiesOnEveryAnsweringWorker) {
  const ScenarioResult result = RunWithWorkers(R"(
  - expect: {remoteCopies: {a: {w1: Pending, w2: Pending}}, dispatch: {a: {nominated: [w1, w2]}}}
)");
  EXPECT_TRUE(result.passed) << result.failure;
}

TEST(MultiKueueSimTest, ReportOnAWorkerWithoutACopyNamesBoth) {
  const ScenarioResult result = RunWithWorkers(R"(
  - remoteAdmit: [{workload: a, cluster: w1}]
  - remoteEvict: [{workload: a, cluster: w2}]
)");
  EXPECT_FALSE(result.passed);
  // w2's copy went when w1 won; the report names the worker and the workload.
  EXPECT_THAT(result.failure,
              HasSubstr("step 4 (remoteEvict): worker w2 holds no copy of ns/a (the controller "
                        "made none)"));
}

TEST(MultiKueueSimTest, UnknownWorkloadIsRefused) {
  const ScenarioResult result = RunWithWorkers(R"(
  - remoteAdmit: [{workload: nope, cluster: w1}]
)");
  EXPECT_FALSE(result.passed);
  EXPECT_THAT(result.failure, HasSubstr("step 3 (remoteAdmit): no workload named nope"));
}

TEST(MultiKueueSimTest, FinishedCopyIsNotAdmittedAgain) {
  const ScenarioResult result = RunWithWorkers(R"(
  - disconnectWorkers: [w1]
  - remoteFinish: [{workload: a, cluster: w1}]
  - remoteAdmit: [{workload: a, cluster: w1}]
)");
  EXPECT_FALSE(result.passed);
  EXPECT_THAT(result.failure,
              HasSubstr("step 5 (remoteAdmit): the copy of ns/a on w1 has finished"));
}

// A finish on a worker that does not answer is seen when it answers again.
TEST(MultiKueueSimTest, FinishSeenOnceTheWorkerAnswers) {
  const ScenarioResult result = RunWithWorkers(R"(
  - disconnectWorkers: [w1]
  - remoteAdmit: [{workload: a, cluster: w1}]
  - remoteFinish: [{workload: a, cluster: w1}]
  - expect: {quotaReserved: [a], remoteCopies: {a: {w1: Finished, w2: Pending}}}
  - connectWorkers: [w1]
  - expect: {finished: [a], remoteCopies: {a: {}}}
)");
  EXPECT_TRUE(result.passed) << result.failure;
}

}  // namespace
}  // namespace tollgate::sim
