// The ProvisioningRequest check's decisions, with the cases of Kueue's provisioning controller
// tests (pkg/controller/admissionchecks/provisioning/controller_test.go and
// admissioncheck_reconciler_test.go) in Tollgate's terms.
#include "adapters/kube/provisioning.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"

namespace tollgate::kube::provisioning {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Json ConfigJson(const std::string& extra_spec = "{}") {
  Json spec = Json::parse(extra_spec);
  spec["provisioningClassName"] = "queued-provisioning.gke.io";
  return {{"apiVersion", "kueue.x-k8s.io/v1beta1"},
          {"kind", "ProvisioningRequestConfig"},
          {"metadata", {{"name", "prc"}}},
          {"spec", spec}};
}

Config MustConfig(const std::string& extra_spec = "{}") {
  absl::StatusOr<Config> config = ParseConfig(ConfigJson(extra_spec));
  EXPECT_TRUE(config.ok()) << config.status();
  return config.ok() ? *config : Config();
}

// A workload of two pod sets (main: 4 pods with a GPU each, launcher: 1 CPU pod) holding quota.
v1::Workload MakeWorkload(v1::WorkloadState state = v1::WORKLOAD_STATE_QUOTA_RESERVED) {
  v1::Workload wl;
  wl.mutable_metadata()->set_name("wl");
  wl.mutable_metadata()->set_namespace_("ns");
  wl.mutable_metadata()->set_resource_version(7);
  v1::PodSet* main = wl.mutable_spec()->add_pod_sets();
  main->set_name("main");
  main->set_count(4);
  (*main->mutable_requests())["nvidia.com/gpu"] = "1";
  (*main->mutable_requests())["cpu"] = "1";
  v1::PodSet* launcher = wl.mutable_spec()->add_pod_sets();
  launcher->set_name("launcher");
  launcher->set_count(1);
  (*launcher->mutable_requests())["cpu"] = "1";
  wl.mutable_status()->set_state(state);
  v1::Admission* admission = wl.mutable_status()->mutable_admission();
  admission->set_cluster_queue("cq");
  v1::PodSetAssignment* a = admission->add_pod_set_assignments();
  a->set_name("main");
  a->set_count(3);  // partially admitted
  (*a->mutable_flavors())["nvidia.com/gpu"] = "a100";
  v1::PodSetAssignment* b = admission->add_pod_set_assignments();
  b->set_name("launcher");
  b->set_count(1);
  v1::AdmissionCheckState* check = wl.mutable_status()->add_admission_checks();
  check->set_name("prov");
  check->set_state("Pending");
  return wl;
}

v1::AdmissionCheckState State(const std::string& state, int retries = 0) {
  v1::AdmissionCheckState s;
  s.set_name("prov");
  s.set_state(state);
  if (retries > 0) s.set_retry_count(retries);
  return s;
}

// A request of attempt `attempt` with conditions {type: (status, message)}.
Json Request(
    int attempt,
    const std::vector<std::tuple<std::string, std::string, std::string>>& conditions = {}) {
  const std::string name = RequestName("wl", "prov", attempt);
  Json conds = Json::array();
  for (const auto& [type, status, message] : conditions) {
    conds.push_back({{"type", type}, {"status", status}, {"message", message}});
  }
  return {{"metadata", {{"name", name}, {"annotations", {{"tollgate.dev/workload", "wl"}}}}},
          {"spec",
           {{"provisioningClassName", "queued-provisioning.gke.io"},
            {"parameters", Json::object()},
            {"podSets",
             {{{"podTemplateRef", {{"name", PodTemplateName(name, "main")}}}, {"count", 3}},
              {{"podTemplateRef", {{"name", PodTemplateName(name, "launcher")}}}, {"count", 1}}}}}},
          {"status", {{"conditions", conds}, {"provisioningClassDetails", {{"zone", "us-b"}}}}}};
}

CheckPlan Plan(const v1::Workload& wl, const v1::AdmissionCheckState& state, const Config* config,
               const std::vector<Json>& requests) {
  absl::StatusOr<CheckPlan> plan = PlanCheck(wl, state, config, requests);
  EXPECT_TRUE(plan.ok()) << plan.status();
  return plan.ok() ? *plan : CheckPlan();
}

TEST(ProvisioningConfigTest, KueueDefaults) {
  const Config config = MustConfig();
  EXPECT_EQ(config.provisioning_class_name, "queued-provisioning.gke.io");
  EXPECT_EQ(config.backoff_limit_count, 3);
  EXPECT_EQ(config.backoff_base_seconds, 60);
  EXPECT_EQ(config.backoff_max_seconds, 1800);
  EXPECT_EQ(config.merge_policy, MergePolicy::kNone);
  EXPECT_FALSE(config.has_pod_set_updates);
}

TEST(ProvisioningConfigTest, ReadsEveryField) {
  const Config config = MustConfig(R"({
      "parameters": {"maxRunDurationSeconds": "3600"},
      "managedResources": ["nvidia.com/gpu"],
      "retryStrategy": {"backoffLimitCount": 1, "backoffBaseSeconds": 5},
      "podSetUpdates": {"nodeSelector": [{"key": "zone", "valueFromProvisioningClassDetail": "zone"}]},
      "podSetMergePolicy": "IdenticalWorkloadSchedulingRequirements"})");
  EXPECT_EQ(config.parameters.at("maxRunDurationSeconds"), "3600");
  EXPECT_THAT(config.managed_resources, ElementsAre("nvidia.com/gpu"));
  EXPECT_EQ(config.backoff_limit_count, 1);
  EXPECT_EQ(config.backoff_base_seconds, 5);
  EXPECT_EQ(config.backoff_max_seconds, 1800);
  ASSERT_EQ(config.node_selector_updates.size(), 1u);
  EXPECT_EQ(config.node_selector_updates[0].detail, "zone");
  EXPECT_EQ(config.merge_policy, MergePolicy::kIdenticalWorkloadSchedulingRequirements);
}

