#include <string>
#include <vector>

#include "core/cluster_state.h"
#include "core/start_estimator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

// What a workload's job asks of it (core/job_reports.cc): owners (several workloads per object,
// prebuilt workloads bound later, out of sync), hold and release (StatefulSet scale to zero and
// back), pod groups missing members; and the cost-attribution labels of an admission.

namespace tollgate::core {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

const absl::Time kStart = absl::FromUnixSeconds(1767225600);

WorkloadSpec GpuJob(std::string name, int32_t gpus) {
  WorkloadSpec spec;
  spec.name = std::move(name);
  spec.namespace_name = "ns";
  spec.queue_name = "q";
  spec.pod_sets = {PodSetSpec{"main", gpus, std::nullopt, {{"gpu", 1}}, {}, {}}};
  return spec;
}

WorkloadOwner Lws(std::string uid = "lws-uid") {
  return WorkloadOwner{"leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet", "vllm", std::move(uid)};
}

class JobReportsTest : public ::testing::Test {
 protected:
  explicit JobReportsTest(SchedulerConfig config = SchedulerConfig{}) : state_(std::move(config)) {
    EXPECT_TRUE(state_.ApplyResourceFlavor({"a100", {}, {}, {}}, now_).ok());
    ClusterQueueSpec cq;
    cq.name = "cq";
    cq.resource_groups = {{{"gpu"}, {{"a100", {{"gpu", 8, std::nullopt, std::nullopt}}}}}};
    EXPECT_TRUE(state_.ApplyClusterQueue(cq, now_).ok());
    EXPECT_TRUE(state_.ApplyLocalQueue({"ns", "q", "cq", StopPolicy::kNone, 1.0}, now_).ok());
  }

  void Submit(WorkloadSpec spec, std::optional<WorkloadOwner> owner = std::nullopt) {
    now_ += absl::Milliseconds(1);
    ASSERT_TRUE(state_.Submit(std::move(spec), "", now_, std::move(owner)).ok());
  }

  void Settle() {
    while (true) {
      CyclePlan plan = state_.PlanCycle(now_);
      state_.ApplyCycle(plan, now_);
      if (!plan.MadeProgress()) return;
    }
  }

  std::vector<std::string> OwnedBy(absl::string_view uid) {
    std::vector<std::string> names;
    for (WorkloadId id : state_.WorkloadsOwnedBy(uid))
      names.push_back(state_.workload(id)->spec.name);
    return names;
  }

  const Workload& Wl(const std::string& name) { return *state_.FindWorkload("ns/" + name); }
  bool Queued(const std::string& name) { return state_.QueuedIn(Wl(name).id) != nullptr; }

