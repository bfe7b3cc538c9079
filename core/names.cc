#include "core/names.h"

#include <cstddef>
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

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

bool IsAlnum(char c) { return IsLowerAlnum(c) || (c >= 'A' && c <= 'Z'); }

// [a-z0-9]([-a-z0-9]*[a-z0-9])?
bool MatchesDns1123Label(absl::string_view s) {
  if (s.empty() || !IsLowerAlnum(s.front()) || !IsLowerAlnum(s.back())) return false;
  for (char c : s) {
    if (!IsLowerAlnum(c) && c != '-') return false;
  }
  return true;
}

// label(\.label)* -- Kubernetes puts no per-label length limit on subdomains.
bool MatchesDns1123Subdomain(absl::string_view s) {
  for (absl::string_view label : absl::StrSplit(s, '.')) {
    if (!MatchesDns1123Label(label)) return false;
  }
  return true;
}

// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]
bool MatchesQualifiedNamePart(absl::string_view s) {
  if (s.empty() || !IsAlnum(s.front()) || !IsAlnum(s.back())) return false;
  for (char c : s) {
    if (!IsAlnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
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
  std::vector<std::string> reasons = SubdomainErrors(value);
  if (reasons.empty()) return absl::OkStatus();
  return Invalid(value, "name", reasons);
}

absl::Status ValidateDns1123Label(absl::string_view value) {
  std::vector<std::string> reasons;
  if (value.size() > kDns1123LabelMaxLength) reasons.push_back(MaxLenMsg(kDns1123LabelMaxLength));
  if (!MatchesDns1123Label(value)) reasons.emplace_back(kDns1123LabelMsg);
  if (reasons.empty()) return absl::OkStatus();
  return Invalid(value, "name", reasons);
}

absl::Status ValidateQualifiedName(absl::string_view value) {
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
  std::vector<std::string> reasons;
  if (value.size() > kLabelValueMaxLength) reasons.push_back(MaxLenMsg(kLabelValueMaxLength));
  if (!value.empty() && !MatchesQualifiedNamePart(value)) reasons.emplace_back(kLabelValueMsg);
  if (reasons.empty()) return absl::OkStatus();
  return Invalid(value, "label value", reasons);
}

}  // namespace tollgate::core
