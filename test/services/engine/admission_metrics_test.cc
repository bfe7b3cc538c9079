#include "services/engine/admission_metrics.h"

#include <cstdio>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "metrics/metric_registry.h"
#include "services/engine/tollgate_api.h"
#include "test/services/engine/executor_fixture.h"
#include "test/status_matchers.h"

namespace tollgate::engine {
namespace {

// The value of `series` (name and labels exactly as exposed) in a scrape.
std::optional<double> Value(const std::string& scrape, const std::string& series) {
  const size_t at = scrape.find("\n" + series + " ");
  if (at == std::string::npos) return std::nullopt;
  const size_t start = at + series.size() + 2;
  double value = 0;
  if (!absl::SimpleAtod(scrape.substr(start, scrape.find('\n', start) - start), &value)) {
    return std::nullopt;
  }
  return value;
}

// Drives the real executor (settling by hand, on a simulated clock) with AdmissionMetrics as
// its observer, and reads the metrics back from the registry's exposition.
class AdmissionMetricsTest : public testing::Test {
 protected:
  void SetUp() override {
    AdmissionExecutor::Options options = SettleByHand();
    options.observer = &metrics_;
    ASSERT_OK(fx_.Open(options));
    RegisterStateMetrics(registry_, *fx_.executor);
    OneQueueConfig config;
    config.cohort = "all";
    config.preempt_within_cluster_queue = "LowerPriority";
    config.lending_limit = "1";
    ASSERT_OK(fx_.ApplyOneQueue(config));
  }

  void Submit(const std::string& name, int32_t priority) {
    absl::StatusOr<v1::SubmitResponse> response =
        fx_.api->Submit(OnePodSubmitRequest("team", name, "3", priority));
    ASSERT_TRUE(response.ok()) << response.status();
  }

  void Settle() { ASSERT_TRUE(fx_.api->Settle().ok()); }

