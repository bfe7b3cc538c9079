#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "metrics/metric_registry.h"
#include "web/dashboard_api.h"

namespace httplib {
class Server;
}

namespace tollgate::web {

// tollgated's HTTP port: the Prometheus exposition at /metrics, the read-only dashboard at /
// (assets compiled in), its JSON under /api/v1/, and workload changes as server-sent events at
// /api/v1/events (resumable: the event id is the store revision, which EventSource sends back
// as Last-Event-ID when it reconnects). Serves on its own threads; Stop (or the destructor)
// ends the event streams and waits for every handler. The registry and the API must outlive
// the server. Thread-safe.
class HttpServer {
 public:
  struct Options {
    std::string host = "127.0.0.1";
    // 0 picks a free port (port() tells which).
    int port = 0;
    // Event streams each hold a thread; more are refused with 503 so /metrics stays served.
    int max_event_streams = 32;
  };

  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(const Options& options,
                                                           metrics::Registry& registry,
                                                           DashboardApi& dashboard);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  int port() const { return port_; }
  void Stop();

 private:
  HttpServer(const Options& options, metrics::Registry& registry, DashboardApi& dashboard);
  void Route();

  const Options options_;
  metrics::Registry& registry_;
  DashboardApi& dashboard_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> event_streams_{0};
};

}  // namespace tollgate::web
