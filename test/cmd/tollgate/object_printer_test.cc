#include "cmd/tollgate/object_printer.h"

#include <string>
#include <variant>
#include <vector>

#include "gtest/gtest.h"
#include "services/manifest/manifest_parser.h"

namespace tollgate::cli {
namespace {

TEST(ToYamlTest, PrintsAsKubectlDoes) {
  const Json j = Json::parse(R"({
    "kind": "ClusterQueue", "metadata": {"name": "a", "labels": {}},
    "spec": {"resourceGroups": [{"coveredResources": ["cpu", "memory"],
                                 "flavors": [{"name": "f", "resources": [
                                    {"name": "cpu", "nominalQuota": "32"}]}]}],
             "weird": "a: b", "empty": "", "flag": "true", "count": 3}})");
  EXPECT_EQ(ToYaml(j),
            "kind: ClusterQueue\n"
            "metadata:\n"
            "  labels: {}\n"
            "  name: a\n"
            "spec:\n"
            "  count: 3\n"
            "  empty: \"\"\n"
            "  flag: \"true\"\n"
            "  resourceGroups:\n"
            "  - coveredResources:\n"
            "    - cpu\n"
            "    - memory\n"
            "    flavors:\n"
            "    - name: f\n"
            "      resources:\n"
            "      - name: cpu\n"
            "        nominalQuota: \"32\"\n"
            "  weird: 'a: b'\n");
}

// go-yaml's choices, which kubectl prints with: double quotes for what would read as another
// type, single quotes (doubled inside) for what would not parse, folding past column 80.
TEST(ToYamlTest, QuotesAndFoldsAsKubectl) {
  const Json j = Json::parse(R"({"a": "2026-01-01T00:00:00Z", "b": "it's: here", "c": "-x",
    "d": "- x", "e": "no", "f": "1.5",
    "message": "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default-flavor, 8 more needed",
    "plain": "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen"})");
  EXPECT_EQ(
      ToYaml(j),
      "a: \"2026-01-01T00:00:00Z\"\n"
      "b: 'it''s: here'\n"
      "c: -x\n"
      "d: '- x'\n"
      "e: \"no\"\n"
      "f: \"1.5\"\n"
      "message: 'couldn''t assign flavors to pod set main: insufficient unused quota for\n"
      "  cpu in flavor default-flavor, 8 more needed'\n"
      "plain: one two three four five six seven eight nine ten eleven twelve thirteen fourteen\n"
      "  fifteen\n");
}

TEST(ToJsonTest, IndentsFourSpaces) {
  EXPECT_EQ(ToJson(Json::parse(R"({"b": [1], "a": "x"})")),
            "{\n    \"a\": \"x\",\n    \"b\": [\n        1\n    ]\n}\n");
}

TEST(JsonPathTest, FieldsIndexesRangesAndLiterals) {
  const Json list = ListOf({Json::parse(R"({"metadata": {"name": "a", "labels":
                                            {"kueue.x-k8s.io/queue-name": "q"}}, "n": 1})"),
                            Json::parse(R"({"metadata": {"name": "b"}, "n": 2})")});
  EXPECT_EQ(*RenderJsonPath(list, "{.items[*].metadata.name}"), "a b");
  EXPECT_EQ(*RenderJsonPath(list, "{.items[1].metadata.name}"), "b");
  EXPECT_EQ(*RenderJsonPath(list, "{.items[-1].n}"), "2");
  EXPECT_EQ(*RenderJsonPath(list, "{range .items[*]}{.metadata.name}={.n}{\"\\n\"}{end}"),
            "a=1\nb=2\n");
  EXPECT_EQ(*RenderJsonPath(list, R"({.items[0].metadata.labels.kueue\.x-k8s\.io/queue-name})"),
            "q");
  EXPECT_EQ(*RenderJsonPath(list, "{.items[0].missing}"), "");
  EXPECT_EQ(*RenderJsonPath(list, "kind={.kind}"), "kind=List");
  EXPECT_FALSE(RenderJsonPath(list, "{.items[0]").ok());
  EXPECT_FALSE(RenderJsonPath(list, "{range .items[*]}{.n}").ok());
  EXPECT_FALSE(RenderJsonPath(list, "{.items[a]}").ok());
}

TEST(SortOrderTest, NumbersThenStringsStable) {
  std::vector<Json> items = {Json::parse(R"({"v": "b"})"), Json::parse(R"({"v": 10})"),
                             Json::parse(R"({"v": 9})"), Json::parse(R"({})"),
                             Json::parse(R"({"v": "a"})")};
  EXPECT_EQ(*SortOrder(items, ".v"), (std::vector<size_t>{3, 2, 1, 4, 0}));
  EXPECT_EQ(*SortOrder(items, "{.v}"), (std::vector<size_t>{3, 2, 1, 4, 0}));
}

