#include "test/support/etcd_cluster.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "etcd/etcdserver/etcdserverpb/rpc.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "test/support/local_files_and_ports.h"
#include "test/support/scratch_dir.h"

extern char** environ;

namespace tollgate::test_support {
namespace {

// Whether every thread of `pid` is stopped by a signal (state T in /proc/PID/stat).
bool IsStopped(pid_t pid) {
  std::ifstream stat(absl::StrCat("/proc/", pid, "/stat"));
  std::string line;
  if (!std::getline(stat, line)) return false;
  // The state follows the command name, which is in parentheses and may hold spaces.
  const size_t close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'T';
}

// Paces polling for health and for exits; every wait ends on its condition or its deadline.
constexpr absl::Duration kPollInterval = absl::Milliseconds(20);

std::string Tail(const std::string& text, size_t max) {
  return text.size() <= max ? text : text.substr(text.size() - max);
}

}  // namespace

std::string EtcdCluster::BinaryPath() {
  const char* env = getenv("TOLLGATE_ETCD_BINARY");
  return env != nullptr && *env != '\0' ? env : "/usr/bin/etcd";
}

bool EtcdCluster::Available() { return access(BinaryPath().c_str(), X_OK) == 0; }

absl::StatusOr<std::unique_ptr<EtcdCluster>> EtcdCluster::Start(const EtcdClusterOptions& options) {
  if (options.members != 1 && options.members != 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("EtcdClusterOptions.members must be 1 or 3, got ", options.members));
  }
  if (!Available()) {
    return absl::FailedPreconditionError(absl::StrCat("etcd binary not found at ", BinaryPath()));
  }
  absl::StatusOr<std::string> root = MakeScratchDir("tollgate_etcd");
  if (!root.ok()) return root.status();
  std::unique_ptr<EtcdCluster> cluster(new EtcdCluster());
  cluster->root_ = *std::move(root);
  cluster->token_ = absl::StrCat("tollgate-test-", std::random_device()());
  if (options.tls) {
    cluster->tls_ = true;
    if (absl::Status status = cluster->MakeCertificates(); !status.ok()) return status;
  }
  // Ports are picked free and bound by etcd a moment later, so a test running beside this one
  // may take one in between; etcd then exits at once. Start over with new ports when that is why.
  // They come from below the ephemeral range so that a member killed and restarted (Restart)
  // can bind them again: an outgoing connection may take a free ephemeral port meanwhile.
  constexpr int kAttempts = 3;
  for (int attempt = 1;; ++attempt) {
    for (int i = 0; i < cluster->size(); ++i) (void)cluster->Kill(i);
    cluster->members_.clear();
    for (int i = 0; i < options.members; ++i) {
      Member member;
      member.name = absl::StrCat("m", i);
      absl::StatusOr<int> client = PickRestartablePort();
      if (!client.ok()) return client.status();
      absl::StatusOr<int> peer = PickRestartablePort();
      if (!peer.ok()) return peer.status();
      member.client_port = *client;
      member.peer_port = *peer;
      const std::string dir =
          attempt == 1 ? member.name : absl::StrCat("attempt", attempt, "-", member.name);
      member.data_dir = absl::StrCat(cluster->root_, "/", dir);
      member.log_path = absl::StrCat(cluster->root_, "/", dir, ".log");
      cluster->members_.push_back(member);
    }
    absl::Status started;
    for (Member& member : cluster->members_) {
      started = cluster->Spawn(member);
      if (!started.ok()) return started;
    }
    started = cluster->WaitHealthy(options.start_timeout);
    if (started.ok()) break;
    if (attempt == kAttempts || !absl::StrContains(started.message(), "address already in use")) {
      return started;
    }
  }
  return cluster;
}

absl::StatusOr<EtcdCluster*> EtcdCluster::Shared() {
  static auto* const shared = new absl::StatusOr<std::unique_ptr<EtcdCluster>>(Start({}));
  // Killed at exit rather than leaked: a stray etcd would outlive the test.
  static const int registered = [] { return std::atexit([] { shared->value().reset(); }); }();
  (void)registered;
  if (!shared->ok()) return shared->status();
  return shared->value().get();
}

EtcdCluster::~EtcdCluster() {
  for (int i = 0; i < size(); ++i) (void)Kill(i);
  RemoveScratchDir(root_);
}

