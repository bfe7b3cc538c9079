#include "services/engine/start_estimates.h"

#include <utility>

#include "core/status_macros.h"
#include "services/api/api_validation.h"

namespace tollgate::engine {

std::shared_ptr<const core::StartEstimates> StartEstimateCache::CachedLocked(int64_t revision,
                                                                             absl::Time now) const {
  if (cached_ == nullptr || cached_revision_ != revision) return nullptr;
  if (now - cached_->now > kMaxAge) return nullptr;
  return cached_;
}

StartEstimateCache::Ticket StartEstimateCache::Prepare(const core::ClusterState& state,
                                                       int64_t revision, bool state_settled,
                                                       absl::Time now) {
  Ticket ticket;
  ticket.revision = revision;
  ticket.cacheable = state_settled;
  if (state_settled) {
    absl::MutexLock lock(&mu_);
    ticket.ready = CachedLocked(revision, now);
    if (ticket.ready != nullptr) return ticket;
  }
  ticket.snapshot = Snapshot(state, revision, state_settled, now);
  return ticket;
}

std::shared_ptr<const core::EstimateSnapshot> StartEstimateCache::Snapshot(
    const core::ClusterState& state, int64_t revision, bool state_settled, absl::Time now) {
  if (state_settled && last_snapshot_settled_ && last_snapshot_ != nullptr &&
      last_snapshot_revision_ == revision && last_snapshot_->now == now) {
    return last_snapshot_;
  }
  last_snapshot_ = core::TakeEstimateSnapshot(state, now, last_snapshot_.get());
  last_snapshot_revision_ = revision;
  last_snapshot_settled_ = state_settled;
  return last_snapshot_;
}

absl::StatusOr<std::shared_ptr<const core::StartEstimates>> StartEstimateCache::Resolve(
    const Ticket& ticket) {
  if (ticket.ready != nullptr) return ticket.ready;
  if (ticket.snapshot == nullptr) return absl::InternalError("start estimate: empty ticket");
  absl::MutexLock computing(&compute_mu_);
  {
    // Another reader of this revision may have computed it while this one waited.
    absl::MutexLock lock(&mu_);
    if (ticket.cacheable) {
      if (auto cached = CachedLocked(ticket.revision, ticket.snapshot->now)) return cached;
    }
    ++computations_;
  }
  absl::StatusOr<core::StartEstimates> estimates = estimator_.Estimate(*ticket.snapshot);
  if (!estimates.ok()) return estimates.status();
  auto shared = std::make_shared<const core::StartEstimates>(*std::move(estimates));
  {
    absl::MutexLock lock(&mu_);
    trees_simulated_ += shared->trees_simulated;
  }
  if (ticket.cacheable) {
    absl::MutexLock lock(&mu_);
    if (ticket.revision >= cached_revision_) {
      cached_ = shared;
      cached_revision_ = ticket.revision;
    }
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
    api::codec::TimeToProto(estimate.likely, out->mutable_likely());
  }
  if (estimate.late.has_value()) api::codec::TimeToProto(*estimate.late, out->mutable_late());
  out->set_basis(estimate.basis);
  out->set_reason(estimate.reason);
  out->set_revision(revision);
}

}  // namespace tollgate::engine
