#pragma once

// "When will it start?": an estimate of each pending workload's start, made by running the
// real scheduler forward on a copy of the state. Running workloads end at their expected end;
// as each ends, the copy runs the same admission cycles tollgated runs, so queue order,
// borrowing, preemption and fair sharing are the real rules, not a model of them. The rules
// for expected runtimes and the cases answered "unknown" are in docs/start-estimates.md.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/admission_checks.h"
#include "core/object_kind.h"
#include "core/runtime_history.h"
#include "core/scheduler_config.h"
#include "core/topology.h"
#include "core/topology_inventory.h"
#include "core/types.h"
#include "core/workload.h"

namespace tollgate::core {

class ClusterState;

// Where a workload's expected runtime comes from.
enum class RuntimeSource {
  // Its declared maximum execution time if it has one, else its LocalQueue's history.
  kDeclaredThenHistory,
  // Only the LocalQueue's history (what Tollgate learns).
  kHistoryOnly,
  // Only declared maximum execution times: Slurm's rule (every job runs to its limit).
  kDeclaredOnly,
};

struct StartEstimateOptions {
  RuntimeSource runtimes = RuntimeSource::kDeclaredThenHistory;
  // Where set, a workload's declared runtime comes from here instead of its
  // spec.maximumExecutionTimeSeconds (nullopt: none declared). For what-if limits that are not
  // enforced, such as a replay's Slurm-rule time limits.
  std::function<std::optional<absl::Duration>(const Workload&)> declared_runtime;
  // The likely start comes from a run where every workload learned from history runs for this
  // quantile of its LocalQueue's durations; the late start from a second run at late_quantile
  // (no second run when late_quantile <= 0, or when no runtime came from history).
  double likely_quantile = 0.5;
  double late_quantile = 0.9;
  // Bounds on the work per estimate: at most max_steps instants at which workloads end, at
  // most max_cycles scheduling cycles in all, and nothing beyond now + horizon. A workload
  // not started within them is answered "not before" the last instant simulated.
  // The bounds hold per independent tree (see EstimateTree): each tree's runs have their own.
  int max_steps = 256;
  int64_t max_cycles = 5000;
  absl::Duration horizon = absl::Hours(24 * 14);
  // Run each independent tree on its own copy (the default), or the whole state as one: the
  // estimate before trees were split, kept for tests that compare the two.
  bool independent_trees = true;
};

struct StartEstimate {
  enum class Kind {
    // `likely` (and `late` when set) are estimated start times.
    kEstimated,
    // Not started within the simulation's bounds: it starts no earlier than `likely`.
    kNotBefore,
    // The inputs do not support an estimate; `reason` says why.
    kUnknown,
  };
  Kind kind = Kind::kUnknown;
  absl::Time likely = absl::InfinitePast();
  // Start in the late run; unset when there was none or it did not start within the bounds.
  std::optional<absl::Time> late;
  // How the runtimes the estimate rests on were obtained, e.g.
  // "runtimes: 3 declared, 12 from LocalQueue history".
  std::string basis;
  std::string reason;

