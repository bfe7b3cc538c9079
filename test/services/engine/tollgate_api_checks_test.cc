// TollgateApi's check-controller API through the real executor: the compare-and-swap update and
// its refusals (each naming field and value, nothing changed), the Active condition kept by
// Apply and stored across a restart, controllerName immutable, in-use protection, and the
// Kueue YAML round trip of a ClusterQueue's checks.

#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/clock.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "services/engine/admission_executor.h"
#include "services/engine/tollgate_api.h"
#include "storage/memory_store.h"
#include "tollgate/v1/service.pb.h"

namespace tollgate::engine {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// cq (4 cpu in flavor rf) requires check "prov" (controller example.com/prov) on every workload
// and "gpu-only" only on workloads in flavor "other" (which it has no quota in).
constexpr char kObjects[] = R"pb(
  objects {
    resource_flavor {
      metadata { name: "rf" }
      spec { node_labels { key: "pool" value: "a" } }
    }
  }
  objects { resource_flavor { metadata { name: "other" } } }
  objects {
    admission_check {
      metadata { name: "prov" }
      spec { controller_name: "example.com/prov" }
    }
  }
  objects {
    admission_check {
      metadata { name: "gpu-only" }
      spec { controller_name: "example.com/gpu" }
    }
  }
  objects {
    cluster_queue {
      metadata { name: "cq" }
      spec {
        resource_groups {
          covered_resources: "cpu"
          flavors {
            name: "rf"
            resources { name: "cpu" nominal_quota: "4" }
          }
          flavors {
            name: "other"
            resources { name: "cpu" nominal_quota: "0" }
          }
        }
        admission_checks_strategy {
          admission_checks { name: "prov" }
          admission_checks { name: "gpu-only" on_flavors: "other" }
        }
      }
    }
  }
  objects {
    local_queue {
      metadata { namespace: "ns" name: "q" }
      spec { cluster_queue: "cq" }
    }
  }
)pb";

class TollgateApiChecksTest : public testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(Open());
    v1::ApplyRequest request;
    ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(kObjects, &request));
    absl::StatusOr<v1::ApplyResponse> applied = api_->Apply(request);
    ASSERT_TRUE(applied.ok()) << applied.status();
  }

  void Open() {
    api_.reset();
    executor_.reset();
    absl::StatusOr<std::unique_ptr<AdmissionExecutor>> executor =
        AdmissionExecutor::Open(store_, clock_, core::SchedulerConfig{}, {});
    ASSERT_TRUE(executor.ok()) << executor.status();
    executor_ = *std::move(executor);
    api_ = std::make_unique<TollgateApi>(*executor_);
  }

  absl::StatusOr<v1::SetAdmissionCheckActiveResponse> SetActive(const std::string& name,
                                                                bool active) {
    v1::SetAdmissionCheckActiveRequest request;
    request.set_name(name);
    request.set_active(active);
    request.set_reason(active ? "Ready" : "ControllerDown");
    return api_->SetAdmissionCheckActive(request);
  }

  void Submit(const std::string& name, int cpu) {
    v1::SubmitRequest request;
    v1::Workload* wl = request.mutable_workload();
    wl->mutable_metadata()->set_namespace_("ns");
    wl->mutable_metadata()->set_name(name);
    wl->mutable_spec()->set_queue_name("q");
    v1::PodSet* ps = wl->mutable_spec()->add_pod_sets();
    ps->set_name("main");
    ps->set_count(cpu);
    (*ps->mutable_requests())["cpu"] = "1";
    ASSERT_TRUE(api_->Submit(request).ok());
    ASSERT_TRUE(api_->Settle().ok());
  }

  v1::Workload Get(const std::string& name) {
    v1::GetWorkloadRequest request;
    request.mutable_workload()->set_namespace_("ns");
    request.mutable_workload()->set_name(name);
    absl::StatusOr<v1::Workload> wl = api_->GetWorkload(request);
    EXPECT_TRUE(wl.ok()) << wl.status();
    return wl.ok() ? *wl : v1::Workload();
  }

  v1::UpdateAdmissionCheckStateRequest Update(const v1::Workload& seen, const std::string& check,
                                              const std::string& state) {
    v1::UpdateAdmissionCheckStateRequest request;
    request.mutable_workload()->set_namespace_("ns");
    request.mutable_workload()->set_name(seen.metadata().name());
    request.set_check(check);
    request.set_state(state);
    request.set_expected_revision(seen.metadata().resource_version());
    return request;
  }

  absl::StatusOr<v1::ConfigObject> GetCheck(const std::string& name) {
    v1::GetObjectRequest request;
    request.mutable_ref()->set_kind(v1::ADMISSION_CHECK);
    request.mutable_ref()->set_name(name);
    return api_->GetObject(request);
  }

  core::SimulatedClock clock_{absl::FromUnixSeconds(1767225600)};
  storage::MemoryStore store_;
  std::unique_ptr<AdmissionExecutor> executor_;
  std::unique_ptr<TollgateApi> api_;
};

