#include "core/workload_table.h"

#include <utility>

namespace tollgate::core {

void WorkloadTable::Erase(WorkloadId id) {
  Workload& wl = *slots_[id];
  deleted_.push_back(WorkloadKey{wl.spec.namespace_name, wl.spec.name});
  dirty_.erase(id);
  ids_by_key_.Erase(id);
  slots_[id].reset();
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
