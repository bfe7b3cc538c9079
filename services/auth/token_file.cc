#include "services/auth/token_file.h"

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace tollgate::auth {
namespace {

// Splits one CSV line; fields may be double-quoted ("" inside quotes is a literal quote).
absl::StatusOr<std::vector<std::string>> SplitCsv(absl::string_view line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back().push_back('"');
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back().push_back(c);
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else {
      fields.back().push_back(c);
    }
  }
  if (quoted) return absl::InvalidArgumentError("unterminated quote");
  return fields;
}

}  // namespace

absl::StatusOr<TokenTable> ParseTokenFile(absl::string_view text, absl::string_view source) {
  TokenTable table;
  int line_number = 0;
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    ++line_number;
    const absl::string_view line = absl::StripAsciiWhitespace(raw);
    if (line.empty() || line[0] == '#') continue;
    auto error = [&](absl::string_view problem) {
      return absl::InvalidArgumentError(absl::StrCat(source, ":", line_number, ": ", problem));
    };
    absl::StatusOr<std::vector<std::string>> fields = SplitCsv(line);
    if (!fields.ok()) return error(fields.status().message());
    if (fields->size() < 3 || fields->size() > 4) {
      return error(absl::StrCat("want token,user,uid[,\"group1,group2\"], got ", fields->size(),
                                " columns"));
    }
    Identity identity;
    const std::string token(absl::StripAsciiWhitespace((*fields)[0]));
    identity.user = std::string(absl::StripAsciiWhitespace((*fields)[1]));
    identity.uid = std::string(absl::StripAsciiWhitespace((*fields)[2]));
    identity.method = "token";
    if (token.empty()) return error("empty token");
    if (identity.user.empty()) return error("empty user");
    if (fields->size() == 4) {
      for (absl::string_view group : absl::StrSplit((*fields)[3], ',', absl::SkipWhitespace())) {
        identity.groups.emplace_back(absl::StripAsciiWhitespace(group));
      }
    }
    if (!table.emplace(token, std::move(identity)).second) {
      return error("token already used on an earlier line");
    }
  }
  return table;
}

}  // namespace tollgate::auth
