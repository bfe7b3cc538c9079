#include "cmd/tollgate/table_printer.h"

#include <cctype>
#include <sstream>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "google/protobuf/timestamp.pb.h"
#include "gtest/gtest.h"

namespace tollgate::cli {
namespace {

TEST(TablePrinterTest, AlignsColumnsLikeKubectl) {
  TablePrinter table({"NAME", "COHORT", "PENDING"});
  table.AddRow({"team-a-cq", "evalhub", "2"});
  table.AddRow({"b", "<none>", "10"});
  EXPECT_EQ(table.ToString(),
            "NAME        COHORT    PENDING\n"
            "team-a-cq   evalhub   2\n"
            "b           <none>    10\n");
}

TEST(TablePrinterTest, LeavesNoTrailingSpacesAfterEmptyLastCells) {
  TablePrinter table({"A", "B", "C"});
  table.AddRow({"x", "", ""});
  table.AddRow({"longer"});  // padded with empty cells
  EXPECT_EQ(table.ToString(),
            "A        B   C\n"
            "x\n"
            "longer\n");
}

TEST(TablePrinterTest, IndentsEveryLine) {
  TablePrinter table({"K", "V"});
  table.AddRow({"cpu", "8"});
  EXPECT_EQ(table.ToString("  "),
            "  K     V\n"
            "  cpu   8\n");
}

TEST(TablePrinterTest, CutsRowsLongerThanTheHeader) {
  TablePrinter table({"ONE"});
  table.AddRow({"a", "dropped"});
  EXPECT_EQ(table.ToString(), "ONE\na\n");
  EXPECT_EQ(table.row_count(), 1u);
}

struct AgeCase {
  absl::Duration age;
  std::string want;
};

// Test names: "119s" -> "Is119s", "<invalid>" -> "IsInvalid".
std::string AgeCaseName(const ::testing::TestParamInfo<AgeCase>& info) {
  std::string name = "Is";
  for (char c : info.param.want) {
    if (std::isalnum(static_cast<unsigned char>(c))) name += c;
  }
  if (info.param.want == "<invalid>") return "IsInvalid";
  if (info.param.age < absl::ZeroDuration()) name += "FromNegative";
  return name;
}

class FormatAgeTest : public ::testing::TestWithParam<AgeCase> {};

TEST_P(FormatAgeTest, MatchesKubectlHumanDuration) {
  EXPECT_EQ(FormatAge(GetParam().age), GetParam().want) << absl::FormatDuration(GetParam().age);
}

INSTANTIATE_TEST_SUITE_P(
    Ages, FormatAgeTest,
    ::testing::Values(
        AgeCase{absl::ZeroDuration(), "0s"}, AgeCase{absl::Milliseconds(5900), "5s"},
        AgeCase{absl::Seconds(119), "119s"}, AgeCase{absl::Minutes(2), "2m"},
        AgeCase{absl::Minutes(3), "3m"}, AgeCase{absl::Seconds(5 * 60 + 30), "5m30s"},
        AgeCase{absl::Minutes(10) + absl::Seconds(59), "10m"}, AgeCase{absl::Minutes(179), "179m"},
        AgeCase{absl::Hours(2), "120m"}, AgeCase{absl::Hours(3), "3h"},
        AgeCase{absl::Hours(3) + absl::Minutes(30), "3h30m"}, AgeCase{absl::Hours(8), "8h"},
        AgeCase{absl::Hours(47) + absl::Minutes(59), "47h"}, AgeCase{absl::Hours(48), "2d"},
        AgeCase{absl::Hours(4 * 24), "4d"}, AgeCase{absl::Hours(4 * 24 + 5), "4d5h"},
        AgeCase{absl::Hours(8 * 24 + 5), "8d"}, AgeCase{absl::Hours(400 * 24), "400d"},
        AgeCase{absl::Hours(730 * 24), "2y"}, AgeCase{absl::Hours(800 * 24), "2y70d"},
        AgeCase{absl::Hours(3000 * 24), "8y"}, AgeCase{absl::Milliseconds(-1500), "0s"},
        AgeCase{absl::Seconds(-5), "<invalid>"}),
    AgeCaseName);

TEST(FormatAgeTest, FromTimestampAgainstNow) {
  google::protobuf::Timestamp created;
  created.set_seconds(1767225600);  // 2026-01-01T00:00:00Z
  const absl::Time now = absl::FromUnixSeconds(1767225600) + absl::Hours(26);
  EXPECT_EQ(FormatAge(created, now), "26h");
  EXPECT_EQ(FormatTimestamp(created), "2026-01-01T00:00:00Z");
  EXPECT_EQ(FormatAge(google::protobuf::Timestamp(), now), "<unknown>");
  EXPECT_EQ(FormatTimestamp(google::protobuf::Timestamp()), "<unknown>");
}

TEST(JoinKeyValuesTest, SortsKeysAndShowsNoneWhenEmpty) {
  google::protobuf::Map<std::string, std::string> labels;
  labels["zone"] = "b";
  labels["gpu"] = "a100";
  EXPECT_EQ(JoinKeyValues(labels), "gpu=a100,zone=b");
  EXPECT_EQ(JoinKeyValues(google::protobuf::Map<std::string, std::string>()), "<none>");
}

TEST(FieldPrinterTest, AlignsValues) {
  FieldPrinter fields;
  fields.Add("Name", "x");
  fields.Add("Pending Reason", "quota");
  fields.Add("Pod Sets", "");
  std::ostringstream out;
  fields.Print(out);
  EXPECT_EQ(out.str(),
            "Name:            x\n"
            "Pending Reason:  quota\n"
            "Pod Sets:\n");
}

}  // namespace
}  // namespace tollgate::cli
