// Replicated tollgated end to end: a real 3-member etcd cluster on loopback and three real
// `tollgated --store=etcd` replicas. The leader is killed (kill -9) during concurrent submits by
// clients that retry on the other replicas, and paused (SIGSTOP) past its lease and resumed.
#include <signal.h>
#include <stdlib.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "clients/cpp/tollgate_client.h"
#include "etcd/etcdserver/etcdserverpb/rpc.grpc.pb.h"
#include "google/protobuf/util/message_differencer.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "test/e2e/e2e_support.h"
#include "test/e2e/tollgated_process.h"
#include "test/status_matchers.h"
#include "test/support/etcd_cluster.h"
#include "tollgate/v1/service.grpc.pb.h"

namespace tollgate::e2e {
namespace {

using test_support::EtcdCluster;
using test_support::EtcdClusterOptions;

constexpr int kReplicas = 3;
// Short, so a failover takes seconds; the production default is 10 s.
constexpr char kLeaseTtl[] = "--lease-ttl=2s";
// The ClusterQueue of test/e2e/testdata/queues.yaml has 100 cpu; every workload asks for 1.
constexpr int kQuotaCpu = 100;
constexpr absl::Duration kFailoverDeadline = absl::Seconds(30);

bool Admitted(const v1::Workload& workload) {
  return workload.status().state() == v1::WORKLOAD_STATE_ADMITTED;
}

class HaE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    TOLLGATE_SKIP_WITHOUT_ETCD();
    std::string dir = testing::TempDir() + "tollgate_ha_e2e_XXXXXX";
    ASSERT_NE(mkdtemp(dir.data()), nullptr) << std::strerror(errno);
    scratch_ = dir;
    EtcdClusterOptions options;
    options.members = EtcdMembers();
    ASSERT_OK_AND_ASSIGN(etcd_, EtcdCluster::Start(options));
    ASSERT_NO_FATAL_FAILURE(BeforeReplicas());
    for (int i = 0; i < Replicas(); ++i) {
      ASSERT_OK_AND_ASSIGN(std::unique_ptr<TollgatedProcess> replica, StartReplica(i));
      replicas_.push_back(std::move(replica));
    }
  }

  virtual int EtcdMembers() const { return 3; }
  virtual int Replicas() const { return kReplicas; }
  // Runs once etcd is up, before the replicas start.
  virtual void BeforeReplicas() {}
  // Flags of replica `i` beyond the common ones.
  virtual std::vector<std::string> ExtraArgs(int /*i*/) const { return {}; }

  void TearDown() override {
    replicas_.clear();
    etcd_.reset();
    std::error_code ignored;
    if (!scratch_.empty()) std::filesystem::remove_all(scratch_, ignored);
  }

  absl::StatusOr<std::unique_ptr<TollgatedProcess>> StartReplica(int i) {
    std::vector<std::string> args = {
        "--store=etcd", absl::StrCat("--etcd-endpoints=", etcd_->ClientEndpoints()), kLeaseTtl,
        "--manifests=" + QueuesManifest(), "--shutdown-grace=1s"};
    for (std::string& arg : ExtraArgs(i)) args.push_back(std::move(arg));
    return TollgatedProcess::Start("", scratch_, args);
  }

  std::string Servers(const std::set<int>& except = {}) const {
    std::vector<std::string> addresses;
    for (int i = 0; i < static_cast<int>(replicas_.size()); ++i) {
      if (except.count(i) == 0) addresses.push_back(replicas_[i]->address());
    }
    return absl::StrJoin(addresses, ",");
  }

  // Whether replica `i` serves the API as leader: a follower answers "not the leader" to
  // InfoService (it serves reads itself, so a read cannot tell); a leader with authentication
  // on refuses the anonymous call instead.
  bool Leads(int i) {
    auto stub = v1::InfoService::NewStub(replicas_[i]->channel());
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(1)));
    v1::GetBuildInfoRequest request;
    v1::BuildInfo response;
    const grpc::Status status = stub->GetBuildInfo(&context, request, &response);
    return status.ok() || status.error_code() == grpc::StatusCode::UNAUTHENTICATED;
  }

  // Waits until exactly one of the replicas not in `except` leads; returns it.
  absl::StatusOr<int> AwaitLeader(const std::set<int>& except = {},
                                  absl::Duration timeout = kFailoverDeadline) {
    const absl::Time deadline = absl::Now() + timeout;
    while (absl::Now() < deadline) {
      std::vector<int> leaders;
      for (int i = 0; i < static_cast<int>(replicas_.size()); ++i) {
        if (except.count(i) == 0 && Leads(i)) leaders.push_back(i);
      }
      if (leaders.size() == 1) return leaders[0];
      EXPECT_LE(leaders.size(), 1u) << "two replicas serve as leader at once";
      absl::SleepFor(absl::Milliseconds(50));  // polling a condition, bounded by `deadline`
    }
    return absl::DeadlineExceededError("no replica became leader in time");
  }

  // Lists every workload through `client` (which follows redirects).
  absl::StatusOr<std::vector<v1::Workload>> ListAll(client::TollgateClient& client) {
    v1::ListWorkloadsRequest request;
    request.set_namespace_("crash");
    absl::StatusOr<v1::ListWorkloadsResponse> listed = client.ListWorkloads(request);
    if (!listed.ok()) return listed.status();
    return std::vector<v1::Workload>(listed->workloads().begin(), listed->workloads().end());
  }

  std::string scratch_;
  std::unique_ptr<EtcdCluster> etcd_;
  std::vector<std::unique_ptr<TollgatedProcess>> replicas_;
};

// Follows every change through Watch, resuming on whichever replica leads after a failure, and
// keeps what it saw for the checks at the end. Resumes from the revision before the last one
// seen (a stream may break in the middle of a revision's events) and drops the repeats.
class Watcher {
 public:
  explicit Watcher(std::string servers) : client_(std::move(servers), absl::Seconds(5)) {
    thread_ = std::thread([this] { Run(); });
  }
  ~Watcher() { Stop(); }

  void Stop() {
    canceller_.Cancel();
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
  }

  struct Seen {
    int64_t revision;
    v1::WatchEvent::Type type;
    v1::Workload workload;
  };
  std::vector<Seen> events() const {
    absl::MutexLock lock(&mu_);
    return events_;
  }
  int64_t last_revision() const {
    absl::MutexLock lock(&mu_);
    return last_revision_;
  }
  int resumes() const {
    absl::MutexLock lock(&mu_);
    return resumes_;
  }
  std::string problems() const {
    absl::MutexLock lock(&mu_);
    return problems_;
  }

