#include "common/command_line.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace tollgate::common {

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

bool SplitLongFlag(absl::string_view arg, FlagArg& flag) {
  if (!absl::ConsumePrefix(&arg, "--") || arg.empty()) return false;
  std::pair<absl::string_view, absl::string_view> kv = absl::StrSplit(arg, absl::MaxSplits('=', 1));
  flag = FlagArg{kv.first, kv.second, absl::StrContains(arg, '=')};
  return true;
}

absl::Status ForEachFlag(int argc, char** argv, bool& help,
                         const std::function<absl::Status(const FlagArg&)>& handle) {
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      help = true;
      continue;
    }
    FlagArg flag;
    if (!SplitLongFlag(arg, flag)) {
      return absl::InvalidArgumentError(absl::StrCat("unexpected argument \"", arg, "\""));
    }
    if (absl::Status status = handle(flag); !status.ok()) return status;
  }
  return absl::OkStatus();
}

absl::Status UnknownFlag(const FlagArg& flag) {
  return absl::InvalidArgumentError(absl::StrCat("unknown flag --", flag.name));
}

bool ParsedFlags::Has(absl::string_view flag) const { return values_.find(flag) != values_.end(); }

std::string ParsedFlags::Get(absl::string_view flag, absl::string_view fallback) const {
  auto it = values_.find(flag);
  return it == values_.end() ? std::string(fallback) : it->second.back();
}

std::vector<std::string> ParsedFlags::All(absl::string_view flag) const {
  auto it = values_.find(flag);
  return it == values_.end() ? std::vector<std::string>() : it->second;
}

void ParsedFlags::Add(absl::string_view flag, std::string value) {
  values_[std::string(flag)].push_back(std::move(value));
}

void ParsedFlags::Remove(absl::string_view flag) {
  auto it = values_.find(flag);
  if (it != values_.end()) values_.erase(it);
}

namespace {

const FlagSpec* FindSpec(absl::Span<const FlagSpec> specs, absl::string_view long_name,
                         char short_name) {
  for (const FlagSpec& spec : specs) {
    if ((!long_name.empty() && spec.name == long_name) ||
        (short_name != 0 && spec.short_name == short_name)) {
      return &spec;
    }
  }
  return nullptr;
}

// Records a boolean flag: bare or =true sets it, =false clears it (as pflag), anything else is
// an error naming what was typed.
absl::Status SetBool(const FlagSpec& spec, const FlagArg& arg, absl::string_view typed,
                     ParsedFlags& parsed) {
  absl::StatusOr<bool> on = arg.Bool();
  if (!on.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("flag --", spec.name, " is true or false, got ", typed));
  }
  if (*on) {
    parsed.Add(spec.name, "true");
  } else {
    parsed.Remove(spec.name);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ParsedFlags> ParseFlags(absl::Span<const std::string> args,
                                       absl::Span<const FlagSpec> specs) {
  ParsedFlags parsed;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      parsed.positional.insert(parsed.positional.end(), args.begin() + i + 1, args.end());
      break;
    }
    if (arg.size() < 2 || arg[0] != '-') {
      parsed.positional.push_back(arg);
      continue;
    }
    FlagArg flag;
    const FlagSpec* spec = nullptr;
    if (SplitLongFlag(arg, flag)) {
      spec = FindSpec(specs, flag.name, 0);
      if (spec == nullptr) return absl::InvalidArgumentError(absl::StrCat("unknown flag ", arg));
    } else {
      // Short flags: booleans may be grouped (-Aw); a value flag takes the rest of the argument
      // (-nteam-a, -n=team-a) or the next one.
      size_t pos = 1;
      while (true) {
        spec = FindSpec(specs, "", arg[pos]);
        if (spec == nullptr) {
          return absl::InvalidArgumentError(
              absl::StrCat("unknown flag -", std::string(1, arg[pos]), " in ", arg));
        }
        if (!spec->is_bool() || pos + 1 == arg.size()) break;
        if (arg[pos + 1] == '=') break;
        parsed.Add(spec->name, "true");
        ++pos;
      }
      flag.name = spec->name;
      flag.has_value = pos + 1 < arg.size();
      if (flag.has_value) {
        flag.value = absl::string_view(arg).substr(arg[pos + 1] == '=' ? pos + 2 : pos + 1);
      }
    }
    if (spec->is_bool()) {
      if (absl::Status st = SetBool(*spec, flag, arg, parsed); !st.ok()) return st;
      continue;
    }
    if (flag.has_value) {
      parsed.Add(spec->name, std::string(flag.value));
    } else if (!spec->implicit_value.empty()) {
      parsed.Add(spec->name, std::string(spec->implicit_value));
    } else if (i + 1 < args.size()) {
      parsed.Add(spec->name, args[++i]);
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("flag ", arg, " needs a value (", spec->value_name, ")"));
    }
  }
  return parsed;
}

std::string FlagHelp(absl::Span<const FlagSpec> specs) {
  std::vector<std::pair<std::string, std::string>> rows;
  size_t width = 0;
  for (const FlagSpec& spec : specs) {
    std::string spelling =
        spec.short_name != 0 ? absl::StrCat("-", std::string(1, spec.short_name), ", --", spec.name)
                             : absl::StrCat("    --", spec.name);
    if (!spec.is_bool()) {
      absl::StrAppend(&spelling, spec.implicit_value.empty() ? " " : "[=", spec.value_name,
                      spec.implicit_value.empty() ? "" : "]");
    }
    width = std::max(width, spelling.size());
    rows.emplace_back(std::move(spelling), std::string(spec.help));
  }
  std::string text = "Flags:\n";
  for (const auto& [spelling, help] : rows) {
    absl::StrAppend(&text, "  ", spelling, std::string(width + 3 - spelling.size(), ' '), help,
                    "\n");
  }
  return text;
}

}  // namespace tollgate::common
