#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "storage/etcd_store.h"
#include "storage/store.h"

namespace tollgate::storage {

// A warm in-memory copy of an EtcdStore's state, kept by a replica that is not the leader
// (docs/ha.md, "Warm followers"): loaded once with one full read, then kept current by following
// etcd's Watch over the store's key prefix from the etcd revision of that read. A promoted
// replica loads its scheduling state from this copy instead of reading every key from etcd.
//
// What it holds is exactly the store's state at revision(): each etcd Txn's events arrive
// together and are applied together; a large commit (staged, then applied in several Txns, see
// storage/README.md) is held back until its last Txn removes the marker, so a reader never sees
// half of it. It falls back to a full read again when the Watch cannot resume (etcd compacted
// past it, or the store was restored: a new identity). The change log is not copied.
// Thread-safe.
class EtcdMirror {
 public:
  struct Options {
    // How long one Watch call waits for events before it is renewed (and the loop checks for
    // Stop).
    absl::Duration watch_timeout = absl::Seconds(1);
    // Pause after a failed Watch or load before the next try.
    absl::Duration retry_delay = absl::Milliseconds(200);
    // How often the copy asks etcd (a quorum read of the store's revision) whether anything
    // newer than it was committed, and how long since the last such confirmation the copy is
    // said to be possibly stale (freshness()).
    absl::Duration confirm_interval = absl::Milliseconds(500);
    absl::Duration stale_after = absl::Seconds(3);
  };

  // Loads the state with one full read of `store` (blocking), then follows on a thread of its
  // own. `store` is only read from.
  static absl::StatusOr<std::unique_ptr<EtcdMirror>> Start(std::unique_ptr<EtcdStore> store,
                                                           Options options);
  static absl::StatusOr<std::unique_ptr<EtcdMirror>> Start(std::unique_ptr<EtcdStore> store) {
    return Start(std::move(store), Options());
  }
  ~EtcdMirror();
  EtcdMirror(const EtcdMirror&) = delete;
  EtcdMirror& operator=(const EtcdMirror&) = delete;

  // Stops following at once: nothing more is applied, what was stays readable (a promotion
  // loads from it, frozen). The thread ends by the destructor.
  void Stop();

  // The Tollgate revision the copy holds.
  int64_t revision() const;
  StoreIdentity identity() const;
  // Blocks until revision() >= `revision` or `deadline`; DEADLINE_EXCEEDED (naming both
  // revisions) when it did not get there.
  absl::Status WaitForRevision(int64_t revision, absl::Time deadline) const;

  // The state as of revision(), like Store::Get and Store::Scan (`visit` must not call back
  // into the mirror).
  std::optional<std::string> Get(absl::string_view key) const;
  void Scan(absl::string_view prefix,
            const std::function<bool(absl::string_view key, absl::string_view value)>& visit) const;

  // The copy at one revision, immutable. The values are shared with the live copy, so freezing
  // costs one map node per key, not a copy of the records.
  struct Frozen {
    int64_t revision = 0;
    StoreIdentity identity;
    std::map<std::string, std::shared_ptr<const std::string>, std::less<>> data;
  };
  std::shared_ptr<const Frozen> Freeze() const;

  // Whether the copy is known to be current: a quorum read of etcd, at most
  // Options::stale_after ago, found no revision newer than what the copy holds now. Otherwise
  // (the Watch or etcd's quorum is lost, etcd unreachable) `reason` says why it may be stale.
  struct Freshness {
    bool current = false;
    // When the copy was last confirmed current (InfinitePast: never).
    absl::Time confirmed_at = absl::InfinitePast();
    std::string reason;
  };
  Freshness freshness() const;

  struct Stats {
    int64_t revision = 0;
    int64_t keys = 0;
    // Whether the Watch is running (false while etcd cannot be reached or a reload fails).
    bool following = false;
    // Full reads done (1 after Start).
    int64_t loads = 0;
    std::string last_error;
    // The last full read: its wall time.
    absl::Duration last_load;
  };
  Stats stats() const;

  // The store the copy reads from (unfenced; a follower only reads it).
  const EtcdStore& store() const { return *store_; }

 private:
  explicit EtcdMirror(std::unique_ptr<EtcdStore> store, Options options)
      : store_(std::move(store)), options_(options) {}

  // A full read, replacing the copy.
  absl::Status Load();
  void Follow();
  // Applies one Watch response's events (whole etcd revisions, in order).
  void Apply(const std::vector<mvccpb::Event>& events);
  // Asks etcd for the store's revision (a quorum read) and records the confirmation.
  void Confirm();
  // A confirmation waiting for the copy to reach its revision takes effect.
  void NoteConfirmedLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::unique_ptr<EtcdStore> store_;
  const Options options_;
  std::thread thread_;

  mutable absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::map<std::string, std::shared_ptr<const std::string>, std::less<>> data_ ABSL_GUARDED_BY(mu_);
  StoreIdentity identity_ ABSL_GUARDED_BY(mu_);
  int64_t revision_ ABSL_GUARDED_BY(mu_) = 0;
  // The etcd revision the copy has seen everything up to (the Watch resumes after it).
  int64_t etcd_revision_ ABSL_GUARDED_BY(mu_) = 0;
  // A large commit's marker is present: data writes wait in `held_` until it is removed.
  bool staged_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::pair<std::string, std::shared_ptr<const std::string>>> held_
      ABSL_GUARDED_BY(mu_);
  // The revision key's latest value, applied with the held writes.
  int64_t held_revision_ ABSL_GUARDED_BY(mu_) = 0;
  bool needs_load_ ABSL_GUARDED_BY(mu_) = false;
  bool following_ ABSL_GUARDED_BY(mu_) = false;
  int64_t loads_ ABSL_GUARDED_BY(mu_) = 0;
  std::string last_error_ ABSL_GUARDED_BY(mu_);
  absl::Duration last_load_ ABSL_GUARDED_BY(mu_);
  // Freshness: the last confirmation that took effect, one waiting for the copy to reach
  // `pending_revision_`, and why the last attempt failed (empty: it did not).
  absl::Time confirmed_at_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  bool pending_ ABSL_GUARDED_BY(mu_) = false;
  int64_t pending_revision_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Time pending_at_ ABSL_GUARDED_BY(mu_);
  std::string confirm_error_ ABSL_GUARDED_BY(mu_);
  // Only the following thread touches it.
  absl::Time next_confirm_ = absl::InfinitePast();
};

}  // namespace tollgate::storage
