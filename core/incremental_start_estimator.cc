#include "core/incremental_start_estimator.h"

#include <utility>

#include "core/config_registry.h"
#include "core/runtime_history.h"

namespace tollgate::core {

IncrementalStartEstimator::SharedInputs IncrementalStartEstimator::SharedInputsOf(
    const EstimateSnapshot& snapshot) {
  SharedInputs shared;
  shared.namespaces = snapshot.namespaces;
  shared.flavors = snapshot.flavors;
  shared.workload_priority_classes = snapshot.workload_priority_classes;
  shared.pod_priority_classes = snapshot.pod_priority_classes;
  shared.admission_checks = snapshot.admission_checks;
  shared.terminating = snapshot.terminating;
  return shared;
}

IncrementalStartEstimator::TreeInputs IncrementalStartEstimator::TreeInputsOf(
    const EstimateSnapshot& snapshot, const EstimateTree& tree) {
  TreeInputs inputs;
  for (const std::string& name : tree.cohorts) inputs.cohorts.push_back(snapshot.cohorts.at(name));
  for (const std::string& name : tree.cluster_queues) {
    inputs.cluster_queues.push_back(snapshot.cluster_queues.at(name));
  }
  for (size_t i : tree.local_queues) inputs.local_queues.push_back(snapshot.local_queues[i]);
  for (size_t i : tree.workloads) inputs.workloads.push_back(snapshot.workloads[i]);
  for (const std::string& key : tree.history_keys) {
    const std::deque<absl::Duration>* samples = snapshot.history.Samples(key);
    if (samples == nullptr) continue;
    inputs.history.emplace_back(key, *samples);
  }
  return inputs;
}

absl::StatusOr<StartEstimates> IncrementalStartEstimator::Estimate(
    const EstimateSnapshot& snapshot) {
  last_simulated_.clear();
  SharedInputs shared = SharedInputsOf(snapshot);
  if (!(shared == shared_)) {
    trees_.clear();
    shared_ = std::move(shared);
  }
  StartEstimates result;
  result.now = snapshot.now;
  std::map<std::string, TreeResult> kept;
  for (const EstimateTree& tree : SplitIntoTrees(snapshot, options_)) {
    if (tree.pending == 0) continue;
    ++result.trees;
    TreeInputs inputs = tree.whole ? TreeInputs{} : TreeInputsOf(snapshot, tree);
    auto previous = trees_.find(tree.name);
    // A whole snapshot (trees linked by Topology Aware Scheduling or a terminating shared object)
    // is always simulated again: its inputs include the nodes and pods, not compared here.
    const bool reusable = !tree.whole && previous != trees_.end() &&
                          snapshot.now >= previous->second.estimates.now &&
                          snapshot.now - previous->second.estimates.now <= max_age_ &&
                          previous->second.inputs == inputs;
    if (reusable) {
      for (const auto& [id, estimate] : previous->second.estimates.by_id) {
        result.by_id.emplace(id, estimate);
      }
      kept.emplace(tree.name, std::move(previous->second));
      continue;
    }
    absl::StatusOr<StartEstimates> estimated = EstimateTreeStarts(snapshot, tree, options_);
    if (!estimated.ok()) {
      trees_.clear();  // some entries were moved to `kept`
      return estimated.status();
    }
    StartEstimates& part = *estimated;
    ++result.trees_simulated;
    result.steps += part.steps;
    result.cycles += part.cycles;
    last_simulated_.push_back(tree.name);
    for (const auto& [id, estimate] : part.by_id) result.by_id.emplace(id, estimate);
    if (!tree.whole) kept.emplace(tree.name, TreeResult{std::move(inputs), std::move(part)});
  }
  trees_ = std::move(kept);
  return result;
}

}  // namespace tollgate::core
