#include "services/sim/scenario_parser.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#if !defined(TOLLGATE_SEEDS_DIR) || !defined(TOLLGATE_OWN_SCENARIOS_DIR)
#error "TOLLGATE_SEEDS_DIR and TOLLGATE_OWN_SCENARIOS_DIR must name the scenario folders"
#endif

namespace tollgate::sim {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;
using ::testing::SizeIs;
using ::testing::UnorderedElementsAre;

// ---------------------------------------------------------------------------------------------
// Every scenario parses: Tollgate's own, and the shared seeds when they are beside the repository.

void ExpectAllParse(const std::vector<std::string>& files) {
  for (const std::string& file : files) {
    SCOPED_TRACE(file);
    absl::StatusOr<Scenario> s = ParseScenarioFile(file);
    ASSERT_TRUE(s.ok()) << s.status();
    EXPECT_FALSE(s->name.empty());
    EXPECT_FALSE(s->steps.empty());
    EXPECT_FALSE(s->objects.empty());
    EXPECT_EQ(s->file, file);
    for (size_t i = 0; i < s->steps.size(); ++i) EXPECT_EQ(s->steps[i].index, i + 1);
  }
}

TEST(OwnScenariosTest, AllParse) {
  absl::StatusOr<std::vector<std::string>> files =
      CollectScenarioFiles({TOLLGATE_OWN_SCENARIOS_DIR});
  ASSERT_TRUE(files.ok()) << files.status();
  ASSERT_THAT(*files, SizeIs(::testing::Ge(100u)));
  ExpectAllParse(*files);
}

// The seeds live outside the repository; a clone alone skips their tests, saying why.
class SeedsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::is_directory(TOLLGATE_SEEDS_DIR)) {
      GTEST_SKIP() << "no shared seed scenarios at " << TOLLGATE_SEEDS_DIR;
    }
  }
};

TEST_F(SeedsTest, AllSeedScenariosParse) {
  absl::StatusOr<std::vector<std::string>> files = CollectScenarioFiles({TOLLGATE_SEEDS_DIR});
  ASSERT_TRUE(files.ok()) << files.status();
  ASSERT_THAT(*files, SizeIs(::testing::Ge(13u)));
  ExpectAllParse(*files);
}

TEST_F(SeedsTest, TwoTeamsScenarioStructure) {
  absl::StatusOr<Scenario> s =
      ParseScenarioFile(absl::StrCat(TOLLGATE_SEEDS_DIR, "/01-two-teams-isolated-quota.yaml"));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->name, "two teams, isolated quota, the fifth job waits");
  EXPECT_THAT(s->description, HasSubstr("Team A and team B"));
  ASSERT_THAT(s->objects, SizeIs(5));
  EXPECT_EQ(s->objects[0].kind, "ResourceFlavor");
  const auto& cq = std::get<v1::ConfigObject>(s->objects[1].object).cluster_queue();
  EXPECT_EQ(cq.metadata().name(), "team-a-cq");
  EXPECT_EQ(cq.spec().resource_groups(0).flavors(0).resources(1).nominal_quota(), "128Gi");

  std::vector<StepKind> kinds;
  for (const Step& step : s->steps) kinds.push_back(step.kind);
  EXPECT_THAT(kinds, ElementsAre(StepKind::kSubmit, StepKind::kSettle, StepKind::kExpect,
                                 StepKind::kFinish, StepKind::kSettle, StepKind::kExpect));

  const Step& submit = s->steps[0];
  ASSERT_THAT(submit.submit, SizeIs(6));
  const SubmitItem& b = submit.submit[5];
  EXPECT_EQ(b.name, "b-eval-1");
  EXPECT_EQ(b.ns, "team-b-namespace");
  ASSERT_TRUE(b.workload.ok());
  EXPECT_EQ(b.workload->spec().queue_name(), "eval-queue");
  ASSERT_EQ(b.workload->spec().pod_sets_size(), 1);
  const v1::PodSet& set = b.workload->spec().pod_sets(0);
  EXPECT_EQ(set.name(), "main");
  EXPECT_EQ(set.count(), 1);
  EXPECT_THAT(set.requests(), UnorderedElementsAre(Pair("cpu", "8"), Pair("memory", "16Gi"),
                                                   Pair("nvidia.com/gpu", "4")));

  const Expectation& e = s->steps[2].expect;
  ASSERT_TRUE(e.admitted.has_value());
  EXPECT_THAT(*e.admitted, SizeIs(5));
  ASSERT_TRUE(e.pending.has_value());
  EXPECT_EQ((*e.pending)[0].name, "eval-5");
  EXPECT_FALSE(e.finished.has_value());
  EXPECT_THAT(e.reasons, ElementsAre(Pair("eval-5", HasSubstr("8 more needed"))));
  ASSERT_THAT(e.usage, SizeIs(3));
  EXPECT_EQ(e.usage[0].cluster_queue, "team-a-cq");
  EXPECT_EQ(e.usage[0].used, "32");
  EXPECT_EQ(e.usage[0].borrowed, "0");
  EXPECT_EQ(e.usage[1].used, "64Gi");
  EXPECT_FALSE(e.usage[1].borrowed.has_value());

  EXPECT_THAT(s->steps[3].workload_names, ElementsAre("eval-2"));
  ASSERT_TRUE(s->steps[5].expect.pending.has_value());
  EXPECT_TRUE(s->steps[5].expect.pending->empty());  // `pending: []` is checked, not absent
}

