// Paging of the List calls (services/engine/list_pages, TollgateApi's List methods): every item
// exactly once in order, every page at the first page's revision, and OUT_OF_RANGE "continue token
// expired" exactly when the rest of a listing changed under it.

#include "services/engine/list_pages.h"

#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/engine/admission_executor.h"
#include "services/engine/tollgate_api.h"
#include "test/services/engine/executor_fixture.h"
#include "test/status_matchers.h"
#include "tollgate/v1/service.pb.h"

namespace tollgate::engine {
namespace {

using ::testing::HasSubstr;

TEST(ContinueTokenTest, RoundTripsAndBelongsToOneListing) {
  const ContinueToken token{
      .listing = "workloads|a", .revision = 42, .offset = 500, .last_key = "ns/name-1"};
  const std::string text = EncodeContinueToken(token);
  absl::StatusOr<ContinueToken> back = DecodeContinueToken(text, "workloads|a");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->revision, 42);
  EXPECT_EQ(back->offset, 500);
  EXPECT_EQ(back->last_key, "ns/name-1");

  absl::StatusOr<ContinueToken> other = DecodeContinueToken(text, "workloads|b");
  EXPECT_EQ(other.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(other.status().message(), HasSubstr("continue_token"));
  for (const std::string& bad :
       std::vector<std::string>{"", "!!!", "dDE", "aGVsbG8" /* "hello" */}) {
    SCOPED_TRACE(bad);
    EXPECT_EQ(DecodeContinueToken(bad, "workloads|a").status().code(),
              absl::StatusCode::kInvalidArgument);
  }
  EXPECT_EQ(ValidateLimit(-1).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(ValidateLimit(0).ok());
}

TEST(ListPagerTest, ChainsTokensAndStopsAtTheLimitOrTheByteBound) {
  EXPECT_EQ(ListPager::Start({"workloads", "a"}, -1, "").status().code(),
            absl::StatusCode::kInvalidArgument);
  absl::StatusOr<ListPager> first = ListPager::Start({"workloads", "a"}, 2, "");
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_FALSE(first->token().has_value());
  EXPECT_TRUE(first->HasRoom(1));
  EXPECT_FALSE(first->HasRoom(2));
  EXPECT_FALSE(first->Overflows(1, kMaxPageBytes + 1)) << "the first item always fits";
  EXPECT_TRUE(first->Overflows(2, kMaxPageBytes + 1));

  v1::ListWorkloadsResponse page;
  first->Finish(page, 7, 2, 3, "ns/b");
  EXPECT_EQ(page.revision(), 7);
  EXPECT_EQ(page.remaining_item_count(), 3);
  ASSERT_FALSE(page.continue_token().empty());

  // The next page continues after the previous one's last key, counting on from its offset.
  absl::StatusOr<ListPager> second = ListPager::Start({"workloads", "a"}, 2, page.continue_token());
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->token()->revision, 7);
  EXPECT_EQ(second->token()->offset, 2);
  EXPECT_EQ(second->token()->last_key, "ns/b");
  v1::ListWorkloadsResponse next;
  second->Finish(next, 7, 2, 1, "ns/d");
  absl::StatusOr<ContinueToken> third = DecodeContinueToken(
      next.continue_token(), absl::StrCat("workloads", std::string(1, '\x1e'), "a"));
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_EQ(third->offset, 4);

  // Another listing's token is refused; the last page carries none.
  EXPECT_EQ(ListPager::Start({"workloads", "b"}, 2, page.continue_token()).status().code(),
            absl::StatusCode::kInvalidArgument);
  v1::ListWorkloadsResponse last;
  second->Finish(last, 7, 1, 0, "ns/e");
  EXPECT_TRUE(last.continue_token().empty());

  absl::StatusOr<ListPager> unlimited = ListPager::Start({"objects"}, 0, "");
  ASSERT_TRUE(unlimited.ok());
  EXPECT_TRUE(unlimited->HasRoom(1000000));
  EXPECT_FALSE(unlimited->Overflows(2, kMaxPageBytes * 10)) << "asked for everything";
}

class ListPagesTest : public testing::Test {
 protected:
  void SetUp() override {
    // Nothing changes unless a test changes it.
    ASSERT_OK(fx_.Open(SettleByHand()));
    OneQueueConfig config;
    config.namespaces = {"team", "team-b"};
    ASSERT_OK(fx_.ApplyOneQueue(config));
  }

  absl::StatusOr<v1::SubmitResponse> Submit(const std::string& ns, const std::string& name,
                                            const std::string& uid = "") {
    v1::SubmitRequest request = OnePodSubmitRequest(ns, name, "1");
    request.mutable_workload()->mutable_metadata()->set_uid(uid);
    return fx_.api->Submit(request);
  }

  void SubmitMany(const std::string& ns, int n) {
    for (int i = 0; i < n; ++i) {
      absl::StatusOr<v1::SubmitResponse> r = Submit(ns, absl::StrCat("wl-", 1000 + i));
      ASSERT_TRUE(r.ok()) << r.status();
    }
  }

