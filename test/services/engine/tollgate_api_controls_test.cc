// TollgateApi's operator controls through the real executor: deletion with in-use protection
// (stored, surviving a restart, finalized atomically) and without it (Cohorts and LocalQueues go
// at once, and a restart keeps them gone), stop/resume, deactivate/activate, reprioritize, and
// Preempt's account of the round that followed the eviction.

#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/clock.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "services/engine/admission_executor.h"
#include "services/engine/config_objects.h"
#include "services/engine/tollgate_api.h"
#include "storage/memory_store.h"
#include "tollgate/v1/service.pb.h"

namespace tollgate::engine {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// cq-a (nominal 0, borrows; may preempt lower-priority borrowers' victims) and cq-b (nominal 4,
// never reclaims) share cohort "c"; LocalQueues qa and qb in namespace ns.
constexpr char kObjects[] = R"pb(
  objects { resource_flavor { metadata { name: "rf" } } }
  objects {
    cluster_queue {
      metadata { name: "cq-a" }
      spec {
        cohort: "c"
        resource_groups {
          covered_resources: "cpu"
          flavors {
            name: "rf"
            resources { name: "cpu" nominal_quota: "0" }
          }
        }
        preemption {
          reclaim_within_cohort: "Any"
          borrow_within_cohort { policy: "LowerPriority" }
        }
      }
    }
  }
  objects {
    cluster_queue {
      metadata { name: "cq-b" }
      spec {
        cohort: "c"
        resource_groups {
          covered_resources: "cpu"
          flavors {
            name: "rf"
            resources { name: "cpu" nominal_quota: "4" }
          }
        }
      }
    }
  }
  objects {
    local_queue {
      metadata { namespace: "ns" name: "qa" }
      spec { cluster_queue: "cq-a" }
    }
  }
  objects {
    local_queue {
      metadata { namespace: "ns" name: "qb" }
      spec { cluster_queue: "cq-b" }
    }
  }
)pb";

class TollgateApiControlsTest : public testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(Open());
    v1::ApplyRequest request;
    ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(kObjects, &request));
    absl::StatusOr<v1::ApplyResponse> applied = api_->Apply(request);
    ASSERT_TRUE(applied.ok()) << applied.status();
  }

  // Continuous scheduling, as tollgated runs, with rounds long enough for a few cycles on a
  // loaded machine (Preempt's answer depends on the cycles of its own round).
  void Open() {
    executor_.reset();
    api_.reset();
    AdmissionExecutor::Options options;
    options.cycle_time_per_round = absl::Seconds(30);
    absl::StatusOr<std::unique_ptr<AdmissionExecutor>> executor =
        AdmissionExecutor::Open(store_, clock_, config_, options);
    ASSERT_TRUE(executor.ok()) << executor.status();
    executor_ = *std::move(executor);
    api_ = std::make_unique<TollgateApi>(*executor_);
  }

  void Submit(const std::string& name, const std::string& queue, int cpu, int priority) {
    v1::SubmitRequest request;
    v1::Workload* wl = request.mutable_workload();
    wl->mutable_metadata()->set_namespace_("ns");
    wl->mutable_metadata()->set_name(name);
    wl->mutable_spec()->set_queue_name(queue);
    wl->mutable_spec()->set_priority(priority);
    v1::PodSet* ps = wl->mutable_spec()->add_pod_sets();
    ps->set_count(cpu);
    (*ps->mutable_requests())["cpu"] = "1";
    ASSERT_TRUE(api_->Submit(request).ok());
    ASSERT_TRUE(api_->Settle().ok());
  }

  static v1::WorkloadRef Ref(const std::string& name) {
    v1::WorkloadRef ref;
    ref.set_namespace_("ns");
    ref.set_name(name);
    return ref;
  }

  v1::Workload Get(const std::string& name) {
    v1::GetWorkloadRequest request;
    *request.mutable_workload() = Ref(name);
    absl::StatusOr<v1::Workload> wl = api_->GetWorkload(request);
    EXPECT_TRUE(wl.ok()) << wl.status();
    return wl.ok() ? *wl : v1::Workload();
  }

  absl::StatusOr<v1::ConfigObject> GetObject(v1::ObjectKind kind, const std::string& name,
                                             const std::string& ns = "") {
    v1::GetObjectRequest request;
    request.mutable_ref()->set_kind(kind);
    request.mutable_ref()->set_namespace_(ns);
    request.mutable_ref()->set_name(name);
    return api_->GetObject(request);
  }

  // A deleted Cohort that ClusterQueues still name: no stored object, and Get answers with the
  // implicit cohort (empty spec, an Implicit condition), as Kueue's hierarchy keeps the name.
  void ExpectImplicitCohort(const std::string& name) {
    absl::StatusOr<std::optional<std::string>> stored =
        store_.Get(engine::ConfigObjectKey(v1::COHORT, "", name));
    ASSERT_TRUE(stored.ok()) << stored.status();
    EXPECT_FALSE(stored->has_value()) << name;
    absl::StatusOr<v1::ConfigObject> cohort = GetObject(v1::COHORT, name);
    ASSERT_TRUE(cohort.ok()) << cohort.status();
    EXPECT_EQ(cohort->cohort().spec().parent(), "") << cohort->DebugString();
    bool implicit = false;
    for (const v1::Condition& c : cohort->cohort().status().conditions()) {
      implicit = implicit || (c.type() == "Implicit" && c.status() == "True");
    }
    EXPECT_TRUE(implicit) << cohort->DebugString();
  }

  absl::StatusOr<v1::DeleteObjectResponse> Delete(v1::ObjectKind kind, const std::string& name,
                                                  const std::string& ns = "") {
    v1::DeleteObjectRequest request;
    request.mutable_ref()->set_kind(kind);
    request.mutable_ref()->set_namespace_(ns);
    request.mutable_ref()->set_name(name);
    return api_->DeleteObject(request);
  }

  core::SimulatedClock clock_{absl::FromUnixSeconds(1767225600)};
  // Read by Open: a test may change it and Open again (a restart with another Configuration).
  core::SchedulerConfig config_;
  storage::MemoryStore store_;
  std::unique_ptr<AdmissionExecutor> executor_;
  std::unique_ptr<TollgateApi> api_;
};