 private:
  void Run() {
    while (!stop_.load()) {
      v1::WatchRequest request;
      request.set_namespace_("crash");
      {
        absl::MutexLock lock(&mu_);
        request.set_since_revision(last_revision_ > 0 ? last_revision_ - 1 : 0);
        if (last_revision_ > 0) {
          request.set_store_id(store_id_);
          request.set_store_epoch(store_epoch_);
        }
      }
      absl::Status ended = client_.Watch(
          request,
          [this](const v1::WatchEvent& event) {
            absl::MutexLock lock(&mu_);
            if (event.type() == v1::WatchEvent::BOOKMARK) return true;
            if (event.revision() < last_revision_) {
              absl::StrAppend(&problems_, "event at revision ", event.revision(), " after ",
                              last_revision_, "\n");
              return true;
            }
            // The last revision seen comes again after a resume: drop what was recorded.
            const std::string key =
                absl::StrCat(event.revision(), "/", event.workload().metadata().name());
            if (!seen_keys_.insert(key).second) return true;
            last_revision_ = event.revision();
            store_id_ = event.store_id();
            store_epoch_ = event.store_epoch();
            events_.push_back(Seen{event.revision(), event.type(), event.workload()});
            return true;
          },
          &canceller_);
      if (stop_.load()) return;
      absl::MutexLock lock(&mu_);
      ++resumes_;
      if (absl::IsOutOfRange(ended) || absl::IsFailedPrecondition(ended)) {
        absl::StrAppend(&problems_, "watch could not resume: ", ended.ToString(), "\n");
        return;
      }
    }
  }

  client::TollgateClient client_;
  client::WatchCanceller canceller_;
  std::atomic<bool> stop_{false};
  mutable absl::Mutex mu_;
  std::vector<Seen> events_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> seen_keys_ ABSL_GUARDED_BY(mu_);
  int64_t last_revision_ ABSL_GUARDED_BY(mu_) = 0;
  std::string store_id_ ABSL_GUARDED_BY(mu_);
  int64_t store_epoch_ ABSL_GUARDED_BY(mu_) = 0;
  int resumes_ ABSL_GUARDED_BY(mu_) = 0;
  std::string problems_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

TEST_F(HaE2eTest, KillNineTheLeaderDuringConcurrentSubmits) {
  constexpr int kWorkloads = 1000;
  constexpr int kClients = 16;
  ASSERT_OK_AND_ASSIGN(const int leader, AwaitLeader());
  // The watcher starts on a follower: it is redirected to the leader, and after the kill it
  // resumes on the new one.
  Watcher watcher(Servers({leader}));

  std::atomic<int> next{0};
  std::atomic<int> acknowledged_count{0};
  absl::Mutex mu;
  std::set<std::string> acknowledged;
  std::string failures;
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    // Each client lists the replicas in its own order, the leader not always first.
    std::vector<std::string> order;
    for (int i = 0; i < kReplicas; ++i) order.push_back(replicas_[(c + i) % kReplicas]->address());
    clients.emplace_back([&, servers = absl::StrJoin(order, ",")] {
      client::TollgateClient client(servers, absl::Seconds(5));
      for (int n = next.fetch_add(1); n < kWorkloads; n = next.fetch_add(1)) {
        const std::string name = absl::StrCat("wl-", n);
        v1::SubmitRequest request;
        *request.mutable_workload() = CrashQueueWorkload(name);
        // A submit is retried until acknowledged: the same spec again is answered OK (not
        // ALREADY_EXISTS) when the first attempt was committed before the leader died.
        absl::Status last;
        const absl::Time give_up = absl::Now() + absl::Seconds(60);
        while (absl::Now() < give_up) {
          absl::StatusOr<v1::SubmitResponse> submitted = client.Submit(request);
          last = submitted.status();
          if (submitted.ok()) break;
          // Unknown outcomes: the leader died mid-call (UNAVAILABLE), no answer in time, or
          // a replica's server shut down under the call while it changed role (CANCELLED).
          if (!absl::IsUnavailable(last) && !absl::IsDeadlineExceeded(last) &&
              !absl::IsCancelled(last)) {
            break;
          }
        }
        absl::MutexLock lock(&mu);
        if (last.ok()) {
          acknowledged.insert(name);
          acknowledged_count.fetch_add(1);
        } else {
          absl::StrAppend(&failures, name, ": ", last.ToString(), "\n");
        }
      }
    });
  }

