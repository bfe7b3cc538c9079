#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "etcd/etcdserver/etcdserverpb/rpc.grpc.pb.h"
#include "grpcpp/channel.h"

namespace tollgate::storage {

// How to reach an etcd cluster.
struct EtcdConnectionOptions {
  // "host:port" of each member's client listener (at least one). "https://host:port" or
  // "http://host:port" are accepted too; https, or any of the TLS files below, means TLS.
  std::vector<std::string> endpoints;
  // TLS: the CA that signed the members' certificates (PEM); a client certificate and key
  // (PEM, both or neither) when etcd requires client authentication (--client-cert-auth).
  std::string ca_file;
  std::string cert_file;
  std::string key_file;
  // Username/password authentication (etcd's `auth enable`): with `user` set, the client gets a
  // token from Auth.Authenticate and sends it as `token` metadata on every call, and gets a new
  // one when etcd no longer accepts it (simple tokens expire after etcd's --auth-token-ttl and
  // die with the member that issued them). Beside or instead of the client certificate.
  std::string user;
  std::string password;
  // Deadline of one call, retries on other members included. A member that does not answer
  // (no quorum, paused, gone, electing) is treated as unavailable and the next one is tried.
  absl::Duration rpc_timeout = absl::Seconds(5);
};

// "a:1,b:2" → {"a:1", "b:2"}; INVALID_ARGUMENT naming the bad entry for an empty list or entry,
// a missing port or an unknown scheme.
absl::StatusOr<std::vector<std::string>> ParseEtcdEndpoints(absl::string_view comma_separated);

// The range_end that covers every key starting with `prefix` (etcd's "prefix" ranges): the
// smallest key greater than all of them. `prefix` must not be all 0xff bytes (then "\0", which
// etcd reads as "no upper bound").
std::string EtcdPrefixEnd(absl::string_view prefix);

// A connection to an etcd cluster over its v3 gRPC API: one channel per endpoint, used one at a
// time; a call that fails for connection reasons moves to the next endpoint (etcd forwards
// writes to its leader itself, so any member serves any request). Thread-safe.
class EtcdClient {
 public:
  // With a user, authenticates once at once: a refused password is an error here
  // (INVALID_ARGUMENT naming the user), while an unreachable etcd is not (the first call that
  // reaches it authenticates).
  static absl::StatusOr<std::unique_ptr<EtcdClient>> Connect(const EtcdConnectionOptions& options);

  // KV Range / Txn / Compact, and Lease Grant / KeepAlive (one round) / Revoke. Reads and
  // read-only Txns are retried on the other endpoints; a Txn that writes is sent once, since its
  // outcome is unknown when the call fails (the caller resolves it).
  absl::StatusOr<etcdserverpb::RangeResponse> Range(const etcdserverpb::RangeRequest& request);
  absl::StatusOr<etcdserverpb::TxnResponse> Txn(const etcdserverpb::TxnRequest& request);
  absl::StatusOr<etcdserverpb::TxnResponse> ReadTxn(const etcdserverpb::TxnRequest& request);
  absl::Status Compact(int64_t etcd_revision);
  absl::StatusOr<etcdserverpb::LeaseGrantResponse> LeaseGrant(int64_t ttl_seconds);
  // Renews `lease_id` once; returns the TTL left (NOT_FOUND when the lease has expired).
  absl::StatusOr<int64_t> LeaseKeepAliveOnce(int64_t lease_id);
  absl::Status LeaseRevoke(int64_t lease_id);

  // Blocks until the Watch on `key` reports an event with an etcd revision >= `from_revision`,
  // or `timeout`; returns the events of the first response that has any (DEADLINE_EXCEEDED when
  // none came). For followers waiting on a key another process writes.
  absl::StatusOr<std::vector<mvccpb::Event>> WatchOnce(absl::string_view key, int64_t from_revision,
                                                       absl::Duration timeout);
  // The same over the keys in [key, range_end): the events of the first response that has any.
  // etcd never splits one revision's events across responses, so every Txn's events arrive
  // together (warm followers rely on it to apply each commit whole). FAILED_PRECONDITION when
  // `from_revision` has been compacted away.
  absl::StatusOr<std::vector<mvccpb::Event>> WatchRangeOnce(absl::string_view key,
                                                            absl::string_view range_end,
                                                            int64_t from_revision,
                                                            absl::Duration timeout);

  // With a user: gets a token now (there is one already after Connect unless etcd was
  // unreachable then). UNAUTHENTICATED naming the user when etcd refuses the password.
  absl::Status Authenticate();

  // Cancels every call in flight and fails every later one at once with CANCELLED: for a
  // leader that stepped down, whose store's calls (a commit retrying through an outage) must
  // not hold the step-down up. A cancelled write has an unknown outcome, as any failed one.
  void Shutdown();

  absl::Duration rpc_timeout() const { return options_.rpc_timeout; }
  const std::vector<std::string>& endpoints() const { return options_.endpoints; }

 private:
  struct Endpoint {
    std::string address;
    std::shared_ptr<grpc::Channel> channel;
    std::unique_ptr<etcdserverpb::KV::Stub> kv;
    std::unique_ptr<etcdserverpb::Lease::Stub> lease;
    std::unique_ptr<etcdserverpb::Watch::Stub> watch;
    std::unique_ptr<etcdserverpb::Auth::Stub> auth;
  };

  explicit EtcdClient(EtcdConnectionOptions options) : options_(std::move(options)) {}
  // The endpoint to use now: the current one unless its channel is known to be failing.
  Endpoint& Pick();
  void MoveOn(const Endpoint& failed);
  // Runs `call` against endpoints in turn while it fails with a connection error.
  template <typename Call>
  absl::Status WithRetries(absl::string_view what, bool retry, Call call);
  // With a user: the current token (authenticating through `endpoint` when there is none yet)
  // put on `context`, and returned so a refusal can drop exactly that one. Without: "".
  absl::StatusOr<std::string> Authorize(Endpoint& endpoint, grpc::ClientContext& context,
                                        absl::Time deadline);
  // Registers a call's context for Shutdown to cancel; CANCELLED once shut down.
  absl::Status Track(grpc::ClientContext* context);
  void Untrack(grpc::ClientContext* context);
  // Forgets `token` (etcd refused it) so the next call authenticates again.
  void DropToken(const std::string& token);

  EtcdConnectionOptions options_;
  std::vector<Endpoint> endpoints_;
  std::atomic<size_t> current_ = 0;
  absl::Mutex calls_mu_;
  bool shut_down_ ABSL_GUARDED_BY(calls_mu_) = false;
  std::set<grpc::ClientContext*> calls_ ABSL_GUARDED_BY(calls_mu_);
  absl::Mutex token_mu_;
  std::string token_ ABSL_GUARDED_BY(token_mu_);
};

// etcd's gRPC status as an absl::Status, prefixed with `what`. DEADLINE_EXCEEDED (the member did
// not answer in time: no quorum, or paused) becomes UNAVAILABLE like etcd's own "no leader".
absl::Status EtcdStatus(const grpc::Status& status, absl::string_view what,
                        absl::string_view endpoint);

// Whether etcd refused a call for its auth token alone (expired, unknown to this member, issued
// before an auth change): nothing of the call applied, and it may be sent again with a new one.
bool IsStaleEtcdToken(const grpc::Status& status);

}  // namespace tollgate::storage
