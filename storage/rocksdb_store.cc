#include "storage/rocksdb_store.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <limits>
#include <map>
#include <string>
#include <system_error>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "rocksdb/db.h"
#include "rocksdb/options.h"
#include "rocksdb/snapshot.h"
#include "rocksdb/utilities/checkpoint.h"
#include "rocksdb/write_batch.h"
#include "storage/record_encoding.h"

// Local: storage must not depend on core/status_macros.h.
#define TOLLGATE_STORE_RETURN_IF_ERROR(expr)    \
  do {                                          \
    if (absl::Status _st = (expr); !_st.ok()) { \
      return _st;                               \
    }                                           \
  } while (0)

namespace tollgate::storage {
namespace {

rocksdb::Slice ToSlice(absl::string_view s) { return rocksdb::Slice(s.data(), s.size()); }
absl::string_view ToView(const rocksdb::Slice& s) { return absl::string_view(s.data(), s.size()); }

absl::StatusCode ToAbslCode(const rocksdb::Status& s) {
  switch (s.code()) {
    case rocksdb::Status::kOk:
      return absl::StatusCode::kOk;
    case rocksdb::Status::kNotFound:
      return absl::StatusCode::kNotFound;
    case rocksdb::Status::kCorruption:
      return absl::StatusCode::kDataLoss;
    case rocksdb::Status::kNotSupported:
      return absl::StatusCode::kUnimplemented;
    case rocksdb::Status::kInvalidArgument:
      return absl::StatusCode::kInvalidArgument;
    case rocksdb::Status::kIOError:
      return s.IsNoSpace() ? absl::StatusCode::kResourceExhausted : absl::StatusCode::kInternal;
    case rocksdb::Status::kIncomplete:
    case rocksdb::Status::kShutdownInProgress:
    case rocksdb::Status::kBusy:
    case rocksdb::Status::kTryAgain:
      return absl::StatusCode::kUnavailable;
    case rocksdb::Status::kTimedOut:
    case rocksdb::Status::kExpired:
      return absl::StatusCode::kDeadlineExceeded;
    case rocksdb::Status::kAborted:
      return absl::StatusCode::kAborted;
    case rocksdb::Status::kCompactionTooLarge:
      return absl::StatusCode::kResourceExhausted;
    case rocksdb::Status::kColumnFamilyDropped:
      return absl::StatusCode::kFailedPrecondition;
    default:
      return absl::StatusCode::kInternal;
  }
}

// Prefixes the RocksDB message with what we were doing and where, since a bare "IO error"
// from a process holding several stores is not actionable.
absl::Status FromRocksDb(const rocksdb::Status& s, absl::string_view operation,
                         absl::string_view path) {
  if (s.ok()) return absl::OkStatus();
  return absl::Status(ToAbslCode(s),
                      absl::StrCat("RocksDB ", operation, " on ", path, ": ", s.ToString()));
}

// Big-endian so that RocksDB's bytewise key order is revision order.
std::string EncodeRevision(int64_t revision) {
  std::string out(8, '\0');
  auto v = static_cast<uint64_t>(revision);
  for (int i = 7; i >= 0; --i) {
    out[i] = static_cast<char>(v & 0xff);
    v >>= 8;
  }
  return out;
}

absl::StatusOr<int64_t> DecodeRevision(absl::string_view in, absl::string_view what,
                                       absl::string_view path) {
  if (in.size() != 8) {
    return absl::DataLossError(
        absl::StrCat("RocksDB store at ", path, ": ", what, " is ", in.size(), " bytes, want 8"));
  }
  uint64_t v = 0;
  for (char c : in) v = (v << 8) | static_cast<uint8_t>(c);
  if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return absl::DataLossError(
        absl::StrCat("RocksDB store at ", path, ": ", what, " is out of range: ", v));
  }
  return static_cast<int64_t>(v);
}

absl::StatusOr<std::vector<std::string>> DecodeRecordsAt(absl::string_view in, int64_t revision,
                                                         absl::string_view path) {
  std::vector<std::string> records;
  if (!DecodeRecords(in, records)) {
    return absl::DataLossError(absl::StrCat("RocksDB store at ", path,
                                            ": change-log entry for revision ", revision,
                                            " is truncated after ", records.size(), " records"));
  }
  return records;
}
// The smallest key greater than every key starting with `prefix`, or nullopt if there is none
// (empty or all-0xff prefix).
std::optional<std::string> PrefixSuccessor(absl::string_view prefix) {
  std::string out(prefix);
  while (!out.empty() && static_cast<uint8_t>(out.back()) == 0xff) out.pop_back();
  if (out.empty()) return std::nullopt;
  out.back() = static_cast<char>(static_cast<uint8_t>(out.back()) + 1);
  return out;
}

absl::StatusOr<int64_t> ReadMetaRevision(rocksdb::DB* db, const rocksdb::ReadOptions& options,
                                         rocksdb::ColumnFamilyHandle* meta_cf,
                                         absl::string_view key, absl::string_view path) {
  std::string value;
  rocksdb::Status s = db->Get(options, meta_cf, ToSlice(key), &value);
  if (s.IsNotFound()) {
    return absl::DataLossError(
        absl::StrCat("RocksDB store at ", path, ": meta key ", key, " is missing"));
  }
  if (!s.ok()) return FromRocksDb(s, absl::StrCat("read meta ", key), path);
  return DecodeRevision(value, absl::StrCat("meta ", key), path);
}

absl::StatusOr<bool> IsEmpty(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf,
                             absl::string_view path) {
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions(), cf));
  it->SeekToFirst();
  if (!it->status().ok()) {
    return FromRocksDb(it->status(), absl::StrCat("scan ", cf->GetName()), path);
  }
  return !it->Valid();
}

