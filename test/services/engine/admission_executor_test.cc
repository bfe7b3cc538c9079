#include "services/engine/admission_executor.h"

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "core/clock.h"
#include "gtest/gtest.h"
#include "services/api/api_codec.h"
#include "services/engine/config_objects.h"
#include "services/engine/state_keys.h"
#include "services/engine/stored_workloads.h"
#include "services/engine/tollgate_api.h"
#include "storage/memory_store.h"
#include "test/services/engine/executor_fixture.h"
#include "test/status_matchers.h"
#include "tollgate/v1/service.pb.h"

namespace tollgate::engine {
namespace {

const absl::Time kStart = absl::FromUnixSeconds(1767225600);

v1::Workload StoredWorkload(int i) {
  core::Workload wl;
  wl.uid = absl::StrCat("uid-", i);
  wl.creation_time = kStart + absl::Seconds(i);
  wl.spec.namespace_name = "team";
  wl.spec.name = absl::StrCat("wl-", i);
  wl.spec.queue_name = "q";
  wl.spec.pod_sets = {core::PodSetSpec{"main", 1, std::nullopt, {{"cpu", 1000}}, {}, {}}};
  v1::Workload proto;
  api::WorkloadToProto(wl, &proto);
  return proto;
}

// Enough records that the parse is split over threads on a multi-core machine.
constexpr int kManyRecords = 40000;

TEST(ParseStoredWorkloadsTest, KeepsTheStoredOrderAcrossThreads) {
  std::vector<std::pair<std::string, std::string>> stored;
  for (int i = 0; i < kManyRecords; ++i) {
    stored.emplace_back(WorkloadStoreKey("team", absl::StrCat("wl-", i)),
                        StoredWorkload(i).SerializeAsString());
  }
  absl::StatusOr<std::vector<std::unique_ptr<core::Workload>>> parsed =
      ParseStoredWorkloads(stored);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->size(), stored.size());
  for (int i : {0, 1, kManyRecords / 2, kManyRecords - 1}) {
    EXPECT_EQ((*parsed)[i]->spec.name, absl::StrCat("wl-", i));
    EXPECT_EQ((*parsed)[i]->creation_time, kStart + absl::Seconds(i));
  }
}

TEST(ParseStoredWorkloadsTest, NamesTheFirstCorruptKey) {
  std::vector<std::pair<std::string, std::string>> stored;
  for (int i = 0; i < kManyRecords; ++i) {
    std::string value = StoredWorkload(i).SerializeAsString();
    // Two corrupt records, late in the list (another thread's share when there are two).
    if (i == kManyRecords - 100 || i == kManyRecords - 10) value = "\xff\xff not a proto";
    stored.emplace_back(WorkloadStoreKey("team", absl::StrCat("wl-", i)), std::move(value));
  }
  absl::StatusOr<std::vector<std::unique_ptr<core::Workload>>> parsed =
      ParseStoredWorkloads(stored);
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(parsed.status().message().find(absl::StrCat("wl-", kManyRecords - 100)),
            std::string::npos)
      << parsed.status();
}

TEST(ParseStoredWorkloadsTest, SameResultWithAnyNumberOfHelpers) {
  for (int helpers : {0, 1, 3}) {
    StoredWorkloadParser parser(helpers);
    for (int i = 0; i < 10000; ++i) {
      parser.Add(WorkloadStoreKey("team", absl::StrCat("wl-", i)),
                 StoredWorkload(i).SerializeAsString());
    }
    absl::StatusOr<std::vector<std::unique_ptr<core::Workload>>> parsed = parser.Finish();
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    ASSERT_EQ(parsed->size(), 10000u);
    for (int i = 0; i < 10000; ++i) {
      ASSERT_EQ((*parsed)[i]->spec.name, absl::StrCat("wl-", i)) << helpers;
    }
  }
}

TEST(ParseStoredWorkloadsTest, RefusesAWorkloadUnderAnotherKey) {
  std::vector<std::pair<std::string, std::string>> stored = {
      {WorkloadStoreKey("team", "wl-1"), StoredWorkload(1).SerializeAsString()},
      {WorkloadStoreKey("team", "wl-2x"), StoredWorkload(2).SerializeAsString()},
  };
  absl::StatusOr<std::vector<std::unique_ptr<core::Workload>>> parsed =
      ParseStoredWorkloads(stored);
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(parsed.status().message(), "store key w/team/wl-2x holds workload team/wl-2");
}

TEST(ParseStoredWorkloadsTest, EmptyStore) {
  absl::StatusOr<std::vector<std::unique_ptr<core::Workload>>> parsed = ParseStoredWorkloads({});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_TRUE(parsed->empty());
}

class ExecutorTest : public testing::Test {
 protected:
  void Open() { ASSERT_OK(fx_.Open(AdmissionExecutor::Options())); }
  void ApplyQueue() { ASSERT_OK(fx_.ApplyOneQueue()); }