TEST(ProvisioningConfigTest, BadFieldsNameTheField) {
  Json no_class = ConfigJson();
  no_class["spec"].erase("provisioningClassName");
  EXPECT_THAT(ParseConfig(no_class).status().message(), HasSubstr("spec.provisioningClassName"));
  EXPECT_THAT(ParseConfig(ConfigJson(R"({"podSetMergePolicy": "Whatever"})")).status().message(),
              HasSubstr("spec.podSetMergePolicy: \"Whatever\""));
  EXPECT_THAT(
      ParseConfig(ConfigJson(R"({"retryStrategy": {"backoffLimitCount": -1}})")).status().message(),
      HasSubstr("spec.retryStrategy.backoffLimitCount"));
  EXPECT_THAT(ParseConfig(ConfigJson(R"({"parameters": {"a": 1}})")).status().message(),
              HasSubstr("spec.parameters.a"));
}

TEST(ProvisioningActivationTest, ParametersReferenceAsKueueChecksIt) {
  v1::AdmissionCheckSpec spec;
  spec.set_controller_name(std::string(kControllerName));
  EXPECT_EQ(ConfigNameOf(spec).status().message(), "missing parameters reference");
  spec.mutable_parameters()->set_api_group("kueue.x-k8s.io");
  spec.mutable_parameters()->set_kind("ProvisioningRequestConfig");
  EXPECT_EQ(ConfigNameOf(spec).status().message(), "empty name: bad parameters reference");
  spec.mutable_parameters()->set_name("prc");
  EXPECT_EQ(*ConfigNameOf(spec), "prc");
  spec.mutable_parameters()->set_kind("Other");
  EXPECT_EQ(ConfigNameOf(spec).status().message(),
            "wrong kind \"Other\", expecting \"ProvisioningRequestConfig\": bad parameters "
            "reference");
  spec.mutable_parameters()->set_kind("ProvisioningRequestConfig");
  spec.mutable_parameters()->set_api_group("example.com");
  EXPECT_THAT(ConfigNameOf(spec).status().message(), HasSubstr("wrong group \"example.com\""));

  EXPECT_EQ(ActivationFor(absl::OkStatus()),
            (Activation{true, "Active", "The admission check is active"}));
  EXPECT_EQ(ActivationFor(absl::NotFoundError("x not found")),
            (Activation{false, "BadParametersRef", "x not found"}));
  v1::AdmissionCheck check;
  EXPECT_FALSE(ActivationIsCurrent(check, ActivationFor(absl::OkStatus())));
  v1::Condition* c = check.mutable_status()->add_conditions();
  c->set_type("Active");
  c->set_status("True");
  c->set_reason("Active");
  c->set_message("The admission check is active");
  EXPECT_TRUE(ActivationIsCurrent(check, ActivationFor(absl::OkStatus())));
}

