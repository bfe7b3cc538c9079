#include "services/ha/leader_election.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "services/ha/etcd_keys.h"

namespace tollgate::ha {

namespace {

absl::Duration DefaultPollInterval(const LeaderElection::Options& options) {
  if (options.poll_interval > absl::ZeroDuration()) return options.poll_interval;
  return std::clamp(options.lease_ttl / 10, absl::Milliseconds(50), absl::Seconds(1));
}

}  // namespace

absl::StatusOr<std::unique_ptr<LeaderElection>> LeaderElection::Start(storage::EtcdClient& etcd,
                                                                      const core::Clock& clock,
                                                                      Options options) {
  if (options.lease_ttl < absl::Seconds(1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("lease TTL: etcd leases count whole seconds, want at least 1s, got ",
                     absl::FormatDuration(options.lease_ttl)));
  }
  if (options.prefix.empty()) {
    return absl::InvalidArgumentError("election prefix: must not be empty");
  }
  if (options.advertise.empty()) {
    return absl::InvalidArgumentError("advertised address: must not be empty");
  }
  std::unique_ptr<LeaderElection> election(new LeaderElection(etcd, clock, std::move(options)));
  election->thread_ = std::thread([e = election.get()] { e->Loop(); });
  return election;
}

LeaderElection::LeaderElection(storage::EtcdClient& etcd, const core::Clock& clock, Options options)
    : clock_(clock),
      options_(std::move(options)),
      poll_interval_(DefaultPollInterval(options_)),
      etcd_(etcd) {}

LeaderElection::~LeaderElection() { Resign(); }

void LeaderElection::Resign() {
  int64_t lease_id = 0;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
  {
    absl::MutexLock lock(&mu_);
    lease_id = lease_id_;
    if (view_.leader) LoseLocked("resigned");
    lease_id_ = 0;
  }
  if (lease_id != 0) RevokeLease(lease_id);
}

void LeaderElection::StepDown(absl::string_view why) {
  int64_t lease_id = 0;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    lease_id = lease_id_;
    LoseLocked(why);
    // The next round campaigns with a new lease and key; a renewal of the old one in flight
    // finds it revoked (NOT_FOUND) and resets nothing newer than this.
    lease_id_ = 0;
    key_.clear();
    create_revision_ = 0;
    next_keepalive_ = absl::InfinitePast();
  }
  if (lease_id != 0) RevokeLease(lease_id);
}

LeaderElection::View LeaderElection::view() const {
  absl::MutexLock lock(&mu_);
  return view_;
}

LeaderElection::View LeaderElection::WaitForChange(int64_t generation, absl::Time deadline) const {
  absl::MutexLock lock(&mu_);
  auto changed = [&]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return view_.generation != generation || stopping_;
  };
  mu_.AwaitWithDeadline(absl::Condition(&changed), deadline);
  return view_;
}

absl::StatusOr<Leadership> LeaderElection::WaitForLeadership(absl::Time deadline) const {
  absl::MutexLock lock(&mu_);
  auto leading = [&]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return view_.leader || stopping_; };
  mu_.AwaitWithDeadline(absl::Condition(&leading), deadline);
  if (!view_.leader) {
    return absl::DeadlineExceededError(
        view_.leader_address.empty()
            ? std::string("not elected leader in time")
            : absl::StrCat("not elected leader in time; ", view_.leader_address, " leads"));
  }
  return view_.leadership;
}

void LeaderElection::Loop() {
  while (true) {
    Round();
    absl::MutexLock lock(&mu_);
    auto stopping = [&]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return stopping_; };
    // Waking early for a keepalive keeps renewals on time when the poll interval is long.
    const absl::Time wake = std::min(absl::Now() + poll_interval_, next_keepalive_);
    if (mu_.AwaitWithDeadline(absl::Condition(&stopping), wake)) return;
  }
}

void LeaderElection::Round() {
  bool campaigning = false;
  {
    absl::MutexLock lock(&mu_);
    campaigning = lease_id_ != 0;
    // Checked before talking to etcd: a replica that was paused past its lease must not act as
    // leader for even one more round.
    if (view_.leader && clock_.Now() >= lease_valid_until_) {
      LoseLocked("lease expired without a renewal");
    }
  }
  if (!campaigning) {
    if (absl::Status status = Campaign(); !status.ok()) {
      absl::MutexLock lock(&mu_);
      if (!view_.leader_address.empty()) {
        view_.leader_address.clear();
        ++view_.generation;
      }
      return;
    }
  }
  bool renew = false;
  {
    absl::MutexLock lock(&mu_);
    renew = absl::Now() >= next_keepalive_;
  }
  if (renew) {
    absl::Status renewed = KeepAlive();
    if (absl::IsNotFound(renewed)) {
      absl::MutexLock lock(&mu_);
      LoseLocked(renewed.message());
      lease_id_ = 0;
      key_.clear();
      create_revision_ = 0;
      return;
    }
  }
  if (!ReadLeader().ok()) {
    absl::MutexLock lock(&mu_);
    // Unknown leader: say so rather than redirect clients to a stale address. Leadership itself
    // is judged by the lease above, not by one failed read.
    if (!view_.leader && !view_.leader_address.empty()) {
      view_.leader_address.clear();
      ++view_.generation;
    }
  }
}

