#pragma once

// What Tollgate knows about one job kind (a row of the table in job_kinds.h), and the
// translation of such an object into a Workload that every kind shares. Kueue's jobframework
// GenericJob and its optional interfaces play the same role (docs/job-kinds.md). Pure: JSON in,
// JSON or protos out; another object a kind needs (a TrainJob's runtime) comes from an
// ObjectLookup the caller provides.

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "services/manifest/json_util.h"
#include "services/manifest/kube_resource.h"
#include "tollgate/v1/objects.pb.h"

namespace tollgate::manifest {

inline constexpr absl::string_view kQueueNameLabel = "kueue.x-k8s.io/queue-name";
inline constexpr absl::string_view kPriorityClassLabel = "kueue.x-k8s.io/priority-class";
// Set on every admitted pod template: the pod set it belongs to (Kueue's PodSetLabel).
inline constexpr absl::string_view kPodSetLabel = "kueue.x-k8s.io/podset";
// A Job's minimum parallelism for partial admission (Kueue's annotation of the same name).
inline constexpr absl::string_view kJobMinParallelismAnnotation =
    "kueue.x-k8s.io/job-min-parallelism";
// On the workload: the uid of the object it was made for (Kueue's JobUIDLabel).
inline constexpr absl::string_view kJobUidLabel = "kueue.x-k8s.io/job-uid";
// On the workload: the kind and name of the object it was made for (Kueue keeps both in the
// workload's ownerReference).
inline constexpr absl::string_view kJobKindLabel = "tollgate.dev/job-kind";
inline constexpr absl::string_view kJobNameAnnotation = "tollgate.dev/job-name";

// How a kind keeps its pods from running until admitted.
enum class SuspendBy {
  // A boolean in the object (spec.suspend, spec.runPolicy.suspend, ...).
  kSuspendField,
  // The scheduling gate kueue.x-k8s.io/admission on its pods (plain Pods).
  kSchedulingGate,
};

// How many workloads an object of the kind asks for.
enum class WorkloadsPer {
  // One workload per object: every CRD kind.
  kObject,
  // One per replica group of the object (LeaderWorkerSet).
  kGroup,
  // One for a group of objects (pod groups).
  kComposed,
};

// The row of a kind in the table.
struct JobKindTraits {
  // The group/version/plural/kind Tollgate reads and writes.
  ResourceKind resource = {};
  // Kueue's name in integrations.frameworks, e.g. "jobset.x-k8s.io/jobset".
  std::string framework = {};
  // Versions of the group that served this kind in the past or serve it besides `resource`;
  // a manifest of one of them is refused with a message naming the version Tollgate reads.
  std::vector<std::string> other_versions = {};
  SuspendBy suspend_by = SuspendBy::kSuspendField;
  // Stopping it deletes its pods (a gate cannot be put back), instead of suspending it.
  bool stop_by_delete = false;
  WorkloadsPer workloads = WorkloadsPer::kObject;
  // False for CronJob: the Jobs it creates are the workloads.
  bool creates_workload = true;
  // False for RayCluster and RayService: they run until deleted.
  bool finishes = true;
};

// Where one pod set of a job comes from.
struct PodSetSource {
  std::string name;
  int32_t count = 1;
  std::optional<int32_t> min_count;
  // JSON pointer to the PodTemplateSpec inside the object, e.g. "/spec/template"; empty when
  // the kind builds the template from other fields (SparkApplication, TrainJob) and enacts
  // admissions its own way.
  std::string template_path = {};
  // The pod template the workload's requests come from; a default when the object has none at
  // template_path (RayJob's submitter), in which case `template_present` is false.
  Json pod_template = {};
  bool template_present = true;
  // The pods come in this many equal groups (a JobSet's replicated job: its replicas, each a
  // Job of count / replicas pods); 1 for everything else.
  int32_t replicas = 1;
  // The pod label that holds a pod's index in the set, for topology placement (Kueue's
  // podIndexLabel: batch.kubernetes.io/job-completion-index for a Job, ...); none when the kind
  // has no such label.
  std::optional<std::string> pod_index_label = std::nullopt;
};

// What an admission asks of one pod set's pods (Kueue's podset.PodSetInfo): the admitted count,
// the flavors' node labels and tolerations, the pod-set label, and the admission checks'
// podSetUpdates.
struct PodSetInfo {
  std::string name = {};
  int32_t count = 0;
  std::map<std::string, std::string> labels = {};
  std::map<std::string, std::string> annotations = {};
  std::map<std::string, std::string> node_selector = {};
  // core/v1 Toleration objects, in order, without duplicates.
  std::vector<Json> tolerations = {};
  // core/v1 PodSchedulingGate objects ({"name": ...}).
  std::vector<Json> scheduling_gates = {};
};

// An admission check's change to one pod set (Kueue's PodSetUpdate).
struct PodSetUpdate {
  // The admission check that asks for it, for messages.
  std::string check = {};
  std::string pod_set = {};
  std::map<std::string, std::string> labels = {};
  std::map<std::string, std::string> annotations = {};
  std::map<std::string, std::string> node_selector = {};
  std::vector<Json> tolerations = {};
};

// Pods of a pod set that finished and need no quota any more (Kueue's ReclaimablePod).
struct ReclaimablePod {
  std::string name;
  int32_t count = 0;
  bool operator==(const ReclaimablePod&) const = default;
};

// A job's terminal state, as its own controller reports it.
struct JobFinish {
  bool succeeded = false;
  std::string message;
};

// Objects a translator reads besides the job (a TrainJob's TrainingRuntime). Thread-safe.
class ObjectLookup {
 public:
  virtual ~ObjectLookup() = default;
  // NOT_FOUND when there is no such object; `ns` is empty for cluster-scoped kinds.
  virtual absl::StatusOr<Json> Get(const ResourceKind& kind, absl::string_view ns,
                                   absl::string_view name) const = 0;
};

// A lookup that has nothing: every Get is NOT_FOUND naming the object.
const ObjectLookup& NoObjects();

// One job kind. Implementations are stateless. Thread-safe.
class JobKindTranslator {
 public:
  virtual ~JobKindTranslator() = default;

