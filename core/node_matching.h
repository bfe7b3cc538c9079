#pragma once

#include <cstdint>
#include <vector>

#include "absl/strings/string_view.h"
#include "core/types.h"

namespace tollgate::core {

// The one field a node selector term's matchFields may name (Kubernetes' node field selector).
inline constexpr absl::string_view kNodeNameField = "metadata.name";

// Kubernetes' toleration semantics: an empty key with Exists tolerates everything; an empty
// effect matches every effect; Equal (or empty) compares values. Lt and Gt tolerate nothing here:
// this is the check of Kueue's node controller (TolerationsTolerateTaint without comparison
// operators), which decides whether a taint fails a placement.
bool Tolerates(const Toleration& toleration, const Taint& taint);

// The check of Kueue's scheduling paths (the flavor assigner's flavor taints and the topology
// node filter call FindMatchingUntoleratedTaint with comparison operators enabled): as
// Tolerates, and Lt / Gt tolerate a taint whose value, read as a canonical decimal integer, is
// less / greater than the toleration's (Kubernetes' TaintTolerationComparisonOperators); a value
// that is not one tolerates nothing.
bool ToleratesWhenScheduling(const Toleration& toleration, const Taint& taint);

// The first NoSchedule/NoExecute taint of the flavor that neither the pod set's tolerations nor
// the flavor's own tolerations tolerate, as Kueue checks it; null when all are tolerated.
const Taint* FindUntoleratedTaint(const ResourceFlavorSpec& flavor,
                                  const std::vector<Toleration>& pod_tolerations);

// A pod set's nodeSelector matches a flavor when every selector key that is one of the flavor's
// nodeLabels keys has the flavor's value (keys the flavor does not label are ignored, as Kueue
// does).
bool NodeSelectorMatchesFlavor(const Labels& node_selector, const ResourceFlavorSpec& flavor);

// Kubernetes' required node affinity against a node: some term matches (a term matches when
// every expression matches the node's labels, In, NotIn, Exists, DoesNotExist, Gt, Lt, and every
// field matches its name, metadata.name In or NotIn; a term with neither matches nothing). An
// empty term list matches everything.
bool NodeAffinityMatches(const std::vector<NodeSelectorTerm>& terms, const Labels& labels,
                         absl::string_view node_name);

// Kubernetes' PreferredSchedulingTerms.Score: the sum of the weights of the terms whose
// preference matches the node (as a required term matches; a term of weight 0 or with neither
// expressions nor fields counts for nothing).
int64_t PreferredAffinityScore(const std::vector<PreferredSchedulingTerm>& terms,
                               const Labels& labels, absl::string_view node_name);

// Kueue's flavor check of a pod set's required node affinity: the terms' expressions, narrowed
// to the keys the flavor's nodeLabels have, match those labels (a term narrowed to nothing
// matches; matchFields never count, since a flavor names no node: Kueue's flavorSelector).
bool RequiredAffinityMatchesFlavor(const std::vector<NodeSelectorTerm>& terms,
                                   const ResourceFlavorSpec& flavor);

// Kubernetes label selector semantics (matchLabels and matchExpressions, ANDed).
bool SelectorMatches(const LabelSelector& selector, const Labels& labels);

}  // namespace tollgate::core
