#include "services/auth/oidc_verifier.h"

#include <jwt.h>

#include <cstdlib>
#include <memory>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"

namespace tollgate::auth {
namespace {

using Json = nlohmann::json;

absl::Status Refused(absl::string_view why) {
  return absl::UnauthenticatedError(absl::StrCat("OIDC token refused: ", why));
}

// The algorithms accepted and the key each needs. Never "none", and never HS*: an HMAC "key"
// would be the issuer's public key, which everyone has (the classic algorithm confusion).
struct Algorithm {
  const char* name;
  jwt_alg_t libjwt;
  const char* kty;
  const char* crv;  // EC only
};
constexpr Algorithm kAlgorithms[] = {
    {"RS256", JWT_ALG_RS256, "RSA", ""},     {"RS384", JWT_ALG_RS384, "RSA", ""},
    {"RS512", JWT_ALG_RS512, "RSA", ""},     {"ES256", JWT_ALG_ES256, "EC", "P-256"},
    {"ES384", JWT_ALG_ES384, "EC", "P-384"}, {"ES512", JWT_ALG_ES512, "EC", "P-521"},
};

absl::StatusOr<Json> DecodeJsonPart(absl::string_view part, absl::string_view what) {
  std::string decoded;
  if (!absl::WebSafeBase64Unescape(part, &decoded)) {
    return Refused(absl::StrCat("its ", what, " is not base64url"));
  }
  Json json = Json::parse(decoded, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) {
    return Refused(absl::StrCat("its ", what, " is not a JSON object"));
  }
  return json;
}

std::string StringClaim(const Json& claims, const std::string& name) {
  auto it = claims.find(name);
  return it != claims.end() && it->is_string() ? it->get<std::string>() : "";
}

// A NumericDate claim (seconds since the epoch; JSON numbers, possibly fractional).
absl::StatusOr<std::optional<absl::Time>> TimeClaim(const Json& claims, const char* name) {
  auto it = claims.find(name);
  if (it == claims.end()) return std::optional<absl::Time>();
  if (!it->is_number()) return Refused(absl::StrCat("claim \"", name, "\" is not a number"));
  return std::optional<absl::Time>(
      absl::FromUnixMicros(static_cast<int64_t>(it->get<double>() * 1e6)));
}

struct JwtDeleter {
  void operator()(jwt_t* jwt) const { jwt_free(jwt); }
};

}  // namespace

absl::Status ValidateOidcConfig(const OidcConfig& config) {
  if (config.issuer_url.empty()) {
    return absl::InvalidArgumentError("--oidc-issuer-url is required with --oidc-jwks-file");
  }
  if (!absl::StartsWith(config.issuer_url, "https://")) {
    return absl::InvalidArgumentError(absl::StrCat("--oidc-issuer-url=", config.issuer_url,
                                                   ": must be an https:// URL (OIDC discovery)"));
  }
  if (config.client_id.empty()) {
    return absl::InvalidArgumentError("--oidc-client-id is required with --oidc-issuer-url");
  }
  if (config.username_claim.empty()) {
    return absl::InvalidArgumentError("--oidc-username-claim: must not be empty");
  }
  return absl::OkStatus();
}

bool LooksLikeJwt(absl::string_view token) {
  const std::vector<absl::string_view> parts = absl::StrSplit(token, '.');
  return parts.size() == 3 && !parts[0].empty() && !parts[1].empty();
}

absl::StatusOr<Identity> OidcVerifier::Verify(absl::string_view token, absl::Time now) const {
  const std::vector<absl::string_view> parts = absl::StrSplit(token, '.');
  if (parts.size() != 3 || parts[0].empty() || parts[1].empty()) {
    return Refused("not a signed JWT (header.payload.signature)");
  }
  absl::StatusOr<Json> header = DecodeJsonPart(parts[0], "header");
  if (!header.ok()) return header.status();
  const std::string alg = StringClaim(*header, "alg");
  const Algorithm* algorithm = nullptr;
  for (const Algorithm& a : kAlgorithms) {
    if (alg == a.name) algorithm = &a;
  }
  if (algorithm == nullptr) {
    return Refused(absl::StrCat("alg \"", alg,
                                "\" is not accepted (RS256, RS384, RS512, ES256, "
                                "ES384, ES512)"));
  }
  if (parts[2].empty()) return Refused("it has no signature");

  // The key: by kid, or the only key of the set when the token names none.
  const std::string kid = StringClaim(*header, "kid");
  const Jwk* key = nullptr;
  if (kid.empty() && keys_.keys.size() == 1) {
    key = &keys_.keys.front();
  } else {
    for (const Jwk& candidate : keys_.keys) {
      if (candidate.kid == kid) key = &candidate;
    }
  }
  if (key == nullptr) {
    return Refused(kid.empty() ? "it names no kid and the key set has several keys"
                               : absl::StrCat("kid \"", kid, "\" is not in the key set"));
  }
  if (key->kty != algorithm->kty || (key->kty == "EC" && key->crv != algorithm->crv) ||
      (!key->alg.empty() && key->alg != alg)) {
    return Refused(absl::StrCat("alg \"", alg, "\" does not match key \"", key->kid, "\" (",
                                key->kty, key->crv.empty() ? "" : " ", key->crv, ")"));
  }

  // The signature, by libjwt (OpenSSL underneath).
  const std::string token_text(token);
  jwt_t* raw = nullptr;
  const int err =
      jwt_decode(&raw, token_text.c_str(), reinterpret_cast<const unsigned char*>(key->pem.data()),
                 static_cast<int>(key->pem.size()));
  std::unique_ptr<jwt_t, JwtDeleter> jwt(raw);
  if (err != 0 || jwt == nullptr) return Refused("bad signature");
  if (jwt_get_alg(jwt.get()) != algorithm->libjwt) return Refused("bad signature (algorithm)");

  char* grants = jwt_get_grants_json(jwt.get(), nullptr);
  if (grants == nullptr) return Refused("its payload is not a JSON object");
  const Json claims = Json::parse(grants, nullptr, /*allow_exceptions=*/false);
  std::free(grants);
  if (claims.is_discarded() || !claims.is_object()) {
    return Refused("its payload is not a JSON object");
  }

  const std::string iss = StringClaim(claims, "iss");
  if (iss != config_.issuer_url) {
    return Refused(absl::StrCat("issuer \"", iss, "\" is not \"", config_.issuer_url, "\""));
  }
  bool audience_ok = false;
  if (auto aud = claims.find("aud"); aud != claims.end()) {
    if (aud->is_string()) audience_ok = aud->get<std::string>() == config_.client_id;
    if (aud->is_array()) {
      for (const Json& one : *aud) {
        audience_ok |= one.is_string() && one.get<std::string>() == config_.client_id;
      }
    }
  }
  if (!audience_ok) {
    return Refused(absl::StrCat("audience does not contain \"", config_.client_id, "\""));
  }
  absl::StatusOr<std::optional<absl::Time>> exp = TimeClaim(claims, "exp");
  if (!exp.ok()) return exp.status();
  if (!exp->has_value()) return Refused("it has no \"exp\"");
  if (now >= **exp + config_.clock_skew) {
    return Refused(absl::StrCat("expired at ", absl::FormatTime(**exp, absl::UTCTimeZone())));
  }
  absl::StatusOr<std::optional<absl::Time>> nbf = TimeClaim(claims, "nbf");
  if (!nbf.ok()) return nbf.status();
  if (nbf->has_value() && now + config_.clock_skew < **nbf) {
    return Refused(absl::StrCat("not valid before ", absl::FormatTime(**nbf, absl::UTCTimeZone())));
  }

  Identity identity;
  identity.method = "oidc";
  const std::string user = StringClaim(claims, config_.username_claim);
  if (user.empty()) {
    return Refused(absl::StrCat("claim \"", config_.username_claim, "\" (the user) is missing"));
  }
  if (config_.username_claim == "email") {
    // kube-apiserver's rule: an unverified address is anyone's to claim.
    auto verified = claims.find("email_verified");
    if (verified != claims.end() && !(verified->is_boolean() && verified->get<bool>())) {
      return Refused("email_verified is not true");
    }
  }
  std::string prefix;
  if (config_.username_prefix.has_value()) {
    prefix = *config_.username_prefix == "-" ? "" : *config_.username_prefix;
  } else if (config_.username_claim != "email") {
    prefix = absl::StrCat(config_.issuer_url, "#");
  }
  identity.user = absl::StrCat(prefix, user);
  identity.uid = StringClaim(claims, "sub");
  if (!config_.groups_claim.empty()) {
    if (auto groups = claims.find(config_.groups_claim); groups != claims.end()) {
      if (groups->is_string()) {
        identity.groups.push_back(absl::StrCat(config_.groups_prefix, groups->get<std::string>()));
      } else if (groups->is_array()) {
        for (const Json& group : *groups) {
          if (!group.is_string()) {
            return Refused(absl::StrCat("claim \"", config_.groups_claim,
                                        "\" holds something other than strings"));
          }
          identity.groups.push_back(absl::StrCat(config_.groups_prefix, group.get<std::string>()));
        }
      } else {
        return Refused(absl::StrCat("claim \"", config_.groups_claim,
                                    "\" is neither a string nor an array of strings"));
      }
    }
  }
  return identity;
}

}  // namespace tollgate::auth