TEST(ProvisioningNamesTest, AsKueueNamesThem) {
  EXPECT_EQ(RequestName("wl", "prov", 1), "wl-prov-1");
  EXPECT_EQ(PodTemplateName("wl-prov-1", "main"), "ppt-wl-prov-1-main");
  EXPECT_EQ(AttemptOf("wl-prov-12", "wl", "prov"), 12);
  EXPECT_EQ(AttemptOf("wl-prov-x", "wl", "prov"), std::nullopt);
  EXPECT_EQ(AttemptOf("wl-other-1", "wl", "prov"), std::nullopt);
  // Too long: cut, with 5 hex digits of the full name's SHA-1.
  const std::string long_workload(240, 'w');
  const std::string name = RequestName(long_workload, "check", 1);
  EXPECT_EQ(name, long_workload + "-check-" + "-1a589");
  EXPECT_EQ(name.size(), 253u);
}

TEST(ProvisioningBackoffTest, DoublesFromTheBaseUpToTheMax) {
  const Config config = MustConfig();
  EXPECT_EQ(BackoffSeconds(config, 0), 60);
  EXPECT_EQ(BackoffSeconds(config, 1), 120);
  EXPECT_EQ(BackoffSeconds(config, 2), 240);
  EXPECT_EQ(BackoffSeconds(config, 10), 1800);
}

TEST(ProvisioningRequestTest, NeededOnlyForPodSetsUsingManagedResources) {
  v1::Workload wl = MakeWorkload();
  EXPECT_TRUE(*RequestNeeded(wl, MustConfig()));
  EXPECT_TRUE(*RequestNeeded(wl, MustConfig(R"({"managedResources": ["nvidia.com/gpu"]})")));
  EXPECT_FALSE(*RequestNeeded(wl, MustConfig(R"({"managedResources": ["example.com/fpga"]})")));
  wl.mutable_status()->mutable_admission()->mutable_pod_set_assignments()->DeleteSubrange(0, 1);
  EXPECT_THAT(RequestNeeded(wl, MustConfig()).status().message(),
              HasSubstr("missing assignment for PodSet \"main\""));
}

