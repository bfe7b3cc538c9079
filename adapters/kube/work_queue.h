#pragma once

#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "adapters/kube/job_controller.h"
#include "core/clock.h"

namespace tollgate::kube {

// client-go's rate-limited work queue, reduced to what the adapter needs: a key is queued at
// most once, is never handed to two workers at once (an Add while it is being processed
// re-queues it after Done), and failed keys come back after an exponential backoff. Thread-safe.
class WorkQueue {
 public:
  WorkQueue(const core::Clock& clock, absl::Duration min_backoff, absl::Duration max_backoff)
      : clock_(clock), min_backoff_(min_backoff), max_backoff_(max_backoff) {}

  void Add(const ObjectKey& key);
  // Re-queues `key` after its next backoff step.
  void AddRateLimited(const ObjectKey& key);
  // Queues `key` at `at` (now if past), leaving its backoff alone: controller-runtime's
  // RequeueAfter.
  void AddAt(const ObjectKey& key, absl::Time at);
  // Resets `key`'s backoff after a success.
  void Forget(const ObjectKey& key);
  // Blocks for the next key; nullopt once ShutDown was called.
  std::optional<ObjectKey> Get();
  // Marks `key` processed; re-queues it if it was added meanwhile.
  void Done(const ObjectKey& key);
  void ShutDown();
  // Keys queued or waiting for their backoff, and keys being processed.
  size_t Size() const;

 private:
  void PromoteDueLocked(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void AddLocked(const ObjectKey& key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // For Await: absl::Condition calls it with the lock held, which the analysis cannot see.
  static bool ReadyLocked(WorkQueue* queue) ABSL_NO_THREAD_SAFETY_ANALYSIS;

  const core::Clock& clock_;
  const absl::Duration min_backoff_;
  const absl::Duration max_backoff_;
  mutable absl::Mutex mu_;
  std::deque<ObjectKey> queue_ ABSL_GUARDED_BY(mu_);
  std::set<ObjectKey> queued_ ABSL_GUARDED_BY(mu_);
  std::set<ObjectKey> processing_ ABSL_GUARDED_BY(mu_);
  std::set<ObjectKey> dirty_ ABSL_GUARDED_BY(mu_);
  std::multimap<absl::Time, ObjectKey> delayed_ ABSL_GUARDED_BY(mu_);
  std::map<ObjectKey, int> failures_ ABSL_GUARDED_BY(mu_);
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
};

// A worker: takes keys from `queue` until it shuts down and reconciles each; a success resets
// the key's backoff, a failure is logged (`what` names the work, e.g. "reconcile") and the key
// comes back after its backoff.
void DrainWorkQueue(WorkQueue& queue,
                    const std::function<absl::Status(const ObjectKey&)>& reconcile,
                    absl::string_view what);

}  // namespace tollgate::kube
