// Kueue's spec.maximumExecutionTimeSeconds, enforced by ClusterState on the injected clock:
// deactivation at the limit, time accumulated across evictions, a fresh limit after activation,
// and the timer re-armed after a restart.
#include <memory>
#include <string>
#include <vector>

#include "core/cluster_state.h"
#include "gtest/gtest.h"

namespace tollgate::core {
namespace {

const absl::Time kStart = absl::FromUnixSeconds(1767225600);

class MaximumExecutionTimeTest : public ::testing::Test {
 protected:
  MaximumExecutionTimeTest() : state_(SchedulerConfig{}) {
    EXPECT_TRUE(state_.ApplyResourceFlavor({"default", {}, {}, {}}, now_).ok());
    ClusterQueueSpec cq;
    cq.name = "cq";
    cq.resource_groups = {{{"cpu"}, {{"default", {{"cpu", 4, std::nullopt, std::nullopt}}}}}};
    EXPECT_TRUE(state_.ApplyClusterQueue(cq, now_).ok());
    EXPECT_TRUE(state_.ApplyLocalQueue({"ns", "q", "cq", StopPolicy::kNone, 1.0}, now_).ok());
  }

  static WorkloadSpec Job(std::string name, std::optional<int32_t> max_seconds) {
    WorkloadSpec spec;
    spec.name = std::move(name);
    spec.namespace_name = "ns";
    spec.queue_name = "q";
    spec.pod_sets = {PodSetSpec{"main", 1, std::nullopt, {{"cpu", 4}}, {}, {}}};
    spec.maximum_execution_time_seconds = max_seconds;
    return spec;
  }

  void Settle() {
    while (true) {
      CyclePlan plan = state_.PlanCycle(now_);
      state_.ApplyCycle(plan, now_);
      if (!plan.MadeProgress()) return;
    }
  }

  // Moves the clock as the executor does: to each due timer in turn, then to `to`.
  void AdvanceTo(absl::Time to) {
    while (true) {
      std::optional<absl::Time> next = state_.NextTimer();
      if (!next.has_value() || *next > to) break;
      now_ = std::max(now_, *next);
      state_.FireTimers(now_);
      Settle();
    }
    now_ = to;
    state_.FireTimers(now_);
    Settle();
  }

  const Workload& Get(const std::string& name) { return *state_.FindWorkload("ns/" + name); }

  // A restart at `at`: `restarted` gets the same objects and `stored`, as read back from the
  // store.
  void Restart(ClusterState& restarted, std::unique_ptr<Workload> stored, absl::Time at) {
    ASSERT_TRUE(restarted.ApplyResourceFlavor({"default", {}, {}, {}}, at).ok());
    ASSERT_TRUE(restarted.ApplyClusterQueue(state_.cluster_queue_specs().at("cq"), at).ok());
    ASSERT_TRUE(restarted.ApplyLocalQueue({"ns", "q", "cq", StopPolicy::kNone, 1.0}, at).ok());
    std::vector<std::unique_ptr<Workload>> workloads;
    workloads.push_back(std::move(stored));
    ASSERT_TRUE(restarted.RestoreAll(std::move(workloads)).ok());
  }

  bool HasEvent(const Workload& wl, const std::string& reason) {
    for (const WorkloadEvent& e : wl.status.events) {
      if (e.reason == reason) return true;
    }
    return false;
  }

