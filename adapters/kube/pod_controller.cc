#include "adapters/kube/pod_controller.h"

#include <algorithm>
#include <utility>

#include "absl/algorithm/container.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "adapters/kube/deactivation_retention.h"
#include "adapters/kube/kube_events.h"
#include "adapters/kube/priority_defaulting.h"
#include "adapters/kube/workload_reports.h"
#include "common/json_log.h"
#include "core/multikueue_components.h"
#include "core/node_matching.h"
#include "core/status_macros.h"
#include "services/manifest/admission_enactment.h"
#include "services/manifest/job_kind.h"
#include "services/manifest/multikueue_job.h"
#include "services/manifest/multikueue_pods.h"
#include "services/manifest/pod_admission.h"
#include "services/manifest/pod_group.h"
#include "services/manifest/pod_kinds.h"
#include "services/manifest/pod_role_hash.h"
#include "services/manifest/pod_set_info.h"
#include "services/manifest/pod_translator.h"
#include "services/manifest/prebuilt_workload.h"
#include "services/manifest/topology_annotations.h"
#include "services/manifest/workload_labels.h"

namespace tollgate::kube {
namespace {

using manifest::Ensure;
using manifest::EventResource;
using manifest::Find;
using manifest::GetInt;
using manifest::GetString;
using manifest::IsGated;
using manifest::kAdmissionGate;
using manifest::kIsGroupWorkloadAnnotation;
using manifest::kManagedLabel;
using manifest::kPodGroupNameKey;
using manifest::kPodGroupTotalCountAnnotation;
using manifest::kSuspendedByParentAnnotation;
using manifest::MergePatchDiff;
using manifest::NamespaceResource;
using manifest::PodGroupName;
using manifest::PodName;
using manifest::ResourceKind;

constexpr absl::string_view kStatusKey = "tollgate.dev/status";
constexpr absl::string_view kControllerRevisionHashLabel = "controller-revision-hash";
constexpr absl::string_view kLwsNameLabel = "leaderworkerset.sigs.k8s.io/name";
constexpr absl::string_view kLwsGroupIndexLabel = "leaderworkerset.sigs.k8s.io/group-index";
constexpr absl::string_view kLwsLeaderNameAnnotation = "leaderworkerset.sigs.k8s.io/leader-name";
constexpr absl::string_view kOnHoldMessage = "StatefulSet scaled to zero; workload on hold";

std::string Key(absl::string_view ns, absl::string_view name) {
  return absl::StrCat(ns, "/", name);
}

v1::WorkloadRef Ref(absl::string_view ns, absl::string_view name) {
  v1::WorkloadRef ref;
  ref.set_namespace_(std::string(ns));
  ref.set_name(std::string(name));
  return ref;
}

std::string Ns(const Json& obj) { return GetString(obj, {"metadata", "namespace"}); }
std::string Name(const Json& obj) { return GetString(obj, {"metadata", "name"}); }
std::string Uid(const Json& obj) { return GetString(obj, {"metadata", "uid"}); }

// The controlling owner reference, or null.
const Json* ControllerOf(const Json& obj) {
  const Json* refs = Find(obj, {"metadata", "ownerReferences"});
  if (refs == nullptr || !refs->is_array()) return nullptr;
  for (const Json& ref : *refs) {
    if (ref.is_object() && ref.value("controller", false)) return &ref;
  }
  return nullptr;
}

// Pods made by a parent whose own reconcile stamps them (StatefulSet, LeaderWorkerSet).
bool StampedByParent(const Json& pod) {
  const std::string parent = manifest::PodAnnotation(pod, kSuspendedByParentAnnotation);
  return parent == "statefulset" || parent == "leaderworkerset";
}

bool IsRejection(const absl::Status& status) {
  return absl::IsInvalidArgument(status) || absl::IsFailedPrecondition(status) ||
         absl::IsNotFound(status);
}

// A workload's pod sets as the pure rules read them.
std::vector<manifest::WorkloadPodSet> PodSetsOf(const v1::Workload& wl) {
  std::vector<manifest::WorkloadPodSet> out;
  for (const v1::PodSet& ps : wl.spec().pod_sets()) out.push_back({ps.name(), ps.count()});
  return out;
}

}  // namespace

const ResourceKind& PodResource() {
  static const ResourceKind* kind = new ResourceKind{"", "v1", "pods", "Pod", true};
  return *kind;
}
const ResourceKind& DeploymentResource() {
  static const ResourceKind* kind =
      new ResourceKind{"apps", "v1", "deployments", "Deployment", true};
  return *kind;
}
const ResourceKind& StatefulSetResource() {
  static const ResourceKind* kind =
      new ResourceKind{"apps", "v1", "statefulsets", "StatefulSet", true};
  return *kind;
}
const ResourceKind& LeaderWorkerSetResource() {
  static const ResourceKind* kind = new ResourceKind{"leaderworkerset.x-k8s.io", "v1",
                                                     "leaderworkersets", "LeaderWorkerSet", true};
  return *kind;
}

PodController::PodController(kubeapi::KubeClient& kube, client::AdmissionClient& admission,
                             const core::Clock& clock, Options options)
    : kube_(kube), admission_(admission), clock_(clock), options_(std::move(options)) {}

std::vector<const ResourceKind*> PodController::WatchedResources() const {
  std::vector<const ResourceKind*> out;
  if (options_.pods || options_.deployments || options_.statefulsets || options_.leaderworkersets) {
    out.push_back(&PodResource());
  }
  if (options_.deployments) out.push_back(&DeploymentResource());
  if (options_.statefulsets) out.push_back(&StatefulSetResource());
  if (options_.leaderworkersets) out.push_back(&LeaderWorkerSetResource());
  return out;
}

bool PodController::Handles(absl::string_view resource) const {
  if (resource == kPodGroupsResource) return true;
  for (const ResourceKind* kind : WatchedResources()) {
    if (kind->plural == resource) return true;
  }
  return false;
}

std::vector<ObjectKey> PodController::KeysFor(absl::string_view resource, const Json& obj) const {
  const std::string ns = Ns(obj);
  if (resource == "leaderworkersets" &&
      !GetString(obj, {"metadata", "labels", manifest::kMultiKueueOriginLabel}).empty()) {
    // A worker's LeaderWorkerSet runs under one MultiKueue copy per group.
    absl::MutexLock lock(&mu_);
    for (const std::string& copy : manifest::RemoteLeaderWorkerSetCopies(obj)) {
      copy_objects_[Key(ns, copy)] = ObjectKey{std::string(resource), ns, Name(obj)};
    }
  }
  if ((resource == "pods" || resource == "statefulsets") &&
      !GetString(obj, {"metadata", "labels", manifest::kMultiKueueOriginLabel}).empty() &&
      !manifest::PrebuiltWorkloadName(obj).empty()) {
    // A worker's object made for a MultiKueue copy: the copy's changes concern it (a pod
    // group's pods, their group).
    const std::string group = resource == "pods" ? PodGroupName(obj) : std::string();
    absl::MutexLock lock(&mu_);
    copy_objects_[Key(ns, manifest::PrebuiltWorkloadName(obj))] =
        group.empty() ? ObjectKey{std::string(resource), ns, Name(obj)}
                      : ObjectKey{std::string(kPodGroupsResource), ns, group};
  }
  if (resource != "pods") return {ObjectKey{std::string(resource), ns, Name(obj)}};
  std::vector<ObjectKey> keys;
  const std::string parent = manifest::PodAnnotation(obj, kSuspendedByParentAnnotation);
  if (parent == "statefulset" && options_.statefulsets) {
    if (const Json* owner = ControllerOf(obj);
        owner != nullptr && owner->value("kind", "") == "StatefulSet") {
      keys.push_back({"statefulsets", ns, owner->value("name", "")});
    }
  } else if (parent == "leaderworkerset" && options_.leaderworkersets) {
    if (std::string lws = manifest::PodLabel(obj, kLwsNameLabel); !lws.empty()) {
      keys.push_back({"leaderworkersets", ns, lws});
    }
  }
  if (std::string group = PodGroupName(obj); !group.empty()) {
    keys.push_back({std::string(kPodGroupsResource), ns, group});
  } else if (!StampedByParent(obj)) {
    keys.push_back({"pods", ns, Name(obj)});
  }
  return keys;
}

std::vector<ObjectKey> PodController::KeysForWorkload(const v1::Workload& wl) const {
  const std::string& ns = wl.metadata().namespace_();
  std::vector<ObjectKey> keys;
  const bool group = wl.metadata().annotations().count(kIsGroupWorkloadAnnotation) > 0;
  if (wl.metadata().owner_references_size() == 1) {
    const v1::OwnerReference& owner = wl.metadata().owner_references(0);
    if (owner.kind() == "Pod" && owner.api_version() == "v1" &&
        (options_.pods || options_.deployments)) {
      keys.push_back({"pods", ns, owner.name()});
    } else if (owner.kind() == "StatefulSet" && options_.statefulsets) {
      keys.push_back({"statefulsets", ns, owner.name()});
    } else if (owner.kind() == "LeaderWorkerSet" && options_.leaderworkersets) {
      keys.push_back({"leaderworkersets", ns, owner.name()});
    }
  }
  if (group && !WatchedResources().empty()) {
    keys.push_back({std::string(kPodGroupsResource), ns, wl.metadata().name()});
  }
  // A MultiKueue copy on a worker: the object made for it (its deletion event names only the
  // workload).
  {
    absl::MutexLock lock(&mu_);
    auto it = copy_objects_.find(Key(ns, wl.metadata().name()));
    if (it != copy_objects_.end()) {
      keys.push_back(it->second);
      // A deletion event carries no spec: the copy is gone, and so is the need to remember.
      if (wl.spec().pod_sets_size() == 0) copy_objects_.erase(it);
    }
  }
  return keys;
}

void PodController::RecordDeletion(const ObjectKey& key, absl::string_view uid) {
  if (uid.empty()) return;
  absl::MutexLock lock(&mu_);
  tombstones_[key].insert(std::string(uid));
}

absl::Status PodController::Reconcile(const ObjectKey& key) {
  // Workloads of deleted objects first: the name may already belong to a new object.
  std::set<std::string> uids;
  {
    absl::MutexLock lock(&mu_);
    auto it = tombstones_.find(key);
    if (it != tombstones_.end()) {
      uids = std::move(it->second);
      tombstones_.erase(it);
    }
  }
  for (const std::string& uid : uids) {
    absl::Status gone = absl::OkStatus();
    if (key.resource == "pods") {
      gone = admission_.DeleteWorkload([&] {
        v1::DeleteWorkloadRequest r;
        *r.mutable_workload() = Ref(key.ns, manifest::KueueWorkloadName("Pod", "", key.name, uid));
        return r;
      }());
    } else if (key.resource == "statefulsets" || key.resource == "leaderworkersets") {
      v1::ListWorkloadsRequest list;
      list.set_namespace_(key.ns);
      list.set_owner_uid(uid);
      absl::StatusOr<v1::ListWorkloadsResponse> owned = admission_.ListWorkloads(list);
      gone = owned.status();
      for (int i = 0; owned.ok() && i < owned->workloads_size() && gone.ok(); ++i) {
        v1::DeleteWorkloadRequest r;
        *r.mutable_workload() = Ref(key.ns, owned->workloads(i).metadata().name());
        gone = admission_.DeleteWorkload(r);
      }
    }
    if (!gone.ok() && !absl::IsNotFound(gone)) {
      absl::MutexLock lock(&mu_);
      tombstones_[key].insert(uid);
      return gone;
    }
  }
  for (int attempt = 0; attempt <= options_.max_conflict_retries; ++attempt) {
    absl::Status status;
    try {
      if (key.resource == "pods") {
        status = ReconcilePod(key);
      } else if (key.resource == kPodGroupsResource) {
        status = ReconcileGroup(key);
      } else if (key.resource == "deployments") {
        status = ReconcileDeployment(key);
      } else if (key.resource == "statefulsets") {
        status = ReconcileStatefulSet(key);
      } else if (key.resource == "leaderworkersets") {
        status = ReconcileLeaderWorkerSet(key);
      } else {
        return absl::InvalidArgumentError(absl::StrCat("no controller for ", key.resource));
      }
    } catch (const Json::exception& e) {
      // An object with a field of an unexpected type is bad input, not a crash.
      return absl::InvalidArgumentError(absl::StrCat(key.ToString(), ": ", e.what()));
    }
    if (!kubeapi::IsConflict(status)) return status;
  }
  return absl::AbortedError(absl::StrCat(key.ToString(), ": still conflicting after ",
                                         options_.max_conflict_retries, " retries"));
}

// --- Which LocalQueue ------------------------------------------------------------------------

absl::StatusOr<std::string> PodController::QueueFor(const Json& obj) {
  std::string queue = manifest::QueueName(obj);
  if (!queue.empty() || !options_.manage_jobs_without_queue_name) return queue;
  const std::string ns = Ns(obj);
  if (options_.managed_jobs_namespace_selector.has_value()) {
    TOLLGATE_ASSIGN_OR_RETURN(Json object, kube_.Get(NamespaceResource(), "", ns));
    std::map<std::string, std::string> labels;
    if (const Json* l = Find(object, {"metadata", "labels"}); l != nullptr && l->is_object()) {
      for (const auto& [k, v] : l->items()) {
        if (v.is_string()) labels[k] = v.get<std::string>();
      }
    }
    labels.emplace("kubernetes.io/metadata.name", ns);
    if (!core::SelectorMatches(*options_.managed_jobs_namespace_selector, labels)) return "";
  }
  v1::ListObjectsRequest request;
  request.set_kind(v1::LOCAL_QUEUE);
  request.set_namespace_(ns);
  TOLLGATE_ASSIGN_OR_RETURN(v1::ListObjectsResponse queues, admission_.ListObjects(request));
  for (const v1::ConfigObject& object : queues.objects()) {
    if (object.has_local_queue() && object.local_queue().metadata().name() == "default") {
      return std::string("default");
    }
  }
  return std::string();
}

// --- Writing objects -------------------------------------------------------------------------

absl::StatusOr<Json> PodController::PatchObject(const ResourceKind& kind, const Json& obj,
                                                const Json& desired) {
  Json from = Json::object();
  Json to = Json::object();
  for (const char* part : {"metadata", "spec"}) {
    if (const Json* v = Find(obj, {part}); v != nullptr) from[part] = *v;
    if (const Json* v = Find(desired, {part}); v != nullptr) to[part] = *v;
  }
  Json patch = MergePatchDiff(from, to);
  if (patch.empty()) return obj;
  // Lists are replaced whole by a merge patch, so a stale read cannot drop someone else's
  // entry: the resourceVersion makes the write conditional.
  Ensure(patch, {"metadata"})["resourceVersion"] = GetString(obj, {"metadata", "resourceVersion"});
  TOLLGATE_ASSIGN_OR_RETURN(
      Json patched, kube_.Patch(kind, Ns(obj), Name(obj), kubeapi::PatchType::kMerge, patch));
  common::Log("info", "patched",
              {{"object", absl::StrCat(kind.plural, "/", Ns(obj), "/", Name(obj))}});
  return patched;
}

void PodController::SetRequeueAt(JobController::RequeueAt requeue_at) {
  absl::MutexLock lock(&mu_);
  requeue_at_ = std::move(requeue_at);
}

absl::Status PodController::DeletePod(const Json& pod, absl::string_view reason,
                                      absl::string_view message) {
  if (Find(pod, {"metadata", "deletionTimestamp"}) != nullptr) return absl::OkStatus();
  absl::Status deleted = kube_.Delete(PodResource(), Ns(pod), Name(pod));
  if (absl::IsNotFound(deleted)) return absl::OkStatus();
  TOLLGATE_RETURN_IF_ERROR(deleted);
  common::Log("info", "deleted pod",
              {{"pod", Key(Ns(pod), Name(pod))}, {"reason", std::string(reason)}});
  RecordEvent(PodResource(), pod, "Normal", reason, message);
  return absl::OkStatus();
}

void PodController::RecordEvent(const ResourceKind& kind, const Json& obj, absl::string_view type,
                                absl::string_view reason, absl::string_view message) {
  uint64_t sequence = 0;
  {
    absl::MutexLock lock(&mu_);
    sequence = ++event_sequence_;
  }
  RecordKubeEvent(kube_, kind, obj, type, reason, message, clock_.Now(), sequence,
                  EventSource{options_.component, options_.instance});
}

absl::Status PodController::Warn(const ResourceKind& kind, const Json& obj,
                                 absl::string_view reason, absl::string_view message) {
  const std::string value = absl::StrCat("invalid: ", message);
  if (manifest::Annotation(obj, kStatusKey) == value) return absl::OkStatus();
  Json desired = obj;
  manifest::SetAnnotation(desired, kStatusKey, value);
  TOLLGATE_ASSIGN_OR_RETURN(Json patched, PatchObject(kind, obj, desired));
  RecordEvent(kind, patched, "Warning", reason, message);
  common::Log("warning", std::string(reason),
              {{"object", absl::StrCat(kind.plural, "/", Key(Ns(obj), Name(obj)))},
               {"message", std::string(message)}});
  return absl::OkStatus();
}

// --- Admission onto pods ---------------------------------------------------------------------

namespace {

// The flavors an admission assigns, read from Tollgate.
absl::StatusOr<manifest::FlavorMap> FlavorsOf(client::AdmissionClient& admission,
                                              const v1::Workload& wl) {
  manifest::FlavorMap flavors;
  for (const std::string& name : manifest::AssignedFlavors(wl.status().admission())) {
    v1::ObjectRef ref;
    ref.set_kind(v1::RESOURCE_FLAVOR);
    ref.set_name(name);
    TOLLGATE_ASSIGN_OR_RETURN(v1::ConfigObject flavor, admission.GetObject(ref));
    flavors[name] = flavor.resource_flavor();
  }
  return flavors;
}

bool HasGate(const Json& pod, absl::string_view name) {
  const Json* gates = Find(pod, {"spec", "schedulingGates"});
  if (gates == nullptr || !gates->is_array()) return false;
  for (const Json& gate : *gates) {
    if (GetString(gate, {"name"}) == name) return true;
  }
  return false;
}

// `pod` ungated with its pod set's admission merged in (Kueue's prepare: podset.Merge, then the
// admission gate removed, and the topology gate too unless the pod set was placed), marked
// managed and with its role recorded, since the merge changes the spec its role hash is
// computed from. A placed pod keeps the topology gate for the topology controller to release it
// onto its domain; one created without that gate cannot get it (Kubernetes only removes gates
// from a pod that exists), so it stays gated: FAILED_PRECONDITION.
absl::StatusOr<Json> Ungated(const Json& pod, const manifest::PodSetInfo& admission,
                             absl::string_view role) {
  const Json topology_gate = {{"name", manifest::kTopologySchedulingGate}};
  const bool placed = absl::c_linear_search(admission.scheduling_gates, topology_gate);
  if (placed && !HasGate(pod, manifest::kTopologySchedulingGate)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "pod set ", admission.name,
        " is placed by topology-aware scheduling, but the pod was created without "
        "the scheduling gate ",
        manifest::kTopologySchedulingGate,
        ", which holds it until it is sent to its domain (create it with both gates)"));
  }
  Json desired = pod;
  TOLLGATE_RETURN_IF_ERROR(manifest::MergePodAdmission(desired, admission));
  Json kept = Json::array();
  if (const Json* gates = Find(desired, {"spec", "schedulingGates"});
      gates != nullptr && gates->is_array()) {
    for (const Json& gate : *gates) {
      const std::string name = GetString(gate, {"name"});
      if (name == kAdmissionGate || (!placed && name == manifest::kTopologySchedulingGate)) {
        continue;
      }
      kept.push_back(gate);
    }
  }
  if (kept.empty()) {
    desired["spec"].erase("schedulingGates");
  } else {
    desired["spec"]["schedulingGates"] = kept;
  }
  Json& labels = Ensure(desired, {"metadata", "labels"});
  labels[kManagedLabel] = "true";
  // The rank topology placement reads, from the label the pod names (Kueue's webhook copies it).
  if (const std::string source =
          manifest::PodAnnotation(pod, manifest::kPodGroupPodIndexLabelAnnotation);
      !source.empty() && labels.contains(source)) {
    labels[manifest::kPodGroupPodIndexLabel] = labels[source];
  }
  Ensure(desired, {"metadata", "annotations"})[manifest::kRoleHashAnnotation] = std::string(role);
  return desired;
}

}  // namespace

