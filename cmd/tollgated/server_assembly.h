#pragma once

// The serving half every tollgated shares, the single-process server and an HA leader alike:
// the access gate, the scheduler's audit trail, the tollgate.v1 gRPC services and the server
// interceptors, wired in one place so that a new service or interceptor is added once.

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "cmd/tollgated/observability.h"
#include "core/clock.h"
#include "grpcpp/grpcpp.h"
#include "services/auth/audit_log.h"
#include "services/auth/authorizer.h"
#include "services/engine/tollgate_api.h"
#include "services/rpc/access_gate.h"
#include "services/rpc/admin_service.h"
#include "services/rpc/grpc_services.h"
#include "services/rpc/info_service.h"
#include "services/rpc/inventory_service.h"
#include "services/rpc/scheduler_audit.h"
#include "storage/store.h"
#include "tollgate/v1/service.pb.h"

namespace tollgate {

class ServingServices {
 public:
  struct Options {
    // Whose identity every answer carries (the store this process serves from).
    const storage::Store* store = nullptr;
    const core::Clock* clock = nullptr;
    // Where mutating and denied calls and the scheduler's own decisions are written; may be null.
    auth::AuditLog* audit_log = nullptr;
    rpc::Authenticators authenticators;
    std::shared_ptr<const auth::Authorizer> policy;
    // What `tollgate get config` shows.
    v1::SchedulerConfiguration described_configuration;
    // Writes an online backup; null where the store has its own tool (etcd: etcdctl), and
    // Backup then answers UNIMPLEMENTED saying so.
    rpc::AdminGrpcService::BackupFn backup;
    // Metrics for every call and the watch streams; may be null (no --metrics-listen).
    Observability* observability = nullptr;
    // The revision the executor loaded: the scheduler audit follows changes after it.
    int64_t loaded_revision = 0;
    // The Watch streams' (bookmark interval, lag limit, page size).
    rpc::WatchHub::Options watch;
  };

  // `api` must outlive the result. Starts the scheduler audit when there is an audit log.
  static std::unique_ptr<ServingServices> Create(engine::TollgateApi& api, Options options);
  ServingServices(const ServingServices&) = delete;
  ServingServices& operator=(const ServingServices&) = delete;

  // Registers every service and interceptor; the builder then only needs its port.
  void AddTo(grpc::ServerBuilder& builder);

  // Ends the watch streams, which never end by themselves: call after the health service is
  // shut down and before the server's Shutdown, so that waits only for unary calls.
  void StopWatches() { admission_.StopWatches(); }

  rpc::AccessGate& gate() { return gate_; }

 private:
  ServingServices(engine::TollgateApi& api, Options options);

  Options options_;
  rpc::AccessGate gate_;
  rpc::AdmissionGrpcService admission_;
  rpc::ConfigGrpcService config_;
  rpc::VisibilityGrpcService visibility_;
  rpc::AdmissionCheckGrpcService checks_;
  rpc::InventoryGrpcService inventory_;
  rpc::AuthGrpcService auth_;
  rpc::InfoGrpcService info_;
  rpc::AdminGrpcService admin_;
  // Declared last: its thread reads the gate and the API, so it stops first.
  std::unique_ptr<rpc::SchedulerAudit> scheduler_audit_;
};

}  // namespace tollgate