TEST(ProvisioningRequestTest, FilledAsKueueFillsIt) {
  const v1::Workload wl = MakeWorkload();
  const Json gpu_template = {
      {"spec",
       {{"nodeSelector", {{"gpu", "a100"}}},
        {"containers",
         {{{"name", "c"}, {"resources", {{"limits", {{"nvidia.com/gpu", "1"}}}}}}}}}}};
  const Json cpu_template = {{"spec", {{"containers", {{{"name", "c"}}}}}}};
  const Json owner = {{"kind", "Job"}, {"name", "j"}, {"uid", "u"}};
  absl::StatusOr<RequestObjects> built =
      BuildRequest(wl, "prov", 2, MustConfig(R"({"parameters": {"a": "1"}})"),
                   {{"main", gpu_template}, {"launcher", cpu_template}},
                   {{"provreq.kueue.x-k8s.io/maxRunDurationSeconds", "60"}, {"other", "x"}}, owner);
  ASSERT_TRUE(built.ok()) << built.status();
  const Json& request = built->request;
  EXPECT_EQ(manifest::GetString(request, {"metadata", "name"}), "wl-prov-2");
  EXPECT_EQ(manifest::GetString(request, {"metadata", "namespace"}), "ns");
  EXPECT_EQ(manifest::GetString(request, {"metadata", "labels", "kueue.x-k8s.io/managed"}), "true");
  EXPECT_EQ(manifest::GetString(request, {"metadata", "annotations", "tollgate.dev/workload"}),
            "wl");
  EXPECT_EQ(request["metadata"]["ownerReferences"][0], owner);
  EXPECT_EQ(request["spec"]["provisioningClassName"], "queued-provisioning.gke.io");
  EXPECT_EQ(request["spec"]["parameters"],
            Json::parse(R"({"a": "1", "maxRunDurationSeconds": "60"})"));
  // Admitted counts, one template per pod set.
  EXPECT_EQ(request["spec"]["podSets"], Json::parse(R"([
      {"podTemplateRef": {"name": "ppt-wl-prov-2-main"}, "count": 3},
      {"podTemplateRef": {"name": "ppt-wl-prov-2-launcher"}, "count": 1}])"));
  ASSERT_EQ(built->pod_templates.size(), 2u);
  const Json& pt = built->pod_templates[0];
  EXPECT_EQ(pt["kind"], "PodTemplate");
  EXPECT_EQ(manifest::GetString(pt, {"metadata", "name"}), "ppt-wl-prov-2-main");
  EXPECT_EQ(manifest::GetString(pt, {"template", "spec", "nodeSelector", "gpu"}), "a100");
  // Limits stand in for missing requests, as the autoscaler sizes nodes by requests.
  EXPECT_EQ(pt["template"]["spec"]["containers"][0]["resources"]["requests"]["nvidia.com/gpu"],
            "1");

  // managedResources: only the GPU pod set.
  built = BuildRequest(wl, "prov", 1, MustConfig(R"({"managedResources": ["nvidia.com/gpu"]})"),
                       {{"main", gpu_template}, {"launcher", cpu_template}}, {}, Json(nullptr));
  ASSERT_TRUE(built.ok());
  EXPECT_EQ(built->request["spec"]["podSets"].size(), 1u);
  EXPECT_FALSE(built->request["metadata"].contains("ownerReferences"));

  // Identical templates merge into one pod set of the summed count.
  built =
      BuildRequest(wl, "prov", 1, MustConfig(R"({"podSetMergePolicy": "IdenticalPodTemplates"})"),
                   {{"main", cpu_template}, {"launcher", cpu_template}}, {}, Json(nullptr));
  ASSERT_TRUE(built.ok());
  EXPECT_EQ(built->request["spec"]["podSets"], Json::parse(R"([
      {"podTemplateRef": {"name": "ppt-wl-prov-1-main"}, "count": 4}])"));

  EXPECT_THAT(BuildRequest(wl, "prov", 1, MustConfig(), {{"main", gpu_template}}, {}, Json(nullptr))
                  .status()
                  .message(),
              HasSubstr("no pod template for pod set \"launcher\""));
}

