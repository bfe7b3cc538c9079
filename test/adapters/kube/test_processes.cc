#include "test/adapters/kube/test_processes.h"

#include <curl/curl.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "common/file_util.h"

namespace tollgate::kube::testing {

absl::StatusOr<std::unique_ptr<ChildProcess>> ChildProcess::Start(
    const std::vector<std::string>& argv, const std::string& log_path) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return absl::InternalError(absl::StrCat("fork: ", std::strerror(errno)));
  if (pid == 0) {
    const int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      close(fd);
    }
    // Signals blocked in the test process must not stay blocked in the child.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  return std::unique_ptr<ChildProcess>(new ChildProcess(pid, log_path));
}

ChildProcess::~ChildProcess() {
  if (running_) Kill().IgnoreError();  // Best effort: the test is over.
}

bool ChildProcess::Running() {
  if (!running_) return false;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) == pid_) {
    running_ = false;
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  return running_;
}

absl::Status ChildProcess::Kill() {
  if (!running_) return absl::OkStatus();
  kill(pid_, SIGKILL);
  int status = 0;
  waitpid(pid_, &status, 0);
  running_ = false;
  return absl::OkStatus();
}

absl::StatusOr<int> ChildProcess::Terminate(absl::Duration timeout) {
  if (!Running()) return exit_code_;
  kill(pid_, SIGTERM);
  if (!WaitFor([this] { return !Running(); }, timeout)) {
    Kill().IgnoreError();  // It did not stop in time; the caller sees the error below.
    return absl::DeadlineExceededError(absl::StrCat("pid ", pid_, " ignored SIGTERM"));
  }
  return exit_code_;
}

std::string ChildProcess::Logs() const { return common::ReadFileToString(log_path_).value_or(""); }

bool WaitFor(const std::function<bool()>& condition, absl::Duration timeout,
             absl::Duration interval) {
  const absl::Time deadline = absl::Now() + timeout;
  // Bounded by the deadline.
  while (true) {
    if (condition()) return true;
    if (absl::Now() >= deadline) return false;
    absl::SleepFor(interval);
  }
}

absl::StatusOr<int> WaitForPortFile(const std::string& path, ChildProcess& child,
                                    absl::Duration timeout) {
  int port = 0;
  const bool ready = WaitFor(
      [&] {
        std::ifstream in(path);
        std::string text;
        return in && std::getline(in, text) &&
               absl::SimpleAtoi(absl::StripAsciiWhitespace(text), &port) && port > 0;
      },
      timeout);
  if (!ready) {
    return absl::DeadlineExceededError(absl::StrCat(
        "no port in ", path, " after ", absl::FormatDuration(timeout), "; logs:\n", child.Logs()));
  }
  return port;
}

std::string FakeApiServerScript() { return TOLLGATE_FAKE_APISERVER; }
std::string TollgatedBinary() { return TOLLGATED_PATH; }
std::string TollgateKubeBinary() { return TOLLGATE_KUBE_PATH; }
std::string SystemPython() { return TOLLGATE_SYSTEM_PYTHON; }

namespace {

// Removes a test's scratch directories when it ends, once its processes are gone (fixtures stop
// them in TearDown). A failed test's stay, named on stderr, for their logs. Without this every
// run left its servers' stores behind: about 200 MB per MultiKueue jobs case.
class ScratchCleaner : public ::testing::EmptyTestEventListener {
 public:
  void Add(std::string dir) {
    absl::MutexLock lock(&mu_);
    dirs_.push_back(std::move(dir));
  }

  void OnTestEnd(const ::testing::TestInfo& info) override {
    std::vector<std::string> dirs;
    {
      absl::MutexLock lock(&mu_);
      dirs.swap(dirs_);
    }
    for (const std::string& dir : dirs) {
      if (info.result()->Failed()) {
        std::cerr << "scratch directory kept for the failed test: " << dir << "\n";
        continue;
      }
      std::error_code ignored;
      std::filesystem::remove_all(dir, ignored);
    }
  }

 private:
  absl::Mutex mu_;
  std::vector<std::string> dirs_ ABSL_GUARDED_BY(mu_);
};

ScratchCleaner& Cleaner() {
  // gtest owns the listener from here on.
  static ScratchCleaner* const cleaner = [] {
    auto* listener = new ScratchCleaner();
    ::testing::UnitTest::GetInstance()->listeners().Append(listener);
    return listener;
  }();
  return *cleaner;
}

}  // namespace

void RemoveSuiteScratchUnlessFailed(const std::string& dir) {
  if (dir.empty()) return;
  const ::testing::TestSuite* suite = ::testing::UnitTest::GetInstance()->current_test_suite();
  if (suite != nullptr && suite->failed_test_count() > 0) {
    std::cerr << "scratch directory kept for the failed suite: " << dir << "\n";
    return;
  }
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
}

std::string ScratchDir() {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) /
      absl::StrCat("tollgate-kube-", getpid(), "-", info->test_suite_name(), "-", info->name());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  Cleaner().Add(dir.string());
  return dir.string();
}

}  // namespace tollgate::kube::testing

namespace tollgate::kube::testing {

absl::StatusOr<FakeApiServer> StartFakeApiServer(const std::string& scratch_dir,
                                                 const std::vector<std::string>& extra_args) {
  const std::string port_file = scratch_dir + "/apiserver.port";
  std::filesystem::remove(port_file);
  std::vector<std::string> argv = {SystemPython(), FakeApiServerScript(), "--port-file", port_file};
  bool tls = false;
  for (const std::string& a : extra_args) {
    argv.push_back(a);
    if (a == "--tls-cert") tls = true;
  }
  FakeApiServer server;
  absl::StatusOr<std::unique_ptr<ChildProcess>> process =
      ChildProcess::Start(argv, scratch_dir + "/apiserver.log");
  if (!process.ok()) return process.status();
  server.process = std::move(*process);
  absl::StatusOr<int> port = WaitForPortFile(port_file, *server.process, absl::Seconds(30));
  if (!port.ok()) return port.status();
  server.port = *port;
  if (tls) server.scheme = "https";
  return server;
}

}  // namespace tollgate::kube::testing

namespace tollgate::kube::testing {

absl::Status PostFake(const FakeApiServer& server, const std::string& path) {
  CURL* curl = curl_easy_init();
  if (curl == nullptr) return absl::InternalError("curl_easy_init failed");
  const std::string url = server.url() + path;
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, "");
  curl_easy_setopt(curl, CURLOPT_PROXY, "");
  curl_easy_setopt(curl, CURLOPT_TIMEOUT, 10L);
  curl_easy_setopt(
      curl, CURLOPT_WRITEFUNCTION, +[](char*, size_t size, size_t n, void*) { return size * n; });
  const CURLcode rc = curl_easy_perform(curl);
  long code = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &code);
  curl_easy_cleanup(curl);
  if (rc != CURLE_OK || code != 200) {
    return absl::UnavailableError(
        absl::StrCat("POST ", url, ": ", curl_easy_strerror(rc), " HTTP ", code));
  }
  return absl::OkStatus();
}

}  // namespace tollgate::kube::testing
