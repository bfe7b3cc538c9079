#pragma once

#include <cstddef>
#include <cstdint>

#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/strings/string_view.h"
#include "core/cluster_state.h"
#include "core/workload.h"

namespace tollgate::engine {

// Finds a live workload by uid, so a client-chosen uid that another workload already holds can
// be refused. Like core::WorkloadsByKey it keeps only ids (8-byte slots) and hashes the uid the
// workload already holds, so a million workloads do not pay for a second copy of every uid.
//
// It follows one ClusterState: built from it on first use, then told of each workload added or
// removed. When the executor replaces the state (a reload after a failed commit) the next call
// sees another object and rebuilds. Not thread-safe: the executor thread only.
class WorkloadUids {
 public:
  WorkloadUids() : ids_(0, UidHash{nullptr}, UidEq{nullptr}) {}
  WorkloadUids(const WorkloadUids&) = delete;
  WorkloadUids& operator=(const WorkloadUids&) = delete;

  // The workload that holds `uid`, or null.
  const core::Workload* Find(const core::ClusterState& state, absl::string_view uid);
  // `id` is live in `state` with its uid set.
  void Added(const core::ClusterState& state, core::WorkloadId id);
  // `id` is about to be deleted from `state` (still readable).
  void Removed(const core::ClusterState& state, core::WorkloadId id);

 private:
  // Rebuilds from `state` when it is not the state the index follows.
  void Follow(const core::ClusterState& state);

  struct UidHash {
    using is_transparent = void;
    const core::ClusterState* state;
    size_t operator()(absl::string_view uid) const { return absl::HashOf(uid); }
    size_t operator()(core::WorkloadId id) const { return (*this)(UidOf(state, id)); }
  };
  struct UidEq {
    using is_transparent = void;
    const core::ClusterState* state;
    absl::string_view Of(absl::string_view uid) const { return uid; }
    absl::string_view Of(core::WorkloadId id) const { return UidOf(state, id); }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return Of(a) == Of(b);
    }
  };
  static absl::string_view UidOf(const core::ClusterState* state, core::WorkloadId id) {
    const core::Workload* wl = state == nullptr ? nullptr : state->workload(id);
    return wl == nullptr ? absl::string_view() : absl::string_view(wl->uid);
  }

  const core::ClusterState* state_ = nullptr;
  absl::flat_hash_set<core::WorkloadId, UidHash, UidEq> ids_;
};

}  // namespace tollgate::engine
