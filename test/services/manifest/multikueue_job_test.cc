// MultiKueue's job projection, the pure part (services/manifest/multikueue_job.h): the manifest a
// manager's workload carries, the job a worker creates from it, the status report, and Kueue's
// determineStatusUpdate rules.

#include "services/manifest/multikueue_job.h"

#include <string>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/manifest/job_kinds.h"
#include "services/manifest/prebuilt_workload.h"

namespace tollgate::manifest {
namespace {

using ::testing::HasSubstr;

const JobKindTranslator& JobKind() { return *FindJobKind("Job"); }

// A manager's Job as the API server serves it once tollgate-kube has seen it.
Json ManagerJob() {
  return Json::parse(R"({
    "apiVersion": "batch/v1", "kind": "Job",
    "metadata": {
      "name": "train", "namespace": "team", "uid": "u-1", "resourceVersion": "42",
      "generation": 3, "creationTimestamp": "2026-01-01T00:00:00Z",
      "managedFields": [{"manager": "kubectl"}],
      "labels": {"kueue.x-k8s.io/queue-name": "q", "app": "train"},
      "annotations": {"tollgate.dev/status": "pending: Waiting", "note": "kept"}
    },
    "spec": {
      "managedBy": "kueue.x-k8s.io/multikueue", "suspend": true, "parallelism": 2,
      "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": "u-1"}},
      "template": {
        "metadata": {"labels": {"controller-uid": "u-1", "job-name": "train",
                                "batch.kubernetes.io/job-name": "train",
                                "batch.kubernetes.io/controller-uid": "u-1", "role": "w"}},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]}
      }
    },
    "status": {"active": 0}
  })");
}

Json PayloadJson(const v1::WorkloadPayload& payload) { return Json::parse(payload.data()); }

TEST(MultiKueueJobTest, ManagedByMultiKueueOnlyForItsValue) {
  EXPECT_TRUE(ManagedByMultiKueue(JobKind(), ManagerJob()));
  Json job = ManagerJob();
  job["spec"]["managedBy"] = "kubernetes.io/job-controller";
  EXPECT_FALSE(ManagedByMultiKueue(JobKind(), job));
  job["spec"].erase("managedBy");
  EXPECT_FALSE(ManagedByMultiKueue(JobKind(), job));
}

// The kinds Kueue has a managedBy MultiKueue adapter for; the pod-based kinds and the rest not.
TEST(MultiKueueJobTest, KindsWithAManagedByFieldAreProjected) {
  for (const char* kind :
       {"Job", "JobSet", "TrainJob", "AppWrapper", "RayJob", "RayCluster", "RayService",
        "PyTorchJob", "TFJob", "XGBoostJob", "PaddleJob", "JAXJob", "MPIJob"}) {
    ASSERT_NE(FindJobKind(kind), nullptr) << kind;
    EXPECT_TRUE(ProjectsThroughMultiKueue(*FindJobKind(kind))) << kind;
  }
  for (const char* kind : {"CronJob", "SparkApplication"}) {
    ASSERT_NE(FindJobKind(kind), nullptr) << kind;
    EXPECT_FALSE(ProjectsThroughMultiKueue(*FindJobKind(kind))) << kind;
  }
}

// The Kubeflow kinds and MPIJob keep managedBy in spec.runPolicy, not in spec.
TEST(MultiKueueJobTest, RunPolicyKindsUseTheirRunPolicysManagedBy) {
  const JobKindTranslator& pytorch = *FindJobKind("PyTorchJob");
  Json job = Json::parse(R"({
    "apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
    "metadata": {"name": "pt", "namespace": "team"},
    "spec": {"managedBy": "kueue.x-k8s.io/multikueue",
             "runPolicy": {"suspend": true, "managedBy": "kubeflow.org/training-operator"},
             "pytorchReplicaSpecs": {}}})");
  EXPECT_FALSE(ManagedByMultiKueue(pytorch, job));
  job["spec"]["runPolicy"]["managedBy"] = "kueue.x-k8s.io/multikueue";
  EXPECT_TRUE(ManagedByMultiKueue(pytorch, job));

  absl::StatusOr<v1::WorkloadPayload> payload = JobManifestPayload(pytorch, job);
  ASSERT_TRUE(payload.ok()) << payload.status();
  EXPECT_EQ(payload->api_version(), "kubeflow.org/v1");
  EXPECT_FALSE(PayloadJson(*payload)["spec"]["runPolicy"].contains("managedBy"));
  EXPECT_EQ(PayloadJson(*payload)["spec"]["runPolicy"]["suspend"], true);
  absl::StatusOr<Json> remote = RemoteJobFromPayload(pytorch, *payload, "team", "copy", "mgr");
  ASSERT_TRUE(remote.ok()) << remote.status();
  EXPECT_FALSE((*remote)["spec"]["runPolicy"].contains("managedBy"));
  EXPECT_EQ(PrebuiltWorkloadName(*remote), "copy");
}

