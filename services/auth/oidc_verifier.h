#pragma once

// OpenID Connect ID tokens (JWTs) as bearer tokens, checked the way kube-apiserver's --oidc-*
// flags check them: the signature against the issuer's JSON Web Key Set (libjwt over OpenSSL),
// then iss, aud, exp and nbf (with a clock skew), then the user and groups from configured
// claims with optional prefixes. Time is passed in, so every rule is unit-tested with tokens
// the test signs itself.

#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "services/auth/authorizer.h"
#include "services/auth/jwks.h"

namespace tollgate::auth {

struct OidcConfig {
  // The token's "iss" must equal it exactly (kube-apiserver's --oidc-issuer-url).
  std::string issuer_url;
  // The token's "aud" (a string, or an array) must contain it (--oidc-client-id).
  std::string client_id;
  // The claim naming the user (--oidc-username-claim); "email" also needs email_verified.
  std::string username_claim = "sub";
  // Prepended to the user name. Unset: "ISSUER#" unless the claim is "email" (kube-apiserver's
  // default, so a "sub" from one issuer cannot pose as a user of another); "-": none.
  std::optional<std::string> username_prefix;
  // The claim with the groups, a string or an array of strings; empty: no groups.
  std::string groups_claim;
  std::string groups_prefix;
  // Tolerated difference between our clock and the issuer's, for exp and nbf.
  absl::Duration clock_skew = absl::Seconds(60);
};

// INVALID_ARGUMENT naming the flag when the configuration is unusable (no issuer, an issuer
// that is not https://, no client id).
absl::Status ValidateOidcConfig(const OidcConfig& config);

// Verifies tokens against one key set. Immutable, so thread-safe.
class OidcVerifier {
 public:
  OidcVerifier(OidcConfig config, JwkSet keys)
      : config_(std::move(config)), keys_(std::move(keys)) {}

  // The identity (method "oidc") of a valid token at `now`; UNAUTHENTICATED saying what is wrong
  // otherwise (malformed, alg "none" or not RS*/ES*, unknown kid, bad signature, wrong issuer or
  // audience, expired, not yet valid, missing user claim).
  absl::StatusOr<Identity> Verify(absl::string_view token, absl::Time now) const;

  const OidcConfig& config() const { return config_; }

 private:
  OidcConfig config_;
  JwkSet keys_;
};

// Whether `token` has the shape of a JWS compact serialization (three dot-separated parts), so a
// bearer token is tried as an OIDC token rather than looked up in the token file.
bool LooksLikeJwt(absl::string_view token);

}  // namespace tollgate::auth
