// TollgateApi's own rules on workloads: uids are unique, labels and annotations survive every
// path, free text is bounded.

#include "services/engine/tollgate_api.h"

#include <memory>
#include <set>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "core/clock.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "services/engine/admission_executor.h"
#include "storage/memory_store.h"
#include "tollgate/v1/service.pb.h"

namespace tollgate::engine {
namespace {

using ::testing::HasSubstr;

class TollgateApiTest : public testing::Test {
 protected:
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(Open()); }

  void Open() {
    // The executor's operations use the API object: stop it first.
    executor_.reset();
    api_.reset();
    AdmissionExecutor::Options options;
    options.schedule_continuously = false;
    absl::StatusOr<std::unique_ptr<AdmissionExecutor>> executor =
        AdmissionExecutor::Open(store_, clock_, core::SchedulerConfig{}, options);
    ASSERT_TRUE(executor.ok()) << executor.status();
    executor_ = *std::move(executor);
    api_ = std::make_unique<TollgateApi>(*executor_);
    v1::ApplyRequest request;
    v1::LocalQueue* lq = request.add_objects()->mutable_local_queue();
    lq->mutable_metadata()->set_namespace_("team");
    lq->mutable_metadata()->set_name("q");
    lq->mutable_spec()->set_cluster_queue("cq");
    ASSERT_TRUE(api_->Apply(request).ok());
  }

  v1::SubmitRequest Request(const std::string& name, const std::string& uid = "") {
    v1::SubmitRequest request;
    v1::Workload* wl = request.mutable_workload();
    wl->mutable_metadata()->set_namespace_("team");
    wl->mutable_metadata()->set_name(name);
    wl->mutable_metadata()->set_uid(uid);
    wl->mutable_spec()->set_queue_name("q");
    v1::PodSet* ps = wl->mutable_spec()->add_pod_sets();
    ps->set_count(1);
    (*ps->mutable_requests())["cpu"] = "1";
    return request;
  }

  core::SimulatedClock clock_{absl::FromUnixSeconds(1767225600)};
  storage::MemoryStore store_;
  std::unique_ptr<AdmissionExecutor> executor_;
  std::unique_ptr<TollgateApi> api_;
};

TEST_F(TollgateApiTest, AClientUidBelongsToOneWorkload) {
  ASSERT_TRUE(api_->Submit(Request("a", "3f1c-uid")).ok());
  // The same workload again is an idempotent retry.
  absl::StatusOr<v1::SubmitResponse> retry = api_->Submit(Request("a", "3f1c-uid"));
  ASSERT_TRUE(retry.ok()) << retry.status();
  EXPECT_FALSE(retry->created());
  absl::StatusOr<v1::SubmitResponse> other = api_->Submit(Request("b", "3f1c-uid"));
  EXPECT_EQ(other.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(other.status().message(), HasSubstr("metadata.uid"));
  EXPECT_THAT(other.status().message(), HasSubstr("team/a"));

  // Deleting the holder frees the uid; a restart remembers who holds one.
  v1::DeleteWorkloadRequest del;
  del.mutable_workload()->set_namespace_("team");
  del.mutable_workload()->set_name("a");
  ASSERT_TRUE(api_->DeleteWorkload(del).ok());
  ASSERT_TRUE(api_->Submit(Request("b", "3f1c-uid")).ok());
  ASSERT_NO_FATAL_FAILURE(Open());
  EXPECT_EQ(api_->Submit(Request("c", "3f1c-uid")).status().code(),
            absl::StatusCode::kAlreadyExists);
}

TEST_F(TollgateApiTest, ServiceAssignedUidsNeverRepeatAcrossRestarts) {
  std::set<std::string> uids;
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 4; ++i) {
      absl::StatusOr<v1::SubmitResponse> r = api_->Submit(Request(absl::StrCat("w", round, i)));
      ASSERT_TRUE(r.ok()) << r.status();
      EXPECT_TRUE(uids.insert(r->workload().metadata().uid()).second)
          << r->workload().metadata().uid();
    }
    // A restart renumbers workloads; the uids must not follow the numbers.
    ASSERT_NO_FATAL_FAILURE(Open());
  }
  // A client may not take one of them either.
  EXPECT_EQ(api_->Submit(Request("x", *uids.begin())).status().code(),
            absl::StatusCode::kAlreadyExists);
}

TEST_F(TollgateApiTest, LabelsAndAnnotationsSurviveSubmitGetListAndRestart) {
  v1::SubmitRequest request = Request("labelled");
  (*request.mutable_workload()->mutable_metadata()->mutable_labels())["team"] = "ml";
  (*request.mutable_workload()->mutable_metadata()->mutable_annotations())["note"] = "keep me";
  absl::StatusOr<v1::SubmitResponse> submitted = api_->Submit(request);
  ASSERT_TRUE(submitted.ok()) << submitted.status();
  EXPECT_EQ(submitted->workload().metadata().labels().at("team"), "ml");

  ASSERT_NO_FATAL_FAILURE(Open());
  v1::GetWorkloadRequest get;
  get.mutable_workload()->set_namespace_("team");
  get.mutable_workload()->set_name("labelled");
  absl::StatusOr<v1::Workload> got = api_->GetWorkload(get);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->metadata().labels().at("team"), "ml");
  EXPECT_EQ(got->metadata().annotations().at("note"), "keep me");
  absl::StatusOr<v1::ListWorkloadsResponse> list = api_->ListWorkloads(v1::ListWorkloadsRequest());
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->workloads_size(), 1);
  EXPECT_EQ(list->workloads(0).metadata().annotations().at("note"), "keep me");

  // Other labels make another workload, not a silent no-op.
  (*request.mutable_workload()->mutable_metadata()->mutable_labels())["team"] = "infra";
  EXPECT_EQ(api_->Submit(request).status().code(), absl::StatusCode::kAlreadyExists);
}

TEST_F(TollgateApiTest, FreeTextIsBounded) {
  ASSERT_TRUE(api_->Submit(Request("a")).ok());
  v1::FinishRequest finish;
  finish.mutable_workload()->set_namespace_("team");
  finish.mutable_workload()->set_name("a");
  finish.set_message(std::string(40000, 'm'));
  absl::StatusOr<v1::FinishResponse> r = api_->Finish(finish);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("message: must be no more than 32768 bytes"));
  v1::PreemptRequest preempt;
  *preempt.mutable_workload() = finish.workload();
  preempt.set_reason(std::string(40000, 'r'));
  EXPECT_THAT(api_->Preempt(preempt).status().message(), HasSubstr("reason"));
}

}  // namespace
}  // namespace tollgate::engine