TEST_F(SeedsTest, BadInputValuesArePreservedForTheService) {
  absl::StatusOr<Scenario> s =
      ParseScenarioFile(absl::StrCat(TOLLGATE_SEEDS_DIR, "/11-bad-input-refused.yaml"));
  ASSERT_TRUE(s.ok()) << s.status();
  const std::vector<SubmitItem>& items = s->steps[0].submit;
  ASSERT_THAT(items, SizeIs(6));
  for (const SubmitItem& item : items) ASSERT_TRUE(item.workload.ok()) << item.workload.status();
  EXPECT_EQ(items[1].workload->spec().pod_sets(0).requests().at("cpu"), "12 cores");
  EXPECT_EQ(items[2].workload->spec().pod_sets(0).count(), -3);
  EXPECT_EQ(items[3].name, "Bad_Name!");
  EXPECT_EQ(items[3].workload->metadata().name(), "Bad_Name!");
  EXPECT_THAT(s->steps[2].expect.rejected,
              UnorderedElementsAre(Pair("bad-quantity", "12 cores"), Pair("bad-count", "-3"),
                                   Pair("Bad_Name!", "Bad_Name!")));
}

// ---------------------------------------------------------------------------------------------
// Malformed scenarios: the error names the file, the step and the field.

struct MalformedCase {
  std::string name;
  std::string text;
  std::vector<std::string> substrings;
};

void PrintTo(const MalformedCase& c, std::ostream* os) { *os << c.name; }

class MalformedTest : public ::testing::TestWithParam<MalformedCase> {};

TEST_P(MalformedTest, ErrorNamesFileStepAndField) {
  const MalformedCase& c = GetParam();
  absl::StatusOr<Scenario> s = ParseScenarioText(c.text, "t.yaml");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << s.status();
  EXPECT_THAT(std::string(s.status().message()), ::testing::StartsWith("t.yaml"));
  for (const std::string& sub : c.substrings)
    EXPECT_THAT(std::string(s.status().message()), HasSubstr(sub));
}

