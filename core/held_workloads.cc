#include "core/held_workloads.h"

namespace tollgate::core {

void HeldWorkloads::Insert(const Workload& wl) {
  Erase(wl.id);
  const Filed filed{VictimKey{wl.priority, WorkAtRiskSince(wl.status), wl.id},
                    wl.status.state == WorkloadState::kEvicting};
  ids_.insert(wl.id);
  (filed.evicting ? evicting_ : admitted_).insert(filed.key);
  filed_[wl.id] = filed;
}

bool HeldWorkloads::Erase(WorkloadId id) {
  auto it = filed_.find(id);
  if (it == filed_.end()) return false;
  (it->second.evicting ? evicting_ : admitted_).erase(it->second.key);
  filed_.erase(it);
  ids_.erase(id);
  return true;
}

void HeldWorkloads::Clear() {
  ids_.clear();
  admitted_.clear();
  evicting_.clear();
  filed_.clear();
}

}  // namespace tollgate::core
