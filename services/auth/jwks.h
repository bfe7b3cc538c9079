#pragma once

// A JSON Web Key Set (RFC 7517) as an OIDC issuer publishes it at its jwks_uri, read from a
// file: each RSA or EC public key becomes a PEM public key for libjwt. The key material is
// converted by OpenSSL; nothing here does cryptography by hand.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tollgate::auth {

struct Jwk {
  std::string kid;  // may be empty when the set has a single key
  // "RSA" or "EC".
  std::string kty;
  // For EC keys: "P-256", "P-384" or "P-521".
  std::string crv;
  // The key's "alg" when the set names one (then a token must use exactly it).
  std::string alg;
  // SubjectPublicKeyInfo PEM, what libjwt verifies with.
  std::string pem;
};

struct JwkSet {
  std::vector<Jwk> keys;
};

// INVALID_ARGUMENT naming `source`, the key (index and kid) and the field when the document is
// not JSON, has no "keys" array, or a key is malformed. Keys whose "use" is not "sig" and keys
// of other types (oct, OKP) are skipped: they can never verify a token here. A set without a
// single usable key, or with two keys of one kid, is refused.
absl::StatusOr<JwkSet> ParseJwks(absl::string_view text, absl::string_view source);

}  // namespace tollgate::auth
