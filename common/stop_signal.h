#pragma once

#include <functional>
#include <map>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace tollgate::common {

// A one-way "shut down" flag the adapter's threads poll, sleep on and hang cancellations on
// (an open watch registers a callback that cancels its call). Thread-safe.
class StopSignal {
 public:
  void Stop();
  bool stopped() const;
  // Sleeps up to `timeout` or until Stop; returns stopped().
  bool WaitFor(absl::Duration timeout) const;

  // Runs `fn` on Stop, or at once when already stopped, until RemoveCallback(id). Callbacks
  // run under the signal's lock so a removal never races a running callback: they must be
  // quick and must not call back into this object.
  // Const because hanging a canceller on the signal does not change it.
  int AddCallback(std::function<void()> fn) const;
  void RemoveCallback(int id) const;

 private:
  mutable absl::Mutex mu_;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  mutable int next_id_ ABSL_GUARDED_BY(mu_) = 0;
  mutable std::map<int, std::function<void()>> callbacks_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tollgate::common
