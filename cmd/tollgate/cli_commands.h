#pragma once

// The `tollgate` command line: argument parsing, the commands, and what they print. Every command
// except `scenario run` is a client of tollgated over gRPC (clients/cpp/tollgate_client.h).

#include <istream>
#include <ostream>
#include <string>
#include <vector>

#include "clients/cpp/tollgate_client.h"
#include "core/clock.h"

namespace tollgate::cli {

inline constexpr int kExitOk = 0;
// The command ran and failed: the server refused it or could not be reached.
inline constexpr int kExitFailure = 1;
// The command line itself is wrong: unknown command or flag, missing argument.
inline constexpr int kExitUsage = 2;

// What the commands take from the process. main() passes the real streams, $TOLLGATE_SERVER and
// the wall clock; tests pass string streams, their in-process server and a clock of their own.
struct CliEnv {
  std::istream& in;
  std::ostream& out;
  std::ostream& err;
  // The value of $TOLLGATE_SERVER, "" when unset.
  std::string server_env;
  // "Now" for ages (AGE columns, describe's timelines).
  const core::Clock& clock;
  // When set, a running `watch` stops once it is cancelled; otherwise it runs until the stream
  // ends or the process is interrupted.
  client::WatchCanceller* watch_canceller = nullptr;
  // $TOLLGATE_CONFIG and $TOLLGATE_TOKEN (cmd/tollgate/client_config.h), "" when unset.
  std::string config_env = "";
  std::string token_env = "";
};

// Runs `tollgate ARGS...` (`args` excludes the program name) and returns the exit code: kExitOk,
// kExitFailure, or kExitUsage (with the usage on env.err).
int RunCli(const std::vector<std::string>& args, const CliEnv& env);

}  // namespace tollgate::cli