  virtual const JobKindTraits& traits() const = 0;
  const ResourceKind& resource() const { return traits().resource; }

  // The pod sets in Kueue's order. INVALID_ARGUMENT (naming the field) for an object Kueue would
  // refuse to manage; NOT_FOUND or UNAVAILABLE when an object it needs cannot be read.
  virtual absl::StatusOr<std::vector<PodSetSource>> PodSets(const Json& obj,
                                                            const ObjectLookup& lookup) const = 0;

  // The scheduling.k8s.io PriorityClass the pods name, used when the object carries no
  // kueue.x-k8s.io/priority-class label. Kueue's fallback, the default: the first pod set whose
  // template names one.
  virtual std::string PodPriorityClassName(const Json& obj,
                                           const std::vector<PodSetSource>& sources) const;

  // JSON pointer to the boolean that suspends the job (kSuspendField kinds).
  virtual std::string SuspendPath() const { return "/spec/suspend"; }
  virtual bool IsSuspended(const Json& obj) const;
  // Sets the boolean at SuspendPath(), creating the objects on the way.
  virtual void SetSuspended(Json& obj, bool suspended) const;

  // The JSON pointers Enact may change. Their values before an admission are kept on the
  // object and put back when it is suspended again (Kueue's RestorePodSetsInfo). The default:
  // labels, annotations, nodeSelector, tolerations and schedulingGates of every template, and
  // the whole template where the object has none.
  virtual std::vector<std::string> EnactedFields(const Json& obj,
                                                 const std::vector<PodSetSource>& sources) const;
  // Applies `infos` (one per admitted pod set, by name) to `obj` (Kueue's RunWithPodSetsInfo
  // minus the unsuspend). The default merges each info into its pod set's template with
  // MergePodSetInfo. A conflict is FAILED_PRECONDITION marked permanent (IsPermanentError).
  virtual absl::Status Enact(Json& obj, const std::vector<PodSetSource>& sources,
                             const std::vector<PodSetInfo>& infos) const;

