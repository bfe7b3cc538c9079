#include "core/topology_validation.h"

#include <map>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/error_text.h"
#include "core/names.h"
#include "core/node_matching.h"

namespace tollgate::core {
namespace {

absl::Status Invalid(absl::string_view path, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", message));
}

absl::Status CheckLabelKey(absl::string_view path, absl::string_view key) {
  absl::Status s = ValidateQualifiedName(key);
  if (!s.ok()) return Invalid(path, s.message());
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateTopology(const TopologySpec& spec) {
  if (spec.levels.empty()) return Invalid("spec.levels", "must have at least 1 item");
  if (spec.levels.size() > 16) {
    return Invalid("spec.levels",
                   absl::StrCat("must have at most 16 items, got ", spec.levels.size()));
  }
  std::set<std::string> seen;
  for (size_t i = 0; i < spec.levels.size(); ++i) {
    const std::string path = absl::StrCat("spec.levels[", i, "].nodeLabel");
    if (absl::Status s = CheckLabelKey(path, spec.levels[i]); !s.ok()) return s;
    if (!seen.insert(spec.levels[i]).second) {
      return Invalid(path, absl::StrCat(QuoteValue(spec.levels[i]), ": must be unique"));
    }
    if (spec.levels[i] == kHostnameLabel && i + 1 != spec.levels.size()) {
      return Invalid(path,
                     "the kubernetes.io/hostname label can only be used at the lowest level "
                     "of topology");
    }
  }
  return absl::OkStatus();
}

absl::Status ValidatePodSetTopologyRequest(const PodSetTopologyRequest& request, int32_t count,
                                           absl::string_view path) {
  const std::string base = absl::StrCat(path, ".topologyRequest");
  const int kinds = (request.required.has_value() ? 1 : 0) +
                    (request.preferred.has_value() ? 1 : 0) + (request.unconstrained ? 1 : 0);
  if (kinds > 1) {
    return Invalid(base,
                   "must not contain more than one topology request: [required, preferred, "
                   "unconstrained]");
  }
  if (request.required.has_value()) {
    if (absl::Status s = CheckLabelKey(base + ".required", *request.required); !s.ok()) return s;
  }
  if (request.preferred.has_value()) {
    if (absl::Status s = CheckLabelKey(base + ".preferred", *request.preferred); !s.ok()) return s;
  }
  // The API spells one layer as podSetSliceRequiredTopology + podSetSliceSize and several as
  // podsetSliceRequiredTopologyConstraints; errors name the fields the caller wrote.
  const bool single = request.slices.size() == 1;
  auto layer_field = [&](size_t i, bool level) {
    if (single) {
      return absl::StrCat(base, level ? ".podSetSliceRequiredTopology" : ".podSetSliceSize");
    }
    return absl::StrCat(base, ".podsetSliceRequiredTopologyConstraints[", i, "]",
                        level ? ".topology" : ".size");
  };
  if (request.slices.size() > 3) {
    return Invalid(base + ".podsetSliceRequiredTopologyConstraints",
                   absl::StrCat("must have 1 to 3 layers, got ", request.slices.size()));
  }
  std::map<std::string, size_t> levels;
  for (size_t i = 0; i < request.slices.size(); ++i) {
    const SliceConstraint& layer = request.slices[i];
    if (absl::Status s = CheckLabelKey(layer_field(i, true), layer.level); !s.ok()) return s;
    if (layer.size < 1) {
      return Invalid(layer_field(i, false),
                     absl::StrCat(layer.size, ": must be greater than or equal to 1"));
    }
    auto [it, inserted] = levels.emplace(layer.level, i);
    if (!inserted) {
      return Invalid(layer_field(i, true),
                     absl::StrCat("Duplicate value: ", QuoteValue(layer.level), " (also at index ",
                                  it->second, ")"));
    }
    if (i > 0 && request.slices[i - 1].size % layer.size != 0) {
      return Invalid(layer_field(i, false),
                     absl::StrCat(layer.size, ": must evenly divide the parent layer size ",
                                  request.slices[i - 1].size));
    }
  }
  if (!request.slices.empty() && request.slices[0].size > count) {
    return Invalid(
        layer_field(0, false),
        absl::StrCat(request.slices[0].size, ": must not be greater than pod set count ", count));
  }
  if (request.pod_set_group.has_value()) {
    const std::string group_path = base + ".podSetGroupName";
    if (request.pod_set_group->empty()) return Invalid(group_path, "must not be empty");
    if (request.pod_set_group->find_first_not_of("0123456789") == std::string::npos) {
      return Invalid(group_path,
                     absl::StrCat(QuoteValue(*request.pod_set_group), ": must not be a number"));
    }
    // With slices too: Kueue refuses that pair on a job's annotations only (jobframework,
    // services/manifest/topology_annotations.cc); a Workload's webhook takes it, and the workers'
    // slices shape the group's placement (Kueue's leader-worker cases with slices).
    // A group without required or preferred is refused on a job's annotations (Kueue's
    // jobframework, services/manifest/topology_annotations.cc) but not on a Workload, whose
    // webhook does not ask for either: its pod sets then share their quota flavors and ask for
    // no topology.
  }
  return absl::OkStatus();
}

namespace {

// Kubernetes' ValidateNodeFieldSelectorRequirement: metadata.name, In or NotIn, one value.
absl::Status ValidateNodeFieldRequirement(const LabelSelectorRequirement& req,
                                          const std::string& field) {
  if (req.key != kNodeNameField) {
    return Invalid(field + ".key",
                   absl::StrCat(QuoteValue(req.key), ": supported values: \"metadata.name\""));
  }
  if (req.op != "In" && req.op != "NotIn") {
    return Invalid(field + ".operator",
                   absl::StrCat(QuoteValue(req.op), ": must be one of In, NotIn"));
  }
  if (req.values.size() != 1) {
    return Invalid(field + ".values",
                   "must be only one value when `operator` is 'In' or 'NotIn' for node field "
                   "selector");
  }
  return absl::OkStatus();
}

// Kubernetes' validateNodeSelectorTerm: `path` names the term.
absl::Status ValidateNodeSelectorTerm(const NodeSelectorTerm& term, const std::string& path) {
  static const std::set<std::string> kOps = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};
  for (size_t f = 0; f < term.match_fields.size(); ++f) {
    if (absl::Status s = ValidateNodeFieldRequirement(term.match_fields[f],
                                                      absl::StrCat(path, ".matchFields[", f, "]"));
        !s.ok()) {
      return s;
    }
  }
  for (size_t e = 0; e < term.match_expressions.size(); ++e) {
    const LabelSelectorRequirement& req = term.match_expressions[e];
    const std::string expr = absl::StrCat(path, ".matchExpressions[", e, "]");
    if (absl::Status s = CheckLabelKey(expr + ".key", req.key); !s.ok()) return s;
    if (kOps.count(req.op) == 0) {
      return Invalid(expr + ".operator", absl::StrCat(QuoteValue(req.op),
                                                      ": must be one of In, NotIn, Exists, "
                                                      "DoesNotExist, Gt, Lt"));
    }
    const bool needs_values = req.op == "In" || req.op == "NotIn";
    const bool needs_one = req.op == "Gt" || req.op == "Lt";
    if (needs_values && req.values.empty()) {
      return Invalid(expr + ".values", "must be specified when `operator` is 'In' or 'NotIn'");
    }
    if (needs_one && req.values.size() != 1) {
      return Invalid(expr + ".values",
                     "must be specified single value when `operator` is 'Lt' or 'Gt'");
    }
    if (!needs_values && !needs_one && !req.values.empty()) {
      return Invalid(expr + ".values",
                     "may not be specified when `operator` is 'Exists' or 'DoesNotExist'");
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateRequiredNodeAffinity(const std::vector<NodeSelectorTerm>& terms,
                                          absl::string_view path) {
  for (size_t t = 0; t < terms.size(); ++t) {
    if (absl::Status s = ValidateNodeSelectorTerm(terms[t], absl::StrCat(path, "[", t, "]"));
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

absl::Status ValidatePreferredNodeAffinity(const std::vector<PreferredSchedulingTerm>& terms,
                                           absl::string_view path) {
  for (size_t t = 0; t < terms.size(); ++t) {
    const std::string term = absl::StrCat(path, "[", t, "]");
    // Kubernetes' ValidatePreferredSchedulingTerms.
    if (terms[t].weight < 1 || terms[t].weight > 100) {
      return Invalid(term + ".weight",
                     absl::StrCat(terms[t].weight, ": must be in the range 1-100"));
    }
    if (absl::Status s = ValidateNodeSelectorTerm(terms[t].preference, term + ".preference");
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

absl::Status ValidatePodSetGroups(const WorkloadSpec& spec) {
  std::vector<std::pair<std::string, std::vector<size_t>>> groups;
  for (size_t i = 0; i < spec.pod_sets.size(); ++i) {
    const PodSetSpec& ps = spec.pod_sets[i];
    if (!ps.topology_request.has_value() || !ps.topology_request->pod_set_group.has_value())
      continue;
    const std::string& name = *ps.topology_request->pod_set_group;
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&name](const auto& g) { return g.first == name; });
    if (it == groups.end()) {
      groups.emplace_back(name, std::vector<size_t>{i});
    } else {
      it->second.push_back(i);
    }
  }
  for (const auto& [name, members] : groups) {
    const std::string path =
        absl::StrCat("spec.podSets[", members[0], "].topologyRequest.podSetGroupName");
    if (members.size() != 2) {
      return Invalid(path, absl::StrCat(QuoteValue(name),
                                        ": can only define groups of exactly 2 pod sets, got: ",
                                        members.size(), " pod set(s)"));
    }
    const PodSetSpec& a = spec.pod_sets[members[0]];
    const PodSetSpec& b = spec.pod_sets[members[1]];
    if (a.count != 1 && b.count != 1) {
      return Invalid(
          path, absl::StrCat(QuoteValue(name),
                             ": can only define groups where at least one pod set has "
                             "only 1 replica, got: ",
                             a.count, " replica(s) and ", b.count, " replica(s) in the group"));
    }
    if (a.topology_request->required != b.topology_request->required ||
        a.topology_request->preferred != b.topology_request->preferred) {
      return Invalid(path, absl::StrCat(QuoteValue(name),
                                        ": must specify the same topology request in both pod "
                                        "sets of the group"));
    }
  }
  return absl::OkStatus();
}

}  // namespace tollgate::core
