#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "core/quantity.h"

namespace tollgate::core {

enum class FairSharingStrategy { kLessThanOrEqualToFinalShare, kLessThanInitialShare };
enum class RequeuingTimestamp { kEviction, kCreation };
// Kueue's resources.quotaCheckStrategy: what a request for a resource the ClusterQueue does not
// cover does to a workload. Block: it cannot be admitted there; Ignore: the request is left out
// of quota (no flavor, no usage).
enum class QuotaCheckStrategy { kBlockUndeclared, kIgnoreUndeclared };
// Kueue's ResourceTransformationStrategy: whether the input resource stays in the requests
// beside the outputs (Retain) or gives way to them (Replace).
enum class TransformationStrategy { kRetain, kReplace };

// One entry of Kueue's resources.transformations: a pod's request for `input` also asks quota
// for each output, `factor` per unit of input (times the pod's request for `multiply_by` when it
// names a resource the pod requests). core/quota_requests.h applies it.
struct ResourceTransformation {
  std::string input;
  TransformationStrategy strategy = TransformationStrategy::kRetain;
  // Empty: none.
  std::string multiply_by;
  // Output resource -> quantity per unit of input, sorted by resource; a negative quantity is an
  // allowance that other outputs of the same name are reduced by.
  std::vector<std::pair<std::string, Quantity>> outputs;
};

// Kueue's Configuration fields that change admission decisions, plus Tollgate's own knobs.
// Read from Kueue's Configuration by services/manifest/kueue_configuration.h.
struct SchedulerConfig {
  struct FairSharing {
    bool enable = false;
    std::vector<FairSharingStrategy> preemption_strategies = {
        FairSharingStrategy::kLessThanOrEqualToFinalShare,
        FairSharingStrategy::kLessThanInitialShare};
  };
  struct AdmissionFairSharing {
    bool enable = false;
    absl::Duration usage_half_life_time = absl::ZeroDuration();
    absl::Duration usage_sampling_interval = absl::Minutes(5);
    std::map<std::string, double> resource_weights;
  };
  struct WaitForPodsReady {
    bool enable = false;
    absl::Duration timeout = absl::Minutes(5);
    bool block_admission = false;
    std::optional<absl::Duration> recovery_timeout;
    RequeuingTimestamp requeuing_timestamp = RequeuingTimestamp::kEviction;
    int64_t backoff_base_seconds = 60;
    std::optional<int32_t> backoff_limit_count;
    int64_t backoff_max_seconds = 3600;
  };

  FairSharing fair_sharing;
  AdmissionFairSharing admission_fair_sharing;
  WaitForPodsReady wait_for_pods_ready;
  // Kueue's resources.excludeResourcePrefixes: a request for a resource whose name starts with
  // one of these is dropped when a workload is submitted, so it is neither queued for nor
  // counted against quota (e.g. "example.com/" for a device plugin Kueue need not manage).
  std::vector<std::string> exclude_resource_prefixes;
  // Kueue's resources.transformations, in the file's order, each input once. Applied whenever a
  // pending workload's quota requests are computed (core/quota_requests.h), from its spec as
  // submitted: a changed list takes effect for pending workloads at the next start, and an
  // admission keeps the usage it was admitted with.
  std::vector<ResourceTransformation> resource_transformations;
  // Kueue's resources.quotaCheckStrategy (with its QuotaCheckStrategy feature gate on, Kueue
  // 0.19's default). Kueue refuses IgnoreUndeclared together with exclude_resource_prefixes.
  QuotaCheckStrategy quota_check_strategy = QuotaCheckStrategy::kBlockUndeclared;

  // Tollgate's cost attribution (Kueue has none; its nearest are the pod labels
  // kueue.x-k8s.io/local-queue-name and cluster-queue-name): the LocalQueue label keys (e.g.
  // "team", "cost-center") whose values an admission copies into Admission::pod_labels, for
  // the adapter to put on the workload's pods.
  std::vector<std::string> local_queue_label_keys_to_copy;

