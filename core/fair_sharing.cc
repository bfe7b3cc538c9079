#include "core/fair_sharing.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "absl/container/inlined_vector.h"
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

bool DominantResourceShare::IsBorrowingOn(
    absl::Span<const std::pair<FrId, int64_t>> request) const {
  for (FrId fr : borrowed_frs) {
    auto it =
        std::lower_bound(request.begin(), request.end(), fr,
                         [](const std::pair<FrId, int64_t>& r, FrId f) { return r.first < f; });
    if (it != request.end() && it->first == fr && it->second > 0) return true;
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

  // Per resource name (over its flavors): what the node borrows, then what the parent could lend.
  // A handful of resources at most, so flat lists searched by name instead of maps that allocate
  // for each of the many shares a fair-sharing cycle computes.
  struct PerResource {
    const std::string* resource;
    int64_t borrowed;
    int64_t lendable;
  };
  absl::InlinedVector<PerResource, 4> per_resource;
  for (FrId fr : node.subtree_resources()) {
    int64_t request = 0;
    if (extra != nullptr) {
      auto it = extra->find(fr);
      if (it != extra->end()) request = it->second;
    }
    const int64_t borrowed = SatSub(SatAdd(request, node.Usage(fr)), node.SubtreeQuota(fr));
    if (borrowed > 0) {
      const std::string& resource = index.Resource(fr);
      auto it = std::find_if(per_resource.begin(), per_resource.end(),
                             [&](const PerResource& r) { return *r.resource == resource; });
      if (it == per_resource.end()) {
        per_resource.push_back(PerResource{&resource, borrowed, 0});
      } else {
        it->borrowed = SatAdd(it->borrowed, borrowed);
      }
      drs.borrowed_frs.push_back(fr);
    }
  }
  if (per_resource.empty()) return drs;
  drs.borrowing = true;

  // What the parent could lend, per resource, over every flavor-resource the tree knows.
  const QuotaNode* parent = node.parent();
  const QuotaNode* root = parent;
  while (root->parent() != nullptr) root = root->parent();
  for (FrId fr : root->subtree_resources()) {
    const std::string& resource = index.Resource(fr);
    auto it = std::find_if(per_resource.begin(), per_resource.end(),
                           [&](const PerResource& r) { return *r.resource == resource; });
    if (it != per_resource.end())
      it->lendable = SatAdd(it->lendable, parent->PotentialAvailable(fr));
  }
  // Iterating in resource-name order makes ties pick the smallest name, as Kueue does.
  std::sort(per_resource.begin(), per_resource.end(),
            [](const PerResource& a, const PerResource& b) { return *a.resource < *b.resource; });
  const std::string* dominant = nullptr;
  for (const PerResource& r : per_resource) {
    if (r.lendable <= 0) continue;
    const double ratio = static_cast<double>(r.borrowed) * 1000.0 / static_cast<double>(r.lendable);
    if (ratio > drs.unweighted_ratio) {
      drs.unweighted_ratio = ratio;
      dominant = r.resource;
    }
  }
  if (dominant != nullptr) drs.dominant_resource = *dominant;
  return drs;
}

}  // namespace tollgate::core