  ExecutorFixture fx_;
};

TEST_F(ExecutorTest, CorruptStoredWorkloadRefusesToOpen) {
  storage::WriteBatch batch;
  batch.Put(WorkloadStoreKey("team", "broken"), "not a workload");
  ASSERT_TRUE(fx_.store.Commit(batch).ok());
  absl::StatusOr<std::unique_ptr<AdmissionExecutor>> executor = AdmissionExecutor::Open(
      fx_.store, fx_.clock, core::SchedulerConfig{}, AdmissionExecutor::Options());
  EXPECT_EQ(executor.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(executor.status().message().find("team/broken"), std::string::npos)
      << executor.status();
}

// Submission order decides ties in a queue, so a restart must rebuild it: creation time, then
// key, whatever order the store returns the records in.
TEST_F(ExecutorTest, RestartQueuesByCreationTimeThenKey) {
  ASSERT_NO_FATAL_FAILURE(Open());
  ASSERT_NO_FATAL_FAILURE(ApplyQueue());
  fx_.executor.reset();
  storage::WriteBatch batch;
  for (int i = 0; i < 8; ++i) {
    v1::Workload wl = StoredWorkload(i);
    // Pairs share a creation time; the later names are older.
    wl.mutable_metadata()->mutable_creation_timestamp()->set_seconds(absl::ToUnixSeconds(kStart) +
                                                                     (7 - i) / 2);
    batch.Put(WorkloadStoreKey("team", wl.metadata().name()), wl.SerializeAsString());
  }
  ASSERT_TRUE(fx_.store.Commit(batch).ok());

  AdmissionExecutor::Options options;
  options.schedule_continuously = false;
  absl::StatusOr<std::unique_ptr<AdmissionExecutor>> executor =
      AdmissionExecutor::Open(fx_.store, fx_.clock, core::SchedulerConfig{}, options);
  ASSERT_TRUE(executor.ok()) << executor.status();
  EXPECT_EQ((*executor)->load_stats().workloads, 8);
  TollgateApi api(**executor);
  v1::ListPendingWorkloadsRequest request;
  request.set_cluster_queue("cq");
  absl::StatusOr<v1::ListPendingWorkloadsResponse> pending = api.ListPendingWorkloads(request);
  ASSERT_TRUE(pending.ok()) << pending.status();
  std::vector<std::string> names;
  for (const v1::PendingWorkload& p : pending->items()) names.push_back(p.workload().name());
  EXPECT_EQ(names, (std::vector<std::string>{"wl-6", "wl-7", "wl-4", "wl-5", "wl-2", "wl-3", "wl-0",
                                             "wl-1"}));
}

// A round's request and the admission it triggers are committed together, but as two
// revisions: the response and the first change show the workload pending, the second admitted.
TEST_F(ExecutorTest, SubmitAndItsAdmissionAreConsecutiveRevisions) {
  ASSERT_NO_FATAL_FAILURE(Open());
  ASSERT_NO_FATAL_FAILURE(ApplyQueue());
  const int64_t before = fx_.store.CurrentRevision();

  v1::SubmitRequest submit;
  *submit.mutable_workload() = StoredWorkload(1);
  absl::Notification answered;
  absl::StatusOr<v1::SubmitResponse> response;
  fx_.api->SubmitAsync(submit, [&](absl::StatusOr<v1::SubmitResponse> result) {
    response = std::move(result);
    answered.Notify();
  });
  answered.WaitForNotification();
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->workload().status().state(), v1::WORKLOAD_STATE_PENDING);
  EXPECT_EQ(response->workload().metadata().resource_version(), before + 1);
  // Durable when answered: the admission is already in the store too.
  EXPECT_EQ(fx_.store.CurrentRevision(), before + 2);

  absl::StatusOr<std::vector<storage::ChangeLogEntry>> changes = fx_.store.ReadChanges(before, 10);
  ASSERT_TRUE(changes.ok()) << changes.status();
  ASSERT_EQ(changes->size(), 2u);
  std::vector<v1::WorkloadState> states;
  std::vector<v1::WatchEvent::Type> types;
  for (const storage::ChangeLogEntry& entry : *changes) {
    ASSERT_EQ(entry.records.size(), 1u);
    v1::WatchEvent event;
    ASSERT_TRUE(event.ParseFromString(entry.records[0]));
    EXPECT_EQ(event.workload().metadata().name(), "wl-1");
    states.push_back(event.workload().status().state());
    types.push_back(event.type());
  }
  EXPECT_EQ(types,
            (std::vector<v1::WatchEvent::Type>{v1::WatchEvent::ADDED, v1::WatchEvent::MODIFIED}));
  EXPECT_EQ(states, (std::vector<v1::WorkloadState>{v1::WORKLOAD_STATE_PENDING,
                                                    v1::WORKLOAD_STATE_ADMITTED}));

  // The non-blocking Finish reports a refused request through the callback too.
  v1::FinishRequest finish;
  finish.mutable_workload()->set_namespace_("team");
  finish.mutable_workload()->set_name("missing");
  absl::Notification refused;
  absl::Status finish_status;
  fx_.api->FinishAsync(finish, [&](absl::StatusOr<v1::FinishResponse> result) {
    finish_status = result.status();
    refused.Notify();
  });
  refused.WaitForNotification();
  EXPECT_EQ(finish_status.code(), absl::StatusCode::kNotFound);
}

// Without recorded workload changes (a trace replay) the store holds no workload and the change
// log no record, while the observer sees every committed change and deletion in order, and
// revisions advance as they would with them: a submission and its admission are still two.
class SeenWorkloads final : public ExecutorObserver {
 public:
  void OnRound(int64_t) override {}
  void OnPlan(const core::CyclePlan&, const core::ClusterState&, absl::Time) override {}
  void OnCycle(const core::CyclePlan&, absl::Duration) override {}
  void OnWorkloadCommitted(const core::Workload& wl, const core::ClusterState&,
                           absl::Time) override {
    absl::MutexLock lock(&mu_);
    seen_.push_back(absl::StrCat(wl.spec.name, " ", core::WorkloadStateName(wl.status.state)));
  }
  void OnWorkloadDeleted(const core::WorkloadKey& key) override {
    absl::MutexLock lock(&mu_);
    seen_.push_back(absl::StrCat(key.name, " deleted"));
  }
  void OnObjectErased(const core::ObjectName&) override {}
  void OnCommit(int64_t, absl::Duration, const absl::Status&) override {}

