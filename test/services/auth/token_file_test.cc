#include "services/auth/token_file.h"

#include "gtest/gtest.h"

namespace tollgate::auth {
namespace {

TEST(TokenFileTest, ParsesKubeApiserverFormat) {
  absl::StatusOr<TokenTable> table = ParseTokenFile(
      "# comment\n\nt1,alice,1001,\"team-a,devs\"\nt2,bob,1002\n t3 , carol , 7 , ops \n",
      "tokens.csv");
  ASSERT_TRUE(table.ok()) << table.status();
  ASSERT_EQ(table->size(), 3u);
  const Identity& alice = table->at("t1");
  EXPECT_EQ(alice.user, "alice");
  EXPECT_EQ(alice.uid, "1001");
  EXPECT_EQ(alice.groups, (std::vector<std::string>{"team-a", "devs"}));
  EXPECT_EQ(alice.method, "token");
  EXPECT_TRUE(table->at("t2").groups.empty());
  EXPECT_EQ(table->at("t3").user, "carol");
  EXPECT_EQ(table->at("t3").groups, (std::vector<std::string>{"ops"}));
}

TEST(TokenFileTest, BadLinesNameFileAndLine) {
  struct Bad {
    const char* text;
    const char* want;
  };
  for (const Bad& b : std::vector<Bad>{{"t1,alice\n", "tokens.csv:1: want token,user,uid"},
                                       {"ok,a,1\n,bob,2\n", "tokens.csv:2: empty token"},
                                       {"t,,1\n", "tokens.csv:1: empty user"},
                                       {"t,a,1\nt,b,2\n", "tokens.csv:2: token already used"},
                                       {"t,a,1,\"g1,g2\n", "tokens.csv:1: unterminated quote"}}) {
    absl::StatusOr<TokenTable> table = ParseTokenFile(b.text, "tokens.csv");
    ASSERT_FALSE(table.ok()) << b.text;
    EXPECT_NE(table.status().message().find(b.want), std::string::npos) << table.status();
  }
}

}  // namespace
}  // namespace tollgate::auth
