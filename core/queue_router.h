#pragma once

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/string_view.h"
#include "core/config_registry.h"
#include "core/held_workloads.h"
#include "core/quota_tree.h"
#include "core/types.h"
#include "core/workload.h"
#include "core/workload_queue.h"

namespace tollgate::core {

// Runtime view of one ClusterQueue: its spec, its node in the quota tree, its pending queue and
// the workloads holding its quota.
struct ClusterQueueRuntime {
  // What a cycle reads to find the queue's head first, on one cache line with the queue's
  // head record (the start of `queue`): the cycle reads them for every ClusterQueue.
  QuotaNode* node = nullptr;
  bool active = true;
  WorkloadQueue queue;
  // What the flavor assigner reads of the spec for every head, beside the queue rather than
  // in the spec's resource groups (a cache miss per head with a thousand queues): each covered
  // resource's index into spec.resource_groups, in name order (GroupOf), and whether `pods` is
  // covered. Rebuild fills them from the spec.
  absl::InlinedVector<std::pair<std::string, int>, 2> group_index;
  bool covers_pods = false;
  // Kueue's IsTASOnly for the spec, cached at the topology inventory's generation (which every
  // change of the flavors bumps); Rebuild clears it with a new spec.
  mutable bool topology_only = false;
  mutable int64_t topology_only_generation = -1;
  // Kueue's AllocatableResourceGeneration: changes whenever a workload releases this queue's
  // quota or the quota tree is rebuilt, so a flavor scan recorded before it may have missed
  // quota that is free now. Taken from one counter across queues (QueueRouter), so two queues
  // never share a value.
  int64_t allocatable_generation = 0;
  ClusterQueueSpec spec;
  // Admitted and evicting workloads.
  HeldWorkloads holding;
  // Why the queue is inactive (for its status condition).
  std::string inactive_reason;
  // Kueue's condition message when its admission checks keep it inactive ("Can't admit new
  // workloads: references missing AdmissionCheck(s): a."); empty otherwise.
  std::string inactive_message;

  // The index into spec.resource_groups of the group covering `resource` (-1: none). A queue
  // covers a few resources, so a scan of the inline list beats a hash probe.
  int GroupOf(absl::string_view resource) const {
    for (const auto& [name, group] : group_index) {
      if (name == resource) return group;
    }
    return -1;
  }
};

// Where a workload's LocalQueue leads: the ClusterQueue it queues in (null when it cannot be
// queued) and, when it cannot be admitted there now, why.
struct Route {
  ClusterQueueRuntime* cluster_queue = nullptr;
  std::string blocked_message;
  // The pending reason that goes with `blocked_message` (Kueue's getQueueBlocker): a missing or
  // terminating queue is Misconfigured, a stopped or inactive one Suspended.
  PendingReason blocked_reason = PendingReason::kPendingEvaluation;
};

// The ClusterQueues' runtimes and the routing of workloads to them: LocalQueue -> ClusterQueue,
// and which ClusterQueue each pending workload is queued in. Reads the configuration from the
// registry it is given. Not thread-safe.
class QueueRouter {
 public:
  explicit QueueRouter(const ConfigRegistry& config) : config_(config) {}
  // Holds pointers to its own runtimes.
  QueueRouter(const QueueRouter&) = delete;
  QueueRouter& operator=(const QueueRouter&) = delete;

  Route RouteOf(const Workload& wl);

  // After the quota tree was rebuilt from the registry's specs: drops the runtimes of deleted
  // ClusterQueues (with their queued entries), refreshes the others' spec and node, empties
  // every holding set (the caller re-files the workloads holding quota) and rebuilds the
  // lookup indexes.
  void Rebuild(const QuotaTree& tree);
  // Active unless stopped, terminating, in a cohort cycle, naming a missing flavor, or naming
  // admission checks that are missing or inactive (or break MultiKueue's rules). An
  // inactive ClusterQueue admits nothing and, as it is not in Kueue's scheduling snapshot, is
  // no preemption target either; its quota and usage still count in its cohort. Marks each
  // queue's tree node (QuotaNode::active) the same.
  void RecomputeActivity(const QuotaTree& tree);

  const ClusterQueueRuntime* cluster_queue(absl::string_view name) const {
    auto it = by_name_.find(name);
    return it == by_name_.end() ? nullptr : it->second;
  }
  ClusterQueueRuntime* mutable_cluster_queue(absl::string_view name) {
    auto it = by_name_.find(name);
    return it == by_name_.end() ? nullptr : it->second;
  }
  // The ClusterQueue of a quota-tree node (null for cohorts).
  const ClusterQueueRuntime* cluster_queue(const QuotaNode* node) const {
    auto it = by_node_.find(node);
    return it == by_node_.end() ? nullptr : it->second;
  }
  // The runtimes in name order (the map's), as one array: a cycle walks every ClusterQueue, and
  // walking the map's nodes was a chain of dependent cache misses. Rebuilt with the map.
  const std::vector<ClusterQueueRuntime*>& in_order() const { return in_order_; }
  std::map<std::string, ClusterQueueRuntime, std::less<>>& runtimes() { return cluster_queues_; }
  const std::map<std::string, ClusterQueueRuntime, std::less<>>& runtimes() const {
    return cluster_queues_;
  }

  // The ClusterQueue a pending workload is queued in, or null.
  ClusterQueueRuntime* QueuedIn(WorkloadId id) const {
    auto it = queued_in_.find(id);
    return it == queued_in_.end() ? nullptr : it->second;
  }
  // Records that the workload's key was (or is about to be) pushed into `cq`'s queue.
  void MarkQueued(WorkloadId id, ClusterQueueRuntime& cq) { queued_in_[id] = &cq; }
  // Takes the workload out of the queue it is in, if any.
  void Unqueue(WorkloadId id);
  void ReserveQueued(size_t n) { queued_in_.reserve(queued_in_.size() + n); }
  // Gives `cq` a new allocatable generation.
  void BumpAllocatableGeneration(ClusterQueueRuntime& cq) {
    cq.allocatable_generation = ++generations_issued_;
  }

 private:
  // Kueue's admission-check reasons for an inactive queue (core/admission_checks.h).
  void ApplyCheckActivity(ClusterQueueRuntime& cq) const;

  const ConfigRegistry& config_;
  int64_t generations_issued_ = 0;
  std::map<std::string, ClusterQueueRuntime, std::less<>> cluster_queues_;
  // Lookup indexes into cluster_queues_ (the hot paths look queues up per workload and per
  // tree node), rebuilt with the quota tree.
  absl::flat_hash_map<std::string, ClusterQueueRuntime*> by_name_;
  absl::flat_hash_map<const QuotaNode*, ClusterQueueRuntime*> by_node_;
  std::vector<ClusterQueueRuntime*> in_order_;
  // Pending workload -> ClusterQueue it is queued in. A ClusterQueue's entries go before its
  // runtime does (Rebuild).
  absl::flat_hash_map<WorkloadId, ClusterQueueRuntime*> queued_in_;
};

}  // namespace tollgate::core
