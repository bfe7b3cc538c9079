#pragma once

#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include "absl/container/btree_set.h"
#include "absl/time/time.h"
#include "core/workload.h"

namespace tollgate::core {

// The time-based transitions of a workload.
enum class TimerKind {
  // An evicting workload's checkpoint grace ends: its quota is released without the adapter.
  kEvictionGrace,
  // An admitted workload's pods were not ready within waitForPodsReady.timeout.
  kPodsReadyTimeout,
  // A workload that was ready lost a pod and did not recover within recoveryTimeout.
  kPodsRecoveryTimeout,
  // A requeued workload's backoff ends: it may be a head again.
  kBackoffExpired,
  // An admitted workload's preemption rate-limit protection ends.
  kPreemptionProtectionEnds,
  // An admitted workload reaches its spec.maximumExecutionTimeSeconds.
  kMaximumExecutionTime,
  // A finished workload's retention (objectRetentionPolicies.workloads.afterFinished) ends: it
  // is deleted.
  kFinishedRetentionEnds,
  // A failed node's replacement may be tried again (TASFailedNodeReplacementFailFast off).
  kSecondPassRetry,
};

struct Timer {
  absl::Time at;
  TimerKind kind;
  WorkloadId id;
};

// Pending timers of nodes: when a not-ready node's fixed failure delay runs out
// (core/node_failure_rule.h, kNodeFailureDelay). Hints as TimerSet's, keyed by node name.
class NodeTimerSet {
 public:
  void Arm(absl::Time at, std::string node) { timers_.insert({at, std::move(node)}); }
  std::optional<std::pair<absl::Time, std::string>> PopDue(absl::Time now) {
    if (timers_.empty() || timers_.begin()->first > now) return std::nullopt;
    std::pair<absl::Time, std::string> due = *timers_.begin();
    timers_.erase(timers_.begin());
    return due;
  }
  std::optional<absl::Time> Next() const {
    if (timers_.empty()) return std::nullopt;
    return timers_.begin()->first;
  }

 private:
  absl::btree_set<std::pair<absl::Time, std::string>> timers_;
};

// Pending timers, earliest first (then by kind and id, so firing order is deterministic).
// Entries are hints: the owner re-checks each against the workload when it fires, so stale ones
// are harmless and are never cancelled. Not thread-safe.
class TimerSet {
 public:
  void Arm(absl::Time at, TimerKind kind, WorkloadId id) { timers_.insert({at, kind, id}); }
  // Removes and returns the earliest timer due at `now`, if any.
  std::optional<Timer> PopDue(absl::Time now) {
    if (timers_.empty() || std::get<0>(*timers_.begin()) > now) return std::nullopt;
    const auto [at, kind, id] = *timers_.begin();
    timers_.erase(timers_.begin());
    return Timer{at, kind, id};
  }
  std::optional<absl::Time> Next() const {
    if (timers_.empty()) return std::nullopt;
    return std::get<0>(*timers_.begin());
  }

 private:
  absl::btree_set<std::tuple<absl::Time, TimerKind, WorkloadId>> timers_;
};

}  // namespace tollgate::core