TEST_F(TollgateApiControlsTest, PreemptSaysWhatTheRoundAfterTheEvictionDid) {
  // w borrows all of cq-b's quota; p (cq-b's own, lower priority) waits: cq-b never reclaims.
  ASSERT_NO_FATAL_FAILURE(Submit("w", "qa", 4, 10));
  ASSERT_NO_FATAL_FAILURE(Submit("p", "qb", 4, 0));
  ASSERT_EQ(Get("w").status().state(), v1::WORKLOAD_STATE_ADMITTED);
  ASSERT_EQ(Get("p").status().state(), v1::WORKLOAD_STATE_PENDING);

  // Evicted, p takes its own quota back in the same round (not borrowing goes first), and w
  // may not preempt p (p is within its nominal quota): the answer says w waits, and why.
  v1::PreemptRequest request;
  *request.mutable_workload() = Ref("w");
  absl::StatusOr<v1::PreemptResponse> response = api_->Preempt(request);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_TRUE(response->evicted());
  EXPECT_FALSE(response->readmitted()) << response->message();
  EXPECT_EQ(response->workload().status().state(), v1::WORKLOAD_STATE_PENDING);
  EXPECT_EQ(response->preempted_size(), 0);
  EXPECT_THAT(response->message(), HasSubstr("evicted and requeued (Pending)"));
  EXPECT_THAT(response->message(), HasSubstr("insufficient unused quota"));
  EXPECT_EQ(Get("p").status().state(), v1::WORKLOAD_STATE_ADMITTED);
}

TEST_F(TollgateApiControlsTest, PreemptWithHoldEvictsAndDeactivatesInOneCommit) {
  ASSERT_NO_FATAL_FAILURE(Submit("w", "qb", 4, 0));
  v1::PreemptRequest request;
  *request.mutable_workload() = Ref("w");
  request.set_hold(true);
  absl::StatusOr<v1::PreemptResponse> response = api_->Preempt(request);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_FALSE(response->readmitted());
  EXPECT_THAT(response->message(), HasSubstr("deactivated"));
  EXPECT_EQ(response->workload().status().state(), v1::WORKLOAD_STATE_PENDING);
  EXPECT_FALSE(response->workload().spec().active());
  // Stored so: after a restart it is still held, and activating requeues it.
  ASSERT_NO_FATAL_FAILURE(Open());
  EXPECT_FALSE(Get("w").spec().active());
  v1::SetWorkloadActiveRequest activate;
  *activate.mutable_workload() = Ref("w");
  activate.set_active(true);
  ASSERT_TRUE(api_->SetWorkloadActive(activate).ok());
  ASSERT_TRUE(api_->Settle().ok());
  EXPECT_EQ(Get("w").status().state(), v1::WORKLOAD_STATE_ADMITTED);
}

