#include "cmd/tollgate/label_selector.h"

#include "gtest/gtest.h"

namespace tollgate::cli {
namespace {

google::protobuf::Map<std::string, std::string> Labels(
    std::initializer_list<std::pair<const std::string, std::string>> kv) {
  google::protobuf::Map<std::string, std::string> m;
  for (const auto& [k, v] : kv) m[k] = v;
  return m;
}

bool Match(absl::string_view selector,
           const google::protobuf::Map<std::string, std::string>& labels) {
  absl::StatusOr<LabelSelector> s = LabelSelector::Parse(selector);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() && s->Matches(labels);
}

TEST(LabelSelectorTest, KubernetesSyntax) {
  const auto labels = Labels({{"team", "a"}, {"tier", "gpu"}});
  EXPECT_TRUE(Match("", labels));
  EXPECT_TRUE(Match("team=a", labels));
  EXPECT_TRUE(Match("team==a,tier=gpu", labels));
  EXPECT_FALSE(Match("team=b", labels));
  EXPECT_TRUE(Match("team!=b", labels));
  EXPECT_TRUE(Match("missing!=b", labels));
  EXPECT_FALSE(Match("team!=a", labels));
  EXPECT_TRUE(Match("team in (a, b)", labels));
  EXPECT_FALSE(Match("team notin (a,b)", labels));
  EXPECT_TRUE(Match("tier, !missing", labels));
  EXPECT_FALSE(Match("!tier", labels));
  EXPECT_FALSE(Match("missing", labels));
  EXPECT_TRUE(Match("kueue.x-k8s.io/queue-name!=x", labels));
}

TEST(LabelSelectorTest, ErrorsNameTheSelector) {
  EXPECT_EQ(LabelSelector::Parse("a in (x").status().message(),
            "--selector \"a in (x\": missing ) in \"a in (x\"");
  EXPECT_EQ(LabelSelector::Parse("a,,b").status().message(),
            "--selector \"a,,b\": empty requirement in \"\"");
  EXPECT_FALSE(LabelSelector::Parse("a b=c").ok());
}

}  // namespace
}  // namespace tollgate::cli
