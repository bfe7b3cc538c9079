#pragma once

// Anti-forgery for the HTTP port's state-changing requests (POST /login, POST /logout), as
// OWASP's CSRF cheat sheet recommends for a stateless server:
//  * a signed double-submit token: HMAC-SHA256 under a key only this process knows, over the
//    form's action, the browser's (pre-)session cookie and an expiry. A forged form cannot carry
//    it: the attacker's page can neither read the victim's cookie nor compute the MAC;
//  * an Origin (else Referer) and Sec-Fetch-Site check of every state-changing request;
//  * SameSite=Strict, HttpOnly (and over TLS __Host- prefixed, Secure) cookies, set by the
//    server (http_server.cc).
// docs/security.md explains the choice.

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "core/clock.h"

namespace tollgate::web {

// Issues and verifies anti-forgery tokens. Immutable after construction: thread-safe.
class CsrfGuard {
 public:
  // A guard with a fresh 256-bit key from OpenSSL's RAND_bytes: tokens die with the process (a
  // sign-in form served before a restart is refused; reloading the page gets a new one).
  // `clock` must outlive the guard.
  static absl::StatusOr<std::unique_ptr<CsrfGuard>> Create(const core::Clock& clock,
                                                           absl::Duration lifetime);
  // A guard with a given key (tests).
  CsrfGuard(std::string key, const core::Clock& clock, absl::Duration lifetime);

  // A new random pre-session id (256 bits, base64url): the value of the sign-in page's cookie.
  static absl::StatusOr<std::string> NewSessionId();
  // Whether `id` has the shape NewSessionId gives (so a cookie of another shape is replaced).
  static bool IsSessionId(absl::string_view id);

  // The token a form posted to `action` ("login", "logout") must carry, for the browser whose
  // (pre-)session cookie is `binding`. Valid for the guard's lifetime from now.
  std::string Issue(absl::string_view action, absl::string_view binding) const;

  // OK when `token` was issued by this guard for `action` and `binding` and has not expired;
  // PERMISSION_DENIED saying which check failed otherwise (never which MAC was expected).
  absl::Status Verify(absl::string_view action, absl::string_view binding,
                      absl::string_view token) const;

 private:
  std::string Mac(absl::string_view action, absl::string_view binding, int64_t expiry) const;

  const std::string key_;
  const core::Clock& clock_;
  const absl::Duration lifetime_;
};

// The headers a browser sends that say where a request comes from.
struct RequestOrigin {
  std::string origin;          // Origin ("" when absent)
  std::string referer;         // Referer ("" when absent)
  std::string sec_fetch_site;  // Sec-Fetch-Site ("" when absent)
};

// OWASP's "verify the origin with standard headers" for a state-changing request to a server
// whose own origin is `expected` ("https://host:port"): Sec-Fetch-Site, when sent, must be
// same-origin or none (typed by the user); Origin, when sent, must equal `expected` ("null"
// is refused); without Origin, the Referer's origin must. A request with none of them (not a
// browser: curl, scripts) passes here and still needs the token. PERMISSION_DENIED naming the
// header and its value otherwise.
absl::Status CheckSameOrigin(const RequestOrigin& headers, absl::string_view expected);

}  // namespace tollgate::web