TEST_F(TollgateApiChecksTest, AClusterQueueNamingAnInactiveCheckAdmitsNothing) {
  ASSERT_NO_FATAL_FAILURE(Submit("a", 1));
  EXPECT_EQ(Get("a").status().state(), v1::WORKLOAD_STATE_PENDING);
  v1::GetObjectRequest request;
  request.mutable_ref()->set_kind(v1::CLUSTER_QUEUE);
  request.mutable_ref()->set_name("cq");
  absl::StatusOr<v1::ConfigObject> cq = api_->GetObject(request);
  ASSERT_TRUE(cq.ok());
  v1::Condition active;
  for (const v1::Condition& c : cq->cluster_queue().status().conditions()) {
    if (c.type() == "Active") active = c;
  }
  EXPECT_EQ(active.status(), "False");
  EXPECT_EQ(active.reason(), "AdmissionCheckInactive");
  EXPECT_THAT(active.message(), HasSubstr("gpu-only"));

  ASSERT_TRUE(SetActive("prov", true).ok());
  ASSERT_TRUE(SetActive("gpu-only", true).ok());
  ASSERT_TRUE(api_->Settle().ok());
  const v1::Workload a = Get("a");
  EXPECT_EQ(a.status().state(), v1::WORKLOAD_STATE_QUOTA_RESERVED);
  // Only the check covering its flavor: gpu-only is for flavor "other".
  ASSERT_EQ(a.status().admission_checks_size(), 1);
  EXPECT_EQ(a.status().admission_checks(0).name(), "prov");
  EXPECT_EQ(a.status().admission_checks(0).state(), "Pending");
}

TEST_F(TollgateApiChecksTest, UpdatesAreCompareAndSwapOnTheWorkloadsRevision) {
  ASSERT_TRUE(SetActive("prov", true).ok());
  ASSERT_TRUE(SetActive("gpu-only", true).ok());
  ASSERT_NO_FATAL_FAILURE(Submit("a", 1));
  const v1::Workload seen = Get("a");
  ASSERT_EQ(seen.status().state(), v1::WORKLOAD_STATE_QUOTA_RESERVED);

  v1::UpdateAdmissionCheckStateRequest stale = Update(seen, "prov", "Ready");
  stale.set_expected_revision(seen.metadata().resource_version() - 1);
  absl::StatusOr<v1::UpdateAdmissionCheckStateResponse> refused =
      api_->UpdateAdmissionCheckState(stale);
  EXPECT_TRUE(absl::IsFailedPrecondition(refused.status())) << refused.status();
  EXPECT_THAT(std::string(refused.status().message()),
              HasSubstr(absl::StrCat(
                  "workload ns/a is at revision ", seen.metadata().resource_version(),
                  ", not the expected revision ", seen.metadata().resource_version() - 1)));
  EXPECT_EQ(Get("a").SerializeAsString(), seen.SerializeAsString());

  v1::UpdateAdmissionCheckStateRequest ready = Update(seen, "prov", "Ready");
  ready.set_message("capacity is there");
  absl::StatusOr<v1::UpdateAdmissionCheckStateResponse> done =
      api_->UpdateAdmissionCheckState(ready);
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(done->workload().status().state(), v1::WORKLOAD_STATE_ADMITTED);
  EXPECT_GT(done->workload().metadata().resource_version(), seen.metadata().resource_version());
  EXPECT_EQ(done->workload().status().admission_checks(0).message(), "capacity is there");
  // The same decision on the revision it was made on, again: the workload moved on.
  EXPECT_TRUE(absl::IsFailedPrecondition(api_->UpdateAdmissionCheckState(ready).status()));
}

