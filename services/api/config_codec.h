#pragma once

// Conversion of the configuration kinds (Namespace, ResourceFlavor, ClusterQueue, Cohort,
// LocalQueue, WorkloadPriorityClass, PriorityClass, AdmissionCheck) between the API and the
// core. The contract
// (validation, errors, defaults) is in services/api/api_codec.h.

#include <optional>

#include "absl/status/statusor.h"
#include "core/types.h"
#include "core/workload.h"
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
// The spec only: the status (its Active condition) is the check controller's
// (AdmissionCheckActiveFromProto).
absl::StatusOr<core::AdmissionCheckSpec> AdmissionCheckFromProto(const v1::AdmissionCheck& ac);
// The stored Active condition of an AdmissionCheck, if its controller reported one.
absl::StatusOr<std::optional<core::Condition>> AdmissionCheckActiveFromProto(
    const v1::AdmissionCheck& ac);

// --- core -> API ----------------------------------------------------------------------------

v1::Namespace NamespaceToProto(const core::NamespaceSpec& ns);
v1::ResourceFlavor ResourceFlavorToProto(const core::ResourceFlavorSpec& rf);
v1::ClusterQueue ClusterQueueToProto(const core::ClusterQueueSpec& cq);
v1::Cohort CohortToProto(const core::CohortSpec& cohort);
v1::LocalQueue LocalQueueToProto(const core::LocalQueueSpec& lq);
v1::WorkloadPriorityClass WorkloadPriorityClassToProto(const core::PriorityClassSpec& pc);
v1::PriorityClass PriorityClassToProto(const core::PriorityClassSpec& pc);
// With the Active condition in status when `active` is set.
v1::AdmissionCheck AdmissionCheckToProto(const core::AdmissionCheckSpec& ac,
                                         const std::optional<core::Condition>& active);

}  // namespace tollgate::api
