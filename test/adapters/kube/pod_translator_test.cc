#include "adapters/kube/pod_translator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace tollgate::adapters::kube {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

struct RequestsCase {
  std::string name;
  std::string pod_spec;
  ResourceAmounts want;
};

class EffectivePodRequestsTest : public ::testing::TestWithParam<RequestsCase> {};

TEST_P(EffectivePodRequestsTest, MatchesKubernetes) {
  absl::StatusOr<ResourceAmounts> got =
      EffectivePodRequests(Json::parse(GetParam().pod_spec), "spec");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, GetParam().want);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, EffectivePodRequestsTest,
    ::testing::Values(RequestsCase{"ContainersAreSummed",
                                   R"({"containers": [
                          {"resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}},
                          {"resources": {"requests": {"cpu": "1", "nvidia.com/gpu": "1"}}}]})",
                                   {{"cpu", 1500}, {"memory", 1LL << 30}, {"nvidia.com/gpu", 1}}},
                      RequestsCase{"LargestInitContainerWins",
                                   R"({"containers": [{"resources": {"requests": {"cpu": "1"}}}],
                         "initContainers": [
                          {"resources": {"requests": {"cpu": "3", "memory": "1Gi"}}},
                          {"resources": {"requests": {"cpu": "2"}}}]})",
                                   {{"cpu", 3000}, {"memory", 1LL << 30}}},
                      RequestsCase{"SidecarsAddToContainersAndLaterInitContainers",
                                   // Sidecar 1 CPU runs alongside the 2-CPU init container (3) and
                                   // the 1-CPU app container (2): max is 3.
                                   R"({"containers": [{"resources": {"requests": {"cpu": "1"}}}],
                         "initContainers": [
                          {"restartPolicy": "Always",
                           "resources": {"requests": {"cpu": "1"}}},
                          {"resources": {"requests": {"cpu": "2"}}}]})",
                                   {{"cpu", 3000}}},
                      RequestsCase{"InitContainerBeforeSidecarDoesNotCountIt",
                                   R"({"containers": [{"resources": {"requests": {"cpu": "1"}}}],
                         "initContainers": [
                          {"resources": {"requests": {"cpu": "2"}}},
                          {"restartPolicy": "Always",
                           "resources": {"requests": {"cpu": "1"}}}]})",
                                   {{"cpu", 2000}}},
                      RequestsCase{"OverheadIsAdded",
                                   R"({"containers": [{"resources": {"requests": {"cpu": "1"}}}],
                         "overhead": {"cpu": "250m", "memory": "120Mi"}})",
                                   {{"cpu", 1250}, {"memory", 120LL << 20}}},
                      RequestsCase{"LimitsFillMissingRequests",
                                   R"({"containers": [{"resources": {"requests": {"cpu": "1"},
                                                        "limits": {"cpu": "2",
                                                                   "nvidia.com/gpu": "1"}}}]})",
                                   {{"cpu", 1000}, {"nvidia.com/gpu", 1}}},
                      RequestsCase{"NumbersAreQuantities",
                                   R"({"containers": [{"resources":
                                                     {"requests": {"cpu": 2}}}]})",
                                   {{"cpu", 2000}}},
                      RequestsCase{"ZeroRequestsAreDropped",
                                   R"({"containers": [{"resources": {"requests": {"cpu": "0"}}}]})",
                                   {}},
                      RequestsCase{"EmptySpec", R"({})", {}}),
    [](const auto& info) { return info.param.name; });

TEST(EffectivePodRequestsTest, MalformedQuantityNamesThePath) {
  absl::StatusOr<ResourceAmounts> got = EffectivePodRequests(
      Json::parse(R"({"containers": [{"resources": {"requests": {"cpu": "lots"}}}]})"),
      "spec.template.spec");
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(got.status().message()),
              ::testing::HasSubstr("spec.template.spec.containers[0].resources.requests.cpu"));
}

TEST(PodSetFromTemplateTest, CopiesSelectorTolerationsAndFormatsRequests) {
  const Json tmpl = Json::parse(R"({"spec": {
      "nodeSelector": {"zone": "a"},
      "tolerations": [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}],
      "containers": [{"resources": {"requests": {"cpu": "1500m", "memory": "2Gi"}}}]}})");
  absl::StatusOr<v1::PodSet> ps = PodSetFromTemplate("main", 3, 2, tmpl, "spec.template");
  ASSERT_TRUE(ps.ok()) << ps.status();
  EXPECT_EQ(ps->name(), "main");
  EXPECT_EQ(ps->count(), 3);
  EXPECT_EQ(ps->min_count(), 2);
  EXPECT_THAT(ps->requests(),
              ::testing::UnorderedElementsAre(Pair("cpu", "1500m"), Pair("memory", "2Gi")));
  EXPECT_THAT(ps->node_selector(), ElementsAre(Pair("zone", "a")));
  ASSERT_EQ(ps->tolerations_size(), 1);
  EXPECT_EQ(ps->tolerations(0).key(), "gpu");
  EXPECT_EQ(ps->tolerations(0).operator_(), "Exists");
  EXPECT_EQ(ps->tolerations(0).effect(), "NoSchedule");
}

TEST(TolerationJsonTest, RoundTrips) {
  const Json t = Json::parse(
      R"({"key": "k", "operator": "Equal", "value": "v", "effect": "NoExecute",
          "tolerationSeconds": 30})");
  EXPECT_EQ(TolerationToJson(TolerationFromJson(t)), t);
}

}  // namespace
}  // namespace tollgate::adapters::kube
