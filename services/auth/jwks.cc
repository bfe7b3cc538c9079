#include "services/auth/jwks.h"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>

#include <memory>
#include <set>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace tollgate::auth {
namespace {

using Json = nlohmann::json;

template <typename T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* p) const { Free(p); }
};
using Bignum = std::unique_ptr<BIGNUM, Deleter<BIGNUM, BN_free>>;
using ParamBuilder = std::unique_ptr<OSSL_PARAM_BLD, Deleter<OSSL_PARAM_BLD, OSSL_PARAM_BLD_free>>;
using Params = std::unique_ptr<OSSL_PARAM, Deleter<OSSL_PARAM, OSSL_PARAM_free>>;
using PkeyContext = std::unique_ptr<EVP_PKEY_CTX, Deleter<EVP_PKEY_CTX, EVP_PKEY_CTX_free>>;
using Pkey = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using Bio = std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>>;

// An EC curve a JWK names: OpenSSL's group name and the size of a coordinate.
struct Curve {
  const char* jwk_name;
  const char* openssl_name;
  size_t coordinate_bytes;
};
constexpr Curve kCurves[] = {
    {"P-256", "prime256v1", 32}, {"P-384", "secp384r1", 48}, {"P-521", "secp521r1", 66}};

// A JWK member that must be a base64url string (RFC 7518 keeps them unpadded).
absl::StatusOr<std::string> Base64UrlMember(const Json& key, const char* member,
                                            const std::string& where) {
  auto it = key.find(member);
  if (it == key.end() || !it->is_string()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": field \"", member, "\" is missing or not a string"));
  }
  std::string decoded;
  if (!absl::WebSafeBase64Unescape(it->get_ref<const std::string&>(), &decoded) ||
      decoded.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": field \"", member, "\" is not base64url"));
  }
  return decoded;
}

std::string StringMember(const Json& key, const char* member) {
  auto it = key.find(member);
  return it != key.end() && it->is_string() ? it->get<std::string>() : "";
}

absl::StatusOr<std::string> PemOf(Pkey pkey, const std::string& where) {
  if (pkey == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": not a valid public key (OpenSSL refuses the key material)"));
  }
  PkeyContext check(EVP_PKEY_CTX_new_from_pkey(nullptr, pkey.get(), nullptr));
  if (check == nullptr || EVP_PKEY_public_check(check.get()) != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": not a valid public key (for EC: the point is not on the curve)"));
  }
  Bio bio(BIO_new(BIO_s_mem()));
  if (bio == nullptr || PEM_write_bio_PUBKEY(bio.get(), pkey.get()) != 1) {
    return absl::InternalError(absl::StrCat(where, ": cannot write the key as PEM"));
  }
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(size));
}

Pkey FromData(const char* type, OSSL_PARAM_BLD* builder) {
  Params params(OSSL_PARAM_BLD_to_param(builder));
  PkeyContext context(EVP_PKEY_CTX_new_from_name(nullptr, type, nullptr));
  EVP_PKEY* pkey = nullptr;
  if (params == nullptr || context == nullptr || EVP_PKEY_fromdata_init(context.get()) != 1 ||
      EVP_PKEY_fromdata(context.get(), &pkey, EVP_PKEY_PUBLIC_KEY, params.get()) != 1) {
    return nullptr;
  }
  return Pkey(pkey);
}

absl::StatusOr<std::string> RsaPem(const Json& key, const std::string& where) {
  absl::StatusOr<std::string> n = Base64UrlMember(key, "n", where);
  if (!n.ok()) return n.status();
  absl::StatusOr<std::string> e = Base64UrlMember(key, "e", where);
  if (!e.ok()) return e.status();
  if (n->size() < 2048 / 8) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": RSA modulus of ", n->size() * 8, " bits; at least 2048 needed"));
  }
  Bignum bn_n(BN_bin2bn(reinterpret_cast<const unsigned char*>(n->data()),
                        static_cast<int>(n->size()), nullptr));
  Bignum bn_e(BN_bin2bn(reinterpret_cast<const unsigned char*>(e->data()),
                        static_cast<int>(e->size()), nullptr));
  ParamBuilder builder(OSSL_PARAM_BLD_new());
  if (bn_n == nullptr || bn_e == nullptr || builder == nullptr ||
      OSSL_PARAM_BLD_push_BN(builder.get(), OSSL_PKEY_PARAM_RSA_N, bn_n.get()) != 1 ||
      OSSL_PARAM_BLD_push_BN(builder.get(), OSSL_PKEY_PARAM_RSA_E, bn_e.get()) != 1) {
    return absl::InternalError(absl::StrCat(where, ": OpenSSL cannot hold the RSA parameters"));
  }
  return PemOf(FromData("RSA", builder.get()), where);
}

