#include "web/http_server.h"

#include <pthread.h>

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "httplib.h"
#include "web/web_assets.h"

namespace tollgate::web {
namespace {

int HttpStatusOf(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
      return 400;
    case absl::StatusCode::kNotFound:
      return 404;
    case absl::StatusCode::kFailedPrecondition:
      return 409;
    case absl::StatusCode::kUnavailable:
      return 503;
    case absl::StatusCode::kUnauthenticated:
      return 401;
    case absl::StatusCode::kPermissionDenied:
      return 403;
    default:
      return 500;
  }
}

Params ParamsOf(const httplib::Request& request) {
  Params params;
  for (const auto& [name, value] : request.params) params[name] = value;
  return params;
}

std::string JsonError(const absl::Status& status) {
  std::string message;
  for (char c : status.message()) {
    if (c == '"' || c == '\\') message += '\\';
    message += (static_cast<unsigned char>(c) < 0x20) ? ' ' : c;
  }
  return absl::StrCat("{\"error\":\"", message, "\",\"code\":\"",
                      absl::StatusCodeToString(status.code()), "\"}");
}

void Reply(const absl::StatusOr<std::string>& result, httplib::Response& response) {
  response.set_header("Cache-Control", "no-store");
  if (result.ok()) {
    response.set_content(*result, "application/json");
  } else {
    response.status = HttpStatusOf(result.status());
    if (response.status == 401) response.set_header("WWW-Authenticate", "Bearer");
    response.set_content(JsonError(result.status()), "application/json");
  }
}

constexpr absl::string_view kTokenCookie = "tollgate_token";
constexpr absl::string_view kPreSessionCookie = "tollgate_login";
// Over TLS the cookies are __Host- prefixed: the browser keeps such a cookie only when it was
// set Secure, with Path=/ and no Domain, by this very host, so a sibling subdomain (or a
// plaintext response) cannot plant one: cookie tossing is the classic bypass of double-submit
// tokens, and a planted session cookie would itself be a login CSRF.
constexpr absl::string_view kHostPrefix = "__Host-";

// The value of cookie `name` in the request, or "".
std::string CookieOf(const httplib::Request& request, absl::string_view name) {
  for (absl::string_view cookie : absl::StrSplit(request.get_header_value("Cookie"), ';')) {
    cookie = absl::StripAsciiWhitespace(cookie);
    if (absl::ConsumePrefix(&cookie, name) && absl::ConsumePrefix(&cookie, "=")) {
      return std::string(cookie);
    }
  }
  return "";
}

// The bearer token of a request: the Authorization header, else the login cookie.
std::string BearerOf(const httplib::Request& request, absl::string_view cookie) {
  const std::string header = request.get_header_value("Authorization");
  if (absl::StartsWith(header, "Bearer ")) return header.substr(7);
  return CookieOf(request, cookie);
}

std::string JsonString(absl::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += (static_cast<unsigned char>(c) < 0x20) ? ' ' : c;
  }
  out += '"';
  return out;
}

void ServeAsset(absl::string_view path, httplib::Response& response) {
  const WebAsset* asset = FindWebAsset(path);
  if (asset == nullptr) {
    response.status = 404;
    response.set_content("not found\n", "text/plain");
    return;
  }
  response.set_header("Cache-Control", "no-cache");
  response.set_content(std::string(asset->data), std::string(asset->content_type));
}

}  // namespace

namespace {

std::unique_ptr<httplib::Server> NewServer(TlsFiles* tls) {
  if (tls == nullptr) return std::make_unique<httplib::Server>();
  return std::make_unique<httplib::SSLServer>([tls](SSL_CTX& ctx) { return tls->Configure(ctx); });
}

}  // namespace

HttpServer::HttpServer(const Options& options, metrics::Registry& registry, DashboardApi& dashboard)
    : options_(options),
      registry_(registry),
      dashboard_(dashboard),
      server_(NewServer(options.tls)) {}

