#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "core/clock.h"
#include "storage/etcd_client.h"

namespace tollgate::ha {

// Proof of leadership: the election key this replica created and the revision that created it.
// etcd deletes the key when the lease behind it expires, and a key created again later gets a
// new create_revision, so "the key still has this create_revision" holds exactly while this
// leadership lasts. Every write of the leader is made conditional on it (the fence).
struct Leadership {
  std::string key;
  int64_t create_revision = 0;
  int64_t lease_id = 0;
  bool operator==(const Leadership& other) const {
    return key == other.key && create_revision == other.create_revision &&
           lease_id == other.lease_id;
  }
};

// Leader election over etcd's v3 API, with the create-revision recipe: each candidate puts a key
// `<prefix><lease id in hex>` bound to its own lease, and the key with the lowest create_revision
// under the prefix leads. The key's value is the candidate's advertised address, so followers
// know where to send clients.
//
// One background thread grants the lease, creates the key, renews the lease every ttl/3 and
// re-reads the prefix every `poll_interval`. Leadership ends when etcd says the lease is gone
// (keepalive answers TTL 0, the key vanished) or, locally, when the lease's last confirmed
// expiry passes without a renewal: a leader cut off from etcd steps down on its own at most one
// TTL after its last renewal, while the others take over no earlier than that. The local
// step-down is a courtesy; safety comes from the fence (see Leadership), which etcd checks.
// After losing, the thread campaigns again with a new lease.
//
// Thread-safe.
class LeaderElection {
 public:
  struct Options {
    // Keys under this prefix are the candidates.
    std::string prefix = "/tollgate/election/";
    // Stored as the key's value: where clients reach this replica.
    std::string advertise;
    absl::Duration lease_ttl = absl::Seconds(10);
    // How often the prefix is re-read to see who leads. Zero: lease_ttl / 10, within
    // [50ms, 1s].
    absl::Duration poll_interval = absl::ZeroDuration();
  };

  // What this replica knows about the election.
  struct View {
    // Set while this replica leads.
    bool leader = false;
    Leadership leadership;
    // The leader's advertised address; empty when no one leads (or etcd is unreachable).
    std::string leader_address;
    // Bumped on every change of `leader`, `leadership` or `leader_address`.
    int64_t generation = 0;
    // Why this replica last stopped leading (empty: never led).
    std::string last_loss;
  };

  // Starts campaigning at once. `etcd` reaches the cluster (its rpc_timeout should be well
  // under the lease TTL) and must outlive the election; `clock` measures lease expiry (the real
  // clock in tollgated).
  static absl::StatusOr<std::unique_ptr<LeaderElection>> Start(storage::EtcdClient& etcd,
                                                               const core::Clock& clock,
                                                               Options options);
  // Resigns (revokes the lease, so the next leader need not wait for it to expire).
  ~LeaderElection();
  LeaderElection(const LeaderElection&) = delete;
  LeaderElection& operator=(const LeaderElection&) = delete;

  View view() const;
  // Blocks until the view's generation differs from `generation` or `deadline` passes; returns
  // the current view.
  View WaitForChange(int64_t generation, absl::Time deadline) const;
  // Blocks until this replica leads or `deadline` passes.
  absl::StatusOr<Leadership> WaitForLeadership(absl::Time deadline) const;
  // Stops campaigning and revokes the lease: another replica can lead at once.
  void Resign();
  // Gives up the current leadership (revokes the lease, best effort) and campaigns again with a
  // new lease, behind the other candidates: for a leader that cannot serve (its store failed)
  // but may lead again later.
  void StepDown(absl::string_view why);

 private:
  LeaderElection(storage::EtcdClient& etcd, const core::Clock& clock, Options options);
  void Loop();
  // One round: ensure a lease and a key, renew when due, read who leads.
  void Round();
  absl::Status Campaign();
  // Renews the lease; NOT_FOUND when etcd no longer has it.
  absl::Status KeepAlive();
  absl::Status ReadLeader();
  void LoseLocked(absl::string_view why) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RevokeLease(int64_t lease_id);

  const core::Clock& clock_;
  const Options options_;
  const absl::Duration poll_interval_;
  storage::EtcdClient& etcd_;

  mutable absl::Mutex mu_;
  View view_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // The lease and key of the current campaign (0 / empty: none yet).
  int64_t lease_id_ ABSL_GUARDED_BY(mu_) = 0;
  std::string key_ ABSL_GUARDED_BY(mu_);
  int64_t create_revision_ ABSL_GUARDED_BY(mu_) = 0;
  // When the lease expires as far as this replica can prove (last renewal's send time + TTL).
  absl::Time lease_valid_until_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  absl::Time next_keepalive_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  std::thread thread_;
};

}  // namespace tollgate::ha
