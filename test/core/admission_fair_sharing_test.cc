#include "core/admission_fair_sharing.h"

#include <cmath>
#include <memory>

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

// A reservation admitted at once: its penalty is pushed, then settled.
void Admit(AdmissionFairSharingLedger& ledger, const std::string& local_queue, WorkloadId id,
           const Admission& admission, const WorkloadTable& workloads, absl::Time now) {
  ledger.PushEntryPenalty(local_queue, id, admission);
  ledger.SettleEntryPenalty(local_queue, id, workloads, now);
}

TEST(AdmissionFairSharingLedgerTest, AdmissionChargesItsEntryPenaltyInWholeUnits) {
  const SchedulerConfig::AdmissionFairSharing afs = Enabled();
  AdmissionFairSharingLedger ledger(afs);
  WorkloadTable nothing_held;
  ledger.Track("ml/a", kStart);
  Admit(ledger, "ml/a", 1, CpuAndGpu(2000, 1), nothing_held, kStart);
  // cpu 2 cores * 0.5 + gpu 1 * 0.5.
  EXPECT_DOUBLE_EQ(ledger.WeightedUsage("ml/a", 1.0), 1.5);
  EXPECT_DOUBLE_EQ(ledger.WeightedUsage("ml/a", 0.5), 3.0);
  EXPECT_TRUE(std::isinf(ledger.WeightedUsage("ml/a", 0.0)));
  // A LocalQueue the ledger does not track is never charged.
  Admit(ledger, "ml/untracked", 2, CpuAndGpu(2000, 1), nothing_held, kStart);
  EXPECT_DOUBLE_EQ(ledger.WeightedUsage("ml/untracked", 1.0), 0.0);
}

TEST(AdmissionFairSharingLedgerTest, SamplesDecayTowardsWhatTheQueueHolds) {
  const SchedulerConfig::AdmissionFairSharing afs = Enabled();
  AdmissionFairSharingLedger ledger(afs);
  WorkloadTable table;
  ledger.Track("ml/a", kStart);
  EXPECT_EQ(ledger.NextSample(), kStart + absl::Minutes(10));
  Admit(ledger, "ml/a", 1, CpuAndGpu(2000, 1), table, kStart);

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

TEST(AdmissionFairSharingLedgerTest, ResourceWeightsScaleTheUsage) {
  SchedulerConfig::AdmissionFairSharing afs = Enabled();
  afs.resource_weights = {{"gpu", 4.0}};
  AdmissionFairSharingLedger ledger(afs);
  WorkloadTable nothing_held;
  ledger.Track("ml/a", kStart);
  Admit(ledger, "ml/a", 1, CpuAndGpu(2000, 1), nothing_held, kStart);
  EXPECT_DOUBLE_EQ(ledger.WeightedUsage("ml/a", 1.0), 1.0 + 4.0 * 0.5);
}

// Kueue's per-workload penalty records (#14153): pending penalties count at once, a second push
// for the same workload replaces the first, and a dropped one leaves nothing behind.
TEST(AdmissionFairSharingLedgerTest, PendingPenaltyIsReplacedSettledOnceOrDropped) {
  const SchedulerConfig::AdmissionFairSharing afs = Enabled();
  AdmissionFairSharingLedger ledger(afs);
  WorkloadTable nothing_held;
  ledger.Track("ml/a", kStart);
  ledger.PushEntryPenalty("ml/a", 1, CpuAndGpu(2000, 0));
  EXPECT_DOUBLE_EQ(ledger.WeightedUsage("ml/a", 1.0), 1.0);
  ledger.PushEntryPenalty("ml/a", 1, CpuAndGpu(2000, 0));
  EXPECT_DOUBLE_EQ(ledger.WeightedUsage("ml/a", 1.0), 1.0);
  ledger.PushEntryPenalty("ml/a", 2, CpuAndGpu(4000, 0));
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

  Admit(ledger, "ml/a", 1, CpuAndGpu(2000, 1), nothing_held, kStart + absl::Minutes(10));
  auto changed = ledger.TakeChanged();
  ASSERT_EQ(changed.size(), 1u);
  ASSERT_TRUE(changed["ml/a"].has_value());
  EXPECT_DOUBLE_EQ((*changed["ml/a"])["cpu"], 1.0);
  EXPECT_DOUBLE_EQ((*changed["ml/a"])["gpu"], 0.5);
  EXPECT_TRUE(ledger.TakeChanged().empty());

  // A restarted ledger seeded with it orders the queue as before; pending penalties are gone.
  AdmissionFairSharingLedger restarted(afs);
  restarted.Track("ml/a", kStart + absl::Hours(1));
  restarted.PushEntryPenalty("ml/a", 2, CpuAndGpu(4000, 0));
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
