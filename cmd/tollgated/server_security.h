#pragma once

// tollgated's security flags and what they build: TLS server credentials (rotated from files
// without a restart), the authenticators (client certificates, static tokens), the
// authorization policy and the audit log, and the rule that nothing listens beyond loopback
// without TLS and an authenticator unless --insecure says so.

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/command_line.h"
#include "grpcpp/security/server_credentials.h"
#include "services/auth/audit_log.h"
#include "services/auth/authorizer.h"
#include "services/auth/oidc_verifier.h"
#include "services/rpc/access_gate.h"

namespace tollgate {

inline constexpr char kSecurityUsage[] = R"(
Security (docs/security.md):
  --tls-cert=FILE             serve TLS with this certificate chain (PEM); needs --tls-key
  --tls-key=FILE              the certificate's private key (PEM)
  --client-ca=FILE            verify client certificates against these CAs: user = CN, groups = O
  --tls-reload-interval=DUR   how often the certificate files are re-read (default 10s)
  --token-file=FILE           bearer tokens: token,user,uid,"group1,group2" per line
  --oidc-issuer-url=URL       accept OIDC ID tokens (JWTs) from this issuer (its "iss")
  --oidc-client-id=ID         the audience the tokens must carry ("aud")
  --oidc-jwks-file=FILE       the issuer's JSON Web Key Set (RS256/384/512, ES256/384/512),
                              re-read when it changes and on SIGHUP
  --oidc-username-claim=NAME  the claim with the user name (default sub)
  --oidc-username-prefix=P    prepended to it (default "ISSUER#" unless the claim is email;
                              "-" for none)
  --oidc-groups-claim=NAME    the claim with the groups (default: none)
  --oidc-groups-prefix=P      prepended to each group
  --oidc-clock-skew=DUR       tolerance for exp and nbf (default 60s)
  --authz-policy=FILE         Role, RoleBinding and QueueGrant documents (YAML)
  --audit-log=FILE            JSON-lines audit log of mutating and denied calls and decisions
  --audit-log-max-bytes=N     rotate the audit log at this size (default 104857600)
  --audit-log-backups=N       rotated files kept: FILE.1 ... FILE.N (default 5)
  --insecure                  allow --listen and --metrics-listen beyond loopback without TLS
                              and authentication
Without --token-file, --oidc-issuer-url and --client-ca every caller is the anonymous admin
(loopback only). The HTTP port (--metrics-listen) serves TLS with the same certificate and
authenticates the same way (bearer token, dashboard login cookie, client certificate).
SIGHUP re-reads the token file, the OIDC key set and the policy.
)";

struct SecurityFlags {
  std::string tls_cert;
  std::string tls_key;
  std::string client_ca;
  absl::Duration tls_reload_interval = absl::Seconds(10);
  std::string token_file;
  std::string oidc_jwks_file;
  auth::OidcConfig oidc;
  std::string authz_policy;
  std::string audit_log;
  int64_t audit_log_max_bytes = 100 << 20;
  int audit_log_backups = 5;
  bool insecure = false;
};

// Takes `flag` if it is one of the security flags: true when taken, false when not ours.
absl::StatusOr<bool> ParseSecurityFlag(const common::FlagArg& flag, SecurityFlags& flags);

// Refuses (FAILED_PRECONDITION naming the address and the missing pieces) to listen beyond
// loopback without TLS and an authenticator, unless --insecure; flag combinations that cannot
// work (a key without a certificate, a client CA without TLS) are INVALID_ARGUMENT. Returns
// whether the insecure override is in use (for the warning).
absl::StatusOr<bool> CheckListenSecurity(absl::string_view listen, const SecurityFlags& flags);

// Whether any authenticator is configured (tokens, OIDC or client certificates).
bool HasAuthenticator(const SecurityFlags& flags);

// TLS credentials watching the certificate files, or insecure ones when no --tls-cert.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> ServerCredentials(
    const SecurityFlags& flags);

// Reads the token file and the policy (either may be unset) into what the gate needs.
absl::StatusOr<rpc::Authenticators> LoadAuthenticators(const SecurityFlags& flags);
absl::StatusOr<std::shared_ptr<const auth::Authorizer>> LoadPolicy(const SecurityFlags& flags);

// SIGHUP: reads the token file, the OIDC keys and the policy again and puts them in force in
// `gate` together; on any error (returned) the gate keeps the previous ones. Certificates need
// no signal: the TLS providers re-read them on their own.
absl::Status ReloadAccess(const SecurityFlags& flags, rpc::AccessGate& gate);

// The audit log, or null without --audit-log.
absl::StatusOr<std::unique_ptr<auth::AuditLog>> OpenAuditLog(const SecurityFlags& flags);

}  // namespace tollgate
