// Kueue's balanced placement (pkg/cache/scheduler/tas_balanced_placement.go, feature gate
// TASBalancedPlacement): a preferred request goes to the fewest domains of its level that hold
// it, each given at least a threshold of slices, the threshold as high as the greedy placement
// allows (the highest of every sibling set of domains one level above the requested one).
// Domains below the threshold are pruned first, so a tight domain cannot take a sliver of the
// request. When nothing reaches a threshold of one slice, or the chosen set cannot be filled,
// the placement falls back to best fit.
//
// Kueue works on copies of the domains it prunes; here the placement's state is changed in
// place and every change is logged, so a candidate set is undone after its evaluation, the
// winner's pruned counts are put back afterwards, and a failure leaves the state as phase one
// left it for best fit. (Each change is also saved for a cached state's undo at the end of the
// placement.)

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/topology_flavor.h"

namespace tollgate::core {

class TopologyFlavor::Balanced {
 public:
  Balanced(TopologyFlavor& flavor, const Params& p)
      : f_(flavor),
        slice_count_(p.count / p.slice_size),
        leader_count_(p.leader_count),
        slice_size_(p.slice_size),
        requested_level_(p.requested_level),
        slice_level_(p.slice_level) {
    // Kueue refills pruned domains without the inner slice layers' sizes.
    flat_.slice_size = p.slice_size;
    flat_.slice_level = p.slice_level;
    flat_.leader_count = p.leader_count;
  }

  // Kueue's findBestDomainsForBalancedPlacement: the threshold (0: balanced placement does not
  // apply) and the pruned sibling set that reaches it (its counts into `pruned`).
  int32_t FindBest(std::vector<int>* set, std::vector<std::pair<int, DomainState>>* pruned);
  // Kueue's applyBalancedPlacementAlgorithm on the pruned set; empty or the failure.
  std::string Apply(std::vector<int> set, int32_t threshold, int* fit_level, std::vector<int>* fit);
  // Puts counts captured by FindBest back, logged.
  void Install(const std::vector<std::pair<int, DomainState>>& states) {
    for (const auto& [d, s] : states) {
      Modify(d);
      f_.state_[d] = s;
    }
  }
  // Undoes every change since `mark` (0: all).
  void RestoreTo(size_t mark) {
    while (log_.size() > mark) {
      f_.state_[log_.back().first] = log_.back().second;
      log_.pop_back();
    }
  }

 private:
  struct Greedy {
    bool fits = false;
    int32_t domains = 0;
    int last_with_leader = -1;
    int last = -1;
  };

  DomainState& S(int d) { return f_.state_[d]; }
  void Modify(int d) {
    log_.emplace_back(d, f_.state_[d]);
    f_.Save(d);
  }
  void ForSubtree(int d, std::vector<int>* out) const {
    out->push_back(d);
    for (int c : f_.domains_[d].children) ForSubtree(c, out);
  }
  std::vector<int> Children(const std::vector<int>& domains) const {
    std::vector<int> out;
    for (int d : domains) {
      const std::vector<int>& children = f_.domains_[d].children;
      out.insert(out.end(), children.begin(), children.end());
    }
    return out;
  }

  Greedy Evaluate(const std::vector<int>& domains, int32_t slice_count, int32_t leader_count);
  int32_t Threshold(int32_t slice_count, const Greedy& g);
  bool SelectOptimal(const std::vector<int>& domains, int32_t slice_count, int32_t leader_count,
                     bool by_entropy, std::vector<int>* out);
  std::string PlaceSlices(const std::vector<int>& domains, int32_t threshold,
                          std::vector<int>* out);
  double Entropy(int d) const;
  void Prune(const std::vector<int>& set, int32_t threshold);
  void PruneNode(int d, int32_t threshold, bool leader_required);
  // Kueue's clearState / clearLeaderCapacity over a subtree (counts only: what else a state
  // carries stays).
  void Clear(int d);
  void ClearLeader(int d);

