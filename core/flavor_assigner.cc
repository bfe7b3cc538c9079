#include "core/flavor_assigner.h"

#include <algorithm>
#include <limits>

#include "absl/base/optimization.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/admission_checks.h"
#include "core/node_matching.h"
#include "core/quantity.h"
#include "core/quota_requests.h"
#include "core/saturating.h"
#include "core/topology_scheduling.h"

namespace tollgate::core {
namespace {

// Within a resource group: the cause of the flavor that came closest to fitting (kNone, no
// flavor failed yet, gives way to any cause).
NoFitCause LeastSevere(NoFitCause current, NoFitCause cause) {
  if (current == NoFitCause::kNone) return cause;
  return std::min(current, cause);
}

// Kueue's markFlavorAttempt(..., TopologyPlacementFailed): the resource group of the topology
// flavor pod set `index` was placed on failed for its placement, whatever its other flavors'
// causes were. The flavor is found among the placement requests, not looked up by name.
void MarkTopologyPlacementFailed(const WorkloadTopologyRequests& requests, size_t index,
                                 const ClusterQueueRuntime& cq, PodSetFlavors& ps) {
  int group = -1;
  for (const WorkloadTopologyRequests::FlavorRequests& of : requests.by_flavor) {
    if (std::find(of.pod_set_index.begin(), of.pod_set_index.end(), index) ==
        of.pod_set_index.end()) {
      continue;
    }
    for (const auto& [resource, flavor] : ps.flavors) {
      if (flavor == of.flavor) {
        group = cq.GroupOf(resource);
        break;
      }
    }
    break;
  }
  ps.SetTopologyPlacementFailed(group);
}

// Kueue's internal granularMode: a preemption outcome plus how far up the tree quota comes from.
enum class GranularPreemption {
  kNoFit = 0,
  kNoCandidates = 1,
  kPreempt = 2,
  kReclaim = 3,
  kFit = 4
};

struct GranularMode {
  GranularPreemption preemption = GranularPreemption::kNoFit;
  int borrowing_level = std::numeric_limits<int>::max();
};

FlavorMode ToFlavorMode(GranularPreemption p) {
  switch (p) {
    case GranularPreemption::kNoFit:
      return FlavorMode::kNoFit;
    case GranularPreemption::kFit:
      return FlavorMode::kFit;
    default:
      return FlavorMode::kPreempt;
  }
}

// Kueue's isPreferred: whether `a` ranks above `b`. A flavor without preemption candidates
// cannot be admitted this cycle, so it ranks below every other usable one whatever the
// preference; the preference then says which of the preemption mode and the borrowing level
// comes first, the other breaking ties.
bool IsPreferred(const GranularMode& a, const GranularMode& b, bool preemption_over_borrowing) {
  if (a.preemption == GranularPreemption::kNoFit) return false;
  if (b.preemption == GranularPreemption::kNoFit) return true;
  const bool a_no_candidates = a.preemption == GranularPreemption::kNoCandidates;
  const bool b_no_candidates = b.preemption == GranularPreemption::kNoCandidates;
  if (a_no_candidates != b_no_candidates) return !a_no_candidates;
  if (ABSL_PREDICT_FALSE(preemption_over_borrowing)) {
    if (a.borrowing_level != b.borrowing_level) return a.borrowing_level < b.borrowing_level;
    return a.preemption > b.preemption;
  }
  if (a.preemption != b.preemption) return a.preemption > b.preemption;
  return a.borrowing_level < b.borrowing_level;
}

bool ShouldTryNextFlavor(const GranularMode& mode, const FlavorFungibilitySpec& fungibility) {
  if (mode.preemption == GranularPreemption::kNoFit ||
      mode.preemption == GranularPreemption::kNoCandidates) {
    return true;
  }
  const bool is_preempt = mode.preemption == GranularPreemption::kPreempt ||
                          mode.preemption == GranularPreemption::kReclaim;
  if (is_preempt && fungibility.when_can_preempt == WhenCanPreempt::kTryNextFlavor) return true;
  if (mode.borrowing_level != 0 && fungibility.when_can_borrow == WhenCanBorrow::kTryNextFlavor) {
    return true;
  }
  return false;
}

GranularPreemption FromPossibility(PreemptionPossibility p) {
  switch (p) {
    case PreemptionPossibility::kNoCandidates:
      return GranularPreemption::kNoCandidates;
    case PreemptionPossibility::kPreempt:
      return GranularPreemption::kPreempt;
    case PreemptionPossibility::kReclaim:
      return GranularPreemption::kReclaim;
  }
  return GranularPreemption::kNoFit;
}

// Sorts a pod set's flavors by resource, keeping each choice beside its flavor (stable, as the
// sort of the flavors alone was: a resource is in one group only, so names do not repeat).
void SortByResource(std::vector<std::pair<std::string, std::string>>& flavors,
                    absl::InlinedVector<FlavorChoice, 2>& choices) {
  std::vector<size_t> order(flavors.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&flavors](size_t a, size_t b) { return flavors[a].first < flavors[b].first; });
  std::vector<std::pair<std::string, std::string>> sorted_flavors;
  absl::InlinedVector<FlavorChoice, 2> sorted_choices;
  sorted_flavors.reserve(order.size());
  for (size_t i : order) {
    sorted_flavors.push_back(std::move(flavors[i]));
    sorted_choices.push_back(choices[i]);
  }
  flavors = std::move(sorted_flavors);
  choices = std::move(sorted_choices);
}

// IsTopologyOnly of the queue's spec, from the queue's cache while the inventory's generation
// is the one it was taken at (the answer depends only on the spec, which Rebuild replaces with
// the cache, and the flavors' topology names, whose every change bumps the generation). The
// state is not thread-safe, so a const reader may fill it.
bool TopologyOnly(const ClusterQueueRuntime& cq, const TopologyInventory& inventory) {
  if (cq.topology_only_generation != inventory.generation()) {
    cq.topology_only = IsTopologyOnly(cq.spec, inventory);
    cq.topology_only_generation = inventory.generation();
  }
  return cq.topology_only;
}

// FNV-1a, 64 bits: the hash Kueue sorts a pod set's requests by (resources.SliceRequests).
uint64_t Fnv1a64(absl::string_view text) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

int64_t AmountOf(const ResourceAmounts& amounts, absl::string_view resource) {
  for (const auto& [name, value] : amounts) {
    if (name == resource) return value;
  }
  return 0;
}

}  // namespace

