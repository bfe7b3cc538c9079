#include "test/e2e/tollgated_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "common/file_util.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpc/reflection/v1alpha/reflection.grpc.pb.h"

extern char** environ;

namespace tollgate::e2e {
namespace {

// How long to wait between two looks at a condition (a file appearing, a process exiting). The
// waits only pace the polling; every wait loop ends on its condition or on its deadline.
constexpr absl::Duration kPollInterval = absl::Milliseconds(10);

std::chrono::system_clock::time_point ToChrono(absl::Time t) { return absl::ToChronoTime(t); }

absl::StatusOr<pid_t> Spawn(const std::vector<std::string>& args, const std::string& log_path) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_path.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(TOLLGATED_PATH));
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int err = posix_spawn(&pid, TOLLGATED_PATH, &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (err != 0) {
    return absl::InternalError(absl::StrCat("posix_spawn ", TOLLGATED_PATH, ": ", strerror(err)));
  }
  return pid;
}

// Reaps `pid` if it has exited; returns its exit code (128+signal when killed), or nullopt
// while it runs.
absl::StatusOr<std::optional<int>> TryReap(pid_t pid) {
  int wstatus = 0;
  const pid_t r = waitpid(pid, &wstatus, WNOHANG);
  if (r < 0) return absl::InternalError(absl::StrCat("waitpid: ", strerror(errno)));
  if (r == 0) return std::optional<int>();
  if (WIFEXITED(wstatus)) return std::optional<int>(WEXITSTATUS(wstatus));
  return std::optional<int>(128 + WTERMSIG(wstatus));
}

absl::StatusOr<int> AwaitExit(pid_t pid, absl::Time deadline) {
  while (true) {
    absl::StatusOr<std::optional<int>> exited = TryReap(pid);
    if (!exited.ok()) return exited.status();
    if (exited->has_value()) return **exited;
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError(absl::StrCat("tollgated pid ", pid, " did not exit"));
    }
    absl::SleepFor(kPollInterval);
  }
}

// "" while the file does not exist yet.
std::string ReadAll(const std::string& path) { return common::ReadFileToString(path).value_or(""); }

}  // namespace

absl::StatusOr<std::unique_ptr<TollgatedProcess>> TollgatedProcess::Start(
    const std::string& data_dir, const std::string& scratch_dir,
    const std::vector<std::string>& extra_args, absl::Duration timeout,
    std::shared_ptr<grpc::ChannelCredentials> credentials) {
  static int started = 0;
  const int n = ++started;
  const std::string port_file = absl::StrCat(scratch_dir, "/port.", n);
  const std::string log_path = absl::StrCat(scratch_dir, "/tollgated.", n, ".log");
  // An empty data_dir leaves the flag out (tollgated --store=etcd takes none).
  std::vector<std::string> args = {"--listen=127.0.0.1:0", absl::StrCat("--port-file=", port_file)};
  if (!data_dir.empty()) args.push_back(absl::StrCat("--data-dir=", data_dir));
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  absl::StatusOr<pid_t> pid = Spawn(args, log_path);
  if (!pid.ok()) return pid.status();
  std::unique_ptr<TollgatedProcess> process(new TollgatedProcess(*pid, log_path));
  absl::Status serving =
      process->AwaitServing(port_file, absl::Now() + timeout, std::move(credentials));
  if (!serving.ok()) {
    return absl::Status(serving.code(), absl::StrCat(serving.message(),
                                                     "\ntollgated args: ", absl::StrJoin(args, " "),
                                                     "\ntollgated log:\n", process->Logs()));
  }
  return process;
}

absl::Status TollgatedProcess::AwaitServing(const std::string& port_file, absl::Time deadline,
                                            std::shared_ptr<grpc::ChannelCredentials> credentials) {
  int port = 0;
  while (true) {
    std::string text = ReadAll(port_file);
    if (!text.empty()) {
      if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(text), &port) || port <= 0) {
        return absl::InternalError(absl::StrCat("port file holds \"", text, "\""));
      }
      break;
    }
    absl::StatusOr<std::optional<int>> exited = TryReap(pid_);
    if (!exited.ok()) return exited.status();
    if (exited->has_value()) {
      running_ = false;
      return absl::InternalError(
          absl::StrCat("tollgated exited with ", **exited, " before writing its port file"));
    }
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError("tollgated did not write its port file in time");
    }
    absl::SleepFor(kPollInterval);
  }
  address_ = absl::StrCat("127.0.0.1:", port);
  channel_ = grpc::CreateChannel(
      address_, credentials != nullptr ? credentials : grpc::InsecureChannelCredentials());
  absl::Status last = absl::UnavailableError("no health check made");
  while (absl::Now() < deadline) {
    absl::StatusOr<std::string> health = CheckHealth(channel_, absl::Seconds(1));
    if (health.ok() && *health == "SERVING") return absl::OkStatus();
    last =
        health.ok() ? absl::UnavailableError(absl::StrCat("health is ", *health)) : health.status();
    // Check waits for the connection itself; this only paces retries after a refusal.
    absl::SleepFor(kPollInterval);
  }
  return absl::DeadlineExceededError(
      absl::StrCat("tollgated at ", address_, " not SERVING in time: ", last.ToString()));
}

