#include "services/kubeapi/kube_client.h"

#include <curl/curl.h>

#include <memory>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/file_util.h"
#include "core/status_macros.h"

namespace tollgate::kubeapi {
namespace {

constexpr char kMergePatch[] = "application/merge-patch+json";
constexpr char kJsonPatch[] = "application/json-patch+json";
constexpr char kJson[] = "application/json";
constexpr int kListPageSize = 500;
// Cap on one watch line: far above any real object, low enough that a broken server cannot
// make us buffer without bound.
constexpr size_t kMaxWatchLine = 64 << 20;

std::string Escape(absl::string_view text) {
  std::string out;
  for (unsigned char c : text) {
    if (absl::ascii_isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      absl::StrAppend(&out, "%", absl::Hex(c, absl::kZeroPad2));
    }
  }
  return out;
}

struct CurlDeleter {
  void operator()(CURL* curl) const { curl_easy_cleanup(curl); }
};
struct SlistDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};

}  // namespace

struct CurlKubeClient::Request {
  const char* method = "GET";
  std::string path;
  std::string body;
  const char* content_type = nullptr;
  absl::Duration timeout;
  const common::StopSignal* stop = nullptr;
  // Receives the body of a 200 answer piece by piece; false ends the transfer.
  std::function<bool(absl::string_view)> stream;
};

namespace {

struct TransferState {
  CURL* curl = nullptr;
  const std::function<bool(absl::string_view)>* stream = nullptr;
  const common::StopSignal* stop = nullptr;
  std::string body;
  bool ended_by_stream = false;
  bool stopped = false;
};

size_t OnWrite(char* data, size_t size, size_t count, void* user) {
  auto* state = static_cast<TransferState*>(user);
  const size_t n = size * count;
  long code = 0;
  curl_easy_getinfo(state->curl, CURLINFO_RESPONSE_CODE, &code);
  if (state->stream != nullptr && *state->stream && code == 200) {
    if (!(*state->stream)(absl::string_view(data, n))) {
      state->ended_by_stream = true;
      return 0;
    }
    return n;
  }
  state->body.append(data, n);
  return n;
}

int OnProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* state = static_cast<TransferState*>(user);
  if (state->stop != nullptr && state->stop->stopped()) {
    state->stopped = true;
    return 1;
  }
  return 0;
}

}  // namespace

absl::Status StatusFromHttp(long http_code, absl::string_view body, absl::string_view what) {
  std::string message;
  std::string reason;
  Json parsed = Json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_discarded() && parsed.is_object()) {
    message = manifest::GetString(parsed, {"message"});
    reason = manifest::GetString(parsed, {"reason"});
  }
  if (message.empty()) message = std::string(body.substr(0, 512));
  const std::string text = absl::StrCat(what, ": HTTP ", http_code, ": ", message);
  switch (http_code) {
    case 400:
    case 415:
    case 422:
      return absl::InvalidArgumentError(text);
    case 401:
      return absl::UnauthenticatedError(text);
    case 403:
      return absl::PermissionDeniedError(text);
    case 404:
      return absl::NotFoundError(text);
    case 409:
      return reason == "AlreadyExists" ? absl::AlreadyExistsError(text) : absl::AbortedError(text);
    case 410:
      return absl::OutOfRangeError(text);
    case 429:
      return absl::UnavailableError(text);
    default:
      if (http_code >= 500) return absl::UnavailableError(text);
      return absl::UnknownError(text);
  }
}

std::string ResourcePath(const manifest::ResourceKind& kind, absl::string_view ns,
                         absl::string_view name) {
  std::string path = kind.GroupVersionPath();
  if (kind.namespaced && !ns.empty()) absl::StrAppend(&path, "/namespaces/", Escape(ns));
  absl::StrAppend(&path, "/", kind.plural);
  if (!name.empty()) absl::StrAppend(&path, "/", Escape(name));
  return path;
}

absl::StatusOr<std::unique_ptr<CurlKubeClient>> CurlKubeClient::Create(manifest::KubeConfig config,
                                                                       Options options) {
  config.server = std::string(absl::StripSuffix(config.server, "/"));
  if (!absl::StartsWith(config.server, "https://") && !absl::StartsWith(config.server, "http://")) {
    return absl::InvalidArgumentError(absl::StrCat("Kubernetes API server \"", config.server,
                                                   "\": want an http:// or https:// URL"));
  }
  return std::unique_ptr<CurlKubeClient>(new CurlKubeClient(std::move(config), std::move(options)));
}

