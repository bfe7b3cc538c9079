#pragma once

// MultiKueue's job projection (docs/multicluster.md, "The job itself"): the decisions of Kueue's
// job MultiKueue adapter (pkg/controller/jobs/job/job_multikueue_adapter.go: SyncJob and
// determineStatusUpdate; jobframework's SetMultiKueueMeta; api.CloneObjectMetaForCreation). A
// job on the manager's cluster with spec.managedBy "kueue.x-k8s.io/multikueue" travels with its
// workload as a payload; the worker that won creates it, reports its status, and the manager
// projects that status onto the original. tollgate-kube does the I/O; these are pure.

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "services/manifest/job_kind.h"
#include "services/manifest/json_util.h"
#include "tollgate/v1/objects.pb.h"

namespace tollgate::manifest {

// The spec.managedBy value that hands a job to MultiKueue (Kueue's MultiKueue controller name).
inline constexpr absl::string_view kMultiKueueManagedBy = "kueue.x-k8s.io/multikueue";
// The label a remote object carries with the manager's origin (Kueue's MultiKueueOriginLabel).
inline constexpr absl::string_view kMultiKueueOriginLabel = "kueue.x-k8s.io/multikueue-origin";
// What the payloads' data is.
inline constexpr absl::string_view kJsonContentType = "application/json";
// The annotation a worker's job carries with the uid of the copy it was created for. The
// manager may replace a copy by a new one of the same name (a re-dispatch); the job of the old
// copy must then go with it, not bind to the new one, which has not won yet.
inline constexpr absl::string_view kMultiKueueCopyUidAnnotation =
    "tollgate.dev/multikueue-copy-uid";

// Whether the object's managedBy (where its kind keeps one, see ProjectsThroughMultiKueue) is
// MultiKueue's.
bool ManagedByMultiKueue(const JobKindTranslator& translator, const Json& obj);

// Whether tollgate-kube projects this kind through MultiKueue: the kinds for which Kueue has a
// MultiKueue adapter that works through managedBy. spec.managedBy: batch/v1 Job, JobSet,
// TrainJob, AppWrapper, RayJob, RayCluster, RayService; spec.runPolicy.managedBy: the Kubeflow
// kinds and MPIJob. Not the pod-based kinds (Pod, Deployment, StatefulSet, LeaderWorkerSet),
// which Kueue dispatches without managedBy, nor kinds Kueue has no MultiKueue adapter for.
bool ProjectsThroughMultiKueue(const JobKindTranslator& translator);

// A payload of `data` as JSON, naming its apiVersion and kind.
v1::WorkloadPayload JsonPayload(absl::string_view api_version, absl::string_view kind,
                                const Json& data);

// The object a copy's payload carries, ready to create on a worker for copy `copy_name` (in
// `ns`): apiVersion and kind from the payload, the server's metadata and the status dropped, the
// labels kueue.x-k8s.io/prebuilt-workload-name (so it binds to the copy) and the origin label
// added. INVALID_ARGUMENT (naming the field) for a payload that is not a JSON object with
// metadata.name. The caller checks the kind and makes the kind's own changes.
absl::StatusOr<Json> WorkerObjectFromPayload(const v1::WorkloadPayload& payload,
                                             absl::string_view ns, absl::string_view copy_name,
                                             absl::string_view origin);

// The metadata a carried manifest keeps of `obj` (Kueue's CloneObjectMetaForCreation): name,
// namespace, labels and annotations, without Tollgate's own tollgate.dev/ annotations (the
// adapter's bookkeeping on the manager: status, admission, original templates).
Json CarriedMetadata(const Json& obj);

// The manifest a manager's workload carries for `written` (the job as written: admission's
// changes undone, see RestoreOriginalFields). As Kueue's CloneObjectMetaForCreation and SyncJob
// cleanup: metadata keeps only name, namespace, labels and annotations (Tollgate's own
// tollgate.dev/ annotations dropped); no status; a Job loses spec.selector and the labels the
// Job controller puts on its template (controller-uid, job-name). managedBy is dropped and
// the job is suspended, so the worker creates it under its own tollgate-kube's control.
absl::StatusOr<v1::WorkloadPayload> JobManifestPayload(const JobKindTranslator& translator,
                                                       const Json& written);

// The job a worker creates for its copy `copy_name` (in `ns`) that the manager declared the
// winner: the carried manifest with the labels kueue.x-k8s.io/prebuilt-workload-name (so it
// binds to the copy) and the origin label, queue-name kept, managedBy dropped, suspended until
// the worker's tollgate-kube starts it under the copy's admission. INVALID_ARGUMENT (naming the
// field) when the payload is not a manifest of the translator's kind.
absl::StatusOr<Json> RemoteJobFromPayload(const JobKindTranslator& translator,
                                          const v1::WorkloadPayload& payload, absl::string_view ns,
                                          absl::string_view copy_name, absl::string_view origin);

// Whether the worker's `job` was created for another copy than `copy` of the same name (its
// kMultiKueueCopyUidAnnotation names another uid). Jobs without the annotation (created before
// it existed) belong to whichever copy has their name.
bool MadeForAnotherCopy(const Json& job, const v1::Workload& copy);

// Whether a worker's `existing` object, made for several copies (a LeaderWorkerSet: its groups'
// copy uids in kMultiKueueCopyUidAnnotation, comma-separated in group order), was made for other
// copies than `wanted` names. Objects without the annotation belong to whichever copies they
// name.
bool MadeForOtherCopies(const Json& existing, const Json& wanted);

// What a worker reports of its job (status.job_status): the job's apiVersion and kind, and as
// data a JSON object with the job's `status` and its suspend field (the translator's path), so
// the manager can tell a suspended, running or finished remote job apart.
v1::WorkloadPayload JobStatusReport(const JobKindTranslator& translator, const Json& job);

// The status the manager's job should have, given what the winner reported. A batch/v1 Job
// follows Kueue's determineStatusUpdate: the remote status is taken when the local job is
// unsuspended, when both are suspended, or when the remote job finished. Otherwise (local
// suspended, remote running) the local status stays, with a Suspended=True condition (reason
// MultiKueueAdapter) added for Kubernetes' validation, and `deferred` is set: the sync waits for
// the local unsuspend. Every other kind takes the remote status as it is, as Kueue's adapters
// for them copy it.
struct JobStatusUpdate {
  Json status;
  bool deferred = false;
};
absl::StatusOr<JobStatusUpdate> DetermineStatusUpdate(const JobKindTranslator& translator,
                                                      const Json& local_job,
                                                      const v1::WorkloadPayload& report,
                                                      absl::Time now);

// The manager's job once its remote job is gone with the admission that ran it (the manager's
// workload was evicted, so no report describes a job anywhere): a suspended local job whose
// status still shows the remote run (active or ready pods, a start time) gets the status Kueue
// would have copied from the stopped remote Job: no active or ready pods, no start time, and
// Suspended=True with Kubernetes' reason JobSuspended. Anything else (running, finished, never
// started, already so): nullopt, nothing to write. Counts of finished pods stay.
std::optional<Json> StoppedRemoteStatus(const JobKindTranslator& translator, const Json& local_job,
                                        absl::Time now);

}  // namespace tollgate::manifest
