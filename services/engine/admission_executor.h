#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "core/clock.h"
#include "core/cluster_state.h"
#include "core/scheduler_config.h"
#include "services/engine/check_controllers.h"
#include "services/engine/executor_observer.h"
#include "storage/store.h"
#include "tollgate/v1/inventory.pb.h"
#include "tollgate/v1/objects.pb.h"

namespace tollgate::engine {

struct ValidatedObject;

// Owns the scheduling state on one thread and makes every change durable before it is
// acknowledged or announced.
//
// Requests run as operations on the executor thread. The thread takes every queued operation
// at once, runs them in arrival order against the in-memory state, and commits all of their
// writes in one store batch: concurrent requests share one fsync (group commit), and callers
// are answered only after the commit. Between batches it runs scheduling cycles (plan, apply,
// persist) until they stop making progress. If a commit fails, the batch's callers get
// UNAVAILABLE and the state is reloaded from the store, so memory never runs ahead of disk.
// Thread-safe.
class AdmissionExecutor {
 public:
  struct Options {
    // Run cycles whenever something changes (tollgated). The scenario runner turns this off
    // and calls Settle().
    bool schedule_continuously = true;
    // Cycles per round before the thread looks at new requests again, plus one per operation
    // the round applied (so a round's submissions can be admitted under its own commit).
    // Kept small so Submit, Finish and Watch are not starved while a deep backlog drains.
    int max_cycles_per_round = 16;
    // Wall time after which a round stops starting cycles (at least one runs), so a backlog of
    // expensive cycles cannot hold back the requests that share the round's commit.
    absl::Duration cycle_time_per_round = absl::Milliseconds(5);
    // Told about rounds, cycles and commits (metrics); not owned, must outlive the executor.
    ExecutorObserver* observer = nullptr;
    // Measures wall time (the load phases, cycle_time_per_round), which the scheduler's clock
    // passed to Open cannot: it may be simulated. Null: the real clock. Must outlive the
    // executor.
    const core::Clock* wall_clock = nullptr;
    // Change-log revisions kept for Watch; older ones are compacted away (a Watch from them
    // gets OUT_OF_RANGE and re-lists). 0 keeps everything (tests, scenarios).
    int64_t change_log_retention = 0;
    // And older than this (by wall_clock) are compacted too: history is bounded by both. Zero
    // keeps any age. Checked at each commit, to within a hundredth of the age; revisions from
    // before a restart count as committed at the first commit after it.
    absl::Duration change_log_retention_age = absl::ZeroDuration();
    // Called, instead of aborting the process, when the state cannot be reloaded after a
    // failed commit (a replicated tollgated whose etcd lost its quorum, or whose store was shut
    // down as it stepped down). The executor then answers every operation with UNAVAILABLE
    // until it is destroyed; the owner drops it. Null: abort, for a single tollgated, whose
    // restart recovers from the last commit. Runs on the executor thread.
    std::function<void(const absl::Status&)> on_state_lost;
    // Runs each operation's round on the calling thread, under a lock that keeps rounds one at
    // a time, and starts no executor thread: a trace replay waits for every result anyway, and
    // a thread handoff per operation was most of its system time. Only with
    // schedule_continuously off (nothing happens between calls).
    bool run_on_caller = false;
    // Stores each changed workload and appends its change record (what Watch serves and a
    // restart reloads). A trace replay turns this off: nothing watches it, it never restarts,
    // and it reads the committed workloads through the observer (OnWorkloadCommitted,
    // OnWorkloadDeleted) instead of parsing the change log; converting and serializing every
    // change was a fifth of its time. Revisions advance as with it on (a batch with workload
    // changes is committed even when it holds no write), so resource versions stay distinct.
    bool record_workload_changes = true;
  };

