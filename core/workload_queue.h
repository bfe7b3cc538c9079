#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "core/workload.h"

namespace tollgate::core {

// Where a pending workload sorts in its ClusterQueue: higher priority first, then the older
// queue-order timestamp, then submission order. The sticky rank puts a BestEffortFIFO queue's
// in-progress preemptor in front, as Kueue does, so the quota it freed is not taken by others.
// The priority is the effective one (core/priority_boost.h), which may leave int32's range.
struct QueueKey {
  QueueKey() = default;
  // `priority` within +-2^38 (an int32 priority plus an int32 boost is).
  QueueKey(int sticky_rank, int64_t priority, absl::Time timestamp, WorkloadId id)
      : rank_(Rank(sticky_rank, priority)), timestamp(timestamp), id(id) {}

  int sticky_rank() const { return rank_ >= kStickyStep / 2 ? 1 : 0; }
  int64_t priority() const { return (sticky_rank() == 1 ? kStickyStep : 0) - rank_; }
  void set_sticky_rank(int sticky_rank) { rank_ = Rank(sticky_rank, priority()); }

  friend bool operator<(const QueueKey& a, const QueueKey& b) {
    if (a.rank_ != b.rank_) return a.rank_ < b.rank_;
    if (a.timestamp != b.timestamp) return a.timestamp < b.timestamp;
    return a.id < b.id;
  }
  friend bool operator==(const QueueKey& a, const QueueKey& b) { return !(a < b) && !(b < a); }

 private:
  // The sticky rank and the priority in one integer, ascending in queue order: a 64-bit
  // priority beside the rank would make the key 40 bytes instead of 32, in every queue's sets
  // and index (docs/performance.md's bytes per pending workload).
  static constexpr int64_t kStickyStep = int64_t{1} << 40;
  static int64_t Rank(int sticky_rank, int64_t priority) {
    return sticky_rank * kStickyStep - priority;
  }
  int64_t rank_ = kStickyStep;

 public:
  absl::Time timestamp;
  WorkloadId id = 0;
};
static_assert(sizeof(QueueKey) == 32, "every pending workload has one in its queue's sets");

// The pending workloads of one ClusterQueue, split as in Kueue into the active heap (candidates
// for the next cycle's head) and the inadmissible set (parked until quota frees up in the
// cohort tree). Ordered containers keep every decision deterministic. Not thread-safe.
class WorkloadQueue {
 public:
  WorkloadQueue() = default;
  // The head record holds a position in the active set: a copy records its own.
  WorkloadQueue(const WorkloadQueue& other);
  WorkloadQueue& operator=(const WorkloadQueue& other);

  // Adds to the active set (or moves it there). `key`'s sticky rank is set by the queue.
  void PushActive(QueueKey key);
  void PushInadmissible(QueueKey key);
  // PushActive (or PushInadmissible) of every key, for workloads with distinct ids: sorts them
  // first so the set is built by appending rather than by one search per key.
  void PushAll(std::vector<QueueKey> keys, bool inadmissible);
  void Remove(WorkloadId id);
  bool Contains(WorkloadId id) const { return where_.contains(id); }
  bool IsInadmissible(WorkloadId id) const;

  // The head of the active set, if any: read from the head record, not from the set.
  std::optional<WorkloadId> Head() const {
    if (!has_head_) return std::nullopt;
    return head_key_.id;
  }
  // The head's key (its priority and queue-order timestamp), or null when the active set is
  // empty.
  const QueueKey* HeadKey() const { return has_head_ ? &head_key_ : nullptr; }
  // Asks for what removing `id` reads and writes when it is the head (an admission): its entry
  // in the id index and the set's leaf holding the head. (Abseil built hardened, as Debian's
  // is, checks the position against the leaf's header: that line is read here, not prefetched.)
  void PrefetchHeadRemoval(WorkloadId id) const;
  // Moves the workload from the active set to the inadmissible one.
  void Park(WorkloadId id);
  // Moves every inadmissible workload whose backoff has expired back to the active set.
  // Returns how many moved.
  int RequeueInadmissible(absl::Time now, const std::function<absl::Time(WorkloadId)>& ready_at);

  // Marks the BestEffortFIFO preemptor that stays at the head until admitted (or clears it).
  void SetSticky(std::optional<WorkloadId> id);
  std::optional<WorkloadId> sticky() const { return sticky_; }
  // Kueue's preemptor workload (any queueing strategy): the last of this queue's workloads
  // requeued waiting for its victims, until it leaves the queue or its spec changes (Kueue
  // compares the workload's generation with the one it was evaluated at).
  void SetPreemptor(std::optional<WorkloadId> id) { preemptor_ = id; }
  std::optional<WorkloadId> preemptor() const { return preemptor_; }

  int64_t size() const { return static_cast<int64_t>(where_.size()); }
  int64_t active_size() const { return static_cast<int64_t>(active_.size()); }
  // The active set in queue order.
  std::vector<WorkloadId> ActiveInOrder() const;
  // Every pending workload in queue order (active and inadmissible merged), as Kueue's
  // visibility API lists them.
  std::vector<WorkloadId> InOrder() const;

 private:
  struct Entry {
    QueueKey key;
    bool inadmissible = false;
  };
  QueueKey Normalized(QueueKey key) const;
  // Sets the head record from the active set, after any change to it (a change can move the
  // set's values between nodes, so the recorded position is taken again).
  void RefreshHead();

  // The head record, first in the object: a cycle reads every ClusterQueue's head, and these
  // lines are all it reads of the queue, where the set's root and leftmost leaf were two more
  // cache misses per ClusterQueue. `head_` is the head's position in `active_` (valid while
  // `has_head_`), so an admission erases it without reaching the leaf through the root.
  bool has_head_ = false;
  QueueKey head_key_;
  absl::btree_set<QueueKey>::iterator head_;
  absl::btree_set<QueueKey> active_;
  absl::btree_set<QueueKey> inadmissible_;
  absl::flat_hash_map<WorkloadId, Entry> where_;
  std::optional<WorkloadId> sticky_;
  std::optional<WorkloadId> preemptor_;
};

}  // namespace tollgate::core
