// MultiKueue end to end (docs/multicluster.md): a manager tollgated whose ClusterQueue carries a
// MultiKueue check, two worker tollgateds, and tollgate-multikueue between them, all real
// binaries on loopback. A workload submitted on the manager runs on the worker with room, the
// other copy goes, the check is Ready with status.clusterName; a finish on the worker finishes
// the manager's workload; a kill -9 of the winner leads to Retry after --worker-lost-timeout and
// a dispatch to the other worker. Throughout, a watcher checks on every event it sees that
// clusterName never moves from one worker to another and that no two workers hold an admitted
// copy marked the winner of the same workload at once.

#include <curl/curl.h>
#include <signal.h>
#include <stdlib.h>

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
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/cleanup/cleanup.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "adapters/multikueue/worker_link.h"
#include "clients/cpp/tollgate_client.h"
#include "core/real_clock.h"
#include "gtest/gtest.h"
#include "services/kubeapi/kube_client.h"
#include "services/manifest/kube_config.h"
#include "services/manifest/kube_resource.h"
#include "test/adapters/kube/test_processes.h"
#include "test/adapters/multikueue/multikueue_queues.h"
#include "test/e2e/child_process.h"
#include "test/e2e/cli_runner.h"
#include "test/e2e/tollgated_process.h"
#include "test/status_matchers.h"
#include "test/support/local_files_and_ports.h"
#include "test/support/scratch_dir.h"

namespace tollgate::e2e {
namespace {

constexpr absl::Duration kWait = absl::Seconds(20);
constexpr char kOriginLabel[] = "kueue.x-k8s.io/multikueue-origin";
// For a restart that must find a workload's winner still there: a restarted controller counts
// each worker lost from its own start until it connects (Kueue's connectionState), so with the
// 2 s the other tests use, a start slower than that under load (ctest -j) retries the running
// workload ("Admitting remote lost") before the worker is ever seen.
std::vector<std::string> RestartKeepingWorkersFlags() {
  return {"--worker-lost-timeout=5m", "--gc-interval=1s", "--config-sync-period=1s"};
}

using multikueue_test::kWorkerQueues;
using multikueue_test::ManagerQueues;

const v1::AdmissionCheckState* CheckOf(const v1::Workload& wl, const std::string& name) {
  for (const v1::AdmissionCheckState& c : wl.status().admission_checks()) {
    if (c.name() == name) return &c;
  }
  return nullptr;
}

// The manager's record of the workers' copies (status.multi_kueue_remotes): "w1=Pending,w2=...".
std::string RemotesOf(const v1::Workload& wl) {
  std::vector<std::string> parts;
  for (const v1::MultiKueueRemoteState& r : wl.status().multi_kueue_remotes()) {
    parts.push_back(absl::StrCat(r.cluster(), "=", r.state()));
  }
  return absl::StrJoin(parts, ",");
}

const v1::Condition* TrueCondition(const v1::Workload& wl, const std::string& type) {
  for (const v1::Condition& c : wl.status().conditions()) {
    if (c.type() == type && c.status() == "True") return &c;
  }
  return nullptr;
}

v1::WorkloadRef Ref(const std::string& name) {
  v1::WorkloadRef ref;
  ref.set_namespace_("team");
  ref.set_name(name);
  return ref;
}

// Follows one tollgated's workloads on a thread and feeds each event to the shared invariant
// checks.
class EventWatcher {
 public:
  EventWatcher(const std::string& address, std::function<void(const v1::WatchEvent&)> on_event,
               std::function<void()> on_end)
      : client_(address, absl::Seconds(5)) {
    thread_ = std::thread([this, on_event = std::move(on_event), on_end = std::move(on_end)] {
      v1::WatchRequest request;
      (void)client_.Watch(
          request,
          [&](const v1::WatchEvent& event) {
            if (event.has_workload()) on_event(event);
            return true;
          },
          &canceller_);
      on_end();
    });
  }
  ~EventWatcher() {
    canceller_.Cancel();
    thread_.join();
  }

 private:
  client::TollgateClient client_;
  client::WatchCanceller canceller_;
  std::thread thread_;
};

// Exactly-once, as the watchers see it. Two copies may hold quota at once for a moment (a loser
// is admitted on its worker before the controller removes it); what runs is a copy that is
// admitted and marked the winner, and only the recorded winner's copy is ever marked
// (docs/multicluster.md, "Exactly once").
class Invariants {
 public:
  void OnManager(const v1::WatchEvent& event) {
    absl::MutexLock lock(&mu_);
    const std::string key = event.workload().metadata().name();
    const std::string now = event.workload().status().cluster_name();
    std::string& last = cluster_name_[key];
    // Set once per reservation: it may be cleared by an eviction, never moved.
    if (!last.empty() && !now.empty() && last != now) {
      violations_.push_back(absl::StrCat(key, ": clusterName moved from ", last, " to ", now,
                                         " at revision ", event.revision()));
    }
    last = now;
  }
  void OnWorker(const std::string& worker, const v1::WatchEvent& event) {
    absl::MutexLock lock(&mu_);
    const std::string key = event.workload().metadata().name();
    if (event.workload().metadata().labels().count(kOriginLabel) == 0) return;
    const bool running = event.type() != v1::WatchEvent::DELETED &&
                         event.workload().status().state() == v1::WORKLOAD_STATE_ADMITTED &&
                         event.workload().status().multi_kueue_winner();
    std::set<std::string>& holders = running_[key];
    if (running) {
      holders.insert(worker);
    } else {
      holders.erase(worker);
    }
    if (holders.size() > 1) {
      violations_.push_back(absl::StrCat(key, ": admitted and marked the winner on ",
                                         holders.size(), " workers at once (", worker,
                                         " at revision ", event.revision(), ")"));
    }
  }
  // A worker killed runs nothing any more.
  void OnWorkerGone(const std::string& worker) {
    absl::MutexLock lock(&mu_);
    for (auto& [key, holders] : running_) holders.erase(worker);
  }
  std::vector<std::string> violations() const {
    absl::MutexLock lock(&mu_);
    return violations_;
  }

 private:
  mutable absl::Mutex mu_;
  std::map<std::string, std::string> cluster_name_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::set<std::string>> running_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> violations_ ABSL_GUARDED_BY(mu_);
};

class MultiKueueE2eTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    setenv("GRPC_CLIENT_CHANNEL_BACKUP_POLL_INTERVAL_MS", "50", /*overwrite=*/0);
  }

  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(scratch_, test_support::MakeScratchDir("tollgate_multikueue_e2e"));
    ASSERT_OK_AND_ASSIGN(manager_,
                         TollgatedProcess::Start(scratch_ + "/manager", scratch_, ManagerFlags()));
    // Frequent bookmarks, so a silent worker is told from an idle one within a second. The
    // workers listen below the ephemeral port range: tests kill one and start it again at the
    // same address, which an outgoing connection could otherwise take meanwhile.
    for (auto [worker, dir] : {std::pair{&w1_, "/w1"}, std::pair{&w2_, "/w2"}}) {
      ASSERT_OK_AND_ASSIGN(const int port, test_support::PickRestartablePort());
      ASSERT_OK_AND_ASSIGN(*worker,
                           TollgatedProcess::Start(scratch_ + dir, scratch_,
                                                   {"--watch-bookmark-interval=200ms",
                                                    absl::StrCat("--listen=127.0.0.1:", port)}));
    }
    ASSERT_NO_FATAL_FAILURE(Apply(*w1_, kWorkerQueues));
    ASSERT_NO_FATAL_FAILURE(Apply(*w2_, kWorkerQueues));
    ASSERT_NO_FATAL_FAILURE(Apply(*manager_, ManagerQueues(w1_->address(), w2_->address())));
    manager_client_ = std::make_unique<client::TollgateClient>(manager_->address(), kWait);
    w1_client_ = std::make_unique<client::TollgateClient>(w1_->address(), kWait);
    w2_client_ = std::make_unique<client::TollgateClient>(w2_->address(), kWait);

    watchers_.push_back(std::make_unique<EventWatcher>(
        manager_->address(), [this](const v1::WatchEvent& e) { invariants_.OnManager(e); }, [] {}));
    WatchWorker("w1", w1_->address());
    WatchWorker("w2", w2_->address());

    // w1 is full: a local workload of its own (no origin label) takes its 4 cpu.
    ASSERT_NO_FATAL_FAILURE(Submit(*w1_client_, "blocker", 4));
    ASSERT_TRUE(WaitFor(*w1_client_, "blocker", [](const v1::Workload& wl) {
      return wl.status().state() == v1::WORKLOAD_STATE_ADMITTED;
    }));

