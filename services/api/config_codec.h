#pragma once

// Conversion of the configuration kinds (Namespace, ResourceFlavor, ClusterQueue, Cohort,
// LocalQueue, WorkloadPriorityClass, PriorityClass) between the API and the core. The contract
// (validation, errors, defaults) is in services/api/api_codec.h.

#include "absl/status/statusor.h"
#include "core/types.h"
#include "tollgate/v1/objects.pb.h"

namespace tollgate::api {

// --- API -> core (validating) ---------------------------------------------------------------

absl::StatusOr<core::NamespaceSpec> NamespaceFromProto(const v1::Namespace& ns);
absl::StatusOr<core::ResourceFlavorSpec> ResourceFlavorFromProto(const v1::ResourceFlavor& rf);
absl::StatusOr<core::ClusterQueueSpec> ClusterQueueFromProto(const v1::ClusterQueue& cq);
absl::StatusOr<core::CohortSpec> CohortFromProto(const v1::Cohort& cohort);
absl::StatusOr<core::LocalQueueSpec> LocalQueueFromProto(const v1::LocalQueue& lq);
// is_pod_priority_class is false.
absl::StatusOr<core::PriorityClassSpec> PriorityClassFromProto(const v1::WorkloadPriorityClass& pc);
// is_pod_priority_class is true.
absl::StatusOr<core::PriorityClassSpec> PriorityClassFromProto(const v1::PriorityClass& pc);

// --- core -> API ----------------------------------------------------------------------------

v1::Namespace NamespaceToProto(const core::NamespaceSpec& ns);
v1::ResourceFlavor ResourceFlavorToProto(const core::ResourceFlavorSpec& rf);
v1::ClusterQueue ClusterQueueToProto(const core::ClusterQueueSpec& cq);
v1::Cohort CohortToProto(const core::CohortSpec& cohort);
v1::LocalQueue LocalQueueToProto(const core::LocalQueueSpec& lq);
v1::WorkloadPriorityClass WorkloadPriorityClassToProto(const core::PriorityClassSpec& pc);
v1::PriorityClass PriorityClassToProto(const core::PriorityClassSpec& pc);

}  // namespace tollgate::api
