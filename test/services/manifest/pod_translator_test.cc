#include "services/manifest/pod_translator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <ostream>
#include <string>

namespace tollgate::manifest {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

// The rule itself is tested in test/core/pod_requests_test.cc; these cases check that every
// part of a JSON PodSpec reaches it.
struct RequestsCase {
  std::string name;
  std::string pod_spec;
  std::map<std::string, std::string> want;
};

void PrintTo(const RequestsCase& c, std::ostream* os) { *os << c.name; }

class TemplateRequestsTest : public ::testing::TestWithParam<RequestsCase> {};

TEST_P(TemplateRequestsTest, ReadsEveryPartOfTheSpec) {
  const Json tmpl = {{"spec", Json::parse(GetParam().pod_spec)}};
  absl::StatusOr<v1::PodSet> ps = PodSetFromTemplate("main", 1, std::nullopt, tmpl, "template");
  ASSERT_TRUE(ps.ok()) << ps.status();
  const std::map<std::string, std::string> got(ps->requests().begin(), ps->requests().end());
  EXPECT_EQ(got, GetParam().want);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, TemplateRequestsTest,
    ::testing::Values(RequestsCase{"ContainersAreSummed",
                                   R"({"containers": [
                          {"resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}},
                          {"resources": {"requests": {"cpu": "1", "nvidia.com/gpu": "1"}}}]})",
                                   {{"cpu", "1500m"}, {"memory", "1Gi"}, {"nvidia.com/gpu", "1"}}},
                      RequestsCase{"LargestInitContainerWins",
                                   R"({"containers": [{"resources": {"requests": {"cpu": "1"}}}],
                         "initContainers": [
                          {"resources": {"requests": {"cpu": "3", "memory": "1Gi"}}},
                          {"resources": {"requests": {"cpu": "2"}}}]})",
                                   {{"cpu", "3"}, {"memory", "1Gi"}}},
                      RequestsCase{"SidecarsAddToContainersAndLaterInitContainers",
                                   // Sidecar 1 CPU runs alongside the 2-CPU init container (3) and
                                   // the 1-CPU app container (2): max is 3.
                                   R"({"containers": [{"resources": {"requests": {"cpu": "1"}}}],
                         "initContainers": [
                          {"restartPolicy": "Always", "resources": {"requests": {"cpu": "1"}}},
                          {"resources": {"requests": {"cpu": "2"}}}]})",
                                   {{"cpu", "3"}}},
                      RequestsCase{"OverheadIsAdded",
                                   R"({"containers": [{"resources": {"requests": {"cpu": "1"}}}],
                         "overhead": {"cpu": "250m", "memory": "120Mi"}})",
                                   {{"cpu", "1250m"}, {"memory", "120Mi"}}},
                      RequestsCase{
                          "PodLevelResourcesTakePrecedence",
                          R"({"resources": {"requests": {"cpu": "4"}, "limits": {"memory": "8Gi"}},
                         "containers": [
                          {"resources": {"requests": {"cpu": "1", "memory": "1Gi"}}},
                          {"resources": {"requests": {"nvidia.com/gpu": "1"}}}]})",
                          {{"cpu", "4"}, {"memory", "8Gi"}, {"nvidia.com/gpu", "1"}}},
                      RequestsCase{"LimitsFillMissingRequests",
                                   R"({"containers": [{"resources": {"requests": {"cpu": "1"},
                                                        "limits": {"cpu": "2",
                                                                   "nvidia.com/gpu": "1"}}}]})",
                                   {{"cpu", "1"}, {"nvidia.com/gpu", "1"}}},
                      RequestsCase{"NumbersAreQuantities",
                                   R"({"containers": [{"resources": {"requests": {"cpu": 2}}}]})",
                                   {{"cpu", "2"}}},
                      RequestsCase{"ZeroRequestsAreKept",
                                   R"({"containers": [{"resources": {"requests": {"cpu": "0"}}}]})",
                                   {{"cpu", "0"}}},
                      RequestsCase{"EmptySpec", R"({})", {}}),
    [](const auto& info) { return info.param.name; });

TEST(PodResourcesFromJsonTest, MalformedQuantityNamesThePath) {
  absl::StatusOr<core::PodResources> got = PodResourcesFromJson(
      Json::parse(R"({"containers": [{"resources": {"requests": {"cpu": "lots"}}}]})"),
      "spec.template.spec");
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(got.status().message()),
              ::testing::HasSubstr("spec.template.spec.containers[0].resources.requests.cpu"));
}

TEST(PodResourcesFromJsonTest, MalformedPodLevelQuantityNamesThePath) {
  absl::StatusOr<core::PodResources> got =
      PodResourcesFromJson(Json::parse(R"({"resources": {"limits": {"memory": true}}})"), "spec");
  ASSERT_FALSE(got.ok());
  EXPECT_THAT(std::string(got.status().message()),
              ::testing::HasSubstr("spec.resources.limits.memory"));
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
}  // namespace tollgate::manifest