    ASSERT_OK_AND_ASSIGN(
        controller_,
        ChildProcess::Start(
            {TOLLGATE_MULTIKUEUE_PATH, absl::StrCat("--manager=", manager_->address()),
             "--worker-lost-timeout=2s", "--gc-interval=1s", "--config-sync-period=1s"},
            scratch_ + "/controller.log"));
  }

  // Extra flags of the manager tollgated.
  virtual std::vector<std::string> ManagerFlags() const { return {}; }

  void TearDown() override {
    const std::vector<std::string> violations = invariants_.violations();
    EXPECT_TRUE(violations.empty()) << absl::StrJoin(violations, "\n");
    if (HasFailure()) {
      if (controller_ != nullptr) std::cerr << "controller log:\n" << controller_->Logs();
      if (manager_ != nullptr) std::cerr << "manager log:\n" << manager_->Logs();
    }
    controller_.reset();
    watchers_.clear();
    w1_.reset();
    w2_.reset();
    manager_.reset();
    test_support::RemoveScratchDir(scratch_);
  }

  void Apply(const TollgatedProcess& server, const std::string& yaml) {
    const std::string file = absl::StrCat(scratch_, "/apply-", ++applies_, ".yaml");
    std::ofstream(file) << yaml;
    std::string out;
    ASSERT_EQ(RunCli(absl::StrCat("--server=", server.address(), " apply -f ", file), out), 0)
        << out;
  }

  // A one-pod workload asking for `cpu` in LocalQueue team/q.
  static v1::Workload TeamWorkload(const std::string& name, int cpu) {
    v1::Workload wl;
    wl.mutable_metadata()->set_namespace_("team");
    wl.mutable_metadata()->set_name(name);
    wl.mutable_spec()->set_queue_name("q");
    v1::PodSet* ps = wl.mutable_spec()->add_pod_sets();
    ps->set_name("main");
    ps->set_count(1);
    (*ps->mutable_requests())["cpu"] = absl::StrCat(cpu);
    return wl;
  }

  static void Submit(client::TollgateClient& client, const std::string& name, int cpu) {
    v1::SubmitRequest request;
    *request.mutable_workload() = TeamWorkload(name, cpu);
    ASSERT_OK(client.Submit(request).status());
  }

  // Waits until the manager's workload `name` is admitted with its MultiKueue check Ready on
  // `cluster` (ReadyOn); the failure shows the workload as last read.
  ::testing::AssertionResult AwaitReadyOn(const std::string& name, const std::string& cluster);

  // Waits, with a deadline, until the workload satisfies `done` (NOT_FOUND counts as absent:
  // `done` is not called and `absent` decides).
  static bool WaitFor(client::TollgateClient& client, const std::string& name,
                      const std::function<bool(const v1::Workload&)>& done,
                      bool absent_is_done = false) {
    const absl::Time deadline = absl::Now() + kWait;
    v1::GetWorkloadRequest request;
    *request.mutable_workload() = Ref(name);
    // Watch from the current revision so the wait wakes on changes instead of polling.
    while (absl::Now() < deadline) {
      absl::StatusOr<v1::Workload> wl = client.GetWorkload(request);
      if (wl.ok() ? done(*wl) : (absl::IsNotFound(wl.status()) && absent_is_done)) return true;
      int64_t since = 0;
      v1::ListWorkloadsRequest list;
      list.set_namespace_("team");
      list.set_limit(1);
      if (absl::StatusOr<v1::ListWorkloadsResponse> l = client.ListWorkloads(list); l.ok()) {
        since = l->revision();
      }
      client::WatchCanceller canceller;
      std::thread timer;
      v1::WatchRequest watch;
      watch.set_since_revision(since);
      watch.set_namespace_("team");
      bool changed = false;
      absl::Mutex mu;
      bool stop = false;
      timer = std::thread([&] {
        absl::MutexLock lock(&mu);
        // Bounded: a change on another server (the controller's doing) is seen by the next
        // Get after at most this.
        mu.AwaitWithTimeout(absl::Condition(&stop), absl::Milliseconds(500));
        canceller.Cancel();
      });
      (void)client.Watch(
          watch,
          [&](const v1::WatchEvent& event) {
            if (event.type() == v1::WatchEvent::BOOKMARK) return true;
            changed = event.workload().metadata().name() == name;
            return !changed;
          },
          &canceller);
      {
        absl::MutexLock lock(&mu);
        stop = true;
      }
      timer.join();
    }
    return false;
  }

  // Waits, with a deadline, until the manager shows the MultiKueueCluster's Active condition
  // with this status (a config object: polled, as nothing streams its changes).
  bool WaitForClusterActive(const std::string& cluster, bool active) {
    return WaitForClusterCondition(
        cluster, [active](const v1::Condition& c) { return (c.status() == "True") == active; });
  }

  // The same, until the Active condition satisfies `done`.
  bool WaitForClusterCondition(const std::string& cluster,
                               const std::function<bool(const v1::Condition&)>& done) {
    v1::GetObjectRequest request;
    request.mutable_ref()->set_kind(v1::MULTI_KUEUE_CLUSTER);
    request.mutable_ref()->set_name(cluster);
    for (const absl::Time deadline = absl::Now() + kWait; absl::Now() < deadline;
         absl::SleepFor(absl::Milliseconds(50))) {
      absl::StatusOr<v1::ConfigObject> object = manager_client_->GetObject(request);
      if (!object.ok()) continue;
      for (const v1::Condition& c : object->multi_kueue_cluster().status().conditions()) {
        if (c.type() == "Active" && done(c)) return true;
      }
    }
    return false;
  }

  v1::Workload Get(client::TollgateClient& client, const std::string& name) {
    v1::GetWorkloadRequest request;
    *request.mutable_workload() = Ref(name);
    absl::StatusOr<v1::Workload> wl = client.GetWorkload(request);
    EXPECT_OK(wl.status());
    return wl.ok() ? *wl : v1::Workload();
  }

  // Replaces the controller (kill -9 of the running one) with one started with these flags.
  void RestartController(const std::vector<std::string>& flags, const std::string& log_name) {
    controller_.reset();
    std::vector<std::string> args = {TOLLGATE_MULTIKUEUE_PATH,
                                     absl::StrCat("--manager=", manager_->address())};
    args.insert(args.end(), flags.begin(), flags.end());
    ASSERT_OK_AND_ASSIGN(controller_,
                         ChildProcess::Start(args, absl::StrCat(scratch_, "/", log_name, ".log")));
  }

  // Follows a worker's workloads with the invariant checks (again, after a restart).
  void WatchWorker(const std::string& name, const std::string& address) {
    watchers_.push_back(std::make_unique<EventWatcher>(
        address, [this, name](const v1::WatchEvent& e) { invariants_.OnWorker(name, e); },
        [this, name] { invariants_.OnWorkerGone(name); }));
  }

  static bool Absent(client::TollgateClient& client, const std::string& name) {
    return WaitFor(
        client, name, [](const v1::Workload&) { return false; }, /*absent_is_done=*/true);
  }

  static void FinishBlocker(client::TollgateClient& worker) {
    v1::FinishRequest finish;
    *finish.mutable_workload() = Ref("blocker");
    ASSERT_OK(worker.Finish(finish).status());
  }

  std::string scratch_;
  int applies_ = 0;
  std::unique_ptr<TollgatedProcess> manager_, w1_, w2_;
  std::unique_ptr<client::TollgateClient> manager_client_, w1_client_, w2_client_;
  std::unique_ptr<ChildProcess> controller_;
  Invariants invariants_;
  std::vector<std::unique_ptr<EventWatcher>> watchers_;
};

bool ReadyOn(const v1::Workload& wl, const std::string& cluster) {
  const v1::AdmissionCheckState* mk = CheckOf(wl, "mk");
  return mk != nullptr && mk->state() == "Ready" && wl.status().cluster_name() == cluster &&
         wl.status().state() == v1::WORKLOAD_STATE_ADMITTED;
}

::testing::AssertionResult MultiKueueE2eTest::AwaitReadyOn(const std::string& name,
                                                           const std::string& cluster) {
  if (WaitFor(*manager_client_, name,
              [&](const v1::Workload& wl) { return ReadyOn(wl, cluster); })) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << Get(*manager_client_, name).DebugString();
}

// Whether one of the workload's events carries `text`.
bool HasEvent(const v1::Workload& wl, const std::string& text) {
  for (const v1::WorkloadEvent& e : wl.status().events()) {
    if (absl::StrContains(e.message(), text)) return true;
  }
  return false;
}

// The events that would say the manager gave up on a winner.
bool WasRetried(const v1::Workload& wl) {
  return HasEvent(wl, "Admitting remote lost") || HasEvent(wl, "Admitting remote no longer") ||
         HasEvent(wl, "evicted on worker cluster");
}

// Whether every thread of `pid` is stopped (state T in /proc/PID/task/*/stat).
bool AllThreadsStopped(pid_t pid) {
  std::error_code error;
  std::filesystem::directory_iterator tasks(absl::StrCat("/proc/", pid, "/task"), error);
  if (error) return false;
  for (const std::filesystem::directory_entry& task : tasks) {
    std::ifstream in(task.path() / "stat");
    const std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    // "PID (COMM) STATE ...": the state follows the last ')', as COMM may hold one.
    const size_t paren = stat.rfind(')');
    if (paren == std::string::npos || paren + 2 >= stat.size() || stat[paren + 2] != 'T') {
      return false;
    }
  }
  return true;
}

// SIGSTOP, then waits (with a deadline) until every thread of the process has stopped: a call
// made after this cannot be answered before SIGCONT. The caller sends SIGCONT on every path out
// of its test (an absl::Cleanup), so a failure never leaves the process stopped.
absl::Status Freeze(TollgatedProcess& process) {
  if (absl::Status sent = process.Signal(SIGSTOP); !sent.ok()) return sent;
  for (const absl::Time deadline = absl::Now() + kWait; absl::Now() < deadline;
       absl::SleepFor(absl::Milliseconds(5))) {
    if (AllThreadsStopped(process.pid())) return absl::OkStatus();
  }
  return absl::DeadlineExceededError("the process did not stop after SIGSTOP");
}

// The lines of a JSON log that carry every one of `parts`.
int CountLogLines(const std::string& log, const std::vector<std::string>& parts) {
  int count = 0;
  for (absl::string_view line : absl::StrSplit(log, '\n')) {
    count += absl::c_all_of(parts, [&](const std::string& p) { return absl::StrContains(line, p); })
                 ? 1
                 : 0;
  }
  return count;
}

