#include "services/manifest/kueue_feature_gates.h"

#include <algorithm>
#include <iterator>

namespace tollgate::manifest {
namespace {

// Sorted by name. Refresh from Kueue's versioned gate list when following a newer Kueue: a gate
// it adds is otherwise refused as unknown, and a changed default is refused at its new value.
constexpr KueueFeatureGate kGates[] = {
    {"AdmissionFairSharing", true, false},
    {"AdmissionGatedBy", true, false},
    {"AssignQueueLabelsForPods", true, false},
    {"CleanupProvisioningRequestsOnEviction", true, false},
    {"ConcurrentAdmission", false, false},
    {"CustomMetricLabels", false, false},
    {"DeferRayServiceFinalizationForRedisCleanup", true, false},
    {"DisableWaitForPodsReady", false, false},
    {"ElasticJobsViaWorkloadSlices", true, false},
    {"ElasticJobsViaWorkloadSlicesWithTAS", false, false},
    {"FailureRecoveryPolicy", false, false},
    {"FairSharingPreemptWithinNominal", true, false},
    {"FairSharingPrioritizeNonBorrowing", true, false},
    {"FastQuotaReleaseInPodIntegration", false, false},
    {"FinishOrphanedWorkloads", true, false},
    {"FlavorFungibility", true, false},
    {"FlavorFungibilityPreserveScanProgress", true, false},
    {"KueueDRAIntegration", true, false},
    {"KueueDRAIntegrationConsumableCapacity", false, false},
    {"KueueDRAIntegrationExtendedResource", true, false},
    {"KueueDRAIntegrationPartitionableDevices", true, false},
    {"KueueDRARejectWorkloadsWhenDRADisabled", true, false},
    {"LWSImmutableGroupSize", true, false},
    {"LocalQueueMetrics", true, false},
    {"ManagedJobsNamespaceSelectorAlwaysRespected", true, false},
    {"MetricForWorkloadCreationLatency", true, false},
    {"MetricsForCohorts", true, false},
    {"MultiKueue", true, false},
    {"MultiKueueAdaptersForCustomJobs", true, false},
    {"MultiKueueClusterProfile", false, false},
    {"MultiKueueIncrementalDispatcherConfig", true, false},
    {"MultiKueueIncrementalDispatcherRespectConfigOrder", true, false},
    {"MultiKueueKubeConfigPathValidation", true, false},
    {"MultiKueueManagerQuotaAutomation", false, false},
    {"MultiKueueOrchestratedPreemption", false, false},
    {"MultiKueueRemoteSpecSync", true, false},
    {"PartialAdmission", true, false},
    {"PodIntegrationValidateGroupOwner", true, false},
    {"PrioritizePreemptorWorkloads", false, false},
    {"PriorityBoost", false, false},
    {"PrioritySortingWithinCohort", true, false},
    {"QuotaCheckStrategy", true, false},
    {"ReclaimablePods", true, false},
    {"RecomputeAssignmentUponPreemptionTargetsOverlap", true, false},
    {"RejectUpdatesToCQWithInvalidOnFlavors", false, false},
    {"RemoveFinalizersWithStrictPatch", true, false},
    {"SchedulerLibraryIntegration", false, false},
    {"SchedulingEquivalenceHashing", true, true},
    {"ShortWorkloadNames", false, false},
    {"SkipAncestorCheckForDeletedWorkloads", true, false},
    {"SkipReassignmentForPodOwnedWorkloads", true, false},
    {"SparkApplicationIntegration", false, false},
    {"TASAssignmentsEncodingByHostnamePrefix", true, false},
    {"TASBalancedPlacement", false, false},
    {"TASCacheNodeMatchResults", true, true},
    {"TASCacheTopologyTree", true, true},
    {"TASCachingRemainingResources", true, true},
    {"TASFailedNodeReplacement", true, false},
    {"TASFailedNodeReplacementFailFast", true, false},
    {"TASHandleOverlappingFlavors", true, false},
    {"TASMultiLayerTopology", true, false},
    {"TASProfileMixed", true, false},
    {"TASRecomputeAssignmentWithinSchedulingCycle", true, false},
    {"TASReplaceNodeDueToNotReadyOverFixedTime", false, false},
    {"TASReplaceNodeOnNodeTaints", true, false},
    {"TASReplaceNodeOnPodTermination", true, false},
    {"TASRespectNodeAffinityPreferred", false, false},
    {"TASValidateWorkloadSliceSize", true, false},
    {"TLSOptions", true, false},
    {"TopologyAwareScheduling", true, false},
    {"UnadmittedWorkloadsExplicitStatus", false, false},
    {"UnadmittedWorkloadsObservability", true, false},
    {"ValidateRayAndSparkJobUpdates", true, false},
    {"VectorizedResourceRequests", true, false},
    {"VisibilityOnDemand", true, false},
    {"WorkloadIdentifierAnnotations", true, false},
    {"WorkloadPriorityClassDefaulting", true, false},
    {"WorkloadRequestUseMergePatch", false, false},
    {"WorkloadValidateResourcesAreNonNegative", true, false},
    {"WorkloadValidationForPodSetMetadata", true, false},
};

}  // namespace

const KueueFeatureGate* FindKueueFeatureGate(absl::string_view name) {
  const KueueFeatureGate* it =
      std::lower_bound(std::begin(kGates), std::end(kGates), name,
                       [](const KueueFeatureGate& g, absl::string_view n) { return g.name < n; });
  return it != std::end(kGates) && it->name == name ? it : nullptr;
}

}  // namespace tollgate::manifest
