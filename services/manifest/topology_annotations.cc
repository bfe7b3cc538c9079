#include "services/manifest/topology_annotations.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "core/error_text.h"
#include "core/names.h"
#include "core/status_macros.h"

namespace tollgate::manifest {
namespace {

std::string KeyPath(absl::string_view path, absl::string_view key) {
  return absl::StrCat(path, "[", key, "]");
}

absl::Status Invalid(absl::string_view path, absl::string_view reason) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", reason));
}

// Go's strconv.ParseBool, which Kueue reads the unconstrained annotation with.
std::optional<bool> ParseGoBool(absl::string_view text) {
  static const std::set<absl::string_view> kTrue = {"1", "t", "T", "TRUE", "true", "True"};
  static const std::set<absl::string_view> kFalse = {"0", "f", "F", "FALSE", "false", "False"};
  if (kTrue.count(text) > 0) return true;
  if (kFalse.count(text) > 0) return false;
  return std::nullopt;
}

std::string Quoted(absl::string_view s) { return absl::StrCat("\"", s, "\""); }

// One list of a Kubernetes node selector term (matchExpressions or matchFields). Entries that are
// not objects with string fields are kept empty for validation to name; the codec checks the rest.
void AppendNodeSelectorRequirements(
    const Json& term, const char* list,
    google::protobuf::RepeatedPtrField<v1::NodeSelectorRequirement>* out) {
  const Json* items = Find(term, {list});
  if (items == nullptr || !items->is_array()) return;
  for (const Json& e : *items) {
    v1::NodeSelectorRequirement* r = out->Add();
    r->set_key(GetString(e, {"key"}));
    r->set_operator_(GetString(e, {"operator"}));
    if (const Json* values = Find(e, {"values"}); values != nullptr && values->is_array()) {
      for (const Json& v : *values) {
        if (v.is_string()) r->add_values(v.get<std::string>());
      }
    }
  }
}

}  // namespace

