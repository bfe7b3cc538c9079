// Every kind of the table against the manifests its project documents (test/fixtures/): the pod
// sets Kueue computes, where an admission lands and that suspending undoes it exactly, and the
// kinds' own rules (finish, readiness, reclaimable pods, refusals).
#include "services/manifest/job_kinds.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "services/manifest/admission_enactment.h"
#include "services/manifest/pod_set_info.h"
#include "services/manifest/yaml_json.h"
#include "test/status_matchers.h"

namespace tollgate::manifest {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kUid[] = "0c4b1b53-6a1e-4d8a-9a53-2f0d9c7e1a11";

// The documents of a fixture file.
std::vector<Json> Fixture(const std::string& file) {
  const std::string path = absl::StrCat(TOLLGATE_FIXTURES_DIR, "/", file);
  absl::StatusOr<std::string> text = common::ReadFileToString(path);
  EXPECT_TRUE(text.ok()) << text.status();
  if (!text.ok()) return {};
  absl::StatusOr<std::vector<Json>> docs = JsonDocumentsFromYaml(*text, path);
  EXPECT_TRUE(docs.ok()) << docs.status();
  return docs.ok() ? *docs : std::vector<Json>{};
}

// Objects the translators may look up (a TrainJob's runtime), from fixture files.
class FixtureLookup final : public ObjectLookup {
 public:
  explicit FixtureLookup(std::vector<Json> objects) : objects_(std::move(objects)) {}
  absl::StatusOr<Json> Get(const ResourceKind& kind, absl::string_view ns,
                           absl::string_view name) const override {
    for (const Json& o : objects_) {
      if (GetString(o, {"kind"}) == kind.kind && GetString(o, {"metadata", "name"}) == name) {
        return o;
      }
    }
    return absl::NotFoundError(absl::StrCat(kind.kind, " ", name, " not found"));
  }

