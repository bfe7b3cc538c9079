#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/cluster_state.h"

// ClusterState's reclaimable pods (Kueue's status.reclaimablePods and the usage it derives from
// them): how a report is checked and applied, and what an admission's usage is once some of its
// pods are given back.

namespace tollgate::core {

void ClusterState::DeriveQuotaUsage(Workload& wl) {
  wl.quota_usage.clear();
  if (!wl.status.admission.has_value()) return;
  for (const PodSetAssignment& ps : wl.status.admission->pod_sets) {
    int32_t needed = ps.count;
    for (const PodSetSpec& spec : wl.spec.pod_sets) {
      if (spec.name == ps.name) {
        needed = std::min(needed, CountAfterReclaim(wl.status, spec, config_.reclaimable_pods));
      }
    }
    for (const auto& [resource, flavor] : ps.flavors) {
      for (const auto& [r, amount] : ps.resource_usage) {
        if (r != resource || amount == 0) continue;
        // resource_usage is count x per-pod, so the division is exact; a partially admitted set
        // (fewer pods than its count) scales from what it was admitted with.
        const int64_t scaled =
            needed < ps.count && ps.count > 0 ? amount / ps.count * needed : amount;
        if (scaled != 0) wl.quota_usage.emplace_back(fr_index_.Intern(flavor, resource), scaled);
      }
    }
  }
}

absl::Status ClusterState::SetReclaimablePods(absl::string_view key,
                                              std::vector<std::pair<std::string, int32_t>> pods,
                                              absl::Time now) {
  Workload* wl = workloads_.FindMutable(key);
  if (wl == nullptr) return absl::NotFoundError(absl::StrCat("workload ", key, " not found"));
  if (wl->status.state == WorkloadState::kFinished) {
    return absl::FailedPreconditionError(
        absl::StrCat("workload ", key, " is Finished; it holds no quota to give back"));
  }
  std::sort(pods.begin(), pods.end());
  std::map<std::string, int32_t> by_name;
  for (size_t i = 0; i < pods.size(); ++i) {
    const auto& [name, count] = pods[i];
    const std::string path = absl::StrCat("reclaimablePods[", name, "]");
    const PodSetSpec* spec = nullptr;
    for (const PodSetSpec& ps : wl->spec.pod_sets) {
      if (ps.name == name) spec = &ps;
    }
    if (spec == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": workload ", key, " has no pod set \"", name, "\""));
    }
    if (!by_name.emplace(name, count).second) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": pod set named twice"));
    }
    if (count < 0 || count > spec->count) {
      return absl::InvalidArgumentError(absl::StrCat(path, ".count: want 0..", spec->count,
                                                     " (the pod set's count), got ", count));
    }
  }
  // Zero counts say nothing; keeping them out makes equal reports compare equal.
  pods.erase(std::remove_if(pods.begin(), pods.end(), [](const auto& p) { return p.second == 0; }),
             pods.end());
  const std::vector<std::pair<std::string, int32_t>>& before =
      wl->status.history().reclaimable_pods;
  if (pods == before) return absl::OkStatus();
  if (wl->HoldsQuota()) {
    // Pods given back while running do not come back: their quota may already be someone's.
    for (const auto& [name, count] : before) {
      auto it = by_name.find(name);
      if (it == by_name.end() || it->second < count) {
        return absl::InvalidArgumentError(absl::StrCat(
            "reclaimablePods[", name, "].count: cannot go below ", count,
            " while the workload holds quota (got ",
            it == by_name.end() ? std::string("none") : absl::StrCat(it->second), ")"));
      }
    }
  }
  std::string summary;
  for (const auto& [name, count] : pods) {
    absl::StrAppend(&summary, summary.empty() ? "" : ", ", name, "=", count);
  }
  wl->status.mutable_history().reclaimable_pods = std::move(pods);
  AddEvent(wl->status, now, "ReclaimablePods",
           summary.empty() ? "No reclaimable pods" : absl::StrCat("Reclaimable pods: ", summary));
  MarkDirty(wl->id);
  if (wl->HoldsQuota()) {
    ClusterQueueRuntime* cq = mutable_cluster_queue(wl->status.admission->cluster_queue);
    const bool counted = cq != nullptr && cq->holding.contains(wl->id);
    if (counted) RemoveUsageOf(*wl);
    DeriveQuotaUsage(*wl);
    if (counted) AddUsageOf(*wl);
    RequeueInadmissibleInTreeOf(wl->status.admission->cluster_queue, now);
    return absl::OkStatus();
  }
  // Pending: it now asks for less, so it deserves another look even if it was parked.
  if (router_.QueuedIn(wl->id) != nullptr) Requeue(*wl, now);
  return absl::OkStatus();
}

}  // namespace tollgate::core
