// tollgate: the command-line client of tollgated, and the admission scenario runner.
#include <stdlib.h>

#include <iostream>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "cmd/tollgate/cli_commands.h"
#include "common/mutex_checks.h"
#include "core/clock.h"
#include "grpc/grpc.h"

namespace {

// The CLI reads the wall clock only to show ages; cmd/ is where the real clock may be touched.
class WallClock final : public tollgate::core::Clock {
 public:
  absl::Time Now() const override { return absl::Now(); }
};

int Run(const std::vector<std::string>& args) {
  const char* server = getenv("TOLLGATE_SERVER");
  const WallClock clock;
  const char* config = getenv("TOLLGATE_CONFIG");
  const char* token = getenv("TOLLGATE_TOKEN");
  tollgate::cli::CliEnv env{std::cin, std::cout, std::cerr, server == nullptr ? "" : server, clock};
  env.config_env = config == nullptr ? "" : config;
  env.token_env = token == nullptr ? "" : token;
  return tollgate::cli::RunCli(args, env);
}

}  // namespace

int main(int argc, char** argv) {
  // As in the other production binaries: a trace replay (`tollgate simulate`) takes the
  // engine's mutexes for every operation, and the detection's global graph cost it ~2 %.
  tollgate::common::DisableMutexDeadlockDetection();
  // gRPC's last reference otherwise shuts the library down on a thread of its own, which may
  // still be freeing a TLS channel's OpenSSL state when the process exits (LeakSanitizer saw
  // it). Holding a reference here and dropping it with a blocking shutdown once every channel is
  // gone makes the exit wait for that.
  grpc_init();
  const int code = Run(std::vector<std::string>(argv + 1, argv + argc));
  grpc_shutdown_blocking();
  return code;
}
