#include "web/http_server.h"

#include <pthread.h>

#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
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
    response.set_content(JsonError(result.status()), "application/json");
  }
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

HttpServer::HttpServer(const Options& options, metrics::Registry& registry, DashboardApi& dashboard)
    : options_(options),
      registry_(registry),
      dashboard_(dashboard),
      server_(std::make_unique<httplib::Server>()) {}

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(const Options& options,
                                                              metrics::Registry& registry,
                                                              DashboardApi& dashboard) {
  std::unique_ptr<HttpServer> server(new HttpServer(options, registry, dashboard));
  server->Route();
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
  s.Get("/metrics", [this](const httplib::Request&, httplib::Response& response) {
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
          Reply(dashboard_.ListObjects(request.matches[1].str(), ParamsOf(request)), response);
        });
  s.Get("/api/v1/workloads", [this](const httplib::Request& request, httplib::Response& response) {
    Reply(dashboard_.ListWorkloads(ParamsOf(request)), response);
  });
  s.Get(R"(/api/v1/workloads/([^/]+)/([^/]+))", [this](const httplib::Request& request,
                                                       httplib::Response& response) {
    Reply(dashboard_.GetWorkload(request.matches[1].str(), request.matches[2].str()), response);
  });
  s.Get("/api/v1/pending", [this](const httplib::Request& request, httplib::Response& response) {
    Reply(dashboard_.ListPending(ParamsOf(request)), response);
  });
  s.Get("/api/v1/events", [this](const httplib::Request& request, httplib::Response& response) {
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
        [this, since](size_t, httplib::DataSink& sink) {
          const std::string hello = "retry: 1000\n: connected\n\n";
          if (!sink.write(hello.data(), hello.size())) return false;
          absl::Status status = dashboard_.Stream(
              since,
              [&](int64_t revision, const std::string& json) {
                const std::string message =
                    absl::StrCat("id: ", revision, "\nevent: workload\ndata: ", json, "\n\n");
                return sink.write(message.data(), message.size());
              },
              [&] { return stopping_.load() || !sink.is_writable(); });
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

}  // namespace tollgate::web