  // Set once the job has succeeded or failed (never for kinds with traits().finishes false).
  virtual std::optional<JobFinish> Finished(const Json& obj) const = 0;
  // Some pod of the job may still be running (so an evicted workload is not yet stopped).
  virtual bool IsActive(const Json& obj) const = 0;
  // The job asks for its workload's quota to be released without an eviction (Kueue's
  // JobWithOnHold: a RayJob KubeRay failed to validate). False by default.
  virtual bool IsOnHold(const Json& /*obj*/) const { return false; }
  // Every pod of the admitted job is running (Kueue's PodsReady). `sources` are PodSets(obj).
  virtual bool PodsReady(const Json& obj, const std::vector<PodSetSource>& sources,
                         const v1::Workload& workload) const = 0;
  // Pods that finished for good and need their quota no more. None by default.
  virtual std::vector<ReclaimablePod> ReclaimablePods(
      const Json& obj, const std::vector<PodSetSource>& sources) const;

  // The workload's name. The default is Kueue's (KueueWorkloadName).
  virtual std::string WorkloadName(const Json& obj) const;
};

// Kueue's GetWorkloadNameForOwnerWithGVK: "<lower-case kind>-<name>" cut to 247 bytes, "-", and
// the first 5 hex digits of SHA-1 over kind, group, name and uid (newline separated).
std::string KueueWorkloadName(absl::string_view kind, absl::string_view group,
                              absl::string_view name, absl::string_view uid);
// The name earlier tollgate-kube versions gave: `<kind>-<name>-<uid prefix>`, a DNS-1123 label.
std::string LegacyWorkloadName(absl::string_view kind, absl::string_view name,
                               absl::string_view uid);

// The LocalQueue an object asks for: the kueue.x-k8s.io/queue-name label, else the annotation
// of the same name (Kueue's deprecated spelling); empty when neither.
std::string QueueName(const Json& obj);

// A pod set name from a user-chosen name (a replica type, a group): lower-cased as Kueue's
// NewPodSetReference does; characters outside [a-z0-9-] become '-', trimmed to 63 bytes.
std::string PodSetNameFrom(absl::string_view raw);

// The Workload for a job object as it was before admission changed it (`obj` must have its
// admission-changed fields restored, see RestoreOriginalFields). `queue_name` overrides
// QueueName(obj) when non-empty (jobs managed without a queue label use "default"). The
// workload is named by `translator.WorkloadName` unless `name` is given, carries the object's
// uid and the labels kJobUidLabel and kJobKindLabel, and the annotation kJobNameAnnotation.
absl::StatusOr<v1::Workload> TranslateWorkload(const JobKindTranslator& translator, const Json& obj,
                                               absl::string_view queue_name,
                                               const ObjectLookup& lookup,
                                               absl::string_view name = "");

// Kueue's PropagateAdmissionGatedByAnnotation: the object's kueue.x-k8s.io/admission-gated-by
// annotation, when it has one, becomes the workload's (core/admission_gates.h), so the workload
// waits until whoever named the gates lets it go.
void CopyAdmissionGates(const Json& obj, v1::Workload& wl);

// The value at `path`, or a null JSON value (helpers for translators reading optional parts).
const Json& JsonAt(const Json& obj, std::initializer_list<absl::string_view> path);

// The finish a job reports with conditions: `success_type` or `failure_type` with status
// "True" (the first found, in that order), its message, or "<kind> succeeded/failed" when the
// condition has none.
std::optional<JobFinish> FinishFromConditions(const Json& obj, absl::string_view success_type,
                                              absl::string_view failure_type,
                                              absl::string_view kind);

// Whether an enactment error is permanent (a conflict no retry resolves; Kueue's
// podset.IsPermanent), so the workload should be finished as failed to start.
bool IsPermanentError(const absl::Status& status);
// `status` marked permanent.
absl::Status MarkPermanent(absl::Status status);

}  // namespace tollgate::manifest
