#include "core/unreserved_conditions.h"

#include <optional>
#include <string>
#include <utility>

#include "core/admission_gates.h"
#include "core/cluster_state.h"
#include "gtest/gtest.h"

// Kueue 0.19's Admitted condition for a workload without quota (UnadmittedWorkloadsObservability,
// on by default): pkg/workload/admissionchecks.go SyncAdmittedCondition, called after each
// QuotaReserved write (UnsetQuotaReservationWithCondition, the workload controller's reconcile of
// an unadmitted workload).

namespace tollgate::core {
namespace {

const absl::Time kStart = absl::FromUnixSeconds(1767225600);

TEST(UnreservedConditionsTest, WritesQuotaReservedThenAdmittedFalse) {
  WorkloadStatus status;
  SetUnreservedConditions(status, "WaitingForQuota", "insufficient quota", kStart);
  ASSERT_EQ(status.conditions.size(), 2u);
  EXPECT_EQ(status.conditions[0],
            (Condition{"QuotaReserved", false, "WaitingForQuota", "insufficient quota", kStart}));
  EXPECT_EQ(status.conditions[1], (Condition{"Admitted", false, "NoReservation",
                                             "The workload has no reservation", kStart}));
  // Still without a reservation later: the Admitted condition keeps its transition time.
  SetUnreservedConditions(status, "Deactivated", "The workload is deactivated",
                          kStart + absl::Seconds(5));
  EXPECT_EQ(FindCondition(status, "Admitted")->last_transition_time, kStart);
}

// Kueue's workload controller evicts a deactivated workload without quota (Evicted=True with the
// deactivation's reason), unless an eviction is still in force, and names its state with the
// plain message whatever the cause.
TEST(UnreservedConditionsTest, DeactivatedWithoutQuotaIsEvictedUnlessAlreadyEvicted) {
  WorkloadStatus fresh;
  SetDeactivatedUnreservedConditions(fresh, "DeactivatedDueToAdmissionCheck",
                                     "The workload is deactivated due to rejected", kStart);
  EXPECT_EQ(*FindCondition(fresh, "Evicted"),
            (Condition{"Evicted", true, "DeactivatedDueToAdmissionCheck",
                       "The workload is deactivated due to rejected", kStart}));
  EXPECT_EQ(
      *FindCondition(fresh, "QuotaReserved"),
      (Condition{"QuotaReserved", false, "Deactivated", "The workload is deactivated", kStart}));
  EXPECT_EQ(FindCondition(fresh, "Admitted")->reason, "NoReservation");

  WorkloadStatus timed_out;
  SetCondition(timed_out, Condition{"Evicted", true, "PodsReadyTimeout",
                                    "Exceeded the PodsReady timeout", kStart});
  SetDeactivatedUnreservedConditions(timed_out, "Deactivated", "The workload is deactivated",
                                     kStart + absl::Seconds(1));
  EXPECT_EQ(FindCondition(timed_out, "Evicted")->reason, "PodsReadyTimeout");
  EXPECT_EQ(FindCondition(timed_out, "QuotaReserved")->reason, "Deactivated");

  // An eviction that is over (readmitted since) does not count.
  WorkloadStatus readmitted;
  SetCondition(readmitted, Condition{"Evicted", false, "QuotaReserved", "Previously: x", kStart});
  SetDeactivatedUnreservedConditions(readmitted, "Deactivated", "The workload is deactivated",
                                     kStart);
  EXPECT_TRUE(FindCondition(readmitted, "Evicted")->status);
  EXPECT_EQ(FindCondition(readmitted, "Evicted")->reason, "Deactivated");
}

class NoReservationTest : public ::testing::Test {
 protected:
  NoReservationTest() : state_(SchedulerConfig{}) {
    EXPECT_TRUE(state_.ApplyResourceFlavor({"default", {}, {}, {}}, now_).ok());
    ClusterQueueSpec cq;
    cq.name = "cq";
    cq.resource_groups = {{{"cpu"}, {{"default", {{"cpu", 2, std::nullopt, std::nullopt}}}}}};
    EXPECT_TRUE(state_.ApplyClusterQueue(cq, now_).ok());
    EXPECT_TRUE(state_.ApplyLocalQueue({"ns", "q", "cq", StopPolicy::kNone, 1.0}, now_).ok());
  }