absl::Status EtcdCluster::MakeCertificates() {
  const std::string dir = root_ + "/tls";
  ca_file_ = dir + "/ca.pem";
  server_cert_file_ = dir + "/server.pem";
  server_key_file_ = dir + "/server-key.pem";
  client_cert_file_ = dir + "/client.pem";
  client_key_file_ = dir + "/client-key.pem";
  // P-256 keys: quick to make. Each certificate for one day, signed by a fresh CA.
  const std::string script = absl::StrCat(
      "set -e; mkdir -p '", dir, "'; cd '", dir, "'\n",
      "K='-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes'\n",
      "openssl req -x509 $K -keyout ca-key.pem -out ca.pem -days 1 -subj /CN=tollgate-test-ca\n",
      "printf 'subjectAltName=IP:127.0.0.1\\nextendedKeyUsage=serverAuth,clientAuth\\n' > "
      "server.ext\n",
      "printf 'extendedKeyUsage=clientAuth\\n' > client.ext\n", "for n in server client; do\n",
      "  openssl req $K -keyout $n-key.pem -out $n.csr -subj /CN=tollgate-test-$n\n",
      "  openssl x509 -req -in $n.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -days 1 "
      "-extfile $n.ext -out $n.pem\n",
      "done\n");
  const std::string log_path = root_ + "/openssl.log";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_path.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  const char* argv[] = {"/bin/sh", "-c", script.c_str(), nullptr};
  pid_t pid = 0;
  const int err =
      posix_spawn(&pid, "/bin/sh", &actions, nullptr, const_cast<char**>(argv), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (err != 0) return absl::InternalError(absl::StrCat("sh: ", std::strerror(err)));
  int wstatus = 0;
  waitpid(pid, &wstatus, 0);
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("making test certificates with openssl failed: ", ReadFileOrEmpty(log_path)));
  }
  return absl::OkStatus();
}

std::string EtcdCluster::InitialCluster() const {
  std::vector<std::string> parts;
  for (const Member& m : members_) {
    parts.push_back(absl::StrCat(m.name, "=http://127.0.0.1:", m.peer_port));
  }
  return absl::StrJoin(parts, ",");
}

absl::Status EtcdCluster::Spawn(Member& member) {
  const std::string client_url =
      absl::StrCat(tls_ ? "https" : "http", "://127.0.0.1:", member.client_port);
  const std::string peer_url = absl::StrCat("http://127.0.0.1:", member.peer_port);
  // Short heartbeats and elections so failover tests take seconds; loopback has no latency to
  // absorb, but the machine is shared, so not shorter than this.
  std::vector<std::string> args = {
      BinaryPath(),
      "--name",
      member.name,
      "--data-dir",
      member.data_dir,
      "--listen-client-urls",
      client_url,
      "--advertise-client-urls",
      client_url,
      "--listen-peer-urls",
      peer_url,
      "--initial-advertise-peer-urls",
      peer_url,
      "--initial-cluster",
      InitialCluster(),
      "--initial-cluster-token",
      token_,
      "--initial-cluster-state",
      "new",
      "--heartbeat-interval",
      "100",
      "--election-timeout",
      "1000",
      "--logger",
      "zap",
      "--log-level",
      "warn",
  };
  if (tls_) {
    args.push_back("--cert-file=" + server_cert_file_);
    args.push_back("--key-file=" + server_key_file_);
    args.push_back("--trusted-ca-file=" + ca_file_);
    args.push_back("--client-cert-auth");
  }
  std::vector<char*> argv;
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  // fork + exec rather than posix_spawn, for PR_SET_PDEATHSIG: a test process that crashes
  // (no destructor runs) must not leave etcd members running. The child only makes
  // async-signal-safe calls before exec.
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    return absl::InternalError(absl::StrCat("fork: ", std::strerror(errno)));
  }
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);  // The parent died before prctl.
    const int in = open("/dev/null", O_RDONLY);
    const int out = open(member.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (in < 0 || out < 0) _exit(127);
    dup2(in, STDIN_FILENO);
    dup2(out, STDOUT_FILENO);
    dup2(out, STDERR_FILENO);
    execve(argv[0], argv.data(), environ);
    _exit(127);
  }
  member.pid = pid;
  member.paused = false;
  member.killed = false;
  return absl::OkStatus();
}

std::string EtcdCluster::ClientEndpoint(int i) const {
  return absl::StrCat("127.0.0.1:", members_.at(i).client_port);
}

std::string EtcdCluster::ClientEndpoints() const {
  std::vector<std::string> endpoints;
  for (int i = 0; i < size(); ++i) endpoints.push_back(ClientEndpoint(i));
  return absl::StrJoin(endpoints, ",");
}

std::string EtcdCluster::DataDir(int i) const { return members_.at(i).data_dir; }

absl::Status EtcdCluster::Kill(int i) {
  Member& member = members_.at(i);
  if (member.pid <= 0) return absl::OkStatus();
  kill(member.pid, SIGKILL);
  int ignored = 0;
  waitpid(member.pid, &ignored, 0);
  member.pid = -1;
  member.paused = false;
  member.killed = true;
  return absl::OkStatus();
}