// MultiKueue's local eviction deactivates the winner's copy with Kueue's cause; the eviction
// names it, and it survives a restart. Bad causes are refused, naming the field, and change
// nothing.
TEST_F(TollgateApiControlsTest, SetWorkloadActiveWithACauseNamesItInTheEviction) {
  ASSERT_NO_FATAL_FAILURE(Submit("w", "qb", 4, 0));
  ASSERT_EQ(Get("w").status().state(), v1::WORKLOAD_STATE_ADMITTED);
  const int64_t revision = Get("w").metadata().resource_version();
  auto request = [&](bool active, const std::string& reason, const std::string& message) {
    v1::SetWorkloadActiveRequest r;
    *r.mutable_workload() = Ref("w");
    r.set_active(active);
    r.set_deactivation_reason(reason);
    r.set_deactivation_message(message);
    return r;
  };
  struct Bad {
    v1::SetWorkloadActiveRequest request;
    std::string error;
  };
  const std::vector<Bad> bad = {
      {request(true, "EvictedOnManagerCluster", "x"),
       "deactivation_reason: is given only with active false (a deactivation's cause), got "
       "active true"},
      {request(true, "", "x"), "deactivation_message: is given only with active false"},
      {request(false, "", "Evicted on manager"),
       "deactivation_message: is given without deactivation_reason"},
      {request(false, "Evicted on manager", ""),
       "deactivation_reason: must be a condition reason (a letter, then letters, digits, '_', "
       "',' or ':', not ending in ',' or ':', at most 1024 bytes), got \"Evicted on manager\""},
      {request(false, std::string(317, 'R'), ""),
       "deactivation_reason: must be no more than 316 bytes, got 317"},
      {request(false, "EvictedOnManagerCluster", std::string(32 * 1024 + 1, 'm')),
       "deactivation_message: must be no more than 32768 bytes, got 32769"},
  };
  for (const Bad& b : bad) {
    absl::StatusOr<v1::SetWorkloadActiveResponse> refused = api_->SetWorkloadActive(b.request);
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument) << b.error;
    EXPECT_THAT(refused.status().message(), HasSubstr(b.error));
  }
  EXPECT_EQ(Get("w").metadata().resource_version(), revision);
  EXPECT_TRUE(Get("w").spec().active());
  EXPECT_EQ(Get("w").status().state(), v1::WORKLOAD_STATE_ADMITTED);

  absl::StatusOr<v1::SetWorkloadActiveResponse> deactivated = api_->SetWorkloadActive(
      request(false, "EvictedOnManagerCluster", "Evicted on manager: Preempted on request"));
  ASSERT_TRUE(deactivated.ok()) << deactivated.status();
  ASSERT_TRUE(api_->Settle().ok());
  ASSERT_NO_FATAL_FAILURE(Open());
  const v1::Workload w = Get("w");
  EXPECT_FALSE(w.spec().active());
  EXPECT_EQ(w.status().state(), v1::WORKLOAD_STATE_PENDING);
  const v1::Condition* evicted = nullptr;
  for (const v1::Condition& c : w.status().conditions()) {
    if (c.type() == "Evicted") evicted = &c;
  }
  ASSERT_NE(evicted, nullptr);
  EXPECT_EQ(evicted->status(), "True");
  EXPECT_EQ(evicted->reason(), "DeactivatedDueToEvictedOnManagerCluster");
  EXPECT_EQ(evicted->message(),
            "The workload is deactivated due to Evicted on manager: Preempted on request");

  // Old callers: no cause is the plain deactivation.
  ASSERT_NO_FATAL_FAILURE(Submit("x", "qb", 4, 0));
  ASSERT_EQ(Get("x").status().state(), v1::WORKLOAD_STATE_ADMITTED);
  v1::SetWorkloadActiveRequest plain;
  *plain.mutable_workload() = Ref("x");
  plain.set_active(false);
  ASSERT_TRUE(api_->SetWorkloadActive(plain).ok());
  const v1::Workload x = Get("x");
  for (const v1::Condition& c : x.status().conditions()) {
    if (c.type() == "Evicted") {
      EXPECT_EQ(c.reason(), "Deactivated");
      EXPECT_EQ(c.message(), "The workload is deactivated");
    }
  }
}