TEST(ParseOutputFormatTest, NamesTheAcceptedFormats) {
  EXPECT_EQ(ParseOutputFormat("")->kind, OutputFormat::Kind::kTable);
  EXPECT_EQ(ParseOutputFormat("wide")->kind, OutputFormat::Kind::kWide);
  EXPECT_EQ(ParseOutputFormat("jsonpath={.a}")->jsonpath, "{.a}");
  EXPECT_EQ(ParseOutputFormat("xml").status().message(),
            "unsupported output format \"xml\" (supported: wide, yaml, json, name, "
            "jsonpath=TEMPLATE)");
}

// -o yaml of every kind parses back into the same object (what apply -f needs).
TEST(ManifestOfTest, RoundTripsThroughTheManifestParser) {
  const char* kInput = R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: team-a-cq, labels: {team: a}}
spec:
  cohort: evalhub
  namespaceSelector: {}
  queueingStrategy: StrictFIFO
  preemption: {withinClusterQueue: LowerPriority, reclaimWithinCohort: Any}
  resourceGroups:
  - coveredResources: [cpu, memory, nvidia.com/gpu]
    flavors:
    - name: default-flavor
      resources:
      - {name: cpu, nominalQuota: 32, borrowingLimit: 8}
      - {name: memory, nominalQuota: 128Gi}
      - {name: nvidia.com/gpu, nominalQuota: 4}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: gpu}
spec:
  nodeLabels: {accelerator: a100}
  nodeTaints: [{key: gpu, value: "true", effect: NoSchedule}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: q, namespace: team-a}
spec: {clusterQueue: team-a-cq}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata: {name: high}
value: 1000
description: urgent
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: pc}
value: 7
---
apiVersion: v1
kind: Namespace
metadata: {name: team-a}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata: {name: w, namespace: team-a, labels: {x: y}}
spec:
  queueName: q
  priorityClassName: high
  podSets:
  - name: main
    count: 3
    minCount: 1
    template:
      spec:
        nodeSelector: {accelerator: a100}
        tolerations: [{key: gpu, operator: Exists, effect: NoSchedule}]
        containers:
        - name: a
          resources: {requests: {cpu: "1", memory: 1Gi}}
        - name: b
          resources: {requests: {cpu: 500m}}
)";
  absl::StatusOr<std::vector<manifest::Manifest>> first = manifest::ParseManifests(kInput, "in");
  ASSERT_TRUE(first.ok()) << first.status();
  for (const manifest::Manifest& m : *first) {
    const Json j = std::holds_alternative<v1::Workload>(m.object)
                       ? ManifestOf(std::get<v1::Workload>(m.object))
                       : ManifestOf(std::get<v1::ConfigObject>(m.object));
    const std::string yaml = ToYaml(j);
    absl::StatusOr<std::vector<manifest::Manifest>> again = manifest::ParseManifests(yaml, "out");
    ASSERT_TRUE(again.ok()) << again.status() << "\n" << yaml;
    ASSERT_EQ(again->size(), 1u);
    if (const auto* wl = std::get_if<v1::Workload>(&m.object)) {
      EXPECT_EQ(std::get<v1::Workload>(again->front().object).DebugString(), wl->DebugString())
          << yaml;
    } else {
      EXPECT_EQ(std::get<v1::ConfigObject>(again->front().object).DebugString(),
                std::get<v1::ConfigObject>(m.object).DebugString())
          << yaml;
    }
    // JSON is YAML too: -o json output applies as well.
    absl::StatusOr<std::vector<manifest::Manifest>> from_json =
        manifest::ParseManifests(ToJson(j), "json");
    EXPECT_TRUE(from_json.ok()) << from_json.status();
  }
}

TEST(ManifestOfTest, IsKueueShaped) {
  v1::Workload wl;
  wl.mutable_metadata()->set_name("w");
  wl.mutable_metadata()->set_namespace_("ns");
  wl.mutable_metadata()->set_resource_version(42);
  wl.mutable_metadata()->set_generation(3);
  v1::PodSet* ps = wl.mutable_spec()->add_pod_sets();
  ps->set_name("main");
  ps->set_count(2);
  (*ps->mutable_requests())["cpu"] = "2";
  wl.mutable_status()->set_state(v1::WORKLOAD_STATE_ADMITTED);
  const Json j = ManifestOf(wl);
  EXPECT_EQ(j["apiVersion"], "kueue.x-k8s.io/v1beta1");
  EXPECT_EQ(j["kind"], "Workload");
  EXPECT_EQ(j["metadata"]["resourceVersion"], "42");
  EXPECT_EQ(j["metadata"]["generation"], 3);
  EXPECT_EQ(
      j["spec"]["podSets"][0]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"],
      "2");
  EXPECT_EQ(j["status"]["state"], "Admitted");

  v1::ConfigObject rf;
  rf.mutable_resource_flavor()->mutable_metadata()->set_name("f");
  rf.mutable_resource_flavor()->mutable_metadata()->set_namespace_("ignored");
  const Json r = ManifestOf(rf);
  EXPECT_EQ(r["kind"], "ResourceFlavor");
  EXPECT_FALSE(r["metadata"].contains("namespace"));
}

}  // namespace
}  // namespace tollgate::cli