std::optional<auth::Identity> HttpServer::Caller(const httplib::Request& request,
                                                 httplib::Response& response,
                                                 absl::string_view what) {
  if (options_.access == nullptr) return auth::Identity{"system:anonymous", "", {}, "anonymous"};
  const std::string pem = options_.tls == nullptr ? "" : TlsFiles::PeerCertificatePem(request.ssl);
  absl::StatusOr<auth::Identity> identity =
      options_.access->Authenticate(BearerOf(request, SessionCookie()), pem, what);
  if (!identity.ok()) {
    Reply(identity.status(), response);
    return std::nullopt;
  }
  return *std::move(identity);
}

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(const Options& options,
                                                              metrics::Registry& registry,
                                                              DashboardApi& dashboard) {
  if (options.clock == nullptr) return absl::InvalidArgumentError("HttpServer: no clock");
  std::unique_ptr<HttpServer> server(new HttpServer(options, registry, dashboard));
  absl::StatusOr<std::unique_ptr<CsrfGuard>> csrf =
      CsrfGuard::Create(*options.clock, options.csrf_lifetime);
  if (!csrf.ok()) return csrf.status();
  server->csrf_ = *std::move(csrf);
  if (!server->server_->is_valid()) {
    return absl::InvalidArgumentError("--metrics-listen: cannot set up TLS with --tls-cert");
  }
  server->Route();
  server->RouteLogin();
  HttpServer* raw = server.get();
  registry.AddCollector([raw](metrics::TextWriter& writer) {
    writer.BeginFamily("tollgate_dashboard_event_streams",
                       "Open server-sent event streams of the dashboard.",
                       metrics::MetricType::kGauge, {});
    writer.Sample({}, raw->event_streams_.load(std::memory_order_relaxed));
  });
  const int threads = options.max_event_streams + 8;
  server->server_->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  // A client that stops reading holds a thread at most this long.
  server->server_->set_write_timeout(10, 0);
  server->server_->set_read_timeout(10, 0);
  if (options.port == 0) {
    server->port_ = server->server_->bind_to_any_port(options.host);
  } else if (server->server_->bind_to_port(options.host, options.port)) {
    server->port_ = options.port;
  }
  if (server->port_ <= 0) {
    return absl::UnavailableError(
        absl::StrCat("--metrics-listen: cannot listen on ", options.host, ":", options.port));
  }
  server->thread_ = std::thread([raw] {
    pthread_setname_np(pthread_self(), "tg-http");
    raw->server_->listen_after_bind();
  });
  return server;
}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::Stop() {
  stopping_.store(true);
  server_->stop();
  if (thread_.joinable()) thread_.join();
}

