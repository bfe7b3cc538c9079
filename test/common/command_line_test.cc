#include "common/command_line.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace tollgate::common {
namespace {

// Runs ForEachFlag over `args` (argv[0] added), recording each flag as name=value or name.
absl::Status Parse(std::vector<std::string> args, bool& help, std::vector<std::string>& seen) {
  args.insert(args.begin(), "daemon");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return ForEachFlag(static_cast<int>(argv.size()), argv.data(), help, [&](const FlagArg& flag) {
    seen.push_back(flag.has_value ? std::string(flag.name) + "=" + std::string(flag.value)
                                  : std::string(flag.name));
    return flag.name == "bad" ? UnknownFlag(flag) : absl::OkStatus();
  });
}

TEST(ForEachFlagTest, SplitsNamesAndValuesAndNotesHelp) {
  bool help = false;
  std::vector<std::string> seen;
  ASSERT_TRUE(Parse({"--a=1", "--b", "-h", "--c=x=y", "--d="}, help, seen).ok());
  EXPECT_TRUE(help);
  EXPECT_EQ(seen, (std::vector<std::string>{"a=1", "b", "c=x=y", "d="}));
}

TEST(ForEachFlagTest, StopsAtAPositionalArgumentOrAHandlerError) {
  bool help = false;
  std::vector<std::string> seen;
  absl::Status status = Parse({"--a", "stray", "--b"}, help, seen);
  EXPECT_EQ(status.message(), "unexpected argument \"stray\"");
  EXPECT_EQ(seen, (std::vector<std::string>{"a"}));
  seen.clear();
  status = Parse({"--bad", "--after"}, help, seen);
  EXPECT_EQ(status.message(), "unknown flag --bad");
  EXPECT_EQ(seen, (std::vector<std::string>{"bad"}));
}

FlagArg Arg(absl::string_view name, absl::string_view value, bool has_value) {
  return FlagArg{name, value, has_value};
}

TEST(FlagArgTest, TypedValuesNameTheFlagAndValue) {
  EXPECT_EQ(*Arg("dir", "/x", true).String(), "/x");
  EXPECT_EQ(Arg("dir", "", true).String().status().message(), "--dir needs a value (--dir=...)");
  EXPECT_EQ(Arg("dir", "", false).String().status().code(), absl::StatusCode::kInvalidArgument);

  EXPECT_TRUE(*Arg("on", "", false).Bool());
  EXPECT_FALSE(*Arg("on", "0", true).Bool());
  EXPECT_TRUE(*Arg("on", "true", true).Bool());
  EXPECT_EQ(Arg("on", "yes", true).Bool().status().message(),
            "--on: want true or false, got \"yes\"");

  EXPECT_EQ(*Arg("grace", "90s", true).Duration(true), absl::Seconds(90));
  EXPECT_EQ(*Arg("grace", "0s", true).Duration(true), absl::ZeroDuration());
  EXPECT_EQ(Arg("period", "0s", true).Duration(false).status().message(),
            "--period: want a positive duration such as 30s or 2m, got \"0s\"");
  EXPECT_EQ(Arg("grace", "-1s", true).Duration(true).status().message(),
            "--grace: want a duration such as 30s or 2m, got \"-1s\"");
  EXPECT_EQ(Arg("grace", "soon", true).Duration(true).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// The CLI's front end: kubectl's spellings over a declared flag table.
constexpr FlagSpec kSpecs[] = {
    {"namespace", 'n', "NAMESPACE", "namespace"},
    {"all-namespaces", 'A', "", "every namespace"},
    {"watch", 'w', "", "watch"},
    {"filename", 'f', "FILE", "manifests"},
    {"dry-run", 0, "STRATEGY", "none, client or server", "client"},
};

absl::StatusOr<ParsedFlags> ParseCli(std::vector<std::string> args) {
  return ParseFlags(args, kSpecs);
}

TEST(ParseFlagsTest, TakesKubectlSpellings) {
  absl::StatusOr<ParsedFlags> p = ParseCli(
      {"get", "-n", "a", "--namespace=b", "-nc", "-n=d", "wl", "-f", "-", "--filename", "x"});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->positional, (std::vector<std::string>{"get", "wl"}));
  EXPECT_EQ(p->All("namespace"), (std::vector<std::string>{"a", "b", "c", "d"}));
  EXPECT_EQ(p->Get("namespace"), "d");
  EXPECT_EQ(p->All("filename"), (std::vector<std::string>{"-", "x"}));
  EXPECT_FALSE(p->Has("watch"));
  EXPECT_EQ(p->Get("watch", "no"), "no");
}

TEST(ParseFlagsTest, GroupsBooleansAndHonoursFalse) {
  absl::StatusOr<ParsedFlags> p = ParseCli({"-Aw", "--watch=false", "-A=true"});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(p->Has("all-namespaces"));
  EXPECT_FALSE(p->Has("watch"));
  p = ParseCli({"-wnteam"});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(p->Has("watch"));
  EXPECT_EQ(p->Get("namespace"), "team");
}

TEST(ParseFlagsTest, ImplicitValueOnlyTakesAnInlineValue) {
  absl::StatusOr<ParsedFlags> p = ParseCli({"--dry-run", "obj"});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->Get("dry-run"), "client");
  EXPECT_EQ(p->positional, (std::vector<std::string>{"obj"}));
  p = ParseCli({"--dry-run=server"});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->Get("dry-run"), "server");
}

TEST(ParseFlagsTest, DoubleDashEndsFlagsAndLoneDashIsAnArgument) {
  absl::StatusOr<ParsedFlags> p = ParseCli({"-", "--", "-n", "--x"});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->positional, (std::vector<std::string>{"-", "-n", "--x"}));
  EXPECT_FALSE(p->Has("namespace"));
}

TEST(ParseFlagsTest, ErrorsNameTheArgument) {
  EXPECT_EQ(ParseCli({"--nope"}).status().message(), "unknown flag --nope");
  EXPECT_EQ(ParseCli({"-Az"}).status().message(), "unknown flag -z in -Az");
  EXPECT_EQ(ParseCli({"-n"}).status().message(), "flag -n needs a value (NAMESPACE)");
  EXPECT_EQ(ParseCli({"--watch=maybe"}).status().message(),
            "flag --watch is true or false, got --watch=maybe");
  EXPECT_EQ(ParseCli({"--"}).status().code(), absl::StatusCode::kOk);
}

TEST(FlagHelpTest, AlignsSpellingsAndShowsOptionalValues) {
  EXPECT_EQ(FlagHelp(kSpecs),
            "Flags:\n"
            "  -n, --namespace NAMESPACE   namespace\n"
            "  -A, --all-namespaces        every namespace\n"
            "  -w, --watch                 watch\n"
            "  -f, --filename FILE         manifests\n"
            "      --dry-run[=STRATEGY]    none, client or server\n");
}

}  // namespace
}  // namespace tollgate::common