std::pair<int, bool> FindHeightOfLowestSubtreeThatFits(const QuotaNode& cq, FrId fr, int64_t val) {
  if (!cq.BorrowingWith(fr, val) || !cq.HasParent()) return {0, cq.HasParent()};
  int64_t remaining = SatSub(val, cq.LocalAvailable(fr));
  for (const QuotaNode* node = cq.parent(); node != nullptr; node = node->parent()) {
    if (!node->BorrowingWith(fr, remaining)) return {node->Height(), node->HasParent()};
    remaining = SatSub(remaining, node->LocalAvailable(fr));
  }
  const QuotaNode* root = cq.parent();
  while (root->parent() != nullptr) root = root->parent();
  return {root->Height(), false};
}

void AddFrUsage(FrUsage& usage, FrId fr, int64_t amount) {
  auto it = std::lower_bound(usage.begin(), usage.end(), fr,
                             [](const std::pair<FrId, int64_t>& u, FrId f) { return u.first < f; });
  if (it != usage.end() && it->first == fr) {
    it->second = SatAdd(it->second, amount);
  } else {
    usage.emplace(it, fr, amount);
  }
}

int64_t FrUsageOf(const FrUsage& usage, FrId fr) {
  auto it = std::lower_bound(usage.begin(), usage.end(), fr,
                             [](const std::pair<FrId, int64_t>& u, FrId f) { return u.first < f; });
  return it != usage.end() && it->first == fr ? it->second : 0;
}

FlavorMode PodSetFlavors::Mode() const {
  if (reasons.empty()) return FlavorMode::kFit;
  if (flavors.empty()) return FlavorMode::kNoFit;
  FlavorMode mode = FlavorMode::kFit;
  for (const FlavorChoice& choice : choices) mode = std::min(mode, choice.mode);
  return mode;
}

void PodSetFlavors::AddGroupNoFit(int group, NoFitCause cause) {
  if (cause > no_fit_cause) {
    other_groups_no_fit_cause = no_fit_cause;
    no_fit_cause = cause;
    no_fit_group = static_cast<int16_t>(group);
  } else {
    other_groups_no_fit_cause = std::max(other_groups_no_fit_cause, cause);
  }
}

void PodSetFlavors::SetTopologyPlacementFailed(int group) {
  // The least severe cause there is: it replaces the group's own, and the other groups' stand.
  const NoFitCause others = no_fit_cause != NoFitCause::kNone && group == no_fit_group
                                ? other_groups_no_fit_cause
                                : no_fit_cause;
  no_fit_cause = std::max(others, NoFitCause::kTopologyPlacementFailed);
  no_fit_group = static_cast<int16_t>(group);
  other_groups_no_fit_cause = others;
}

