#include "services/manifest/admission_enactment.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "services/manifest/job_kinds.h"
#include "services/manifest/pod_set_info.h"

namespace tollgate::manifest {
namespace {

v1::ResourceFlavor Flavor(const std::string& name, std::map<std::string, std::string> labels,
                          std::vector<v1::Toleration> tolerations = {}) {
  v1::ResourceFlavor f;
  f.mutable_metadata()->set_name(name);
  for (const auto& [k, v] : labels) (*f.mutable_spec()->mutable_node_labels())[k] = v;
  for (const auto& t : tolerations) *f.mutable_spec()->add_tolerations() = t;
  return f;
}

v1::Toleration GpuToleration() {
  v1::Toleration t;
  t.set_key("nvidia.com/gpu");
  t.set_operator_("Exists");
  t.set_effect("NoSchedule");
  return t;
}

v1::Admission AdmissionFor(const std::string& pod_set, std::map<std::string, std::string> flavors,
                           int count) {
  v1::Admission a;
  a.set_cluster_queue("team-a-cq");
  v1::PodSetAssignment* p = a.add_pod_set_assignments();
  p->set_name(pod_set);
  p->set_count(count);
  for (const auto& [r, f] : flavors) (*p->mutable_flavors())[r] = f;
  return a;
}

// The admission as the adapter enacts it: its pod-set infos, then the kind's enactment.
absl::StatusOr<Json> Apply(const JobKindTranslator& kind, const Json& obj,
                           const v1::Admission& admission, const FlavorMap& flavors) {
  absl::StatusOr<std::vector<PodSetInfo>> infos = PodSetInfosFromAdmission(admission, flavors, {});
  if (!infos.ok()) return infos.status();
  return ApplyAdmission(kind, obj, *infos, AdmissionFingerprint(admission), NoObjects());
}

const JobKindTranslator& Job() { return *FindJobKind("Job"); }
const JobKindTranslator& RayJob() { return *FindJobKind("RayJob"); }

Json MakeJob() {
  return Json::parse(R"({
    "apiVersion": "batch/v1", "kind": "Job",
    "metadata": {"name": "j", "namespace": "team-a", "uid": "u-1", "resourceVersion": "7",
                 "annotations": {"keep": "me"}},
    "spec": {"suspend": true, "parallelism": 4,
             "template": {"spec": {
               "nodeSelector": {"team": "a"},
               "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}}})");
}

TEST(ApplyAdmissionTest, InjectsFlavorLabelsAndTolerationsAndRestoresThem) {
  const FlavorMap flavors = {
      {"a100", Flavor("a100", {{"cloud.google.com/gke-accelerator", "nvidia-tesla-a100"}},
                      {GpuToleration()})},
      {"spot", Flavor("spot", {{"cloud.google.com/gke-spot", "true"}})}};
  const v1::Admission admission =
      AdmissionFor("main", {{"cpu", "spot"}, {"nvidia.com/gpu", "a100"}}, 4);
  const Json job = MakeJob();
  absl::StatusOr<Json> admitted = Apply(Job(), job, admission, flavors);
  ASSERT_TRUE(admitted.ok()) << admitted.status();
  const Json& spec = (*admitted)["spec"]["template"]["spec"];
  EXPECT_EQ(spec["nodeSelector"],
            Json::parse(R"({"team": "a", "cloud.google.com/gke-accelerator": "nvidia-tesla-a100",
                            "cloud.google.com/gke-spot": "true"})"));
  EXPECT_EQ(spec["tolerations"], Json::parse(R"([{"key": "nvidia.com/gpu", "operator": "Exists",
                                                  "effect": "NoSchedule"}])"));
  EXPECT_EQ((*admitted)["spec"]["template"]["metadata"]["labels"]["kueue.x-k8s.io/podset"], "main");
  EXPECT_EQ(Annotation(*admitted, kAdmissionAnnotation), AdmissionFingerprint(admission));
  EXPECT_EQ((*admitted)["spec"]["parallelism"], 4);

  // Applying twice is the same as once: it starts from the recorded originals.
  absl::StatusOr<Json> again = Apply(Job(), *admitted, admission, flavors);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *admitted);

  absl::StatusOr<Json> restored = RestoreOriginalFields(*admitted);
  ASSERT_TRUE(restored.ok()) << restored.status();
  EXPECT_EQ(*restored, job);
}

TEST(ApplyAdmissionTest, AdmissionCheckPodSetUpdatesReachTheTemplateAndAreUndone) {
  const FlavorMap flavors = {{"default", Flavor("default", {{"pool", "cpu"}})}};
  const v1::Admission admission = AdmissionFor("main", {{"cpu", "default"}}, 4);
  v1::Workload wl;
  v1::PodSetUpdate* update = wl.mutable_status()->add_admitted_pod_sets();
  update->set_name("main");
  (*update->mutable_labels())["provisioned"] = "yes";
  (*update->mutable_annotations())["autoscaling.x-k8s.io/consume-provisioning-request"] = "pr-1";
  (*update->mutable_node_selector())["zone"] = "a";
  *update->add_tolerations() = GpuToleration();
  v1::PodSetUpdate* other = wl.mutable_status()->add_admitted_pod_sets();
  other->set_name("not-a-pod-set-of-this-job");
  (*other->mutable_labels())["x"] = "y";
  const Json job = MakeJob();
  absl::StatusOr<std::vector<PodSetInfo>> infos =
      PodSetInfosFromAdmission(admission, flavors, PodSetUpdatesOf(wl));
  ASSERT_TRUE(infos.ok()) << infos.status();
  absl::StatusOr<Json> admitted =
      ApplyAdmission(Job(), job, *infos, AdmissionFingerprint(admission), NoObjects());
  ASSERT_TRUE(admitted.ok()) << admitted.status();
  const Json& tmpl = (*admitted)["spec"]["template"];
  EXPECT_EQ(tmpl["metadata"],
            Json::parse(R"({"labels": {"provisioned": "yes", "kueue.x-k8s.io/podset": "main"},
      "annotations": {"autoscaling.x-k8s.io/consume-provisioning-request": "pr-1"}})"));
  EXPECT_EQ(tmpl["spec"]["nodeSelector"],
            Json::parse(R"({"team": "a", "pool": "cpu", "zone": "a"})"));
  EXPECT_EQ(tmpl["spec"]["tolerations"], Json::parse(R"([{"key": "nvidia.com/gpu",
      "operator": "Exists", "effect": "NoSchedule"}])"));

  absl::StatusOr<Json> restored = RestoreOriginalFields(*admitted);
  ASSERT_TRUE(restored.ok()) << restored.status();
  EXPECT_EQ(*restored, job);
}

TEST(ApplyAdmissionTest, PartialAdmissionLowersParallelismUntilRestored) {
  const FlavorMap flavors = {{"default", Flavor("default", {})}};
  const Json job = MakeJob();
  absl::StatusOr<Json> admitted =
      Apply(Job(), job, AdmissionFor("main", {{"cpu", "default"}}, 2), flavors);
  ASSERT_TRUE(admitted.ok());
  EXPECT_EQ((*admitted)["spec"]["parallelism"], 2);
  absl::StatusOr<Json> restored = RestoreOriginalFields(*admitted);
  ASSERT_TRUE(restored.ok());
  EXPECT_EQ(*restored, job);
}

TEST(ApplyAdmissionTest, CreatesAndRemovesTheDefaultRaySubmitter) {
  const Json job = Json::parse(R"({
    "metadata": {"name": "r", "namespace": "n", "uid": "u"},
    "spec": {"suspend": true, "rayClusterSpec": {
      "headGroupSpec": {"template": {"spec": {"containers": [{"name": "h", "image": "ray:1"}]}}},
      "workerGroupSpecs": [{"groupName": "g", "replicas": 1, "template": {"spec": {
        "containers": [{"name": "w"}]}}}]}}})");
  const FlavorMap flavors = {{"cpu", Flavor("cpu", {{"pool", "cpu"}})}};
  v1::Admission admission;
  admission.set_cluster_queue("cq");
  for (const char* name : {"head", "g", "submitter"}) {
    v1::PodSetAssignment* p = admission.add_pod_set_assignments();
    p->set_name(name);
    p->set_count(1);
    (*p->mutable_flavors())["cpu"] = "cpu";
  }
  absl::StatusOr<Json> admitted = Apply(RayJob(), job, admission, flavors);
  ASSERT_TRUE(admitted.ok()) << admitted.status();
  EXPECT_EQ((*admitted)["spec"]["submitterPodTemplate"]["spec"]["nodeSelector"]["pool"], "cpu");
  EXPECT_EQ((*admitted)["spec"]["submitterPodTemplate"]["spec"]["containers"][0]["image"], "ray:1");
  EXPECT_EQ((*admitted)["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["template"]["spec"]
                       ["nodeSelector"]["pool"],
            "cpu");
  absl::StatusOr<Json> restored = RestoreOriginalFields(*admitted);
  ASSERT_TRUE(restored.ok());
  EXPECT_EQ(*restored, job);
}

TEST(ApplyAdmissionTest, MissingFlavorIsNotFound) {
  EXPECT_EQ(Apply(Job(), MakeJob(), AdmissionFor("main", {{"cpu", "x"}}, 4), {}).status().code(),
            absl::StatusCode::kNotFound);
}

TEST(RestoreOriginalFieldsTest, MalformedAnnotationIsInvalid) {
  Json job = MakeJob();
  job["metadata"]["annotations"][std::string(kOriginalTemplatesAnnotation)] = "{not json";
  EXPECT_EQ(RestoreOriginalFields(job).status().code(), absl::StatusCode::kInvalidArgument);
  job["metadata"]["annotations"][std::string(kOriginalTemplatesAnnotation)] =
      R"({"templates": {"no-leading-slash": {}}})";
  EXPECT_EQ(RestoreOriginalFields(job).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(RestoreOriginalFieldsTest, WithoutAnnotationIsIdentity) {
  const Json job = MakeJob();
  absl::StatusOr<Json> restored = RestoreOriginalFields(job);
  ASSERT_TRUE(restored.ok());
  EXPECT_EQ(*restored, job);
}

TEST(AdmissionFingerprintTest, IgnoresMapOrder) {
  v1::Admission a = AdmissionFor("main", {{"cpu", "x"}, {"memory", "y"}}, 1);
  EXPECT_EQ(AdmissionFingerprint(a), "team-a-cq;main:1:cpu=x,memory=y");
}

TEST(MergePatchDiffTest, ProducesTheMinimalPatch) {
  const Json from = Json::parse(R"({"a": 1, "b": {"c": 2, "d": 3}, "e": [1, 2], "f": "x"})");
  const Json to = Json::parse(R"({"a": 1, "b": {"c": 5}, "e": [1], "g": true})");
  const Json patch = MergePatchDiff(from, to);
  EXPECT_EQ(patch, Json::parse(R"({"b": {"c": 5, "d": null}, "e": [1], "f": null, "g": true})"));
  Json applied = from;
  applied.merge_patch(patch);
  EXPECT_EQ(applied, to);
  EXPECT_TRUE(MergePatchDiff(to, to).empty());
}

}  // namespace
}  // namespace tollgate::manifest