// Kueue's canMergePodSets compares templates with equality.Semantic, whose equality for
// resource.Quantity is Cmp: amounts spelled differently are the same amount.
TEST(ProvisioningRequestTest, MergePolicyComparesQuantitiesByValue) {
  const v1::Workload wl = MakeWorkload();
  const auto pod_template = [](const Json& requests, const Json& limits) {
    return Json{
        {"spec",
         {{"containers",
           {{{"name", "c"}, {"resources", {{"requests", requests}, {"limits", limits}}}}}}}}};
  };
  const Json one_cpu = pod_template({{"cpu", "1"}, {"memory", "1Gi"}}, {{"memory", "2Gi"}});
  const Json thousand_millicpu =
      pod_template({{"cpu", "1000m"}, {"memory", "1073741824"}}, {{"memory", "2048Mi"}});
  const Json two_cpu = pod_template({{"cpu", "2"}, {"memory", "1Gi"}}, {{"memory", "2Gi"}});
  // A bare number is a quantity too (the API server reads `cpu: 1` as "1").
  const Json numeric_cpu = pod_template({{"cpu", 1}, {"memory", "1Gi"}}, {{"memory", "2Gi"}});
  const Json merged = Json::parse(R"([
      {"podTemplateRef": {"name": "ppt-wl-prov-1-main"}, "count": 4}])");
  struct Case {
    std::string name;
    std::string policy;
    Json launcher_template;
    bool merges;
  };
  const std::vector<Case> cases = {
      {"IdenticalTemplatesSameValue", "IdenticalPodTemplates", thousand_millicpu, true},
      {"IdenticalTemplatesBareNumber", "IdenticalPodTemplates", numeric_cpu, true},
      {"IdenticalTemplatesOtherValue", "IdenticalPodTemplates", two_cpu, false},
      {"SchedulingRequirementsSameValue", "IdenticalWorkloadSchedulingRequirements",
       thousand_millicpu, true},
      {"SchedulingRequirementsOtherValue", "IdenticalWorkloadSchedulingRequirements", two_cpu,
       false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    absl::StatusOr<RequestObjects> built = BuildRequest(
        wl, "prov", 1, MustConfig(absl::StrCat(R"({"podSetMergePolicy": ")", c.policy, R"("})")),
        {{"main", one_cpu}, {"launcher", c.launcher_template}}, {}, Json(nullptr));
    ASSERT_TRUE(built.ok()) << built.status();
    if (c.merges) {
      EXPECT_EQ(built->request["spec"]["podSets"], merged);
    } else {
      EXPECT_EQ(built->request["spec"]["podSets"].size(), 2u);
    }
  }
}

TEST(ProvisioningPlanTest, WithoutARequestTheFirstAttemptIsCreated) {
  const Config config = MustConfig();
  const CheckPlan plan = Plan(MakeWorkload(), State("Pending"), &config, {});
  EXPECT_FALSE(plan.update.has_value());
  EXPECT_EQ(plan.create_attempt, 1);
  EXPECT_FALSE(plan.kept_request.has_value());
}

TEST(ProvisioningPlanTest, AfterAnEvictionTheNextAttemptFollowsTheRetryCount) {
  // The eviction deleted the failed request; the retry count names the next one.
  const Config config = MustConfig();
  EXPECT_EQ(Plan(MakeWorkload(), State("Pending", 2), &config, {}).create_attempt, 3);
}

TEST(ProvisioningPlanTest, NoConditionsYetIsPendingWithoutMessage) {
  const Config config = MustConfig();
  v1::AdmissionCheckState state = State("Pending");
  state.set_message("Error creating PodTemplate");
  const CheckPlan plan = Plan(MakeWorkload(), state, &config, {Request(1)});
  ASSERT_TRUE(plan.update.has_value());
  EXPECT_EQ(plan.update->state, "Pending");
  EXPECT_EQ(plan.update->message, "");
  EXPECT_EQ(plan.kept_request, "wl-prov-1");
  EXPECT_FALSE(plan.create_attempt.has_value());
}

