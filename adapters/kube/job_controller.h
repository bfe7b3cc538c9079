#pragma once

// The reconciler: makes each job object and its Tollgate workload agree. Kueue's jobframework
// reconciler, minus its Workload objects: Tollgate holds the workloads, and the job carries
// what the adapter must remember (original templates, applied admission, status) in
// annotations, so a restarted adapter needs no state of its own.

#include <compare>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "clients/cpp/admission_client.h"
#include "core/clock.h"
#include "core/types.h"
#include "services/kubeapi/kube_client.h"
#include "services/manifest/job_kind.h"
#include "services/manifest/json_util.h"

namespace tollgate::kube {

// Kubernetes objects as JSON, as the manifest library and the REST client read them.
using Json = manifest::Json;

// "<state>: <message>", state one of pending, admitted, preempted, finished, invalid.
inline constexpr absl::string_view kStatusAnnotation = "tollgate.dev/status";
// Written by the job (or its operator) with the RFC 3339 time of its latest checkpoint; the
// adapter forwards it to Tollgate, which then prefers victims that lose the least work.
inline constexpr absl::string_view kCheckpointAnnotation = "tollgate.dev/checkpoint-time";

// The resource of the work-queue keys that name a MultiKueue copy on a worker (a workload, not
// an object): its carried job is created once the copy is admitted and declared the winner.
inline constexpr absl::string_view kMultiKueueCopyResource = "tollgate.dev/multikueue-copies";

// A job object (or a Namespace, resource "namespaces") by resource plural and name.
struct ObjectKey {
  std::string resource;
  std::string ns;
  std::string name;
  auto operator<=>(const ObjectKey&) const = default;
  bool operator==(const ObjectKey&) const = default;
  std::string ToString() const { return resource + "/" + ns + "/" + name; }
};

// Level-triggered reconciliation against abstract clients, so it runs the same under the
// adapter's informers and in unit tests that call Reconcile directly. Reconcile(key) reads the
// object fresh, asks Tollgate (Submit is idempotent, so it doubles as "get"), and issues at most
// one conditional patch per pass:
//   * workload PENDING: job suspended, original templates back, status "pending".
//   * ADMITTED and job suspended: flavors' nodeLabels/tolerations injected, unsuspended.
//     ADMITTED and running with the admission it was started for: ReportPodsReady once ready.
//     ADMITTED but running with another (or none): suspended first, started again next pass.
//   * EVICTING: suspended, templates restored, "preempted"; ReportStopped once no pod is
//     active.
//   * job finished: Finish (an admitted workload) or DeleteWorkload (one never admitted).
//   * object gone or being deleted: DeleteWorkload.
// Objects created by an object of a managed kind (a JobSet's Jobs, a TrainJob's JobSet) are
// left to their owner's workload, as Kueue does. An admission that cannot be enacted (two pod-set
// updates, or an update and the template, want different values for one key) finishes the
// workload as failed to start, with a Warning event on the object: retrying cannot help.
// Reclaimable pods (pods of a running job that finished for good) are reported to Tollgate.
// Patches are merge patches carrying metadata.resourceVersion; a 409 re-reads and retries.
// Reconcile of one key must not run concurrently with itself (the work queue ensures it);
// different keys may. Thread-safe.
class JobController {
 public:
  struct Options {
    // Also manage objects without a queue-name label in namespaces that have a LocalQueue named
    // "default" (Kueue's manageJobsWithoutQueueName).
    bool manage_jobs_without_queue_name = false;
    // Kueue's managedJobsNamespaceSelector: with manage_jobs_without_queue_name, only objects
    // in namespaces whose labels match are managed without a label (kubernetes.io/metadata.name
    // is the namespace's name, as the API server sets it). Unset: every namespace.
    std::optional<core::LabelSelector> managed_jobs_namespace_selector;
    // Mirror Kubernetes Namespaces and their labels into Tollgate (ClusterQueue
    // namespaceSelectors match on them).
    bool sync_namespaces = true;
    // Event source.
    std::string component = "tollgate-kube";
    std::string instance;
    int max_conflict_retries = 5;
    // The gated kinds (PodController's: "Pod", "StatefulSet", "LeaderWorkerSet") whose MultiKueue
    // copies' objects this adapter creates on a worker (docs/multicluster.md, "The pod-based
    // kinds").
    std::set<std::string> multikueue_gated_kinds;
    // Kueue's integrations.labelKeysToCopy: the job's labels under these keys go onto its
    // workload when the workload is made (not when the job's labels change later).
    std::vector<std::string> label_keys_to_copy;
    // Kueue's objectRetentionPolicies.workloads.afterDeactivatedByKueue: a job whose workload
    // Kueue deactivated is deleted (with its workload) this long after that eviction
    // (deactivation_retention.h). Unset: kept.
    std::optional<absl::Duration> after_deactivated_by_kueue;
    // Kueue's feature gate PartialAdmission (tollgated's is read from the same Configuration):
    // off, a job's pod sets lose their minCount before its workload is made or compared with a
    // prebuilt one, which tollgated stored without it.
    bool partial_admission = true;
    // Kueue's feature gate ReclaimablePods (read the same way): off, a job's finished pods are
    // not reported (Kueue's job reconciler skips that step).
    bool reclaimable_pods = true;
    // Kueue's feature gate AdmissionGatedBy: off, a job's kueue.x-k8s.io/admission-gated-by
    // annotation is neither copied to its workload nor followed there.
    bool admission_gated_by = true;
  };