TEST_F(TollgateApiControlsTest, InUseClusterQueueTerminatesAcrossARestartAndGoesWithItsWorkload) {
  ASSERT_NO_FATAL_FAILURE(Submit("w", "qb", 2, 0));
  absl::StatusOr<v1::DeleteObjectResponse> deleted = Delete(v1::CLUSTER_QUEUE, "cq-b");
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  EXPECT_TRUE(deleted->terminating());
  EXPECT_THAT(deleted->held_by(), ElementsAre("ns/w"));
  absl::StatusOr<v1::ConfigObject> cq = GetObject(v1::CLUSTER_QUEUE, "cq-b");
  ASSERT_TRUE(cq.ok());
  EXPECT_TRUE(cq->cluster_queue().metadata().has_deletion_timestamp());
  EXPECT_EQ(cq->cluster_queue().status().conditions(0).reason(), "Terminating");

  ASSERT_NO_FATAL_FAILURE(Open());
  cq = GetObject(v1::CLUSTER_QUEUE, "cq-b");
  ASSERT_TRUE(cq.ok());
  EXPECT_TRUE(cq->cluster_queue().metadata().has_deletion_timestamp());
  EXPECT_EQ(cq->cluster_queue().status().admitted_workloads(), 1);
  // A re-apply updates it and keeps it terminating.
  v1::ApplyRequest apply;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(kObjects, &apply));
  ASSERT_TRUE(api_->Apply(apply).ok());
  cq = GetObject(v1::CLUSTER_QUEUE, "cq-b");
  ASSERT_TRUE(cq.ok());
  EXPECT_TRUE(cq->cluster_queue().metadata().has_deletion_timestamp());

  v1::FinishRequest finish;
  *finish.mutable_workload() = Ref("w");
  ASSERT_TRUE(api_->Finish(finish).ok());
  EXPECT_EQ(GetObject(v1::CLUSTER_QUEUE, "cq-b").status().code(), absl::StatusCode::kNotFound);
  ASSERT_NO_FATAL_FAILURE(Open());
  EXPECT_EQ(GetObject(v1::CLUSTER_QUEUE, "cq-b").status().code(), absl::StatusCode::kNotFound);
}

// Kueue has no in-use finalizer on Cohorts and LocalQueues: both go at once while w (admitted
// from qa, borrowing cq-b's quota through cohort c) runs on, and a restart rebuilds the same.
TEST_F(TollgateApiControlsTest, InUseCohortAndLocalQueueGoAtOnceAndARestartKeepsThem) {
  v1::ApplyRequest cohort;
  v1::Cohort* c = cohort.add_objects()->mutable_cohort();
  c->mutable_metadata()->set_name("c");
  ASSERT_TRUE(api_->Apply(cohort).ok());
  ASSERT_NO_FATAL_FAILURE(Submit("w", "qa", 2, 0));
  ASSERT_NO_FATAL_FAILURE(Submit("later", "qa", 1, 0));
  ASSERT_EQ(Get("w").status().state(), v1::WORKLOAD_STATE_ADMITTED);
  ASSERT_EQ(Get("later").status().state(), v1::WORKLOAD_STATE_ADMITTED);
  // Only cq-b's 1 left: p waits for quota; then qa goes with w and later still running.
  ASSERT_NO_FATAL_FAILURE(Submit("p", "qa", 2, 0));
  ASSERT_EQ(Get("p").status().state(), v1::WORKLOAD_STATE_PENDING);

  for (auto [kind, name, ns] :
       {std::tuple{v1::LOCAL_QUEUE, "qa", "ns"}, std::tuple{v1::COHORT, "c", ""}}) {
    absl::StatusOr<v1::DeleteObjectResponse> deleted = Delete(kind, name, ns);
    ASSERT_TRUE(deleted.ok()) << deleted.status();
    EXPECT_FALSE(deleted->terminating()) << name;
    EXPECT_THAT(deleted->held_by(), testing::IsEmpty());
  }
  ASSERT_TRUE(api_->Settle().ok());
  auto expect_states = [&] {
    EXPECT_EQ(GetObject(v1::LOCAL_QUEUE, "qa", "ns").status().code(), absl::StatusCode::kNotFound);
    ExpectImplicitCohort("c");
    EXPECT_EQ(Get("w").status().state(), v1::WORKLOAD_STATE_ADMITTED);
    EXPECT_EQ(Get("later").status().state(), v1::WORKLOAD_STATE_ADMITTED);
    EXPECT_EQ(Get("p").status().state(), v1::WORKLOAD_STATE_PENDING);
    EXPECT_EQ(Get("p").status().pending_message(), "LocalQueue qa doesn't exist");
    // cq-a stays active in the implicit cohort c, charged with what it runs.
    absl::StatusOr<v1::ConfigObject> cq = GetObject(v1::CLUSTER_QUEUE, "cq-a");
    ASSERT_TRUE(cq.ok());
    EXPECT_EQ(cq->cluster_queue().status().conditions(0).status(), "True");
    EXPECT_EQ(cq->cluster_queue().status().admitted_workloads(), 2);
  };
  expect_states();
  ASSERT_NO_FATAL_FAILURE(Open());
  expect_states();

  // Re-created, qa queues p again.
  v1::ApplyRequest again;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(kObjects, &again));
  ASSERT_TRUE(api_->Apply(again).ok());
  ASSERT_TRUE(api_->Settle().ok());
  EXPECT_NE(Get("p").status().pending_message(), "LocalQueue qa doesn't exist");
}

