#include "cmd/flags/command_line.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace tollgate::cmd {

absl::StatusOr<std::string> FlagArg::String() const {
  if (!has_value || value.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", name, " needs a value (--", name, "=...)"));
  }
  return std::string(value);
}

absl::StatusOr<bool> FlagArg::Bool() const {
  if (!has_value) return true;
  if (value == "true" || value == "1") return true;
  if (value == "false" || value == "0") return false;
  return absl::InvalidArgumentError(
      absl::StrCat("--", name, ": want true or false, got \"", value, "\""));
}

absl::StatusOr<absl::Duration> FlagArg::Duration(bool allow_zero) const {
  if (!has_value || value.empty()) return String().status();
  absl::Duration d;
  if (!absl::ParseDuration(value, &d) || d < absl::ZeroDuration() ||
      (!allow_zero && d == absl::ZeroDuration())) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", name, ": want a ", allow_zero ? "" : "positive ",
                     "duration such as 30s or 2m, got \"", value, "\""));
  }
  return d;
}

absl::Status ForEachFlag(int argc, char** argv, bool& help,
                         const std::function<absl::Status(const FlagArg&)>& handle) {
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      help = true;
      continue;
    }
    if (!absl::ConsumePrefix(&arg, "--")) {
      return absl::InvalidArgumentError(absl::StrCat("unexpected argument \"", arg, "\""));
    }
    std::pair<absl::string_view, absl::string_view> kv =
        absl::StrSplit(arg, absl::MaxSplits('=', 1));
    const FlagArg flag{kv.first, kv.second, absl::StrContains(arg, '=')};
    if (absl::Status status = handle(flag); !status.ok()) return status;
  }
  return absl::OkStatus();
}

absl::Status UnknownFlag(const FlagArg& flag) {
  return absl::InvalidArgumentError(absl::StrCat("unknown flag --", flag.name));
}

}  // namespace tollgate::cmd
