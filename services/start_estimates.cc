#include "services/start_estimates.h"

#include <utility>

#include "core/status_macros.h"
#include "services/api_validation.h"

namespace tollgate::services {

absl::StatusOr<std::shared_ptr<const core::StartEstimates>> StartEstimateCache::Get(
    const core::ClusterState& state, int64_t revision, bool state_settled, absl::Time now) {
  if (state_settled && cached_ != nullptr && cached_revision_ == revision &&
      now - cached_at_ <= kMaxAge) {
    return cached_;
  }
  ++computations_;
  TOLLGATE_ASSIGN_OR_RETURN(core::StartEstimates estimates,
                            core::EstimatePendingStarts(state, now, options_));
  auto shared = std::make_shared<const core::StartEstimates>(std::move(estimates));
  if (state_settled) {
    cached_ = shared;
    cached_revision_ = revision;
    cached_at_ = now;
  }
  return shared;
}

void StartEstimateToProto(const core::StartEstimate& estimate, int64_t revision,
                          v1::StartEstimate* out) {
  switch (estimate.kind) {
    case core::StartEstimate::Kind::kEstimated:
      out->set_kind(v1::StartEstimate::ESTIMATED);
      break;
    case core::StartEstimate::Kind::kNotBefore:
      out->set_kind(v1::StartEstimate::NOT_BEFORE);
      break;
    case core::StartEstimate::Kind::kUnknown:
      out->set_kind(v1::StartEstimate::UNKNOWN);
      break;
  }
  if (estimate.kind != core::StartEstimate::Kind::kUnknown) {
    codec::TimeToProto(estimate.likely, out->mutable_likely());
  }
  if (estimate.late.has_value()) codec::TimeToProto(*estimate.late, out->mutable_late());
  out->set_basis(estimate.basis);
  out->set_reason(estimate.reason);
  out->set_revision(revision);
}

}  // namespace tollgate::services
