// Kueue's objectRetentionPolicies.workloads.afterFinished, enforced by ClusterState on the
// injected clock: a finished workload is deleted once its Finished condition is that old (at once
// for zero), whatever finished it; without the policy it stays; after a restart the stored
// Finished condition still counts.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/cluster_state.h"
#include "gtest/gtest.h"

namespace tollgate::core {
namespace {

const absl::Time kStart = absl::FromUnixSeconds(1767225600);

SchedulerConfig WithRetention(std::optional<absl::Duration> after_finished) {
  SchedulerConfig config;
  config.finished_workload_retention = after_finished;
  return config;
}

class FinishedRetentionTest : public ::testing::Test {
 protected:
  void SetUpState(ClusterState& state, absl::Time at) {
    ASSERT_TRUE(state.ApplyResourceFlavor({"default", {}, {}, {}}, at).ok());
    ClusterQueueSpec cq;
    cq.name = "cq";
    cq.resource_groups = {{{"cpu"}, {{"default", {{"cpu", 4, std::nullopt, std::nullopt}}}}}};
    ASSERT_TRUE(state.ApplyClusterQueue(cq, at).ok());
    ASSERT_TRUE(state.ApplyLocalQueue({"ns", "q", "cq", StopPolicy::kNone, 1.0}, at).ok());
  }

  static WorkloadSpec Job(std::string name) {
    WorkloadSpec spec;
    spec.name = std::move(name);
    spec.namespace_name = "ns";
    spec.queue_name = "q";
    spec.pod_sets = {PodSetSpec{"main", 1, std::nullopt, {{"cpu", 4}}, {}, {}}};
    return spec;
  }

  void Settle(ClusterState& state) {
    while (true) {
      CyclePlan plan = state.PlanCycle(now_);
      state.ApplyCycle(plan, now_);
      if (!plan.MadeProgress()) return;
    }
  }

  // Moves the clock as the executor does: to each due timer in turn, then to `to`.
  void AdvanceTo(ClusterState& state, absl::Time to) {
    while (true) {
      std::optional<absl::Time> next = state.NextTimer();
      if (!next.has_value() || *next > to) break;
      now_ = std::max(now_, *next);
      state.FireTimers(now_);
      Settle(state);
    }
    now_ = to;
    state.FireTimers(now_);
    Settle(state);
  }

  // Submits, admits and finishes `name` at now_.
  void RunAndFinish(ClusterState& state, const std::string& name) {
    ASSERT_TRUE(state.Submit(Job(name), "", now_).ok());
    Settle(state);
    ASSERT_EQ(state.FindWorkload("ns/" + name)->status.state, WorkloadState::kAdmitted);
    ASSERT_TRUE(state.Finish("ns/" + name, "done", now_).ok());
  }

