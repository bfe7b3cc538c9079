#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "storage/store.h"

namespace tollgate::storage {

// A Store kept entirely in memory, for tests and simulations. It keeps the same contract as
// RocksDbStore except durability: everything is lost with the object, and Commit never fails.
class MemoryStore : public Store {
 public:
  // A fresh random store id, epoch 1.
  MemoryStore();
  MemoryStore(const MemoryStore&) = delete;
  MemoryStore& operator=(const MemoryStore&) = delete;

  absl::StatusOr<int64_t> CommitSequence(const std::vector<const WriteBatch*>& batches) override;
  absl::StatusOr<std::optional<std::string>> Get(absl::string_view key) const override;
  absl::Status Scan(absl::string_view prefix,
                    const std::function<bool(absl::string_view key, absl::string_view value)>&
                        visit) const override;
  int64_t CurrentRevision() const override;
  StoreIdentity Identity() const override { return identity_; }
  // Copies the state: memory stores are for tests.
  absl::StatusOr<std::unique_ptr<StoreSnapshot>> TakeSnapshot() const override;
  int64_t CompactedRevision() const override;
  absl::StatusOr<std::vector<ChangeLogEntry>> ReadChanges(int64_t after_revision,
                                                          int64_t limit) const override;
  absl::Status CompactChanges(int64_t revision) override;

 private:
  const StoreIdentity identity_;
  mutable absl::Mutex mu_;
  // std::less<> so lookups and lower_bound take a string_view without building a string.
  std::map<std::string, std::string, std::less<>> data_ ABSL_GUARDED_BY(mu_);
  std::map<int64_t, std::vector<std::string>> changes_ ABSL_GUARDED_BY(mu_);
  int64_t revision_ ABSL_GUARDED_BY(mu_) = 0;
  // Entries at or below this revision have been dropped.
  int64_t compacted_revision_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace tollgate::storage
