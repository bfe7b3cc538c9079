#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "core/admission_checks.h"
#include "core/cluster_state.h"
#include "core/multikueue_dispatcher.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/core/gpu_cluster_state_fixture.h"
#include "test/status_matchers.h"

// Two-phase admission through ClusterState: reservation, the checks' states and what they lead
// to, after Kueue's workload_controller_test.go, workload_controller_eviction_test.go,
// workload_controller_requeue_test.go, the scheduler's admission with checks and the
// ClusterQueue's inactive reasons.

namespace tollgate::core {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;

class AdmissionCheckLifecycleTest : public GpuClusterStateTest {
 protected:
  AdmissionCheckLifecycleTest() {
    AddCheck("approval", "example.com/approval");
    AddCheck("budget", "example.com/budget");
  }

  void AddCheck(const std::string& name, const std::string& controller, bool active = true) {
    ASSERT_TRUE(state_.ApplyAdmissionCheck({name, controller, std::nullopt}, now_).ok());
    if (active) {
      ASSERT_TRUE(state_.SetAdmissionCheckActive(name, true, "Active", "ready", now_).ok());
    }
  }

  // A ClusterQueue "cq" of 8 a100 gpus asking for `checks`, LocalQueue ns/q.
  void AddCheckedQueue(std::vector<AdmissionCheckStrategyRule> checks) {
    ClusterQueueSpec cq = GpuQueue("cq", "", 8);
    cq.preemption.within_cluster_queue = PreemptionPolicy::kLowerPriority;
    cq.admission_checks = std::move(checks);
    AddQueue(std::move(cq), "ns");
  }

  absl::Status Set(const std::string& name, const std::string& check, CheckState s,
                   std::string message = "", std::optional<int32_t> delay = std::nullopt,
                   std::vector<PodSetUpdate> updates = {}) {
    CheckStateUpdate update;
    update.check = check;
    update.state = s;
    update.message = std::move(message);
    update.requeue_after_seconds = delay;
    update.pod_set_updates = std::move(updates);
    return state_.SetAdmissionCheckState("ns/" + name, std::move(update), now_);
  }