  // Kill the leader once a third of the submits are acknowledged.
  {
    const absl::Time deadline = absl::Now() + absl::Seconds(60);
    while (acknowledged_count.load() < kWorkloads / 3 && absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(5));  // polling a condition, bounded by `deadline`
    }
    ASSERT_GE(acknowledged_count.load(), kWorkloads / 3) << "submits did not progress";
  }
  const absl::Time killed = absl::Now();
  ASSERT_OK(replicas_[leader]->Kill());
  for (std::thread& t : clients) t.join();
  {
    absl::MutexLock lock(&mu);
    EXPECT_TRUE(failures.empty()) << failures;
    EXPECT_EQ(acknowledged.size(), static_cast<size_t>(kWorkloads));
  }
  ASSERT_OK_AND_ASSIGN(const int new_leader, AwaitLeader({leader}));
  EXPECT_NE(new_leader, leader);
  std::cout << "failover: new leader serving after " << absl::Now() - killed << "\n";
  // It took over from the warm copy it kept as a follower, without reading the state from etcd
  // again (docs/ha.md, "Warm followers").
  {
    const std::string logs = replicas_[new_leader]->Logs();
    EXPECT_TRUE(absl::StrContains(logs, "warm state loaded")) << logs;
    EXPECT_TRUE(absl::StrContains(logs, "promoted from warm state")) << logs;
    EXPECT_FALSE(absl::StrContains(logs, "warm state not usable")) << logs;
  }

  // The new leader admits up to the quota and no further.
  client::TollgateClient reader(Servers({leader}), absl::Seconds(5));
  std::vector<v1::Workload> listed;
  const absl::Time deadline = absl::Now() + kFailoverDeadline;
  int admitted = 0;
  while (absl::Now() < deadline) {
    ASSERT_OK_AND_ASSIGN(listed, ListAll(reader));
    admitted = 0;
    for (const v1::Workload& w : listed) admitted += Admitted(w) ? 1 : 0;
    if (admitted == kQuotaCpu) break;
    absl::SleepFor(absl::Milliseconds(50));  // polling a condition, bounded by `deadline`
  }
  EXPECT_EQ(admitted, kQuotaCpu);

  // Every acknowledged workload exactly once.
  std::map<std::string, int> copies;
  for (const v1::Workload& w : listed) ++copies[w.metadata().name()];
  for (const std::string& name : acknowledged) {
    EXPECT_EQ(copies[name], 1) << name;
  }
  EXPECT_EQ(listed.size(), acknowledged.size());

  // The watch: in order, complete, no workload admitted twice, the quota never overdrawn at
  // any revision.
  {
    const absl::Time caught_up = absl::Now() + kFailoverDeadline;
    ASSERT_OK_AND_ASSIGN(v1::ListWorkloadsResponse final_list, [&] {
      v1::ListWorkloadsRequest request;
      request.set_namespace_("crash");
      return reader.ListWorkloads(request);
    }());
    while (watcher.last_revision() < final_list.revision() && absl::Now() < caught_up) {
      absl::SleepFor(absl::Milliseconds(20));  // polling a condition, bounded by `caught_up`
    }
  }
  watcher.Stop();
  EXPECT_TRUE(watcher.problems().empty()) << watcher.problems();
  EXPECT_GE(watcher.resumes(), 1) << "the watch should have resumed across the failover";
  std::map<std::string, v1::Workload> state;
  std::map<std::string, int> admissions;
  int64_t previous = 0;
  int in_use = 0;
  for (const Watcher::Seen& seen : watcher.events()) {
    ASSERT_GE(seen.revision, previous) << "watch events out of order";
    previous = seen.revision;
    const std::string& name = seen.workload.metadata().name();
    const bool was = state.count(name) > 0 && Admitted(state[name]);
    const bool is = seen.type != v1::WatchEvent::DELETED && Admitted(seen.workload);
    if (!was && is) {
      ++admissions[name];
      ++in_use;
    } else if (was && !is) {
      --in_use;
    }
    EXPECT_LE(in_use, kQuotaCpu) << "quota overdrawn at revision " << seen.revision;
    state[name] = seen.workload;
  }
  for (const auto& [name, times] : admissions) EXPECT_EQ(times, 1) << name << " admitted twice";
  for (const std::string& name : acknowledged) {
    EXPECT_EQ(state.count(name), 1u) << name << " missing from the watch";
  }
  int watched_admitted = 0;
  for (const auto& [name, w] : state) watched_admitted += Admitted(w) ? 1 : 0;
  EXPECT_EQ(watched_admitted, admitted);
}

TEST_F(HaE2eTest, PausedLeaderWakesFencedAndStepsDown) {
  ASSERT_OK_AND_ASSIGN(const int old_leader, AwaitLeader());
  const absl::Time paused = absl::Now();
  ASSERT_OK(replicas_[old_leader]->Signal(SIGSTOP));
  // The lease (2 s) expires in etcd; another replica is elected and serves.
  ASSERT_OK_AND_ASSIGN(const int new_leader, AwaitLeader({old_leader}));
  std::cout << "new leader serving " << absl::Now() - paused << " after SIGSTOP\n";
  client::TollgateClient client(replicas_[new_leader]->address(), absl::Seconds(5));
  v1::SubmitRequest first;
  *first.mutable_workload() = CrashQueueWorkload("after-failover");
  ASSERT_OK(client.Submit(first).status());
  {
    const absl::Time deadline = absl::Now() + kFailoverDeadline;
    bool admitted = false;
    while (!admitted && absl::Now() < deadline) {
      v1::GetWorkloadRequest get;
      get.mutable_workload()->set_namespace_("crash");
      get.mutable_workload()->set_name("after-failover");
      absl::StatusOr<v1::Workload> got = client.GetWorkload(get);
      admitted = got.ok() && Admitted(*got);
      if (!admitted) absl::SleepFor(absl::Milliseconds(20));  // bounded by `deadline`
    }
    ASSERT_TRUE(admitted) << "the new leader did not admit";
  }

  // A submit sent to the paused old leader waits in its socket; it is the first thing the old
  // leader sees when it wakes. It must not be acknowledged, and nothing it does may reach etcd.
  auto old_stub = v1::AdmissionService::NewStub(replicas_[old_leader]->channel());
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
  v1::SubmitRequest stale;
  *stale.mutable_workload() = CrashQueueWorkload("sent-to-the-old-leader");
  v1::SubmitResponse stale_response;
  grpc::Status stale_status;
  std::thread stale_call(
      [&] { stale_status = old_stub->Submit(&context, stale, &stale_response); });
  const absl::Time resumed = absl::Now();
  ASSERT_OK(replicas_[old_leader]->Signal(SIGCONT));
  stale_call.join();
  std::cout << "stale call ended " << absl::Now() - resumed
            << " after SIGCONT: " << stale_status.error_message() << "\n";
  // UNAVAILABLE when its fenced commit was refused, CANCELLED when it stepped down (and shut
  // its server) first: either way not acknowledged.
  EXPECT_FALSE(stale_status.ok()) << "a deposed leader acknowledged a write";
  EXPECT_TRUE(stale_status.error_code() == grpc::StatusCode::UNAVAILABLE ||
              stale_status.error_code() == grpc::StatusCode::CANCELLED)
      << stale_status.error_code() << " " << stale_status.error_message();

  // It steps down: its log says so and it answers as a follower naming the new leader, within
  // about a lease TTL (2 s) of waking: the store's etcd calls still in flight are cancelled, not
  // waited for, and the follower takes the port before the leader's server lets it go. The
  // bound is generous for a loaded machine; it used to take 10-25 s.
  constexpr absl::Duration kStepDownBound = absl::Seconds(8);
  {
    const absl::Time deadline = absl::Now() + absl::Seconds(30);
    while (!absl::StrContains(replicas_[old_leader]->Logs(), "stepping down") &&
           absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(20));  // polling a condition, bounded by `deadline`
    }
    EXPECT_TRUE(absl::StrContains(replicas_[old_leader]->Logs(), "stepping down"))
        << replicas_[old_leader]->Logs();
    std::cout << "stepped down " << absl::Now() - resumed << " after SIGCONT\n";
    bool follower = false;
    grpc::Status status;
    // InfoService: a follower serves reads itself but redirects this one.
    auto old_info = v1::InfoService::NewStub(replicas_[old_leader]->channel());
    while (!follower && absl::Now() < deadline) {
      grpc::ClientContext get_context;
      get_context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(1)));
      v1::GetBuildInfoRequest request;
      v1::BuildInfo response;
      status = old_info->GetBuildInfo(&get_context, request, &response);
      follower =
          status.error_code() == grpc::StatusCode::UNAVAILABLE &&
          absl::StrContains(status.error_message(),
                            absl::StrCat("the leader is at ", replicas_[new_leader]->address()));
      if (!follower) absl::SleepFor(absl::Milliseconds(20));  // bounded by `deadline`
    }
    EXPECT_TRUE(follower) << "the old leader does not redirect to the new one; last answer: "
                          << status.error_code() << " " << status.error_message();
    const absl::Duration redirecting = absl::Now() - resumed;
    std::cout << "redirecting " << redirecting << " after SIGCONT\n";
    EXPECT_LT(redirecting, kStepDownBound)
        << "last answer: " << status.error_code() << " " << status.error_message() << "\n"
        << replicas_[old_leader]->Logs();
  }

  // Nothing of the stale submit reached etcd: the new leader does not know it.
  v1::GetWorkloadRequest get;
  get.mutable_workload()->set_namespace_("crash");
  get.mutable_workload()->set_name("sent-to-the-old-leader");
  EXPECT_TRUE(absl::IsNotFound(client.GetWorkload(get).status()));
  EXPECT_TRUE(Leads(new_leader));
  EXPECT_FALSE(Leads(old_leader));
}

