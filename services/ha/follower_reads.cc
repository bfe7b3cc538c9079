#include "services/ha/follower_reads.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "services/api/metadata_keys.h"
#include "services/ha/leader_redirect_service.h"

namespace tollgate::ha {
namespace {

// The status a follower refuses a call with, sending the client to the leader (the trailing
// metadata names it, as LeaderRedirectService does). `why`: appended to the message.
absl::Status Redirect(grpc::ServerContextBase& context, const std::string& leader,
                      absl::string_view why) {
  const grpc::Status redirect = LeaderRedirectService::Redirect(context, leader);
  return absl::UnavailableError(why.empty()
                                    ? redirect.error_message()
                                    : absl::StrCat(redirect.error_message(), " (", why, ")"));
}

}  // namespace

bool IsReadVerb(absl::string_view verb) {
  return verb == "get" || verb == "list" || verb == "watch";
}

absl::StatusOr<int64_t> ParseMinRevision(absl::string_view value, bool present) {
  if (!present) return 0;
  int64_t revision = 0;
  if (!absl::SimpleAtoi(value, &revision) || revision < 0) {
    return absl::InvalidArgumentError(absl::StrCat("metadata ", api::kMinRevisionMetadataKey,
                                                   ": want a store revision >= 0, got \"", value,
                                                   "\""));
  }
  return revision;
}

FollowerReads::FollowerReads(std::shared_ptr<storage::EtcdMirror> mirror, const core::Clock& clock,
                             Options options,
                             std::shared_ptr<const storage::EtcdMirror::Frozen> frozen)
    : mirror_(std::move(mirror)),
      clock_(clock),
      options_(std::move(options)),
      store_(std::move(frozen), mirror_->store()) {}

absl::StatusOr<std::unique_ptr<FollowerReads>> FollowerReads::Open(
    std::shared_ptr<storage::EtcdMirror> mirror, const core::Clock& clock, Options options) {
  if (mirror == nullptr) return absl::InvalidArgumentError("FollowerReads: no warm copy");
  std::shared_ptr<const storage::EtcdMirror::Frozen> frozen = mirror->Freeze();
  std::unique_ptr<FollowerReads> reads(
      new FollowerReads(std::move(mirror), clock, std::move(options), std::move(frozen)));
  const absl::Time started = absl::Now();
  engine::AdmissionExecutor::Options executor_options;
  // Reads only: no cycles, no timers, so nothing is ever written (the store refuses it too).
  executor_options.schedule_continuously = false;
  // A write that slipped past the gate fails at the store; the executor then reloads from the
  // same frozen copy (which cannot fail), so this is never called in practice.
  executor_options.on_state_lost = [](const absl::Status&) {};
  TOLLGATE_ASSIGN_OR_RETURN(
      reads->executor_, engine::AdmissionExecutor::Open(reads->store_, clock,
                                                        reads->options_.config, executor_options));
  reads->api_ = std::make_unique<engine::TollgateApi>(*reads->executor_);
  reads->gate_ = std::make_unique<rpc::AccessGate>(*reads->api_, clock, reads->options_.audit_log);
  reads->gate_->SetCallFilter(
      [raw = reads.get()](grpc::ServerContextBase& context, absl::string_view verb) {
        return raw->FilterCall(context, verb);
      });
  absl::MutexLock lock(&reads->mu_);
  reads->built_at_ = absl::Now();
  reads->stats_.reloads = 1;
  reads->stats_.last_reload = reads->built_at_ - started;
  return reads;
}

FollowerReads::~FollowerReads() {
  // Before the API and the gate its queued operations use.
  executor_.reset();
}

int64_t FollowerReads::revision() const { return executor_->revision(); }

FollowerReads::Stats FollowerReads::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

absl::Status FollowerReads::FilterCall(grpc::ServerContextBase& context, absl::string_view verb) {
  const std::string leader = options_.leader_address ? options_.leader_address() : "";
  if (!IsReadVerb(verb)) return Redirect(context, leader, "");
  const auto& metadata = context.client_metadata();
  auto it = metadata.find(api::kMinRevisionMetadataKey);
  const bool present = it != metadata.end();
  TOLLGATE_ASSIGN_OR_RETURN(
      const int64_t min_revision,
      ParseMinRevision(present ? absl::string_view(it->second.data(), it->second.size()) : "",
                       present));
  const absl::Time now = absl::Now();
  absl::Time deadline = now + options_.max_wait;
  if (context.deadline() != std::chrono::system_clock::time_point::max()) {
    // Give up a little before the caller does, so it hears where the leader is rather than
    // DEADLINE_EXCEEDED.
    const absl::Time call_deadline = absl::FromChrono(context.deadline());
    const absl::Duration margin = std::min(absl::Milliseconds(250), (call_deadline - now) / 5);
    deadline = std::min(deadline, call_deadline - margin);
  }
  absl::Status refreshed = Refresh(min_revision, deadline);
  if (absl::IsUnavailable(refreshed)) return Redirect(context, leader, refreshed.message());
  return refreshed;
}

absl::Status FollowerReads::Refresh(int64_t min_revision, absl::Time deadline) {
  const int64_t view = revision();
  if (min_revision > view) {
    // Needed: wait for the copy, then for a reload that includes it (ours or one in flight).
    if (absl::Status reached = mirror_->WaitForRevision(min_revision, deadline); !reached.ok()) {
      return absl::UnavailableError(absl::StrCat("this follower is at revision ", view,
                                                 ", behind the requested ", min_revision, ": ",
                                                 reached.message()));
    }
    absl::MutexLock rebuild(&rebuild_mu_);
    if (revision() >= min_revision) return absl::OkStatus();
    TOLLGATE_RETURN_IF_ERROR(ReloadLocked());
    if (revision() < min_revision) {
      return absl::UnavailableError(absl::StrCat("this follower's view is at revision ", revision(),
                                                 ", behind the requested ", min_revision));
    }
    return absl::OkStatus();
  }
  // Not needed: reuse the view while it is young or the copy has not moved; never wait for a
  // reload another read started.
  {
    absl::MutexLock lock(&mu_);
    if (absl::Now() - built_at_ < options_.max_view_age) return absl::OkStatus();
  }
  // A restored store (a new identity) may restart at a lower revision: reload for it too.
  if (mirror_->revision() <= view && mirror_->identity() == store_.Identity()) {
    return absl::OkStatus();
  }
  if (!rebuild_mu_.TryLock()) return absl::OkStatus();
  absl::Status reloaded = ReloadLocked();
  rebuild_mu_.Unlock();
  // A failed reload keeps the previous view, which still answers consistently (at its revision).
  reloaded.IgnoreError();
  return absl::OkStatus();
}

absl::Status FollowerReads::ReloadLocked() {
  std::shared_ptr<const storage::EtcdMirror::Frozen> frozen = mirror_->Freeze();
  if (frozen->revision == revision() && frozen->identity == store_.Identity()) {
    absl::MutexLock lock(&mu_);
    built_at_ = absl::Now();
    return absl::OkStatus();
  }
  const absl::Time started = absl::Now();
  storage::FrozenMirrorStore next(frozen, mirror_->store());
  TOLLGATE_RETURN_IF_ERROR(executor_->Reload(next, [&] { store_.Install(frozen); }));
  // Roles, bindings and grants applied on the leader take effect here with the view. On failure
  // the previous policy stays (the gate says so in its own log).
  gate_->RefreshAppliedPolicy().IgnoreError();
  absl::MutexLock lock(&mu_);
  built_at_ = absl::Now();
  ++stats_.reloads;
  stats_.last_reload = built_at_ - started;
  return absl::OkStatus();
}

namespace {

class FollowerReadInterceptor final : public grpc::experimental::Interceptor {
 public:
  explicit FollowerReadInterceptor(const FollowerReads& reads) : reads_(reads) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    using grpc::experimental::InterceptionHookPoints;
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_INITIAL_METADATA)) {
      Stamp(*methods->GetSendInitialMetadata());
    }
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS)) {
      Stamp(*methods->GetSendTrailingMetadata());
    }
    methods->Proceed();
  }

 private:
  // Read at the end of the handler's work: the view an answer was computed from is never newer
  // than this one, so a client that passes this back as its min revision never goes backwards.
  void Stamp(std::multimap<std::string, std::string>& metadata) const {
    const int64_t revision = reads_.revision();
    metadata.emplace(api::kRevisionMetadataKey, absl::StrCat(revision));
    const storage::EtcdMirror::Freshness freshness = reads_.freshness();
    if (!freshness.current) {
      metadata.emplace(api::kStaleRevisionMetadataKey, absl::StrCat(revision));
      metadata.emplace(api::kStaleReasonMetadataKey, freshness.reason);
    }
  }

  const FollowerReads& reads_;
};

class FollowerReadInterceptorFactory final
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit FollowerReadInterceptorFactory(const FollowerReads& reads) : reads_(reads) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* /*info*/) override {
    return new FollowerReadInterceptor(reads_);
  }

 private:
  const FollowerReads& reads_;
};

}  // namespace

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
NewFollowerReadInterceptorFactory(const FollowerReads& reads) {
  return std::make_unique<FollowerReadInterceptorFactory>(reads);
}

}  // namespace tollgate::ha