TEST_F(MultiKueueE2eTest, RunsOnTheWorkerWithRoomAndFinishesThroughIt) {
  // The controller reports the clusters and the check active, so the ClusterQueue admits.
  ASSERT_NO_FATAL_FAILURE(Submit(*manager_client_, "train", 2));
  ASSERT_TRUE(AwaitReadyOn("train", "w2"));
  const v1::Workload won = Get(*manager_client_, "train");
  EXPECT_EQ(CheckOf(won, "mk")->message(), "The workload was admitted on \"w2\"");
  EXPECT_TRUE(won.status().nominated_cluster_names().empty());

  // The copy on w2 runs; the one on w1 (pending, no room) is gone.
  const v1::Workload copy = Get(*w2_client_, "train");
  EXPECT_EQ(copy.status().state(), v1::WORKLOAD_STATE_ADMITTED);
  EXPECT_EQ(copy.metadata().labels().at(kOriginLabel), "multikueue");
  EXPECT_EQ(copy.spec().queue_name(), "q");
  ASSERT_TRUE(WaitFor(
      *w1_client_, "train", [](const v1::Workload&) { return false; },
      /*absent_is_done=*/true));
  // The manager records what it sees of the copies, and describe shows it: w1's is gone.
  ASSERT_TRUE(WaitFor(*manager_client_, "train", [](const v1::Workload& wl) {
    return RemotesOf(wl) == "w2=Admitted";
  })) << RemotesOf(Get(*manager_client_, "train"));
  std::string described;
  ASSERT_EQ(
      RunCli(absl::StrCat("--server=", manager_->address(), " describe workload train -n team"),
             described),
      0)
      << described;
  EXPECT_TRUE(absl::StrContains(described, "MultiKueue Workers:")) << described;
  EXPECT_TRUE(absl::StrContains(described, "Cluster Name:  w2")) << described;
  bool winner_row = false;
  for (absl::string_view line : absl::StrSplit(described, '\n')) {
    const std::vector<absl::string_view> cells = absl::StrSplit(line, ' ', absl::SkipEmpty());
    winner_row = winner_row || (cells.size() == 3 && cells[0] == "w2" && cells[1] == "winner" &&
                                cells[2] == "Admitted");
  }
  EXPECT_TRUE(winner_row) << described;

  // The clusters' Active conditions as the controller reported them.
  v1::GetObjectRequest get;
  get.mutable_ref()->set_kind(v1::MULTI_KUEUE_CLUSTER);
  get.mutable_ref()->set_name("w2");
  ASSERT_OK_AND_ASSIGN(v1::ConfigObject w2_object, manager_client_->GetObject(get));
  ASSERT_EQ(w2_object.multi_kueue_cluster().status().conditions_size(), 1);
  EXPECT_EQ(w2_object.multi_kueue_cluster().status().conditions(0).status(), "True");

  // The job ends on the worker: the manager's workload finishes and the copy goes.
  v1::FinishRequest finish;
  *finish.mutable_workload() = Ref("train");
  finish.set_message("Job finished successfully");
  ASSERT_OK(w2_client_->Finish(finish).status());
  ASSERT_TRUE(WaitFor(*manager_client_, "train", [](const v1::Workload& wl) {
    return wl.status().state() == v1::WORKLOAD_STATE_FINISHED;
  }));
  bool message_carried = false;
  const v1::Workload finished = Get(*manager_client_, "train");
  for (const v1::Condition& c : finished.status().conditions()) {
    if (c.type() == "Finished") message_carried = c.message() == "Job finished successfully";
  }
  EXPECT_TRUE(message_carried);
  EXPECT_EQ(Get(*manager_client_, "train").status().cluster_name(), "w2");
  // Recorded before the finish: the last the manager saw of its copy.
  EXPECT_EQ(RemotesOf(finished), "w2=Finished");
  ASSERT_TRUE(WaitFor(
      *w2_client_, "train", [](const v1::Workload&) { return false; },
      /*absent_is_done=*/true));
}

// Kueue's kubeConfig reference with locationType Path: a kubeconfig under --kubeconfig-dir whose
// server is the worker tollgated (plaintext, on loopback here) connects as spec.endpoint does,
// and the workload runs there; a file outside the directory leaves its cluster inactive with
// BadKubeConfig.
TEST_F(MultiKueueE2eTest, AWorkerNamedByAKubeConfigPathIsConnected) {
  const std::string dir = scratch_ + "/kubeconfigs";
  std::filesystem::create_directories(dir);
  auto kubeconfig = [](const std::string& address) {
    return absl::StrCat("apiVersion: v1\nkind: Config\ncurrent-context: w\n",
                        "contexts: [{name: w, context: {cluster: w, user: m}}]\n",
                        "clusters: [{name: w, cluster: {server: \"http://", address, "\"}}]\n",
                        "users: [{name: m, user: {}}]\n");
  };
  auto cluster = [](const std::string& name, const std::string& path) {
    return absl::StrCat("apiVersion: kueue.x-k8s.io/v1beta2\nkind: MultiKueueCluster\n",
                        "metadata: {name: ", name, "}\n",
                        "spec: {clusterSource: {kubeConfig: {location: \"", path,
                        "\", locationType: Path}}}\n");
  };
  std::ofstream(dir + "/w2.yaml") << kubeconfig(w2_->address());
  std::ofstream(scratch_ + "/w1.yaml") << kubeconfig(w1_->address());
  ASSERT_NO_FATAL_FAILURE(RestartController({"--worker-lost-timeout=2s", "--gc-interval=1s",
                                             "--config-sync-period=1s", "--kubeconfig-dir=" + dir},
                                            "controller-kubeconfig"));
  ASSERT_NO_FATAL_FAILURE(Apply(
      *manager_, cluster("w2", dir + "/w2.yaml") + "---\n" + cluster("w1", scratch_ + "/w1.yaml")));

  ASSERT_TRUE(WaitForClusterCondition("w1", [](const v1::Condition& c) {
    return c.status() == "False" && c.reason() == "BadKubeConfig" &&
           absl::StrContains(c.message(), "is not under");
  }));

  ASSERT_TRUE(WaitForClusterActive("w2", true));
  ASSERT_NO_FATAL_FAILURE(Submit(*manager_client_, "train", 2));
  ASSERT_TRUE(AwaitReadyOn("train", "w2"));
  EXPECT_EQ(Get(*w2_client_, "train").status().state(), v1::WORKLOAD_STATE_ADMITTED);
}

// Kueue's default, a kubeConfig Secret: tollgate-multikueue reads it as Kubernetes mounts it
// into its pod (--kubeconfig-secrets-dir, the Secret's key kubeconfig at DIR/<secret>/kubeconfig
// behind the kubelet's ..data symlink), so the workload runs on the worker it names; a Secret
// that is not mounted leaves its cluster inactive with BadKubeConfig saying where it looked.
TEST_F(MultiKueueE2eTest, AWorkerNamedByAMountedKubeConfigSecretIsConnected) {
  const std::string secrets = scratch_ + "/secrets";
  const std::string keys = secrets + "/w2-kubeconfig/..2026_11_30_00_00_00.1";
  std::filesystem::create_directories(keys);
  std::ofstream(keys + "/kubeconfig")
      << absl::StrCat("apiVersion: v1\nkind: Config\ncurrent-context: w\n",
                      "contexts: [{name: w, context: {cluster: w, user: m}}]\n",
                      "clusters: [{name: w, cluster: {server: \"http://", w2_->address(), "\"}}]\n",
                      "users: [{name: m, user: {}}]\n");
  std::filesystem::create_symlink("..2026_11_30_00_00_00.1", secrets + "/w2-kubeconfig/..data");
  std::filesystem::create_symlink("..data/kubeconfig", secrets + "/w2-kubeconfig/kubeconfig");
  auto cluster = [](const std::string& name, const std::string& secret) {
    // v1beta1's spec.kubeConfig, locationType left to its default (Secret).
    return absl::StrCat("apiVersion: kueue.x-k8s.io/v1beta1\nkind: MultiKueueCluster\n",
                        "metadata: {name: ", name, "}\n", "spec: {kubeConfig: {location: ", secret,
                        "}}\n");
  };
  ASSERT_NO_FATAL_FAILURE(
      RestartController({"--worker-lost-timeout=2s", "--gc-interval=1s", "--config-sync-period=1s",
                         "--kubeconfig-secrets-dir=" + secrets},
                        "controller-secret"));
  ASSERT_NO_FATAL_FAILURE(
      Apply(*manager_, cluster("w2", "w2-kubeconfig") + "---\n" + cluster("w1", "w1-kubeconfig")));

  ASSERT_TRUE(WaitForClusterCondition("w1", [&](const v1::Condition& c) {
    return c.status() == "False" && c.reason() == "BadKubeConfig" &&
           absl::StrContains(c.message(),
                             "kubeConfig Secret \"w1-kubeconfig\": no key "
                             "kubeconfig mounted at " +
                                 secrets + "/w1-kubeconfig/kubeconfig");
  }));
  ASSERT_TRUE(WaitForClusterActive("w2", true));
  ASSERT_NO_FATAL_FAILURE(Submit(*manager_client_, "train", 2));
  ASSERT_TRUE(AwaitReadyOn("train", "w2"));
  EXPECT_EQ(Get(*w2_client_, "train").status().state(), v1::WORKLOAD_STATE_ADMITTED);
}

