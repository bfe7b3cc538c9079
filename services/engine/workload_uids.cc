#include "services/engine/workload_uids.h"

namespace tollgate::engine {

void WorkloadUids::Follow(const core::ClusterState& state) {
  if (state_ == &state) return;
  state_ = &state;
  // The functors point at the state they read, so the set is rebuilt with new ones.
  ids_ = absl::flat_hash_set<core::WorkloadId, UidHash, UidEq>(0, UidHash{state_}, UidEq{state_});
  const std::vector<const core::Workload*> all = state.AllWorkloads();
  ids_.reserve(all.size());
  for (const core::Workload* wl : all) {
    if (!wl->uid.empty()) ids_.insert(wl->id);
  }
}

const core::Workload* WorkloadUids::Find(const core::ClusterState& state, absl::string_view uid) {
  Follow(state);
  auto it = ids_.find(uid);
  if (it == ids_.end()) return nullptr;
  return state.workload(*it);
}

void WorkloadUids::Added(const core::ClusterState& state, core::WorkloadId id) {
  Follow(state);
  ids_.insert(id);
}

void WorkloadUids::Removed(const core::ClusterState& state, core::WorkloadId id) {
  Follow(state);
  ids_.erase(id);
}

}  // namespace tollgate::engine
