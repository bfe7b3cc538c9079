#include "core/fair_sharing.h"

#include <cmath>
#include <limits>

#include "core/saturating.h"

namespace tollgate::core {

double DominantResourceShare::PreciseWeightedShare() const {
  if (IsZero()) return 0.0;
  if (fair_weight == 0) return std::numeric_limits<double>::infinity();
  return unweighted_ratio / fair_weight;
}

int64_t DominantResourceShare::RoundedWeightedShare() const {
  if (ZeroWeightBorrows()) return std::numeric_limits<int64_t>::max();
  return static_cast<int64_t>(std::ceil(PreciseWeightedShare()));
}

bool DominantResourceShare::IsBorrowingOn(const std::map<FrId, int64_t>& request) const {
  for (FrId fr : borrowed_frs) {
    auto it = request.find(fr);
    if (it != request.end() && it->second > 0) return true;
  }
  return false;
}

int CompareDrs(const DominantResourceShare& a, const DominantResourceShare& b) {
  auto compare = [](double x, double y) { return x < y ? -1 : (x > y ? 1 : 0); };
  if (a.ZeroWeightBorrows() && b.ZeroWeightBorrows()) {
    return compare(a.unweighted_ratio, b.unweighted_ratio);
  }
  if (a.ZeroWeightBorrows()) return 1;
  if (b.ZeroWeightBorrows()) return -1;
  return compare(a.PreciseWeightedShare(), b.PreciseWeightedShare());
}

DominantResourceShare ComputeDrs(const QuotaNode& node, const FlavorResourceIndex& index,
                                 const std::map<FrId, int64_t>* extra) {
  DominantResourceShare drs;
  drs.fair_weight = node.fair_weight();
  if (!node.HasParent()) return drs;

  std::map<std::string, int64_t> borrowed_by_resource;
  for (FrId fr : node.subtree_resources()) {
    int64_t request = 0;
    if (extra != nullptr) {
      auto it = extra->find(fr);
      if (it != extra->end()) request = it->second;
    }
    const int64_t borrowed = SatSub(SatAdd(request, node.Usage(fr)), node.SubtreeQuota(fr));
    if (borrowed > 0) {
      int64_t& total = borrowed_by_resource[index.Resource(fr)];
      total = SatAdd(total, borrowed);
      drs.borrowed_frs.push_back(fr);
    }
  }
  if (borrowed_by_resource.empty()) return drs;
  drs.borrowing = true;

  // What the parent could lend, per resource, over every flavor-resource the tree knows.
  const QuotaNode* parent = node.parent();
  const QuotaNode* root = parent;
  while (root->parent() != nullptr) root = root->parent();
  std::map<std::string, int64_t> lendable;
  for (FrId fr : root->subtree_resources()) {
    int64_t& total = lendable[index.Resource(fr)];
    total = SatAdd(total, parent->PotentialAvailable(fr));
  }
  // Iterating in resource-name order makes ties pick the smallest name, as Kueue does.
  for (const auto& [resource, borrowed] : borrowed_by_resource) {
    const int64_t lr = lendable[resource];
    if (lr <= 0) continue;
    const double ratio = static_cast<double>(borrowed) * 1000.0 / static_cast<double>(lr);
    if (ratio > drs.unweighted_ratio) {
      drs.unweighted_ratio = ratio;
      drs.dominant_resource = resource;
    }
  }
  return drs;
}

}  // namespace tollgate::core