  // The context an operation runs with; valid only during the call, on the executor thread.
  class Txn {
   public:
    // Reads see this batch's earlier changes. Changes go through the operations below, which
    // act at the transaction's time and leave the commit to track them: the state and the store
    // themselves are not handed out, so no operation can skip or reorder that.
    const core::ClusterState& state() const { return *state_; }
    absl::StatusOr<core::SubmitOutcome> Submit(
        core::WorkloadSpec spec, std::string uid,
        std::optional<core::WorkloadOwner> owner = std::nullopt);
    absl::StatusOr<core::AdmitNowResult> AdmitNow(absl::string_view key, bool dry_run);
    absl::Status Finish(absl::string_view key, absl::string_view message,
                        absl::string_view reason = "");
    absl::Status Preempt(absl::string_view key, absl::string_view message);
    absl::Status ReleaseEvicted(absl::string_view key);
    // Ready, or (false) a workload that was ready lost a pod (waitForPodsReady.recoveryTimeout).
    absl::Status SetPodsReady(absl::string_view key, bool ready = true);
    absl::Status RecordCheckpoint(absl::string_view key, absl::Time at);
    absl::Status SetReclaimablePods(absl::string_view key,
                                    std::vector<std::pair<std::string, int32_t>> pods);
    absl::Status DeleteWorkload(absl::string_view key);
    // A configuration object: applied to the state and stored under `key` together.
    void ApplyObject(const ValidatedObject& validated, std::string key,
                     const v1::ConfigObject& object);
    // Deletes a configuration object from the state and, unless it stays terminating because
    // workloads still hold quota through it, from the store. Returns whether it is terminating.
    absl::StatusOr<bool> DeleteObject(core::ObjectKind kind, absl::string_view namespace_name,
                                      absl::string_view name, std::string key);
    // Stores a terminating object's deletion mark (`object` with its deletion timestamp) under
    // `key`, so a restart keeps it terminating; the state already holds it as such.
    void StoreTerminatingObject(std::string key, const v1::ConfigObject& object);
    // The topology inventory (docs/topology.md): applied to the state and stored together.
    // `node` and `pod` were validated. The store keeps the node as the state does (its
    // not-ready time filled in) and `stored` for the pod.
    absl::Status UpsertNode(core::NodeSpec node);
    absl::Status DeleteNode(absl::string_view name);
    absl::Status ReportPod(std::string name, std::string node, core::ResourceAmounts requests,
                           const v1::NodePod& stored);
    absl::Status RemovePod(absl::string_view name);
    absl::Status SetActive(absl::string_view key, bool active,
                           const std::optional<core::DeactivationCause>& cause = std::nullopt);
    absl::Status SetPriority(absl::string_view key, int32_t priority);
    // An admission check controller's word on one check of one workload, and its Active
    // condition (ClusterState's methods of the same names).
    absl::Status SetAdmissionCheckState(absl::string_view key, core::CheckStateUpdate update);
    absl::Status SetAdmissionCheckActive(absl::string_view name, bool active,
                                         absl::string_view reason, absl::string_view message);
    absl::Status SetMultiKueueClusterActive(absl::string_view name, bool active,
                                            absl::string_view reason, absl::string_view message);
    // Stores `object` under `key` as it is: the state already holds what it says (an
    // AdmissionCheck's Active condition, kept for a restart).
    void StoreObject(std::string key, const v1::ConfigObject& object);
    // What a workload's job reports (core/job_reports.cc).
    absl::Status BindOwner(absl::string_view key, core::WorkloadOwner owner);
    absl::Status MarkOutOfSync(absl::string_view key);
    absl::Status SetOnHold(absl::string_view key, bool on_hold, absl::string_view message);
    absl::Status SetWaitingForReplacementPods(absl::string_view key, bool waiting);
    absl::Status SetJobStatus(absl::string_view key, core::WorkloadPayload status);
    absl::Status MarkMultiKueueWinner(absl::string_view key, absl::string_view origin);
    absl::Status SetPayload(absl::string_view key, core::WorkloadPayload payload);
    absl::Status SetAdmissionGates(absl::string_view key, const std::optional<std::string>& gates);
    absl::Status SetPriorityBoost(absl::string_view key, const std::optional<std::string>& value);
    // The stored configuration object at `key`, this batch's own writes included.
    absl::StatusOr<std::optional<std::string>> ReadObject(const std::string& key) const;
    // Committed objects under `prefix` in key order, as of revision() (this batch's writes are
    // not committed yet, so they are not seen); `fn` returns false to stop.
    absl::Status ScanCommittedObjects(
        absl::string_view prefix,
        const std::function<bool(absl::string_view key, absl::string_view value)>& fn) const;
    absl::Time now() const { return now_; }
    // Store revision of the last commit before this batch.
    int64_t revision() const { return revision_; }
    // The revision this batch's changes commit under: what a workload changed by this
    // operation carries once it is durable.
    int64_t commit_revision() const { return revision_ + 1; }
    // The revision a read in this operation reflects: the batch's own commit revision when an
    // earlier operation of the batch already changed the state, so a client that lists and then
    // watches from that revision sees each change exactly once.
    int64_t read_revision() const {
      return (state_->HasUncommittedChanges() || !object_writes_.empty()) ? commit_revision()
                                                                          : revision_;
    }
    // Announce this workload as ADDED (rather than MODIFIED) on Watch.
    void MarkCreated(core::WorkloadId id) { created_.insert(id); }
    // Runs `fn` once the scheduling cycles of this round have run (and their changes are staged,
    // so each workload's resource_version is what it commits as), before the commit: for answers
    // that must tell what the round did. `preemptions` are the evictions its cycles issued. Not
    // run if this operation fails.
    using AfterCyclesFn = std::function<void(
        core::ClusterState& state, const std::vector<core::PreemptionDecision>& preemptions)>;
    void AfterCycles(AfterCyclesFn fn) { after_cycles_.push_back(std::move(fn)); }