TEST(ProvisioningPlanTest, ProvisionedIsReadyWithTheAutoscalerAnnotations) {
  const Config config = MustConfig(
      R"({"podSetUpdates": {"nodeSelector": [
            {"key": "topology.kubernetes.io/zone", "valueFromProvisioningClassDetail": "zone"},
            {"key": "absent", "valueFromProvisioningClassDetail": "missing"}]}})");
  const CheckPlan plan = Plan(
      MakeWorkload(), State("Pending"), &config,
      {Request(1, {{"Accepted", "True", ""}, {"Provisioned", "True", "Provisioned on 3 nodes"}})});
  ASSERT_TRUE(plan.update.has_value());
  EXPECT_EQ(plan.update->state, "Ready");
  EXPECT_EQ(plan.update->message, "Provisioned on 3 nodes");
  ASSERT_EQ(plan.update->pod_set_updates.size(), 2u);
  const v1::PodSetUpdate& main = plan.update->pod_set_updates[0];
  EXPECT_EQ(main.name(), "main");
  EXPECT_EQ(main.annotations().at("autoscaling.x-k8s.io/consume-provisioning-request"),
            "wl-prov-1");
  EXPECT_EQ(main.annotations().at("autoscaling.x-k8s.io/provisioning-class-name"),
            "queued-provisioning.gke.io");
  EXPECT_EQ(main.node_selector().at("topology.kubernetes.io/zone"), "us-b");
  EXPECT_FALSE(main.node_selector().contains("absent"));
  EXPECT_EQ(plan.update->pod_set_updates[1].name(), "launcher");
  EXPECT_FALSE(plan.create_attempt.has_value());

  // Already Ready: nothing to post, nothing to create.
  v1::AdmissionCheckState ready = State("Ready");
  ready.set_message("Provisioned on 3 nodes");
  const CheckPlan again = Plan(MakeWorkload(), ready, &config,
                               {Request(1, {{"Provisioned", "True", "Provisioned on 3 nodes"}})});
  EXPECT_FALSE(again.update.has_value());
  EXPECT_FALSE(again.create_attempt.has_value());
}

TEST(ProvisioningPlanTest, FailedRetriesWithBackoffThenRejectsPastTheLimit) {
  const Config config = MustConfig();
  CheckPlan plan =
      Plan(MakeWorkload(), State("Pending"), &config, {Request(1, {{"Failed", "True", "quota"}})});
  ASSERT_TRUE(plan.update.has_value());
  EXPECT_EQ(plan.update->state, "Retry");
  EXPECT_EQ(plan.update->message, "Retrying after failure: quota");
  EXPECT_EQ(plan.update->requeue_after_seconds, 60);
  EXPECT_FALSE(plan.create_attempt.has_value());

  // The retry was counted (by the eviction) but the request survived: only the message, and the
  // next attempt.
  plan = Plan(MakeWorkload(), State("Pending", 1), &config,
              {Request(1, {{"Failed", "True", "quota"}})});
  ASSERT_TRUE(plan.update.has_value());
  EXPECT_EQ(plan.update->state, "Pending");
  EXPECT_EQ(plan.create_attempt, 2);

  // The third retry waits 240s.
  plan = Plan(MakeWorkload(), State("Pending", 2), &config,
              {Request(3, {{"Failed", "True", "quota"}})});
  EXPECT_EQ(plan.update->state, "Retry");
  EXPECT_EQ(plan.update->requeue_after_seconds, 240);

  // Attempt 4 is past backoffLimitCount 3.
  plan = Plan(MakeWorkload(), State("Pending", 3), &config,
              {Request(4, {{"Failed", "True", "quota"}})});
  EXPECT_EQ(plan.update->state, "Rejected");
  EXPECT_EQ(plan.update->message, "quota");
  EXPECT_FALSE(plan.create_attempt.has_value());
}

TEST(ProvisioningPlanTest, CapacityRevokedRejectsAnActiveWorkload) {
  const Config config = MustConfig();
  v1::AdmissionCheckState ready = State("Ready");
  const CheckPlan plan = Plan(
      MakeWorkload(v1::WORKLOAD_STATE_ADMITTED), ready, &config,
      {Request(1, {{"Provisioned", "True", ""}, {"CapacityRevoked", "True", "nodes reclaimed"}})});
  ASSERT_TRUE(plan.update.has_value());
  EXPECT_EQ(plan.update->state, "Rejected");
  EXPECT_EQ(plan.update->message, "nodes reclaimed");

  v1::Workload inactive = MakeWorkload(v1::WORKLOAD_STATE_ADMITTED);
  inactive.mutable_spec()->set_active(false);
  EXPECT_FALSE(Plan(inactive, ready, &config, {Request(1, {{"CapacityRevoked", "True", "x"}})})
                   .update.has_value());
}

