#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "core/quota_tree.h"
#include "core/topology_inventory.h"
#include "core/workload.h"

namespace tollgate::core {

struct AdmissionDecision {
  WorkloadId id = 0;
  Admission admission;
  // Quota the admission takes, per flavor-resource.
  std::vector<std::pair<FrId, int64_t>> usage;
  // The admission's topology placements on the trees that computed them, so applying it counts
  // them by their leaves (ClusterState::AddUsageOf); names are the fallback. Inline for one:
  // a workload usually has one pod set.
  absl::InlinedVector<PlacedTopology, 1> topology_leaves;
};

struct PreemptionDecision {
  WorkloadId victim = 0;
  WorkloadId preemptor = 0;
  // InClusterQueue, InCohortReclamation, InCohortReclaimWhileBorrowing, InCohortFairSharing.
  std::string reason;
  std::string message;
};

enum class RequeueKind {
  // Stays in the active queue: it is retried next cycle (StrictFIFO, pending preemption,
  // skipped because of another admission in this cycle, flavors left to try).
  kImmediate,
  // Parks in the inadmissible set until quota frees up in its cohort tree (BestEffortFIFO).
  kPark,
};

struct PendingDecision {
  WorkloadId id = 0;
  std::string message;
  // The reason its QuotaReserved=False condition gets (Kueue's quotaReservedReason).
  PendingReason reason = PendingReason::kPendingEvaluation;
  RequeueKind requeue = RequeueKind::kImmediate;
  // A preemptor waiting for its victims: its queue's preemptor workload, and in a
  // BestEffortFIFO queue also its sticky head.
  bool preemptor = false;
  bool sticky = false;
  // Where its flavor search stopped, when some resource group has flavors left to try: the
  // workload keeps it for its next evaluation (empty: it starts from the first flavor).
  Boxed<FlavorScanProgress> scan_progress;
};

// What one scheduling cycle decided. ClusterState::ApplyCycle turns it into state.
struct CyclePlan {
  int64_t cycle = 0;
  std::vector<AdmissionDecision> admissions;
  // Only evictions newly issued this cycle.
  std::vector<PreemptionDecision> preemptions;
  std::vector<PendingDecision> pending;
  // waitForPodsReady's blockAdmission: the entries this cycle stopped at, in its order, the
  // head it holds (WaitingForPodsReady) first. Kueue's scheduler waits inside the cycle
  // (waitForPodsReadyIfNeeded), so they are the first taken once every admitted workload is
  // ready; until then no cycle runs. Empty: nothing held.
  std::vector<WorkloadId> held_cycle;
  // The cycle went on with a held cycle's entries: the next one takes fresh heads.
  bool resumed_held_cycle = false;

  // True when applying the plan changes which workloads hold quota or which can be heads:
  // a settle loop stops at the first cycle without progress.
  bool MadeProgress() const {
    if (!admissions.empty() || !preemptions.empty() || resumed_held_cycle) return true;
    for (const PendingDecision& p : pending) {
      // A head with flavors left to try is evaluated differently next cycle (each such cycle
      // moves its search further, so the chain ends).
      if (p.requeue == RequeueKind::kPark || p.scan_progress.has_value()) return true;
    }
    return false;
  }
};

}  // namespace tollgate::core