// Kueue's way: the Secret read through the Kubernetes API, from the controller's namespace
// (--secrets-namespace; here a fake API server stands for the manager's cluster), and watched
// there. A cluster whose Secret does not exist stays inactive with BadKubeConfig naming the
// Secret and the namespace; the other runs the workload. The configuration sync period is an
// hour, so only the watch can pick up what follows: the Secret created (the cluster Active), the
// other Secret changed (its cluster refused as insecure), a Secret deleted (its cluster inactive
// again), and, after the API server ended every watch, the Secret created again.
TEST_F(MultiKueueE2eTest, AWorkerNamedByAKubeConfigSecretInTheApiIsConnected) {
  curl_global_init(CURL_GLOBAL_DEFAULT);
  constexpr char kToken[] = "secret-reader-token";
  ASSERT_OK_AND_ASSIGN(kube::testing::FakeApiServer apiserver,
                       kube::testing::StartFakeApiServer(
                           scratch_, {"--token", kToken, "--namespaces", "kueue-system"}));
  const std::string cluster_kubeconfig = scratch_ + "/cluster-kubeconfig";
  std::ofstream(cluster_kubeconfig)
      << absl::StrCat("apiVersion: v1\nkind: Config\ncurrent-context: fake\n",
                      "contexts: [{name: fake, context: {cluster: fake, user: controller}}]\n",
                      "clusters: [{name: fake, cluster: {server: \"", apiserver.url(), "\"}}]\n",
                      "users: [{name: controller, user: {token: ", kToken, "}}]\n");
  manifest::KubeConfig config;
  config.server = apiserver.url();
  config.token = kToken;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<kubeapi::CurlKubeClient> kube,
                       kubeapi::CurlKubeClient::Create(config, {}));
  auto create_secret = [&](const std::string& name, const TollgatedProcess& worker) {
    const std::string kubeconfig =
        absl::StrCat("apiVersion: v1\nkind: Config\ncurrent-context: w\n",
                     "contexts: [{name: w, context: {cluster: w, user: m}}]\n",
                     "clusters: [{name: w, cluster: {server: \"http://", worker.address(),
                     "\"}}]\n", "users: [{name: m, user: {}}]\n");
    kubeapi::Json secret = {{"apiVersion", "v1"},
                            {"kind", "Secret"},
                            {"metadata", {{"name", name}, {"namespace", "kueue-system"}}},
                            {"data", {{"kubeconfig", absl::Base64Escape(kubeconfig)}}}};
    return kube->Create(manifest::SecretResource(), "kueue-system", secret).status();
  };
  ASSERT_OK(create_secret("w2-kubeconfig", *w2_));
  auto cluster = [](const std::string& name, const std::string& secret) {
    return absl::StrCat(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: MultiKueueCluster\n", "metadata: {name: ", name,
        "}\n", "spec: {clusterSource: {kubeConfig: {locationType: Secret, location: ", secret,
        "}}}\n");
  };
  // The clusters first: with an hour's sync period, the restarted controller reads them once.
  ASSERT_NO_FATAL_FAILURE(
      Apply(*manager_, cluster("w2", "w2-kubeconfig") + "---\n" + cluster("w1", "w1-kubeconfig")));
  ASSERT_NO_FATAL_FAILURE(RestartController(
      {"--worker-lost-timeout=2s", "--gc-interval=1s", "--config-sync-period=1h",
       "--secrets-namespace=kueue-system", "--cluster-kubeconfig=" + cluster_kubeconfig},
      "controller-api-secret"));
  const auto missing = [](const v1::Condition& c) {
    return c.status() == "False" && c.reason() == "BadKubeConfig" &&
           absl::StrContains(c.message(),
                             "kubeConfig Secret \"w1-kubeconfig\": no Secret "
                             "\"w1-kubeconfig\" in namespace \"kueue-system\"");
  };
  ASSERT_TRUE(WaitForClusterCondition("w1", missing)) << controller_->Logs();
  ASSERT_TRUE(WaitForClusterActive("w2", true));
  ASSERT_NO_FATAL_FAILURE(Submit(*manager_client_, "train", 2));
  ASSERT_TRUE(AwaitReadyOn("train", "w2"));

  // The missing Secret appears: the watch reports it, long before the next sync.
  ASSERT_OK(create_secret("w1-kubeconfig", *w1_));
  ASSERT_TRUE(WaitForClusterActive("w1", true)) << controller_->Logs();

  // w2's Secret changes to a kubeconfig Kueue's rules refuse: its connection is remade from it.
  const std::string insecure =
      absl::StrCat("apiVersion: v1\nkind: Config\ncurrent-context: w\n",
                   "contexts: [{name: w, context: {cluster: w, user: m}}]\n",
                   "clusters: [{name: w, cluster: {server: \"http://", w2_->address(),
                   "\", insecure-skip-tls-verify: true}}]\n", "users: [{name: m, user: {}}]\n");
  ASSERT_OK(kube->Patch(manifest::SecretResource(), "kueue-system", "w2-kubeconfig",
                        kubeapi::PatchType::kMerge,
                        {{"data", {{"kubeconfig", absl::Base64Escape(insecure)}}}})
                .status());
  ASSERT_TRUE(WaitForClusterCondition("w2", [](const v1::Condition& c) {
    return c.status() == "False" && c.reason() == "InsecureKubeConfig" &&
           absl::StrContains(c.message(), "insecure TLS verification is not allowed for cluster w");
  })) << controller_->Logs();

  // w1's Secret is deleted: w1 is inactive again, with the message of a missing Secret.
  ASSERT_OK(kube->Delete(manifest::SecretResource(), "kueue-system", "w1-kubeconfig"));
  ASSERT_TRUE(WaitForClusterCondition("w1", missing)) << controller_->Logs();

  // The API server ends every watch: the controller watches again and sees the next change.
  ASSERT_OK(kube::testing::PostFake(apiserver, "/fake/drop-watches"));
  ASSERT_OK(create_secret("w1-kubeconfig", *w1_));
  EXPECT_TRUE(WaitForClusterActive("w1", true)) << controller_->Logs();
}

TEST_F(MultiKueueE2eTest, LostWorkerLeadsToRetryAndTheOtherWorker) {
  ASSERT_NO_FATAL_FAILURE(Submit(*manager_client_, "train", 2));
  ASSERT_TRUE(AwaitReadyOn("train", "w2"));

  // The winner dies; w1 gets room. After --worker-lost-timeout the check goes to Retry, the
  // manager's workload is evicted and reserved again, and w1 admits the new copy.
  ASSERT_OK(w2_->Kill());
  v1::FinishRequest finish;
  *finish.mutable_workload() = Ref("blocker");
  ASSERT_OK(w1_client_->Finish(finish).status());
  ASSERT_TRUE(AwaitReadyOn("train", "w1"));
  const v1::Workload moved = Get(*manager_client_, "train");
  bool retried = false;
  for (const v1::WorkloadEvent& e : moved.status().events()) {
    if (absl::StrContains(e.message(), "Admitting remote lost")) retried = true;
  }
  EXPECT_TRUE(retried) << moved.DebugString();
  EXPECT_EQ(Get(*w1_client_, "train").status().state(), v1::WORKLOAD_STATE_ADMITTED);
}

// A worker that goes silent without closing its connection (SIGSTOP: a partition or a hung
// process) is noticed by its missing bookmarks and counted as lost. Back within
// --worker-lost-timeout, it keeps the workload: the check stays Ready on it, clusterName does
// not move, and the other worker, which has room by then, gets no copy.
TEST_F(MultiKueueE2eTest, APartitionThatHealsInsideTheTimeoutKeepsTheWinner) {
  controller_.reset();
  ASSERT_OK_AND_ASSIGN(
      controller_, ChildProcess::Start(
                       {TOLLGATE_MULTIKUEUE_PATH, absl::StrCat("--manager=", manager_->address()),
                        "--worker-lost-timeout=5m", "--worker-idle-timeout=2s", "--gc-interval=1s",
                        "--config-sync-period=1s"},
                       scratch_ + "/controller-partition.log"));
  ASSERT_NO_FATAL_FAILURE(Submit(*manager_client_, "train", 2));
  ASSERT_TRUE(AwaitReadyOn("train", "w2"));
  ASSERT_TRUE(WaitForClusterActive("w2", true));
  // The loser's copy goes right after the winner is recorded; room on w1 before that would
  // admit it there for a moment, racing its removal.
  ASSERT_TRUE(WaitFor(
      *w1_client_, "train", [](const v1::Workload&) { return false; }, /*absent_is_done=*/true));
  v1::FinishRequest finish;
  *finish.mutable_workload() = Ref("blocker");
  ASSERT_OK(w1_client_->Finish(finish).status());

  ASSERT_OK(w2_->Signal(SIGSTOP));
  const bool noticed = WaitForClusterActive("w2", false);
  ASSERT_OK(w2_->Signal(SIGCONT));
  ASSERT_TRUE(noticed) << "the manager never counted the silent worker as lost:\n"
                       << controller_->Logs();
  ASSERT_TRUE(WaitForClusterActive("w2", true)) << controller_->Logs();

  const v1::Workload kept = Get(*manager_client_, "train");
  EXPECT_TRUE(ReadyOn(kept, "w2")) << kept.DebugString();
  for (const v1::WorkloadEvent& e : kept.status().events()) {
    EXPECT_FALSE(absl::StrContains(e.message(), "Admitting remote lost")) << kept.DebugString();
  }
  v1::GetWorkloadRequest on_w1;
  *on_w1.mutable_workload() = Ref("train");
  EXPECT_TRUE(absl::IsNotFound(w1_client_->GetWorkload(on_w1).status()));
  EXPECT_EQ(Get(*w2_client_, "train").status().state(), v1::WORKLOAD_STATE_ADMITTED);
}

TEST_F(MultiKueueE2eTest, CopiesWhoseOriginIsGoneAreCollected) {
  // A copy of this manager's origin whose workload does not exist on the manager (its
  // manager's workload was deleted while the controller was away), and one of another origin.
  for (const auto& [name, origin] : {std::pair<std::string, std::string>{"ghost", "multikueue"},
                                     std::pair<std::string, std::string>{"foreign", "other"}}) {
    v1::SubmitRequest request;
    v1::Workload* wl = request.mutable_workload();
    *wl = TeamWorkload(name, 1);
    (*wl->mutable_metadata()->mutable_labels())[kOriginLabel] = origin;
    ASSERT_OK(w2_client_->Submit(request).status());
  }
  ASSERT_TRUE(WaitFor(
      *w2_client_, "ghost", [](const v1::Workload&) { return false; },
      /*absent_is_done=*/true));
  // The collection that removed it looked at every copy on w2: another manager's stays.
  EXPECT_EQ(Get(*w2_client_, "foreign").metadata().labels().at(kOriginLabel), "other");
}