// RocksDB's informational LOG, written with plain stdio. RocksDB 7.8's own file logger asserts
// (aborting the process in builds that keep assertions, as Debian's does) when it logs again
// after a failed write, which is exactly what a full disk does; this one just loses the line.
class TolerantLogger final : public rocksdb::Logger {
 public:
  explicit TolerantLogger(const std::string& path)
      : rocksdb::Logger(rocksdb::InfoLogLevel::INFO_LEVEL), file_(std::fopen(path.c_str(), "ae")) {}
  ~TolerantLogger() override {
    if (file_ != nullptr) std::fclose(file_);
  }
  using rocksdb::Logger::Logv;
  void Logv(const char* format, va_list ap) override {
    if (file_ == nullptr) return;
    std::fputs(absl::FormatTime("%Y/%m/%d-%H:%M:%E6S ", absl::Now(), absl::UTCTimeZone()).c_str(),
               file_);
    std::vfprintf(file_, format, ap);
    std::fputc('\n', file_);
    std::fflush(file_);
  }

 private:
  std::FILE* file_;
};

// "000012.log (40213 bytes), 000015.log (88 bytes)": the WAL files in `dir`, for messages that
// must say which file to look at.
std::string DescribeWalFiles(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (!absl::EndsWith(name, ".log")) continue;
    std::error_code size_ec;
    const uintmax_t size = entry.file_size(size_ec);
    files.push_back(size_ec ? name : absl::StrCat(name, " (", size, " bytes)"));
  }
  std::sort(files.begin(), files.end());
  return files.empty() ? "none" : absl::StrJoin(files, ", ");
}

std::string RecoveryHint(absl::string_view path) {
  return absl::StrCat(
      "To recover: restore a backup (tollgated restore --from=BACKUP_DIR --data-dir=", path,
      " into an empty data dir), or start tollgated with --accept-data-loss to serve what was "
      "recovered (the missing revisions are gone for good; watchers are told to re-list)");
}

// Why recovering `recovered` loses acknowledged data, or nullopt when it does not.
std::optional<std::string> LossMessage(absl::string_view path, int64_t recovered,
                                       std::optional<int64_t> acknowledged,
                                       absl::string_view wal_error, absl::string_view wal_files) {
  if (acknowledged.has_value() && recovered < *acknowledged) {
    return absl::StrCat(
        "RocksDB store at ", path, " recovered revision ", recovered, " but revisions up to ",
        *acknowledged, " were acknowledged: ", *acknowledged - recovered,
        " acknowledged revisions are missing. ",
        wal_error.empty()
            ? absl::StrCat("RocksDB replayed every WAL record it found, so a WAL file was "
                           "deleted or truncated at a record boundary (WAL files present: ",
                           wal_files, ")")
            : absl::StrCat("RocksDB found a damaged WAL: ", wal_error),
        ". ");
  }
  if (!wal_error.empty() && !acknowledged.has_value() && recovered > 0) {
    return absl::StrCat("RocksDB store at ", path, " has a damaged WAL (", wal_error, ") and no ",
                        AckedRevisionFile::kFileName,
                        " record to prove that only an unacknowledged tail was lost. ");
  }
  return std::nullopt;
}

// The revision point-in-time recovery would keep, found by a read-only replay that changes
// nothing on disk: a refused start must leave the damaged WAL where it is.
absl::StatusOr<int64_t> PreviewRecovery(
    const rocksdb::DBOptions& options, const std::string& path,
    const std::vector<rocksdb::ColumnFamilyDescriptor>& descriptors) {
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::OpenForReadOnly(options, path, descriptors, &handles, &raw);
  if (!s.ok()) return FromRocksDb(s, "read-only point-in-time recovery", path);
  std::unique_ptr<rocksdb::DB> db(raw);
  absl::StatusOr<int64_t> revision =
      ReadMetaRevision(db.get(), rocksdb::ReadOptions(), handles[2], kMetaRevisionKey, path);
  if (revision.status().code() == absl::StatusCode::kDataLoss &&
      absl::StrContains(revision.status().message(), "is missing")) {
    revision = 0;  // Nothing survived, not even the initialization.
  }
  for (rocksdb::ColumnFamilyHandle* handle : handles) {
    db->DestroyColumnFamilyHandle(handle).PermitUncheckedError();
  }
  db->Close().PermitUncheckedError();
  return revision;
}

