#pragma once

// The table of `tollgate` commands, for the dispatch and for shell completion.

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "cmd/tollgate/cli_session.h"

namespace tollgate::cli {

using Handler = int (*)(Session&, const ParsedFlags&);

struct Command {
  absl::string_view name;
  absl::string_view synopsis;  // after "tollgate "
  absl::string_view summary;
  absl::string_view details;
  std::vector<FlagSpec> flags;
  Handler run;
  // Takes --server and --timeout.
  bool talks_to_server = true;
  // Left out of the usage (the completion scripts' helper).
  bool hidden = false;
};

const std::vector<Command>& Commands();
const Command* FindCommand(absl::string_view name);
// The command's own flags, then --server and --timeout when it talks to tollgated, then --help.
std::vector<FlagSpec> FlagsOf(const Command& command);
std::string CommandHelp(const Command& command);
std::string MainUsage();

}  // namespace tollgate::cli