   private:
    friend class AdmissionExecutor;
    core::ClusterState* state_ = nullptr;
    const storage::Store* store_ = nullptr;
    absl::Time now_;
    int64_t revision_ = 0;
    std::vector<std::pair<std::string, std::optional<std::string>>> object_writes_;
    std::set<core::WorkloadId> created_;
    std::vector<AfterCyclesFn> after_cycles_;
    // Configuration objects this batch erased from the state at once (for the observer).
    std::vector<core::ObjectName> erased_;
  };

  static absl::StatusOr<std::unique_ptr<AdmissionExecutor>> Open(storage::Store& store,
                                                                 const core::Clock& clock,
                                                                 core::SchedulerConfig config,
                                                                 Options options);
  ~AdmissionExecutor();
  AdmissionExecutor(const AdmissionExecutor&) = delete;
  AdmissionExecutor& operator=(const AdmissionExecutor&) = delete;

  // Runs `op` on the executor thread and returns its result once its writes are durable.
  // An op that fails must not have changed the state.
  template <typename T>
  absl::StatusOr<T> Run(std::function<absl::StatusOr<T>(Txn&)> op) {
    absl::StatusOr<T> result = absl::InternalError("operation did not run");
    absl::Status status = RunErased([&](Txn& txn) {
      result = op(txn);
      return result.status();
    });
    if (!status.ok()) return status;
    return result;
  }
  absl::Status RunStatus(std::function<absl::Status(Txn&)> op) { return RunErased(std::move(op)); }

  // Run without blocking the caller: `done` receives the result on the executor thread once the
  // operation's effects are durable (or it failed). `done` must be quick and must not call back
  // into the executor; it is how the gRPC callback handlers answer without parking a thread per
  // request.
  template <typename T>
  void RunAsync(std::function<absl::StatusOr<T>(Txn&)> op,
                std::function<void(absl::StatusOr<T>)> done) {
    auto result = std::make_shared<absl::StatusOr<T>>(absl::InternalError("operation did not run"));
    EnqueueErased(
        [op = std::move(op), result](Txn& txn) {
          *result = op(txn);
          return result->status();
        },
        [done = std::move(done), result](const absl::Status& status) {
          if (!status.ok()) {
            done(status);
          } else {
            done(std::move(*result));
          }
        });
  }

  // Where the last load of the state from the store spent its time (by the executor's clock).
  struct LoadStats {
    int64_t workloads = 0;
    // Configuration objects: scan, parse, apply.
    absl::Duration config;
    // The workload scan, with parsing on the helper threads alongside it.
    absl::Duration scan;
    // Parsing left when the scan ended, on every core.
    absl::Duration parse_tail;
    // Ordering by creation time.
    absl::Duration sort;
    // ClusterState::RestoreAll.
    absl::Duration restore;
  };
  LoadStats load_stats() const;

  // Replaces the state with one loaded from `from` (the same loader as Open), for an executor
  // that never writes (schedule_continuously off, no mutating operation) over a store whose
  // content moves forward underneath it: a follower's read view (services/ha/follower_reads.h).
  // The state is built on the calling thread while operations keep reading the old one; then,
  // on the executor thread between two operations, `install` runs (it makes the store answer
  // with `from`'s content) and the new state takes over, with revision() the store's.
  absl::Status Reload(const storage::Store& from, const std::function<void()>& install);

  // Runs scheduling cycles until one makes no progress (fires due timers first).
  absl::Status Settle();

