#include "storage/frozen_mirror_store.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace tollgate::storage {
namespace {

// A page reader over one frozen copy, which it keeps alive (a slow Watch pins it).
class FrozenSnapshot final : public StoreSnapshot {
 public:
  explicit FrozenSnapshot(std::shared_ptr<const EtcdMirror::Frozen> frozen)
      : frozen_(std::move(frozen)) {}
  int64_t revision() const override { return frozen_->revision; }
  absl::StatusOr<int64_t> ScanPage(
      absl::string_view prefix, absl::string_view start_after, int64_t limit,
      const std::function<void(absl::string_view key, absl::string_view value)>& visit)
      const override {
    auto it = start_after.empty() ? frozen_->data.lower_bound(prefix)
                                  : frozen_->data.upper_bound(start_after);
    if (!start_after.empty() && it != frozen_->data.end() && it->first < prefix) {
      it = frozen_->data.lower_bound(prefix);
    }
    int64_t visited = 0;
    for (; visited < limit && it != frozen_->data.end() && absl::StartsWith(it->first, prefix);
         ++it, ++visited) {
      visit(it->first, *it->second);
    }
    return visited;
  }

 private:
  const std::shared_ptr<const EtcdMirror::Frozen> frozen_;
};

}  // namespace

void FrozenMirrorStore::Install(std::shared_ptr<const EtcdMirror::Frozen> frozen) {
  absl::MutexLock lock(&mu_);
  frozen_ = std::move(frozen);
}

std::shared_ptr<const EtcdMirror::Frozen> FrozenMirrorStore::frozen() const {
  absl::MutexLock lock(&mu_);
  return frozen_;
}

absl::StatusOr<int64_t> FrozenMirrorStore::CommitSequence(
    const std::vector<const WriteBatch*>& /*batches*/) {
  return absl::FailedPreconditionError(
      "a follower's read view cannot write; writes go to the leader");
}

absl::StatusOr<std::optional<std::string>> FrozenMirrorStore::Get(absl::string_view key) const {
  const std::shared_ptr<const EtcdMirror::Frozen> frozen = this->frozen();
  auto it = frozen->data.find(key);
  if (it == frozen->data.end()) return std::nullopt;
  return *it->second;
}

absl::Status FrozenMirrorStore::Scan(
    absl::string_view prefix,
    const std::function<bool(absl::string_view key, absl::string_view value)>& visit) const {
  // No lock held while visiting: `visit` may call back into the store.
  const std::shared_ptr<const EtcdMirror::Frozen> frozen = this->frozen();
  for (auto it = frozen->data.lower_bound(prefix);
       it != frozen->data.end() && absl::StartsWith(it->first, prefix); ++it) {
    if (!visit(it->first, *it->second)) break;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<StoreSnapshot>> FrozenMirrorStore::TakeSnapshot() const {
  return std::make_unique<FrozenSnapshot>(frozen());
}

absl::Status FrozenMirrorStore::CompactChanges(int64_t revision) {
  return absl::FailedPreconditionError(absl::StrCat(
      "a follower's read view cannot compact the change log (to revision ", revision, ")"));
}

}  // namespace tollgate::storage