 private:
  std::vector<Json> objects_;
};

// The job object of a fixture, as the API server would return it.
Json JobOf(const std::vector<Json>& docs, const std::string& kind) {
  for (Json doc : docs) {
    if (GetString(doc, {"kind"}) != kind) continue;
    doc["metadata"]["namespace"] = "team-a";
    doc["metadata"]["uid"] = kUid;
    if (!doc["metadata"].contains("name")) doc["metadata"]["name"] = "generated-x7k2p";
    return doc;
  }
  ADD_FAILURE() << "no " << kind << " in the fixture";
  return Json::object();
}

struct ExpectedPodSet {
  std::string name;
  int32_t count;
  std::map<std::string, std::string> requests;
  // Where an admission's node selector lands for this pod set.
  std::string node_selector_at;
};

struct KindCase {
  std::string kind;
  std::string fixture;
  std::vector<std::string> lookup_fixtures;
  std::vector<ExpectedPodSet> pod_sets;
};

void PrintTo(const KindCase& c, std::ostream* os) { *os << c.kind; }

std::vector<KindCase> Cases() {
  const std::map<std::string, std::string> cpu1 = {{"cpu", "1"}, {"memory", "200Mi"}};
  return {
      {"Job", "job/job.yaml", {}, {{"main", 3, cpu1, "/spec/template/spec/nodeSelector"}}},
      {"JobSet",
       "jobset/jobset.yaml",
       {},
       {{"workers", 6, cpu1, "/spec/replicatedJobs/0/template/spec/template/spec/nodeSelector"},
        {"driver",
         1,
         {{"cpu", "2"}, {"memory", "200Mi"}},
         "/spec/replicatedJobs/1/template/spec/template/spec/nodeSelector"}}},
      {"MPIJob",
       "mpijob/mpijob.yaml",
       {},
       {{"launcher",
         1,
         {{"cpu", "1"}, {"memory", "1Gi"}},
         "/spec/mpiReplicaSpecs/Launcher/template/spec/nodeSelector"},
        {"worker",
         2,
         {{"cpu", "1"}, {"memory", "1Gi"}},
         "/spec/mpiReplicaSpecs/Worker/template/spec/nodeSelector"}}},
      {"PyTorchJob",
       "pytorchjob/pytorchjob.yaml",
       {},
       {{"master",
         1,
         {{"cpu", "1"}, {"memory", "500Mi"}},
         "/spec/pytorchReplicaSpecs/Master/template/spec/nodeSelector"},
        {"worker",
         2,
         {{"cpu", "1"}, {"memory", "500Mi"}},
         "/spec/pytorchReplicaSpecs/Worker/template/spec/nodeSelector"}}},
      {"TFJob",
       "tfjob/tfjob.yaml",
       {},
       {{"ps", 1, cpu1, "/spec/tfReplicaSpecs/PS/template/spec/nodeSelector"},
        {"worker", 2, cpu1, "/spec/tfReplicaSpecs/Worker/template/spec/nodeSelector"}}},
      {"JAXJob",
       "jaxjob/jaxjob.yaml",
       {},
       {{"worker", 2, cpu1, "/spec/jaxReplicaSpecs/Worker/template/spec/nodeSelector"}}},
      {"PaddleJob",
       "paddlejob/paddlejob.yaml",
       {},
       {{"worker", 2, cpu1, "/spec/paddleReplicaSpecs/Worker/template/spec/nodeSelector"}}},
      {"XGBoostJob",
       "xgboostjob/xgboostjob.yaml",
       {},
       {{"master", 1, cpu1, "/spec/xgbReplicaSpecs/Master/template/spec/nodeSelector"},
        {"worker", 2, cpu1, "/spec/xgbReplicaSpecs/Worker/template/spec/nodeSelector"}}},
      {"TrainJob",
       "trainjob/trainjob.yaml",
       {"trainjob/torch-distributed-runtime.yaml"},
       {{"node",
         2,
         {{"cpu", "2"}, {"memory", "1Gi"}},
         "/spec/runtimePatches/0/trainingRuntimeSpec/template/spec/replicatedJobs/0/template/spec/"
         "template/spec/nodeSelector"}}},
      {"RayJob",
       "rayjob/rayjob-with-configmap.yaml",
       {},
       {{"head",
         1,
         {{"cpu", "1"}, {"memory", "2Gi"}},
         "/spec/rayClusterSpec/headGroupSpec/template/spec/nodeSelector"},
        {"small-group",
         1,
         {{"cpu", "1"}, {"memory", "1Gi"}},
         "/spec/rayClusterSpec/workerGroupSpecs/0/template/spec/nodeSelector"},
        {"submitter",
         1,
         {{"cpu", "500m"}, {"memory", "200Mi"}},
         "/spec/submitterPodTemplate/spec/nodeSelector"}}},
      {"RayCluster",
       "raycluster/raycluster.yaml",
       {},
       {{"head",
         1,
         {{"cpu", "1"}, {"memory", "2Gi"}},
         "/spec/headGroupSpec/template/spec/nodeSelector"},
        {"workergroup",
         4,
         {{"cpu", "1"}, {"memory", "1Gi"}},
         "/spec/workerGroupSpecs/0/template/spec/nodeSelector"}}},
      {"RayService",
       "rayservice/rayservice.yaml",
       {},
       {{"head",
         1,
         {{"cpu", "2"}, {"memory", "4Gi"}},
         "/spec/rayClusterConfig/headGroupSpec/template/spec/nodeSelector"},
        {"small-group",
         1,
         {{"cpu", "1"}, {"memory", "2Gi"}},
         "/spec/rayClusterConfig/workerGroupSpecs/0/template/spec/nodeSelector"}}},
      {"SparkApplication",
       "sparkapplication/spark-pi.yaml",
       {},
       {{"driver", 1, {{"cpu", "1"}, {"memory", "512Mi"}}, "/spec/driver/nodeSelector"},
        {"executor", 2, {{"cpu", "1"}, {"memory", "512Mi"}}, "/spec/executor/nodeSelector"}}},
      {"AppWrapper",
       "appwrapper/appwrapper.yaml",
       {},
       {{"wrapped-pytorch-0", 1, {{"cpu", "1"}}, "/spec/components/0/podSetInfos/0/nodeSelector"},
        {"wrapped-pytorch-1", 2, {{"cpu", "1"}}, "/spec/components/0/podSetInfos/1/nodeSelector"}}},
  };
}

std::vector<Json> LookupObjects(const KindCase& c) {
  std::vector<Json> objects;
  for (const std::string& f : c.lookup_fixtures) {
    for (const Json& doc : Fixture(f)) objects.push_back(doc);
  }
  return objects;
}

v1::ResourceFlavor GpuFlavor() {
  v1::ResourceFlavor flavor;
  flavor.mutable_metadata()->set_name("a100");
  (*flavor.mutable_spec()->mutable_node_labels())["cloud.example/pool"] = "a100";
  v1::Toleration* t = flavor.mutable_spec()->add_tolerations();
  t->set_key("nvidia.com/gpu");
  t->set_operator_("Exists");
  t->set_effect("NoSchedule");
  return flavor;
}

v1::Admission AdmitAll(const v1::Workload& wl) {
  v1::Admission admission;
  admission.set_cluster_queue("gpu-cq");
  for (const v1::PodSet& ps : wl.spec().pod_sets()) {
    v1::PodSetAssignment* a = admission.add_pod_set_assignments();
    a->set_name(ps.name());
    a->set_count(ps.count());
    for (const auto& [resource, quantity] : ps.requests())
      (*a->mutable_flavors())[resource] = "a100";
  }
  return admission;
}

class JobKindsFixtureTest : public ::testing::TestWithParam<KindCase> {};

TEST_P(JobKindsFixtureTest, PodSetsAreWhatKueueComputes) {
  const KindCase& c = GetParam();
  const JobKindTranslator* t = FindJobKind(c.kind);
  ASSERT_NE(t, nullptr);
  const std::vector<Json> docs = Fixture(c.fixture);
  const Json obj = JobOf(docs, c.kind);
  ASSERT_OK_AND_ASSIGN(const JobKindTranslator* by_manifest,
                       JobKindOfManifest(GetString(obj, {"apiVersion"}), c.kind));
  EXPECT_EQ(by_manifest, t);
  const FixtureLookup lookup(LookupObjects(c));
  ASSERT_OK_AND_ASSIGN(v1::Workload wl, TranslateWorkload(*t, obj, "", lookup));
  EXPECT_EQ(wl.spec().queue_name(), "user-queue");
  const std::string name = GetString(obj, {"metadata", "name"});
  EXPECT_EQ(wl.metadata().name(), KueueWorkloadName(c.kind, t->resource().group, name, kUid));
  EXPECT_EQ(wl.metadata().labels().at(std::string(kJobUidLabel)), kUid);
  ASSERT_EQ(wl.spec().pod_sets_size(), static_cast<int>(c.pod_sets.size()));
  for (size_t i = 0; i < c.pod_sets.size(); ++i) {
    const v1::PodSet& got = wl.spec().pod_sets(static_cast<int>(i));
    const ExpectedPodSet& want = c.pod_sets[i];
    EXPECT_EQ(got.name(), want.name);
    EXPECT_EQ(got.count(), want.count) << want.name;
    const std::map<std::string, std::string> requests(got.requests().begin(), got.requests().end());
    EXPECT_EQ(requests, want.requests) << want.name;
  }
}

TEST_P(JobKindsFixtureTest, AdmissionLandsOnTheRightTemplatesAndSuspendingRestoresIt) {
  const KindCase& c = GetParam();
  const JobKindTranslator* t = FindJobKind(c.kind);
  ASSERT_NE(t, nullptr);
  const Json obj = JobOf(Fixture(c.fixture), c.kind);
  const FixtureLookup lookup(LookupObjects(c));
  ASSERT_OK_AND_ASSIGN(v1::Workload wl, TranslateWorkload(*t, obj, "", lookup));
  const v1::Admission admission = AdmitAll(wl);
  ASSERT_OK_AND_ASSIGN(std::vector<PodSetInfo> infos,
                       PodSetInfosFromAdmission(admission, {{"a100", GpuFlavor()}}, {}));
  ASSERT_OK_AND_ASSIGN(Json admitted,
                       ApplyAdmission(*t, obj, infos, AdmissionFingerprint(admission), lookup));
  for (const ExpectedPodSet& ps : c.pod_sets) {
    const Json::json_pointer selector(ps.node_selector_at);
    ASSERT_TRUE(admitted.contains(selector)) << ps.node_selector_at << "\n" << admitted.dump(2);
    EXPECT_EQ(admitted.at(selector).value("cloud.example/pool", ""), "a100");
    const Json& tolerations = admitted.at(selector.parent_pointer() / "tolerations");
    ASSERT_TRUE(tolerations.is_array()) << ps.node_selector_at;
    EXPECT_EQ(GetString(tolerations.back(), {"key"}), "nvidia.com/gpu");
  }
  // The workload is computed from the job as written, whatever admission did to it.
  ASSERT_OK_AND_ASSIGN(Json restored, RestoreOriginalFields(admitted));
  EXPECT_EQ(restored, obj) << restored.dump(2);
  ASSERT_OK_AND_ASSIGN(v1::Workload again, TranslateWorkload(*t, restored, "", lookup));
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(again, wl))
      << again.DebugString() << "\n"
      << wl.DebugString();
}

