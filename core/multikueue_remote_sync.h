#pragma once

// What the MultiKueue manager does with the copies of one workload, given what each worker
// reports about its copy (Kueue's multikueue workload reconciler, reconcileGroup): first
// admitted wins and the winner never changes, a remote finish finishes the manager's workload,
// a remote eviction puts the check in Retry, a local eviction deactivates the remote copy, a
// winner that stops answering keeps the check Ready for workerLostTimeout and a reachable
// winner whose copy vanished is retried at once. Pure: the caller gathers the views (the gRPC
// transport, next to come) and applies the plan; nothing here talks to a worker or reads a
// clock. docs/multicluster.md describes the state machine.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "core/workload.h"

namespace tollgate::core {

// Kueue's reason of the deactivation a local eviction asks of the admitting worker's copy, and
// of a remote finish that is a sync failure rather than the job's end.
inline constexpr absl::string_view kEvictedOnManagerCluster = "EvictedOnManagerCluster";
inline constexpr absl::string_view kFinishedOutOfSync = "OutOfSync";

// A condition a worker reports True on its copy, with the worker's transition time.
struct RemoteCondition {
  absl::Time since = absl::InfinitePast();
  std::string reason;
  std::string message;
  bool operator==(const RemoteCondition&) const = default;
};

// A worker's copy of the workload, as the worker reports it.
struct RemoteCopy {
  // Admitted=True on the worker, since when (the worker's clock: the race is decided by the
  // workers' own admission times, as in Kueue).
  std::optional<absl::Time> admitted_since;
  std::optional<RemoteCondition> evicted;
  std::optional<RemoteCondition> finished;
  // Whether the copy's spec still matches the manager's workload; one that does not is
  // removed (Kueue's isRemoteSpecOutOfSync).
  bool spec_in_sync = true;
  bool operator==(const RemoteCopy&) const = default;
};

// A worker's connection as the manager tracks it (Kueue's connectionState): lost_since is the
// first drop of a streak of failed reconnects, kept across them, and cleared only by a working
// connection. A client created disconnected (a manager restart) counts as lost since its
// creation, so a restart restarts the grace instead of retrying at once. Not thread-safe.
class WorkerConnection {
 public:
  // A new client: lost since `created` until it connects.
  explicit WorkerConnection(absl::Time created) : lost_since_(created) {}
  void MarkConnected() {
    connected_ = true;
    lost_since_.reset();
  }
  // Returns whether it was connected (the first drop of a streak).
  bool MarkDisconnected(absl::Time now) {
    const bool was = connected_;
    connected_ = false;
    if (!lost_since_.has_value()) lost_since_ = now;
    return was;
  }
  bool connected() const { return connected_; }
  std::optional<absl::Time> lost_since() const { return lost_since_; }

 private:
  bool connected_ = false;
  std::optional<absl::Time> lost_since_;
};

// One worker of the workload's MultiKueueConfig, as the manager sees it now.
struct WorkerView {
  bool connected = false;
  // From WorkerConnection; unset while connected, and for a worker the manager has no client
  // for (no MultiKueueCluster): such a worker counts as lost since now at every look, as
  // Kueue's admittingWorkerLostSince does, so a winner there is never retried for it.
  std::optional<absl::Time> lost_since;
  // The copy the worker holds; only known while connected (unset: it holds none).
  std::optional<RemoteCopy> copy;
};

// The manager's own workload.
struct LocalView {
  bool holds_quota = false;
  bool finished = false;
  // Set while the manager's workload is evicted (its Evicted condition is True): its message.
  std::optional<std::string> evicted_message;
  // The MultiKueue check's state on it.
  CheckState check_state = CheckState::kPending;
  // status.clusterName: the worker that won it, if any.
  std::optional<std::string> cluster_name;
};

struct CheckTransition {
  CheckState state = CheckState::kPending;
  std::string message;
  bool operator==(const CheckTransition&) const = default;
};

struct RemoteSyncPlan {
  // Copies to delete (with the job the worker made of them), sorted by cluster name.
  std::vector<std::string> remove_copies;
  // The MultiKueue check's new state and message (Kueue's texts).
  std::optional<CheckTransition> check;
  // A worker won the workload: status.clusterName becomes it and the nominations are cleared.
  std::optional<std::string> set_cluster_name;
  bool clear_nominated = false;
  // Finish the manager's workload with the worker's finish reason and message.
  std::optional<RemoteCondition> finish_local;
  // Deactivate the copy on this worker (the manager's workload was evicted), with reason and
  // message for its DeactivationTarget condition.
  std::optional<std::string> deactivate_remote;
  std::string deactivate_reason;
  std::string deactivate_message;
  // The worker whose status (job status, pods ready) the manager mirrors: the winner.
  std::optional<std::string> mirror_from;
  // When to look at the workload again even if nothing is reported (the worker-lost grace).
  std::optional<absl::Time> recheck_at;
  // Nothing above decided the workload: nominate (MayNominate, Nominate, SyncCopies).
  bool nominate = false;
};

// The winner among the copies: with a winner already recorded, that worker if its copy is
// admitted (a copy admitted anywhere else is not a contender: the winner never changes);
// otherwise the connected copy admitted earliest, ties broken by cluster name (Kueue leaves
// ties to map order).
std::optional<std::string> FirstAdmitted(const std::map<std::string, WorkerView>& workers,
                                         const std::optional<std::string>& cluster_name);

// Kueue's reconcileGroup, step by step: (1) the manager's workload finished or lost its quota:
// remove every copy; (2) a copy finished: finish the manager's workload (an OutOfSync finish
// instead puts a Ready check in Retry); (3) a copy evicted: nothing while the manager's
// workload is itself evicted, else the evicted copies are removed and a Ready check goes to
// Retry; (4) copies out of sync are
// removed; (5) no admitted copy while the check is Ready: the winner is unreachable (Ready
// until worker_lost_timeout after the loss, then Retry "Admitting remote lost"), or reachable
// without its copy (Retry "Admitting remote no longer exists"); (6) an admitted copy: the other
// copies go, a local eviction deactivates it, else the check becomes Ready with "The workload
// was admitted on "<worker>"" and clusterName is set; (7) otherwise nominate, unless the
// manager's workload is being evicted.
RemoteSyncPlan PlanRemoteSync(const LocalView& local,
                              const std::map<std::string, WorkerView>& workers,
                              absl::Duration worker_lost_timeout, absl::Time now);

// Kueue's message of a check moved by the MultiKueue controller: `<message>, Previously:
// "<state>"`.
std::string TransitionMessage(absl::string_view message, CheckState previous);

// Garbage collection on one connected worker: the copies carrying this manager's origin whose
// workload on the manager is gone or being deleted. `live` holds the manager's workloads that
// exist and are not being deleted ("namespace/name"); sorted result.
std::vector<std::string> GarbageCopies(const std::vector<std::string>& copies_with_origin,
                                       const std::set<std::string>& live);

}  // namespace tollgate::core