  std::vector<std::string> seen() const {
    absl::MutexLock lock(&mu_);
    return seen_;
  }

 private:
  mutable absl::Mutex mu_;
  std::vector<std::string> seen_;
};

TEST(UnrecordedWorkloadChangesTest, ObserverSeesEachCommitStoreAndLogHoldNone) {
  ExecutorFixture fx;
  SeenWorkloads observer;
  AdmissionExecutor::Options options;
  options.observer = &observer;
  options.record_workload_changes = false;
  ASSERT_OK(fx.Open(options));
  ASSERT_OK(fx.ApplyOneQueue());
  const int64_t before = fx.store.CurrentRevision();

  ASSERT_OK(fx.api->Submit(OnePodSubmitRequest("team", "wl-1", "1")).status());
  EXPECT_EQ(fx.store.CurrentRevision(), before + 2);
  v1::GetWorkloadRequest get;
  get.mutable_workload()->set_namespace_("team");
  get.mutable_workload()->set_name("wl-1");
  absl::StatusOr<v1::Workload> read = fx.api->GetWorkload(get);
  ASSERT_OK(read.status());
  EXPECT_EQ(read->status().state(), v1::WORKLOAD_STATE_ADMITTED);
  EXPECT_EQ(read->metadata().resource_version(), before + 2);

  v1::DeleteWorkloadRequest remove;
  *remove.mutable_workload() = get.workload();
  ASSERT_OK(fx.api->DeleteWorkload(remove).status());
  EXPECT_EQ(fx.store.CurrentRevision(), before + 3);

  absl::StatusOr<std::optional<std::string>> stored =
      fx.store.Get(WorkloadStoreKey("team", "wl-1"));
  ASSERT_OK(stored.status());
  EXPECT_FALSE(stored->has_value());
  absl::StatusOr<std::vector<storage::ChangeLogEntry>> changes = fx.store.ReadChanges(before, 10);
  ASSERT_OK(changes.status());
  ASSERT_EQ(changes->size(), 3u);
  for (const storage::ChangeLogEntry& entry : *changes) EXPECT_TRUE(entry.records.empty());
  EXPECT_EQ(observer.seen(),
            (std::vector<std::string>{"wl-1 Pending", "wl-1 Admitted", "wl-1 deleted"}));
  fx.Close();
}

// Holds the executor thread in one operation until released, so that the requests sent meanwhile
// are taken as one round.
class ExecutorHold {
 public:
  explicit ExecutorHold(AdmissionExecutor& executor) {
    executor.RunAsync<int>(
        [this](AdmissionExecutor::Txn&) -> absl::StatusOr<int> {
          holding_.Notify();
          // Bounded, so a failing test ends instead of hanging.
          release_.WaitForNotificationWithTimeout(absl::Seconds(60));
          return 0;
        },
        [this](absl::StatusOr<int>) { done_.Notify(); });
    holding_.WaitForNotification();
  }
  ~ExecutorHold() {
    Release();
    done_.WaitForNotification();
  }
  void Release() {
    if (!release_.HasBeenNotified()) release_.Notify();
  }

