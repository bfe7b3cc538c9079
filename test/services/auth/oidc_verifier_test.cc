#include "services/auth/oidc_verifier.h"

#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "services/auth/jwks.h"
#include "services/auth/oidc_authenticator.h"
#include "test/services/auth/test_issuer.h"

namespace tollgate::auth {
namespace {

using testing::Base64Url;
using testing::TestIssuer;

constexpr char kIssuer[] = "https://issuer.example.com";
constexpr char kClient[] = "tollgate";

const absl::Time kNow = absl::FromUnixSeconds(1790000000);

class OidcVerifierTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    issuer_ = new TestIssuer();
    issuer_->AddKey("rsa-1", TestIssuer::KeyType::kRsa);
    issuer_->AddKey("ec-1", TestIssuer::KeyType::kEcP256);
    issuer_->AddKey("rsa-other", TestIssuer::KeyType::kRsa);  // not published
  }
  static void TearDownTestSuite() { delete issuer_; }

  static OidcConfig Config() {
    OidcConfig config;
    config.issuer_url = kIssuer;
    config.client_id = kClient;
    config.groups_claim = "groups";
    return config;
  }
  static OidcVerifier Verifier(OidcConfig config = Config()) {
    absl::StatusOr<JwkSet> keys = ParseJwks(issuer_->Jwks({"rsa-1", "ec-1"}), "jwks");
    EXPECT_TRUE(keys.ok()) << keys.status();
    return OidcVerifier(std::move(config), *std::move(keys));
  }
  static std::string Claims(absl::Time issued = kNow - absl::Minutes(1),
                            absl::Duration lifetime = absl::Minutes(10),
                            const std::string& iss = kIssuer, const std::string& aud = kClient) {
    return TestIssuer::Claims(iss, aud, "alice", {"team-a", "oncall"}, issued, lifetime);
  }

  static TestIssuer* issuer_;
};
TestIssuer* OidcVerifierTest::issuer_ = nullptr;

TEST_F(OidcVerifierTest, ValidRs256AndEs256TokensGiveTheClaimedIdentity) {
  for (const char* kid : {"rsa-1", "ec-1"}) {
    SCOPED_TRACE(kid);
    absl::StatusOr<Identity> identity = Verifier().Verify(issuer_->Sign(kid, Claims()), kNow);
    ASSERT_TRUE(identity.ok()) << identity.status();
    EXPECT_EQ(identity->user, "https://issuer.example.com#alice");  // kube-apiserver's default
    EXPECT_EQ(identity->uid, "alice");
    EXPECT_EQ(identity->groups, (std::vector<std::string>{"team-a", "oncall"}));
    EXPECT_EQ(identity->method, "oidc");
  }
}

TEST_F(OidcVerifierTest, PrefixesAndClaimsFollowTheConfiguration) {
  OidcConfig config = Config();
  config.username_prefix = "oidc:";
  config.groups_prefix = "oidc:";
  absl::StatusOr<Identity> identity =
      Verifier(config).Verify(issuer_->Sign("rsa-1", Claims()), kNow);
  ASSERT_TRUE(identity.ok()) << identity.status();
  EXPECT_EQ(identity->user, "oidc:alice");
  EXPECT_EQ(identity->groups, (std::vector<std::string>{"oidc:team-a", "oidc:oncall"}));

  config.username_prefix = "-";
  config.username_claim = "email";
  const std::string with_email =
      absl::StrCat(R"({"iss":"https://issuer.example.com","aud":["other","tollgate"],"sub":"123",)",
                   R"("email":"bob@example.com","email_verified":true,"exp":)",
                   absl::ToUnixSeconds(kNow) + 60, "}");
  identity = Verifier(config).Verify(issuer_->Sign("ec-1", with_email), kNow);
  ASSERT_TRUE(identity.ok()) << identity.status();
  EXPECT_EQ(identity->user, "bob@example.com");
  EXPECT_TRUE(identity->groups.empty());

  const std::string unverified =
      absl::StrCat(R"({"iss":"https://issuer.example.com","aud":"tollgate","sub":"123",)",
                   R"("email":"bob@example.com","email_verified":false,"exp":)",
                   absl::ToUnixSeconds(kNow) + 60, "}");
  EXPECT_TRUE(absl::IsUnauthenticated(
      Verifier(config).Verify(issuer_->Sign("ec-1", unverified), kNow).status()));
}

