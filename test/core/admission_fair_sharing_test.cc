#include "core/admission_fair_sharing.h"

#include <cmath>
#include <memory>

#include "core/queue_router.h"
#include "gtest/gtest.h"

namespace tollgate::core {
namespace {

const absl::Time kStart = absl::FromUnixSeconds(1767225600);

SchedulerConfig::AdmissionFairSharing Enabled() {
  SchedulerConfig::AdmissionFairSharing afs;
  afs.enable = true;
  // A half-life of one sampling interval: each sample keeps half, and an admission is charged
  // half of its usage on entry.
  afs.usage_half_life_time = absl::Minutes(10);
  afs.usage_sampling_interval = absl::Minutes(10);
  return afs;
}

Admission CpuAndGpu(int64_t millicores, int64_t gpus) {
  return Admission{"cq", {PodSetAssignment{"main", 1, {}, {{"cpu", millicores}, {"gpu", gpus}}}}};
}

// A workload's total requests, as EntryPenaltyRequests gives them (cpu in millicores).
std::map<std::string, int64_t> CpuAndGpuRequests(int64_t millicores, int64_t gpus) {
  return {{"cpu", millicores}, {"gpu", gpus}};
}

// A reservation admitted at once: its penalty is pushed, then settled.
void Admit(AdmissionFairSharingLedger& ledger, const std::string& local_queue, WorkloadId id,
           const std::map<std::string, int64_t>& requests, const WorkloadTable& workloads,
           absl::Time now) {
  ledger.PushEntryPenalty(local_queue, id, requests);
  ledger.SettleEntryPenalty(local_queue, id, workloads, now);
}

TEST(AdmissionFairSharingLedgerTest, AdmissionChargesItsEntryPenaltyInWholeUnits) {
  const SchedulerConfig::AdmissionFairSharing afs = Enabled();
  AdmissionFairSharingLedger ledger(afs);
  WorkloadTable nothing_held;
  ledger.Track("ml/a", kStart);
  Admit(ledger, "ml/a", 1, CpuAndGpuRequests(2000, 1), nothing_held, kStart);
  // cpu 2 cores * 0.5 + gpu 1 * 0.5.
  EXPECT_DOUBLE_EQ(ledger.WeightedUsage("ml/a", 1.0), 1.5);
  EXPECT_DOUBLE_EQ(ledger.WeightedUsage("ml/a", 0.5), 3.0);
  EXPECT_TRUE(std::isinf(ledger.WeightedUsage("ml/a", 0.0)));
  // A LocalQueue the ledger does not track is never charged.
  Admit(ledger, "ml/untracked", 2, CpuAndGpuRequests(2000, 1), nothing_held, kStart);
  EXPECT_DOUBLE_EQ(ledger.WeightedUsage("ml/untracked", 1.0), 0.0);
}

TEST(AdmissionFairSharingLedgerTest, SamplesDecayTowardsWhatTheQueueHolds) {
  const SchedulerConfig::AdmissionFairSharing afs = Enabled();
  AdmissionFairSharingLedger ledger(afs);
  WorkloadTable table;
  ledger.Track("ml/a", kStart);
  EXPECT_EQ(ledger.NextSample(), kStart + absl::Minutes(10));
  Admit(ledger, "ml/a", 1, CpuAndGpuRequests(2000, 1), table, kStart);

  auto held = std::make_unique<Workload>();
  held->spec.namespace_name = "ml";
  held->spec.name = "w";
  held->spec.queue_name = "a";
  held->status.state = WorkloadState::kAdmitted;
  held->status.admission = CpuAndGpu(2000, 0);
  table.Append(std::move(held));

  EXPECT_FALSE(ledger.SampleDue(table, kStart + absl::Minutes(9)));
  EXPECT_TRUE(ledger.SampleDue(table, kStart + absl::Minutes(10)));
  // cpu 1 * 0.5 + 2 held * 0.5 = 1.5; gpu 0.5 * 0.5 = 0.25.
  EXPECT_DOUBLE_EQ(ledger.WeightedUsage("ml/a", 1.0), 1.75);
  EXPECT_EQ(ledger.NextSample(), kStart + absl::Minutes(20));
  EXPECT_FALSE(ledger.SampleDue(table, kStart + absl::Minutes(10)));
}

// Kueue samples a LocalQueue's admitted usage (its cache's admittedUsage, IsAdmitted): a
// reservation waiting for its checks weighs through its entry penalty alone, and so does an
// evicted one whose checks were reset; an evicted workload without checks still counts until
// its quota is released.
TEST(AdmissionFairSharingLedgerTest, SamplesCountOnlyAdmittedWorkloads) {
  const SchedulerConfig::AdmissionFairSharing afs = Enabled();
  AdmissionFairSharingLedger ledger(afs);
  WorkloadTable table;
  ledger.Track("ml/a", kStart);
  auto add = [&table](const std::string& name, WorkloadState state,
                      std::vector<AdmissionCheckState> checks) {
    auto wl = std::make_unique<Workload>();
    wl->spec.namespace_name = "ml";
    wl->spec.name = name;
    wl->spec.queue_name = "a";
    wl->status.state = state;
    wl->status.admission = CpuAndGpu(2000, 0);
    wl->status.set_admission_checks(std::move(checks));
    table.Append(std::move(wl));
  };
  AdmissionCheckState pending;
  pending.name = "approval";
  pending.state = CheckState::kPending;
  add("reserved", WorkloadState::kQuotaReserved, {pending});
  add("evicted-with-checks", WorkloadState::kEvicting, {pending});
  add("evicted", WorkloadState::kEvicting, {});
  EXPECT_TRUE(ledger.SampleDue(table, kStart + absl::Minutes(10)));
  // Only "evicted" counts: cpu 2 * 0.5.
  EXPECT_DOUBLE_EQ(ledger.WeightedUsage("ml/a", 1.0), 1.0);
}

// Kueue's entry penalty reads the workload's SumTotalRequests: the spec's counts less reclaimable
// pods (not a partial admission's counts), without the `pods` its ClusterQueue may cover.
TEST(AdmissionFairSharingLedgerTest, EntryPenaltyRequestsAreTheWorkloadsOwnRequests) {
  SchedulerConfig config;
  ClusterQueueRuntime cq;
  cq.covers_pods = true;
  Workload wl;
  PodSetSpec workers;
  workers.name = "workers";
  workers.count = 4;
  workers.min_count = 2;
  workers.requests = {{"cpu", 500}, {"memory", 1024}};
  PodSetSpec driver;
  driver.name = "driver";
  driver.count = 1;
  driver.requests = {{"cpu", 1000}};
  wl.spec.pod_sets = {workers, driver};
  // Admitted with 2 of the 4 workers: the penalty still counts 4.
  wl.status.admission =
      Admission{"cq",
                {PodSetAssignment{"workers", 2, {}, {{"cpu", 1000}, {"memory", 2048}, {"pods", 2}}},
                 PodSetAssignment{"driver", 1, {}, {{"cpu", 1000}, {"pods", 1}}}}};
  EXPECT_EQ(EntryPenaltyRequests(config, wl, cq),
            (std::map<std::string, int64_t>{{"cpu", 3000}, {"memory", 4096}}));
  // One worker finished for good: it is no longer asked for.
  wl.status.mutable_history().reclaimable_pods = {{"workers", 1}};
  EXPECT_EQ(EntryPenaltyRequests(config, wl, cq),
            (std::map<std::string, int64_t>{{"cpu", 2500}, {"memory", 3072}}));
}

TEST(AdmissionFairSharingLedgerTest, ResourceWeightsScaleTheUsage) {
  SchedulerConfig::AdmissionFairSharing afs = Enabled();
  afs.resource_weights = {{"gpu", 4.0}};
  AdmissionFairSharingLedger ledger(afs);
  WorkloadTable nothing_held;
  ledger.Track("ml/a", kStart);
  Admit(ledger, "ml/a", 1, CpuAndGpuRequests(2000, 1), nothing_held, kStart);
  EXPECT_DOUBLE_EQ(ledger.WeightedUsage("ml/a", 1.0), 1.0 + 4.0 * 0.5);
}

// Kueue's per-workload penalty records (#14153): pending penalties count at once, a second push
// for the same workload replaces the first, and a dropped one leaves nothing behind.
TEST(AdmissionFairSharingLedgerTest, PendingPenaltyIsReplacedSettledOnceOrDropped) {
  const SchedulerConfig::AdmissionFairSharing afs = Enabled();
  AdmissionFairSharingLedger ledger(afs);
  WorkloadTable nothing_held;
  ledger.Track("ml/a", kStart);
  ledger.PushEntryPenalty("ml/a", 1, CpuAndGpuRequests(2000, 0));
  EXPECT_DOUBLE_EQ(ledger.WeightedUsage("ml/a", 1.0), 1.0);
  ledger.PushEntryPenalty("ml/a", 1, CpuAndGpuRequests(2000, 0));
  EXPECT_DOUBLE_EQ(ledger.WeightedUsage("ml/a", 1.0), 1.0);
  ledger.PushEntryPenalty("ml/a", 2, CpuAndGpuRequests(4000, 0));
  EXPECT_DOUBLE_EQ(ledger.WeightedUsage("ml/a", 1.0), 3.0);

  ledger.DropEntryPenalty("ml/a", 2);
  EXPECT_DOUBLE_EQ(ledger.WeightedUsage("ml/a", 1.0), 1.0);
  ledger.DropEntryPenalty("ml/a", 2);
  EXPECT_DOUBLE_EQ(ledger.WeightedUsage("ml/a", 1.0), 1.0);

  ledger.SettleEntryPenalty("ml/a", 1, nothing_held, kStart);
  EXPECT_DOUBLE_EQ(ledger.WeightedUsage("ml/a", 1.0), 1.0);
  // Settled: a second settlement or a drop changes nothing.
  ledger.SettleEntryPenalty("ml/a", 1, nothing_held, kStart);
  ledger.DropEntryPenalty("ml/a", 1);
  EXPECT_DOUBLE_EQ(ledger.WeightedUsage("ml/a", 1.0), 1.0);
}

TEST(AdmissionFairSharingLedgerTest, ChangedUsageIsReportedOnceAndSeedRestoresIt) {
  const SchedulerConfig::AdmissionFairSharing afs = Enabled();
  AdmissionFairSharingLedger ledger(afs);
  WorkloadTable nothing_held;
  ledger.Track("ml/a", kStart);
  ledger.Track("ml/b", kStart);
  // A new ledger and a sample that leaves zero at zero are nothing to persist.
  EXPECT_TRUE(ledger.TakeChanged().empty());
  EXPECT_TRUE(ledger.SampleDue(nothing_held, kStart + absl::Minutes(10)));
  EXPECT_TRUE(ledger.TakeChanged().empty());

  Admit(ledger, "ml/a", 1, CpuAndGpuRequests(2000, 1), nothing_held, kStart + absl::Minutes(10));
  auto changed = ledger.TakeChanged();
  ASSERT_EQ(changed.size(), 1u);
  ASSERT_TRUE(changed["ml/a"].has_value());
  EXPECT_DOUBLE_EQ((*changed["ml/a"])["cpu"], 1.0);
  EXPECT_DOUBLE_EQ((*changed["ml/a"])["gpu"], 0.5);
  EXPECT_TRUE(ledger.TakeChanged().empty());

  // A restarted ledger seeded with it orders the queue as before; pending penalties are gone.
  AdmissionFairSharingLedger restarted(afs);
  restarted.Track("ml/a", kStart + absl::Hours(1));
  restarted.PushEntryPenalty("ml/a", 2, CpuAndGpuRequests(4000, 0));
  restarted.Seed("ml/a", *changed["ml/a"], kStart + absl::Hours(1));
  restarted.Seed("ml/untracked", {{"cpu", 5.0}}, kStart + absl::Hours(1));
  EXPECT_DOUBLE_EQ(restarted.WeightedUsage("ml/a", 1.0), 1.5);
  EXPECT_DOUBLE_EQ(restarted.WeightedUsage("ml/untracked", 1.0), 0.0);
  EXPECT_TRUE(restarted.TakeChanged().empty());

  // A forgotten LocalQueue's stored usage is to be deleted.
  ledger.Forget("ml/a");
  changed = ledger.TakeChanged();
  ASSERT_EQ(changed.size(), 1u);
  EXPECT_FALSE(changed["ml/a"].has_value());
}

TEST(AdmissionFairSharingLedgerTest, DisabledTracksNothing) {
  const SchedulerConfig::AdmissionFairSharing afs;
  AdmissionFairSharingLedger ledger(afs);
  ledger.Track("ml/a", kStart);
  EXPECT_FALSE(ledger.NextSample().has_value());
  ClusterQueueSpec cq;
  cq.admission_mode = AdmissionMode::kUsageBasedFairSharing;
  EXPECT_FALSE(ledger.Applies(cq));
}

}  // namespace
}  // namespace tollgate::core