// Two replicas on a 3-member etcd that loses members under them.
class HaEtcdLossE2eTest : public HaE2eTest {
 protected:
  int Replicas() const override { return 2; }
};

// Submits workloads one after another, each retried until acknowledged (the same spec again is
// answered with the stored workload), until stopped (at most 90); keeps what was acknowledged.
class Submitter {
 public:
  explicit Submitter(std::string servers) : client_(std::move(servers), absl::Seconds(5)) {
    thread_ = std::thread([this] { Run(); });
  }
  ~Submitter() { Stop(); }
  void Stop() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
  }
  int acknowledged_count() const { return count_.load(); }
  std::set<std::string> acknowledged() const {
    absl::MutexLock lock(&mu_);
    return acknowledged_;
  }
  std::string failures() const {
    absl::MutexLock lock(&mu_);
    return failures_;
  }

 private:
  void Run() {
    // Within the queue's quota (100 cpu, 1 each) with room to spare, so every acknowledged
    // workload is admitted once.
    constexpr int kMaxSubmits = 90;
    for (int n = 0; !stop_.load() && n < kMaxSubmits; ++n) {
      const std::string name = absl::StrCat("loss-", n);
      v1::SubmitRequest request;
      *request.mutable_workload() = CrashQueueWorkload(name);
      absl::Status last;
      const absl::Time give_up = absl::Now() + absl::Seconds(30);
      while (absl::Now() < give_up) {
        last = client_.Submit(request).status();
        if (last.ok()) break;
        if (!absl::IsUnavailable(last) && !absl::IsDeadlineExceeded(last) &&
            !absl::IsCancelled(last)) {
          break;
        }
      }
      absl::MutexLock lock(&mu_);
      if (last.ok()) {
        acknowledged_.insert(name);
        count_.fetch_add(1);
      } else {
        absl::StrAppend(&failures_, name, ": ", last.ToString(), "\n");
      }
    }
  }

  client::TollgateClient client_;
  std::atomic<bool> stop_{false};
  std::atomic<int> count_{0};
  mutable absl::Mutex mu_;
  std::set<std::string> acknowledged_ ABSL_GUARDED_BY(mu_);
  std::string failures_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

// Waits until `done` or `timeout`; returns whether `done` came true.
bool AwaitCondition(const std::function<bool()>& done, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (!done()) {
    if (absl::Now() >= deadline) return false;
    absl::SleepFor(absl::Milliseconds(20));  // polling a condition, bounded by `deadline`
  }
  return true;
}