absl::StatusOr<CurlKubeClient::Response> CurlKubeClient::Perform(const Request& request) {
  std::unique_ptr<CURL, CurlDeleter> curl(curl_easy_init());
  if (curl == nullptr) return absl::ResourceExhaustedError("curl_easy_init failed");
  CURL* c = curl.get();
  const std::string url = config_.server + request.path;
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, request.method);
  curl_easy_setopt(c, CURLOPT_USERAGENT, options_.user_agent.c_str());
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(absl::ToInt64Milliseconds(options_.connect_timeout)));
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS,
                   static_cast<long>(absl::ToInt64Milliseconds(request.timeout)));
  if (!options_.use_env_proxy) curl_easy_setopt(c, CURLOPT_PROXY, "");
  char error[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, error);

  // TLS: always verified; the configured CA replaces the system store.
  curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
  curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
  curl_blob ca{const_cast<char*>(config_.ca_pem.data()), config_.ca_pem.size(), CURL_BLOB_COPY};
  if (!config_.ca_pem.empty()) {
    curl_easy_setopt(c, CURLOPT_CAPATH, nullptr);
    curl_easy_setopt(c, CURLOPT_CAINFO_BLOB, &ca);
  }
  curl_blob cert{const_cast<char*>(config_.client_cert_pem.data()), config_.client_cert_pem.size(),
                 CURL_BLOB_COPY};
  curl_blob key{const_cast<char*>(config_.client_key_pem.data()), config_.client_key_pem.size(),
                CURL_BLOB_COPY};
  if (!config_.client_cert_pem.empty()) {
    curl_easy_setopt(c, CURLOPT_SSLCERT_BLOB, &cert);
    curl_easy_setopt(c, CURLOPT_SSLCERTTYPE, "PEM");
    curl_easy_setopt(c, CURLOPT_SSLKEY_BLOB, &key);
    curl_easy_setopt(c, CURLOPT_SSLKEYTYPE, "PEM");
  }

  curl_slist* raw_headers = curl_slist_append(nullptr, "Accept: application/json");
  std::unique_ptr<curl_slist, SlistDeleter> headers(raw_headers);
  if (request.content_type != nullptr) {
    headers.reset(curl_slist_append(headers.release(),
                                    absl::StrCat("Content-Type: ", request.content_type).c_str()));
  }
  std::string token = config_.token;
  if (token.empty() && !config_.token_file.empty()) {
    // Re-read every call: the kubelet rotates projected service-account tokens in place.
    TOLLGATE_ASSIGN_OR_RETURN(token, common::ReadFileToString(config_.token_file));
    token = std::string(absl::StripAsciiWhitespace(token));
  }
  if (!token.empty()) {
    headers.reset(curl_slist_append(headers.release(),
                                    absl::StrCat("Authorization: Bearer ", token).c_str()));
  }
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
  if (!request.body.empty() || absl::string_view(request.method) != "GET") {
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, request.body.data());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, static_cast<long>(request.body.size()));
  }

  TransferState state;
  state.curl = c;
  state.stream = &request.stream;
  state.stop = request.stop;
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, OnWrite);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &state);
  if (request.stop != nullptr) {
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, OnProgress);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, &state);
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  }

  const CURLcode rc = curl_easy_perform(c);
  Response response;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &response.code);
  response.body = std::move(state.body);
  const bool streaming = static_cast<bool>(request.stream) && response.code == 200;
  if (rc == CURLE_OK || (rc == CURLE_WRITE_ERROR && state.ended_by_stream) ||
      (rc == CURLE_ABORTED_BY_CALLBACK && state.stopped) ||
      // A watch that outlives its client-side timeout simply ends; the caller watches again.
      (rc == CURLE_OPERATION_TIMEDOUT && streaming)) {
    return response;
  }
  return absl::UnavailableError(absl::StrCat(request.method, " ", url, ": ",
                                             error[0] != '\0' ? error : curl_easy_strerror(rc)));
}

absl::StatusOr<Json> CurlKubeClient::JsonCall(const char* method, const std::string& path,
                                              const std::string& body, const char* content_type,
                                              absl::string_view what) {
  Request request;
  request.method = method;
  request.path = path;
  request.body = body;
  request.content_type = content_type;
  request.timeout = options_.request_timeout;
  TOLLGATE_ASSIGN_OR_RETURN(Response response, Perform(request));
  if (response.code < 200 || response.code > 299) {
    return StatusFromHttp(response.code, response.body, what);
  }
  return manifest::ParseJson(response.body, what);
}

absl::StatusOr<Json> CurlKubeClient::Get(const manifest::ResourceKind& kind, absl::string_view ns,
                                         absl::string_view name) {
  return JsonCall("GET", ResourcePath(kind, ns, name), "", nullptr,
                  absl::StrCat("get ", kind.plural, " ", ns, "/", name));
}

absl::StatusOr<ListResult> CurlKubeClient::List(const manifest::ResourceKind& kind,
                                                absl::string_view ns) {
  ListResult result;
  std::string continue_token;
  // Bounded: a server that keeps answering with a continue token cannot loop us forever.
  for (int page = 0; page < 100000; ++page) {
    std::string path = absl::StrCat(ResourcePath(kind, ns, ""), "?limit=", kListPageSize);
    if (!continue_token.empty()) absl::StrAppend(&path, "&continue=", Escape(continue_token));
    TOLLGATE_ASSIGN_OR_RETURN(
        Json list, JsonCall("GET", path, "", nullptr, absl::StrCat("list ", kind.plural)));
    // Every page is read at the first page's version, so that is the one to watch from.
    if (page == 0)
      result.resource_version = manifest::GetString(list, {"metadata", "resourceVersion"});
    if (const Json* items = manifest::Find(list, {"items"});
        items != nullptr && items->is_array()) {
      for (const Json& item : *items) {
        Json copy = item;
        // Lists leave out each item's apiVersion/kind; put them back so items look like GETs.
        copy["apiVersion"] = kind.ApiVersion();
        copy["kind"] = kind.kind;
        result.items.push_back(std::move(copy));
      }
    }
    continue_token = manifest::GetString(list, {"metadata", "continue"});
    if (continue_token.empty()) return result;
  }
  return absl::UnavailableError(absl::StrCat("list ", kind.plural, ": too many pages"));
}