TEST_F(TollgateApiChecksTest, BadUpdatesNameTheFieldAndValueAndChangeNothing) {
  ASSERT_TRUE(SetActive("prov", true).ok());
  ASSERT_TRUE(SetActive("gpu-only", true).ok());
  ASSERT_NO_FATAL_FAILURE(Submit("a", 1));
  const v1::Workload seen = Get("a");
  struct Case {
    std::string name;
    v1::UpdateAdmissionCheckStateRequest request;
    absl::StatusCode code;
    std::string message;
  };
  v1::UpdateAdmissionCheckStateRequest unknown = Update(seen, "nope", "Ready");
  v1::UpdateAdmissionCheckStateRequest not_carried = Update(seen, "gpu-only", "Ready");
  v1::UpdateAdmissionCheckStateRequest bad_state = Update(seen, "prov", "Approved");
  v1::UpdateAdmissionCheckStateRequest no_revision = Update(seen, "prov", "Ready");
  no_revision.clear_expected_revision();
  v1::UpdateAdmissionCheckStateRequest negative = Update(seen, "prov", "Retry");
  negative.set_requeue_after_seconds(-5);
  v1::UpdateAdmissionCheckStateRequest bad_pod_set = Update(seen, "prov", "Ready");
  bad_pod_set.add_pod_set_updates()->set_name("workers");
  // The flavor sets pool=a; the check may not say pool=b.
  v1::UpdateAdmissionCheckStateRequest conflict = Update(seen, "prov", "Ready");
  v1::PodSetUpdate* update = conflict.add_pod_set_updates();
  update->set_name("main");
  (*update->mutable_node_selector())["pool"] = "b";
  const Case cases[] = {
      {"UnknownCheck", unknown, absl::StatusCode::kNotFound,
       "check: AdmissionCheck \"nope\" not found"},
      {"CheckNotCarried", not_carried, absl::StatusCode::kFailedPrecondition,
       "does not carry admission check \"gpu-only\" (it carries: \"prov\")"},
      {"UnknownState", bad_state, absl::StatusCode::kInvalidArgument,
       "state: unsupported value \"Approved\""},
      {"NoRevision", no_revision, absl::StatusCode::kInvalidArgument, "expected_revision"},
      {"NegativeDelay", negative, absl::StatusCode::kInvalidArgument,
       "requeue_after_seconds: must be greater than or equal to 0, got -5"},
      {"UnknownPodSet", bad_pod_set, absl::StatusCode::kInvalidArgument,
       "podSetUpdates[0].name: \"workers\" is not a pod set of workload ns/a"},
      {"ConflictingNodeSelector", conflict, absl::StatusCode::kInvalidArgument, "pool"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    absl::StatusOr<v1::UpdateAdmissionCheckStateResponse> r =
        api_->UpdateAdmissionCheckState(c.request);
    EXPECT_EQ(r.status().code(), c.code) << r.status();
    EXPECT_THAT(std::string(r.status().message()), HasSubstr(c.message));
    EXPECT_EQ(Get("a").SerializeAsString(), seen.SerializeAsString());
  }
}

TEST_F(TollgateApiChecksTest, ActiveIsKeptByApplyStoredAndRestored) {
  absl::StatusOr<v1::SetAdmissionCheckActiveResponse> set = SetActive("prov", true);
  ASSERT_TRUE(set.ok()) << set.status();
  ASSERT_EQ(set->admission_check().status().conditions_size(), 1);
  EXPECT_EQ(set->admission_check().status().conditions(0).type(), "Active");
  EXPECT_EQ(set->admission_check().status().conditions(0).status(), "True");
  // The same report again writes nothing.
  absl::StatusOr<v1::SetAdmissionCheckActiveResponse> again = SetActive("prov", true);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->revision(), set->revision());

  // Re-applying the manifest (which carries no status) keeps the controller's condition.
  v1::ApplyRequest reapply;
  v1::AdmissionCheck* check = reapply.add_objects()->mutable_admission_check();
  check->mutable_metadata()->set_name("prov");
  check->mutable_spec()->set_controller_name("example.com/prov");
  check->mutable_spec()->mutable_parameters()->set_api_group("kueue.x-k8s.io");
  check->mutable_spec()->mutable_parameters()->set_kind("ProvisioningRequestConfig");
  check->mutable_spec()->mutable_parameters()->set_name("fast");
  {
    absl::StatusOr<v1::ApplyResponse> reapplied = api_->Apply(reapply);
    ASSERT_TRUE(reapplied.ok()) << reapplied.status();
  }
  absl::StatusOr<v1::ConfigObject> got = GetCheck("prov");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->admission_check().spec().parameters().name(), "fast");
  EXPECT_EQ(got->admission_check().status().conditions(0).status(), "True");

  // controllerName is immutable, as in Kueue.
  check->mutable_spec()->set_controller_name("example.com/other");
  absl::StatusOr<v1::ApplyResponse> changed = api_->Apply(reapply);
  EXPECT_TRUE(absl::IsInvalidArgument(changed.status())) << changed.status();
  EXPECT_THAT(std::string(changed.status().message()), HasSubstr("controllerName"));

  ASSERT_NO_FATAL_FAILURE(Open());
  got = GetCheck("prov");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->admission_check().status().conditions(0).status(), "True");
  EXPECT_EQ(got->admission_check().spec().controller_name(), "example.com/prov");

  EXPECT_TRUE(absl::IsNotFound(SetActive("missing", true).status()));
}

