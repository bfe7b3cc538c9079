#include "adapters/multikueue/worker_source.h"

#include <filesystem>
#include <system_error>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/file_util.h"
#include "common/host_port.h"
#include "common/yaml_documents.h"
#include "core/names.h"
#include "grpcpp/security/credentials.h"
#include "services/manifest/kube_config.h"

namespace tollgate::multikueue {
namespace {

constexpr char kBadKubeConfig[] = "BadKubeConfig";
constexpr char kInsecureKubeConfig[] = "InsecureKubeConfig";

std::string Scalar(const YAML::Node& node, const char* key) {
  if (!node.IsMap()) return "";
  const YAML::Node value = node[key];
  if (!value.IsDefined() || !value.IsScalar()) return "";
  return value.Scalar();
}

// The `inner` map of the entry of `list` named `name` (clusters[].cluster, users[].user), or an
// undefined node.
YAML::Node Named(const YAML::Node& root, const char* list, const char* inner,
                 const std::string& name) {
  const YAML::Node entries = root[list];
  if (!entries.IsDefined() || !entries.IsSequence()) return YAML::Node();
  for (const YAML::Node& entry : entries) {
    if (entry.IsMap() && Scalar(entry, "name") == name) return entry[inner];
  }
  return YAML::Node();
}

// Kueue's validateKubeConfigPath: absolute, no "..", and under `dir` once symlinks are
// resolved. Returns the resolved path, or the error message.
std::pair<std::string, std::string> ValidatedPath(const std::string& raw, absl::string_view dir) {
  const std::string refused = "kubeconfig path is not under the allowed prefix: ";
  if (raw.empty()) return {"", "kubeconfig path must not be empty"};
  const std::filesystem::path cleaned = std::filesystem::path(raw).lexically_normal();
  for (const std::filesystem::path& part : cleaned) {
    if (part == "..") return {"", refused + "path contains \"..\""};
  }
  if (!cleaned.is_absolute()) return {"", refused + "path must be absolute"};
  std::error_code error;
  const std::filesystem::path prefix = std::filesystem::canonical(std::string(dir), error);
  if (error) {
    return {"", absl::StrCat(refused, "\"", cleaned.string(), "\" is not under \"", dir, "\"")};
  }
  const std::filesystem::path resolved = std::filesystem::canonical(cleaned, error);
  if (error) {
    return {"", absl::StrCat("cannot resolve kubeconfig path symlinks: ", cleaned.string(), ": ",
                             error.message())};
  }
  if (!absl::StartsWith(resolved.string() + "/", prefix.string() + "/")) {
    return {"", absl::StrCat(refused, "\"", resolved.string(), "\" is not under \"",
                             prefix.string(), "\"")};
  }
  return {resolved.string(), ""};
}

ResolvedWorker Failed(std::string fingerprint, const char* reason, std::string message) {
  ResolvedWorker out;
  out.fingerprint = std::move(fingerprint);
  out.reason = reason;
  out.message = std::move(message);
  return out;
}

ResolvedWorker FromEndpoint(const v1::MultiKueueWorkerEndpoint& endpoint, std::string fingerprint) {
  // The insecure/loopback rule was enforced when the cluster was applied
  // (services/api/multikueue_codec.h).
  client::ConnectionFiles files;
  files.ca_file = endpoint.ca_file();
  files.cert_file = endpoint.cert_file();
  files.key_file = endpoint.key_file();
  files.token_file = endpoint.token_file();
  absl::StatusOr<client::Credentials> credentials = client::LoadCredentials(files);
  if (!credentials.ok()) {
    return Failed(std::move(fingerprint), kBadKubeConfig,
                  std::string(credentials.status().message()));
  }
  ResolvedWorker out;
  out.fingerprint = std::move(fingerprint);
  out.source = WorkerSource{endpoint.address(), *std::move(credentials), "spec.endpoint.address"};
  return out;
}

// Kubeconfig text read from `where` (a file, or a Secret's key), by Kueue's rules.
ResolvedWorker FromKubeConfigText(const std::string& text, absl::string_view where,
                                  std::string fingerprint) {
  fingerprint += text;
  if (std::string insecure = InsecureKubeConfigReason(text); !insecure.empty()) {
    return Failed(std::move(fingerprint), kInsecureKubeConfig, std::move(insecure));
  }
  absl::StatusOr<manifest::KubeConfig> config = manifest::ParseKubeConfig(text, "", "");
  if (!config.ok()) {
    return Failed(std::move(fingerprint), kBadKubeConfig,
                  absl::StrCat(where, ": ", config.status().message()));
  }
  const std::optional<ServerTarget> target = TargetOfServer(config->server);
  if (!target.has_value()) {
    return Failed(std::move(fingerprint), kBadKubeConfig,
                  absl::StrCat(where, ": server \"", config->server,
                               "\" is not https://HOST[:PORT] or http://HOST:PORT"));
  }
  client::Credentials credentials;
  if (target->tls) {
    grpc::SslCredentialsOptions tls;
    tls.pem_root_certs = config->ca_pem;
    tls.pem_cert_chain = config->client_cert_pem;
    tls.pem_private_key = config->client_key_pem;
    credentials.channel = grpc::SslCredentials(tls);
  } else if (!common::IsLoopbackAddress(target->address)) {
    // Secure by default: plaintext only where nothing can listen in.
    return Failed(std::move(fingerprint), kInsecureKubeConfig,
                  absl::StrCat("server \"", config->server,
                               "\": plaintext http:// is allowed only to a loopback address"));
  }
  credentials.bearer_token = config->token;
  ResolvedWorker out;
  out.fingerprint = std::move(fingerprint);
  out.source = WorkerSource{target->address, std::move(credentials), "kubeconfig server"};
  return out;
}

// The kubeconfig file at `path` (already checked to lie where it may).
ResolvedWorker FromKubeConfigFile(const std::string& path, std::string fingerprint) {
  absl::StatusOr<std::string> text = common::ReadFileToString(path);
  if (!text.ok()) {
    return Failed(std::move(fingerprint), kBadKubeConfig, std::string(text.status().message()));
  }
  return FromKubeConfigText(*text, path, std::move(fingerprint));
}

ResolvedWorker FromKubeConfigPath(const std::string& location, absl::string_view kubeconfig_dir,
                                  std::string fingerprint) {
  auto [path, refused] = ValidatedPath(location, kubeconfig_dir);
  if (!refused.empty()) return Failed(std::move(fingerprint), kBadKubeConfig, std::move(refused));
  return FromKubeConfigFile(path, std::move(fingerprint));
}

// Key `kubeconfig` of the Secret read through the Kubernetes API, as Kueue reads it.
ResolvedWorker FromKubeConfigSecretInApi(const std::string& secret, const SecretReader& read,
                                         std::string fingerprint) {
  const std::string label = absl::StrCat("kubeConfig Secret \"", secret, "\": ");
  absl::StatusOr<std::string> text = read(secret);
  if (!text.ok()) {
    return Failed(std::move(fingerprint), kBadKubeConfig,
                  absl::StrCat(label, text.status().message()));
  }
  ResolvedWorker out = FromKubeConfigText(*text, "key kubeconfig", std::move(fingerprint));
  if (!out.source.has_value()) out.message = absl::StrCat(label, out.message);
  return out;
}

// Or the Secret mounted as Kubernetes mounts one (a directory named after it, a file per key,
// symlinks into `..data`).
ResolvedWorker FromKubeConfigSecret(const std::string& secret, absl::string_view secrets_dir,
                                    const SecretReader& read_secret, std::string fingerprint) {
  const std::string label = absl::StrCat("kubeConfig Secret \"", secret, "\": ");
  // A Secret's name is a DNS subdomain: nothing that could walk out of a directory or a URL.
  if (!core::ValidateDns1123Subdomain(secret).ok()) {
    return Failed(std::move(fingerprint), kBadKubeConfig,
                  absl::StrCat(label, "not a valid Secret name"));
  }
  if (read_secret) return FromKubeConfigSecretInApi(secret, read_secret, std::move(fingerprint));
  if (secrets_dir.empty()) {
    return Failed(std::move(fingerprint), kBadKubeConfig,
                  absl::StrCat(label,
                               "tollgate-multikueue reads no Secrets: start it with "
                               "--secrets-namespace=NS to read them through the Kubernetes API, "
                               "or with --kubeconfig-secrets-dir=DIR and mount the Secret at DIR/",
                               secret,
                               "; or name the worker by spec.endpoint or by a kubeconfig file "
                               "(locationType: Path)"));
  }
  const std::string location = absl::StrCat(secrets_dir, "/", secret, "/kubeconfig");
  if (!std::filesystem::exists(location)) {
    return Failed(std::move(fingerprint), kBadKubeConfig,
                  absl::StrCat(label, "no key kubeconfig mounted at ", location));
  }
  auto [path, refused] = ValidatedPath(location, absl::StrCat(secrets_dir, "/", secret));
  if (!refused.empty()) {
    return Failed(std::move(fingerprint), kBadKubeConfig, absl::StrCat(label, refused));
  }
  ResolvedWorker out = FromKubeConfigFile(path, std::move(fingerprint));
  if (!out.source.has_value()) out.message = absl::StrCat(label, out.message);
  return out;
}

}  // namespace

std::optional<ServerTarget> TargetOfServer(absl::string_view server) {
  ServerTarget target;
  absl::string_view rest = server;
  if (absl::ConsumePrefix(&rest, "https://")) {
    target.tls = true;
  } else if (absl::ConsumePrefix(&rest, "http://")) {
    target.tls = false;
  } else {
    return std::nullopt;
  }
  // A path after the authority means nothing to a gRPC target; Kubernetes allows one.
  rest = rest.substr(0, rest.find('/'));
  if (rest.empty()) return std::nullopt;
  absl::StatusOr<common::HostPort> parsed = common::ParseHostPort(rest, "server", false);
  if (parsed.ok()) {
    target.address = std::string(rest);
  } else if (target.tls && !absl::StrContains(common::HostOf(rest), ':') &&
             common::ParseHostPort(absl::StrCat(rest, ":443"), "server", false).ok()) {
    target.address = absl::StrCat(rest, ":443");
  } else {
    return std::nullopt;
  }
  return target;
}

std::string InsecureKubeConfigReason(absl::string_view kubeconfig) {
  absl::StatusOr<YAML::Node> root = common::LoadYamlDocument(kubeconfig, "kubeconfig");
  // Unreadable text is BadKubeConfig, found by the parser.
  if (!root.ok() || !root->IsMap()) return "";
  if (const YAML::Node users = (*root)["users"]; users.IsDefined() && users.IsSequence()) {
    for (const YAML::Node& entry : users) {
      if (entry.IsMap() && !Scalar(entry["user"], "tokenFile").empty()) {
        return "tokenFile is not allowed";
      }
    }
  }
  if (const YAML::Node clusters = (*root)["clusters"];
      clusters.IsDefined() && clusters.IsSequence()) {
    for (const YAML::Node& entry : clusters) {
      if (!entry.IsMap()) continue;
      const std::string name = Scalar(entry, "name");
      const YAML::Node cluster = entry["cluster"];
      if (absl::AsciiStrToLower(Scalar(cluster, "insecure-skip-tls-verify")) == "true") {
        return absl::StrCat("insecure TLS verification is not allowed for cluster ", name);
      }
      if (!Scalar(cluster, "certificate-authority").empty()) {
        return absl::StrCat(
            "certificate-authority file paths are not allowed, use certificate-authority-data "
            "for cluster ",
            name);
      }
      if (Scalar(cluster, "server").empty()) {
        return absl::StrCat("server URL is required for cluster ", name);
      }
    }
  }
  // The context's user and server, as the REST config Kueue builds from it.
  const YAML::Node context = Named(*root, "contexts", "context", Scalar(*root, "current-context"));
  const YAML::Node user = Named(*root, "users", "user", Scalar(context, "user"));
  if (user.IsDefined() && user.IsMap()) {
    if (!Scalar(user, "username").empty() || !Scalar(user, "password").empty()) {
      return "basic auth is not allowed";
    }
    if (user["exec"].IsDefined()) return "exec plugins are not allowed";
    if (user["auth-provider"].IsDefined()) return "auth providers are not allowed";
  }
  const YAML::Node cluster = Named(*root, "clusters", "cluster", Scalar(context, "cluster"));
  const std::optional<ServerTarget> target = TargetOfServer(Scalar(cluster, "server"));
  if (target.has_value()) {
    const std::string host = absl::AsciiStrToLower(common::HostOf(target->address));
    const bool ip = absl::StrContains(host, ':') ||
                    (!host.empty() && host.find_first_not_of("0123456789.") == std::string::npos);
    if (!ip && !core::ValidateDns1123Subdomain(host).ok()) return "untrusted server endpoint";
  }
  return "";
}

ResolvedWorker ResolveWorker(const v1::MultiKueueClusterSpec& spec,
                             absl::string_view kubeconfig_dir, absl::string_view secrets_dir,
                             const SecretReader& read_secret) {
  std::string fingerprint = spec.SerializeAsString();
  if (spec.has_endpoint()) return FromEndpoint(spec.endpoint(), std::move(fingerprint));
  const v1::MultiKueueKubeConfig& ref = spec.kube_config();
  if (ref.location_type() == "Path") {
    return FromKubeConfigPath(ref.location(), kubeconfig_dir, std::move(fingerprint));
  }
  return FromKubeConfigSecret(ref.location(), secrets_dir, read_secret, std::move(fingerprint));
}

}  // namespace tollgate::multikueue
