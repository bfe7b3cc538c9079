#include "storage/memory_store.h"

#include <map>
#include <memory>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace tollgate::storage {

absl::StatusOr<int64_t> MemoryStore::CommitSequence(const std::vector<const WriteBatch*>& batches) {
  if (batches.empty()) return absl::InvalidArgumentError("CommitSequence: no batch to commit");
  absl::MutexLock lock(&mu_);
  for (const WriteBatch* batch : batches) {
    for (const WriteBatch::Op& op : batch->ops()) {
      if (op.is_delete) {
        data_.erase(op.key);
      } else {
        data_.insert_or_assign(op.key, op.value);
      }
    }
    ++revision_;
    changes_.emplace(revision_, batch->changes());
  }
  return revision_;
}

absl::StatusOr<std::optional<std::string>> MemoryStore::Get(absl::string_view key) const {
  absl::ReaderMutexLock lock(&mu_);
  auto it = data_.find(key);
  if (it == data_.end()) return std::nullopt;
  return it->second;
}

absl::Status MemoryStore::Scan(
    absl::string_view prefix,
    const std::function<bool(absl::string_view key, absl::string_view value)>& visit) const {
  // Copy out and visit without the lock, so `visit` may call back into the store (as it may
  // with RocksDbStore's snapshot iterator) without deadlocking on the non-reentrant mutex.
  std::vector<std::pair<std::string, std::string>> matches;
  {
    absl::ReaderMutexLock lock(&mu_);
    for (auto it = data_.lower_bound(prefix);
         it != data_.end() && absl::StartsWith(it->first, prefix); ++it) {
      matches.emplace_back(it->first, it->second);
    }
  }
  for (const auto& [key, value] : matches) {
    if (!visit(key, value)) break;
  }
  return absl::OkStatus();
}

MemoryStore::MemoryStore() : identity_{NewStoreId(), 1} {}

namespace {

class MemorySnapshot final : public StoreSnapshot {
 public:
  MemorySnapshot(std::map<std::string, std::string, std::less<>> data, int64_t revision)
      : data_(std::move(data)), revision_(revision) {}
  int64_t revision() const override { return revision_; }
  absl::StatusOr<int64_t> ScanPage(
      absl::string_view prefix, absl::string_view start_after, int64_t limit,
      const std::function<void(absl::string_view, absl::string_view)>& visit) const override {
    int64_t visited = 0;
    auto it = start_after.empty() ? data_.lower_bound(prefix) : data_.upper_bound(start_after);
    for (; it != data_.end() && visited < limit && absl::StartsWith(it->first, prefix); ++it) {
      visit(it->first, it->second);
      ++visited;
    }
    return visited;
  }

 private:
  const std::map<std::string, std::string, std::less<>> data_;
  const int64_t revision_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<StoreSnapshot>> MemoryStore::TakeSnapshot() const {
  absl::MutexLock lock(&mu_);
  return std::make_unique<MemorySnapshot>(data_, revision_);
}

int64_t MemoryStore::CompactedRevision() const {
  absl::MutexLock lock(&mu_);
  return compacted_revision_;
}

int64_t MemoryStore::CurrentRevision() const {
  absl::ReaderMutexLock lock(&mu_);
  return revision_;
}

absl::StatusOr<std::vector<ChangeLogEntry>> MemoryStore::ReadChanges(int64_t after_revision,
                                                                     int64_t limit) const {
  if (after_revision < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("ReadChanges: after_revision must be >= 0, got ", after_revision));
  }
  if (limit < 1) {
    return absl::InvalidArgumentError(absl::StrCat("ReadChanges: limit must be >= 1, got ", limit));
  }
  absl::ReaderMutexLock lock(&mu_);
  if (after_revision < compacted_revision_) {
    return absl::FailedPreconditionError(absl::StrCat("revision ", after_revision + 1,
                                                      " has been compacted; oldest available is ",
                                                      compacted_revision_ + 1));
  }
  std::vector<ChangeLogEntry> entries;
  for (auto it = changes_.upper_bound(after_revision);
       it != changes_.end() && static_cast<int64_t>(entries.size()) < limit; ++it) {
    entries.push_back(ChangeLogEntry{.revision = it->first, .records = it->second});
  }
  return entries;
}

absl::Status MemoryStore::CompactChanges(int64_t revision) {
  absl::MutexLock lock(&mu_);
  if (revision < 0 || revision > revision_) {
    return absl::InvalidArgumentError(
        absl::StrCat("CompactChanges: revision ", revision, " is outside [0, ", revision_, "]"));
  }
  if (revision <= compacted_revision_) return absl::OkStatus();
  changes_.erase(changes_.begin(), changes_.upper_bound(revision));
  compacted_revision_ = revision;
  return absl::OkStatus();
}

}  // namespace tollgate::storage