// --- Plain pods ------------------------------------------------------------------------------

absl::Status PodController::ReconcilePod(const ObjectKey& key) {
  absl::StatusOr<Json> got = kube_.Get(PodResource(), key.ns, key.name);
  if (absl::IsNotFound(got.status())) return absl::OkStatus();
  TOLLGATE_RETURN_IF_ERROR(got.status());
  const Json& pod = *got;
  if (!PodGroupName(pod).empty() || StampedByParent(pod)) return absl::OkStatus();
  // A pod some controller made belongs to that controller's workload, unless it is a
  // Deployment's pod (Kueue manages those one by one).
  const std::string parent = manifest::PodAnnotation(pod, kSuspendedByParentAnnotation);
  if (ControllerOf(pod) != nullptr && parent != "deployment") return absl::OkStatus();
  if (!options_.pods && parent.empty()) return absl::OkStatus();
  TOLLGATE_ASSIGN_OR_RETURN(std::string queue, QueueFor(pod));
  if (queue.empty()) return absl::OkStatus();
  const bool gated = IsGated(pod);
  if (!gated && manifest::PodLabel(pod, kManagedLabel) != "true") {
    if (manifest::IsTerminated(pod)) return absl::OkStatus();
    // Kueue's webhook would have gated it at creation; without one it runs outside the queue.
    return Warn(
        PodResource(), pod, "NotGated",
        absl::StrCat("created without the scheduling gate ", kAdmissionGate,
                     ": Tollgate has no webhook to add it, so the pod is not queued (create "
                     "it with spec.schedulingGates [{name: ",
                     kAdmissionGate, "}])"));
  }
  // A pod naming a prebuilt workload (a MultiKueue worker's pod names its copy) is bound to it.
  const std::string prebuilt = manifest::PrebuiltWorkloadName(pod);
  const v1::WorkloadRef ref =
      Ref(key.ns,
          prebuilt.empty() ? manifest::KueueWorkloadName("Pod", "", key.name, Uid(pod)) : prebuilt);

  if (manifest::IsTerminated(pod)) {
    absl::StatusOr<v1::Workload> wl = admission_.GetWorkload(ref);
    if (absl::IsNotFound(wl.status()) || (wl.ok() && manifest::MadeForAnotherCopy(pod, *wl))) {
      // A finished worker pod whose MultiKueue copy is gone (or replaced) goes with it.
      return DeleteObjectOfGoneCopy(PodResource(), pod).status();
    }
    TOLLGATE_RETURN_IF_ERROR(wl.status());
    // The final status reaches the copy before its finish, so the manager mirrors it.
    TOLLGATE_RETURN_IF_ERROR(ReportCopyPodStatus(pod, *wl));
    if (wl->status().state() == v1::WORKLOAD_STATE_ADMITTED ||
        wl->status().state() == v1::WORKLOAD_STATE_EVICTING) {
      v1::FinishRequest finish;
      *finish.mutable_workload() = ref;
      finish.set_message(GetString(pod, {"status", "message"}, manifest::PodPhase(pod)));
      // Kueue's reasons: a failed pod's workload finishes Failed.
      finish.set_reason(manifest::PodPhase(pod) == "Failed" ? "Failed" : "Succeeded");
      return admission_.Finish(finish).status();
    }
    if (wl->status().state() == v1::WORKLOAD_STATE_PENDING) {
      v1::DeleteWorkloadRequest del;
      *del.mutable_workload() = ref;
      absl::Status status = admission_.DeleteWorkload(del);
      return absl::IsNotFound(status) ? absl::OkStatus() : status;
    }
    return absl::OkStatus();
  }

  // The workload is the pod as written: only a gated pod still is (admission changes it).
  absl::StatusOr<v1::Workload> wl = admission_.GetWorkload(ref);
  if (gated && prebuilt.empty() && absl::IsNotFound(wl.status())) {
    absl::StatusOr<v1::Workload> built = manifest::PodWorkload(pod, queue);
    if (!built.ok()) return Warn(PodResource(), pod, "InvalidWorkload", built.status().message());
    v1::Workload& workload = *built;
    manifest::AddCopiedLabels(manifest::LabelsToCopy(pod, options_.label_keys_to_copy), workload);
    TOLLGATE_RETURN_IF_ERROR(ApplyDefaultWorkloadPriorityClass(pod, admission_, workload));
    absl::Status attached = AttachMultiKueuePayload(PodResource(), pod, queue, workload);
    if (absl::IsInvalidArgument(attached)) {
      return Warn(PodResource(), pod, "InvalidWorkload", attached.message());
    }
    TOLLGATE_RETURN_IF_ERROR(attached);
    v1::SubmitRequest submit;
    *submit.mutable_workload() = workload;
    absl::StatusOr<v1::SubmitResponse> submitted = SubmitMade(std::move(submit));
    if (!submitted.ok()) {
      if (IsRejection(submitted.status()) && !absl::IsAlreadyExists(submitted.status())) {
        TOLLGATE_RETURN_IF_ERROR(
            Warn(PodResource(), pod, "InvalidWorkload", submitted.status().message()));
      }
      if (!absl::IsAlreadyExists(submitted.status())) return submitted.status();
      wl = admission_.GetWorkload(ref);
    } else {
      wl = submitted->workload();
    }
  }
  if (wl.ok() && manifest::MadeForAnotherCopy(pod, *wl)) {
    // Made for an earlier copy of this name (a re-dispatch): not the new copy's to run.
    return DeleteObjectOfGoneCopy(PodResource(), pod).status();
  }
  if (absl::IsNotFound(wl.status())) {
    // A worker pod whose MultiKueue copy is gone goes with it (Kueue's DeleteRemoteObject).
    TOLLGATE_ASSIGN_OR_RETURN(const bool deleted, DeleteObjectOfGoneCopy(PodResource(), pod));
    if (deleted) return absl::OkStatus();
    if (gated && !prebuilt.empty()) {
      // Kueue: ErrPrebuiltWorkloadNotFound, retried.
      return absl::UnavailableError(
          absl::StrCat("pod ", key.ToString(), ": prebuilt workload ", prebuilt, " not found"));
    }
    // Running without a workload (Tollgate lost its state): as Kueue stops a job whose workload
    // is gone, the pod goes; its owner makes a new, gated one.
    return DeletePod(pod, "Stopped", "No workload in Tollgate for this pod");
  }
  TOLLGATE_RETURN_IF_ERROR(wl.status());
  if (prebuilt.empty()) TOLLGATE_RETURN_IF_ERROR(FollowAdmissionGates(pod, *wl));
  // Kueue's job reconciler, on a pod whose workload it deactivated: past afterDeactivatedByKueue
  // the pod goes, and its workload with it.
  if (options_.after_deactivated_by_kueue.has_value()) {
    if (const std::optional<absl::Time> due =
            DeactivatedJobDeletionTime(*wl, *options_.after_deactivated_by_kueue)) {
      if (*due > clock_.Now()) {
        JobController::RequeueAt requeue_at;
        {
          absl::MutexLock lock(&mu_);
          requeue_at = requeue_at_;
        }
        if (requeue_at) requeue_at(key, *due);
      } else {
        TOLLGATE_RETURN_IF_ERROR(
            DeletePod(pod, "Deleted", "Deleted job: deactivation retention period expired"));
        v1::DeleteWorkloadRequest del;
        *del.mutable_workload() = ref;
        absl::Status status = admission_.DeleteWorkload(del);
        return absl::IsNotFound(status) ? absl::OkStatus() : status;
      }
    }
  }

  TOLLGATE_RETURN_IF_ERROR(ReportCopyPodStatus(pod, *wl));
  if (gated) {
    // The status patch wakes this pod again; the rest waits for that pass.
    TOLLGATE_ASSIGN_OR_RETURN(const bool projected, ProjectRemotePodStatus(pod, *wl));
    if (projected) return absl::OkStatus();
  }
  switch (wl->status().state()) {
    case v1::WORKLOAD_STATE_ADMITTED: {
      if (gated) {
        // Admitted through MultiKueue: it runs on the winning worker; this one stays gated.
        TOLLGATE_ASSIGN_OR_RETURN(const bool elsewhere, RunsOnAWorker(*wl));
        if (elsewhere) return absl::OkStatus();
        TOLLGATE_ASSIGN_OR_RETURN(manifest::FlavorMap flavors, FlavorsOf(admission_, *wl));
        TOLLGATE_ASSIGN_OR_RETURN(manifest::PodSetInfo admitted,
                                  manifest::PodAdmissionFor(*wl, "main", flavors));
        TOLLGATE_ASSIGN_OR_RETURN(std::string role, manifest::PodRoleHash(pod));
        absl::StatusOr<Json> desired = Ungated(pod, admitted, role);
        if (!desired.ok()) {
          return Warn(PodResource(), pod, "FailedToStart", desired.status().message());
        }
        manifest::SetAnnotation(*desired, kStatusKey,
                                absl::StrCat("admitted: Admitted by ClusterQueue ",
                                             wl->status().admission().cluster_queue()));
        TOLLGATE_ASSIGN_OR_RETURN(Json patched, PatchObject(PodResource(), pod, *desired));
        RecordEvent(
            PodResource(), patched, "Normal", "Started",
            absl::StrCat("Admitted by ClusterQueue ", wl->status().admission().cluster_queue()));
        return absl::OkStatus();
      }
      return ReportPodsReadyIfChanged(admission_, *wl, ref, manifest::IsReady(pod));
    }
    case v1::WORKLOAD_STATE_EVICTING: {
      // A gate cannot be put back: the pod is deleted (Kueue's Stop for pods).
      if (!gated) TOLLGATE_RETURN_IF_ERROR(DeletePod(pod, "Preempted", "Workload evicted"));
      if (gated || !manifest::IsActivePod(pod, clock_.Now())) {
        v1::ReportStoppedRequest stopped;
        *stopped.mutable_workload() = ref;
        absl::Status status = admission_.ReportStopped(stopped).status();
        if (!status.ok() && !absl::IsFailedPrecondition(status)) return status;
      }
      return absl::OkStatus();
    }
    case v1::WORKLOAD_STATE_PENDING: {
      if (!gated) return DeletePod(pod, "Stopped", "Workload is not admitted");
      const std::string message = wl->status().pending_message().empty()
                                      ? std::string("Waiting for admission")
                                      : wl->status().pending_message();
      Json desired = pod;
      manifest::SetAnnotation(desired, kStatusKey, absl::StrCat("pending: ", message));
      return PatchObject(PodResource(), pod, desired).status();
    }
    default:
      return absl::OkStatus();
  }
}