// The Incremental settings come from Kueue's Configuration file, as an operator would give them.
TEST_F(MultiKueueE2eTest, IncrementalNominatesInConfigOrderAStepAtATime) {
  controller_.reset();
  const std::string config_file = scratch_ + "/kueue-config.yaml";
  {
    std::ofstream out(config_file);
    out << "apiVersion: config.kueue.x-k8s.io/v1beta2\n"
           "kind: Configuration\n"
           "multiKueue:\n"
           "  dispatcherName: kueue.x-k8s.io/multikueue-dispatcher-incremental\n"
           "  incrementalDispatcherConfig: {stepSize: 1}\n";
    ASSERT_TRUE(out.good());
  }
  // A setting given twice, in the file and as a flag, is refused before anything runs.
  const std::string refused_log = scratch_ + "/controller-refused.log";
  ASSERT_OK_AND_ASSIGN(
      int refused, ChildProcess::Run({TOLLGATE_MULTIKUEUE_PATH,
                                      absl::StrCat("--config=", config_file), "--origin=elsewhere"},
                                     refused_log));
  EXPECT_EQ(refused, 2);
  {
    std::ifstream log(refused_log);
    const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
    EXPECT_TRUE(absl::StrContains(text, "--origin and --config both set the multiKueue settings"))
        << text;
  }
  ASSERT_OK_AND_ASSIGN(
      controller_, ChildProcess::Start(
                       {TOLLGATE_MULTIKUEUE_PATH, absl::StrCat("--manager=", manager_->address()),
                        absl::StrCat("--config=", config_file), "--config-sync-period=1s"},
                       scratch_ + "/controller-incremental.log"));
  ASSERT_NO_FATAL_FAILURE(Submit(*manager_client_, "train", 2));
  // The first round is the config's first worker only, although w2 has room; the next round
  // would come after Kueue's fixed 5 minutes.
  ASSERT_TRUE(WaitFor(*manager_client_, "train", [](const v1::Workload& wl) {
    return wl.status().nominated_cluster_names_size() == 1 &&
           wl.status().nominated_cluster_names(0) == "w1";
  })) << Get(*manager_client_, "train").DebugString();
  ASSERT_TRUE(WaitFor(*w1_client_, "train", [](const v1::Workload&) { return true; }));
  v1::GetWorkloadRequest on_w2;
  *on_w2.mutable_workload() = Ref("train");
  EXPECT_TRUE(absl::IsNotFound(w2_client_->GetWorkload(on_w2).status()));

  // w1 gets room and admits its copy.
  v1::FinishRequest finish;
  *finish.mutable_workload() = Ref("blocker");
  ASSERT_OK(w1_client_->Finish(finish).status());
  ASSERT_TRUE(AwaitReadyOn("train", "w1"));
  EXPECT_TRUE(absl::IsNotFound(w2_client_->GetWorkload(on_w2).status()));
}

// A kill -9 of the controller while one workload runs on a worker and another is dispatched
// (copies on both workers, admitted on neither), and a third is submitted while it is down. The
// restarted controller starts from what the servers hold: the running one stays admitted where
// it is (same copy, clusterName unchanged, no Retry), the pending ones are dispatched, and
// nothing is admitted on two workers at once.
TEST_F(MultiKueueE2eTest, AControllerRestartKeepsWhatRunsAndDispatchesWhatWaits) {
  ASSERT_NO_FATAL_FAILURE(Submit(*manager_client_, "train", 2));
  ASSERT_TRUE(AwaitReadyOn("train", "w2"));
  const v1::Workload running_copy = Get(*w2_client_, "train");
  ASSERT_EQ(running_copy.status().state(), v1::WORKLOAD_STATE_ADMITTED);

  // 4 cpu: no room on either worker (w1 is full, w2 has 2 left), so its copies wait on both.
  ASSERT_NO_FATAL_FAILURE(Submit(*manager_client_, "big", 4));
  const auto exists = [](const v1::Workload&) { return true; };
  ASSERT_TRUE(WaitFor(*w1_client_, "big", exists));
  ASSERT_TRUE(WaitFor(*w2_client_, "big", exists));

  // kill -9; while it is down a third one comes, which only w2 has room for.
  controller_.reset();
  ASSERT_NO_FATAL_FAILURE(Submit(*manager_client_, "late", 1));
  ASSERT_NO_FATAL_FAILURE(RestartController(RestartKeepingWorkersFlags(), "controller-restarted"));
  ASSERT_TRUE(AwaitReadyOn("late", "w2"));
  ASSERT_TRUE(Absent(*w1_client_, "late"));

  // w1 gets room: the waiting one is admitted there, and its copy on w2 goes.
  ASSERT_NO_FATAL_FAILURE(FinishBlocker(*w1_client_));
  ASSERT_TRUE(AwaitReadyOn("big", "w1"));
  ASSERT_TRUE(Absent(*w2_client_, "big"));

  // The one that ran through the restart was never touched.
  const v1::Workload train = Get(*manager_client_, "train");
  EXPECT_TRUE(ReadyOn(train, "w2")) << train.DebugString();
  EXPECT_FALSE(WasRetried(train)) << train.DebugString();
  const v1::Workload copy = Get(*w2_client_, "train");
  EXPECT_EQ(copy.metadata().uid(), running_copy.metadata().uid());
  EXPECT_EQ(copy.status().state(), v1::WORKLOAD_STATE_ADMITTED);
  EXPECT_EQ(copy.status().admission_time().seconds(),
            running_copy.status().admission_time().seconds());
  v1::GetWorkloadRequest on_w1;
  *on_w1.mutable_workload() = Ref("train");
  EXPECT_TRUE(absl::IsNotFound(w1_client_->GetWorkload(on_w1).status()));
}

// A copy admitted and finished on its worker between two looks of the controller (here while it
// is down): the manager never saw it admitted and its workload only reserved quota, yet the
// finish finishes it there, with the worker's reason (Kueue finishes whatever the local state),
// instead of leaving the quota held for good; every copy then goes.
TEST_F(MultiKueueE2eTest, ACopyFinishedBeforeTheManagerSawItAdmittedFinishesTheWorkload) {
  // w2 full too (a local workload of its own): the copies wait on both workers.
  ASSERT_NO_FATAL_FAILURE(Submit(*w2_client_, "hog", 4));
  ASSERT_TRUE(WaitFor(*w2_client_, "hog", [](const v1::Workload& wl) {
    return wl.status().state() == v1::WORKLOAD_STATE_ADMITTED;
  }));
  ASSERT_NO_FATAL_FAILURE(Submit(*manager_client_, "train", 2));
  const auto exists = [](const v1::Workload&) { return true; };
  ASSERT_TRUE(WaitFor(*w1_client_, "train", exists));
  ASSERT_TRUE(WaitFor(*w2_client_, "train", exists));

  controller_.reset();
  v1::FinishRequest finish_hog;
  *finish_hog.mutable_workload() = Ref("hog");
  ASSERT_OK(w2_client_->Finish(finish_hog).status());
  ASSERT_TRUE(WaitFor(*w2_client_, "train", [](const v1::Workload& wl) {
    return wl.status().state() == v1::WORKLOAD_STATE_ADMITTED;
  }));
  v1::FinishRequest finish_copy;
  *finish_copy.mutable_workload() = Ref("train");
  finish_copy.set_reason("Failed");
  finish_copy.set_message("Job failed: BackoffLimitExceeded");
  ASSERT_OK(w2_client_->Finish(finish_copy).status());
  ASSERT_EQ(Get(*manager_client_, "train").status().state(), v1::WORKLOAD_STATE_QUOTA_RESERVED);

  ASSERT_NO_FATAL_FAILURE(
      RestartController({"--worker-lost-timeout=2s", "--gc-interval=1s", "--config-sync-period=1s"},
                        "controller-restarted"));
  ASSERT_TRUE(WaitFor(*manager_client_, "train", [](const v1::Workload& wl) {
    return wl.status().state() == v1::WORKLOAD_STATE_FINISHED;
  })) << Get(*manager_client_, "train").DebugString();
  const v1::Workload finished = Get(*manager_client_, "train");
  const v1::Condition* condition = TrueCondition(finished, "Finished");
  ASSERT_NE(condition, nullptr) << finished.DebugString();
  EXPECT_EQ(condition->reason(), "Failed");
  EXPECT_EQ(condition->message(), "Job failed: BackoffLimitExceeded");
  EXPECT_TRUE(Absent(*w1_client_, "train"));
  EXPECT_TRUE(Absent(*w2_client_, "train"));
}

