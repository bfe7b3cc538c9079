#include "cmd/tollgated/server_security.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/host_port.h"
#include "core/status_macros.h"
#include "grpcpp/security/tls_certificate_provider.h"
#include "grpcpp/security/tls_credentials_options.h"
#include "services/auth/policy_parser.h"
#include "services/auth/token_file.h"

namespace tollgate {
namespace {

absl::StatusOr<std::string> ReadWholeFile(absl::string_view flag, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::FailedPreconditionError(
        absl::StrCat("--", flag, "=", path, ": cannot open: ", std::strerror(errno)));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

absl::StatusOr<int64_t> Int(const common::FlagArg& flag, int64_t min) {
  TOLLGATE_ASSIGN_OR_RETURN(std::string text, flag.String());
  int64_t value = 0;
  if (!absl::SimpleAtoi(text, &value) || value < min) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", flag.name, "=", text, ": want an integer >= ", min));
  }
  return value;
}

}  // namespace

absl::StatusOr<bool> ParseSecurityFlag(const common::FlagArg& flag, SecurityFlags& flags) {
  if (flag.name == "tls-cert") {
    TOLLGATE_ASSIGN_OR_RETURN(flags.tls_cert, flag.String());
  } else if (flag.name == "tls-key") {
    TOLLGATE_ASSIGN_OR_RETURN(flags.tls_key, flag.String());
  } else if (flag.name == "client-ca") {
    TOLLGATE_ASSIGN_OR_RETURN(flags.client_ca, flag.String());
  } else if (flag.name == "tls-reload-interval") {
    TOLLGATE_ASSIGN_OR_RETURN(flags.tls_reload_interval, flag.Duration(/*allow_zero=*/false));
    if (flags.tls_reload_interval < absl::Seconds(1)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--tls-reload-interval=", flag.value, ": must be at least 1s"));
    }
  } else if (flag.name == "token-file") {
    TOLLGATE_ASSIGN_OR_RETURN(flags.token_file, flag.String());
  } else if (flag.name == "oidc-issuer-url") {
    TOLLGATE_ASSIGN_OR_RETURN(flags.oidc.issuer_url, flag.String());
  } else if (flag.name == "oidc-client-id") {
    TOLLGATE_ASSIGN_OR_RETURN(flags.oidc.client_id, flag.String());
  } else if (flag.name == "oidc-jwks-file") {
    TOLLGATE_ASSIGN_OR_RETURN(flags.oidc_jwks_file, flag.String());
  } else if (flag.name == "oidc-username-claim") {
    TOLLGATE_ASSIGN_OR_RETURN(flags.oidc.username_claim, flag.String());
  } else if (flag.name == "oidc-username-prefix") {
    TOLLGATE_ASSIGN_OR_RETURN(std::string prefix, flag.String());
    flags.oidc.username_prefix = std::move(prefix);
  } else if (flag.name == "oidc-groups-claim") {
    TOLLGATE_ASSIGN_OR_RETURN(flags.oidc.groups_claim, flag.String());
  } else if (flag.name == "oidc-groups-prefix") {
    TOLLGATE_ASSIGN_OR_RETURN(flags.oidc.groups_prefix, flag.String());
  } else if (flag.name == "oidc-clock-skew") {
    TOLLGATE_ASSIGN_OR_RETURN(flags.oidc.clock_skew, flag.Duration(/*allow_zero=*/true));
    if (flags.oidc.clock_skew > absl::Minutes(10)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--oidc-clock-skew=", flag.value, ": at most 10m"));
    }
  } else if (flag.name == "authz-policy") {
    TOLLGATE_ASSIGN_OR_RETURN(flags.authz_policy, flag.String());
  } else if (flag.name == "audit-log") {
    TOLLGATE_ASSIGN_OR_RETURN(flags.audit_log, flag.String());
  } else if (flag.name == "audit-log-max-bytes") {
    TOLLGATE_ASSIGN_OR_RETURN(flags.audit_log_max_bytes, Int(flag, 4096));
  } else if (flag.name == "audit-log-backups") {
    TOLLGATE_ASSIGN_OR_RETURN(int64_t backups, Int(flag, 0));
    if (backups > 1000) {
      return absl::InvalidArgumentError(
          absl::StrCat("--audit-log-backups=", backups, ": at most 1000"));
    }
    flags.audit_log_backups = static_cast<int>(backups);
  } else if (flag.name == "insecure") {
    TOLLGATE_ASSIGN_OR_RETURN(flags.insecure, flag.Bool());
  } else {
    return false;
  }
  return true;
}

absl::StatusOr<bool> CheckListenSecurity(absl::string_view listen, const SecurityFlags& flags) {
  if (flags.tls_cert.empty() != flags.tls_key.empty()) {
    return absl::InvalidArgumentError("--tls-cert and --tls-key go together: give both or neither");
  }
  if (!flags.client_ca.empty() && flags.tls_cert.empty()) {
    return absl::InvalidArgumentError("--client-ca needs TLS: give --tls-cert and --tls-key");
  }
  const bool oidc_flags = !flags.oidc.issuer_url.empty() || !flags.oidc.client_id.empty() ||
                          !flags.oidc_jwks_file.empty();
  if (oidc_flags && flags.oidc_jwks_file.empty()) {
    return absl::InvalidArgumentError(
        "--oidc-issuer-url needs --oidc-jwks-file (the issuer's key set; tollgated makes no "
        "outbound calls)");
  }
  if (oidc_flags) TOLLGATE_RETURN_IF_ERROR(auth::ValidateOidcConfig(flags.oidc));
  if (common::IsLoopbackAddress(listen)) return false;
  std::vector<std::string> missing;
  if (flags.tls_cert.empty()) missing.push_back("TLS (--tls-cert, --tls-key)");
  if (!HasAuthenticator(flags)) {
    missing.push_back("an authenticator (--client-ca, --token-file or --oidc-issuer-url)");
  }
  if (missing.empty()) return false;
  if (flags.insecure) return true;
  return absl::FailedPreconditionError(
      absl::StrCat("refusing to listen on ", listen, " beyond loopback without ",
                   absl::StrJoin(missing, " and "), "; pass --insecure to do it anyway"));
}

bool HasAuthenticator(const SecurityFlags& flags) {
  return !flags.client_ca.empty() || !flags.token_file.empty() || !flags.oidc_jwks_file.empty();
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> ServerCredentials(
    const SecurityFlags& flags) {
  if (flags.tls_cert.empty()) return grpc::InsecureServerCredentials();
  // Read once here so a missing or unreadable file fails the start with its name; the provider
  // re-reads them every interval, so replaced files take effect without a restart.
  for (const auto& [flag, path] :
       {std::pair<absl::string_view, std::string>{"tls-cert", flags.tls_cert},
        {"tls-key", flags.tls_key},
        {"client-ca", flags.client_ca}}) {
    if (path.empty()) continue;
    TOLLGATE_ASSIGN_OR_RETURN(std::string text, ReadWholeFile(flag, path));
    if (!absl::StrContains(text, "-----BEGIN ")) {
      return absl::InvalidArgumentError(absl::StrCat("--", flag, "=", path, ": not PEM"));
    }
  }
  const auto interval = static_cast<unsigned int>(absl::ToInt64Seconds(flags.tls_reload_interval));
  auto provider = std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
      flags.tls_key, flags.tls_cert, flags.client_ca, interval);
  grpc::experimental::TlsServerCredentialsOptions options(provider);
  options.watch_identity_key_cert_pairs();
  if (!flags.client_ca.empty()) {
    options.watch_root_certs();
    // Requested and verified when presented, not required: a caller may use a token instead.
    options.set_cert_request_type(GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_AND_VERIFY);
  } else {
    options.set_cert_request_type(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  }
  return grpc::experimental::TlsServerCredentials(options);
}

absl::StatusOr<rpc::Authenticators> LoadAuthenticators(const SecurityFlags& flags) {
  rpc::Authenticators authenticators;
  authenticators.client_certificates = !flags.client_ca.empty();
  if (!flags.token_file.empty()) {
    TOLLGATE_ASSIGN_OR_RETURN(std::string text, ReadWholeFile("token-file", flags.token_file));
    TOLLGATE_ASSIGN_OR_RETURN(auth::TokenTable tokens,
                              auth::ParseTokenFile(text, flags.token_file));
    authenticators.tokens = std::make_shared<const auth::TokenTable>(std::move(tokens));
  }
  if (!flags.oidc_jwks_file.empty()) {
    TOLLGATE_ASSIGN_OR_RETURN(authenticators.oidc,
                              auth::OidcAuthenticator::Create(flags.oidc, flags.oidc_jwks_file));
  }
  return authenticators;
}

absl::StatusOr<std::shared_ptr<const auth::Authorizer>> LoadPolicy(const SecurityFlags& flags) {
  auth::Policy policy;
  if (!flags.authz_policy.empty()) {
    TOLLGATE_ASSIGN_OR_RETURN(std::string text, ReadWholeFile("authz-policy", flags.authz_policy));
    TOLLGATE_ASSIGN_OR_RETURN(policy, auth::ParsePolicy(text, flags.authz_policy));
  }
  TOLLGATE_ASSIGN_OR_RETURN(auth::Authorizer authorizer,
                            auth::Authorizer::Create(std::move(policy)));
  return std::make_shared<const auth::Authorizer>(std::move(authorizer));
}

absl::Status ReloadAccess(const SecurityFlags& flags, rpc::AccessGate& gate) {
  TOLLGATE_ASSIGN_OR_RETURN(rpc::Authenticators authenticators, LoadAuthenticators(flags));
  TOLLGATE_ASSIGN_OR_RETURN(std::shared_ptr<const auth::Authorizer> policy, LoadPolicy(flags));
  gate.Configure(std::move(authenticators), std::move(policy));
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<auth::AuditLog>> OpenAuditLog(const SecurityFlags& flags) {
  if (flags.audit_log.empty()) return std::unique_ptr<auth::AuditLog>();
  auth::AuditLog::Options options;
  options.path = flags.audit_log;
  options.max_bytes = flags.audit_log_max_bytes;
  options.max_backups = flags.audit_log_backups;
  return auth::AuditLog::Open(std::move(options));
}

}  // namespace tollgate