  absl::Status Delete(const std::string& ns, const std::string& name) {
    v1::DeleteWorkloadRequest request;
    request.mutable_workload()->set_namespace_(ns);
    request.mutable_workload()->set_name(name);
    return fx_.api->DeleteWorkload(request).status();
  }

  ExecutorFixture fx_;
};

TEST_F(ListPagesTest, PagesGiveEveryWorkloadOnceInNameOrderAtOneRevision) {
  // "team-b" sorts after "team" by namespace even though "team-b/..." < "team/..." as strings.
  ASSERT_NO_FATAL_FAILURE(SubmitMany("team-b", 7));
  ASSERT_NO_FATAL_FAILURE(SubmitMany("team", 8));
  v1::ListWorkloadsRequest request;
  request.set_limit(4);
  std::vector<std::string> seen;
  int64_t revision = -1;
  int pages = 0;
  while (true) {
    absl::StatusOr<v1::ListWorkloadsResponse> page = fx_.api->ListWorkloads(request);
    ASSERT_TRUE(page.ok()) << page.status();
    ++pages;
    if (revision < 0) revision = page->revision();
    EXPECT_EQ(page->revision(), revision);
    EXPECT_LE(page->workloads_size(), 4);
    for (const v1::Workload& wl : page->workloads()) {
      seen.push_back(absl::StrCat(wl.metadata().namespace_(), "/", wl.metadata().name()));
    }
    EXPECT_EQ(page->remaining_item_count(), 15 - static_cast<int64_t>(seen.size()));
    if (page->continue_token().empty()) break;
    request.set_continue_token(page->continue_token());
  }
  EXPECT_EQ(pages, 4);
  ASSERT_EQ(seen.size(), 15u);
  EXPECT_EQ(seen.front(), "team/wl-1000");
  EXPECT_EQ(seen[7], "team/wl-1007");
  EXPECT_EQ(seen[8], "team-b/wl-1000");
  EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()).size(), 15u);

  // Without a limit: everything at once, as before paging existed.
  absl::StatusOr<v1::ListWorkloadsResponse> all =
      fx_.api->ListWorkloads(v1::ListWorkloadsRequest());
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->workloads_size(), 15);
  EXPECT_TRUE(all->continue_token().empty());
}

TEST_F(ListPagesTest, ChangesBehindThePageKeepTheTokenChangesAheadExpireIt) {
  ASSERT_NO_FATAL_FAILURE(SubmitMany("team", 6));
  v1::ListWorkloadsRequest request;
  request.set_limit(3);
  absl::StatusOr<v1::ListWorkloadsResponse> first = fx_.api->ListWorkloads(request);
  ASSERT_TRUE(first.ok());
  ASSERT_FALSE(first->continue_token().empty());
  request.set_continue_token(first->continue_token());

  // Already listed, or in another namespace of a namespaced listing: the rest is as it was.
  ASSERT_TRUE(Delete("team", "wl-1000").ok());
  absl::StatusOr<v1::ListWorkloadsResponse> second = fx_.api->ListWorkloads(request);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->revision(), first->revision());
  ASSERT_EQ(second->workloads_size(), 3);
  EXPECT_EQ(second->workloads(0).metadata().name(), "wl-1003");

  // Ahead of the page: a new workload the first page's revision did not have.
  ASSERT_TRUE(Submit("team", "wl-2000").ok());
  absl::StatusOr<v1::ListWorkloadsResponse> expired = fx_.api->ListWorkloads(request);
  EXPECT_EQ(expired.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(expired.status().message(), HasSubstr("continue token expired"));
  EXPECT_THAT(expired.status().message(), HasSubstr("team/wl-2000"));

  // A deletion ahead expires a token too.
  request.clear_continue_token();
  absl::StatusOr<v1::ListWorkloadsResponse> again = fx_.api->ListWorkloads(request);
  ASSERT_TRUE(again.ok());
  request.set_continue_token(again->continue_token());
  ASSERT_TRUE(Delete("team", "wl-1005").ok());
  EXPECT_EQ(fx_.api->ListWorkloads(request).status().code(), absl::StatusCode::kOutOfRange);
}

TEST_F(ListPagesTest, ExpiresWhenTheChangeLogNoLongerReachesBack) {
  ASSERT_NO_FATAL_FAILURE(SubmitMany("team", 4));
  v1::ListWorkloadsRequest request;
  request.set_limit(2);
  absl::StatusOr<v1::ListWorkloadsResponse> first = fx_.api->ListWorkloads(request);
  ASSERT_TRUE(first.ok());
  // A change behind the page, which alone would keep the token, then compaction past it.
  ASSERT_TRUE(Delete("team", "wl-1000").ok());
  ASSERT_TRUE(fx_.store.CompactChanges(fx_.store.CurrentRevision()).ok());
  request.set_continue_token(first->continue_token());
  absl::StatusOr<v1::ListWorkloadsResponse> expired = fx_.api->ListWorkloads(request);
  EXPECT_EQ(expired.status().code(), absl::StatusCode::kOutOfRange) << expired.status();
}

