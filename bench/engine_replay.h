#pragma once

#include "absl/status/statusor.h"
#include "bench/kueue_profile.h"

namespace tollgate::bench {

struct EngineReplayOptions {
  // Print a progress line every this much virtual time (zero: never).
  absl::Duration progress_every = absl::ZeroDuration();
};

// Replays the profile through the scheduling core alone, in virtual time: creations and the
// ends of runtimes are events on a SimulatedClock; after each instant's events the state is
// settled (cycles until one makes no progress) and what was admitted gets its finish event.
// Evictions release at once (as tollgated's default), so a preempted workload just requeues
// and its run restarts when admitted again. The result is the bound a service around this
// engine could reach with zero RPC, storage and watch latency.
absl::StatusOr<ReplayRecorder::Summary> RunEngineReplay(const Profile& profile,
                                                        const EngineReplayOptions& options);

}  // namespace tollgate::bench
