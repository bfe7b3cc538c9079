#pragma once

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace tollgate::cmd {

// One `--name` or `--name=value` argument of a daemon's command line. The accessors turn it into
// a typed value or an INVALID_ARGUMENT naming the flag and the value.
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

// Calls `handle` for every `--name[=value]` in argv[1..argc); `-h` and `--help` set `help`
// instead. Stops at the first error: anything that is not a flag, or what `handle` returns.
absl::Status ForEachFlag(int argc, char** argv, bool& help,
                         const std::function<absl::Status(const FlagArg&)>& handle);

// The error for a flag `handle` does not know.
absl::Status UnknownFlag(const FlagArg& flag);

}  // namespace tollgate::cmd