// A kill -9 of the winning worker's tollgated, started again at the same address on the same
// data directory within --worker-lost-timeout: the manager counts it as lost, then connected,
// and the workload stays where it was: its copy is still admitted there (the same object, read
// back from the worker's store), the check stays Ready with the same clusterName, and w1, which
// has room by then, gets no copy.
TEST_F(MultiKueueE2eTest, AWorkerRestartedWithinTheTimeoutKeepsItsWorkload) {
  ASSERT_NO_FATAL_FAILURE(
      RestartController({"--worker-lost-timeout=5m", "--gc-interval=1s", "--config-sync-period=1s"},
                        "controller-long-timeout"));
  ASSERT_NO_FATAL_FAILURE(Submit(*manager_client_, "train", 2));
  ASSERT_TRUE(AwaitReadyOn("train", "w2"));
  ASSERT_TRUE(WaitForClusterActive("w2", true));
  const v1::Workload before = Get(*w2_client_, "train");
  ASSERT_NO_FATAL_FAILURE(FinishBlocker(*w1_client_));

  const std::string address = w2_->address();
  ASSERT_OK(w2_->Kill());
  ASSERT_TRUE(WaitForClusterActive("w2", false)) << controller_->Logs();
  ASSERT_OK_AND_ASSIGN(w2_, TollgatedProcess::Start(scratch_ + "/w2", scratch_,
                                                    {"--watch-bookmark-interval=200ms",
                                                     absl::StrCat("--listen=", address)}));
  ASSERT_EQ(w2_->address(), address);
  WatchWorker("w2", w2_->address());
  ASSERT_TRUE(WaitForClusterActive("w2", true)) << controller_->Logs();

  // A workload only w1 has room for (3 cpu: w2 has 2 left) goes through the one reconcile
  // thread after the reconnect, so once it runs on w1 the controller has looked at train again.
  ASSERT_NO_FATAL_FAILURE(Submit(*manager_client_, "probe", 3));
  ASSERT_TRUE(AwaitReadyOn("probe", "w1"));

  const v1::Workload kept = Get(*manager_client_, "train");
  EXPECT_TRUE(ReadyOn(kept, "w2")) << kept.DebugString();
  EXPECT_FALSE(WasRetried(kept)) << kept.DebugString();
  const v1::Workload after = Get(*w2_client_, "train");
  EXPECT_EQ(after.metadata().uid(), before.metadata().uid());
  EXPECT_EQ(after.status().state(), v1::WORKLOAD_STATE_ADMITTED);
  v1::GetWorkloadRequest on_w1;
  *on_w1.mutable_workload() = Ref("train");
  EXPECT_TRUE(absl::IsNotFound(w1_client_->GetWorkload(on_w1).status()));
}

// The worker evicts its copy (an operator's preemption that also deactivates it, so the worker
// itself does not requeue it): the manager's check goes to Retry with Kueue's message, the
// manager's workload is evicted and requeued, the stale copy goes, and the workload is
// dispatched again: a new copy, admitted on the worker with room.
TEST_F(MultiKueueE2eTest, ARemoteEvictionRetriesAndDispatchesAgain) {
  ASSERT_NO_FATAL_FAILURE(Submit(*manager_client_, "train", 2));
  ASSERT_TRUE(AwaitReadyOn("train", "w2"));
  const v1::Workload first_copy = Get(*w2_client_, "train");

  v1::PreemptRequest preempt;
  *preempt.mutable_workload() = Ref("train");
  preempt.set_reason("drained by the worker's operator");
  preempt.set_hold(true);
  ASSERT_OK(w2_client_->Preempt(preempt).status());

  ASSERT_TRUE(WaitFor(*manager_client_, "train", [](const v1::Workload& wl) {
    return HasEvent(wl,
                    "Workload evicted on worker cluster: \"w2\", resetting for "
                    "re-admission. Previously: \"Ready\"");
  })) << Get(*manager_client_, "train").DebugString();
  ASSERT_TRUE(WaitFor(*w2_client_, "train", [&](const v1::Workload& wl) {
    return wl.metadata().uid() != first_copy.metadata().uid() &&
           wl.status().state() == v1::WORKLOAD_STATE_ADMITTED;
  })) << Get(*w2_client_, "train").DebugString();
  ASSERT_TRUE(AwaitReadyOn("train", "w2"));
  const v1::Workload again = Get(*manager_client_, "train");
  EXPECT_EQ(CheckOf(again, "mk")->message(), "The workload was admitted on \"w2\"");
  const v1::Workload second_copy = Get(*w2_client_, "train");
  EXPECT_TRUE(!second_copy.spec().has_active() || second_copy.spec().active())
      << second_copy.DebugString();
}

// The worker evicts the copy and requeues it (a preemption without hold), and a local workload
// of higher priority takes the room, so the copy waits there again, still marked the winner of
// the last round. The manager's check goes to Retry and that copy is removed with it: the next
// round makes fresh, unmarked copies, and when w1 gets room the workload runs there; the stale
// copy never comes back to life on w2.
TEST_F(MultiKueueE2eTest, ACopyTheWorkerRequeuesAfterAnEvictionIsReplaced) {
  ASSERT_NO_FATAL_FAILURE(Submit(*manager_client_, "train", 2));
  ASSERT_TRUE(AwaitReadyOn("train", "w2"));
  // The controller marks the winning copy after it records the winner on the manager.
  ASSERT_TRUE(WaitFor(*w2_client_, "train", [](const v1::Workload& copy) {
    return copy.status().multi_kueue_winner();
  })) << Get(*w2_client_, "train").DebugString();
  const v1::Workload first_copy = Get(*w2_client_, "train");

  v1::SubmitRequest squatter;
  *squatter.mutable_workload() = TeamWorkload("squatter", 4);
  squatter.mutable_workload()->mutable_spec()->set_priority(100);
  ASSERT_OK(w2_client_->Submit(squatter).status());

  v1::PreemptRequest preempt;
  *preempt.mutable_workload() = Ref("train");
  preempt.set_reason("preempted on the worker");
  ASSERT_OK_AND_ASSIGN(v1::PreemptResponse preempted, w2_client_->Preempt(preempt));
  ASSERT_FALSE(preempted.readmitted()) << preempted.DebugString();
  ASSERT_TRUE(WaitFor(*w2_client_, "squatter", [](const v1::Workload& w) {
    return w.status().state() == v1::WORKLOAD_STATE_ADMITTED;
  }));

  ASSERT_TRUE(WaitFor(*manager_client_, "train", [](const v1::Workload& w) {
    return HasEvent(w,
                    "Workload evicted on worker cluster: \"w2\", resetting for "
                    "re-admission. Previously: \"Ready\"");
  })) << Get(*manager_client_, "train").DebugString();
  // The next round's copies: on w1 (full) and a fresh one on w2 (full), neither marked.
  ASSERT_TRUE(WaitFor(*w2_client_, "train", [&](const v1::Workload& w) {
    return w.metadata().uid() != first_copy.metadata().uid();
  })) << Get(*w2_client_, "train").DebugString();
  const v1::Workload fresh = Get(*w2_client_, "train");
  EXPECT_FALSE(fresh.status().multi_kueue_winner()) << fresh.DebugString();
  EXPECT_NE(fresh.status().state(), v1::WORKLOAD_STATE_ADMITTED) << fresh.DebugString();

  ASSERT_NO_FATAL_FAILURE(FinishBlocker(*w1_client_));
  ASSERT_TRUE(AwaitReadyOn("train", "w1"));
  ASSERT_TRUE(WaitFor(*w1_client_, "train", [](const v1::Workload& w) {
    return w.status().multi_kueue_winner() && w.status().state() == v1::WORKLOAD_STATE_ADMITTED;
  })) << Get(*w1_client_, "train").DebugString();
  ASSERT_TRUE(Absent(*w2_client_, "train"));
}

// The worker evicts the copy and admits it again in the same step (a preemption without hold
// on a worker with room), so the copy's Requeued condition is all that says it was evicted. The
// controller is down meanwhile, so what it finds is only the result, as a controller may whose
// reconcile runs after both changes. As Kueue's manager, which always sees a worker's eviction
// (Kueue's worker stops the job before it admits again), the manager's check goes to Retry, the
// evicted copy is removed, and the workload is dispatched again as a fresh copy, admitted and
// marked on the worker with room; the evicted copy never runs on as the winner.
TEST_F(MultiKueueE2eTest, ACopyTheWorkerAdmitsAgainAfterAnEvictionIsReplaced) {
  ASSERT_NO_FATAL_FAILURE(Submit(*manager_client_, "train", 2));
  ASSERT_TRUE(AwaitReadyOn("train", "w2"));
  ASSERT_TRUE(WaitFor(*w2_client_, "train", [](const v1::Workload& copy) {
    return copy.status().multi_kueue_winner();
  })) << Get(*w2_client_, "train").DebugString();
  const v1::Workload first_copy = Get(*w2_client_, "train");

  controller_.reset();
  v1::PreemptRequest preempt;
  *preempt.mutable_workload() = Ref("train");
  preempt.set_reason("preempted on the worker");
  ASSERT_OK_AND_ASSIGN(v1::PreemptResponse preempted, w2_client_->Preempt(preempt));
  ASSERT_TRUE(preempted.readmitted()) << preempted.DebugString();
  const v1::Workload readmitted = Get(*w2_client_, "train");
  ASSERT_EQ(readmitted.metadata().uid(), first_copy.metadata().uid());
  ASSERT_EQ(readmitted.status().state(), v1::WORKLOAD_STATE_ADMITTED) << readmitted.DebugString();
  ASSERT_NE(TrueCondition(readmitted, "Requeued"), nullptr) << readmitted.DebugString();
  ASSERT_EQ(TrueCondition(readmitted, "Evicted"), nullptr) << readmitted.DebugString();
  ASSERT_NO_FATAL_FAILURE(RestartController(RestartKeepingWorkersFlags(), "controller-readmitted"));

  ASSERT_TRUE(WaitFor(*manager_client_, "train", [](const v1::Workload& w) {
    return HasEvent(w,
                    "Workload evicted on worker cluster: \"w2\", resetting for "
                    "re-admission. Previously: \"Ready\"");
  })) << Get(*manager_client_, "train").DebugString();
  ASSERT_TRUE(WaitFor(*w2_client_, "train", [&](const v1::Workload& w) {
    return w.metadata().uid() != first_copy.metadata().uid() &&
           w.status().state() == v1::WORKLOAD_STATE_ADMITTED && w.status().multi_kueue_winner();
  })) << Get(*w2_client_, "train").DebugString();
  ASSERT_TRUE(AwaitReadyOn("train", "w2"));
  const v1::Workload fresh = Get(*w2_client_, "train");
  EXPECT_EQ(TrueCondition(fresh, "Requeued"), nullptr) << fresh.DebugString();
  EXPECT_EQ(CheckOf(Get(*manager_client_, "train"), "mk")->message(),
            "The workload was admitted on \"w2\"");
}