  // Blocks until the store revision exceeds `after` or `deadline` passes; returns the latest.
  int64_t WaitForRevision(int64_t after, absl::Time deadline);
  int64_t revision() const;
  // Requests waiting for the executor thread to take them.
  int64_t queue_depth() const;
  storage::Store& store() { return store_; }
  const core::Clock& clock() const { return clock_; }
  // Fixed for the executor's life: readable from any thread.
  const core::SchedulerConfig& scheduler_config() const { return config_; }

 private:
  struct Operation {
    std::function<absl::Status(Txn&)> fn;
    absl::Status status;
    // Synchronous callers wait on `done`; asynchronous ones get `on_done` and the executor
    // deletes the operation after calling it.
    absl::Notification done;
    std::function<void(const absl::Status&)> on_done;
  };

  AdmissionExecutor(storage::Store& store, const core::Clock& clock, core::SchedulerConfig config,
                    Options options);
  // The process's real clock, the wall clock unless Options names another.
  static const core::Clock& RealWallClock();
  absl::Status RunErased(std::function<absl::Status(Txn&)> op);
  void EnqueueErased(std::function<absl::Status(Txn&)> op,
                     std::function<void(const absl::Status&)> on_done);
  // Reports an operation's outcome to its caller.
  static void Complete(Operation* op);
  absl::Status LoadState();
  // Loads a state from `store` (configuration objects, then every workload).
  absl::StatusOr<std::unique_ptr<core::ClusterState>> BuildState(const storage::Store& store,
                                                                 LoadStats& stats) const;
  void Loop();
  // One round: `batch`'s operations in order, the cycles they trigger (`continuing`: the last
  // round left cycles to run), one commit, then each operation completed.
  void RunRound(std::deque<Operation*>& batch, bool continuing);
  struct CycleResult {
    int cycles = 0;
    // A cycle made no progress: admission has settled.
    bool settled = false;
  };
  static constexpr int kMaxSettleCycles = 1000000;
  // Stops after max_cycles, or once wall time passes `stop_after` (after at least one cycle).
  CycleResult RunCycles(absl::Time now, int max_cycles,
                        absl::Time stop_after = absl::InfiniteFuture());
  void ReloadOrDie();
  // Moves the transaction's staged object writes and the state's changed workloads into a
  // batch to be committed as `revision`. `changed`: whether there was anything to commit (the
  // batch may be empty when workload changes are not recorded).
  storage::WriteBatch TakeChanges(Txn& txn, int64_t revision, bool& changed);
  // Commits the batches as consecutive revisions with one fsync; nothing for an empty list.
  absl::Status Commit(const std::vector<const storage::WriteBatch*>& batches);

  storage::Store& store_;
  const core::Clock& clock_;
  // Wall time, for measuring; see Options::wall_clock.
  const core::Clock& wall_clock_;
  const core::SchedulerConfig config_;
  const Options options_;
  // Touched only by the executor thread (and by Open before the thread starts).
  std::unique_ptr<core::ClusterState> state_;
  // Whom each workload concerned at its last commit, for the change records (follows state_).
  CheckControllerTracker check_controllers_;
  // Set by Reload's operation: the round's transaction must pick the new state up.
  bool state_replaced_ = false;
  // The preemptions the current round's cycles issued, kept only while an operation of the round
  // asked for them (Txn::AfterCycles). Executor thread only.
  bool collect_round_preemptions_ = false;
  std::vector<core::PreemptionDecision> round_preemptions_;
  // (revision, wall time of its commit): the last commit of each hundredth of
  // change_log_retention_age, oldest first, and when the newest such slice began: what the age
  // retention compacts by. Executor thread only.
  std::deque<std::pair<int64_t, absl::Time>> commit_samples_;
  absl::Time sample_slice_start_ = absl::InfinitePast();

  mutable absl::Mutex mu_;
  // Held for a whole round by callers in run_on_caller mode.
  absl::Mutex caller_round_mu_;
  std::deque<Operation*> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  int64_t revision_ ABSL_GUARDED_BY(mu_) = 0;
  // The last round stopped at max_cycles_per_round with work left.
  bool more_cycles_ ABSL_GUARDED_BY(mu_) = false;
  // Why the state could not be reloaded (Options::on_state_lost); OK while it is sound.
  absl::Status state_lost_ ABSL_GUARDED_BY(mu_);
  LoadStats load_stats_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace tollgate::engine