void PodSetFlavors::SetMode(FlavorMode mode) {
  for (FlavorChoice& choice : choices) choice.mode = mode;
}

FlavorMode FlavorAssignment::RepresentativeMode() const {
  if (pod_sets.empty()) return FlavorMode::kNoFit;
  FlavorMode mode = FlavorMode::kFit;
  for (const PodSetFlavors& ps : pod_sets) mode = std::min(mode, ps.Mode());
  return mode;
}

std::string FlavorAssignment::Message() const {
  std::string out;
  for (const PodSetFlavors& ps : pod_sets) {
    if (ps.reasons.empty()) continue;
    if (ABSL_PREDICT_FALSE(ps.failed_with_error)) {
      return absl::StrCat("failed to assign flavors to pod set ", ps.name, ": ", ps.reasons.back());
    }
    if (!out.empty()) out += "; ";
    std::vector<std::string> sorted = ps.reasons;
    std::sort(sorted.begin(), sorted.end());
    absl::StrAppend(&out, "couldn't assign flavors to pod set ", ps.name, ": ",
                    absl::StrJoin(sorted, ", "));
  }
  return out;
}

NoFitCause FlavorAssignment::ResolveNoFitCause() const {
  NoFitCause overall = NoFitCause::kNone;
  for (const PodSetFlavors& ps : pod_sets) {
    if (ps.Mode() != FlavorMode::kNoFit) continue;
    // A pod set no flavor was even tried for (a resource no group covers, or every flavor
    // outside its nomination) matches none.
    if (!ps.flavor_tried) {
      overall = std::max(overall, NoFitCause::kNoMatchingFlavor);
      continue;
    }
    overall = std::max(overall, ps.no_fit_cause);
  }
  return overall;
}

PendingReason PendingReasonOf(NoFitCause cause) {
  switch (cause) {
    case NoFitCause::kTopologyPlacementFailed:
      return PendingReason::kTopologyPlacementFailed;
    case NoFitCause::kWaitingForQuota:
      return PendingReason::kWaitingForQuota;
    case NoFitCause::kExceedsMaxQuota:
      return PendingReason::kExceedsMaxQuota;
    case NoFitCause::kNoMatchingFlavor:
      return PendingReason::kNoMatchingFlavor;
    case NoFitCause::kNone:
      break;
  }
  // Kueue would write an empty reason, which the API refuses (the condition keeps its old
  // one); a reason that names no cause says the same.
  return PendingReason::kPendingEvaluation;
}