// The manager's workload is deactivated (a local eviction): its copy on the worker goes and
// nothing is dispatched while it is inactive; activated again, it is dispatched again.
// Whether a worker ever showed its copy of a workload deactivated (spec.active false), from its
// watch: a copy the manager removes at once is never seen inactive.
class InactiveCopySeen {
 public:
  InactiveCopySeen(const std::string& address, const std::string& name)
      : watcher_(
            address,
            [this, name](const v1::WatchEvent& e) {
              if (e.type() == v1::WatchEvent::DELETED || e.workload().metadata().name() != name ||
                  !e.workload().spec().has_active() || e.workload().spec().active()) {
                return;
              }
              absl::MutexLock lock(&mu_);
              seen_ = true;
            },
            [] {}) {}
  bool seen() const {
    absl::MutexLock lock(&mu_);
    return seen_;
  }

 private:
  mutable absl::Mutex mu_;
  bool seen_ ABSL_GUARDED_BY(mu_) = false;
  EventWatcher watcher_;
};

// A local deactivation changes the manager's spec (spec.active false), so the copy no longer
// matches it and is removed at once, never deactivated first: Kueue's reconcileGroup removes
// copies whose spec is out of sync (its step 5) before it would deactivate the admitted one (step
// 6). Here the manager releases the quota at once (no --evictions-need-ack).
TEST_F(MultiKueueE2eTest, ALocalDeactivationRemovesTheRemoteCopy) {
  ASSERT_NO_FATAL_FAILURE(Submit(*manager_client_, "train", 2));
  ASSERT_TRUE(AwaitReadyOn("train", "w2"));
  InactiveCopySeen inactive_on_w2(w2_->address(), "train");

  v1::SetWorkloadActiveRequest deactivate;
  *deactivate.mutable_workload() = Ref("train");
  deactivate.set_active(false);
  ASSERT_OK(manager_client_->SetWorkloadActive(deactivate).status());
  ASSERT_TRUE(Absent(*w2_client_, "train"));
  EXPECT_FALSE(inactive_on_w2.seen());
  const v1::Workload inactive = Get(*manager_client_, "train");
  EXPECT_FALSE(inactive.spec().active()) << inactive.DebugString();
  EXPECT_EQ(inactive.status().state(), v1::WORKLOAD_STATE_PENDING) << inactive.DebugString();
  EXPECT_TRUE(inactive.status().cluster_name().empty()) << inactive.DebugString();

  v1::SetWorkloadActiveRequest activate = deactivate;
  activate.set_active(true);
  ASSERT_OK(manager_client_->SetWorkloadActive(activate).status());
  ASSERT_TRUE(AwaitReadyOn("train", "w2"));
  EXPECT_EQ(Get(*w2_client_, "train").status().state(), v1::WORKLOAD_STATE_ADMITTED);
}

// A new priority on the manager reaches the running copy (Kueue's MultiKueue workload
// reconciler updates the remote's priority rather than removing an out-of-sync copy), so the
// worker's preemption sees the workload as the manager now ranks it; the copy keeps running.
TEST_F(MultiKueueE2eTest, ANewPriorityOnTheManagerReachesTheRunningCopy) {
  ASSERT_NO_FATAL_FAILURE(Submit(*manager_client_, "train", 2));
  ASSERT_TRUE(AwaitReadyOn("train", "w2"));
  const std::string copy_uid = Get(*w2_client_, "train").metadata().uid();

  v1::ReprioritizeRequest reprioritize;
  *reprioritize.mutable_workload() = Ref("train");
  reprioritize.set_priority(70);
  ASSERT_OK(manager_client_->Reprioritize(reprioritize).status());
  ASSERT_TRUE(WaitFor(*w2_client_, "train", [](const v1::Workload& wl) {
    return wl.status().priority() == 70;
  })) << Get(*w2_client_, "train").DebugString();
  const v1::Workload copy = Get(*w2_client_, "train");
  EXPECT_EQ(copy.spec().priority(), 70);
  EXPECT_EQ(copy.status().state(), v1::WORKLOAD_STATE_ADMITTED);
  EXPECT_EQ(copy.metadata().uid(), copy_uid) << "the copy was replaced";
  EXPECT_EQ(Get(*manager_client_, "train").status().cluster_name(), "w2");
}

// The manager waits for its workloads' jobs to stop before it releases their quota, as Kueue
// does, so a local eviction has a span in which the manager's workload is evicted but still
// holds quota.
class MultiKueueAckedEvictionE2eTest : public MultiKueueE2eTest {
 protected:
  std::vector<std::string> ManagerFlags() const override { return {"--evictions-need-ack"}; }
};

// A local eviction (a preemption on the manager), in Kueue's order: while the manager's workload
// is evicted and still holds quota until its job stops, the copy on the winner is deactivated
// (spec.active false, evicted on its worker), not removed, and nothing is nominated or copied
// anywhere. Once the manager's job reports stopped, the quota goes, and with it the deactivated
// copy; the workload is dispatched again, as a new copy.
TEST_F(MultiKueueAckedEvictionE2eTest, ALocalEvictionDeactivatesTheRemoteCopyUntilTheJobStops) {
  ASSERT_NO_FATAL_FAILURE(Submit(*manager_client_, "train", 2));
  ASSERT_TRUE(AwaitReadyOn("train", "w2"));
  const v1::Workload first_copy = Get(*w2_client_, "train");

  v1::PreemptRequest preempt;
  *preempt.mutable_workload() = Ref("train");
  preempt.set_reason("room for an urgent job on the manager");
  ASSERT_OK(manager_client_->Preempt(preempt).status());
  ASSERT_EQ(Get(*manager_client_, "train").status().state(), v1::WORKLOAD_STATE_EVICTING);

  ASSERT_TRUE(WaitFor(*w2_client_, "train", [&](const v1::Workload& wl) {
    return wl.metadata().uid() == first_copy.metadata().uid() && wl.spec().has_active() &&
           !wl.spec().active() && TrueCondition(wl, "Evicted") != nullptr &&
           wl.status().state() != v1::WORKLOAD_STATE_ADMITTED;
  })) << Get(*w2_client_, "train").DebugString();
  // The worker evicted its copy with Kueue's cause, naming the manager's eviction.
  const v1::Workload deactivated = Get(*w2_client_, "train");
  const v1::Condition* copy_evicted = TrueCondition(deactivated, "Evicted");
  ASSERT_NE(copy_evicted, nullptr) << deactivated.DebugString();
  EXPECT_EQ(copy_evicted->reason(), "DeactivatedDueToEvictedOnManagerCluster");
  EXPECT_EQ(copy_evicted->message(),
            "The workload is deactivated due to Evicted on manager: room for an urgent job on "
            "the manager");
  // And the manager records that copy as evicted while its own workload still holds quota.
  ASSERT_TRUE(WaitFor(*manager_client_, "train", [](const v1::Workload& wl) {
    return RemotesOf(wl) == "w2=Evicted";
  })) << Get(*manager_client_, "train").DebugString();
  const v1::Workload evicting = Get(*manager_client_, "train");
  EXPECT_EQ(evicting.status().state(), v1::WORKLOAD_STATE_EVICTING) << evicting.DebugString();
  EXPECT_TRUE(evicting.status().cluster_name().empty()) << evicting.DebugString();
  EXPECT_TRUE(evicting.status().nominated_cluster_names().empty()) << evicting.DebugString();
  v1::GetWorkloadRequest on_w1;
  *on_w1.mutable_workload() = Ref("train");
  EXPECT_TRUE(absl::IsNotFound(w1_client_->GetWorkload(on_w1).status()));
  // Still there, the same copy, as long as the manager's workload holds its quota.
  EXPECT_EQ(Get(*w2_client_, "train").metadata().uid(), first_copy.metadata().uid());

  v1::ReportStoppedRequest stopped;
  *stopped.mutable_workload() = Ref("train");
  ASSERT_OK(manager_client_->ReportStopped(stopped).status());
  ASSERT_TRUE(WaitFor(*w2_client_, "train", [&](const v1::Workload& wl) {
    return wl.metadata().uid() != first_copy.metadata().uid() &&
           wl.status().state() == v1::WORKLOAD_STATE_ADMITTED &&
           (!wl.spec().has_active() || wl.spec().active());
  })) << Get(*w2_client_, "train").DebugString();
  ASSERT_TRUE(AwaitReadyOn("train", "w2"));
}

// A local deactivation on a manager that waits for the job to stop: the manager's workload
// evicts, still holding quota, and the copy is removed at once, never deactivated (Kueue's step
// 5, the spec out of sync, comes first); nothing is dispatched while the workload is inactive.
TEST_F(MultiKueueAckedEvictionE2eTest, ALocalDeactivationRemovesTheRemoteCopyWhileTheJobStops) {
  ASSERT_NO_FATAL_FAILURE(Submit(*manager_client_, "train", 2));
  ASSERT_TRUE(AwaitReadyOn("train", "w2"));
  InactiveCopySeen inactive_on_w2(w2_->address(), "train");

  v1::SetWorkloadActiveRequest deactivate;
  *deactivate.mutable_workload() = Ref("train");
  deactivate.set_active(false);
  ASSERT_OK(manager_client_->SetWorkloadActive(deactivate).status());
  ASSERT_TRUE(Absent(*w2_client_, "train"));
  EXPECT_FALSE(inactive_on_w2.seen());
  const v1::Workload evicting = Get(*manager_client_, "train");
  EXPECT_EQ(evicting.status().state(), v1::WORKLOAD_STATE_EVICTING) << evicting.DebugString();

  v1::ReportStoppedRequest stopped;
  *stopped.mutable_workload() = Ref("train");
  ASSERT_OK(manager_client_->ReportStopped(stopped).status());
  ASSERT_TRUE(WaitFor(*manager_client_, "train", [](const v1::Workload& wl) {
    return wl.status().state() == v1::WORKLOAD_STATE_PENDING;
  })) << Get(*manager_client_, "train").DebugString();
  v1::GetWorkloadRequest on_w1;
  *on_w1.mutable_workload() = Ref("train");
  EXPECT_TRUE(absl::IsNotFound(w1_client_->GetWorkload(on_w1).status()));
  EXPECT_TRUE(absl::IsNotFound(w2_client_->GetWorkload(on_w1).status()));
}

