#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "core/quota_tree.h"

namespace tollgate::core {

// Kueue's dominant resource share of a ClusterQueue or Cohort: for each resource, what the node
// uses beyond its subtree quota (summed over flavors), per mille of what its parent could lend
// it; the largest of those ratios, divided by the node's fair-sharing weight.
struct DominantResourceShare {
  double fair_weight = 1.0;
  double unweighted_ratio = 0;
  std::string dominant_resource;
  bool borrowing = false;
  std::vector<FrId> borrowed_frs;

  bool IsZero() const { return unweighted_ratio == 0; }
  bool ZeroWeightBorrows() const { return fair_weight == 0 && !IsZero(); }
  // Infinite when a zero-weight node borrows.
  double PreciseWeightedShare() const;
  // The weightedShare Kueue reports in status: rounded up, INT64_MAX for zero weight.
  int64_t RoundedWeightedShare() const;
  // True when the node borrows on a flavor-resource the request asks for.
  bool IsBorrowingOn(const std::map<FrId, int64_t>& request) const;
  // The same for a request sorted by FrId (a flavor assignment's usage).
  bool IsBorrowingOn(absl::Span<const std::pair<FrId, int64_t>> request) const;
};

// Kueue's CompareDRS: -1, 0 or 1. Zero-weight borrowers sort after everyone else.
int CompareDrs(const DominantResourceShare& a, const DominantResourceShare& b);

// The node's share with its current usage, plus `extra` usage when given.
DominantResourceShare ComputeDrs(const QuotaNode& node, const FlavorResourceIndex& index,
                                 const std::map<FrId, int64_t>* extra = nullptr);

}  // namespace tollgate::core