// Copies the WAL files into a new directory under `path` before an accepted lossy recovery
// deletes them, so the records after the damage can still be examined. Returns its path.
absl::StatusOr<std::string> SaveWalFiles(const std::string& path) {
  namespace fs = std::filesystem;
  const std::string dir = absl::StrCat(path, "/lost-wal-", ::time(nullptr));
  std::error_code ec;
  fs::create_directories(dir, ec);
  for (const auto& entry : fs::directory_iterator(path, ec)) {
    if (entry.path().extension() != ".log") continue;
    fs::copy_file(entry.path(), fs::path(dir) / entry.path().filename(), ec);
    if (ec) break;
  }
  if (ec) return absl::InternalError(absl::StrCat("save WAL files into ", dir, ": ", ec.message()));
  return dir;
}

}  // namespace

absl::StatusOr<std::unique_ptr<RocksDbStore>> RocksDbStore::Open(const std::string& path,
                                                                 RocksDbStoreOptions options) {
  rocksdb::DBOptions db_options;
  db_options.create_if_missing = true;
  db_options.create_missing_column_families = true;
  // A synced WAL can only lose a torn tail: the batch in flight at a crash, never acknowledged.
  // The first replay therefore tolerates nothing, so that any damage is seen and named (RocksDB's
  // message names the WAL file); only then is it replayed again with point-in-time recovery,
  // which keeps the prefix before the damage, and CheckRecovery decides from the
  // acked-revision file whether that prefix holds every acknowledged revision.
  db_options.wal_recovery_mode = rocksdb::WALRecoveryMode::kAbsoluteConsistency;
  db_options.max_total_wal_size = options.max_total_wal_bytes;
  // No in-process resume after an I/O error: the store refuses writes until reopened anyway
  // (see WriteLocked), and RocksDB 7.8's resume writes to a WAL that already failed, which
  // trips an assertion in builds that keep them (Debian's does).
  db_options.max_bgerror_resume_count = 0;
  {
    std::error_code ignored;  // If this fails, DB::Open reports the path's problem.
    std::filesystem::create_directories(path, ignored);
    db_options.info_log = std::make_shared<TolerantLogger>(path + "/LOG");
  }

  // RocksDB refuses to open a database without naming all of its column families; listing
  // them first turns that into an error that says which one is unexpected. Listing fails on a
  // database that does not exist yet, which Open below then creates.
  const std::string changes_name(kChangesColumnFamily);
  const std::string meta_name(kMetaColumnFamily);
  std::vector<std::string> existing;
  if (rocksdb::DB::ListColumnFamilies(db_options, path, &existing).ok()) {
    for (const std::string& name : existing) {
      if (name != rocksdb::kDefaultColumnFamilyName && name != changes_name && name != meta_name) {
        return absl::FailedPreconditionError(
            absl::StrCat("RocksDB database at ", path, " has unexpected column family \"", name,
                         "\"; it was not written by Tollgate's RocksDbStore"));
      }
    }
  }

  const std::vector<rocksdb::ColumnFamilyDescriptor> descriptors = {
      {rocksdb::kDefaultColumnFamilyName, rocksdb::ColumnFamilyOptions()},
      {changes_name, rocksdb::ColumnFamilyOptions()},
      {meta_name, rocksdb::ColumnFamilyOptions()},
  };
  // Read before RocksDB replays (and then deletes) the WAL, so messages can name what was there.
  absl::StatusOr<std::optional<int64_t>> acknowledged = AckedRevisionFile::Read(path);
  if (!acknowledged.ok()) return acknowledged.status();
  const std::string wal_files = DescribeWalFiles(path);

  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw_db = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(db_options, path, descriptors, &handles, &raw_db);
  std::string wal_error;
  std::string saved_wal_dir;
  if (s.IsCorruption()) {
    // Nothing was applied by the failed replay (its edits are written only at the end).
    // RocksDB's message does not name the file, so the listing goes with it.
    wal_error = absl::StrCat(s.ToString(), " (WAL files present: ", wal_files, ")");
    handles.clear();
    raw_db = nullptr;
    db_options.wal_recovery_mode = rocksdb::WALRecoveryMode::kPointInTimeRecovery;
    absl::StatusOr<int64_t> keeps = PreviewRecovery(db_options, path, descriptors);
    if (!keeps.ok()) {
      return absl::DataLossError(
          absl::StrCat(keeps.status().message(), "; after: ", wal_error, ". ", RecoveryHint(path)));
    }
    if (std::optional<std::string> loss =
            LossMessage(path, *keeps, *acknowledged, wal_error, wal_files);
        loss.has_value() && options.sync) {
      if (!options.accept_data_loss) {
        return absl::DataLossError(absl::StrCat(*loss, RecoveryHint(path)));
      }
      absl::StatusOr<std::string> saved = SaveWalFiles(path);
      if (!saved.ok()) return saved.status();
      saved_wal_dir = *saved;
    }
    s = rocksdb::DB::Open(db_options, path, descriptors, &handles, &raw_db);
  }
  if (!s.ok()) {
    absl::Status status = FromRocksDb(s, "open", path);
    if (!absl::IsDataLoss(status)) return status;
    return absl::DataLossError(absl::StrCat(status.message(), ". ", RecoveryHint(path)));
  }

  std::unique_ptr<RocksDbStore> store(
      new RocksDbStore(path, options, std::unique_ptr<rocksdb::DB>(raw_db), std::move(handles)));
  store->recovery_.saved_wal_dir = saved_wal_dir;
  if (absl::Status meta = store->LoadOrInitMeta(); !meta.ok()) return meta;
  if (absl::Status checked = store->CheckRecovery(*acknowledged, std::move(wal_error), wal_files);
      !checked.ok()) {
    return checked;
  }
  return store;
}

