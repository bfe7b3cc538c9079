#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/workload.h"

namespace tollgate::core {

class ClusterState;

// Who holds a cohort's quota, who borrows it, and which policy keeps a waiting workload from
// taking it back: the answer to "my queue shows 16 of 32 CPU used, why does my job wait?".
// Read-only, like visibility.h: free functions over a const state. Hierarchical cohorts are
// walked from the root of the tree, so a borrower in a sibling sub-cohort is found too.

// One ClusterQueue or Cohort of the tree, for one flavor and resource.
struct QuotaHolder {
  std::string name;
  bool is_cohort = false;
  // The cohort it belongs to (empty for the root).
  std::string parent;
  // 0 for the root cohort, 1 for its members, and so on.
  int depth = 0;
  std::string flavor;
  std::string resource;
  // Its own nominal quota (0 where it lists none, always for an implicit cohort).
  int64_t nominal = 0;
  // Its subtree quota: nominal plus what its members lend it (a ClusterQueue's is its nominal).
  int64_t quota = 0;
  // A ClusterQueue: its admitted and evicting workloads' usage. A cohort: its ClusterQueues'.
  int64_t usage = 0;
  // What it takes from its parent above its own quota (Kueue's "borrowing").
  int64_t borrowed = 0;
  // What it offers its parent: its quota, or less under a lendingLimit (0 for the root).
  int64_t lendable = 0;
  std::optional<int64_t> borrowing_limit;
  std::optional<int64_t> lending_limit;
};

// A cohort's totals for one flavor and resource.
struct CohortResourceTotals {
  std::string flavor;
  std::string resource;
  // Every nominal quota in the cohort's subtree, its own included.
  int64_t nominal = 0;
  // The part its members share: its own quota plus what they lend (Kueue's subtree quota).
  int64_t shared = 0;
  // Its ClusterQueues' usage.
  int64_t usage = 0;
  // Taken from its parent above its shared quota.
  int64_t borrowed = 0;
  // What one more workload could take through it now.
  int64_t available = 0;
};

// A policy or limit that stops a pending workload from getting quota the cohort holds.
struct ReclaimBlocker {
  // reclaimWithinCohort, borrowWithinCohort, borrowingLimit, lendingLimit, priority,
  // nonPreemptible, inUseByOwners, fairSharing or inactiveClusterQueue (the borrowers are
  // stopped or terminating, and an inactive queue's workloads are not preempted).
  std::string policy;
  // Whose setting it is: "ClusterQueue", "Cohort" or "Workload", and its name.
  std::string object_kind;
  std::string object;
  std::string flavor;
  std::string resource;
  std::string message;
};

struct CohortBreakdown {
  // The cohort asked about, or the ClusterQueue's cohort (empty when it has none).
  std::string cohort;
  std::string parent;
  // Named by a ClusterQueue or a Cohort's parent, with no Cohort object of its own.
  bool implicit = false;
  std::string root;
  // The ClusterQueue whose pending workload is analysed, and that workload (its head pending
  // workload unless one was named).
  std::string cluster_queue;
  std::optional<WorkloadId> workload;
  // The cohort's totals (for `cohort`), per flavor and resource.
  std::vector<CohortResourceTotals> totals;
  // Every node of the tree from the root down (depth first, cohorts before ClusterQueues, by
  // name), per flavor and resource in scope.
  std::vector<QuotaHolder> holders;
  // Why the analysed workload cannot take quota it needs from the cohort; empty when it fits
  // or nothing is pending.
  std::vector<ReclaimBlocker> blockers;
};

// The cohort `name` (explicit or implicit) and its whole tree, for the resources its subtree
// has quota for. NOT_FOUND when no ClusterQueue or Cohort makes it exist.
absl::StatusOr<CohortBreakdown> CohortBreakdownOf(const ClusterState& state,
                                                  absl::string_view name);

// The cohort tree of ClusterQueue `name` for the resources it has quota for, and what stops
// `pending` (a workload waiting for it; its head pending workload when null) from getting the
// quota it needs: then only the flavors and resources that workload asks for are in scope.
// NOT_FOUND for an unknown ClusterQueue; INVALID_ARGUMENT when `pending` is not pending for it.
absl::StatusOr<CohortBreakdown> ClusterQueueBreakdown(const ClusterState& state,
                                                      absl::string_view name,
                                                      const Workload* pending);

}  // namespace tollgate::core