TEST(MultiKueueJobTest, PayloadDropsStatusServerMetadataManagedByAndControllerLabels) {
  absl::StatusOr<v1::WorkloadPayload> payload = JobManifestPayload(JobKind(), ManagerJob());
  ASSERT_TRUE(payload.ok()) << payload.status();
  EXPECT_EQ(payload->content_type(), "application/json");
  EXPECT_EQ(payload->api_version(), "batch/v1");
  EXPECT_EQ(payload->kind(), "Job");
  const Json carried = PayloadJson(*payload);
  EXPECT_EQ(carried["metadata"], Json::parse(R"({"name": "train", "namespace": "team",
                            "labels": {"kueue.x-k8s.io/queue-name": "q", "app": "train"},
                            "annotations": {"note": "kept"}})"));
  EXPECT_FALSE(carried.contains("status"));
  EXPECT_FALSE(carried["spec"].contains("managedBy"));
  EXPECT_FALSE(carried["spec"].contains("selector"));
  EXPECT_EQ(carried["spec"]["suspend"], true);
  EXPECT_EQ(carried["spec"]["parallelism"], 2);
  EXPECT_EQ(carried["spec"]["template"]["metadata"]["labels"], Json::parse(R"({"role": "w"})"));
  // Deterministic: the same job gives the same payload (a resubmit matches).
  EXPECT_EQ(JobManifestPayload(JobKind(), ManagerJob())->data(), payload->data());
}

