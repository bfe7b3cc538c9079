#include "adapters/kube/job_controller.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/time/time.h"
#include "core/clock.h"
#include "services/manifest/admission_enactment.h"
#include "services/manifest/job_kinds.h"
#include "services/manifest/multikueue_job.h"
#include "services/manifest/prebuilt_workload.h"
#include "test/adapters/fakes/fake_admission_client.h"
#include "test/adapters/fakes/fake_kube_client.h"

namespace tollgate::kube {
namespace {

using ::testing::HasSubstr;

constexpr char kUid[] = "5e1f0000-aaaa-bbbb-cccc-000000000001";
// Kueue's name for the Job's workload (jobframework.GetWorkloadNameForOwnerWithGVK).
constexpr char kWorkload[] = "job-eval-3e3d2";

Json MakeJob(bool suspend = true) {
  Json job = Json::parse(R"({
    "metadata": {"name": "eval", "namespace": "team-a",
                 "labels": {"kueue.x-k8s.io/queue-name": "eval-queue"}},
    "spec": {"parallelism": 2,
             "template": {"spec": {"nodeSelector": {"team": "a"},
               "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}}})");
  job["metadata"]["uid"] = kUid;
  job["spec"]["suspend"] = suspend;
  return job;
}

v1::Admission GpuAdmission() {
  v1::Admission a;
  a.set_cluster_queue("team-a-cq");
  v1::PodSetAssignment* p = a.add_pod_set_assignments();
  p->set_name("main");
  p->set_count(2);
  (*p->mutable_flavors())["cpu"] = "a100";
  return a;
}

class JobControllerTest : public ::testing::Test {
 protected:
  JobControllerTest() : clock_(absl::FromUnixSeconds(1700000000)) {
    v1::Toleration t;
    t.set_key("nvidia.com/gpu");
    t.set_operator_("Exists");
    admission_.AddFlavor("a100", {{"accelerator", "a100"}}, {t});
  }

  JobController& Controller(JobController::Options options = {}) {
    controller_ = std::make_unique<JobController>(
        kube_, admission_, clock_,
        std::vector<const manifest::JobKindTranslator*>{&job_, &pytorch_}, options);
    return *controller_;
  }
  absl::Status Reconcile() {
    if (controller_ == nullptr) Controller();
    return controller_->Reconcile(ObjectKey{"jobs", "team-a", "eval"});
  }
  // The Job goes, as an informer would tell the controller.
  void DeleteJob() {
    const Json gone = kube_.Remove(manifest::JobResource(), "team-a", "eval");
    controller_->RecordDeletion(ObjectKey{"jobs", "team-a", "eval"},
                                manifest::GetString(gone, {"metadata", "uid"}));
  }
  Json Job() const { return kube_.Object(manifest::JobResource(), "team-a", "eval"); }
  std::string Status() const { return manifest::Annotation(Job(), kStatusAnnotation); }
  std::vector<std::string> EventReasons() const {
    std::vector<std::string> reasons;
    for (const Json& e : kube_.events()) reasons.push_back(manifest::GetString(e, {"reason"}));
    return reasons;
  }

  core::SimulatedClock clock_;
  FakeKubeClient kube_;
  client::FakeAdmissionClient admission_;
  const manifest::JobKindTranslator& job_ = *manifest::FindJobKind("Job");
  const manifest::JobKindTranslator& pytorch_ = *manifest::FindJobKind("PyTorchJob");
  std::unique_ptr<JobController> controller_;
};

TEST_F(JobControllerTest, SubmitsAndKeepsAPendingJobSuspended) {
  kube_.Put(manifest::JobResource(), MakeJob(/*suspend=*/false));
  ASSERT_TRUE(Reconcile().ok());
  std::optional<v1::Workload> wl = admission_.Find("team-a", kWorkload);
  ASSERT_TRUE(wl.has_value());
  EXPECT_EQ(wl->metadata().uid(), kUid);
  EXPECT_EQ(wl->spec().pod_sets(0).count(), 2);
  EXPECT_TRUE(job_.IsSuspended(Job()));
  EXPECT_EQ(Status(), "pending: Waiting in the fake queue");
  EXPECT_THAT(EventReasons(), ::testing::ElementsAre("Suspended"));

  // Level-triggered: nothing changed, so a second pass patches nothing.
  const int patches = kube_.patch_count();
  ASSERT_TRUE(Reconcile().ok());
  EXPECT_EQ(kube_.patch_count(), patches);
}

TEST_F(JobControllerTest, AdmissionInjectsFlavorAndUnsuspends) {
  kube_.Put(manifest::JobResource(), MakeJob());
  ASSERT_TRUE(Reconcile().ok());
  admission_.Admit("team-a", kWorkload, GpuAdmission());
  ASSERT_TRUE(Reconcile().ok());
  const Json job = Job();
  EXPECT_FALSE(job_.IsSuspended(job));
  EXPECT_EQ(job["spec"]["template"]["spec"]["nodeSelector"],
            Json::parse(R"({"team": "a", "accelerator": "a100"})"));
  EXPECT_EQ(job["spec"]["template"]["spec"]["tolerations"][0]["key"], "nvidia.com/gpu");
  EXPECT_EQ(Status(), "admitted: Admitted by ClusterQueue team-a-cq");
  EXPECT_EQ(manifest::Annotation(job, manifest::kAdmissionAnnotation),
            manifest::AdmissionFingerprint(GpuAdmission()));
  EXPECT_THAT(EventReasons(), ::testing::Contains("Admitted"));

  // The resubmission reads the original template, so Submit still sees the same spec.
  const int patches = kube_.patch_count();
  ASSERT_TRUE(Reconcile().ok());
  EXPECT_EQ(kube_.patch_count(), patches);
  EXPECT_EQ(admission_.Find("team-a", kWorkload)->status().state(), v1::WORKLOAD_STATE_ADMITTED);
}

TEST_F(JobControllerTest, ReportsPodsReadyOnceAndItsLoss) {
  kube_.Put(manifest::JobResource(), MakeJob());
  ASSERT_TRUE(Reconcile().ok());
  admission_.Admit("team-a", kWorkload, GpuAdmission());
  ASSERT_TRUE(Reconcile().ok());
  kube_.SetStatus(manifest::JobResource(), "team-a", "eval", {{"active", 2}, {"ready", 1}});
  ASSERT_TRUE(Reconcile().ok());
  EXPECT_EQ(admission_.Count("ReportPodsReady"), 0);
  kube_.SetStatus(manifest::JobResource(), "team-a", "eval", {{"active", 2}, {"ready", 2}});
  ASSERT_TRUE(Reconcile().ok());
  ASSERT_TRUE(Reconcile().ok());
  EXPECT_EQ(admission_.Count("ReportPodsReady"), 1);
  EXPECT_TRUE(admission_.Find("team-a", kWorkload)->status().pods_ready());

  // A pod fails after the job ran: reported once as not ready (recoveryTimeout), then ready again
  // once its replacement runs.
  kube_.SetStatus(manifest::JobResource(), "team-a", "eval",
                  {{"active", 2}, {"ready", 1}, {"failed", 1}});
  ASSERT_TRUE(Reconcile().ok());
  ASSERT_TRUE(Reconcile().ok());
  EXPECT_EQ(admission_.Count("ReportPodsReady"), 2);
  EXPECT_FALSE(admission_.Find("team-a", kWorkload)->status().pods_ready());
  kube_.SetStatus(manifest::JobResource(), "team-a", "eval",
                  {{"active", 2}, {"ready", 2}, {"failed", 1}});
  ASSERT_TRUE(Reconcile().ok());
  EXPECT_EQ(admission_.Count("ReportPodsReady"), 3);
  EXPECT_TRUE(admission_.Find("team-a", kWorkload)->status().pods_ready());
}

TEST_F(JobControllerTest, ForwardsNewerCheckpointAnnotationsOnly) {
  kube_.Put(manifest::JobResource(), MakeJob());
  ASSERT_TRUE(Reconcile().ok());
  admission_.Admit("team-a", kWorkload, GpuAdmission());
  ASSERT_TRUE(Reconcile().ok());
  auto annotate = [&](const std::string& value) {
    Json job = Job();
    manifest::SetAnnotation(job, kCheckpointAnnotation, value);
    kube_.Put(manifest::JobResource(), job);
  };

  annotate("2026-11-22T10:00:00Z");
  ASSERT_TRUE(Reconcile().ok());
  EXPECT_EQ(admission_.Count("ReportCheckpoint"), 1);
  EXPECT_EQ(admission_.Find("team-a", kWorkload)->status().last_checkpoint_time().seconds(),
            absl::ToUnixSeconds(
                absl::FromCivil(absl::CivilSecond(2026, 11, 22, 10, 0, 0), absl::UTCTimeZone())));
  // Already known, or older: not sent again.
  ASSERT_TRUE(Reconcile().ok());
  annotate("2026-11-22T09:00:00Z");
  ASSERT_TRUE(Reconcile().ok());
  EXPECT_EQ(admission_.Count("ReportCheckpoint"), 1);
  // Unreadable: ignored without failing the reconcile.
  annotate("yesterday");
  ASSERT_TRUE(Reconcile().ok());
  EXPECT_EQ(admission_.Count("ReportCheckpoint"), 1);
  annotate("2026-11-22T10:30:00.5+01:00");
  ASSERT_TRUE(Reconcile().ok());
  EXPECT_EQ(admission_.Count("ReportCheckpoint"), 1);  // 09:30:00.5 UTC is older
  annotate("2026-11-22T10:30:00.5Z");
  ASSERT_TRUE(Reconcile().ok());
  EXPECT_EQ(admission_.Count("ReportCheckpoint"), 2);
  EXPECT_EQ(admission_.Find("team-a", kWorkload)->status().last_checkpoint_time().nanos(),
            500000000);
}

TEST_F(JobControllerTest, EvictionSuspendsRestoresAndReportsStoppedOncePodsAreGone) {
  const Json original = kube_.Put(manifest::JobResource(), MakeJob());
  ASSERT_TRUE(Reconcile().ok());
  admission_.Admit("team-a", kWorkload, GpuAdmission());
  ASSERT_TRUE(Reconcile().ok());
  kube_.SetStatus(manifest::JobResource(), "team-a", "eval", {{"active", 2}, {"ready", 2}});
  admission_.Evict("team-a", kWorkload, "Preempted to accommodate a higher priority workload");

  ASSERT_TRUE(Reconcile().ok());
  Json job = Job();
  EXPECT_TRUE(job_.IsSuspended(job));
  EXPECT_EQ(job["spec"]["template"], original["spec"]["template"]);
  EXPECT_EQ(manifest::Annotation(job, manifest::kOriginalTemplatesAnnotation), "");
  EXPECT_THAT(Status(), HasSubstr("preempted: Preempted to accommodate"));
  // Pods still running: quota stays held.
  EXPECT_EQ(admission_.Count("ReportStopped"), 0);

  kube_.SetStatus(manifest::JobResource(), "team-a", "eval", {{"active", 0}, {"ready", 0}});
  ASSERT_TRUE(Reconcile().ok());
  EXPECT_EQ(admission_.Count("ReportStopped"), 1);
  EXPECT_EQ(admission_.Find("team-a", kWorkload)->status().state(), v1::WORKLOAD_STATE_PENDING);
  ASSERT_TRUE(Reconcile().ok());
  EXPECT_THAT(Status(), HasSubstr("pending"));

  // Admitted again later: resumes with the flavor's selector.
  admission_.Admit("team-a", kWorkload, GpuAdmission());
  ASSERT_TRUE(Reconcile().ok());
  EXPECT_FALSE(job_.IsSuspended(Job()));
  EXPECT_EQ(Job()["spec"]["template"]["spec"]["nodeSelector"]["accelerator"], "a100");
}

TEST_F(JobControllerTest, CompletionFinishesTheWorkload) {
  kube_.Put(manifest::JobResource(), MakeJob());
  ASSERT_TRUE(Reconcile().ok());
  admission_.Admit("team-a", kWorkload, GpuAdmission());
  ASSERT_TRUE(Reconcile().ok());
  kube_.SetStatus(manifest::JobResource(), "team-a", "eval", Json::parse(R"({"succeeded": 2,
                                  "conditions": [{"type": "Complete", "status": "True"}]})"));
  ASSERT_TRUE(Reconcile().ok());
  EXPECT_EQ(admission_.Find("team-a", kWorkload)->status().state(), v1::WORKLOAD_STATE_FINISHED);
  EXPECT_EQ(Status(), "finished: Job finished successfully");
  ASSERT_TRUE(Reconcile().ok());
  EXPECT_EQ(admission_.Count("Finish"), 1);
}

TEST_F(JobControllerTest, FinishedBeforeAdmissionLeavesTheQueue) {
  kube_.Put(manifest::JobResource(), MakeJob());
  ASSERT_TRUE(Reconcile().ok());
  kube_.SetStatus(manifest::JobResource(), "team-a", "eval",
                  Json::parse(R"({"conditions": [{"type": "Failed", "status": "True"}]})"));
  ASSERT_TRUE(Reconcile().ok());
  EXPECT_FALSE(admission_.Find("team-a", kWorkload).has_value());
  EXPECT_EQ(admission_.Count("Finish"), 0);
}

TEST_F(JobControllerTest, DeletedObjectDeletesItsWorkload) {
  kube_.Put(manifest::JobResource(), MakeJob());
  ASSERT_TRUE(Reconcile().ok());
  DeleteJob();
  ASSERT_TRUE(Reconcile().ok());
  EXPECT_FALSE(admission_.Find("team-a", kWorkload).has_value());
}

TEST_F(JobControllerTest, RecreatedObjectGetsANewWorkload) {
  kube_.Put(manifest::JobResource(), MakeJob());
  ASSERT_TRUE(Reconcile().ok());
  kube_.Remove(manifest::JobResource(), "team-a", "eval");
  controller_->RecordDeletion(ObjectKey{"jobs", "team-a", "eval"}, kUid);
  Json again = MakeJob();
  again["metadata"]["uid"] = "77770000-aaaa-bbbb-cccc-000000000002";
  kube_.Put(manifest::JobResource(), again);
  ASSERT_TRUE(Reconcile().ok());
  EXPECT_FALSE(admission_.Find("team-a", kWorkload).has_value());
  EXPECT_TRUE(admission_.Find("team-a", "job-eval-b30aa").has_value());
}

TEST_F(JobControllerTest, ConflictsAreRetriedWithAFreshRead) {
  kube_.Put(manifest::JobResource(), MakeJob(/*suspend=*/false));
  kube_.InjectConflicts(2);
  ASSERT_TRUE(Reconcile().ok());
  EXPECT_TRUE(job_.IsSuspended(Job()));
  EXPECT_EQ(kube_.patch_count(), 3);
}

TEST_F(JobControllerTest, EndlessConflictsGiveUpWithAborted) {
  kube_.Put(manifest::JobResource(), MakeJob(/*suspend=*/false));
  kube_.InjectConflicts(100);
  JobController::Options options;
  options.max_conflict_retries = 2;
  Controller(options);
  EXPECT_EQ(Reconcile().code(), absl::StatusCode::kAborted);
}

TEST_F(JobControllerTest, RejectedWorkloadKeepsTheJobSuspendedAndSaysWhy) {
  kube_.Put(manifest::JobResource(), MakeJob(/*suspend=*/false));
  admission_.FailSubmits(absl::InvalidArgumentError("priority class \"nope\" not found"));
  const absl::Status status = Reconcile();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(job_.IsSuspended(Job()));
  EXPECT_EQ(Status(), "invalid: priority class \"nope\" not found");
  EXPECT_THAT(EventReasons(), ::testing::Contains("InvalidWorkload"));
}

TEST_F(JobControllerTest, UnavailableTollgateChangesNothing) {
  kube_.Put(manifest::JobResource(), MakeJob(/*suspend=*/false));
  admission_.FailSubmits(absl::UnavailableError("connection refused"));
  EXPECT_EQ(Reconcile().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(kube_.patch_count(), 0);
}

TEST_F(JobControllerTest, SpecChangeWhilePendingResubmits) {
  kube_.Put(manifest::JobResource(), MakeJob());
  ASSERT_TRUE(Reconcile().ok());
  Json job = Job();
  job["spec"]["parallelism"] = 5;
  kube_.Put(manifest::JobResource(), job);
  ASSERT_TRUE(Reconcile().ok());
  EXPECT_EQ(admission_.Find("team-a", kWorkload)->spec().pod_sets(0).count(), 5);
  EXPECT_EQ(admission_.Count("DeleteWorkload"), 1);
}

// Kueue's PropagateAdmissionGatedByAnnotation and UpdateAdmissionGatedBy: the job's admission
// gates are its workload's, and their removal on the job is their removal on the workload.
TEST_F(JobControllerTest, AdmissionGatesFollowTheJobAndOnlyEverLeave) {
  constexpr char kGatedBy[] = "kueue.x-k8s.io/admission-gated-by";
  Json job = MakeJob();
  job["metadata"]["annotations"][kGatedBy] = "example.com/gate1,example.com/gate2";
  kube_.Put(manifest::JobResource(), job);
  ASSERT_TRUE(Reconcile().ok());
  auto gates = [&]() -> std::string {
    const std::optional<v1::Workload> wl = admission_.Find("team-a", kWorkload);
    if (!wl.has_value()) return "<no workload>";
    auto it = wl->metadata().annotations().find(kGatedBy);
    return it == wl->metadata().annotations().end() ? "<none>" : it->second;
  };
  EXPECT_EQ(gates(), "example.com/gate1,example.com/gate2");
  // Nothing changed: nothing sent.
  ASSERT_TRUE(Reconcile().ok());
  EXPECT_EQ(admission_.Count("SetAdmissionGates"), 0);

  job = Job();
  job["metadata"]["annotations"][kGatedBy] = "example.com/gate2";
  kube_.Put(manifest::JobResource(), job);
  ASSERT_TRUE(Reconcile().ok());
  EXPECT_EQ(gates(), "example.com/gate2");
  EXPECT_EQ(admission_.Count("SetAdmissionGates"), 1);

  // A gate the workload does not have is not sent (the service would refuse it).
  job = Job();
  job["metadata"]["annotations"][kGatedBy] = "example.com/gate2,example.com/gate3";
  kube_.Put(manifest::JobResource(), job);
  ASSERT_TRUE(Reconcile().ok());
  EXPECT_EQ(gates(), "example.com/gate2");
  EXPECT_EQ(admission_.Count("SetAdmissionGates"), 1);

  job = Job();
  job["metadata"]["annotations"].erase(kGatedBy);
  kube_.Put(manifest::JobResource(), job);
  ASSERT_TRUE(Reconcile().ok());
  EXPECT_EQ(gates(), "<none>");
  EXPECT_EQ(admission_.Count("SetAdmissionGates"), 2);
  EXPECT_EQ(admission_.Count("DeleteWorkload"), 0);
}

// Kueue's AdmissionGatedBy gate off: prepareWorkload does not copy the job's gates and
// UpdateAdmissionGatedBy returns at once, so the workload never carries them.
TEST_F(JobControllerTest, WithAdmissionGatedByOffTheJobsGatesAreNotCopied) {
  constexpr char kGatedBy[] = "kueue.x-k8s.io/admission-gated-by";
  Json job = MakeJob();
  job["metadata"]["annotations"][kGatedBy] = "example.com/gate1";
  kube_.Put(manifest::JobResource(), job);
  JobController::Options options;
  options.admission_gated_by = false;
  Controller(options);
  ASSERT_TRUE(Reconcile().ok());
  ASSERT_TRUE(admission_.Find("team-a", kWorkload).has_value());
  EXPECT_EQ(admission_.Find("team-a", kWorkload)->metadata().annotations().count(kGatedBy), 0u);
  job = Job();
  job["metadata"]["annotations"].erase(kGatedBy);
  kube_.Put(manifest::JobResource(), job);
  ASSERT_TRUE(Reconcile().ok());
  EXPECT_EQ(admission_.Count("SetAdmissionGates"), 0);
  EXPECT_EQ(admission_.Count("DeleteWorkload"), 0);
}

TEST_F(JobControllerTest, UnlabeledJobsNeedTheFlagAndADefaultQueue) {
  Json job = MakeJob();
  job["metadata"].erase("labels");
  kube_.Put(manifest::JobResource(), job);
  ASSERT_TRUE(Reconcile().ok());
  EXPECT_EQ(admission_.Count("Submit"), 0);

  JobController::Options options;
  options.manage_jobs_without_queue_name = true;
  Controller(options);
  ASSERT_TRUE(Reconcile().ok());
  EXPECT_EQ(admission_.Count("Submit"), 0);
  admission_.AddLocalQueue("team-a", "default");
  ASSERT_TRUE(Reconcile().ok());
  ASSERT_TRUE(admission_.Find("team-a", kWorkload).has_value());
  EXPECT_EQ(admission_.Find("team-a", kWorkload)->spec().queue_name(), "default");
}

// Kueue's managedJobsNamespaceSelector (from tollgate-kube --config): unlabelled jobs are
// managed only in namespaces whose labels match; kubernetes.io/metadata.name is the name.
TEST_F(JobControllerTest, UnlabeledJobsOnlyInNamespacesTheSelectorManages) {
  Json job = MakeJob();
  job["metadata"].erase("labels");
  kube_.Put(manifest::JobResource(), job);
  admission_.AddLocalQueue("team-a", "default");
  kube_.Put(manifest::NamespaceResource(),
            Json::parse(R"({"metadata": {"name": "team-a", "labels": {"tier": "batch"}}})"));

  JobController::Options options;
  options.manage_jobs_without_queue_name = true;
  core::LabelSelector excludes;
  excludes.match_expressions.push_back(
      core::LabelSelectorRequirement{"kubernetes.io/metadata.name", "NotIn", {"team-a"}});
  options.managed_jobs_namespace_selector = excludes;
  Controller(options);
  ASSERT_TRUE(Reconcile().ok());
  EXPECT_EQ(admission_.Count("Submit"), 0);

  core::LabelSelector batch;
  batch.match_labels["tier"] = "batch";
  options.managed_jobs_namespace_selector = batch;
  Controller(options);
  ASSERT_TRUE(Reconcile().ok());
  ASSERT_TRUE(admission_.Find("team-a", kWorkload).has_value());
  EXPECT_EQ(admission_.Find("team-a", kWorkload)->spec().queue_name(), "default");
}

// Kueue's WorkloadPriorityClassDefaulting: a job that names no WorkloadPriorityClass is labelled
// with the class "default" when it exists, and its workload takes that class, not the pods'
// PriorityClass.
TEST_F(JobControllerTest, AJobNamingNoPriorityClassTakesTheDefaultWorkloadPriorityClass) {
  admission_.AddWorkloadPriorityClass("default", 1000);
  Json job = MakeJob();
  job["spec"]["template"]["spec"]["priorityClassName"] = "pod-high";
  kube_.Put(manifest::JobResource(), job);
  ASSERT_TRUE(Reconcile().ok());
  EXPECT_EQ(Job()["metadata"]["labels"].value("kueue.x-k8s.io/priority-class", ""), "default");
  ASSERT_TRUE(Reconcile().ok());
  ASSERT_TRUE(admission_.Find("team-a", kWorkload).has_value());
  EXPECT_EQ(admission_.Find("team-a", kWorkload)->spec().priority_class_name(), "default");
}

TEST_F(JobControllerTest, WithoutADefaultWorkloadPriorityClassThePodsPriorityClassCounts) {
  Json job = MakeJob();
  job["spec"]["template"]["spec"]["priorityClassName"] = "pod-high";
  kube_.Put(manifest::JobResource(), job);
  ASSERT_TRUE(Reconcile().ok());
  EXPECT_FALSE(Job()["metadata"]["labels"].contains("kueue.x-k8s.io/priority-class"));
  ASSERT_TRUE(admission_.Find("team-a", kWorkload).has_value());
  EXPECT_EQ(admission_.Find("team-a", kWorkload)->spec().priority_class_name(), "pod-high");
}

TEST_F(JobControllerTest, AJobNamingAPriorityClassKeepsIt) {
  admission_.AddWorkloadPriorityClass("default", 1000);
  admission_.AddWorkloadPriorityClass("urgent", 5000);
  Json job = MakeJob();
  job["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] = "urgent";
  kube_.Put(manifest::JobResource(), job);
  ASSERT_TRUE(Reconcile().ok());
  ASSERT_TRUE(admission_.Find("team-a", kWorkload).has_value());
  EXPECT_EQ(admission_.Find("team-a", kWorkload)->spec().priority_class_name(), "urgent");
}

// Kueue labels at creation only: a job queued before the class existed keeps its priority.
TEST_F(JobControllerTest, AJobQueuedBeforeTheDefaultClassExistedIsNotRelabelled) {
  kube_.Put(manifest::JobResource(), MakeJob());
  ASSERT_TRUE(Reconcile().ok());
  ASSERT_TRUE(admission_.Find("team-a", kWorkload).has_value());
  admission_.AddWorkloadPriorityClass("default", 1000);
  ASSERT_TRUE(Reconcile().ok());
  EXPECT_FALSE(Job()["metadata"]["labels"].contains("kueue.x-k8s.io/priority-class"));
  EXPECT_EQ(admission_.Find("team-a", kWorkload)->spec().priority_class_name(), "");
  EXPECT_EQ(admission_.Count("DeleteWorkload"), 0);
}

TEST_F(JobControllerTest, RunningWithAStaleAdmissionIsRestarted) {
  kube_.Put(manifest::JobResource(), MakeJob());
  ASSERT_TRUE(Reconcile().ok());
  admission_.Admit("team-a", kWorkload, GpuAdmission());
  ASSERT_TRUE(Reconcile().ok());
  // Tollgate re-admitted it elsewhere while the adapter was away.
  admission_.AddFlavor("h100", {{"accelerator", "h100"}});
  v1::Admission other = GpuAdmission();
  (*other.mutable_pod_set_assignments(0)->mutable_flavors())["cpu"] = "h100";
  admission_.Admit("team-a", kWorkload, other);
  ASSERT_TRUE(Reconcile().ok());
  EXPECT_TRUE(job_.IsSuspended(Job()));
  ASSERT_TRUE(Reconcile().ok());
  EXPECT_FALSE(job_.IsSuspended(Job()));
  EXPECT_EQ(Job()["spec"]["template"]["spec"]["nodeSelector"]["accelerator"], "h100");
}

TEST_F(JobControllerTest, PyTorchJobSuspendsThroughRunPolicy) {
  Json job = Json::parse(R"({
    "metadata": {"name": "ft", "namespace": "team-a", "uid": "99990000-0000-0000-0000-000000000009",
                 "labels": {"kueue.x-k8s.io/queue-name": "eval-queue"}},
    "spec": {"pytorchReplicaSpecs": {
      "Master": {"replicas": 1, "template": {"spec": {"containers": [{"name": "p"}]}}},
      "Worker": {"replicas": 16, "template": {"spec": {"containers": [{"name": "p"}]}}}}}})");
  kube_.Put(manifest::PyTorchJobResource(), job);
  Controller();
  ASSERT_TRUE(controller_->Reconcile(ObjectKey{"pytorchjobs", "team-a", "ft"}).ok());
  const Json stored = kube_.Object(manifest::PyTorchJobResource(), "team-a", "ft");
  EXPECT_EQ(stored["spec"]["runPolicy"]["suspend"], true);
  EXPECT_EQ(admission_.Find("team-a", "pytorchjob-ft-dc01d")->spec().pod_sets(1).count(), 16);
}

TEST_F(JobControllerTest, CollectsOnlyItsOwnOrphans) {
  kube_.Put(manifest::JobResource(), MakeJob());
  ASSERT_TRUE(Reconcile().ok());
  v1::SubmitRequest foreign;
  foreign.mutable_workload()->mutable_metadata()->set_namespace_("team-a");
  foreign.mutable_workload()->mutable_metadata()->set_name("job-hand-made");
  ASSERT_TRUE(admission_.Submit(foreign).ok());

  absl::StatusOr<int> deleted = controller_->CollectOrphans([] {
    return JobController::UidsByResource{{"jobs", {kUid}}};
  });
  ASSERT_TRUE(deleted.ok());
  EXPECT_EQ(*deleted, 0);
  deleted = controller_->CollectOrphans([] { return JobController::UidsByResource{{"jobs", {}}}; });
  ASSERT_TRUE(deleted.ok());
  EXPECT_EQ(*deleted, 1);
  EXPECT_FALSE(admission_.Find("team-a", kWorkload).has_value());
  EXPECT_TRUE(admission_.Find("team-a", "job-hand-made").has_value());
}

// Kueue's prebuilt workload: a workload made before its job (by a MultiKueue manager, or a
// platform that plans ahead) that the job names instead of getting its own.
class PrebuiltWorkloadTest : public JobControllerTest {
 protected:
  static constexpr char kPrebuilt[] = "planned-eval";

  static Json PrebuiltJob() {
    Json job = MakeJob(/*suspend=*/false);
    job["metadata"]["labels"][manifest::kPrebuiltWorkloadKey] = kPrebuilt;
    return job;
  }
  // The workload someone made for the job ahead of it: its pod sets, another queue, no owner.
  void MakePrebuilt() {
    Json as_written = MakeJob();
    as_written["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] =
        "1000m";
    absl::StatusOr<v1::Workload> wl = manifest::TranslateWorkload(job_, as_written, "planned-queue",
                                                                  Controller().lookup(), kPrebuilt);
    ASSERT_TRUE(wl.ok()) << wl.status();
    wl->mutable_metadata()->clear_uid();
    wl->mutable_metadata()->clear_labels();
    v1::SubmitRequest request;
    *request.mutable_workload() = *wl;
    ASSERT_TRUE(admission_.Submit(request).ok());
  }
};

TEST_F(PrebuiltWorkloadTest, TheJobWaitsSuspendedForItsWorkloadAndIsBoundToIt) {
  kube_.Put(manifest::JobResource(), PrebuiltJob());
  Controller();
  const absl::Status waiting = Reconcile();
  EXPECT_EQ(waiting.code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(job_.IsSuspended(Job()));
  EXPECT_EQ(Status(),
            "pending: Waiting for the prebuilt workload planned-eval named by "
            "kueue.x-k8s.io/prebuilt-workload-name");
  EXPECT_EQ(admission_.Count("Submit"), 0);

  MakePrebuilt();
  ASSERT_TRUE(Reconcile().ok());
  std::optional<v1::Workload> wl = admission_.Find("team-a", kPrebuilt);
  ASSERT_TRUE(wl.has_value());
  ASSERT_EQ(wl->metadata().owner_references_size(), 1);
  EXPECT_EQ(wl->metadata().owner_references(0).uid(), kUid);
  EXPECT_EQ(wl->metadata().owner_references(0).kind(), "Job");
  EXPECT_TRUE(wl->metadata().owner_references(0).controller());
  EXPECT_FALSE(admission_.Find("team-a", kWorkload).has_value());
  EXPECT_EQ(wl->spec().queue_name(), "planned-queue");

  admission_.Admit("team-a", kPrebuilt, GpuAdmission());
  ASSERT_TRUE(Reconcile().ok());
  EXPECT_FALSE(job_.IsSuspended(Job()));
  EXPECT_EQ(Status(), "admitted: Admitted by ClusterQueue team-a-cq");
  // Bound once: the next passes find it controlled by this job.
  EXPECT_EQ(admission_.Count("ReportJobState"), 1);
}

TEST_F(PrebuiltWorkloadTest, AJobThatNoLongerMatchesFinishesItsWorkloadAsOutOfSync) {
  MakePrebuilt();
  kube_.Put(manifest::JobResource(), PrebuiltJob());
  ASSERT_TRUE(Reconcile().ok());
  Json job = Job();
  job["spec"]["parallelism"] = 5;
  kube_.Put(manifest::JobResource(), job);

  EXPECT_EQ(Reconcile().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(admission_.Find("team-a", kPrebuilt)->status().state(), v1::WORKLOAD_STATE_FINISHED);
  EXPECT_TRUE(job_.IsSuspended(Job()));
  EXPECT_EQ(Status(), "invalid: The prebuilt workload is out of sync with its user job");
  // Finished once; a retry does not report again.
  EXPECT_EQ(Reconcile().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(admission_.Count("ReportJobState"), 2);
}

// Kueue's clearMinCountsIfFeatureDisabled: with PartialAdmission off, the job's
// job-min-parallelism is dropped before its pod sets are compared with the prebuilt workload's
// (which tollgated, as Kueue's webhook, stored without a minCount), so the two still match.
TEST_F(PrebuiltWorkloadTest, WithoutPartialAdmissionAMinParallelismDoesNotPutItOutOfSync) {
  MakePrebuilt();
  Json job = PrebuiltJob();
  job["metadata"]["annotations"][std::string(manifest::kJobMinParallelismAnnotation)] = "1";
  kube_.Put(manifest::JobResource(), job);
  JobController::Options options;
  options.partial_admission = false;
  Controller(options);
  ASSERT_TRUE(Reconcile().ok());
  ASSERT_EQ(admission_.Find("team-a", kPrebuilt)->metadata().owner_references_size(), 1);
  EXPECT_NE(admission_.Find("team-a", kPrebuilt)->status().state(), v1::WORKLOAD_STATE_FINISHED);

  // With the gate on the minCount counts, and the workload no longer matches its job.
  Controller();
  EXPECT_EQ(Reconcile().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(Status(), "invalid: The prebuilt workload is out of sync with its user job");
}

TEST_F(PrebuiltWorkloadTest, AWorkloadAnotherObjectControlsIsLeftAlone) {
  MakePrebuilt();
  v1::ReportJobStateRequest bind;
  bind.mutable_workload()->set_namespace_("team-a");
  bind.mutable_workload()->set_name(kPrebuilt);
  bind.mutable_bind_owner()->set_api_version("batch/v1");
  bind.mutable_bind_owner()->set_kind("Job");
  bind.mutable_bind_owner()->set_name("other");
  bind.mutable_bind_owner()->set_uid("99990000-aaaa-bbbb-cccc-000000000009");
  bind.mutable_bind_owner()->set_controller(true);
  ASSERT_TRUE(admission_.ReportJobState(bind).ok());
  kube_.Put(manifest::JobResource(), PrebuiltJob());

  EXPECT_EQ(Reconcile().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(job_.IsSuspended(Job()));
  EXPECT_THAT(Status(), HasSubstr("is controlled by Job other"));
  EXPECT_EQ(admission_.Find("team-a", kPrebuilt)->metadata().owner_references_size(), 1);
}

TEST_F(PrebuiltWorkloadTest, TheBoundWorkloadGoesWithItsJob) {
  MakePrebuilt();
  kube_.Put(manifest::JobResource(), PrebuiltJob());
  ASSERT_TRUE(Reconcile().ok());
  DeleteJob();
  ASSERT_TRUE(Reconcile().ok());
  EXPECT_FALSE(admission_.Find("team-a", kPrebuilt).has_value());
}

TEST_F(PrebuiltWorkloadTest, OrphanCollectionRemovesAWorkloadWhoseOwnerIsGone) {
  MakePrebuilt();
  kube_.Put(manifest::JobResource(), PrebuiltJob());
  ASSERT_TRUE(Reconcile().ok());
  absl::StatusOr<int> deleted = controller_->CollectOrphans([] {
    return JobController::UidsByResource{{"jobs", {kUid}}};
  });
  ASSERT_TRUE(deleted.ok());
  EXPECT_EQ(*deleted, 0);
  deleted = controller_->CollectOrphans([] { return JobController::UidsByResource{{"jobs", {}}}; });
  ASSERT_TRUE(deleted.ok());
  EXPECT_EQ(*deleted, 1);
  EXPECT_FALSE(admission_.Find("team-a", kPrebuilt).has_value());
}

// A MultiKueue worker (docs/multicluster.md, "The job itself"): the job the winning copy
// carries, and what happens to it when the manager replaces the copy by one of the same name.
class MultiKueueCopyJobTest : public JobControllerTest {
 protected:
  static constexpr char kCopy[] = "eval-copy";

  void SubmitCopy(const std::string& uid, bool winner) {
    Json written = MakeJob();
    written["spec"]["managedBy"] = std::string(manifest::kMultiKueueManagedBy);
    absl::StatusOr<v1::WorkloadPayload> payload = manifest::JobManifestPayload(job_, written);
    ASSERT_TRUE(payload.ok()) << payload.status();
    // The manager's copy: the job's pod sets, its manifest, the origin label.
    absl::StatusOr<v1::Workload> translated =
        manifest::TranslateWorkload(job_, written, "eval-queue", controller_->lookup(), kCopy);
    ASSERT_TRUE(translated.ok()) << translated.status();
    v1::SubmitRequest request;
    v1::Workload* copy = request.mutable_workload();
    *copy = *std::move(translated);
    copy->mutable_metadata()->set_uid(uid);
    copy->mutable_metadata()->clear_labels();
    (*copy->mutable_metadata()->mutable_labels())[std::string(manifest::kMultiKueueOriginLabel)] =
        "manager";
    *copy->mutable_spec()->mutable_payload() = *std::move(payload);
    copy->mutable_status()->set_multi_kueue_winner(winner);
    ASSERT_TRUE(admission_.Submit(request).ok());
  }
  void DeleteCopy() {
    v1::DeleteWorkloadRequest request;
    request.mutable_workload()->set_namespace_("team-a");
    request.mutable_workload()->set_name(kCopy);
    ASSERT_TRUE(admission_.DeleteWorkload(request).ok());
  }
  absl::Status ReconcileCopy() {
    return controller_->Reconcile(ObjectKey{std::string(kMultiKueueCopyResource), "team-a", kCopy});
  }
  bool JobExists() { return kube_.Get(manifest::JobResource(), "team-a", "eval").ok(); }
};

TEST_F(MultiKueueCopyJobTest, TheWinningCopysJobNamesTheCopyItWasCreatedFor) {
  Controller();
  SubmitCopy("copy-1", /*winner=*/true);
  admission_.Admit("team-a", kCopy, GpuAdmission());
  ASSERT_TRUE(ReconcileCopy().ok());
  ASSERT_TRUE(JobExists());
  EXPECT_EQ(manifest::PrebuiltWorkloadName(Job()), kCopy);
  EXPECT_EQ(manifest::Annotation(Job(), manifest::kMultiKueueCopyUidAnnotation), "copy-1");
  EXPECT_TRUE(job_.IsSuspended(Job()));
}

TEST_F(MultiKueueCopyJobTest, TheJobOfAReplacedCopyGoesInsteadOfBindingToTheNewCopy) {
  Controller();
  SubmitCopy("copy-1", /*winner=*/true);
  admission_.Admit("team-a", kCopy, GpuAdmission());
  ASSERT_TRUE(ReconcileCopy().ok());
  const absl::Status bound = Reconcile();
  ASSERT_TRUE(bound.ok()) << bound;
  ASSERT_FALSE(job_.IsSuspended(Job()));
  // The manager re-dispatches: the copy is replaced by a new one of the same name before this
  // adapter saw the old one go. The new copy has not won; the old job must not run for it.
  DeleteCopy();
  SubmitCopy("copy-2", /*winner=*/false);
  ASSERT_TRUE(Reconcile().ok());
  EXPECT_FALSE(JobExists());
  EXPECT_EQ(admission_.Find("team-a", kCopy)->metadata().owner_references_size(), 0);
}

TEST_F(MultiKueueCopyJobTest, ANewWinningCopyOfTheSameNameGetsAJobOfItsOwn) {
  Controller();
  SubmitCopy("copy-1", /*winner=*/true);
  admission_.Admit("team-a", kCopy, GpuAdmission());
  ASSERT_TRUE(ReconcileCopy().ok());
  DeleteCopy();
  SubmitCopy("copy-2", /*winner=*/true);
  admission_.Admit("team-a", kCopy, GpuAdmission());
  // The old copy's job goes first; the retry creates the new copy's.
  EXPECT_EQ(ReconcileCopy().code(), absl::StatusCode::kUnavailable);
  EXPECT_FALSE(JobExists());
  ASSERT_TRUE(ReconcileCopy().ok());
  ASSERT_TRUE(JobExists());
  EXPECT_EQ(manifest::Annotation(Job(), manifest::kMultiKueueCopyUidAnnotation), "copy-2");
}

TEST_F(JobControllerTest, NamespacesAreMirroredWhenTheirLabelsChange) {
  kube_.Put(manifest::NamespaceResource(),
            Json::parse(R"({"metadata": {"name": "team-a", "labels": {"tier": "eval"}}})"));
  Controller();
  const ObjectKey key{"namespaces", "", "team-a"};
  ASSERT_TRUE(controller_->Reconcile(key).ok());
  ASSERT_TRUE(controller_->Reconcile(key).ok());
  ASSERT_EQ(admission_.applied_namespaces().size(), 1u);
  EXPECT_EQ(admission_.applied_namespaces()[0].metadata().labels().at("tier"), "eval");
  kube_.Remove(manifest::NamespaceResource(), "", "team-a");
  ASSERT_TRUE(controller_->Reconcile(key).ok());
  EXPECT_EQ(admission_.Count("DeleteObject"), 1);
}

// --- The kinds table (docs/job-kinds.md) ---

// A JobSet with a queue label and the Job its controller created for it.
Json MakeJobSet() {
  return Json::parse(R"({
    "apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
    "metadata": {"name": "train", "namespace": "team-a", "uid": "a1110000-0000-0000-0000-000000000001",
                 "labels": {"kueue.x-k8s.io/queue-name": "eval-queue"}},
    "spec": {"suspend": true, "replicatedJobs": [
      {"name": "workers", "replicas": 2, "template": {"spec": {"parallelism": 2, "completions": 2,
        "template": {"spec": {"containers": [{"name": "w", "resources": {"requests": {"cpu": "1"}}}]}}}}}]}})");
}

Json OwnedJob(const std::string& owner_kind, const std::string& api_version,
              const std::string& owner_name, const std::string& owner_uid) {
  Json job = MakeJob(/*suspend=*/false);
  job["metadata"]["ownerReferences"] = Json::array({{{"apiVersion", api_version},
                                                     {"kind", owner_kind},
                                                     {"name", owner_name},
                                                     {"uid", owner_uid},
                                                     {"controller", true}}});
  return job;
}

class JobKindsControllerTest : public JobControllerTest {
 protected:
  JobController& AllKinds(JobController::Options options = {}) {
    std::vector<const manifest::JobKindTranslator*> kinds(manifest::AllJobKinds().begin(),
                                                          manifest::AllJobKinds().end());
    controller_ = std::make_unique<JobController>(kube_, admission_, clock_, kinds, options);
    return *controller_;
  }

  // A JobSet "train" admitted and started, then one replicated job of its workers succeeded (2
  // pods) and the controller reconciled it again: the workload's name.
  std::string StartJobSetAndSucceedWorkers(JobController::Options options) {
    const manifest::JobKindTranslator& jobset_kind = *manifest::FindJobKind("JobSet");
    const Json jobset = kube_.Put(jobset_kind.resource(), MakeJobSet());
    AllKinds(std::move(options));
    const ObjectKey key{"jobsets", "team-a", "train"};
    EXPECT_TRUE(controller_->Reconcile(key).ok());
    const std::string name = jobset_kind.WorkloadName(jobset);
    v1::Admission admission;
    admission.set_cluster_queue("team-a-cq");
    v1::PodSetAssignment* a = admission.add_pod_set_assignments();
    a->set_name("workers");
    a->set_count(4);
    (*a->mutable_flavors())["cpu"] = "a100";
    admission_.Admit("team-a", name, admission);
    EXPECT_TRUE(controller_->Reconcile(key).ok());
    const Json started = kube_.Object(jobset_kind.resource(), "team-a", "train");
    EXPECT_FALSE(jobset_kind.IsSuspended(started));
    EXPECT_EQ(started["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
                     ["nodeSelector"]["accelerator"],
              "a100");
    kube_.SetStatus(jobset_kind.resource(), "team-a", "train", Json::parse(R"({
        "replicatedJobsStatus": [{"name": "workers", "active": 1, "ready": 1, "succeeded": 1}]})"));
    EXPECT_TRUE(controller_->Reconcile(key).ok());
    return name;
  }
};

TEST_F(JobKindsControllerTest, AJobOfAQueuedJobSetIsLeftToTheJobSet) {
  const Json jobset = kube_.Put(manifest::FindJobKind("JobSet")->resource(), MakeJobSet());
  kube_.Put(manifest::JobResource(), OwnedJob("JobSet", "jobset.x-k8s.io/v1alpha2", "train",
                                              manifest::GetString(jobset, {"metadata", "uid"})));
  AllKinds();
  ASSERT_TRUE(Reconcile().ok());
  EXPECT_FALSE(admission_.Find("team-a", kWorkload).has_value());
  EXPECT_EQ(kube_.patch_count(), 0);
  // The JobSet itself is queued.
  ASSERT_TRUE(controller_->Reconcile(ObjectKey{"jobsets", "team-a", "train"}).ok());
  const std::string name = manifest::FindJobKind("JobSet")->WorkloadName(jobset);
  ASSERT_TRUE(admission_.Find("team-a", name).has_value());
  EXPECT_EQ(admission_.Find("team-a", name)->spec().pod_sets(0).count(), 4);
}

TEST_F(JobKindsControllerTest, AJobOfACronJobIsQueuedLikeAnyJob) {
  kube_.Put(manifest::JobResource(),
            OwnedJob("CronJob", "batch/v1", "nightly", "c2220000-0000-0000-0000-000000000002"));
  AllKinds();
  ASSERT_TRUE(Reconcile().ok());
  ASSERT_TRUE(admission_.Find("team-a", kWorkload).has_value());
  EXPECT_TRUE(job_.IsSuspended(Job()));
}

TEST_F(JobKindsControllerTest, AnObjectWithoutTheQueueLabelIsLeftAlone) {
  Json job = MakeJob(/*suspend=*/false);
  job["metadata"].erase("labels");
  kube_.Put(manifest::JobResource(), job);
  AllKinds();
  ASSERT_TRUE(Reconcile().ok());
  EXPECT_FALSE(admission_.Find("team-a", kWorkload).has_value());
  EXPECT_EQ(kube_.patch_count(), 0);
  EXPECT_EQ(admission_.Count("Submit"), 0);
}

TEST_F(JobKindsControllerTest, AnAdmissionThatCannotBeEnactedFinishesTheWorkload) {
  // The flavor's node label contradicts the template's node selector: no retry can start it.
  Json job = MakeJob();
  job["spec"]["template"]["spec"]["nodeSelector"]["accelerator"] = "v100";
  kube_.Put(manifest::JobResource(), job);
  AllKinds();
  ASSERT_TRUE(Reconcile().ok());
  admission_.Admit("team-a", kWorkload, GpuAdmission());
  ASSERT_TRUE(Reconcile().ok());
  EXPECT_EQ(admission_.Find("team-a", kWorkload)->status().state(), v1::WORKLOAD_STATE_FINISHED);
  EXPECT_TRUE(job_.IsSuspended(Job()));
  EXPECT_THAT(Status(), HasSubstr("finished: Cannot start"));
  EXPECT_THAT(Status(), HasSubstr("key accelerator is \"v100\" and must also be \"a100\""));
  EXPECT_THAT(EventReasons(), ::testing::Contains("FailedToStart"));
  // The job as written is untouched.
  EXPECT_EQ(Job()["spec"]["template"]["spec"]["nodeSelector"]["accelerator"], "v100");
}

TEST_F(JobKindsControllerTest, AWorkloadNamedByAnEarlierVersionKeepsItsName) {
  kube_.Put(manifest::JobResource(), MakeJob());
  // What tollgate-kube submitted before workloads were named as Kueue names them.
  v1::SubmitRequest earlier;
  v1::Workload& wl = *earlier.mutable_workload();
  wl.mutable_metadata()->set_namespace_("team-a");
  wl.mutable_metadata()->set_name(manifest::LegacyWorkloadName("job", "eval", kUid));
  wl.mutable_metadata()->set_uid(kUid);
  ASSERT_TRUE(admission_.Submit(earlier).ok());
  admission_.Admit("team-a", wl.metadata().name(), GpuAdmission());
  AllKinds();
  ASSERT_TRUE(Reconcile().ok());
  EXPECT_FALSE(admission_.Find("team-a", kWorkload).has_value());
  EXPECT_FALSE(job_.IsSuspended(Job()));
  EXPECT_THAT(Status(), HasSubstr("admitted"));
}

TEST_F(JobKindsControllerTest, SucceededJobsOfARunningJobSetAreReportedReclaimable) {
  const std::string name = StartJobSetAndSucceedWorkers({});
  const std::optional<v1::Workload> now = admission_.Find("team-a", name);
  ASSERT_EQ(now->status().reclaimable_pods_size(), 1);
  EXPECT_EQ(now->status().reclaimable_pods(0).name(), "workers");
  EXPECT_EQ(now->status().reclaimable_pods(0).count(), 2);
  EXPECT_EQ(admission_.Count("ReportReclaimablePods"), 1);
  // Nothing new: nothing reported again.
  ASSERT_TRUE(controller_->Reconcile(ObjectKey{"jobsets", "team-a", "train"}).ok());
  EXPECT_EQ(admission_.Count("ReportReclaimablePods"), 1);
}

// Kueue's ReclaimablePods gate off: its job reconciler skips the reclaimable pods step.
TEST_F(JobKindsControllerTest, WithReclaimablePodsOffSucceededJobsAreNotReported) {
  JobController::Options options;
  options.reclaimable_pods = false;
  const std::string name = StartJobSetAndSucceedWorkers(options);
  EXPECT_EQ(admission_.Find("team-a", name)->status().reclaimable_pods_size(), 0);
  EXPECT_EQ(admission_.Count("ReportReclaimablePods"), 0);
}

TEST_F(JobKindsControllerTest, ARayJobKubeRayFailedToValidateReleasesItsQuota) {
  const manifest::JobKindTranslator& rayjob = *manifest::FindJobKind("RayJob");
  Json obj = Json::parse(R"({
    "apiVersion": "ray.io/v1", "kind": "RayJob",
    "metadata": {"name": "sweep", "namespace": "team-a",
                 "uid": "aaaabbbb-0000-0000-0000-000000000001",
                 "labels": {"kueue.x-k8s.io/queue-name": "eval-queue"}},
    "spec": {"suspend": true, "entrypoint": "python sweep.py", "rayClusterSpec": {
      "headGroupSpec": {"template": {"spec": {"containers": [
        {"name": "ray-head", "resources": {"requests": {"cpu": "2"}}}]}}}}}})");
  kube_.Put(rayjob.resource(), obj);
  AllKinds();
  const ObjectKey key{"rayjobs", "team-a", "sweep"};
  ASSERT_TRUE(controller_->Reconcile(key).ok());
  const std::string name = rayjob.WorkloadName(obj);
  v1::Admission admission = GpuAdmission();
  admission.mutable_pod_set_assignments(0)->set_name("head");
  admission.mutable_pod_set_assignments(0)->set_count(1);
  admission_.Admit("team-a", name, admission);
  ASSERT_TRUE(controller_->Reconcile(key).ok());

  kube_.SetStatus(rayjob.resource(), "team-a", "sweep",
                  Json::parse(R"({"jobDeploymentStatus": "ValidationFailed"})"));
  ASSERT_TRUE(controller_->Reconcile(key).ok());
  std::optional<v1::Workload> wl = admission_.Find("team-a", name);
  ASSERT_TRUE(wl.has_value());
  EXPECT_TRUE(wl->status().on_hold());
  EXPECT_EQ(wl->status().state(), v1::WORKLOAD_STATE_PENDING);
  // Held once; a held workload without quota is left as it is.
  ASSERT_TRUE(controller_->Reconcile(key).ok());
  EXPECT_EQ(admission_.Count("ReportJobState"), 1);
}

// Kueue's integrations.labelKeysToCopy (its job controller test "should copy labels..."): the
// listed keys the job carries reach the workload when it is made; keys it lacks and keys not
// listed do not; a later change of the job's label leaves the workload as it was made.
TEST_F(JobControllerTest, CopiesLabelKeysToCopyWhenTheWorkloadIsMade) {
  JobController::Options options;
  options.label_keys_to_copy = {"toCopyKey", "redundantToCopyKey"};
  Controller(options);
  Json job = MakeJob();
  job["metadata"]["labels"]["toCopyKey"] = "toCopyValue";
  job["metadata"]["labels"]["notToCopyKey"] = "notToCopyValue";
  kube_.Put(manifest::JobResource(), job);
  ASSERT_TRUE(Reconcile().ok());
  std::optional<v1::Workload> wl = admission_.Find("team-a", kWorkload);
  ASSERT_TRUE(wl.has_value());
  const auto& labels = wl->metadata().labels();
  EXPECT_EQ(labels.count("toCopyKey"), 1u);
  EXPECT_EQ(labels.at("toCopyKey"), "toCopyValue");
  EXPECT_EQ(labels.count("notToCopyKey"), 0u);
  EXPECT_EQ(labels.count("redundantToCopyKey"), 0u);
  // Tollgate's own labels are still there.
  EXPECT_EQ(labels.at(std::string(manifest::kJobUidLabel)), kUid);

  Json relabelled = Job();
  relabelled["metadata"]["labels"]["toCopyKey"] = "changed";
  relabelled["metadata"]["labels"]["redundantToCopyKey"] = "added";
  kube_.Put(manifest::JobResource(), relabelled);
  ASSERT_TRUE(Reconcile().ok());
  wl = admission_.Find("team-a", kWorkload);
  ASSERT_TRUE(wl.has_value());
  EXPECT_EQ(wl->metadata().labels().at("toCopyKey"), "toCopyValue");
  EXPECT_EQ(wl->metadata().labels().count("redundantToCopyKey"), 0u);
  EXPECT_EQ(admission_.Count("DeleteWorkload"), 0);
  EXPECT_EQ(wl->status().state(), v1::WORKLOAD_STATE_PENDING);
}

// Without the option no label of the job is copied (Kueue's default).
TEST_F(JobControllerTest, CopiesNoLabelsByDefault) {
  Json job = MakeJob();
  job["metadata"]["labels"]["team"] = "a";
  kube_.Put(manifest::JobResource(), job);
  ASSERT_TRUE(Reconcile().ok());
  std::optional<v1::Workload> wl = admission_.Find("team-a", kWorkload);
  ASSERT_TRUE(wl.has_value());
  EXPECT_EQ(wl->metadata().labels().count("team"), 0u);
}

// Kueue's objectRetentionPolicies.workloads.afterDeactivatedByKueue (its job controller tests
// "when workload is deactivated by kueue; ... retention period has not expired / has expired"):
// the job is requeued for the moment the retention ends, then deleted with its workload.
TEST_F(JobControllerTest, DeletesTheJobOfAWorkloadKueueDeactivatedOnceTheRetentionEnds) {
  JobController::Options options;
  options.after_deactivated_by_kueue = absl::Minutes(2);
  Controller(options);
  std::vector<std::pair<ObjectKey, absl::Time>> requeued;
  controller_->SetRequeueAt(
      [&](const ObjectKey& key, absl::Time at) { requeued.emplace_back(key, at); });
  kube_.Put(manifest::JobResource(), MakeJob());
  ASSERT_TRUE(Reconcile().ok());
  admission_.Admit("team-a", kWorkload, GpuAdmission());
  ASSERT_TRUE(Reconcile().ok());
  const absl::Time evicted_at = clock_.Now();
  admission_.DeactivateAndEvict("team-a", kWorkload, "DeactivatedDueToRequeuingLimitExceeded",
                                evicted_at);

  clock_.Advance(absl::Minutes(1));
  ASSERT_TRUE(Reconcile().ok());
  EXPECT_FALSE(Job().is_null());
  EXPECT_TRUE(job_.IsSuspended(Job()));
  ASSERT_EQ(requeued.size(), 1u);
  EXPECT_EQ(requeued[0].first, (ObjectKey{"jobs", "team-a", "eval"}));
  EXPECT_EQ(requeued[0].second, evicted_at + absl::Minutes(2));
  EXPECT_TRUE(admission_.Find("team-a", kWorkload).has_value());

  clock_.Advance(absl::Minutes(1));
  ASSERT_TRUE(Reconcile().ok());
  EXPECT_TRUE(Job().is_null());
  EXPECT_FALSE(admission_.Find("team-a", kWorkload).has_value());
  EXPECT_THAT(EventReasons(), ::testing::Contains("Deleted"));
  EXPECT_EQ(requeued.size(), 1u);
}

// Zero deletes at once; any DeactivatedDueTo... reason is Kueue's own deactivation.
TEST_F(JobControllerTest, ZeroRetentionDeletesAJobDeactivatedForItsExecutionTimeAtOnce) {
  JobController::Options options;
  options.after_deactivated_by_kueue = absl::ZeroDuration();
  Controller(options);
  kube_.Put(manifest::JobResource(), MakeJob());
  ASSERT_TRUE(Reconcile().ok());
  admission_.Admit("team-a", kWorkload, GpuAdmission());
  ASSERT_TRUE(Reconcile().ok());
  admission_.DeactivateAndEvict("team-a", kWorkload, "DeactivatedDueToMaximumExecutionTimeExceeded",
                                clock_.Now());
  ASSERT_TRUE(Reconcile().ok());
  EXPECT_TRUE(Job().is_null());
  EXPECT_FALSE(admission_.Find("team-a", kWorkload).has_value());
}

// A user's spec.active false (reason Deactivated) is not Kueue's deactivation: the job stays
// (Kueue's "when workload is manually deactivated ... should not delete the job"); so does any
// job without the policy.
TEST_F(JobControllerTest, KeepsTheJobOfAManuallyDeactivatedWorkloadOrWithoutThePolicy) {
  JobController::Options options;
  options.after_deactivated_by_kueue = absl::ZeroDuration();
  Controller(options);
  kube_.Put(manifest::JobResource(), MakeJob());
  ASSERT_TRUE(Reconcile().ok());
  admission_.Admit("team-a", kWorkload, GpuAdmission());
  ASSERT_TRUE(Reconcile().ok());
  admission_.DeactivateByUser("team-a", kWorkload, clock_.Now());
  clock_.Advance(absl::Hours(1));
  ASSERT_TRUE(Reconcile().ok());
  EXPECT_FALSE(Job().is_null());
  EXPECT_TRUE(admission_.Find("team-a", kWorkload).has_value());

  Controller(JobController::Options{});
  admission_.DeactivateAndEvict("team-a", kWorkload, "DeactivatedDueToRequeuingLimitExceeded",
                                clock_.Now());
  clock_.Advance(absl::Hours(1));
  ASSERT_TRUE(Reconcile().ok());
  EXPECT_FALSE(Job().is_null());
  EXPECT_TRUE(admission_.Find("team-a", kWorkload).has_value());
}

TEST(ParseStatusAnnotationTest, SplitsStateAndMessage) {
  EXPECT_EQ(ParseStatusAnnotation("pending: a: b"),
            std::make_pair(std::string("pending"), std::string("a: b")));
  EXPECT_EQ(ParseStatusAnnotation("admitted"),
            std::make_pair(std::string("admitted"), std::string("")));
}

}  // namespace
}  // namespace tollgate::kube