// --- Pod groups ------------------------------------------------------------------------------

absl::Status PodController::ForwardGroupReclaimablePods(const std::vector<Json>& pods,
                                                        const manifest::PodGroupInfo& info,
                                                        const v1::Workload& wl,
                                                        const v1::WorkloadRef& ref) {
  if (!options_.reclaimable_pods) return absl::OkStatus();
  TOLLGATE_ASSIGN_OR_RETURN(auto succeeded, manifest::GroupReclaimablePods(pods, info));
  return ReportReclaimablePodsIfChanged(admission_, wl, ref, succeeded);
}

namespace {

// Evicted and not admitted since: Kueue's Evicted condition, which admission sets false again.
bool Evicted(const v1::Workload& wl) {
  if (wl.status().state() == v1::WORKLOAD_STATE_EVICTING) return true;
  if (wl.status().state() != v1::WORKLOAD_STATE_PENDING) return false;
  for (const v1::Condition& c : wl.status().conditions()) {
    if (c.type() == "Evicted") return c.status() == "True";
  }
  return false;
}

}  // namespace

absl::Status PodController::AwaitReplacements(const v1::Workload& wl) {
  const v1::WorkloadRef ref = Ref(wl.metadata().namespace_(), wl.metadata().name());
  // Waiting first, so the release below does not queue it while it has no pods.
  if (!wl.status().waiting_for_replacement_pods()) {
    v1::ReportJobStateRequest report;
    *report.mutable_workload() = ref;
    report.set_waiting_for_replacement_pods(true);
    TOLLGATE_RETURN_IF_ERROR(admission_.ReportJobState(report).status());
  }
  if (wl.status().state() != v1::WORKLOAD_STATE_EVICTING) return absl::OkStatus();
  v1::ReportStoppedRequest stopped;
  *stopped.mutable_workload() = ref;
  absl::Status status = admission_.ReportStopped(stopped).status();
  return absl::IsFailedPrecondition(status) ? absl::OkStatus() : status;
}

