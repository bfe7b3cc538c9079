#include "storage/rocksdb_store.h"

#include <cstdlib>
#include <limits>
#include <map>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "rocksdb/db.h"
#include "rocksdb/options.h"
#include "rocksdb/snapshot.h"
#include "rocksdb/write_batch.h"

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

void PutVarint64(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

bool GetVarint64(absl::string_view* in, uint64_t* v) {
  uint64_t result = 0;
  for (int shift = 0; shift <= 63 && !in->empty(); shift += 7) {
    const auto byte = static_cast<uint8_t>(in->front());
    in->remove_prefix(1);
    result |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      *v = result;
      return true;
    }
  }
  return false;
}

// A change-log value: for each record, its length as a varint followed by its bytes.
std::string EncodeRecords(const std::vector<std::string>& records) {
  size_t size = 0;
  for (const std::string& r : records) size += r.size() + 10;
  std::string out;
  out.reserve(size);
  for (const std::string& r : records) {
    PutVarint64(r.size(), &out);
    out.append(r);
  }
  return out;
}

absl::StatusOr<std::vector<std::string>> DecodeRecords(absl::string_view in, int64_t revision,
                                                       absl::string_view path) {
  std::vector<std::string> records;
  while (!in.empty()) {
    uint64_t size = 0;
    if (!GetVarint64(&in, &size) || size > in.size()) {
      return absl::DataLossError(absl::StrCat("RocksDB store at ", path,
                                              ": change-log entry for revision ", revision,
                                              " is truncated after ", records.size(), " records"));
    }
    records.emplace_back(in.substr(0, size));
    in.remove_prefix(size);
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

}  // namespace

absl::StatusOr<std::unique_ptr<RocksDbStore>> RocksDbStore::Open(const std::string& path,
                                                                 RocksDbStoreOptions options) {
  rocksdb::DBOptions db_options;
  db_options.create_if_missing = true;
  db_options.create_missing_column_families = true;
  // A crash mid-write leaves a torn WAL tail that belongs to an unacknowledged batch. Point in
  // time recovery drops it and anything after it, so recovery always yields a prefix of the
  // revisions rather than refusing to open or skipping a hole.
  db_options.wal_recovery_mode = rocksdb::WALRecoveryMode::kPointInTimeRecovery;
  db_options.max_total_wal_size = options.max_total_wal_bytes;

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
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw_db = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(db_options, path, descriptors, &handles, &raw_db);
  if (!s.ok()) return FromRocksDb(s, "open", path);

  std::unique_ptr<RocksDbStore> store(
      new RocksDbStore(path, options, std::unique_ptr<rocksdb::DB>(raw_db), std::move(handles)));
  if (absl::Status meta = store->LoadOrInitMeta(); !meta.ok()) return meta;
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
    for (const rocksdb::Status& put :
         {init.Put(meta_cf_, ToSlice(kMetaSchemaVersionKey), ToSlice(kRocksDbSchemaVersion)),
          init.Put(meta_cf_, ToSlice(kMetaRevisionKey), zero),
          init.Put(meta_cf_, ToSlice(kMetaCompactedRevisionKey), zero)}) {
      if (!put.ok()) return FromRocksDb(put, "build init batch", path_);
    }
    rocksdb::WriteOptions write_options;
    write_options.sync = true;
    return FromRocksDb(db_->Write(write_options, &init), "initialize meta", path_);
  }
  if (!s.ok()) return FromRocksDb(s, "read schema_version", path_);
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
                     ", compacted revision ", *compacted, ", last change-log entry ", last_logged));
  }

  absl::MutexLock lock(&mu_);
  revision_.store(*revision, std::memory_order_release);
  compacted_revision_ = *compacted;
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
        DecodeRecords(ToView(it->value()), *revision, path_);
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

}  // namespace tollgate::storage