TEST_F(HaEtcdLossE2eTest, OneMemberLostServiceContinuesTwoLostWritesFailNothingAckedLost) {
  ASSERT_OK_AND_ASSIGN(const int leader, AwaitLeader());
  std::cout << "replica " << leader << " leads\n";
  Watcher watcher(Servers());

  // One member of three lost while submits run: they keep being acknowledged. Member 0 is the
  // one the replicas talk to first, so their etcd clients must move on.
  Submitter submitter(Servers());
  ASSERT_TRUE(
      AwaitCondition([&] { return submitter.acknowledged_count() >= 15; }, absl::Seconds(30)))
      << "submits did not progress: " << submitter.failures();
  ASSERT_OK(etcd_->Kill(0));
  const int at_kill = submitter.acknowledged_count();
  const absl::Time killed = absl::Now();
  EXPECT_TRUE(AwaitCondition([&] { return submitter.acknowledged_count() >= at_kill + 30; },
                             absl::Seconds(30)))
      << "submits stopped after one etcd member of three was lost: " << submitter.failures();
  std::cout << "30 submits acknowledged " << absl::Now() - killed
            << " after losing one etcd member\n";
  submitter.Stop();
  EXPECT_TRUE(submitter.failures().empty()) << submitter.failures();
  const std::set<std::string> acknowledged = submitter.acknowledged();

  // Two of three lost: no quorum. A write fails with UNAVAILABLE within the call's deadline
  // (never a hang), whether it reached the leader before it stepped down or a follower after.
  ASSERT_OK(etcd_->Kill(1));
  constexpr absl::Duration kCallDeadline = absl::Seconds(8);
  client::TollgateClient client(Servers(), kCallDeadline);
  for (int i = 0; i < 2; ++i) {
    v1::SubmitRequest request;
    *request.mutable_workload() = CrashQueueWorkload(absl::StrCat("no-quorum-", i));
    const absl::Time sent = absl::Now();
    const absl::Status status = client.Submit(request).status();
    const absl::Duration took = absl::Now() - sent;
    std::cout << "submit without quorum: " << status << " after " << took << "\n";
    EXPECT_TRUE(absl::IsUnavailable(status)) << status;
    EXPECT_FALSE(status.message().empty());
    EXPECT_LT(took, kCallDeadline + absl::Seconds(2));
  }
  // Both replicas end up followers that say no leader is elected.
  EXPECT_TRUE(AwaitCondition([&] { return !Leads(0) && !Leads(1); }, absl::Seconds(20)))
      << "a replica still serves as leader without an etcd quorum";
  for (int i = 0; i < Replicas(); ++i) {
    for (absl::string_view line : absl::StrSplit(replicas_[i]->Logs(), '\n')) {
      if (absl::StrContains(line, "stepp")) std::cout << "replica " << i << ": " << line << "\n";
    }
  }

  // The quorum returns: a leader again, every acknowledged workload exactly once, admissions
  // resume, and the change log shows no workload admitted twice.
  ASSERT_OK(etcd_->Restart(0));
  ASSERT_OK(etcd_->Restart(1));
  ASSERT_OK(etcd_->WaitHealthy(absl::Seconds(30)));
  const absl::Time restored = absl::Now();
  ASSERT_OK_AND_ASSIGN(const int new_leader, AwaitLeader());
  std::cout << "replica " << new_leader << " leads " << absl::Now() - restored
            << " after the quorum returned\n";
  client::TollgateClient reader(Servers(), absl::Seconds(5));
  v1::SubmitRequest after;
  *after.mutable_workload() = CrashQueueWorkload("after-quorum");
  ASSERT_OK(reader.Submit(after).status());
  std::vector<v1::Workload> listed;
  EXPECT_TRUE(AwaitCondition(
      [&] {
        absl::StatusOr<std::vector<v1::Workload>> all = ListAll(reader);
        if (!all.ok()) return false;
        listed = *all;
        for (const v1::Workload& w : listed) {
          if (w.metadata().name() == "after-quorum") return Admitted(w);
        }
        return false;
      },
      absl::Seconds(20)))
      << "admissions did not resume";
  std::map<std::string, int> copies;
  for (const v1::Workload& w : listed) ++copies[w.metadata().name()];
  for (const std::string& name : acknowledged) EXPECT_EQ(copies[name], 1) << name;
  for (const auto& [name, n] : copies) EXPECT_EQ(n, 1) << name;

  ASSERT_OK_AND_ASSIGN(v1::ListWorkloadsResponse final_list, [&] {
    v1::ListWorkloadsRequest request;
    request.set_namespace_("crash");
    return reader.ListWorkloads(request);
  }());
  EXPECT_TRUE(AwaitCondition([&] { return watcher.last_revision() >= final_list.revision(); },
                             absl::Seconds(20)))
      << "the watch did not catch up";
  watcher.Stop();
  EXPECT_TRUE(watcher.problems().empty()) << watcher.problems();
  std::map<std::string, bool> admitted;
  std::map<std::string, int> admissions;
  for (const Watcher::Seen& seen : watcher.events()) {
    const std::string& name = seen.workload.metadata().name();
    const bool is = seen.type != v1::WatchEvent::DELETED && Admitted(seen.workload);
    if (is && !admitted[name]) ++admissions[name];
    admitted[name] = is;
  }
  for (const auto& [name, times] : admissions) EXPECT_EQ(times, 1) << name << " admitted twice";
  for (const std::string& name : acknowledged) {
    EXPECT_EQ(admissions[name], 1) << name << " not admitted once in the watch";
  }
}

// One call made on one replica (no redirect followed), with what its metadata said.
struct Answer {
  grpc::Status status;
  std::multimap<std::string, std::string> initial;
  std::multimap<std::string, std::string> trailing;

  std::string Trailer(const std::string& key) const {
    auto it = trailing.find(key);
    return it == trailing.end() ? "" : it->second;
  }
  bool Stale() const { return trailing.count("tollgate-stale-revision") > 0; }
};

std::multimap<std::string, std::string> Copy(
    const std::multimap<grpc::string_ref, grpc::string_ref>& metadata) {
  std::multimap<std::string, std::string> out;
  for (const auto& [key, value] : metadata) {
    out.emplace(std::string(key.data(), key.size()), std::string(value.data(), value.size()));
  }
  return out;
}

// `call(context)` with `min_revision` (negative: none) as tollgate-min-revision.
template <typename Call>
Answer Ask(int64_t min_revision, Call call, absl::Duration timeout = absl::Seconds(5)) {
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  if (min_revision >= 0) context.AddMetadata("tollgate-min-revision", absl::StrCat(min_revision));
  Answer answer;
  answer.status = call(context);
  answer.initial = Copy(context.GetServerInitialMetadata());
  answer.trailing = Copy(context.GetServerTrailingMetadata());
  return answer;
}

bool Same(const google::protobuf::Message& a, const google::protobuf::Message& b) {
  return google::protobuf::util::MessageDifferencer::Equals(a, b);
}

// What a replica answers to the reads the tests compare, each at the revision it reports.
struct Reads {
  Answer list_answer;
  v1::ListWorkloadsResponse workloads;
  v1::ListPendingWorkloadsResponse pending;
  v1::ListObjectsResponse queues;
  v1::Workload first;
  v1::CohortBreakdown breakdown;
  std::string error;
};

Reads ReadAll(const std::shared_ptr<grpc::Channel>& channel, int64_t min_revision) {
  auto admission = v1::AdmissionService::NewStub(channel);
  auto visibility = v1::VisibilityService::NewStub(channel);
  auto config = v1::ConfigService::NewStub(channel);
  Reads reads;
  auto check = [&](const char* what, const Answer& answer) {
    if (!answer.status.ok() && reads.error.empty()) {
      reads.error = absl::StrCat(what, ": ", answer.status.error_message());
    }
  };
  v1::ListWorkloadsRequest list;
  list.set_namespace_("crash");
  reads.list_answer = Ask(min_revision, [&](grpc::ClientContext& c) {
    return admission->ListWorkloads(&c, list, &reads.workloads);
  });
  check("list", reads.list_answer);
  v1::ListPendingWorkloadsRequest pending;
  pending.set_cluster_queue("crash-cq");
  check("pending", Ask(min_revision, [&](grpc::ClientContext& c) {
          return visibility->ListPendingWorkloads(&c, pending, &reads.pending);
        }));
  v1::ListObjectsRequest queues;
  queues.set_kind(v1::CLUSTER_QUEUE);
  check("queues", Ask(min_revision, [&](grpc::ClientContext& c) {
          return config->List(&c, queues, &reads.queues);
        }));
  v1::GetWorkloadRequest get;
  get.mutable_workload()->set_namespace_("crash");
  get.mutable_workload()->set_name("read-0");
  check("get", Ask(min_revision, [&](grpc::ClientContext& c) {
          return admission->GetWorkload(&c, get, &reads.first);
        }));
  v1::GetCohortBreakdownRequest breakdown;
  breakdown.set_cluster_queue("crash-cq");
  check("breakdown", Ask(min_revision, [&](grpc::ClientContext& c) {
          return visibility->GetCohortBreakdown(&c, breakdown, &reads.breakdown);
        }));
  return reads;
}