void HttpServer::Route() {
  httplib::Server& s = *server_;
  s.Get("/metrics", [this](const httplib::Request& request, httplib::Response& response) {
    std::optional<auth::Identity> caller = Caller(request, response, "/metrics");
    if (!caller.has_value()) return;
    if (options_.access != nullptr) {
      if (absl::Status allowed = options_.access->Metrics(*caller); !allowed.ok()) {
        Reply(allowed, response);
        return;
      }
    }
    response.set_content(registry_.Render(), "text/plain; version=0.0.4; charset=utf-8");
  });
  s.Get("/", [](const httplib::Request&, httplib::Response& response) {
    ServeAsset("index.html", response);
  });
  s.Get(R"(/static/([A-Za-z0-9_./-]+))",
        [](const httplib::Request& request, httplib::Response& response) {
          const std::string path = request.matches[1];
          if (path.find("..") != std::string::npos) {
            response.status = 404;
            return;
          }
          ServeAsset(path, response);
        });
  s.Get(R"(/api/v1/objects/([a-z]+))",
        [this](const httplib::Request& request, httplib::Response& response) {
          std::optional<auth::Identity> caller = Caller(request, response, request.path);
          if (!caller.has_value()) return;
          const Params params = ParamsOf(request);
          if (options_.access != nullptr) {
            absl::Status allowed =
                options_.access->ListObjects(*caller, request.matches[1].str(), params);
            if (!allowed.ok()) return Reply(allowed, response);
          }
          Reply(dashboard_.ListObjects(request.matches[1].str(), params), response);
        });
  s.Get("/api/v1/workloads", [this](const httplib::Request& request, httplib::Response& response) {
    std::optional<auth::Identity> caller = Caller(request, response, request.path);
    if (!caller.has_value()) return;
    const Params params = ParamsOf(request);
    Visible visible;
    if (options_.access != nullptr) {
      absl::StatusOr<Visible> allowed = options_.access->ListWorkloads(*caller, params);
      if (!allowed.ok()) return Reply(allowed.status(), response);
      visible = *std::move(allowed);
    }
    Reply(dashboard_.ListWorkloads(params, visible), response);
  });
  s.Get(R"(/api/v1/workloads/([^/]+)/([^/]+))",
        [this](const httplib::Request& request, httplib::Response& response) {
          std::optional<auth::Identity> caller = Caller(request, response, request.path);
          if (!caller.has_value()) return;
          const std::string ns = request.matches[1].str();
          const std::string name = request.matches[2].str();
          Visible visible;
          if (options_.access != nullptr) {
            absl::StatusOr<Visible> allowed = options_.access->GetWorkload(*caller, ns, name);
            if (!allowed.ok()) return Reply(allowed.status(), response);
            visible = *std::move(allowed);
          }
          Reply(dashboard_.GetWorkload(ns, name, visible), response);
        });
  s.Get("/api/v1/pending", [this](const httplib::Request& request, httplib::Response& response) {
    std::optional<auth::Identity> caller = Caller(request, response, request.path);
    if (!caller.has_value()) return;
    const Params params = ParamsOf(request);
    Visible visible;
    if (options_.access != nullptr) {
      absl::StatusOr<Visible> allowed = options_.access->ListPending(*caller, params);
      if (!allowed.ok()) return Reply(allowed.status(), response);
      visible = *std::move(allowed);
    }
    Reply(dashboard_.ListPending(params, visible), response);
  });
  s.Get("/api/v1/topology", [this](const httplib::Request& request, httplib::Response& response) {
    std::optional<auth::Identity> caller = Caller(request, response, request.path);
    if (!caller.has_value()) return;
    if (options_.access != nullptr) {
      if (absl::Status allowed = options_.access->TopologyUsage(*caller); !allowed.ok()) {
        return Reply(allowed, response);
      }
    }
    Reply(dashboard_.TopologyUsage(ParamsOf(request)), response);
  });
  s.Get("/api/v1/events", [this](const httplib::Request& request, httplib::Response& response) {
    std::optional<auth::Identity> caller = Caller(request, response, request.path);
    if (!caller.has_value()) return;
    Visible visible;
    if (options_.access != nullptr) {
      absl::StatusOr<Visible> allowed = options_.access->Events(*caller);
      if (!allowed.ok()) return Reply(allowed.status(), response);
      visible = *std::move(allowed);
    }
    if (event_streams_.fetch_add(1) >= options_.max_event_streams) {
      event_streams_.fetch_sub(1);
      response.status = 503;
      response.set_content(JsonError(absl::UnavailableError("too many event streams")),
                           "application/json");
      return;
    }
    // EventSource resends the last id it saw when it reconnects, e.g. after a restart.
    int64_t since = 0;
    std::string resume = request.get_header_value("Last-Event-ID");
    if (resume.empty()) resume = request.get_param_value("since");
    if (!resume.empty() && !absl::SimpleAtoi(resume, &since)) since = 0;
    response.set_header("Cache-Control", "no-store");
    response.set_chunked_content_provider(
        "text/event-stream",
        [this, since, visible = std::move(visible)](size_t, httplib::DataSink& sink) {
          const std::string hello = "retry: 1000\n: connected\n\n";
          if (!sink.write(hello.data(), hello.size())) return false;
          absl::Status status = dashboard_.Stream(
              since,
              [&](int64_t revision, const std::string& json) {
                const std::string message =
                    absl::StrCat("id: ", revision, "\nevent: workload\ndata: ", json, "\n\n");
                return sink.write(message.data(), message.size());
              },
              [&] { return stopping_.load() || !sink.is_writable(); }, visible);
          if (absl::IsOutOfRange(status)) {
            // Too far behind: the page reloads everything and streams from now on.
            const std::string relist = "id: 0\nevent: relist\ndata: {}\n\n";
            sink.write(relist.data(), relist.size());
          }
          sink.done();
          return true;
        },
        [this](bool) { event_streams_.fetch_sub(1); });
  });
}

std::string HttpServer::SessionCookie() const {
  return absl::StrCat(options_.tls != nullptr ? kHostPrefix : "", kTokenCookie);
}

std::string HttpServer::PreSessionCookie() const {
  return absl::StrCat(options_.tls != nullptr ? kHostPrefix : "", kPreSessionCookie);
}

std::string HttpServer::OwnOrigin(const httplib::Request& request) const {
  // The Host header of a browser's request names the server the browser meant (a page cannot
  // set it), so the scheme and Host are the origin a same-origin form posts from.
  return absl::StrCat(options_.tls != nullptr ? "https://" : "http://",
                      request.get_header_value("Host"));
}

void HttpServer::Refuse(const httplib::Request& request, httplib::Response& response,
                        const absl::Status& status) {
  if (options_.access != nullptr)
    options_.access->AuditRefused(request.method, request.path, status);
  response.status = 403;
  response.set_header("Cache-Control", "no-store");
  // The reason quotes request headers: never let a browser sniff it as HTML.
  response.set_header("X-Content-Type-Options", "nosniff");
  response.set_content(
      absl::StrCat("403 Forbidden: ", status.message(),
                   "\nNothing was changed. Sign in from the dashboard's own page: /login\n"),
      "text/plain; charset=utf-8");
}

bool HttpServer::CheckToken(const httplib::Request& request, httplib::Response& response,
                            absl::string_view action, absl::string_view binding) {
  absl::Status verified = csrf_->Verify(action, binding, request.get_param_value("csrf"));
  if (verified.ok()) return true;
  Refuse(request, response, verified);
  return false;
}