absl::Status PodController::ReconcileGroup(const ObjectKey& key) {
  TOLLGATE_ASSIGN_OR_RETURN(kubeapi::ListResult listed, kube_.List(PodResource(), key.ns));
  std::vector<Json> pods;
  for (Json& pod : listed.items) {
    if (PodGroupName(pod) == key.name) pods.push_back(std::move(pod));
  }
  // Creation order makes the reference pod (the first) and every choice below deterministic.
  std::sort(pods.begin(), pods.end(), [](const Json& a, const Json& b) {
    return std::make_pair(GetString(a, {"metadata", "creationTimestamp"}), PodName(a)) <
           std::make_pair(GetString(b, {"metadata", "creationTimestamp"}), PodName(b));
  });
  if (pods.empty()) {
    // The group is gone; its workload goes with it (Kueue's is owned by the pods), unless a
    // parent owns it (a StatefulSet's or LeaderWorkerSet group's outlives its pods) or an
    // eviction deleted the members.
    absl::StatusOr<v1::Workload> wl = admission_.GetWorkload(Ref(key.ns, key.name));
    if (!wl.ok()) return absl::IsNotFound(wl.status()) ? absl::OkStatus() : wl.status();
    // A MultiKueue copy's group (a worker's StatefulSet) may not exist yet, and the copy is the
    // manager's to remove.
    if (wl->metadata().annotations().count(kIsGroupWorkloadAnnotation) == 0 ||
        wl->metadata().owner_references_size() > 0 ||
        wl->metadata().labels().count(std::string(manifest::kMultiKueueOriginLabel)) > 0) {
      return absl::OkStatus();
    }
    // Kueue's finalizers keep the members it deleted on eviction until their replacements
    // exist, so an evicted group is never empty there: it waits for replacement pods. Tollgate
    // puts no finalizers on pods, so it reads an evicted group without members the same way.
    if (Evicted(*wl)) return AwaitReplacements(*wl);
    v1::DeleteWorkloadRequest del;
    *del.mutable_workload() = Ref(key.ns, key.name);
    absl::Status status = admission_.DeleteWorkload(del);
    return absl::IsNotFound(status) ? absl::OkStatus() : status;
  }
  const Json& first = pods.front();
  const bool by_parent = StampedByParent(first);
  if (!options_.pods && !by_parent) return absl::OkStatus();
  TOLLGATE_ASSIGN_OR_RETURN(std::string queue, QueueFor(first));
  if (queue.empty()) return absl::OkStatus();
  if (!IsGated(first) && manifest::PodLabel(first, kManagedLabel) != "true") {
    if (manifest::IsTerminated(first)) return absl::OkStatus();
    return Warn(PodResource(), first, "NotGated",
                absl::StrCat("pod group ", key.name, ": created without the scheduling gate ",
                             kAdmissionGate, ", so it is not queued"));
  }
  absl::StatusOr<manifest::PodGroupInfo> info =
      manifest::ReadPodGroup(pods, manifest::kQueueNameLabel);
  if (!info.ok()) {
    // Kueue refuses the group (an unretryable error and an event); nothing is lost: a workload
    // it has keeps running, and fixing the pods lets the next pass go on.
    TOLLGATE_RETURN_IF_ERROR(
        Warn(PodResource(), first, "ErrWorkloadCompose", info.status().message()));
    return absl::OkStatus();
  }
  const std::string wl_name =
      info->prebuilt_workload.empty() ? info->name : info->prebuilt_workload;
  const v1::WorkloadRef ref = Ref(key.ns, wl_name);
  absl::StatusOr<v1::Workload> wl = admission_.GetWorkload(ref);
  if (!wl.ok() && !absl::IsNotFound(wl.status())) return wl.status();

  // A worker's pods made for a MultiKueue copy that is gone (or replaced by another of the same
  // name) go with it (Kueue's DeleteRemoteObject deletes the group's pods).
  if (!GetString(first, {"metadata", "labels", manifest::kMultiKueueOriginLabel}).empty()) {
    bool gone = false;
    for (const Json& pod : pods) {
      if (!absl::IsNotFound(wl.status()) && !manifest::MadeForAnotherCopy(pod, *wl)) continue;
      TOLLGATE_ASSIGN_OR_RETURN(const bool deleted, DeleteObjectOfGoneCopy(PodResource(), pod));
      gone = gone || deleted;
    }
    if (gone) return absl::OkStatus();
  }

  if (absl::IsNotFound(wl.status())) {
    if (!info->prebuilt_workload.empty()) {
      // Its parent makes the workload (Kueue: ErrPrebuiltWorkloadNotFound, retried).
      return absl::UnavailableError(
          absl::StrCat("pod group ", key.name, ": prebuilt workload ", wl_name, " not found"));
    }
    TOLLGATE_ASSIGN_OR_RETURN(const bool multikueue, QueueUsesMultiKueue(key.ns, queue));
    // On a MultiKueue queue too, fast admission makes the workload at the first pod: the pods
    // made later join its payload (SyncGroupPayload).
    absl::StatusOr<manifest::NewGroupWorkload> composed = manifest::ComposeGroup(pods, *info);
    if (absl::IsFailedPrecondition(composed.status())) {
      // Waiting for members: their creation triggers the next pass.
      Json desired = first;
      manifest::SetAnnotation(desired, kStatusKey,
                              absl::StrCat("pending: ", composed.status().message()));
      return PatchObject(PodResource(), first, desired).status();
    }
    if (!composed.ok()) {
      return Warn(PodResource(), first, "ErrWorkloadCompose", composed.status().message());
    }
    for (const std::string& excess : composed->excess_pods) {
      for (const Json& pod : pods) {
        if (PodName(pod) == excess) {
          TOLLGATE_RETURN_IF_ERROR(DeletePod(pod, "ExcessPodDeleted", "Excess pod deleted"));
        }
      }
    }
    absl::StatusOr<v1::Workload> built =
        manifest::PodGroupWorkload(key.ns, *info, composed->roles, first, queue);
    if (!built.ok()) {
      return Warn(PodResource(), first, "ErrWorkloadCompose", built.status().message());
    }
    // Kueue's rule for a group: every member that carries a key must agree on its value.
    std::vector<Json> members;
    for (const Json& pod : pods) {
      if (absl::c_find(composed->excess_pods, PodName(pod)) == composed->excess_pods.end()) {
        members.push_back(pod);
      }
    }
    absl::StatusOr<std::map<std::string, std::string>> copied =
        manifest::GroupLabelsToCopy(members, options_.label_keys_to_copy);
    if (!copied.ok()) {
      return Warn(PodResource(), first, "ErrWorkloadCompose", copied.status().message());
    }
    manifest::AddCopiedLabels(*copied, *built);
    // A parent's group takes its priority from the parent's templates (GateTemplates): Kueue
    // defaults its pods only when their owner is not one it manages.
    if (!by_parent) {
      TOLLGATE_RETURN_IF_ERROR(ApplyDefaultWorkloadPriorityClass(first, admission_, *built));
    }
    if (multikueue) {
      std::vector<Json> carried;
      for (const Json& pod : pods) {
        if (manifest::IsRunnableOrSucceeded(pod) &&
            absl::c_find(composed->excess_pods, PodName(pod)) == composed->excess_pods.end()) {
          carried.push_back(pod);
        }
      }
      absl::Status attached = AttachMultiKueueGroupPayload(carried, *built);
      if (!attached.ok()) {
        return Warn(PodResource(), first, "InvalidWorkload", attached.message());
      }
    }
    const v1::Workload& workload = *built;
    v1::SubmitRequest submit;
    *submit.mutable_workload() = workload;
    absl::StatusOr<v1::SubmitResponse> submitted = SubmitMade(std::move(submit));
    if (!submitted.ok()) {
      if (IsRejection(submitted.status())) {
        return Warn(PodResource(), first, "InvalidWorkload", submitted.status().message());
      }
      return submitted.status();
    }
    wl = submitted->workload();
    common::Log("info", "submitted pod group workload", {{"workload", Key(key.ns, wl_name)}});
  } else if (wl->metadata().annotations().count(kIsGroupWorkloadAnnotation) == 0) {
    return Warn(PodResource(), first, "WorkloadNameConflict",
                absl::StrCat("A Workload named \"", wl_name,
                             "\" already exists but is not a pod group workload; this pod group "
                             "cannot be admitted"));
  } else {
    const bool finished = wl->status().state() == v1::WORKLOAD_STATE_FINISHED;
    if (!info->prebuilt_workload.empty()) {
      TOLLGATE_ASSIGN_OR_RETURN(bool in_sync,
                                manifest::GroupEquivalent(pods, *info, PodSetsOf(*wl), finished));
      if (!in_sync && !finished) {
        v1::ReportJobStateRequest report;
        *report.mutable_workload() = ref;
        report.set_out_of_sync(true);
        TOLLGATE_RETURN_IF_ERROR(admission_.ReportJobState(report).status());
        RecordEvent(PodResource(), first, "Warning", "OutOfSync",
                    "The prebuilt workload is out of sync with its user job");
        return absl::OkStatus();
      }
    } else {
      TOLLGATE_ASSIGN_OR_RETURN(manifest::GroupMatch match,
                                manifest::MatchGroup(pods, *info, PodSetsOf(*wl), finished));
      if (!match.equivalent) {
        // Kueue replaces a workload that no longer describes the group.
        v1::DeleteWorkloadRequest del;
        *del.mutable_workload() = ref;
        TOLLGATE_RETURN_IF_ERROR(admission_.DeleteWorkload(del));
        return absl::AbortedError(absl::StrCat("pod group ", key.name, ": workload replaced"));
      }
      for (const std::string& excess : match.excess_pods) {
        for (const Json& pod : pods) {
          if (PodName(pod) == excess) {
            TOLLGATE_RETURN_IF_ERROR(DeletePod(pod, "ExcessPodDeleted", "Excess pod deleted"));
          }
        }
      }
      const bool waiting = match.absent > 0;
      if (!finished && wl->status().waiting_for_replacement_pods() != waiting) {
        v1::ReportJobStateRequest report;
        *report.mutable_workload() = ref;
        report.set_waiting_for_replacement_pods(waiting);
        TOLLGATE_ASSIGN_OR_RETURN(v1::ReportJobStateResponse reported,
                                  admission_.ReportJobState(report));
        *wl = reported.workload();
      }
      // Before `pods` is replaced: `first` refers into it.
      TOLLGATE_RETURN_IF_ERROR(FollowAdmissionGates(first, *wl));
      pods = std::move(match.kept);
      TOLLGATE_RETURN_IF_ERROR(SyncGroupPayload(pods, *wl));
    }
  }

  // MultiKueue: a worker's statuses go to its copy before the group's finish; the manager's
  // gated pods show the winner's (the patch wakes this group again).
  TOLLGATE_RETURN_IF_ERROR(ReportCopyGroupStatus(pods, *wl));
  {
    TOLLGATE_ASSIGN_OR_RETURN(const bool projected, ProjectRemoteGroupStatus(pods, *wl));
    if (projected) return absl::OkStatus();
  }
  if (std::optional<manifest::GroupFinish> done = manifest::GroupFinished(pods, *info)) {
    if (wl->status().state() == v1::WORKLOAD_STATE_ADMITTED ||
        wl->status().state() == v1::WORKLOAD_STATE_EVICTING) {
      v1::FinishRequest finish;
      *finish.mutable_workload() = ref;
      finish.set_message(done->message);
      return admission_.Finish(finish).status();
    }
    return absl::OkStatus();
  }

  switch (wl->status().state()) {
    case v1::WORKLOAD_STATE_ADMITTED: {
      // Admitted through MultiKueue: the group runs on the winning worker; these stay gated.
      TOLLGATE_ASSIGN_OR_RETURN(const bool elsewhere, RunsOnAWorker(*wl));
      if (elsewhere) return absl::OkStatus();
      manifest::FlavorMap flavors;
      bool any_gated = false;
      for (const Json& pod : pods) any_gated = any_gated || IsGated(pod);
      if (any_gated) {
        TOLLGATE_ASSIGN_OR_RETURN(flavors, FlavorsOf(admission_, *wl));
      }
      for (const Json& pod : pods) {
        if (!IsGated(pod) || manifest::IsTerminated(pod)) continue;
        TOLLGATE_ASSIGN_OR_RETURN(std::string role, manifest::PodRoleHash(pod));
        absl::StatusOr<manifest::PodSetInfo> admitted =
            manifest::PodAdmissionFor(*wl, role, flavors);
        if (absl::IsNotFound(admitted.status())) {
          // A pod of a role the workload does not have stays gated (Kueue: ErrInvalidPodsetInfo).
          TOLLGATE_RETURN_IF_ERROR(
              Warn(PodResource(), pod, "InvalidPodSetInfo", admitted.status().message()));
          continue;
        }
        TOLLGATE_RETURN_IF_ERROR(admitted.status());
        absl::StatusOr<Json> desired = Ungated(pod, *admitted, role);
        if (!desired.ok()) {
          TOLLGATE_RETURN_IF_ERROR(
              Warn(PodResource(), pod, "FailedToStart", desired.status().message()));
          continue;
        }
        manifest::SetAnnotation(*desired, kStatusKey,
                                absl::StrCat("admitted: Admitted by ClusterQueue ",
                                             wl->status().admission().cluster_queue()));
        TOLLGATE_ASSIGN_OR_RETURN(Json patched, PatchObject(PodResource(), pod, *desired));
        RecordEvent(
            PodResource(), patched, "Normal", "Started",
            absl::StrCat("Admitted by ClusterQueue ", wl->status().admission().cluster_queue()));
      }
      TOLLGATE_RETURN_IF_ERROR(ForwardGroupReclaimablePods(pods, *info, *wl, ref));
      return ReportPodsReadyIfChanged(admission_, *wl, ref, manifest::GroupPodsReady(pods, *info));
    }
    case v1::WORKLOAD_STATE_EVICTING: {
      bool active = false;
      for (const Json& pod : pods) {
        if (IsGated(pod) || manifest::IsTerminated(pod)) continue;
        TOLLGATE_RETURN_IF_ERROR(DeletePod(pod, "Preempted", "Workload evicted"));
        active = active || manifest::IsActivePod(pod, clock_.Now());
      }
      if (!active) {
        v1::ReportStoppedRequest stopped;
        *stopped.mutable_workload() = ref;
        absl::Status status = admission_.ReportStopped(stopped).status();
        if (!status.ok() && !absl::IsFailedPrecondition(status)) return status;
      }
      return absl::OkStatus();
    }
    case v1::WORKLOAD_STATE_PENDING: {
      // Kueue counts a group with a gated member as suspended; one that runs without
      // admission (Tollgate lost its state) is stopped.
      const bool any_gated =
          std::any_of(pods.begin(), pods.end(), [](const Json& pod) { return IsGated(pod); });
      if (!any_gated) {
        for (const Json& pod : pods) {
          if (manifest::IsTerminated(pod)) continue;
          TOLLGATE_RETURN_IF_ERROR(DeletePod(pod, "Stopped", "Workload is not admitted"));
        }
      }
      return absl::OkStatus();
    }
    default:
      return absl::OkStatus();
  }
}

