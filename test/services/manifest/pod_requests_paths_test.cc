// One pod, two ways in: as a Kueue Workload manifest (YAML, `tollgate apply`) and as a Job's pod
// template (JSON, `tollgate-kube`). Both must ask the queue for the same requests.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "services/manifest/json_util.h"
#include "services/manifest/manifest_parser.h"
#include "services/manifest/pod_translator.h"

namespace tollgate::manifest {
namespace {

using Requests = std::map<std::string, std::string>;

struct PathsCase {
  std::string name;
  // A core/v1 PodSpec in JSON, which is also YAML.
  std::string pod_spec;
  Requests want;
};

void PrintTo(const PathsCase& c, std::ostream* os) { *os << c.name; }

absl::StatusOr<Requests> ThroughManifestParser(const std::string& pod_spec) {
  absl::StatusOr<std::vector<manifest::Manifest>> parsed = manifest::ParseManifests(
      absl::StrCat("{apiVersion: kueue.x-k8s.io/v1beta2, kind: Workload, metadata: {name: w}, "
                   "spec: {podSets: [{name: main, count: 1, template: {spec: ",
                   pod_spec, "}}]}}"),
      "workload.yaml");
  if (!parsed.ok()) return parsed.status();
  const v1::PodSet& set = std::get<v1::Workload>(parsed->at(0).object).spec().pod_sets(0);
  return Requests(set.requests().begin(), set.requests().end());
}

absl::StatusOr<Requests> ThroughPodTranslator(const std::string& pod_spec) {
  const Json tmpl = {{"spec", Json::parse(pod_spec)}};
  absl::StatusOr<v1::PodSet> set = PodSetFromTemplate("main", 1, std::nullopt, tmpl, "template");
  if (!set.ok()) return set.status();
  return Requests(set->requests().begin(), set->requests().end());
}

class PodRequestsPathsTest : public ::testing::TestWithParam<PathsCase> {};

TEST_P(PodRequestsPathsTest, ManifestParserAndPodTranslatorAgree) {
  absl::StatusOr<Requests> yaml = ThroughManifestParser(GetParam().pod_spec);
  absl::StatusOr<Requests> json = ThroughPodTranslator(GetParam().pod_spec);
  ASSERT_TRUE(yaml.ok()) << yaml.status();
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_EQ(*yaml, *json);
  EXPECT_EQ(*yaml, GetParam().want);
}

INSTANTIATE_TEST_SUITE_P(
    Pods, PodRequestsPathsTest,
    ::testing::Values(
        PathsCase{"OneContainer",
                  R"({"containers": [{"name": "a", "resources": {"requests":
                        {"cpu": "1500m", "memory": "2Gi", "nvidia.com/gpu": "1"}}}]})",
                  {{"cpu", "1500m"}, {"memory", "2Gi"}, {"nvidia.com/gpu", "1"}}},
        PathsCase{"LimitsOnly",
                  R"({"containers": [{"name": "a", "resources": {"limits":
                        {"cpu": "2", "memory": "4Gi"}}}]})",
                  {{"cpu", "2"}, {"memory", "4Gi"}}},
        // The two paths used to disagree here: the JSON path ignored pod-level resources.
        PathsCase{"PodLevelResources",
                  R"({"resources": {"requests": {"cpu": "1", "memory": "100Mi"},
                                    "limits": {"cpu": "1", "memory": "200Mi"}},
                      "containers": [
                        {"name": "a", "resources": {"requests": {"cpu": "0.5", "memory": "50Mi"},
                                                    "limits": {"cpu": "0.5", "memory": "100Mi"}}},
                        {"name": "b"}]})",
                  {{"cpu", "1"}, {"memory", "100Mi"}}},
        // ... and here: the JSON path dropped the zero entry.
        PathsCase{"ZeroEntry",
                  R"({"containers": [{"name": "a", "resources": {"requests":
                        {"cpu": "1", "example.com/fpga": "0"}}}]})",
                  {{"cpu", "1"}, {"example.com/fpga", "0"}}},
        PathsCase{"SidecarAndInitContainers",
                  R"({"initContainers": [
                        {"name": "proxy", "restartPolicy": "Always",
                         "resources": {"requests": {"cpu": "500m", "memory": "64Mi"}}},
                        {"name": "migrate", "resources": {"requests": {"cpu": "2"}}}],
                      "containers": [{"name": "a", "resources": {"requests":
                        {"cpu": "1", "memory": "1Gi"}}}]})",
                  {{"cpu", "2500m"}, {"memory", "1088Mi"}}},
        PathsCase{"Overhead",
                  R"({"overhead": {"cpu": "250m", "memory": "120Mi"},
                      "containers": [
                        {"name": "a", "resources": {"limits": {"cpu": "500m", "memory": "100Mi"}}},
                        {"name": "b", "resources": {"limits": {"cpu": "1500m", "memory": "100Mi"}}}]})",
                  {{"cpu", "2250m"}, {"memory", "320Mi"}}}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace tollgate::manifest
