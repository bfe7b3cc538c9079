#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "storage/etcd_mirror.h"
#include "storage/store.h"

namespace tollgate::storage {

// The store a promoted replica opens its executor on (docs/ha.md, "Warm followers"): writes and
// everything else go to `store` (the fenced EtcdStore), but until the first write, Get, Scan
// and CurrentRevision are answered from `warm`, the replica's in-memory copy, frozen at the
// store's current revision. So loading the state reads memory, not every key from etcd.
//
// That is exact only while nothing else writes: the caller makes sure `warm` (stopped) is at
// the revision `store` has now, and that `store` is fenced on this replica's leadership, so
// only this process can move it. The first write switches every read to `store` for good,
// before it is sent. Both must outlive this. Thread-safe.
class WarmStartStore : public Store {
 public:
  WarmStartStore(Store& store, const EtcdMirror& warm) : store_(store), warm_(warm) {}

  absl::StatusOr<int64_t> CommitSequence(const std::vector<const WriteBatch*>& batches) override {
    written_.store(true);
    return store_.CommitSequence(batches);
  }
  absl::StatusOr<std::optional<std::string>> Get(absl::string_view key) const override {
    if (written_.load()) return store_.Get(key);
    return warm_.Get(key);
  }
  absl::Status Scan(absl::string_view prefix,
                    const std::function<bool(absl::string_view key, absl::string_view value)>&
                        visit) const override {
    if (written_.load()) return store_.Scan(prefix, visit);
    warm_.Scan(prefix, visit);
    return absl::OkStatus();
  }
  int64_t CurrentRevision() const override {
    return written_.load() ? store_.CurrentRevision() : warm_.revision();
  }
  StoreIdentity Identity() const override { return store_.Identity(); }
  absl::StatusOr<std::unique_ptr<StoreSnapshot>> TakeSnapshot() const override {
    return store_.TakeSnapshot();
  }
  int64_t CompactedRevision() const override { return store_.CompactedRevision(); }
  absl::StatusOr<std::vector<ChangeLogEntry>> ReadChanges(int64_t after_revision,
                                                          int64_t limit) const override {
    return store_.ReadChanges(after_revision, limit);
  }
  absl::Status CompactChanges(int64_t revision) override { return store_.CompactChanges(revision); }

 private:
  Store& store_;
  const EtcdMirror& warm_;
  std::atomic<bool> written_ = false;
};

}  // namespace tollgate::storage