absl::StatusOr<v1::SubmitResponse> PodController::SubmitMade(v1::SubmitRequest submit) {
  if (!options_.admission_gated_by) DropAdmissionGates(*submit.mutable_workload());
  return admission_.Submit(submit);
}

absl::Status PodController::FollowAdmissionGates(const Json& object, v1::Workload& wl) {
  if (!options_.admission_gated_by || wl.status().state() != v1::WORKLOAD_STATE_PENDING) {
    return absl::OkStatus();
  }
  v1::Workload from_object;
  manifest::CopyAdmissionGates(object, from_object);
  TOLLGATE_ASSIGN_OR_RETURN(wl, PropagateAdmissionGates(admission_, from_object, std::move(wl)));
  return absl::OkStatus();
}

// --- Parents: pod templates ------------------------------------------------------------------

namespace {

// Whether GateTemplates already stamped the parent's templates.
bool TemplatesStamped(const Json& obj, const std::vector<std::string>& template_paths) {
  for (const std::string& path : template_paths) {
    const Json::json_pointer pointer(path);
    if (obj.contains(pointer) &&
        Find(obj[pointer], {"metadata", "annotations", kSuspendedByParentAnnotation}) != nullptr) {
      return true;
    }
  }
  return false;
}

}  // namespace

absl::Status PodController::GateTemplates(const ResourceKind& kind, const Json& obj,
                                          const std::vector<std::string>& template_paths,
                                          absl::string_view framework, absl::string_view queue) {
  Json desired = obj;
  std::string priority = GetString(obj, {"metadata", "labels", manifest::kPriorityClassLabel});
  if (priority.empty() && !TemplatesStamped(obj, template_paths)) {
    // First seen (Kueue's webhook labels the parent at creation; later it keeps what it has).
    TOLLGATE_ASSIGN_OR_RETURN(const bool takes_default,
                              TakesDefaultWorkloadPriorityClass(obj, admission_));
    if (takes_default) {
      SetDefaultWorkloadPriorityClass(desired);
      priority = std::string(kDefaultWorkloadPriorityClass);
    }
  }
  for (const std::string& path : template_paths) {
    const Json::json_pointer pointer(path);
    if (!desired.contains(pointer)) continue;
    Json& tmpl = desired[pointer];
    if (!tmpl.is_object()) continue;
    // What Kueue's webhook puts on the template, and the gate its pod webhook puts on each pod.
    Ensure(tmpl, {"metadata", "annotations"})[kSuspendedByParentAnnotation] =
        std::string(framework);
    Json& labels = Ensure(tmpl, {"metadata", "labels"});
    labels[kManagedLabel] = "true";
    if (!queue.empty()) labels[manifest::kQueueNameLabel] = std::string(queue);
    if (!priority.empty()) labels[manifest::kPriorityClassLabel] = priority;
    if (framework == "leaderworkerset") {
      tmpl["metadata"]["annotations"][manifest::kPodGroupServingAnnotation] = "true";
    }
    Json& spec = Ensure(tmpl, {"spec"});
    Json& gates = spec["schedulingGates"];
    if (!gates.is_array()) gates = Json::array();
    std::vector<absl::string_view> wanted = {kAdmissionGate};
    // Kueue's pod webhook adds the topology gate to every pod once TAS is on; the admission
    // takes it off again unless the pod set is placed.
    if (options_.topology) wanted.push_back(manifest::kTopologySchedulingGate);
    for (absl::string_view name : wanted) {
      bool present = false;
      for (const Json& gate : gates) present = present || GetString(gate, {"name"}) == name;
      if (!present) gates.push_back({{"name", name}});
    }
  }
  return PatchObject(kind, obj, desired).status();
}