// What differs between the leader's reads and the follower's, both at `revision`; empty: same.
std::string Differences(const Reads& leader, const Reads& follower) {
  if (!leader.error.empty()) return "leader: " + leader.error;
  if (!follower.error.empty()) return "follower: " + follower.error;
  const int64_t revision = leader.workloads.revision();
  std::vector<std::string> diffs;
  if (leader.pending.revision() != revision || leader.queues.revision() != revision) {
    diffs.push_back("the leader moved on between its reads");
  }
  if (follower.workloads.revision() != revision || follower.pending.revision() != revision ||
      follower.queues.revision() != revision) {
    diffs.push_back(absl::StrCat("follower at ", follower.workloads.revision(), "/",
                                 follower.pending.revision(), "/", follower.queues.revision(),
                                 ", leader at ", revision));
  }
  if (follower.list_answer.Trailer("tollgate-revision") !=
      absl::StrCat(follower.workloads.revision())) {
    diffs.push_back("tollgate-revision " + follower.list_answer.Trailer("tollgate-revision"));
  }
  if (!Same(leader.workloads, follower.workloads)) diffs.push_back("workloads differ");
  if (!Same(leader.pending, follower.pending)) diffs.push_back("pending workloads differ");
  if (!Same(leader.queues, follower.queues)) diffs.push_back("cluster queues differ");
  if (!Same(leader.first, follower.first)) diffs.push_back("workload read-0 differs");
  if (!Same(leader.breakdown, follower.breakdown)) diffs.push_back("cohort breakdown differs");
  return absl::StrJoin(diffs, "; ");
}

class HaFollowerReadsE2eTest : public HaE2eTest {
 protected:
  int Replicas() const override { return 2; }

  // Submits `name` (asking `cpu`) through the leader; returns its store revision.
  int64_t Submit(client::TollgateClient& client, const std::string& name,
                 const std::string& cpu = "1") {
    v1::SubmitRequest request;
    *request.mutable_workload() = CrashQueueWorkload(name);
    (*request.mutable_workload()->mutable_spec()->mutable_pod_sets(0)->mutable_requests())["cpu"] =
        cpu;
    absl::StatusOr<v1::SubmitResponse> submitted = client.Submit(request);
    EXPECT_OK(submitted.status());
    return submitted.ok() ? submitted->workload().metadata().resource_version() : -1;
  }
};

TEST_F(HaFollowerReadsE2eTest, FollowerAnswersReadsAsTheLeaderDoesAtTheSameRevision) {
  ASSERT_OK_AND_ASSIGN(const int leader, AwaitLeader());
  const int follower = 1 - leader;
  client::TollgateClient client(Servers(), absl::Seconds(5));
  for (int i = 0; i < 4; ++i) Submit(client, absl::StrCat("read-", i));
  // More than the quota left: stays pending, so the visibility reads have an item.
  Submit(client, "too-big", "100");

  // Get, List, pending workloads, ClusterQueues and the cohort breakdown: the follower, asked
  // for the leader's revision, answers exactly what the leader answered at it.
  std::string differences = "not compared yet";
  EXPECT_TRUE(AwaitCondition(
      [&] {
        const Reads on_leader = ReadAll(replicas_[leader]->channel(), -1);
        const int64_t revision = on_leader.workloads.revision();
        const Reads on_follower = ReadAll(replicas_[follower]->channel(), revision);
        differences = Differences(on_leader, on_follower);
        bool admitted = on_leader.workloads.workloads_size() == 5;
        for (const v1::Workload& w : on_leader.workloads.workloads()) {
          if (w.metadata().name() != "too-big") admitted = admitted && Admitted(w);
        }
        if (!admitted) differences = "the leader has not admitted everything yet";
        if (on_leader.pending.items_size() != 1) differences = "too-big is not pending yet";
        return differences.empty();
      },
      absl::Seconds(30)))
      << differences;

  // A write on the leader, then a read on the follower with the revision the client saw: the
  // follower waits for its copy instead of answering without it.
  for (int i = 0; i < 3; ++i) {
    const std::string name = absl::StrCat("after-", i);
    const int64_t written = Submit(client, name);
    ASSERT_GT(written, 0);
    auto stub = v1::AdmissionService::NewStub(replicas_[follower]->channel());
    v1::GetWorkloadRequest get;
    get.mutable_workload()->set_namespace_("crash");
    get.mutable_workload()->set_name(name);
    v1::Workload got;
    const Answer answer =
        Ask(written, [&](grpc::ClientContext& c) { return stub->GetWorkload(&c, get, &got); });
    ASSERT_TRUE(answer.status.ok()) << answer.status.error_message();
    EXPECT_GE(got.metadata().resource_version(), written);
    int64_t served = 0;
    ASSERT_TRUE(absl::SimpleAtoi(answer.Trailer("tollgate-revision"), &served));
    EXPECT_GE(served, written);
    EXPECT_FALSE(answer.Stale()) << answer.Trailer("tollgate-stale-reason");
  }

  // A Watch on the follower: the listing at its view's revision, then later changes in order.
  {
    auto stub = v1::AdmissionService::NewStub(replicas_[follower]->channel());
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(30)));
    v1::WatchRequest request;
    request.set_namespace_("crash");
    std::unique_ptr<grpc::ClientReader<v1::WatchEvent>> reader = stub->Watch(&context, request);
    std::set<std::string> listed;
    v1::WatchEvent event;
    while (listed.size() < 8 && reader->Read(&event)) {
      if (event.type() == v1::WatchEvent::ADDED) listed.insert(event.workload().metadata().name());
    }
    EXPECT_EQ(listed.size(), 8u) << absl::StrJoin(listed, ",");
    EXPECT_EQ(Copy(context.GetServerInitialMetadata()).count("tollgate-revision"), 1u)
        << "the watch was not served by the follower";
    const int64_t written = Submit(client, "watched");
    bool seen = false;
    int64_t last = 0;
    while (!seen && reader->Read(&event)) {
      EXPECT_GE(event.revision(), last) << "out of order";
      last = event.revision();
      seen = event.workload().metadata().name() == "watched";
    }
    EXPECT_TRUE(seen) << "the follower's watch did not deliver a write made on the leader";
    EXPECT_GE(last, written);
    context.TryCancel();
    reader->Finish().IgnoreError();
  }

  // Writes are still the leader's: the follower redirects them, naming it.
  {
    auto stub = v1::AdmissionService::NewStub(replicas_[follower]->channel());
    v1::SubmitRequest request;
    *request.mutable_workload() = CrashQueueWorkload("sent-to-follower");
    v1::SubmitResponse response;
    const Answer answer =
        Ask(-1, [&](grpc::ClientContext& c) { return stub->Submit(&c, request, &response); });
    EXPECT_EQ(answer.status.error_code(), grpc::StatusCode::UNAVAILABLE);
    EXPECT_TRUE(absl::StartsWith(answer.status.error_message(), "not the leader"))
        << answer.status.error_message();
    EXPECT_EQ(answer.Trailer("tollgate-leader"), replicas_[leader]->address());
  }
  // A revision the follower cannot reach within the deadline: redirected, never answered older.
  {
    auto stub = v1::AdmissionService::NewStub(replicas_[follower]->channel());
    v1::ListWorkloadsRequest request;
    v1::ListWorkloadsResponse response;
    const absl::Time sent = absl::Now();
    const Answer answer = Ask(
        1000000,
        [&](grpc::ClientContext& c) { return stub->ListWorkloads(&c, request, &response); },
        absl::Seconds(2));
    EXPECT_EQ(answer.status.error_code(), grpc::StatusCode::UNAVAILABLE);
    EXPECT_TRUE(absl::StrContains(answer.status.error_message(), "behind the requested 1000000"))
        << answer.status.error_message();
    EXPECT_EQ(answer.Trailer("tollgate-leader"), replicas_[leader]->address());
    EXPECT_LT(absl::Now() - sent, absl::Seconds(4));
  }
  // A malformed min revision is refused, naming the header and the value.
  {
    auto stub = v1::AdmissionService::NewStub(replicas_[follower]->channel());
    grpc::ClientContext context;
    context.AddMetadata("tollgate-min-revision", "yesterday");
    v1::ListWorkloadsRequest request;
    v1::ListWorkloadsResponse response;
    const grpc::Status status = stub->ListWorkloads(&context, request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_TRUE(absl::StrContains(status.error_message(), "tollgate-min-revision"));
    EXPECT_TRUE(absl::StrContains(status.error_message(), "yesterday"));
  }
}

