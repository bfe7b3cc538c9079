#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "storage/acked_revision_file.h"
#include "storage/store.h"

// Forward declarations keep RocksDB's headers out of every file that holds a store.
namespace rocksdb {
class ColumnFamilyHandle;
class DB;
class WriteBatch;
}  // namespace rocksdb

namespace tollgate::storage {

// The on-disk layout (see storage/README.md). Public so that tools and tests can inspect or
// build a database directly; bump kRocksDbSchemaVersion whenever any of it changes meaning.
inline constexpr absl::string_view kRocksDbSchemaVersion = "2";
inline constexpr absl::string_view kChangesColumnFamily = "changes";
inline constexpr absl::string_view kMetaColumnFamily = "meta";
inline constexpr absl::string_view kMetaSchemaVersionKey = "schema_version";
inline constexpr absl::string_view kMetaRevisionKey = "revision";
inline constexpr absl::string_view kMetaCompactedRevisionKey = "compacted_revision";
// Since schema version 2 (version 1 stores are upgraded in place by Open).
inline constexpr absl::string_view kMetaStoreIdKey = "store_id";
inline constexpr absl::string_view kMetaEpochKey = "epoch";

struct RocksDbStoreOptions {
  // Sync the WAL before Commit returns. false breaks the durability contract (a machine crash
  // can lose acknowledged batches); it exists only so benchmarks can measure everything else.
  bool sync = true;
  // Bounds the write-ahead log an Open after a crash must replay: once the live WAL files
  // exceed this, RocksDB flushes the column families that keep the oldest one alive. Without
  // it the small meta column family, which never fills a memtable, pins every WAL file since
  // the last flush (350 MB after 1M submits). Flushing never drops data from the WAL before it
  // is in a table file, so durability is unchanged.
  uint64_t max_total_wal_bytes = 64 << 20;
  // Start even when recovery brought back fewer revisions than were acknowledged (see
  // RecoveryReport): the missing revisions are reported in recovery().lost_revisions and the
  // epoch is bumped so that watchers re-list. Without it Open fails with DATA_LOSS.
  bool accept_data_loss = false;
  // Called once, with the cause, when a write fails and the store starts refusing writes
  // (disk full, I/O error). The store stays readable; writes resume only after a reopen, which
  // decides from the WAL whether the failed write happened. Runs under the commit mutex: it
  // must be quick and must not call back into the store.
  std::function<void(const absl::Status& cause)> on_write_failure = nullptr;
};

// What Open found while recovering; tollgated logs it.
struct RecoveryReport {
  // The revision the store opened at.
  int64_t recovered_revision = 0;
  // The last revision acknowledged before, from the acked-revision file (nullopt: no record,
  // e.g. a store created by an older version; nothing could be checked).
  std::optional<int64_t> acknowledged_revision;
  // RocksDB's report of a damaged WAL (it names the file), from a first strict replay; empty
  // when every WAL replayed cleanly.
  std::string wal_error;
  // True when the damage was only a torn tail (no acknowledged revision was lost) and was
  // dropped.
  bool dropped_torn_tail = false;
  // Acknowledged revisions that are gone (accept_data_loss only): acknowledged - recovered.
  int64_t lost_revisions = 0;
  // The epoch was bumped by this Open (accept_data_loss took effect).
  bool epoch_bumped = false;
  // Where the damaged WAL files were copied before an accepted lossy recovery dropped their
  // records (empty when nothing was copied).
  std::string saved_wal_dir;
};

// A Store in a local RocksDB database. Every Commit is one RocksDB write batch covering the
// state ops, the change-log entry and the new revision, so the three can never disagree after
// a crash.
class RocksDbStore : public Store {
 public:
  // Opens the database at `path`, creating it if missing. Refuses (FAILED_PRECONDITION) a
  // database written with another schema version or not created by this class, and
  // (DATA_LOSS, naming the file and how to recover) one whose recovery lost acknowledged
  // revisions, unless options.accept_data_loss. A WAL whose only damage is a torn tail after
  // the last acknowledged revision opens normally (recovery() says so).
  static absl::StatusOr<std::unique_ptr<RocksDbStore>> Open(const std::string& path,
                                                            RocksDbStoreOptions options = {});

  RocksDbStore(const RocksDbStore&) = delete;
  RocksDbStore& operator=(const RocksDbStore&) = delete;
  ~RocksDbStore() override;

