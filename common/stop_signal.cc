#include "common/stop_signal.h"

#include <utility>

namespace tollgate::common {

void StopSignal::Stop() {
  absl::MutexLock lock(&mu_);
  if (stopped_) return;
  stopped_ = true;
  for (auto& [id, fn] : callbacks_) fn();
}

bool StopSignal::stopped() const {
  absl::MutexLock lock(&mu_);
  return stopped_;
}

bool StopSignal::WaitFor(absl::Duration timeout) const {
  absl::MutexLock lock(&mu_);
  mu_.AwaitWithTimeout(absl::Condition(&stopped_), timeout);
  return stopped_;
}

int StopSignal::AddCallback(std::function<void()> fn) const {
  absl::MutexLock lock(&mu_);
  const int id = next_id_++;
  if (stopped_) {
    fn();
  } else {
    callbacks_.emplace(id, std::move(fn));
  }
  return id;
}

void StopSignal::RemoveCallback(int id) const {
  absl::MutexLock lock(&mu_);
  callbacks_.erase(id);
}

}  // namespace tollgate::common
