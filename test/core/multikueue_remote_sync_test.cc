#include "core/multikueue_remote_sync.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

// The manager's decisions over a workload's remote copies, after the reconcileGroup cases of
// Kueue's multikueue workload_test.go: first admitted wins, remote finish and eviction, local
// eviction, the worker-lost grace, vanished copies, garbage collection.

namespace tollgate::core {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

const absl::Time kNow = absl::FromUnixSeconds(1767225600);
const absl::Duration kLost = absl::Minutes(15);

WorkerView Connected(std::optional<RemoteCopy> copy = std::nullopt) {
  WorkerView w;
  w.connected = true;
  w.copy = std::move(copy);
  return w;
}

WorkerView Unreachable(absl::Time lost_since) {
  WorkerView w;
  w.lost_since = lost_since;
  return w;
}

RemoteCopy Reserved() { return RemoteCopy{}; }

RemoteCopy AdmittedAt(absl::Time since) {
  RemoteCopy c;
  c.admitted_since = since;
  return c;
}

LocalView Reserving(CheckState state = CheckState::kPending,
                    std::optional<std::string> cluster_name = std::nullopt) {
  LocalView l;
  l.holds_quota = true;
  l.check_state = state;
  l.cluster_name = std::move(cluster_name);
  return l;
}

TEST(FirstAdmittedTest, EarliestAdmissionWinsTiesByName) {
  std::map<std::string, WorkerView> workers = {
      {"worker1", Connected(AdmittedAt(kNow))},
      {"worker2", Connected(AdmittedAt(kNow - absl::Seconds(1)))},
      {"worker3", Connected(Reserved())},
  };
  EXPECT_EQ(FirstAdmitted(workers, std::nullopt), "worker2");
  workers["worker1"] = Connected(AdmittedAt(kNow - absl::Seconds(1)));
  EXPECT_EQ(FirstAdmitted(workers, std::nullopt), "worker1");
  // An unreachable worker's last known copy does not count.
  workers["worker0"] = Unreachable(kNow);
  workers["worker0"].copy = AdmittedAt(kNow - absl::Hours(1));
  EXPECT_EQ(FirstAdmitted(workers, std::nullopt), "worker1");
}

TEST(FirstAdmittedTest, TheWinnerNeverChanges) {
  // worker1 won; worker2 reports an earlier admission afterwards (a stray copy): the winner
  // stays, and with worker1's copy gone there is no winner rather than another one.
  std::map<std::string, WorkerView> workers = {
      {"worker1", Connected(AdmittedAt(kNow))},
      {"worker2", Connected(AdmittedAt(kNow - absl::Minutes(1)))},
  };
  EXPECT_EQ(FirstAdmitted(workers, "worker1"), "worker1");
  workers["worker1"] = Connected();
  EXPECT_EQ(FirstAdmitted(workers, "worker1"), std::nullopt);
}

TEST(PlanRemoteSyncTest, NoReservationRemovesEveryCopy) {
  LocalView local;
  local.holds_quota = false;
  const RemoteSyncPlan plan = PlanRemoteSync(
      local, {{"worker1", Connected(Reserved())}, {"worker2", Connected()}}, kLost, kNow);
  EXPECT_THAT(plan.remove_copies, ElementsAre("worker1"));
  EXPECT_FALSE(plan.recheck_at.has_value());
  EXPECT_FALSE(plan.nominate);
}

TEST(PlanRemoteSyncTest, NoReservationWithAnUnreachableWorkerLooksAgainLater) {
  LocalView local;
  local.holds_quota = false;
  const RemoteSyncPlan plan =
      PlanRemoteSync(local, {{"worker1", Unreachable(kNow - absl::Minutes(1))}}, kLost, kNow);
  EXPECT_THAT(plan.remove_copies, IsEmpty());
  EXPECT_EQ(plan.recheck_at, kNow + kLost);
}

TEST(PlanRemoteSyncTest, FinishedLocalWorkloadRemovesCopies) {
  LocalView local = Reserving(CheckState::kReady, "worker1");
  local.finished = true;
  const RemoteSyncPlan plan =
      PlanRemoteSync(local, {{"worker1", Connected(AdmittedAt(kNow))}}, kLost, kNow);
  EXPECT_THAT(plan.remove_copies, ElementsAre("worker1"));
}

TEST(PlanRemoteSyncTest, ReservedButNotAdmittedKeepsOtherCopiesAndNominates) {
  const RemoteSyncPlan plan = PlanRemoteSync(
      Reserving(), {{"worker1", Connected(Reserved())}, {"worker2", Connected(Reserved())}}, kLost,
      kNow);
  EXPECT_THAT(plan.remove_copies, IsEmpty());
  EXPECT_FALSE(plan.check.has_value());
  EXPECT_TRUE(plan.nominate);
}

TEST(PlanRemoteSyncTest, RemoteAdmittedDeletesTheOthersAndMakesTheCheckReady) {
  const RemoteSyncPlan plan = PlanRemoteSync(
      Reserving(), {{"worker1", Connected(AdmittedAt(kNow))}, {"worker2", Connected(Reserved())}},
      kLost, kNow);
  EXPECT_THAT(plan.remove_copies, ElementsAre("worker2"));
  ASSERT_TRUE(plan.check.has_value());
  EXPECT_EQ(*plan.check,
            (CheckTransition{CheckState::kReady, "The workload was admitted on \"worker1\""}));
  EXPECT_EQ(plan.set_cluster_name, "worker1");
  EXPECT_TRUE(plan.clear_nominated);
  EXPECT_EQ(plan.mirror_from, "worker1");
  EXPECT_EQ(plan.recheck_at, kNow + kLost);
  EXPECT_FALSE(plan.nominate);
}

TEST(PlanRemoteSyncTest, AlreadyReadyOnTheWinnerChangesNothing) {
  const RemoteSyncPlan plan =
      PlanRemoteSync(Reserving(CheckState::kReady, "worker1"),
                     {{"worker1", Connected(AdmittedAt(kNow))}}, kLost, kNow);
  EXPECT_FALSE(plan.check.has_value());
  EXPECT_FALSE(plan.set_cluster_name.has_value());
  EXPECT_THAT(plan.remove_copies, IsEmpty());
  EXPECT_EQ(plan.mirror_from, "worker1");
}

TEST(PlanRemoteSyncTest, AdmittingRemoteIsKeptWhenAnotherCopyIsOutOfSync) {
  RemoteCopy stale = Reserved();
  stale.spec_in_sync = false;
  const RemoteSyncPlan plan = PlanRemoteSync(
      Reserving(CheckState::kReady, "worker1"),
      {{"worker1", Connected(AdmittedAt(kNow))}, {"worker2", Connected(stale)}}, kLost, kNow);
  EXPECT_THAT(plan.remove_copies, ElementsAre("worker2"));
  EXPECT_FALSE(plan.check.has_value());
  EXPECT_EQ(plan.mirror_from, "worker1");
}

TEST(PlanRemoteSyncTest, WorkerLostGraceHoldsEvenWithAnotherCopyOutOfSync) {
  RemoteCopy stale = Reserved();
  stale.spec_in_sync = false;
  const RemoteSyncPlan plan =
      PlanRemoteSync(Reserving(CheckState::kReady, "worker1"),
                     {{"worker1", Unreachable(kNow)}, {"worker2", Connected(stale)}}, kLost, kNow);
  EXPECT_THAT(plan.remove_copies, ElementsAre("worker2"));
  EXPECT_FALSE(plan.check.has_value());
  EXPECT_EQ(plan.recheck_at, kNow + kLost);
}

TEST(PlanRemoteSyncTest, AWinnerWithoutAClientCountsAsLostSinceNow) {
  // No MultiKueueCluster for the winner (deleted): Kueue has no client and takes now as the
  // loss time at every look, so the check stays Ready and is looked at again later.
  WorkerView no_client;
  const RemoteSyncPlan plan =
      PlanRemoteSync(Reserving(CheckState::kReady, "worker1"), {{"worker1", no_client}}, kLost,
                     kNow + absl::Hours(10));
  EXPECT_FALSE(plan.check.has_value());
  EXPECT_EQ(plan.recheck_at, kNow + absl::Hours(10) + kLost);
}

TEST(PlanRemoteSyncTest, LostWorker) {
  struct Case {
    std::string name;
    absl::Duration lost_for;
    std::optional<CheckTransition> want_check;
    std::optional<absl::Time> want_recheck;
  };
  const std::vector<Case> cases = {
      {"lost less than the timeout ago: stays Ready", kLost / 2, std::nullopt, kNow + kLost / 2},
      {"lost just now (a manager restart): the grace restarts", absl::ZeroDuration(), std::nullopt,
       kNow + kLost},
      {"lost exactly the timeout ago: Retry", kLost,
       CheckTransition{CheckState::kRetry, "Admitting remote lost, Previously: \"Ready\""},
       std::nullopt},
      {"lost more than the timeout ago: Retry", kLost * 3 / 2,
       CheckTransition{CheckState::kRetry, "Admitting remote lost, Previously: \"Ready\""},
       std::nullopt},
  };
  for (const Case& c : cases) {
    const RemoteSyncPlan plan =
        PlanRemoteSync(Reserving(CheckState::kReady, "worker1"),
                       {{"worker1", Unreachable(kNow - c.lost_for)}}, kLost, kNow);
    EXPECT_EQ(plan.check, c.want_check) << c.name;
    EXPECT_EQ(plan.recheck_at, c.want_recheck) << c.name;
    EXPECT_FALSE(plan.nominate) << c.name;
  }
}

TEST(PlanRemoteSyncTest, ReachableWinnerWithoutItsCopyIsRetriedAtOnce) {
  const RemoteSyncPlan plan = PlanRemoteSync(Reserving(CheckState::kReady, "worker1"),
                                             {{"worker1", Connected()}}, kLost, kNow);
  EXPECT_EQ(plan.check, (CheckTransition{CheckState::kRetry,
                                         "Admitting remote no longer exists, Previously: "
                                         "\"Ready\""}));
}

TEST(PlanRemoteSyncTest, WinnerNoLongerInTheConfigIsRetriedAtOnce) {
  const RemoteSyncPlan plan = PlanRemoteSync(Reserving(CheckState::kReady, "worker9"),
                                             {{"worker1", Connected()}}, kLost, kNow);
  EXPECT_EQ(plan.check->message, "Admitting remote no longer exists, Previously: \"Ready\"");
}

TEST(PlanRemoteSyncTest, ReadyWithoutAWinnerIsRetried) {
  const RemoteSyncPlan plan =
      PlanRemoteSync(Reserving(CheckState::kReady), {{"worker1", Connected()}}, kLost, kNow);
  EXPECT_EQ(plan.check,
            (CheckTransition{CheckState::kRetry,
                             "Admission check is Ready but no admitting cluster is recorded; this "
                             "is unexpected, please report it, Previously: \"Ready\""}));
}

TEST(PlanRemoteSyncTest, RemoteEvictionPutsTheCheckInRetry) {
  RemoteCopy evicted = AdmittedAt(kNow - absl::Minutes(5));
  evicted.evicted = RemoteCondition{kNow, "Preempted", "Preempted by a higher priority workload"};
  const RemoteSyncPlan plan =
      PlanRemoteSync(Reserving(CheckState::kReady, "worker1"),
                     {{"worker1", Connected(evicted)}, {"worker2", Connected()}}, kLost, kNow);
  EXPECT_EQ(plan.check, (CheckTransition{CheckState::kRetry,
                                         "Workload evicted on worker cluster: \"worker1\", "
                                         "resetting for re-admission. Previously: \"Ready\""}));
  EXPECT_FALSE(plan.set_cluster_name.has_value());
  EXPECT_FALSE(plan.nominate);
  // The evicted copy goes with the Retry: readmitted on its worker, it would run again there.
  EXPECT_THAT(plan.remove_copies, ElementsAre("worker1"));
}

// A copy evicted on its worker in an earlier round (the manager gave up its quota and took it
// again before the controller looked) is removed rather than waited on; the workload is
// nominated afresh, and an admitted copy elsewhere still wins.
TEST(PlanRemoteSyncTest, AStaleEvictedCopyIsRemovedAndTheWorkloadDispatched) {
  RemoteCopy stale = Reserved();
  stale.evicted = RemoteCondition{kNow, "Preempted", "drained"};
  RemoteSyncPlan plan = PlanRemoteSync(
      Reserving(), {{"worker1", Connected(stale)}, {"worker2", Connected(Reserved())}}, kLost,
      kNow);
  EXPECT_THAT(plan.remove_copies, ElementsAre("worker1"));
  EXPECT_FALSE(plan.check.has_value());
  EXPECT_TRUE(plan.nominate);

  plan = PlanRemoteSync(Reserving(),
                        {{"worker1", Connected(stale)}, {"worker2", Connected(AdmittedAt(kNow))}},
                        kLost, kNow);
  EXPECT_THAT(plan.remove_copies, ElementsAre("worker1"));
  EXPECT_EQ(plan.set_cluster_name, "worker2");
}

// While the manager's workload is being evicted (it holds quota until its job stops), nothing
// is nominated: its next reservation is dispatched afresh (Kueue's
// ShouldSkipClusterNomination).
TEST(PlanRemoteSyncTest, NothingIsNominatedWhileTheManagersWorkloadIsEvicted) {
  LocalView local = Reserving();
  local.evicted_message = "Preempted to accommodate a workload (UID: x)";
  const RemoteSyncPlan plan =
      PlanRemoteSync(local, {{"worker1", Connected()}, {"worker2", Connected()}}, kLost, kNow);
  EXPECT_FALSE(plan.nominate);
  EXPECT_FALSE(plan.check.has_value());
  EXPECT_THAT(plan.remove_copies, IsEmpty());
}

TEST(PlanRemoteSyncTest, LocalEvictionDeactivatesTheRemote) {
  LocalView local = Reserving(CheckState::kReady, "worker1");
  local.evicted_message = "Preempted to accommodate a workload (UID: x)";
  const RemoteSyncPlan plan =
      PlanRemoteSync(local, {{"worker1", Connected(AdmittedAt(kNow))}}, kLost, kNow);
  EXPECT_EQ(plan.deactivate_remote, "worker1");
  EXPECT_EQ(plan.deactivate_reason, "EvictedOnManagerCluster");
  EXPECT_EQ(plan.deactivate_message,
            "Evicted on manager: Preempted to accommodate a workload (UID: x)");
  EXPECT_FALSE(plan.check.has_value());
}

TEST(PlanRemoteSyncTest, EvictedOnBothSidesOnlyMirrorsTheWorker) {
  LocalView local = Reserving(CheckState::kReady, "worker1");
  local.evicted_message = "Evicted by test";
  RemoteCopy copy = AdmittedAt(kNow - absl::Minutes(1));
  copy.evicted = RemoteCondition{kNow, "DeactivatedDueToEvictedOnManagerCluster",
                                 "Evicted on manager: Evicted by test"};
  const RemoteSyncPlan plan = PlanRemoteSync(local, {{"worker1", Connected(copy)}}, kLost, kNow);
  EXPECT_EQ(plan.mirror_from, "worker1");
  EXPECT_FALSE(plan.check.has_value());
  EXPECT_FALSE(plan.deactivate_remote.has_value());
}

// Kueue's order for a local preemption, as the manager sees it (the eviction has already
// cleared clusterName and started the checks over): the winner's copy is deactivated, not
// removed; deactivated, it stays (its worker's status mirrored, nothing nominated) while the
// manager's workload evicts; it goes once the manager's quota is released.
TEST(PlanRemoteSyncTest, ALocalPreemptionDeactivatesTheCopyAndRemovesItOnceTheQuotaIsGone) {
  LocalView local = Reserving(CheckState::kPending);
  local.evicted_message = "Preempted on the manager";
  RemoteSyncPlan plan = PlanRemoteSync(
      local, {{"worker1", Connected(AdmittedAt(kNow))}, {"worker2", Connected()}}, kLost, kNow);
  EXPECT_EQ(plan.deactivate_remote, "worker1");
  EXPECT_EQ(plan.deactivate_reason, "EvictedOnManagerCluster");
  EXPECT_EQ(plan.deactivate_message, "Evicted on manager: Preempted on the manager");
  EXPECT_THAT(plan.remove_copies, IsEmpty());
  EXPECT_FALSE(plan.nominate);

  // Deactivated on its worker: evicted there, and no longer matching the (active) manager's spec.
  RemoteCopy deactivated;
  deactivated.evicted = RemoteCondition{kNow, "DeactivatedDueToEvictedOnManagerCluster",
                                        "Evicted on manager: Preempted on the manager"};
  deactivated.spec_in_sync = false;
  plan = PlanRemoteSync(local, {{"worker1", Connected(deactivated)}, {"worker2", Connected()}},
                        kLost, kNow);
  EXPECT_THAT(plan.remove_copies, IsEmpty());
  EXPECT_EQ(plan.mirror_from, "worker1");
  EXPECT_FALSE(plan.deactivate_remote.has_value());
  EXPECT_FALSE(plan.check.has_value());
  EXPECT_FALSE(plan.nominate);

  // The manager's job stopped: the quota is released and the copy goes.
  LocalView released;
  released.check_state = CheckState::kPending;
  plan = PlanRemoteSync(released, {{"worker1", Connected(deactivated)}, {"worker2", Connected()}},
                        kLost, kNow);
  EXPECT_THAT(plan.remove_copies, ElementsAre("worker1"));
  EXPECT_FALSE(plan.nominate);
}

// A local deactivation changes the manager's spec (spec.active false): Kueue removes the copy as
// out of sync at once (reconcileGroup's step 5 comes before the deactivation of step 6), even
// while the manager's workload still holds quota.
TEST(PlanRemoteSyncTest, ALocalDeactivationRemovesTheCopyAtOnce) {
  LocalView local = Reserving(CheckState::kPending);
  local.evicted_message = "The workload is deactivated";
  RemoteCopy copy = AdmittedAt(kNow);
  copy.spec_in_sync = false;
  const RemoteSyncPlan plan = PlanRemoteSync(local, {{"worker1", Connected(copy)}}, kLost, kNow);
  EXPECT_THAT(plan.remove_copies, ElementsAre("worker1"));
  EXPECT_FALSE(plan.deactivate_remote.has_value());
  EXPECT_FALSE(plan.nominate);
}

// The manager released its quota and took it again before the controller looked: the copy it
// deactivated is left from the last round and goes; the workload is dispatched afresh.
TEST(PlanRemoteSyncTest, ACopyDeactivatedForAnEarlierRoundGoesWhenTheQuotaIsTakenAgain) {
  RemoteCopy deactivated;
  deactivated.evicted = RemoteCondition{kNow, "DeactivatedDueToEvictedOnManagerCluster", ""};
  deactivated.spec_in_sync = false;
  const RemoteSyncPlan plan = PlanRemoteSync(Reserving(CheckState::kPending),
                                             {{"worker1", Connected(deactivated)}}, kLost, kNow);
  EXPECT_THAT(plan.remove_copies, ElementsAre("worker1"));
  EXPECT_TRUE(plan.nominate);
}

TEST(PlanRemoteSyncTest, RemoteFinishFinishesTheLocalWorkload) {
  RemoteCopy copy = AdmittedAt(kNow - absl::Minutes(10));
  copy.finished = RemoteCondition{kNow, "Succeeded", "Job finished successfully"};
  const RemoteSyncPlan plan = PlanRemoteSync(Reserving(CheckState::kReady, "worker1"),
                                             {{"worker1", Connected(copy)}}, kLost, kNow);
  ASSERT_TRUE(plan.finish_local.has_value());
  EXPECT_EQ(plan.finish_local->reason, "Succeeded");
  EXPECT_EQ(plan.finish_local->message, "Job finished successfully");
  EXPECT_EQ(plan.mirror_from, "worker1");
}

TEST(PlanRemoteSyncTest, OutOfSyncFinishIsARetryNotAFinish) {
  RemoteCopy copy = AdmittedAt(kNow - absl::Minutes(10));
  copy.finished = RemoteCondition{kNow, "OutOfSync", "the job changed"};
  RemoteSyncPlan plan = PlanRemoteSync(Reserving(CheckState::kReady, "worker1"),
                                       {{"worker1", Connected(copy)}}, kLost, kNow);
  EXPECT_FALSE(plan.finish_local.has_value());
  EXPECT_EQ(plan.check, (CheckTransition{CheckState::kRetry,
                                         "Remote workload on worker cluster \"worker1\" is out of "
                                         "sync with its user job, resetting for re-dispatch, "
                                         "Previously: \"Ready\""}));
  // Already in Retry: nothing more, and never a finish.
  plan = PlanRemoteSync(Reserving(CheckState::kRetry, "worker1"), {{"worker1", Connected(copy)}},
                        kLost, kNow);
  EXPECT_FALSE(plan.finish_local.has_value());
  EXPECT_FALSE(plan.check.has_value());
}

TEST(PlanRemoteSyncTest, RejectedCheckLeavesEverythingAlone) {
  const RemoteSyncPlan plan = PlanRemoteSync(
      Reserving(CheckState::kRejected), {{"worker1", Connected(AdmittedAt(kNow))}}, kLost, kNow);
  EXPECT_THAT(plan.remove_copies, IsEmpty());
  EXPECT_FALSE(plan.check.has_value());
  EXPECT_FALSE(plan.nominate);
}

TEST(PlanRemoteSyncTest, ExactlyOnceUnderRepeatedReports) {
  // However the reports interleave, once a winner is recorded every plan keeps it, and every
  // other copy is removed before the winner's status is mirrored.
  LocalView local = Reserving();
  std::map<std::string, WorkerView> workers = {
      {"worker1", Connected(Reserved())},
      {"worker2", Connected(AdmittedAt(kNow))},
      {"worker3", Connected(AdmittedAt(kNow + absl::Seconds(1)))},
  };
  RemoteSyncPlan plan = PlanRemoteSync(local, workers, kLost, kNow);
  ASSERT_EQ(plan.set_cluster_name, "worker2");
  EXPECT_THAT(plan.remove_copies, ElementsAre("worker1", "worker3"));
  local.cluster_name = plan.set_cluster_name;
  local.check_state = plan.check->state;
  workers["worker1"] = Connected();
  // A stray copy admitted earlier than the winner (e.g. created before a restart) shows up.
  workers["worker3"] = Connected(AdmittedAt(kNow - absl::Minutes(1)));
  plan = PlanRemoteSync(local, workers, kLost, kNow + absl::Minutes(1));
  EXPECT_FALSE(plan.set_cluster_name.has_value());
  EXPECT_EQ(plan.mirror_from, "worker2");
  EXPECT_THAT(plan.remove_copies, ElementsAre("worker3"));
}

TEST(WorkerConnectionTest, LostSinceIsTheFirstDropOfAStreak) {
  WorkerConnection conn(kNow);
  EXPECT_FALSE(conn.connected());
  EXPECT_EQ(conn.lost_since(), kNow);  // created disconnected: a restart restarts the grace
  conn.MarkConnected();
  EXPECT_TRUE(conn.connected());
  EXPECT_FALSE(conn.lost_since().has_value());
  EXPECT_TRUE(conn.MarkDisconnected(kNow + absl::Minutes(1)));
  EXPECT_FALSE(conn.MarkDisconnected(kNow + absl::Minutes(2)));  // a failed reconnect
  EXPECT_EQ(conn.lost_since(), kNow + absl::Minutes(1));
}

TEST(GarbageCopiesTest, CopiesWhoseOriginWorkloadIsGone) {
  EXPECT_THAT(GarbageCopies({"ns/b", "ns/a", "ns/c", "ns/a"}, {"ns/c"}),
              ElementsAre("ns/a", "ns/b"));
  EXPECT_THAT(GarbageCopies({"ns/a"}, {"ns/a"}), IsEmpty());
}

}  // namespace
}  // namespace tollgate::core