  absl::Time now_ = kStart;
  ClusterState state_;
};

// --- Owners ---------------------------------------------------------------------------------

TEST_F(JobReportsTest, AnObjectOwnsSeveralWorkloadsInSubmissionOrder) {
  Submit(GpuJob("group-1", 2), Lws());
  Submit(GpuJob("group-0", 2), Lws());
  Submit(GpuJob("other", 2), Lws("other-uid"));
  Submit(GpuJob("unowned", 2));
  EXPECT_THAT(OwnedBy("lws-uid"), ElementsAre("group-1", "group-0"));
  EXPECT_THAT(OwnedBy("other-uid"), ElementsAre("other"));
  EXPECT_THAT(OwnedBy("nobody"), IsEmpty());

  // Deleting one group's workload (scaled down) leaves the others.
  ASSERT_TRUE(state_.Delete("ns/group-1", now_).ok());
  EXPECT_THAT(OwnedBy("lws-uid"), ElementsAre("group-0"));
  ASSERT_TRUE(state_.Delete("ns/group-0", now_).ok());
  EXPECT_THAT(OwnedBy("lws-uid"), IsEmpty());
}

TEST_F(JobReportsTest, AResubmitByAnotherOwnerIsRefusedAndBySameOwnerIsTheSameWorkload) {
  Submit(GpuJob("a", 2), Lws());
  absl::StatusOr<SubmitOutcome> same = state_.Submit(GpuJob("a", 2), "", now_, Lws());
  ASSERT_TRUE(same.ok());
  EXPECT_FALSE(same->created);
  // Without an owner (a user re-applying the workload) it is the same workload too.
  absl::StatusOr<SubmitOutcome> bare = state_.Submit(GpuJob("a", 2), "", now_);
  ASSERT_TRUE(bare.ok());
  EXPECT_FALSE(bare->created);
  absl::StatusOr<SubmitOutcome> other = state_.Submit(GpuJob("a", 2), "", now_, Lws("x"));
  EXPECT_EQ(other.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(other.status().message(), HasSubstr("controlled by LeaderWorkerSet vllm"));
}

TEST_F(JobReportsTest, APrebuiltWorkloadIsBoundToItsJobOnceAndOnlyToIt) {
  Submit(GpuJob("prebuilt", 2));
  EXPECT_THAT(OwnedBy("job-uid"), IsEmpty());
  const WorkloadOwner job{"batch/v1", "Job", "train", "job-uid"};
  ASSERT_TRUE(state_.BindOwner("ns/prebuilt", job, now_).ok());
  EXPECT_EQ(*Wl("prebuilt").owner, job);
  EXPECT_THAT(OwnedBy("job-uid"), ElementsAre("prebuilt"));
  EXPECT_EQ(Wl("prebuilt").status.events.back().reason, "OwnerBound");
  EXPECT_TRUE(state_.IsDirty(Wl("prebuilt").id));
  // Idempotent for the same job.
  ASSERT_TRUE(state_.BindOwner("ns/prebuilt", job, now_).ok());

  const absl::Status other =
      state_.BindOwner("ns/prebuilt", {"batch/v1", "Job", "other", "other-uid"}, now_);
  EXPECT_EQ(other.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(other.message(), HasSubstr("already controlled by Job train"));
  EXPECT_EQ(state_.BindOwner("ns/absent", job, now_).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(state_.BindOwner("ns/prebuilt", {"batch/v1", "Job", "", ""}, now_).code(),
            absl::StatusCode::kInvalidArgument);
  // Binding does not change how it is scheduled.
  Settle();
  EXPECT_EQ(Wl("prebuilt").status.state, WorkloadState::kAdmitted);
}

TEST_F(JobReportsTest, AnOutOfSyncPrebuiltWorkloadFinishesFromAnyStateAndFreesItsQuota) {
  Submit(GpuJob("running", 8));
  Submit(GpuJob("waiting", 8));
  Settle();
  ASSERT_EQ(Wl("running").status.state, WorkloadState::kAdmitted);
  ASSERT_TRUE(Queued("waiting"));

  ASSERT_TRUE(state_.MarkOutOfSync("ns/waiting", now_).ok());
  EXPECT_EQ(Wl("waiting").status.state, WorkloadState::kFinished);
  EXPECT_FALSE(Queued("waiting"));
  const Condition* finished = FindCondition(Wl("waiting").status, "Finished");
  ASSERT_NE(finished, nullptr);
  EXPECT_EQ(finished->reason, "OutOfSync");
  EXPECT_EQ(finished->message, "The prebuilt workload is out of sync with its user job");

  ASSERT_TRUE(state_.MarkOutOfSync("ns/running", now_).ok());
  EXPECT_EQ(Wl("running").status.state, WorkloadState::kFinished);
  EXPECT_THAT(state_.ClusterQueueUsage("cq"),
              ::testing::Each(::testing::Field(&ResourceUsageRow::total, 0)));
  // Idempotent; a finished workload cannot be bound any more.
  ASSERT_TRUE(state_.MarkOutOfSync("ns/running", now_).ok());
  EXPECT_EQ(state_.BindOwner("ns/running", Lws(), now_).code(),
            absl::StatusCode::kFailedPrecondition);
}

// --- On hold --------------------------------------------------------------------------------

TEST_F(JobReportsTest, HoldingAnAdmittedWorkloadReleasesItsQuotaAtOnceAndKeepsItOutOfTheQueue) {
  Submit(GpuJob("sts", 8));
  Submit(GpuJob("next", 8));
  Settle();
  ASSERT_EQ(Wl("sts").status.state, WorkloadState::kAdmitted);

  ASSERT_TRUE(
      state_.SetOnHold("ns/sts", true, "StatefulSet scaled to zero; workload on hold", now_).ok());
  EXPECT_EQ(Wl("sts").status.state, WorkloadState::kPending);
  EXPECT_TRUE(Wl("sts").status.on_hold);
  EXPECT_FALSE(Wl("sts").status.admission.has_value());
  EXPECT_FALSE(Queued("sts"));
  const Condition* reserved = FindCondition(Wl("sts").status, "QuotaReserved");
  ASSERT_NE(reserved, nullptr);
  EXPECT_EQ(reserved->reason, "OnHold");
  EXPECT_EQ(Wl("sts").status.pending_message, "StatefulSet scaled to zero; workload on hold");
  // No eviction: nothing was preempted, and the quota is free for the next workload.
  EXPECT_EQ(Wl("sts").status.history().preemption_count, 0);
  Settle();
  EXPECT_EQ(Wl("next").status.state, WorkloadState::kAdmitted);
  EXPECT_EQ(Wl("sts").status.state, WorkloadState::kPending);
  // Idempotent.
  ASSERT_TRUE(state_.SetOnHold("ns/sts", true, "", now_).ok());

  // Scaled up again: queued behind what holds the quota now, admitted once it is free.
  ASSERT_TRUE(state_.SetOnHold("ns/sts", false, "", now_).ok());
  EXPECT_FALSE(Wl("sts").status.on_hold);
  EXPECT_TRUE(Queued("sts"));
  EXPECT_EQ(FindCondition(Wl("sts").status, "QuotaReserved")->message,
            "Workload no longer on hold; waiting for quota reservation");
  Settle();
  EXPECT_EQ(Wl("sts").status.state, WorkloadState::kPending);
  ASSERT_TRUE(state_.Finish("ns/next", "", now_).ok());
  Settle();
  EXPECT_EQ(Wl("sts").status.state, WorkloadState::kAdmitted);
}

TEST_F(JobReportsTest, APendingWorkloadOnHoldIsNeitherAdmittedNorAdmittedOnRequest) {
  Submit(GpuJob("sts", 2));
  ASSERT_TRUE(state_.SetOnHold("ns/sts", true, "", now_).ok());
  EXPECT_EQ(Wl("sts").status.pending_message, "Job is on hold");
  Settle();
  EXPECT_EQ(Wl("sts").status.state, WorkloadState::kPending);
  absl::StatusOr<AdmitNowResult> now = state_.AdmitNow("ns/sts", /*dry_run=*/false, now_);
  ASSERT_TRUE(now.ok());
  EXPECT_EQ(now->outcome, AdmitNowResult::Outcome::kPending);
  EXPECT_EQ(Wl("sts").status.state, WorkloadState::kPending);

  ASSERT_TRUE(state_.Finish("ns/sts", "", now_).code() == absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(state_.MarkOutOfSync("ns/sts", now_).ok());
  EXPECT_EQ(state_.SetOnHold("ns/sts", false, "", now_).code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(JobReportsTest, HoldingAnEvictingWorkloadReleasesWithoutWaitingForTheAdapter) {
  SchedulerConfig config;
  config.evictions_need_ack = true;
  ClusterState state(config);
  ASSERT_TRUE(state.ApplyResourceFlavor({"a100", {}, {}, {}}, now_).ok());
  ClusterQueueSpec cq;
  cq.name = "cq";
  cq.resource_groups = {{{"gpu"}, {{"a100", {{"gpu", 8, std::nullopt, std::nullopt}}}}}};
  ASSERT_TRUE(state.ApplyClusterQueue(cq, now_).ok());
  ASSERT_TRUE(state.ApplyLocalQueue({"ns", "q", "cq", StopPolicy::kNone, 1.0}, now_).ok());
  ASSERT_TRUE(state.Submit(GpuJob("sts", 8), "", now_).ok());
  state.ApplyCycle(state.PlanCycle(now_), now_);
  ASSERT_TRUE(state.Preempt("ns/sts", "operator", now_).ok());
  ASSERT_EQ(state.FindWorkload("ns/sts")->status.state, WorkloadState::kEvicting);
  ASSERT_TRUE(state.SetOnHold("ns/sts", true, "", now_).ok());
  EXPECT_EQ(state.FindWorkload("ns/sts")->status.state, WorkloadState::kPending);
  EXPECT_THAT(state.ClusterQueueUsage("cq"),
              ::testing::Each(::testing::Field(&ResourceUsageRow::total, 0)));
  // The grace timer that was armed finds nothing to do.
  state.FireTimers(now_ + absl::Hours(1));
  EXPECT_EQ(state.FindWorkload("ns/sts")->status.state, WorkloadState::kPending);
  EXPECT_EQ(state.QueuedIn(state.FindWorkload("ns/sts")->id), nullptr);
}

// --- Pod groups missing members -------------------------------------------------------------

TEST_F(JobReportsTest, AGroupWaitingForReplacementPodsIsNotQueuedUntilTheyAreBack) {
  Submit(GpuJob("group", 4));
  ASSERT_TRUE(state_.SetWaitingForReplacementPods("ns/group", true, now_).ok());
  EXPECT_FALSE(Queued("group"));
  const Condition* waiting = FindCondition(Wl("group").status, "WaitingForReplacementPods");
  ASSERT_NE(waiting, nullptr);
  EXPECT_TRUE(waiting->status);
  EXPECT_EQ(waiting->reason, "PodsFailed");
  EXPECT_EQ(Wl("group").status.pending_message, kWaitingForPodsMessage);
  Settle();
  EXPECT_EQ(Wl("group").status.state, WorkloadState::kPending);

  ASSERT_TRUE(state_.SetWaitingForReplacementPods("ns/group", false, now_).ok());
  EXPECT_TRUE(Queued("group"));
  EXPECT_EQ(FindCondition(Wl("group").status, "WaitingForReplacementPods")->reason, "PodsReady");
  Settle();
  EXPECT_EQ(Wl("group").status.state, WorkloadState::kAdmitted);
}

TEST_F(JobReportsTest, APreemptedGroupWaitsForItsReplacementsWithThePreemptionAsReason) {
  Submit(GpuJob("group", 4));
  Settle();
  ASSERT_TRUE(state_.Preempt("ns/group", "by the operator", now_).ok());
  // Preemption deleted the pods: the adapter reports them missing.
  ASSERT_TRUE(state_.SetWaitingForReplacementPods("ns/group", true, now_).ok());
  const Condition* waiting = FindCondition(Wl("group").status, "WaitingForReplacementPods");
  EXPECT_EQ(waiting->reason, "Preempted");
  EXPECT_EQ(waiting->message, "by the operator");
  EXPECT_EQ(Wl("group").status.state, WorkloadState::kPending);
  EXPECT_FALSE(Queued("group"));
  Settle();
  EXPECT_EQ(Wl("group").status.state, WorkloadState::kPending);
  ASSERT_TRUE(state_.SetWaitingForReplacementPods("ns/group", false, now_).ok());
  Settle();
  EXPECT_EQ(Wl("group").status.state, WorkloadState::kAdmitted);
}

TEST_F(JobReportsTest, AnAdmittedGroupMissingPodsKeepsItsQuota) {
  Submit(GpuJob("group", 4));
  Settle();
  ASSERT_TRUE(state_.SetWaitingForReplacementPods("ns/group", true, now_).ok());
  EXPECT_EQ(Wl("group").status.state, WorkloadState::kAdmitted);
  // A release after its eviction does not queue it while pods are missing.
  ASSERT_TRUE(state_.Evict("ns/group", "Test", "evicted", now_).ok());
  EXPECT_EQ(Wl("group").status.state, WorkloadState::kPending);
  EXPECT_FALSE(Queued("group"));
  EXPECT_EQ(Wl("group").status.pending_message, kWaitingForPodsMessage);
}

// --- Restore ---------------------------------------------------------------------------------

TEST_F(JobReportsTest, RestoredWorkloadsKeepTheirOwnerHoldAndMissingPods) {
  Submit(GpuJob("owned", 1), Lws());
  Submit(GpuJob("held", 1));
  ASSERT_TRUE(state_.SetOnHold("ns/held", true, "", now_).ok());
  Submit(GpuJob("missing", 1));
  ASSERT_TRUE(state_.SetWaitingForReplacementPods("ns/missing", true, now_).ok());

  ClusterState restored{SchedulerConfig{}};
  ASSERT_TRUE(restored.ApplyResourceFlavor({"a100", {}, {}, {}}, now_).ok());
  ClusterQueueSpec cq;
  cq.name = "cq";
  cq.resource_groups = {{{"gpu"}, {{"a100", {{"gpu", 8, std::nullopt, std::nullopt}}}}}};
  ASSERT_TRUE(restored.ApplyClusterQueue(cq, now_).ok());
  ASSERT_TRUE(restored.ApplyLocalQueue({"ns", "q", "cq", StopPolicy::kNone, 1.0}, now_).ok());
  for (const Workload* wl : state_.AllWorkloads()) {
    Workload copy = *wl;
    ASSERT_TRUE(restored.Restore(std::move(copy)).ok());
  }
  ASSERT_EQ(restored.WorkloadsOwnedBy("lws-uid").size(), 1u);
  EXPECT_EQ(restored.workload(restored.WorkloadsOwnedBy("lws-uid")[0])->spec.name, "owned");
  EXPECT_NE(restored.QueuedIn(restored.FindWorkload("ns/owned")->id), nullptr);
  EXPECT_EQ(restored.QueuedIn(restored.FindWorkload("ns/held")->id), nullptr);
  EXPECT_EQ(restored.QueuedIn(restored.FindWorkload("ns/missing")->id), nullptr);
}

// --- Cost attribution -----------------------------------------------------------------------

class CostAttributionTest : public JobReportsTest {
 protected:
  CostAttributionTest() : JobReportsTest(Config()) {}
  static SchedulerConfig Config() {
    SchedulerConfig config;
    config.local_queue_label_keys_to_copy = {"team", "cost-center", "absent"};
    return config;
  }
};

TEST_F(CostAttributionTest, AnAdmissionCarriesItsLocalQueuesNamedLabelsAsTheyWereThen) {
  LocalQueueSpec lq{"ns", "q", "cq", StopPolicy::kNone, 1.0};
  lq.labels = {{"team", "vision"}, {"cost-center", "cc-42"}, {"unrelated", "x"}};
  ASSERT_TRUE(state_.ApplyLocalQueue(lq, now_).ok());
  Submit(GpuJob("a", 1));
  Settle();
  ASSERT_EQ(Wl("a").status.state, WorkloadState::kAdmitted);
  EXPECT_EQ(Wl("a").status.admission->pod_labels,
            (Labels{{"cost-center", "cc-42"}, {"team", "vision"}}));

  // Relabelling the queue charges what is admitted from now on, not what runs.
  lq.labels["team"] = "speech";
  ASSERT_TRUE(state_.ApplyLocalQueue(lq, now_).ok());
  Submit(GpuJob("b", 1));
  Settle();
  EXPECT_EQ(Wl("a").status.admission->pod_labels.at("team"), "vision");
  EXPECT_EQ(Wl("b").status.admission->pod_labels.at("team"), "speech");
}

TEST_F(JobReportsTest, WithoutConfiguredKeysAnAdmissionCarriesNoLabels) {
  LocalQueueSpec lq{"ns", "q", "cq", StopPolicy::kNone, 1.0};
  lq.labels = {{"team", "vision"}};
  ASSERT_TRUE(state_.ApplyLocalQueue(lq, now_).ok());
  Submit(GpuJob("a", 1));
  Settle();
  EXPECT_THAT(Wl("a").status.admission->pod_labels, IsEmpty());
}

}  // namespace
}  // namespace tollgate::core