INSTANTIATE_TEST_SUITE_P(
    Malformed, MalformedTest,
    ::testing::Values(
        MalformedCase{"UnknownExpectKey",
                      "name: x\nsteps:\n- settle: {}\n- settle: {}\n- expect: {admited: [a]}\n",
                      {"t.yaml: step 3 (expect): unknown key \"admited\""}},
        MalformedCase{"MissingName", "steps: [{settle: {}}]\n", {"t.yaml: name: required"}},
        MalformedCase{
            "BadPodSetUsageQuantity",
            "name: x\nsteps:\n- expect: {admitted: [{name: a, podSetUsage: {main: {cpu: "
            "lots}}}]}\n",
            {"t.yaml: step 1 (expect)", "podSetUsage", "[cpu]: malformed quantity \"lots\""}},
        MalformedCase{"MissingSteps", "name: x\n", {"t.yaml: steps: required"}},
        MalformedCase{
            "UnknownTopLevelKey", "name: x\nstep: []\n", {"t.yaml: unknown key \"step\""}},
        MalformedCase{"UnknownStepKind",
                      "name: x\nsteps:\n- settle: {}\n- sumbit: []\n",
                      {"t.yaml: step 2: unknown step kind \"sumbit\""}},
        MalformedCase{"StepWithTwoKeys",
                      "name: x\nsteps:\n- {settle: {}, expect: {}}\n",
                      {"t.yaml: step 1: a step is a map with exactly one key"}},
        MalformedCase{"PodSetNotAMap",
                      "name: x\nsteps:\n- submit: [{name: w, podSets: [main]}]\n",
                      {"t.yaml: step 1 (submit): submit[0] (w): podSets[0]: expected a map"}},
        MalformedCase{"UnknownCompactKey",
                      "name: x\nsteps:\n- submit: [{name: w, queu: q}]\n",
                      {"t.yaml: step 1 (submit): submit[0] (w): unknown key \"queu\""}},
        MalformedCase{"UnknownPodSetKey",
                      "name: x\nsteps:\n- submit: [{name: w, podSets: [{request: {cpu: 1}}]}]\n",
                      {"step 1 (submit): submit[0] (w): podSets[0]: unknown key \"request\""}},
        MalformedCase{"RequestsNotAMap",
                      "name: x\nsteps:\n- submit: [{name: w, podSets: [{requests: [cpu]}]}]\n",
                      {"step 1 (submit): submit[0] (w): podSets[0].requests: expected a map"}},
        MalformedCase{"CompactWorkloadWithoutName",
                      "name: x\nsteps:\n- submit: [{queue: q}]\n",
                      {"step 1 (submit): submit[0]: name: required"}},
        MalformedCase{"BadRuntime",
                      "name: x\nsteps:\n- submit: [{name: w, runtime: soon}]\n",
                      {"step 1 (submit): submit[0] (w): runtime: invalid duration \"soon\""}},
        MalformedCase{"AdvanceWithoutUnit",
                      "name: x\nsteps:\n- settle: {}\n- advance: 90\n",
                      {"t.yaml: step 2 (advance): advance: invalid duration \"90\""}},
        MalformedCase{"NegativeAdvance",
                      "name: x\nsteps:\n- advance: -5s\n",
                      {"t.yaml: step 1 (advance)", "negative duration"}},
        MalformedCase{"SettleWithArguments",
                      "name: x\nsteps:\n- settle: {rounds: 3}\n",
                      {"t.yaml: step 1 (settle): settle takes no arguments"}},
        MalformedCase{"RestartWithArguments",
                      "name: x\nsteps:\n- restart: {clean: true}\n",
                      {"t.yaml: step 1 (restart): restart takes no arguments"}},
        MalformedCase{"FinishNotAList",
                      "name: x\nsteps:\n- finish: {a: 1}\n",
                      {"t.yaml: step 1 (finish): finish: expected a list"}},
        MalformedCase{"ObjectUnknownField",
                      "name: x\nobjects:\n- {kind: ClusterQueue, metadata: {name: cq}, "
                      "spec: {cohrt: a}}\nsteps: [{settle: {}}]\n",
                      {"t.yaml: objects[0]: ClusterQueue cq: unknown field spec.cohrt"}},
        MalformedCase{
            "ApplyUnknownKind",
            "name: x\nsteps:\n- settle: {}\n- apply: [{kind: Gizmo, metadata: {name: j}}]\n",
            {"t.yaml: step 2 (apply): apply[0]: unknown kind \"Gizmo\""}},
        MalformedCase{
            "ApplyJobOfAnotherApiVersion",
            "name: x\nsteps:\n- settle: {}\n- apply: [{kind: Job, metadata: {name: j}}]\n",
            {"t.yaml: step 2 (apply): apply[0]: Job: apiVersion \"\" is not served; Tollgate reads "
             "Job as batch/v1"}},
        MalformedCase{"DeleteWithoutKind",
                      "name: x\nsteps:\n- delete: [{name: w}]\n",
                      {"t.yaml: step 1 (delete): delete[0].kind: required"}},
        MalformedCase{"DeleteUnknownKind",
                      "name: x\nsteps:\n- delete: [{kind: Pod, name: w}]\n",
                      {"t.yaml: step 1 (delete): delete[0].kind: unknown kind \"Pod\""}},
        MalformedCase{"UsageMissingUsed",
                      "name: x\nsteps:\n- expect: {usage: [{clusterQueue: q, flavor: f, "
                      "resource: cpu}]}\n",
                      {"t.yaml: step 1 (expect): usage[0].used: required"}},
        MalformedCase{"UsageUnknownKey",
                      "name: x\nsteps:\n- expect: {usage: [{clusterQueu: q}]}\n",
                      {"t.yaml: step 1 (expect): usage[0]: unknown key \"clusterQueu\""}},
        MalformedCase{"PreemptedNotInteger",
                      "name: x\nsteps:\n- expect: {preempted: {a: once}}\n",
                      {"t.yaml: step 1 (expect): preempted[a]: expected an integer"}},
        MalformedCase{"UnknownPreemptionReason",
                      "name: x\nsteps:\n- expect: {preemptionReasons: {a: Reclaim}}\n",
                      {"step 1 (expect): preemptionReasons[a]: unknown preemption reason"}},
        MalformedCase{"QueueOrderKeyWithoutNamespace",
                      "name: x\nsteps:\n- expect: {queueOrder: {q: [a]}}\n",
                      {"step 1 (expect): queueOrder[q]: expected a key of the form"}},
        MalformedCase{"AdmittedEntryUnknownKey",
                      "name: x\nsteps:\n- expect: {admitted: [{name: a, flavor: {cpu: x}}]}\n",
                      {"step 1 (expect): admitted[0]: unknown key \"flavor\""}},
        MalformedCase{"ConfigUnknownKey",
                      "name: x\nconfig: {fairShare: {}}\nsteps: []\n",
                      {"t.yaml: config.fairShare: unknown field"}},
        MalformedCase{"ConfigBadDuration",
                      "name: x\nconfig: {waitForPodsReady: {enable: true, timeout: 5 minutes}}\n"
                      "steps: []\n",
                      {"t.yaml: config.waitForPodsReady.timeout: invalid duration"}},
        MalformedCase{"ConfigBadStrategyList",
                      "name: x\nconfig: {fairSharing: {enable: true, preemptionStrategies: "
                      "[LessThanInitialShare, LessThanOrEqualToFinalShare]}}\nsteps: []\n",
                      {"t.yaml: config.fairSharing.preemptionStrategies: unsupported list"}},
        MalformedCase{"SubmitManifestOfWrongKind",
                      "name: x\nsteps:\n- submit: [{kind: ResourceFlavor, metadata: {name: f}}]\n",
                      {"step 1 (submit): submit[0]: kind: submit takes workloads"}},
        MalformedCase{"SubmitManifestUnknownField",
                      "name: x\nsteps:\n- submit: [{kind: Workload, metadata: {name: w}, "
                      "spec: {queue: q}}]\n",
                      {"step 1 (submit): submit[0]: Workload w: unknown field spec.queue"}},
        MalformedCase{"SetCheckWithoutState",
                      "name: x\nsteps:\n- setCheck: [{workload: a, check: c}]\n",
                      {"t.yaml: step 1 (setCheck)", "state", "required"}},
        MalformedCase{"SetCheckUnknownKey",
                      "name: x\nsteps:\n- setCheck: [{workload: a, check: c, state: Ready, "
                      "delay: 5}]\n",
                      {"t.yaml: step 1 (setCheck)", "unknown key \"delay\""}},
        MalformedCase{"SetCheckPodSetUpdateUnknownKey",
                      "name: x\nsteps:\n- setCheck: [{workload: a, check: c, state: Ready, "
                      "podSetUpdates: [{name: main, selector: {a: b}}]}]\n",
                      {"t.yaml: step 1 (setCheck)", "unknown key \"selector\""}},
        MalformedCase{"CheckExpectationUnknownKey",
                      "name: x\nsteps:\n- expect: {checks: {a: {c: {status: Ready}}}}\n",
                      {"t.yaml: step 1 (expect)", "unknown key \"status\""}},
        MalformedCase{"EvictedWithoutReason",
                      "name: x\nsteps:\n- expect: {evicted: {a: {message: x}}}\n",
                      {"t.yaml: step 1 (expect)", "reason", "required"}},
        MalformedCase{"YamlSyntax", "name: x\nsteps: [\n", {"t.yaml:", "invalid YAML"}},
        MalformedCase{"EmptyFile", "", {"t.yaml: empty scenario"}}),
    [](const ::testing::TestParamInfo<MalformedCase>& info) { return info.param.name; });

// ---------------------------------------------------------------------------------------------
// Durations.

struct DurationCase {
  std::string text;
  // Unset: the text must be refused.
  std::optional<absl::Duration> want;
};

void PrintTo(const DurationCase& c, std::ostream* os) { *os << '"' << c.text << '"'; }

class DurationTest : public ::testing::TestWithParam<DurationCase> {};