TEST_F(HaEtcdLossE2eTest, FollowerReadsSayTheyMayBeStaleWithoutQuorumAndWritesFail) {
  ASSERT_OK_AND_ASSIGN(const int leader, AwaitLeader());
  const int follower = 1 - leader;
  client::TollgateClient client(Servers(), absl::Seconds(5));
  for (int i = 0; i < 3; ++i) {
    v1::SubmitRequest request;
    *request.mutable_workload() = CrashQueueWorkload(absl::StrCat("kept-", i));
    ASSERT_OK(client.Submit(request).status());
  }
  auto stub = v1::AdmissionService::NewStub(replicas_[follower]->channel());
  v1::ListWorkloadsRequest list;
  list.set_namespace_("crash");
  v1::ListWorkloadsResponse listed;
  auto list_on_follower = [&] {
    listed.Clear();
    return Ask(-1, [&](grpc::ClientContext& c) { return stub->ListWorkloads(&c, list, &listed); });
  };
  Answer answer;
  ASSERT_TRUE(AwaitCondition(
      [&] {
        answer = list_on_follower();
        return answer.status.ok() && listed.workloads_size() == 3 && !answer.Stale();
      },
      absl::Seconds(20)))
      << answer.status.error_message() << " " << answer.Trailer("tollgate-stale-reason");
  const int64_t before = listed.revision();

  // Two members of three lost: the follower still answers from its copy, marked stale.
  ASSERT_OK(etcd_->Kill(0));
  ASSERT_OK(etcd_->Kill(1));
  const absl::Time lost = absl::Now();
  ASSERT_TRUE(AwaitCondition(
      [&] {
        answer = list_on_follower();
        return answer.status.ok() && answer.Stale();
      },
      absl::Seconds(20)))
      << "no stale marker: " << answer.status.error_message();
  std::cout << "follower reads marked stale " << absl::Now() - lost
            << " after losing quorum: " << answer.Trailer("tollgate-stale-reason") << "\n";
  EXPECT_EQ(listed.workloads_size(), 3);
  EXPECT_GE(listed.revision(), before);
  EXPECT_EQ(answer.Trailer("tollgate-stale-revision"), answer.Trailer("tollgate-revision"));
  EXPECT_FALSE(answer.Trailer("tollgate-stale-reason").empty());
  // The C++ client hands the marker to its caller (the CLI prints it as a warning) and still
  // returns the answer.
  {
    std::string stale_revision;
    std::string stale_reason;
    client::ClientOptions options;
    options.call_timeout = absl::Seconds(5);
    options.on_stale = [&](absl::string_view revision, absl::string_view reason) {
      stale_revision = std::string(revision);
      stale_reason = std::string(reason);
    };
    client::TollgateClient reader(replicas_[follower]->address(), {}, std::move(options));
    absl::StatusOr<v1::ListWorkloadsResponse> got = reader.ListWorkloads(list);
    ASSERT_OK(got.status());
    EXPECT_EQ(got->workloads_size(), 3);
    EXPECT_FALSE(stale_revision.empty());
    EXPECT_FALSE(stale_reason.empty());
  }
  // Writes fail with UNAVAILABLE.
  {
    client::TollgateClient writer(Servers(), absl::Seconds(8));
    v1::SubmitRequest request;
    *request.mutable_workload() = CrashQueueWorkload("no-quorum");
    const absl::Status status = writer.Submit(request).status();
    EXPECT_TRUE(absl::IsUnavailable(status)) << status;
  }

  // The quorum returns: the marker goes away.
  ASSERT_OK(etcd_->Restart(0));
  ASSERT_OK(etcd_->Restart(1));
  ASSERT_OK(etcd_->WaitHealthy(absl::Seconds(30)));
  const absl::Time restored = absl::Now();
  EXPECT_TRUE(AwaitCondition(
      [&] {
        answer = list_on_follower();
        return answer.status.ok() && !answer.Stale();
      },
      absl::Seconds(30)))
      << "still stale: " << answer.Trailer("tollgate-stale-reason") << " "
      << answer.status.error_message();
  std::cout << "stale marker gone " << absl::Now() - restored << " after the quorum returned\n";
}