RocksDbStore::RocksDbStore(std::string path, RocksDbStoreOptions options,
                           std::unique_ptr<rocksdb::DB> db,
                           std::vector<rocksdb::ColumnFamilyHandle*> handles)
    : path_(std::move(path)), options_(options), db_(std::move(db)), handles_(std::move(handles)) {
  // DB::Open returns handles in descriptor order.
  state_cf_ = handles_[0];
  changes_cf_ = handles_[1];
  meta_cf_ = handles_[2];
}

RocksDbStore::~RocksDbStore() {
  // Nothing can be reported from here; with sync=true every acknowledged batch is already
  // durable, and with sync=false this is a best effort to keep a clean shutdown lossless.
  if (!options_.sync) db_->SyncWAL().PermitUncheckedError();
  // A clean shutdown leaves nothing to replay, so the next Open does not spend seconds
  // re-inserting the WAL into memtables (and flushing them again). If the flush fails the WAL
  // is still there and Open replays it.
  FlushAll().IgnoreError();
  for (rocksdb::ColumnFamilyHandle* handle : handles_) {
    db_->DestroyColumnFamilyHandle(handle).PermitUncheckedError();
  }
  db_->Close().PermitUncheckedError();
}

absl::Status RocksDbStore::FlushAll() {
  rocksdb::FlushOptions flush_options;
  flush_options.wait = true;
  return FromRocksDb(db_->Flush(flush_options, handles_), "flush", path_);
}

absl::Status RocksDbStore::LoadOrInitMeta() {
  std::string version;
  rocksdb::Status s =
      db_->Get(rocksdb::ReadOptions(), meta_cf_, ToSlice(kMetaSchemaVersionKey), &version);
  if (s.IsNotFound()) {
    // Only a database with nothing in it is new; anything else lost its meta or belongs to
    // some other program, and guessing its revision would corrupt the change log.
    for (rocksdb::ColumnFamilyHandle* cf : handles_) {
      absl::StatusOr<bool> empty = IsEmpty(db_.get(), cf, path_);
      if (!empty.ok()) return empty.status();
      if (!*empty) {
        return absl::FailedPreconditionError(absl::StrCat(
            "RocksDB database at ", path_, " has data in column family \"", cf->GetName(),
            "\" but no schema_version; it was not written by ", "Tollgate's RocksDbStore"));
      }
    }
    rocksdb::WriteBatch init;
    const std::string zero = EncodeRevision(0);
    const std::string store_id = NewStoreId();
    for (const rocksdb::Status& put :
         {init.Put(meta_cf_, ToSlice(kMetaSchemaVersionKey), ToSlice(kRocksDbSchemaVersion)),
          init.Put(meta_cf_, ToSlice(kMetaRevisionKey), zero),
          init.Put(meta_cf_, ToSlice(kMetaCompactedRevisionKey), zero),
          init.Put(meta_cf_, ToSlice(kMetaStoreIdKey), store_id),
          init.Put(meta_cf_, ToSlice(kMetaEpochKey), EncodeRevision(1))}) {
      if (!put.ok()) return FromRocksDb(put, "build init batch", path_);
    }
    rocksdb::WriteOptions write_options;
    write_options.sync = true;
    TOLLGATE_STORE_RETURN_IF_ERROR(
        FromRocksDb(db_->Write(write_options, &init), "initialize meta", path_));
    store_id_ = store_id;
    epoch_.store(1);
    return absl::OkStatus();
  }
  if (!s.ok()) return FromRocksDb(s, "read schema_version", path_);
  if (version == "1") {
    // Version 2 only added the store identity: give the store one now.
    rocksdb::WriteBatch upgrade;
    for (const rocksdb::Status& put :
         {upgrade.Put(meta_cf_, ToSlice(kMetaStoreIdKey), NewStoreId()),
          upgrade.Put(meta_cf_, ToSlice(kMetaEpochKey), EncodeRevision(1)),
          upgrade.Put(meta_cf_, ToSlice(kMetaSchemaVersionKey), ToSlice(kRocksDbSchemaVersion))}) {
      if (!put.ok()) return FromRocksDb(put, "build upgrade batch", path_);
    }
    rocksdb::WriteOptions write_options;
    write_options.sync = true;
    TOLLGATE_STORE_RETURN_IF_ERROR(
        FromRocksDb(db_->Write(write_options, &upgrade), "upgrade schema version 1 to 2", path_));
    version = std::string(kRocksDbSchemaVersion);
  }
  if (version != kRocksDbSchemaVersion) {
    return absl::FailedPreconditionError(
        absl::StrCat("RocksDB store at ", path_, " has schema version \"", version,
                     "\" but this build supports only schema version \"", kRocksDbSchemaVersion,
                     "\"; migrate the data or use a new path"));
  }

  const rocksdb::ReadOptions read_options;
  absl::StatusOr<int64_t> revision =
      ReadMetaRevision(db_.get(), read_options, meta_cf_, kMetaRevisionKey, path_);
  if (!revision.ok()) return revision.status();
  absl::StatusOr<int64_t> compacted =
      ReadMetaRevision(db_.get(), read_options, meta_cf_, kMetaCompactedRevisionKey, path_);
  if (!compacted.ok()) return compacted.status();

  // Commit writes the log entry and the revision in one batch, so the log must end exactly at
  // the revision (or be empty when everything was compacted). Anything else means the files
  // were tampered with or RocksDB lost data, and serving watchers from it would be wrong.
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(read_options, changes_cf_));
  it->SeekToLast();
  if (!it->status().ok()) return FromRocksDb(it->status(), "read change-log tail", path_);
  int64_t last_logged = *compacted;
  if (it->Valid()) {
    absl::StatusOr<int64_t> last = DecodeRevision(ToView(it->key()), "change-log key", path_);
    if (!last.ok()) return last.status();
    last_logged = *last;
  }
  if (*compacted > *revision || last_logged != *revision) {
    return absl::DataLossError(
        absl::StrCat("RocksDB store at ", path_, " is inconsistent: meta revision ", *revision,
                     ", compacted revision ", *compacted, ", last change-log entry ", last_logged,
                     " (files of it were lost or damaged). ", RecoveryHint(path_)));
  }

  std::string store_id;
  s = db_->Get(read_options, meta_cf_, ToSlice(kMetaStoreIdKey), &store_id);
  if (!s.ok() || store_id.empty()) {
    return absl::DataLossError(absl::StrCat("RocksDB store at ", path_, ": meta key ",
                                            kMetaStoreIdKey, " is missing or unreadable"));
  }
  absl::StatusOr<int64_t> epoch =
      ReadMetaRevision(db_.get(), read_options, meta_cf_, kMetaEpochKey, path_);
  if (!epoch.ok()) return epoch.status();
  store_id_ = store_id;
  epoch_.store(*epoch);

  absl::MutexLock lock(&mu_);
  revision_.store(*revision, std::memory_order_release);
  compacted_revision_ = *compacted;
  compacted_snapshot_.store(*compacted);
  return absl::OkStatus();
}