TEST_P(DurationTest, ParsesGoSyntax) {
  const DurationCase& c = GetParam();
  absl::StatusOr<absl::Duration> d = ParseGoDuration(c.text);
  if (c.want.has_value()) {
    ASSERT_TRUE(d.ok()) << d.status();
    EXPECT_EQ(*d, *c.want);
  } else {
    EXPECT_FALSE(d.ok()) << c.text;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Durations, DurationTest,
    ::testing::Values(
        DurationCase{"90s", absl::Seconds(90)}, DurationCase{"1m", absl::Minutes(1)},
        DurationCase{"1h30m", absl::Minutes(90)},
        DurationCase{"2h45m30s", absl::Hours(2) + absl::Minutes(45) + absl::Seconds(30)},
        DurationCase{"500ms", absl::Milliseconds(500)}, DurationCase{"1.5h", absl::Minutes(90)},
        DurationCase{"0", absl::ZeroDuration()}, DurationCase{"0s", absl::ZeroDuration()},
        DurationCase{"90", std::nullopt}, DurationCase{"", std::nullopt},
        DurationCase{"-5s", std::nullopt}, DurationCase{"inf", std::nullopt},
        DurationCase{"5d", std::nullopt}, DurationCase{"5 m", std::nullopt}));

TEST(StepsTest, AdvanceAndNames) {
  absl::StatusOr<Scenario> s = ParseScenarioText(R"(
name: steps
steps:
  - advance: 1h30m
  - finish: [a, ns/b]
  - podsReady: [c]
  - delete: [{kind: LocalQueue, name: q, namespace: ns}, {kind: Workload, name: w}]
  - settle:
  - restart: {}
)",
                                                 "steps.yaml");
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_THAT(s->steps, SizeIs(6));
  EXPECT_EQ(s->steps[0].kind, StepKind::kAdvance);
  EXPECT_EQ(s->steps[0].advance, absl::Minutes(90));
  EXPECT_EQ(s->steps[1].kind, StepKind::kFinish);
  EXPECT_THAT(s->steps[1].workload_names, ElementsAre("a", "ns/b"));
  EXPECT_EQ(s->steps[2].kind, StepKind::kPodsReady);
  EXPECT_THAT(s->steps[2].workload_names, ElementsAre("c"));
  EXPECT_EQ(s->steps[3].kind, StepKind::kDelete);
  ASSERT_THAT(s->steps[3].del, SizeIs(2));
  EXPECT_EQ(s->steps[3].del[0].kind, "LocalQueue");
  EXPECT_EQ(s->steps[3].del[0].ns, "ns");
  EXPECT_EQ(s->steps[3].del[1].ns, "");
  EXPECT_EQ(s->steps[4].kind, StepKind::kSettle);
  EXPECT_EQ(s->steps[5].kind, StepKind::kRestart);
  EXPECT_EQ(StepKindName(StepKind::kPodsReady), "podsReady");
  EXPECT_EQ(StepKindName(StepKind::kRestart), "restart");
}

// ---------------------------------------------------------------------------------------------
// Compact workloads: defaults and invalid values kept as written.

struct CompactCase {
  std::string name;
  // One submit item.
  std::string item;
  // Text checks on the resulting item.
  std::function<void(const SubmitItem&)> check;
};

void PrintTo(const CompactCase& c, std::ostream* os) { *os << c.name; }

class CompactTest : public ::testing::TestWithParam<CompactCase> {};

TEST_P(CompactTest, BuildsWorkload) {
  const CompactCase& c = GetParam();
  absl::StatusOr<Scenario> s =
      ParseScenarioText(absl::StrCat("name: c\nsteps:\n- submit:\n  - ", c.item, "\n"), "c.yaml");
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_THAT(s->steps[0].submit, SizeIs(1));
  c.check(s->steps[0].submit[0]);
}

