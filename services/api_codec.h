#pragma once

// Conversion between Tollgate's protobuf API objects (tollgate.v1) and the scheduling core's
// model (core/types.h, core/workload.h).
//
// The *FromProto functions are the service's only way into the core, so they enforce every rule
// Kueue's CRD schemas and validating webhooks enforce (plus Kubernetes' metadata rules), and
// apply Kueue's defaults. The core may then assume well-formed input and never has to
// re-validate.
//
// Errors are INVALID_ARGUMENT and read `KIND NAME: FIELD.PATH: reason`, with the field path in
// Kueue's JSON naming and the offending value quoted in the reason, e.g.
//   ClusterQueue team-a: spec.resourceGroups[0].flavors[1].resources[0].nominalQuota: invalid
//   quantity "abc": ...
//   Workload ns/x: spec.podSets[0].count: must be greater than or equal to 0, got -3
// Only the first problem found is reported; fields are checked in declaration order.
//
// Deliberate choices, following the API server rather than inventing stricter rules:
//  * a namespace on a cluster-scoped object is ignored (the API server drops it);
//  * metadata the service owns (uid, resourceVersion, generation, creationTimestamp) is not
//    checked on config objects;
//  * fields the core has no use for (toleration seconds, descriptions, a PriorityClass's
//    preemptionPolicy) are validated and then dropped.
//
// The *ToProto functions emit spec with Kueue's defaults spelled out (e.g. queueingStrategy
// BestEffortFIFO), the way `kubectl get` shows a defaulted object, and quantities in canonical
// form (FormatResourceScalar). They fill metadata name/namespace only; the service owns
// resourceVersion, generation and the status of config objects.

#include "absl/status/statusor.h"
#include "core/types.h"
#include "core/workload.h"
#include "tollgate/v1/objects.pb.h"

namespace tollgate::services {

// Limits from Kueue's CRDs (kubebuilder MaxItems markers) and webhooks.
inline constexpr int kMaxResourceGroups = 16;
inline constexpr int kMaxCoveredResourcesPerGroup = 64;
inline constexpr int kMaxFlavorsPerGroup = 64;
inline constexpr int kMaxTotalFlavors = 256;
inline constexpr int kMaxTotalCoveredResources = 256;
inline constexpr int kMaxFlavorResourceCombinationsPerGroup = 512;
// Kueue raised this from 8 to 18 (kueue#12819); both API versions carry the new limit.
inline constexpr int kMaxPodSets = 18;
inline constexpr int kMaxFlavorNodeLabels = 8;
inline constexpr int kMaxFlavorNodeTaints = 8;
inline constexpr int kMaxFlavorTolerations = 8;
inline constexpr int kMaxPriorityClassDescriptionLength = 2048;

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

// The spec of a submitted workload. An empty queueName resolves to the namespace's "default"
// LocalQueue and an empty podSet name to Kueue's "main". Status is ignored: a submission cannot
// set it.
absl::StatusOr<core::WorkloadSpec> WorkloadSpecFromProto(const v1::Workload& wl);

// Inverse of WorkloadToProto, for reloading persisted workloads: spec (validated as on submit),
// uid, creation time, effective priority (status.priority) and the full status. An unset
// timestamp reads as absl::InfinitePast(); WORKLOAD_STATE_UNSPECIFIED reads as pending. The
// core assigns `id` and derives `quota_usage`, so both are left at their defaults.
absl::StatusOr<core::Workload> WorkloadFromStoredProto(const v1::Workload& wl);

// A request's timestamp field; INVALID_ARGUMENT naming `field` when out of range.
absl::StatusOr<absl::Time> RequestTimeFromProto(absl::string_view field,
                                                const google::protobuf::Timestamp& ts);

// --- core -> API ----------------------------------------------------------------------------

v1::Namespace NamespaceToProto(const core::NamespaceSpec& ns);
v1::ResourceFlavor ResourceFlavorToProto(const core::ResourceFlavorSpec& rf);
v1::ClusterQueue ClusterQueueToProto(const core::ClusterQueueSpec& cq);
v1::Cohort CohortToProto(const core::CohortSpec& cohort);
v1::LocalQueue LocalQueueToProto(const core::LocalQueueSpec& lq);
v1::WorkloadPriorityClass WorkloadPriorityClassToProto(const core::PriorityClassSpec& pc);
v1::PriorityClass PriorityClassToProto(const core::PriorityClassSpec& pc);

// Writes metadata name/namespace/uid/creationTimestamp, the spec and the whole status. Other
// metadata already in `out` (labels, resourceVersion, ...) is kept, so the service can fill
// those before or after. Times equal to absl::InfinitePast() leave their Timestamp unset.
void WorkloadToProto(const core::Workload& wl, v1::Workload* out);

}  // namespace tollgate::services