absl::Status CurlKubeClient::Watch(const manifest::ResourceKind& kind, absl::string_view ns,
                                   absl::string_view resource_version,
                                   const std::function<bool(const WatchEvent&)>& on_event,
                                   const common::StopSignal& stop) {
  const int64_t timeout_seconds = absl::ToInt64Seconds(options_.watch_timeout);
  Request request;
  request.path = absl::StrCat(ResourcePath(kind, ns, ""),
                              "?watch=1&allowWatchBookmarks=true&timeoutSeconds=", timeout_seconds,
                              "&resourceVersion=", Escape(resource_version));
  // The server closes the stream after timeoutSeconds; the client gives it a margin.
  request.timeout = options_.watch_timeout + absl::Seconds(30);
  request.stop = &stop;
  const std::string what = absl::StrCat("watch ", kind.plural);
  std::string buffer;
  absl::Status stream_status;
  request.stream = [&](absl::string_view data) {
    buffer.append(data.data(), data.size());
    size_t start = 0;
    for (size_t newline = buffer.find('\n', start); newline != std::string::npos;
         newline = buffer.find('\n', start)) {
      const absl::string_view line(buffer.data() + start, newline - start);
      start = newline + 1;
      if (absl::StripAsciiWhitespace(line).empty()) continue;
      absl::StatusOr<Json> event = manifest::ParseJson(line, what);
      if (!event.ok()) {
        stream_status = event.status();
        return false;
      }
      WatchEvent e{manifest::GetString(*event, {"type"}), Json::object()};
      if (const Json* object = manifest::Find(*event, {"object"}); object != nullptr)
        e.object = *object;
      if (e.type == "ERROR") {
        const int64_t code = manifest::GetInt(e.object, {"code"}).value_or(500);
        stream_status = StatusFromHttp(code, manifest::Dump(e.object), what);
        return false;
      }
      if (!on_event(e)) return false;
    }
    buffer.erase(0, start);
    if (buffer.size() > kMaxWatchLine) {
      stream_status = absl::ResourceExhaustedError(absl::StrCat(what, ": event too large"));
      return false;
    }
    return true;
  };
  TOLLGATE_ASSIGN_OR_RETURN(Response response, Perform(request));
  if (response.code != 200) return StatusFromHttp(response.code, response.body, what);
  return stream_status;
}

absl::StatusOr<Json> CurlKubeClient::Patch(const manifest::ResourceKind& kind, absl::string_view ns,
                                           absl::string_view name, PatchType type,
                                           const Json& patch) {
  return JsonCall("PATCH", ResourcePath(kind, ns, name), manifest::Dump(patch),
                  type == PatchType::kMerge ? kMergePatch : kJsonPatch,
                  absl::StrCat("patch ", kind.plural, " ", ns, "/", name));
}

absl::StatusOr<Json> CurlKubeClient::Create(const manifest::ResourceKind& kind,
                                            absl::string_view ns, const Json& object) {
  return JsonCall("POST", ResourcePath(kind, ns, ""), manifest::Dump(object), kJson,
                  absl::StrCat("create ", kind.plural, " in ", ns));
}

absl::Status CurlKubeClient::Delete(const manifest::ResourceKind& kind, absl::string_view ns,
                                    absl::string_view name) {
  return JsonCall("DELETE", ResourcePath(kind, ns, name), "", nullptr,
                  absl::StrCat("delete ", kind.plural, " ", ns, "/", name))
      .status();
}

absl::StatusOr<Json> CurlKubeClient::PatchStatus(const manifest::ResourceKind& kind,
                                                 absl::string_view ns, absl::string_view name,
                                                 const Json& patch) {
  return JsonCall("PATCH", absl::StrCat(ResourcePath(kind, ns, name), "/status"),
                  manifest::Dump(patch), kMergePatch,
                  absl::StrCat("patch ", kind.plural, "/status ", ns, "/", name));
}

absl::Status CurlKubeClient::DeleteWithDependents(const manifest::ResourceKind& kind,
                                                  absl::string_view ns, absl::string_view name) {
  const Json options = {
      {"apiVersion", "v1"}, {"kind", "DeleteOptions"}, {"propagationPolicy", "Background"}};
  return JsonCall("DELETE", ResourcePath(kind, ns, name), manifest::Dump(options), kJson,
                  absl::StrCat("delete ", kind.plural, " ", ns, "/", name))
      .status();
}

}  // namespace tollgate::kubeapi