struct RefusedCase {
  std::string name;
  std::string token;
  std::string says;
};

TEST_F(OidcVerifierTest, RefusesEveryBadToken) {
  const std::string good = issuer_->Sign("rsa-1", Claims());
  std::string tampered = good;
  // Flip one bit of the payload's first character; the signature no longer matches.
  const size_t dot = tampered.find('.');
  tampered[dot + 1] = tampered[dot + 1] == 'e' ? 'f' : 'e';
  std::string bad_signature = good;
  bad_signature[bad_signature.size() - 5] =
      bad_signature[bad_signature.size() - 5] == 'A' ? 'B' : 'A';
  const std::string payload = Base64Url(Claims());
  const std::vector<RefusedCase> cases = {
      {"expired", issuer_->Sign("rsa-1", Claims(kNow - absl::Hours(2), absl::Minutes(10))),
       "expired"},
      {"expired beyond the skew",
       issuer_->Sign("ec-1", Claims(kNow - absl::Seconds(70), absl::Seconds(5))), "expired"},
      {"not yet valid", issuer_->Sign("rsa-1", Claims(kNow + absl::Minutes(5))),
       "not valid before"},
      {"wrong audience",
       issuer_->Sign("rsa-1", Claims(kNow, absl::Minutes(5), kIssuer, "someone-else")), "audience"},
      {"wrong issuer",
       issuer_->Sign("rsa-1", Claims(kNow, absl::Minutes(5), "https://evil.example.com")),
       "issuer"},
      {"signed by an unpublished key claiming a published kid",
       issuer_->Sign("rsa-other", Claims(), "rsa-1"), "bad signature"},
      {"tampered payload", tampered, "bad signature"},
      {"tampered signature", bad_signature, "bad signature"},
      {"unknown kid", issuer_->Sign("rsa-other", Claims()), "kid \"rsa-other\""},
      {"alg none", absl::StrCat(Base64Url(R"({"alg":"none","kid":"rsa-1"})"), ".", payload, "."),
       "alg \"none\""},
      {"alg HS256 with the public key as secret",
       absl::StrCat(Base64Url(R"({"alg":"HS256","kid":"rsa-1"})"), ".", payload, ".c2ln"),
       "alg \"HS256\""},
      {"ES256 header on an RSA key",
       absl::StrCat(Base64Url(R"({"alg":"ES256","kid":"rsa-1"})"), ".", payload, ".c2ln"),
       "does not match"},
      {"not a JWT", "abc.def", "not a signed JWT"},
      {"garbage header", absl::StrCat("!!!.", payload, ".c2ln"), "header"},
  };
  const OidcVerifier verifier = Verifier();
  for (const RefusedCase& c : cases) {
    SCOPED_TRACE(c.name);
    absl::StatusOr<Identity> identity = verifier.Verify(c.token, kNow);
    ASSERT_FALSE(identity.ok()) << identity->user;
    EXPECT_TRUE(absl::IsUnauthenticated(identity.status())) << identity.status();
    EXPECT_NE(identity.status().message().find(c.says), absl::string_view::npos)
        << identity.status();
  }
}

TEST_F(OidcVerifierTest, ClockSkewIsTolerated) {
  // Expired 30 s ago, nbf 30 s ahead: both within the default 60 s skew.
  EXPECT_TRUE(
      Verifier()
          .Verify(issuer_->Sign("rsa-1", Claims(kNow - absl::Seconds(40), absl::Seconds(10))), kNow)
          .ok());
  EXPECT_TRUE(
      Verifier().Verify(issuer_->Sign("rsa-1", Claims(kNow + absl::Seconds(30))), kNow).ok());
  OidcConfig strict = Config();
  strict.clock_skew = absl::ZeroDuration();
  EXPECT_FALSE(
      Verifier(strict).Verify(issuer_->Sign("rsa-1", Claims(kNow + absl::Seconds(30))), kNow).ok());
}