// An earlier Tollgate kept an in-use Cohort or LocalQueue terminating and stored it so: the
// first start under today's rule removes it from the state and, in its first round, the store.
TEST_F(TollgateApiControlsTest, ACohortOrLocalQueueStoredAsTerminatingGoesOnStart) {
  v1::ApplyRequest cohort;
  cohort.add_objects()->mutable_cohort()->mutable_metadata()->set_name("c");
  ASSERT_TRUE(api_->Apply(cohort).ok());
  ASSERT_NO_FATAL_FAILURE(Submit("w", "qa", 2, 0));
  executor_.reset();
  api_.reset();
  storage::WriteBatch old_version;
  for (auto [kind, name, ns] :
       {std::tuple{v1::LOCAL_QUEUE, "qa", "ns"}, std::tuple{v1::COHORT, "c", ""}}) {
    const std::string key = engine::ConfigObjectKey(kind, ns, name);
    absl::StatusOr<std::optional<std::string>> stored = store_.Get(key);
    ASSERT_TRUE(stored.ok() && stored->has_value()) << key;
    v1::ConfigObject object;
    ASSERT_TRUE(object.ParseFromString(**stored));
    v1::ObjectMeta* meta = kind == v1::COHORT ? object.mutable_cohort()->mutable_metadata()
                                              : object.mutable_local_queue()->mutable_metadata();
    meta->mutable_deletion_timestamp()->set_seconds(1767225000);
    old_version.Put(key, object.SerializeAsString());
  }
  ASSERT_TRUE(store_.Commit(old_version).ok());

  ASSERT_NO_FATAL_FAILURE(Open());
  EXPECT_EQ(Get("w").status().state(), v1::WORKLOAD_STATE_ADMITTED);
  // The startup round deletes the stored copies; a condition with a deadline, not a sleep.
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  auto gone = [&] {
    absl::StatusOr<std::optional<std::string>> lq =
        store_.Get(engine::ConfigObjectKey(v1::LOCAL_QUEUE, "ns", "qa"));
    absl::StatusOr<std::optional<std::string>> c =
        store_.Get(engine::ConfigObjectKey(v1::COHORT, "", "c"));
    return lq.ok() && !lq->has_value() && c.ok() && !c->has_value();
  };
  while (!gone() && absl::Now() < deadline) ASSERT_TRUE(api_->Settle().ok());
  EXPECT_TRUE(gone());
  EXPECT_EQ(GetObject(v1::LOCAL_QUEUE, "qa", "ns").status().code(), absl::StatusCode::kNotFound);
  ExpectImplicitCohort("c");
}

TEST_F(TollgateApiControlsTest, FlavorInUseIsRefusedNamingTheQueues) {
  absl::StatusOr<v1::DeleteObjectResponse> refused = Delete(v1::RESOURCE_FLAVOR, "rf");
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.status().message(), HasSubstr("ClusterQueue cq-a, ClusterQueue cq-b"));
  EXPECT_TRUE(GetObject(v1::RESOURCE_FLAVOR, "rf").ok());
}

