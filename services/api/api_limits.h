#pragma once

// The API's limits on object shape, in one place (docs/api.md lists them).

#include <cstddef>
#include <cstdint>

namespace tollgate::api {

// Kubernetes' own limits, and Tollgate's where Kubernetes bounds a map or list only through the
// object's size: generous for real workloads, small enough that one object cannot make a List
// page or the server's memory balloon. Beyond one, the request is INVALID_ARGUMENT naming the
// field.
//
// An object's serialized size (metadata and spec), as the API server's 1.5 MiB request limit
// for etcd.
inline constexpr int64_t kMaxObjectBytes = 1536 * 1024;
// Entries in any label map (metadata.labels, a pod set's nodeSelector, a selector's
// matchLabels) and in metadata.annotations (which also stay within Kubernetes' 256 KiB).
inline constexpr int kMaxLabels = 64;
inline constexpr int kMaxAnnotations = 64;
// A pod set's resource requests: no ClusterQueue covers more resources than this.
inline constexpr int kMaxPodSetRequests = 256;
inline constexpr int kMaxPodSetTolerations = 64;
// A pod set's resource errors (one per container at most) and each one's length.
inline constexpr int kMaxPodSetResourceErrors = 64;
inline constexpr size_t kMaxResourceErrorBytes = 4096;
// A client-chosen uid (Kubernetes' are 36-character UUIDs).
inline constexpr size_t kMaxUidBytes = 128;
// Each field of a workload's owner reference (Kubernetes names are at most 253 bytes).
inline constexpr size_t kMaxOwnerReferenceFieldBytes = 253;
// Free text stored with a workload: Finish messages, Preempt reasons (Kubernetes' limit on a
// condition message).
inline constexpr size_t kMaxMessageBytes = 32 * 1024;
// A workload's payload (a job manifest) and a reported job status: their data, and each of the
// fields that say what the data is.
inline constexpr size_t kMaxPayloadBytes = 256 * 1024;
inline constexpr size_t kMaxPayloadFieldBytes = 253;

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
// A ClusterQueue's admissionChecksStrategy entries and one entry's onFlavors; an
// AdmissionCheck's controllerName; a check's podSetUpdates (one per pod set) and tolerations.
inline constexpr int kMaxAdmissionChecks = 64;
inline constexpr int kMaxCheckOnFlavors = 64;
inline constexpr size_t kMaxControllerNameBytes = 253;
inline constexpr int kMaxPodSetUpdateTolerations = 8;
// Kubernetes' HighestUserDefinablePriority for a PriorityClass, and its two built-in classes
// above it.
inline constexpr int32_t kMaxUserPriority = 1000000000;
inline constexpr int32_t kSystemClusterCriticalPriority = 2000000000;
inline constexpr int32_t kSystemNodeCriticalPriority = 2000001000;

}  // namespace tollgate::api
