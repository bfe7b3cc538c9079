#include "core/pod_requests.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace tollgate::core {
namespace {

using Strings = std::map<std::string, std::string>;

ResourceList List(const Strings& text) {
  ResourceList out;
  for (const auto& [name, value] : text) {
    absl::StatusOr<Quantity> q = Quantity::Parse(value);
    EXPECT_TRUE(q.ok()) << name << ": " << value;
    if (q.ok()) out.emplace(name, *q);
  }
  return out;
}

ContainerResources Requests(const Strings& requests, const Strings& limits = {}) {
  return ContainerResources{List(requests), List(limits), false};
}

ContainerResources Sidecar(const Strings& requests) {
  return ContainerResources{List(requests), {}, true};
}

Strings Text(const ResourceList& list) {
  Strings out;
  for (const auto& [name, q] : list) out.emplace(name, q.ToString());
  return out;
}

struct PodCase {
  std::string name;
  PodResources pod;
  Strings want;
};

void PrintTo(const PodCase& c, std::ostream* os) { *os << c.name; }

class EffectivePodRequestsTest : public ::testing::TestWithParam<PodCase> {};

TEST_P(EffectivePodRequestsTest, MatchesKubernetes) {
  EXPECT_EQ(Text(EffectivePodRequests(GetParam().pod)), GetParam().want);
}

PodResources Pod(std::vector<ContainerResources> containers,
                 std::vector<ContainerResources> init_containers = {}) {
  PodResources pod;
  pod.containers = std::move(containers);
  pod.init_containers = std::move(init_containers);
  return pod;
}

PodResources WithOverhead(PodResources pod, const Strings& overhead) {
  pod.overhead = List(overhead);
  return pod;
}

PodResources WithPodLevel(PodResources pod, const Strings& requests, const Strings& limits) {
  pod.pod_requests = List(requests);
  pod.pod_limits = List(limits);
  return pod;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, EffectivePodRequestsTest,
    ::testing::Values(
        // "Resource Management for Pods and Containers": two containers of 0.25 CPU and 64Mi
        // each make a pod request of 0.5 CPU and 128Mi.
        PodCase{"DocsTwoContainersAreSummed",
                Pod({Requests({{"cpu", "250m"}, {"memory", "64Mi"}},
                              {{"cpu", "500m"}, {"memory", "128Mi"}}),
                     Requests({{"cpu", "250m"}, {"memory", "64Mi"}},
                              {{"cpu", "500m"}, {"memory", "128Mi"}})}),
                {{"cpu", "500m"}, {"memory", "128Mi"}}},
        // "Pod Overhead": containers that give only limits (2000m CPU, 200Mi in total) under a
        // RuntimeClass with 250m / 120Mi overhead request 2250m CPU and 320Mi.
        PodCase{"DocsOverheadOnTopOfLimitsAsRequests",
                WithOverhead(Pod({Requests({}, {{"cpu", "500m"}, {"memory", "100Mi"}}),
                                  Requests({}, {{"cpu", "1500m"}, {"memory", "100Mi"}})}),
                             {{"cpu", "250m"}, {"memory", "120Mi"}}),
                {{"cpu", "2250m"}, {"memory", "320Mi"}}},
        // "Assign Pod-level CPU and memory resources", pod-level-resources.yaml: pod-level
        // requests (1 CPU, 100Mi) take precedence over the one container that sets any.
        PodCase{
            "DocsPodLevelRequestsTakePrecedence",
            WithPodLevel(Pod({Requests({{"cpu", "0.5"}, {"memory", "50Mi"}},
                                       {{"cpu", "0.5"}, {"memory", "100Mi"}}),
                              Requests({})}),
                         {{"cpu", "1"}, {"memory", "100Mi"}}, {{"cpu", "1"}, {"memory", "200Mi"}}),
            {{"cpu", "1"}, {"memory", "100Mi"}}},
        // The same page, pod-level-cpu-request-limit.yaml: a container without resources.
        PodCase{"DocsPodLevelCpuOnly",
                WithPodLevel(Pod({Requests({})}), {{"cpu", "0.5"}}, {{"cpu", "1"}}),
                {{"cpu", "500m"}}},
        // Pod-level limits stand in for missing pod-level requests (the API server's Pod
        // defaulting; Kueue applies the same to Job templates). Resources the pod level does
        // not name (the GPU) keep the containers' aggregate.
        PodCase{"PodLevelLimitsDefaultTheRequests",
                WithPodLevel(Pod({Requests({{"cpu", "1"}, {"memory", "1Gi"}}),
                                  Requests({{"cpu", "1"}, {"nvidia.com/gpu", "1"}})}),
                             {{"cpu", "4"}}, {{"memory", "8Gi"}}),
                {{"cpu", "4"}, {"memory", "8Gi"}, {"nvidia.com/gpu", "1"}}},
        PodCase{"PodLevelIgnoresUnsupportedResources",
                WithPodLevel(Pod({Requests({{"nvidia.com/gpu", "1"}})}),
                             {{"nvidia.com/gpu", "8"}, {"hugepages-2Mi", "4Mi"}}, {}),
                {{"hugepages-2Mi", "4Mi"}, {"nvidia.com/gpu", "1"}}},
        PodCase{"PodLevelRequestsThenOverhead",
                WithOverhead(WithPodLevel(Pod({Requests({{"cpu", "1"}})}), {{"cpu", "2"}}, {}),
                             {{"cpu", "100m"}}),
                {{"cpu", "2100m"}}},
        // "Init Containers", resource sharing: the highest init request is the effective init
        // request, and the pod takes the larger of it and the app containers' sum.
        PodCase{"InitPeakWinsPerResource",
                Pod({Requests({{"cpu", "1"}, {"memory", "2Gi"}})},
                    {Requests({{"cpu", "4"}, {"memory", "1Gi"}}), Requests({{"cpu", "2"}})}),
                {{"cpu", "4"}, {"memory", "2Gi"}}},
        PodCase{"InitOnlyResourceCounts",
                Pod({Requests({{"cpu", "1"}})}, {Requests({{"ephemeral-storage", "10Gi"}})}),
                {{"cpu", "1"}, {"ephemeral-storage", "10Gi"}}},
        // KEP-753: InitContainerUse(i) = sum(sidecars before i) + init(i); the pod requests
        // max(max_i InitContainerUse(i), sum(containers) + sum(sidecars)). Here: the sidecar
        // (500m) runs beside the 2-CPU migration (2.5) and the 1-CPU app (1.5): 2.5 wins.
        PodCase{
            "SidecarAddsToLaterInitAndSteadyState",
            Pod({Requests({{"cpu", "1"}})}, {Sidecar({{"cpu", "500m"}}), Requests({{"cpu", "2"}})}),
            {{"cpu", "2500m"}}},
        // The sidecar starts after the 2-CPU init container ends, so that peak is 2, and the
        // steady state is 1 + 1.5.
        PodCase{"InitBeforeSidecarDoesNotCountIt",
                Pod({Requests({{"cpu", "1"}})},
                    {Requests({{"cpu", "2"}}), Sidecar({{"cpu", "1500m"}})}),
                {{"cpu", "2500m"}}},
        // Two sidecars: the second init container runs beside both (1 + 1 + 3 = 5 > 1 + 2).
        PodCase{"SidecarsAccumulate",
                Pod({Requests({{"cpu", "1"}, {"memory", "1Gi"}})},
                    {Sidecar({{"cpu", "1"}}), Sidecar({{"cpu", "1"}, {"memory", "512Mi"}}),
                     Requests({{"cpu", "3"}, {"memory", "256Mi"}})}),
                {{"cpu", "5"}, {"memory", "1536Mi"}}},
        PodCase{"RequestBeatsItsLimit",
                Pod({Requests({{"cpu", "250m"}}, {{"cpu", "1"}, {"memory", "2Gi"}})}),
                {{"cpu", "250m"}, {"memory", "2Gi"}}},
        // Kubernetes and Kueue keep a zero request; flavor assignment then skips it for a
        // resource the ClusterQueue does not cover.
        PodCase{"ZeroEntriesAreKept",
                Pod({Requests({{"cpu", "1"}, {"example.com/fpga", "0"}}),
                     Requests({{"example.com/fpga", "0"}})}),
                {{"cpu", "1"}, {"example.com/fpga", "0"}}},
        PodCase{"UntouchedTermKeepsItsFormat",
                Pod({Requests({{"memory", "1e9"}, {"cpu", "1500m"}})}),
                {{"cpu", "1500m"}, {"memory", "1e9"}}},
        PodCase{"SumTakesFirstNonZeroFormat",
                Pod({Requests({{"memory", "0"}}), Requests({{"memory", "1Gi"}}),
                     Requests({{"memory", "1G"}})}),
                {{"memory", "2073741824"}}},
        PodCase{"NoContainers", PodResources{}, {}}),
    [](const ::testing::TestParamInfo<PodCase>& info) { return info.param.name; });

TEST(EffectivePodRequestsTest, MemorySizedSumsStayExact) {
  // value * 1000 overflows int64 here; whole units must still add up exactly.
  PodResources pod = Pod({Requests({{"memory", "4Ei"}}), Requests({{"memory", "2Ei"}})});
  ResourceList got = EffectivePodRequests(pod);
  ASSERT_EQ(got.count("memory"), 1u);
  EXPECT_EQ(got.at("memory").Value(), int64_t{6} << 60);
}

TEST(EffectivePodRequestsTest, SaturatesInsteadOfOverflowing) {
  PodResources pod = Pod({Requests({{"memory", "8Ei"}}), Requests({{"memory", "8Ei"}})});
  EXPECT_EQ(EffectivePodRequests(pod).at("memory").Value(), std::numeric_limits<int64_t>::max());
}

TEST(IsPodLevelResourceTest, CpuMemoryAndHugepages) {
  EXPECT_TRUE(IsPodLevelResource("cpu"));
  EXPECT_TRUE(IsPodLevelResource("memory"));
  EXPECT_TRUE(IsPodLevelResource("hugepages-1Gi"));
  EXPECT_FALSE(IsPodLevelResource("ephemeral-storage"));
  EXPECT_FALSE(IsPodLevelResource("nvidia.com/gpu"));
}

constexpr absl::string_view kSpec = "spec.podSets[0].template.spec";

TEST(RequestsAboveLimitsTest, NamesEachContainerWhoseRequestIsAboveItsLimit) {
  PodResources pod;
  pod.init_containers = {Requests({{"cpu", "1"}}, {{"cpu", "500m"}})};
  pod.containers = {Requests({{"cpu", "2"}}, {{"cpu", "3"}}),
                    Requests({{"memory", "2Gi"}, {"cpu", "3"}}, {{"cpu", "2"}, {"memory", "1Gi"}})};
  pod.pod_requests = List({{"cpu", "4"}});
  pod.pod_limits = List({{"cpu", "3"}});
  EXPECT_THAT(RequestsAboveLimits(pod, kSpec),
              ::testing::ElementsAre(
                  "spec.podSets[0].template.spec.initContainers[0]: Invalid value: [\"cpu\"]: "
                  "requests must not exceed its limits",
                  "spec.podSets[0].template.spec.containers[1]: Invalid value: "
                  "[\"cpu\",\"memory\"]: requests must not exceed its limits",
                  "spec.podSets[0].template.spec.resources: Invalid value: [\"cpu\"]: "
                  "requests must not exceed its limits"));
}

TEST(RequestsAboveLimitsTest, RequestsWithinLimitsOrWithoutOneAreFine) {
  PodResources pod;
  pod.containers = {Requests({{"cpu", "2"}}, {{"cpu", "2"}}),        // equal
                    Requests({{"cpu", "5"}}),                        // no limit
                    Requests({}, {{"cpu", "1"}}),                    // the limit stands in
                    Requests({{"memory", "2Gi"}}, {{"cpu", "1"}})};  // other resources
  EXPECT_THAT(RequestsAboveLimits(pod, kSpec), ::testing::IsEmpty());
}

TEST(RequestsAboveLimitsTest, ComparesCpuInMilliUnitsAndTheRestInWholeUnits) {
  PodResources pod;
  // Kueue's ResourceValue: 1001m cpu is above 1; 1500m of a counted resource rounds up to 2,
  // above 1, while 1500m against 2 is not.
  pod.containers = {Requests({{"cpu", "1001m"}}, {{"cpu", "1"}}),
                    Requests({{"example.com/x", "1500m"}}, {{"example.com/x", "1"}}),
                    Requests({{"example.com/y", "1500m"}}, {{"example.com/y", "2"}})};
  EXPECT_THAT(RequestsAboveLimits(pod, kSpec),
              ::testing::ElementsAre(::testing::HasSubstr("containers[0]"),
                                     ::testing::HasSubstr("containers[1]")));
}

TEST(RefusedResourceFieldsTest, ReservedPodsAndNegativeQuantitiesWhereverWritten) {
  PodResources pod;
  pod.init_containers = {Requests({{"pods", "1"}}), Requests({}, {{"cpu", "-500m"}})};
  // A negative request is refused even though the other container's makes the sum positive.
  pod.containers = {Requests({{"cpu", "-1"}, {"memory", "1Gi"}}, {{"memory", "-2Gi"}}),
                    Requests({{"cpu", "2"}}, {{"pods", "1"}})};
  pod.pod_requests = List({{"cpu", "-1"}});
  pod.pod_limits = List({{"pods", "2"}});
  const std::string spec(kSpec);
  EXPECT_THAT(
      RefusedResourceFields(pod, kSpec),
      ::testing::ElementsAre(
          spec + ".initContainers[0].resources.requests[pods]: Invalid value: \"pods\": the key "
                 "is reserved for internal kueue use",
          spec + ".initContainers[1].resources.limits[cpu]: Invalid value: \"-500m\": must be "
                 "greater than or equal to 0",
          spec + ".containers[0].resources.requests[cpu]: Invalid value: \"-1\": must be greater "
                 "than or equal to 0",
          spec + ".containers[0].resources.limits[memory]: Invalid value: \"-2Gi\": must be "
                 "greater than or equal to 0",
          spec + ".containers[1].resources.limits[pods]: Invalid value: \"pods\": the key is "
                 "reserved for internal kueue use",
          spec + ".resources.requests[cpu]: Invalid value: \"-1\": must be greater than or "
                 "equal to 0",
          spec + ".resources.limits[pods]: Invalid value: \"pods\": the key is reserved for "
                 "internal kueue use"));
}

TEST(RefusedResourceFieldsTest, ZeroAndPositiveQuantitiesAreFine) {
  PodResources pod;
  pod.containers = {Requests({{"cpu", "0"}}, {{"cpu", "1"}})};
  pod.overhead = List({{"cpu", "100m"}});
  EXPECT_THAT(RefusedResourceFields(pod, kSpec), ::testing::IsEmpty());
}

TEST(InvalidResourcesMessageTest, KubernetesAggregateOfEveryPodSetsErrors) {
  WorkloadSpec spec;
  spec.pod_sets.resize(3);
  EXPECT_EQ(InvalidResourcesMessage(spec), "");
  spec.pod_sets[1].set_resource_errors({"e1"});
  EXPECT_EQ(InvalidResourcesMessage(spec), "resources validation failed: e1");
  spec.pod_sets[2].set_resource_errors({"e2", "e1"});
  EXPECT_EQ(InvalidResourcesMessage(spec), "resources validation failed: [e1, e2]");
}

}  // namespace
}  // namespace tollgate::core
