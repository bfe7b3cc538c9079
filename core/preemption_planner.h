#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/btree_set.h"
#include "absl/time/time.h"
#include "core/cluster_state.h"
#include "core/flavor_assigner.h"
#include "core/topology_scheduling.h"
#include "core/usage_simulation.h"

namespace tollgate::core {

struct PreemptionTarget {
  WorkloadId id = 0;
  std::string reason;
};

// Chooses preemption victims as Kueue's classical (or, with fair sharing enabled, fair) preemption
// does: candidates from the preemptor's own ClusterQueue (withinClusterQueue) and from active
// ClusterQueues of its cohort tree that use more than their quota (reclaimWithinCohort,
// borrowWithinCohort, hierarchical reclaim), ordered evicted-first, other queues before its own,
// lower priority first, most recently admitted first; it removes candidates until the preemptor
// fits, then adds back those not needed. Not thread-safe; lives for one cycle.
class PreemptionPlanner {
 public:
  // `gone`, when set, are workloads to plan as if they had already left their ClusterQueues:
  // their usage must be taken out by the caller (UsageSimulation); here they are no candidates
  // (Kueue's Snapshot.SimulateWorkloadRemoval takes them out of the queues' workloads too).
  PreemptionPlanner(ClusterState& state, absl::Time now, const std::set<WorkloadId>* gone = nullptr)
      : state_(state), now_(now), gone_(gone) {}

  // `topology`, when set, are the preemptor's placement requests: victims are chosen until they
  // fit too (Kueue's workloadFits with TAS: fragmentation-aware preemption).
  std::vector<PreemptionTarget> GetTargets(const Workload& preemptor, const ClusterQueueRuntime& cq,
                                           const std::map<FrId, int64_t>& usage,
                                           const std::vector<FrId>& frs_need_preemption,
                                           const WorkloadTopologyRequests* topology = nullptr);

 private:
  enum class Variant {
    kNever,
    kWithinClusterQueue,
    kHierarchicalReclaim,
    kReclaimWithoutBorrowing,
    kReclaimWhileBorrowing,
  };
  struct Candidate {
    const Workload* wl;
    const ClusterQueueRuntime* cq;
    const QuotaNode* lca;
    Variant variant;
  };
  struct Context {
    const Workload& preemptor;
    // Its effective priority (core/priority_boost.h), read once per plan.
    int64_t preemptor_priority;
    const ClusterQueueRuntime& cq;
    const std::map<FrId, int64_t>& usage;
    const std::vector<FrId>& frs;
    const WorkloadTopologyRequests* topology = nullptr;
  };

  static const char* ReasonOf(Variant variant);
  std::vector<PreemptionTarget> Classical(const Context& ctx);
  // Kueue's fair-sharing preemption: victims from the ClusterQueues with the highest dominant
  // resource share first, as long as the chosen strategy says the preemptor's share stays
  // below the victim's. In fair_preemption.cc.
  std::vector<PreemptionTarget> Fair(const Context& ctx);
  bool FitsForFairSharing(const Context& ctx);
  Variant Classify(const Context& ctx, const Workload& candidate,
                   const ClusterQueueRuntime& candidate_cq, bool hierarchical_advantage) const;
  // A ClusterQueue whose workloads are candidates, and how (see Classify).
  struct Source {
    const ClusterQueueRuntime* cq;
    const QuotaNode* lca;
    bool hierarchical_advantage;
  };
  class CandidateStream;
  void CollectSources(const Context& ctx, const QuotaNode& current, const QuotaNode& subtree_root,
                      const QuotaNode* skip, bool hierarchical_advantage,
                      std::vector<Source>& out) const;
  // Non-preemptible workloads, those protected by their queue's preemption rate limit and those
  // planned as gone never are.
  bool MayBeVictim(const Workload& wl, const ClusterQueueRuntime& cq) const;
  bool CandidateIsValid(const Context& ctx, const Candidate& c, bool borrowing) const;
  bool WorkloadFits(const Context& ctx, bool allow_borrowing) const;
  bool Before(const Context& ctx, const Candidate& a, const Candidate& b) const;

  ClusterState& state_;
  absl::Time now_;
  const std::set<WorkloadId>* gone_;
};

// True when the preemptor's policy lets it preempt the candidate (Kueue's
// SatisfiesPreemptionPolicy).
bool SatisfiesPreemptionPolicy(const ClusterState& state, const Workload& preemptor,
                               const Workload& candidate, PreemptionPolicy policy);

bool IsWithinNominalInResources(const QuotaNode& node, const std::vector<FrId>& frs);

// Whether another ClusterQueue's workloads may be preempted at all: only an active one's. Kueue
// takes candidates from its scheduling snapshot, which leaves out inactive ClusterQueues
// (stopped, terminating, missing a flavor, in a cohort cycle), while their admitted workloads
// still count in the cohort's usage: a lender cannot reclaim from a held or terminating
// borrower until it resumes or its workloads end (docs/preemption.md).
bool IsPreemptionTarget(const ClusterQueueRuntime& cq);

// Whether the workload holds quota in any of the flavor-resources.
bool UsesResources(const Workload& wl, const std::vector<FrId>& frs);

// The flavor assigner's question answered with the preemption planner.
class PlannerPreemptionOracle : public PreemptionOracle {
 public:
  PlannerPreemptionOracle(ClusterState& state, PreemptionPlanner& planner,
                          const Workload& preemptor, const ClusterQueueRuntime& cq)
      : state_(state), planner_(planner), preemptor_(preemptor), cq_(cq) {}

  std::pair<PreemptionPossibility, int> SimulatePreemption(FrId fr, int64_t quantity) override;

 private:
  ClusterState& state_;
  PreemptionPlanner& planner_;
  const Workload& preemptor_;
  const ClusterQueueRuntime& cq_;
};

}  // namespace tollgate::core
