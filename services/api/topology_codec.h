#pragma once

// Conversion of Topology Aware Scheduling's API objects between the API and the core: the
// Topology kind, the node inventory (nodes and the pods Tollgate does not place), a pod set's
// topology request and required node affinity, and the topology assignment of an admission.
// The contract (validation, errors, defaults) is in services/api/api_codec.h.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/topology.h"
#include "core/types.h"
#include "google/protobuf/repeated_ptr_field.h"
#include "services/api/api_validation.h"
#include "tollgate/v1/inventory.pb.h"
#include "tollgate/v1/objects.pb.h"

namespace tollgate::api {

// Kueue's Topology schema (core/topology_validation.h).
absl::StatusOr<core::TopologySpec> TopologyFromProto(const v1::Topology& topology);
v1::Topology TopologyToProto(const core::TopologySpec& topology);

// A node of the inventory: name, labels, taints, allocatable quantities, ready (unset: ready),
// unschedulable. INVALID_ARGUMENT names the node, the field and the value.
absl::StatusOr<core::NodeSpec> NodeFromProto(const v1::Node& node);
v1::Node NodeToProto(const core::NodeSpec& node);

// A pod Tollgate does not place; `path` names it in the request (e.g. "pods[3]").
struct ReportedPod {
  std::string name;
  std::string node;
  core::ResourceAmounts requests;
};
absl::StatusOr<ReportedPod> NodePodFromProto(const v1::NodePod& pod, absl::string_view path);
v1::NodePod NodePodToProto(absl::string_view name, absl::string_view node,
                           const core::ResourceAmounts& requests);

// Quantities as the API spells them (resource -> quantity).
void ResourceAmountsToProto(const core::ResourceAmounts& amounts,
                            google::protobuf::Map<std::string, std::string>* out);

void TopologyAssignmentToProto(const core::TopologyAssignment& assignment,
                               v1::TopologyAssignment* out);

namespace codec {

// A pod set's topology request (`path` is the pod set's, `count` its pods): Kueue's field rules
// (one of required, preferred and unconstrained; slice fields together; multi-layer slices
// exclusive with the single-layer fields; sizes that divide), with the field named.
absl::StatusOr<core::PodSetTopologyRequest> TopologyRequestFromProto(
    const Reporter& r, LazyPath path, const v1::PodSetTopologyRequest& request, int32_t count);
void TopologyRequestToProto(const core::PodSetTopologyRequest& request,
                            v1::PodSetTopologyRequest* out);

// Required node affinity terms (operators In, NotIn, Exists, DoesNotExist, Gt, Lt).
absl::StatusOr<std::vector<core::NodeSelectorTerm>> NodeAffinityFromProto(
    const Reporter& r, LazyPath path,
    const google::protobuf::RepeatedPtrField<v1::NodeSelectorTerm>& terms);
void NodeAffinityToProto(const std::vector<core::NodeSelectorTerm>& terms,
                         google::protobuf::RepeatedPtrField<v1::NodeSelectorTerm>* out);

// Preferred node affinity terms: weight 1..100 and each preference as NodeAffinityFromProto
// checks a term.
absl::StatusOr<std::vector<core::PreferredSchedulingTerm>> PreferredNodeAffinityFromProto(
    const Reporter& r, LazyPath path,
    const google::protobuf::RepeatedPtrField<v1::PreferredSchedulingTerm>& terms);
void PreferredNodeAffinityToProto(
    const std::vector<core::PreferredSchedulingTerm>& terms,
    google::protobuf::RepeatedPtrField<v1::PreferredSchedulingTerm>* out);

// A stored admission's topology assignment.
absl::StatusOr<core::TopologyAssignment> TopologyAssignmentFromProto(
    const Reporter& r, absl::string_view path, const v1::TopologyAssignment& assignment);

}  // namespace codec
}  // namespace tollgate::api