  metrics::Registry registry_;
  AdmissionMetrics metrics_{registry_};
  // After the metrics: the executor reports to them until it stops.
  ExecutorFixture fx_;
};

constexpr char kCq[] = R"(cluster_queue="cq",priority_class="",replica_role="standalone")";

TEST_F(AdmissionMetricsTest, AdmissionsWaitTimesAndStateGauges) {
  ASSERT_NO_FATAL_FAILURE(Submit("first", 0));
  fx_.clock.Advance(absl::Seconds(3));
  ASSERT_NO_FATAL_FAILURE(Settle());
  ASSERT_NO_FATAL_FAILURE(Submit("second", 0));
  ASSERT_NO_FATAL_FAILURE(Settle());

  const std::string scrape = registry_.Render();
  EXPECT_EQ(Value(scrape, absl::StrCat("kueue_admitted_workloads_total{", kCq, "}")), 1);
  EXPECT_EQ(Value(scrape, absl::StrCat("kueue_quota_reserved_workloads_total{", kCq, "}")), 1);
  // Waited 3 s: above the 2.5 bound, within 5.
  EXPECT_EQ(
      Value(scrape, absl::StrCat("kueue_admission_wait_time_seconds_bucket{", kCq, ",le=\"2.5\"}")),
      0);
  EXPECT_EQ(
      Value(scrape, absl::StrCat("kueue_admission_wait_time_seconds_bucket{", kCq, ",le=\"5\"}")),
      1);
  EXPECT_EQ(Value(scrape, absl::StrCat("kueue_admission_wait_time_seconds_sum{", kCq, "}")), 3);
  EXPECT_EQ(
      Value(
          scrape,
          R"(kueue_local_queue_admitted_workloads_total{name="q",namespace="team",priority_class="",replica_role="standalone"})"),
      1);
  EXPECT_GE(
      Value(scrape, R"(kueue_admission_attempts_total{result="success",replica_role="standalone"})")
          .value_or(0),
      1);
  EXPECT_GE(
      Value(scrape,
            R"(kueue_admission_attempts_total{result="inadmissible",replica_role="standalone"})")
          .value_or(0),
      1);

  // The second does not fit next to the first: one pending (parked), one admitted.
  EXPECT_EQ(
      Value(
          scrape,
          R"(kueue_pending_workloads{cluster_queue="cq",status="active",replica_role="standalone"})"),
      0);
  EXPECT_EQ(
      Value(
          scrape,
          R"(kueue_pending_workloads{cluster_queue="cq",status="inadmissible",replica_role="standalone"})"),
      1);
  EXPECT_EQ(
      Value(
          scrape,
          R"(kueue_local_queue_pending_workloads{name="q",namespace="team",status="inadmissible",replica_role="standalone"})"),
      1);
  EXPECT_EQ(
      Value(scrape,
            R"(kueue_admitted_active_workloads{cluster_queue="cq",replica_role="standalone"})"),
      1);
  EXPECT_EQ(
      Value(
          scrape,
          R"(kueue_local_queue_reserving_active_workloads{name="q",namespace="team",replica_role="standalone"})"),
      1);
  const std::string quota =
      R"({cohort="all",cluster_queue="cq",flavor="default",resource="cpu",replica_role="standalone"})";
  EXPECT_EQ(Value(scrape, "kueue_cluster_queue_nominal_quota" + quota), 4);
  EXPECT_EQ(Value(scrape, "kueue_cluster_queue_lending_limit" + quota), 1);
  // No borrowing limit: +Inf, as Kueue reports it.
  EXPECT_EQ(Value(scrape, "kueue_cluster_queue_borrowing_limit" + quota),
            std::numeric_limits<double>::infinity());
  EXPECT_NE(scrape.find("kueue_cluster_queue_borrowing_limit" + quota + " +Inf\n"),
            std::string::npos);
  EXPECT_EQ(Value(scrape, "kueue_cluster_queue_resource_usage" + quota), 3);
  EXPECT_EQ(Value(scrape, "kueue_cluster_queue_resource_reservation" + quota), 3);
  EXPECT_EQ(
      Value(
          scrape,
          R"(kueue_cluster_queue_status{cluster_queue="cq",status="active",replica_role="standalone"})"),
      1);
  EXPECT_EQ(
      Value(
          scrape,
          R"(kueue_cluster_queue_status{cluster_queue="cq",status="pending",replica_role="standalone"})"),
      0);
  // Kueue reports the weighted shares only with fair sharing enabled (it is not here).
  EXPECT_EQ(scrape.find("kueue_cohort_weighted_share"), std::string::npos);
  EXPECT_EQ(scrape.find("kueue_cluster_queue_weighted_share"), std::string::npos);
  EXPECT_GE(Value(scrape, "tollgate_store_commit_duration_seconds_count").value_or(0), 3);
  EXPECT_GE(Value(scrape, "tollgate_executor_cycles_total").value_or(0), 2);
}

TEST_F(AdmissionMetricsTest, PreemptionCountsPreemptorQueueAndVictimEviction) {
  ASSERT_NO_FATAL_FAILURE(Submit("low", 0));
  ASSERT_NO_FATAL_FAILURE(Settle());
  ASSERT_NO_FATAL_FAILURE(Submit("high", 100));
  ASSERT_NO_FATAL_FAILURE(Settle());

  const std::string scrape = registry_.Render();
  EXPECT_EQ(
      Value(
          scrape,
          R"(kueue_preempted_workloads_total{preempting_cluster_queue="cq",reason="InClusterQueue",replica_role="standalone"})"),
      1);
  EXPECT_EQ(
      Value(
          scrape,
          R"(kueue_evicted_workloads_total{cluster_queue="cq",reason="Preempted",underlying_cause="",priority_class="",replica_role="standalone"})"),
      1);
  EXPECT_EQ(
      Value(
          scrape,
          R"(kueue_local_queue_evicted_workloads_total{name="q",namespace="team",reason="Preempted",underlying_cause="",priority_class="",replica_role="standalone"})"),
      1);
  // low, then high after the preemption freed its quota.
  EXPECT_EQ(Value(scrape, absl::StrCat("kueue_admitted_workloads_total{", kCq, "}")), 2);
  EXPECT_EQ(
      Value(
          scrape,
          R"(kueue_pending_workloads{cluster_queue="cq",status="inadmissible",replica_role="standalone"})")
              .value_or(0) +
          Value(
              scrape,
              R"(kueue_pending_workloads{cluster_queue="cq",status="active",replica_role="standalone"})")
              .value_or(0),
      1);
}

// Evictions outside a cycle count too, by their reason: a user's Preempt, and draining a
// stopped ClusterQueue.
TEST_F(AdmissionMetricsTest, EvictionsByRequestAndStopPolicyCountWithTheirReason) {
  ASSERT_NO_FATAL_FAILURE(Submit("one", 0));
  ASSERT_NO_FATAL_FAILURE(Settle());
  v1::PreemptRequest preempt;
  preempt.mutable_workload()->set_namespace_("team");
  preempt.mutable_workload()->set_name("one");
  ASSERT_TRUE(fx_.api->Preempt(preempt).ok());
  // Back in the queue and admitted again by the next cycles.
  ASSERT_NO_FATAL_FAILURE(Settle());
  fx_.clock.Advance(absl::Seconds(1));

  v1::GetObjectRequest get;
  get.mutable_ref()->set_kind(v1::CLUSTER_QUEUE);
  get.mutable_ref()->set_name("cq");
  absl::StatusOr<v1::ConfigObject> cq = fx_.api->GetObject(get);
  ASSERT_TRUE(cq.ok()) << cq.status();
  cq->mutable_cluster_queue()->mutable_spec()->set_stop_policy("HoldAndDrain");
  v1::ApplyRequest apply;
  *apply.add_objects() = *cq;
  ASSERT_TRUE(fx_.api->Apply(apply).ok());
  ASSERT_NO_FATAL_FAILURE(Settle());

  const std::string scrape = registry_.Render();
  EXPECT_EQ(
      Value(
          scrape,
          R"(kueue_evicted_workloads_total{cluster_queue="cq",reason="Preempted",underlying_cause="",priority_class="",replica_role="standalone"})"),
      1);
  EXPECT_EQ(
      Value(
          scrape,
          R"(kueue_evicted_workloads_total{cluster_queue="cq",reason="ClusterQueueStopped",underlying_cause="",priority_class="",replica_role="standalone"})"),
      1);
  EXPECT_EQ(Value(scrape, absl::StrCat("kueue_admitted_workloads_total{", kCq, "}")), 2);
  EXPECT_EQ(
      Value(
          scrape,
          R"(kueue_cluster_queue_status{cluster_queue="cq",status="pending",replica_role="standalone"})"),
      1);
}

// Kueue's reportCQPendingWorkloads and reportLQPendingWorkloads: no pending workload of an
// inactive ClusterQueue is a candidate for the next cycle, so all of them count as inadmissible.
TEST_F(AdmissionMetricsTest, AnInactiveClusterQueuesPendingWorkloadsAreInadmissible) {
  v1::GetObjectRequest get;
  get.mutable_ref()->set_kind(v1::CLUSTER_QUEUE);
  get.mutable_ref()->set_name("cq");
  absl::StatusOr<v1::ConfigObject> cq = fx_.api->GetObject(get);
  ASSERT_TRUE(cq.ok()) << cq.status();
  cq->mutable_cluster_queue()->mutable_spec()->set_stop_policy("Hold");
  v1::ApplyRequest apply;
  *apply.add_objects() = *cq;
  ASSERT_TRUE(fx_.api->Apply(apply).ok());
  ASSERT_NO_FATAL_FAILURE(Submit("waits", 0));
  ASSERT_NO_FATAL_FAILURE(Settle());

  const std::string scrape = registry_.Render();
  EXPECT_EQ(
      Value(
          scrape,
          R"(kueue_pending_workloads{cluster_queue="cq",status="active",replica_role="standalone"})"),
      0);
  EXPECT_EQ(
      Value(
          scrape,
          R"(kueue_pending_workloads{cluster_queue="cq",status="inadmissible",replica_role="standalone"})"),
      1);
  EXPECT_EQ(
      Value(
          scrape,
          R"(kueue_local_queue_pending_workloads{name="q",namespace="team",status="active",replica_role="standalone"})"),
      0);
  EXPECT_EQ(
      Value(
          scrape,
          R"(kueue_local_queue_pending_workloads{name="q",namespace="team",status="inadmissible",replica_role="standalone"})"),
      1);
}

// Kueue's underlying_cause of a PodsReadyTimeout eviction: WaitForStart when the pods were never
// ready, WaitForRecovery when a ready workload lost a pod and did not recover in time.
TEST(AdmissionMetricsPodsReadyTest, PodsReadyTimeoutsNameWhichTimeoutFired) {
  metrics::Registry registry;
  AdmissionMetrics metrics{registry};
  ExecutorFixture fx;
  AdmissionExecutor::Options options = SettleByHand();
  options.observer = &metrics;
  core::SchedulerConfig config;
  config.wait_for_pods_ready.enable = true;
  config.wait_for_pods_ready.timeout = absl::Minutes(1);
  config.wait_for_pods_ready.recovery_timeout = absl::Minutes(1);
  ASSERT_OK(fx.Open(options, config));
  OneQueueConfig queue;
  queue.nominal_cpu = "8";
  ASSERT_OK(fx.ApplyOneQueue(queue));
  for (const char* name : {"never-ready", "lost-a-pod"}) {
    ASSERT_TRUE(fx.api->Submit(OnePodSubmitRequest("team", name, "1")).ok());
  }
  ASSERT_TRUE(fx.api->Settle().ok());
  v1::ReportPodsReadyRequest report;
  report.mutable_workload()->set_namespace_("team");
  report.mutable_workload()->set_name("lost-a-pod");
  ASSERT_TRUE(fx.api->ReportPodsReady(report).ok());
  report.set_ready(false);
  ASSERT_TRUE(fx.api->ReportPodsReady(report).ok());
  fx.clock.Advance(absl::Minutes(2));
  ASSERT_TRUE(fx.api->Settle().ok());

  const std::string scrape = registry.Render();
  EXPECT_EQ(
      Value(
          scrape,
          R"(kueue_evicted_workloads_total{cluster_queue="cq",reason="PodsReadyTimeout",underlying_cause="WaitForStart",priority_class="",replica_role="standalone"})"),
      1)
      << scrape;
  EXPECT_EQ(
      Value(
          scrape,
          R"(kueue_evicted_workloads_total{cluster_queue="cq",reason="PodsReadyTimeout",underlying_cause="WaitForRecovery",priority_class="",replica_role="standalone"})"),
      1)
      << scrape;
}

// Finishing counts once per ClusterQueue and LocalQueue, and the finished gauges count the
// finished workloads that still exist; the cohort's subtree gauges and info place the queue.
TEST_F(AdmissionMetricsTest, FinishedWorkloadsAndCohortSubtree) {
  ASSERT_NO_FATAL_FAILURE(Submit("first", 0));
  ASSERT_NO_FATAL_FAILURE(Settle());
  std::string scrape = registry_.Render();
  EXPECT_EQ(
      Value(
          scrape,
          R"(kueue_cohort_info{cohort="all",parent_cohort="",root_cohort="all",replica_role="standalone"})"),
      1);
  EXPECT_EQ(
      Value(
          scrape,
          R"(kueue_cluster_queue_info{cluster_queue="cq",parent_cohort="all",root_cohort="all",replica_role="standalone"})"),
      1);
  // The ClusterQueue lends 1 of its 4 cpus to the cohort; its workload reserves 3.
  EXPECT_EQ(
      Value(
          scrape,
          R"(kueue_cohort_subtree_quota{cohort="all",flavor="default",resource="cpu",replica_role="standalone"})"),
      1);
  EXPECT_EQ(
      Value(
          scrape,
          R"(kueue_cohort_subtree_resource_reservations{cohort="all",flavor="default",resource="cpu",replica_role="standalone"})"),
      3);
  EXPECT_EQ(
      Value(
          scrape,
          R"(kueue_cohort_subtree_admitted_active_workloads{cohort="all",replica_role="standalone"})"),
      1);
  EXPECT_EQ(
      Value(
          scrape,
          R"(kueue_cohort_subtree_admitted_workloads_total{cohort="all",priority_class="",replica_role="standalone"})"),
      1);
  EXPECT_EQ(
      Value(scrape, R"(kueue_finished_workloads{cluster_queue="cq",replica_role="standalone"})"),
      0);

  v1::FinishRequest finish;
  finish.mutable_workload()->set_namespace_("team");
  finish.mutable_workload()->set_name("first");
  ASSERT_OK(fx_.api->Finish(finish).status());
  // Finishing again is a no-op and is not counted again.
  ASSERT_OK(fx_.api->Finish(finish).status());
  ASSERT_NO_FATAL_FAILURE(Settle());
  scrape = registry_.Render();
  EXPECT_EQ(Value(scrape, absl::StrCat("kueue_finished_workloads_total{", kCq, "}")), 1);
  EXPECT_EQ(
      Value(
          scrape,
          R"(kueue_local_queue_finished_workloads_total{name="q",namespace="team",priority_class="",replica_role="standalone"})"),
      1);
  EXPECT_EQ(
      Value(scrape, R"(kueue_finished_workloads{cluster_queue="cq",replica_role="standalone"})"),
      1);
  EXPECT_EQ(
      Value(
          scrape,
          R"(kueue_local_queue_finished_workloads{name="q",namespace="team",replica_role="standalone"})"),
      1);
  // Nothing reserved any more: Kueue drops the zero series.
  EXPECT_EQ(
      Value(
          scrape,
          R"(kueue_cohort_subtree_resource_reservations{cohort="all",flavor="default",resource="cpu",replica_role="standalone"})"),
      std::nullopt);
  EXPECT_EQ(
      Value(
          scrape,
          R"(kueue_cohort_subtree_admitted_active_workloads{cohort="all",replica_role="standalone"})"),
      0);

  // The new families, with samples, pass Prometheus' own linter (as the e2e scrape does).
  const std::string file = ::testing::TempDir() + "/admission_metrics_scrape.txt";
  std::ofstream(file) << scrape;
  const std::string command = "/usr/bin/promtool check metrics < " + file + " 2>&1";
  FILE* promtool = popen(command.c_str(), "r");
  ASSERT_NE(promtool, nullptr);
  std::string output;
  char buffer[512];
  while (fgets(buffer, sizeof(buffer), promtool) != nullptr) output += buffer;
  EXPECT_EQ(pclose(promtool), 0) << output;

  v1::DeleteWorkloadRequest remove;
  remove.mutable_workload()->set_namespace_("team");
  remove.mutable_workload()->set_name("first");
  ASSERT_OK(fx_.api->DeleteWorkload(remove).status());
  scrape = registry_.Render();
  EXPECT_EQ(
      Value(scrape, R"(kueue_finished_workloads{cluster_queue="cq",replica_role="standalone"})"),
      0);
  EXPECT_EQ(Value(scrape, absl::StrCat("kueue_finished_workloads_total{", kCq, "}")), 1);
}

// With an admission check: reserved at once, admitted 7 s later when the check is Ready. The
// reservation counters move at reservation, the admission ones (and the checks' wait) then.
TEST_F(AdmissionMetricsTest, AdmissionChecksSplitReservationFromAdmission) {
  v1::ApplyRequest apply = OneQueueApplyRequest(OneQueueConfig());
  v1::AdmissionCheck* check = apply.add_objects()->mutable_admission_check();
  check->mutable_metadata()->set_name("prov");
  check->mutable_spec()->set_controller_name("example.com/prov");
  for (v1::ConfigObject& object : *apply.mutable_objects()) {
    if (object.has_cluster_queue())
      object.mutable_cluster_queue()->mutable_spec()->add_admission_checks("prov");
  }
  ASSERT_TRUE(fx_.api->Apply(apply).ok());
  v1::SetAdmissionCheckActiveRequest active;
  active.set_name("prov");
  active.set_active(true);
  ASSERT_TRUE(fx_.api->SetAdmissionCheckActive(active).ok());
  ASSERT_NO_FATAL_FAILURE(Submit("w", 0));
  ASSERT_NO_FATAL_FAILURE(Settle());

  std::string scrape = registry_.Render();
  EXPECT_EQ(Value(scrape, absl::StrCat("kueue_quota_reserved_workloads_total{", kCq, "}")), 1);
  EXPECT_EQ(Value(scrape, absl::StrCat("kueue_admitted_workloads_total{", kCq, "}")).value_or(0),
            0);
  EXPECT_EQ(
      Value(scrape,
            R"(kueue_reserving_active_workloads{cluster_queue="cq",replica_role="standalone"})"),
      1);
  EXPECT_EQ(
      Value(scrape,
            R"(kueue_admitted_active_workloads{cluster_queue="cq",replica_role="standalone"})"),
      0);

  fx_.clock.Advance(absl::Seconds(7));
  v1::GetWorkloadRequest get;
  get.mutable_workload()->set_namespace_("team");
  get.mutable_workload()->set_name("w");
  absl::StatusOr<v1::Workload> wl = fx_.api->GetWorkload(get);
  ASSERT_TRUE(wl.ok());
  v1::UpdateAdmissionCheckStateRequest ready;
  *ready.mutable_workload() = get.workload();
  ready.set_check("prov");
  ready.set_state("Ready");
  ready.set_expected_revision(wl->metadata().resource_version());
  ASSERT_TRUE(fx_.api->UpdateAdmissionCheckState(ready).ok());
  ASSERT_NO_FATAL_FAILURE(Settle());

  scrape = registry_.Render();
  EXPECT_EQ(Value(scrape, absl::StrCat("kueue_quota_reserved_workloads_total{", kCq, "}")), 1);
  EXPECT_EQ(Value(scrape, absl::StrCat("kueue_admitted_workloads_total{", kCq, "}")), 1);
  EXPECT_EQ(Value(scrape, absl::StrCat("kueue_admission_checks_wait_time_seconds_sum{", kCq, "}")),
            7);
  EXPECT_EQ(
      Value(scrape, absl::StrCat("kueue_admission_checks_wait_time_seconds_count{", kCq, "}")), 1);
  EXPECT_EQ(Value(scrape, absl::StrCat("kueue_admission_wait_time_seconds_sum{", kCq, "}")), 7);
  EXPECT_EQ(
      Value(
          scrape,
          R"(kueue_local_queue_admission_checks_wait_time_seconds_count{name="q",namespace="team",priority_class="",replica_role="standalone"})"),
      1);
  EXPECT_EQ(
      Value(scrape,
            R"(kueue_admitted_active_workloads{cluster_queue="cq",replica_role="standalone"})"),
      1);
}

// Kueue's multikueue_workloads_dispatched_total and _admitted_total: each worker a nomination
// adds counts once (however often the workload is committed at that time), and the winner once.
TEST_F(AdmissionMetricsTest, MultiKueueDispatchesAndTheWinnerAreCounted) {
  v1::ApplyRequest apply = OneQueueApplyRequest(OneQueueConfig());
  v1::AdmissionCheck* check = apply.add_objects()->mutable_admission_check();
  check->mutable_metadata()->set_name("mk");
  check->mutable_spec()->set_controller_name("kueue.x-k8s.io/multikueue");
  for (v1::ConfigObject& object : *apply.mutable_objects()) {
    if (object.has_cluster_queue())
      object.mutable_cluster_queue()->mutable_spec()->add_admission_checks("mk");
  }
  ASSERT_OK(fx_.api->Apply(apply).status());
  v1::SetAdmissionCheckActiveRequest active;
  active.set_name("mk");
  active.set_active(true);
  ASSERT_OK(fx_.api->SetAdmissionCheckActive(active).status());
  ASSERT_NO_FATAL_FAILURE(Submit("w", 0));
  ASSERT_NO_FATAL_FAILURE(Settle());

  v1::GetWorkloadRequest get;
  get.mutable_workload()->set_namespace_("team");
  get.mutable_workload()->set_name("w");
  auto update = [&](const std::string& state, std::vector<std::string> nominees,
                    const std::string& winner) {
    absl::StatusOr<v1::Workload> wl = fx_.api->GetWorkload(get);
    ASSERT_OK(wl.status());
    v1::UpdateAdmissionCheckStateRequest request;
    *request.mutable_workload() = get.workload();
    request.set_check("mk");
    request.set_state(state);
    request.set_expected_revision(wl->metadata().resource_version());
    if (winner.empty()) {
      request.set_set_nominated_cluster_names(true);
      for (const std::string& n : nominees) request.add_nominated_cluster_names(n);
    } else {
      request.set_cluster_name(winner);
    }
    ASSERT_OK(fx_.api->UpdateAdmissionCheckState(request).status());
    ASSERT_NO_FATAL_FAILURE(Settle());
  };
  ASSERT_NO_FATAL_FAILURE(update("Pending", {"w1"}, ""));
  fx_.clock.Advance(absl::Seconds(1));
  ASSERT_NO_FATAL_FAILURE(update("Pending", {"w1", "w2"}, ""));
  ASSERT_NO_FATAL_FAILURE(update("Pending", {"w1", "w2"}, ""));  // no change, no count
  ASSERT_NO_FATAL_FAILURE(update("Ready", {}, "w2"));

  const std::string scrape = registry_.Render();
  auto series = [](const std::string& name, const std::string& cluster) {
    return absl::StrCat(name, R"({cluster_queue="cq",cluster=")", cluster,
                        R"(",replica_role="standalone"})");
  };
  EXPECT_EQ(Value(scrape, series("multikueue_workloads_dispatched_total", "w1")), 1) << scrape;
  EXPECT_EQ(Value(scrape, series("multikueue_workloads_dispatched_total", "w2")), 1);
  EXPECT_EQ(Value(scrape, series("multikueue_workloads_admitted_total", "w2")), 1);
  EXPECT_EQ(Value(scrape, series("multikueue_workloads_admitted_total", "w1")), std::nullopt);
}