INSTANTIATE_TEST_SUITE_P(Fixtures, JobKindsFixtureTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<KindCase>& info) {
                           return info.param.kind;
                         });

TEST(JobKindsTest, EveryKindHasOneRowAndAFramework) {
  std::vector<std::string> kinds;
  for (const JobKindTranslator* t : AllJobKinds()) {
    kinds.push_back(t->resource().kind);
    EXPECT_EQ(FindJobKindByPlural(t->resource().plural), t);
    if (t->traits().creates_workload) {
      EXPECT_EQ(FindJobKindByFramework(t->traits().framework), t) << t->resource().kind;
    }
  }
  EXPECT_THAT(kinds, ElementsAre("Job", "CronJob", "JobSet", "MPIJob", "PyTorchJob", "TFJob",
                                 "JAXJob", "PaddleJob", "XGBoostJob", "TrainJob", "RayJob",
                                 "RayCluster", "RayService", "SparkApplication", "AppWrapper"));
}

TEST(JobKindsTest, WorkloadNamesAreKueues) {
  // Kueue's own expectation (jobframework/workload_names_test.go).
  EXPECT_EQ(KueueWorkloadName("Job", "batch", "name", "uid"), "job-name-ef3a1");
  const std::string long_name(300, 'a');
  const std::string name = KueueWorkloadName("JobSet", "jobset.x-k8s.io", long_name, "uid");
  EXPECT_EQ(name.size(), 253u);
  EXPECT_EQ(name.substr(0, 7), "jobset-");
  EXPECT_EQ(LegacyWorkloadName("job", "Train_Run", "AB12-cd34"), "job-train-run-ab12cd34");
}

