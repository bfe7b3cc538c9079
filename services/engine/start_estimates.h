#pragma once

// Start-time estimates as the API serves them: computed by core/start_estimator.h from a
// snapshot the executor thread hands over, on the thread of the request that asked (never the
// executor's), and cached per store revision, so a describe, a wide listing and a visibility page
// at one revision share one forward simulation. docs/start-estimates.md has the why.

#include <cstdint>
#include <memory>
#include <optional>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "core/cluster_state.h"
#include "core/incremental_start_estimator.h"
#include "core/start_estimator.h"
#include "tollgate/v1/service.pb.h"

namespace tollgate::engine {

// The latest revision's estimates for every pending workload. Prepare and Snapshot run on the
// executor thread (they read the live state); Resolve runs on any other thread. Thread-safe in
// that split.
class StartEstimateCache {
 public:
  explicit StartEstimateCache(core::StartEstimateOptions options = {})
      : options_(options), estimator_(std::move(options), kMaxAge) {}

  // What a read at `revision` needs to answer with estimates: the cached estimates when they
  // are current, else a snapshot to compute them from.
  struct Ticket {
    int64_t revision = 0;
    // False when the state held changes not yet committed under `revision` (an earlier
    // operation of the same batch): computed but not cached.
    bool cacheable = false;
    std::shared_ptr<const core::StartEstimates> ready;
    std::shared_ptr<const core::EstimateSnapshot> snapshot;
  };

  // Executor thread. Cheap: a cache lookup, or a snapshot that copies only the workloads changed
  // since the previous one.
  Ticket Prepare(const core::ClusterState& state, int64_t revision, bool state_settled,
                 absl::Time now);
  // Executor thread: a snapshot of `state` (a dry-run submission's estimate starts from one).
  std::shared_ptr<const core::EstimateSnapshot> Snapshot(const core::ClusterState& state,
                                                         int64_t revision, bool state_settled,
                                                         absl::Time now);

  // Any thread but the executor's: the ticket's estimates, computed from its snapshot unless
  // ready or cached meanwhile. One computation runs at a time (each is CPU-heavy); a reader of
  // a revision being computed waits for it and shares its result. A computation simulates only
  // the independent trees whose inputs changed since the previous one (or aged past kMaxAge).
  absl::StatusOr<std::shared_ptr<const core::StartEstimates>> Resolve(const Ticket& ticket);

  const core::StartEstimateOptions& options() const { return options_; }
  // How many times Resolve computed rather than answered from the cache (tests, metrics).
  int64_t computations() const {
    absl::MutexLock lock(&mu_);
    return computations_;
  }
  // How many independent trees those computations simulated (the others were reused).
  int64_t trees_simulated() const {
    absl::MutexLock lock(&mu_);
    return trees_simulated_;
  }

 private:
  // A fresh cached entry for `revision` at `now`, or null.
  std::shared_ptr<const core::StartEstimates> CachedLocked(int64_t revision, absl::Time now) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const core::StartEstimateOptions options_;
  // Estimates older than this are recomputed even at the same revision: a running workload's
  // expected end moves as it runs (and past its expected end).
  static constexpr absl::Duration kMaxAge = absl::Minutes(1);

  // Executor thread only: the latest snapshot, whose unchanged workload copies the next one
  // shares. Holding it keeps one copy of every pending or admitted workload alive.
  std::shared_ptr<const core::EstimateSnapshot> last_snapshot_;
  int64_t last_snapshot_revision_ = -1;
  bool last_snapshot_settled_ = false;

  // Held for a whole computation, so one runs at a time.
  absl::Mutex compute_mu_;
  // Each tree's latest estimates with what they read, so a new revision re-simulates only the
  // trees it changed.
  core::IncrementalStartEstimator estimator_ ABSL_GUARDED_BY(compute_mu_);
  mutable absl::Mutex mu_;
  int64_t cached_revision_ ABSL_GUARDED_BY(mu_) = -1;
  // shared_ptr: a response being built keeps the estimates it reads while a newer revision
  // replaces the cache entry.
  std::shared_ptr<const core::StartEstimates> cached_ ABSL_GUARDED_BY(mu_);
  int64_t computations_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t trees_simulated_ ABSL_GUARDED_BY(mu_) = 0;
};

void StartEstimateToProto(const core::StartEstimate& estimate, int64_t revision,
                          v1::StartEstimate* out);

}  // namespace tollgate::engine