absl::StatusOr<int> TollgatedProcess::RunToExit(const std::vector<std::string>& args,
                                                const std::string& log_path,
                                                absl::Duration timeout) {
  absl::StatusOr<pid_t> pid = Spawn(args, log_path);
  if (!pid.ok()) return pid.status();
  absl::StatusOr<int> code = AwaitExit(*pid, absl::Now() + timeout);
  if (!code.ok()) {
    kill(*pid, SIGKILL);
    waitpid(*pid, nullptr, 0);
  }
  return code;
}

TollgatedProcess::~TollgatedProcess() {
  if (running_) Kill().IgnoreError();  // Nothing to report to from a destructor.
}

absl::Status TollgatedProcess::Signal(int signal) {
  if (!running_) return absl::FailedPreconditionError("tollgated is not running");
  if (kill(pid_, signal) != 0) return absl::InternalError(absl::StrCat("kill: ", strerror(errno)));
  return absl::OkStatus();
}

absl::Status TollgatedProcess::Kill() {
  if (!running_) return absl::FailedPreconditionError("tollgated is not running");
  if (kill(pid_, SIGKILL) != 0) return absl::InternalError(absl::StrCat("kill: ", strerror(errno)));
  running_ = false;
  if (waitpid(pid_, nullptr, 0) < 0) {
    return absl::InternalError(absl::StrCat("waitpid: ", strerror(errno)));
  }
  return absl::OkStatus();
}

absl::StatusOr<int> TollgatedProcess::Terminate(absl::Duration timeout) {
  if (!running_) return absl::FailedPreconditionError("tollgated is not running");
  if (kill(pid_, SIGTERM) != 0) return absl::InternalError(absl::StrCat("kill: ", strerror(errno)));
  absl::StatusOr<int> code = AwaitExit(pid_, absl::Now() + timeout);
  if (code.ok()) running_ = false;
  return code;
}

std::string TollgatedProcess::Logs() const { return ReadAll(log_path_); }

absl::StatusOr<std::string> CheckHealth(const std::shared_ptr<grpc::Channel>& channel,
                                        absl::Duration timeout) {
  std::unique_ptr<grpc::health::v1::Health::Stub> stub = grpc::health::v1::Health::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(ToChrono(absl::Now() + timeout));
  context.set_wait_for_ready(true);
  grpc::health::v1::HealthCheckResponse response;
  grpc::Status status = stub->Check(&context, grpc::health::v1::HealthCheckRequest(), &response);
  if (!status.ok()) {
    return absl::UnavailableError(absl::StrCat("health check: ", status.error_message()));
  }
  return grpc::health::v1::HealthCheckResponse::ServingStatus_Name(response.status());
}

absl::StatusOr<std::vector<std::string>> ListServicesByReflection(
    const std::shared_ptr<grpc::Channel>& channel, absl::Duration timeout) {
  using grpc::reflection::v1alpha::ServerReflection;
  using grpc::reflection::v1alpha::ServerReflectionRequest;
  using grpc::reflection::v1alpha::ServerReflectionResponse;
  std::unique_ptr<ServerReflection::Stub> stub = ServerReflection::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(ToChrono(absl::Now() + timeout));
  auto stream = stub->ServerReflectionInfo(&context);
  ServerReflectionRequest request;
  request.set_list_services("*");
  if (!stream->Write(request)) return absl::UnavailableError("reflection: write failed");
  stream->WritesDone();
  ServerReflectionResponse response;
  std::vector<std::string> names;
  bool answered = false;
  while (stream->Read(&response)) {
    answered = true;
    if (response.has_error_response()) {
      return absl::InternalError(
          absl::StrCat("reflection: ", response.error_response().error_message()));
    }
    for (const auto& service : response.list_services_response().service()) {
      names.push_back(service.name());
    }
  }
  grpc::Status status = stream->Finish();
  if (!status.ok())
    return absl::UnavailableError(absl::StrCat("reflection: ", status.error_message()));
  if (!answered) return absl::InternalError("reflection: no response");
  return names;
}

}  // namespace tollgate::e2e