TEST(JobKindsTest, AnotherVersionOfAKindIsRefusedByName) {
  EXPECT_EQ(*JobKindOfManifest("v1", "ConfigMap"), nullptr);
  absl::StatusOr<const JobKindTranslator*> old = JobKindOfManifest("kubeflow.org/v1", "MPIJob");
  ASSERT_FALSE(old.ok());
  EXPECT_THAT(old.status().message(), HasSubstr("kubeflow.org/v2beta1"));
  EXPECT_THAT(old.status().message(), HasSubstr("\"kubeflow.org/v1\""));
  absl::StatusOr<const JobKindTranslator*> future =
      JobKindOfManifest("jobset.x-k8s.io/v1", "JobSet");
  ASSERT_FALSE(future.ok());
  EXPECT_THAT(future.status().message(), HasSubstr("jobset.x-k8s.io/v1alpha2"));
}

TEST(JobKindsTest, ConflictingPodSetUpdatesArePermanent) {
  v1::Admission admission;
  admission.set_cluster_queue("cq");
  v1::PodSetAssignment* a = admission.add_pod_set_assignments();
  a->set_name("main");
  a->set_count(1);
  (*a->mutable_flavors())["cpu"] = "a100";
  PodSetUpdate first{.check = "prov", .pod_set = "main", .node_selector = {{"zone", "a"}}};
  PodSetUpdate second{.check = "dws", .pod_set = "main", .node_selector = {{"zone", "b"}}};
  absl::StatusOr<std::vector<PodSetInfo>> infos =
      PodSetInfosFromAdmission(admission, {{"a100", GpuFlavor()}}, {first, second});
  ASSERT_FALSE(infos.ok());
  EXPECT_TRUE(IsPermanentError(infos.status()));
  EXPECT_THAT(infos.status().message(), HasSubstr("admission check dws"));
  EXPECT_THAT(infos.status().message(), HasSubstr("nodeSelector: key zone is \"a\""));

  // An update that contradicts the template is as permanent, and changes nothing.
  Json job = JobOf(Fixture("job/job.yaml"), "Job");
  job["spec"]["template"]["spec"]["nodeSelector"]["zone"] = "c";
  ASSERT_OK_AND_ASSIGN(std::vector<PodSetInfo> one,
                       PodSetInfosFromAdmission(admission, {{"a100", GpuFlavor()}}, {first}));
  absl::StatusOr<Json> applied = ApplyAdmission(*FindJobKind("Job"), job, one, "fp", NoObjects());
  ASSERT_FALSE(applied.ok());
  EXPECT_TRUE(IsPermanentError(applied.status()));
  EXPECT_THAT(applied.status().message(), HasSubstr("key zone is \"c\" and must also be \"a\""));
}

