#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "core/workload.h"

namespace tollgate::core {

class ClusterState;
struct ClusterQueueRuntime;

// Read-only questions about a ClusterState that the API's status and visibility calls ask:
// free functions over a const state, so answering them can never change it.

// Per flavor and resource usage of one queue, as Kueue's status reports it.
struct ResourceUsageRow {
  std::string flavor;
  std::string resource;
  int64_t total = 0;
  int64_t borrowed = 0;
};

struct QueueCounts {
  // Kueue's pendingWorkloads: the workloads waiting in the queue (not those kept out of it:
  // admission-gated, deactivated, held or waiting for replacement pods, nor any of a stopped
  // LocalQueue's).
  int64_t pending = 0;
  // Kueue's reservingWorkloads: every workload holding quota (evicting ones until released).
  int64_t reserving = 0;
  // Kueue's admittedWorkloads: those of them past their admission checks.
  int64_t admitted = 0;
};

struct PendingPosition {
  WorkloadId id = 0;
  std::string cluster_queue;
  int64_t position_in_cluster_queue = 0;
  int64_t position_in_local_queue = 0;
};

std::vector<ResourceUsageRow> ClusterQueueUsage(const ClusterState& state, absl::string_view name);
std::vector<ResourceUsageRow> LocalQueueUsage(const ClusterState& state,
                                              absl::string_view namespace_name,
                                              absl::string_view name);
QueueCounts ClusterQueueCounts(const ClusterState& state, absl::string_view name);
QueueCounts LocalQueueCounts(const ClusterState& state, absl::string_view namespace_name,
                             absl::string_view name);
// Pending workloads of a ClusterQueue or LocalQueue in the order they would be admitted.
std::vector<PendingPosition> PendingInClusterQueue(const ClusterState& state,
                                                   absl::string_view name);
std::vector<PendingPosition> PendingInLocalQueue(const ClusterState& state,
                                                 absl::string_view namespace_name,
                                                 absl::string_view name);
// Kueue's weightedShare of a ClusterQueue or Cohort (0 when not borrowing).
int64_t WeightedShare(const ClusterState& state, absl::string_view name);

}  // namespace tollgate::core
