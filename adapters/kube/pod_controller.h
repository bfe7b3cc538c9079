#pragma once

// The reconciler for the kinds whose pods are held back by a scheduling gate instead of a
// suspend field: plain Pods, pod groups, Deployments, StatefulSets and LeaderWorkerSets (Kueue's
// pod, statefulset, deployment and leaderworkerset integrations; docs/pod-integrations.md). The
// pure rules are in services/manifest/pod_group.h; this class reads and writes the objects.
//
// Keys (ObjectKey::resource):
//   "pods"              a plain pod: one workload of one pod.
//   "podgroups"         the pods of a namespace with one kueue.x-k8s.io/pod-group-name: one
//                       workload named after the group (or the prebuilt workload they name).
//   "deployments"       puts the gate and Kueue's labels on the pod template; its pods are
//                       plain pods.
//   "statefulsets"      one group workload for the StatefulSet, owned by it; on hold at zero.
//   "leaderworkersets"  one group workload per replica group, owned by it.
// Like JobController: level-triggered, at most a few conditional writes per pass, no state of
// its own that listing cannot rebuild. Thread-safe; a key is never reconciled concurrently with
// itself (the work queue ensures it).

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "adapters/kube/job_controller.h"
#include "clients/cpp/admission_client.h"
#include "core/clock.h"
#include "core/types.h"
#include "services/kubeapi/kube_client.h"
#include "services/manifest/pod_group.h"

namespace tollgate::kube {

// Kubernetes objects as JSON, as the manifest library and the REST client read them.
using Json = manifest::Json;

inline constexpr absl::string_view kPodGroupsResource = "podgroups";

const manifest::ResourceKind& PodResource();
const manifest::ResourceKind& DeploymentResource();
const manifest::ResourceKind& StatefulSetResource();
const manifest::ResourceKind& LeaderWorkerSetResource();

class PodController {
 public:
  struct Options {
    // Kueue's integrations.frameworks entries "pod", "deployment", "statefulset" and
    // "leaderworkerset.x-k8s.io/leaderworkerset".
    bool pods = false;
    bool deployments = false;
    bool statefulsets = false;
    bool leaderworkersets = false;
    // Topology-aware scheduling is on (tollgate-kube --enable-topology): the templates of
    // Deployments, StatefulSets and LeaderWorkerSets also get the kueue.x-k8s.io/topology gate.
    bool topology = false;
    bool manage_jobs_without_queue_name = false;
    std::optional<core::LabelSelector> managed_jobs_namespace_selector;
    // Kueue's integrations.labelKeysToCopy, copied when a workload is made: from a plain pod,
    // from every pod of a group (pods must agree on a value), from a StatefulSet's pod template,
    // from a LeaderWorkerSet.
    std::vector<std::string> label_keys_to_copy;
    // Kueue's objectRetentionPolicies.workloads.afterDeactivatedByKueue, for plain pods (a
    // Deployment's too): the pod whose workload Kueue deactivated is deleted, with its
    // workload, this long after the eviction. Pod groups, StatefulSets and LeaderWorkerSets are
    // not (docs/kubernetes.md, "Retention").
    std::optional<absl::Duration> after_deactivated_by_kueue;
    // Kueue's feature gate ReclaimablePods: off, a pod group's succeeded pods are not reported.
    bool reclaimable_pods = true;
    // Kueue's feature gate AdmissionGatedBy: off, the kueue.x-k8s.io/admission-gated-by
    // annotation of a pod, group or parent is neither copied to its workload nor followed there.
    bool admission_gated_by = true;
    std::string component = "tollgate-kube";
    std::string instance;
    int max_conflict_retries = 5;
  };

  PodController(kubeapi::KubeClient& kube, client::AdmissionClient& admission,
                const core::Clock& clock, Options options);

  // The resources to list and watch for the enabled kinds (pods whenever any is enabled).
  std::vector<const manifest::ResourceKind*> WatchedResources() const;
  bool Handles(absl::string_view resource) const;
  // The keys an event on `obj` asks to reconcile: a pod's group (or the pod itself), and the
  // StatefulSet or LeaderWorkerSet that made it; a parent's own key.
  std::vector<ObjectKey> KeysFor(absl::string_view resource, const Json& obj) const;

  // The keys a change of workload `wl` asks to reconcile: its pod, its group, its parent.
  std::vector<ObjectKey> KeysForWorkload(const v1::Workload& wl) const;

  absl::Status Reconcile(const ObjectKey& key);
  // As JobController::SetRequeueAt: set once, before reconciling starts.
  void SetRequeueAt(JobController::RequeueAt requeue_at);
  // A deleted object: its workloads go with it (Kubernetes' garbage collection of the Workloads
  // it owns in Kueue).
  void RecordDeletion(const ObjectKey& key, absl::string_view uid);

  // Workloads of this controller whose objects are gone: a pod's (by uid), a StatefulSet's or
  // LeaderWorkerSet's (by owner uid), a pod group's without pods. `live_uids` maps each watched
  // resource to the UIDs that exist, read after the workloads were listed.
  absl::StatusOr<int> CollectOrphans(
      const std::function<JobController::UidsByResource()>& live_uids);