  TopologyFlavor& f_;
  const int32_t slice_count_;
  const int32_t leader_count_;
  const int32_t slice_size_;
  const int requested_level_;
  const int slice_level_;
  Params flat_;
  // Every state changed, with its value before.
  std::vector<std::pair<int, DomainState>> log_;
};

TopologyFlavor::Balanced::Greedy TopologyFlavor::Balanced::Evaluate(const std::vector<int>& domains,
                                                                    int32_t slice_count,
                                                                    int32_t leader_count) {
  // Kueue's evaluateGreedyAssignment: the domains best fit takes, leaders first.
  Greedy g;
  int32_t remaining = slice_count;
  int32_t remaining_leaders = leader_count;
  std::vector<int> without_leader;
  if (leader_count > 0) {
    const std::vector<int> with_leader = f_.Sorted(domains, false, /*with_leader=*/true);
    size_t i = 0;
    for (; remaining_leaders > 0 && i < with_leader.size() && S(with_leader[i]).leader_count > 0;
         ++i) {
      const DomainState& s = S(with_leader[i]);
      ++g.domains;
      g.last_with_leader = with_leader[i];
      remaining_leaders -= s.leader_count;
      remaining -= s.slice_count_with_leader;
    }
    without_leader =
        f_.Sorted(std::vector<int>(with_leader.begin() + static_cast<long>(i), with_leader.end()),
                  false, /*with_leader=*/false);
  } else {
    without_leader = f_.Sorted(domains, false, /*with_leader=*/false);
  }
  if (remaining_leaders > 0) return {};
  for (size_t i = 0;
       remaining > 0 && i < without_leader.size() && S(without_leader[i]).slice_count > 0; ++i) {
    ++g.domains;
    g.last = without_leader[i];
    remaining -= S(without_leader[i]).slice_count;
  }
  if (remaining > 0) return {};
  g.fits = true;
  return g;
}

int32_t TopologyFlavor::Balanced::Threshold(int32_t slice_count, const Greedy& g) {
  // Kueue's balanceThresholdValue: the most slices every used domain can hold. (Kueue divides
  // by zero for a request of no slices; here it has no threshold.)
  if (g.domains == 0) return 0;
  int32_t threshold = slice_count / g.domains;
  if (g.last_with_leader >= 0) {
    threshold = std::min(threshold, S(g.last_with_leader).slice_count_with_leader);
  }
  if (g.last >= 0) threshold = std::min(threshold, S(g.last).slice_count);
  return threshold;
}

double TopologyFlavor::Balanced::Entropy(int d) const {
  // Kueue's calculateDomainsEntropy of the children's pods (summed in the children's order of
  // values, so equal inputs compare equal).
  const std::vector<int>& children = f_.domains_[d].children;
  int32_t total = 0;
  for (int c : children) total += f_.state_[c].pod_count;
  if (total == 0) return 0.0;
  double entropy = 0.0;
  for (int c : children) {
    const int32_t pods = f_.state_[c].pod_count;
    if (pods <= 0) continue;
    const double share = static_cast<double>(pods) / static_cast<double>(total);
    entropy += -share * std::log2(share);
  }
  return entropy;
}

bool TopologyFlavor::Balanced::SelectOptimal(const std::vector<int>& domains, int32_t slice_count,
                                             int32_t leader_count, bool by_entropy,
                                             std::vector<int>* out) {
  // Kueue's selectOptimalDomainSetToFit: among the sets of as many domains as the greedy
  // placement needs, the first found (domains in the order below) for each (leaders, pods) left,
  // and of those holding every leader the one leaving the fewest pods over.
  const Greedy g = Evaluate(domains, slice_count, leader_count);
  if (!g.fits) return false;
  std::vector<int> ordered = domains;
  if (by_entropy) {
    std::vector<double> entropy(ordered.size());
    std::vector<size_t> idx(ordered.size());
    for (size_t i = 0; i < ordered.size(); ++i) {
      idx[i] = i;
      entropy[i] = Entropy(ordered[i]);
    }
    std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
      const DomainState& x = S(ordered[a]);
      const DomainState& y = S(ordered[b]);
      if (x.leader_count != y.leader_count) return x.leader_count > y.leader_count;
      if (x.slice_count_with_leader != y.slice_count_with_leader) {
        return x.slice_count_with_leader > y.slice_count_with_leader;
      }
      if (entropy[a] != entropy[b]) return entropy[a] > entropy[b];
      return f_.ValuesLess(ordered[a], ordered[b]);
    });
    std::vector<int> sorted(ordered.size());
    for (size_t i = 0; i < idx.size(); ++i) sorted[i] = ordered[idx[i]];
    ordered = std::move(sorted);
  } else {
    std::sort(ordered.begin(), ordered.end(), [this](int a, int b) { return f_.ValuesLess(a, b); });
  }
  const int32_t n = g.domains;
  // placements[i][leaders left][pods left]: a set of i domains.
  using ByPods = std::map<int32_t, std::vector<int>>;
  std::vector<std::map<int32_t, ByPods>> placements(static_cast<size_t>(n) + 1);
  placements[0][leader_count][slice_count * slice_size_] = {};
  for (int d : ordered) {
    const DomainState& s = S(d);
    for (int32_t i = n; i > 0; --i) {
      std::map<int32_t, ByPods>& into = placements[static_cast<size_t>(i)];
      for (const auto& [leaders, by_pods] : placements[static_cast<size_t>(i) - 1]) {
        for (const auto& [pods, placement] : by_pods) {
          if (leaders <= 0 && pods <= 0) continue;
          auto with = [&placement, d] {
            std::vector<int> next;
            next.reserve(placement.size() + 1);
            next.assign(placement.begin(), placement.end());
            next.push_back(d);
            return next;
          };
          if (leaders > 0 && s.leader_count > 0) {
            ByPods& slot = into[leaders - s.leader_count];
            const int32_t left = pods - s.pod_count_with_leader;
            if (slot.find(left) == slot.end()) slot.emplace(left, with());
          }
          if (s.slice_count > 0) {
            ByPods& slot = into[leaders];
            const int32_t left = pods - s.pod_count;
            if (slot.find(left) == slot.end()) slot.emplace(left, with());
          }
        }
      }
    }
  }
  auto full = placements[static_cast<size_t>(n)].find(0);
  if (full == placements[static_cast<size_t>(n)].end()) return false;
  // The largest pods left that is not above zero.
  auto best = full->second.upper_bound(0);
  if (best == full->second.begin()) return false;
  --best;
  *out = best->second;
  return true;
}

