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
inline constexpr absl::string_view kRocksDbSchemaVersion = "1";
inline constexpr absl::string_view kChangesColumnFamily = "changes";
inline constexpr absl::string_view kMetaColumnFamily = "meta";
inline constexpr absl::string_view kMetaSchemaVersionKey = "schema_version";
inline constexpr absl::string_view kMetaRevisionKey = "revision";
inline constexpr absl::string_view kMetaCompactedRevisionKey = "compacted_revision";

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
};

// A Store in a local RocksDB database. Every Commit is one RocksDB write batch covering the
// state ops, the change-log entry and the new revision, so the three can never disagree after
// a crash.
class RocksDbStore : public Store {
 public:
  // Opens the database at `path`, creating it if missing. Refuses (FAILED_PRECONDITION) a
  // database written with another schema version or not created by this class.
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

 private:
  RocksDbStore(std::string path, RocksDbStoreOptions options, std::unique_ptr<rocksdb::DB> db,
               std::vector<rocksdb::ColumnFamilyHandle*> handles);

  // Flushes every memtable to table files, so the next Open has no WAL to replay.
  absl::Status FlushAll();
  // Reads and checks the meta column family; initializes it on a brand-new database.
  absl::Status LoadOrInitMeta();
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
};

}  // namespace tollgate::storage