 private:
  absl::Status ReconcilePod(const ObjectKey& key);
  absl::Status ReconcileGroup(const ObjectKey& key);
  // An evicted pod group whose members are all gone: waiting for replacement pods, and its
  // eviction complete.
  absl::Status AwaitReplacements(const v1::Workload& wl);
  // Kueue's PropagateAdmissionGatedByAnnotation for a pending workload made from `object` (a
  // plain pod, a pod group's first pod, a StatefulSet, a LeaderWorkerSet): a gate removed from
  // the object is removed from the workload (`wl` is updated).
  absl::Status FollowAdmissionGates(const Json& object, v1::Workload& wl);
  // Submits a workload made from a pod, group or parent (without its admission gates when the
  // AdmissionGatedBy gate is off).
  absl::StatusOr<v1::SubmitResponse> SubmitMade(v1::SubmitRequest submit);
  // Reports the group's succeeded members as reclaimable (Kueue's ReclaimablePods for a
  // non-serving group) when that differs from what the workload holds.
  absl::Status ForwardGroupReclaimablePods(const std::vector<Json>& pods,
                                           const manifest::PodGroupInfo& info,
                                           const v1::Workload& wl, const v1::WorkloadRef& ref);
  absl::Status ReconcileDeployment(const ObjectKey& key);
  absl::Status ReconcileStatefulSet(const ObjectKey& key);
  // Kueue's rule for a StatefulSet's rolling update (ShouldUngatePod): while the current
  // revision differs from the update revision, a gated pod of the current revision replaces one
  // that ran, so both gates come off without waiting for an admission.
  absl::Status ReleaseRolloutPods(const Json& sts);
  absl::Status ReconcileLeaderWorkerSet(const ObjectKey& key);

  // The LocalQueue an object asks for: its label, or "default" with
  // manageJobsWithoutQueueName when its namespace is managed and has one; "" when unmanaged.
  absl::StatusOr<std::string> QueueFor(const Json& obj);
  // Puts Kueue's gate, labels and annotations on a parent's pod template at `path`.
  absl::Status GateTemplates(const manifest::ResourceKind& kind, const Json& obj,
                             const std::vector<std::string>& template_paths,
                             absl::string_view framework, absl::string_view queue);
  // Patches `pod` towards `desired` (metadata and spec) with a resourceVersion precondition.
  absl::StatusOr<Json> PatchObject(const manifest::ResourceKind& kind, const Json& obj,
                                   const Json& desired);
  absl::Status DeletePod(const Json& pod, absl::string_view reason, absl::string_view message);
  void RecordEvent(const manifest::ResourceKind& kind, const Json& obj, absl::string_view type,
                   absl::string_view reason, absl::string_view message);
  // Records a Warning once per distinct message (kept in the object's tollgate.dev/status).
  absl::Status Warn(const manifest::ResourceKind& kind, const Json& obj, absl::string_view reason,
                    absl::string_view message);

  // --- MultiKueue's projection of these kinds (multikueue_pods.cc; docs/multicluster.md) ---
  // Whether workloads of LocalQueue `queue` in `ns` go through a MultiKueue check (its
  // ClusterQueue names one): then they carry their object to the worker that wins them.
  absl::StatusOr<bool> QueueUsesMultiKueue(absl::string_view ns, absl::string_view queue);
  // Kueue's ShouldSkipLocalExecution: the workload has a MultiKueue check, so its pods stay
  // gated here and run on the winning worker instead.
  absl::StatusOr<bool> RunsOnAWorker(const v1::Workload& wl);
  // Adds `obj` as the payload of its new workload `wl` when its queue uses MultiKueue.
  absl::Status AttachMultiKueuePayload(const manifest::ResourceKind& kind, const Json& obj,
                                       absl::string_view queue, v1::Workload& wl);
  // Adds the pod group's `pods` (the runnable ones it is made of) as the payload of its new
  // workload `wl`.
  absl::Status AttachMultiKueueGroupPayload(const std::vector<Json>& pods, v1::Workload& wl);
  // On the manager: a pod group's workload carrying its pods (a PodList payload) gets the pods
  // made since (manifest::GroupPodsToCarry) with UpdateWorkloadPayload, compare-and-swap on its
  // revision; `wl` becomes the updated workload. The MultiKueue controller carries the new
  // payload to the copies.
  absl::Status SyncGroupPayload(const std::vector<Json>& pods, v1::Workload& wl);
  // On a worker: reports the pod's status on its MultiKueue copy when it changed.
  absl::Status ReportCopyPodStatus(const Json& pod, const v1::Workload& copy);
  // On a worker: reports the statuses of a copy's pod group on the copy when they changed.
  absl::Status ReportCopyGroupStatus(const std::vector<Json>& pods, const v1::Workload& copy);
  // On the manager: projects the winner's reported pod status onto the gated pod (Kueue's
  // syncLocalPodWithRemote), from a plain pod's report or a pod group's. Returns whether it
  // patched the status.
  absl::StatusOr<bool> ProjectRemotePodStatus(const Json& pod, const v1::Workload& wl);
  // ProjectRemotePodStatus for each gated pod of a group; whether it patched any.
  absl::StatusOr<bool> ProjectRemoteGroupStatus(const std::vector<Json>& pods,
                                                const v1::Workload& wl);
  // On a worker: deletes an object made for a MultiKueue copy that is gone (Kueue deletes the
  // remote object with its workload). False (nothing done) without the origin label.
  absl::StatusOr<bool> DeleteObjectOfGoneCopy(const manifest::ResourceKind& kind, const Json& obj);

  kubeapi::KubeClient& kube_;
  client::AdmissionClient& admission_;
  const core::Clock& clock_;
  const Options options_;

  mutable absl::Mutex mu_;
  std::map<ObjectKey, std::set<std::string>> tombstones_ ABSL_GUARDED_BY(mu_);
  uint64_t event_sequence_ ABSL_GUARDED_BY(mu_) = 0;
  JobController::RequeueAt requeue_at_ ABSL_GUARDED_BY(mu_);
  // On a worker: MultiKueue copy "ns/name" -> the object made for it, as the informers saw it.
  mutable std::map<std::string, ObjectKey> copy_objects_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tollgate::kube