absl::Status PodController::ReconcileDeployment(const ObjectKey& key) {
  absl::StatusOr<Json> got = kube_.Get(DeploymentResource(), key.ns, key.name);
  if (absl::IsNotFound(got.status())) return absl::OkStatus();
  TOLLGATE_RETURN_IF_ERROR(got.status());
  TOLLGATE_ASSIGN_OR_RETURN(std::string queue, QueueFor(*got));
  if (queue.empty()) return absl::OkStatus();
  return GateTemplates(DeploymentResource(), *got, {"/spec/template"}, "deployment",
                       manifest::QueueName(*got));
}

// --- StatefulSet -----------------------------------------------------------------------------

absl::Status PodController::ReleaseRolloutPods(const Json& sts) {
  const std::string current = GetString(sts, {"status", "currentRevision"});
  const std::string update = GetString(sts, {"status", "updateRevision"});
  if (current.empty() || current == update) return absl::OkStatus();
  const std::string ns = GetString(sts, {"metadata", "namespace"});
  TOLLGATE_ASSIGN_OR_RETURN(kubeapi::ListResult listed, kube_.List(PodResource(), ns));
  for (const Json& pod : listed.items) {
    const Json* owner = ControllerOf(pod);
    if (owner == nullptr || owner->value("uid", "") != Uid(sts) ||
        manifest::PodLabel(pod, kControllerRevisionHashLabel) != current) {
      continue;
    }
    const Json* gates = Find(pod, {"spec", "schedulingGates"});
    if (gates == nullptr || !gates->is_array()) continue;
    Json kept = Json::array();
    for (const Json& gate : *gates) {
      const std::string name = GetString(gate, {"name"});
      if (name != kAdmissionGate && name != manifest::kTopologySchedulingGate) kept.push_back(gate);
    }
    if (kept.size() == gates->size()) continue;
    Json desired = pod;
    if (kept.empty()) {
      desired["spec"].erase("schedulingGates");
    } else {
      desired["spec"]["schedulingGates"] = kept;
    }
    TOLLGATE_RETURN_IF_ERROR(PatchObject(PodResource(), pod, desired).status());
    common::Log("info", "released a pod of the current revision during a rolling update",
                {{"pod", Key(ns, PodName(pod))}});
  }
  return absl::OkStatus();
}