std::vector<FrId> FlavorAssignment::ResourcesNeedingPreemption() const {
  std::vector<FrId> out;
  for (const PodSetFlavors& ps : pod_sets) {
    for (const FlavorChoice& choice : ps.choices) {
      if (choice.mode == FlavorMode::kPreempt) out.push_back(choice.fr);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Admission FlavorAssignment::ToAdmission(const std::string& cluster_queue) const& {
  // The requests are not part of the admission.
  return FlavorAssignment{pod_sets, borrowing, usage, nullptr, {}}.ToAdmission(cluster_queue);
}

Admission FlavorAssignment::ToAdmission(const std::string& cluster_queue) && {
  Admission admission;
  admission.cluster_queue = cluster_queue;
  admission.pod_sets.reserve(pod_sets.size());
  for (PodSetFlavors& ps : pod_sets) {
    PodSetAssignment& out = admission.pod_sets.emplace_back();
    out.name = std::move(ps.name);
    out.count = ps.count;
    out.flavors = std::move(ps.flavors);
    out.resource_usage = std::move(ps.requests);
    // Kueue's admission lists usage only for the resources that got a flavor: a zero request of
    // a resource the ClusterQueue does not cover has neither (its PodSetAssignment.toAPI).
    if (out.resource_usage.size() != out.flavors.size()) {
      std::erase_if(out.resource_usage, [&out](const std::pair<std::string, int64_t>& usage) {
        return std::none_of(out.flavors.begin(), out.flavors.end(),
                            [&usage](const auto& flavor) { return flavor.first == usage.first; });
      });
    }
    if (ps.topology.has_value()) {
      out.topology_assignment = std::move(ps.topology);
    } else if (ps.topology_leaves.tree != nullptr && ps.topology_leaves.usage != nullptr) {
      out.topology_assignment = ps.topology_leaves.tree->AssignmentOf(*ps.topology_leaves.usage);
    }
  }
  return admission;
}

FlavorAssigner::FlavorAssigner(const ClusterState& state, const ClusterQueueRuntime& cq,
                               const Workload& wl, PreemptionOracle& oracle)
    : state_(state),
      cq_(cq),
      wl_(wl),
      oracle_(oracle),
      topology_only_(TopologyOnly(cq, state.topology())),
      adjusts_requests_(AdjustsQuotaRequests(state.config())) {}

void FlavorAssigner::AssignTopology(FlavorAssignment& assignment) const {
  if (assignment.RepresentativeMode() == FlavorMode::kNoFit) return;
  TopologyInventory& inventory = state_.topology();
  if (assignment.topology_requests == nullptr) {
    // Without a pod set asking for a topology there is nothing to place (and the queue's
    // delayed flavors need not be worked out).
    if (std::none_of(
            wl_.spec.pod_sets.begin(), wl_.spec.pod_sets.end(),
            [this](const PodSetSpec& ps) { return TopologyRequested(ps, topology_only_); })) {
      return;
    }
    // A pod set requesting nothing (a leader) takes its group's topology flavor first.
    InheritGroupTopologyFlavors(wl_.spec, assignment, inventory);
    // Without admission checks no flavor is delayed: no set to build per evaluation.
    assignment.topology_requests.reset(new WorkloadTopologyRequests(TopologyRequestsFor(
        wl_, assignment, topology_only_, inventory,
        cq_.spec.admission_checks.empty()
            ? std::set<std::string>()
            : DelayedTopologyFlavors(cq_.spec, state_.registry().admission_checks()))));
  }
  const WorkloadTopologyRequests& requests = *assignment.topology_requests;
  if (requests.empty()) return;
  for (const auto& [index, error] : requests.errors) {
    PodSetFlavors& ps = assignment.pod_sets[index];
    ps.reasons.push_back(error);
    ps.failed_with_error = true;
    ps.SetMode(FlavorMode::kNoFit);
  }
  if (!requests.errors.empty()) return;
  const bool replacing = !wl_.status.history().unhealthy_nodes.empty();
  if (assignment.RepresentativeMode() == FlavorMode::kFit) {
    // Named only if admitted (ToAdmission): a head is often placed again in its cycle.
    TopologyOutcome outcome =
        PlaceTopology(requests, inventory, /*simulate_empty=*/false, /*names=*/false);
    if (!outcome.ok) {
      PodSetFlavors& ps = assignment.pod_sets[outcome.failed_pod_set];
      ps.reasons.push_back(std::move(outcome.reason));
      ps.SetMode(FlavorMode::kPreempt);
    } else {
      for (TopologyOutcome::Placed& placed : outcome.placed) {
        assignment.pod_sets[placed.pod_set].topology_leaves = std::move(placed.leaves);
      }
    }
  }
  if (assignment.RepresentativeMode() == FlavorMode::kPreempt && !replacing) {
    // Would it fit if every admitted workload were gone? If not, preempting cannot help.
    TopologyOutcome outcome =
        PlaceTopology(requests, inventory, /*simulate_empty=*/true, /*names=*/false);
    if (!outcome.ok) {
      PodSetFlavors& ps = assignment.pod_sets[outcome.failed_pod_set];
      if (std::find(ps.reasons.begin(), ps.reasons.end(), outcome.reason) == ps.reasons.end()) {
        ps.reasons.push_back(std::move(outcome.reason));
      }
      ps.SetMode(FlavorMode::kNoFit);
      MarkTopologyPlacementFailed(requests, outcome.failed_pod_set, cq_, ps);
    } else {
      // Quota may fit while the nodes are fragmented: every topology pod set may need victims.
      for (const WorkloadTopologyRequests::FlavorRequests& of : requests.by_flavor) {
        for (size_t index : of.pod_set_index) {
          PodSetFlavors& ps = assignment.pod_sets[index];
          for (FlavorChoice& choice : ps.choices) {
            if (choice.mode == FlavorMode::kFit) choice.mode = FlavorMode::kPreempt;
          }
        }
      }
    }
  }
}

std::string FlavorAssigner::CheckFlavorForPodSet(const std::string& flavor_name,
                                                 const PodSetSpec& pod_set,
                                                 const ResourceGroupSpec& group) const {
  auto it = state_.flavors().find(flavor_name);
  if (it == state_.flavors().end()) return absl::StrCat("flavor ", flavor_name, " not found");
  const ResourceFlavorSpec& flavor = it->second;
  if (const Taint* taint = FindUntoleratedTaint(flavor, pod_set.tolerations)) {
    // Kueue formats the taint struct with Go's %s: {key value effect <nil>}.
    return absl::StrCat("untolerated taint {", taint->key, " ", taint->value, " ", taint->effect,
                        " <nil>} in flavor ", flavor_name);
  }
  if (!NodeSelectorMatchesFlavor(pod_set.node_selector, flavor) ||
      (pod_set.required_node_affinity() != nullptr &&
       !RequiredAffinityMatchesFlavor(*pod_set.required_node_affinity(), flavor))) {
    return absl::StrCat("flavor ", flavor_name, " doesn't match node affinity");
  }
  if (!flavor.topology_name.empty() || pod_set.topology_request.has_value() || topology_only_) {
    return CheckTopologyFlavor(pod_set, flavor, group.covered_resources, topology_only_,
                               state_.topology());
  }
  return "";
}

bool FlavorAssigner::Nominated(size_t pod_set_index, const std::string& resource,
                               const std::string& flavor) const {
  // Kueue looks the pod set up by name; a recomputation keeps the pod sets' order.
  if (pod_set_index >= nominated_->pod_sets.size()) return false;
  for (const auto& [name, chosen] : nominated_->pod_sets[pod_set_index].flavors) {
    if (name == resource) return chosen == flavor;
  }
  // A resource the nomination assigned no flavor matches none.
  return false;
}

FlavorAssigner::ResourceResult FlavorAssigner::FindFlavorForPodSets(
    absl::Span<const size_t> pod_sets, const ResourceAmounts& requests,
    absl::Span<const int> groups, int group_index, const FrUsage& assigned_usage) {
  ResourceResult result;
  const PodSetSpec& first_pod_set = wl_.spec.pod_sets[pod_sets[0]];
  const ResourceGroupSpec& group = cq_.spec.resource_groups[group_index];

  // The group's requested resources, in name order (as `requests`), by index: a resource is
  // covered by one group only (validated), so its group index says whether the group covers it.
  absl::InlinedVector<size_t, 4> group_requests;
  for (size_t r = 0; r < requests.size(); ++r) {
    if (groups[r] == group_index) group_requests.push_back(r);
  }

  const QuotaNode& node = *cq_.node;
  const bool fair_sharing = state_.config().fair_sharing.enable;
  const PreemptionSpec& preemption = cq_.spec.preemption;
  const bool can_preempt_while_borrowing =
      preemption.borrow_within_cohort != BorrowWithinCohortPolicy::kNever ||
      (fair_sharing && preemption.reclaim_within_cohort != PreemptionPolicy::kNever);
  // Unset ranks as BorrowingOverPreemption (Kueue's default since the
  // FlavorFungibilityImplicitPreferenceDefault gate was removed).
  const bool preemption_over_borrowing =
      cq_.spec.flavor_fungibility.preference == FungibilityPreference::kPreemptionOverBorrowing;

  std::vector<std::pair<std::string, std::string>> best;
  absl::InlinedVector<FlavorChoice, 2> best_choices;
  GranularMode best_mode;
  // A pod-set group resumes from where its first pod set's search stopped (Kueue reads the
  // progress of the group's first pod set only).
  size_t first_flavor =
      resume_ == nullptr ? 0 : static_cast<size_t>(resume_->NextFlavor(pod_sets[0], group_index));
  // Progress recorded before the group lost flavors starts over.
  if (first_flavor >= group.flavors.size()) first_flavor = 0;
  size_t attempted_flavor = first_flavor;
  for (size_t flavor_index = first_flavor; flavor_index < group.flavors.size(); ++flavor_index) {
    attempted_flavor = flavor_index;
    const std::string& flavor = group.flavors[flavor_index].flavor;
    if (nominated_ != nullptr && !group_requests.empty() &&
        std::none_of(pod_sets.begin(), pod_sets.end(), [&](size_t pod_set_index) {
          return Nominated(pod_set_index, requests[group_requests[0]].first, flavor);
        })) {
      result.reasons.push_back(absl::StrCat("skipping flavor ", flavor,
                                            " as it is not found in the nomination mapping for "
                                            "resource ",
                                            requests[group_requests[0]].first));
      continue;
    }
    result.tried = true;
    // Every pod set of a group must be able to run on the flavor; the first that cannot says why.
    std::string reason = CheckFlavorForPodSet(flavor, first_pod_set, group);
    if (ABSL_PREDICT_FALSE(pod_sets.size() > 1)) {
      for (size_t k = 1; reason.empty() && k < pod_sets.size(); ++k) {
        reason = CheckFlavorForPodSet(flavor, wl_.spec.pod_sets[pod_sets[k]], group);
      }
    }
    if (!reason.empty()) {
      result.reasons.push_back(std::move(reason));
      result.least_no_fit = LeastSevere(result.least_no_fit, NoFitCause::kNoMatchingFlavor);
      continue;
    }
    std::vector<std::pair<std::string, std::string>> flavors;
    flavors.reserve(group_requests.size());
    absl::InlinedVector<FlavorChoice, 2> choices;
    GranularMode representative{GranularPreemption::kFit, 0};
    // The most severe cause among the flavor's resources (Kueue's flavorNoFitReason): read only
    // if the flavor does not fit.
    NoFitCause flavor_cause = NoFitCause::kNone;
    for (size_t r : group_requests) {
      const std::string& name = requests[r].first;
      const int64_t request = requests[r].second;
      const FrId fr = state_.fr_index().Find(flavor, name).value_or(-1);
      const int64_t assumed = fr >= 0 ? FrUsageOf(assigned_usage, fr) : 0;
      const int64_t val = SatAdd(assumed, request);
      GranularMode mode;
      int borrow = 0;
      if (fr < 0) {
        // The group covers the resource but this flavor lists no quota for it: zero capacity.
        const int64_t max_capacity = 0;
        if (val > max_capacity) {
          result.reasons.push_back(absl::StrCat(
              "insufficient quota for ", name, " in flavor ", flavor,
              ", previously considered podsets requests (", FormatResourceScalar(name, assumed),
              ") + current podset request (", FormatResourceScalar(name, request),
              ") > maximum capacity (", FormatResourceScalar(name, max_capacity), ")"));
          mode = GranularMode{GranularPreemption::kNoFit, 0};
          flavor_cause = std::max(flavor_cause, NoFitCause::kExceedsMaxQuota);
        } else {
          mode = GranularMode{GranularPreemption::kFit, 0};
        }
      } else {
        const int64_t available = std::max<int64_t>(0, node.Available(fr));
        const int64_t max_capacity = node.PotentialAvailable(fr);
        if (val > max_capacity) {
          result.reasons.push_back(absl::StrCat(
              "insufficient quota for ", name, " in flavor ", flavor,
              ", previously considered podsets requests (", FormatResourceScalar(name, assumed),
              ") + current podset request (", FormatResourceScalar(name, request),
              ") > maximum capacity (", FormatResourceScalar(name, max_capacity), ")"));
          mode = GranularMode{GranularPreemption::kNoFit, 0};
          flavor_cause = std::max(flavor_cause, NoFitCause::kExceedsMaxQuota);
        } else {
          auto [level, may_reclaim_in_hierarchy] = FindHeightOfLowestSubtreeThatFits(node, fr, val);
          borrow = level;
          if (val <= available) {
            mode = GranularMode{GranularPreemption::kFit, level};
          } else {
            result.reasons.push_back(
                absl::StrCat("insufficient unused quota for ", name, " in flavor ", flavor, ", ",
                             FormatResourceScalar(name, val - available), " more needed"));
            const QuotaLimits& limits = node.Limits(fr);
            if (limits.nominal >= val || may_reclaim_in_hierarchy || can_preempt_while_borrowing) {
              auto [possibility, borrow_after] = oracle_.SimulatePreemption(fr, val);
              mode = GranularMode{FromPossibility(possibility), borrow_after};
              borrow = borrow_after;
            } else {
              mode = GranularMode{GranularPreemption::kNoFit, level};
            }
            // Short of unused quota: waiting helps unless preemption does now.
            if (mode.preemption == GranularPreemption::kNoFit) {
              flavor_cause = std::max(flavor_cause, NoFitCause::kWaitingForQuota);
            }
          }
        }
      }
      if (wl_.spec.non_preemptible && mode.preemption != GranularPreemption::kNoFit && borrow > 0) {
        // Borrowed quota must stay reclaimable, and a non-preemptible workload could never give
        // it back: it runs on its queue's own quota only.
        result.reasons.push_back(
            absl::StrCat("non-preemptible workload can't borrow ", name, " in flavor ", flavor));
        mode = GranularMode{GranularPreemption::kNoFit, borrow};
        // Fits once its queue's own quota is free.
        flavor_cause = std::max(flavor_cause, NoFitCause::kWaitingForQuota);
      }
      if (IsPreferred(representative, mode, preemption_over_borrowing)) representative = mode;
      if (representative.preemption == GranularPreemption::kNoFit) continue;
      flavors.emplace_back(name, flavor);
      choices.push_back(FlavorChoice{fr, ToFlavorMode(mode.preemption), borrow});
    }
    if (representative.preemption == GranularPreemption::kNoFit) {
      result.least_no_fit = LeastSevere(result.least_no_fit, flavor_cause);
    }
    if (!ShouldTryNextFlavor(representative, cq_.spec.flavor_fungibility)) {
      best = std::move(flavors);
      best_choices = std::move(choices);
      best_mode = representative;
      break;
    }
    if (IsPreferred(representative, best_mode, preemption_over_borrowing)) {
      best = std::move(flavors);
      best_choices = std::move(choices);
      best_mode = representative;
    }
  }
  // Kueue's TriedFlavorIdx: a search that stopped before the group's last flavor resumes after
  // the flavor it stopped at.
  if (!best.empty() && attempted_flavor + 1 < group.flavors.size()) {
    result.last_tried_flavor = static_cast<int32_t>(attempted_flavor);
  }
  result.flavors = std::move(best);
  result.choices = std::move(best_choices);
  result.fits = best_mode.preemption == GranularPreemption::kFit;
  if (result.fits) result.reasons.clear();
  return result;
}

// Kept a function of its own, and Assign and the group path in a file of their own
// (flavor_assigner_groups.cc), so that it compiles as it did before groups: sharing helpers
// with the group path or growing this function changed what the compiler inlined and cost
// 100-400 instructions per admission (bench/engine_bench).
PodSetFlavors FlavorAssigner::PodSetWithRequests(size_t pod_set_index,
                                                 const std::vector<int32_t>& counts) const {
  const PodSetSpec& pod_set = wl_.spec.pod_sets[pod_set_index];
  const bool covers_pods = cq_.covers_pods;
  // The spec's requests, unless resources.transformations or quotaCheckStrategy change what
  // quota sees (core/quota_requests.h); only then is a copy made.
  ResourceAmounts adjusted;
  if (ABSL_PREDICT_FALSE(adjusts_requests_)) {
    adjusted = QuotaRequestsPerPod(state_.config(), pod_set, cq_);
  }
  const ResourceAmounts& per_pod_requests = adjusts_requests_ ? adjusted : pod_set.requests;
  PodSetFlavors ps;
  ps.name = pod_set.name;
  // A pending workload asks only for the pods it still needs (Kueue's TotalRequests).
  ps.count = counts.empty()
                 ? CountAfterReclaim(wl_.status, pod_set, state_.config().reclaimable_pods)
                 : counts[pod_set_index];
  ps.requests.reserve(per_pod_requests.size() + (covers_pods ? 1 : 0));
  for (const auto& [name, per_pod] : per_pod_requests) {
    ps.requests.emplace_back(name, SatMul(per_pod, ps.count));
  }
  if (covers_pods) {
    auto it = std::find_if(ps.requests.begin(), ps.requests.end(),
                           [](const auto& r) { return r.first == "pods"; });
    if (it != ps.requests.end()) {
      it->second = ps.count;
    } else {
      ps.requests.emplace_back("pods", ps.count);
      std::sort(ps.requests.begin(), ps.requests.end());
    }
  }
  return ps;
}

bool FlavorAssigner::AssignResourceGroups(absl::Span<const size_t> pod_sets,
                                          const ResourceAmounts& requests,
                                          const FrUsage& assigned_usage, PodSetFlavors& out,
                                          ScanStops& scan_stops) {
  // Whether the queue covers each request's resource (its group index, -1: not covered),
  // looked up once here instead of in each loop below.
  absl::InlinedVector<int, 4> groups;
  groups.reserve(requests.size());
  for (const auto& request : requests) groups.push_back(cq_.GroupOf(request.first));
  // Kueue walks a pod set's requests in the order of its request vector, sorted by the FNV-1a
  // hash of the resource name (resources.SliceRequests), and the first resource that gets no
  // flavor, or that the queue does not cover (unless nothing is asked of it), ends the pod set
  // with that reason alone. The order tells only when the requests span two resource groups or
  // name a resource the queue does not cover; otherwise they are walked in name order.
  bool hash_order = false;
  int first_group = -1;
  for (size_t r = 0; r < requests.size() && !hash_order; ++r) {
    if (groups[r] < 0) {
      hash_order = requests[r].second != 0;
    } else if (first_group < 0) {
      first_group = groups[r];
    } else {
      hash_order = groups[r] != first_group;
    }
  }
  absl::InlinedVector<size_t, 4> order(requests.size());
  for (size_t r = 0; r < order.size(); ++r) order[r] = r;
  if (ABSL_PREDICT_FALSE(hash_order)) {
    absl::InlinedVector<uint64_t, 4> hashes;
    hashes.reserve(requests.size());
    for (const auto& request : requests) hashes.push_back(Fnv1a64(request.first));
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      if (hashes[a] != hashes[b]) return hashes[a] < hashes[b];
      return requests[a].first < requests[b].first;
    });
  }
  absl::InlinedVector<int, 2> assigned_groups;
  for (size_t req : order) {
    if (groups[req] < 0) {
      if (requests[req].second == 0) continue;
      out.flavors.clear();
      out.choices.clear();
      out.reasons = {
          absl::StrCat("resource ", requests[req].first, " unavailable in ClusterQueue")};
      scan_stops.clear();
      return false;
    }
    if (std::find(assigned_groups.begin(), assigned_groups.end(), groups[req]) !=
        assigned_groups.end()) {
      continue;  // Assigned with its resource group.
    }
    assigned_groups.push_back(groups[req]);
    ResourceResult r =
        FindFlavorForPodSets(pod_sets, requests, groups, groups[req], assigned_usage);
    out.flavor_tried = out.flavor_tried || r.tried;
    if (r.least_no_fit != NoFitCause::kNone) out.AddGroupNoFit(groups[req], r.least_no_fit);
    if (r.last_tried_flavor >= 0) scan_stops.emplace_back(groups[req], r.last_tried_flavor);
    if (r.flavors.empty()) {
      out.flavors.clear();
      out.choices.clear();
      out.reasons = std::move(r.reasons);
      // A pod set left without flavors records no progress (Kueue's is per assigned flavor).
      scan_stops.clear();
      return false;
    }
    // The first group's lists are taken whole (most pod sets ask one group): no copy.
    if (out.flavors.empty()) {
      out.flavors = std::move(r.flavors);
      out.choices = std::move(r.choices);
    } else {
      out.flavors.insert(out.flavors.end(), std::make_move_iterator(r.flavors.begin()),
                         std::make_move_iterator(r.flavors.end()));
      out.choices.insert(out.choices.end(), r.choices.begin(), r.choices.end());
    }
    if (out.reasons.empty()) {
      out.reasons = std::move(r.reasons);
    } else {
      out.reasons.insert(out.reasons.end(), std::make_move_iterator(r.reasons.begin()),
                         std::make_move_iterator(r.reasons.end()));
    }
  }
  if (!std::is_sorted(out.flavors.begin(), out.flavors.end(),
                      [](const auto& a, const auto& b) { return a.first < b.first; })) {
    SortByResource(out.flavors, out.choices);
  }
  return true;
}

void FlavorAssigner::AddPodSetUsage(const PodSetFlavors& ps, FlavorAssignment& assignment) {
  for (size_t f = 0; f < ps.flavors.size(); ++f) {
    const FlavorChoice& choice = ps.choices[f];
    assignment.borrowing = std::max(assignment.borrowing, choice.borrow);
    const int64_t amount = AmountOf(ps.requests, ps.flavors[f].first);
    if (amount == 0 || choice.fr < 0) continue;
    AddFrUsage(assignment.usage, choice.fr, amount);
  }
}

FlavorAssignment FlavorAssigner::Assign(const std::vector<int32_t>& counts) {
  // Decided once per assignment: workloads without pod-set groups pay nothing for the groups.
  const bool has_groups =
      std::any_of(wl_.spec.pod_sets.begin(), wl_.spec.pod_sets.end(), [](const PodSetSpec& ps) {
        return ps.topology_request.has_value() && ps.topology_request->pod_set_group.has_value();
      });
  return has_groups ? AssignWithGroups(counts) : AssignPodSetByPodSet(counts);
}

FlavorAssignment FlavorAssigner::AssignPodSetByPodSet(const std::vector<int32_t>& counts) {
  FlavorAssignment assignment;
  assignment.pod_sets.reserve(wl_.spec.pod_sets.size());
  ScanStops scan_stops;
  for (size_t i = 0; i < wl_.spec.pod_sets.size(); ++i) {
    PodSetFlavors ps = PodSetWithRequests(i, counts);
    scan_stops.clear();
    const bool failed = !AssignResourceGroups(absl::MakeConstSpan(&i, 1), ps.requests,
                                              assignment.usage, ps, scan_stops);
    for (const auto& [group, flavor] : scan_stops) {
      assignment.scan_stops.push_back(FlavorScanStop{static_cast<int32_t>(i), group, flavor});
    }
    AddPodSetUsage(ps, assignment);
    assignment.pod_sets.push_back(std::move(ps));
    if (failed) break;
  }
  AssignTopology(assignment);
  return assignment;
}

}  // namespace tollgate::core