  const Workload& Wl(const std::string& name) { return *state_.FindWorkload("ns/" + name); }
  const AdmissionCheckState& CheckOf(const std::string& name, const std::string& check) {
    return *FindCheck(Wl(name).status.admission_checks(), check);
  }
  std::vector<std::string> CheckNamesOf(const std::string& name) {
    std::vector<std::string> out;
    for (const AdmissionCheckState& c : Wl(name).status.admission_checks()) out.push_back(c.name);
    return out;
  }
};

TEST_F(AdmissionCheckLifecycleTest, QuotaIsReservedFirstAndAdmittedWhenEveryCheckIsReady) {
  AddCheckedQueue({{"budget", {}}, {"approval", {}}});
  Submit(GpuJob("a", "ns", 4));
  // Pending workloads carry the checks that cover every flavor, sorted by name.
  EXPECT_THAT(CheckNamesOf("a"), ElementsAre("approval", "budget"));
  Settle();
  ASSERT_EQ(StateOf("ns/a"), WorkloadState::kQuotaReserved);
  EXPECT_TRUE(FindCondition(Wl("a").status, "QuotaReserved")->status);
  const Condition* admitted = FindCondition(Wl("a").status, "Admitted");
  ASSERT_NE(admitted, nullptr);
  EXPECT_FALSE(admitted->status);
  EXPECT_EQ(admitted->reason, "UnsatisfiedAdmissionChecks");
  EXPECT_EQ(state_.ClusterQueueUsage("cq").front().total, 4);

  now_ += absl::Seconds(30);
  ASSERT_TRUE(Set("a", "approval", CheckState::kReady, "approved by alice").ok());
  EXPECT_EQ(StateOf("ns/a"), WorkloadState::kQuotaReserved);
  now_ += absl::Seconds(12);
  ASSERT_TRUE(Set("a", "budget", CheckState::kReady).ok());
  EXPECT_EQ(StateOf("ns/a"), WorkloadState::kAdmitted);
  EXPECT_TRUE(FindCondition(Wl("a").status, "Admitted")->status);
  EXPECT_EQ(AdmittedTime(Wl("a").status), now_);
  EXPECT_EQ(Wl("a").status.events.back().message,
            "Admitted by ClusterQueue cq, wait time since reservation was 42s");
  EXPECT_EQ(CheckOf("a", "approval").message, "approved by alice");
}

TEST_F(AdmissionCheckLifecycleTest, ChecksReadyBeforeTheReservationAdmitAtOnce) {
  AddCheckedQueue({{"approval", {}}});
  Submit(GpuJob("a", "ns", 4));
  ASSERT_TRUE(Set("a", "approval", CheckState::kReady).ok());
  EXPECT_EQ(StateOf("ns/a"), WorkloadState::kPending);
  Settle();
  EXPECT_EQ(StateOf("ns/a"), WorkloadState::kAdmitted);
}

TEST_F(AdmissionCheckLifecycleTest, AFlavorsOwnCheckJoinsWhenQuotaIsReservedOnIt) {
  ASSERT_TRUE(state_.ApplyResourceFlavor({"h100", {}, {}, {}}, now_).ok());
  ClusterQueueSpec cq;
  cq.name = "cq";
  cq.resource_groups = {{{"gpu"},
                         {{"a100", {{"gpu", 4, std::nullopt, std::nullopt}}},
                          {"h100", {{"gpu", 8, std::nullopt, std::nullopt}}}}}};
  cq.admission_checks = {{"budget", {"h100"}}, {"approval", {}}};
  AddQueue(cq, "ns");
  Submit(GpuJob("small", "ns", 4));
  Submit(GpuJob("big", "ns", 8));
  EXPECT_THAT(CheckNamesOf("big"), ElementsAre("approval"));
  Settle();
  EXPECT_THAT(CheckNamesOf("small"), ElementsAre("approval"));
  EXPECT_THAT(CheckNamesOf("big"), ElementsAre("approval", "budget"));
  EXPECT_EQ(CheckOf("big", "budget").state, CheckState::kPending);
}

TEST_F(AdmissionCheckLifecycleTest, RetryEvictsResetsEveryCheckAndWaitsForTheDelay) {
  AddCheckedQueue({{"approval", {}}, {"budget", {}}});
  Submit(GpuJob("a", "ns", 4));
  Settle();
  ASSERT_TRUE(Set("a", "approval", CheckState::kReady).ok());
  ASSERT_TRUE(Set("a", "budget", CheckState::kRetry, "no budget today", 600).ok());
  const Workload& a = Wl("a");
  EXPECT_EQ(a.status.state, WorkloadState::kPending);
  const Condition* evicted = FindCondition(a.status, "Evicted");
  ASSERT_NE(evicted, nullptr);
  EXPECT_EQ(evicted->reason, "AdmissionCheck");
  EXPECT_EQ(evicted->message,
            R"(Evicted due to AdmissionCheck in Retry state: "budget" (no budget today))");
  EXPECT_EQ(CheckOf("a", "approval").state, CheckState::kPending);
  EXPECT_EQ(CheckOf("a", "approval").message, "Reset to Pending after eviction. Previously: Ready");
  EXPECT_EQ(CheckOf("a", "budget").state, CheckState::kPending);
  EXPECT_EQ(CheckOf("a", "budget").retry_count, 1);
  EXPECT_EQ(CheckOf("a", "budget").requeue_after_seconds, 600);
  EXPECT_EQ(a.status.history().requeue_at, now_ + absl::Seconds(600));
  EXPECT_TRUE(state_.ClusterQueueUsage("cq").front().total == 0);

  // Not before the delay, however free the queue is.
  now_ += absl::Seconds(599);
  state_.FireTimers(now_);
  Settle();
  EXPECT_EQ(StateOf("ns/a"), WorkloadState::kPending);
  now_ += absl::Seconds(1);
  state_.FireTimers(now_);
  Settle();
  EXPECT_EQ(StateOf("ns/a"), WorkloadState::kQuotaReserved);
}

TEST_F(AdmissionCheckLifecycleTest, RequeuedStaysFalseUntilTheRetryDelayHasPassed) {
  AddCheckedQueue({{"approval", {}}});
  Submit(GpuJob("a", "ns", 4));
  Submit(GpuJob("b", "ns", 4));
  Settle();
  ASSERT_TRUE(Set("a", "approval", CheckState::kRetry, "no capacity", 60).ok());
  ASSERT_TRUE(Set("b", "approval", CheckState::kRetry, "try again").ok());
  const std::string message =
      R"(Evicted due to AdmissionCheck in Retry state: "approval" (no capacity))";
  // As Kueue's job reconciler leaves it: the eviction's reason and message.
  const Condition* requeued = FindCondition(Wl("a").status, "Requeued");
  ASSERT_NE(requeued, nullptr);
  EXPECT_FALSE(requeued->status);
  EXPECT_EQ(requeued->reason, "AdmissionCheck");
  EXPECT_EQ(requeued->message, message);
  EXPECT_EQ(FindCondition(Wl("a").status, "QuotaReserved")->message, message);
  EXPECT_EQ(Wl("a").status.pending_message, message);
  // Without a delay the backoff is over at once.
  EXPECT_TRUE(FindCondition(Wl("b").status, "Requeued")->status);
  EXPECT_EQ(FindCondition(Wl("b").status, "Requeued")->reason, "BackoffFinished");

  now_ += absl::Seconds(59);
  state_.FireTimers(now_);
  EXPECT_FALSE(FindCondition(Wl("a").status, "Requeued")->status);
  now_ += absl::Seconds(1);
  state_.FireTimers(now_);
  requeued = FindCondition(Wl("a").status, "Requeued");
  EXPECT_TRUE(requeued->status);
  EXPECT_EQ(requeued->reason, "BackoffFinished");
  EXPECT_EQ(requeued->message, "The workload backoff was finished");
}

TEST_F(AdmissionCheckLifecycleTest, ANewReservationTurnsEvictedFalseKeepingItsMessage) {
  AddCheckedQueue({{"approval", {}}});
  Submit(GpuJob("a", "ns", 4));
  Settle();
  // Never evicted: no Evicted or Preempted condition at all.
  EXPECT_EQ(FindCondition(Wl("a").status, "Evicted"), nullptr);
  EXPECT_EQ(FindCondition(Wl("a").status, "Preempted"), nullptr);
  ASSERT_TRUE(Set("a", "approval", CheckState::kRetry, "no capacity").ok());
  Settle();
  ASSERT_EQ(StateOf("ns/a"), WorkloadState::kQuotaReserved);
  const Condition* evicted = FindCondition(Wl("a").status, "Evicted");
  ASSERT_NE(evicted, nullptr);
  EXPECT_FALSE(evicted->status);
  EXPECT_EQ(evicted->reason, "QuotaReserved");
  EXPECT_EQ(
      evicted->message,
      R"(Previously: Evicted due to AdmissionCheck in Retry state: "approval" (no capacity))");
  EXPECT_EQ(FindCondition(Wl("a").status, "Preempted"), nullptr);
}

TEST_F(AdmissionCheckLifecycleTest, DeletingTheLocalQueueGivesBackAReservationWaitingForChecks) {
  AddCheckedQueue({{"approval", {}}});
  Submit(GpuJob("a", "ns", 4));
  Submit(GpuJob("b", "ns", 4));
  Settle();
  ASSERT_TRUE(Set("b", "approval", CheckState::kReady).ok());
  ASSERT_EQ(StateOf("ns/b"), WorkloadState::kAdmitted);
  ASSERT_TRUE(state_.DeleteObject(ObjectKind::kLocalQueue, "ns", "q", now_).ok());
  // The admitted workload runs on; the reservation that waits goes back, without an eviction.
  EXPECT_EQ(StateOf("ns/b"), WorkloadState::kAdmitted);
  EXPECT_EQ(StateOf("ns/a"), WorkloadState::kPending);
  EXPECT_EQ(FindCondition(Wl("a").status, "Evicted"), nullptr);
  EXPECT_EQ(Wl("a").status.pending_message, "LocalQueue q doesn't exist");
  EXPECT_EQ(state_.ClusterQueueUsage("cq").front().total, 4);
}

TEST_F(AdmissionCheckLifecycleTest, AShorterDelayNeverBringsTheRequeueForward) {
  AddCheckedQueue({{"approval", {}}, {"budget", {}}});
  Submit(GpuJob("a", "ns", 4));
  Settle();
  ASSERT_TRUE(Set("a", "budget", CheckState::kRetry, "", 300).ok());
  const absl::Time requeue_at = now_ + absl::Seconds(300);
  now_ += absl::Seconds(1);
  ASSERT_TRUE(Set("a", "approval", CheckState::kRetry, "", 60).ok());
  EXPECT_EQ(Wl("a").status.history().requeue_at, requeue_at);
}

TEST_F(AdmissionCheckLifecycleTest, ALateRetryAfterTheEvictionStillCounts) {
  // KEP-3258's race: "budget" asks for a retry in 60s and the workload is evicted; "approval"
  // decided on the same reservation and asks for 300s a moment later. Kueue reset both checks
  // at the eviction and loses the second delay; here it holds the requeue back.
  AddCheckedQueue({{"approval", {}}, {"budget", {}}});
  Submit(GpuJob("a", "ns", 4));
  Settle();
  ASSERT_TRUE(Set("a", "budget", CheckState::kRetry, "", 60).ok());
  ASSERT_EQ(StateOf("ns/a"), WorkloadState::kPending);
  now_ += absl::Seconds(1);
  ASSERT_TRUE(Set("a", "approval", CheckState::kRetry, "license server down", 300).ok());
  EXPECT_EQ(Wl("a").status.history().requeue_at, now_ + absl::Seconds(300));
  EXPECT_EQ(CheckOf("a", "approval").state, CheckState::kPending);
  EXPECT_EQ(CheckOf("a", "approval").retry_count, 1);
  now_ += absl::Seconds(100);
  state_.FireTimers(now_);
  Settle();
  EXPECT_EQ(StateOf("ns/a"), WorkloadState::kPending);
  now_ += absl::Seconds(200);
  state_.FireTimers(now_);
  Settle();
  EXPECT_EQ(StateOf("ns/a"), WorkloadState::kQuotaReserved);
}

TEST_F(AdmissionCheckLifecycleTest, RejectedDeactivatesAReservationAndActivationRequeues) {
  AddCheckedQueue({{"approval", {}}});
  Submit(GpuJob("a", "ns", 4));
  Settle();
  ASSERT_TRUE(Set("a", "approval", CheckState::kRejected, "quota exceeded").ok());
  const Workload& a = Wl("a");
  EXPECT_EQ(a.status.state, WorkloadState::kPending);
  EXPECT_TRUE(a.status.deactivated);
  const Condition* evicted = FindCondition(a.status, "Evicted");
  EXPECT_EQ(evicted->reason, "DeactivatedDueToAdmissionCheck");
  EXPECT_EQ(evicted->message,
            R"(The workload is deactivated due to AdmissionCheck in Rejected state: "approval" )"
            R"((quota exceeded))");
  EXPECT_EQ(a.status.pending_message, evicted->message);
  EXPECT_EQ(CheckOf("a", "approval").message,
            "Reset to Pending after eviction. Previously: Rejected");
  const bool rejected_event =
      std::any_of(a.status.events.begin(), a.status.events.end(), [](const WorkloadEvent& e) {
        return e.reason == "AdmissionCheckRejected" &&
               e.message == R"(Deactivated due to AdmissionCheck in Rejected state: "approval" )"
                            R"((quota exceeded))";
      });
  EXPECT_TRUE(rejected_event);
  Settle();
  EXPECT_EQ(StateOf("ns/a"), WorkloadState::kPending);
  ASSERT_TRUE(state_.SetActive("ns/a", true, now_).ok());
  Settle();
  EXPECT_EQ(StateOf("ns/a"), WorkloadState::kQuotaReserved);
}

TEST_F(AdmissionCheckLifecycleTest, RejectedDeactivatesAnAdmittedWorkloadToo) {
  AddCheckedQueue({{"approval", {}}});
  Submit(GpuJob("a", "ns", 4));
  Settle();
  ASSERT_TRUE(Set("a", "approval", CheckState::kReady).ok());
  ASSERT_EQ(StateOf("ns/a"), WorkloadState::kAdmitted);
  ASSERT_TRUE(Set("a", "approval", CheckState::kRejected).ok());
  EXPECT_EQ(StateOf("ns/a"), WorkloadState::kPending);
  EXPECT_TRUE(Wl("a").status.deactivated);
}

// Kueue's workload controller acts on a Rejected check only during a reservation
// (reconcileCheckBasedEviction runs under HasQuotaReservation); its scheduler then leaves the
// workload pending for its failed checks, however much quota there is.
TEST_F(AdmissionCheckLifecycleTest, RejectedOnAPendingWorkloadHoldsItBackWithoutDeactivating) {
  AddCheckedQueue({{"approval", {}}});
  Submit(GpuJob("a", "ns", 16));  // never fits
  Settle();
  ASSERT_TRUE(Set("a", "approval", CheckState::kRejected, "not this one").ok());
  EXPECT_FALSE(Wl("a").status.deactivated);
  EXPECT_EQ(FindCondition(Wl("a").status, "Evicted"), nullptr);
  EXPECT_EQ(CheckOf("a", "approval").state, CheckState::kRejected);

  Submit(GpuJob("b", "ns", 4));
  Settle();
  EXPECT_EQ(StateOf("ns/b"), WorkloadState::kQuotaReserved);
  ASSERT_TRUE(state_.Finish("ns/b", "", now_).ok());
  Settle();  // b's quota back: a is evaluated again
  EXPECT_EQ(StateOf("ns/a"), WorkloadState::kPending);
  EXPECT_EQ(Wl("a").status.pending_message, "The workload has failed admission checks");
}

TEST_F(AdmissionCheckLifecycleTest, AnEvictionForAnyReasonStartsEveryCheckOver) {
  AddCheckedQueue({{"approval", {}}});
  Submit(GpuJob("low", "ns", 8, 0));
  Settle();
  ASSERT_TRUE(Set("low", "approval", CheckState::kReady).ok());
  ASSERT_EQ(StateOf("ns/low"), WorkloadState::kAdmitted);
  Submit(GpuJob("high", "ns", 8, 100));
  Settle();
  EXPECT_EQ(StateOf("ns/high"), WorkloadState::kQuotaReserved);
  EXPECT_EQ(StateOf("ns/low"), WorkloadState::kPending);
  EXPECT_EQ(CheckOf("low", "approval").state, CheckState::kPending);
  EXPECT_EQ(CheckOf("low", "approval").retry_count, 0);
}

TEST_F(AdmissionCheckLifecycleTest, AReservationWaitingForChecksIsAPreemptionVictim) {
  AddCheckedQueue({{"approval", {}}});
  Submit(GpuJob("low", "ns", 8, 0));
  Settle();
  ASSERT_EQ(StateOf("ns/low"), WorkloadState::kQuotaReserved);
  Submit(GpuJob("high", "ns", 8, 100));
  Settle();
  EXPECT_EQ(StateOf("ns/high"), WorkloadState::kQuotaReserved);
  EXPECT_EQ(StateOf("ns/low"), WorkloadState::kPending);
  EXPECT_EQ(Wl("low").status.history().preemption_count, 1);
}

TEST_F(AdmissionCheckLifecycleTest, AQueueNamingAMissingOrInactiveCheckIsInactive) {
  AddCheck("sleepy", "example.com/sleepy", /*active=*/false);
  AddCheckedQueue({{"sleepy", {}}, {"ghost", {}}});
  const ClusterQueueRuntime* cq = state_.cluster_queue("cq");
  EXPECT_FALSE(cq->active);
  EXPECT_EQ(cq->inactive_reason, "AdmissionCheckNotFound");
  EXPECT_EQ(cq->inactive_message,
            "Can't admit new workloads: references missing AdmissionCheck(s): ghost, references "
            "inactive AdmissionCheck(s): sleepy.");
  Submit(GpuJob("a", "ns", 4));
  Settle();
  EXPECT_EQ(StateOf("ns/a"), WorkloadState::kPending);
  EXPECT_EQ(Wl("a").status.pending_message, "ClusterQueue cq is inactive");

  AddCheck("ghost", "example.com/ghost");
  EXPECT_EQ(state_.cluster_queue("cq")->inactive_reason, "AdmissionCheckInactive");
  ASSERT_TRUE(state_.SetAdmissionCheckActive("sleepy", true, "Active", "", now_).ok());
  EXPECT_TRUE(state_.cluster_queue("cq")->active);
  Settle();
  EXPECT_EQ(StateOf("ns/a"), WorkloadState::kQuotaReserved);
}

TEST_F(AdmissionCheckLifecycleTest, DroppingTheLastCheckNotReadyAdmits) {
  AddCheckedQueue({{"approval", {}}, {"budget", {}}});
  Submit(GpuJob("a", "ns", 4));
  Settle();
  ASSERT_TRUE(Set("a", "approval", CheckState::kReady).ok());
  ClusterQueueSpec cq = state_.cluster_queue_specs().at("cq");
  cq.admission_checks = {{"approval", {}}};
  ASSERT_TRUE(state_.ApplyClusterQueue(cq, now_).ok());
  EXPECT_EQ(StateOf("ns/a"), WorkloadState::kAdmitted);
  EXPECT_THAT(CheckNamesOf("a"), ElementsAre("approval"));
  // A check added to the queue joins an admitted workload as Pending; it stays admitted.
  cq.admission_checks = {{"approval", {}}, {"budget", {}}};
  ASSERT_TRUE(state_.ApplyClusterQueue(cq, now_).ok());
  EXPECT_EQ(StateOf("ns/a"), WorkloadState::kAdmitted);
  EXPECT_EQ(CheckOf("a", "budget").state, CheckState::kPending);
}

TEST_F(AdmissionCheckLifecycleTest, AStoppedQueueCancelsReservationsThatWaitForChecks) {
  AddCheckedQueue({{"approval", {}}});
  Submit(GpuJob("a", "ns", 4));
  Submit(GpuJob("b", "ns", 4));
  Settle();
  ASSERT_TRUE(Set("b", "approval", CheckState::kReady).ok());
  ClusterQueueSpec cq = state_.cluster_queue_specs().at("cq");
  cq.stop_policy = StopPolicy::kHold;
  ASSERT_TRUE(state_.ApplyClusterQueue(cq, now_).ok());
  // Hold lets what was admitted run on; the reservation that waits goes back.
  EXPECT_EQ(StateOf("ns/b"), WorkloadState::kAdmitted);
  EXPECT_EQ(StateOf("ns/a"), WorkloadState::kPending);
  EXPECT_EQ(Wl("a").status.events.back().reason, "QuotaReservationCancelled");
  EXPECT_EQ(Wl("a").status.events.back().message, "ClusterQueue cq is stopped");
  // No eviction: nothing ran.
  EXPECT_EQ(FindCondition(Wl("a").status, "Evicted"), nullptr);
  EXPECT_EQ(Wl("a").status.pending_message, "ClusterQueue cq is inactive");
}

TEST_F(AdmissionCheckLifecycleTest, BadUpdatesAreRefusedAndChangeNothing) {
  AddCheckedQueue({{"approval", {}}, {"budget", {}}});
  WorkloadSpec spec = GpuJob("a", "ns", 4);
  spec.pod_sets[0].node_selector = {{"disk", "ssd"}};
  Submit(spec);
  Settle();
  ASSERT_TRUE(Set("a", "budget", CheckState::kPending, "", std::nullopt,
                  {PodSetUpdate{"main", {{"team", "x"}}, {}, {}, {}}})
                  .ok());
  const Workload before = Wl("a");
  struct Case {
    std::string name;
    std::string workload;
    std::string check;
    std::vector<PodSetUpdate> updates;
    absl::StatusCode code;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"unknown workload",
       "nope",
       "approval",
       {},
       absl::StatusCode::kNotFound,
       "workload ns/nope not found"},
      {"unknown check",
       "a",
       "ghost",
       {},
       absl::StatusCode::kNotFound,
       R"(check: AdmissionCheck "ghost" not found)"},
      {"unknown pod set",
       "a",
       "approval",
       {PodSetUpdate{"workers", {}, {}, {}, {}}},
       absl::StatusCode::kInvalidArgument,
       R"(podSetUpdates[0].name: "workers" is not a pod set of workload ns/a (it has: "main"))"},
      {"conflicts with another check",
       "a",
       "approval",
       {PodSetUpdate{"main", {{"team", "y"}}, {}, {}, {}}},
       absl::StatusCode::kInvalidArgument,
       R"(podSetUpdates: admission check "approval": labels "team": "y" conflicts with "x" from )"
       R"(admission check "budget")"},
      {"conflicts with the pod set",
       "a",
       "approval",
       {PodSetUpdate{"main", {}, {}, {{"disk", "hdd"}}, {}}},
       absl::StatusCode::kInvalidArgument,
       R"("hdd" conflicts with "ssd" from pod set "main")"},
  };
  for (const Case& c : cases) {
    CheckStateUpdate update;
    update.check = c.check;
    update.state = CheckState::kReady;
    update.pod_set_updates = c.updates;
    absl::Status status = state_.SetAdmissionCheckState("ns/" + c.workload, update, now_);
    EXPECT_EQ(status.code(), c.code) << c.name << ": " << status;
    EXPECT_THAT(std::string(status.message()), HasSubstr(c.message)) << c.name;
    EXPECT_EQ(Wl("a").status, before.status) << c.name;
  }
  // A check the workload's queue does not ask for.
  AddCheck("other", "example.com/other");
  absl::Status not_carried = Set("a", "other", CheckState::kReady);
  EXPECT_EQ(not_carried.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(not_carried.message(), R"(check: workload ns/a does not carry admission check )"
                                   R"("other" (it carries: "approval", "budget"))");
}

TEST_F(AdmissionCheckLifecycleTest, AReadyChecksPodSetUpdatesAreFixedWhileItStaysReady) {
  AddCheckedQueue({{"approval", {}}, {"budget", {}}});
  Submit(GpuJob("a", "ns", 4));
  Settle();
  const std::vector<PodSetUpdate> zone_a = {PodSetUpdate{"main", {}, {}, {{"zone", "a"}}, {}}};
  ASSERT_TRUE(Set("a", "approval", CheckState::kReady, "", std::nullopt, zone_a).ok());
  absl::Status changed = Set("a", "approval", CheckState::kReady, "", std::nullopt,
                             {PodSetUpdate{"main", {}, {}, {{"zone", "b"}}, {}}});
  EXPECT_EQ(changed.code(), absl::StatusCode::kInvalidArgument);
  // The same again is a no-op.
  const int64_t events = static_cast<int64_t>(Wl("a").status.events.size());
  ASSERT_TRUE(Set("a", "approval", CheckState::kReady, "", std::nullopt, zone_a).ok());
  EXPECT_EQ(static_cast<int64_t>(Wl("a").status.events.size()), events);
  ASSERT_TRUE(Set("a", "budget", CheckState::kReady).ok());
  ASSERT_OK_AND_ASSIGN(std::vector<PodSetInfo> infos, state_.PodSetInfos("ns/a"));
  EXPECT_EQ(infos[0].node_selector, (Labels{{"zone", "a"}}));
}

TEST_F(AdmissionCheckLifecycleTest, AConflictFoundAtAdmissionFailsTheWorkload) {
  AddCheckedQueue({{"approval", {}}});
  Submit(GpuJob("a", "ns", 4));
  Settle();
  ASSERT_TRUE(Set("a", "approval", CheckState::kPending, "", std::nullopt,
                  {PodSetUpdate{"main", {}, {}, {{"pool", "big"}}, {}}})
                  .ok());
  // The flavor's labels change after the update was accepted.
  ASSERT_TRUE(state_.ApplyResourceFlavor({"a100", {{"pool", "small"}}, {}, {}}, now_).ok());
  ASSERT_TRUE(Set("a", "approval", CheckState::kReady, "", std::nullopt,
                  {PodSetUpdate{"main", {}, {}, {{"pool", "big"}}, {}}})
                  .ok());
  EXPECT_EQ(StateOf("ns/a"), WorkloadState::kFinished);
  const Condition* finished = FindCondition(Wl("a").status, "Finished");
  EXPECT_EQ(finished->reason, "FailedToStart");
  EXPECT_THAT(finished->message, HasSubstr(R"("big" conflicts with "small")"));
  EXPECT_TRUE(state_.ClusterQueueUsage("cq").front().total == 0);
}

TEST_F(AdmissionCheckLifecycleTest, PodsReadyTimeoutCountsFromAdmissionNotReservation) {
  SchedulerConfig config;
  config.wait_for_pods_ready.enable = true;
  config.wait_for_pods_ready.timeout = absl::Minutes(5);
  ClusterState state(config);
  ASSERT_TRUE(state.ApplyResourceFlavor({"a100", {}, {}, {}}, now_).ok());
  ASSERT_TRUE(
      state.ApplyAdmissionCheck({"approval", "example.com/approval", std::nullopt}, now_).ok());
  ASSERT_TRUE(state.SetAdmissionCheckActive("approval", true, "", "", now_).ok());
  ClusterQueueSpec cq = GpuQueue("cq", "", 8);
  cq.admission_checks = {{"approval", {}}};
  ASSERT_TRUE(state.ApplyClusterQueue(cq, now_).ok());
  ASSERT_TRUE(state.ApplyLocalQueue({"ns", "q", "cq", StopPolicy::kNone, 1.0}, now_).ok());
  ASSERT_TRUE(state.Submit(GpuJob("a", "ns", 4), "", now_).ok());
  state.ApplyCycle(state.PlanCycle(now_), now_);
  ASSERT_EQ(state.FindWorkload("ns/a")->status.state, WorkloadState::kQuotaReserved);
  now_ += absl::Minutes(10);
  state.FireTimers(now_);
  ASSERT_TRUE(state
                  .SetAdmissionCheckState(
                      "ns/a", {"approval", CheckState::kReady, "", {}, {}, {}, {}, {}, {}}, now_)
                  .ok());
  ASSERT_EQ(state.FindWorkload("ns/a")->status.state, WorkloadState::kAdmitted);
  now_ += absl::Minutes(4);
  state.FireTimers(now_);
  EXPECT_EQ(state.FindWorkload("ns/a")->status.state, WorkloadState::kAdmitted);
  now_ += absl::Minutes(1);
  state.FireTimers(now_);
  EXPECT_EQ(FindCondition(state.FindWorkload("ns/a")->status, "Evicted")->reason,
            "PodsReadyTimeout");
}

TEST_F(AdmissionCheckLifecycleTest, ACheckInUseTerminatesUntilNoQueueNamesIt) {
  AddCheckedQueue({{"approval", {}}});
  ASSERT_TRUE(state_.DeleteObject(ObjectKind::kAdmissionCheck, "", "approval", now_).ok());
  EXPECT_TRUE(Terminating(ObjectKind::kAdmissionCheck, "", "approval"));
  // Kueue's finalizer keeps a deleted check working while a queue names it.
  EXPECT_TRUE(state_.cluster_queue("cq")->active);
  EXPECT_TRUE(state_.TakeFinalizedObjects(now_).empty());
  ClusterQueueSpec cq = state_.cluster_queue_specs().at("cq");
  cq.admission_checks.clear();
  ASSERT_TRUE(state_.ApplyClusterQueue(cq, now_).ok());
  std::vector<ObjectName> finalized = state_.TakeFinalizedObjects(now_);
  ASSERT_EQ(finalized.size(), 1u);
  EXPECT_EQ(finalized[0].ToString(), "AdmissionCheck approval");
  EXPECT_EQ(state_.admission_checks().count("approval"), 0u);
  // Unused, it goes at once.
  ASSERT_TRUE(state_.DeleteObject(ObjectKind::kAdmissionCheck, "", "budget", now_).ok());
  EXPECT_EQ(state_.admission_checks().count("budget"), 0u);
}

TEST_F(AdmissionCheckLifecycleTest, ControllerNameIsImmutableAndTheActiveConditionSurvivesApply) {
  absl::Status changed =
      state_.ApplyAdmissionCheck({"approval", "example.com/other", std::nullopt}, now_);
  EXPECT_EQ(changed.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(changed.message()), HasSubstr("spec.controllerName"));
  AdmissionCheckSpec with_parameters{"approval", "example.com/approval",
                                     AdmissionCheckParameters{"example.com", "Policy", "p"}};
  ASSERT_TRUE(state_.ApplyAdmissionCheck(with_parameters, now_).ok());
  EXPECT_TRUE(state_.admission_checks().at("approval").IsActive());
  EXPECT_EQ(state_.admission_checks().at("approval").spec, with_parameters);
}

TEST_F(AdmissionCheckLifecycleTest, RestoreKeepsReservationsAndCheckStates) {
  AddCheckedQueue({{"approval", {}}, {"budget", {}}});
  Submit(GpuJob("a", "ns", 4));
  Settle();
  ASSERT_TRUE(Set("a", "approval", CheckState::kReady, "ok", std::nullopt,
                  {PodSetUpdate{"main", {{"x", "y"}}, {}, {}, {}}})
                  .ok());
  const Workload before = Wl("a");

  ClusterState restored{SchedulerConfig{}};
  ASSERT_TRUE(restored.ApplyResourceFlavor({"a100", {}, {}, {}}, now_).ok());
  for (const auto& [name, check] : state_.admission_checks()) {
    ASSERT_TRUE(restored.ApplyAdmissionCheck(check.spec, now_).ok());
    ASSERT_TRUE(restored.RestoreAdmissionCheckActive(name, *check.active, now_).ok());
  }
  ASSERT_TRUE(restored.ApplyClusterQueue(state_.cluster_queue_specs().at("cq"), now_).ok());
  ASSERT_TRUE(restored.ApplyLocalQueue({"ns", "q", "cq", StopPolicy::kNone, 1.0}, now_).ok());
  Workload copy = before;
  copy.id = 0;
  copy.quota_usage.clear();
  ASSERT_TRUE(restored.Restore(std::move(copy)).ok());
  const Workload& after = *restored.FindWorkload("ns/a");
  EXPECT_EQ(after.status, before.status);
  EXPECT_EQ(restored.ClusterQueueUsage("cq").front().total, 4);
  EXPECT_TRUE(restored.cluster_queue("cq")->active);
  ASSERT_TRUE(restored
                  .SetAdmissionCheckState(
                      "ns/a", {"budget", CheckState::kReady, "", {}, {}, {}, {}, {}, {}}, now_)
                  .ok());
  EXPECT_EQ(restored.FindWorkload("ns/a")->status.state, WorkloadState::kAdmitted);
}

// MultiKueue's winner and nominees, recorded with the check's state (docs/multicluster.md).
class MultiKueueDispatchStateTest : public AdmissionCheckLifecycleTest {
 protected:
  MultiKueueDispatchStateTest() {
    AddCheck("mk", std::string(kMultiKueueControllerName));
    AddCheckedQueue({{"mk", {}}});
    Submit(GpuJob("a", "ns", 4));
    Settle();
  }

