#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace grpc {
class ChannelCredentials;
class ClientContext;
}  // namespace grpc

namespace tollgate::test_support {

struct EtcdClusterOptions {
  // 1 (a single member) or 3 (a cluster that survives losing one member).
  int members = 1;
  // How long Start and Restart wait for the members to answer a linearizable read.
  absl::Duration start_timeout = absl::Seconds(30);
  // Serve clients over TLS with client-certificate authentication (--client-cert-auth): a CA,
  // a server certificate for 127.0.0.1 and a client certificate are made with `openssl` under
  // the cluster's directory. Peers stay plain on loopback.
  bool tls = false;
};

// A real etcd (the `etcd` binary of Debian's etcd-server) on 127.0.0.1 for tests: every member
// gets free client and peer ports and a data directory under a fresh temporary directory, which
// the destructor removes after SIGKILLing whatever still runs. Members can be killed, paused
// (SIGSTOP), resumed and restarted on the same ports and data. Members die with the thread
// that started them (PR_SET_PDEATHSIG), so a crashed test leaves none behind: start clusters
// from a thread that outlives them. Not thread-safe.
class EtcdCluster {
 public:
  // $TOLLGATE_ETCD_BINARY when set, else /usr/bin/etcd.
  static std::string BinaryPath();
  // Whether BinaryPath() is an executable file: tests skip (GTEST_SKIP) only when it is not.
  static bool Available();

  static absl::StatusOr<std::unique_ptr<EtcdCluster>> Start(const EtcdClusterOptions& options);
  // One single-member etcd for the whole test process, started on first use and killed at
  // exit: tests that only need a store share it, each under its own key prefix.
  static absl::StatusOr<EtcdCluster*> Shared();
  ~EtcdCluster();
  EtcdCluster(const EtcdCluster&) = delete;
  EtcdCluster& operator=(const EtcdCluster&) = delete;

  int size() const { return static_cast<int>(members_.size()); }
  // "127.0.0.1:PORT" of member `i`'s client (gRPC) listener.
  std::string ClientEndpoint(int i) const;
  // Every member's client endpoint, comma-separated (the form --etcd-endpoints takes).
  std::string ClientEndpoints() const;
  std::string DataDir(int i) const;
  // With EtcdClusterOptions::tls: the CA (PEM) that signed the server and client certificates,
  // and the client certificate and key etcd accepts ("" without TLS).
  const std::string& ca_file() const { return ca_file_; }
  const std::string& client_cert_file() const { return client_cert_file_; }
  const std::string& client_key_file() const { return client_key_file_; }

  // Turns etcd's authentication on: adds the user `root` with `root_password` (and the root
  // role), and the user `user` with `password` and a role that may read and write every key
  // under `prefix` (user empty: root only). From then on every client needs a user's token;
  // the harness's own health checks authenticate as root.
  absl::Status EnableAuth(const std::string& root_password, const std::string& user = "",
                          const std::string& password = "", const std::string& prefix = "");

  // SIGKILL and reap member `i` (no-op when it is not running).
  absl::Status Kill(int i);
  // SIGSTOP / SIGCONT member `i`: a paused member keeps its connections but answers nothing.
  absl::Status Pause(int i);
  absl::Status Resume(int i);
  // Starts a killed member again on its ports and data directory; does not wait for health.
  absl::Status Restart(int i);
  bool Running(int i);

  // Waits until every running, unpaused member answers a linearizable read (which needs a
  // leader and a quorum) or `timeout` passes; the error names the members that did not answer.
  absl::Status WaitHealthy(absl::Duration timeout);
  // Whether member `i` answers a linearizable read within `timeout`.
  bool MemberHealthy(int i, absl::Duration timeout);
  // Whether member `i` commits a write (which needs a quorum) within `timeout`.
  bool MemberAcceptsWrite(int i, absl::Duration timeout);
  // The member's combined stdout/stderr so far (for failure messages).
  std::string Logs(int i) const;

 private:
  struct Member {
    std::string name;
    int client_port = 0;
    int peer_port = 0;
    std::string data_dir;
    std::string log_path;
    pid_t pid = -1;
    bool paused = false;
    // Killed by Kill (not expected to answer) rather than exited on its own (a failure).
    bool killed = false;
  };

  EtcdCluster() = default;
  absl::Status Spawn(Member& member);
  std::string InitialCluster() const;

  absl::Status MakeCertificates();
  // For the harness's own health checks: plain, or TLS with the client certificate.
  std::shared_ptr<grpc::ChannelCredentials> Credentials() const;

  // With auth enabled: a root token on `context` (authenticating through member `i`); false
  // when that fails.
  bool AddRootToken(int i, grpc::ClientContext& context, absl::Time deadline);

  std::string root_;
  std::string token_;
  // EnableAuth's root password; empty while auth is off.
  std::string root_password_;
  bool tls_ = false;
  std::string ca_file_;
  std::string server_cert_file_;
  std::string server_key_file_;
  std::string client_cert_file_;
  std::string client_key_file_;
  std::vector<Member> members_;
};

}  // namespace tollgate::test_support

// Skips the current test, with the reason, when the etcd binary is not installed.
#define TOLLGATE_SKIP_WITHOUT_ETCD()                                                \
  do {                                                                              \
    if (!::tollgate::test_support::EtcdCluster::Available()) {                      \
      GTEST_SKIP() << "etcd binary not found at "                                   \
                   << ::tollgate::test_support::EtcdCluster::BinaryPath()           \
                   << " (install etcd-server, see scripts/install-deps.sh, or set " \
                      "TOLLGATE_ETCD_BINARY)";                                      \
    }                                                                               \
  } while (false)