absl::StatusOr<std::string> EcPem(const Json& key, const Curve& curve, const std::string& where) {
  absl::StatusOr<std::string> x = Base64UrlMember(key, "x", where);
  if (!x.ok()) return x.status();
  absl::StatusOr<std::string> y = Base64UrlMember(key, "y", where);
  if (!y.ok()) return y.status();
  if (x->size() != curve.coordinate_bytes || y->size() != curve.coordinate_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": x and y of a ", curve.jwk_name,
                                                   " key must be ", curve.coordinate_bytes,
                                                   " bytes each"));
  }
  // The uncompressed point encoding (SEC 1): 0x04 || x || y.
  const std::string point = absl::StrCat("\x04", *x, *y);
  ParamBuilder builder(OSSL_PARAM_BLD_new());
  if (builder == nullptr ||
      OSSL_PARAM_BLD_push_utf8_string(builder.get(), OSSL_PKEY_PARAM_GROUP_NAME, curve.openssl_name,
                                      0) != 1 ||
      OSSL_PARAM_BLD_push_octet_string(builder.get(), OSSL_PKEY_PARAM_PUB_KEY, point.data(),
                                       point.size()) != 1) {
    return absl::InternalError(absl::StrCat(where, ": OpenSSL cannot hold the EC parameters"));
  }
  return PemOf(FromData("EC", builder.get()), where);
}

}  // namespace

absl::StatusOr<JwkSet> ParseJwks(absl::string_view text, absl::string_view source) {
  const Json document = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded()) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": not JSON"));
  }
  auto keys = document.is_object() ? document.find("keys") : document.end();
  if (!document.is_object() || keys == document.end() || !keys->is_array()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": want a JSON Web Key Set, an object with a \"keys\" array"));
  }
  JwkSet set;
  std::set<std::string> kids;
  for (size_t i = 0; i < keys->size(); ++i) {
    const Json& key = (*keys)[i];
    if (!key.is_object()) {
      return absl::InvalidArgumentError(absl::StrCat(source, ": keys[", i, "] is not an object"));
    }
    Jwk jwk;
    jwk.kid = StringMember(key, "kid");
    jwk.kty = StringMember(key, "kty");
    jwk.alg = StringMember(key, "alg");
    const std::string where = absl::StrCat(source, ": keys[", i, "] (kid \"", jwk.kid, "\")");
    const std::string use = StringMember(key, "use");
    if (!use.empty() && use != "sig") continue;
    if (jwk.kty == "RSA") {
      absl::StatusOr<std::string> pem = RsaPem(key, where);
      if (!pem.ok()) return pem.status();
      jwk.pem = *std::move(pem);
    } else if (jwk.kty == "EC") {
      jwk.crv = StringMember(key, "crv");
      const Curve* curve = nullptr;
      for (const Curve& c : kCurves) {
        if (jwk.crv == c.jwk_name) curve = &c;
      }
      if (curve == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat(where, ": field \"crv\": \"", jwk.crv,
                                                       "\" is not one of P-256, P-384, P-521"));
      }
      absl::StatusOr<std::string> pem = EcPem(key, *curve, where);
      if (!pem.ok()) return pem.status();
      jwk.pem = *std::move(pem);
    } else {
      continue;  // oct, OKP, ...: no token of ours is verified with them.
    }
    if (!kids.insert(jwk.kid).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": field \"kid\": \"", jwk.kid, "\" is used by an earlier key"));
    }
    set.keys.push_back(std::move(jwk));
  }
  if (set.keys.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": no RSA or EC signature key in the set"));
  }
  return set;
}

}  // namespace tollgate::auth
