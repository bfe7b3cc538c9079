#pragma once

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "clients/cpp/connection.h"

namespace tollgate::bench {

// A tollgated to benchmark: either one this process spawns (on 127.0.0.1 port 0, with a fresh
// data directory, stopped with SIGTERM on destruction) or one already running at an address.
// Not thread-safe.
class TollgatedTarget {
 public:
  // Spawns `binary` with --listen=127.0.0.1:0 --data-dir=<data_dir> --port-file=... plus
  // `extra_args`; its stderr goes to <data_dir>.log. Returns once it answers the health check.
  // Every channel authenticates with `auth` (for a server spawned with TLS or authenticators in
  // `extra_args`).
  static absl::StatusOr<std::unique_ptr<TollgatedTarget>> Spawn(
      const std::string& binary, const std::string& data_dir,
      const std::vector<std::string>& extra_args = {}, client::Credentials auth = {});
  static absl::StatusOr<std::unique_ptr<TollgatedTarget>> Connect(const std::string& address,
                                                                  client::Credentials auth = {});

  ~TollgatedTarget();
  TollgatedTarget(const TollgatedTarget&) = delete;
  TollgatedTarget& operator=(const TollgatedTarget&) = delete;

  const std::string& address() const { return address_; }
  // A new channel (its own HTTP/2 connection) to the server, with `args` on top of the bench's.
  std::shared_ptr<grpc::Channel> NewChannel(grpc::ChannelArguments args = {}) const;
  // The server's pid when spawned, else -1.
  pid_t pid() const { return pid_; }
  const std::string& data_dir() const { return data_dir_; }

 private:
  TollgatedTarget() = default;

  pid_t pid_ = -1;
  std::string address_;
  std::string data_dir_;
  client::Credentials auth_;
};

// The standard health service's Check for the whole server, as raw bytes over a generic stub
// (the empty request of grpc.health.v1): the cheapest unary RPC the server answers.
grpc::Status HealthCheck(grpc::GenericStub& stub, absl::Duration timeout);

// Resident set size of another process (VmRSS of /proc/PID/status), in bytes; -1 if unknown.
int64_t ResidentBytesOf(pid_t pid);

// User plus system CPU seconds another process has used so far (/proc/PID/stat), at the
// kernel's clock-tick resolution; 0 if unknown.
double CpuSecondsOf(pid_t pid);

}  // namespace tollgate::bench
