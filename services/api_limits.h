#pragma once

// The API's limits on object shape, in one place (docs/api.md lists them).

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

}  // namespace tollgate::services
