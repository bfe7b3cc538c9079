#pragma once

// The manager's connection to one worker tollgated (Kueue's remoteClient for a
// MultiKueueCluster): a client built from the cluster's endpoint, the copies this manager made
// there (listed, then followed by a watch), and whether the worker answers. Loss is tracked by
// core::WorkerConnection, so a streak of failed reconnects keeps its first loss time. A worker
// that goes silent without closing the connection (a network partition, a hung process) is
// noticed by its missing bookmarks: an idle watch gets one every --watch-bookmark-interval.
// Until then, a call it leaves unanswered marks it as not answering, and further calls fail at
// once instead of each waiting out call_timeout (CallWorker).

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "adapters/multikueue/worker_source.h"
#include "clients/cpp/tollgate_client.h"
#include "common/stop_signal.h"
#include "core/clock.h"
#include "core/multikueue_remote_sync.h"
#include "tollgate/v1/objects.pb.h"

namespace tollgate::multikueue {

class WorkerLink {
 public:
  struct Options {
    std::string origin = "multikueue";
    absl::Duration call_timeout = absl::Seconds(10);
    absl::Duration min_backoff = absl::Milliseconds(100);
    absl::Duration max_backoff = absl::Seconds(5);
    // A watch that brings nothing, not even a bookmark, for this long ends its session and the
    // worker counts as lost. Several of the worker's bookmark intervals (tollgated's default
    // is 10s), so an idle worker is never mistaken for a silent one. Zero: never.
    absl::Duration idle_timeout = absl::Seconds(30);
  };
  // What the link tells its owner: a copy changed or appeared ("namespace/name"), or the
  // connection changed (`connected`, with the error when it failed). Called on the link's
  // thread, without the link's lock.
  struct Listener {
    std::function<void(const std::string& cluster, const std::string& key)> on_copy;
    std::function<void(const std::string& cluster, bool connected, const std::string& reason,
                       const std::string& message)>
        on_connection;
    // The worker, after leaving a call unanswered, was heard from again: calls reach it again,
    // so what failed fast meanwhile may be tried now. Called on the link's thread, without the
    // link's lock.
    std::function<void(const std::string& cluster)> on_answering_again;
  };

  // `cluster` names the MultiKueueCluster; `source` is where its worker is (ResolveWorker).
  WorkerLink(std::string cluster, WorkerSource source, const core::Clock& clock, Options options,
             Listener listener);
  ~WorkerLink();
  WorkerLink(const WorkerLink&) = delete;
  WorkerLink& operator=(const WorkerLink&) = delete;

  // Starts the list-and-watch thread.
  void Start();

  const std::string& cluster() const { return cluster_; }

  bool connected() const;
  std::optional<absl::Time> lost_since() const;
  // False from a call the worker left unanswered (DEADLINE_EXCEEDED) until the worker is heard
  // from again: a watch event or bookmark that arrived after that call ended, or a list (a new
  // session's) that succeeded after it. Independent of connected(): the worker stays connected
  // until its watch is silent for idle_timeout, and the Kueue state machine (lost_since,
  // workerLostTimeout) sees nothing of this.
  bool answering() const;
  // The copies with this manager's origin, by "namespace/name" (known only while connected).
  std::map<std::string, v1::Workload> Copies() const;
  std::optional<v1::Workload> Copy(const std::string& key) const;

  // Calls on the worker; UNAVAILABLE when it cannot be reached. Creating an existing identical
  // copy succeeds (Submit is idempotent), and a created copy is among Copies() at once;
  // deleting a missing one succeeds. Once a call ended with DEADLINE_EXCEEDED, the next ones
  // return UNAVAILABLE without calling until the worker is heard from again (answering()).
  absl::Status CreateCopy(const v1::Workload& copy);
  absl::Status DeleteCopy(const std::string& ns, const std::string& name);
  // Deactivates the copy with a cause (its DeactivationTarget reason and message; empty: none).
  absl::Status DeactivateCopy(const std::string& ns, const std::string& name,
                              const std::string& reason, const std::string& message);
  // Declares the copy the winner (after the manager recorded this worker as its clusterName):
  // only then does the worker's tollgate-kube create the carried job. Idempotent.
  absl::Status MarkWinner(const std::string& ns, const std::string& name);
  // Gives the copy the manager's new payload (a pod group's later pods), at the copy's revision
  // as this link last saw it.
  absl::Status UpdateCopyPayload(const v1::Workload& copy, const v1::WorkloadPayload& payload);
  // Gives the copy the manager's new effective priority (Reprioritize on the worker, so the
  // worker's credentials need `reprioritize` on workloads).
  absl::Status ReprioritizeCopy(const std::string& ns, const std::string& name, int32_t priority);

 private:
  void Loop();
  // One list-then-watch session; returns why it ended.
  absl::Status Session();
  // Ends the session whose watch has been silent longer than options_.idle_timeout.
  void Watchdog();
  void SetConnected(bool connected, const std::string& message);
  // Runs one call on the worker unless it left an earlier one unanswered (then UNAVAILABLE at
  // once, naming the cluster and the timeout); a DEADLINE_EXCEEDED answer marks it so.
  absl::Status CallWorker(absl::FunctionRef<absl::Status()> call);
  // Numbers news from the worker (a watch event or bookmark, a list) as it arrives, before mu_
  // is taken.
  uint64_t NumberNews() { return ++news_numbered_; }
  // Records news numbered `news`; returns whether it ended a call's unanswered mark (then the
  // caller tells on_answering_again once the lock is released).
  bool HeardFromWorkerLocked(uint64_t news) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool AnsweringLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void NotifyAnsweringAgain();

  const std::string cluster_;
  const core::Clock& clock_;
  const Options options_;
  const Listener listener_;
  const std::unique_ptr<client::TollgateClient> client_;
  common::StopSignal stop_;
  std::thread thread_;
  std::thread watchdog_;
  // Whether the current session listed the worker (the link's thread only).
  bool session_connected_ = false;

  mutable absl::Mutex mu_;
  core::WorkerConnection connection_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, v1::Workload> copies_ ABSL_GUARDED_BY(mu_);
  // The newest revision the current session's list or watch brought: `copies_` is the worker's
  // state up to it.
  int64_t watched_revision_ ABSL_GUARDED_BY(mu_) = 0;
  // The watch in progress (null between sessions), when it last brought anything, and whether
  // the watchdog ended it. One canceller per session: WatchCanceller's cancel is for good.
  client::WatchCanceller* session_watch_ ABSL_GUARDED_BY(mu_) = nullptr;
  absl::Time last_heard_ ABSL_GUARDED_BY(mu_);
  bool went_silent_ ABSL_GUARDED_BY(mu_) = false;
  // The news from the worker counted so far, each numbered as it arrives (NumberNews), and the
  // newest number handled under mu_.
  std::atomic<uint64_t> news_numbered_{0};
  uint64_t newest_news_ ABSL_GUARDED_BY(mu_) = 0;
  // Set when a call ended with DEADLINE_EXCEEDED: how much news had arrived by the moment the
  // call returned. Only news numbered after it proves the worker answers again; a bookmark that
  // arrived while the failing call was still waiting has a number at most this, even when it is
  // handled after the mark is set.
  std::optional<uint64_t> unanswered_call_mark_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tollgate::multikueue
