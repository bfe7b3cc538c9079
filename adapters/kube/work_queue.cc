#include "adapters/kube/work_queue.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/json_log.h"

namespace tollgate::kube {

void WorkQueue::AddLocked(const ObjectKey& key) {
  if (processing_.count(key) > 0) {
    dirty_.insert(key);
    return;
  }
  if (queued_.insert(key).second) queue_.push_back(key);
}

void WorkQueue::Add(const ObjectKey& key) {
  absl::MutexLock lock(&mu_);
  if (shut_down_) return;
  AddLocked(key);
}

void WorkQueue::AddRateLimited(const ObjectKey& key) {
  absl::MutexLock lock(&mu_);
  if (shut_down_) return;
  const int failures = failures_[key]++;
  absl::Duration delay = min_backoff_;
  for (int i = 0; i < failures && delay < max_backoff_; ++i) delay *= 2;
  delay = std::min(delay, max_backoff_);
  delayed_.emplace(clock_.Now() + delay, key);
}

void WorkQueue::AddAt(const ObjectKey& key, absl::Time at) {
  absl::MutexLock lock(&mu_);
  if (shut_down_) return;
  delayed_.emplace(at, key);
}

void WorkQueue::Forget(const ObjectKey& key) {
  absl::MutexLock lock(&mu_);
  failures_.erase(key);
}

void WorkQueue::PromoteDueLocked(absl::Time now) {
  while (!delayed_.empty() && delayed_.begin()->first <= now) {
    AddLocked(delayed_.begin()->second);
    delayed_.erase(delayed_.begin());
  }
}

std::optional<ObjectKey> WorkQueue::Get() {
  absl::MutexLock lock(&mu_);
  // Bounded by shutdown: every wait ends at the next delayed key or after a second.
  while (!shut_down_) {
    PromoteDueLocked(clock_.Now());
    if (!queue_.empty()) {
      ObjectKey key = queue_.front();
      queue_.pop_front();
      queued_.erase(key);
      processing_.insert(key);
      return key;
    }
    absl::Duration wait = absl::Seconds(1);
    if (!delayed_.empty()) {
      wait = std::clamp(delayed_.begin()->first - clock_.Now(), absl::Milliseconds(1), wait);
    }
    mu_.AwaitWithTimeout(absl::Condition(&WorkQueue::ReadyLocked, this), wait);
  }
  return std::nullopt;
}

bool WorkQueue::ReadyLocked(WorkQueue* queue) {
  return queue->shut_down_ || !queue->queue_.empty();
}

void WorkQueue::Done(const ObjectKey& key) {
  absl::MutexLock lock(&mu_);
  processing_.erase(key);
  if (dirty_.erase(key) > 0 && !shut_down_) AddLocked(key);
}

void WorkQueue::ShutDown() {
  absl::MutexLock lock(&mu_);
  shut_down_ = true;
}

size_t WorkQueue::Size() const {
  absl::MutexLock lock(&mu_);
  return queued_.size() + delayed_.size() + processing_.size();
}

void DrainWorkQueue(WorkQueue& queue,
                    const std::function<absl::Status(const ObjectKey&)>& reconcile,
                    absl::string_view what) {
  while (std::optional<ObjectKey> key = queue.Get()) {
    absl::Status status = reconcile(*key);
    if (status.ok()) {
      queue.Forget(*key);
    } else {
      common::Log("warning", absl::StrCat(what, " failed"),
                  {{"object", key->ToString()}, {"error", status.ToString()}});
      queue.AddRateLimited(*key);
    }
    queue.Done(*key);
  }
}

}  // namespace tollgate::kube