  bool operator==(const StartEstimate&) const = default;
};

struct StartEstimates {
  absl::Time now;
  // By the live state's workload id; every pending, active workload has an entry.
  std::map<WorkloadId, StartEstimate> by_id;
  // Cost: simulated instants and scheduling cycles over every run made for this answer (an
  // IncrementalStartEstimator counts only the trees it recomputed).
  int64_t steps = 0;
  int64_t cycles = 0;
  // Independent trees with pending workloads, and how many of them were simulated for this answer
  // (the rest were reused).
  int64_t trees = 0;
  int64_t trees_simulated = 0;
};

// What an estimate reads, copied out of the live state by the thread that owns it: the
// configuration objects, the runtime history and every workload that is pending or holds
// quota. An estimate made from a snapshot reads nothing else, so it can run on any thread while
// the live state moves on; that keeps the forward simulation (the expensive part) off the
// executor thread. Immutable once taken.
struct EstimateSnapshot {
  absl::Time now;
  SchedulerConfig config;
  std::map<std::string, NamespaceSpec> namespaces;
  std::map<std::string, ResourceFlavorSpec> flavors;
  std::map<std::string, CohortSpec> cohorts;
  std::map<std::string, ClusterQueueSpec> cluster_queues;
  std::vector<LocalQueueSpec> local_queues;
  std::map<std::string, PriorityClassSpec> workload_priority_classes;
  std::map<std::string, PriorityClassSpec> pod_priority_classes;
  std::map<std::string, AdmissionCheckRuntime> admission_checks;
  // Topology Aware Scheduling: the Topology objects, the nodes (shared with the previous
  // snapshot while the inventory's generation is the same) and the pods Tollgate does not place.
  std::map<std::string, TopologySpec> topologies;
  std::shared_ptr<const std::map<std::string, NodeSpec>> nodes;
  int64_t topology_generation = -1;
  std::map<std::string, TopologyInventory::PodUsage> reported_pods;
  // Objects deleted while in use (a terminating ClusterQueue admits nothing and is no
  // preemption target), keyed as ConfigRegistry::terminating().
  std::map<std::pair<ObjectKind, std::string>, absl::Time> terminating;
  RuntimeHistory history;
  // Pending or holding quota, in the live state's id order, each keeping its live id. Events
  // are left out (the copy's decisions never read them). Shared, so a later snapshot reuses
  // the copy of every workload that has not changed since (see TakeEstimateSnapshot).
  std::vector<std::shared_ptr<const Workload>> workloads;
  // How many workload copies were shared with the previous snapshot (cost accounting).
  int64_t reused = 0;
};

// One independent part of a snapshot: a cohort tree (every Cohort and ClusterQueue linked by
// cohort and parent names), or a ClusterQueue without a cohort, with the LocalQueues that point
// at its ClusterQueues and the workloads of those LocalQueues or holding quota in those
// ClusterQueues. Quota, borrowing, preemption and fair sharing never cross trees, and every
// time-based rule of the scheduler is a timer of one workload or one LocalQueue, so one tree's
// forward run is the same whether other trees run beside it or not; what the runs share (the
// configuration, namespaces, flavors, priority classes, admission checks) is global and read by
// every tree. Topology Aware Scheduling places pods of every tree on the same nodes, so a
// snapshot with Topologies, nodes or reported pods is one tree (`whole` is set).
struct EstimateTree {
  // The smallest ClusterQueue name of the tree; without one, the smallest LocalQueue key or
  // cohort name (as "LocalQueue ns/name", "Cohort name"). "" for a whole snapshot.
  std::string name;
  bool whole = false;
  std::vector<std::string> cohorts;         // names, sorted
  std::vector<std::string> cluster_queues;  // names, sorted
  std::vector<size_t> local_queues;         // indices into EstimateSnapshot::local_queues
  // Keys (LocalQueueKey) of the LocalQueues the tree's workloads name, for their runtime history.
  std::vector<std::string> history_keys;
  std::vector<size_t> workloads;  // indices into EstimateSnapshot::workloads, in id order
  int64_t pending = 0;
};

// The snapshot's independent trees, by name. With `options.independent_trees` false, or when
// Topology Aware Scheduling links every tree, one tree that is the whole snapshot.
std::vector<EstimateTree> SplitIntoTrees(const EstimateSnapshot& snapshot,
                                         const StartEstimateOptions& options);

// Estimates for the pending workloads of one tree of the snapshot (every pending workload of
// the snapshot is in exactly one tree; EstimatePendingStarts is the union over the trees).
absl::StatusOr<StartEstimates> EstimateTreeStarts(const EstimateSnapshot& snapshot,
                                                  const EstimateTree& tree,
                                                  const StartEstimateOptions& options);

// Copies what an estimate of `state` at `now` reads. With `previous` (an earlier snapshot of
// the same state), a workload whose store revision (resource_version, set by the executor when
// it persists a change) is the same as in `previous` and that has no change pending since is
// not copied again but shared: at a new revision only the workloads that changed are copied.
// Workloads never persisted (resource_version 0) are always copied.
std::shared_ptr<const EstimateSnapshot> TakeEstimateSnapshot(
    const ClusterState& state, absl::Time now, const EstimateSnapshot* previous = nullptr);

// Estimates for every pending workload of the snapshot, at its `now`: one forward simulation per
// independent tree that has pending workloads.
absl::StatusOr<StartEstimates> EstimatePendingStarts(const EstimateSnapshot& snapshot,
                                                     const StartEstimateOptions& options);
// The same, from the live state (a snapshot taken and estimated at once). `state` is not
// changed.
absl::StatusOr<StartEstimates> EstimatePendingStarts(const ClusterState& state, absl::Time now,
                                                     const StartEstimateOptions& options);

// The estimate for `spec` if it were submitted at the snapshot's `now` (an Admit/Submit dry
// run), from a forward simulation of the tree its LocalQueue belongs to. Errors are Submit's (e.g.
// a LocalQueue that does not exist); ALREADY_EXISTS when a workload of the snapshot has its key.
absl::StatusOr<StartEstimate> EstimateSubmission(const EstimateSnapshot& snapshot,
                                                 WorkloadSpec spec,
                                                 const StartEstimateOptions& options);
// The same, from the live state (ALREADY_EXISTS also for a finished workload of that key).
// `state` is not changed.
absl::StatusOr<StartEstimate> EstimateSubmission(const ClusterState& state, WorkloadSpec spec,
                                                 absl::Time now,
                                                 const StartEstimateOptions& options);

// A short human rendering relative to `now`: "in 2h10m (late: 5h)", "now", "not before 3d",
// "unknown: ...".
std::string FormatStartEstimate(const StartEstimate& estimate, absl::Time now);

}  // namespace tollgate::core
