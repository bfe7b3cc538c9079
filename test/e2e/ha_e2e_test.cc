// Replicated tollgated end to end: a real 3-member etcd cluster on loopback and three real
// `tollgated --store=etcd` replicas. The leader is killed (kill -9) during concurrent submits by
// clients that retry on the other replicas, and paused (SIGSTOP) past its lease and resumed.
#include <signal.h>
#include <stdlib.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
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
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "cmd/tollgate/cli_client.h"
#include "etcd/etcdserver/etcdserverpb/rpc.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
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
    options.members = 3;
    ASSERT_OK_AND_ASSIGN(etcd_, EtcdCluster::Start(options));
    for (int i = 0; i < kReplicas; ++i) {
      ASSERT_OK_AND_ASSIGN(std::unique_ptr<TollgatedProcess> replica, StartReplica());
      replicas_.push_back(std::move(replica));
    }
  }

  void TearDown() override {
    replicas_.clear();
    etcd_.reset();
    std::error_code ignored;
    if (!scratch_.empty()) std::filesystem::remove_all(scratch_, ignored);
  }

  absl::StatusOr<std::unique_ptr<TollgatedProcess>> StartReplica() {
    return TollgatedProcess::Start(
        "", scratch_,
        {"--store=etcd", absl::StrCat("--etcd-endpoints=", etcd_->ClientEndpoints()), kLeaseTtl,
         "--manifests=" + QueuesManifest(), "--shutdown-grace=1s"});
  }

  std::string Servers(const std::set<int>& except = {}) const {
    std::vector<std::string> addresses;
    for (int i = 0; i < static_cast<int>(replicas_.size()); ++i) {
      if (except.count(i) == 0) addresses.push_back(replicas_[i]->address());
    }
    return absl::StrJoin(addresses, ",");
  }

  // Whether replica `i` serves the API as leader: a follower answers "not the leader".
  bool Leads(int i) {
    auto stub = v1::AdmissionService::NewStub(replicas_[i]->channel());
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(1)));
    v1::ListWorkloadsRequest request;
    request.set_limit(1);
    v1::ListWorkloadsResponse response;
    return stub->ListWorkloads(&context, request, &response).ok();
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
  absl::StatusOr<std::vector<v1::Workload>> ListAll(cli::CliClient& client) {
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

  cli::CliClient client_;
  cli::WatchCanceller canceller_;
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
      cli::CliClient client(servers, absl::Seconds(5));
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

  // The new leader admits up to the quota and no further.
  cli::CliClient reader(Servers({leader}), absl::Seconds(5));
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
  cli::CliClient client(replicas_[new_leader]->address(), absl::Seconds(5));
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

  // It steps down: its log says so and it answers as a follower naming the new leader. Serving
  // as a follower again waits for its store's etcd calls (dead connections after the pause) to
  // time out, 10-25 s here (docs/ha.md), hence the longer deadline.
  {
    const absl::Time deadline = absl::Now() + absl::Seconds(60);
    while (!absl::StrContains(replicas_[old_leader]->Logs(), "stepping down") &&
           absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(20));  // polling a condition, bounded by `deadline`
    }
    EXPECT_TRUE(absl::StrContains(replicas_[old_leader]->Logs(), "stepping down"))
        << replicas_[old_leader]->Logs();
    std::cout << "stepped down " << absl::Now() - resumed << " after SIGCONT\n";
    bool follower = false;
    while (!follower && absl::Now() < deadline) {
      grpc::ClientContext get_context;
      get_context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(1)));
      v1::ListWorkloadsRequest request;
      v1::ListWorkloadsResponse response;
      const grpc::Status status = old_stub->ListWorkloads(&get_context, request, &response);
      follower =
          status.error_code() == grpc::StatusCode::UNAVAILABLE &&
          absl::StrContains(status.error_message(),
                            absl::StrCat("the leader is at ", replicas_[new_leader]->address()));
      if (!follower) absl::SleepFor(absl::Milliseconds(20));  // bounded by `deadline`
    }
    EXPECT_TRUE(follower) << "the old leader does not redirect to the new one";
    std::cout << "redirecting " << absl::Now() - resumed << " after SIGCONT\n";
  }

  // Nothing of the stale submit reached etcd: the new leader does not know it.
  v1::GetWorkloadRequest get;
  get.mutable_workload()->set_namespace_("crash");
  get.mutable_workload()->set_name("sent-to-the-old-leader");
  EXPECT_TRUE(absl::IsNotFound(client.GetWorkload(get).status()));
  EXPECT_TRUE(Leads(new_leader));
  EXPECT_FALSE(Leads(old_leader));
}

}  // namespace
}  // namespace tollgate::e2e