TEST_F(ListPagesTest, FiltersAreCheckedAndBoundToTheToken) {
  ASSERT_NO_FATAL_FAILURE(SubmitMany("team", 3));
  v1::ListWorkloadsRequest request;
  request.set_state(static_cast<v1::WorkloadState>(99));
  absl::StatusOr<v1::ListWorkloadsResponse> bad_state = fx_.api->ListWorkloads(request);
  EXPECT_EQ(bad_state.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad_state.status().message(), HasSubstr("state: unsupported value 99"));

  request.set_state(v1::WORKLOAD_STATE_PENDING);
  request.set_limit(-5);
  EXPECT_THAT(fx_.api->ListWorkloads(request).status().message(), HasSubstr("limit"));

  request.set_limit(1);
  absl::StatusOr<v1::ListWorkloadsResponse> first = fx_.api->ListWorkloads(request);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->remaining_item_count(), 2);
  request.set_continue_token(first->continue_token());
  request.set_namespace_("other");
  absl::StatusOr<v1::ListWorkloadsResponse> other = fx_.api->ListWorkloads(request);
  EXPECT_EQ(other.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(other.status().message(), HasSubstr("different listing"));
}

TEST_F(ListPagesTest, ObjectsPageAndExpireOnAConfigurationWrite) {
  v1::ListObjectsRequest request;
  request.set_kind(v1::LOCAL_QUEUE);
  request.set_limit(1);
  absl::StatusOr<v1::ListObjectsResponse> first = fx_.api->ListObjects(request);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ(first->objects_size(), 1);
  EXPECT_EQ(first->remaining_item_count(), 1);
  request.set_continue_token(first->continue_token());
  absl::StatusOr<v1::ListObjectsResponse> second = fx_.api->ListObjects(request);
  ASSERT_TRUE(second.ok()) << second.status();
  ASSERT_EQ(second->objects_size(), 1);
  EXPECT_NE(second->objects(0).local_queue().metadata().namespace_(),
            first->objects(0).local_queue().metadata().namespace_());
  EXPECT_TRUE(second->continue_token().empty());

  v1::ApplyRequest apply;
  v1::LocalQueue* lq = apply.add_objects()->mutable_local_queue();
  lq->mutable_metadata()->set_namespace_("zz");
  lq->mutable_metadata()->set_name("q");
  lq->mutable_spec()->set_cluster_queue("cq");
  ASSERT_TRUE(fx_.api->Apply(apply).ok());
  EXPECT_EQ(fx_.api->ListObjects(request).status().code(), absl::StatusCode::kOutOfRange);

  v1::ListObjectsRequest bad_kind;
  bad_kind.set_kind(static_cast<v1::ObjectKind>(99));
  EXPECT_THAT(fx_.api->ListObjects(bad_kind).status().message(), HasSubstr("99"));
}

TEST_F(ListPagesTest, PendingPagesInQueueOrderAndFindsOneWorkload) {
  ASSERT_NO_FATAL_FAILURE(SubmitMany("team", 5));
  v1::ListPendingWorkloadsRequest request;
  request.set_cluster_queue("cq");
  request.set_limit(2);
  std::vector<int32_t> positions;
  while (true) {
    absl::StatusOr<v1::ListPendingWorkloadsResponse> page = fx_.api->ListPendingWorkloads(request);
    ASSERT_TRUE(page.ok()) << page.status();
    for (const v1::PendingWorkload& p : page->items()) {
      positions.push_back(p.position_in_cluster_queue());
    }
    if (page->continue_token().empty()) break;
    request.set_continue_token(page->continue_token());
  }
  EXPECT_EQ(positions, (std::vector<int32_t>{0, 1, 2, 3, 4}));

  v1::ListPendingWorkloadsRequest one;
  one.set_namespace_("team");
  one.set_local_queue("q");
  one.set_workload_name("wl-1003");
  absl::StatusOr<v1::ListPendingWorkloadsResponse> found = fx_.api->ListPendingWorkloads(one);
  ASSERT_TRUE(found.ok()) << found.status();
  ASSERT_EQ(found->items_size(), 1);
  EXPECT_EQ(found->items(0).position_in_local_queue(), 3);

  // A change in the queue moves positions: the token expires.
  request.clear_continue_token();
  absl::StatusOr<v1::ListPendingWorkloadsResponse> first = fx_.api->ListPendingWorkloads(request);
  ASSERT_TRUE(first.ok());
  request.set_continue_token(first->continue_token());
  ASSERT_TRUE(Submit("team-b", "late").ok());
  EXPECT_EQ(fx_.api->ListPendingWorkloads(request).status().code(), absl::StatusCode::kOutOfRange);
}

TEST_F(ListPagesTest, PendingOfAMissingQueueIsNotFound) {
  v1::ListPendingWorkloadsRequest request;
  request.set_cluster_queue("nope");
  absl::StatusOr<v1::ListPendingWorkloadsResponse> cq = fx_.api->ListPendingWorkloads(request);
  EXPECT_EQ(cq.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(cq.status().message(), HasSubstr("\"nope\""));
  request.clear_cluster_queue();
  request.set_namespace_("team");
  request.set_local_queue("nope");
  EXPECT_EQ(fx_.api->ListPendingWorkloads(request).status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace tollgate::engine
