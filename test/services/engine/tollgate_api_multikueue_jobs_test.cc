// MultiKueue's job projection through the real API and executor (docs/multicluster.md, "The job
// itself"): a workload's payload stored, read back and size-checked; on a worker, the winner mark
// (idempotent, refused on a copy that is not one, of another origin or without quota) and the
// job status a copy's adapter reports, both kept across a restart; on the manager, the winner's
// job status mirrored with the MultiKueue check; a finish with its reason.

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
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

using ::testing::HasSubstr;

// q (4 cpu, no checks) is a worker's queue; mq's ClusterQueue carries the MultiKueue check.
constexpr char kObjects[] = R"pb(
  objects { resource_flavor { metadata { name: "rf" } } }
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
  objects {
    multi_kueue_config {
      metadata { name: "fleet" }
      spec { clusters: "worker1" }
    }
  }
  objects {
    multi_kueue_cluster {
      metadata { name: "worker1" }
      spec { endpoint { address: "127.0.0.1:7001" insecure: true } }
    }
  }
  objects {
    admission_check {
      metadata { name: "mk" }
      spec {
        controller_name: "kueue.x-k8s.io/multikueue"
        parameters { api_group: "kueue.x-k8s.io" kind: "MultiKueueConfig" name: "fleet" }
      }
    }
  }
  objects {
    cluster_queue {
      metadata { name: "mcq" }
      spec {
        resource_groups {
          covered_resources: "cpu"
          flavors {
            name: "rf"
            resources { name: "cpu" nominal_quota: "4" }
          }
        }
        admission_checks_strategy { admission_checks { name: "mk" } }
      }
    }
  }
  objects {
    local_queue {
      metadata { namespace: "ns" name: "mq" }
      spec { cluster_queue: "mcq" }
    }
  }
)pb";

v1::WorkloadPayload Payload(const std::string& data) {
  v1::WorkloadPayload payload;
  payload.set_content_type("application/json");
  payload.set_api_version("batch/v1");
  payload.set_kind("Job");
  payload.set_data(data);
  return payload;
}

class TollgateApiMultiKueueJobsTest : public testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(Open());
    v1::ApplyRequest request;
    ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(kObjects, &request));
    absl::StatusOr<v1::ApplyResponse> applied = api_->Apply(request);
    ASSERT_TRUE(applied.ok()) << applied.status();
    v1::SetAdmissionCheckActiveRequest active;
    active.set_name("mk");
    active.set_active(true);
    active.set_reason("Active");
    ASSERT_TRUE(api_->SetAdmissionCheckActive(active).ok());
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

  // A workload in `queue` asking for `cpu`; `origin` (when set) makes it a MultiKueue copy.
  v1::SubmitRequest Request(const std::string& name, const std::string& queue, int cpu,
                            const std::string& origin = "") {
    v1::SubmitRequest request;
    v1::Workload* wl = request.mutable_workload();
    wl->mutable_metadata()->set_namespace_("ns");
    wl->mutable_metadata()->set_name(name);
    if (!origin.empty()) {
      (*wl->mutable_metadata()->mutable_labels())["kueue.x-k8s.io/multikueue-origin"] = origin;
    }
    wl->mutable_spec()->set_queue_name(queue);
    v1::PodSet* ps = wl->mutable_spec()->add_pod_sets();
    ps->set_name("main");
    ps->set_count(cpu);
    (*ps->mutable_requests())["cpu"] = "1";
    *wl->mutable_spec()->mutable_payload() = Payload(R"({"kind":"Job"})");
    return request;
  }

  void Submit(const v1::SubmitRequest& request) {
    absl::StatusOr<v1::SubmitResponse> submitted = api_->Submit(request);
    ASSERT_TRUE(submitted.ok()) << submitted.status();
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

  absl::StatusOr<v1::MarkMultiKueueWinnerResponse> Mark(const std::string& name,
                                                        const std::string& origin) {
    v1::MarkMultiKueueWinnerRequest request;
    request.mutable_workload()->set_namespace_("ns");
    request.mutable_workload()->set_name(name);
    request.set_origin(origin);
    return api_->MarkMultiKueueWinner(request);
  }

  core::SimulatedClock clock_{absl::FromUnixSeconds(1767225600)};
  storage::MemoryStore store_;
  std::unique_ptr<AdmissionExecutor> executor_;
  std::unique_ptr<TollgateApi> api_;
};