// Kueue clears a deleted LocalQueue's series (ClearLocalQueueMetrics) and records none for a
// LocalQueue that does not exist; deleting a Cohort clears its admitted-workload counters.
TEST_F(AdmissionMetricsTest, DeletingALocalQueueOrCohortClearsItsSeries) {
  v1::ApplyRequest cohort;
  cohort.add_objects()->mutable_cohort()->mutable_metadata()->set_name("all");
  ASSERT_OK(fx_.api->Apply(cohort).status());
  ASSERT_NO_FATAL_FAILURE(Submit("first", 0));
  ASSERT_NO_FATAL_FAILURE(Settle());
  constexpr char kLq[] =
      R"(kueue_local_queue_admitted_workloads_total{name="q",namespace="team",priority_class="",replica_role="standalone"})";
  constexpr char kLqFinished[] =
      R"(kueue_local_queue_finished_workloads_total{name="q",namespace="team",priority_class="",replica_role="standalone"})";
  constexpr char kLqStatus[] =
      R"(kueue_local_queue_status{name="q",namespace="team",active="True",replica_role="standalone"})";
  constexpr char kCohort[] =
      R"(kueue_cohort_subtree_admitted_workloads_total{cohort="all",priority_class="",replica_role="standalone"})";
  std::string scrape = registry_.Render();
  ASSERT_EQ(Value(scrape, kLq), 1);
  ASSERT_EQ(Value(scrape, kCohort), 1);

  v1::DeleteObjectRequest remove;
  remove.mutable_ref()->set_kind(v1::LOCAL_QUEUE);
  remove.mutable_ref()->set_namespace_("team");
  remove.mutable_ref()->set_name("q");
  ASSERT_OK(fx_.api->DeleteObject(remove).status());
  scrape = registry_.Render();
  EXPECT_EQ(Value(scrape, kLq), std::nullopt);
  EXPECT_EQ(Value(scrape, kLqStatus), std::nullopt);
  EXPECT_EQ(Value(scrape, absl::StrCat("kueue_admitted_workloads_total{", kCq, "}")), 1);

  // Its admitted workload runs on: its end counts for the ClusterQueue only.
  v1::FinishRequest finish;
  finish.mutable_workload()->set_namespace_("team");
  finish.mutable_workload()->set_name("first");
  ASSERT_OK(fx_.api->Finish(finish).status());
  scrape = registry_.Render();
  EXPECT_EQ(Value(scrape, absl::StrCat("kueue_finished_workloads_total{", kCq, "}")), 1);
  EXPECT_EQ(Value(scrape, kLqFinished), std::nullopt);

  // Re-created, it starts from zero.
  OneQueueConfig config;
  config.cohort = "all";
  config.preempt_within_cluster_queue = "LowerPriority";
  config.lending_limit = "1";
  ASSERT_OK(fx_.ApplyOneQueue(config));
  ASSERT_NO_FATAL_FAILURE(Submit("second", 0));
  ASSERT_NO_FATAL_FAILURE(Settle());
  scrape = registry_.Render();
  EXPECT_EQ(Value(scrape, kLq), 1);
  EXPECT_EQ(Value(scrape, kLqStatus), 1);
  EXPECT_EQ(Value(scrape, kCohort), 2);

  remove.mutable_ref()->set_kind(v1::COHORT);
  remove.mutable_ref()->set_namespace_("");
  remove.mutable_ref()->set_name("all");
  ASSERT_OK(fx_.api->DeleteObject(remove).status());
  EXPECT_EQ(Value(registry_.Render(), kCohort), std::nullopt);
}

