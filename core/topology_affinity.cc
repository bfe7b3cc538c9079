// Kueue's TASRespectNodeAffinityPreferred (pkg/cache/scheduler/tas_flavor_snapshot.go,
// scheduling_simulator_default.go): a pod set's preferred node affinity scores each node that
// passes the node filters, a domain scores the sum of its children, and the placement ranks the
// domains by score before its own order (topology_placement.cc: Sorted, BestFit,
// FindLevelWithFitDomains). See docs/topology.md.

#include "core/node_matching.h"
#include "core/topology_flavor.h"

namespace tollgate::core {

bool TopologyFlavor::ScorePreferredAffinity(const TopologyPlacementRequest& workers) {
  const std::vector<PreferredSchedulingTerm>* terms = workers.preferred_node_affinity;
  // Kueue scores nodes only where the lowest level is the hostname (a leaf is a node).
  if (!respect_preferred_ || terms == nullptr || terms->empty() || !lowest_is_hostname_ ||
      leaf_nodes_.empty()) {
    return false;
  }
  affinity_score_.assign(domains_.size(), 0);
  // The exclusions are the first phase's to count; these checks only decide which nodes score.
  ExclusionStats ignored;
  bool any = false;
  for (size_t l = 0; l < leaves_.size(); ++l) {
    const NodeSpec& node = leaf_nodes_[l];
    const int64_t score = PreferredAffinityScore(*terms, node.labels, node.name);
    if (score == 0 || !NodeFeasible(static_cast<int>(l), workers, ignored)) continue;
    any = true;
    for (int d = leaves_[l].domain; d >= 0; d = domains_[d].parent) affinity_score_[d] += score;
  }
  // Every domain scoring 0 orders as without scores (and Kueue's extra scan of a required level
  // finds nothing then): the placement keeps its faster paths.
  return any;
}

size_t TopologyFlavor::AffinityTierEnd(const std::vector<int>& domains, size_t from) const {
  const int64_t score = affinity_score_[domains[from]];
  size_t end = from + 1;
  while (end < domains.size() && affinity_score_[domains[end]] == score) ++end;
  return end;
}

}  // namespace tollgate::core
