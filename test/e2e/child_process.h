#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "test/support/local_files_and_ports.h"

namespace tollgate::e2e {

// A real helper program for end-to-end tests (prometheus, promtool): spawned with stdout and
// stderr appended to `log_path`, SIGKILLed and reaped by the destructor if still running.
// Not thread-safe.
class ChildProcess {
 public:
  // `args[0]` is the program's path. `stdin_path` empty: /dev/null.
  static absl::StatusOr<std::unique_ptr<ChildProcess>> Start(const std::vector<std::string>& args,
                                                             const std::string& log_path,
                                                             const std::string& stdin_path = "");
  // Runs to completion; returns the exit code (128+signal when killed).
  static absl::StatusOr<int> Run(const std::vector<std::string>& args, const std::string& log_path,
                                 const std::string& stdin_path = "",
                                 absl::Duration timeout = absl::Seconds(60));
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // True while the process has not exited (reaps it when it has).
  bool Running();
  // SIGTERM, then wait up to `timeout` (SIGKILL after it).
  absl::StatusOr<int> Terminate(absl::Duration timeout = absl::Seconds(10));
  std::string Logs() const;

 private:
  ChildProcess(pid_t pid, std::string log_path) : pid_(pid), log_path_(std::move(log_path)) {}
  absl::StatusOr<int> AwaitExit(absl::Time deadline);

  pid_t pid_;
  bool running_ = true;
  int exit_code_ = 0;
  std::string log_path_;
};

using test_support::PickFreePort;
using test_support::ReadFileOrEmpty;

}  // namespace tollgate::e2e