  // When true a preempted workload keeps its quota until ReleaseEvicted (the adapter reports its
  // pods stopped) or `eviction_grace_period` passes; when false it is released at once.
  bool evictions_need_ack = false;
  absl::Duration eviction_grace_period = absl::Minutes(2);

  // Kueue's deprecated feature gate TASReplaceNodeDueToNotReadyOverFixedTime (default off since
  // Kueue 0.19): a node not ready for kNodeFailureDelay fails the placements on it whatever
  // their pods do (core/node_failure_rule.h).
  bool replace_node_not_ready_over_fixed_time = false;

  // Kueue's feature gate PrioritizePreemptorWorkloads (alpha, off by default; kueue#13797): a
  // head that is its ClusterQueue's preemptor (requeued waiting for its victims to stop) goes
  // first in the cycle's order, and holds the quota it needs back from the cohort even where
  // it could always reclaim it, so no other workload takes what its victims free meanwhile.
  bool prioritize_preemptor_workloads = false;

  // Kueue's feature gates that switch one step of admission, at Kueue's defaults. Each is read
  // from a Configuration only once Tollgate implements both values
  // (services/manifest/kueue_configuration.cc, kSchedulerGates); until then a Configuration
  // setting the other value is refused.
  // PartialAdmission (beta, on): a pod set's minCount lets a workload be admitted with fewer
  // pods; off, minCount is ignored and every pod set is admitted whole or not at all.
  bool partial_admission = true;
  // PrioritySortingWithinCohort (beta, on): the cycle's heads are ordered by priority before
  // their queue time; off, by borrowing and then queue time only.
  bool priority_sorting_within_cohort = true;
  // PriorityBoost (alpha, off): the kueue.x-k8s.io/priority-boost annotation adds to a
  // workload's effective priority.
  bool priority_boost = false;
  // TASBalancedPlacement (alpha, off): a preferred topology request spreads its pods evenly over
  // the fewest domains that hold them, instead of best fit.
  bool tas_balanced_placement = false;
  // TASRespectNodeAffinityPreferred (alpha, off): preferred node affinity ranks domains before
  // the placement policy's own order.
  bool tas_respect_node_affinity_preferred = false;
  // TASFailedNodeReplacementFailFast (beta, on): a workload whose failed node finds no
  // replacement at the first attempt is evicted; off, the replacement is tried again.
  bool tas_failed_node_replacement_fail_fast = true;
  // TASRecomputeAssignmentWithinSchedulingCycle (beta, on): a topology head whose nodes an
  // earlier head of the same cycle took is placed again within the cycle; off, it waits for
  // the next cycle.
  bool tas_recompute_assignment_within_scheduling_cycle = true;
  // RecomputeAssignmentUponPreemptionTargetsOverlap (beta, on): a head whose preemption targets
  // an earlier head of the cycle already preempts is assigned again with those victims gone;
  // off, it is skipped for the cycle.
  bool recompute_assignment_upon_preemption_targets_overlap = true;
  // ReclaimablePods (on by default in Kueue): an admitted workload's reclaimable pods give their
  // quota back and a pending one asks only for the pods it still needs; off, the pods are still
  // recorded but every pod set counts whole, and tollgate-kube reports none.
  bool reclaimable_pods = true;
  // AdmissionGatedBy (beta, on by default in Kueue): a workload whose
  // kueue.x-k8s.io/admission-gated-by annotation names gates waits out of its queue until they
  // are removed (core/admission_gates.h); off, the annotation is kept but neither checked nor
  // obeyed, and tollgate-kube does not copy it from a job.
  bool admission_gated_by = true;

  // Kueue's objectRetentionPolicies.workloads.afterFinished: a finished workload is deleted once
  // its Finished condition is this old (zero: at once). Unset keeps finished workloads.
  std::optional<absl::Duration> finished_workload_retention;
};

}  // namespace tollgate::core