 private:
  absl::Notification holding_;
  absl::Notification release_;
  absl::Notification done_;
};

// One ClusterQueue admits one workload per cycle, so a round of more submissions than
// max_cycles_per_round still runs a cycle for each: all are admitted under the round's commit
// (two revisions), not in cycles-only rounds that each wait for a commit of their own.
TEST_F(ExecutorTest, ARoundsSubmissionsAreAdmittedUnderItsCommit) {
  AdmissionExecutor::Options options;
  // Only the cycle count may bound this round, not a slow machine's wall clock.
  options.cycle_time_per_round = absl::Seconds(30);
  ASSERT_OK(fx_.Open(options));
  OneQueueConfig queue;
  queue.nominal_cpu = "100";
  ASSERT_OK(fx_.ApplyOneQueue(queue));
  const int submissions = 3 * AdmissionExecutor::Options().max_cycles_per_round;
  const int64_t before = fx_.store.CurrentRevision();
  std::vector<absl::StatusOr<v1::SubmitResponse>> responses(submissions,
                                                            absl::UnknownError("not answered"));
  std::vector<absl::Notification> answered(submissions);
  {
    ExecutorHold hold(*fx_.executor);
    for (int i = 0; i < submissions; ++i) {
      v1::SubmitRequest submit;
      *submit.mutable_workload() = StoredWorkload(i);
      fx_.api->SubmitAsync(submit, [&, i](absl::StatusOr<v1::SubmitResponse> result) {
        responses[i] = std::move(result);
        answered[i].Notify();
      });
    }
    ASSERT_EQ(fx_.executor->queue_depth(), submissions);
  }
  for (int i = 0; i < submissions; ++i) {
    answered[i].WaitForNotification();
    ASSERT_TRUE(responses[i].ok()) << responses[i].status();
    EXPECT_EQ(responses[i]->workload().metadata().resource_version(), before + 1);
  }
  EXPECT_EQ(fx_.store.CurrentRevision(), before + 2);
  absl::StatusOr<std::vector<storage::ChangeLogEntry>> changes = fx_.store.ReadChanges(before, 10);
  ASSERT_TRUE(changes.ok()) << changes.status();
  ASSERT_EQ(changes->size(), 2u);
  ASSERT_EQ((*changes)[1].records.size(), static_cast<size_t>(submissions));
  for (const std::string& record : (*changes)[1].records) {
    v1::WatchEvent event;
    ASSERT_TRUE(event.ParseFromString(record));
    EXPECT_EQ(event.workload().status().state(), v1::WORKLOAD_STATE_ADMITTED)
        << event.workload().metadata().name();
  }
}

// A transaction reads its own batch's configuration writes (the commit will hold them), while a
// scan shows only what is committed, as of the transaction's revision.
TEST_F(ExecutorTest, TransactionReadsItsOwnObjectWritesScansOnlyCommitted) {
  ASSERT_NO_FATAL_FAILURE(Open());
  v1::ConfigObject flavor;
  flavor.mutable_resource_flavor()->mutable_metadata()->set_name("spot");
  ASSERT_OK_AND_ASSIGN(ValidatedObject validated, ValidateConfigObject(flavor));
  const std::string key = ConfigObjectKey(KindOf(flavor), "", "spot");
  ASSERT_OK(fx_.executor->RunStatus([&](AdmissionExecutor::Txn& txn) -> absl::Status {
    EXPECT_EQ(*txn.ReadObject(key), std::nullopt);
    txn.ApplyObject(validated, key, flavor);
    absl::StatusOr<std::optional<std::string>> read = txn.ReadObject(key);
    EXPECT_TRUE(read.ok() && read->has_value()) << read.status();
    EXPECT_NE(txn.state().flavors().count("spot"), 0u);
    int scanned = 0;
    EXPECT_OK(txn.ScanCommittedObjects(key, [&](absl::string_view, absl::string_view) {
      ++scanned;
      return true;
    }));
    EXPECT_EQ(scanned, 0);
    return absl::OkStatus();
  }));
  // Committed with the batch.
  absl::StatusOr<std::optional<std::string>> stored = fx_.store.Get(key);
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_TRUE(stored->has_value());
}

// A store that can be lost: while `lost`, commits and reads fail with UNAVAILABLE, as an etcd
// store does without a quorum (or once shut down). Everything else goes to a MemoryStore.
class LosableStore : public storage::Store {
 public:
  std::atomic<bool> lost{false};