absl::Status LeaderElection::Campaign() {
  const absl::Time sent = clock_.Now();
  absl::StatusOr<etcdserverpb::LeaseGrantResponse> granted =
      etcd_.LeaseGrant(absl::ToInt64Seconds(options_.lease_ttl));
  if (!granted.ok()) return granted.status();
  const int64_t lease_id = granted->id();
  const std::string key = absl::StrCat(options_.prefix, absl::Hex(lease_id, absl::kZeroPad16));

  // The key is unique to this lease; the compare only guards against a retried put after a lost
  // answer turning into a second create.
  etcdserverpb::TxnRequest txn;
  etcdserverpb::Compare* absent = txn.add_compare();
  absent->set_key(key);
  absent->set_target(etcdserverpb::Compare::CREATE);
  absent->set_result(etcdserverpb::Compare::EQUAL);
  absent->set_create_revision(0);
  etcdserverpb::PutRequest* put = txn.add_success()->mutable_request_put();
  put->set_key(key);
  put->set_value(options_.advertise);
  put->set_lease(lease_id);
  absl::StatusOr<etcdserverpb::TxnResponse> done = etcd_.Txn(txn);
  if (!done.ok() || !done->succeeded()) {
    RevokeLease(lease_id);
    return done.ok() ? absl::AbortedError(absl::StrCat("election key ", key, " exists"))
                     : done.status();
  }
  absl::MutexLock lock(&mu_);
  lease_id_ = lease_id;
  key_ = key;
  create_revision_ = done->header().revision();
  lease_valid_until_ = sent + absl::Seconds(granted->ttl());
  next_keepalive_ = sent + options_.lease_ttl / 3;
  return absl::OkStatus();
}

absl::Status LeaderElection::KeepAlive() {
  int64_t lease_id = 0;
  {
    absl::MutexLock lock(&mu_);
    lease_id = lease_id_;
  }
  const absl::Time sent = clock_.Now();
  absl::StatusOr<int64_t> ttl = etcd_.LeaseKeepAliveOnce(lease_id);
  absl::MutexLock lock(&mu_);
  if (absl::IsNotFound(ttl.status())) return ttl.status();
  if (!ttl.ok()) {
    // Unreachable etcd: keep the lease as valid as it last was proven and retry soon.
    next_keepalive_ = absl::Now() + std::min(poll_interval_, options_.lease_ttl / 10);
    return ttl.status();
  }
  lease_valid_until_ = sent + absl::Seconds(*ttl);
  next_keepalive_ = absl::Now() + options_.lease_ttl / 3;
  return absl::OkStatus();
}

absl::Status LeaderElection::ReadLeader() {
  etcdserverpb::RangeRequest range;
  range.set_key(options_.prefix);
  range.set_range_end(PrefixEnd(options_.prefix));
  range.set_sort_target(etcdserverpb::RangeRequest::CREATE);
  range.set_sort_order(etcdserverpb::RangeRequest::ASCEND);
  range.set_limit(1);
  absl::StatusOr<etcdserverpb::RangeResponse> read = etcd_.Range(range);
  if (!read.ok()) return read.status();
  const etcdserverpb::RangeResponse& got = *read;
  absl::MutexLock lock(&mu_);
  View next = view_;
  next.leader_address = got.kvs().empty() ? "" : got.kvs(0).value();
  const bool ours = !got.kvs().empty() && !key_.empty() && got.kvs(0).key() == key_ &&
                    got.kvs(0).create_revision() == create_revision_;
  next.leader = ours && clock_.Now() < lease_valid_until_;
  if (next.leader) next.leadership = Leadership{key_, create_revision_, lease_id_};
  if (!next.leader) next.leadership = Leadership{};
  if (view_.leader && !next.leader) {
    next.last_loss = ours ? "lease expired without a renewal"
                          : "the election key is gone (the lease expired or was revoked in etcd)";
  }
  if (next.leader != view_.leader || !(next.leadership == view_.leadership) ||
      next.leader_address != view_.leader_address) {
    next.generation = view_.generation + 1;
    view_ = std::move(next);
  }
  return absl::OkStatus();
}

void LeaderElection::LoseLocked(absl::string_view why) {
  view_.last_loss = std::string(why);
  if (!view_.leader && view_.leadership.key.empty()) return;
  view_.leader = false;
  view_.leadership = Leadership{};
  ++view_.generation;
}

void LeaderElection::RevokeLease(int64_t lease_id) {
  // Best effort: an unrevoked lease expires by itself after its TTL.
  etcd_.LeaseRevoke(lease_id).IgnoreError();
}

}  // namespace tollgate::ha
