#pragma once

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "core/clock.h"

namespace tollgate::core {

// Wall-clock time for the running service. Everything else takes a core::Clock so tests and
// scenarios can substitute a simulated one; this is the only place outside cmd/ that reads the
// real clock. Thread-safe.
class RealClock final : public core::Clock {
 public:
  absl::Time Now() const override { return absl::Now(); }
};

}  // namespace tollgate::core