// /metrics, the dashboard and SIGHUP on the leader of a replicated tollgated.
class HaObservabilityE2eTest : public HaE2eTest {
 protected:
  int EtcdMembers() const override { return 1; }
  int Replicas() const override { return 2; }
  void BeforeReplicas() override { WriteTokens("admin-token,root,0,\"tollgate:admins\"\n"); }
  std::vector<std::string> ExtraArgs(int i) const override {
    return {"--metrics-listen=127.0.0.1:0",
            absl::StrCat("--metrics-port-file=", MetricsPortFile(i)),
            absl::StrCat("--token-file=", scratch_, "/tokens.csv")};
  }
  std::string MetricsPortFile(int i) const { return absl::StrCat(scratch_, "/metrics_port.", i); }
  void WriteTokens(const std::string& text) {
    std::ofstream out(absl::StrCat(scratch_, "/tokens.csv"), std::ios::trunc);
    out << text;
  }
  // GET `path` from replica `i`'s HTTP port with `token`: the HTTP status and the body.
  std::pair<int, std::string> Get(int port, const std::string& path, const std::string& token) {
    httplib::Client http("127.0.0.1", port);
    http.set_connection_timeout(5, 0);
    http.set_read_timeout(10, 0);
    httplib::Result result =
        http.Get(path.c_str(), httplib::Headers{{"Authorization", "Bearer " + token}});
    if (!result) return {0, httplib::to_string(result.error())};
    return {result->status, result->body};
  }
};

TEST_F(HaObservabilityE2eTest, LeaderServesMetricsAndDashboardAndReloadsTokensOnSighup) {
  ASSERT_OK_AND_ASSIGN(const int leader, AwaitLeader());
  int port = 0;
  ASSERT_TRUE(AwaitCondition(
      [&] {
        std::ifstream in(MetricsPortFile(leader));
        return static_cast<bool>(in >> port) && port > 0;
      },
      absl::Seconds(20)))
      << replicas_[leader]->Logs();
  // A follower that never led has no HTTP port yet.
  EXPECT_FALSE(std::filesystem::exists(MetricsPortFile(1 - leader)));

  // A submit through the leader shows in the scraped metrics.
  auto stub = v1::AdmissionService::NewStub(replicas_[leader]->channel());
  grpc::ClientContext context;
  context.AddMetadata("authorization", "Bearer admin-token");
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
  v1::SubmitRequest submit;
  *submit.mutable_workload() = CrashQueueWorkload("scraped");
  v1::SubmitResponse submitted;
  ASSERT_TRUE(stub->Submit(&context, submit, &submitted).ok());
  std::string body;
  EXPECT_TRUE(AwaitCondition(
      [&] {
        auto [code, text] = Get(port, "/metrics", "admin-token");
        body = text;
        return code == 200 && absl::StrContains(text, "tollgate_grpc_server_handled_total") &&
               absl::StrContains(text, "Submit");
      },
      absl::Seconds(10)))
      << body;
  EXPECT_TRUE(absl::StrContains(body, "tollgate_store_revision")) << body;
  EXPECT_TRUE(absl::StrContains(body, "kueue_build_info")) << body;
  EXPECT_FALSE(absl::StrContains(body, "tollgate_rocksdb_")) << "RocksDB metrics on etcd";
  auto [api_code, workloads] = Get(port, "/api/v1/workloads", "admin-token");
  EXPECT_EQ(api_code, 200);
  EXPECT_TRUE(absl::StrContains(workloads, "scraped")) << workloads;
  EXPECT_EQ(Get(port, "/metrics", "new-token").first, 401);

  // SIGHUP re-reads the token file into the leader's gate.
  WriteTokens("admin-token,root,0,\"tollgate:admins\"\nnew-token,newcomer,1,\"tollgate:admins\"\n");
  ASSERT_OK(replicas_[leader]->Signal(SIGHUP));
  EXPECT_TRUE(AwaitCondition([&] { return Get(port, "/metrics", "new-token").first == 200; },
                             absl::Seconds(10)))
      << replicas_[leader]->Logs();
  // The log line follows the gate's update: wait for it rather than read it once.
  EXPECT_TRUE(AwaitCondition(
      [&] { return absl::StrContains(replicas_[leader]->Logs(), "reloaded tokens"); },
      absl::Seconds(10)))
      << replicas_[leader]->Logs();
}

// etcd with authentication on: replicas log in with --etcd-user/--etcd-password-file; a wrong
// password stops the start with a message naming the user.
class HaEtcdAuthE2eTest : public HaE2eTest {
 protected:
  int EtcdMembers() const override { return 1; }
  int Replicas() const override { return 1; }
  void BeforeReplicas() override {
    ASSERT_OK(etcd_->EnableAuth("root-secret", "tollgate", "right-password", "/tollgate/"));
    std::ofstream(PasswordFile()) << "right-password\n";
  }
  std::vector<std::string> ExtraArgs(int /*i*/) const override {
    return {"--etcd-user=tollgate", absl::StrCat("--etcd-password-file=", PasswordFile())};
  }
  std::string PasswordFile() const { return absl::StrCat(scratch_, "/etcd-password"); }
};

TEST_F(HaEtcdAuthE2eTest, ReplicaLogsInAndAWrongPasswordIsRefusedNamingTheUser) {
  ASSERT_OK_AND_ASSIGN(const int leader, AwaitLeader());
  client::TollgateClient client(replicas_[leader]->address(), absl::Seconds(5));
  v1::SubmitRequest submit;
  *submit.mutable_workload() = CrashQueueWorkload("behind-auth");
  ASSERT_OK(client.Submit(submit).status());

  const std::string wrong = absl::StrCat(scratch_, "/wrong-password");
  std::ofstream(wrong) << "not-it\n";
  const std::string log = absl::StrCat(scratch_, "/wrong.log");
  ASSERT_OK_AND_ASSIGN(
      const int code,
      TollgatedProcess::RunToExit(
          {"--store=etcd", absl::StrCat("--etcd-endpoints=", etcd_->ClientEndpoints()),
           "--listen=127.0.0.1:0", "--etcd-user=tollgate",
           absl::StrCat("--etcd-password-file=", wrong)},
          log));
  std::ifstream in(log);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(code, 1) << text;
  EXPECT_TRUE(absl::StrContains(text, R"(etcd refused authentication as user \"tollgate\")"))
      << text;
}

}  // namespace
}  // namespace tollgate::e2e
