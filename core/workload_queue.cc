#include "core/workload_queue.h"

#include <algorithm>

#include "core/prefetch.h"

namespace tollgate::core {

WorkloadQueue::WorkloadQueue(const WorkloadQueue& other)
    : active_(other.active_),
      inadmissible_(other.inadmissible_),
      where_(other.where_),
      sticky_(other.sticky_),
      preemptor_(other.preemptor_) {
  RefreshHead();
}

WorkloadQueue& WorkloadQueue::operator=(const WorkloadQueue& other) {
  if (this == &other) return *this;
  active_ = other.active_;
  inadmissible_ = other.inadmissible_;
  where_ = other.where_;
  sticky_ = other.sticky_;
  preemptor_ = other.preemptor_;
  RefreshHead();
  return *this;
}

void WorkloadQueue::RefreshHead() {
  has_head_ = !active_.empty();
  if (!has_head_) return;
  head_ = active_.begin();
  head_key_ = *head_;
}

void WorkloadQueue::PrefetchHeadRemoval(WorkloadId id) const {
  where_.prefetch(id);
  if (!has_head_ || head_key_.id != id) return;
  // The head is the leftmost leaf's first value: the leaf's header line (just before it) and
  // the values the erase shifts down.
  const char* value = reinterpret_cast<const char*>(&*head_);
  PrefetchLinesForWrite(value - kCacheLineBytes, 4 * kCacheLineBytes);
}

QueueKey WorkloadQueue::Normalized(QueueKey key) const {
  key.set_sticky_rank((sticky_.has_value() && *sticky_ == key.id) ? 0 : 1);
  return key;
}

void WorkloadQueue::PushActive(QueueKey key) {
  Remove(key.id);
  key = Normalized(key);
  active_.insert(key);
  RefreshHead();
  where_[key.id] = Entry{key, false};
}

void WorkloadQueue::PushInadmissible(QueueKey key) {
  Remove(key.id);
  key = Normalized(key);
  inadmissible_.insert(key);
  where_[key.id] = Entry{key, true};
}

namespace {

// Restored workloads arrive in creation order, which is queue order within one priority: the
// keys are a few ascending runs (one per priority, say). Merging those is linear; anything
// more shuffled is sorted from scratch.
void SortMostlySorted(std::vector<QueueKey>& keys) {
  constexpr size_t kMaxRuns = 16;
  std::vector<size_t> run_ends;
  for (size_t i = 1; i < keys.size(); ++i) {
    if (keys[i] < keys[i - 1]) {
      run_ends.push_back(i);
      if (run_ends.size() >= kMaxRuns) {
        std::sort(keys.begin(), keys.end());
        return;
      }
    }
  }
  run_ends.push_back(keys.size());
  for (size_t r = 1; r < run_ends.size(); ++r) {
    std::inplace_merge(keys.begin(), keys.begin() + static_cast<ptrdiff_t>(run_ends[r - 1]),
                       keys.begin() + static_cast<ptrdiff_t>(run_ends[r]));
  }
}

}  // namespace

void WorkloadQueue::PushAll(std::vector<QueueKey> keys, bool inadmissible) {
  const bool was_empty = where_.empty();
  where_.reserve(where_.size() + keys.size());
  for (QueueKey& key : keys) {
    if (!was_empty) Remove(key.id);
    key = Normalized(key);
  }
  SortMostlySorted(keys);
  absl::btree_set<QueueKey>& set = inadmissible ? inadmissible_ : active_;
  for (const QueueKey& key : keys) {
    // The hint is right whenever the key sorts after everything already there.
    set.insert(set.end(), key);
    where_[key.id] = Entry{key, inadmissible};
  }
  if (!inadmissible) RefreshHead();
}

void WorkloadQueue::Remove(WorkloadId id) {
  // An admitted workload is its queue's head: erased at the head record's position, the set is
  // neither searched from its root down (at depth, each level of that search was a cache miss)
  // nor entered through the root's pointer to the leftmost leaf. The value after it, in the
  // same leaf (its values shifted down) unless the erase rebalanced, is the new head.
  if (has_head_ && head_key_.id == id) {
    where_.erase(id);
    head_ = active_.erase(head_);
    has_head_ = head_ != active_.end();
    if (has_head_) head_key_ = *head_;
    return;
  }
  auto it = where_.find(id);
  if (it == where_.end()) return;
  const bool inadmissible = it->second.inadmissible;
  absl::btree_set<QueueKey>& set = inadmissible ? inadmissible_ : active_;
  if (!set.empty() && *set.begin() == it->second.key) {
    set.erase(set.begin());
  } else {
    set.erase(it->second.key);
  }
  where_.erase(it);
  if (!inadmissible) RefreshHead();
}

bool WorkloadQueue::IsInadmissible(WorkloadId id) const {
  auto it = where_.find(id);
  return it != where_.end() && it->second.inadmissible;
}

void WorkloadQueue::Park(WorkloadId id) {
  auto it = where_.find(id);
  if (it == where_.end() || it->second.inadmissible) return;
  const QueueKey key = it->second.key;
  active_.erase(key);
  RefreshHead();
  inadmissible_.insert(key);
  it->second.inadmissible = true;
}

int WorkloadQueue::RequeueInadmissible(absl::Time now,
                                       const std::function<absl::Time(WorkloadId)>& ready_at) {
  int moved = 0;
  for (auto it = inadmissible_.begin(); it != inadmissible_.end();) {
    if (ready_at(it->id) > now) {
      ++it;
      continue;
    }
    const QueueKey key = *it;
    it = inadmissible_.erase(it);
    active_.insert(key);
    where_[key.id].inadmissible = false;
    ++moved;
  }
  if (moved > 0) RefreshHead();
  return moved;
}

void WorkloadQueue::SetSticky(std::optional<WorkloadId> id) {
  if (sticky_ == id) return;
  std::optional<WorkloadId> previous = sticky_;
  sticky_ = id;
  for (std::optional<WorkloadId> changed : {previous, id}) {
    if (!changed.has_value()) continue;
    auto it = where_.find(*changed);
    if (it == where_.end()) continue;
    const bool inadmissible = it->second.inadmissible;
    const QueueKey key = it->second.key;
    if (inadmissible) {
      PushInadmissible(key);
    } else {
      PushActive(key);
    }
  }
}

std::vector<WorkloadId> WorkloadQueue::ActiveInOrder() const {
  std::vector<WorkloadId> out;
  out.reserve(active_.size());
  for (const QueueKey& k : active_) out.push_back(k.id);
  return out;
}

std::vector<WorkloadId> WorkloadQueue::InOrder() const {
  // Both sets are ordered by the same key, so merging them is the queue order (a visibility
  // page asks for it, so it should not cost a sort of the whole queue).
  std::vector<WorkloadId> out;
  out.reserve(where_.size());
  auto active = active_.begin();
  auto inadmissible = inadmissible_.begin();
  while (active != active_.end() && inadmissible != inadmissible_.end()) {
    out.push_back(*inadmissible < *active ? (inadmissible++)->id : (active++)->id);
  }
  for (; active != active_.end(); ++active) out.push_back(active->id);
  for (; inadmissible != inadmissible_.end(); ++inadmissible) out.push_back(inadmissible->id);
  return out;
}

}  // namespace tollgate::core