  absl::StatusOr<int64_t> CommitSequence(const std::vector<const WriteBatch*>& batches) override;
  absl::StatusOr<std::optional<std::string>> Get(absl::string_view key) const override;
  absl::Status Scan(absl::string_view prefix,
                    const std::function<bool(absl::string_view key, absl::string_view value)>&
                        visit) const override;
  int64_t CurrentRevision() const override;
  StoreIdentity Identity() const override;
  absl::StatusOr<std::unique_ptr<StoreSnapshot>> TakeSnapshot() const override;
  int64_t CompactedRevision() const override;
  absl::StatusOr<std::vector<ChangeLogEntry>> ReadChanges(int64_t after_revision,
                                                          int64_t limit) const override;
  absl::Status CompactChanges(int64_t revision) override;

  // RocksDB's own view of the database, summed over column families, for metrics.
  struct EngineStats {
    uint64_t sst_bytes = 0;
    uint64_t memtable_bytes = 0;
    uint64_t live_data_bytes = 0;
    // Cumulative write stalls since open: writes stopped, and slowed down.
    uint64_t stall_stops = 0;
    uint64_t stall_slowdowns = 0;
    bool write_stopped = false;
  };
  EngineStats engine_stats() const;
  const RecoveryReport& recovery() const { return recovery_; }

  // Writes a consistent copy of the store (a RocksDB checkpoint: hard links where possible)
  // into `dir`, which must not exist yet. Safe while the store serves. Returns the revision
  // the copy holds.
  absl::StatusOr<int64_t> Backup(const std::string& dir);
  // Makes `data_dir` (absent or empty) a copy of the backup in `backup_dir`, with the backup's
  // store id and its epoch bumped, so watchers of the old history re-list. Returns the
  // restored identity and revision.
  struct Restored {
    StoreIdentity identity;
    int64_t revision = 0;
  };
  static absl::StatusOr<Restored> Restore(const std::string& backup_dir,
                                          const std::string& data_dir);

 private:
  RocksDbStore(std::string path, RocksDbStoreOptions options, std::unique_ptr<rocksdb::DB> db,
               std::vector<rocksdb::ColumnFamilyHandle*> handles);

  // Flushes every memtable to table files, so the next Open has no WAL to replay.
  absl::Status FlushAll();
  // Reads and checks the meta column family; initializes it on a brand-new database and
  // upgrades a schema version 1 one.
  absl::Status LoadOrInitMeta();
  // Compares the recovered revision with the acked-revision file, fills recovery_, and takes
  // over the file for later commits.
  absl::Status CheckRecovery(std::optional<int64_t> acknowledged, std::string wal_error,
                             absl::string_view wal_files);
  // Persists epoch + 1 (synced).
  absl::Status BumpEpoch();
  // Applies `batch` synchronously (per options_); on failure marks the store unusable because
  // the write may still be recovered from the WAL later.
  absl::Status WriteLocked(rocksdb::WriteBatch* batch, absl::string_view operation)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string path_;
  const RocksDbStoreOptions options_;
  std::unique_ptr<rocksdb::DB> db_;
  // All handles in `handles_` (owned, destroyed before db_); the named ones point into it.
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;
  rocksdb::ColumnFamilyHandle* state_cf_ = nullptr;
  rocksdb::ColumnFamilyHandle* changes_cf_ = nullptr;
  rocksdb::ColumnFamilyHandle* meta_cf_ = nullptr;

  // Serializes writers: revision assignment and the write must happen in the same order.
  absl::Mutex mu_;
  // Written only under mu_ after the write is durable and visible; atomic so CurrentRevision
  // does not wait behind a Commit's fsync.
  std::atomic<int64_t> revision_{0};
  int64_t compacted_revision_ ABSL_GUARDED_BY(mu_) = 0;
  // Set after a failed write; every later write returns it until the store is reopened.
  absl::Status write_failure_ ABSL_GUARDED_BY(mu_);
  std::string store_id_;
  std::atomic<int64_t> epoch_{0};
  std::atomic<int64_t> compacted_snapshot_{0};
  RecoveryReport recovery_;
  // Absent with sync = false: without synced WAL writes there is nothing to vouch for.
  std::optional<AckedRevisionFile> acked_file_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tollgate::storage
