#include "core/held_workloads.h"

namespace tollgate::core {

void HeldWorkloads::Insert(const Workload& wl) {
  Erase(wl.id);
  const Filed filed{VictimKey{wl.priority, WorkAtRiskSince(wl.status), wl.id},
                    wl.status.state == WorkloadState::kEvicting,
                    wl.status.state == WorkloadState::kQuotaReserved};
  ids_.insert(wl.id);
  (filed.evicting ? evicting_ : admitted_).insert(filed.key);
  if (filed.quota_reserved) ++quota_reserved_;
  filed_[wl.id] = filed;
}

bool HeldWorkloads::Erase(WorkloadId id) {
  auto it = filed_.find(id);
  if (it == filed_.end()) return false;
  (it->second.evicting ? evicting_ : admitted_).erase(it->second.key);
  if (it->second.quota_reserved) --quota_reserved_;
  filed_.erase(it);
  ids_.erase(id);
  return true;
}

void HeldWorkloads::Clear() {
  ids_.clear();
  admitted_.clear();
  evicting_.clear();
  filed_.clear();
  quota_reserved_ = 0;
}

}  // namespace tollgate::core