  absl::Status Dispatch(CheckState s, std::string message, std::optional<std::string> cluster_name,
                        std::optional<std::vector<std::string>> nominated) {
    CheckStateUpdate update;
    update.check = "mk";
    update.state = s;
    update.message = std::move(message);
    update.cluster_name = std::move(cluster_name);
    update.nominated_cluster_names = std::move(nominated);
    return state_.SetAdmissionCheckState("ns/a", std::move(update), now_);
  }
};

TEST_F(MultiKueueDispatchStateTest, TheWinnerIsANomineeSetOnceAndClearsTheNominees) {
  ASSERT_EQ(StateOf("ns/a"), WorkloadState::kQuotaReserved);
  ASSERT_OK(Dispatch(CheckState::kPending, "", std::nullopt, std::vector<std::string>{"w1", "w2"}));
  EXPECT_THAT(Wl("a").status.history().nominated_cluster_names, ElementsAre("w1", "w2"));

  // Not a nominee: refused, nothing changes.
  absl::Status outsider =
      Dispatch(CheckState::kReady, "The workload was admitted on \"w9\"", "w9", std::nullopt);
  EXPECT_EQ(outsider.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(outsider.message(), HasSubstr("cluster_name: \"w9\" is not one of"));
  EXPECT_EQ(StateOf("ns/a"), WorkloadState::kQuotaReserved);

  ASSERT_OK(
      Dispatch(CheckState::kReady, "The workload was admitted on \"w2\"", "w2", std::nullopt));
  EXPECT_EQ(StateOf("ns/a"), WorkloadState::kAdmitted);
  EXPECT_EQ(Wl("a").status.history().cluster_name, "w2");
  EXPECT_TRUE(Wl("a").status.history().nominated_cluster_names.empty());

  // Never moved to another worker, and no nominees once it won.
  absl::Status moved =
      Dispatch(CheckState::kReady, "The workload was admitted on \"w1\"", "w1", std::nullopt);
  EXPECT_EQ(moved.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(moved.message(), HasSubstr("was admitted on \"w2\" and cannot move to \"w1\""));
  absl::Status nominees = Dispatch(CheckState::kReady, "The workload was admitted on \"w2\"",
                                   std::nullopt, std::vector<std::string>{"w1"});
  EXPECT_EQ(nominees.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(Wl("a").status.history().cluster_name, "w2");
  // The same winner again changes nothing.
  ASSERT_OK(
      Dispatch(CheckState::kReady, "The workload was admitted on \"w2\"", "w2", std::nullopt));
}

// Each nomination that adds workers records which, and the winner is recorded too: describe
// shows them and tollgated's multikueue_workloads_* metrics count them.
TEST_F(MultiKueueDispatchStateTest, NominationsAndTheWinnerAreRecordedAsEvents) {
  auto dispatch_events = [&] {
    std::vector<std::pair<std::string, std::string>> out;
    for (const WorkloadEvent& e : Wl("a").status.events) {
      if (absl::StartsWith(e.reason, "MultiKueue")) out.emplace_back(e.reason, e.message);
    }
    return out;
  };
  ASSERT_OK(Dispatch(CheckState::kPending, "", std::nullopt, std::vector<std::string>{"w1"}));
  // The same nominees again, and a shrinking list, add no event.
  ASSERT_OK(Dispatch(CheckState::kPending, "", std::nullopt, std::vector<std::string>{"w1"}));
  ASSERT_OK(
      Dispatch(CheckState::kPending, "", std::nullopt, std::vector<std::string>{"w1", "w2", "w3"}));
  ASSERT_OK(Dispatch(CheckState::kPending, "", std::nullopt, std::vector<std::string>{"w3"}));
  ASSERT_OK(Dispatch(CheckState::kReady, "admitted", "w3", std::nullopt));
  EXPECT_THAT(dispatch_events(),
              ElementsAre(Pair("MultiKueueNominated", "nominated worker clusters: w1"),
                          Pair("MultiKueueNominated", "nominated worker clusters: w2, w3"),
                          Pair("MultiKueueAdmitted", "admitted on worker cluster \"w3\"")));
  EXPECT_THAT(NominatedClustersOf(NominatedEventMessage({"w2", "w3"})), ElementsAre("w2", "w3"));
  EXPECT_THAT(NominatedClustersOf("admitted on worker cluster \"w3\""), IsEmpty());
}

TEST_F(MultiKueueDispatchStateTest, AnEvictionClearsTheWinnerForTheNextDispatch) {
  ASSERT_OK(Dispatch(CheckState::kPending, "", std::nullopt, std::vector<std::string>{"w1"}));
  CheckStateUpdate ready;
  ready.check = "mk";
  ready.state = CheckState::kReady;
  ready.message = "admitted";
  ready.cluster_name = "w1";
  WorkloadPayload running;
  running.content_type = "application/json";
  running.api_version = "batch/v1";
  running.kind = "Job";
  running.data = R"({"status":{"active":1}})";
  ready.job_status = running;
  ASSERT_OK(state_.SetAdmissionCheckState("ns/a", std::move(ready), now_));
  ASSERT_EQ(Wl("a").status.history().cluster_name, "w1");
  ASSERT_TRUE(Wl("a").status.history().job_status.has_value());
  ASSERT_OK(Set("a", "mk", CheckState::kRetry, "Admitting remote lost"));
  EXPECT_NE(StateOf("ns/a"), WorkloadState::kAdmitted);
  EXPECT_TRUE(Wl("a").status.history().cluster_name.empty());
  EXPECT_TRUE(Wl("a").status.history().nominated_cluster_names.empty());
  // The winner's job status described the remote job of that admission, now gone.
  EXPECT_FALSE(Wl("a").status.history().job_status.has_value());
}

TEST_F(MultiKueueDispatchStateTest, OnlyAWorkloadWithQuotaRecordsThemAndReadyRecordsTheWinner) {
  CheckStateUpdate update;
  update.check = "mk";
  update.state = CheckState::kPending;
  update.nominated_cluster_names = std::vector<std::string>{"w1"};
  Submit(GpuJob("b", "ns", 8));  // no room: stays pending
  Settle();
  absl::Status pending = state_.SetAdmissionCheckState("ns/b", update, now_);
  EXPECT_EQ(pending.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(pending.message(), HasSubstr("holds no quota"));
  // A Ready state is what records a winner.
  ASSERT_OK(Dispatch(CheckState::kPending, "", std::nullopt, std::vector<std::string>{"w1"}));
  absl::Status not_ready = Dispatch(CheckState::kPending, "", "w1", std::nullopt);
  EXPECT_EQ(not_ready.code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tollgate::core
