#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "core/clock.h"
#include "core/scheduler_config.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/support/server_interceptor.h"
#include "services/engine/admission_executor.h"
#include "services/engine/tollgate_api.h"
#include "services/rpc/access_gate.h"
#include "storage/etcd_mirror.h"
#include "storage/frozen_mirror_store.h"

namespace tollgate::ha {

// Metadata (services/api/metadata_keys.h): every answer carries api::kRevisionMetadataKey, the
// store revision its read view stood at when it answered (an upper bound of what the answer
// reflects; exact unless the view moved on during the call). A request's
// api::kMinRevisionMetadataKey is the lowest revision the answer may reflect: a follower behind
// it waits for its copy, bounded by the call's deadline, or redirects to the leader; never an
// older answer. api::kStaleRevisionMetadataKey and api::kStaleReasonMetadataKey appear only when
// the follower cannot confirm its copy is current (its etcd watch or etcd's quorum is lost).

// Whether an access verb (services/auth/authorizer.h) only reads: get, list, watch.
bool IsReadVerb(absl::string_view verb);

// The `tollgate-min-revision` value of a request: 0 when absent; INVALID_ARGUMENT naming the
// header and the value when it is not a non-negative integer.
absl::StatusOr<int64_t> ParseMinRevision(absl::string_view value, bool present);

// A follower's read view (docs/ha.md, "Follower reads"): the leader's own read path (an
// engine::AdmissionExecutor loaded by the same loader a promotion uses, a engine::TollgateApi and
// an AccessGate over it) running on a frozen copy of the follower's warm copy
// (storage/frozen_mirror_store.h). The executor never schedules and never writes; the gate's call
// filter refuses every verb but get/list/watch with the leader redirect, so the regular gRPC
// services can be registered on a follower unchanged.
//
// The view moves forward by reloading from a newer frozen copy, single-flight: when a read asks
// for a revision it has not got (tollgate-min-revision), or when the copy moved on and the view
// is older than Options::max_view_age; a follower under read load with no writes never reloads,
// and with writes reloads at most once per max_view_age (plus the ones clients ask for).
// `mirror` must outlive this. Thread-safe.
class FollowerReads {
 public:
  struct Options {
    core::SchedulerConfig config;
    // How long a view is reused once the copy has moved past it.
    absl::Duration max_view_age = absl::Seconds(1);
    // The longest a read waits for the copy to reach its min revision when the call has no
    // deadline (or a later one).
    absl::Duration max_wait = absl::Seconds(5);
    // Where writes go: the leader's address, "" when none is known.
    std::function<std::string()> leader_address;
    // Null: no audit log. Must outlive this.
    auth::AuditLog* audit_log = nullptr;
  };

  static absl::StatusOr<std::unique_ptr<FollowerReads>> Open(
      std::shared_ptr<storage::EtcdMirror> mirror, const core::Clock& clock, Options options);
  ~FollowerReads();

  engine::TollgateApi& api() { return *api_; }
  rpc::AccessGate& gate() { return *gate_; }
  // The frozen copy reads are answered from.
  const storage::Store& store() const { return store_; }

  // The gate's call filter (see rpc::AccessGate::SetCallFilter).
  absl::Status FilterCall(grpc::ServerContextBase& context, absl::string_view verb);

  // Brings the view to `min_revision` at least (and to the copy's latest revision when the view
  // is older than max_view_age), waiting for the copy until `deadline`. UNAVAILABLE when the
  // copy does not get there.
  absl::Status Refresh(int64_t min_revision, absl::Time deadline);

  // The revision reads are answered at now.
  int64_t revision() const;
  storage::EtcdMirror::Freshness freshness() const { return mirror_->freshness(); }

  struct Stats {
    int64_t reloads = 0;
    absl::Duration last_reload;
  };
  Stats stats() const;

 private:
  FollowerReads(std::shared_ptr<storage::EtcdMirror> mirror, const core::Clock& clock,
                Options options, std::shared_ptr<const storage::EtcdMirror::Frozen> frozen);
  // Reloads from the copy's latest state; rebuild_mu_ held.
  absl::Status ReloadLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(rebuild_mu_);

  const std::shared_ptr<storage::EtcdMirror> mirror_;
  const core::Clock& clock_;
  const Options options_;
  storage::FrozenMirrorStore store_;
  std::unique_ptr<engine::AdmissionExecutor> executor_;
  std::unique_ptr<engine::TollgateApi> api_;
  std::unique_ptr<rpc::AccessGate> gate_;

  // Held for a whole reload: one at a time, and readers that need it wait for it.
  absl::Mutex rebuild_mu_;
  mutable absl::Mutex mu_;
  absl::Time built_at_ ABSL_GUARDED_BY(mu_);
  Stats stats_ ABSL_GUARDED_BY(mu_);
};

// Stamps every response of a follower's server with api::kRevisionMetadataKey, and with the stale
// marker when the copy cannot be confirmed current (initial metadata, and trailing metadata at
// the end of the call). `reads` must outlive the server.
std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
NewFollowerReadInterceptorFactory(const FollowerReads& reads);

}  // namespace tollgate::ha
