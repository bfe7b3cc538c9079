#pragma once

// Where the Kubernetes API server is and how to authenticate to it: in-cluster (the pod's
// service account) or from a kubeconfig file, as client-go's rest.InClusterConfig and
// clientcmd load them.

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tollgate::manifest {

struct KubeConfig {
  // "https://host:port" (or "http://..." for a local test server).
  std::string server;
  // PEM CA bundle that must have signed the server's certificate; empty means the system's.
  std::string ca_pem;
  // PEM client certificate and key (kubeconfig client-certificate[-data], client-key[-data]).
  std::string client_cert_pem;
  std::string client_key_pem;
  // A bearer token, or a file re-read on every request (service-account tokens rotate).
  std::string token;
  std::string token_file;
  // The context's or the pod's namespace; informational.
  std::string namespace_name;
};

// The default service-account mount of a pod.
inline constexpr absl::string_view kServiceAccountDir =
    "/var/run/secrets/kubernetes.io/serviceaccount";

// In-cluster config from KUBERNETES_SERVICE_HOST/PORT (passed in, so tests need no
// environment) and `sa_dir`'s token, ca.crt and namespace. FAILED_PRECONDITION when not in a
// pod.
absl::StatusOr<KubeConfig> LoadInClusterConfig(absl::string_view host, absl::string_view port,
                                               absl::string_view sa_dir = kServiceAccountDir);

// Parses kubeconfig YAML. `context` empty means current-context. Relative file paths are
// resolved against `base_dir` (the kubeconfig's directory). Supported: cluster server,
// certificate-authority[-data]; user token, tokenFile, client-certificate[-data],
// client-key[-data]. Refused with INVALID_ARGUMENT: exec and auth-provider plugins, basic
// auth, insecure-skip-tls-verify (the adapter always verifies TLS), and a missing piece.
absl::StatusOr<KubeConfig> ParseKubeConfig(absl::string_view yaml, absl::string_view base_dir,
                                           absl::string_view context);

// Reads and parses the kubeconfig at `path`.
absl::StatusOr<KubeConfig> LoadKubeConfigFile(const std::string& path, absl::string_view context);

}  // namespace tollgate::manifest