  absl::StatusOr<int64_t> CommitSequence(
      const std::vector<const storage::WriteBatch*>& batches) override {
    if (lost.load()) return absl::UnavailableError("etcd gone");
    return store_.CommitSequence(batches);
  }
  absl::StatusOr<std::optional<std::string>> Get(absl::string_view key) const override {
    if (lost.load()) return absl::UnavailableError("etcd gone");
    return store_.Get(key);
  }
  absl::Status Scan(
      absl::string_view prefix,
      const std::function<bool(absl::string_view, absl::string_view)>& visit) const override {
    if (lost.load()) return absl::UnavailableError("etcd gone");
    return store_.Scan(prefix, visit);
  }
  int64_t CurrentRevision() const override { return store_.CurrentRevision(); }
  storage::StoreIdentity Identity() const override { return store_.Identity(); }
  absl::StatusOr<std::unique_ptr<storage::StoreSnapshot>> TakeSnapshot() const override {
    if (lost.load()) return absl::UnavailableError("etcd gone");
    return store_.TakeSnapshot();
  }
  int64_t CompactedRevision() const override { return store_.CompactedRevision(); }
  absl::StatusOr<std::vector<storage::ChangeLogEntry>> ReadChanges(int64_t after_revision,
                                                                   int64_t limit) const override {
    if (lost.load()) return absl::UnavailableError("etcd gone");
    return store_.ReadChanges(after_revision, limit);
  }
  absl::Status CompactChanges(int64_t revision) override {
    if (lost.load()) return absl::UnavailableError("etcd gone");
    return store_.CompactChanges(revision);
  }

