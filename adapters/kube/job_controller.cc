#include "adapters/kube/job_controller.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "adapters/kube/deactivation_retention.h"
#include "adapters/kube/kube_events.h"
#include "adapters/kube/priority_defaulting.h"
#include "adapters/kube/workload_reports.h"
#include "common/json_log.h"
#include "core/node_matching.h"
#include "core/status_macros.h"
#include "services/manifest/admission_enactment.h"
#include "services/manifest/job_kinds.h"
#include "services/manifest/multikueue_job.h"
#include "services/manifest/pod_set_info.h"
#include "services/manifest/prebuilt_workload.h"
#include "services/manifest/topology_enactment.h"
#include "services/manifest/workload_labels.h"

namespace tollgate::kube {
namespace {

constexpr absl::string_view kPending = "pending";
constexpr absl::string_view kAdmitted = "admitted";
constexpr absl::string_view kPreempted = "preempted";
constexpr absl::string_view kFinished = "finished";
constexpr absl::string_view kInvalid = "invalid";

std::string StatusValue(absl::string_view state, absl::string_view message) {
  return message.empty() ? std::string(state) : absl::StrCat(state, ": ", message);
}

std::string WorkloadKey(absl::string_view ns, absl::string_view name) {
  return absl::StrCat(ns, "/", name);
}

v1::WorkloadRef Ref(absl::string_view ns, absl::string_view name) {
  v1::WorkloadRef ref;
  ref.set_namespace_(std::string(ns));
  ref.set_name(std::string(name));
  return ref;
}

void SetSuspend(const manifest::JobKindTranslator& translator, Json& obj, bool suspend) {
  translator.SetSuspended(obj, suspend);
}

// The translators' view of other objects, read from the API server as they are now.
class KubeLookup final : public manifest::ObjectLookup {
 public:
  explicit KubeLookup(kubeapi::KubeClient& kube) : kube_(kube) {}
  absl::StatusOr<Json> Get(const manifest::ResourceKind& kind, absl::string_view ns,
                           absl::string_view name) const override {
    return kube_.Get(kind, kind.namespaced ? ns : "", name);
  }