INSTANTIATE_TEST_SUITE_P(
    Compact, CompactTest,
    ::testing::Values(
        CompactCase{"Defaults", "{name: w}",
                    [](const SubmitItem& item) {
                      EXPECT_EQ(item.name, "w");
                      EXPECT_EQ(item.ns, "default");
                      EXPECT_FALSE(item.runtime.has_value());
                      ASSERT_TRUE(item.workload.ok());
                      const v1::Workload& wl = *item.workload;
                      EXPECT_EQ(wl.metadata().name(), "w");
                      EXPECT_EQ(wl.metadata().namespace_(), "default");
                      EXPECT_EQ(wl.spec().queue_name(), "");
                      EXPECT_FALSE(wl.spec().has_priority());
                      ASSERT_EQ(wl.spec().pod_sets_size(), 1);
                      EXPECT_EQ(wl.spec().pod_sets(0).name(), "main");
                      EXPECT_EQ(wl.spec().pod_sets(0).count(), 1);
                      EXPECT_TRUE(wl.spec().pod_sets(0).requests().empty());
                    }},
        CompactCase{"PodSetDefaults", "{name: w, podSets: [{requests: {cpu: 8}}, {count: 0}]}",
                    [](const SubmitItem& item) {
                      ASSERT_TRUE(item.workload.ok());
                      const v1::WorkloadSpec& spec = item.workload->spec();
                      ASSERT_EQ(spec.pod_sets_size(), 2);
                      EXPECT_EQ(spec.pod_sets(0).name(), "main");
                      EXPECT_EQ(spec.pod_sets(0).count(), 1);
                      EXPECT_EQ(spec.pod_sets(0).requests().at("cpu"), "8");
                      EXPECT_EQ(spec.pod_sets(1).count(), 0);
                      EXPECT_FALSE(spec.pod_sets(1).has_min_count());
                    }},
        CompactCase{"AllFields",
                    R"({name: train, namespace: ml, queue: research, priority: 100,
                        priorityClass: high, runtime: 30m,
                        podSets: [{name: workers, count: 16, minCount: 8,
                                   requests: {cpu: "1", memory: 4Gi, nvidia.com/gpu: 1, x: 500m},
                                   nodeSelector: {pool: spot},
                                   tolerations: [{key: spot, operator: Equal, value: "true",
                                                  effect: NoSchedule, tolerationSeconds: 60}]}]})",
                    [](const SubmitItem& item) {
                      EXPECT_EQ(item.ns, "ml");
                      EXPECT_EQ(item.runtime, absl::Minutes(30));
                      ASSERT_TRUE(item.workload.ok());
                      const v1::WorkloadSpec& spec = item.workload->spec();
                      EXPECT_EQ(spec.queue_name(), "research");
                      EXPECT_EQ(spec.priority(), 100);
                      EXPECT_EQ(spec.priority_class_name(), "high");
                      const v1::PodSet& set = spec.pod_sets(0);
                      EXPECT_EQ(set.name(), "workers");
                      EXPECT_EQ(set.count(), 16);
                      EXPECT_EQ(set.min_count(), 8);
                      EXPECT_THAT(
                          set.requests(),
                          UnorderedElementsAre(Pair("cpu", "1"), Pair("memory", "4Gi"),
                                               Pair("nvidia.com/gpu", "1"), Pair("x", "500m")));
                      EXPECT_THAT(set.node_selector(), ElementsAre(Pair("pool", "spot")));
                      ASSERT_EQ(set.tolerations_size(), 1);
                      EXPECT_EQ(set.tolerations(0).effect(), "NoSchedule");
                      EXPECT_EQ(set.tolerations(0).toleration_seconds(), 60);
                    }},
        CompactCase{"BadQuantityKept", "{name: w, podSets: [{requests: {cpu: \"12 cores\"}}]}",
                    [](const SubmitItem& item) {
                      ASSERT_TRUE(item.workload.ok()) << item.workload.status();
                      EXPECT_EQ(item.workload->spec().pod_sets(0).requests().at("cpu"), "12 cores");
                    }},
        CompactCase{"NegativeCountKept", "{name: w, podSets: [{count: -3}]}",
                    [](const SubmitItem& item) {
                      ASSERT_TRUE(item.workload.ok()) << item.workload.status();
                      EXPECT_EQ(item.workload->spec().pod_sets(0).count(), -3);
                    }},
        CompactCase{"BadNameKept", "{name: Bad_Name!, namespace: Also Bad}",
                    [](const SubmitItem& item) {
                      ASSERT_TRUE(item.workload.ok()) << item.workload.status();
                      EXPECT_EQ(item.workload->metadata().name(), "Bad_Name!");
                      EXPECT_EQ(item.workload->metadata().namespace_(), "Also Bad");
                    }},
        CompactCase{"UnrepresentableCountIsARefusal", "{name: w, podSets: [{count: many}]}",
                    [](const SubmitItem& item) {
                      EXPECT_EQ(item.name, "w");
                      ASSERT_FALSE(item.workload.ok());
                      EXPECT_THAT(std::string(item.workload.status().message()),
                                  AllOf(HasSubstr("podSets[0].count"), HasSubstr("\"many\"")));
                    }},
        CompactCase{"OverflowingPriorityIsARefusal", "{name: w, priority: 99999999999}",
                    [](const SubmitItem& item) {
                      ASSERT_FALSE(item.workload.ok());
                      EXPECT_THAT(std::string(item.workload.status().message()),
                                  HasSubstr("99999999999"));
                    }},
        CompactCase{"WorkloadManifest",
                    R"({apiVersion: kueue.x-k8s.io/v1beta1, kind: Workload,
                        metadata: {name: full, namespace: ns},
                        spec: {queueName: q, podSets: [{name: main, count: 2, template: {spec: {
                          containers: [{name: a, resources: {requests: {cpu: 1}}}]}}}]}})",
                    [](const SubmitItem& item) {
                      EXPECT_EQ(item.name, "full");
                      EXPECT_EQ(item.ns, "ns");
                      ASSERT_TRUE(item.workload.ok()) << item.workload.status();
                      EXPECT_EQ(item.workload->spec().queue_name(), "q");
                      EXPECT_EQ(item.workload->spec().pod_sets(0).count(), 2);
                      EXPECT_EQ(item.workload->spec().pod_sets(0).requests().at("cpu"), "1");
                    }},
        CompactCase{"WorkloadManifestWithBadQuantityIsARefusal",
                    R"({kind: Workload, metadata: {name: bad},
                        spec: {podSets: [{template: {spec: {containers: [
                          {name: a, resources: {requests: {cpu: 1}}},
                          {name: b, resources: {requests: {cpu: 12 cores}}}]}}}]}})",
                    [](const SubmitItem& item) {
                      EXPECT_EQ(item.name, "bad");
                      EXPECT_EQ(item.ns, "default");
                      ASSERT_FALSE(item.workload.ok());
                      EXPECT_THAT(std::string(item.workload.status().message()),
                                  HasSubstr("\"12 cores\""));
                    }}),
    [](const ::testing::TestParamInfo<CompactCase>& info) { return info.param.name; });

// ---------------------------------------------------------------------------------------------
// Config and expectations.

TEST(ConfigTest, DefaultsWhenAbsent) {
  absl::StatusOr<Scenario> s = ParseScenarioText("name: c\nsteps: []\n", "c.yaml");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_FALSE(s->config.scheduler.fair_sharing.enable);
  EXPECT_FALSE(s->config.scheduler.admission_fair_sharing.enable);
  EXPECT_FALSE(s->config.scheduler.wait_for_pods_ready.enable);
}

