#include "services/api/topology_codec.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/error_text.h"
#include "core/names.h"
#include "core/quantity.h"
#include "core/status_macros.h"
#include "core/topology_validation.h"
#include "services/api/api_limits.h"
#include "services/api/api_validation.h"
#include "services/api/selector_codec.h"

namespace tollgate::api {
namespace {

using codec::CheckMaxItems;
using codec::CheckObjectSize;
using codec::Child;
using codec::Index;
using codec::Key;
using codec::LabelsFromProto;
using codec::LabelsToProto;
using codec::NameRule;
using codec::ParseResourceAmount;
using codec::Quote;
using codec::Reporter;
using codec::Sorted;
using codec::TaintsFromProto;
using codec::TimeFromProto;
using codec::TimeToProto;
using codec::ValidateMetadata;

constexpr int kMaxNodeResources = 64;
constexpr int kMaxNodeTaints = 64;
// A node runs at most a few hundred pods; this bounds a request, not a real node.
constexpr int kMaxNodeRunningWorkloads = 1000;
constexpr int kMaxAffinityTerms = 16;
constexpr int kMaxAffinityExpressions = 32;

// Resource name -> quantity, sorted by resource, each a valid name and a non-negative quantity.
absl::StatusOr<core::ResourceAmounts> AmountsFromProto(
    const Reporter& r, absl::string_view path,
    const google::protobuf::Map<std::string, std::string>& amounts) {
  TOLLGATE_RETURN_IF_ERROR(
      CheckMaxItems(r, path, static_cast<int>(amounts.size()), kMaxNodeResources, "entries"));
  core::ResourceAmounts out;
  for (const auto& [resource, text] : Sorted(amounts)) {
    const std::string rpath = Key(path, resource);
    TOLLGATE_RETURN_IF_ERROR(r.At(rpath, core::ValidateQualifiedName(resource)));
    TOLLGATE_ASSIGN_OR_RETURN(int64_t amount, ParseResourceAmount(r, rpath, resource, text));
    out.emplace_back(resource, amount);
  }
  return out;
}

std::vector<core::LabelSelectorRequirement> RequirementsFromProto(
    const google::protobuf::RepeatedPtrField<v1::NodeSelectorRequirement>& requirements) {
  std::vector<core::LabelSelectorRequirement> out;
  out.reserve(requirements.size());
  for (const v1::NodeSelectorRequirement& e : requirements) {
    out.push_back(core::LabelSelectorRequirement{
        e.key(), e.operator_(), std::vector<std::string>(e.values().begin(), e.values().end())});
  }
  return out;
}

void RequirementsToProto(const std::vector<core::LabelSelectorRequirement>& requirements,
                         google::protobuf::RepeatedPtrField<v1::NodeSelectorRequirement>* out) {
  for (const core::LabelSelectorRequirement& req : requirements) {
    v1::NodeSelectorRequirement* pe = out->Add();
    pe->set_key(req.key);
    pe->set_operator_(req.op);
    for (const std::string& v : req.values) pe->add_values(v);
  }
}

}  // namespace

void ResourceAmountsToProto(const core::ResourceAmounts& amounts,
                            google::protobuf::Map<std::string, std::string>* out) {
  for (const auto& [resource, amount] : amounts) {
    (*out)[resource] = core::FormatResourceScalar(resource, amount);
  }
}

absl::StatusOr<core::TopologySpec> TopologyFromProto(const v1::Topology& topology) {
  const Reporter r("Topology", "", topology.metadata().name());
  TOLLGATE_RETURN_IF_ERROR(CheckObjectSize(r, topology.ByteSizeLong()));
  TOLLGATE_RETURN_IF_ERROR(
      ValidateMetadata(r, topology.metadata(), NameRule::kDns1123Subdomain, /*namespaced=*/false));
  core::TopologySpec out;
  out.name = topology.metadata().name();
  for (const v1::TopologyLevel& level : topology.spec().levels()) {
    out.levels.push_back(level.node_label());
  }
  TOLLGATE_RETURN_IF_ERROR(r.Wrap(core::ValidateTopology(out)));
  return out;
}

v1::Topology TopologyToProto(const core::TopologySpec& topology) {
  v1::Topology out;
  out.mutable_metadata()->set_name(topology.name);
  for (const std::string& level : topology.levels) {
    out.mutable_spec()->add_levels()->set_node_label(level);
  }
  return out;
}

absl::StatusOr<core::NodeSpec> NodeFromProto(const v1::Node& node) {
  const Reporter r("Node", "", node.metadata().name());
  TOLLGATE_RETURN_IF_ERROR(CheckObjectSize(r, node.ByteSizeLong()));
  TOLLGATE_RETURN_IF_ERROR(
      ValidateMetadata(r, node.metadata(), NameRule::kDns1123Subdomain, /*namespaced=*/false));
  core::NodeSpec out;
  out.name = node.metadata().name();
  TOLLGATE_RETURN_IF_ERROR(
      LabelsFromProto(r, "metadata.labels", node.metadata().labels(), &out.labels));
  TOLLGATE_RETURN_IF_ERROR(
      CheckMaxItems(r, "spec.taints", node.spec().taints_size(), kMaxNodeTaints));
  TOLLGATE_ASSIGN_OR_RETURN(out.taints, TaintsFromProto(r, "spec.taints", node.spec().taints()));
  out.unschedulable = node.spec().unschedulable();
  TOLLGATE_ASSIGN_OR_RETURN(out.allocatable,
                            AmountsFromProto(r, "status.allocatable", node.status().allocatable()));
  out.ready = !node.status().has_ready() || node.status().ready();
  if (node.status().has_not_ready_since()) {
    if (out.ready) {
      return r.Invalid("status.notReadySince", "must be unset on a node that is ready");
    }
    TOLLGATE_ASSIGN_OR_RETURN(
        out.not_ready_since,
        TimeFromProto(r, "status.notReadySince", /*has=*/true, node.status().not_ready_since()));
  }
  TOLLGATE_RETURN_IF_ERROR(CheckMaxItems(r, "status.runningWorkloads",
                                         node.status().running_workloads_size(),
                                         kMaxNodeRunningWorkloads));
  for (int i = 0; i < node.status().running_workloads_size(); ++i) {
    const std::string& key = node.status().running_workloads(i);
    const std::vector<std::string> parts = absl::StrSplit(key, absl::MaxSplits('/', 1));
    if (parts.size() != 2 || !core::ValidateDns1123Label(parts[0]).ok() ||
        !core::ValidateDns1123Subdomain(parts[1]).ok()) {
      return r.Invalid(absl::StrCat("status.runningWorkloads[", i, "]"),
                       absl::StrCat("must be namespace/name, got ", core::QuoteValue(key)));
    }
    out.running_workloads.push_back(key);
  }
  absl::c_sort(out.running_workloads);
  out.running_workloads.erase(
      std::unique(out.running_workloads.begin(), out.running_workloads.end()),
      out.running_workloads.end());
  return out;
}

v1::Node NodeToProto(const core::NodeSpec& node) {
  v1::Node out;
  out.mutable_metadata()->set_name(node.name);
  LabelsToProto(node.labels, out.mutable_metadata()->mutable_labels());
  for (const core::Taint& t : node.taints) {
    v1::Taint* pt = out.mutable_spec()->add_taints();
    pt->set_key(t.key);
    pt->set_value(t.value);
    pt->set_effect(t.effect);
  }
  out.mutable_spec()->set_unschedulable(node.unschedulable);
  ResourceAmountsToProto(node.allocatable, out.mutable_status()->mutable_allocatable());
  out.mutable_status()->set_ready(node.ready);
  if (node.not_ready_since.has_value()) {
    TimeToProto(*node.not_ready_since, out.mutable_status()->mutable_not_ready_since());
  }
  for (const std::string& key : node.running_workloads) {
    out.mutable_status()->add_running_workloads(key);
  }
  return out;
}

absl::StatusOr<ReportedPod> NodePodFromProto(const v1::NodePod& pod, absl::string_view path) {
  // Errors name the request's field; the pod has no object of its own.
  auto invalid = [&](absl::string_view field, absl::string_view reason) {
    return absl::InvalidArgumentError(absl::StrCat(path, ".", field, ": ", reason));
  };
  ReportedPod out;
  if (pod.name().empty()) return invalid("name", "required value, got \"\"");
  if (pod.name().size() > 512) {
    return invalid("name", absl::StrCat("must be at most 512 bytes, got ", pod.name().size()));
  }
  out.name = pod.name();
  if (absl::Status s = core::ValidateDns1123Subdomain(pod.node_name()); !s.ok()) {
    return invalid("nodeName", s.message());
  }
  out.node = pod.node_name();
  const Reporter r("Pod", "", pod.name());
  TOLLGATE_ASSIGN_OR_RETURN(out.requests,
                            AmountsFromProto(r, absl::StrCat(path, ".requests"), pod.requests()));
  return out;
}

v1::NodePod NodePodToProto(absl::string_view name, absl::string_view node,
                           const core::ResourceAmounts& requests) {
  v1::NodePod out;
  out.set_name(std::string(name));
  out.set_node_name(std::string(node));
  ResourceAmountsToProto(requests, out.mutable_requests());
  return out;
}

void TopologyAssignmentToProto(const core::TopologyAssignment& assignment,
                               v1::TopologyAssignment* out) {
  for (const std::string& level : assignment.levels) out->add_levels(level);
  for (const core::TopologyDomainAssignment& d : assignment.domains) {
    v1::TopologyDomainAssignment* pd = out->add_domains();
    for (const std::string& v : d.values) pd->add_values(v);
    pd->set_count(d.count);
  }
}

namespace codec {

absl::StatusOr<core::PodSetTopologyRequest> TopologyRequestFromProto(
    const Reporter& r, LazyPath path, const v1::PodSetTopologyRequest& t, int32_t count) {
  const std::string base = Child(path(), "topologyRequest");
  core::PodSetTopologyRequest out;
  if (t.has_required()) out.required = t.required();
  if (t.has_preferred()) out.preferred = t.preferred();
  out.unconstrained = t.has_unconstrained() && t.unconstrained();
  if (t.has_pod_index_label()) {
    TOLLGATE_RETURN_IF_ERROR(
        r.At(Child(base, "podIndexLabel"), core::ValidateQualifiedName(t.pod_index_label())));
    out.pod_index_label = t.pod_index_label();
  }
  if (t.has_sub_group_index_label()) {
    TOLLGATE_RETURN_IF_ERROR(r.At(Child(base, "subGroupIndexLabel"),
                                  core::ValidateQualifiedName(t.sub_group_index_label())));
    out.sub_group_index_label = t.sub_group_index_label();
  }
  if (t.has_sub_group_count()) {
    if (t.sub_group_count() < 1) {
      return r.Invalid(
          Child(base, "subGroupCount"),
          absl::StrCat("must be greater than or equal to 1, got ", t.sub_group_count()));
    }
    out.sub_group_count = t.sub_group_count();
  }
  if (t.has_pod_set_group_name()) out.pod_set_group = t.pod_set_group_name();

  // Kueue's slice fields: podSetSliceRequiredTopology and podSetSliceSize go together, and the
  // multi-layer list replaces both.
  const std::string constraints = Child(base, "podsetSliceRequiredTopologyConstraints");
  if (t.podset_slice_required_topology_constraints_size() > 0) {
    if (t.has_pod_set_slice_required_topology()) {
      return r.Invalid(constraints, "may not be set when podSetSliceRequiredTopology is specified");
    }
    if (t.has_pod_set_slice_size()) {
      return r.Invalid(constraints, "may not be set when podSetSliceSize is specified");
    }
    for (const v1::PodSetSliceTopologyConstraint& c :
         t.podset_slice_required_topology_constraints()) {
      out.slices.push_back(core::SliceConstraint{c.topology(), c.size()});
    }
  } else if (t.has_pod_set_slice_required_topology()) {
    if (!t.has_pod_set_slice_size()) {
      return r.Invalid(Child(base, "podSetSliceSize"),
                       "must be set when podSetSliceRequiredTopology is specified");
    }
    out.slices.push_back(
        core::SliceConstraint{t.pod_set_slice_required_topology(), t.pod_set_slice_size()});
  } else if (t.has_pod_set_slice_size()) {
    return r.Invalid(Child(base, "podSetSliceSize"),
                     "may not be set when podSetSliceRequiredTopology is not specified");
  }
  TOLLGATE_RETURN_IF_ERROR(r.Wrap(core::ValidatePodSetTopologyRequest(out, count, path())));
  return out;
}

void TopologyRequestToProto(const core::PodSetTopologyRequest& t, v1::PodSetTopologyRequest* out) {
  if (t.required.has_value()) out->set_required(*t.required);
  if (t.preferred.has_value()) out->set_preferred(*t.preferred);
  if (t.unconstrained) out->set_unconstrained(true);
  if (t.pod_index_label.has_value()) out->set_pod_index_label(*t.pod_index_label);
  if (t.sub_group_index_label.has_value()) out->set_sub_group_index_label(*t.sub_group_index_label);
  if (t.sub_group_count.has_value()) out->set_sub_group_count(*t.sub_group_count);
  if (t.pod_set_group.has_value()) out->set_pod_set_group_name(*t.pod_set_group);
  if (t.slices.size() == 1) {
    out->set_pod_set_slice_required_topology(t.slices[0].level);
    out->set_pod_set_slice_size(t.slices[0].size);
  } else {
    for (const core::SliceConstraint& c : t.slices) {
      v1::PodSetSliceTopologyConstraint* pc = out->add_podset_slice_required_topology_constraints();
      pc->set_topology(c.level);
      pc->set_size(c.size);
    }
  }
}

absl::StatusOr<std::vector<core::NodeSelectorTerm>> NodeAffinityFromProto(
    const Reporter& r, LazyPath path,
    const google::protobuf::RepeatedPtrField<v1::NodeSelectorTerm>& terms) {
  TOLLGATE_RETURN_IF_ERROR(CheckMaxItems(r, path(), terms.size(), kMaxAffinityTerms));
  std::vector<core::NodeSelectorTerm> out;
  for (int i = 0; i < terms.size(); ++i) {
    TOLLGATE_RETURN_IF_ERROR(CheckMaxItems(r, Child(Index(path(), i), "matchExpressions"),
                                           terms[i].match_expressions_size(),
                                           kMaxAffinityExpressions));
    TOLLGATE_RETURN_IF_ERROR(CheckMaxItems(r, Child(Index(path(), i), "matchFields"),
                                           terms[i].match_fields_size(), kMaxAffinityExpressions));
    core::NodeSelectorTerm term;
    term.match_expressions = RequirementsFromProto(terms[i].match_expressions());
    term.match_fields = RequirementsFromProto(terms[i].match_fields());
    out.push_back(std::move(term));
  }
  TOLLGATE_RETURN_IF_ERROR(r.Wrap(core::ValidateRequiredNodeAffinity(out, path())));
  return out;
}

void NodeAffinityToProto(const std::vector<core::NodeSelectorTerm>& terms,
                         google::protobuf::RepeatedPtrField<v1::NodeSelectorTerm>* out) {
  for (const core::NodeSelectorTerm& term : terms) {
    v1::NodeSelectorTerm* pt = out->Add();
    RequirementsToProto(term.match_expressions, pt->mutable_match_expressions());
    RequirementsToProto(term.match_fields, pt->mutable_match_fields());
  }
}

absl::StatusOr<std::vector<core::PreferredSchedulingTerm>> PreferredNodeAffinityFromProto(
    const Reporter& r, LazyPath path,
    const google::protobuf::RepeatedPtrField<v1::PreferredSchedulingTerm>& terms) {
  TOLLGATE_RETURN_IF_ERROR(CheckMaxItems(r, path(), terms.size(), kMaxAffinityTerms));
  std::vector<core::PreferredSchedulingTerm> out;
  out.reserve(terms.size());
  for (int i = 0; i < terms.size(); ++i) {
    const v1::NodeSelectorTerm& preference = terms[i].preference();
    const std::string preference_path = Child(Index(path(), i), "preference");
    TOLLGATE_RETURN_IF_ERROR(CheckMaxItems(r, Child(preference_path, "matchExpressions"),
                                           preference.match_expressions_size(),
                                           kMaxAffinityExpressions));
    TOLLGATE_RETURN_IF_ERROR(CheckMaxItems(r, Child(preference_path, "matchFields"),
                                           preference.match_fields_size(),
                                           kMaxAffinityExpressions));
    core::PreferredSchedulingTerm term;
    term.weight = terms[i].weight();
    term.preference.match_expressions = RequirementsFromProto(preference.match_expressions());
    term.preference.match_fields = RequirementsFromProto(preference.match_fields());
    out.push_back(std::move(term));
  }
  TOLLGATE_RETURN_IF_ERROR(r.Wrap(core::ValidatePreferredNodeAffinity(out, path())));
  return out;
}

void PreferredNodeAffinityToProto(
    const std::vector<core::PreferredSchedulingTerm>& terms,
    google::protobuf::RepeatedPtrField<v1::PreferredSchedulingTerm>* out) {
  for (const core::PreferredSchedulingTerm& term : terms) {
    v1::PreferredSchedulingTerm* pt = out->Add();
    pt->set_weight(term.weight);
    v1::NodeSelectorTerm* preference = pt->mutable_preference();
    RequirementsToProto(term.preference.match_expressions, preference->mutable_match_expressions());
    RequirementsToProto(term.preference.match_fields, preference->mutable_match_fields());
  }
}

absl::StatusOr<core::TopologyAssignment> TopologyAssignmentFromProto(
    const Reporter& r, absl::string_view path, const v1::TopologyAssignment& assignment) {
  core::TopologyAssignment out;
  out.levels.assign(assignment.levels().begin(), assignment.levels().end());
  for (int i = 0; i < assignment.domains_size(); ++i) {
    const v1::TopologyDomainAssignment& d = assignment.domains(i);
    const std::string dpath = Index(Child(path, "domains"), i);
    if (d.values_size() != assignment.levels_size()) {
      return r.Invalid(Child(dpath, "values"),
                       absl::StrCat("must have one value per level (", assignment.levels_size(),
                                    "), got ", d.values_size()));
    }
    if (d.count() < 0) {
      return r.Invalid(Child(dpath, "count"),
                       absl::StrCat("must be greater than or equal to 0, got ", d.count()));
    }
    out.domains.push_back(core::TopologyDomainAssignment{
        std::vector<std::string>(d.values().begin(), d.values().end()), d.count()});
  }
  return out;
}

}  // namespace codec
}  // namespace tollgate::api
