#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "storage/etcd_client.h"
#include "storage/store.h"

namespace tollgate::storage {

struct EtcdStoreOptions {
  EtcdConnectionOptions connection;
  // Every key the store writes lives under this prefix, so several stores (or tests) can share
  // one etcd. Must not be empty.
  std::string key_prefix = "/tollgate/";
  // etcd's limits (its --max-txn-ops and --max-request-bytes, defaults 128 and 1.5 MiB). A commit
  // that does not fit in one Txn is staged and applied in several (see README.md), still atomic
  // for every reader.
  int max_txn_ops = 128;
  int64_t max_request_bytes = 1536 * 1024;
  // Compact etcd's own MVCC history with the change log, so etcd's database does not grow with
  // every revision ever written. Snapshots held by this process are never compacted under.
  bool compact_etcd_history = true;
  // How long a commit keeps trying while etcd is unavailable (an election, a member lost) before
  // it fails with UNAVAILABLE. Each try whose outcome is unknown is fenced off before the next.
  absl::Duration commit_timeout = absl::Seconds(10);
  // Tests only: stop a large commit at its commit point, leaving it staged (readers must still
  // see all of it, and the next write finishes applying it).
  bool testing_skip_roll_forward = false;
};

// Leadership a write is conditional on: the key (held under the leader's lease) and the
// create_revision it had when this process won. Once the key is gone or recreated by another
// process, every write of this store fails with FAILED_PRECONDITION "not leader" and nothing of
// it applies.
struct EtcdFence {
  std::string key;
  int64_t create_revision = 0;
};

// Whether `status` is the refusal of a write whose fence no longer holds (a deposed leader).
bool IsNotLeaderError(const absl::Status& status);

// A Store kept in etcd (v3 API), so several tollgated processes share one durable state and
// follow each other's commits. Tollgate's revisions stay its own: previous + 1 per batch, no
// gaps, counted in a revision key that every commit updates in the same etcd Txn as its state
// and change-log entry, conditional on that key's mod_revision (one writer at a time). Key
// layout, the large-commit protocol and what followers may rely on: storage/README.md.
// Thread-safe.
class EtcdStore : public Store {
 public:
  // Connects, and creates the store's identity and revision keys when the prefix is empty.
  // Writes nothing else: a follower may open the store a leader writes.
  static absl::StatusOr<std::unique_ptr<EtcdStore>> Open(const EtcdStoreOptions& options);
  ~EtcdStore() override;
  EtcdStore(const EtcdStore&) = delete;
  EtcdStore& operator=(const EtcdStore&) = delete;

  absl::StatusOr<int64_t> CommitSequence(const std::vector<const WriteBatch*>& batches) override;
  absl::StatusOr<std::optional<std::string>> Get(absl::string_view key) const override;
  absl::Status Scan(absl::string_view prefix,
                    const std::function<bool(absl::string_view key, absl::string_view value)>&
                        visit) const override;
  // The last revision this process committed or read from etcd; FetchRevision asks etcd.
  int64_t CurrentRevision() const override { return revision_.load(); }
  StoreIdentity Identity() const override { return identity_; }
  absl::StatusOr<std::unique_ptr<StoreSnapshot>> TakeSnapshot() const override;
  int64_t CompactedRevision() const override { return compacted_.load(); }
  absl::StatusOr<std::vector<ChangeLogEntry>> ReadChanges(int64_t after_revision,
                                                          int64_t limit) const override;
  absl::Status CompactChanges(int64_t revision) override;

  // --- For HA (leader election and followers) ---

  // Makes every later write conditional on `fence` (nullopt: unconditional again).
  void SetFence(std::optional<EtcdFence> fence);
  // The committed revision as etcd has it now (a linearizable read); updates CurrentRevision.
  absl::StatusOr<int64_t> FetchRevision() const;
  // Blocks until a commit past `after_revision` exists (possibly made by another process) or
  // `timeout` passes; returns the committed revision then (DEADLINE_EXCEEDED when none came).
  // Followers call it, then ReadChanges(after_revision, ...), in a loop.
  absl::StatusOr<int64_t> WaitForCommit(int64_t after_revision, absl::Duration timeout) const;
  // Where a full read (ReadAll) stood: the etcd revision it read at, the Tollgate revision and
  // change-log compaction point there, and whether a large commit was still being applied then
  // (its content is laid over the keys read, as for any read).
  struct ReadAllPoint {
    int64_t etcd_revision = 0;
    int64_t revision = 0;
    int64_t compacted = 0;
    bool staged = false;
  };
  // Visits every state key and value, in key order, at one etcd revision, and returns that
  // point: a warm follower (storage/etcd_mirror.h) loads this once and then follows etcd's Watch
  // from point.etcd_revision + 1.
  absl::StatusOr<ReadAllPoint> ReadAll(
      const std::function<void(absl::string_view key, absl::string_view value)>& visit) const;
  // The connection, for leader election on the same etcd (leases, the leadership key).
  EtcdClient& client() const { return *client_; }
  const std::string& key_prefix() const { return options_.key_prefix; }

