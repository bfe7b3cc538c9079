#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "absl/strings/string_view.h"
#include "core/types.h"

namespace tollgate::core {

// Dense id of a (flavor, resource) pair, so quota vectors are indexed instead of hashed on the
// scheduling hot path.
using FrId = int32_t;

// Interns (flavor, resource) pairs. Ids are never reused. Not thread-safe.
class FlavorResourceIndex {
 public:
  FrId Intern(absl::string_view flavor, absl::string_view resource);
  std::optional<FrId> Find(absl::string_view flavor, absl::string_view resource) const;
  const std::string& Flavor(FrId id) const { return pairs_[id].first; }
  const std::string& Resource(FrId id) const { return pairs_[id].second; }
  int32_t size() const { return static_cast<int32_t>(pairs_.size()); }

 private:
  // Looked up by views: Find runs per flavor and resource of every head in every cycle.
  using PairView = std::pair<absl::string_view, absl::string_view>;
  struct PairHash {
    using is_transparent = void;
    size_t operator()(const PairView& p) const { return absl::Hash<PairView>()(p); }
  };
  struct PairEq {
    using is_transparent = void;
    bool operator()(const PairView& a, const PairView& b) const { return a == b; }
  };
  std::vector<std::pair<std::string, std::string>> pairs_;
  absl::flat_hash_map<std::pair<std::string, std::string>, FrId, PairHash, PairEq> ids_;
};

struct QuotaLimits {
  bool defined = false;
  int64_t nominal = 0;
  std::optional<int64_t> borrowing_limit;
  std::optional<int64_t> lending_limit;
};

// A ClusterQueue or Cohort in the quota tree, with Kueue's hierarchical quota arithmetic:
//  * subtree_quota: the node's own nominal quota plus what its children lend to it (their
//    subtree quota minus what their lending limits keep back);
//  * usage: for a ClusterQueue, its admitted workloads' usage; for a Cohort, the part of its
//    children's usage that exceeds what they keep back locally;
//  * a node keeps `LocalQuota` (subtree quota minus lending limit) for itself, and borrows the
//    rest of what it needs from its parent, up to its borrowing limit.
// Not thread-safe; owned by QuotaTree.
class QuotaNode {
 public:
  enum class Kind { kClusterQueue, kCohort };

  QuotaNode(Kind kind, std::string name) : kind_(kind), name_(std::move(name)) {}

  Kind kind() const { return kind_; }
  const std::string& name() const { return name_; }
  QuotaNode* parent() const { return parent_; }
  bool HasParent() const { return parent_ != nullptr; }
  const std::vector<QuotaNode*>& child_cohorts() const { return child_cohorts_; }
  const std::vector<QuotaNode*>& child_cluster_queues() const { return child_cqs_; }
  QuotaNode* Root();
  const QuotaNode* Root() const;
  double fair_weight() const { return fair_weight_; }

  const QuotaLimits& Limits(FrId fr) const;
  int64_t SubtreeQuota(FrId fr) const { return At(subtree_quota_, fr); }
  int64_t Usage(FrId fr) const { return At(usage_, fr); }
  // The FrIds with a quota defined on this node, ascending.
  const std::vector<FrId>& defined_resources() const { return defined_; }
  // Every FrId with non-zero subtree quota or usage on this node, ascending.
  std::vector<FrId> ActiveResources() const;
  // The FrIds this node's subtree has a quota entry for (its own and its descendants'),
  // ascending: the resources fair sharing measures a node on.
  const std::vector<FrId>& subtree_resources() const { return subtree_keys_; }

  // Capacity this node keeps for itself and never lends to its parent.
  int64_t LocalQuota(FrId fr) const;
  int64_t LocalAvailable(FrId fr) const;
  // What can be taken now from this node and its ancestors (not clamped at 0).
  int64_t Available(FrId fr) const;
  // The most this node could ever get if nothing else were used.
  int64_t PotentialAvailable(FrId fr) const;
  // True when usage + val exceeds this node's subtree quota.
  bool BorrowingWith(FrId fr, int64_t val) const;
  bool Borrowing(FrId fr) const { return BorrowingWith(fr, 0); }

  // Adds usage here and bubbles the part above LocalQuota to the ancestors.
  void AddUsage(FrId fr, int64_t val);
  void RemoveUsage(FrId fr, int64_t val);

  // Longest path to an active ClusterQueue below (Kueue's getNodeHeight for cohorts, over its
  // scheduling snapshot, which holds only active ClusterQueues).
  int Height() const;

  // For a ClusterQueue: whether it admits (QueueRouter::RecomputeActivity). An inactive one
  // stays in the tree, its quota and usage counted in its cohort as Kueue's cache counts them,
  // but is left out where Kueue walks its scheduling snapshot: preemption candidates and
  // Height. Always true for a cohort.
  bool active() const { return active_; }
  void SetActive(bool active) { active_ = active; }

 private:
  friend class QuotaTree;
  static int64_t At(const std::vector<int64_t>& v, FrId fr) {
    return fr < static_cast<FrId>(v.size()) ? v[fr] : 0;
  }
  static int64_t& Grow(std::vector<int64_t>& v, FrId fr) {
    if (fr >= static_cast<FrId>(v.size())) v.resize(fr + 1, 0);
    return v[fr];
  }

  Kind kind_;
  std::string name_;
  QuotaNode* parent_ = nullptr;
  std::vector<QuotaNode*> child_cohorts_;
  std::vector<QuotaNode*> child_cqs_;
  std::vector<QuotaLimits> limits_;
  std::vector<FrId> defined_;
  std::vector<int64_t> subtree_quota_;
  std::vector<FrId> subtree_keys_;
  std::vector<int64_t> usage_;
  double fair_weight_ = 1.0;
  bool active_ = true;
};

// The forest of Cohorts and ClusterQueues built from their specs. Rebuilt whenever quota
// configuration changes (rare); usage is then re-added by the caller. Not thread-safe.
class QuotaTree {
 public:
  // Builds nodes for every ClusterQueue and Cohort, plus implicit cohorts named by a
  // ClusterQueue's `cohort` or a Cohort's `parent` without an object of their own. Cohorts on a
  // cycle are detached and every ClusterQueue below them is reported by InCycle().
  void Build(const std::map<std::string, ClusterQueueSpec>& cluster_queues,
             const std::map<std::string, CohortSpec>& cohorts, FlavorResourceIndex& fr_index);

  QuotaNode* ClusterQueue(absl::string_view name) const;
  QuotaNode* Cohort(absl::string_view name) const;
  // True when the ClusterQueue's cohort chain contains a cycle.
  bool InCycle(absl::string_view cluster_queue) const;
  // Every ClusterQueue node in the tree rooted at `root`, by name.
  std::vector<QuotaNode*> ClusterQueuesUnder(QuotaNode* root) const;

 private:
  void ComputeSubtreeQuota(QuotaNode* node);

  std::map<std::string, std::unique_ptr<QuotaNode>, std::less<>> cluster_queues_;
  std::map<std::string, std::unique_ptr<QuotaNode>, std::less<>> cohorts_;
  std::map<std::string, bool, std::less<>> cq_in_cycle_;
};

}  // namespace tollgate::core