  void Submit(std::string name, int32_t cpus, std::optional<std::string> gates = {}) {
    WorkloadSpec spec;
    spec.name = std::move(name);
    spec.namespace_name = "ns";
    spec.queue_name = "q";
    spec.pod_sets = {PodSetSpec{"main", cpus, std::nullopt, {{"cpu", 1}}, {}, {}}};
    if (gates.has_value()) {
      spec.metadata.mutable_value().annotations[std::string(kAdmissionGatedByAnnotation)] = *gates;
    }
    now_ += absl::Milliseconds(1);
    ASSERT_TRUE(state_.Submit(std::move(spec), "", now_).ok());
  }

  void Settle() {
    while (true) {
      CyclePlan plan = state_.PlanCycle(now_);
      state_.ApplyCycle(plan, now_);
      if (!plan.MadeProgress()) return;
    }
  }

  // "Status/Reason/Message" of the workload's Admitted condition, "none" without one.
  std::string Admitted(const std::string& name) {
    const Condition* c = FindCondition(state_.FindWorkload("ns/" + name)->status, "Admitted");
    if (c == nullptr) return "none";
    return std::string(c->status ? "True" : "False") + "/" + c->reason + "/" + c->message;
  }

  absl::Time now_ = kStart;
  ClusterState state_;
};

constexpr char kNoReservation[] = "False/NoReservation/The workload has no reservation";

// A new workload has no conditions until something writes its QuotaReserved condition (Kueue's
// UnadmittedWorkloadsExplicitStatus is off); a cycle that leaves it pending writes both.
TEST_F(NoReservationTest, AWorkloadThatNeverHeldQuotaIsNotAdmittedForWantOfAReservation) {
  ASSERT_NO_FATAL_FAILURE(Submit("runs", 2));
  ASSERT_NO_FATAL_FAILURE(Submit("waits", 1));
  EXPECT_EQ(Admitted("waits"), "none");
  Settle();
  EXPECT_EQ(Admitted("runs"), "True/Admitted/The workload is admitted");
  EXPECT_EQ(state_.FindWorkload("ns/waits")->status.state, WorkloadState::kPending);
  EXPECT_EQ(Admitted("waits"), kNoReservation);
  // Its QuotaReserved condition comes first, as Kueue writes them.
  const std::vector<Condition>& conditions = state_.FindWorkload("ns/waits")->status.conditions;
  ASSERT_GE(conditions.size(), 2u);
  EXPECT_EQ(conditions[0].type, "QuotaReserved");
  EXPECT_EQ(conditions[1].type, "Admitted");

  ASSERT_TRUE(state_.Finish("ns/runs", "done", now_).ok());
  Settle();
  EXPECT_EQ(Admitted("waits"), "True/Admitted/The workload is admitted");
}

TEST_F(NoReservationTest, GatedDeactivatedAndHeldWorkloadsHaveNoReservation) {
  ASSERT_NO_FATAL_FAILURE(Submit("gated", 1, "example.com/gate"));
  ASSERT_NO_FATAL_FAILURE(Submit("deactivated", 1));
  ASSERT_NO_FATAL_FAILURE(Submit("held", 1));
  ASSERT_TRUE(state_.SetActive("ns/deactivated", false, now_).ok());
  ASSERT_TRUE(state_.SetOnHold("ns/held", true, "", now_).ok());
  for (const char* name : {"gated", "deactivated", "held"}) {
    EXPECT_EQ(Admitted(name), kNoReservation) << name;
  }
}

// Evicted (here preempted): Admitted goes from True to False once the quota is released (at once
// here: no eviction waits for the adapter), with Kueue's message.
TEST_F(NoReservationTest, AnEvictedWorkloadLosesItsAdmissionWhenItsQuotaIsReleased) {
  ASSERT_NO_FATAL_FAILURE(Submit("runs", 2));
  Settle();
  EXPECT_EQ(Admitted("runs"), "True/Admitted/The workload is admitted");
  now_ += absl::Seconds(3);
  ASSERT_TRUE(state_.Preempt("ns/runs", "make room", now_).ok());
  EXPECT_EQ(state_.FindWorkload("ns/runs")->status.state, WorkloadState::kPending);
  EXPECT_EQ(Admitted("runs"), kNoReservation);
  EXPECT_EQ(FindCondition(state_.FindWorkload("ns/runs")->status, "Admitted")->last_transition_time,
            now_);
}

// Put on hold while admitted (a StatefulSet scaled to zero): the reservation goes at once.
TEST_F(NoReservationTest, HoldingAnAdmittedWorkloadLeavesItWithoutAReservation) {
  ASSERT_NO_FATAL_FAILURE(Submit("runs", 2));
  Settle();
  ASSERT_TRUE(state_.SetOnHold("ns/runs", true, "scaled to zero", now_).ok());
  EXPECT_EQ(Admitted("runs"), kNoReservation);
}

}  // namespace
}  // namespace tollgate::core
