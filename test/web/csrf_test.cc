#include "web/csrf.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/time/time.h"
#include "core/clock.h"
#include "gtest/gtest.h"

namespace tollgate::web {
namespace {

const absl::Time kStart = absl::FromUnixSeconds(1'800'000'000);
const std::string kKey(32, 'k');

TEST(CsrfGuardTest, ATokenIsValidOnlyForItsActionAndSessionUntilItExpires) {
  core::SimulatedClock clock(kStart);
  CsrfGuard guard(kKey, clock, absl::Hours(1));
  const std::string token = guard.Issue("login", "session-1");
  EXPECT_TRUE(guard.Verify("login", "session-1", token).ok());

  struct Case {
    const char* what;
    std::string action, binding, token;
    const char* want;
  };
  std::string flipped = token;
  flipped.back() = flipped.back() == 'A' ? 'B' : 'A';
  std::string later_expiry = token;
  later_expiry[0] = later_expiry[0] == '9' ? '8' : '9';  // the expiry is signed too
  const std::vector<Case> cases = {
      {"no token", "login", "session-1", "", "missing"},
      {"no cookie", "login", "", token, "session cookie missing"},
      {"another session", "login", "session-2", token, "does not match"},
      {"another form", "logout", "session-1", token, "does not match"},
      {"a flipped MAC", "login", "session-1", flipped, "does not match"},
      {"a moved expiry", "login", "session-1", later_expiry, "does not match"},
      {"garbage", "login", "session-1", "not-a-token", "malformed"},
      {"a bare MAC", "login", "session-1", token.substr(token.find('.') + 1), "malformed"},
  };
  for (const Case& c : cases) {
    const absl::Status s = guard.Verify(c.action, c.binding, c.token);
    EXPECT_TRUE(absl::IsPermissionDenied(s)) << c.what << ": " << s;
    EXPECT_TRUE(absl::StrContains(s.message(), c.want)) << c.what << ": " << s;
  }

  // Another process (another key) does not take it.
  CsrfGuard other(std::string(32, 'x'), clock, absl::Hours(1));
  EXPECT_TRUE(absl::IsPermissionDenied(other.Verify("login", "session-1", token)));

  clock.Advance(absl::Minutes(59));
  EXPECT_TRUE(guard.Verify("login", "session-1", token).ok());
  clock.Advance(absl::Minutes(1));
  const absl::Status expired = guard.Verify("login", "session-1", token);
  EXPECT_TRUE(absl::IsPermissionDenied(expired));
  EXPECT_TRUE(absl::StrContains(expired.message(), "expired")) << expired;
}

TEST(CsrfGuardTest, FieldsAreNotConfusedByWhereTheyAreCut) {
  core::SimulatedClock clock(kStart);
  CsrfGuard guard(kKey, clock, absl::Hours(1));
  // "log" + "in\nx" must not sign what "login" + "x" signs.
  EXPECT_FALSE(guard.Verify("login", "x", guard.Issue("log", "in\nx")).ok());
}

TEST(CsrfGuardTest, GuardsFromCreateHaveTheirOwnKeysAndSessionIdsAreRandom) {
  core::SimulatedClock clock(kStart);
  absl::StatusOr<std::unique_ptr<CsrfGuard>> a = CsrfGuard::Create(clock, absl::Hours(1));
  absl::StatusOr<std::unique_ptr<CsrfGuard>> b = CsrfGuard::Create(clock, absl::Hours(1));
  ASSERT_TRUE(a.ok() && b.ok());
  const std::string token = (*a)->Issue("login", "s");
  EXPECT_TRUE((*a)->Verify("login", "s", token).ok());
  EXPECT_FALSE((*b)->Verify("login", "s", token).ok());

  absl::StatusOr<std::string> id1 = CsrfGuard::NewSessionId();
  absl::StatusOr<std::string> id2 = CsrfGuard::NewSessionId();
  ASSERT_TRUE(id1.ok() && id2.ok());
  EXPECT_NE(*id1, *id2);
  EXPECT_TRUE(CsrfGuard::IsSessionId(*id1));
  EXPECT_FALSE(CsrfGuard::IsSessionId("short"));
  EXPECT_FALSE(CsrfGuard::IsSessionId(std::string(43, '!')));
}

TEST(CheckSameOriginTest, OnlyTheServersOwnOriginMayPost) {
  const std::string self = "https://127.0.0.1:8443";
  struct Case {
    const char* what;
    RequestOrigin headers;
    bool ok;
  };
  const std::vector<Case> cases = {
      {"same origin", {self, "", "same-origin"}, true},
      {"same origin, case differs", {"HTTPS://127.0.0.1:8443", "", ""}, true},
      {"typed by the user", {"", "", "none"}, true},
      {"no browser headers (curl)", {"", "", ""}, true},
      {"referer on this origin", {"", self + "/login?failed=1", ""}, true},
      {"another site", {"https://evil.example", "", ""}, false},
      {"another port", {"https://127.0.0.1:9999", "", ""}, false},
      {"plain http to the TLS origin", {"http://127.0.0.1:8443", "", ""}, false},
      {"opaque origin (sandboxed frame, data: URL)", {"null", "", ""}, false},
      {"cross-site fetch metadata", {"", "", "cross-site"}, false},
      {"same-site but another origin", {"", "", "same-site"}, false},
      {"referer elsewhere", {"", "https://evil.example/page", ""}, false},
      {"referer prefix trick", {"", "https://127.0.0.1:8443.evil.example/", ""}, false},
      {"origin wins over a good referer", {"https://evil.example", self + "/login", ""}, false},
  };
  for (const Case& c : cases) {
    const absl::Status s = CheckSameOrigin(c.headers, self);
    EXPECT_EQ(s.ok(), c.ok) << c.what << ": " << s;
    if (!c.ok) {
      EXPECT_TRUE(absl::IsPermissionDenied(s)) << c.what;
      EXPECT_TRUE(absl::StrContains(s.message(), "cross-site request refused")) << s;
    }
  }
}

}  // namespace
}  // namespace tollgate::web
