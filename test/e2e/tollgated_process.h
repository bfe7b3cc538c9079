#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"

namespace tollgate::e2e {

// A real tollgated process for end-to-end tests: spawned on 127.0.0.1 port 0 with its own
// --port-file, its stderr captured to a file in `scratch_dir`. Start returns once the port file
// exists and the standard health service reports SERVING, each awaited as a condition with a
// deadline. `credentials` (default insecure) is what channel() connects with, e.g. TLS. The
// destructor SIGKILLs a process that is still running. Not thread-safe.
class TollgatedProcess {
 public:
  static absl::StatusOr<std::unique_ptr<TollgatedProcess>> Start(
      const std::string& data_dir, const std::string& scratch_dir,
      const std::vector<std::string>& extra_args = {}, absl::Duration timeout = absl::Seconds(30),
      std::shared_ptr<grpc::ChannelCredentials> credentials = nullptr);

  // Runs tollgated with `args` (no defaults added) until it exits; returns the exit code. For
  // startup failures.
  static absl::StatusOr<int> RunToExit(const std::vector<std::string>& args,
                                       const std::string& log_path,
                                       absl::Duration timeout = absl::Seconds(30));

  ~TollgatedProcess();
  TollgatedProcess(const TollgatedProcess&) = delete;
  TollgatedProcess& operator=(const TollgatedProcess&) = delete;

  // "127.0.0.1:PORT".
  const std::string& address() const { return address_; }
  std::shared_ptr<grpc::Channel> channel() const { return channel_; }

  // Sends `signal` (e.g. SIGHUP) and returns at once.
  absl::Status Signal(int signal);
  // SIGKILL, then reap.
  absl::Status Kill();
  // SIGTERM, then wait up to `timeout` for the exit; returns the exit code.
  absl::StatusOr<int> Terminate(absl::Duration timeout = absl::Seconds(30));
  // Everything the process wrote to stderr so far.
  std::string Logs() const;

 private:
  TollgatedProcess(pid_t pid, std::string log_path) : pid_(pid), log_path_(std::move(log_path)) {}
  absl::Status AwaitServing(const std::string& port_file, absl::Time deadline,
                            std::shared_ptr<grpc::ChannelCredentials> credentials);

  pid_t pid_;
  bool running_ = true;
  std::string log_path_;
  std::string address_;
  std::shared_ptr<grpc::Channel> channel_;
};

// Health Check of the whole server ("" service name); the serving status enum's name, e.g.
// "SERVING".
absl::StatusOr<std::string> CheckHealth(const std::shared_ptr<grpc::Channel>& channel,
                                        absl::Duration timeout);

// The service names gRPC reflection lists.
absl::StatusOr<std::vector<std::string>> ListServicesByReflection(
    const std::shared_ptr<grpc::Channel>& channel, absl::Duration timeout);

}  // namespace tollgate::e2e
