#include "cmd/tollgate/label_selector.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace tollgate::cli {
namespace {

// Splits on commas outside parentheses: "a in (x,y),b" is two requirements.
std::vector<std::string> SplitRequirements(absl::string_view text) {
  std::vector<std::string> parts;
  std::string current;
  int depth = 0;
  for (char c : text) {
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == ',' && depth == 0) {
      parts.push_back(current);
      current.clear();
      continue;
    }
    current.push_back(c);
  }
  parts.push_back(current);
  return parts;
}

bool ValidKey(absl::string_view key) {
  if (key.empty()) return false;
  for (char c : key) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.' &&
        c != '/') {
      return false;
    }
  }
  return true;
}

}  // namespace

absl::StatusOr<LabelSelector> LabelSelector::Parse(absl::string_view text) {
  LabelSelector selector;
  if (absl::StripAsciiWhitespace(text).empty()) return selector;
  auto bad = [&](absl::string_view part, absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("--selector \"", text, "\": ", why, " in \"", part, "\""));
  };
  for (const std::string& raw : SplitRequirements(text)) {
    absl::string_view part = absl::StripAsciiWhitespace(raw);
    if (part.empty()) return bad(part, "empty requirement");
    Requirement req;
    if (const size_t in = part.find(" in (");
        in != absl::string_view::npos || part.find(" notin (") != absl::string_view::npos) {
      const bool notin = in == absl::string_view::npos;
      const size_t at = notin ? part.find(" notin (") : in;
      req.key = std::string(absl::StripAsciiWhitespace(part.substr(0, at)));
      absl::string_view rest = part.substr(at + (notin ? 8 : 5));
      if (!absl::ConsumeSuffix(&rest, ")")) return bad(part, "missing )");
      for (absl::string_view v : absl::StrSplit(rest, ',')) {
        req.values.emplace_back(absl::StripAsciiWhitespace(v));
      }
      req.op = notin ? Requirement::Op::kNotIn : Requirement::Op::kIn;
    } else if (const size_t ne = part.find("!="); ne != absl::string_view::npos) {
      req.key = std::string(absl::StripAsciiWhitespace(part.substr(0, ne)));
      req.values.emplace_back(absl::StripAsciiWhitespace(part.substr(ne + 2)));
      req.op = Requirement::Op::kNotIn;
    } else if (const size_t eq = part.find('='); eq != absl::string_view::npos) {
      const size_t value_at = part.substr(eq).size() > 1 && part[eq + 1] == '=' ? eq + 2 : eq + 1;
      req.key = std::string(absl::StripAsciiWhitespace(part.substr(0, eq)));
      req.values.emplace_back(absl::StripAsciiWhitespace(part.substr(value_at)));
      req.op = Requirement::Op::kIn;
    } else if (absl::ConsumePrefix(&part, "!")) {
      req.key = std::string(absl::StripAsciiWhitespace(part));
      req.op = Requirement::Op::kDoesNotExist;
    } else {
      req.key = std::string(part);
      req.op = Requirement::Op::kExists;
    }
    if (!ValidKey(req.key)) return bad(raw, "not a label key");
    selector.requirements_.push_back(std::move(req));
  }
  return selector;
}

bool LabelSelector::Matches(const google::protobuf::Map<std::string, std::string>& labels) const {
  for (const Requirement& r : requirements_) {
    auto it = labels.find(r.key);
    const bool has = it != labels.end();
    const bool listed =
        has && std::find(r.values.begin(), r.values.end(), it->second) != r.values.end();
    switch (r.op) {
      case Requirement::Op::kIn:
        if (!listed) return false;
        break;
      case Requirement::Op::kNotIn:
        if (listed) return false;
        break;
      case Requirement::Op::kExists:
        if (!has) return false;
        break;
      case Requirement::Op::kDoesNotExist:
        if (has) return false;
        break;
    }
  }
  return true;
}

}  // namespace tollgate::cli