TEST_F(TollgateApiControlsTest, StopAndResumeChangeOnlyTheStopPolicy) {
  v1::SetStopPolicyRequest stop;
  stop.mutable_ref()->set_kind(v1::CLUSTER_QUEUE);
  stop.mutable_ref()->set_name("cq-b");
  stop.set_stop_policy("Hold");
  absl::StatusOr<v1::SetStopPolicyResponse> stopped = api_->SetStopPolicy(stop);
  ASSERT_TRUE(stopped.ok()) << stopped.status();
  EXPECT_EQ(stopped->object().cluster_queue().spec().stop_policy(), "Hold");
  EXPECT_EQ(stopped->object().cluster_queue().metadata().generation(), 2);
  EXPECT_EQ(stopped->object().cluster_queue().spec().resource_groups_size(), 1);
  ASSERT_NO_FATAL_FAILURE(Submit("w", "qb", 1, 0));
  EXPECT_EQ(Get("w").status().state(), v1::WORKLOAD_STATE_PENDING);

  stop.set_stop_policy("Paused");
  absl::StatusOr<v1::SetStopPolicyResponse> bad = api_->SetStopPolicy(stop);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("stop_policy"));
  EXPECT_THAT(bad.status().message(), HasSubstr("Paused"));
  stop.mutable_ref()->set_kind(v1::COHORT);
  stop.set_stop_policy("Hold");
  EXPECT_EQ(api_->SetStopPolicy(stop).status().code(), absl::StatusCode::kInvalidArgument);
  stop.mutable_ref()->set_kind(v1::LOCAL_QUEUE);
  stop.mutable_ref()->set_name("nope");
  EXPECT_EQ(api_->SetStopPolicy(stop).status().code(), absl::StatusCode::kNotFound);

  stop.mutable_ref()->set_kind(v1::CLUSTER_QUEUE);
  stop.mutable_ref()->set_name("cq-b");
  stop.set_stop_policy("None");
  ASSERT_TRUE(api_->SetStopPolicy(stop).ok());
  ASSERT_TRUE(api_->Settle().ok());
  EXPECT_EQ(Get("w").status().state(), v1::WORKLOAD_STATE_ADMITTED);
}

TEST_F(TollgateApiControlsTest, ReprioritizeAndDeactivateAreStored) {
  ASSERT_NO_FATAL_FAILURE(Submit("w", "qb", 4, 0));
  ASSERT_NO_FATAL_FAILURE(Submit("x", "qb", 4, 0));
  v1::ReprioritizeRequest reprioritize;
  *reprioritize.mutable_workload() = Ref("x");
  reprioritize.set_priority(7);
  absl::StatusOr<v1::ReprioritizeResponse> r = api_->Reprioritize(reprioritize);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->workload().status().priority(), 7);
  v1::SetWorkloadActiveRequest deactivate;
  *deactivate.mutable_workload() = Ref("w");
  deactivate.set_active(false);
  ASSERT_TRUE(api_->SetWorkloadActive(deactivate).ok());
  ASSERT_TRUE(api_->Settle().ok());
  ASSERT_NO_FATAL_FAILURE(Open());
  EXPECT_EQ(Get("x").status().priority(), 7);
  EXPECT_EQ(Get("x").status().state(), v1::WORKLOAD_STATE_ADMITTED);
  EXPECT_FALSE(Get("w").spec().active());
  EXPECT_EQ(Get("w").status().state(), v1::WORKLOAD_STATE_PENDING);
  EXPECT_EQ(api_->Reprioritize(reprioritize).status().code(), absl::StatusCode::kOk);
  *reprioritize.mutable_workload() = Ref("nope");
  EXPECT_EQ(api_->Reprioritize(reprioritize).status().code(), absl::StatusCode::kNotFound);
}