TEST(JwksTest, RefusesMalformedSetsNamingTheKey) {
  struct Case {
    std::string jwks;
    std::string says;
  };
  const std::vector<Case> cases = {
      {"not json", "not JSON"},
      {R"({"nokeys":[]})", "\"keys\" array"},
      {R"({"keys":[]})", "no RSA or EC"},
      {R"({"keys":[{"kty":"RSA","kid":"a","e":"AQAB"}]})", "keys[0] (kid \"a\"): field \"n\""},
      {R"({"keys":[{"kty":"RSA","kid":"a","n":"AQAB","e":"AQAB"}]})", "at least 2048"},
      {R"({"keys":[{"kty":"EC","kid":"b","crv":"P-999","x":"AA","y":"AA"}]})", "field \"crv\""},
      {R"({"keys":[{"kty":"EC","kid":"b","crv":"P-256","x":"AAAA","y":"AAAA"}]})", "32 bytes"},
      // A point that is not on the curve (x = y = 1).
      {absl::StrCat(R"({"keys":[{"kty":"EC","kid":"c","crv":"P-256","x":")",
                    Base64Url(std::string(31, '\0') + "\x01"), R"(","y":")",
                    Base64Url(std::string(31, '\0') + "\x01"), R"("}]})"),
       "not a valid public key"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.jwks);
    absl::StatusOr<JwkSet> set = ParseJwks(c.jwks, "jwks.json");
    ASSERT_FALSE(set.ok());
    EXPECT_TRUE(absl::IsInvalidArgument(set.status()));
    EXPECT_NE(set.status().message().find(c.says), absl::string_view::npos) << set.status();
    EXPECT_NE(set.status().message().find("jwks.json"), absl::string_view::npos);
  }
}

TEST(JwksTest, DuplicateKidsAndUnknownKeyTypes) {
  TestIssuer issuer;
  issuer.AddKey("k", TestIssuer::KeyType::kEcP256);
  const std::string one = issuer.Jwks();
  const std::string key = one.substr(9, one.size() - 11);  // {"keys":[ KEY ]}
  EXPECT_FALSE(ParseJwks(absl::StrCat(R"({"keys":[)", key, ",", key, "]}"), "j").ok());
  absl::StatusOr<JwkSet> set =
      ParseJwks(absl::StrCat(R"({"keys":[{"kty":"oct","k":"c2VjcmV0"},)", key, "]}"), "j");
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->keys.size(), 1u);
}

TEST_F(OidcVerifierTest, AuthenticatorReloadsTheKeySetWhenTheFileChanges) {
  const std::filesystem::path file =
      std::filesystem::path(::testing::TempDir()) / "oidc_reload_jwks.json";
  auto write = [&](const std::string& text) {
    const std::filesystem::path tmp = file.string() + ".tmp";
    std::ofstream(tmp) << text;
    std::filesystem::rename(tmp, file);
  };
  write(issuer_->Jwks({"rsa-1"}));
  absl::StatusOr<std::unique_ptr<OidcAuthenticator>> authenticator =
      OidcAuthenticator::Create(Config(), file.string());
  ASSERT_TRUE(authenticator.ok()) << authenticator.status();
  const std::string ec_token = issuer_->Sign("ec-1", Claims());
  EXPECT_FALSE((*authenticator)->Verify(ec_token, kNow).ok());

  // The issuer publishes a second key (a rotation): tokens signed with it verify once the file
  // is re-read, which a change of size triggers on the next call after the check interval.
  write(issuer_->Jwks({"rsa-1", "ec-1"}));
  EXPECT_TRUE((*authenticator)->Verify(ec_token, kNow + absl::Seconds(2)).ok());

  // A broken file keeps the keys in force, and Reload reports it.
  write("{broken");
  EXPECT_FALSE((*authenticator)->Reload().ok());
  EXPECT_TRUE((*authenticator)->Verify(ec_token, kNow + absl::Seconds(4)).ok());

  // Reload (SIGHUP) reads a fixed file at once.
  write(issuer_->Jwks({"rsa-1"}));
  EXPECT_TRUE((*authenticator)->Reload().ok());
  EXPECT_FALSE((*authenticator)->Verify(ec_token, kNow + absl::Seconds(4)).ok());
}

TEST(OidcConfigTest, RefusesUnusableConfiguration) {
  OidcConfig config;
  config.client_id = "x";
  EXPECT_TRUE(absl::IsInvalidArgument(ValidateOidcConfig(config)));
  config.issuer_url = "http://insecure.example.com";
  EXPECT_NE(ValidateOidcConfig(config).message().find("https://"), absl::string_view::npos);
  config.issuer_url = "https://ok.example.com";
  config.client_id = "";
  EXPECT_NE(ValidateOidcConfig(config).message().find("--oidc-client-id"), absl::string_view::npos);
}

}  // namespace
}  // namespace tollgate::auth