absl::Status RocksDbStore::WriteLocked(rocksdb::WriteBatch* batch, absl::string_view operation) {
  rocksdb::WriteOptions write_options;
  write_options.sync = options_.sync;
  const rocksdb::Status s = db_->Write(write_options, batch);
  if (s.ok()) return absl::OkStatus();
  absl::Status status = FromRocksDb(s, operation, path_);
  // The record may already be in the WAL (e.g. the fsync failed), so after a restart it can
  // come back. Writing another batch under the same revision would then merge two batches'
  // effects, so refuse all writes until a reopen recovers the true state.
  write_failure_ = absl::FailedPreconditionError(
      absl::StrCat("RocksDB store at ", path_, " refuses writes after an earlier failed write (",
                   status.message(), "); reopen it to recover"));
  // Called under mu_: the callback must be quick (tollgated flips health and logs).
  if (options_.on_write_failure) options_.on_write_failure(status);
  return status;
}

absl::StatusOr<int64_t> RocksDbStore::CommitSequence(
    const std::vector<const WriteBatch*>& batches) {
  if (batches.empty()) return absl::InvalidArgumentError("CommitSequence: no batch to commit");
  // Everything that does not depend on the revision is built before taking the lock, which is
  // held across the fsync. Later batches' puts come after earlier ones', so RocksDB applies
  // them in order within the one write.
  rocksdb::WriteBatch write;
  std::vector<std::string> records;
  records.reserve(batches.size());
  for (const WriteBatch* batch : batches) {
    for (const WriteBatch::Op& op : batch->ops()) {
      const rocksdb::Status s =
          op.is_delete ? write.Delete(state_cf_, op.key) : write.Put(state_cf_, op.key, op.value);
      if (!s.ok()) return FromRocksDb(s, "build commit batch", path_);
    }
    records.push_back(EncodeRecords(batch->changes()));
  }

  absl::MutexLock lock(&mu_);
  if (!write_failure_.ok()) return write_failure_;
  const int64_t first = revision_.load(std::memory_order_relaxed) + 1;
  const int64_t last = first + static_cast<int64_t>(batches.size()) - 1;
  for (int64_t revision = first; revision <= last; ++revision) {
    const rocksdb::Status put =
        write.Put(changes_cf_, EncodeRevision(revision), records[revision - first]);
    if (!put.ok()) return FromRocksDb(put, "build commit batch", path_);
  }
  const rocksdb::Status meta = write.Put(meta_cf_, ToSlice(kMetaRevisionKey), EncodeRevision(last));
  if (!meta.ok()) return FromRocksDb(meta, "build commit batch", path_);
  if (absl::Status s = WriteLocked(&write, absl::StrCat("commit of revision ", last)); !s.ok()) {
    return s;
  }
  revision_.store(last, std::memory_order_release);
  if (acked_file_.has_value()) {
    // The batch is durable; only the record of it failed. Later opens then see an older
    // acknowledged revision, which can hide a loss but never invent one: log-worthy, not fatal.
    acked_file_->Write(last).IgnoreError();
  }
  return last;
}

