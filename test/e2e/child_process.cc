#include "test/e2e/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

extern char** environ;

namespace tollgate::e2e {
namespace {

// Paces polling for an exit; every wait ends on its condition or its deadline.
constexpr absl::Duration kPollInterval = absl::Milliseconds(10);

}  // namespace

absl::StatusOr<std::unique_ptr<ChildProcess>> ChildProcess::Start(
    const std::vector<std::string>& args, const std::string& log_path,
    const std::string& stdin_path) {
  if (args.empty()) return absl::InvalidArgumentError("no program");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(
      &actions, STDIN_FILENO, stdin_path.empty() ? "/dev/null" : stdin_path.c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_path.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  std::vector<char*> argv;
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int err = posix_spawn(&pid, args[0].c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (err != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot run ", args[0], ": ", std::strerror(err)));
  }
  return std::unique_ptr<ChildProcess>(new ChildProcess(pid, log_path));
}

absl::StatusOr<int> ChildProcess::Run(const std::vector<std::string>& args,
                                      const std::string& log_path, const std::string& stdin_path,
                                      absl::Duration timeout) {
  absl::StatusOr<std::unique_ptr<ChildProcess>> child = Start(args, log_path, stdin_path);
  if (!child.ok()) return child.status();
  absl::StatusOr<int> code = (*child)->AwaitExit(absl::Now() + timeout);
  if (!code.ok()) return (*child)->Terminate(absl::Seconds(5));
  return code;
}

ChildProcess::~ChildProcess() {
  if (running_) {
    kill(pid_, SIGKILL);
    int ignored = 0;
    waitpid(pid_, &ignored, 0);
  }
}

bool ChildProcess::Running() {
  if (!running_) return false;
  int wstatus = 0;
  if (waitpid(pid_, &wstatus, WNOHANG) == pid_) {
    running_ = false;
    exit_code_ = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
  }
  return running_;
}

absl::StatusOr<int> ChildProcess::AwaitExit(absl::Time deadline) {
  while (Running()) {
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError(absl::StrCat("pid ", pid_, " did not exit"));
    }
    absl::SleepFor(kPollInterval);
  }
  return exit_code_;
}

absl::StatusOr<int> ChildProcess::Terminate(absl::Duration timeout) {
  if (!Running()) return exit_code_;
  kill(pid_, SIGTERM);
  absl::StatusOr<int> code = AwaitExit(absl::Now() + timeout);
  if (code.ok()) return code;
  kill(pid_, SIGKILL);
  return AwaitExit(absl::Now() + absl::Seconds(10));
}

std::string ChildProcess::Logs() const { return ReadFileOrEmpty(log_path_); }

}  // namespace tollgate::e2e
