#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "bench/tollgated_launcher.h"

namespace tollgate::bench {

struct UnaryFloor {
  int64_t calls = 0;
  double seconds = 0;
  double per_second() const { return seconds > 0 ? static_cast<double>(calls) / seconds : 0; }
};

// The time the server needs for `calls` unary RPCs that do nothing: gRPC health Checks sent
// asynchronously over `channels` connections with at most `max_in_flight` outstanding, as fast
// as they complete. A replay that makes that many Submit, Finish and ReportStopped calls cannot
// end sooner on the same machine, whatever the service does inside them.
absl::StatusOr<UnaryFloor> MeasureUnaryFloor(const TollgatedTarget& target, int64_t calls,
                                             int channels, int max_in_flight);

}  // namespace tollgate::bench