// An adapter restarting resubmits the spec it was created with: after an operator deactivated
// or reprioritized the workload that is still the same workload (created=false), and the
// operator's change stays. Any other difference is still ALREADY_EXISTS.
TEST_F(TollgateApiControlsTest, ResubmitOfTheOriginalSpecKeepsTheOperatorsChanges) {
  ASSERT_NO_FATAL_FAILURE(Submit("w", "qb", 4, 0));
  ASSERT_NO_FATAL_FAILURE(Submit("x", "qb", 4, 0));
  v1::SetWorkloadActiveRequest deactivate;
  *deactivate.mutable_workload() = Ref("w");
  deactivate.set_active(false);
  ASSERT_TRUE(api_->SetWorkloadActive(deactivate).ok());
  v1::ReprioritizeRequest reprioritize;
  *reprioritize.mutable_workload() = Ref("x");
  reprioritize.set_priority(7);
  ASSERT_TRUE(api_->Reprioritize(reprioritize).ok());
  ASSERT_TRUE(api_->Settle().ok());
  ASSERT_NO_FATAL_FAILURE(Open());  // what the submitter asked for survives a restart

  auto resubmit = [&](const std::string& name, int count, int priority) {
    v1::SubmitRequest request;
    v1::Workload* wl = request.mutable_workload();
    wl->mutable_metadata()->set_namespace_("ns");
    wl->mutable_metadata()->set_name(name);
    wl->mutable_spec()->set_queue_name("qb");
    wl->mutable_spec()->set_priority(priority);
    v1::PodSet* ps = wl->mutable_spec()->add_pod_sets();
    ps->set_count(count);
    (*ps->mutable_requests())["cpu"] = "1";
    return api_->Submit(request);
  };
  absl::StatusOr<v1::SubmitResponse> w = resubmit("w", 4, 0);
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_FALSE(w->created());
  EXPECT_FALSE(w->workload().spec().active());
  EXPECT_EQ(w->workload().status().state(), v1::WORKLOAD_STATE_PENDING);
  absl::StatusOr<v1::SubmitResponse> x = resubmit("x", 4, 0);
  ASSERT_TRUE(x.ok()) << x.status();
  EXPECT_FALSE(x->created());
  EXPECT_EQ(x->workload().status().priority(), 7);
  EXPECT_EQ(x->workload().spec().priority(), 7);
  // The current values match too; the submitted ones are stored with it.
  x = resubmit("x", 4, 7);
  ASSERT_TRUE(x.ok()) << x.status();
  EXPECT_EQ(x->workload().status().submitted_controls().priority(), 0);
  EXPECT_TRUE(x->workload().status().submitted_controls().active());

  EXPECT_EQ(resubmit("x", 4, 3).status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(resubmit("w", 2, 0).status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(Get("x").status().priority(), 7);
  EXPECT_FALSE(Get("w").spec().active());
}

// Kueue's AdmissionGatedBy through the API: the gates come with the submit, leave only through
// SetAdmissionGates, and each change is stored (a restart reads it back) with a new revision.
TEST_F(TollgateApiControlsTest, AdmissionGatesAreRemovedOneCommitAtATime) {
  constexpr char kGatedBy[] = "kueue.x-k8s.io/admission-gated-by";
  v1::SubmitRequest submit;
  v1::Workload* wl = submit.mutable_workload();
  wl->mutable_metadata()->set_namespace_("ns");
  wl->mutable_metadata()->set_name("g");
  (*wl->mutable_metadata()->mutable_annotations())[kGatedBy] = "example.com/a,example.com/b";
  wl->mutable_spec()->set_queue_name("qb");
  v1::PodSet* ps = wl->mutable_spec()->add_pod_sets();
  ps->set_count(1);
  (*ps->mutable_requests())["cpu"] = "1";
  ASSERT_TRUE(api_->Submit(submit).ok());
  ASSERT_TRUE(api_->Settle().ok());
  EXPECT_EQ(Get("g").status().state(), v1::WORKLOAD_STATE_PENDING);
  EXPECT_EQ(Get("g").status().pending_message(),
            "Admission is gated by: example.com/a,example.com/b");

  v1::SetAdmissionGatesRequest request;
  *request.mutable_workload() = Ref("g");
  request.set_admission_gated_by("example.com/b");
  const int64_t before = Get("g").metadata().resource_version();
  absl::StatusOr<v1::SetAdmissionGatesResponse> one = api_->SetAdmissionGates(request);
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_GT(one->workload().metadata().resource_version(), before);
  EXPECT_EQ(one->workload().metadata().annotations().at(kGatedBy), "example.com/b");
  // Watchers see the change: a MODIFIED event with the gates left.
  absl::StatusOr<std::vector<storage::ChangeLogEntry>> changes = store_.ReadChanges(before, 10);
  ASSERT_TRUE(changes.ok()) << changes.status();
  bool watched = false;
  for (const storage::ChangeLogEntry& entry : *changes) {
    for (const std::string& record : entry.records) {
      v1::WatchEvent event;
      if (!event.ParseFromString(record) || event.type() != v1::WatchEvent::MODIFIED) continue;
      const auto& annotations = event.workload().metadata().annotations();
      watched = watched ||
                (event.workload().metadata().name() == "g" && annotations.count(kGatedBy) > 0 &&
                 annotations.at(kGatedBy) == "example.com/b");
    }
  }
  EXPECT_TRUE(watched);
  // The same value again is no change: no new revision.
  absl::StatusOr<v1::SetAdmissionGatesResponse> again = api_->SetAdmissionGates(request);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->workload().metadata().resource_version(),
            one->workload().metadata().resource_version());

  ASSERT_TRUE(api_->Settle().ok());
  ASSERT_NO_FATAL_FAILURE(Open());  // the acknowledged removal is stored
  EXPECT_EQ(Get("g").metadata().annotations().at(kGatedBy), "example.com/b");
  EXPECT_EQ(Get("g").status().state(), v1::WORKLOAD_STATE_PENDING);

  // Compare-and-swap on the revision, as UpdateWorkloadPayload's.
  request.clear_admission_gated_by();
  request.set_expected_revision(1);
  EXPECT_EQ(api_->SetAdmissionGates(request).status().code(),
            absl::StatusCode::kFailedPrecondition);
  request.set_expected_revision(Get("g").metadata().resource_version());
  ASSERT_TRUE(api_->SetAdmissionGates(request).ok());
  ASSERT_TRUE(api_->Settle().ok());
  EXPECT_EQ(Get("g").status().state(), v1::WORKLOAD_STATE_ADMITTED);
  EXPECT_EQ(Get("g").metadata().annotations().count(kGatedBy), 0);
}

// Kueue's PriorityBoost annotation set as an external controller patches it: each change is a
// commit (a restart reads it back), refusals change nothing, compare-and-swap on the revision.
TEST_F(TollgateApiControlsTest, PriorityBoostIsStoredAndCheckedWithTheGateOn) {
  constexpr char kBoost[] = "kueue.x-k8s.io/priority-boost";
  config_.priority_boost = true;
  ASSERT_NO_FATAL_FAILURE(Open());
  ASSERT_NO_FATAL_FAILURE(Submit("p", "qb", 1, 0));
  const int64_t before = Get("p").metadata().resource_version();
  absl::StatusOr<v1::Workload> set = api_->SetPriorityBoost(Ref("p"), "7");
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_GT(set->metadata().resource_version(), before);
  EXPECT_EQ(set->metadata().annotations().at(kBoost), "7");

  absl::Status refused = api_->SetPriorityBoost(Ref("p"), "seven").status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(refused.message()),
              testing::HasSubstr("metadata.annotations[kueue.x-k8s.io/priority-boost]: Invalid "
                                 "value: \"seven\": must be a valid signed integer"));
  EXPECT_EQ(Get("p").metadata().resource_version(), set->metadata().resource_version());
  EXPECT_EQ(api_->SetPriorityBoost(Ref("absent"), "1").status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(api_->SetPriorityBoost(Ref("p"), std::nullopt, 1).status().code(),
            absl::StatusCode::kFailedPrecondition);

  ASSERT_NO_FATAL_FAILURE(Open());  // the acknowledged value is stored
  EXPECT_EQ(Get("p").metadata().annotations().at(kBoost), "7");
  ASSERT_TRUE(
      api_->SetPriorityBoost(Ref("p"), std::nullopt, Get("p").metadata().resource_version()).ok());
  EXPECT_EQ(Get("p").metadata().annotations().count(kBoost), 0);
}

TEST_F(TollgateApiControlsTest, AdmissionGatesRefusalsNameTheFieldAndChangeNothing) {
  constexpr char kField[] = "metadata.annotations[kueue.x-k8s.io/admission-gated-by]";
  v1::SubmitRequest submit;
  v1::Workload* wl = submit.mutable_workload();
  wl->mutable_metadata()->set_namespace_("ns");
  wl->mutable_metadata()->set_name("bad");
  (*wl->mutable_metadata()->mutable_annotations())["kueue.x-k8s.io/admission-gated-by"] = "gate1";
  wl->mutable_spec()->set_queue_name("qb");
  v1::PodSet* ps = wl->mutable_spec()->add_pod_sets();
  ps->set_count(1);
  (*ps->mutable_requests())["cpu"] = "1";
  absl::StatusOr<v1::SubmitResponse> refused = api_->Submit(submit);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.status().message(), HasSubstr(kField));
  EXPECT_THAT(refused.status().message(), HasSubstr("\"gate1\""));
  v1::GetWorkloadRequest get;
  *get.mutable_workload() = Ref("bad");
  EXPECT_EQ(api_->GetWorkload(get).status().code(), absl::StatusCode::kNotFound);

  ASSERT_NO_FATAL_FAILURE(Submit("w", "qb", 1, 0));
  const int64_t revision = Get("w").metadata().resource_version();
  v1::SetAdmissionGatesRequest add;
  *add.mutable_workload() = Ref("w");
  add.set_admission_gated_by("example.com/late");
  absl::StatusOr<v1::SetAdmissionGatesResponse> added = api_->SetAdmissionGates(add);
  EXPECT_EQ(added.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(added.status().message(), HasSubstr(kField));
  EXPECT_THAT(added.status().message(), HasSubstr("cannot add admission gate after creation"));
  EXPECT_EQ(Get("w").metadata().resource_version(), revision);
  EXPECT_EQ(Get("w").metadata().annotations().count("kueue.x-k8s.io/admission-gated-by"), 0);

  add.set_expected_revision(-1);
  EXPECT_THAT(api_->SetAdmissionGates(add).status().message(), HasSubstr("expected_revision"));
  *add.mutable_workload() = Ref("nope");
  add.set_expected_revision(0);
  EXPECT_EQ(api_->SetAdmissionGates(add).status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace tollgate::engine