TEST_F(TollgateApiChecksTest, ACheckAClusterQueueNamesIsTerminatingUntilItIsNoLongerNamed) {
  v1::DeleteObjectRequest request;
  request.mutable_ref()->set_kind(v1::ADMISSION_CHECK);
  request.mutable_ref()->set_name("prov");
  absl::StatusOr<v1::DeleteObjectResponse> deleted = api_->DeleteObject(request);
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  EXPECT_TRUE(deleted->terminating());
  EXPECT_THAT(deleted->held_by(), ElementsAre("cq"));
  absl::StatusOr<v1::ConfigObject> got = GetCheck("prov");
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(got->admission_check().metadata().has_deletion_timestamp());
}

TEST_F(TollgateApiChecksTest, QuotaReservedAndAdmittedSurviveARestart) {
  ASSERT_TRUE(SetActive("prov", true).ok());
  ASSERT_TRUE(SetActive("gpu-only", true).ok());
  ASSERT_NO_FATAL_FAILURE(Submit("a", 1));
  ASSERT_NO_FATAL_FAILURE(Submit("b", 1));
  v1::UpdateAdmissionCheckStateRequest ready = Update(Get("a"), "prov", "Ready");
  v1::PodSetUpdate* update = ready.add_pod_set_updates();
  update->set_name("main");
  (*update->mutable_labels())["provisioned"] = "true";
  ASSERT_TRUE(api_->UpdateAdmissionCheckState(ready).ok());
  const v1::Workload a = Get("a");
  const v1::Workload b = Get("b");
  ASSERT_EQ(a.status().state(), v1::WORKLOAD_STATE_ADMITTED);
  ASSERT_EQ(b.status().state(), v1::WORKLOAD_STATE_QUOTA_RESERVED);
  ASSERT_EQ(a.status().admitted_pod_sets_size(), 1);

  ASSERT_NO_FATAL_FAILURE(Open());
  EXPECT_EQ(Get("a").status().SerializeAsString(), a.status().SerializeAsString());
  EXPECT_EQ(Get("b").status().SerializeAsString(), b.status().SerializeAsString());
  // b's check still answers at the revision read before the restart.
  absl::StatusOr<v1::UpdateAdmissionCheckStateResponse> after =
      api_->UpdateAdmissionCheckState(Update(b, "prov", "Ready"));
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(after->workload().status().state(), v1::WORKLOAD_STATE_ADMITTED);
}

}  // namespace
}  // namespace tollgate::engine
