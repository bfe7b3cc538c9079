#include "core/names.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "core/error_text.h"

namespace tollgate::core {
namespace {

constexpr size_t kDns1123SubdomainMaxLength = 253;
constexpr size_t kDns1123LabelMaxLength = 63;
constexpr size_t kQualifiedNameMaxLength = 63;
constexpr size_t kLabelValueMaxLength = 63;

// Kubernetes' wording, minus the regex it appends, so messages read the same as kubectl's.
constexpr absl::string_view kDns1123LabelMsg =
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character";
constexpr absl::string_view kDns1123SubdomainMsg =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character";
constexpr absl::string_view kQualifiedNameMsg =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character";
constexpr absl::string_view kLabelValueMsg =
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character";

// Character classes by table: names are checked on every Submit and by the million on restart.
enum CharClass : uint8_t {
  kLowerAlnum = 1,  // [a-z0-9]
  kUpper = 2,       // [A-Z]
  kDash = 4,        // -
  kDot = 8,         // .
  kUnderscore = 16  // _
};

constexpr std::array<uint8_t, 256> MakeCharClasses() {
  std::array<uint8_t, 256> classes{};
  for (int c = 'a'; c <= 'z'; ++c) classes[c] = kLowerAlnum;
  for (int c = '0'; c <= '9'; ++c) classes[c] = kLowerAlnum;
  for (int c = 'A'; c <= 'Z'; ++c) classes[c] = kUpper;
  classes['-'] = kDash;
  classes['.'] = kDot;
  classes['_'] = kUnderscore;
  return classes;
}
constexpr std::array<uint8_t, 256> kCharClasses = MakeCharClasses();

uint8_t ClassOf(char c) { return kCharClasses[static_cast<unsigned char>(c)]; }

// Every character of `s` in `allowed`, its first and last in `ends`.
bool MatchesRun(absl::string_view s, uint8_t ends, uint8_t allowed) {
  if (s.empty() || (ClassOf(s.front()) & ends) == 0 || (ClassOf(s.back()) & ends) == 0) {
    return false;
  }
  for (char c : s) {
    if ((ClassOf(c) & allowed) == 0) return false;
  }
  return true;
}

// [a-z0-9]([-a-z0-9]*[a-z0-9])?
bool MatchesDns1123Label(absl::string_view s) {
  return MatchesRun(s, kLowerAlnum, kLowerAlnum | kDash);
}

// label(\.label)* -- Kubernetes puts no per-label length limit on subdomains.
bool MatchesDns1123Subdomain(absl::string_view s) {
  if (!MatchesRun(s, kLowerAlnum, kLowerAlnum | kDash | kDot)) return false;
  // Each label starts and ends alphanumeric: no dot beside a dot or a dash.
  for (size_t i = 1; i < s.size(); ++i) {
    if ((s[i] == '.' && (s[i - 1] == '.' || s[i - 1] == '-')) || (s[i - 1] == '.' && s[i] == '-')) {
      return false;
    }
  }
  return true;
}

// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]
bool MatchesQualifiedNamePart(absl::string_view s) {
  return MatchesRun(s, kLowerAlnum | kUpper, kLowerAlnum | kUpper | kDash | kDot | kUnderscore);
}

std::string MaxLenMsg(size_t max) { return absl::StrCat("must be no more than ", max, " bytes"); }

absl::Status Invalid(absl::string_view value, absl::string_view what,
                     const std::vector<std::string>& reasons) {
  return absl::InvalidArgumentError(absl::StrCat(QuoteValue(value), " is not a valid ", what, ": ",
                                                 absl::StrJoin(reasons, "; ")));
}

std::vector<std::string> SubdomainErrors(absl::string_view value) {
  std::vector<std::string> reasons;
  if (value.size() > kDns1123SubdomainMaxLength) {
    reasons.push_back(MaxLenMsg(kDns1123SubdomainMaxLength));
  }
  if (!MatchesDns1123Subdomain(value)) reasons.emplace_back(kDns1123SubdomainMsg);
  return reasons;
}

}  // namespace

absl::Status ValidateDns1123Subdomain(absl::string_view value) {
  // Valid names are checked by the million on restart: no list of reasons for them.
  if (value.size() <= kDns1123SubdomainMaxLength && MatchesDns1123Subdomain(value)) {
    return absl::OkStatus();
  }
  std::vector<std::string> reasons = SubdomainErrors(value);
  if (reasons.empty()) return absl::OkStatus();
  return Invalid(value, "name", reasons);
}

absl::Status ValidateDns1123Label(absl::string_view value) {
  if (value.size() <= kDns1123LabelMaxLength && MatchesDns1123Label(value)) {
    return absl::OkStatus();
  }
  std::vector<std::string> reasons;
  if (value.size() > kDns1123LabelMaxLength) reasons.push_back(MaxLenMsg(kDns1123LabelMaxLength));
  if (!MatchesDns1123Label(value)) reasons.emplace_back(kDns1123LabelMsg);
  if (reasons.empty()) return absl::OkStatus();
  return Invalid(value, "name", reasons);
}

absl::Status ValidateQualifiedName(absl::string_view value) {
  // The common case, a resource or label key without a prefix, without splitting.
  if (value.size() <= kQualifiedNameMaxLength && value.find('/') == absl::string_view::npos &&
      MatchesQualifiedNamePart(value)) {
    return absl::OkStatus();
  }
  std::vector<absl::string_view> parts = absl::StrSplit(value, '/');
  std::vector<std::string> reasons;
  if (parts.size() > 2) {
    reasons.push_back(absl::StrCat("a qualified name ", kQualifiedNameMsg,
                                   " with an optional DNS subdomain prefix and '/' (e.g. "
                                   "'example.com/MyName')"));
    return Invalid(value, "qualified name", reasons);
  }
  absl::string_view name = parts.back();
  if (parts.size() == 2) {
    absl::string_view prefix = parts.front();
    if (prefix.empty()) {
      reasons.emplace_back("prefix part must be non-empty");
    } else {
      for (const std::string& reason : SubdomainErrors(prefix)) {
        reasons.push_back(absl::StrCat("prefix part ", reason));
      }
    }
  }
  if (name.empty()) {
    reasons.emplace_back("name part must be non-empty");
  } else if (name.size() > kQualifiedNameMaxLength) {
    reasons.push_back(absl::StrCat("name part ", MaxLenMsg(kQualifiedNameMaxLength)));
  }
  if (!MatchesQualifiedNamePart(name)) {
    reasons.push_back(absl::StrCat("name part ", kQualifiedNameMsg));
  }
  if (reasons.empty()) return absl::OkStatus();
  return Invalid(value, "qualified name", reasons);
}

absl::Status ValidateLabelValue(absl::string_view value) {
  if (value.size() <= kLabelValueMaxLength && (value.empty() || MatchesQualifiedNamePart(value))) {
    return absl::OkStatus();
  }
  std::vector<std::string> reasons;
  if (value.size() > kLabelValueMaxLength) reasons.push_back(MaxLenMsg(kLabelValueMaxLength));
  if (!value.empty() && !MatchesQualifiedNamePart(value)) reasons.emplace_back(kLabelValueMsg);
  if (reasons.empty()) return absl::OkStatus();
  return Invalid(value, "label value", reasons);
}

bool IsCanonicalDecimalInteger(absl::string_view value) {
  if (value == "0") return true;
  if (!value.empty() && value[0] == '-') value.remove_prefix(1);
  if (value.empty() || value[0] < '1' || value[0] > '9') return false;
  return std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace tollgate::core
