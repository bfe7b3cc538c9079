#include "common/mutex_checks.h"

#include "absl/synchronization/mutex.h"

namespace tollgate::common {

void DisableMutexDeadlockDetection() {
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
}

}  // namespace tollgate::common
