#pragma once

// An OIDC issuer for tests: real keys made by OpenSSL at test time, a JWKS document of their
// public halves, and tokens signed with them (RS256 with RSA, ES256 with P-256). Nothing here is
// a fixture that could not fail: every signature is computed by OpenSSL for the claims given.

#include <string>
#include <vector>

#include "absl/time/time.h"

namespace tollgate::testing {

class TestIssuer {
 public:
  enum class KeyType { kRsa, kEcP256 };

  TestIssuer();
  ~TestIssuer();
  TestIssuer(const TestIssuer&) = delete;
  TestIssuer& operator=(const TestIssuer&) = delete;

  // Makes a new key pair named `kid`.
  void AddKey(const std::string& kid, KeyType type);
  // The JWKS document with the public keys of `kids` (every key when empty).
  std::string Jwks(const std::vector<std::string>& kids = {}) const;

  // A compact JWS of `claims_json` signed with `kid`'s key, the header naming `header_kid`
  // (defaults to kid) and the key's algorithm.
  std::string Sign(const std::string& kid, const std::string& claims_json,
                   const std::string& header_kid = "") const;

  // Claims for a typical token: iss, aud, sub, groups, iat, nbf, exp.
  static std::string Claims(const std::string& issuer, const std::string& audience,
                            const std::string& subject, const std::vector<std::string>& groups,
                            absl::Time issued, absl::Duration lifetime);

 private:
  struct Key;
  std::vector<Key*> keys_;
  const Key& Find(const std::string& kid) const;
};

// base64url without padding.
std::string Base64Url(const std::string& bytes);

}  // namespace tollgate::testing
