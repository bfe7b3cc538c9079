#include "core/held_workloads.h"

namespace tollgate::core {

void HeldWorkloads::Insert(const Workload& wl, int64_t effective_priority) {
  const Filed filed{VictimKey{effective_priority, WorkAtRiskSince(wl.status), wl.id},
                    wl.status.state == WorkloadState::kEvicting,
                    wl.status.state == WorkloadState::kQuotaReserved};
  // One hash lookup whether it is new or filed already.
  auto [it, inserted] = filed_.try_emplace(wl.id, filed);
  if (inserted) {
    ids_.insert(wl.id);
  } else {
    Filed& was = it->second;
    if (was.evicting == filed.evicting && !(was.key < filed.key) && !(filed.key < was.key)) {
      // Same place in the same order (a reservation becoming an admission): only the count of
      // reservations changes.
      quota_reserved_ =
          quota_reserved_ - (was.quota_reserved ? 1 : 0) + (filed.quota_reserved ? 1 : 0);
      was.quota_reserved = filed.quota_reserved;
      return;
    }
    // Filed elsewhere: out of its old order (its id stays in ids_).
    (was.evicting ? evicting_ : admitted_).erase(was.key);
    if (was.quota_reserved) --quota_reserved_;
    was = filed;
  }
  (filed.evicting ? evicting_ : admitted_).insert(filed.key);
  if (filed.quota_reserved) ++quota_reserved_;
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
  usages_.clear();
  usages_overflowed_ = false;
}

void HeldWorkloads::CountUsage(const QuotaUsage& usage) {
  if (usages_overflowed_) return;
  if (auto it = usages_.find(usage); it != usages_.end()) {
    ++it->second;
    return;
  }
  if (usages_.size() == kMaxCountedUsages) {
    // Too many kinds to be worth asking about one by one: stop counting (and paying for it on
    // every admission) until the holding is rebuilt.
    usages_overflowed_ = true;
    usages_.clear();
    return;
  }
  usages_.emplace(usage, 1);
}

void HeldWorkloads::UncountUsage(const QuotaUsage& usage) {
  if (usages_overflowed_) return;
  // A usage never counted (its queue's holding was cleared since) is left alone: the counts may
  // then name usages no held workload has, never miss one that one has.
  auto it = usages_.find(usage);
  if (it == usages_.end()) return;
  if (--it->second <= 0) usages_.erase(it);
}

}  // namespace tollgate::core