 private:
  storage::MemoryStore store_;
};

// A replicated tollgated sets on_state_lost: a commit that fails while the state cannot be read
// back must not abort the process (its etcd may return), only retire the executor.
TEST(ExecutorStoreLossTest, ReloadFailureCallsOnStateLostAndRefusesEveryLaterOperation) {
  LosableStore store;
  core::SimulatedClock clock(kFixtureStart);
  absl::Notification lost;
  absl::Status why;
  AdmissionExecutor::Options options;
  options.on_state_lost = [&](const absl::Status& status) {
    why = status;
    lost.Notify();
  };
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<AdmissionExecutor> executor,
                       AdmissionExecutor::Open(store, clock, core::SchedulerConfig{}, options));
  TollgateApi api(*executor);
  ASSERT_OK(api.Apply(OneQueueApplyRequest(OneQueueConfig())).status());
  ASSERT_OK(api.Submit(OnePodSubmitRequest("team", "before", "1")).status());

  store.lost.store(true);
  absl::StatusOr<v1::SubmitResponse> during = api.Submit(OnePodSubmitRequest("team", "a", "1"));
  EXPECT_TRUE(absl::IsUnavailable(during.status())) << during.status();
  ASSERT_TRUE(lost.WaitForNotificationWithTimeout(absl::Seconds(30)));
  EXPECT_TRUE(absl::StrContains(why.message(), "etcd gone")) << why;

  // Even once the store answers again this executor's memory is not trusted: its owner drops it.
  store.lost.store(false);
  absl::StatusOr<v1::SubmitResponse> after = api.Submit(OnePodSubmitRequest("team", "b", "1"));
  EXPECT_TRUE(absl::IsUnavailable(after.status())) << after.status();
  EXPECT_TRUE(absl::StrContains(after.status().message(), "lost its store")) << after.status();
  // Nothing of the refused submits reached the store; what came before did.
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> refused,
                       store.Get(WorkloadStoreKey("team", "a")));
  EXPECT_FALSE(refused.has_value());
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> kept,
                       store.Get(WorkloadStoreKey("team", "before")));
  EXPECT_TRUE(kept.has_value());
}

}  // namespace
}  // namespace tollgate::engine

namespace tollgate::engine {
namespace {

// --change-log-retention-age: a revision leaves the change log once it is older than the age on
// the wall clock, however few revisions there are; younger ones stay.
TEST(ChangeLogRetentionTest, AgeCompactsOnlyWhatIsOlderOnTheWallClock) {
  ExecutorFixture fx;
  core::SimulatedClock wall(kFixtureStart);
  AdmissionExecutor::Options options = SettleByHand();
  options.wall_clock = &wall;
  options.change_log_retention_age = absl::Hours(1);
  ASSERT_OK(fx.Open(options));
  ASSERT_OK(fx.ApplyOneQueue());
  ASSERT_OK(fx.api->Submit(OnePodSubmitRequest("team", "a", "1")).status());
  ASSERT_OK(fx.api->Submit(OnePodSubmitRequest("team", "b", "1")).status());
  const int64_t early = fx.store.CurrentRevision();
  EXPECT_EQ(fx.store.CompactedRevision(), 0);

  wall.Advance(absl::Minutes(30));
  ASSERT_OK(fx.api->Submit(OnePodSubmitRequest("team", "c", "1")).status());
  const int64_t later = fx.store.CurrentRevision();
  EXPECT_EQ(fx.store.CompactedRevision(), 0) << "nothing is an hour old yet";

  wall.Advance(absl::Minutes(31));
  ASSERT_OK(fx.api->Submit(OnePodSubmitRequest("team", "d", "1")).status());
  EXPECT_EQ(fx.store.CompactedRevision(), early) << "the first commits are over an hour old";
  absl::StatusOr<std::vector<storage::ChangeLogEntry>> changes =
      fx.store.ReadChanges(later - 1, 10);
  ASSERT_OK(changes.status());
  EXPECT_FALSE(changes->empty());

  wall.Advance(absl::Hours(2));
  ASSERT_OK(fx.api->Submit(OnePodSubmitRequest("team", "e", "1")).status());
  EXPECT_GE(fx.store.CompactedRevision(), later);
  EXPECT_LT(fx.store.CompactedRevision(), fx.store.CurrentRevision());
}

}  // namespace
}  // namespace tollgate::engine