  absl::Time now_ = kStart;
};

TEST_F(FinishedRetentionTest, DeletedOnceFinishedForTheRetention) {
  ClusterState state(WithRetention(absl::Minutes(10)));
  SetUpState(state, now_);
  RunAndFinish(state, "w");
  state.TakeDirtyWorkloads();
  EXPECT_EQ(state.NextTimer(), kStart + absl::Minutes(10));

  AdvanceTo(state, kStart + absl::Minutes(10) - absl::Milliseconds(1));
  ASSERT_NE(state.FindWorkload("ns/w"), nullptr);
  EXPECT_TRUE(state.TakeDeletedWorkloads().empty());

  AdvanceTo(state, kStart + absl::Minutes(10));
  EXPECT_EQ(state.FindWorkload("ns/w"), nullptr);
  // The executor persists it as any deletion: the store key goes and watchers get DELETED.
  const std::vector<WorkloadKey> deleted = state.TakeDeletedWorkloads();
  ASSERT_EQ(deleted.size(), 1u);
  EXPECT_EQ(deleted[0].ToString(), "ns/w");
  EXPECT_EQ(state.NextTimer(), std::nullopt);
}

TEST_F(FinishedRetentionTest, ZeroDeletesAtTheNextTimerRoundAtTheSameTime) {
  ClusterState state(WithRetention(absl::ZeroDuration()));
  SetUpState(state, now_);
  RunAndFinish(state, "w");
  ASSERT_NE(state.FindWorkload("ns/w"), nullptr);
  EXPECT_EQ(state.NextTimer(), now_);
  EXPECT_TRUE(state.FireTimers(now_));
  EXPECT_EQ(state.FindWorkload("ns/w"), nullptr);
}

TEST_F(FinishedRetentionTest, WithoutThePolicyFinishedWorkloadsStay) {
  ClusterState state(WithRetention(std::nullopt));
  SetUpState(state, now_);
  RunAndFinish(state, "w");
  EXPECT_EQ(state.NextTimer(), std::nullopt);
  AdvanceTo(state, kStart + absl::Hours(24 * 365));
  ASSERT_NE(state.FindWorkload("ns/w"), nullptr);
  EXPECT_EQ(state.FindWorkload("ns/w")->status.state, WorkloadState::kFinished);
}

// Only finished workloads: a pending or running one outlives any retention.
TEST_F(FinishedRetentionTest, UnfinishedWorkloadsAreKept) {
  ClusterState state(WithRetention(absl::ZeroDuration()));
  SetUpState(state, now_);
  ASSERT_TRUE(state.Submit(Job("running"), "", now_).ok());
  ASSERT_TRUE(state.Submit(Job("waiting"), "", now_).ok());
  Settle(state);
  AdvanceTo(state, kStart + absl::Hours(1));
  ASSERT_NE(state.FindWorkload("ns/running"), nullptr);
  EXPECT_EQ(state.FindWorkload("ns/running")->status.state, WorkloadState::kAdmitted);
  ASSERT_NE(state.FindWorkload("ns/waiting"), nullptr);
  EXPECT_EQ(state.FindWorkload("ns/waiting")->status.state, WorkloadState::kPending);
}

// Kueue looks at the Finished condition, whoever set it: an out-of-sync prebuilt workload
// (finished without ever running) goes the same way.
TEST_F(FinishedRetentionTest, OutOfSyncFinishCountsToo) {
  ClusterState state(WithRetention(absl::Minutes(1)));
  SetUpState(state, now_);
  ASSERT_TRUE(state.Submit(Job("prebuilt"), "", now_).ok());
  ASSERT_TRUE(state.MarkOutOfSync("ns/prebuilt", now_).ok());
  AdvanceTo(state, kStart + absl::Minutes(1));
  EXPECT_EQ(state.FindWorkload("ns/prebuilt"), nullptr);
}

// A deleted workload's stale timer does nothing to a new workload of the same name: the new one
// has a new id and its own Finished condition.
TEST_F(FinishedRetentionTest, ResubmittedNameKeepsItsOwnRetention) {
  ClusterState state(WithRetention(absl::Minutes(10)));
  SetUpState(state, now_);
  RunAndFinish(state, "w");
  ASSERT_TRUE(state.Delete("ns/w", now_).ok());
  now_ += absl::Minutes(5);
  RunAndFinish(state, "w");
  AdvanceTo(state, kStart + absl::Minutes(10));
  ASSERT_NE(state.FindWorkload("ns/w"), nullptr);
  AdvanceTo(state, kStart + absl::Minutes(15));
  EXPECT_EQ(state.FindWorkload("ns/w"), nullptr);
}

// Restart: a workload that finished before it counts from its stored Finished condition; one
// already past its retention goes at the first timer round, one not yet past waits for it.
TEST_F(FinishedRetentionTest, RestoredFinishedWorkloadsAreArmed) {
  ClusterState before(WithRetention(absl::Minutes(10)));
  SetUpState(before, now_);
  RunAndFinish(before, "old");
  now_ = kStart + absl::Minutes(8);
  RunAndFinish(before, "recent");
  std::vector<std::unique_ptr<Workload>> stored;
  for (const Workload* wl : before.AllWorkloads())
    stored.push_back(std::make_unique<Workload>(*wl));

  // Down for a while: restarted after "old" was due.
  now_ = kStart + absl::Minutes(12);
  ClusterState after(WithRetention(absl::Minutes(10)));
  SetUpState(after, now_);
  ASSERT_TRUE(after.RestoreAll(std::move(stored)).ok());
  ASSERT_NE(after.FindWorkload("ns/old"), nullptr);
  EXPECT_EQ(after.NextTimer(), kStart + absl::Minutes(10));
  EXPECT_TRUE(after.FireTimers(now_));
  EXPECT_EQ(after.FindWorkload("ns/old"), nullptr);
  ASSERT_NE(after.FindWorkload("ns/recent"), nullptr);
  AdvanceTo(after, kStart + absl::Minutes(18));
  EXPECT_EQ(after.FindWorkload("ns/recent"), nullptr);
}

}  // namespace
}  // namespace tollgate::core