 private:
  class Snapshot;
  struct Staged;  // A large commit's content, decoded (see README.md).

  EtcdStore(EtcdStoreOptions options, std::unique_ptr<EtcdClient> client)
      : options_(std::move(options)), client_(std::move(client)) {}

  // What a read sees at one etcd revision: the Tollgate revision, and the staged commit not
  // yet fully applied at that point, if any.
  struct ReadPoint {
    int64_t etcd_revision = 0;
    int64_t revision = 0;
    // The etcd mod_revision of the revision key, and of the staged-commit marker (0: none).
    int64_t revision_mod = 0;
    int64_t marker_mod = 0;
    int64_t compacted = 0;
    // Leftover chunks of a large commit that never reached its commit point.
    bool stray_chunks = false;
    std::shared_ptr<const Staged> staged;
  };
  // Reads the meta keys (and `extra` ops' results, in `extra_out`) at one etcd revision.
  absl::StatusOr<ReadPoint> ReadMeta(const std::vector<etcdserverpb::RequestOp>& extra,
                                     std::vector<etcdserverpb::ResponseOp>* extra_out) const;
  absl::StatusOr<std::shared_ptr<const Staged>> LoadStaged(int64_t etcd_revision,
                                                           absl::string_view marker) const;
  absl::StatusOr<int64_t> ScanAt(
      const ReadPoint& point, absl::string_view prefix, absl::string_view start_after,
      int64_t limit,
      const std::function<bool(absl::string_view key, absl::string_view value)>& visit) const;
  void Pin(int64_t etcd_revision) const;
  void Unpin(int64_t etcd_revision) const;

  // Writer side, under mu_.
  absl::Status SyncLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status RollForwardLocked(const Staged& staged, int64_t marker_mod)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void AddGuardsLocked(etcdserverpb::TxnRequest& txn, bool expect_no_marker)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status ExplainFailureLocked(const etcdserverpb::TxnResponse& response,
                                    absl::string_view what) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // One attempt; `*unknown` tells a failure with an unknown outcome (the call failed) from one
  // where nothing was written.
  absl::StatusOr<int64_t> CommitOnceLocked(const std::vector<const WriteBatch*>& batches,
                                           bool* unknown) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<etcdserverpb::TxnResponse> WriteTxnLocked(etcdserverpb::TxnRequest& txn,
                                                           absl::string_view what, bool* unknown)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void NoteRevision(int64_t revision) const;

  std::string Key(absl::string_view suffix) const;

  const EtcdStoreOptions options_;
  const std::unique_ptr<EtcdClient> client_;
  StoreIdentity identity_;
  mutable std::atomic<int64_t> revision_ = 0;
  mutable std::atomic<int64_t> compacted_ = 0;

  absl::Mutex mu_;
  // The revision this writer last committed or synced (CurrentRevision may be newer: reads of
  // another writer's commits move it).
  int64_t written_revision_ ABSL_GUARDED_BY(mu_) = 0;
  // The etcd mod_revision of the revision key as this writer last wrote or read it: every write
  // is conditional on it, so two writers can never both take a revision.
  int64_t revision_mod_ ABSL_GUARDED_BY(mu_) = 0;
  // Set when a write's outcome is unknown (the call failed) or another writer moved the store:
  // the next write first re-reads (and fences off) what etcd has.
  bool needs_sync_ ABSL_GUARDED_BY(mu_) = true;
  // A write call failed: before anything else, fence it off by moving the revision key.
  bool outcome_unknown_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<EtcdFence> fence_ ABSL_GUARDED_BY(mu_);

  // etcd revisions snapshots of this process read at (compaction stays below them).
  mutable absl::Mutex pins_mu_;
  mutable std::multiset<int64_t> pins_ ABSL_GUARDED_BY(pins_mu_);
};

}  // namespace tollgate::storage