// The scenario's `config:` goes through the Configuration parser tollgated's --config uses
// (manifest::ParseKueueConfigurationNode): same fields, same defaults (v1beta1 when no
// apiVersion is given), same errors.
TEST(ConfigTest, AllFields) {
  absl::StatusOr<Scenario> s = ParseScenarioText(R"(
name: c
config:
  fairSharing: {enable: true, preemptionStrategies: [LessThanInitialShare]}
  admissionFairSharing: {usageHalfLifeTime: 10m, resourceWeights: {cpu: 1, nvidia.com/gpu: 2.5}}
  waitForPodsReady:
    enable: true
    timeout: 90s
    requeuingStrategy: {timestamp: Creation, backoffBaseSeconds: 10, backoffLimitCount: 3,
                        backoffMaxSeconds: 100}
steps: []
)",
                                                 "c.yaml");
  ASSERT_TRUE(s.ok()) << s.status();
  const core::SchedulerConfig& c = s->config.scheduler;
  EXPECT_TRUE(c.fair_sharing.enable);
  EXPECT_THAT(c.fair_sharing.preemption_strategies,
              ElementsAre(core::FairSharingStrategy::kLessThanInitialShare));
  ASSERT_TRUE(c.admission_fair_sharing.enable);
  EXPECT_EQ(c.admission_fair_sharing.usage_half_life_time, absl::Minutes(10));
  EXPECT_EQ(c.admission_fair_sharing.usage_sampling_interval, absl::Minutes(5));
  EXPECT_THAT(c.admission_fair_sharing.resource_weights,
              ElementsAre(Pair("cpu", 1.0), Pair("nvidia.com/gpu", 2.5)));
  const core::SchedulerConfig::WaitForPodsReady& w = c.wait_for_pods_ready;
  EXPECT_TRUE(w.enable);
  EXPECT_EQ(w.timeout, absl::Seconds(90));
  EXPECT_TRUE(w.block_admission);                    // defaults to enable
  EXPECT_EQ(w.recovery_timeout, absl::Seconds(90));  // defaults to timeout
  EXPECT_EQ(w.requeuing_timestamp, core::RequeuingTimestamp::kCreation);
  EXPECT_EQ(w.backoff_base_seconds, 10);
  EXPECT_EQ(w.backoff_limit_count, 3);
  EXPECT_EQ(w.backoff_max_seconds, 100);
}

TEST(ConfigTest, KueueDefaultsWhenEnabled) {
  absl::StatusOr<Scenario> s = ParseScenarioText(
      "name: c\nconfig: {fairSharing: {enable: true}, waitForPodsReady: {enable: true, "
      "blockAdmission: false, recoveryTimeout: 0s}}\nsteps: []\n",
      "c.yaml");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_THAT(s->config.scheduler.fair_sharing.preemption_strategies,
              ElementsAre(core::FairSharingStrategy::kLessThanOrEqualToFinalShare,
                          core::FairSharingStrategy::kLessThanInitialShare));
  const core::SchedulerConfig::WaitForPodsReady& w = s->config.scheduler.wait_for_pods_ready;
  EXPECT_EQ(w.timeout, absl::Minutes(5));
  EXPECT_FALSE(w.block_admission);
  EXPECT_EQ(w.recovery_timeout, absl::ZeroDuration());
  EXPECT_EQ(w.requeuing_timestamp, core::RequeuingTimestamp::kEviction);
  EXPECT_EQ(w.backoff_base_seconds, 60);
  EXPECT_FALSE(w.backoff_limit_count.has_value());
  EXPECT_EQ(w.backoff_max_seconds, 3600);
}

// A scenario may name the v1beta2 API, and then reads with v1beta2's defaults.
TEST(ConfigTest, ApiVersionV1beta2) {
  absl::StatusOr<Scenario> s = ParseScenarioText(
      "name: c\nconfig: {apiVersion: config.kueue.x-k8s.io/v1beta2, waitForPodsReady: "
      "{timeout: 2m}}\nsteps: []\n",
      "c.yaml");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_TRUE(s->config.scheduler.wait_for_pods_ready.enable);
  EXPECT_FALSE(s->config.scheduler.wait_for_pods_ready.block_admission);
  EXPECT_EQ(s->config.api_version, "config.kueue.x-k8s.io/v1beta2");
}

TEST(ExpectationTest, AllKeys) {
  absl::StatusOr<Scenario> s = ParseScenarioText(R"(
name: e
steps:
  - expect:
      admitted: [a, {name: b, flavors: {cpu: spot}, podSetFlavors: {driver: {cpu: on-demand}},
                     podSetUsage: {driver: {cpu: 500m}, sidecar: {}}}]
      pending: []
      finished: [ns/f]
      preempted: {a: 0, b: 2}
      preemptionReasons: {b: InCohortReclamation}
      fairShare: {team-a: 625, root: 0}
      reasons: {d: "insufficient unused quota"}
      usage:
        - {clusterQueue: cq, flavor: spot, resource: nvidia.com/gpu, used: 12, borrowed: 4}
      queueOrder: {team-a/research: [d, e]}
      rejected: {g: "-3"}
      deleted: [h, ns/i]
)",
                                                 "e.yaml");
  ASSERT_TRUE(s.ok()) << s.status();
  const Expectation& e = s->steps[0].expect;
  ASSERT_TRUE(e.admitted.has_value());
  ASSERT_THAT(*e.admitted, SizeIs(2));
  EXPECT_EQ((*e.admitted)[0].name, "a");
  EXPECT_TRUE((*e.admitted)[0].flavors.empty());
  EXPECT_EQ((*e.admitted)[1].name, "b");
  EXPECT_THAT((*e.admitted)[1].flavors, ElementsAre(Pair("cpu", "spot")));
  EXPECT_THAT((*e.admitted)[1].pod_set_flavors,
              ElementsAre(Pair("driver", ElementsAre(Pair("cpu", "on-demand")))));
  EXPECT_THAT(
      (*e.admitted)[1].pod_set_usage,
      ElementsAre(Pair("driver", ElementsAre(Pair("cpu", "500m"))), Pair("sidecar", SizeIs(0))));
  ASSERT_TRUE(e.pending.has_value());
  EXPECT_TRUE(e.pending->empty());
  ASSERT_TRUE(e.finished.has_value());
  EXPECT_EQ((*e.finished)[0].name, "ns/f");
  EXPECT_THAT(e.preempted, ElementsAre(Pair("a", 0), Pair("b", 2)));
  EXPECT_THAT(e.preemption_reasons, ElementsAre(Pair("b", "InCohortReclamation")));
  EXPECT_THAT(e.fair_share, ElementsAre(Pair("root", 0), Pair("team-a", 625)));
  EXPECT_THAT(e.reasons, ElementsAre(Pair("d", "insufficient unused quota")));
  ASSERT_THAT(e.usage, SizeIs(1));
  EXPECT_EQ(e.usage[0].resource, "nvidia.com/gpu");
  EXPECT_EQ(e.usage[0].used, "12");
  EXPECT_EQ(e.usage[0].borrowed, "4");
  EXPECT_THAT(e.queue_order, ElementsAre(Pair("team-a/research", ElementsAre("d", "e"))));
  EXPECT_THAT(e.rejected, ElementsAre(Pair("g", "-3")));
  EXPECT_THAT(e.deleted, ElementsAre("h", "ns/i"));
}