TEST(MultiKueueJobTest, PayloadOfARunningJobIsSuspended) {
  Json job = ManagerJob();
  job["spec"]["suspend"] = false;
  EXPECT_EQ(PayloadJson(*JobManifestPayload(JobKind(), job))["spec"]["suspend"], true);
  job.erase("spec");
  const absl::Status no_spec = JobManifestPayload(JobKind(), job).status();
  EXPECT_EQ(no_spec.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(no_spec.message(), HasSubstr("spec: Required value"));
}

TEST(MultiKueueJobTest, RemoteJobBindsToTheCopyAndCarriesTheOrigin) {
  const v1::WorkloadPayload payload = *JobManifestPayload(JobKind(), ManagerJob());
  absl::StatusOr<Json> remote =
      RemoteJobFromPayload(JobKind(), payload, "team", "job-train-abcde", "mgr");
  ASSERT_TRUE(remote.ok()) << remote.status();
  EXPECT_EQ(PrebuiltWorkloadName(*remote), "job-train-abcde");
  EXPECT_EQ((*remote)["metadata"]["labels"]["kueue.x-k8s.io/multikueue-origin"], "mgr");
  EXPECT_EQ((*remote)["metadata"]["labels"]["kueue.x-k8s.io/queue-name"], "q");
  EXPECT_EQ((*remote)["metadata"]["name"], "train");
  EXPECT_EQ((*remote)["metadata"]["namespace"], "team");
  EXPECT_FALSE((*remote)["metadata"].contains("uid"));
  EXPECT_FALSE((*remote)["spec"].contains("managedBy"));
  EXPECT_EQ((*remote)["spec"]["suspend"], true);
  EXPECT_FALSE(remote->contains("status"));
}

TEST(MultiKueueJobTest, RemoteJobRefusesAPayloadOfAnotherKindOrNotJson) {
  v1::WorkloadPayload payload = *JobManifestPayload(JobKind(), ManagerJob());
  payload.set_kind("JobSet");
  const absl::Status kind = RemoteJobFromPayload(JobKind(), payload, "team", "c", "mgr").status();
  EXPECT_EQ(kind.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(kind.message(), HasSubstr("spec.payload: carries batch/v1 JobSet, not batch/v1 Job"));
  payload.set_kind("Job");
  payload.set_data("{not json");
  EXPECT_THAT(RemoteJobFromPayload(JobKind(), payload, "team", "c", "mgr").status().message(),
              HasSubstr("spec.payload.data"));
  payload.set_data("{}");
  EXPECT_THAT(RemoteJobFromPayload(JobKind(), payload, "team", "c", "mgr").status().message(),
              HasSubstr("metadata.name"));
}

// What a worker reports, for a job suspended or not and with a status.
v1::WorkloadPayload Report(bool suspended, const std::string& status) {
  Json job = ManagerJob();
  job["spec"]["suspend"] = suspended;
  job["status"] = Json::parse(status);
  return JobStatusReport(JobKind(), job);
}

TEST(MultiKueueJobTest, StatusReportCarriesStatusAndSuspend) {
  const Json report = PayloadJson(Report(false, R"({"active": 2})"));
  EXPECT_EQ(report["spec"]["suspend"], false);
  EXPECT_EQ(report["status"], Json::parse(R"({"active": 2})"));
  EXPECT_FALSE(report.contains("metadata"));
}

TEST(MultiKueueJobTest, StatusIsTakenWhenTheLocalJobRuns) {
  Json local = ManagerJob();
  local["spec"]["suspend"] = false;
  absl::StatusOr<JobStatusUpdate> update = DetermineStatusUpdate(
      JobKind(), local, Report(false, R"({"active": 2, "ready": 2})"), absl::UnixEpoch());
  ASSERT_TRUE(update.ok()) << update.status();
  EXPECT_FALSE(update->deferred);
  EXPECT_EQ(update->status, Json::parse(R"({"active": 2, "ready": 2})"));
}

TEST(MultiKueueJobTest, StatusIsTakenWhenBothAreSuspendedOrTheRemoteFinished) {
  const Json local = ManagerJob();  // suspended
  absl::StatusOr<JobStatusUpdate> both =
      DetermineStatusUpdate(JobKind(), local, Report(true, R"({"active": 0})"), absl::UnixEpoch());
  ASSERT_TRUE(both.ok());
  EXPECT_FALSE(both->deferred);
  EXPECT_EQ(both->status, Json::parse(R"({"active": 0})"));
  const std::string finished =
      R"({"succeeded": 2, "conditions": [{"type": "Complete", "status": "True"}]})";
  absl::StatusOr<JobStatusUpdate> done =
      DetermineStatusUpdate(JobKind(), local, Report(false, finished), absl::UnixEpoch());
  ASSERT_TRUE(done.ok());
  EXPECT_FALSE(done->deferred);
  EXPECT_EQ(done->status, Json::parse(finished));
}

TEST(MultiKueueJobTest, RunningRemoteOfASuspendedLocalJobIsDeferredWithASuspendedCondition) {
  const Json local = ManagerJob();  // suspended, status {"active": 0}
  absl::StatusOr<JobStatusUpdate> update =
      DetermineStatusUpdate(JobKind(), local, Report(false, R"({"active": 2, "startTime": "x"})"),
                            absl::FromUnixSeconds(1767225600));
  ASSERT_TRUE(update.ok());
  EXPECT_TRUE(update->deferred);
  EXPECT_EQ(update->status["active"], 0);
  EXPECT_FALSE(update->status.contains("startTime"));
  ASSERT_EQ(update->status["conditions"].size(), 1u);
  EXPECT_EQ(update->status["conditions"][0]["type"], "Suspended");
  EXPECT_EQ(update->status["conditions"][0]["status"], "True");
  EXPECT_EQ(update->status["conditions"][0]["reason"], "MultiKueueAdapter");
  EXPECT_EQ(update->status["conditions"][0]["lastTransitionTime"], "2026-01-01T00:00:00Z");
  // Once the condition is there, the local status stays as it is.
  Json with_condition = local;
  with_condition["status"] = update->status;
  absl::StatusOr<JobStatusUpdate> again = DetermineStatusUpdate(
      JobKind(), with_condition, Report(false, R"({"active": 2})"), absl::UnixEpoch());
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->deferred);
  EXPECT_EQ(again->status, update->status);
}

// Kueue's adapters for the other kinds copy the remote status whatever the local job's state.
TEST(MultiKueueJobTest, AJobSetTakesTheRemoteStatusAsItIs) {
  const JobKindTranslator& jobset = *FindJobKind("JobSet");
  const Json local = Json::parse(R"({
    "apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
    "metadata": {"name": "js", "namespace": "team"},
    "spec": {"managedBy": "kueue.x-k8s.io/multikueue", "suspend": true, "replicatedJobs": []},
    "status": {"replicatedJobsStatus": []}})");
  Json remote = local;
  remote["spec"]["suspend"] = false;
  remote["status"] = Json::parse(R"({"replicatedJobsStatus": [{"name": "w", "active": 1}]})");
  absl::StatusOr<JobStatusUpdate> update =
      DetermineStatusUpdate(jobset, local, JobStatusReport(jobset, remote), absl::UnixEpoch());
  ASSERT_TRUE(update.ok()) << update.status();
  EXPECT_FALSE(update->deferred);
  EXPECT_EQ(update->status, remote["status"]);
  EXPECT_FALSE(StoppedRemoteStatus(jobset, local, absl::UnixEpoch()).has_value());
}

