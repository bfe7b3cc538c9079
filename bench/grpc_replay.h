#pragma once

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "bench/kueue_profile.h"
#include "bench/tollgated_launcher.h"

namespace tollgate::bench {

struct GrpcReplayOptions {
  // Give up (and report what finished) after this long.
  absl::Duration timeout = absl::Minutes(10);
  absl::Duration progress_every = absl::Seconds(5);
  // Channels (TCP connections) the Submit and Finish calls are spread over.
  int channels = 4;
};

// Kueue's performance-test runner against a live tollgated, in real time: applies the
// profile's ClusterQueues and LocalQueues, creates every workload at its scheduled offset with
// an asynchronous Submit, follows admissions on one Watch stream, calls Finish `runtime` after
// it observes an admission, and ReportStopped for an evicting workload (tollgated's default
// releases evictions at once, so a preempted workload shows up pending again and its timer is
// dropped). Times are the driver's own observations: creation when the Submit is sent,
// admission and finish when the Watch delivers them.
absl::StatusOr<ReplayRecorder::Summary> RunGrpcReplay(const TollgatedTarget& target,
                                                      const Profile& profile,
                                                      const GrpcReplayOptions& options);

}  // namespace tollgate::bench