TEST(JobKindsTest, UpdatesAddLabelsAnnotationsAndTolerations) {
  v1::Admission admission;
  admission.set_cluster_queue("cq");
  v1::PodSetAssignment* a = admission.add_pod_set_assignments();
  a->set_name("main");
  a->set_count(3);
  (*a->mutable_flavors())["cpu"] = "a100";
  PodSetUpdate update{.check = "prov",
                      .pod_set = "main",
                      .labels = {{"team", "nlp"}},
                      .annotations = {{"autoscaler/booked", "yes"}},
                      .tolerations = {Json{{"key", "spot"}, {"operator", "Exists"}}}};
  ASSERT_OK_AND_ASSIGN(std::vector<PodSetInfo> infos,
                       PodSetInfosFromAdmission(admission, {{"a100", GpuFlavor()}}, {update}));
  const Json job = JobOf(Fixture("job/job.yaml"), "Job");
  ASSERT_OK_AND_ASSIGN(Json admitted, ApplyAdmission(*FindJobKind("Job"), job, infos,
                                                     AdmissionFingerprint(admission), NoObjects()));
  const Json& tmpl = admitted["spec"]["template"];
  EXPECT_EQ(tmpl["metadata"]["labels"]["team"], "nlp");
  EXPECT_EQ(tmpl["metadata"]["labels"][std::string(kPodSetLabel)], "main");
  EXPECT_EQ(tmpl["metadata"]["annotations"]["autoscaler/booked"], "yes");
  EXPECT_EQ(tmpl["spec"]["tolerations"].size(), 2u);
  ASSERT_OK_AND_ASSIGN(Json restored, RestoreOriginalFields(admitted));
  EXPECT_EQ(restored, job);
}

TEST(JobKindsTest, AnnotationOfEarlierVersionsIsStillRestored) {
  Json job = JobOf(Fixture("job/job.yaml"), "Job");
  Json admitted = job;
  admitted["spec"]["template"]["spec"]["nodeSelector"] = {{"pool", "a100"}};
  admitted["spec"]["parallelism"] = 1;
  SetAnnotation(admitted, kOriginalTemplatesAnnotation,
                R"({"templates": {"/spec/template": {"nodeSelector": null, "tolerations": null}},
                    "created": [], "parallelism": 3})");
  ASSERT_OK_AND_ASSIGN(Json restored, RestoreOriginalFields(admitted));
  EXPECT_EQ(restored, job);
}

