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
class alignas(64) QuotaNode {
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
  // The node's first bytes, all that the quota arithmetic reads for the first FrIds (see the
  // members): what a prefetch of a node ahead of its use needs.
  static constexpr size_t kHotBytes = 128;

  QuotaLimits Limits(FrId fr) const;
  int64_t SubtreeQuota(FrId fr) const { return Slot(fr).subtree_quota; }
  int64_t Usage(FrId fr) const { return Slot(fr).usage; }
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

  // Everything the quota arithmetic reads for one FrId, in 48 bytes. A scheduling pass reads
  // every field of the slot for the ClusterQueue and again for its cohort; held in three
  // separate arrays (limits, subtree quota, usage) that was three more cache lines per node,
  // and with 1,000 ClusterQueues per cycle each of them missed the L2.
  struct FrSlot {
    int64_t usage = 0;
    int64_t subtree_quota = 0;
    int64_t lending_limit = 0;
    int64_t borrowing_limit = 0;
    int64_t nominal = 0;
    bool has_lending_limit = false;
    bool has_borrowing_limit = false;
    bool defined = false;
  };
  static_assert(sizeof(FrSlot) == 48);
  // FrIds below this live in the node itself, in its first two cache lines beside `parent_`;
  // the rest in `more_slots_`. Two covers one flavor with cpu and memory.
  static constexpr FrId kInlineSlots = 2;

  const FrSlot& Slot(FrId fr) const {
    static const FrSlot kNone;
    if (fr < kInlineSlots) return inline_slots_[fr];
    const size_t i = static_cast<size_t>(fr - kInlineSlots);
    return i < more_slots_.size() ? more_slots_[i] : kNone;
  }
  FrSlot& MutableSlot(FrId fr) {
    if (fr < kInlineSlots) return inline_slots_[fr];
    const size_t i = static_cast<size_t>(fr - kInlineSlots);
    if (i >= more_slots_.size()) more_slots_.resize(i + 1);
    return more_slots_[i];
  }
  // One past the highest FrId a slot is held for (zero slots included).
  FrId SlotCount() const { return kInlineSlots + static_cast<FrId>(more_slots_.size()); }
  void SetLimits(FrId fr, const QuotaLimits& limits);
  static int64_t SlotLocalQuota(const FrSlot& slot);

  // The hot part first: `parent_` and the inline slots fill the first two cache lines (the node
  // is allocated 64-byte aligned), so the arithmetic on FrIds 0 and 1 reads nothing else.
  QuotaNode* parent_ = nullptr;
  Kind kind_;
  bool active_ = true;
  FrSlot inline_slots_[kInlineSlots];
  std::vector<FrSlot> more_slots_;
  std::string name_;
  std::vector<QuotaNode*> child_cohorts_;
  std::vector<QuotaNode*> child_cqs_;
  std::vector<FrId> defined_;
  std::vector<FrId> subtree_keys_;
  double fair_weight_ = 1.0;
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
  static void ApplyQuotas(const std::vector<ResourceGroupSpec>& groups,
                          FlavorResourceIndex& fr_index, QuotaNode& node);

  std::map<std::string, std::unique_ptr<QuotaNode>, std::less<>> cluster_queues_;
  std::map<std::string, std::unique_ptr<QuotaNode>, std::less<>> cohorts_;
  std::map<std::string, bool, std::less<>> cq_in_cycle_;
};

}  // namespace tollgate::core
