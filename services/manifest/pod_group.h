#pragma once

// Kueue's pod integration (pkg/controller/jobs/pod): plain Pods and pod groups as workloads.
// Pure decisions over pod JSON as the API server serves it; the adapter does the I/O (listing a
// group's pods, deleting excess pods, ungating). docs/pod-integrations.md has the rules in
// Tollgate's words.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "services/manifest/prebuilt_workload.h"

namespace tollgate::manifest {

// Kueue's names (pkg/controller/jobs/pod/constants, pkg/controller/constants).
inline constexpr char kAdmissionGate[] = "kueue.x-k8s.io/admission";
inline constexpr char kManagedLabel[] = "kueue.x-k8s.io/managed";
inline constexpr char kPodGroupNameKey[] = "kueue.x-k8s.io/pod-group-name";
inline constexpr char kPodGroupTotalCountAnnotation[] = "kueue.x-k8s.io/pod-group-total-count";
inline constexpr char kPodGroupFastAdmissionAnnotation[] =
    "kueue.x-k8s.io/pod-group-fast-admission";
inline constexpr char kPodGroupServingAnnotation[] = "kueue.x-k8s.io/pod-group-serving";
inline constexpr char kRetriableInGroupAnnotation[] = "kueue.x-k8s.io/retriable-in-group";
inline constexpr char kIsGroupWorkloadAnnotation[] = "kueue.x-k8s.io/is-group-workload";
inline constexpr char kSuspendedByParentAnnotation[] = "kueue.x-k8s.io/pod-suspending-parent";
// Topology placement ranks a plain pod or pod group member by this label, copied from the label
// the annotation names (Kueue's webhook copies it; Tollgate when it ungates the pod).
inline constexpr char kPodGroupPodIndexLabel[] = "kueue.x-k8s.io/pod-group-pod-index";
inline constexpr char kPodGroupPodIndexLabelAnnotation[] =
    "kueue.x-k8s.io/pod-group-pod-index-label";
// Kueue's pod-group roles hold at most this many pod sets (jobframework.MaxPodSets).
inline constexpr int kMaxPodSets = 18;

// Small readers of a pod's JSON.
std::string PodName(const nlohmann::json& pod);
std::string PodPhase(const nlohmann::json& pod);
// A label or annotation, "" when absent.
std::string PodLabel(const nlohmann::json& pod, absl::string_view key);
std::string PodAnnotation(const nlohmann::json& pod, absl::string_view key);
// Carries the scheduling gate kueue.x-k8s.io/admission.
bool IsGated(const nlohmann::json& pod);
// Succeeded or Failed.
bool IsTerminated(const nlohmann::json& pod);
bool IsReady(const nlohmann::json& pod);
// Kueue's isPodRunnableOrSucceeded: not Failed, and not deleted before it got a node.
bool IsRunnableOrSucceeded(const nlohmann::json& pod);
// Kueue's IsActive for one pod: Running, and not deleted longer than its grace period ago.
bool IsActivePod(const nlohmann::json& pod, absl::Time now);

// The group a pod belongs to (the annotation kueue.x-k8s.io/pod-group-name, else the label of
// that name, as Kueue with WorkloadIdentifierAnnotations); "" for a plain pod.
std::string PodGroupName(const nlohmann::json& pod);

// What the members of one group agree on.
struct PodGroupInfo {
  std::string name;
  int32_t total_count = 0;
  bool fast_admission = false;
  // Kueue's pod-group-serving: the group never finishes and gives nothing back early.
  bool serving = false;
  // Some member is not retriable (retriable-in-group: "false"): the group ends when none runs.
  bool unretriable = false;
  std::string queue_name;
  std::string prebuilt_workload;
};

// Kueue's validatePodGroupMetadata over `pods` (the first one is the reference): the total-count
// annotation must be a positive integer and every member that has not failed must name the same
// total and the same queue. INVALID_ARGUMENT naming the pods and both values otherwise (a total
// count that changes is refused, as Kueue refuses it).
absl::StatusOr<PodGroupInfo> ReadPodGroup(const std::vector<nlohmann::json>& pods,
                                          absl::string_view queue_label_key);

// A role of the group: the pods with one role hash, and one of them as the pod set's template.
struct PodRole {
  std::string hash;
  int32_t count = 0;
  nlohmann::json representative;
};

// The workload a group without one gets (Kueue's ConstructComposableWorkload for a group).
struct NewGroupWorkload {
  // Sorted by hash. With fast admission: one role, counted at the total.
  std::vector<PodRole> roles;
  // Runnable pods beyond the total, youngest (and gated) first to go: delete them.
  std::vector<std::string> excess_pods;
};

// FAILED_PRECONDITION "'<group>' group has fewer runnable pods than expected" while members are
// missing (without fast admission); INVALID_ARGUMENT for more than kMaxPodSets roles or a pod
// whose role hash cannot be computed.
absl::StatusOr<NewGroupWorkload> ComposeGroup(const std::vector<nlohmann::json>& pods,
                                              const PodGroupInfo& group);

// One pod set of the group's existing workload.
struct WorkloadPodSet {
  std::string name;
  int32_t count = 0;
};

// How the pods of a group line up with its existing workload (Kueue's FindMatchingWorkloads for
// a group).
struct GroupMatch {
  // The workload still describes the group: every role of the kept pods is one of its pod sets,
  // in order, with no more pods than it counts (any number once it has finished).
  bool equivalent = false;
  // Pods the workload's pod sets count that do not exist (a fast-admission role counts 1 while
  // none of its pods exists): Kueue's WaitingForReplacementPods while positive.
  int32_t absent = 0;
  // Runnable pods of a role beyond its count, youngest (and gated) first: delete them.
  std::vector<std::string> excess_pods;
  // The members the workload runs: runnable pods within their role's count, and failed ones.
  std::vector<nlohmann::json> kept;
};

absl::StatusOr<GroupMatch> MatchGroup(const std::vector<nlohmann::json>& pods,
                                      const PodGroupInfo& group,
                                      const std::vector<WorkloadPodSet>& workload,
                                      bool workload_finished);

// Kueue's EquivalentToWorkload for a group bound to a prebuilt workload (a StatefulSet's or a
// LeaderWorkerSet group's): the roles of all its runnable pods (with fast admission: the first
// one's, counted at the total) are pod sets of the workload, in order, within their counts. A
// prebuilt workload that is not is out of sync with its pods (Kueue finishes it).
absl::StatusOr<bool> GroupEquivalent(const std::vector<nlohmann::json>& pods,
                                     const PodGroupInfo& group,
                                     const std::vector<WorkloadPodSet>& workload,
                                     bool workload_finished);

// Kueue's Finished for a group over its kept members: every one of the total succeeded, or none
// is running any more and the group is not retriable. Never for a serving group.
struct GroupFinish {
  bool succeeded = true;
  std::string message;
};
std::optional<GroupFinish> GroupFinished(const std::vector<nlohmann::json>& pods,
                                         const PodGroupInfo& group);

// Kueue's PodsReady for a group: all of the total exist and are Ready.
bool GroupPodsReady(const std::vector<nlohmann::json>& pods, const PodGroupInfo& group);

// Kueue's ReclaimablePods for a group: per role hash, how many of its members succeeded (their
// quota is given back while the rest run). None for a serving group. An error only when a pod's
// role cannot be computed.
absl::StatusOr<std::map<std::string, int32_t>> GroupReclaimablePods(
    const std::vector<nlohmann::json>& pods, const PodGroupInfo& group);

}  // namespace tollgate::manifest