TEST(JobKindsTest, JobSetGivesBackThePodsOfSucceededJobs) {
  Json jobset = JobOf(Fixture("jobset/jobset.yaml"), "JobSet");
  const JobKindTranslator& t = *FindJobKind("JobSet");
  ASSERT_OK_AND_ASSIGN(std::vector<PodSetSource> sources, t.PodSets(jobset, NoObjects()));
  EXPECT_TRUE(t.ReclaimablePods(jobset, sources).empty());
  jobset["status"]["replicatedJobsStatus"] = Json::parse(R"([
      {"name": "workers", "ready": 1, "succeeded": 1, "active": 1},
      {"name": "driver", "ready": 1, "succeeded": 0, "active": 1}])");
  EXPECT_THAT(t.ReclaimablePods(jobset, sources), ElementsAre(ReclaimablePod{"workers", 3}));
  EXPECT_TRUE(t.IsActive(jobset));
  // Two workers jobs and one driver job: all three run or ran.
  EXPECT_TRUE(t.PodsReady(jobset, sources, v1::Workload()));
  jobset["status"]["replicatedJobsStatus"][0]["ready"] = 0;
  EXPECT_FALSE(t.PodsReady(jobset, sources, v1::Workload()));
  jobset["status"]["conditions"] =
      Json::parse(R"([{"type": "Completed", "status": "True", "message": "jobs done"}])");
  ASSERT_TRUE(t.Finished(jobset).has_value());
  EXPECT_TRUE(t.Finished(jobset)->succeeded);
  EXPECT_EQ(t.Finished(jobset)->message, "jobs done");
}

TEST(JobKindsTest, RayClustersAndServicesNeverFinish) {
  for (const char* kind : {"RayCluster", "RayService"}) {
    const JobKindTranslator& t = *FindJobKind(kind);
    EXPECT_FALSE(t.traits().finishes);
    Json obj = JobOf(Fixture(kind == std::string("RayCluster") ? "raycluster/raycluster.yaml"
                                                               : "rayservice/rayservice.yaml"),
                     kind);
    obj["status"] = Json::parse(R"({"state": "failed", "conditions": [
        {"type": "Ready", "status": "False"}]})");
    EXPECT_FALSE(t.Finished(obj).has_value()) << kind;
  }
  const JobKindTranslator& service = *FindJobKind("RayService");
  Json obj = JobOf(Fixture("rayservice/rayservice.yaml"), "RayService");
  service.SetSuspended(obj, true);
  EXPECT_EQ(obj["spec"]["rayClusterConfig"]["suspend"], true);
  EXPECT_TRUE(service.IsSuspended(obj));
}

TEST(JobKindsTest, RayHeadReservesTheRedisCleanupWithFaultTolerance) {
  Json cluster = JobOf(Fixture("raycluster/raycluster.yaml"), "RayCluster");
  cluster["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]["resources"]["requests"] = {
      {"cpu", "100m"}, {"memory", "1Gi"}};
  cluster["spec"]["gcsFaultToleranceOptions"] = {{"redisAddress", "redis:6379"}};
  ASSERT_OK_AND_ASSIGN(v1::Workload wl,
                       TranslateWorkload(*FindJobKind("RayCluster"), cluster, "", NoObjects()));
  EXPECT_EQ(wl.spec().pod_sets(0).requests().at("cpu"), "200m");
  EXPECT_EQ(wl.spec().pod_sets(0).requests().at("memory"), "1Gi");
}

