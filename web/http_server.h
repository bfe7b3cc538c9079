#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "core/clock.h"
#include "metrics/metric_registry.h"
#include "web/csrf.h"
#include "web/dashboard_access.h"
#include "web/dashboard_api.h"
#include "web/tls_files.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace tollgate::web {

// tollgated's HTTP port: the Prometheus exposition at /metrics, the read-only dashboard at /
// (assets compiled in), its JSON under /api/v1/, and workload changes as server-sent events at
// /api/v1/events (resumable: the event id is the store revision, which EventSource sends back
// as Last-Event-ID when it reconnects). Serves on its own threads; Stop (or the destructor)
// ends the event streams and waits for every handler. The registry and the API must outlive
// the server. Thread-safe.
//
// With `tls` it serves HTTPS (the gRPC port's certificate files); with `access` every request
// but the static assets and the login page is authenticated (Authorization: Bearer, the
// tollgate_token cookie the login form sets, or a client certificate) and authorized like its
// gRPC counterpart: 401 without valid credentials, 403 when the gate refuses.
//
// Every state-changing request (any method but GET and HEAD) must come from the dashboard's own
// origin (Origin / Referer / Sec-Fetch-Site) and POST /login and POST /logout must carry an
// anti-forgery token bound to the browser's cookie (web/csrf.h): 403 otherwise, audited.
class HttpServer {
 public:
  struct Options {
    std::string host = "127.0.0.1";
    // 0 picks a free port (port() tells which).
    int port = 0;
    // Event streams each hold a thread; more are refused with 503 so /metrics stays served.
    int max_event_streams = 32;
    // HTTPS when set; must outlive the server.
    TlsFiles* tls = nullptr;
    // Authentication and authorization when set (must outlive the server); without it every
    // request is served (tollgated always sets it; its gate makes callers the anonymous admin
    // when no authenticator is configured).
    DashboardAccess* access = nullptr;
    // For the anti-forgery tokens' expiry; required, must outlive the server.
    const core::Clock* clock = nullptr;
    // How long a sign-in form (and a sign-out token) stays valid.
    absl::Duration csrf_lifetime = absl::Hours(1);
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
  void RouteLogin();
  // The authenticated caller of `request`, or the HTTP error already written to `response`.
  std::optional<auth::Identity> Caller(const httplib::Request& request, httplib::Response& response,
                                       absl::string_view what);
  // The cookie holding the signed-in bearer token, and the sign-in page's pre-session cookie:
  // __Host- prefixed over TLS (the browser then takes them only from this host, over HTTPS,
  // with Path=/ and no Domain: a sibling subdomain cannot plant one).
  std::string SessionCookie() const;
  std::string PreSessionCookie() const;
  // This server's origin as the browser names it: the scheme and the Host header.
  std::string OwnOrigin(const httplib::Request& request) const;
  // Writes 403 (and the audit line) when the anti-forgery token of a POST to `action` is
  // missing or wrong for the cookie `binding`; true when it is right.
  bool CheckToken(const httplib::Request& request, httplib::Response& response,
                  absl::string_view action, absl::string_view binding);
  void Refuse(const httplib::Request& request, httplib::Response& response,
              const absl::Status& status);

  const Options options_;
  metrics::Registry& registry_;
  DashboardApi& dashboard_;
  std::unique_ptr<CsrfGuard> csrf_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> event_streams_{0};
};

}  // namespace tollgate::web
