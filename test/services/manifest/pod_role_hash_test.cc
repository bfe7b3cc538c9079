#include "services/manifest/pod_role_hash.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

// Role hashes against the values Kueue's own tests pin (pkg/controller/jobs/pod tests: a pod
// built by its test wrapper, whose one container has an empty, non-nil request list), and the
// shape against what Go's encoding/json writes.

namespace tollgate::manifest {
namespace {

using Json = nlohmann::json;
using ::testing::HasSubstr;

Json Spec(Json requests) {
  return Json{
      {"restartPolicy", "Never"},
      {"containers",
       Json::array({Json{{"name", "c"},
                         {"image", "pause"},
                         {"resources", {{"requests", requests}, {"limits", Json::object()}}}}})}};
}

TEST(PodRoleHashTest, MatchesKueuesPinnedHashes) {
  // Kueue's webhook test: MakePod with no requests.
  EXPECT_EQ(*RoleHashOfSpec(Spec(Json::object())), "a9f06f3a");
  // Its pod controller tests: cpu 1, and cpu 1 with memory 1Gi.
  EXPECT_EQ(*RoleHashOfSpec(Spec({{"cpu", "1"}})), "dc85db45");
  EXPECT_EQ(*RoleHashOfSpec(Spec({{"cpu", "1"}, {"memory", "1Gi"}})), "4ebdd4a6");
}

TEST(PodRoleHashTest, QuantitiesHashInTheirCanonicalSpelling) {
  // The API server stores 1000m as 1 and 1024Mi as 1Gi, and Kueue hashes what Go re-encodes.
  EXPECT_EQ(*RoleHashOfSpec(Spec({{"cpu", "1000m"}})), "dc85db45");
  EXPECT_EQ(*RoleHashOfSpec(Spec({{"cpu", 1}, {"memory", "1024Mi"}})), "4ebdd4a6");
}

TEST(PodRoleHashTest, ShapeIsWhatGoWritesForTheAdmissionRelevantFields) {
  Json spec = Spec({{"nvidia.com/gpu", "1"}, {"cpu", "500m"}});
  spec["containers"][0]["ports"] = Json::array({{{"containerPort", 80}, {"protocol", "TCP"}}});
  spec["nodeSelector"] = {{"pool", "a<b"}};
  spec["tolerations"] = Json::array({{{"operator", "Exists"}, {"tolerationSeconds", 0}}});
  spec["affinity"] = Json::parse(R"({"nodeAffinity": {
      "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"values": ["x"], "key": "zone", "operator": "In"}]}]}}})");
  spec["priority"] = 0;
  spec["initContainers"] = Json::array();
  spec["schedulerName"] = "ignored";
  EXPECT_EQ(
      *RoleShapeJson(spec),
      R"({"spec":{"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":)"
      R"({"nodeSelectorTerms":[{"matchExpressions":[{"key":"zone","operator":"In","values":["x"]}]}]}}},)"
      R"("containers":[{"ports":[{"containerPort":80,"protocol":"TCP"}],)"
      R"("resources":{"requests":{"cpu":"500m","nvidia.com/gpu":"1"}}}],"initContainers":null,)"
      R"("nodeSelector":{"pool":"a\u003cb"},"overhead":null,"priority":0,"resourceClaims":null,)"
      R"("runtimeClassName":null,"tolerations":[{"operator":"Exists","tolerationSeconds":0}],)"
      R"("topologySpreadConstraints":null}})");
}

TEST(PodRoleHashTest, PodLevelResourcesCountOnlyWhenSet) {
  Json spec = Spec(Json::object());
  spec["resources"] = {{"requests", {{"cpu", "1"}}}};
  const std::string with = *RoleHashOfSpec(spec);
  EXPECT_NE(with, "a9f06f3a");
  EXPECT_THAT(*RoleShapeJson(spec), HasSubstr(R"("resources":{"cpu":"1"})"));
}

TEST(PodRoleHashTest, TheAnnotationWinsOverTheSpec) {
  Json pod = {{"metadata", {{"annotations", {{"kueue.x-k8s.io/role-hash", "leader"}}}}},
              {"spec", Spec(Json::object())}};
  EXPECT_EQ(*PodRoleHash(pod), "leader");
  pod["metadata"].erase("annotations");
  EXPECT_EQ(*PodRoleHash(pod), "a9f06f3a");
}

TEST(PodRoleHashTest, BadValuesNameTheirField) {
  absl::StatusOr<std::string> bad = RoleHashOfSpec(Spec({{"cpu", "two"}}));
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("spec.containers[0].resources.requests.cpu"));
  Json spec = Spec(Json::object());
  spec["priority"] = "high";
  EXPECT_THAT(RoleHashOfSpec(spec).status().message(),
              HasSubstr("spec.priority: expected an integer"));
}

}  // namespace
}  // namespace tollgate::manifest
