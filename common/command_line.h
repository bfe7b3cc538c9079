#pragma once

// The one command-line parser of Tollgate's binaries. Two front ends share one tokenizer:
// - ForEachFlag, for the daemons (tollgated, tollgate-kube): `--name=value` only, each flag handed
//   to a callback that knows its own flag set;
// - ParseFlags, for the CLI: a declared flag table with kubectl's (pflag's) spellings.

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

namespace tollgate::common {

// One `--name` or `--name=value` argument. The accessors turn it into a typed value or an
// INVALID_ARGUMENT naming the flag and the value.
struct FlagArg {
  absl::string_view name;
  absl::string_view value;
  bool has_value = false;

  // The value, which must be present and non-empty.
  absl::StatusOr<std::string> String() const;
  // A bare `--name` means true; otherwise true/1 or false/0.
  absl::StatusOr<bool> Bool() const;
  // A Go-style duration (90s, 2m); zero is allowed only when `allow_zero`.
  absl::StatusOr<absl::Duration> Duration(bool allow_zero) const;
};

// Splits a `--name[=value]` argument; false when `arg` does not start with "--" or is just "--".
bool SplitLongFlag(absl::string_view arg, FlagArg& flag);

// Calls `handle` for every `--name[=value]` in argv[1..argc); `-h` and `--help` set `help`
// instead. Stops at the first error: anything that is not a flag, or what `handle` returns.
absl::Status ForEachFlag(int argc, char** argv, bool& help,
                         const std::function<absl::Status(const FlagArg&)>& handle);

// The error for a flag `handle` does not know.
absl::Status UnknownFlag(const FlagArg& flag);

// A flag a command declares, for ParseFlags and FlagHelp.
struct FlagSpec {
  absl::string_view name;  // long name, without the dashes
  char short_name = 0;     // 0 when there is none
  // Empty for a boolean flag; otherwise what the help shows as its value ("FILE").
  absl::string_view value_name;
  absl::string_view help;
  // For a value flag that may also stand alone (pflag's NoOptDefVal, e.g. kubectl's
  // `--dry-run` meaning `--dry-run=client`): the value of the bare flag. Such a flag then takes
  // its value only as `--name=value`, never from the next argument.
  absl::string_view implicit_value = "";

  bool is_bool() const { return value_name.empty(); }
};

// The flags and positional arguments of one command line. Boolean flags hold "true".
class ParsedFlags {
 public:
  std::vector<std::string> positional;

  bool Has(absl::string_view flag) const;
  // The last value given for `flag`, or `fallback`.
  std::string Get(absl::string_view flag, absl::string_view fallback = "") const;
  // Every value given for a repeatable flag, in order.
  std::vector<std::string> All(absl::string_view flag) const;
  void Add(absl::string_view flag, std::string value);
  void Remove(absl::string_view flag);

 private:
  std::map<std::string, std::vector<std::string>, std::less<>> values_;
};

// Parses `args` (without the program name) against `specs` with kubectl's conventions:
// `--name value`, `--name=value`, `-n value`, `-nvalue`, `-n=value`, grouped boolean short flags
// (`-Aw`), `--bool=false` (the flag is then absent), and `--` ending the flags. A lone "-" is a
// positional argument (stdin for -f). Flags and positionals may be interleaved. Errors name the
// argument: an unknown flag, a missing value, a value given to a boolean flag.
absl::StatusOr<ParsedFlags> ParseFlags(absl::Span<const std::string> args,
                                       absl::Span<const FlagSpec> specs);

// The "Flags:" block of a --help: one line per flag, help texts aligned.
std::string FlagHelp(absl::Span<const FlagSpec> specs);

}  // namespace tollgate::common
