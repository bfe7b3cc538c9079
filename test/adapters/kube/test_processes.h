#pragma once

// Real processes for the adapter's integration tests: the fake API server, tollgated and
// tollgate-kube, each on 127.0.0.1 with its log in a scratch directory. Every wait polls a
// condition against a deadline.

#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace tollgate::kube::testing {

// A child process with stdout and stderr appended to `log_path`. The destructor SIGKILLs it
// if it still runs. Not thread-safe.
class ChildProcess {
 public:
  static absl::StatusOr<std::unique_ptr<ChildProcess>> Start(const std::vector<std::string>& argv,
                                                             const std::string& log_path);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  absl::Status Kill();
  // SIGTERM, then wait up to `timeout` (SIGKILL after it); returns the exit code.
  absl::StatusOr<int> Terminate(absl::Duration timeout = absl::Seconds(20));
  bool Running();
  std::string Logs() const;
  pid_t pid() const { return pid_; }

 private:
  ChildProcess(pid_t pid, std::string log_path) : pid_(pid), log_path_(std::move(log_path)) {}
  pid_t pid_;
  bool running_ = true;
  int exit_code_ = -1;
  std::string log_path_;
};

// Polls `condition` every `interval` until it holds or `timeout` passes.
bool WaitFor(const std::function<bool()>& condition, absl::Duration timeout,
             absl::Duration interval = absl::Milliseconds(50));

// Reads a port file written by a child once it is ready.
absl::StatusOr<int> WaitForPortFile(const std::string& path, ChildProcess& child,
                                    absl::Duration timeout);

// Paths baked in by CMake.
std::string FakeApiServerScript();
std::string TollgatedBinary();
std::string TollgateKubeBinary();
std::string SystemPython();

// A fresh scratch directory for the running test, removed when the test ends if it passed.
std::string ScratchDir();

// For a suite's own scratch directory, from TearDownTestSuite once its processes are stopped:
// removes `dir` unless a test of the running suite failed (then names it on stderr).
void RemoveSuiteScratchUnlessFailed(const std::string& dir);

}  // namespace tollgate::kube::testing

namespace tollgate::kube::testing {

// The fake API server (test/adapters/fake_apiserver) on 127.0.0.1, port 0.
struct FakeApiServer {
  std::unique_ptr<ChildProcess> process;
  int port = 0;
  std::string scheme = "http";
  std::string url() const { return scheme + "://127.0.0.1:" + std::to_string(port); }
};
absl::StatusOr<FakeApiServer> StartFakeApiServer(const std::string& scratch_dir,
                                                 const std::vector<std::string>& extra_args = {});

// POSTs an empty body to a test-only endpoint of the fake (e.g. "/fake/compact").
absl::Status PostFake(const FakeApiServer& server, const std::string& path);

}  // namespace tollgate::kube::testing