TEST(ProvisioningPlanTest, BookingExpiredRetriesBeforeAdmissionAndIsIgnoredAfter) {
  const Config config = MustConfig();
  const Json expired =
      Request(1, {{"Provisioned", "True", ""}, {"BookingExpired", "True", "late"}});
  CheckPlan plan = Plan(MakeWorkload(), State("Pending"), &config, {expired});
  ASSERT_TRUE(plan.update.has_value());
  EXPECT_EQ(plan.update->state, "Retry");
  EXPECT_EQ(plan.update->message, "Retrying after booking expired: late");

  v1::AdmissionCheckState ready = State("Ready");
  plan = Plan(MakeWorkload(v1::WORKLOAD_STATE_ADMITTED), ready, &config, {expired});
  EXPECT_FALSE(plan.update.has_value());
  EXPECT_FALSE(plan.create_attempt.has_value());
  EXPECT_EQ(plan.kept_request, "wl-prov-1");
}

TEST(ProvisioningPlanTest, AcceptedCarriesTheEstimate) {
  const Config config = MustConfig();
  const CheckPlan plan = Plan(
      MakeWorkload(), State("Pending"), &config,
      {Request(1, {{"Accepted", "True", ""}, {"Provisioned", "False", "ETA 2026-11-29T02:00Z"}})});
  ASSERT_TRUE(plan.update.has_value());
  EXPECT_EQ(plan.update->state, "Pending");
  EXPECT_EQ(plan.update->message, "ETA 2026-11-29T02:00Z");
}

TEST(ProvisioningPlanTest, InactiveCheckAndUnneededRequest) {
  CheckPlan plan = Plan(MakeWorkload(), State("Pending"), nullptr, {Request(1)});
  ASSERT_TRUE(plan.update.has_value());
  EXPECT_EQ(plan.update->message, "the check is not active");
  EXPECT_FALSE(plan.kept_request.has_value());
  EXPECT_FALSE(plan.create_attempt.has_value());

  const Config fpga = MustConfig(R"({"managedResources": ["example.com/fpga"]})");
  plan = Plan(MakeWorkload(), State("Pending"), &fpga, {});
  ASSERT_TRUE(plan.update.has_value());
  EXPECT_EQ(plan.update->state, "Ready");
  EXPECT_EQ(plan.update->message, "the provisioning request is not needed");
  EXPECT_FALSE(plan.create_attempt.has_value());
}

TEST(ProvisioningPlanTest, ARequestOutOfStepWithItsConfigIsReplaced) {
  const Config config = MustConfig(R"({"parameters": {"a": "2"}})");
  Json old = Request(1, {{"Provisioned", "True", ""}});
  old["spec"]["parameters"]["a"] = "1";
  const CheckPlan plan = Plan(MakeWorkload(), State("Pending"), &config, {old});
  EXPECT_FALSE(plan.kept_request.has_value());
  EXPECT_EQ(plan.create_attempt, 1);
  EXPECT_THAT(UnusedRequests({old}, {plan}), ElementsAre("wl-prov-1"));
}

TEST(ProvisioningPlanTest, OnlyTheLastAttemptIsKept) {
  const Config config = MustConfig();
  const std::vector<Json> requests = {Request(1, {{"Failed", "True", "x"}}), Request(2)};
  const CheckPlan plan = Plan(MakeWorkload(), State("Pending", 1), &config, requests);
  EXPECT_EQ(plan.kept_request, "wl-prov-2");
  EXPECT_THAT(UnusedRequests(requests, {plan}), ElementsAre("wl-prov-1"));
}

}  // namespace
}  // namespace tollgate::kube::provisioning
