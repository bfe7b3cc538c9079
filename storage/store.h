#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tollgate::storage {

// One committed batch as the change log keeps it: its revision and the opaque change records
// the writer attached (Tollgate stores serialized watch events there).
struct ChangeLogEntry {
  int64_t revision = 0;
  std::vector<std::string> records;
};

// Who a store is: `store_id` is generated once when the store is created and never changes;
// `epoch` starts at 1 and is bumped whenever the store's history is rewritten behind its
// revisions (a restore from backup, a start that accepted data loss). Revisions are comparable
// only between equal identities: a watcher resuming from a revision of another identity must
// re-list.
struct StoreIdentity {
  std::string store_id;
  int64_t epoch = 0;
  bool operator==(const StoreIdentity& other) const {
    return store_id == other.store_id && epoch == other.epoch;
  }
};

// 128 random bits as 32 lowercase hex digits, for StoreIdentity::store_id.
std::string NewStoreId();

// A set of writes applied atomically by Store::Commit.
class WriteBatch {
 public:
  void Put(absl::string_view key, absl::string_view value);
  void Delete(absl::string_view key);
  // Appends a record to this batch's change-log entry.
  void AppendChange(absl::string_view record);

  struct Op {
    bool is_delete = false;
    std::string key;
    std::string value;
  };
  const std::vector<Op>& ops() const { return ops_; }
  const std::vector<std::string>& changes() const { return changes_; }
  bool empty() const { return ops_.empty() && changes_.empty(); }

 private:
  std::vector<Op> ops_;
  std::vector<std::string> changes_;
};

// A point-in-time view of a store's state, read in pages: Watch sends its initial listing this
// way, so a slow client pins a snapshot rather than a copy of every workload. Thread-compatible.
class StoreSnapshot {
 public:
  virtual ~StoreSnapshot() = default;
  // The revision of the last batch the view includes.
  virtual int64_t revision() const = 0;
  // Visits, in key order, up to `limit` keys starting with `prefix` that sort after
  // `start_after` (empty: from the first). Returns how many were visited; fewer than `limit`
  // means the prefix is exhausted.
  virtual absl::StatusOr<int64_t> ScanPage(
      absl::string_view prefix, absl::string_view start_after, int64_t limit,
      const std::function<void(absl::string_view key, absl::string_view value)>& visit) const = 0;
};

// Ordered key-value state with a revisioned change log. The contract every implementation
// (RocksDB today, etcd later) keeps:
//  * Commit is atomic and durable when it returns OK (RocksDB: in the synced WAL); the batch
//    gets the next revision (previous + 1) and its change records are logged under it. Every
//    batch, even an empty one, takes a revision, so the change log has no gaps and a reader
//    can tell a missed entry from one that never existed.
//  * A Commit that fails has an unknown outcome: the batch may still be recovered after a
//    restart (the write can reach the log before the error is seen). Callers must not report
//    it as rejected. An implementation that cannot rule out a half-known write refuses further
//    writes until reopened rather than reuse the revision.
//  * Reads see every committed batch.
//  * After a crash, Open recovers exactly the committed batches: a prefix of the revisions,
//    including every batch whose Commit returned OK.
// Thread-safe.
class Store {
 public:
  virtual ~Store() = default;

  // Returns the revision given to the batch.
  absl::StatusOr<int64_t> Commit(const WriteBatch& batch) { return CommitSequence({&batch}); }
  // Commits several batches atomically and durably together (one fsync), as consecutive
  // revisions in the given order; returns the last one. A reader never sees some without the
  // others. INVALID_ARGUMENT for an empty list.
  virtual absl::StatusOr<int64_t> CommitSequence(const std::vector<const WriteBatch*>& batches) = 0;
  virtual absl::StatusOr<std::optional<std::string>> Get(absl::string_view key) const = 0;
  // Calls `visit` for every key starting with `prefix`, in key order, until it returns false.
  // The scan sees one consistent point in time (never half a batch), and `visit` may call back
  // into the store.
  virtual absl::Status Scan(
      absl::string_view prefix,
      const std::function<bool(absl::string_view key, absl::string_view value)>& visit) const = 0;
  // The revision of the last committed batch (0 for a new store).
  virtual int64_t CurrentRevision() const = 0;
  virtual StoreIdentity Identity() const = 0;
  // A consistent view of the state at the current revision; the store must outlive it.
  virtual absl::StatusOr<std::unique_ptr<StoreSnapshot>> TakeSnapshot() const = 0;
  // The highest revision whose change-log entry has been compacted away (0: none).
  virtual int64_t CompactedRevision() const = 0;
  // Change-log entries with revision > `after_revision`, oldest first, at most `limit`.
  // FAILED_PRECONDITION (OutOfRange-like "compacted") when `after_revision` is older than the
  // oldest kept entry minus one, i.e. some entry the caller asked for is gone; the message
  // names the oldest revision still available so a watcher knows to resync from a full read.
  // INVALID_ARGUMENT for a negative `after_revision` or a `limit` below 1.
  virtual absl::StatusOr<std::vector<ChangeLogEntry>> ReadChanges(int64_t after_revision,
                                                                  int64_t limit) const = 0;
  // Drops change-log entries with revision <= `revision`. Compacting to a revision at or below
  // an earlier compaction is a no-op; INVALID_ARGUMENT for a negative revision or one past
  // CurrentRevision (that would hide entries not yet written). State is never touched.
  virtual absl::Status CompactChanges(int64_t revision) = 0;
};

}  // namespace tollgate::storage
