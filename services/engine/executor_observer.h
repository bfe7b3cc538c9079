#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "core/cluster_state.h"
#include "core/cycle_plan.h"

namespace tollgate::engine {

// What the admission executor reports as it works, for metrics. Every call is made on the
// executor thread in the middle of its loop: implementations must be quick (aggregate and
// record, no I/O, no waiting) and must not call back into the executor.
class ExecutorObserver {
 public:
  virtual ~ExecutorObserver() = default;

  // The executor took `operations` queued requests in one round.
  virtual void OnRound(int64_t operations) = 0;
  // A cycle was planned and is about to be applied: `state` is still as the plan saw it
  // (victims still hold their admission, admitted workloads still wait in their queue).
  virtual void OnPlan(const core::CyclePlan& plan, const core::ClusterState& state,
                      absl::Time now) = 0;
  // A cycle was planned and applied in `elapsed` wall time.
  virtual void OnCycle(const core::CyclePlan& plan, absl::Duration elapsed) = 0;
  // `wl` changed in this round and is about to be committed (once per commit that includes it),
  // with `now` the round's time.
  virtual void OnWorkloadCommitted(const core::Workload& wl, const core::ClusterState& state,
                                   absl::Time now) = 0;
  // The workload with `key` was deleted in this round and its deletion is about to be
  // committed.
  virtual void OnWorkloadDeleted(const core::WorkloadKey& /*key*/) {}
  // A configuration object left the state in this round (deleted at once, or terminating and
  // finalized with its last workload), about to be committed: what is recorded under its name
  // goes with it, as Kueue clears a deleted LocalQueue's and Cohort's metrics.
  virtual void OnObjectErased(const core::ObjectName& object) = 0;
  // A group commit of `batches` store batches finished in `elapsed` wall time.
  virtual void OnCommit(int64_t batches, absl::Duration elapsed, const absl::Status& status) = 0;
};

}  // namespace tollgate::engine