  // `translators` are the enabled kinds; all references must outlive the controller.
  JobController(kubeapi::KubeClient& kube, client::AdmissionClient& admission,
                const core::Clock& clock,
                std::vector<const manifest::JobKindTranslator*> translators, Options options);

  // OK when the object needs nothing more until it or its workload changes, or until the time
  // it asked for through the requeue hook; an error asks for a retry with backoff.
  absl::Status Reconcile(const ObjectKey& key);

  // How a reconcile asks to run again at a time (a retention that ends then), as
  // controller-runtime's RequeueAfter. Set once, before reconciling starts (the adapter's work
  // queue); without it the periodic resync picks the object up.
  using RequeueAt = std::function<void(const ObjectKey&, absl::Time)>;
  void SetRequeueAt(RequeueAt requeue_at);

  // Notes an object seen by an informer: remembers which key owns its workload.
  void Observe(absl::string_view resource, const Json& obj);
  // Notes a deleted object; the next Reconcile of its key deletes its workload.
  void RecordDeletion(const ObjectKey& key, absl::string_view uid);
  // The object a workload belongs to, when Observe/Reconcile has seen it.
  std::optional<ObjectKey> OwnerOf(absl::string_view ns, absl::string_view workload_name) const;

  // Deletes the workloads this adapter created (named `<kind>-...-<uid prefix>` with a
  // matching UID) whose objects are gone. `live_uids` maps each synced resource to the UIDs
  // that exist; it is called after the workloads are listed, so a job created meanwhile (and
  // its workload) is never taken for an orphan. Returns how many were deleted.
  using UidsByResource = std::map<std::string, std::set<std::string>>;
  absl::StatusOr<int> CollectOrphans(const std::function<UidsByResource()>& live_uids);

  const std::vector<const manifest::JobKindTranslator*>& translators() const {
    return translators_;
  }
  const manifest::JobKindTranslator* TranslatorFor(absl::string_view resource) const;
  // The translators' view of other objects (a TrainJob's runtime), read from the API server.
  const manifest::ObjectLookup& lookup() const { return *lookup_; }

 private:
  absl::Status ReconcileNamespace(const ObjectKey& key);