// ---------------------------------------------------------------------------------------------
// File collection.

class CollectTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // One folder per process and test: ctest runs each test as its own process, in parallel.
    root_ = std::filesystem::path(::testing::TempDir()) /
            absl::StrCat("collect_", getpid(), "_",
                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_ / "b" / "nested");
    std::filesystem::create_directories(root_ / "a");
    for (const char* f : {"b/nested/z.yaml", "b/a.yaml", "a/m.yaml", "a/notes.md", "a/x.yml"}) {
      std::ofstream(root_ / f) << "name: x\n";
    }
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  std::filesystem::path root_;
};

TEST_F(CollectTest, FoldersRecursiveSortedFilesAsGiven) {
  const std::string single = (root_ / "a" / "notes.md").string();
  absl::StatusOr<std::vector<std::string>> files =
      CollectScenarioFiles({(root_ / "b").string(), single, root_.string()});
  ASSERT_TRUE(files.ok()) << files.status();
  const std::string r = root_.string();
  EXPECT_THAT(*files, ElementsAre(r + "/b/a.yaml", r + "/b/nested/z.yaml", single, r + "/a/m.yaml",
                                  r + "/b/a.yaml", r + "/b/nested/z.yaml"));
}

TEST_F(CollectTest, MissingPathIsNotFound) {
  absl::StatusOr<std::vector<std::string>> files =
      CollectScenarioFiles({(root_ / "nope").string()});
  ASSERT_FALSE(files.ok());
  EXPECT_EQ(files.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(files.status().message()), HasSubstr("nope"));
}

TEST(ParseScenarioFileTest, MissingFileIsNotFound) {
  absl::StatusOr<Scenario> s = ParseScenarioFile("/nonexistent/scenario.yaml");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kNotFound);
}

// ---------------------------------------------------------------------------------------------
// --- Topology (issue 28): nodes, pod reports, topology requests and expectations.

TEST(TopologyFormatTest, NodesStepsRequestsAndExpectations) {
  absl::StatusOr<Scenario> s = ParseScenarioText(R"(
name: t
nodes:
  - {name: x1, labels: {rack: r1}, allocatable: {gpu: 4, pods: 10},
     taints: [{key: k, value: v, effect: NoSchedule}], unschedulable: true}
steps:
  - submit:
      - {name: a, podSets: [{count: 4, topologyRequest: {required: rack, podSetSliceRequiredTopology: rack, podSetSliceSize: 2}}]}
  - nodes: [{name: x2, ready: false, notReadySince: "2026-01-01T00:00:10Z", runningWorkloads: [default/a, default/b]}]
  - deleteNodes: [x1]
  - reportPods: [{name: ns/p, node: x2, requests: {gpu: 1}}]
  - removePods: [ns/p]
  - expect:
      topologyAssignments:
        a: {main: {levels: [rack], domains: [{values: [r1], count: 4}]}}
      unhealthyNodes: {a: [x2]}
)",
                                                 "t.yaml");
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_THAT(s->nodes, SizeIs(1));
  EXPECT_EQ(s->nodes[0].metadata().name(), "x1");
  EXPECT_EQ(s->nodes[0].metadata().labels().at("rack"), "r1");
  EXPECT_EQ(s->nodes[0].status().allocatable().at("gpu"), "4");
  EXPECT_EQ(s->nodes[0].spec().taints(0).effect(), "NoSchedule");
  EXPECT_TRUE(s->nodes[0].spec().unschedulable());
  EXPECT_FALSE(s->nodes[0].status().has_ready());
  ASSERT_THAT(s->steps, SizeIs(6));
  const v1::PodSetTopologyRequest& request =
      s->steps[0].submit[0].workload->spec().pod_sets(0).topology_request();
  EXPECT_EQ(request.required(), "rack");
  EXPECT_EQ(request.pod_set_slice_size(), 2);
  EXPECT_EQ(s->steps[1].kind, StepKind::kNodes);
  ASSERT_THAT(s->steps[1].nodes, SizeIs(1));
  EXPECT_FALSE(s->steps[1].nodes[0].status().ready());
  EXPECT_TRUE(s->steps[1].nodes[0].status().has_ready());
  EXPECT_EQ(s->steps[1].nodes[0].status().not_ready_since().seconds(), 1767225610);
  EXPECT_FALSE(s->nodes[0].status().has_not_ready_since());
  EXPECT_THAT(s->steps[1].nodes[0].status().running_workloads(),
              ElementsAre("default/a", "default/b"));
  EXPECT_THAT(s->nodes[0].status().running_workloads(), SizeIs(0));
  EXPECT_EQ(s->steps[2].kind, StepKind::kDeleteNodes);
  EXPECT_THAT(s->steps[2].names, ElementsAre("x1"));
  EXPECT_EQ(s->steps[3].kind, StepKind::kReportPods);
  ASSERT_THAT(s->steps[3].pods, SizeIs(1));
  EXPECT_EQ(s->steps[3].pods[0].node_name(), "x2");
  EXPECT_THAT(s->steps[4].names, ElementsAre("ns/p"));
  const Expectation& e = s->steps[5].expect;
  const TopologyAssignmentExpectation& a = e.topology_assignments.at("a").at("main");
  EXPECT_THAT(*a.levels, ElementsAre("rack"));
  ASSERT_THAT(a.domains, SizeIs(1));
  EXPECT_THAT(a.domains[0].values, ElementsAre("r1"));
  EXPECT_EQ(a.domains[0].count, 4);
  EXPECT_THAT(e.unhealthy_nodes.at("a"), ElementsAre("x2"));
}

