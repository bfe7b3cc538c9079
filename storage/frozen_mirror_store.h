#pragma once

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
#include "storage/etcd_mirror.h"
#include "storage/store.h"

namespace tollgate::storage {

// The store a follower's read view runs on (services/ha/follower_reads.h): the state of one
// frozen copy of an EtcdMirror (EtcdMirror::Freeze), replaced as a whole by Install when the
// view moves forward. Get, Scan, CurrentRevision, Identity and TakeSnapshot answer from the
// installed copy, so a read sees exactly one store revision; the change log (Watch) is read from
// `changes`, the follower's own unfenced etcd store, as the leader reads it. It never writes:
// CommitSequence and CompactChanges fail with FAILED_PRECONDITION. `changes` must outlive it.
// Thread-safe.
class FrozenMirrorStore final : public Store {
 public:
  FrozenMirrorStore(std::shared_ptr<const EtcdMirror::Frozen> frozen, const Store& changes)
      : changes_(changes), frozen_(std::move(frozen)) {}

  // Answers from `frozen` from now on.
  void Install(std::shared_ptr<const EtcdMirror::Frozen> frozen);
  std::shared_ptr<const EtcdMirror::Frozen> frozen() const;

  absl::StatusOr<int64_t> CommitSequence(const std::vector<const WriteBatch*>& batches) override;
  absl::StatusOr<std::optional<std::string>> Get(absl::string_view key) const override;
  absl::Status Scan(absl::string_view prefix,
                    const std::function<bool(absl::string_view key, absl::string_view value)>&
                        visit) const override;
  int64_t CurrentRevision() const override { return frozen()->revision; }
  StoreIdentity Identity() const override { return frozen()->identity; }
  absl::StatusOr<std::unique_ptr<StoreSnapshot>> TakeSnapshot() const override;
  int64_t CompactedRevision() const override { return changes_.CompactedRevision(); }
  absl::StatusOr<std::vector<ChangeLogEntry>> ReadChanges(int64_t after_revision,
                                                          int64_t limit) const override {
    return changes_.ReadChanges(after_revision, limit);
  }
  absl::Status CompactChanges(int64_t revision) override;

 private:
  const Store& changes_;
  mutable absl::Mutex mu_;
  std::shared_ptr<const EtcdMirror::Frozen> frozen_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tollgate::storage