absl::StatusOr<std::optional<std::string>> RocksDbStore::Get(absl::string_view key) const {
  std::string value;
  const rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), state_cf_, ToSlice(key), &value);
  if (s.IsNotFound()) return std::nullopt;
  if (!s.ok()) return FromRocksDb(s, "get", path_);
  return std::optional<std::string>(std::move(value));
}

absl::Status RocksDbStore::Scan(
    absl::string_view prefix,
    const std::function<bool(absl::string_view key, absl::string_view value)>& visit) const {
  // The upper bound lets RocksDB stop at the end of the prefix instead of stepping over
  // deleted keys past it; both must outlive the iterator.
  const std::optional<std::string> upper = PrefixSuccessor(prefix);
  rocksdb::Slice upper_slice;
  rocksdb::ReadOptions read_options;
  // Scans read whole key ranges (a restart reads every workload): caching their blocks would
  // only evict the ones point reads use, and reading ahead saves a read per block when the
  // files are not in the page cache. Checksums are still verified.
  read_options.fill_cache = false;
  read_options.readahead_size = 2 << 20;
  if (upper.has_value()) {
    upper_slice = *upper;
    read_options.iterate_upper_bound = &upper_slice;
  }
  // An iterator reads from an implicit snapshot, so the scan never sees half a batch.
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(read_options, state_cf_));
  for (it->Seek(ToSlice(prefix)); it->Valid(); it->Next()) {
    const absl::string_view key = ToView(it->key());
    if (!absl::StartsWith(key, prefix)) break;
    if (!visit(key, ToView(it->value()))) return absl::OkStatus();
  }
  return FromRocksDb(it->status(), absl::StrCat("scan of prefix \"", prefix, "\""), path_);
}

int64_t RocksDbStore::CurrentRevision() const { return revision_.load(std::memory_order_acquire); }

absl::StatusOr<std::vector<ChangeLogEntry>> RocksDbStore::ReadChanges(int64_t after_revision,
                                                                      int64_t limit) const {
  if (after_revision < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("ReadChanges: after_revision must be >= 0, got ", after_revision));
  }
  if (limit < 1) {
    return absl::InvalidArgumentError(absl::StrCat("ReadChanges: limit must be >= 1, got ", limit));
  }
  // Nothing newer exists yet; returning here also keeps `after_revision + 1` from overflowing.
  if (after_revision >= CurrentRevision()) return std::vector<ChangeLogEntry>();
  // The compaction point and the entries must come from the same snapshot; otherwise a
  // concurrent CompactChanges could drop the first entries after the check and the caller
  // would silently miss them.
  rocksdb::ManagedSnapshot snapshot(db_.get());
  rocksdb::ReadOptions read_options;
  read_options.snapshot = snapshot.snapshot();
  absl::StatusOr<int64_t> compacted =
      ReadMetaRevision(db_.get(), read_options, meta_cf_, kMetaCompactedRevisionKey, path_);
  if (!compacted.ok()) return compacted.status();
  if (after_revision < *compacted) {
    return absl::FailedPreconditionError(absl::StrCat("revision ", after_revision + 1,
                                                      " has been compacted; oldest available is ",
                                                      *compacted + 1));
  }

  std::vector<ChangeLogEntry> entries;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(read_options, changes_cf_));
  int64_t expected = after_revision + 1;
  for (it->Seek(EncodeRevision(expected));
       it->Valid() && static_cast<int64_t>(entries.size()) < limit; it->Next(), ++expected) {
    absl::StatusOr<int64_t> revision = DecodeRevision(ToView(it->key()), "change-log key", path_);
    if (!revision.ok()) return revision.status();
    if (*revision != expected) {
      return absl::DataLossError(absl::StrCat("RocksDB store at ", path_,
                                              ": change log has no entry for revision ", expected,
                                              " (next is ", *revision, ")"));
    }
    absl::StatusOr<std::vector<std::string>> records =
        DecodeRecordsAt(ToView(it->value()), *revision, path_);
    if (!records.ok()) return records.status();
    entries.push_back(ChangeLogEntry{.revision = *revision, .records = *std::move(records)});
  }
  if (!it->status().ok()) return FromRocksDb(it->status(), "read change log", path_);
  return entries;
}

