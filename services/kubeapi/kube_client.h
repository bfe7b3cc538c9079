#pragma once

// The slice of the Kubernetes REST API the adapter uses, behind an interface so the controller
// is tested against a fake, and its libcurl implementation.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/stop_signal.h"
#include "services/manifest/json_util.h"
#include "services/manifest/kube_config.h"
#include "services/manifest/kube_resource.h"

namespace tollgate::kubeapi {

// Kubernetes objects as JSON, as the manifest library reads them.
using Json = manifest::Json;

struct ListResult {
  std::vector<Json> items;
  // The collection's resourceVersion: watch from here to see every later change.
  std::string resource_version;
};

struct WatchEvent {
  // ADDED, MODIFIED, DELETED or BOOKMARK (ERROR events become the watch's status).
  std::string type;
  Json object;
};

enum class PatchType {
  // application/merge-patch+json (RFC 7386). A metadata.resourceVersion in the patch is a
  // precondition: the server answers 409 Conflict when the object has moved on.
  kMerge,
  // application/json-patch+json (RFC 6902).
  kJson,
};

// Errors map HTTP statuses onto absl codes, keeping the server's message:
//   404 NOT_FOUND; 409 ABORTED (a conflict: re-read and retry), or ALREADY_EXISTS on create;
//   410 OUT_OF_RANGE (the resourceVersion has expired: re-list); 400/422 INVALID_ARGUMENT;
//   401 UNAUTHENTICATED; 403 PERMISSION_DENIED; 429, 5xx and transport errors UNAVAILABLE.
// An empty namespace means all namespaces (or a cluster-scoped kind). Thread-safe.
class KubeClient {
 public:
  virtual ~KubeClient() = default;

  virtual absl::StatusOr<Json> Get(const manifest::ResourceKind& kind, absl::string_view ns,
                                   absl::string_view name) = 0;
  // Every page of the collection.
  virtual absl::StatusOr<ListResult> List(const manifest::ResourceKind& kind,
                                          absl::string_view ns) = 0;
  // Streams changes after `resource_version` to `on_event` until it returns false, `stop`
  // fires (both OK), the server ends the stream (OK: watch again from the last version seen),
  // or an error; OUT_OF_RANGE when the version is too old.
  virtual absl::Status Watch(const manifest::ResourceKind& kind, absl::string_view ns,
                             absl::string_view resource_version,
                             const std::function<bool(const WatchEvent&)>& on_event,
                             const common::StopSignal& stop) = 0;
  virtual absl::StatusOr<Json> Patch(const manifest::ResourceKind& kind, absl::string_view ns,
                                     absl::string_view name, PatchType type, const Json& patch) = 0;
  virtual absl::StatusOr<Json> Create(const manifest::ResourceKind& kind, absl::string_view ns,
                                      const Json& object) = 0;
  virtual absl::Status Delete(const manifest::ResourceKind& kind, absl::string_view ns,
                              absl::string_view name) = 0;
  // A merge patch of the status subresource (metadata.resourceVersion in the patch makes it
  // conditional).
  virtual absl::StatusOr<Json> PatchStatus(const manifest::ResourceKind& kind, absl::string_view ns,
                                           absl::string_view name, const Json& patch) {
    (void)kind, (void)ns, (void)name, (void)patch;
    return absl::UnimplementedError("PatchStatus");
  }
  // Delete with propagationPolicy Background: what the object owns (a Job's pods) goes too.
  virtual absl::Status DeleteWithDependents(const manifest::ResourceKind& kind,
                                            absl::string_view ns, absl::string_view name) {
    return Delete(kind, ns, name);
  }
};

// True for 409 Conflict: a resourceVersion precondition failed, so re-read and retry.
inline bool IsConflict(const absl::Status& status) { return absl::IsAborted(status); }

// The absl status for an HTTP error answer whose body is usually a metav1.Status.
absl::Status StatusFromHttp(long http_code, absl::string_view body, absl::string_view what);

// The path (and query) of a collection or an object, e.g. "/apis/batch/v1/namespaces/a/jobs".
std::string ResourcePath(const manifest::ResourceKind& kind, absl::string_view ns,
                         absl::string_view name);

// KubeClient over libcurl: one easy handle per call, TLS verified against the configured CA,
// bearer token or client certificate. Watches use chunked streaming with the server-side
// timeout `watch_timeout` and allowWatchBookmarks. curl_global_init must have run (main does
// it). Thread-safe.
class CurlKubeClient final : public KubeClient {
 public:
  struct Options {
    absl::Duration request_timeout = absl::Seconds(30);
    absl::Duration watch_timeout = absl::Minutes(5);
    absl::Duration connect_timeout = absl::Seconds(10);
    std::string user_agent = "tollgate-kube";
    // Honour http(s)_proxy/no_proxy from the environment. Off by default: in a pod the API
    // server is reached directly, and a proxy meant for image pulls must not see its token.
    bool use_env_proxy = false;
  };

  // INVALID_ARGUMENT when `config` names no server or a scheme other than http(s).
  static absl::StatusOr<std::unique_ptr<CurlKubeClient>> Create(manifest::KubeConfig config,
                                                                Options options);

  absl::StatusOr<Json> Get(const manifest::ResourceKind& kind, absl::string_view ns,
                           absl::string_view name) override;
  absl::StatusOr<ListResult> List(const manifest::ResourceKind& kind,
                                  absl::string_view ns) override;
  absl::Status Watch(const manifest::ResourceKind& kind, absl::string_view ns,
                     absl::string_view resource_version,
                     const std::function<bool(const WatchEvent&)>& on_event,
                     const common::StopSignal& stop) override;
  absl::StatusOr<Json> Patch(const manifest::ResourceKind& kind, absl::string_view ns,
                             absl::string_view name, PatchType type, const Json& patch) override;
  absl::StatusOr<Json> Create(const manifest::ResourceKind& kind, absl::string_view ns,
                              const Json& object) override;
  absl::Status Delete(const manifest::ResourceKind& kind, absl::string_view ns,
                      absl::string_view name) override;
  absl::StatusOr<Json> PatchStatus(const manifest::ResourceKind& kind, absl::string_view ns,
                                   absl::string_view name, const Json& patch) override;
  absl::Status DeleteWithDependents(const manifest::ResourceKind& kind, absl::string_view ns,
                                    absl::string_view name) override;

 private:
  struct Response {
    long code = 0;
    std::string body;
  };
  struct Request;

  CurlKubeClient(manifest::KubeConfig config, Options options)
      : config_(std::move(config)), options_(std::move(options)) {}
  // One HTTP exchange. `stream` (optional) receives the body as it arrives instead of
  // Response::body once the status is 200; returning false ends the transfer.
  absl::StatusOr<Response> Perform(const Request& request);
  absl::StatusOr<Json> JsonCall(const char* method, const std::string& path,
                                const std::string& body, const char* content_type,
                                absl::string_view what);

  const manifest::KubeConfig config_;
  const Options options_;
};

}  // namespace tollgate::kubeapi