TEST(TopologyFormatTest, MistakesNameTheField) {
  struct Case {
    std::string text;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"nodes: [{labels: {a: b}}]\nsteps: [{settle: {}}]", "nodes[0].name: required"},
      {"nodes: [{name: x, cpu: 4}]\nsteps: [{settle: {}}]", "unknown key \"cpu\""},
      {"steps: [{reportPods: [{name: p}]}]", "node: required"},
      {"steps: [{expect: {topologyAssignments: {a: {main: {domains: [{values: [x]}]}}}}}]",
       "count: required"},
      {"steps: [{submit: [{name: a, podSets: [{topologyRequest: {level: rack}}]}]}]",
       "unknown key \"level\""},
      {"nodes: [{name: x, ready: false, notReadySince: 10s}]\nsteps: [{settle: {}}]",
       "nodes[0].notReadySince: expected an RFC 3339 time such as 2026-01-01T00:00:10Z, got "
       "\"10s\""},
      {"nodes: [{name: x, notReadySince: \"2026-01-01T00:00:10Z\"}]\nsteps: [{settle: {}}]",
       "nodes[0].notReadySince: only on a node with ready: false"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    absl::StatusOr<Scenario> s = ParseScenarioText(absl::StrCat("name: t\n", c.text), "t.yaml");
    ASSERT_FALSE(s.ok());
    EXPECT_THAT(s.status().message(), HasSubstr(c.error));
  }
}

// ---------------------------------------------------------------------------------------------
// MultiKueue: the simulated controller, the workers' reports and the copies' expectation.

TEST(MultiKueueFormatTest, WorkersReportsAndCopies) {
  absl::StatusOr<Scenario> s = ParseScenarioText(R"(
name: t
multiKueue: {workers: [w1, w2]}
steps:
  - remoteAdmit: [{workload: a, cluster: w1, ago: 30s}, {workload: b, cluster: w2}]
  - remoteEvict: [{workload: a, cluster: w1, message: room}]
  - remoteFinish: [{workload: a, cluster: w1, reason: Failed, message: oom}]
  - remoteDelete: [{workload: ns/a, cluster: w2}]
  - disconnectWorkers: [w1]
  - connectWorkers: [w1, w3]
  - expect: {remoteCopies: {a: {w1: Admitted, w2: Evicted}, b: {}}}
)",
                                                 "t.yaml");
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_TRUE(s->multi_kueue.has_value());
  EXPECT_THAT(s->multi_kueue->workers, ElementsAre("w1", "w2"));
  ASSERT_THAT(s->steps, SizeIs(7));
  EXPECT_EQ(s->steps[0].kind, StepKind::kRemoteAdmit);
  ASSERT_THAT(s->steps[0].remote_reports, SizeIs(2));
  EXPECT_EQ(s->steps[0].remote_reports[0].cluster, "w1");
  EXPECT_EQ(s->steps[0].remote_reports[0].ago, absl::Seconds(30));
  EXPECT_EQ(s->steps[0].remote_reports[1].ago, absl::ZeroDuration());
  // An eviction without a reason is Kueue's Preempted.
  EXPECT_EQ(s->steps[1].remote_reports[0].reason, "Preempted");
  EXPECT_EQ(s->steps[1].remote_reports[0].message, "room");
  EXPECT_EQ(s->steps[2].remote_reports[0].reason, "Failed");
  EXPECT_EQ(s->steps[3].kind, StepKind::kRemoteDelete);
  EXPECT_EQ(s->steps[3].remote_reports[0].workload, "ns/a");
  EXPECT_EQ(s->steps[4].kind, StepKind::kDisconnectWorkers);
  EXPECT_THAT(s->steps[5].names, ElementsAre("w1", "w3"));
  const auto& copies = s->steps[6].expect.checks.remote_copies;
  EXPECT_THAT(copies.at("a"), UnorderedElementsAre(Pair("w1", "Admitted"), Pair("w2", "Evicted")));
  EXPECT_TRUE(copies.at("b").empty());
  // Without the section, no scenario plays the controller.
  absl::StatusOr<Scenario> plain = ParseScenarioText("name: t\nsteps: [{settle: {}}]", "t.yaml");
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_FALSE(plain->multi_kueue.has_value());
}

TEST(MultiKueueFormatTest, MistakesNameTheField) {
  struct Case {
    std::string text;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"steps: [{remoteAdmit: [{workload: a, cluster: w1}]}]",
       "step 1 (remoteAdmit): needs the MultiKueue controller: add `multiKueue:"},
      {"steps: [{expect: {remoteCopies: {a: {}}}}]", "step 1 (expect): needs the MultiKueue"},
      {"multiKueue: {worker: [w1]}\nsteps: [{settle: {}}]", "unknown key \"worker\""},
      {"multiKueue: {}\nsteps: [{remoteAdmit: [{workload: a}]}]", "cluster: required"},
      {"multiKueue: {}\nsteps: [{remoteAdmit: [{workload: a, cluster: w, reason: X}]}]",
       "unknown key \"reason\""},
      {"multiKueue: {}\nsteps: [{remoteDelete: [{workload: a, cluster: w, ago: 1s}]}]",
       "unknown key \"ago\""},
      {"multiKueue: {}\nsteps: [{remoteAdmit: [{workload: a, cluster: w, ago: soon}]}]",
       "remoteAdmit[0].ago"},
      {"multiKueue: {}\nsteps: [{expect: {remoteCopies: {a: {w1: Running}}}}]",
       "remoteCopies[a][w1]: want Pending, Admitted, Evicted or Finished, got \"Running\""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    absl::StatusOr<Scenario> s = ParseScenarioText(absl::StrCat("name: t\n", c.text), "t.yaml");
    ASSERT_FALSE(s.ok());
    EXPECT_THAT(s.status().message(), HasSubstr(c.error));
  }
}

}  // namespace
}  // namespace tollgate::sim
