#pragma once

// Where a MultiKueueCluster's worker is and how the manager authenticates to it (Kueue's
// loadClientConfig): Tollgate's spec.endpoint (files named in the spec), or a kubeconfig file
// named by spec.kubeConfig with locationType Path, checked by Kueue's rules for MultiKueue
// kubeconfigs (validateKubeconfig, validateKubeConfigPath). In Tollgate the kubeconfig's server
// is the worker tollgated's gRPC address. A kubeConfig Secret's key `kubeconfig` is read
// through the Kubernetes API (Kueue's way), or as Kubernetes mounts it into the controller's pod
// (SECRETS_DIR/<secret>/kubeconfig), by the same rules (docs/multicluster.md).

#include <functional>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "clients/cpp/connection.h"
#include "tollgate/v1/objects.pb.h"

namespace tollgate::multikueue {

// Kueue's default (and only) directory for kubeconfig paths (defaultKubeConfigPathPrefix).
inline constexpr absl::string_view kDefaultKubeConfigDir = "/etc/multikueue/kubeconfigs";

struct WorkerSource {
  // host:port of the worker tollgated.
  std::string address;
  client::Credentials credentials;
  // Where the address came from, for messages: "spec.endpoint.address" or "kubeconfig server".
  std::string address_field;
};

struct ResolvedWorker {
  // The spec and the content of the files it names: a connection is remade when it changes
  // (Kueue watches a kubeconfig path for writes).
  std::string fingerprint;
  // Set when the worker can be connected; otherwise `reason` (Kueue's Active=False reason:
  // BadKubeConfig or InsecureKubeConfig) and `message` say why.
  std::optional<WorkerSource> source;
  std::string reason;
  std::string message;
};

// A kubeConfig Secret's key `kubeconfig` (decoded), read through the Kubernetes API; an error's
// message says what was missing (ApiSecretReader in secret_reader.h).
using SecretReader = std::function<absl::StatusOr<std::string>(const std::string& secret)>;

// Reads what `spec` names now. `kubeconfig_dir`: a kubeConfig path must resolve (symlinks
// followed) to a file under it, as Kueue's MultiKueueKubeConfigPathValidation requires.
// kubeConfig Secrets: through `read_secret` when set; otherwise from `secrets_dir`, where they
// are mounted, one directory per Secret named after it; neither: BadKubeConfig saying so.
ResolvedWorker ResolveWorker(const v1::MultiKueueClusterSpec& spec,
                             absl::string_view kubeconfig_dir, absl::string_view secrets_dir = "",
                             const SecretReader& read_secret = {});

// Kueue's validateKubeconfig for kubeconfig text: the reason to refuse it as insecure, or "" when
// it may be used. No tokenFile, no insecure-skip-tls-verify, no certificate-authority file (its
// data inline), a server on every cluster; for the current context's user no basic auth, exec
// plugin or auth provider; a server whose host is an IP address or a DNS name.
std::string InsecureKubeConfigReason(absl::string_view kubeconfig);

// The gRPC target and whether it is TLS, from a kubeconfig server URL ("https://h:p", or
// "http://h:p" for plaintext, which only a loopback host may use); "" when it cannot be read.
struct ServerTarget {
  std::string address;
  bool tls = true;
};
std::optional<ServerTarget> TargetOfServer(absl::string_view server);

}  // namespace tollgate::multikueue