absl::Status RocksDbStore::CompactChanges(int64_t revision) {
  absl::MutexLock lock(&mu_);
  const int64_t current = revision_.load(std::memory_order_relaxed);
  if (revision < 0 || revision > current) {
    return absl::InvalidArgumentError(
        absl::StrCat("CompactChanges: revision ", revision, " is outside [0, ", current, "]"));
  }
  if (!write_failure_.ok()) return write_failure_;
  if (revision <= compacted_revision_) return absl::OkStatus();

  // One range tombstone instead of a delete per entry; compaction reclaims the space later.
  rocksdb::WriteBatch write;
  const std::string compacted_key = EncodeRevision(revision);
  for (const rocksdb::Status& op :
       {write.DeleteRange(changes_cf_, EncodeRevision(compacted_revision_ + 1),
                          EncodeRevision(revision + 1)),
        write.Put(meta_cf_, ToSlice(kMetaCompactedRevisionKey), compacted_key)}) {
    if (!op.ok()) return FromRocksDb(op, "build compaction batch", path_);
  }
  if (absl::Status s = WriteLocked(&write, absl::StrCat("compaction to revision ", revision));
      !s.ok()) {
    return s;
  }
  compacted_revision_ = revision;
  compacted_snapshot_.store(revision);
  return absl::OkStatus();
}

RocksDbStore::EngineStats RocksDbStore::engine_stats() const {
  EngineStats stats;
  auto add_int = [&](rocksdb::ColumnFamilyHandle* cf, const std::string& property,
                     uint64_t* total) {
    uint64_t value = 0;
    if (db_->GetIntProperty(cf, property, &value)) *total += value;
  };
  for (rocksdb::ColumnFamilyHandle* cf : handles_) {
    add_int(cf, rocksdb::DB::Properties::kTotalSstFilesSize, &stats.sst_bytes);
    add_int(cf, rocksdb::DB::Properties::kCurSizeAllMemTables, &stats.memtable_bytes);
    add_int(cf, rocksdb::DB::Properties::kEstimateLiveDataSize, &stats.live_data_bytes);
    std::map<std::string, std::string> cf_stats;
    if (db_->GetMapProperty(cf, rocksdb::DB::Properties::kCFStats, &cf_stats)) {
      auto counter = [&](const char* key) -> uint64_t {
        auto it = cf_stats.find(key);
        return it == cf_stats.end() ? 0 : std::strtoull(it->second.c_str(), nullptr, 10);
      };
      stats.stall_stops += counter("io_stalls.total_stop");
      stats.stall_slowdowns += counter("io_stalls.total_slowdown");
    }
  }
  uint64_t stopped = 0;
  if (db_->GetIntProperty(rocksdb::DB::Properties::kIsWriteStopped, &stopped)) {
    stats.write_stopped = stopped != 0;
  }
  return stats;
}

namespace {

// A RocksDB snapshot: pins the versions it sees (in memory and table files) until destroyed.
class RocksDbSnapshot final : public StoreSnapshot {
 public:
  RocksDbSnapshot(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* state_cf, std::string path)
      : db_(db), state_cf_(state_cf), path_(std::move(path)), snapshot_(db) {}
  absl::Status Init(rocksdb::ColumnFamilyHandle* meta_cf) {
    rocksdb::ReadOptions options;
    options.snapshot = snapshot_.snapshot();
    absl::StatusOr<int64_t> revision =
        ReadMetaRevision(db_, options, meta_cf, kMetaRevisionKey, path_);
    if (!revision.ok()) return revision.status();
    revision_ = *revision;
    return absl::OkStatus();
  }
  int64_t revision() const override { return revision_; }
  absl::StatusOr<int64_t> ScanPage(
      absl::string_view prefix, absl::string_view start_after, int64_t limit,
      const std::function<void(absl::string_view, absl::string_view)>& visit) const override {
    rocksdb::ReadOptions options;
    options.snapshot = snapshot_.snapshot();
    options.fill_cache = false;
    const std::optional<std::string> upper = PrefixSuccessor(prefix);
    rocksdb::Slice upper_slice;
    if (upper.has_value()) {
      upper_slice = *upper;
      options.iterate_upper_bound = &upper_slice;
    }
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(options, state_cf_));
    it->Seek(ToSlice(start_after.empty() ? prefix : start_after));
    if (!start_after.empty() && it->Valid() && ToView(it->key()) == start_after) it->Next();
    int64_t visited = 0;
    for (; it->Valid() && visited < limit; it->Next()) {
      const absl::string_view key = ToView(it->key());
      if (!absl::StartsWith(key, prefix)) break;
      visit(key, ToView(it->value()));
      ++visited;
    }
    if (!it->status().ok()) return FromRocksDb(it->status(), "snapshot scan", path_);
    return visited;
  }

 private:
  rocksdb::DB* db_;
  rocksdb::ColumnFamilyHandle* state_cf_;
  const std::string path_;
  // snapshot() is not const in RocksDB's API; reading through it changes nothing.
  mutable rocksdb::ManagedSnapshot snapshot_;
  int64_t revision_ = 0;
};

}  // namespace

absl::StatusOr<std::unique_ptr<StoreSnapshot>> RocksDbStore::TakeSnapshot() const {
  auto snapshot = std::make_unique<RocksDbSnapshot>(db_.get(), state_cf_, path_);
  if (absl::Status s = snapshot->Init(meta_cf_); !s.ok()) return s;
  return snapshot;
}

