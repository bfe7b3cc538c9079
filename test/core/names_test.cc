#include "core/names.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tollgate::core {
namespace {

using ::testing::HasSubstr;

struct NameCase {
  std::string value;
  bool valid;
};

void ExpectValidity(absl::Status (*validate)(absl::string_view),
                    const std::vector<NameCase>& cases) {
  for (const NameCase& c : cases) {
    absl::Status status = validate(c.value);
    if (c.valid) {
      EXPECT_TRUE(status.ok()) << "\"" << c.value << "\": " << status;
    } else {
      EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << "\"" << c.value << "\"";
    }
  }
}

TEST(NamesTest, Dns1123Subdomain) {
  ExpectValidity(ValidateDns1123Subdomain,
                 {
                     {"a", true},
                     {"ab", true},
                     {"a-b", true},
                     {"0", true},
                     {"team-a.queue-1", true},
                     {"example.com", true},
                     {"1.2.3.4", true},
                     {"a--b", true},
                     {std::string(253, 'a'), true},
                     {absl::StrCat(std::string(63, 'a'), ".", std::string(63, 'b')), true},
                     // No per-label limit inside a subdomain, as in Kubernetes.
                     {std::string(100, 'a'), true},
                     {"", false},
                     {std::string(254, 'a'), false},
                     {"Bad_Name!", false},
                     {"A", false},
                     {"a_b", false},
                     {"-a", false},
                     {"a-", false},
                     {".a", false},
                     {"a.", false},
                     {"a..b", false},
                     {"a.-b", false},
                     {"a-.b", false},
                     {"a.b-", false},
                     {"a\xc3\xa9", false},
                     {"a b", false},
                     {"a/b", false},
                 });
}

TEST(NamesTest, Dns1123Label) {
  ExpectValidity(ValidateDns1123Label, {
                                           {"a", true},
                                           {"a-b", true},
                                           {"0", true},
                                           {"123-abc", true},
                                           {std::string(63, 'a'), true},
                                           {"", false},
                                           {std::string(64, 'a'), false},
                                           {"a.b", false},
                                           {"A", false},
                                           {"-a", false},
                                           {"a-", false},
                                           {"a_b", false},
                                       });
}

TEST(NamesTest, QualifiedName) {
  ExpectValidity(ValidateQualifiedName,
                 {
                     {"cpu", true},
                     {"memory", true},
                     {"nvidia.com/gpu", true},
                     {"example.com/MyName", true},
                     {"kubernetes.io/hostname", true},
                     {"hugepages-2Mi", true},
                     {"a_b.c-D", true},
                     {"1", true},
                     {std::string(63, 'a'), true},
                     {absl::StrCat(std::string(253, 'a'), "/", std::string(63, 'b')), true},
                     {"", false},
                     {"/", false},
                     {"/gpu", false},
                     {"nvidia.com/", false},
                     {"a/b/c", false},
                     {std::string(64, 'a'), false},
                     {absl::StrCat(std::string(254, 'a'), "/b"), false},
                     {"Nvidia.com/gpu", false},
                     {"_a", false},
                     {"a_", false},
                     {".a", false},
                     {"a b", false},
                     {"a:b", false},
                     {"example.com/-a", false},
                 });
}

TEST(NamesTest, LabelValue) {
  ExpectValidity(ValidateLabelValue, {
                                         {"", true},
                                         {"a", true},
                                         {"MyValue", true},
                                         {"my_value", true},
                                         {"12345", true},
                                         {"a.b-c_D", true},
                                         {std::string(63, 'a'), true},
                                         {std::string(64, 'a'), false},
                                         {"-a", false},
                                         {"a-", false},
                                         {"_", false},
                                         {"a/b", false},
                                         {"a b", false},
                                     });
}

struct MessageCase {
  absl::Status (*validate)(absl::string_view);
  std::string value;
  std::string want;
};

TEST(NamesTest, MessagesQuoteValueAndGiveReason) {
  const std::vector<MessageCase> cases = {
      {ValidateDns1123Subdomain, "Bad_Name!",
       "\"Bad_Name!\" is not a valid name: a lowercase RFC 1123 subdomain must consist of lower "
       "case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric "
       "character"},
      // A long value is echoed cut to its first 128 bytes with its size (core/error_text.h).
      {ValidateDns1123Subdomain, std::string(254, 'a'),
       absl::StrCat("\"", std::string(128, 'a'),
                    "\"... (254 bytes) is not a valid name: must be no more than 253 bytes")},
      {ValidateDns1123Label, "a.b",
       "\"a.b\" is not a valid name: a lowercase RFC 1123 label must consist of lower case "
       "alphanumeric characters or '-', and must start and end with an alphanumeric character"},
      {ValidateQualifiedName, "nvidia.com/",
       "\"nvidia.com/\" is not a valid qualified name: name part must be non-empty; name part "
       "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
       "alphanumeric character"},
      {ValidateQualifiedName, "Nvidia.com/gpu",
       "\"Nvidia.com/gpu\" is not a valid qualified name: prefix part a lowercase RFC 1123 "
       "subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start "
       "and end with an alphanumeric character"},
      {ValidateQualifiedName, "/gpu",
       "\"/gpu\" is not a valid qualified name: prefix part must be non-empty"},
      {ValidateLabelValue, "-a",
       "\"-a\" is not a valid label value: a valid label must be an empty string or consist of "
       "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
       "character"},
      {ValidateLabelValue, std::string(64, 'a'),
       absl::StrCat("\"", std::string(64, 'a'),
                    "\" is not a valid label value: must be no more than 63 bytes")},
  };
  for (const MessageCase& c : cases) {
    absl::Status status = c.validate(c.value);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << c.value;
    EXPECT_EQ(status.message(), c.want) << c.value;
  }
}

TEST(NamesTest, MessagesEscapeControlCharacters) {
  absl::Status status = ValidateDns1123Label("a\nb");
  EXPECT_THAT(status.message(), HasSubstr("\"a\\nb\" is not a valid name"));
}

TEST(NamesTest, TooLongAndMalformedReportsBoth) {
  absl::Status status = ValidateDns1123Label(std::string(64, '_'));
  EXPECT_THAT(status.message(), HasSubstr("must be no more than 63 bytes; a lowercase RFC 1123"));
}

}  // namespace
}  // namespace tollgate::core
