#pragma once

#include <set>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "core/cluster_state.h"
#include "core/cycle_plan.h"
#include "core/flavor_assigner.h"
#include "core/preemption_planner.h"

namespace tollgate::core {

// One Kueue scheduling cycle as a pure decision: take the head of every active ClusterQueue,
// assign flavors (and find preemption targets where needed), order the heads as Kueue does
// (no borrowing first, then higher priority, then older), and admit, preempt or requeue each in
// that order against the quota left by the ones before it. The state's usage is changed only
// temporarily and restored before returning. Not thread-safe.
class AdmissionPlanner {
 public:
  explicit AdmissionPlanner(ClusterState& state) : state_(state) {}

  CyclePlan PlanCycle(absl::Time now, int64_t cycle);

  struct Evaluation {
    FlavorAssignment assignment;
    std::vector<PreemptionTarget> targets;
  };
  // Kueue's getInitialAssignments: the full assignment, else one with preemption targets, else
  // a partial admission found by binary search over the pod counts (down to minCount). A
  // recomputation within the cycle passes the head's nominated assignment: only its flavors
  // are considered (Kueue's NominationMapping). `resume` continues each flavor search where the
  // workload's last evaluation stopped (Kueue's LastAssignment). `gone` are workloads the
  // evaluation treats as already removed (their usage taken out by the caller): no victims.
  Evaluation Evaluate(const Workload& wl, const ClusterQueueRuntime& cq, absl::Time now,
                      const FlavorAssignment* nominated = nullptr,
                      const FlavorScanProgress* resume = nullptr,
                      const std::set<WorkloadId>* gone = nullptr);

  // One pending workload planned ahead of queue order (ClusterState::AdmitNow), with the
  // decisions a cycle makes for a head that is evaluated alone: its admission when it fits;
  // else, when preemption can make room, the preemptions and a pending decision waiting for
  // them; else nothing to apply.
  struct SinglePlan {
    enum class Outcome { kAdmit, kPreempt, kPending };
    Outcome outcome = Outcome::kPending;
    // Applied with ClusterState::ApplyCycle.
    CyclePlan plan;
    // kPreempt: the admission it waits for and every target (also those already evicting,
    // which need no new decision).
    Admission admission;
    std::vector<WorkloadId> victims;
    // kPending: why it does not fit.
    std::string message;
  };
  SinglePlan PlanOne(const Workload& wl, const ClusterQueueRuntime& cq, absl::Time now,
                     int64_t cycle);

 private:
  ClusterState& state_;
};

}  // namespace tollgate::core