std::string TopologyFlavor::Balanced::PlaceSlices(const std::vector<int>& domains,
                                                  int32_t threshold, std::vector<int>* out) {
  // Kueue's placeSlicesOnDomainsBalanced: every domain of the optimal set gets the threshold,
  // the slices beyond it go to the domains in best-fit order (leaders first), each up to what
  // it holds.
  std::vector<int> chosen;
  if (!SelectOptimal(domains, slice_count_, leader_count_, /*by_entropy=*/false, &chosen)) {
    return "TAS Balanced Placement: Cannot find optimal domain set to fit the request";
  }
  if (slice_count_ < static_cast<int32_t>(chosen.size()) * threshold) {
    return "TAS Balanced Placement: Not enough slices to meet the threshold";
  }
  chosen = f_.Sorted(std::move(chosen), false, /*with_leader=*/true);
  int32_t extra = slice_count_ - static_cast<int32_t>(chosen.size()) * threshold;
  int32_t leaders_left = leader_count_;
  for (int d : chosen) {
    Modify(d);
    DomainState& s = S(d);
    int32_t take = 0;
    if (leaders_left > 0) {
      take = std::min(s.slice_count_with_leader - threshold, extra);
      s.leader_count = 1;
      --leaders_left;
    } else if (extra > 0) {
      take = std::min(s.slice_count - threshold, extra);
      s.leader_count = 0;
    } else {
      s.leader_count = 0;
    }
    s.slice_count = threshold + take;
    s.pod_count = s.slice_count * slice_size_;
    s.slice_count_with_leader = s.slice_count;
    s.pod_count_with_leader = s.pod_count - s.leader_count;
    extra -= take;
  }
  if (extra > 0 || leaders_left > 0) {
    return "TAS Balanced Placement: Not all slices or leaders could be placed";
  }
  *out = std::move(chosen);
  return {};
}

void TopologyFlavor::Balanced::Clear(int d) {
  Modify(d);
  DomainState& s = S(d);
  s.pod_count = 0;
  s.slice_count = 0;
  s.pod_count_with_leader = 0;
  s.slice_count_with_leader = 0;
  s.leader_count = 0;
  for (int c : f_.domains_[d].children) Clear(c);
}

void TopologyFlavor::Balanced::ClearLeader(int d) {
  Modify(d);
  DomainState& s = S(d);
  s.pod_count_with_leader = 0;
  s.slice_count_with_leader = 0;
  s.leader_count = 0;
  for (int c : f_.domains_[d].children) ClearLeader(c);
}

void TopologyFlavor::Balanced::PruneNode(int d, int32_t threshold, bool leader_required) {
  const DomainState& s = S(d);
  if (s.slice_count < threshold) {
    Clear(d);
    return;
  }
  // Still a domain for workers, but not for the leader at this threshold.
  if (leader_required && s.leader_count > 0 && s.slice_count_with_leader < threshold) {
    ClearLeader(d);
  }
}