absl::Status PodController::ReconcileStatefulSet(const ObjectKey& key) {
  absl::StatusOr<Json> got = kube_.Get(StatefulSetResource(), key.ns, key.name);
  if (absl::IsNotFound(got.status())) return absl::OkStatus();
  TOLLGATE_RETURN_IF_ERROR(got.status());
  const Json& sts = *got;
  TOLLGATE_ASSIGN_OR_RETURN(std::string queue, QueueFor(sts));
  if (queue.empty()) return absl::OkStatus();
  TOLLGATE_RETURN_IF_ERROR(GateTemplates(StatefulSetResource(), sts, {"/spec/template"},
                                         "statefulset", manifest::QueueName(sts)));
  TOLLGATE_RETURN_IF_ERROR(ReleaseRolloutPods(sts));
  const int32_t replicas = manifest::StatefulSetReplicas(sts);
  // A MultiKueue worker's StatefulSet is bound to its copy, made by the manager (Kueue's
  // reconciler creates no workload for one with the origin label).
  const bool remote =
      !GetString(sts, {"metadata", "labels", manifest::kMultiKueueOriginLabel}).empty() &&
      !manifest::PrebuiltWorkloadName(sts).empty();
  const std::string wl_name =
      remote ? manifest::PrebuiltWorkloadName(sts) : manifest::StatefulSetWorkloadName(sts);
  const v1::WorkloadRef ref = Ref(key.ns, wl_name);

  absl::StatusOr<v1::Workload> wl = admission_.GetWorkload(ref);
  if (remote &&
      (absl::IsNotFound(wl.status()) || (wl.ok() && manifest::MadeForAnotherCopy(sts, *wl)))) {
    // Its copy is gone (or replaced by another of the same name): it goes too (Kueue's
    // DeleteRemoteObject).
    return DeleteObjectOfGoneCopy(StatefulSetResource(), sts).status();
  }
  if (absl::IsNotFound(wl.status())) {
    if (replicas == 0) return absl::OkStatus();
    absl::StatusOr<v1::Workload> built = manifest::StatefulSetWorkload(sts, queue);
    if (!built.ok())
      return Warn(StatefulSetResource(), sts, "InvalidWorkload", built.status().message());
    // Kueue reads them from the group's pods, which carry the template's labels.
    manifest::AddCopiedLabels(
        manifest::LabelsToCopyAt(sts, {"spec", "template", "metadata", "labels"},
                                 options_.label_keys_to_copy),
        *built);
    absl::Status attached = AttachMultiKueuePayload(StatefulSetResource(), sts, queue, *built);
    if (absl::IsInvalidArgument(attached)) {
      return Warn(StatefulSetResource(), sts, "InvalidWorkload", attached.message());
    }
    TOLLGATE_RETURN_IF_ERROR(attached);
    v1::SubmitRequest submit;
    *submit.mutable_workload() = *built;
    absl::StatusOr<v1::SubmitResponse> submitted = SubmitMade(std::move(submit));
    if (!submitted.ok()) {
      if (IsRejection(submitted.status())) {
        return Warn(StatefulSetResource(), sts, "InvalidWorkload", submitted.status().message());
      }
      return submitted.status();
    }
    wl = submitted->workload();
  }
  TOLLGATE_RETURN_IF_ERROR(wl.status());
  // Kueue's StatefulSet reconciler keeps the workload's gates those of the StatefulSet (a
  // worker's copy follows its manager's workload instead).
  if (!remote) TOLLGATE_RETURN_IF_ERROR(FollowAdmissionGates(sts, *wl));

  if (replicas == 0) {
    if (!wl->status().on_hold() && wl->status().state() != v1::WORKLOAD_STATE_FINISHED) {
      v1::ReportJobStateRequest report;
      *report.mutable_workload() = ref;
      report.set_on_hold(true);
      report.set_message(std::string(kOnHoldMessage));
      TOLLGATE_RETURN_IF_ERROR(admission_.ReportJobState(report).status());
    }
    return absl::OkStatus();
  }
  const int32_t counted = wl->spec().pod_sets_size() > 0 ? wl->spec().pod_sets(0).count() : 0;
  if (wl->status().state() == v1::WORKLOAD_STATE_PENDING &&
      (counted != replicas || wl->spec().queue_name() != queue)) {
    // Scaled up from zero to another size, or relabelled to another queue, while waiting: the
    // workload is made again for the new size in the new queue (Kueue updates it in place).
    v1::DeleteWorkloadRequest del;
    *del.mutable_workload() = ref;
    TOLLGATE_RETURN_IF_ERROR(admission_.DeleteWorkload(del));
    return absl::AbortedError(absl::StrCat(key.ToString(), ": workload replaced for ", replicas,
                                           " replicas in queue ", queue));
  }
  if (counted != replicas) {
    // Kueue's webhook refuses this change; Tollgate cannot, so it says so and keeps the
    // admitted workload's size.
    TOLLGATE_RETURN_IF_ERROR(Warn(
        StatefulSetResource(), sts, "ReplicasChanged",
        absl::StrCat("spec.replicas changed from ", counted, " to ", replicas,
                     " while admitted: Kueue allows only scaling to and from zero; the workload "
                     "keeps ",
                     counted, " pods")));
  }
  if (wl->status().on_hold()) {
    v1::ReportJobStateRequest report;
    *report.mutable_workload() = ref;
    report.set_on_hold(false);
    TOLLGATE_RETURN_IF_ERROR(admission_.ReportJobState(report).status());
  }
  // Stamp the pods as members of the StatefulSet's group (Kueue's StatefulSet pod reconciler).
  TOLLGATE_ASSIGN_OR_RETURN(kubeapi::ListResult listed, kube_.List(PodResource(), key.ns));
  for (const Json& pod : listed.items) {
    const Json* owner = ControllerOf(pod);
    if (owner == nullptr || owner->value("uid", "") != Uid(sts) || manifest::IsTerminated(pod) ||
        Find(pod, {"metadata", "deletionTimestamp"}) != nullptr || PodGroupName(pod) == wl_name) {
      continue;
    }
    Json desired = pod;
    Json& annotations = Ensure(desired, {"metadata", "annotations"});
    annotations[kPodGroupNameKey] = wl_name;
    annotations[manifest::kPrebuiltWorkloadKey] = wl_name;
    annotations[kPodGroupTotalCountAnnotation] = absl::StrCat(counted);
    annotations[manifest::kPodGroupFastAdmissionAnnotation] = "true";
    annotations[manifest::kPodGroupServingAnnotation] = "true";
    annotations[manifest::kRoleHashAnnotation] = "main";
    Json& labels = Ensure(desired, {"metadata", "labels"});
    labels[kManagedLabel] = "true";
    if (!manifest::QueueName(sts).empty())
      labels[manifest::kQueueNameLabel] = manifest::QueueName(sts);
    TOLLGATE_RETURN_IF_ERROR(PatchObject(PodResource(), pod, desired).status());
  }
  return absl::OkStatus();
}

// --- LeaderWorkerSet -------------------------------------------------------------------------