TEST_F(TollgateApiMultiKueueJobsTest, PayloadIsStoredAndSizeChecked) {
  ASSERT_NO_FATAL_FAILURE(Submit(Request("a", "q", 1)));
  EXPECT_EQ(Get("a").spec().payload().kind(), "Job");
  EXPECT_EQ(Get("a").spec().payload().data(), R"({"kind":"Job"})");
  ASSERT_NO_FATAL_FAILURE(Open());
  EXPECT_EQ(Get("a").spec().payload().data(), R"({"kind":"Job"})");

  v1::SubmitRequest big = Request("big", "q", 1);
  big.mutable_workload()->mutable_spec()->mutable_payload()->set_data(
      std::string(256 * 1024 + 1, 'x'));
  const absl::Status too_big = api_->Submit(big).status();
  EXPECT_EQ(too_big.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(too_big.message(), HasSubstr("ns/big: spec.payload.data: must be no more than "
                                           "262144 bytes, got 262145 bytes"));
  v1::SubmitRequest untyped = Request("untyped", "q", 1);
  untyped.mutable_workload()->mutable_spec()->mutable_payload()->clear_content_type();
  EXPECT_THAT(api_->Submit(untyped).status().message(),
              HasSubstr("spec.payload.contentType: Required value"));
  v1::GetWorkloadRequest get;
  get.mutable_workload()->set_namespace_("ns");
  get.mutable_workload()->set_name("big");
  EXPECT_EQ(api_->GetWorkload(get).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(TollgateApiMultiKueueJobsTest, WinnerMarkIsIdempotentAndRefusesWhatIsNoWinningCopy) {
  ASSERT_NO_FATAL_FAILURE(Submit(Request("copy", "q", 1, "mgr")));
  ASSERT_NO_FATAL_FAILURE(Submit(Request("local", "q", 1)));
  ASSERT_NO_FATAL_FAILURE(Submit(Request("waiting", "q", 4, "mgr")));
  ASSERT_EQ(Get("copy").status().state(), v1::WORKLOAD_STATE_ADMITTED);
  ASSERT_EQ(Get("waiting").status().state(), v1::WORKLOAD_STATE_PENDING);
  EXPECT_FALSE(Get("copy").status().multi_kueue_winner());

  const absl::Status not_a_copy = Mark("local", "mgr").status();
  EXPECT_EQ(not_a_copy.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(not_a_copy.message(),
              HasSubstr("workload ns/local is not a MultiKueue copy (it has no "
                        "kueue.x-k8s.io/multikueue-origin label)"));
  const absl::Status other_origin = Mark("copy", "elsewhere").status();
  EXPECT_EQ(other_origin.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(other_origin.message(),
              HasSubstr("is a copy of origin \"mgr\", not of \"elsewhere\""));
  const absl::Status pending = Mark("waiting", "mgr").status();
  EXPECT_EQ(pending.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(pending.message(), HasSubstr("workload ns/waiting is Pending; only a copy that "
                                           "holds quota"));
  EXPECT_EQ(Mark("absent", "mgr").status().code(), absl::StatusCode::kNotFound);
  v1::MarkMultiKueueWinnerRequest unnamed;
  EXPECT_EQ(api_->MarkMultiKueueWinner(unnamed).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(Get("local").status().multi_kueue_winner());
  EXPECT_FALSE(Get("waiting").status().multi_kueue_winner());

  absl::StatusOr<v1::MarkMultiKueueWinnerResponse> marked = Mark("copy", "mgr");
  ASSERT_TRUE(marked.ok()) << marked.status();
  EXPECT_TRUE(marked->workload().status().multi_kueue_winner());
  const int64_t revision = marked->workload().metadata().resource_version();
  // Again: nothing changes.
  absl::StatusOr<v1::MarkMultiKueueWinnerResponse> again = Mark("copy", "");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->workload().metadata().resource_version(), revision);
  ASSERT_NO_FATAL_FAILURE(Open());
  EXPECT_TRUE(Get("copy").status().multi_kueue_winner());
}

TEST_F(TollgateApiMultiKueueJobsTest, ReportedJobStatusIsKeptWithoutEventsAndFinishHasItsReason) {
  ASSERT_NO_FATAL_FAILURE(Submit(Request("copy", "q", 1, "mgr")));
  const int events = Get("copy").status().events_size();
  v1::ReportJobStateRequest report;
  report.mutable_workload()->set_namespace_("ns");
  report.mutable_workload()->set_name("copy");
  *report.mutable_job_status() = Payload(R"({"status":{"active":1}})");
  ASSERT_TRUE(api_->ReportJobState(report).ok());
  EXPECT_EQ(Get("copy").status().job_status().data(), R"({"status":{"active":1}})");
  EXPECT_EQ(Get("copy").status().events_size(), events);
  report.mutable_job_status()->set_kind(std::string(300, 'k'));
  const absl::Status long_kind = api_->ReportJobState(report).status();
  EXPECT_EQ(long_kind.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(long_kind.message(), HasSubstr("job_status.kind: must be no more than 253 bytes"));

  v1::FinishRequest finish;
  finish.mutable_workload()->set_namespace_("ns");
  finish.mutable_workload()->set_name("copy");
  finish.set_message("Job failed: BackoffLimitExceeded");
  finish.set_reason("not a reason!");
  const absl::Status bad_reason = api_->Finish(finish).status();
  EXPECT_EQ(bad_reason.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad_reason.message(), HasSubstr("reason: must be a condition reason"));
  EXPECT_THAT(bad_reason.message(), HasSubstr("got \"not a reason!\""));
  EXPECT_EQ(Get("copy").status().state(), v1::WORKLOAD_STATE_ADMITTED);
  finish.set_reason("Failed");
  ASSERT_TRUE(api_->Finish(finish).ok());
  ASSERT_NO_FATAL_FAILURE(Open());
  const v1::Workload done = Get("copy");
  EXPECT_EQ(done.status().job_status().data(), R"({"status":{"active":1}})");
  bool failed = false;
  for (const v1::Condition& c : done.status().conditions()) {
    if (c.type() == "Finished") failed = c.reason() == "Failed";
  }
  EXPECT_TRUE(failed);
}

TEST_F(TollgateApiMultiKueueJobsTest, TheManagerMirrorsTheWinnersJobStatusWithItsCheck) {
  ASSERT_NO_FATAL_FAILURE(Submit(Request("job", "mq", 1)));
  v1::Workload wl = Get("job");
  ASSERT_EQ(wl.status().state(), v1::WORKLOAD_STATE_QUOTA_RESERVED);
  v1::UpdateAdmissionCheckStateRequest update;
  update.mutable_workload()->set_namespace_("ns");
  update.mutable_workload()->set_name("job");
  update.set_check("mk");
  update.set_state("Pending");
  update.set_set_nominated_cluster_names(true);
  update.add_nominated_cluster_names("worker1");
  update.set_expected_revision(wl.metadata().resource_version());
  ASSERT_TRUE(api_->UpdateAdmissionCheckState(update).ok());

  wl = Get("job");
  update.clear_nominated_cluster_names();
  update.set_set_nominated_cluster_names(false);
  update.set_state("Ready");
  update.set_message("The workload was admitted on \"worker1\"");
  update.set_cluster_name("worker1");
  *update.mutable_job_status() = Payload(R"({"status":{"active":1}})");
  update.set_expected_revision(wl.metadata().resource_version());
  absl::StatusOr<v1::UpdateAdmissionCheckStateResponse> ready =
      api_->UpdateAdmissionCheckState(update);
  ASSERT_TRUE(ready.ok()) << ready.status();
  EXPECT_EQ(ready->workload().status().state(), v1::WORKLOAD_STATE_ADMITTED);
  EXPECT_EQ(ready->workload().status().job_status().data(), R"({"status":{"active":1}})");

  // The status alone changes: stored, no event.
  const int events = ready->workload().status().events_size();
  *update.mutable_job_status() = Payload(R"({"status":{"succeeded":1}})");
  update.set_expected_revision(ready->workload().metadata().resource_version());
  absl::StatusOr<v1::UpdateAdmissionCheckStateResponse> mirrored =
      api_->UpdateAdmissionCheckState(update);
  ASSERT_TRUE(mirrored.ok()) << mirrored.status();
  EXPECT_EQ(mirrored->workload().status().job_status().data(), R"({"status":{"succeeded":1}})");
  EXPECT_EQ(mirrored->workload().status().events_size(), events);
  EXPECT_GT(mirrored->workload().metadata().resource_version(),
            ready->workload().metadata().resource_version());
}

// What the controller saw of each worker's copy, for describe: stored without an event, kept
// across a restart, refused on a workload holding no quota, and cleared with the quota.
TEST_F(TollgateApiMultiKueueJobsTest, RemoteStatesAreRecordedUntilTheQuotaIsReleased) {
  ASSERT_NO_FATAL_FAILURE(Submit(Request("job", "mq", 1)));
  v1::Workload wl = Get("job");
  ASSERT_EQ(wl.status().state(), v1::WORKLOAD_STATE_QUOTA_RESERVED);
  auto remotes = [](v1::UpdateAdmissionCheckStateRequest& update,
                    std::vector<std::pair<std::string, std::string>> states) {
    update.set_set_multi_kueue_remotes(true);
    update.clear_multi_kueue_remotes();
    for (const auto& [cluster, state] : states) {
      v1::MultiKueueRemoteState* remote = update.add_multi_kueue_remotes();
      remote->set_cluster(cluster);
      remote->set_state(state);
    }
  };
  v1::UpdateAdmissionCheckStateRequest update;
  update.mutable_workload()->set_namespace_("ns");
  update.mutable_workload()->set_name("job");
  update.set_check("mk");
  update.set_state("Pending");
  update.set_set_nominated_cluster_names(true);
  update.add_nominated_cluster_names("worker1");
  update.add_nominated_cluster_names("worker2");
  remotes(update, {{"worker2", "NoCopy"}, {"worker1", "Pending"}});
  update.set_expected_revision(wl.metadata().resource_version());
  absl::StatusOr<v1::UpdateAdmissionCheckStateResponse> nominated =
      api_->UpdateAdmissionCheckState(update);
  ASSERT_TRUE(nominated.ok()) << nominated.status();
  const auto& recorded = nominated->workload().status().multi_kueue_remotes();
  ASSERT_EQ(recorded.size(), 2);
  EXPECT_EQ(recorded[0].cluster(), "worker1");  // sorted
  EXPECT_EQ(recorded[0].state(), "Pending");
  EXPECT_EQ(recorded[1].cluster(), "worker2");
  EXPECT_EQ(recorded[1].state(), "NoCopy");

  // The states alone change: stored, no event.
  const int events = nominated->workload().status().events_size();
  update.clear_nominated_cluster_names();
  update.set_set_nominated_cluster_names(false);
  remotes(update, {{"worker1", "Admitted"}, {"worker2", "Unreachable"}});
  update.set_expected_revision(nominated->workload().metadata().resource_version());
  absl::StatusOr<v1::UpdateAdmissionCheckStateResponse> changed =
      api_->UpdateAdmissionCheckState(update);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_EQ(changed->workload().status().events_size(), events);
  EXPECT_EQ(changed->workload().status().multi_kueue_remotes(0).state(), "Admitted");
  ASSERT_NO_FATAL_FAILURE(Open());
  wl = Get("job");
  ASSERT_EQ(wl.status().multi_kueue_remotes_size(), 2);
  EXPECT_EQ(wl.status().multi_kueue_remotes(1).state(), "Unreachable");

  // Bad input: named, nothing changed.
  remotes(update, {{"worker1", "Running"}});
  update.set_expected_revision(wl.metadata().resource_version());
  absl::StatusOr<v1::UpdateAdmissionCheckStateResponse> bad =
      api_->UpdateAdmissionCheckState(update);
  EXPECT_TRUE(absl::IsInvalidArgument(bad.status())) << bad.status();
  EXPECT_THAT(std::string(bad.status().message()),
              HasSubstr("multi_kueue_remotes[0].state: unsupported value \"Running\""));
  EXPECT_EQ(Get("job").metadata().resource_version(), wl.metadata().resource_version());

  // An eviction that releases the quota forgets them: the copies go with it.
  v1::PreemptRequest preempt;
  preempt.mutable_workload()->set_namespace_("ns");
  preempt.mutable_workload()->set_name("job");
  preempt.set_hold(true);
  ASSERT_TRUE(api_->Preempt(preempt).ok());
  wl = Get("job");
  ASSERT_EQ(wl.status().state(), v1::WORKLOAD_STATE_PENDING);
  EXPECT_EQ(wl.status().multi_kueue_remotes_size(), 0);
  remotes(update, {{"worker1", "Pending"}});
  update.set_expected_revision(wl.metadata().resource_version());
  EXPECT_TRUE(absl::IsFailedPrecondition(api_->UpdateAdmissionCheckState(update).status()));
}

absl::StatusOr<v1::UpdateWorkloadPayloadResponse> UpdatePayload(TollgateApi& api,
                                                                const std::string& name,
                                                                const v1::WorkloadPayload& payload,
                                                                int64_t expected_revision = 0) {
  v1::UpdateWorkloadPayloadRequest request;
  request.mutable_workload()->set_namespace_("ns");
  request.mutable_workload()->set_name(name);
  *request.mutable_payload() = payload;
  request.set_expected_revision(expected_revision);
  return api.UpdateWorkloadPayload(request);
}

TEST_F(TollgateApiMultiKueueJobsTest, APayloadUpdateIsStoredWithANewRevisionAndSurvivesARestart) {
  ASSERT_NO_FATAL_FAILURE(Submit(Request("a", "q", 1)));
  const v1::Workload before = Get("a");
  ASSERT_EQ(before.status().state(), v1::WORKLOAD_STATE_ADMITTED);
  const int64_t revision = before.metadata().resource_version();

  absl::StatusOr<v1::UpdateWorkloadPayloadResponse> updated =
      UpdatePayload(*api_, "a", Payload(R"({"kind":"Job","v":2})"), revision);
  ASSERT_TRUE(updated.ok()) << updated.status();
  EXPECT_EQ(updated->workload().spec().payload().data(), R"({"kind":"Job","v":2})");
  const int64_t after = updated->workload().metadata().resource_version();
  EXPECT_GT(after, revision);
  // Nothing else changes: still admitted, same pod sets.
  EXPECT_EQ(updated->workload().status().state(), v1::WORKLOAD_STATE_ADMITTED);
  EXPECT_EQ(updated->workload().status().events().rbegin()->reason(), "PayloadUpdated");

  // The same payload again: no new revision.
  absl::StatusOr<v1::UpdateWorkloadPayloadResponse> again =
      UpdatePayload(*api_, "a", Payload(R"({"kind":"Job","v":2})"));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->workload().metadata().resource_version(), after);

  // A stale revision: refused, naming both, nothing changed.
  const absl::Status stale =
      UpdatePayload(*api_, "a", Payload(R"({"kind":"Job","v":3})"), revision).status();
  EXPECT_EQ(stale.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(stale.message(), HasSubstr(absl::StrCat("workload ns/a is at revision ", after,
                                                      ", not the expected revision ", revision)));
  EXPECT_EQ(Get("a").spec().payload().data(), R"({"kind":"Job","v":2})");

  // Acknowledged means stored: a restart reads it back.
  ASSERT_NO_FATAL_FAILURE(Open());
  EXPECT_EQ(Get("a").spec().payload().data(), R"({"kind":"Job","v":2})");
  EXPECT_EQ(Get("a").metadata().resource_version(), after);
}

TEST_F(TollgateApiMultiKueueJobsTest,
       APayloadUpdateRefusesBadInputNamingTheFieldAndChangesNothing) {
  ASSERT_NO_FATAL_FAILURE(Submit(Request("a", "q", 1)));
  v1::SubmitRequest bare = Request("bare", "q", 1);
  bare.mutable_workload()->mutable_spec()->clear_payload();
  ASSERT_NO_FATAL_FAILURE(Submit(bare));
  const int64_t revision = Get("a").metadata().resource_version();

  auto refused = [&](const std::string& name, const v1::WorkloadPayload& payload,
                     absl::StatusCode code, const std::string& message,
                     int64_t expected_revision = 0) {
    const absl::Status status = UpdatePayload(*api_, name, payload, expected_revision).status();
    EXPECT_EQ(status.code(), code) << status;
    EXPECT_THAT(status.message(), HasSubstr(message));
  };
  v1::WorkloadPayload big = Payload(std::string(256 * 1024 + 1, 'x'));
  refused("a", big, absl::StatusCode::kInvalidArgument,
          "payload.data: must be no more than 262144 bytes, got 262145 bytes");
  v1::WorkloadPayload untyped = Payload("{}");
  untyped.clear_content_type();
  refused("a", untyped, absl::StatusCode::kInvalidArgument, "payload.contentType: Required value");
  v1::WorkloadPayload other_kind = Payload("{}");
  other_kind.set_kind("JobSet");
  refused("a", other_kind, absl::StatusCode::kFailedPrecondition,
          "workload ns/a carries batch/v1 Job; payload.apiVersion and payload.kind must stay so, "
          "got batch/v1 JobSet");
  refused("bare", Payload("{}"), absl::StatusCode::kFailedPrecondition,
          "workload ns/bare carries no payload");
  refused("absent", Payload("{}"), absl::StatusCode::kNotFound, "workload ns/absent not found");
  refused("", Payload("{}"), absl::StatusCode::kInvalidArgument, "workload");
  refused("a", Payload("{}"), absl::StatusCode::kInvalidArgument,
          "expected_revision: must not be negative", -1);
  v1::UpdateWorkloadPayloadRequest no_payload;
  no_payload.mutable_workload()->set_namespace_("ns");
  no_payload.mutable_workload()->set_name("a");
  EXPECT_THAT(api_->UpdateWorkloadPayload(no_payload).status().message(),
              HasSubstr("payload: Required value"));
  EXPECT_EQ(Get("a").metadata().resource_version(), revision);
  EXPECT_EQ(Get("a").spec().payload().data(), R"({"kind":"Job"})");
  EXPECT_FALSE(Get("bare").spec().has_payload());

  // A finished workload's payload is frozen.
  v1::FinishRequest finish;
  finish.mutable_workload()->set_namespace_("ns");
  finish.mutable_workload()->set_name("a");
  ASSERT_TRUE(api_->Finish(finish).ok());
  refused("a", Payload("{}"), absl::StatusCode::kFailedPrecondition,
          "workload ns/a is Finished; its payload can no longer change");
}

}  // namespace
}  // namespace tollgate::engine