TEST_F(AdmissionMetricsTest, ATerminatingClusterQueueReportsTerminating) {
  ASSERT_NO_FATAL_FAILURE(Submit("first", 0));
  ASSERT_NO_FATAL_FAILURE(Settle());
  v1::DeleteObjectRequest remove;
  remove.mutable_ref()->set_kind(v1::CLUSTER_QUEUE);
  remove.mutable_ref()->set_name("cq");
  absl::StatusOr<v1::DeleteObjectResponse> deleted = fx_.api->DeleteObject(remove);
  ASSERT_OK(deleted.status());
  ASSERT_TRUE(deleted->terminating());
  const std::string scrape = registry_.Render();
  EXPECT_EQ(
      Value(
          scrape,
          R"(kueue_cluster_queue_status{cluster_queue="cq",status="terminating",replica_role="standalone"})"),
      1);
  EXPECT_EQ(
      Value(
          scrape,
          R"(kueue_cluster_queue_status{cluster_queue="cq",status="pending",replica_role="standalone"})"),
      0);
}

// Kueue's weighted-share gauges are the unrounded share (status rounds it up), NaN for a
// ClusterQueue that borrows with weight 0.
TEST(WeightedShareMetricsTest, GaugesCarryThePreciseShare) {
  ExecutorFixture fx;
  AdmissionExecutor::Options options = SettleByHand();
  // Kueue reports the weighted shares only with fair sharing enabled.
  core::SchedulerConfig fair_sharing;
  fair_sharing.fair_sharing.enable = true;
  ASSERT_OK(fx.Open(options, fair_sharing));
  metrics::Registry registry;
  RegisterStateMetrics(registry, *fx.executor);
  OneQueueConfig config;
  config.cohort = "all";
  v1::ApplyRequest request = OneQueueApplyRequest(config);
  // A second ClusterQueue of 5 cpu, weight 0 and (as "cq") nominal 4: the cohort has 9 to lend.
  v1::ClusterQueue* zero = request.add_objects()->mutable_cluster_queue();
  *zero = request.objects(1).cluster_queue();
  zero->mutable_metadata()->set_name("zero");
  zero->mutable_spec()
      ->mutable_resource_groups(0)
      ->mutable_flavors(0)
      ->mutable_resources(0)
      ->set_nominal_quota("5");
  zero->mutable_spec()->mutable_fair_sharing()->set_weight("0");
  // And in a cohort of its own, a ClusterQueue whose quota is beyond int64: unlimited.
  v1::ClusterQueue* exa = request.add_objects()->mutable_cluster_queue();
  *exa = request.objects(1).cluster_queue();
  exa->mutable_metadata()->set_name("exa");
  exa->mutable_spec()->set_cohort("other");
  exa->mutable_spec()
      ->mutable_resource_groups(0)
      ->mutable_flavors(0)
      ->mutable_resources(0)
      ->set_nominal_quota("1E");
  v1::LocalQueue* lq = request.add_objects()->mutable_local_queue();
  lq->mutable_metadata()->set_name("z");
  lq->mutable_metadata()->set_namespace_("team");
  lq->mutable_spec()->set_cluster_queue("zero");
  ASSERT_OK(fx.api->Apply(request).status());

  // cq runs 6 of its 4: it borrows 2 of 9 -> 222.2... (status: 223).
  ASSERT_OK(fx.api->Submit(OnePodSubmitRequest("team", "big", "6")).status());
  ASSERT_TRUE(fx.api->Settle().ok());
  std::string scrape = registry.Render();
  const std::optional<double> share = Value(
      scrape,
      R"(kueue_cluster_queue_weighted_share{cluster_queue="cq",cohort="all",replica_role="standalone"})");
  ASSERT_TRUE(share.has_value()) << scrape;
  EXPECT_DOUBLE_EQ(*share, 2000.0 / 9.0);
  EXPECT_EQ(
      Value(
          scrape,
          R"(kueue_cluster_queue_weighted_share{cluster_queue="zero",cohort="all",replica_role="standalone"})"),
      0);

  // Kueue exposes an unlimited quota as +Inf.
  EXPECT_NE(
      scrape.find(
          R"(kueue_cluster_queue_nominal_quota{cohort="other",cluster_queue="exa",flavor="default",resource="cpu",replica_role="standalone"} +Inf)"),
      std::string::npos)
      << scrape;

  // "zero" borrows with weight 0: its share is +Inf, exposed as NaN.
  v1::FinishRequest finish;
  finish.mutable_workload()->set_namespace_("team");
  finish.mutable_workload()->set_name("big");
  ASSERT_OK(fx.api->Finish(finish).status());
  v1::SubmitRequest borrow = OnePodSubmitRequest("team", "borrow", "6");
  borrow.mutable_workload()->mutable_spec()->set_queue_name("z");
  ASSERT_OK(fx.api->Submit(borrow).status());
  ASSERT_TRUE(fx.api->Settle().ok());
  scrape = registry.Render();
  EXPECT_NE(
      scrape.find(
          R"(kueue_cluster_queue_weighted_share{cluster_queue="zero",cohort="all",replica_role="standalone"} NaN)"),
      std::string::npos)
      << scrape;
}

}  // namespace
}  // namespace tollgate::engine
