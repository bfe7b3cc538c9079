// tollgate: the command-line client of tollgated, and the admission scenario runner.
#include <stdlib.h>

#include <iostream>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "cmd/tollgate/cli_commands.h"
#include "core/clock.h"

namespace {

// The CLI reads the wall clock only to show ages; cmd/ is where the real clock may be touched.
class WallClock final : public tollgate::core::Clock {
 public:
  absl::Time Now() const override { return absl::Now(); }
};

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  const char* server = getenv("TOLLGATE_SERVER");
  const WallClock clock;
  const char* config = getenv("TOLLGATE_CONFIG");
  const char* token = getenv("TOLLGATE_TOKEN");
  tollgate::cli::CliEnv env{std::cin, std::cout, std::cerr, server == nullptr ? "" : server, clock};
  env.config_env = config == nullptr ? "" : config;
  env.token_env = token == nullptr ? "" : token;
  return tollgate::cli::RunCli(args, env);
}