absl::StatusOr<std::optional<v1::PodSetTopologyRequest>> TopologyRequestFromAnnotations(
    const std::map<std::string, std::string>& annotations,
    std::optional<std::string> pod_index_label, absl::string_view path) {
  auto find = [&](absl::string_view key) -> const std::string* {
    auto it = annotations.find(std::string(key));
    return it == annotations.end() ? nullptr : &it->second;
  };
  const std::string* required = find(kRequiredTopologyAnnotation);
  const std::string* preferred = find(kPreferredTopologyAnnotation);
  const std::string* unconstrained = find(kUnconstrainedTopologyAnnotation);
  const std::string* slice_level = find(kSliceRequiredTopologyAnnotation);
  const std::string* slice_size = find(kSliceSizeAnnotation);
  const std::string* constraints = find(kSliceConstraintsAnnotation);
  const std::string* group = find(kPodSetGroupNameAnnotation);

  // Kueue's ValidateTASPodSetRequest, in its order.
  if ((required != nullptr) + (preferred != nullptr) + (unconstrained != nullptr) > 1) {
    return Invalid(path, absl::StrCat("must not contain more than one topology annotation: [",
                                      Quoted(kRequiredTopologyAnnotation), ", ",
                                      Quoted(kPreferredTopologyAnnotation), ", ",
                                      Quoted(kUnconstrainedTopologyAnnotation), "]"));
  }
  for (auto [key, value] : {std::pair{kRequiredTopologyAnnotation, required},
                            std::pair{kPreferredTopologyAnnotation, preferred},
                            std::pair{kSliceRequiredTopologyAnnotation, slice_level}}) {
    if (value == nullptr) continue;
    if (absl::Status s = core::ValidateQualifiedName(*value); !s.ok()) {
      return Invalid(KeyPath(path, key), s.message());
    }
  }
  if (group != nullptr) {
    const std::string gpath = KeyPath(path, kPodSetGroupNameAnnotation);
    uint64_t number = 0;
    if (absl::SimpleAtoi(*group, &number)) {
      return Invalid(gpath, absl::StrCat(core::QuoteValue(*group), ": must not be a number"));
    }
    if (slice_size != nullptr) {
      return Invalid(gpath,
                     absl::StrCat("may not be set when '", kSliceSizeAnnotation, "' is specified"));
    }
    if (slice_level != nullptr) {
      return Invalid(gpath, absl::StrCat("may not be set when '", kSliceRequiredTopologyAnnotation,
                                         "' is specified"));
    }
    if (preferred == nullptr && required == nullptr) {
      return Invalid(gpath,
                     absl::StrCat("may not be set when neither '", kPreferredTopologyAnnotation,
                                  "' nor '", kRequiredTopologyAnnotation, "' is specified"));
    }
  }
  std::optional<bool> unconstrained_value;
  if (unconstrained != nullptr) {
    unconstrained_value = ParseGoBool(*unconstrained);
    if (!unconstrained_value.has_value()) {
      return Invalid(KeyPath(path, kUnconstrainedTopologyAnnotation),
                     absl::StrCat(core::QuoteValue(*unconstrained), ": must be a boolean value"));
    }
  }
  int32_t size = 0;
  if (slice_size != nullptr) {
    const std::string spath = KeyPath(path, kSliceSizeAnnotation);
    if (!absl::SimpleAtoi(*slice_size, &size)) {
      return Invalid(spath,
                     absl::StrCat(core::QuoteValue(*slice_size), ": must be a numeric value"));
    }
    if (size < 1) {
      return Invalid(spath, absl::StrCat(core::QuoteValue(*slice_size),
                                         ": must be greater than or equal to 1"));
    }
  }
  if (slice_level != nullptr && slice_size == nullptr) {
    return Invalid(
        KeyPath(path, kSliceSizeAnnotation),
        absl::StrCat("must be set when '", kSliceRequiredTopologyAnnotation, "' is specified"));
  }
  if (slice_level == nullptr && slice_size != nullptr) {
    return Invalid(KeyPath(path, kSliceSizeAnnotation),
                   absl::StrCat("may not be set when '", kSliceRequiredTopologyAnnotation,
                                "' is not specified"));
  }
  std::vector<std::pair<std::string, int32_t>> layers;
  if (constraints != nullptr) {
    const std::string cpath = KeyPath(path, kSliceConstraintsAnnotation);
    if (slice_level != nullptr) {
      return Invalid(cpath, absl::StrCat("may not be set when '", kSliceRequiredTopologyAnnotation,
                                         "' is specified"));
    }
    if (slice_size != nullptr) {
      return Invalid(cpath,
                     absl::StrCat("may not be set when '", kSliceSizeAnnotation, "' is specified"));
    }
    if (group != nullptr) {
      return Invalid(
          KeyPath(path, kPodSetGroupNameAnnotation),
          absl::StrCat("may not be set when '", kSliceConstraintsAnnotation, "' is specified"));
    }
    absl::StatusOr<Json> parsed = ParseJson(*constraints, cpath);
    if (!parsed.ok() || !parsed->is_array()) {
      return Invalid(cpath, absl::StrCat(core::QuoteValue(*constraints),
                                         ": must be a valid JSON array of {topology, size}"));
    }
    if (parsed->empty() || parsed->size() > 3) {
      return Invalid(cpath, absl::StrCat(core::QuoteValue(*constraints),
                                         ": topology constraints must contain between 1 and 3 "
                                         "entries"));
    }
    std::map<std::string, size_t> seen;
    for (size_t i = 0; i < parsed->size(); ++i) {
      const Json& entry = (*parsed)[i];
      const std::string epath = absl::StrCat(cpath, "[", i, "]");
      const std::string topology = GetString(entry, {"topology"});
      const std::optional<int64_t> layer_size = GetInt(entry, {"size"});
      if (absl::Status s = core::ValidateQualifiedName(topology); !s.ok()) {
        return Invalid(epath + ".topology", s.message());
      }
      if (!layer_size.has_value() || *layer_size < 1 || *layer_size > INT32_MAX) {
        return Invalid(epath + ".size",
                       absl::StrCat(layer_size.has_value() ? absl::StrCat(*layer_size) : "missing",
                                    ": must be greater than or equal to 1"));
      }
      auto [it, inserted] = seen.emplace(topology, i);
      if (!inserted) {
        return Invalid(epath + ".topology",
                       absl::StrCat("Duplicate value: ", core::QuoteValue(topology),
                                    " (also at index ", it->second, ")"));
      }
      if (i > 0 && layers.back().second % *layer_size != 0) {
        return Invalid(epath + ".size",
                       absl::StrCat(*layer_size, ": must evenly divide the parent layer size ",
                                    layers.back().second));
      }
      layers.emplace_back(topology, static_cast<int32_t>(*layer_size));
    }
  }

  // Kueue's Build.
  v1::PodSetTopologyRequest out;
  if (required != nullptr) {
    out.set_required(*required);
  } else if (preferred != nullptr) {
    out.set_preferred(*preferred);
  } else if (unconstrained_value.has_value()) {
    out.set_unconstrained(*unconstrained_value);
  } else if (layers.empty() && slice_level == nullptr) {
    // Kueue keeps a request holding only the kind's pod index label; Tollgate drops it so a
    // job that asks nothing of a topology translates as it did before topology existed (an
    // adapter's resubmit of an older workload stays identical). docs/topology.md.
    return std::nullopt;
  }
  if (!layers.empty()) {
    for (const auto& [topology, layer_size] : layers) {
      v1::PodSetSliceTopologyConstraint* c = out.add_podset_slice_required_topology_constraints();
      c->set_topology(topology);
      c->set_size(layer_size);
    }
  } else if (slice_level != nullptr) {
    out.set_pod_set_slice_required_topology(*slice_level);
    out.set_pod_set_slice_size(size);
  }
  if (pod_index_label.has_value()) out.set_pod_index_label(*pod_index_label);
  if (group != nullptr && (required != nullptr || preferred != nullptr)) {
    out.set_pod_set_group_name(*group);
  }
  return out;
}

