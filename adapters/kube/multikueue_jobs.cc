// JobController's part in MultiKueue's job projection (docs/multicluster.md, "The job itself"):
// on a worker, the job a winning copy carries is created and its status reported on the copy;
// on the manager, the status the MultiKueue controller mirrored is projected onto the original
// job. The decisions are services/manifest/multikueue_job.h's.

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "adapters/kube/job_controller.h"
#include "adapters/kube/workload_reports.h"
#include "common/json_log.h"
#include "core/status_macros.h"
#include "services/manifest/admission_enactment.h"
#include "services/manifest/multikueue_job.h"
#include "services/manifest/multikueue_pods.h"
#include "services/manifest/prebuilt_workload.h"

namespace tollgate::kube {
namespace {

std::string OriginOf(const v1::Workload& wl) {
  auto it = wl.metadata().labels().find(std::string(manifest::kMultiKueueOriginLabel));
  return it == wl.metadata().labels().end() ? std::string() : it->second;
}

}  // namespace

absl::Status JobController::ReconcileCopy(const ObjectKey& key) {
  v1::WorkloadRef ref;
  ref.set_namespace_(key.ns);
  ref.set_name(key.name);
  absl::StatusOr<v1::Workload> copy = admission_.GetWorkload(ref);
  // Gone: its job (if any) goes through its own reconcile (DeleteJobOfGoneCopy).
  if (absl::IsNotFound(copy.status())) return absl::OkStatus();
  if (!copy.ok()) return copy.status();
  const std::string origin = OriginOf(*copy);
  // Exactly once: only the copy the manager declared the winner, while it is admitted here.
  if (origin.empty() || !copy->spec().has_payload() || !copy->status().multi_kueue_winner() ||
      copy->status().state() != v1::WORKLOAD_STATE_ADMITTED) {
    return absl::OkStatus();
  }
  const v1::WorkloadPayload& payload = copy->spec().payload();
  if (manifest::IsMultiKueueGatedKind(payload.api_version(), payload.kind())) {
    return CreateGatedObjectOfCopy(key, *copy, origin);
  }
  const manifest::JobKindTranslator* translator = nullptr;
  for (const manifest::JobKindTranslator* t : translators_) {
    if (t->resource().ApiVersion() == payload.api_version() &&
        t->resource().kind == payload.kind() && manifest::ProjectsThroughMultiKueue(*t)) {
      translator = t;
    }
  }
  const std::string what = absl::StrCat(key.ns, "/", key.name);
  if (translator == nullptr) {
    // Retrying cannot help until the adapter's kinds change.
    common::Log("warning", "cannot create the job of a MultiKueue copy",
                {{"workload", what},
                 {"error", absl::StrCat(payload.api_version(), " ", payload.kind(),
                                        " is not a kind this adapter projects")}});
    return absl::OkStatus();
  }
  absl::StatusOr<Json> job =
      manifest::RemoteJobFromPayload(*translator, payload, key.ns, key.name, origin);
  if (!job.ok()) {
    common::Log("warning", "cannot create the job of a MultiKueue copy",
                {{"workload", what}, {"error", job.status().ToString()}});
    return absl::OkStatus();
  }
  manifest::SetAnnotation(*job, manifest::kMultiKueueCopyUidAnnotation, copy->metadata().uid());
  const std::string name = manifest::GetString(*job, {"metadata", "name"});
  absl::StatusOr<Json> existing = kube_.Get(translator->resource(), key.ns, name);
  if (existing.ok()) {
    if (manifest::PrebuiltWorkloadName(*existing) == key.name &&
        manifest::MadeForAnotherCopy(*existing, *copy)) {
      // The job of a copy this one replaced: it goes first, and this copy's job is created on
      // the retry once it is gone (never two runs of one workload here).
      TOLLGATE_RETURN_IF_ERROR(DeleteJobOfGoneCopy(*translator, *existing).status());
      return absl::UnavailableError(
          absl::StrCat("the job of the copy ", what, " replaced is being deleted"));
    }
    if (manifest::PrebuiltWorkloadName(*existing) != key.name) {
      common::Log("warning", "cannot create the job of a MultiKueue copy",
                  {{"workload", what},
                   {"error", absl::StrCat("a ", translator->resource().kind, " ", key.ns, "/", name,
                                          " not made for this copy exists")}});
    }
    return absl::OkStatus();
  }
  if (!absl::IsNotFound(existing.status())) return existing.status();
  absl::StatusOr<Json> created = kube_.Create(translator->resource(), key.ns, *job);
  if (absl::IsAlreadyExists(created.status())) return absl::OkStatus();
  TOLLGATE_RETURN_IF_ERROR(created.status());
  common::Log("info", "created the job of a winning MultiKueue copy",
              {{"workload", what},
               {"object", absl::StrCat(translator->resource().plural, "/", key.ns, "/", name)},
               {"origin", origin}});
  return absl::OkStatus();
}

absl::Status JobController::CreateGatedObjectOfCopy(const ObjectKey& key, const v1::Workload& copy,
                                                    absl::string_view origin) {
  const v1::WorkloadPayload& payload = copy.spec().payload();
  const std::string what = absl::StrCat(key.ns, "/", key.name);
  const bool group = manifest::IsMultiKueuePodGroup(payload.api_version(), payload.kind());
  // A pod group's pods are plain pods to the worker.
  const std::string kind = group ? std::string("Pod") : payload.kind();
  if (options_.multikueue_gated_kinds.count(kind) == 0) {
    // Retrying cannot help until the adapter's kinds change.
    common::Log("warning", "cannot create the object of a MultiKueue copy",
                {{"workload", what},
                 {"error", absl::StrCat(payload.api_version(), " ", payload.kind(),
                                        " is not a kind this adapter manages")}});
    return absl::OkStatus();
  }
  const bool lws = kind == manifest::LeaderWorkerSetKind().kind;
  const manifest::ResourceKind& resource = kind == "Pod" ? manifest::PodResource()
                                           : lws         ? manifest::LeaderWorkerSetKind()
                                                         : manifest::StatefulSetKind();
  absl::StatusOr<std::vector<Json>> objects =
      group ? manifest::RemotePodsFromGroupPayload(payload, key.ns, key.name, origin)
            : [&]() -> absl::StatusOr<std::vector<Json>> {
    TOLLGATE_ASSIGN_OR_RETURN(
        Json obj, manifest::RemoteGatedObjectFromPayload(payload, key.ns, key.name, origin));
    return std::vector<Json>{std::move(obj)};
  }();
  if (!objects.ok()) {
    common::Log("warning", "cannot create the object of a MultiKueue copy",
                {{"workload", what}, {"error", objects.status().ToString()}});
    return absl::OkStatus();
  }
  if (lws) {
    // One LeaderWorkerSet for all its groups' copies, made once every one of them is here (they
    // follow the first to this worker), so it never runs short of a group's copy; the copy of
    // each group binds that group's pods. It records the copies it is made for, in group order:
    // a group whose copy is replaced (an eviction's re-dispatch) needs a new object.
    std::vector<std::string> uids;
    for (const std::string& group : manifest::RemoteLeaderWorkerSetCopies(objects->front())) {
      v1::WorkloadRef ref;
      ref.set_namespace_(key.ns);
      ref.set_name(group);
      absl::StatusOr<v1::Workload> present = admission_.GetWorkload(ref);
      if (absl::IsNotFound(present.status())) return absl::OkStatus();
      TOLLGATE_RETURN_IF_ERROR(present.status());
      uids.push_back(present->metadata().uid());
    }
    manifest::SetAnnotation(objects->front(), manifest::kMultiKueueCopyUidAnnotation,
                            absl::StrJoin(uids, ","));
  }
  // Creates `obj`; one that exists already (made by an earlier pass or another copy) is left.
  auto create = [&](const Json& obj, const std::string& name) -> absl::Status {
    absl::StatusOr<Json> created = kube_.Create(resource, key.ns, obj);
    if (absl::IsAlreadyExists(created.status())) return absl::OkStatus();
    TOLLGATE_RETURN_IF_ERROR(created.status());
    common::Log("info", "created the object of a winning MultiKueue copy",
                {{"workload", what},
                 {"object", absl::StrCat(resource.plural, "/", key.ns, "/", name)},
                 {"origin", std::string(origin)}});
    return absl::OkStatus();
  };
  // A group's pods one by one: a pass cut short makes the rest on the retry.
  for (Json& obj : *objects) {
    const std::string name = manifest::GetString(obj, {"metadata", "name"});
    if (lws) {
      absl::StatusOr<Json> existing = kube_.Get(resource, key.ns, name);
      if (existing.ok() && manifest::MadeForOtherCopies(*existing, obj)) {
        // Made for an earlier copy of a group (that copy gone, the object not yet deleted): it
        // goes, then this one is made.
        absl::Status deleted = kube_.DeleteWithDependents(resource, key.ns, name);
        if (!deleted.ok() && !absl::IsNotFound(deleted)) return deleted;
        return absl::UnavailableError(absl::StrCat("the LeaderWorkerSet ", key.ns, "/", name,
                                                   " of earlier copies is being deleted"));
      }
      if (existing.ok()) {
        if (manifest::GetString(
                *existing, {"metadata", "annotations", manifest::kMultiKueueOriginUidAnnotation}) !=
            manifest::GetString(
                obj, {"metadata", "annotations", manifest::kMultiKueueOriginUidAnnotation})) {
          common::Log("warning", "cannot create the object of a MultiKueue copy",
                      {{"workload", what},
                       {"error", absl::StrCat("a LeaderWorkerSet ", key.ns, "/", name,
                                              " not made for this copy exists")}});
        }
        continue;
      }
      if (!absl::IsNotFound(existing.status())) return existing.status();
      // Another group's copy may make it first (Kueue's IgnoreAlreadyExists).
      TOLLGATE_RETURN_IF_ERROR(create(obj, name));
      continue;
    }
    if (!copy.metadata().uid().empty()) {
      manifest::SetAnnotation(obj, manifest::kMultiKueueCopyUidAnnotation, copy.metadata().uid());
    }
    absl::StatusOr<Json> existing = kube_.Get(resource, key.ns, name);
    if (existing.ok()) {
      if (manifest::PrebuiltWorkloadName(*existing) == key.name &&
          manifest::MadeForAnotherCopy(*existing, copy)) {
        // Left from an earlier copy of this name (a re-dispatch): it goes, then this one's is
        // made.
        absl::Status deleted = resource.plural == "pods"
                                   ? kube_.Delete(resource, key.ns, name)
                                   : kube_.DeleteWithDependents(resource, key.ns, name);
        if (!deleted.ok() && !absl::IsNotFound(deleted)) return deleted;
        return absl::UnavailableError(absl::StrCat("the ", resource.kind, " ", key.ns, "/", name,
                                                   " of an earlier copy is being deleted"));
      }
      if (manifest::PrebuiltWorkloadName(*existing) != key.name) {
        common::Log("warning", "cannot create the object of a MultiKueue copy",
                    {{"workload", what},
                     {"error", absl::StrCat("a ", resource.kind, " ", key.ns, "/", name,
                                            " not made for this copy exists")}});
      }
      continue;
    }
    if (!absl::IsNotFound(existing.status())) return existing.status();
    TOLLGATE_RETURN_IF_ERROR(create(obj, name));
  }
  return absl::OkStatus();
}

absl::Status JobController::ReportCopyJobStatus(const manifest::JobKindTranslator& translator,
                                                const Json& obj, const v1::Workload& copy) {
  if (OriginOf(copy).empty() || !manifest::ProjectsThroughMultiKueue(translator)) {
    return absl::OkStatus();
  }
  return ReportJobStatusIfChanged(admission_, copy, manifest::JobStatusReport(translator, obj));
}

absl::StatusOr<bool> JobController::ProjectRemoteJobStatus(
    const manifest::JobKindTranslator& translator, const Json& obj, const v1::Workload& wl) {
  if (!manifest::ManagedByMultiKueue(translator, obj)) {
    return false;
  }
  manifest::JobStatusUpdate update;
  if (wl.status().has_job_status()) {
    TOLLGATE_ASSIGN_OR_RETURN(update, manifest::DetermineStatusUpdate(
                                          translator, obj, wl.status().job_status(), clock_.Now()));
  } else {
    // No winner's report (the workload was evicted and its remote job removed with its copy):
    // a suspended job must not go on showing that run.
    std::optional<Json> stopped = manifest::StoppedRemoteStatus(translator, obj, clock_.Now());
    if (!stopped.has_value()) return false;
    update.status = *std::move(stopped);
  }
  const Json* current = manifest::Find(obj, {"status"});
  const Json from = current != nullptr && current->is_object() ? *current : Json::object();
  Json patch = manifest::MergePatchDiff(from, update.status);
  if (patch.empty()) return false;
  Json body = {{"status", std::move(patch)}};
  body["metadata"]["resourceVersion"] = manifest::GetString(obj, {"metadata", "resourceVersion"});
  const std::string ns = manifest::GetString(obj, {"metadata", "namespace"});
  const std::string name = manifest::GetString(obj, {"metadata", "name"});
  TOLLGATE_RETURN_IF_ERROR(kube_.PatchStatus(translator.resource(), ns, name, body).status());
  common::Log("info", "projected the remote job's status",
              {{"object", absl::StrCat(translator.resource().plural, "/", ns, "/", name)},
               {"deferred", update.deferred ? "true" : "false"}});
  return true;
}

absl::StatusOr<bool> JobController::DeleteJobOfGoneCopy(
    const manifest::JobKindTranslator& translator, const Json& obj) {
  if (manifest::GetString(obj, {"metadata", "labels", manifest::kMultiKueueOriginLabel}).empty()) {
    return false;
  }
  const std::string ns = manifest::GetString(obj, {"metadata", "namespace"});
  const std::string name = manifest::GetString(obj, {"metadata", "name"});
  absl::Status deleted = kube_.DeleteWithDependents(translator.resource(), ns, name);
  if (absl::IsNotFound(deleted)) return true;
  TOLLGATE_RETURN_IF_ERROR(deleted);
  common::Log("info", "deleted the job of a removed MultiKueue copy",
              {{"object", absl::StrCat(translator.resource().plural, "/", ns, "/", name)},
               {"workload", manifest::PrebuiltWorkloadName(obj)}});
  return true;
}

}  // namespace tollgate::kube