void TopologyFlavor::Balanced::Prune(const std::vector<int>& set, int32_t threshold) {
  // Kueue's pruneDomainsBelowThreshold: the domains below the set's that cannot take the
  // threshold, then the set's domains recounted from what is left.
  const bool leader_required = leader_count_ > 0;
  for (int d : set) {
    for (int c : f_.domains_[d].children) PruneNode(c, threshold, leader_required);
  }
  std::vector<int> subtree;
  for (int d : set) {
    subtree.clear();
    ForSubtree(d, &subtree);
    for (int x : subtree) Modify(x);
    f_.FillHelper(d, flat_, leader_required);
    PruneNode(d, threshold, leader_required);
  }
}

int32_t TopologyFlavor::Balanced::FindBest(std::vector<int>* set,
                                           std::vector<std::pair<int, DomainState>>* pruned) {
  // The sibling sets at the requested level: every root, or the children of each domain one
  // level up (in the order of their values).
  std::vector<std::vector<int>> sets;
  if (requested_level_ == 0) {
    sets.push_back(f_.by_level_[0]);
  } else {
    for (int upper : f_.by_level_[requested_level_ - 1]) {
      sets.push_back(f_.domains_[upper].children);
    }
  }
  int32_t best_threshold = 0;
  int32_t best_domains = 0;
  std::vector<int> subtree;
  for (const std::vector<int>& siblings : sets) {
    const size_t mark = log_.size();
    const std::vector<int> lower = requested_level_ < slice_level_ ? Children(siblings) : siblings;
    const Greedy g = Evaluate(lower, slice_count_, leader_count_);
    if (!g.fits) continue;
    int32_t threshold = Threshold(slice_count_, g);
    int32_t with_leader_reserved = threshold;
    if (leader_count_ > 0 && g.last >= 0) {
      with_leader_reserved = std::min(threshold, S(g.last).slice_count_with_leader);
    }
    if (threshold < best_threshold) continue;
    Prune(siblings, threshold);
    Greedy after = Evaluate(siblings, slice_count_, leader_count_);
    if (!after.fits && with_leader_reserved < threshold) {
      // Again with a lower threshold that leaves room for the leader.
      if (with_leader_reserved <= 0 || with_leader_reserved < best_threshold) {
        RestoreTo(mark);
        continue;
      }
      threshold = with_leader_reserved;
      RestoreTo(mark);
      Prune(siblings, threshold);
      after = Evaluate(siblings, slice_count_, leader_count_);
    }
    if (after.fits && (threshold > best_threshold ||
                       (threshold == best_threshold && after.domains < best_domains))) {
      best_threshold = threshold;
      best_domains = after.domains;
      *set = siblings;
      pruned->clear();
      for (int d : siblings) {
        subtree.clear();
        ForSubtree(d, &subtree);
        for (int x : subtree) pruned->emplace_back(x, S(x));
      }
    }
    RestoreTo(mark);
  }
  return best_threshold;
}

std::string TopologyFlavor::Balanced::Apply(std::vector<int> set, int32_t threshold, int* fit_level,
                                            std::vector<int>* fit) {
  if (requested_level_ < slice_level_) {
    // The fewest domains of the requested level (most capacity, most even first), then their
    // children share the slices.
    std::vector<int> chosen;
    if (!SelectOptimal(set, slice_count_, leader_count_, /*by_entropy=*/true, &chosen)) {
      return "TAS Balanced Placement: Cannot find optimal domain set to fit the request";
    }
    set = Children(chosen);
    *fit_level = requested_level_ + 1;
  } else {
    *fit_level = requested_level_;
  }
  return PlaceSlices(set, threshold, fit);
}

bool TopologyFlavor::PlaceBalanced(const Params& p, int* fit_level, std::vector<int>* fit) {
  Balanced balanced(*this, p);
  std::vector<int> set;
  std::vector<std::pair<int, DomainState>> pruned;
  const int32_t threshold = balanced.FindBest(&set, &pruned);
  if (threshold <= 0) return false;
  balanced.Install(pruned);
  std::vector<int> placed;
  int level = 0;
  // Kueue logs the reason (at V(3)) and falls back to best fit.
  if (!balanced.Apply(std::move(set), threshold, &level, &placed).empty()) {
    balanced.RestoreTo(0);
    return false;
  }
  *fit_level = level;
  *fit = std::move(placed);
  return true;
}

}  // namespace tollgate::core
