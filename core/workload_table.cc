#include "core/workload_table.h"

#include <utility>

namespace tollgate::core {

void WorkloadTable::Erase(WorkloadId id) {
  Workload& wl = *slots_[id];
  deleted_.push_back(WorkloadKey{wl.spec.namespace_name, wl.spec.name});
  dirty_.erase(id);
  ids_by_key_.Erase(id);
  if (wl.owner.has_value()) {
    auto it = by_owner_.find(wl.owner->uid);
    if (it != by_owner_.end()) {
      it->second.erase(id);
      if (it->second.empty()) by_owner_.erase(it);
    }
  }
  slots_[id].reset();
}

void WorkloadTable::SetOwner(WorkloadId id, WorkloadOwner owner) {
  Workload& wl = *slots_[id];
  if (wl.owner.has_value()) {
    auto it = by_owner_.find(wl.owner->uid);
    if (it != by_owner_.end()) {
      it->second.erase(id);
      if (it->second.empty()) by_owner_.erase(it);
    }
  }
  wl.owner = std::move(owner);
  IndexOwner(id);
}

void WorkloadTable::IndexOwner(WorkloadId id) {
  const Workload& wl = *slots_[id];
  if (wl.owner.has_value()) by_owner_[wl.owner->uid].insert(id);
}

std::vector<WorkloadId> WorkloadTable::OwnedBy(absl::string_view owner_uid) const {
  auto it = by_owner_.find(owner_uid);
  if (it == by_owner_.end()) return {};
  return std::vector<WorkloadId>(it->second.begin(), it->second.end());
}

std::vector<const Workload*> WorkloadTable::All() const {
  std::vector<const Workload*> out;
  for (const auto& wl : slots_) {
    if (wl != nullptr) out.push_back(wl.get());
  }
  return out;
}

std::vector<WorkloadId> WorkloadTable::TakeDirty() {
  std::vector<WorkloadId> out(dirty_.begin(), dirty_.end());
  dirty_.clear();
  return out;
}

std::vector<WorkloadKey> WorkloadTable::TakeDeleted() {
  std::vector<WorkloadKey> out;
  out.swap(deleted_);
  return out;
}

}  // namespace tollgate::core
