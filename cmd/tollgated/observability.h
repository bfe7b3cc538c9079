#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "grpcpp/support/server_interceptor.h"
#include "metrics/metric_registry.h"
#include "services/engine/admission_executor.h"
#include "services/engine/admission_metrics.h"
#include "services/engine/tollgate_api.h"
#include "services/rpc/access_gate.h"
#include "services/rpc/watch_hub.h"
#include "storage/rocksdb_store.h"
#include "web/dashboard_api.h"
#include "web/http_server.h"

namespace tollgate {

// What tollgated serves on --metrics-listen, wired in the order startup needs it: Create
// before the executor opens (its observer records from the first cycle), Serve once the API
// exists, Stop before the executor and the store go away.
class Observability {
 public:
  static std::unique_ptr<Observability> Create(const std::string& version);

  // Records scheduler and store metrics; pass in the executor's Options.
  engine::ExecutorObserver* executor_observer() { return &admission_metrics_; }
  // For grpc::ServerBuilder::experimental().SetInterceptorCreators.
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
  GrpcInterceptors();

  // Registers the state, store and process collectors and starts the HTTP server, which
  // authenticates and authorizes through `gate` and serves HTTPS when `tls` is set (both must
  // outlive Stop). `rocksdb` (null on the etcd store) adds RocksDB's engine metrics.
  absl::Status Serve(const std::string& host, int port, engine::TollgateApi& api,
                     engine::AdmissionExecutor& executor, const storage::RocksDbStore* rocksdb,
                     rpc::AccessGate& gate, web::TlsFiles* tls);
  // Exposes how many Watch streams `hub` dropped; `hub` must outlive the registry's scrapes
  // (Stop first).
  void AddWatchHub(const rpc::WatchHub& hub);
  int port() const { return http_ == nullptr ? 0 : http_->port(); }
  void Stop();

 private:
  explicit Observability(const std::string& version);

  metrics::Registry registry_;
  engine::AdmissionMetrics admission_metrics_;
  std::unique_ptr<web::DashboardApi> dashboard_;
  std::unique_ptr<web::DashboardAccess> access_;
  std::unique_ptr<web::HttpServer> http_;
};

}  // namespace tollgate
