#include "core/cluster_state.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "test/core/gpu_cluster_state_fixture.h"

namespace tollgate::core {
namespace {

class ClusterStateTest : public GpuClusterStateTest {};

TEST_F(ClusterStateTest, AdmitsWhatFitsAndExplainsTheRest) {
  AddQueue(GpuQueue("cq", "", 8), "ns");
  Submit(GpuJob("a", "ns", 5));
  Submit(GpuJob("b", "ns", 5));
  Settle();
  EXPECT_EQ(StateOf("ns/a"), WorkloadState::kAdmitted);
  EXPECT_EQ(StateOf("ns/b"), WorkloadState::kPending);
  EXPECT_EQ(state_.FindWorkload("ns/b")->status.pending_message,
            "couldn't assign flavors to pod set main: insufficient unused quota for gpu in "
            "flavor a100, 2 more needed");
  ASSERT_TRUE(state_.Finish("ns/a", "", now_).ok());
  Settle();
  EXPECT_EQ(StateOf("ns/b"), WorkloadState::kAdmitted);
}

TEST_F(ClusterStateTest, ReclaimPreemptsNewestBorrowerFirst) {
  AddQueue(GpuQueue("research", "shared", 16, 8), "research");
  AddQueue(GpuQueue("vision", "shared", 16, 8), "vision");
  ClusterQueueSpec speech = GpuQueue("speech", "shared", 16, 8);
  speech.preemption.reclaim_within_cohort = PreemptionPolicy::kAny;
  AddQueue(speech, "speech");
  Submit(GpuJob("train-a", "research", 16));
  Settle();
  now_ += absl::Minutes(1);
  Submit(GpuJob("tune-c", "research", 8));
  Submit(GpuJob("vision-1", "vision", 16));
  Settle();
  Submit(GpuJob("speech-1", "speech", 16));
  Settle();
  EXPECT_EQ(StateOf("speech/speech-1"), WorkloadState::kAdmitted);
  EXPECT_EQ(StateOf("research/tune-c"), WorkloadState::kPending);
  EXPECT_EQ(StateOf("research/train-a"), WorkloadState::kAdmitted);
  EXPECT_EQ(state_.FindWorkload("research/tune-c")->status.history().last_preemption_reason,
            "InCohortReclamation");
}

TEST_F(ClusterStateTest, LowerPriorityPreemptedWithinQueueAndRequeued) {
  ClusterQueueSpec cq = GpuQueue("cq", "", 8);
  cq.preemption.within_cluster_queue = PreemptionPolicy::kLowerPriority;
  AddQueue(cq, "ml");
  Submit(GpuJob("low", "ml", 4, 90));
  Submit(GpuJob("mid", "ml", 4, 100));
  Settle();
  Submit(GpuJob("high", "ml", 4, 500));
  Settle();
  EXPECT_EQ(StateOf("ml/high"), WorkloadState::kAdmitted);
  EXPECT_EQ(StateOf("ml/mid"), WorkloadState::kAdmitted);
  EXPECT_EQ(StateOf("ml/low"), WorkloadState::kPending);
  EXPECT_EQ(state_.FindWorkload("ml/low")->status.history().preemption_count, 1);
  std::vector<PendingPosition> pending = state_.PendingInLocalQueue("ml", "q");
  ASSERT_EQ(pending.size(), 1u);
}

// What a restart does: copies of every workload, ordered by creation time then key.
std::vector<std::unique_ptr<Workload>> StoredCopies(const ClusterState& state) {
  std::vector<std::unique_ptr<Workload>> out;
  for (const Workload* wl : state.AllWorkloads()) {
    out.push_back(std::make_unique<Workload>(*wl));
    out.back()->id = 0;
    out.back()->quota_usage.clear();
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    if (a->creation_time != b->creation_time) return a->creation_time < b->creation_time;
    return a->Key() < b->Key();
  });
  return out;
}

std::vector<std::string> PendingKeys(const ClusterState& state, const std::string& cq) {
  std::vector<std::string> keys;
  for (const PendingPosition& p : state.PendingInClusterQueue(cq)) {
    keys.push_back(state.workload(p.id)->Key());
  }
  return keys;
}

// The scheduling loop moves each planned Admission and its usage into its workload; nothing else
// may differ from applying a copy of the plan.
TEST_F(ClusterStateTest, TakingTheAdmissionsAppliesTheSameCycle) {
  auto build = [this](ClusterState& state) {
    ASSERT_TRUE(state.ApplyResourceFlavor({"a100", {}, {}, {}}, now_).ok());
    for (const char* name : {"a", "b"}) {
      ASSERT_TRUE(state.ApplyClusterQueue(GpuQueue(name, "pool", 4, 2), now_).ok());
      ASSERT_TRUE(state.ApplyLocalQueue({name, "q", name, StopPolicy::kNone, 1.0}, now_).ok());
    }
    for (int i = 0; i < 12; ++i) {
      const std::string ns = i % 2 == 0 ? "a" : "b";
      ASSERT_TRUE(state.Submit(GpuJob(absl::StrCat("w", i), ns, 1 + i % 3, i % 4), "", now_).ok());
    }
  };
  ClusterState copied{SchedulerConfig{}};
  ClusterState taken{SchedulerConfig{}};
  ASSERT_NO_FATAL_FAILURE(build(copied));
  ASSERT_NO_FATAL_FAILURE(build(taken));
  int admitted = 0;
  for (int cycle = 0; cycle < 20; ++cycle) {
    const CyclePlan plan = copied.PlanCycle(now_);
    copied.ApplyCycle(plan, now_);
    CyclePlan taking = taken.PlanCycle(now_);
    ASSERT_EQ(taking.admissions.size(), plan.admissions.size());
    taken.ApplyCycleTakingAdmissions(taking, now_);
    for (size_t i = 0; i < plan.admissions.size(); ++i) {
      EXPECT_EQ(taking.admissions[i].id, plan.admissions[i].id);
      EXPECT_TRUE(taking.admissions[i].admission.pod_sets.empty());
      EXPECT_TRUE(taking.admissions[i].usage.empty());
    }
    admitted += static_cast<int>(plan.admissions.size());
    if (!plan.MadeProgress()) break;
    now_ += absl::Seconds(1);
  }
  EXPECT_GT(admitted, 0);
  for (const Workload* wl : copied.AllWorkloads()) {
    const Workload* other = taken.FindWorkload(wl->Key());
    ASSERT_NE(other, nullptr) << wl->Key();
    EXPECT_EQ(other->status, wl->status) << wl->Key();
    EXPECT_EQ(other->quota_usage, wl->quota_usage) << wl->Key();
  }
}

TEST_F(ClusterStateTest, RestoreAllRebuildsTheLiveQueues) {
  auto configure = [](ClusterState& state, absl::Time now) {
    ASSERT_TRUE(state.ApplyResourceFlavor({"a100", {}, {}, {}}, now).ok());
    for (const char* name : {"a", "b"}) {
      ASSERT_TRUE(state.ApplyClusterQueue(GpuQueue(name, "pool", 4, 0), now).ok());
      ASSERT_TRUE(state.ApplyLocalQueue({name, "q", name, StopPolicy::kNone, 1.0}, now).ok());
    }
  };
  ClusterState live{SchedulerConfig{}};
  ASSERT_NO_FATAL_FAILURE(configure(live, now_));
  // Names against submission order, priorities and equal creation times mixed, so that every
  // part of the queue order is exercised.
  for (int i = 0; i < 60; ++i) {
    if (i % 3 == 0) now_ += absl::Milliseconds(1);
    const std::string ns = i % 2 == 0 ? "a" : "b";
    ASSERT_TRUE(
        live.Submit(GpuJob(absl::StrCat("w", 99 - i), ns, 1 + i % 2, i % 4), "", now_).ok());
  }
  for (int cycles = 0; cycles < 100; ++cycles) {
    CyclePlan plan = live.PlanCycle(now_);
    live.ApplyCycle(plan, now_);
    if (!plan.MadeProgress()) break;
  }
  live.TakeDirtyWorkloads();

  ClusterState restored{SchedulerConfig{}};
  ASSERT_NO_FATAL_FAILURE(configure(restored, now_));
  ASSERT_TRUE(restored.RestoreAll(StoredCopies(live)).ok());
  for (const char* cq : {"a", "b"}) {
    EXPECT_EQ(PendingKeys(restored, cq), PendingKeys(live, cq)) << cq;
    EXPECT_EQ(restored.ClusterQueueCounts(cq).admitted, live.ClusterQueueCounts(cq).admitted);
    EXPECT_EQ(restored.ClusterQueueCounts(cq).pending, live.ClusterQueueCounts(cq).pending);
  }
  // Restoring changed nothing that needs writing back.
  EXPECT_TRUE(restored.TakeDirtyWorkloads().empty());

  // And both admit the same next workloads once quota frees up.
  for (ClusterState* state : {&live, &restored}) {
    for (const Workload* wl : state->AllWorkloads()) {
      if (wl->status.state == WorkloadState::kAdmitted) {
        ASSERT_TRUE(state->Finish(wl->Key(), "", now_).ok());
      }
    }
    CyclePlan plan = state->PlanCycle(now_);
    state->ApplyCycle(plan, now_);
  }
  for (const Workload* wl : live.AllWorkloads()) {
    EXPECT_EQ(restored.FindWorkload(wl->Key())->status.state, wl->status.state) << wl->Key();
  }
}

TEST_F(ClusterStateTest, RestoreAllExplainsWorkloadsWithoutARoute) {
  std::vector<std::unique_ptr<Workload>> stored;
  for (const char* name : {"x", "y"}) {
    auto wl = std::make_unique<Workload>();
    wl->creation_time = now_;
    wl->spec = GpuJob(name, "ns", 1, 0, "gone");
    stored.push_back(std::move(wl));
  }
  ASSERT_TRUE(state_.RestoreAll(std::move(stored)).ok());
  for (const char* key : {"ns/x", "ns/y"}) {
    EXPECT_EQ(state_.FindWorkload(key)->status.pending_message, "LocalQueue gone doesn't exist");
  }
  EXPECT_EQ(state_.TakeDirtyWorkloads().size(), 2u);
}

TEST_F(ClusterStateTest, RestoreAllRefusesADuplicateKey) {
  AddQueue(GpuQueue("cq", "", 8), "ns");
  std::vector<std::unique_ptr<Workload>> stored;
  for (int i = 0; i < 2; ++i) {
    auto wl = std::make_unique<Workload>();
    wl->spec = GpuJob("same", "ns", 1);
    stored.push_back(std::move(wl));
  }
  EXPECT_EQ(state_.RestoreAll(std::move(stored)).code(), absl::StatusCode::kAlreadyExists);
}

// Large restores fill the key index on a helper thread; the result must be the same.
TEST_F(ClusterStateTest, LargeRestoreAllIndexesEveryKey) {
  AddQueue(GpuQueue("cq", "", 8), "ns");
  constexpr int kCount = 70000;
  std::vector<std::unique_ptr<Workload>> stored;
  for (int i = 0; i < kCount; ++i) {
    auto wl = std::make_unique<Workload>();
    wl->creation_time = now_ + absl::Seconds(i);
    wl->spec = GpuJob(absl::StrCat("w", i), "ns", 1, i % 3);
    wl->priority = i % 3;
    stored.push_back(std::move(wl));
  }
  ASSERT_TRUE(state_.RestoreAll(std::move(stored)).ok());
  for (int i = 0; i < kCount; ++i) {
    const Workload* wl = state_.FindWorkload(absl::StrCat("ns/w", i));
    ASSERT_NE(wl, nullptr) << i;
    ASSERT_EQ(wl->id, i + 1);
  }
  std::vector<PendingPosition> pending = state_.PendingInClusterQueue("cq");
  ASSERT_EQ(pending.size(), static_cast<size_t>(kCount));
  // Priority 2 first, then by creation time.
  EXPECT_EQ(state_.workload(pending.front().id)->Key(), "ns/w2");
  EXPECT_EQ(state_.workload(pending.back().id)->Key(), absl::StrCat("ns/w", kCount - 1));

  std::vector<std::unique_ptr<Workload>> again;
  for (int i = 0; i < kCount; ++i) {
    auto wl = std::make_unique<Workload>();
    wl->spec = GpuJob(absl::StrCat("v", i == kCount - 1 ? 0 : i), "ns", 1);
    again.push_back(std::move(wl));
  }
  absl::Status duplicate = state_.RestoreAll(std::move(again));
  EXPECT_EQ(duplicate.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(duplicate.message(), "workload ns/v0 restored twice");
}

TEST_F(ClusterStateTest, SameInputsGiveTheSamePlan) {
  auto run = []() {
    ClusterState state{SchedulerConfig{}};
    absl::Time now = kFixtureStart;
    EXPECT_TRUE(state.ApplyResourceFlavor({"a100", {}, {}, {}}, now).ok());
    for (const char* name : {"x", "y", "z"}) {
      EXPECT_TRUE(state.ApplyClusterQueue(GpuQueue(name, "pool", 4, 4), now).ok());
      EXPECT_TRUE(state.ApplyLocalQueue({name, "q", name, StopPolicy::kNone, 1.0}, now).ok());
    }
    for (int i = 0; i < 30; ++i) {
      now += absl::Milliseconds(1);
      const std::string ns = std::string(1, "xyz"[i % 3]);
      EXPECT_TRUE(state.Submit(GpuJob("w" + std::to_string(i), ns, 1 + i % 3), "", now).ok());
    }
    std::vector<std::string> admitted;
    while (true) {
      CyclePlan plan = state.PlanCycle(now);
      for (const AdmissionDecision& a : plan.admissions) {
        admitted.push_back(state.workload(a.id)->Key());
      }
      state.ApplyCycle(plan, now);
      if (!plan.MadeProgress()) break;
    }
    return admitted;
  };
  EXPECT_EQ(run(), run());
}

// Pending workloads point at their ClusterQueue's runtime: deleting the queue must unqueue them
// (nothing may refer to the freed runtime), and re-creating it must queue them again.
TEST_F(ClusterStateTest, DeletingAClusterQueueUnqueuesItsPendingWorkloads) {
  AddQueue(GpuQueue("cq", "", 4), "ns");
  Submit(GpuJob("a", "ns", 4));
  Submit(GpuJob("b", "ns", 4));
  Settle();
  const WorkloadId b = state_.FindWorkload("ns/b")->id;
  ASSERT_NE(state_.QueuedIn(b), nullptr);

  // Unused (in-use deletion is object_deletion_test.cc's): the queue goes at once.
  ASSERT_TRUE(state_.Finish("ns/a", "", now_).ok());
  ASSERT_TRUE(state_.DeleteObject(ObjectKind::kClusterQueue, "", "cq", now_).ok());
  EXPECT_EQ(state_.QueuedIn(b), nullptr);
  Settle();
  EXPECT_EQ(StateOf("ns/b"), WorkloadState::kPending);
  // Finishing and deleting workloads of the gone queue touches no queue runtime.
  ASSERT_TRUE(state_.Delete("ns/b", now_).ok());

  Submit(GpuJob("c", "ns", 4));
  ASSERT_TRUE(state_.ApplyClusterQueue(GpuQueue("cq", "", 8), now_).ok());
  const WorkloadId c = state_.FindWorkload("ns/c")->id;
  ASSERT_NE(state_.QueuedIn(c), nullptr);
  EXPECT_EQ(*state_.QueuedIn(c), "cq");
  Settle();
  EXPECT_EQ(StateOf("ns/c"), WorkloadState::kAdmitted);
}

// A cycle orders its heads by their queue keys, not by the workloads: the head key follows a
// priority change and, with requeuingTimestamp Eviction, the pods-ready eviction's time.
TEST(HeadKeyTest, FollowsPriorityChangesAndThePodsReadyEvictionTime) {
  SchedulerConfig config;
  config.wait_for_pods_ready.enable = true;
  config.wait_for_pods_ready.timeout = absl::Minutes(5);
  config.wait_for_pods_ready.requeuing_timestamp = RequeuingTimestamp::kEviction;
  ClusterState state{config};
  absl::Time now = kFixtureStart;
  ASSERT_NO_FATAL_FAILURE(AddFourGpuQueue(state, now));
  // The head's key against its workload; returns the head's name ("" when none).
  auto head = [&state]() -> std::string {
    const QueueKey* key = state.cluster_queue("cq")->queue.HeadKey();
    if (key == nullptr) return "";
    const Workload* wl = state.workload(key->id);
    EXPECT_EQ(key->priority(), wl->priority) << wl->Key();
    EXPECT_EQ(key->timestamp, state.QueueOrderTime(*wl)) << wl->Key();
    return wl->spec.name;
  };
  ASSERT_TRUE(state.Submit(GpuJob("w", "ns", 4), "", now).ok());
  SettleAt(state, now);
  EXPECT_EQ(state.FindWorkload("ns/w")->status.state, WorkloadState::kAdmitted);
  // Not yet through a cycle, so not parked: both are in the active set.
  ASSERT_TRUE(state.Submit(GpuJob("v", "ns", 4), "", now + absl::Milliseconds(1)).ok());
  ASSERT_TRUE(state.Submit(GpuJob("u", "ns", 4), "", now + absl::Milliseconds(2)).ok());
  EXPECT_EQ(head(), "v");
  ASSERT_TRUE(state.SetPriority("ns/u", 50, now).ok());
  EXPECT_EQ(head(), "u");
  ASSERT_TRUE(state.SetPriority("ns/u", -5, now).ok());
  EXPECT_EQ(head(), "v");
  ASSERT_TRUE(state.Delete("ns/v", now).ok());
  ASSERT_TRUE(state.Delete("ns/u", now).ok());
  EXPECT_EQ(head(), "");

  // w never gets ready: evicted at the timeout and requeued after its backoff, ordered from the
  // eviction rather than from its creation.
  now += absl::Minutes(6);
  SettleAt(state, now);
  const Workload* w = state.FindWorkload("ns/w");
  ASSERT_EQ(w->status.state, WorkloadState::kPending);
  EXPECT_NE(state.QueueOrderTime(*w), w->creation_time);
  now += absl::Hours(2);
  state.FireTimers(now);
  ASSERT_TRUE(state.Submit(GpuJob("t", "ns", 4), "", now).ok());
  EXPECT_EQ(head(), "w");
  SettleAt(state, now);
  EXPECT_EQ(state.FindWorkload("ns/w")->status.state, WorkloadState::kAdmitted);
  // Admitted again, its Evicted condition is False: it counts from its creation again (Kueue's
  // GetQueueOrderTimestamp reads the condition), as LowerOrNewerEqualPriority compares it.
  const Workload* readmitted = state.FindWorkload("ns/w");
  EXPECT_EQ(state.QueueOrderTime(*readmitted), readmitted->creation_time);
}

// Kueue's GetQueueOrderTimestamp reads the Evicted condition whatever waitForPodsReady says now
// (cmd/kueue's podsReadyRequeuingTimestamp defaults to Eviction without the section): restored
// into a ClusterState with waitForPodsReady off, a workload the PodsReady timeout evicted still
// queues from its eviction, unless the requeuing timestamp is Creation.
TEST(HeadKeyTest, PodsReadyEvictionTimeCountsWithWaitForPodsReadyOff) {
  SchedulerConfig config;
  config.wait_for_pods_ready.enable = true;
  config.wait_for_pods_ready.timeout = absl::Minutes(5);
  ClusterState state{config};
  absl::Time now = kFixtureStart;
  ASSERT_NO_FATAL_FAILURE(AddFourGpuQueue(state, now));
  ASSERT_TRUE(state.Submit(GpuJob("w", "ns", 4), "", now).ok());
  SettleAt(state, now);
  now += absl::Minutes(6);
  SettleAt(state, now);
  const Workload& evicted = *state.FindWorkload("ns/w");
  ASSERT_EQ(evicted.status.state, WorkloadState::kPending);
  const Condition* condition = FindCondition(evicted.status, "Evicted");
  ASSERT_NE(condition, nullptr);
  ASSERT_EQ(condition->reason, "PodsReadyTimeout");

  for (RequeuingTimestamp timestamp :
       {RequeuingTimestamp::kEviction, RequeuingTimestamp::kCreation}) {
    SchedulerConfig off;
    off.wait_for_pods_ready.requeuing_timestamp = timestamp;
    ClusterState restored{off};
    ASSERT_NO_FATAL_FAILURE(AddFourGpuQueue(restored, now));
    Workload copy = evicted;
    copy.id = 0;
    copy.quota_usage.clear();
    ASSERT_TRUE(restored.Restore(std::move(copy)).ok());
    const Workload& w = *restored.FindWorkload("ns/w");
    EXPECT_EQ(restored.QueueOrderTime(w), timestamp == RequeuingTimestamp::kEviction
                                              ? condition->last_transition_time
                                              : w.creation_time);
  }
}

// Kueue's TestEntryOrdering, "Some workloads are preempted": with PrioritySortingWithinCohort
// off, a workload preempted by reclamation while its preemptor borrows counts from a millisecond
// after its preemption; preempted for another reason, or with the gate on, from its creation.
TEST(HeadKeyTest, ReclaimedWhileBorrowingCountsFromPreemptionOnlyWithoutPrioritySorting) {
  absl::Time now = kFixtureStart;
  ClusterState live{SchedulerConfig{}};
  ASSERT_NO_FATAL_FAILURE(AddFourGpuQueue(live, now));
  ASSERT_TRUE(live.Submit(GpuJob("w", "ns", 8), "", now).ok());
  const Workload pending = *live.FindWorkload("ns/w");
  const absl::Time preempted_at = now + absl::Seconds(6);

  struct Case {
    std::string reason;
    bool priority_sorting;
    absl::Time want;
  };
  for (const Case& c : {
           Case{"InCohortReclaimWhileBorrowing", false, preempted_at + absl::Milliseconds(1)},
           Case{"InCohortReclaimWhileBorrowing", true, pending.creation_time},
           Case{"InClusterQueue", false, pending.creation_time},
           Case{"InCohortReclamation", false, pending.creation_time},
       }) {
    SchedulerConfig config;
    config.priority_sorting_within_cohort = c.priority_sorting;
    ClusterState restored{config};
    ASSERT_NO_FATAL_FAILURE(AddFourGpuQueue(restored, now));
    Workload copy = pending;
    copy.id = 0;
    copy.status.conditions.push_back(Condition{"Preempted", true, c.reason, "", preempted_at});
    ASSERT_TRUE(restored.Restore(std::move(copy)).ok());
    const Workload& w = *restored.FindWorkload("ns/w");
    EXPECT_EQ(restored.QueueOrderTime(w), c.want)
        << c.reason << " priority_sorting=" << c.priority_sorting;
  }
}

// PartialAdmission off: a workload that still carries a minCount (stored while the gate was on;
// Submit through the API drops it) is admitted whole or not at all, as Kueue's scheduler skips
// its pod set reducer.
TEST(PartialAdmissionTest, MinCountShrinksOnlyWithTheGateOn) {
  for (const bool gate : {true, false}) {
    SchedulerConfig config;
    config.partial_admission = gate;
    ClusterState state{config};
    const absl::Time now = kFixtureStart;
    ASSERT_NO_FATAL_FAILURE(AddFourGpuQueue(state, now));
    WorkloadSpec spec = GpuJob("w", "ns", 8);
    spec.pod_sets[0].min_count = 2;
    ASSERT_TRUE(state.Submit(spec, "", now).ok());
    SettleAt(state, now);
    const Workload& w = *state.FindWorkload("ns/w");
    if (gate) {
      ASSERT_EQ(w.status.state, WorkloadState::kAdmitted);
      ASSERT_TRUE(w.status.admission.has_value());
      EXPECT_EQ(w.status.admission->pod_sets[0].count, 4);
    } else {
      EXPECT_EQ(w.status.state, WorkloadState::kPending);
    }
  }
}

// waitForPodsReady.recoveryTimeout: counted from the loss of readiness (not from admission),
// kept across a restart (the PodsReady condition carries it), and a recovery in time keeps the
// admission.
TEST(RecoveryTimeoutTest, EvictsAWorkloadNotReadyAgainInTimeAcrossARestart) {
  SchedulerConfig config;
  config.wait_for_pods_ready.enable = true;
  config.wait_for_pods_ready.timeout = absl::Minutes(5);
  config.wait_for_pods_ready.recovery_timeout = absl::Minutes(2);
  absl::Time now = kFixtureStart;
  ClusterState live{config};
  ASSERT_NO_FATAL_FAILURE(AddFourGpuQueue(live, now));
  ASSERT_TRUE(live.Submit(GpuJob("w", "ns", 2), "", now).ok());
  ASSERT_TRUE(live.Submit(GpuJob("v", "ns", 2), "", now + absl::Milliseconds(1)).ok());
  SettleAt(live, now);
  // Not yet ready: a loss report changes nothing (the timeout from admission runs).
  ASSERT_TRUE(live.SetPodsNotReady("ns/w", now).ok());
  EXPECT_EQ(FindCondition(live.FindWorkload("ns/w")->status, "PodsReady")->reason, "WaitForStart");
  ASSERT_TRUE(live.SetPodsReady("ns/w", now).ok());
  ASSERT_TRUE(live.SetPodsReady("ns/v", now).ok());
  now += absl::Minutes(10);
  SettleAt(live, now);
  ASSERT_TRUE(live.SetPodsNotReady("ns/w", now).ok());
  ASSERT_TRUE(live.SetPodsNotReady("ns/v", now).ok());
  EXPECT_TRUE(WaitsForRecovery(live.FindWorkload("ns/w")->status));
  EXPECT_FALSE(live.AllAdmittedPodsReady());

  ClusterState restored{config};
  ASSERT_NO_FATAL_FAILURE(AddFourGpuQueue(restored, now));
  ASSERT_TRUE(restored.RestoreAll(StoredCopies(live)).ok());
  for (ClusterState* state : {&live, &restored}) {
    SettleAt(*state, now + absl::Minutes(1));
    EXPECT_EQ(state->FindWorkload("ns/w")->status.state, WorkloadState::kAdmitted);
    ASSERT_TRUE(state->SetPodsReady("ns/v", now + absl::Minutes(1)).ok());
    EXPECT_EQ(FindCondition(state->FindWorkload("ns/v")->status, "PodsReady")->reason, "Recovered");
    SettleAt(*state, now + absl::Minutes(2));
    const Workload* w = state->FindWorkload("ns/w");
    EXPECT_EQ(w->status.state, WorkloadState::kPending);
    EXPECT_EQ(w->status.history().requeue_count, 1);
    EXPECT_EQ(FindCondition(w->status, "Evicted")->reason, "PodsReadyTimeout");
    EXPECT_EQ(FindCondition(w->status, "Evicted")->message, "Exceeded the PodsReady timeout ns/w");
    EXPECT_EQ(state->FindWorkload("ns/v")->status.state, WorkloadState::kAdmitted);
  }
  EXPECT_EQ(live.SetPodsNotReady("ns/w", now).code(), absl::StatusCode::kFailedPrecondition);
}

// recoveryTimeout 0s turns the check off: a workload that lost readiness keeps its admission.
TEST(RecoveryTimeoutTest, ZeroTurnsTheCheckOff) {
  SchedulerConfig config;
  config.wait_for_pods_ready.enable = true;
  config.wait_for_pods_ready.timeout = absl::Minutes(5);
  config.wait_for_pods_ready.recovery_timeout = absl::ZeroDuration();
  ClusterState state{config};
  ASSERT_NO_FATAL_FAILURE(AddFourGpuQueue(state, kFixtureStart));
  ASSERT_TRUE(state.Submit(GpuJob("w", "ns", 2), "", kFixtureStart).ok());
  CyclePlan plan = state.PlanCycle(kFixtureStart);
  state.ApplyCycle(plan, kFixtureStart);
  ASSERT_TRUE(state.SetPodsReady("ns/w", kFixtureStart).ok());
  ASSERT_TRUE(state.SetPodsNotReady("ns/w", kFixtureStart + absl::Minutes(1)).ok());
  state.FireTimers(kFixtureStart + absl::Hours(3));
  EXPECT_EQ(state.FindWorkload("ns/w")->status.state, WorkloadState::kAdmitted);
}

}  // namespace
// waitForPodsReady.blockAdmission: while the cycle's held head waits, no cycle runs (Kueue's
// scheduler waits inside the cycle), and an admission on request is no cycle: once the block
// lifts, the held head goes before a higher-priority workload that arrived meanwhile.
TEST(BlockAdmissionTest, HeldHeadKeepsItsTurnAcrossAnAdmissionOnRequest) {
  SchedulerConfig config;
  config.wait_for_pods_ready.enable = true;
  config.wait_for_pods_ready.block_admission = true;
  config.wait_for_pods_ready.timeout = absl::Minutes(5);
  ClusterState state{config};
  const absl::Time now = kFixtureStart;
  ASSERT_NO_FATAL_FAILURE(AddFourGpuQueue(state, now));
  ASSERT_TRUE(state.Submit(GpuJob("w", "ns", 2), "", now).ok());
  SettleAt(state, now);
  ASSERT_TRUE(state.Submit(GpuJob("v", "ns", 1), "", now).ok());
  SettleAt(state, now);
  const WorkloadId held = state.FindWorkload("ns/v")->id;
  EXPECT_EQ(state.held_cycle(), std::vector<WorkloadId>{held});
  EXPECT_TRUE(
      HasPendingCondition(state.FindWorkload("ns/v")->status, PendingReason::kWaitingForPodsReady));

  ASSERT_TRUE(state.Submit(GpuJob("u", "ns", 1), "", now).ok());
  ASSERT_TRUE(state.Submit(GpuJob("x", "ns", 1, /*priority=*/100), "", now).ok());
  const CyclePlan blocked = state.PlanCycle(now);
  EXPECT_TRUE(blocked.admissions.empty());
  EXPECT_TRUE(blocked.pending.empty());
  EXPECT_EQ(blocked.held_cycle, std::vector<WorkloadId>{held});
  absl::StatusOr<AdmitNowResult> on_request = state.AdmitNow("ns/u", /*dry_run=*/false, now);
  ASSERT_TRUE(on_request.ok());
  EXPECT_EQ(on_request->outcome, AdmitNowResult::Outcome::kAdmitted);
  EXPECT_EQ(state.held_cycle(), std::vector<WorkloadId>{held});

  // w and u ready: v (1) is admitted; x (1, priority 100) no longer fits beside it (2 + 1 + 1).
  ASSERT_TRUE(state.SetPodsReady("ns/w", now).ok());
  ASSERT_TRUE(state.SetPodsReady("ns/u", now).ok());
  SettleAt(state, now);
  EXPECT_EQ(state.FindWorkload("ns/v")->status.state, WorkloadState::kAdmitted);
  EXPECT_EQ(state.FindWorkload("ns/x")->status.state, WorkloadState::kPending);
  EXPECT_TRUE(state.held_cycle().empty());
}

}  // namespace tollgate::core