  // --- MultiKueue's job projection (multikueue_jobs.cc; docs/multicluster.md) ---
  // On a worker: creates the job a copy carries once the copy is admitted and declared the
  // winner (never otherwise), bound to it by the prebuilt-workload label.
  absl::Status ReconcileCopy(const ObjectKey& key);
  // ReconcileCopy for a copy carrying a gated kind's object (a Pod, a pod group's pods or a
  // StatefulSet), which PodController runs once created.
  absl::Status CreateGatedObjectOfCopy(const ObjectKey& key, const v1::Workload& copy,
                                       absl::string_view origin);
  // On a worker: reports the job's status on its copy when it changed.
  absl::Status ReportCopyJobStatus(const manifest::JobKindTranslator& translator, const Json& obj,
                                   const v1::Workload& copy);
  // On the manager: projects the winner's job status onto a managedBy-MultiKueue job's status
  // (Kueue's determineStatusUpdate), or, with no report since an eviction, the stopped status
  // of a suspended job that still shows the old run. Returns whether it patched the status.
  absl::StatusOr<bool> ProjectRemoteJobStatus(const manifest::JobKindTranslator& translator,
                                              const Json& obj, const v1::Workload& wl);
  // On a worker: a job created for a copy whose copy is gone goes too (Kueue deletes the remote
  // job with its workload). False (nothing done) for a job without the MultiKueue origin label.
  absl::StatusOr<bool> DeleteJobOfGoneCopy(const manifest::JobKindTranslator& translator,
                                           const Json& obj);
  absl::Status ReconcileObject(const manifest::JobKindTranslator& translator, const ObjectKey& key);
  // One pass; ABORTED on a conflict.
  absl::Status ReconcileOnce(const manifest::JobKindTranslator& translator, const Json& obj);
  // Reports the job's kCheckpointAnnotation when it is newer than what Tollgate has.
  absl::Status ForwardCheckpoint(const Json& obj, const v1::Workload& wl,
                                 const v1::WorkloadRef& ref);
  absl::Status HandleFinished(const manifest::JobKindTranslator& translator, const Json& obj,
                              const v1::WorkloadRef& ref, const manifest::JobFinish& finish);
  absl::Status DeleteWorkload(const v1::WorkloadRef& ref);
  // afterDeactivatedByKueue: deletes the job (background propagation, as Kueue) and its
  // workload once due; before that asks to be reconciled again when it is. Returns true when it
  // deleted the job.
  absl::StatusOr<bool> ApplyDeactivationRetention(const manifest::JobKindTranslator& translator,
                                                  const Json& obj, const v1::Workload& wl,
                                                  const v1::WorkloadRef& ref);
  // Kueue's JobWithOnHold: releases the quota of the workload of a job on hold (once).
  absl::Status HoldWorkload(const v1::WorkloadRef& ref);
  // Deletes the workloads whose controlling owner has `uid` (a prebuilt workload bound to a job).
  absl::Status DeleteWorkloadsOwnedBy(absl::string_view ns, absl::string_view uid);
  // Kueue's prebuilt workload: the job is bound to the workload its kPrebuiltWorkloadKey names
  // instead of getting one. NOT_FOUND while it does not exist, FAILED_PRECONDITION when another
  // object controls it or it no longer matches the job (then it is finished as out of sync),
  // INVALID_ARGUMENT for a kind Kueue refuses it on.
  absl::StatusOr<v1::Workload> BindPrebuilt(const manifest::JobKindTranslator& translator,
                                            const Json& obj, const v1::Workload& from_job);
  // The enabled resource (plural) of the workload's controlling owner, when it is of a kind of
  // translators_.
  std::optional<std::string> OwnerResourceOf(const v1::Workload& wl) const;
  // Whether the object's controlling owner is an object of an enabled kind that is managed
  // (queue label, or manage_jobs_without_queue_name): then its owner's workload holds the quota.
  absl::StatusOr<bool> OwnedByManagedObject(const Json& obj);
  // The name of the object's workload: Kueue's (JobKindTranslator::WorkloadName), unless a
  // workload under the name earlier versions gave exists (it keeps that name for its life).
  absl::StatusOr<std::string> ResolveWorkloadName(const manifest::JobKindTranslator& translator,
                                                  const Json& obj);
  // An admission that can never be enacted: finish the workload, keep the object suspended.
  absl::Status FailToStart(const manifest::JobKindTranslator& translator, const Json& obj,
                           const Json& original, const v1::WorkloadRef& ref,
                           const absl::Status& why);
  // Reports the job's reclaimable pods when they differ from what Tollgate has.
  absl::Status ForwardReclaimablePods(const manifest::JobKindTranslator& translator,
                                      const Json& obj, const v1::Workload& wl,
                                      const v1::WorkloadRef& ref);
  absl::StatusOr<bool> NamespaceHasDefaultQueue(absl::string_view ns);
  // Kueue's WorkloadPriorityClassDefaulting (priority_defaulting.h): labels a job that names no
  // WorkloadPriorityClass and has no workload yet with the class "default" when it exists.
  // True when it patched the job.
  absl::StatusOr<bool> LabelWithDefaultPriorityClass(const manifest::JobKindTranslator& translator,
                                                     const Json& obj, const v1::WorkloadRef& ref);
  // Whether `ns` matches options_.managed_jobs_namespace_selector (true when there is none).
  absl::StatusOr<bool> NamespaceIsManaged(absl::string_view ns);
  absl::StatusOr<v1::Workload> SubmitOrReplace(const v1::Workload& workload);
  // Patches `obj` towards `desired` (metadata and spec only) when they differ, then records
  // an Event when the status annotation's state changed. Returns the object as stored.
  absl::StatusOr<Json> Converge(const manifest::JobKindTranslator& translator, const Json& obj,
                                const Json& desired);
  void RecordEvent(const manifest::JobKindTranslator& translator, const Json& obj,
                   absl::string_view type, absl::string_view reason, absl::string_view message);
  std::string WorkloadNameOf(const manifest::JobKindTranslator& translator, const Json& obj) const
      ABSL_LOCKS_EXCLUDED(mu_);

  kubeapi::KubeClient& kube_;
  client::AdmissionClient& admission_;
  const core::Clock& clock_;
  const std::vector<const manifest::JobKindTranslator*> translators_;
  const Options options_;
  // Other objects the translators read (a TrainJob's runtime), from the API server.
  const std::unique_ptr<manifest::ObjectLookup> lookup_;

  mutable absl::Mutex mu_;
  // Workload "ns/name" -> owning object.
  std::map<std::string, ObjectKey> owners_ ABSL_GUARDED_BY(mu_);
  // Deleted objects' UIDs whose workloads still need deleting.
  std::map<ObjectKey, std::set<std::string>> tombstones_ ABSL_GUARDED_BY(mu_);
  // Labels last applied to Tollgate per namespace.
  std::map<std::string, std::map<std::string, std::string>> applied_namespaces_
      ABSL_GUARDED_BY(mu_);
  uint64_t event_sequence_ ABSL_GUARDED_BY(mu_) = 0;
  // Object uid -> the name of its workload, once resolved (ResolveWorkloadName).
  std::map<std::string, std::string> workload_names_ ABSL_GUARDED_BY(mu_);
  RequeueAt requeue_at_ ABSL_GUARDED_BY(mu_);
};

// Splits a status annotation into state and message.
std::pair<std::string, std::string> ParseStatusAnnotation(absl::string_view value);

}  // namespace tollgate::kube
