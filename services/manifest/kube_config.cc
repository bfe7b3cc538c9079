#include "services/manifest/kube_config.h"

#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/yaml_documents.h"
#include "core/status_macros.h"

namespace tollgate::manifest {
namespace {

std::string Resolve(absl::string_view base_dir, const std::string& path) {
  if (path.empty() || path[0] == '/' || base_dir.empty()) return path;
  return (std::filesystem::path(std::string(base_dir)) / path).string();
}

// A scalar field of a YAML map, or "" when absent or not a scalar.
std::string Scalar(const YAML::Node& node, const char* key) {
  const YAML::Node value = node[key];
  if (!value.IsDefined() || !value.IsScalar()) return "";
  return value.as<std::string>();
}

// The `inner`-keyed map of the entry of `list` whose name is `name`, e.g. clusters[].cluster.
absl::StatusOr<YAML::Node> Named(const YAML::Node& root, const char* list, const char* inner,
                                 const std::string& name) {
  const YAML::Node entries = root[list];
  if (entries.IsDefined() && entries.IsSequence()) {
    for (const YAML::Node& entry : entries) {
      if (entry.IsMap() && Scalar(entry, "name") == name) {
        const YAML::Node value = entry[inner];
        return value.IsDefined() && value.IsMap() ? value : YAML::Node(YAML::NodeType::Map);
      }
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat("kubeconfig: no ", list, " entry named \"", name, "\""));
}

// Inline base64 data, or the file it names, or "".
absl::StatusOr<std::string> DataOrFile(const YAML::Node& node, const char* data_key,
                                       const char* file_key, absl::string_view base_dir) {
  const std::string data = Scalar(node, data_key);
  if (!data.empty()) {
    std::string decoded;
    if (!absl::Base64Unescape(data, &decoded)) {
      return absl::InvalidArgumentError(absl::StrCat("kubeconfig: ", data_key, " is not base64"));
    }
    return decoded;
  }
  const std::string file = Scalar(node, file_key);
  if (file.empty()) return std::string();
  return common::ReadFileToString(Resolve(base_dir, file));
}

absl::StatusOr<KubeConfig> ParseOrThrow(const YAML::Node& root, absl::string_view base_dir,
                                        absl::string_view context_flag) {
  if (!root.IsMap()) return absl::InvalidArgumentError("kubeconfig: not a YAML map");
  std::string context_name(context_flag);
  if (context_name.empty()) context_name = Scalar(root, "current-context");
  if (context_name.empty()) {
    return absl::InvalidArgumentError("kubeconfig: no current-context and no --context given");
  }
  TOLLGATE_ASSIGN_OR_RETURN(YAML::Node context, Named(root, "contexts", "context", context_name));
  TOLLGATE_ASSIGN_OR_RETURN(YAML::Node cluster,
                            Named(root, "clusters", "cluster", Scalar(context, "cluster")));
  KubeConfig config;
  config.namespace_name = Scalar(context, "namespace");
  config.server = Scalar(cluster, "server");
  if (config.server.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("kubeconfig: cluster \"", Scalar(context, "cluster"), "\" has no server"));
  }
  if (absl::AsciiStrToLower(Scalar(cluster, "insecure-skip-tls-verify")) == "true") {
    return absl::InvalidArgumentError(
        "kubeconfig: insecure-skip-tls-verify is not supported; give the cluster's "
        "certificate-authority instead");
  }
  TOLLGATE_ASSIGN_OR_RETURN(config.ca_pem, DataOrFile(cluster, "certificate-authority-data",
                                                      "certificate-authority", base_dir));

  const std::string user_name = Scalar(context, "user");
  YAML::Node user(YAML::NodeType::Map);
  if (!user_name.empty()) {
    TOLLGATE_ASSIGN_OR_RETURN(user, Named(root, "users", "user", user_name));
  }
  for (const char* unsupported : {"exec", "auth-provider", "username", "password"}) {
    if (user[unsupported].IsDefined()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "kubeconfig: user \"", user_name, "\" uses ", unsupported,
          ", which tollgate-kube does not support; use a token or a client certificate"));
    }
  }
  config.token = Scalar(user, "token");
  const std::string token_file = Scalar(user, "tokenFile");
  if (!token_file.empty()) config.token_file = Resolve(base_dir, token_file);
  TOLLGATE_ASSIGN_OR_RETURN(config.client_cert_pem, DataOrFile(user, "client-certificate-data",
                                                               "client-certificate", base_dir));
  TOLLGATE_ASSIGN_OR_RETURN(config.client_key_pem,
                            DataOrFile(user, "client-key-data", "client-key", base_dir));
  if (config.client_cert_pem.empty() != config.client_key_pem.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "kubeconfig: user \"", user_name, "\" needs both a client certificate and a client key"));
  }
  return config;
}

}  // namespace

absl::StatusOr<KubeConfig> LoadInClusterConfig(absl::string_view host, absl::string_view port,
                                               absl::string_view sa_dir) {
  if (host.empty() || port.empty()) {
    return absl::FailedPreconditionError(
        "not running in a pod: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are unset "
        "(pass --kubeconfig to run outside a cluster)");
  }
  KubeConfig config;
  // An IPv6 service address needs brackets in a URL.
  const bool ipv6 = absl::StrContains(host, ':');
  config.server = absl::StrCat("https://", ipv6 ? "[" : "", host, ipv6 ? "]" : "", ":", port);
  const std::string dir(sa_dir);
  config.token_file = dir + "/token";
  TOLLGATE_RETURN_IF_ERROR(common::ReadFileToString(config.token_file).status());
  TOLLGATE_ASSIGN_OR_RETURN(config.ca_pem, common::ReadFileToString(dir + "/ca.crt"));
  absl::StatusOr<std::string> ns = common::ReadFileToString(dir + "/namespace");
  if (ns.ok()) config.namespace_name = std::string(absl::StripAsciiWhitespace(*ns));
  return config;
}

absl::StatusOr<KubeConfig> ParseKubeConfig(absl::string_view yaml, absl::string_view base_dir,
                                           absl::string_view context) {
  TOLLGATE_ASSIGN_OR_RETURN(const YAML::Node root, common::LoadYamlDocument(yaml, "kubeconfig"));
  // yaml-cpp reports conversion errors by throwing; keep them inside this layer.
  try {
    return ParseOrThrow(root, base_dir, context);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("kubeconfig: ", e.what()));
  }
}

absl::StatusOr<KubeConfig> LoadKubeConfigFile(const std::string& path, absl::string_view context) {
  TOLLGATE_ASSIGN_OR_RETURN(std::string text, common::ReadFileToString(path));
  absl::StatusOr<KubeConfig> config =
      ParseKubeConfig(text, std::filesystem::path(path).parent_path().string(), context);
  if (!config.ok()) {
    return absl::Status(config.status().code(),
                        absl::StrCat(path, ": ", config.status().message()));
  }
  return config;
}

}  // namespace tollgate::manifest
