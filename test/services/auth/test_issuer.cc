#include "test/services/auth/test_issuer.h"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tollgate::testing {
namespace {

[[noreturn]] void Die(const std::string& what) {
  std::cerr << "TestIssuer: " << what << " failed\n";
  std::abort();
}

std::string BigEndian(EVP_PKEY* pkey, const char* param, int pad) {
  BIGNUM* bn = nullptr;
  if (EVP_PKEY_get_bn_param(pkey, param, &bn) != 1) Die(param);
  std::string out(pad > 0 ? pad : BN_num_bytes(bn), '\0');
  BN_bn2binpad(bn, reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(out.size()));
  BN_free(bn);
  return out;
}

}  // namespace

struct TestIssuer::Key {
  std::string kid;
  KeyType type;
  EVP_PKEY* pkey = nullptr;
};

std::string Base64Url(const std::string& bytes) { return absl::WebSafeBase64Escape(bytes); }

TestIssuer::TestIssuer() = default;

TestIssuer::~TestIssuer() {
  for (Key* key : keys_) {
    EVP_PKEY_free(key->pkey);
    delete key;
  }
}

void TestIssuer::AddKey(const std::string& kid, KeyType type) {
  auto* key = new Key{kid, type, nullptr};
  key->pkey = type == KeyType::kRsa ? EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", size_t{2048})
                                    : EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256");
  if (key->pkey == nullptr) Die("EVP_PKEY_Q_keygen");
  keys_.push_back(key);
}

const TestIssuer::Key& TestIssuer::Find(const std::string& kid) const {
  for (const Key* key : keys_) {
    if (key->kid == kid) return *key;
  }
  Die("unknown kid " + kid);
}

std::string TestIssuer::Jwks(const std::vector<std::string>& kids) const {
  std::vector<std::string> entries;
  for (const Key* key : keys_) {
    if (!kids.empty() && std::find(kids.begin(), kids.end(), key->kid) == kids.end()) continue;
    if (key->type == KeyType::kRsa) {
      entries.push_back(
          absl::StrCat(R"({"kty":"RSA","use":"sig","alg":"RS256","kid":")", key->kid, R"(","n":")",
                       Base64Url(BigEndian(key->pkey, OSSL_PKEY_PARAM_RSA_N, 0)), R"(","e":")",
                       Base64Url(BigEndian(key->pkey, OSSL_PKEY_PARAM_RSA_E, 0)), R"("})"));
    } else {
      entries.push_back(
          absl::StrCat(R"({"kty":"EC","use":"sig","crv":"P-256","kid":")", key->kid, R"(","x":")",
                       Base64Url(BigEndian(key->pkey, OSSL_PKEY_PARAM_EC_PUB_X, 32)), R"(","y":")",
                       Base64Url(BigEndian(key->pkey, OSSL_PKEY_PARAM_EC_PUB_Y, 32)), R"("})"));
    }
  }
  return absl::StrCat(R"({"keys":[)", absl::StrJoin(entries, ","), "]}");
}

std::string TestIssuer::Sign(const std::string& kid, const std::string& claims_json,
                             const std::string& header_kid) const {
  const Key& key = Find(kid);
  const char* alg = key.type == KeyType::kRsa ? "RS256" : "ES256";
  const std::string header = absl::StrCat(R"({"alg":")", alg, R"(","typ":"JWT","kid":")",
                                          header_kid.empty() ? kid : header_kid, R"("})");
  const std::string input = absl::StrCat(Base64Url(header), ".", Base64Url(claims_json));
  EVP_MD_CTX* md = EVP_MD_CTX_new();
  size_t size = 0;
  if (EVP_DigestSignInit(md, nullptr, EVP_sha256(), nullptr, key.pkey) != 1 ||
      EVP_DigestSign(md, nullptr, &size, reinterpret_cast<const unsigned char*>(input.data()),
                     input.size()) != 1) {
    Die("EVP_DigestSign");
  }
  std::string signature(size, '\0');
  if (EVP_DigestSign(md, reinterpret_cast<unsigned char*>(signature.data()), &size,
                     reinterpret_cast<const unsigned char*>(input.data()), input.size()) != 1) {
    Die("EVP_DigestSign");
  }
  EVP_MD_CTX_free(md);
  signature.resize(size);
  if (key.type == KeyType::kEcP256) {
    // JWS wants r || s (RFC 7518 3.4); OpenSSL signs DER.
    const auto* der = reinterpret_cast<const unsigned char*>(signature.data());
    ECDSA_SIG* sig = d2i_ECDSA_SIG(nullptr, &der, static_cast<long>(signature.size()));
    if (sig == nullptr) Die("d2i_ECDSA_SIG");
    std::string raw(64, '\0');
    BN_bn2binpad(ECDSA_SIG_get0_r(sig), reinterpret_cast<unsigned char*>(raw.data()), 32);
    BN_bn2binpad(ECDSA_SIG_get0_s(sig), reinterpret_cast<unsigned char*>(raw.data()) + 32, 32);
    ECDSA_SIG_free(sig);
    signature = raw;
  }
  return absl::StrCat(input, ".", Base64Url(signature));
}

std::string TestIssuer::Claims(const std::string& issuer, const std::string& audience,
                               const std::string& subject, const std::vector<std::string>& groups,
                               absl::Time issued, absl::Duration lifetime) {
  std::vector<std::string> quoted;
  for (const std::string& group : groups) quoted.push_back(absl::StrCat("\"", group, "\""));
  const int64_t iat = absl::ToUnixSeconds(issued);
  return absl::StrCat(R"({"iss":")", issuer, R"(","aud":")", audience, R"(","sub":")", subject,
                      R"(","groups":[)", absl::StrJoin(quoted, ","), R"(],"iat":)", iat,
                      R"(,"nbf":)", iat, R"(,"exp":)", iat + absl::ToInt64Seconds(lifetime), "}");
}

}  // namespace tollgate::testing