void HttpServer::RouteLogin() {
  httplib::Server& s = *server_;
  // Every state-changing request, whatever its route (today POST /login and /logout), must
  // come from this server's own origin. Reads (GET, HEAD) change nothing and are not checked:
  // a cross-site page cannot read their answers (no CORS headers are ever sent).
  s.set_pre_routing_handler([this](const httplib::Request& request, httplib::Response& response) {
    if (request.method == "GET" || request.method == "HEAD") {
      return httplib::Server::HandlerResponse::Unhandled;
    }
    absl::Status same_origin =
        CheckSameOrigin({request.get_header_value("Origin"), request.get_header_value("Referer"),
                         request.get_header_value("Sec-Fetch-Site")},
                        OwnOrigin(request));
    if (same_origin.ok()) return httplib::Server::HandlerResponse::Unhandled;
    Refuse(request, response, same_origin);
    return httplib::Server::HandlerResponse::Handled;
  });
  // The sign-in page carries a token bound to a pre-session cookie (OWASP's defence against
  // login CSRF: a session before the user is known, and a token tied to it).
  s.Get("/login", [this](const httplib::Request& request, httplib::Response& response) {
    std::string pre_session = CookieOf(request, PreSessionCookie());
    if (!CsrfGuard::IsSessionId(pre_session)) {
      absl::StatusOr<std::string> fresh = CsrfGuard::NewSessionId();
      if (!fresh.ok()) return Reply(fresh.status(), response);
      pre_session = *std::move(fresh);
    }
    const WebAsset* page = FindWebAsset("login.html");
    if (page == nullptr) return ServeAsset("login.html", response);
    response.set_header("Cache-Control", "no-store");
    response.set_header(
        "Set-Cookie",
        absl::StrCat(PreSessionCookie(), "=", pre_session,
                     "; Path=/; Max-Age=", absl::ToInt64Seconds(options_.csrf_lifetime),
                     "; HttpOnly; SameSite=Strict", options_.tls != nullptr ? "; Secure" : ""));
    // The token is base64url and digits: nothing in it needs escaping in an attribute.
    response.set_content(
        absl::StrReplaceAll(page->data, {{"{{csrf}}", csrf_->Issue("login", pre_session)}}),
        std::string(page->content_type));
  });
  // The dashboard's sign-in: the token (static or OIDC) is checked now and kept in an HttpOnly
  // cookie (Secure over TLS, SameSite=Strict), which EventSource and fetch send by themselves.
  s.Post("/login", [this](const httplib::Request& request, httplib::Response& response) {
    if (!CheckToken(request, response, "login", CookieOf(request, PreSessionCookie()))) return;
    const std::string token = request.get_param_value("token");
    if (options_.access != nullptr) {
      absl::StatusOr<auth::Identity> identity = options_.access->Authenticate(token, "", "/login");
      if (!identity.ok() || token.empty()) {
        response.status = 303;
        response.set_header("Location", "/login?failed=1");
        return;
      }
    }
    const absl::string_view secure = options_.tls != nullptr ? "; Secure" : "";
    response.status = 303;
    response.set_header("Location", "/");
    response.set_header("Set-Cookie", absl::StrCat(SessionCookie(), "=", token,
                                                   "; Path=/; HttpOnly; SameSite=Strict", secure));
    // The pre-session has served its purpose; the next sign-in page makes a new one.
    response.set_header("Set-Cookie",
                        absl::StrCat(PreSessionCookie(),
                                     "=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict", secure));
  });
  // Who is signed in, and the token POST /logout needs (bound to the session cookie, so only a
  // page that can read this answer, i.e. the dashboard's own origin, can sign the user out).
  s.Get("/api/v1/session", [this](const httplib::Request& request, httplib::Response& response) {
    std::optional<auth::Identity> caller = Caller(request, response, request.path);
    if (!caller.has_value()) return;
    const std::string cookie = CookieOf(request, SessionCookie());
    std::string groups;
    for (const std::string& group : caller->groups) {
      absl::StrAppend(&groups, groups.empty() ? "" : ",", JsonString(group));
    }
    Reply(absl::StrCat("{\"user\":", JsonString(caller->user), ",\"groups\":[", groups,
                       "],\"method\":", JsonString(caller->method), ",\"logoutToken\":",
                       JsonString(cookie.empty() ? "" : csrf_->Issue("logout", cookie)), "}"),
          response);
  });
  s.Post("/logout", [this](const httplib::Request& request, httplib::Response& response) {
    if (!CheckToken(request, response, "logout", CookieOf(request, SessionCookie()))) return;
    response.status = 303;
    response.set_header("Location", "/login");
    response.set_header(
        "Set-Cookie",
        absl::StrCat(SessionCookie(), "=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict",
                     options_.tls != nullptr ? "; Secure" : ""));
  });
}

}  // namespace tollgate::web