TEST(MultiKueueJobTest, UnreadableReportIsRefused) {
  v1::WorkloadPayload report = Report(false, "{}");
  report.set_data("[1]");
  EXPECT_EQ(
      DetermineStatusUpdate(JobKind(), ManagerJob(), report, absl::UnixEpoch()).status().code(),
      absl::StatusCode::kInvalidArgument);
}

// The manager's job after an eviction: its remote job went with the copy and no report
// describes one, so a suspended job that still shows the old run is given a stopped status.
TEST(MultiKueueJobTest, ASuspendedJobStillShowingTheOldRunIsStopped) {
  Json local = ManagerJob();  // suspended
  local["status"] = Json::parse(R"({
    "active": 1, "ready": 1, "startTime": "2026-01-01T00:00:00Z", "succeeded": 0,
    "conditions": [{"type": "Suspended", "status": "True", "reason": "MultiKueueAdapter"}]})");
  std::optional<Json> stopped =
      StoppedRemoteStatus(JobKind(), local, absl::FromUnixSeconds(1767225600));
  ASSERT_TRUE(stopped.has_value());
  EXPECT_FALSE(stopped->contains("active"));
  EXPECT_FALSE(stopped->contains("startTime"));
  EXPECT_EQ((*stopped)["ready"], 0);
  EXPECT_EQ((*stopped)["succeeded"], 0);
  ASSERT_EQ((*stopped)["conditions"].size(), 1u);
  EXPECT_EQ((*stopped)["conditions"][0]["reason"], "JobSuspended");
  EXPECT_EQ((*stopped)["conditions"][0]["status"], "True");
  EXPECT_EQ((*stopped)["conditions"][0]["lastTransitionTime"], "2026-01-01T00:00:00Z");

  // Once stopped, nothing more to write.
  local["status"] = *stopped;
  EXPECT_FALSE(StoppedRemoteStatus(JobKind(), local, absl::UnixEpoch()).has_value());
  // Never started (status {"active": 0}), running, or finished: left alone.
  EXPECT_FALSE(StoppedRemoteStatus(JobKind(), ManagerJob(), absl::UnixEpoch()).has_value());
  Json running = ManagerJob();
  running["spec"]["suspend"] = false;
  running["status"] = Json::parse(R"({"active": 1})");
  EXPECT_FALSE(StoppedRemoteStatus(JobKind(), running, absl::UnixEpoch()).has_value());
  Json finished = ManagerJob();
  finished["status"] = Json::parse(R"({"active": 1, "succeeded": 1,
    "conditions": [{"type": "Complete", "status": "True"}]})");
  EXPECT_FALSE(StoppedRemoteStatus(JobKind(), finished, absl::UnixEpoch()).has_value());
}

TEST(MultiKueueJobTest, AnObjectMadeForAnEarlierCopyOfTheSameNameIsAnothersCopy) {
  v1::Workload copy;
  copy.mutable_metadata()->set_uid("copy-2");
  Json obj = {{"metadata", {{"name", "train"}}}};
  // Made before the annotation existed: taken to be the copy's.
  EXPECT_FALSE(MadeForAnotherCopy(obj, copy));
  obj["metadata"]["annotations"][std::string(kMultiKueueCopyUidAnnotation)] = "copy-2";
  EXPECT_FALSE(MadeForAnotherCopy(obj, copy));
  obj["metadata"]["annotations"][std::string(kMultiKueueCopyUidAnnotation)] = "copy-1";
  EXPECT_TRUE(MadeForAnotherCopy(obj, copy));
}

// A worker's LeaderWorkerSet records its groups' copies in group order: one whose list differs
// from the copies there now (a group's copy replaced) was made for other copies.
TEST(MultiKueueJobTest, ALeaderWorkerSetMadeForOtherCopiesIsToldApart) {
  const std::string annotation(kMultiKueueCopyUidAnnotation);
  Json wanted = {{"metadata", {{"name", "train"}}}};
  wanted["metadata"]["annotations"][annotation] = "copy-0,copy-1b";
  Json existing = {{"metadata", {{"name", "train"}}}};
  // Made before the annotation existed: taken to be the copies'.
  EXPECT_FALSE(MadeForOtherCopies(existing, wanted));
  existing["metadata"]["annotations"][annotation] = "copy-0,copy-1b";
  EXPECT_FALSE(MadeForOtherCopies(existing, wanted));
  existing["metadata"]["annotations"][annotation] = "copy-0,copy-1a";
  EXPECT_TRUE(MadeForOtherCopies(existing, wanted));
}

}  // namespace
}  // namespace tollgate::manifest