StoreIdentity RocksDbStore::Identity() const { return StoreIdentity{store_id_, epoch_.load()}; }

int64_t RocksDbStore::CompactedRevision() const { return compacted_snapshot_.load(); }

absl::Status RocksDbStore::CheckRecovery(std::optional<int64_t> acknowledged, std::string wal_error,
                                         absl::string_view wal_files) {
  const int64_t recovered = CurrentRevision();
  recovery_.recovered_revision = recovered;
  recovery_.acknowledged_revision = acknowledged;
  recovery_.wal_error = std::move(wal_error);
  // Without synced commits nothing was promised; the record is neither kept nor checked.
  if (!options_.sync) {
    recovery_.dropped_torn_tail = !recovery_.wal_error.empty();
    return absl::OkStatus();
  }
  const std::optional<std::string> loss =
      LossMessage(path_, recovered, acknowledged, recovery_.wal_error, wal_files);
  if (loss.has_value()) {
    if (!options_.accept_data_loss) {
      return absl::DataLossError(absl::StrCat(*loss, RecoveryHint(path_)));
    }
    if (acknowledged.has_value() && recovered < *acknowledged) {
      recovery_.lost_revisions = *acknowledged - recovered;
    }
    TOLLGATE_STORE_RETURN_IF_ERROR(BumpEpoch());
    recovery_.epoch_bumped = true;
  } else if (!recovery_.wal_error.empty()) {
    // Everything acknowledged is back: the damage was the torn tail of a write that never
    // returned, and point-in-time recovery dropped exactly that.
    recovery_.dropped_torn_tail = true;
  }
  absl::StatusOr<AckedRevisionFile> file = AckedRevisionFile::Open(path_, recovered);
  if (!file.ok()) return file.status();
  absl::MutexLock lock(&mu_);
  acked_file_.emplace(*std::move(file));
  return absl::OkStatus();
}

absl::Status RocksDbStore::BumpEpoch() {
  absl::MutexLock lock(&mu_);
  const int64_t next = epoch_.load() + 1;
  rocksdb::WriteBatch write;
  const rocksdb::Status put = write.Put(meta_cf_, ToSlice(kMetaEpochKey), EncodeRevision(next));
  if (!put.ok()) return FromRocksDb(put, "build epoch batch", path_);
  rocksdb::WriteOptions write_options;
  write_options.sync = true;
  TOLLGATE_STORE_RETURN_IF_ERROR(
      FromRocksDb(db_->Write(write_options, &write), "write epoch", path_));
  epoch_.store(next);
  return absl::OkStatus();
}

absl::StatusOr<int64_t> RocksDbStore::Backup(const std::string& dir) {
  rocksdb::Checkpoint* raw = nullptr;
  TOLLGATE_STORE_RETURN_IF_ERROR(
      FromRocksDb(rocksdb::Checkpoint::Create(db_.get(), &raw), "create checkpoint", path_));
  std::unique_ptr<rocksdb::Checkpoint> checkpoint(raw);
  // Holding the commit mutex pins the revision the copy holds; writes wait for the flush and
  // the hard links (well under a second for a flushed store).
  absl::MutexLock lock(&mu_);
  if (!write_failure_.ok()) return write_failure_;
  TOLLGATE_STORE_RETURN_IF_ERROR(
      FromRocksDb(checkpoint->CreateCheckpoint(dir, /*log_size_for_flush=*/0),
                  "checkpoint into " + dir, path_));
  return revision_.load();
}

absl::StatusOr<RocksDbStore::Restored> RocksDbStore::Restore(const std::string& backup_dir,
                                                             const std::string& data_dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(fs::path(backup_dir) / "CURRENT", ec)) {
    return absl::NotFoundError(
        absl::StrCat("--from=", backup_dir, ": not a backup (no RocksDB CURRENT file)"));
  }
  if (fs::exists(data_dir, ec) && !fs::is_empty(data_dir, ec)) {
    return absl::FailedPreconditionError(
        absl::StrCat("--data-dir=", data_dir,
                     " is not empty; move it aside first (a restore never overwrites a store)"));
  }
  // Copy beside the target and rename, so a failed copy never leaves a half store behind.
  const std::string staging = data_dir + ".restoring";
  fs::remove_all(staging, ec);
  fs::copy(backup_dir, staging, fs::copy_options::recursive, ec);
  if (ec) {
    return absl::InternalError(
        absl::StrCat("copy ", backup_dir, " to ", staging, ": ", ec.message()));
  }
  fs::remove(fs::path(staging) / AckedRevisionFile::kFileName, ec);
  fs::remove(data_dir, ec);
  fs::rename(staging, data_dir, ec);
  if (ec) {
    return absl::InternalError(
        absl::StrCat("rename ", staging, " to ", data_dir, ": ", ec.message()));
  }
  absl::StatusOr<std::unique_ptr<RocksDbStore>> store = Open(data_dir);
  if (!store.ok()) return store.status();
  TOLLGATE_STORE_RETURN_IF_ERROR((*store)->BumpEpoch());
  return Restored{(*store)->Identity(), (*store)->CurrentRevision()};
}

}  // namespace tollgate::storage