absl::Status EtcdCluster::Pause(int i) {
  Member& member = members_.at(i);
  if (member.pid <= 0)
    return absl::FailedPreconditionError(absl::StrCat(member.name, " is not running"));
  if (kill(member.pid, SIGSTOP) != 0) {
    return absl::InternalError(absl::StrCat("SIGSTOP ", member.name, ": ", std::strerror(errno)));
  }
  member.paused = true;
  // kill() returns before the signal has stopped every thread; on a loaded machine the member
  // could still answer a call the test sends right after. Return only once it is stopped.
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (!IsStopped(member.pid)) {
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat(member.name, " did not stop within 10 s of SIGSTOP"));
    }
    absl::SleepFor(absl::Milliseconds(1));
  }
  return absl::OkStatus();
}

absl::Status EtcdCluster::Resume(int i) {
  Member& member = members_.at(i);
  if (member.pid <= 0)
    return absl::FailedPreconditionError(absl::StrCat(member.name, " is not running"));
  if (kill(member.pid, SIGCONT) != 0) {
    return absl::InternalError(absl::StrCat("SIGCONT ", member.name, ": ", std::strerror(errno)));
  }
  member.paused = false;
  return absl::OkStatus();
}

absl::Status EtcdCluster::Restart(int i) {
  Member& member = members_.at(i);
  if (Running(i)) return absl::FailedPreconditionError(absl::StrCat(member.name, " is running"));
  return Spawn(member);
}

bool EtcdCluster::Running(int i) {
  Member& member = members_.at(i);
  if (member.pid <= 0) return false;
  int wstatus = 0;
  if (waitpid(member.pid, &wstatus, WNOHANG) == member.pid) {
    member.pid = -1;
    return false;
  }
  return true;
}

std::shared_ptr<grpc::ChannelCredentials> EtcdCluster::Credentials() const {
  if (!tls_) return grpc::InsecureChannelCredentials();
  grpc::SslCredentialsOptions ssl;
  ssl.pem_root_certs = ReadFileOrEmpty(ca_file_);
  ssl.pem_cert_chain = ReadFileOrEmpty(client_cert_file_);
  ssl.pem_private_key = ReadFileOrEmpty(client_key_file_);
  return grpc::SslCredentials(ssl);
}

bool EtcdCluster::AddRootToken(int i, grpc::ClientContext& context, absl::Time deadline) {
  if (root_password_.empty()) return true;
  auto auth = etcdserverpb::Auth::NewStub(grpc::CreateChannel(ClientEndpoint(i), Credentials()));
  etcdserverpb::AuthenticateRequest request;
  request.set_name("root");
  request.set_password(root_password_);
  etcdserverpb::AuthenticateResponse response;
  grpc::ClientContext auth_context;
  auth_context.set_deadline(absl::ToChronoTime(deadline));
  auth_context.set_wait_for_ready(true);
  if (!auth->Authenticate(&auth_context, request, &response).ok()) return false;
  context.AddMetadata("token", response.token());
  return true;
}

bool EtcdCluster::MemberHealthy(int i, absl::Duration timeout) {
  auto kv = etcdserverpb::KV::NewStub(grpc::CreateChannel(ClientEndpoint(i), Credentials()));
  etcdserverpb::RangeRequest request;
  request.set_key("tollgate-test-health");
  etcdserverpb::RangeResponse response;
  grpc::ClientContext context;
  const absl::Time deadline = absl::Now() + timeout;
  context.set_deadline(absl::ToChronoTime(deadline));
  context.set_wait_for_ready(true);
  if (!AddRootToken(i, context, deadline)) return false;
  return kv->Range(&context, request, &response).ok();
}

bool EtcdCluster::MemberAcceptsWrite(int i, absl::Duration timeout) {
  auto kv = etcdserverpb::KV::NewStub(grpc::CreateChannel(ClientEndpoint(i), Credentials()));
  etcdserverpb::PutRequest request;
  request.set_key("tollgate-test-health");
  request.set_value("1");
  etcdserverpb::PutResponse response;
  grpc::ClientContext context;
  const absl::Time deadline = absl::Now() + timeout;
  context.set_deadline(absl::ToChronoTime(deadline));
  context.set_wait_for_ready(true);
  if (!AddRootToken(i, context, deadline)) return false;
  return kv->Put(&context, request, &response).ok();
}

