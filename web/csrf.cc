#include "web/csrf.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace tollgate::web {
namespace {

constexpr size_t kKeyBytes = 32;
constexpr size_t kSessionIdBytes = 32;
// Domain separation: a MAC of this scheme is never valid for anything else keyed alike.
constexpr absl::string_view kScheme = "tollgate-csrf/v1";

absl::StatusOr<std::string> RandomBytes(size_t n) {
  std::string bytes(n, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(bytes.data()), static_cast<int>(n)) != 1) {
    return absl::InternalError("RAND_bytes failed: no randomness for anti-forgery tokens");
  }
  return bytes;
}

// The origin ("scheme://host[:port]") of an absolute URL, or "" when it has none.
std::string OriginOf(absl::string_view url) {
  const size_t scheme_end = url.find("://");
  if (scheme_end == absl::string_view::npos) return "";
  const size_t path = url.find_first_of("/?#", scheme_end + 3);
  return absl::AsciiStrToLower(url.substr(0, path));
}

absl::Status Refuse(absl::string_view header, absl::string_view value, absl::string_view want) {
  return absl::PermissionDeniedError(
      absl::StrCat("cross-site request refused: ", header, " \"", value, "\" is not ", want));
}

}  // namespace

absl::StatusOr<std::unique_ptr<CsrfGuard>> CsrfGuard::Create(const core::Clock& clock,
                                                             absl::Duration lifetime) {
  absl::StatusOr<std::string> key = RandomBytes(kKeyBytes);
  if (!key.ok()) return key.status();
  return std::make_unique<CsrfGuard>(*std::move(key), clock, lifetime);
}

CsrfGuard::CsrfGuard(std::string key, const core::Clock& clock, absl::Duration lifetime)
    : key_(std::move(key)), clock_(clock), lifetime_(lifetime) {}

absl::StatusOr<std::string> CsrfGuard::NewSessionId() {
  absl::StatusOr<std::string> bytes = RandomBytes(kSessionIdBytes);
  if (!bytes.ok()) return bytes.status();
  return absl::WebSafeBase64Escape(*bytes);
}

bool CsrfGuard::IsSessionId(absl::string_view id) {
  std::string raw;
  return id.size() == 43 && absl::WebSafeBase64Unescape(id, &raw) && raw.size() == kSessionIdBytes;
}

std::string CsrfGuard::Mac(absl::string_view action, absl::string_view binding,
                           int64_t expiry) const {
  // Length-prefixed fields, so no two (action, binding) pairs sign the same bytes.
  const std::string message = absl::StrCat(kScheme, "\n", action.size(), ":", action, "\n",
                                           binding.size(), ":", binding, "\n", expiry);
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int mac_length = 0;
  if (HMAC(EVP_sha256(), key_.data(), static_cast<int>(key_.size()),
           reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac,
           &mac_length) == nullptr) {
    return "";  // Verify refuses an empty MAC.
  }
  return std::string(reinterpret_cast<char*>(mac), mac_length);
}

std::string CsrfGuard::Issue(absl::string_view action, absl::string_view binding) const {
  const int64_t expiry = absl::ToUnixSeconds(clock_.Now() + lifetime_);
  return absl::StrCat(expiry, ".", absl::WebSafeBase64Escape(Mac(action, binding, expiry)));
}

absl::Status CsrfGuard::Verify(absl::string_view action, absl::string_view binding,
                               absl::string_view token) const {
  if (token.empty()) return absl::PermissionDeniedError("anti-forgery token missing");
  if (binding.empty()) {
    return absl::PermissionDeniedError(
        "session cookie missing (cookies off, or a cross-site post)");
  }
  std::vector<absl::string_view> parts = absl::StrSplit(token, absl::MaxSplits('.', 1));
  int64_t expiry = 0;
  std::string presented;
  if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &expiry) ||
      !absl::WebSafeBase64Unescape(parts[1], &presented)) {
    return absl::PermissionDeniedError("anti-forgery token malformed");
  }
  const std::string expected = Mac(action, binding, expiry);
  if (expected.empty() || presented.size() != expected.size() ||
      CRYPTO_memcmp(presented.data(), expected.data(), expected.size()) != 0) {
    return absl::PermissionDeniedError("anti-forgery token does not match this form and session");
  }
  if (absl::FromUnixSeconds(expiry) <= clock_.Now()) {
    return absl::PermissionDeniedError("anti-forgery token expired: reload the page");
  }
  return absl::OkStatus();
}

absl::Status CheckSameOrigin(const RequestOrigin& headers, absl::string_view expected) {
  const std::string want = absl::AsciiStrToLower(expected);
  if (!headers.sec_fetch_site.empty() && headers.sec_fetch_site != "same-origin" &&
      headers.sec_fetch_site != "none") {
    return Refuse("Sec-Fetch-Site", headers.sec_fetch_site, "same-origin");
  }
  if (!headers.origin.empty()) {
    if (absl::AsciiStrToLower(headers.origin) != want) {
      return Refuse("Origin", headers.origin, want);
    }
    return absl::OkStatus();
  }
  if (!headers.referer.empty() && OriginOf(headers.referer) != want) {
    return Refuse("Referer", headers.referer, absl::StrCat("on ", want));
  }
  return absl::OkStatus();
}

}  // namespace tollgate::web
