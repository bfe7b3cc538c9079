#include "cmd/tollgated/observability.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "metrics/process_metrics.h"
#include "services/rpc/grpc_metrics_interceptor.h"

namespace tollgate {

std::unique_ptr<Observability> Observability::Create(const std::string& version) {
  return std::unique_ptr<Observability>(new Observability(version));
}

Observability::Observability(const std::string& version) : admission_metrics_(registry_) {
  engine::RegisterBuildInfo(registry_, version);
}

std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
Observability::GrpcInterceptors() {
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> out;
  out.push_back(rpc::MakeGrpcMetricsInterceptor(registry_));
  return out;
}

absl::Status Observability::Serve(const std::string& host, int port, engine::TollgateApi& api,
                                  engine::AdmissionExecutor& executor,
                                  const storage::RocksDbStore* rocksdb, rpc::AccessGate& gate,
                                  web::TlsFiles* tls) {
  engine::RegisterStateMetrics(registry_, executor);
  if (rocksdb != nullptr) {
    registry_.AddCollector([rocksdb](metrics::TextWriter& w) {
      const storage::RocksDbStore::EngineStats stats = rocksdb->engine_stats();
      auto one = [&](const char* name, const char* help, metrics::MetricType type, double value) {
        w.BeginFamily(name, help, type, {});
        w.Sample({}, value);
      };
      one("tollgate_rocksdb_sst_bytes", "Size of RocksDB's table files, all column families.",
          metrics::MetricType::kGauge, static_cast<double>(stats.sst_bytes));
      one("tollgate_rocksdb_memtable_bytes", "Size of RocksDB's memtables, all column families.",
          metrics::MetricType::kGauge, static_cast<double>(stats.memtable_bytes));
      one("tollgate_rocksdb_live_data_bytes", "RocksDB's estimate of its live data.",
          metrics::MetricType::kGauge, static_cast<double>(stats.live_data_bytes));
      one("tollgate_rocksdb_write_stops_total",
          "Times RocksDB stopped writes (too many memtables or level-0 files) since start.",
          metrics::MetricType::kCounter, static_cast<double>(stats.stall_stops));
      one("tollgate_rocksdb_write_slowdowns_total", "Times RocksDB slowed writes down since start.",
          metrics::MetricType::kCounter, static_cast<double>(stats.stall_slowdowns));
      one("tollgate_rocksdb_write_stopped", "1 while RocksDB stops writes.",
          metrics::MetricType::kGauge, stats.write_stopped ? 1 : 0);
    });
  }
  registry_.AddCollector(&metrics::WriteProcessMetrics);
  dashboard_ =
      std::make_unique<web::DashboardApi>(api, [&executor] { return executor.revision(); });
  access_ = std::make_unique<web::DashboardAccess>(gate);
  web::HttpServer::Options options;
  options.host = host;
  options.port = port;
  options.tls = tls;
  options.access = access_.get();
  options.clock = &gate.clock();
  absl::StatusOr<std::unique_ptr<web::HttpServer>> http =
      web::HttpServer::Start(options, registry_, *dashboard_);
  if (!http.ok()) return http.status();
  http_ = *std::move(http);
  return absl::OkStatus();
}

void Observability::AddWatchHub(const rpc::WatchHub& hub) {
  registry_.AddCollector([&hub](metrics::TextWriter& w) {
    const rpc::WatchHub::Dropped dropped = hub.dropped();
    w.BeginFamily("tollgate_watch_dropped_total",
                  "Watch streams ended with OUT_OF_RANGE (the client re-lists): 'lagging' fell "
                  "too far behind the store, 'compacted' wanted a compacted revision.",
                  metrics::MetricType::kCounter, {"reason"});
    w.Sample({"lagging"}, static_cast<double>(dropped.lagging));
    w.Sample({"compacted"}, static_cast<double>(dropped.compacted));
    const rpc::WatchHub::Sent sent = hub.sent();
    w.BeginFamily("tollgate_watch_events_sent_total",
                  "Events (bookmarks included) handed to gRPC on Watch streams.",
                  metrics::MetricType::kCounter, {});
    w.Sample({}, static_cast<double>(sent.events));
    w.BeginFamily("tollgate_watch_sent_bytes_total",
                  "Encoded bytes of the events handed to gRPC on Watch streams.",
                  metrics::MetricType::kCounter, {});
    w.Sample({}, static_cast<double>(sent.bytes));
  });
}

void Observability::Stop() {
  if (http_ != nullptr) http_->Stop();
}

}  // namespace tollgate
