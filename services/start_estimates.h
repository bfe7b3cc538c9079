#pragma once

// Start-time estimates as the API serves them: computed by core/start_estimator.h and cached
// per store revision, so a describe, a wide listing and a visibility page at one revision share
// one forward simulation.

#include <cstdint>
#include <memory>
#include <optional>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/cluster_state.h"
#include "core/start_estimator.h"
#include "tollgate/v1/service.pb.h"

namespace tollgate::services {

// The latest revision's estimates for every pending workload. Not thread-safe: TollgateApi
// uses it only inside executor operations, which all run on the executor thread.
class StartEstimateCache {
 public:
  explicit StartEstimateCache(core::StartEstimateOptions options = {})
      : options_(std::move(options)) {}

  // The estimates for `state` at `revision`, computed at `now` unless already cached for that
  // revision. `state_settled` is false when the state holds changes not yet committed under
  // `revision` (an earlier operation of the same batch): those are computed but not cached.
  absl::StatusOr<std::shared_ptr<const core::StartEstimates>> Get(const core::ClusterState& state,
                                                                  int64_t revision,
                                                                  bool state_settled,
                                                                  absl::Time now);

  const core::StartEstimateOptions& options() const { return options_; }
  // How many times Get computed rather than answered from the cache (tests, metrics).
  int64_t computations() const { return computations_; }

 private:
  core::StartEstimateOptions options_;
  // Estimates older than this are recomputed even at the same revision: a running workload's
  // expected end moves as it runs (and past its expected end).
  static constexpr absl::Duration kMaxAge = absl::Minutes(1);
  int64_t cached_revision_ = -1;
  absl::Time cached_at_ = absl::InfinitePast();
  // shared_ptr: a response being built keeps the estimates it reads while a newer revision
  // replaces the cache entry.
  std::shared_ptr<const core::StartEstimates> cached_;
  int64_t computations_ = 0;
};

void StartEstimateToProto(const core::StartEstimate& estimate, int64_t revision,
                          v1::StartEstimate* out);

}  // namespace tollgate::services