absl::Status ApplyTemplateTopology(const Json& pod_template,
                                   std::optional<std::string> pod_index_label,
                                   absl::string_view path, v1::PodSet* pod_set) {
  std::map<std::string, std::string> annotations;
  if (const Json* a = Find(pod_template, {"metadata", "annotations"}); a != nullptr) {
    if (a->is_object()) {
      for (auto it = a->begin(); it != a->end(); ++it) {
        if (it.value().is_string()) annotations[it.key()] = it.value().get<std::string>();
      }
    }
  }
  TOLLGATE_ASSIGN_OR_RETURN(
      std::optional<v1::PodSetTopologyRequest> request,
      TopologyRequestFromAnnotations(annotations, std::move(pod_index_label),
                                     absl::StrCat(path, ".metadata.annotations")));
  if (request.has_value()) *pod_set->mutable_topology_request() = *std::move(request);

  // Kept as given: the workload's codec checks the weights (1..100) and the terms.
  const Json* preferred = Find(pod_template, {"spec", "affinity", "nodeAffinity",
                                              "preferredDuringSchedulingIgnoredDuringExecution"});
  if (preferred != nullptr && preferred->is_array()) {
    for (const Json& term : *preferred) {
      v1::PreferredSchedulingTerm* out = pod_set->add_preferred_node_affinity();
      if (const auto w = term.find("weight"); w != term.end() && w->is_number_integer()) {
        // Out of int32 it is out of 1..100 too: clamped, it is still refused.
        out->set_weight(
            static_cast<int32_t>(std::clamp<int64_t>(w->get<int64_t>(), INT32_MIN, INT32_MAX)));
      }
      if (const auto p = term.find("preference"); p != term.end() && p->is_object()) {
        v1::NodeSelectorTerm* preference = out->mutable_preference();
        AppendNodeSelectorRequirements(*p, "matchExpressions",
                                       preference->mutable_match_expressions());
        AppendNodeSelectorRequirements(*p, "matchFields", preference->mutable_match_fields());
      }
    }
  }

  const Json* terms =
      Find(pod_template, {"spec", "affinity", "nodeAffinity",
                          "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms"});
  if (terms == nullptr || !terms->is_array()) return absl::OkStatus();
  const std::string terms_path =
      absl::StrCat(path,
                   ".spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
                   "nodeSelectorTerms");
  for (size_t i = 0; i < terms->size(); ++i) {
    const Json& term = (*terms)[i];
    v1::NodeSelectorTerm* out = pod_set->add_required_node_affinity();
    AppendNodeSelectorRequirements(term, "matchExpressions", out->mutable_match_expressions());
    AppendNodeSelectorRequirements(term, "matchFields", out->mutable_match_fields());
  }
  return absl::OkStatus();
}

}  // namespace tollgate::manifest