 private:
  kubeapi::KubeClient& kube_;
};

// Why the workload is being evicted, from its newest eviction-like event.
std::string EvictionMessage(const v1::Workload& wl) {
  for (int i = wl.status().events_size() - 1; i >= 0; --i) {
    const v1::WorkloadEvent& e = wl.status().events(i);
    if (absl::StrContains(e.reason(), "Preempt") || absl::StrContains(e.reason(), "Evict")) {
      return e.message();
    }
  }
  if (!wl.status().last_preemption_reason().empty()) {
    return absl::StrCat("Evicted: ", wl.status().last_preemption_reason());
  }
  return "Evicted";
}

// What an Event reports for a change of the status annotation's state.
struct EventInfo {
  const char* type;
  const char* reason;
};
EventInfo EventFor(absl::string_view state) {
  if (state == kAdmitted) return {"Normal", "Admitted"};
  if (state == kPreempted) return {"Normal", "Preempted"};
  if (state == kFinished) return {"Normal", "Finished"};
  if (state == kInvalid) return {"Warning", "InvalidWorkload"};
  return {"Normal", "Pending"};
}

// An error Tollgate returns for a workload it will not take as it is; retrying the same
// request cannot help until someone changes the job or the configuration.
bool IsRejection(const absl::Status& status) {
  return absl::IsInvalidArgument(status) || absl::IsFailedPrecondition(status) ||
         absl::IsNotFound(status);
}

}  // namespace

std::pair<std::string, std::string> ParseStatusAnnotation(absl::string_view value) {
  const size_t colon = value.find(": ");
  if (colon == absl::string_view::npos) return {std::string(value), ""};
  return {std::string(value.substr(0, colon)), std::string(value.substr(colon + 2))};
}

JobController::JobController(kubeapi::KubeClient& kube, client::AdmissionClient& admission,
                             const core::Clock& clock,
                             std::vector<const manifest::JobKindTranslator*> translators,
                             Options options)
    : kube_(kube),
      admission_(admission),
      clock_(clock),
      translators_(std::move(translators)),
      options_(std::move(options)),
      lookup_(std::make_unique<KubeLookup>(kube)) {}

const manifest::JobKindTranslator* JobController::TranslatorFor(absl::string_view resource) const {
  for (const manifest::JobKindTranslator* t : translators_) {
    if (t->resource().plural == resource) return t;
  }
  return nullptr;
}

std::string JobController::WorkloadNameOf(const manifest::JobKindTranslator& translator,
                                          const Json& obj) const {
  if (std::string prebuilt = manifest::PrebuiltWorkloadName(obj); !prebuilt.empty()) {
    return prebuilt;
  }
  {
    absl::MutexLock lock(&mu_);
    auto it = workload_names_.find(manifest::GetString(obj, {"metadata", "uid"}));
    if (it != workload_names_.end()) return it->second;
  }
  return translator.WorkloadName(obj);
}

absl::StatusOr<std::string> JobController::ResolveWorkloadName(
    const manifest::JobKindTranslator& translator, const Json& obj) {
  if (std::string prebuilt = manifest::PrebuiltWorkloadName(obj); !prebuilt.empty()) {
    return prebuilt;
  }
  const std::string uid = manifest::GetString(obj, {"metadata", "uid"});
  {
    absl::MutexLock lock(&mu_);
    auto it = workload_names_.find(uid);
    if (it != workload_names_.end()) return it->second;
  }
  const std::string ns = manifest::GetString(obj, {"metadata", "namespace"});
  std::string name = translator.WorkloadName(obj);
  absl::StatusOr<v1::Workload> current = admission_.GetWorkload(Ref(ns, name));
  if (absl::IsNotFound(current.status())) {
    // Submitted by an earlier tollgate-kube under its own name rule: keep using it.
    const std::string legacy =
        manifest::LegacyWorkloadName(absl::AsciiStrToLower(translator.resource().kind),
                                     manifest::GetString(obj, {"metadata", "name"}), uid);
    absl::StatusOr<v1::Workload> old = admission_.GetWorkload(Ref(ns, legacy));
    if (old.ok() && old->metadata().uid() == uid) {
      name = legacy;
    } else if (!old.ok() && !absl::IsNotFound(old.status())) {
      return old.status();
    }
  } else if (!current.ok()) {
    return current.status();
  }
  absl::MutexLock lock(&mu_);
  workload_names_[uid] = name;
  return name;
}

void JobController::Observe(absl::string_view resource, const Json& obj) {
  const manifest::JobKindTranslator* translator = TranslatorFor(resource);
  if (translator == nullptr) return;
  const std::string ns = manifest::GetString(obj, {"metadata", "namespace"});
  ObjectKey key{std::string(resource), ns, manifest::GetString(obj, {"metadata", "name"})};
  const std::string workload = WorkloadKey(ns, WorkloadNameOf(*translator, obj));
  absl::MutexLock lock(&mu_);
  owners_[workload] = std::move(key);
}

void JobController::RecordDeletion(const ObjectKey& key, absl::string_view uid) {
  if (uid.empty()) return;
  absl::MutexLock lock(&mu_);
  tombstones_[key].insert(std::string(uid));
}

std::optional<ObjectKey> JobController::OwnerOf(absl::string_view ns,
                                                absl::string_view workload_name) const {
  absl::MutexLock lock(&mu_);
  auto it = owners_.find(WorkloadKey(ns, workload_name));
  if (it == owners_.end()) return std::nullopt;
  return it->second;
}

absl::Status JobController::HoldWorkload(const v1::WorkloadRef& ref) {
  absl::StatusOr<v1::Workload> wl = admission_.GetWorkload(ref);
  if (absl::IsNotFound(wl.status())) return absl::OkStatus();
  if (!wl.ok()) return wl.status();
  const v1::WorkloadState state = wl->status().state();
  const bool has_quota = state == v1::WORKLOAD_STATE_QUOTA_RESERVED ||
                         state == v1::WORKLOAD_STATE_ADMITTED ||
                         state == v1::WORKLOAD_STATE_EVICTING;
  if (!has_quota || wl->status().on_hold()) return absl::OkStatus();
  v1::ReportJobStateRequest hold;
  *hold.mutable_workload() = ref;
  hold.set_on_hold(true);
  hold.set_message("Job is on hold");
  TOLLGATE_RETURN_IF_ERROR(admission_.ReportJobState(hold).status());
  common::Log("info", "job on hold; quota released",
              {{"workload", WorkloadKey(ref.namespace_(), ref.name())}});
  return absl::OkStatus();
}

absl::Status JobController::DeleteWorkloadsOwnedBy(absl::string_view ns, absl::string_view uid) {
  if (uid.empty()) return absl::OkStatus();
  v1::ListWorkloadsRequest request;
  request.set_namespace_(std::string(ns));
  request.set_owner_uid(std::string(uid));
  TOLLGATE_ASSIGN_OR_RETURN(v1::ListWorkloadsResponse owned, admission_.ListWorkloads(request));
  for (const v1::Workload& wl : owned.workloads()) {
    TOLLGATE_RETURN_IF_ERROR(DeleteWorkload(Ref(ns, wl.metadata().name())));
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::Workload> JobController::BindPrebuilt(
    const manifest::JobKindTranslator& translator, const Json& obj, const v1::Workload& from_job) {
  TOLLGATE_RETURN_IF_ERROR(manifest::CheckPrebuiltWorkloadSupported(translator.resource()));
  const v1::WorkloadRef ref = Ref(from_job.metadata().namespace_(), from_job.metadata().name());
  absl::StatusOr<v1::Workload> wl = admission_.GetWorkload(ref);
  if (absl::IsNotFound(wl.status())) {
    // Kueue keeps the job stopped until the workload exists; its creation wakes this object.
    return absl::NotFoundError(absl::StrCat("Waiting for the prebuilt workload ", ref.name(),
                                            " named by ", manifest::kPrebuiltWorkloadKey));
  }
  if (!wl.ok()) return wl.status();
  if (manifest::MadeForAnotherCopy(obj, *wl)) {
    // A MultiKueue worker's job whose copy was replaced by one of the same name: its copy is
    // gone, as far as this job is concerned.
    return absl::NotFoundError(
        absl::StrCat("The MultiKueue copy ", ref.name(), " this job was created for is gone"));
  }
  const std::string uid = manifest::GetString(obj, {"metadata", "uid"});
  const v1::OwnerReference* controller = nullptr;
  for (const v1::OwnerReference& owner : wl->metadata().owner_references()) {
    if (owner.controller()) controller = &owner;
  }
  if (controller != nullptr && controller->uid() != uid) {
    return absl::FailedPreconditionError(
        absl::StrCat("The prebuilt workload ", ref.name(), " is controlled by ", controller->kind(),
                     " ", controller->name(), " (uid ", controller->uid(), "), not by this ",
                     translator.resource().kind));
  }
  if (controller == nullptr) {
    v1::ReportJobStateRequest bind;
    *bind.mutable_workload() = ref;
    v1::OwnerReference* owner = bind.mutable_bind_owner();
    owner->set_api_version(translator.resource().ApiVersion());
    owner->set_kind(translator.resource().kind);
    owner->set_name(manifest::GetString(obj, {"metadata", "name"}));
    owner->set_uid(uid);
    owner->set_controller(true);
    TOLLGATE_ASSIGN_OR_RETURN(v1::ReportJobStateResponse bound, admission_.ReportJobState(bind));
    common::Log("info", "bound prebuilt workload",
                {{"workload", WorkloadKey(ref.namespace_(), ref.name())}, {"uid", uid}});
    wl = bound.workload();
  }
  TOLLGATE_ASSIGN_OR_RETURN(const bool in_sync, manifest::EquivalentToPrebuilt(from_job, *wl));
  if (in_sync) return wl;
  constexpr absl::string_view kOutOfSync = "The prebuilt workload is out of sync with its user job";
  if (wl->status().state() != v1::WORKLOAD_STATE_FINISHED) {
    v1::ReportJobStateRequest report;
    *report.mutable_workload() = ref;
    report.set_out_of_sync(true);
    TOLLGATE_RETURN_IF_ERROR(admission_.ReportJobState(report).status());
    common::Log("warning", "prebuilt workload out of sync; finished",
                {{"workload", WorkloadKey(ref.namespace_(), ref.name())}});
  }
  return absl::FailedPreconditionError(kOutOfSync);
}

void JobController::SetRequeueAt(RequeueAt requeue_at) {
  absl::MutexLock lock(&mu_);
  requeue_at_ = std::move(requeue_at);
}

absl::StatusOr<bool> JobController::ApplyDeactivationRetention(
    const manifest::JobKindTranslator& translator, const Json& obj, const v1::Workload& wl,
    const v1::WorkloadRef& ref) {
  if (!options_.after_deactivated_by_kueue.has_value()) return false;
  const std::optional<absl::Time> due =
      DeactivatedJobDeletionTime(wl, *options_.after_deactivated_by_kueue);
  if (!due.has_value()) return false;
  const std::string ns = manifest::GetString(obj, {"metadata", "namespace"});
  const std::string name = manifest::GetString(obj, {"metadata", "name"});
  if (*due > clock_.Now()) {
    RequeueAt requeue_at;
    {
      absl::MutexLock lock(&mu_);
      requeue_at = requeue_at_;
    }
    if (requeue_at) requeue_at(ObjectKey{translator.resource().plural, ns, name}, *due);
    return false;
  }
  absl::Status deleted = kube_.DeleteWithDependents(translator.resource(), ns, name);
  if (!deleted.ok() && !absl::IsNotFound(deleted)) return deleted;
  common::Log("info", "deleted job: deactivation retention period expired",
              {{"object", absl::StrCat(translator.resource().plural, "/", ns, "/", name)},
               {"workload", WorkloadKey(ref.namespace_(), ref.name())}});
  RecordEvent(translator, obj, "Normal", "Deleted",
              "Deleted job: deactivation retention period expired");
  // Kubernetes' garbage collector removes what the job controls; Tollgate's workloads are not
  // Kubernetes objects, so they go here (the informer's deletion would do it too).
  if (manifest::PrebuiltWorkloadName(obj).empty()) {
    TOLLGATE_RETURN_IF_ERROR(DeleteWorkload(ref));
  } else {
    TOLLGATE_RETURN_IF_ERROR(
        DeleteWorkloadsOwnedBy(ns, manifest::GetString(obj, {"metadata", "uid"})));
  }
  return true;
}

absl::Status JobController::DeleteWorkload(const v1::WorkloadRef& ref) {
  v1::DeleteWorkloadRequest request;
  *request.mutable_workload() = ref;
  absl::Status status = admission_.DeleteWorkload(request);
  if (absl::IsNotFound(status)) return absl::OkStatus();
  if (status.ok()) {
    common::Log("info", "deleted workload",
                {{"workload", WorkloadKey(ref.namespace_(), ref.name())}});
  }
  return status;
}

absl::Status JobController::Reconcile(const ObjectKey& key) {
  if (key.resource == "namespaces") return ReconcileNamespace(key);
  if (key.resource == kMultiKueueCopyResource) return ReconcileCopy(key);
  const manifest::JobKindTranslator* translator = TranslatorFor(key.resource);
  if (translator == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("no translator for ", key.resource));
  }
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
  const std::string kind = absl::AsciiStrToLower(translator->resource().kind);
  for (auto it = uids.begin(); it != uids.end(); ++it) {
    // Whichever name it was submitted under.
    absl::Status deleted = DeleteWorkload(
        Ref(key.ns, manifest::KueueWorkloadName(translator->resource().kind,
                                                translator->resource().group, key.name, *it)));
    if (deleted.ok()) {
      deleted = DeleteWorkload(Ref(key.ns, manifest::LegacyWorkloadName(kind, key.name, *it)));
    }
    if (deleted.ok()) deleted = DeleteWorkloadsOwnedBy(key.ns, *it);
    if (deleted.ok()) {
      absl::MutexLock lock(&mu_);
      workload_names_.erase(*it);
    }
    if (!deleted.ok()) {
      absl::MutexLock lock(&mu_);
      tombstones_[key].insert(it, uids.end());
      return deleted;
    }
  }
  return ReconcileObject(*translator, key);
}

absl::Status JobController::ReconcileObject(const manifest::JobKindTranslator& translator,
                                            const ObjectKey& key) {
  for (int attempt = 0; attempt <= options_.max_conflict_retries; ++attempt) {
    absl::StatusOr<Json> obj = kube_.Get(translator.resource(), key.ns, key.name);
    if (absl::IsNotFound(obj.status())) return absl::OkStatus();
    if (!obj.ok()) return obj.status();
    if (manifest::Find(*obj, {"metadata", "deletionTimestamp"}) != nullptr) {
      if (manifest::PrebuiltWorkloadName(*obj).empty()) {
        return DeleteWorkload(Ref(key.ns, WorkloadNameOf(translator, *obj)));
      }
      return DeleteWorkloadsOwnedBy(key.ns, manifest::GetString(*obj, {"metadata", "uid"}));
    }
    Observe(key.resource, *obj);
    absl::Status status;
    // nlohmann throws when an object has a field of an unexpected type (say, a string where
    // spec is expected); that is bad input, reported like any other, not a crash.
    try {
      status = ReconcileOnce(translator, *obj);
    } catch (const Json::exception& e) {
      return absl::InvalidArgumentError(absl::StrCat(key.ToString(), ": ", e.what()));
    }
    if (!kubeapi::IsConflict(status)) return status;
  }
  return absl::AbortedError(absl::StrCat(key.ToString(), ": still conflicting after ",
                                         options_.max_conflict_retries, " retries"));
}

absl::StatusOr<bool> JobController::NamespaceHasDefaultQueue(absl::string_view ns) {
  v1::ListObjectsRequest request;
  request.set_kind(v1::LOCAL_QUEUE);
  request.set_namespace_(std::string(ns));
  TOLLGATE_ASSIGN_OR_RETURN(v1::ListObjectsResponse queues, admission_.ListObjects(request));
  for (const v1::ConfigObject& object : queues.objects()) {
    if (object.has_local_queue() && object.local_queue().metadata().name() == "default" &&
        object.local_queue().metadata().namespace_() == ns) {
      return true;
    }
  }
  return false;
}

absl::StatusOr<bool> JobController::LabelWithDefaultPriorityClass(
    const manifest::JobKindTranslator& translator, const Json& obj, const v1::WorkloadRef& ref) {
  TOLLGATE_ASSIGN_OR_RETURN(const bool takes_default,
                            TakesDefaultWorkloadPriorityClass(obj, admission_));
  if (!takes_default) return false;
  // Kueue labels a job only when it is created: one whose workload exists was made before the
  // class, and keeps the priority it was queued with.
  absl::StatusOr<v1::Workload> existing = admission_.GetWorkload(ref);
  if (existing.ok()) return false;
  if (!absl::IsNotFound(existing.status())) return existing.status();
  Json desired = obj;
  SetDefaultWorkloadPriorityClass(desired);
  TOLLGATE_RETURN_IF_ERROR(Converge(translator, obj, desired).status());
  return true;
}

absl::StatusOr<v1::Workload> JobController::SubmitOrReplace(const v1::Workload& workload) {
  v1::SubmitRequest request;
  *request.mutable_workload() = workload;
  absl::StatusOr<v1::SubmitResponse> submitted = admission_.Submit(request);
  if (submitted.ok()) {
    if (submitted->created()) {
      common::Log(
          "info", "submitted workload",
          {{"workload", WorkloadKey(workload.metadata().namespace_(), workload.metadata().name())},
           {"queue", workload.spec().queue_name()}});
      return submitted->workload();
    }
    // The same workload again: Kueue's reconciler updates an existing workload's admission
    // gates to its job's (with the AdmissionGatedBy gate on).
    if (!options_.admission_gated_by) return submitted->workload();
    return PropagateAdmissionGates(admission_, workload, submitted->workload());
  }
  if (!absl::IsAlreadyExists(submitted.status())) return submitted.status();
  const v1::WorkloadRef ref = Ref(workload.metadata().namespace_(), workload.metadata().name());
  TOLLGATE_ASSIGN_OR_RETURN(v1::Workload existing, admission_.GetWorkload(ref));
  // Kueue copies labelKeysToCopy when it makes the workload, never after: a job whose copied
  // labels changed since keeps its workload as it was made.
  if (!options_.label_keys_to_copy.empty()) {
    v1::SubmitRequest as_made = request;
    auto& labels = *as_made.mutable_workload()->mutable_metadata()->mutable_labels();
    for (const std::string& key : options_.label_keys_to_copy) {
      auto it = existing.metadata().labels().find(key);
      if (it == existing.metadata().labels().end()) {
        labels.erase(key);
      } else {
        labels[key] = it->second;
      }
    }
    const std::map<std::string, std::string> before(workload.metadata().labels().begin(),
                                                    workload.metadata().labels().end());
    const std::map<std::string, std::string> after(labels.begin(), labels.end());
    if (before != after) {
      absl::StatusOr<v1::SubmitResponse> same = admission_.Submit(as_made);
      if (same.ok()) {
        if (!options_.admission_gated_by) return same->workload();
        return PropagateAdmissionGates(admission_, as_made.workload(), same->workload());
      }
      if (!absl::IsAlreadyExists(same.status())) return same.status();
    }
  }
  // The job's spec changed since it was submitted. Kueue re-creates the workload of a job that
  // has not started; a running one keeps the admission it has.
  if (existing.status().state() != v1::WORKLOAD_STATE_PENDING) return existing;
  TOLLGATE_RETURN_IF_ERROR(DeleteWorkload(ref));
  common::Log("info", "job changed while pending; re-submitting its workload",
              {{"workload", WorkloadKey(ref.namespace_(), ref.name())}});
  TOLLGATE_ASSIGN_OR_RETURN(v1::SubmitResponse again, admission_.Submit(request));
  return again.workload();
}

absl::Status JobController::ReconcileOnce(const manifest::JobKindTranslator& translator,
                                          const Json& obj) {
  const std::string ns = manifest::GetString(obj, {"metadata", "namespace"});
  std::string queue = manifest::QueueName(obj);
  if (queue.empty()) {
    if (!options_.manage_jobs_without_queue_name) return absl::OkStatus();
    TOLLGATE_ASSIGN_OR_RETURN(bool managed, NamespaceIsManaged(ns));
    if (!managed) return absl::OkStatus();
    TOLLGATE_ASSIGN_OR_RETURN(bool has_default, NamespaceHasDefaultQueue(ns));
    if (!has_default) return absl::OkStatus();
    queue = "default";
  }
  TOLLGATE_ASSIGN_OR_RETURN(const bool owned, OwnedByManagedObject(obj));
  if (owned) return absl::OkStatus();
  TOLLGATE_ASSIGN_OR_RETURN(const std::string workload_name, ResolveWorkloadName(translator, obj));
  const v1::WorkloadRef ref = Ref(ns, workload_name);
  // Before the finish, as Kueue's reconciler: a held job keeps its workload, without quota.
  if (translator.IsOnHold(obj)) return HoldWorkload(ref);
  const std::optional<manifest::JobFinish> finish = translator.Finished(obj);
  if (finish.has_value()) return HandleFinished(translator, obj, ref, *finish);

  TOLLGATE_ASSIGN_OR_RETURN(const bool labelled,
                            LabelWithDefaultPriorityClass(translator, obj, ref));
  // The label's patch wakes the object again; its workload is made on that pass.
  if (labelled) return absl::OkStatus();

  // The workload describes the job as written, not as admission changed it.
  absl::StatusOr<Json> original = manifest::RestoreOriginalFields(obj);
  absl::StatusOr<v1::Workload> translated =
      original.ok()
          ? manifest::TranslateWorkload(translator, *original, queue, *lookup_, workload_name)
          : original.status();
  if (translated.ok()) {
    manifest::AddCopiedLabels(manifest::LabelsToCopy(obj, options_.label_keys_to_copy),
                              *translated);
    if (!options_.partial_admission) {
      for (v1::PodSet& ps : *translated->mutable_spec()->mutable_pod_sets()) ps.clear_min_count();
    }
    if (!options_.admission_gated_by) DropAdmissionGates(*translated);
  }
  const bool prebuilt = !manifest::PrebuiltWorkloadName(obj).empty();
  const bool multikueue = manifest::ManagedByMultiKueue(translator, obj) && !prebuilt;
  if (translated.ok() && multikueue) {
    // The job travels with its workload to the worker that wins it (docs/multicluster.md).
    absl::StatusOr<v1::WorkloadPayload> payload =
        manifest::JobManifestPayload(translator, *original);
    if (payload.ok()) {
      *translated->mutable_spec()->mutable_payload() = *std::move(payload);
    } else {
      translated = payload.status();
    }
  }
  absl::StatusOr<v1::Workload> wl = !translated.ok() ? translated.status()
                                    : prebuilt       ? BindPrebuilt(translator, obj, *translated)
                                                     : SubmitOrReplace(*translated);
  if (!wl.ok() && prebuilt && absl::IsNotFound(wl.status())) {
    // A worker's job whose MultiKueue copy the manager removed goes with it.
    TOLLGATE_ASSIGN_OR_RETURN(const bool deleted, DeleteJobOfGoneCopy(translator, obj));
    if (deleted) return absl::OkStatus();
  }
  if (!wl.ok()) {
    if (!IsRejection(wl.status())) return wl.status();
    // Keep the job from running without quota, and tell its owner why. Returning the error
    // retries with backoff, which picks up configuration fixed in Tollgate meanwhile.
    Json desired = original.ok() ? *original : obj;
    SetSuspend(translator, desired, true);
    const bool awaiting_prebuilt = prebuilt && absl::IsNotFound(wl.status());
    manifest::SetAnnotation(
        desired, kStatusAnnotation,
        StatusValue(awaiting_prebuilt ? kPending : kInvalid, wl.status().message()));
    TOLLGATE_RETURN_IF_ERROR(Converge(translator, obj, desired).status());
    return wl.status();
  }

  if (prebuilt) TOLLGATE_RETURN_IF_ERROR(ReportCopyJobStatus(translator, obj, *wl));
  if (multikueue) {
    // The status patch wakes this object again; the rest waits for that pass.
    TOLLGATE_ASSIGN_OR_RETURN(const bool projected, ProjectRemoteJobStatus(translator, obj, *wl));
    if (projected) return absl::OkStatus();
  }
  // Kueue's job reconciler, on a job whose workload is evicted: past afterDeactivatedByKueue
  // the job goes, with its workload.
  TOLLGATE_ASSIGN_OR_RETURN(const bool deleted,
                            ApplyDeactivationRetention(translator, obj, *wl, ref));
  if (deleted) return absl::OkStatus();
  const bool suspended = translator.IsSuspended(obj);
  switch (wl->status().state()) {
    case v1::WORKLOAD_STATE_ADMITTED: {
      const std::string fingerprint = manifest::AdmissionFingerprint(wl->status().admission());
      if (!suspended && manifest::Annotation(obj, manifest::kAdmissionAnnotation) == fingerprint) {
        Json desired = obj;
        manifest::SetAnnotation(
            desired, kStatusAnnotation,
            StatusValue(kAdmitted, absl::StrCat("Admitted by ClusterQueue ",
                                                wl->status().admission().cluster_queue())));
        TOLLGATE_ASSIGN_OR_RETURN(Json current, Converge(translator, obj, desired));
        // Ready, or ready no more: a pod of a running job failed and its replacement is awaited
        // (waitForPodsReady.recoveryTimeout runs from that report).
        absl::StatusOr<std::vector<manifest::PodSetSource>> sources =
            translator.PodSets(*original, *lookup_);
        if (!sources.ok()) return sources.status();
        TOLLGATE_RETURN_IF_ERROR(ReportPodsReadyIfChanged(
            admission_, *wl, ref, translator.PodsReady(current, *sources, *wl)));
        TOLLGATE_RETURN_IF_ERROR(ForwardReclaimablePods(translator, current, *wl, ref));
        return ForwardCheckpoint(current, *wl, ref);
      }
      if (!suspended) {
        // Running, but not under this admission (started by someone else, or with flavors of an
        // earlier admission): stop it; the next pass starts it with the right node selectors.
        Json desired = *original;
        SetSuspend(translator, desired, true);
        manifest::SetAnnotation(
            desired, kStatusAnnotation,
            StatusValue(kPending, "Restarting with the flavors of its admission"));
        return Converge(translator, obj, desired).status();
      }
      manifest::FlavorMap flavors;
      for (const std::string& name : manifest::AssignedFlavors(wl->status().admission())) {
        v1::ObjectRef flavor_ref;
        flavor_ref.set_kind(v1::RESOURCE_FLAVOR);
        flavor_ref.set_name(name);
        TOLLGATE_ASSIGN_OR_RETURN(v1::ConfigObject flavor, admission_.GetObject(flavor_ref));
        flavors[name] = flavor.resource_flavor();
      }
      absl::StatusOr<std::vector<manifest::PodSetInfo>> infos = manifest::PodSetInfosFromAdmission(
          wl->status().admission(), flavors, manifest::PodSetUpdatesOf(*wl));
      if (infos.ok()) manifest::AddTopologyPodSetInfo(*wl, *infos);
      absl::StatusOr<Json> enacted =
          infos.ok() ? manifest::ApplyAdmission(
                           translator, obj, *infos,
                           manifest::AdmissionFingerprint(wl->status().admission()), *lookup_)
                     : infos.status();
      if (manifest::IsPermanentError(enacted.status())) {
        return FailToStart(translator, obj, *original, ref, enacted.status());
      }
      if (!enacted.ok()) return enacted.status();
      Json desired = *std::move(enacted);
      SetSuspend(translator, desired, false);
      manifest::SetAnnotation(
          desired, kStatusAnnotation,
          StatusValue(kAdmitted, absl::StrCat("Admitted by ClusterQueue ",
                                              wl->status().admission().cluster_queue())));
      return Converge(translator, obj, desired).status();
    }
    case v1::WORKLOAD_STATE_EVICTING: {
      Json desired = *original;
      SetSuspend(translator, desired, true);
      manifest::SetAnnotation(desired, kStatusAnnotation,
                              StatusValue(kPreempted, EvictionMessage(*wl)));
      TOLLGATE_ASSIGN_OR_RETURN(Json current, Converge(translator, obj, desired));
      if (translator.IsSuspended(current) && !translator.IsActive(current)) {
        v1::ReportStoppedRequest request;
        *request.mutable_workload() = ref;
        absl::Status stopped = admission_.ReportStopped(request).status();
        if (!stopped.ok() && !absl::IsFailedPrecondition(stopped)) return stopped;
        if (stopped.ok()) {
          common::Log("info", "reported stopped", {{"workload", WorkloadKey(ns, ref.name())}});
        }
      }
      return absl::OkStatus();
    }
    case v1::WORKLOAD_STATE_FINISHED: {
      // Finished in Tollgate (e.g. by an operator) while the job still runs: as in Kueue, the
      // job is left alone.
      Json desired = obj;
      manifest::SetAnnotation(desired, kStatusAnnotation,
                              StatusValue(kFinished, "Workload finished"));
      return Converge(translator, obj, desired).status();
    }
    case v1::WORKLOAD_STATE_QUOTA_RESERVED: {
      // Quota is reserved but admission checks are not all Ready: the job stays suspended, as
      // in Kueue, and its owner sees which checks it waits for.
      Json desired = *original;
      SetSuspend(translator, desired, true);
      std::vector<std::string> waiting;
      for (const v1::AdmissionCheckState& check : wl->status().admission_checks()) {
        if (check.state() != "Ready") {
          waiting.push_back(absl::StrCat(check.name(), " (", check.state(), ")"));
        }
      }
      manifest::SetAnnotation(
          desired, kStatusAnnotation,
          StatusValue(kPending, absl::StrCat("Quota reserved in ClusterQueue ",
                                             wl->status().admission().cluster_queue(),
                                             "; waiting for admission checks: ",
                                             absl::StrJoin(waiting, ", "))));
      return Converge(translator, obj, desired).status();
    }
    case v1::WORKLOAD_STATE_PENDING:
    default: {
      Json desired = *original;
      SetSuspend(translator, desired, true);
      const std::string message = wl->status().pending_message().empty()
                                      ? std::string("Waiting for admission")
                                      : wl->status().pending_message();
      manifest::SetAnnotation(desired, kStatusAnnotation, StatusValue(kPending, message));
      return Converge(translator, obj, desired).status();
    }
  }
}

absl::StatusOr<bool> JobController::OwnedByManagedObject(const Json& obj) {
  // Kueue's FindAncestorJobManagedByKueue: up the chain of controlling owners while they are of
  // a kind it knows (enabled or not: a TrainJob's Jobs are the TrainJob's even when JobSets are
  // not managed), until one is managed.
  constexpr int kMaxOwnerChain = 10;
  const std::string ns = manifest::GetString(obj, {"metadata", "namespace"});
  Json current = obj;
  for (int depth = 0; depth < kMaxOwnerChain; ++depth) {
    const Json* owners = manifest::Find(current, {"metadata", "ownerReferences"});
    if (owners == nullptr || !owners->is_array()) return false;
    const Json* controller = nullptr;
    for (const Json& owner : *owners) {
      if (manifest::GetBool(owner, {"controller"}).value_or(false)) controller = &owner;
    }
    if (controller == nullptr) return false;
    const manifest::JobKindTranslator* kind =
        manifest::FindJobKind(manifest::GetString(*controller, {"kind"}));
    if (kind == nullptr ||
        kind->resource().ApiVersion() != manifest::GetString(*controller, {"apiVersion"})) {
      return false;
    }
    absl::StatusOr<Json> owner =
        kube_.Get(kind->resource(), ns, manifest::GetString(*controller, {"name"}));
    // An owner that is gone, or another object of that name, manages nothing.
    if (absl::IsNotFound(owner.status())) return false;
    if (!owner.ok()) return owner.status();
    if (manifest::GetString(*owner, {"metadata", "uid"}) !=
        manifest::GetString(*controller, {"uid"})) {
      return false;
    }
    const bool enabled =
        std::find(translators_.begin(), translators_.end(), kind) != translators_.end();
    if (enabled && kind->traits().creates_workload &&
        (options_.manage_jobs_without_queue_name || !manifest::QueueName(*owner).empty())) {
      return true;
    }
    current = *std::move(owner);
  }
  return false;
}

absl::Status JobController::FailToStart(const manifest::JobKindTranslator& translator,
                                        const Json& obj, const Json& original,
                                        const v1::WorkloadRef& ref, const absl::Status& why) {
  const std::string message = absl::StrCat("Cannot start: ", why.message());
  v1::FinishRequest request;
  *request.mutable_workload() = ref;
  request.set_message(message);
  absl::Status finished = admission_.Finish(request).status();
  // Finished meanwhile (or by another pass): the object still gets its state below.
  if (!finished.ok() && !absl::IsFailedPrecondition(finished)) return finished;
  common::Log("warning", "admission cannot be enacted; workload finished",
              {{"workload", WorkloadKey(ref.namespace_(), ref.name())}, {"error", message}});
  Json desired = original;
  SetSuspend(translator, desired, true);
  manifest::SetAnnotation(desired, kStatusAnnotation, StatusValue(kFinished, message));
  TOLLGATE_ASSIGN_OR_RETURN(Json current, Converge(translator, obj, desired));
  RecordEvent(translator, current, "Warning", "FailedToStart", message);
  return absl::OkStatus();
}

absl::Status JobController::ForwardReclaimablePods(const manifest::JobKindTranslator& translator,
                                                   const Json& obj, const v1::Workload& wl,
                                                   const v1::WorkloadRef& ref) {
  if (!options_.reclaimable_pods) return absl::OkStatus();
  absl::StatusOr<Json> original = manifest::RestoreOriginalFields(obj);
  if (!original.ok()) return original.status();
  absl::StatusOr<std::vector<manifest::PodSetSource>> sources =
      translator.PodSets(*original, *lookup_);
  if (!sources.ok()) return sources.status();
  std::map<std::string, int32_t> finished;
  for (const manifest::ReclaimablePod& p : translator.ReclaimablePods(obj, *sources)) {
    finished[p.name] = p.count;
  }
  return ReportReclaimablePodsIfChanged(admission_, wl, ref, finished);
}

absl::Status JobController::ForwardCheckpoint(const Json& obj, const v1::Workload& wl,
                                              const v1::WorkloadRef& ref) {
  const std::string text = manifest::Annotation(obj, kCheckpointAnnotation);
  if (text.empty()) return absl::OkStatus();
  absl::Time at;
  std::string error;
  if (!absl::ParseTime(absl::RFC3339_full, text, &at, &error)) {
    // The job's owner wrote something unreadable: say so, but do not block reconciling.
    common::Log("warning", "ignoring unreadable checkpoint annotation",
                {{"workload", WorkloadKey(ref.namespace_(), ref.name())},
                 {"annotation", std::string(kCheckpointAnnotation)},
                 {"value", text},
                 {"error", error}});
    return absl::OkStatus();
  }
  const google::protobuf::Timestamp& known = wl.status().last_checkpoint_time();
  if (wl.status().has_last_checkpoint_time() &&
      at <= absl::FromUnixSeconds(known.seconds()) + absl::Nanoseconds(known.nanos())) {
    return absl::OkStatus();
  }
  v1::ReportCheckpointRequest request;
  *request.mutable_workload() = ref;
  request.mutable_checkpoint_time()->set_seconds(absl::ToUnixSeconds(at));
  request.mutable_checkpoint_time()->set_nanos(static_cast<int32_t>(
      absl::ToInt64Nanoseconds(at - absl::FromUnixSeconds(absl::ToUnixSeconds(at)))));
  absl::Status reported = admission_.ReportCheckpoint(request).status();
  // Evicted meanwhile (the next pass sees it), or a clock ahead of Tollgate's: nothing to retry.
  if (absl::IsFailedPrecondition(reported) || absl::IsInvalidArgument(reported)) {
    return absl::OkStatus();
  }
  return reported;
}

absl::Status JobController::HandleFinished(const manifest::JobKindTranslator& translator,
                                           const Json& obj, const v1::WorkloadRef& ref,
                                           const manifest::JobFinish& finish) {
  absl::StatusOr<v1::Workload> wl = admission_.GetWorkload(ref);
  if (absl::IsNotFound(wl.status()) || (wl.ok() && manifest::MadeForAnotherCopy(obj, *wl))) {
    // A finished worker job whose MultiKueue copy is gone (or replaced) goes with it.
    if (manifest::PrebuiltWorkloadName(obj).empty()) return absl::OkStatus();
    return DeleteJobOfGoneCopy(translator, obj).status();
  }
  if (!wl.ok()) return wl.status();
  if (!manifest::PrebuiltWorkloadName(obj).empty()) {
    // The final status reaches the copy before its finish, so the manager mirrors it.
    TOLLGATE_RETURN_IF_ERROR(ReportCopyJobStatus(translator, obj, *wl));
  }
  if (manifest::ManagedByMultiKueue(translator, obj)) {
    TOLLGATE_ASSIGN_OR_RETURN(const bool projected, ProjectRemoteJobStatus(translator, obj, *wl));
    if (projected) return absl::OkStatus();
  }
  switch (wl->status().state()) {
    case v1::WORKLOAD_STATE_ADMITTED:
    case v1::WORKLOAD_STATE_EVICTING: {
      v1::FinishRequest request;
      *request.mutable_workload() = ref;
      request.set_message(finish.message);
      // Kueue's reasons: a failed job's workload finishes Failed.
      request.set_reason(finish.succeeded ? "Succeeded" : "Failed");
      TOLLGATE_RETURN_IF_ERROR(admission_.Finish(request).status());
      common::Log(
          "info", "finished workload",
          {{"workload", WorkloadKey(ref.namespace_(), ref.name())}, {"message", finish.message}});
      break;
    }
    case v1::WORKLOAD_STATE_PENDING:
      // It ran (or failed) without ever being admitted: take it out of the queue.
      TOLLGATE_RETURN_IF_ERROR(DeleteWorkload(ref));
      break;
    default:
      break;
  }
  Json desired = obj;
  manifest::SetAnnotation(desired, kStatusAnnotation, StatusValue(kFinished, finish.message));
  return Converge(translator, obj, desired).status();
}

absl::StatusOr<Json> JobController::Converge(const manifest::JobKindTranslator& translator,
                                             const Json& obj, const Json& desired) {
  Json from = Json::object();
  Json to = Json::object();
  for (const char* part : {"metadata", "spec"}) {
    if (const Json* v = manifest::Find(obj, {part}); v != nullptr) from[part] = *v;
    if (const Json* v = manifest::Find(desired, {part}); v != nullptr) to[part] = *v;
  }
  Json patch = manifest::MergePatchDiff(from, to);
  if (patch.empty()) return obj;
  const std::string rv = manifest::GetString(obj, {"metadata", "resourceVersion"});
  manifest::Ensure(patch, {"metadata"})["resourceVersion"] = rv;
  const std::string ns = manifest::GetString(obj, {"metadata", "namespace"});
  const std::string name = manifest::GetString(obj, {"metadata", "name"});
  TOLLGATE_ASSIGN_OR_RETURN(Json patched, kube_.Patch(translator.resource(), ns, name,
                                                      kubeapi::PatchType::kMerge, patch));
  const auto [old_state, old_message] =
      ParseStatusAnnotation(manifest::Annotation(obj, kStatusAnnotation));
  const auto [new_state, new_message] =
      ParseStatusAnnotation(manifest::Annotation(desired, kStatusAnnotation));
  const bool was_suspended = translator.IsSuspended(obj);
  const bool now_suspended = translator.IsSuspended(desired);
  common::Log("info", "patched",
              {{"object", absl::StrCat(translator.resource().plural, "/", ns, "/", name)},
               {"status", new_state},
               {"suspend", now_suspended ? "true" : "false"}});
  if (new_state != old_state || was_suspended != now_suspended) {
    const EventInfo info = EventFor(new_state);
    std::string reason = info.reason;
    if (new_state == kPending && !was_suspended && now_suspended) reason = "Suspended";
    RecordEvent(translator, patched, info.type, reason, new_message);
  }
  return patched;
}

void JobController::RecordEvent(const manifest::JobKindTranslator& translator, const Json& obj,
                                absl::string_view type, absl::string_view reason,
                                absl::string_view message) {
  uint64_t sequence = 0;
  {
    absl::MutexLock lock(&mu_);
    sequence = ++event_sequence_;
  }
  RecordKubeEvent(kube_, translator.resource(), obj, type, reason, message, clock_.Now(), sequence,
                  EventSource{options_.component, options_.instance});
}

absl::StatusOr<bool> JobController::NamespaceIsManaged(absl::string_view ns) {
  if (!options_.managed_jobs_namespace_selector.has_value()) return true;
  TOLLGATE_ASSIGN_OR_RETURN(Json object, kube_.Get(manifest::NamespaceResource(), "", ns));
  std::map<std::string, std::string> labels;
  if (const Json* l = manifest::Find(object, {"metadata", "labels"});
      l != nullptr && l->is_object()) {
    for (auto it = l->begin(); it != l->end(); ++it) {
      if (it.value().is_string()) labels[it.key()] = it.value().get<std::string>();
    }
  }
  // The API server sets it on every namespace (since Kubernetes 1.22); Kueue's default selector
  // is written against it.
  labels.emplace("kubernetes.io/metadata.name", std::string(ns));
  return core::SelectorMatches(*options_.managed_jobs_namespace_selector, labels);
}

absl::Status JobController::ReconcileNamespace(const ObjectKey& key) {
  if (!options_.sync_namespaces) return absl::OkStatus();
  absl::StatusOr<Json> ns = kube_.Get(manifest::NamespaceResource(), "", key.name);
  v1::ObjectRef ref;
  ref.set_kind(v1::NAMESPACE);
  ref.set_name(key.name);
  if (absl::IsNotFound(ns.status())) {
    {
      absl::MutexLock lock(&mu_);
      applied_namespaces_.erase(key.name);
    }
    absl::Status deleted = admission_.DeleteObject(ref);
    return absl::IsNotFound(deleted) ? absl::OkStatus() : deleted;
  }
  if (!ns.ok()) return ns.status();
  std::map<std::string, std::string> labels;
  if (const Json* l = manifest::Find(*ns, {"metadata", "labels"}); l != nullptr && l->is_object()) {
    for (auto it = l->begin(); it != l->end(); ++it) {
      if (it.value().is_string()) labels[it.key()] = it.value().get<std::string>();
    }
  }
  {
    absl::MutexLock lock(&mu_);
    auto it = applied_namespaces_.find(key.name);
    if (it != applied_namespaces_.end() && it->second == labels) return absl::OkStatus();
  }
  v1::ApplyRequest apply;
  v1::Namespace* object = apply.add_objects()->mutable_namespace_();
  object->mutable_metadata()->set_name(key.name);
  for (const auto& [k, v] : labels) (*object->mutable_metadata()->mutable_labels())[k] = v;
  TOLLGATE_RETURN_IF_ERROR(admission_.Apply(apply).status());
  absl::MutexLock lock(&mu_);
  applied_namespaces_[key.name] = std::move(labels);
  return absl::OkStatus();
}

std::optional<std::string> JobController::OwnerResourceOf(const v1::Workload& wl) const {
  if (wl.metadata().owner_references_size() != 1) return std::nullopt;
  const v1::OwnerReference& owner = wl.metadata().owner_references(0);
  if (!owner.controller()) return std::nullopt;
  for (const manifest::JobKindTranslator* translator : translators_) {
    if (translator->resource().kind == owner.kind() &&
        translator->resource().ApiVersion() == owner.api_version()) {
      return translator->resource().plural;
    }
  }
  return std::nullopt;
}

absl::StatusOr<int> JobController::CollectOrphans(
    const std::function<UidsByResource()>& live_uids_fn) {
  TOLLGATE_ASSIGN_OR_RETURN(v1::ListWorkloadsResponse list,
                            admission_.ListWorkloads(v1::ListWorkloadsRequest()));
  const UidsByResource live_uids = live_uids_fn();
  int deleted = 0;
  for (const v1::Workload& wl : list.workloads()) {
    const std::string& name = wl.metadata().name();
    const std::string& uid = wl.metadata().uid();
    if (const std::optional<std::string> resource = OwnerResourceOf(wl); resource.has_value()) {
      // A workload bound to a job (a prebuilt one) goes with it, as Kubernetes' garbage
      // collector removes what a deleted owner controls.
      auto live = live_uids.find(*resource);
      const std::string& owner_uid = wl.metadata().owner_references(0).uid();
      if (live == live_uids.end() || live->second.count(owner_uid) > 0) continue;
      TOLLGATE_RETURN_IF_ERROR(DeleteWorkload(Ref(wl.metadata().namespace_(), name)));
      common::Log(
          "info", "deleted workload of a deleted owner",
          {{"workload", WorkloadKey(wl.metadata().namespace_(), name)}, {"owner_uid", owner_uid}});
      ++deleted;
      continue;
    }
    for (const manifest::JobKindTranslator* translator : translators_) {
      const std::string kind = absl::AsciiStrToLower(translator->resource().kind);
      // Ours only if it says it was made for an object of this kind with this uid (Kueue's
      // job-uid label), or, as earlier versions named workloads, if the name is what
      // LegacyWorkloadName gives for this uid: a workload submitted by someone else keeps its
      // random or chosen uid and does not match.
      const auto& labels = wl.metadata().labels();
      auto kind_label = labels.find(std::string(manifest::kJobKindLabel));
      auto uid_label = labels.find(std::string(manifest::kJobUidLabel));
      const bool labelled = kind_label != labels.end() &&
                            kind_label->second == translator->resource().kind &&
                            uid_label != labels.end() && uid_label->second == uid;
      const std::string suffix = manifest::LegacyWorkloadName(kind, "", uid);
      const std::string uid_part = suffix.substr(suffix.rfind('-') + 1);
      const bool legacy = absl::StartsWith(name, absl::StrCat(kind, "-")) &&
                          absl::EndsWith(name, absl::StrCat("-", uid_part));
      if ((!labelled && !legacy) || uid.size() < 32) continue;
      auto live = live_uids.find(translator->resource().plural);
      if (live == live_uids.end() || live->second.count(uid) > 0) break;
      TOLLGATE_RETURN_IF_ERROR(DeleteWorkload(Ref(wl.metadata().namespace_(), name)));
      common::Log("info", "deleted orphaned workload",
                  {{"workload", WorkloadKey(wl.metadata().namespace_(), name)}, {"uid", uid}});
      ++deleted;
      break;
    }
  }
  return deleted;
}

}  // namespace tollgate::kube