TEST(JobKindsTest, WhatKueueRefusesIsRefusedNamingTheField) {
  struct Refusal {
    std::string kind;
    std::string fixture;
    std::string pointer;
    Json value;
    std::string message;
  };
  const std::vector<Refusal> refusals = {
      {"SparkApplication", "sparkapplication/spark-pi.yaml", "/spec/mode", "client",
       "spec.mode: \"client\""},
      {"SparkApplication", "sparkapplication/spark-pi.yaml", "/spec/dynamicAllocation/enabled",
       true, "spec.dynamicAllocation.enabled"},
      {"RayCluster", "raycluster/raycluster.yaml", "/spec/enableInTreeAutoscaling", true,
       "spec.enableInTreeAutoscaling"},
      {"RayCluster", "raycluster/raycluster.yaml", "/spec/workerGroupSpecs/0/groupName", "head",
       "spec.workerGroupSpecs[0].groupName"},
      {"TFJob", "tfjob/tfjob.yaml", "/spec/tfReplicaSpecs/Trainer",
       Json::parse(R"({"template": {"spec": {}}})"), "replica type \"Trainer\""},
      {"JobSet", "jobset/jobset.yaml", "/spec/replicatedJobs/1/name", "workers",
       "spec.replicatedJobs[1].name"},
  };
  for (const Refusal& r : refusals) {
    Json obj = JobOf(Fixture(r.fixture), r.kind);
    obj[Json::json_pointer(r.pointer)] = r.value;
    absl::StatusOr<v1::Workload> wl = TranslateWorkload(*FindJobKind(r.kind), obj, "", NoObjects());
    ASSERT_FALSE(wl.ok()) << r.kind << " " << r.pointer;
    EXPECT_TRUE(absl::IsInvalidArgument(wl.status())) << wl.status();
    EXPECT_THAT(wl.status().message(), HasSubstr(r.message));
  }
}

TEST(JobKindsTest, TrainJobNeedsItsRuntime) {
  const Json train = JobOf(Fixture("trainjob/trainjob.yaml"), "TrainJob");
  absl::StatusOr<v1::Workload> wl =
      TranslateWorkload(*FindJobKind("TrainJob"), train, "", NoObjects());
  ASSERT_FALSE(wl.ok());
  EXPECT_TRUE(absl::IsNotFound(wl.status())) << wl.status();
  EXPECT_THAT(wl.status().message(), HasSubstr("ClusterTrainingRuntime torch-distributed"));
}

TEST(JobKindsTest, TrainJobAdmissionIsARuntimePatchOfKueuesManager) {
  const Json train = JobOf(Fixture("trainjob/trainjob.yaml"), "TrainJob");
  const FixtureLookup lookup(Fixture("trainjob/torch-distributed-runtime.yaml"));
  const JobKindTranslator& t = *FindJobKind("TrainJob");
  ASSERT_OK_AND_ASSIGN(v1::Workload wl, TranslateWorkload(t, train, "", lookup));
  const v1::Admission admission = AdmitAll(wl);
  ASSERT_OK_AND_ASSIGN(std::vector<PodSetInfo> infos,
                       PodSetInfosFromAdmission(admission, {{"a100", GpuFlavor()}}, {}));
  ASSERT_OK_AND_ASSIGN(Json admitted, ApplyAdmission(t, train, infos, "fp", lookup));
  const Json& patch = admitted["spec"]["runtimePatches"][0];
  EXPECT_EQ(patch["manager"], "kueue.x-k8s.io/manager");
  const Json& job = patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"][0];
  EXPECT_EQ(job["name"], "node");
  EXPECT_EQ(job["template"]["spec"]["template"]["metadata"]["labels"][std::string(kPodSetLabel)],
            "node");
}

TEST(JobKindsTest, CronJobAsksForNoWorkloadOfItsOwn) {
  const JobKindTranslator& t = *FindJobKind("CronJob");
  EXPECT_FALSE(t.traits().creates_workload);
  const Json cron = JobOf(Fixture("cronjob/cronjob.yaml"), "CronJob");
  absl::StatusOr<v1::Workload> wl = TranslateWorkload(t, cron, "", NoObjects());
  ASSERT_FALSE(wl.ok());
  EXPECT_THAT(wl.status().message(), HasSubstr("asks for no workload"));
  ASSERT_OK_AND_ASSIGN(std::vector<PodSetSource> jobs, t.PodSets(cron, NoObjects()));
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].count, 2);
}

}  // namespace
}  // namespace tollgate::manifest