absl::Status PodController::ReconcileLeaderWorkerSet(const ObjectKey& key) {
  absl::StatusOr<Json> got = kube_.Get(LeaderWorkerSetResource(), key.ns, key.name);
  if (absl::IsNotFound(got.status())) return absl::OkStatus();
  TOLLGATE_RETURN_IF_ERROR(got.status());
  const Json& lws = *got;
  TOLLGATE_ASSIGN_OR_RETURN(std::string queue, QueueFor(lws));
  if (queue.empty()) return absl::OkStatus();
  TOLLGATE_RETURN_IF_ERROR(GateTemplates(
      LeaderWorkerSetResource(), lws,
      {"/spec/leaderWorkerTemplate/leaderTemplate", "/spec/leaderWorkerTemplate/workerTemplate"},
      "leaderworkerset", manifest::QueueName(lws)));
  const int32_t replicas = manifest::LeaderWorkerSetReplicas(lws);
  const int32_t size = manifest::LeaderWorkerSetSize(lws);
  const Json* leader = Find(lws, {"spec", "leaderWorkerTemplate", "leaderTemplate"});
  const bool has_leader = leader != nullptr && leader->is_object();
  // A MultiKueue worker's LeaderWorkerSet runs under the manager's copies of its groups' workloads
  // (Kueue's reconciler makes none for one with the origin label); it goes once one of them is
  // gone (Kueue's DeleteRemoteObject, which any group's removal calls).
  const std::vector<std::string> copies = manifest::RemoteLeaderWorkerSetCopies(lws);
  const bool remote =
      !GetString(lws, {"metadata", "labels", manifest::kMultiKueueOriginLabel}).empty() &&
      !copies.empty();
  auto group_name = [&](int32_t index) {
    return remote ? copies[index] : manifest::LeaderWorkerSetGroupName(lws, index);
  };
  if (remote) {
    // The copies it was made for, in group order: a group's copy replaced by a new one of the
    // same name (an eviction's re-dispatch) is gone too.
    const std::vector<std::string> made_for = absl::StrSplit(
        GetString(lws, {"metadata", "annotations", manifest::kMultiKueueCopyUidAnnotation}), ',',
        absl::SkipEmpty());
    for (size_t i = 0; i < copies.size(); ++i) {
      absl::StatusOr<v1::Workload> wl = admission_.GetWorkload(Ref(key.ns, copies[i]));
      if (absl::IsNotFound(wl.status()) ||
          (wl.ok() && i < made_for.size() && made_for[i] != wl->metadata().uid())) {
        return DeleteObjectOfGoneCopy(LeaderWorkerSetResource(), lws).status();
      }
      TOLLGATE_RETURN_IF_ERROR(wl.status());
    }
  }

  v1::ListWorkloadsRequest list;
  list.set_namespace_(key.ns);
  list.set_owner_uid(Uid(lws));
  v1::ListWorkloadsResponse owned;
  if (!remote) {
    TOLLGATE_ASSIGN_OR_RETURN(owned, admission_.ListWorkloads(list));
  }
  std::set<std::string> wanted;
  for (int32_t i = 0; i < replicas; ++i) wanted.insert(group_name(i));
  std::set<std::string> existing;
  for (const v1::Workload& wl : owned.workloads()) {
    // A waiting group relabelled to another queue is made again there (Kueue moves it).
    if (wanted.count(wl.metadata().name()) > 0 &&
        wl.status().state() == v1::WORKLOAD_STATE_PENDING && wl.spec().queue_name() != queue) {
      v1::DeleteWorkloadRequest del;
      *del.mutable_workload() = Ref(key.ns, wl.metadata().name());
      absl::Status status = admission_.DeleteWorkload(del);
      if (!status.ok() && !absl::IsNotFound(status)) return status;
      continue;
    }
    existing.insert(wl.metadata().name());
    if (wanted.count(wl.metadata().name()) > 0) {
      // Kueue's LeaderWorkerSet reconciler keeps each group's gates those of the set.
      v1::Workload group = wl;
      TOLLGATE_RETURN_IF_ERROR(FollowAdmissionGates(lws, group));
    }
  }

  // Each group on its own: scaling up adds the new groups' workloads, scaling down removes the
  // workloads of the groups above `replicas`.
  for (const std::string& name : existing) {
    if (wanted.count(name) > 0) continue;
    v1::DeleteWorkloadRequest del;
    *del.mutable_workload() = Ref(key.ns, name);
    absl::Status status = admission_.DeleteWorkload(del);
    if (!status.ok() && !absl::IsNotFound(status)) return status;
    common::Log("info", "deleted workload of a removed group", {{"workload", Key(key.ns, name)}});
  }
  absl::StatusOr<std::vector<v1::Workload>> groups =
      remote ? std::vector<v1::Workload>() : manifest::LeaderWorkerSetWorkloads(lws, queue);
  if (!groups.ok()) {
    return Warn(LeaderWorkerSetResource(), lws, "InvalidWorkload", groups.status().message());
  }
  const std::map<std::string, std::string> copied =
      manifest::LabelsToCopy(lws, options_.label_keys_to_copy);
  for (v1::Workload& wl : *groups) {
    if (existing.count(wl.metadata().name()) > 0) continue;
    manifest::AddCopiedLabels(copied, wl);
    absl::Status attached = AttachMultiKueuePayload(LeaderWorkerSetResource(), lws, queue, wl);
    if (absl::IsInvalidArgument(attached)) {
      return Warn(LeaderWorkerSetResource(), lws, "InvalidWorkload", attached.message());
    }
    TOLLGATE_RETURN_IF_ERROR(attached);
    if (wl.spec().has_payload()) {
      // MultiKueue dispatches all groups together (docs/multicluster.md, "LeaderWorkerSet").
      (*wl.mutable_metadata()
            ->mutable_annotations())[std::string(core::kComponentWorkloadCountAnnotation)] =
          absl::StrCat(replicas);
    }
    v1::SubmitRequest submit;
    *submit.mutable_workload() = wl;
    absl::Status submitted = SubmitMade(std::move(submit)).status();
    if (!submitted.ok()) {
      if (IsRejection(submitted)) {
        return Warn(LeaderWorkerSetResource(), lws, "InvalidWorkload", submitted.message());
      }
      return submitted;
    }
  }

  // Stamp each group's pods as members of its workload (Kueue's LeaderWorkerSet setDefault).
  TOLLGATE_ASSIGN_OR_RETURN(kubeapi::ListResult listed, kube_.List(PodResource(), key.ns));
  for (const Json& pod : listed.items) {
    if (manifest::PodLabel(pod, kLwsNameLabel) != Name(lws) || manifest::IsTerminated(pod) ||
        Find(pod, {"metadata", "deletionTimestamp"}) != nullptr ||
        manifest::PodAnnotation(pod, kSuspendedByParentAnnotation) != "leaderworkerset") {
      continue;
    }
    const std::string index = manifest::PodLabel(pod, kLwsGroupIndexLabel);
    int32_t group = 0;
    if (index.empty() || !absl::SimpleAtoi(index, &group) || group < 0 || group >= replicas) {
      continue;
    }
    const std::string name = group_name(group);
    if (PodGroupName(pod) == name) continue;
    Json desired = pod;
    Json& annotations = Ensure(desired, {"metadata", "annotations"});
    annotations[kPodGroupNameKey] = name;
    annotations[manifest::kPrebuiltWorkloadKey] = name;
    annotations[kPodGroupTotalCountAnnotation] = absl::StrCat(size);
    annotations[manifest::kRoleHashAnnotation] =
        !has_leader                                                      ? "main"
        : manifest::PodAnnotation(pod, kLwsLeaderNameAnnotation).empty() ? "leader"
                                                                         : "worker";
    Json& labels = Ensure(desired, {"metadata", "labels"});
    labels[kManagedLabel] = "true";
    if (!manifest::QueueName(lws).empty())
      labels[manifest::kQueueNameLabel] = manifest::QueueName(lws);
    TOLLGATE_RETURN_IF_ERROR(PatchObject(PodResource(), pod, desired).status());
  }
  return absl::OkStatus();
}

// --- Orphans ---------------------------------------------------------------------------------

absl::StatusOr<int> PodController::CollectOrphans(
    const std::function<JobController::UidsByResource()>& live_uids_fn) {
  TOLLGATE_ASSIGN_OR_RETURN(v1::ListWorkloadsResponse list,
                            admission_.ListWorkloads(v1::ListWorkloadsRequest()));
  const JobController::UidsByResource live = live_uids_fn();
  auto alive = [&](absl::string_view resource, const std::string& uid) {
    auto it = live.find(std::string(resource));
    // A resource not synced is never taken as empty.
    return it == live.end() || it->second.count(uid) > 0;
  };
  int deleted = 0;
  std::map<std::string, std::set<std::string>> groups_by_namespace;
  bool groups_listed = false;
  for (const v1::Workload& wl : list.workloads()) {
    const std::string& ns = wl.metadata().namespace_();
    // A MultiKueue copy is its manager's to remove (and the MultiKueue garbage collector's),
    // even before the object it carries exists here.
    if (wl.metadata().labels().count(std::string(manifest::kMultiKueueOriginLabel)) > 0) continue;
    bool orphan = false;
    if (wl.metadata().owner_references_size() == 1) {
      const v1::OwnerReference& owner = wl.metadata().owner_references(0);
      if (owner.kind() == "StatefulSet" && owner.api_version() == "apps/v1") {
        orphan = !alive("statefulsets", owner.uid());
      } else if (owner.kind() == "LeaderWorkerSet") {
        orphan = !alive("leaderworkersets", owner.uid());
      } else if (owner.kind() == "Pod" && owner.api_version() == "v1") {
        orphan = !alive("pods", owner.uid());
      }
    } else if (wl.metadata().owner_references_size() == 0 &&
               wl.metadata().annotations().count(kIsGroupWorkloadAnnotation) > 0 &&
               live.count("pods") > 0) {
      if (!groups_listed) {
        TOLLGATE_ASSIGN_OR_RETURN(kubeapi::ListResult pods, kube_.List(PodResource(), ""));
        for (const Json& pod : pods.items) {
          if (std::string group = PodGroupName(pod); !group.empty()) {
            groups_by_namespace[Ns(pod)].insert(group);
          }
        }
        groups_listed = true;
      }
      orphan = groups_by_namespace[ns].count(wl.metadata().name()) == 0;
    }
    if (!orphan) continue;
    v1::DeleteWorkloadRequest del;
    *del.mutable_workload() = Ref(ns, wl.metadata().name());
    absl::Status status = admission_.DeleteWorkload(del);
    if (!status.ok() && !absl::IsNotFound(status)) return status;
    common::Log("info", "deleted orphaned workload", {{"workload", Key(ns, wl.metadata().name())}});
    ++deleted;
  }
  return deleted;
}

}  // namespace tollgate::kube
