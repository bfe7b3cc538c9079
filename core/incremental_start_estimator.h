#pragma once

// Start estimates kept between revisions: each independent tree's estimates (EstimateTree) are
// kept with a copy of what its forward run read, and a later snapshot re-simulates only the trees
// whose inputs differ. The answer is the one EstimatePendingStarts gives for the same snapshot,
// except that a reused tree's estimates were made at its own earlier `now` (at most `max_age`
// before). docs/start-estimates.md ("Cost") has the why.

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/admission_checks.h"
#include "core/object_kind.h"
#include "core/start_estimator.h"
#include "core/types.h"
#include "core/workload.h"

namespace tollgate::core {

// Not thread-safe. Feed it snapshots of one ClusterState (the scheduler configuration is fixed
// for a state's life, so it is not compared, and the runtime history is compared per LocalQueue).
class IncrementalStartEstimator {
 public:
  // `max_age`: a tree's estimates made more than this before a snapshot's `now` are made again
  // even when nothing it read changed (a running workload's expected end moves as it runs).
  IncrementalStartEstimator(StartEstimateOptions options, absl::Duration max_age)
      : options_(std::move(options)), max_age_(max_age) {}

  // Estimates for every pending workload of `snapshot`, re-simulating only the trees whose
  // inputs changed or aged. steps and cycles count the simulated trees only.
  absl::StatusOr<StartEstimates> Estimate(const EstimateSnapshot& snapshot);

  // The names of the trees the last Estimate simulated (EstimateTree::name), sorted.
  const std::vector<std::string>& last_simulated() const { return last_simulated_; }
  const StartEstimateOptions& options() const { return options_; }

 private:
  // The configuration every tree reads.
  struct SharedInputs {
    std::map<std::string, NamespaceSpec> namespaces;
    std::map<std::string, ResourceFlavorSpec> flavors;
    std::map<std::string, PriorityClassSpec> workload_priority_classes;
    std::map<std::string, PriorityClassSpec> pod_priority_classes;
    std::map<std::string, AdmissionCheckRuntime> admission_checks;
    std::map<std::pair<ObjectKind, std::string>, absl::Time> terminating;
    bool operator==(const SharedInputs&) const = default;
  };
  // What one tree's forward run read besides SharedInputs. Workload copies are compared by
  // identity: a snapshot shares the copy of a workload unchanged since the previous one, and
  // holding the copies here keeps an address from being reused by another workload.
  struct TreeInputs {
    std::vector<CohortSpec> cohorts;
    std::vector<ClusterQueueSpec> cluster_queues;
    std::vector<LocalQueueSpec> local_queues;
    std::vector<std::shared_ptr<const Workload>> workloads;
    std::vector<std::pair<std::string, std::deque<absl::Duration>>> history;
    bool operator==(const TreeInputs&) const = default;
  };
  struct TreeResult {
    TreeInputs inputs;
    StartEstimates estimates;
  };

  static SharedInputs SharedInputsOf(const EstimateSnapshot& snapshot);
  static TreeInputs TreeInputsOf(const EstimateSnapshot& snapshot, const EstimateTree& tree);

  const StartEstimateOptions options_;
  const absl::Duration max_age_;
  SharedInputs shared_;
  std::map<std::string, TreeResult> trees_;
  std::vector<std::string> last_simulated_;
};

}  // namespace tollgate::core