  absl::Time now_ = kStart;
  ClusterState state_;
};

TEST_F(MaximumExecutionTimeTest, DeactivatesAndEvictsAtTheLimitAndFreesTheQuota) {
  ASSERT_TRUE(state_.Submit(Job("w", 600), "", now_).ok());
  ASSERT_TRUE(state_.Submit(Job("waiter", std::nullopt), "", now_).ok());
  Settle();
  ASSERT_EQ(Get("w").status.state, WorkloadState::kAdmitted);
  EXPECT_EQ(state_.NextTimer(), kStart + absl::Seconds(600));

  AdvanceTo(kStart + absl::Seconds(599));
  EXPECT_EQ(Get("w").status.state, WorkloadState::kAdmitted);

  AdvanceTo(kStart + absl::Seconds(600));
  const Workload& w = Get("w");
  EXPECT_EQ(w.status.state, WorkloadState::kPending);
  EXPECT_TRUE(w.status.deactivated);
  EXPECT_TRUE(HasEvent(w, "MaximumExecutionTimeExceeded"));
  EXPECT_TRUE(HasEvent(w, "EvictedDueToDeactivatedDueToMaximumExecutionTimeExceeded"));
  EXPECT_EQ(w.status.pending_message,
            "The workload is deactivated due to exceeding the maximum execution time");
  EXPECT_EQ(w.status.history().past_execution, absl::ZeroDuration());
  EXPECT_EQ(w.status.history().preemption_count, 0);
  EXPECT_EQ(Get("waiter").status.state, WorkloadState::kAdmitted);

  // It stays out until activated.
  ASSERT_TRUE(state_.Finish("ns/waiter", "", now_).ok());
  AdvanceTo(now_ + absl::Hours(1));
  EXPECT_EQ(Get("w").status.state, WorkloadState::kPending);
}

TEST_F(MaximumExecutionTimeTest, AWorkloadWithoutALimitRunsOn) {
  ASSERT_TRUE(state_.Submit(Job("w", std::nullopt), "", now_).ok());
  Settle();
  EXPECT_EQ(state_.NextTimer(), std::nullopt);
  AdvanceTo(kStart + absl::Hours(24 * 30));
  EXPECT_EQ(Get("w").status.state, WorkloadState::kAdmitted);
}

TEST_F(MaximumExecutionTimeTest, TimeAdmittedBeforeAnEvictionCountsAgainstTheLimit) {
  ASSERT_TRUE(state_.Submit(Job("w", 600), "", now_).ok());
  Settle();
  AdvanceTo(kStart + absl::Minutes(4));
  ASSERT_TRUE(state_.Evict("ns/w", "Operator", "drained", now_).ok());
  ASSERT_EQ(Get("w").status.state, WorkloadState::kPending);
  EXPECT_EQ(Get("w").status.history().past_execution, absl::Minutes(4));

  // Admitted again an hour later: 6 minutes of the limit are left.
  ASSERT_TRUE(state_.SetActive("ns/w", false, now_).ok());
  AdvanceTo(now_ + absl::Hours(1));
  ASSERT_TRUE(state_.SetActive("ns/w", true, now_).ok());
  Settle();
  const absl::Time readmitted = now_;
  ASSERT_EQ(Get("w").status.state, WorkloadState::kAdmitted);
  EXPECT_EQ(ExecutionDeadline(Get("w")), readmitted + absl::Minutes(6));

  // The old timer (t0 + 10 m) is stale: nothing happens then.
  AdvanceTo(readmitted + absl::Minutes(6) - absl::Seconds(1));
  EXPECT_EQ(Get("w").status.state, WorkloadState::kAdmitted);
  AdvanceTo(readmitted + absl::Minutes(6));
  EXPECT_EQ(Get("w").status.state, WorkloadState::kPending);
  EXPECT_TRUE(Get("w").status.deactivated);
}

TEST_F(MaximumExecutionTimeTest, ActivationGivesTheWholeLimitAgain) {
  ASSERT_TRUE(state_.Submit(Job("w", 60), "", now_).ok());
  Settle();
  AdvanceTo(kStart + absl::Minutes(2));
  ASSERT_TRUE(Get("w").status.deactivated);
  ASSERT_TRUE(state_.SetActive("ns/w", true, now_).ok());
  Settle();
  ASSERT_EQ(Get("w").status.state, WorkloadState::kAdmitted);
  EXPECT_EQ(ExecutionDeadline(Get("w")), now_ + absl::Seconds(60));
}

TEST_F(MaximumExecutionTimeTest, ARestoredAdmittedWorkloadKeepsItsDeadline) {
  ASSERT_TRUE(state_.Submit(Job("w", 600), "", now_).ok());
  Settle();
  auto copy = std::make_unique<Workload>(Get("w"));

  // A restart: the same objects, the workload read back from the store.
  ClusterState restarted{SchedulerConfig{}};
  ASSERT_NO_FATAL_FAILURE(Restart(restarted, std::move(copy), kStart + absl::Minutes(3)));
  EXPECT_EQ(restarted.NextTimer(), kStart + absl::Seconds(600));
  restarted.FireTimers(kStart + absl::Seconds(600));
  const Workload* w = restarted.FindWorkload("ns/w");
  EXPECT_EQ(w->status.state, WorkloadState::kPending);
  EXPECT_TRUE(w->status.deactivated);
}

TEST_F(MaximumExecutionTimeTest, AccumulatesWholeSecondsAsKueue) {
  ASSERT_TRUE(state_.Submit(Job("w", 600), "", now_).ok());
  Settle();
  AdvanceTo(kStart + absl::Milliseconds(90'900));
  ASSERT_TRUE(state_.Evict("ns/w", "Operator", "drained", now_).ok());
  EXPECT_EQ(Get("w").status.history().past_execution, absl::Seconds(90));
  Settle();
  ASSERT_EQ(Get("w").status.state, WorkloadState::kAdmitted);
  AdvanceTo(now_ + absl::Milliseconds(30'700));
  ASSERT_TRUE(state_.Evict("ns/w", "Operator", "drained", now_).ok());
  EXPECT_EQ(Get("w").status.history().past_execution, absl::Seconds(120));
}

// The stored accumulated time (status.accumulatedPastExexcutionTimeSeconds) read back after a
// restart: the restored admission's deadline still counts the earlier admission.
TEST_F(MaximumExecutionTimeTest, ARestoredWorkloadKeepsItsEarlierAdmissionsTime) {
  ASSERT_TRUE(state_.Submit(Job("w", 600), "", now_).ok());
  Settle();
  AdvanceTo(kStart + absl::Minutes(4));
  ASSERT_TRUE(state_.Evict("ns/w", "Operator", "drained", now_).ok());
  Settle();
  const absl::Time readmitted = now_;
  ASSERT_EQ(Get("w").status.state, WorkloadState::kAdmitted);
  ASSERT_EQ(ExecutionDeadline(Get("w")), readmitted + absl::Minutes(6));
  auto copy = std::make_unique<Workload>(Get("w"));

  ClusterState restarted{SchedulerConfig{}};
  ASSERT_NO_FATAL_FAILURE(Restart(restarted, std::move(copy), readmitted + absl::Minutes(1)));
  EXPECT_EQ(restarted.NextTimer(), readmitted + absl::Minutes(6));
  restarted.FireTimers(readmitted + absl::Minutes(6) - absl::Seconds(1));
  EXPECT_EQ(restarted.FindWorkload("ns/w")->status.state, WorkloadState::kAdmitted);
  restarted.FireTimers(readmitted + absl::Minutes(6));
  EXPECT_EQ(restarted.FindWorkload("ns/w")->status.state, WorkloadState::kPending);
  EXPECT_TRUE(restarted.FindWorkload("ns/w")->status.deactivated);
}

}  // namespace
}  // namespace tollgate::core