// The link knows a copy it created at once, before its watch brings it: a reconcile that records
// another worker as the winner meanwhile must see that copy to remove it, or it stays behind and
// is admitted as well once its worker has room. The link's watch is held at an earlier copy, so
// only the create itself can have told the link.
TEST_F(MultiKueueE2eTest, ALinkKnowsACopyItCreatedBeforeItsWatchBringsIt) {
  absl::Notification plugged;
  absl::Notification unplug;
  multikueue::WorkerLink::Options options;
  // Not the controller's origin: the controller leaves these copies alone.
  options.origin = "link-test";
  multikueue::WorkerLink::Listener listener;
  listener.on_copy = [&](const std::string&, const std::string& key) {
    if (key == "team/plug" && !plugged.HasBeenNotified()) {
      plugged.Notify();
      unplug.WaitForNotification();
    }
  };
  core::RealClock clock;
  multikueue::WorkerLink link("w1", multikueue::WorkerSource{w1_->address(), {}, "test"}, clock,
                              options, listener);
  // Before the link goes: its thread may wait in the listener.
  absl::Cleanup release = [&] {
    if (!unplug.HasBeenNotified()) unplug.Notify();
  };
  link.Start();
  const absl::Time deadline = absl::Now() + kWait;
  while (!link.connected() && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(10));
  ASSERT_TRUE(link.connected());

  auto copy_named = [](const std::string& name) {
    v1::Workload wl = TeamWorkload(name, 1);
    (*wl.mutable_metadata()->mutable_labels())[kOriginLabel] = "link-test";
    return wl;
  };
  v1::SubmitRequest plug;
  *plug.mutable_workload() = copy_named("plug");
  ASSERT_OK(w1_client_->Submit(plug).status());
  ASSERT_TRUE(plugged.WaitForNotificationWithTimeout(kWait));

  ASSERT_OK(link.CreateCopy(copy_named("train")));
  EXPECT_TRUE(link.Copy("team/train").has_value());
}

// A worker that keeps its connection but answers nothing (SIGSTOP: a hung process, a partition
// that drops packets) costs one call timeout, not one per call: the first call ends with
// DEADLINE_EXCEEDED, the next ones fail at once with UNAVAILABLE naming the cluster, while the
// link stays connected (the watchdog's idle timeout is far away). Once the worker is heard from
// again (its bookmarks, every 200ms, after SIGCONT), calls reach it again.
TEST_F(MultiKueueE2eTest, AWorkerThatLeftACallUnansweredIsNotCalledUntilHeardFromAgain) {
  multikueue::WorkerLink::Options options;
  // Not the controller's origin: the controller leaves these copies alone.
  options.origin = "link-test";
  options.call_timeout = absl::Seconds(1);
  options.idle_timeout = absl::Minutes(10);
  absl::Notification answering_again;
  multikueue::WorkerLink::Listener listener;
  listener.on_answering_again = [&](const std::string& cluster) {
    if (cluster == "w1" && !answering_again.HasBeenNotified()) answering_again.Notify();
  };
  core::RealClock clock;
  multikueue::WorkerLink link("w1", multikueue::WorkerSource{w1_->address(), {}, "test"}, clock,
                              options, listener);
  link.Start();
  const absl::Time deadline = absl::Now() + kWait;
  while (!link.connected() && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(10));
  ASSERT_TRUE(link.connected());
  EXPECT_TRUE(link.answering());
  auto copy_named = [](const std::string& name) {
    v1::Workload wl = TeamWorkload(name, 1);
    (*wl.mutable_metadata()->mutable_labels())[kOriginLabel] = "link-test";
    return wl;
  };

  // Declared after the link, so it runs first: the link's end never waits on a stopped worker.
  absl::Cleanup thaw = [&] { w1_->Signal(SIGCONT).IgnoreError(); };  // Running: no effect.
  ASSERT_OK(Freeze(*w1_));
  const absl::Status unanswered = link.CreateCopy(copy_named("while-frozen"));
  EXPECT_TRUE(absl::IsDeadlineExceeded(unanswered)) << unanswered;
  EXPECT_FALSE(link.answering());
  const std::string fail_fast =
      "the worker of MultiKueueCluster \"w1\" did not answer a call within 1s; not called again "
      "until it is heard from";
  const absl::Status deleted = link.DeleteCopy("team", "never-made");
  EXPECT_TRUE(absl::IsUnavailable(deleted)) << deleted;
  EXPECT_EQ(std::string(deleted.message()), fail_fast);
  const absl::Status marked = link.MarkWinner("team", "never-made");
  EXPECT_TRUE(absl::IsUnavailable(marked)) << marked;
  EXPECT_EQ(std::string(marked.message()), fail_fast);
  // Not a lost worker: Kueue's state machine sees the connection as before.
  EXPECT_TRUE(link.connected());
  EXPECT_FALSE(link.lost_since().has_value());
  EXPECT_FALSE(answering_again.HasBeenNotified());

  ASSERT_OK(w1_->Signal(SIGCONT));
  ASSERT_TRUE(answering_again.WaitForNotificationWithTimeout(kWait));
  EXPECT_TRUE(link.answering());
  ASSERT_OK(link.CreateCopy(copy_named("after-thaw")));
  EXPECT_TRUE(link.Copy("team/after-thaw").has_value());
  EXPECT_TRUE(link.connected());
}

// With one worker frozen (SIGSTOP: still connected, answering nothing), workloads keep being
// dispatched to the healthy one: the controller waits out one call timeout on the frozen worker
// and fails every later call there at once, instead of holding its single reconcile thread for
// a call timeout per workload. The frozen worker is neither lost nor retried meanwhile.
TEST_F(MultiKueueE2eTest, AFrozenWorkerDoesNotStallDispatchToTheOthers) {
  ASSERT_NO_FATAL_FAILURE(RestartController(
      {"--call-timeout=3s", "--worker-idle-timeout=10m", "--worker-lost-timeout=10m",
       "--gc-interval=1s", "--config-sync-period=1s"},
      "controller-frozen"));
  // This controller's own links are up (the clusters' Active conditions may be the previous
  // controller's): else w1 would not be nominated at all and nothing would be shown.
  auto connected = [&](const std::string& cluster) {
    return CountLogLines(controller_->Logs(), {"\"msg\":\"worker connection\"",
                                               absl::StrCat("\"cluster\":\"", cluster, "\""),
                                               "\"connected\":\"true\""}) > 0;
  };
  for (const absl::Time deadline = absl::Now() + kWait;
       absl::Now() < deadline && !(connected("w1") && connected("w2"));
       absl::SleepFor(absl::Milliseconds(50))) {
  }
  ASSERT_TRUE(connected("w1") && connected("w2")) << controller_->Logs();

  // What the controller logs from here on.
  const size_t logged_before = controller_->Logs().size();
  absl::Cleanup thaw = [&] { w1_->Signal(SIGCONT).IgnoreError(); };  // Running: no effect.
  ASSERT_OK(Freeze(*w1_));
  const std::vector<std::string> names = {"burst-0", "burst-1", "burst-2", "burst-3"};
  for (const std::string& name : names) {
    ASSERT_NO_FATAL_FAILURE(Submit(*manager_client_, name, 1));
  }
  for (const std::string& name : names) EXPECT_TRUE(AwaitReadyOn(name, "w2"));

  // While w1 stayed frozen: one call waited for its timeout; the creates on w1 for the other
  // workloads (each one's first pass nominates w1 as well) failed at once.
  const std::string log = controller_->Logs().substr(logged_before);
  EXPECT_EQ(CountLogLines(log, {"worker left a call unanswered", "\"cluster\":\"w1\""}), 1) << log;
  EXPECT_GE(CountLogLines(log, {"created a remote copy", "\"cluster\":\"w1\"",
                                "did not answer a call within 3s; not called again until it is "
                                "heard from"}),
            3)
      << log;
  EXPECT_EQ(CountLogLines(log, {"\"cluster\":\"w1\"", "\"connected\":\"false\""}), 0) << log;

  // Thawed, w1 is heard from again and the controller calls it again.
  ASSERT_OK(w1_->Signal(SIGCONT));
  bool answers = false;
  for (const absl::Time deadline = absl::Now() + kWait; absl::Now() < deadline && !answers;
       absl::SleepFor(absl::Milliseconds(50))) {
    answers =
        CountLogLines(controller_->Logs(), {"worker answers again", "\"cluster\":\"w1\""}) > 0;
  }
  EXPECT_TRUE(answers) << controller_->Logs();
  for (const std::string& name : names) {
    const v1::Workload wl = Get(*manager_client_, name);
    EXPECT_TRUE(ReadyOn(wl, "w2")) << wl.DebugString();
    EXPECT_FALSE(WasRetried(wl)) << wl.DebugString();
  }
}

}  // namespace
}  // namespace tollgate::e2e
