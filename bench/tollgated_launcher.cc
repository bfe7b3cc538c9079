#include "bench/tollgated_launcher.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <future>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"

extern char** environ;

namespace tollgate::bench {

absl::StatusOr<std::unique_ptr<TollgatedTarget>> TollgatedTarget::Spawn(
    const std::string& binary, const std::string& data_dir,
    const std::vector<std::string>& extra_args, client::Credentials auth) {
  const std::string port_file = data_dir + ".port";
  const std::string log_path = data_dir + ".log";
  std::remove(port_file.c_str());
  std::vector<std::string> args = {binary, "--listen=127.0.0.1:0",
                                   absl::StrCat("--data-dir=", data_dir),
                                   absl::StrCat("--port-file=", port_file)};
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, log_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = -1;
  const int err = posix_spawn(&pid, binary.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (err != 0) {
    return absl::InternalError(absl::StrCat("posix_spawn ", binary, ": ", std::strerror(err)));
  }
  std::unique_ptr<TollgatedTarget> target(new TollgatedTarget());
  target->auth_ = std::move(auth);
  target->pid_ = pid;
  target->data_dir_ = data_dir;

  // Wait for the port file (the server writes it once it serves), then for a health answer.
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  int port = 0;
  while (absl::Now() < deadline) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      target->pid_ = -1;
      return absl::UnavailableError(
          absl::StrCat("tollgated exited during startup (status ", status, "); see ", log_path));
    }
    std::ifstream in(port_file);
    std::string text;
    if (in && std::getline(in, text) && absl::SimpleAtoi(absl::StripAsciiWhitespace(text), &port) &&
        port > 0) {
      break;
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  if (port == 0) return absl::DeadlineExceededError("tollgated wrote no port file within 60s");
  target->address_ = absl::StrCat("127.0.0.1:", port);
  grpc::GenericStub stub(target->NewChannel());
  while (absl::Now() < deadline) {
    if (HealthCheck(stub, absl::Seconds(2)).ok()) return target;
    absl::SleepFor(absl::Milliseconds(50));
  }
  return absl::DeadlineExceededError("tollgated did not answer the health check within 60s");
}

absl::StatusOr<std::unique_ptr<TollgatedTarget>> TollgatedTarget::Connect(
    const std::string& address, client::Credentials auth) {
  std::unique_ptr<TollgatedTarget> target(new TollgatedTarget());
  target->address_ = address;
  target->auth_ = std::move(auth);
  grpc::GenericStub stub(target->NewChannel());
  grpc::Status health = HealthCheck(stub, absl::Seconds(10));
  if (!health.ok()) {
    return absl::UnavailableError(
        absl::StrCat("health check of ", address, " failed: ", health.error_message()));
  }
  return target;
}

TollgatedTarget::~TollgatedTarget() {
  if (pid_ <= 0) return;
  kill(pid_, SIGTERM);
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (absl::Now() < deadline) {
    if (waitpid(pid_, nullptr, WNOHANG) == pid_) return;
    absl::SleepFor(absl::Milliseconds(20));
  }
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
}

std::shared_ptr<grpc::Channel> TollgatedTarget::NewChannel(grpc::ChannelArguments args) const {
  // A distinct argument set gives each channel its own subchannel (TCP connection).
  static std::atomic<int> next_channel{0};
  args.SetInt("tollgate.bench.channel", next_channel.fetch_add(1));
  args.SetMaxReceiveMessageSize(256 << 20);
  return client::NewChannel(address_, auth_, std::move(args));
}

grpc::Status HealthCheck(grpc::GenericStub& stub, absl::Duration timeout) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + absl::ToChronoNanoseconds(timeout));
  grpc::ByteBuffer request;  // an empty HealthCheckRequest: service "" (the whole server)
  grpc::Slice empty;
  request = grpc::ByteBuffer(&empty, 1);
  grpc::ByteBuffer response;
  std::promise<grpc::Status> done;
  stub.UnaryCall(&context, "/grpc.health.v1.Health/Check", grpc::StubOptions(), &request, &response,
                 [&done](grpc::Status s) { done.set_value(std::move(s)); });
  return done.get_future().get();
}

int64_t ResidentBytesOf(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(in, line)) {
    absl::string_view rest = line;
    if (absl::ConsumePrefix(&rest, "VmRSS:")) {
      rest = absl::StripAsciiWhitespace(rest);
      absl::ConsumeSuffix(&rest, "kB");
      int64_t kb = 0;
      if (absl::SimpleAtoi(absl::StripAsciiWhitespace(rest), &kb)) return kb * 1024;
    }
  }
  return -1;
}

double CpuSecondsOf(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/stat"));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The command name, in parentheses, may hold spaces: count fields after its end.
  const size_t close = text.rfind(')');
  if (close == std::string::npos) return 0;
  std::vector<std::string> fields = absl::StrSplit(text.substr(close + 2), ' ');
  // fields[0] is field 3 (state); utime and stime are fields 14 and 15.
  int64_t utime = 0;
  int64_t stime = 0;
  if (fields.size() < 13 || !absl::SimpleAtoi(fields[11], &utime) ||
      !absl::SimpleAtoi(fields[12], &stime)) {
    return 0;
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

}  // namespace tollgate::bench