absl::Status EtcdCluster::EnableAuth(const std::string& root_password, const std::string& user,
                                     const std::string& password, const std::string& prefix) {
  if (root_password.empty()) return absl::InvalidArgumentError("EnableAuth: empty root password");
  auto auth = etcdserverpb::Auth::NewStub(grpc::CreateChannel(ClientEndpoint(0), Credentials()));
  auto call = [&](absl::string_view what, auto method, const auto& request, auto* response) {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
    context.set_wait_for_ready(true);
    const grpc::Status status = (auth.get()->*method)(&context, request, response);
    return status.ok()
               ? absl::OkStatus()
               : absl::InternalError(absl::StrCat("etcd ", what, ": ", status.error_message()));
  };
  etcdserverpb::AuthUserAddRequest add_root;
  add_root.set_name("root");
  add_root.set_password(root_password);
  etcdserverpb::AuthUserAddResponse added;
  absl::Status status = call("UserAdd root", &etcdserverpb::Auth::Stub::UserAdd, add_root, &added);
  // The root role is built in: granting it needs no RoleAdd.
  etcdserverpb::AuthUserGrantRoleRequest grant_root;
  grant_root.set_user("root");
  grant_root.set_role("root");
  etcdserverpb::AuthUserGrantRoleResponse granted;
  if (status.ok()) {
    status =
        call("UserGrantRole root", &etcdserverpb::Auth::Stub::UserGrantRole, grant_root, &granted);
  }
  if (status.ok() && !user.empty()) {
    const std::string role = user + "-role";
    etcdserverpb::AuthRoleAddRequest add_role;
    add_role.set_name(role);
    etcdserverpb::AuthRoleAddResponse role_added;
    status = call("RoleAdd", &etcdserverpb::Auth::Stub::RoleAdd, add_role, &role_added);
    etcdserverpb::AuthRoleGrantPermissionRequest permit;
    permit.set_name(role);
    permit.mutable_perm()->set_permtype(authpb::Permission::READWRITE);
    permit.mutable_perm()->set_key(prefix);
    std::string end = prefix;
    // The prefix's range end: its last byte + 1 (prefixes here end in '/', never 0xff).
    if (!end.empty()) end.back() = static_cast<char>(end.back() + 1);
    permit.mutable_perm()->set_range_end(end);
    etcdserverpb::AuthRoleGrantPermissionResponse permitted;
    if (status.ok()) {
      status = call("RoleGrantPermission", &etcdserverpb::Auth::Stub::RoleGrantPermission, permit,
                    &permitted);
    }
    etcdserverpb::AuthUserAddRequest add_user;
    add_user.set_name(user);
    add_user.set_password(password);
    if (status.ok()) {
      status = call("UserAdd", &etcdserverpb::Auth::Stub::UserAdd, add_user, &added);
    }
    etcdserverpb::AuthUserGrantRoleRequest grant;
    grant.set_user(user);
    grant.set_role(role);
    if (status.ok()) {
      status = call("UserGrantRole", &etcdserverpb::Auth::Stub::UserGrantRole, grant, &granted);
    }
  }
  etcdserverpb::AuthEnableRequest enable;
  etcdserverpb::AuthEnableResponse enabled;
  if (status.ok()) {
    status = call("AuthEnable", &etcdserverpb::Auth::Stub::AuthEnable, enable, &enabled);
  }
  if (status.ok()) root_password_ = root_password;
  return status;
}

absl::Status EtcdCluster::WaitHealthy(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  std::vector<std::string> unhealthy;
  while (true) {
    unhealthy.clear();
    for (int i = 0; i < size(); ++i) {
      if (members_[i].killed || members_[i].paused) continue;
      if (!Running(i)) {
        // Exited on its own (bad flags, port taken): waiting longer cannot help.
        return absl::FailedPreconditionError(absl::StrCat(
            "etcd member ", members_[i].name, " exited; log (tail):\n", Tail(Logs(i), 2000)));
      }
      const absl::Duration left = deadline - absl::Now();
      if (left <= absl::ZeroDuration() ||
          !MemberHealthy(i, std::min(left, absl::Milliseconds(500)))) {
        unhealthy.push_back(members_[i].name);
      }
    }
    if (unhealthy.empty()) return absl::OkStatus();
    if (absl::Now() >= deadline) break;
    absl::SleepFor(kPollInterval);
  }
  std::string logs;
  for (int i = 0; i < size(); ++i) {
    absl::StrAppend(&logs, "\n--- ", members_[i].name, " log (tail) ---\n", Tail(Logs(i), 2000));
  }
  return absl::DeadlineExceededError(absl::StrCat("etcd members ", absl::StrJoin(unhealthy, ", "),
                                                  " not healthy within ",
                                                  absl::FormatDuration(timeout), logs));
}

std::string EtcdCluster::Logs(int i) const { return ReadFileOrEmpty(members_.at(i).log_path); }

}  // namespace tollgate::test_support
