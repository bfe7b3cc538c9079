// PodController's part in MultiKueue (docs/multicluster.md, "The pod-based kinds"): on the
// manager, a gated Pod's or StatefulSet's workload carries the object when its queue uses a
// MultiKueue check, its pods stay gated once admitted, and a plain Pod's status comes back from
// the winner; on a worker, an object made for a copy reports its pod's status and goes with its
// copy. The decisions are services/manifest/multikueue_pods.h's; the object itself is created
// by JobController::ReconcileCopy.

#include "services/manifest/multikueue_pods.h"

#include <set>
#include <string>

#include "absl/base/const_init.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "adapters/kube/pod_controller.h"
#include "adapters/kube/workload_reports.h"
#include "common/json_log.h"
#include "core/admission_checks.h"
#include "core/status_macros.h"
#include "services/manifest/multikueue_job.h"
#include "services/manifest/prebuilt_workload.h"

namespace tollgate::kube {
namespace {

absl::StatusOr<v1::ConfigObject> GetConfig(client::AdmissionClient& admission, v1::ObjectKind kind,
                                           absl::string_view ns, absl::string_view name) {
  v1::ObjectRef ref;
  ref.set_kind(kind);
  ref.set_namespace_(std::string(ns));
  ref.set_name(std::string(name));
  return admission.GetObject(ref);
}

// A configuration object tollgate-kube may not read (a binding of the adapter role confined to
// namespaces reads no cluster-scoped object) counts as one without MultiKueue, so single-cluster
// queues go on working; said once per object in the log.
bool Unreadable(const absl::Status& status, absl::string_view what) {
  if (!absl::IsPermissionDenied(status)) return false;
  static absl::Mutex mu(absl::kConstInit);
  static auto* said = new std::set<std::string>();
  absl::MutexLock lock(&mu);
  if (said->insert(std::string(what)).second) {
    common::Log("warning", "cannot read whether a queue goes through MultiKueue; taken as not",
                {{"object", std::string(what)}, {"error", status.ToString()}});
  }
  return true;
}

// Whether the AdmissionCheck `name` is MultiKueue's (a missing one is not).
absl::StatusOr<bool> IsMultiKueueCheck(client::AdmissionClient& admission, absl::string_view name) {
  absl::StatusOr<v1::ConfigObject> check = GetConfig(admission, v1::ADMISSION_CHECK, "", name);
  if (absl::IsNotFound(check.status()) ||
      Unreadable(check.status(), absl::StrCat("admissioncheck/", name))) {
    return false;
  }
  TOLLGATE_RETURN_IF_ERROR(check.status());
  return check->admission_check().spec().controller_name() == core::kMultiKueueControllerName;
}

}  // namespace

absl::StatusOr<bool> PodController::QueueUsesMultiKueue(absl::string_view ns,
                                                        absl::string_view queue) {
  absl::StatusOr<v1::ConfigObject> local = GetConfig(admission_, v1::LOCAL_QUEUE, ns, queue);
  if (absl::IsNotFound(local.status()) ||
      Unreadable(local.status(), absl::StrCat("localqueue/", ns, "/", queue))) {
    return false;
  }
  TOLLGATE_RETURN_IF_ERROR(local.status());
  const std::string& cq_name = local->local_queue().spec().cluster_queue();
  absl::StatusOr<v1::ConfigObject> cq = GetConfig(admission_, v1::CLUSTER_QUEUE, "", cq_name);
  if (absl::IsNotFound(cq.status()) ||
      Unreadable(cq.status(), absl::StrCat("clusterqueue/", cq_name))) {
    return false;
  }
  TOLLGATE_RETURN_IF_ERROR(cq.status());
  const v1::ClusterQueueSpec& spec = cq->cluster_queue().spec();
  std::vector<std::string> checks(spec.admission_checks().begin(), spec.admission_checks().end());
  for (const v1::AdmissionCheckStrategyRule& rule :
       spec.admission_checks_strategy().admission_checks()) {
    checks.push_back(rule.name());
  }
  for (const std::string& check : checks) {
    TOLLGATE_ASSIGN_OR_RETURN(const bool multikueue, IsMultiKueueCheck(admission_, check));
    if (multikueue) return true;
  }
  return false;
}

absl::StatusOr<bool> PodController::RunsOnAWorker(const v1::Workload& wl) {
  // A worker's copy (which carries the object too) runs here.
  if (wl.metadata().labels().count(std::string(manifest::kMultiKueueOriginLabel)) > 0) {
    return false;
  }
  // Carrying its object, it was made for MultiKueue: no need to read the checks.
  if (wl.spec().has_payload() && manifest::IsMultiKueueGatedKind(wl.spec().payload().api_version(),
                                                                 wl.spec().payload().kind())) {
    return true;
  }
  for (const v1::AdmissionCheckState& state : wl.status().admission_checks()) {
    TOLLGATE_ASSIGN_OR_RETURN(const bool multikueue, IsMultiKueueCheck(admission_, state.name()));
    if (multikueue) return true;
  }
  return false;
}

absl::Status PodController::AttachMultiKueuePayload(const manifest::ResourceKind& kind,
                                                    const Json& obj, absl::string_view queue,
                                                    v1::Workload& wl) {
  // A copy's object is bound to its copy; it never travels on.
  if (!manifest::PrebuiltWorkloadName(obj).empty()) return absl::OkStatus();
  TOLLGATE_ASSIGN_OR_RETURN(
      const bool multikueue,
      QueueUsesMultiKueue(manifest::GetString(obj, {"metadata", "namespace"}), queue));
  if (!multikueue) return absl::OkStatus();
  TOLLGATE_ASSIGN_OR_RETURN(*wl.mutable_spec()->mutable_payload(),
                            manifest::GatedObjectPayload(kind, obj));
  return absl::OkStatus();
}

absl::Status PodController::AttachMultiKueueGroupPayload(const std::vector<Json>& pods,
                                                         v1::Workload& wl) {
  TOLLGATE_ASSIGN_OR_RETURN(*wl.mutable_spec()->mutable_payload(), manifest::PodGroupPayload(pods));
  return absl::OkStatus();
}

absl::Status PodController::SyncGroupPayload(const std::vector<Json>& pods, v1::Workload& wl) {
  // A worker's copy carries what the manager gives it; a finished workload's payload is frozen.
  if (!wl.spec().has_payload() ||
      !manifest::IsMultiKueuePodGroup(wl.spec().payload().api_version(),
                                      wl.spec().payload().kind()) ||
      wl.metadata().labels().count(std::string(manifest::kMultiKueueOriginLabel)) > 0 ||
      wl.status().state() == v1::WORKLOAD_STATE_FINISHED) {
    return absl::OkStatus();
  }
  const std::string what = absl::StrCat(wl.metadata().namespace_(), "/", wl.metadata().name());
  absl::StatusOr<std::vector<Json>> carried = manifest::GroupPodsToCarry(pods, wl.spec().payload());
  absl::StatusOr<v1::WorkloadPayload> payload =
      carried.ok() && !carried->empty() ? manifest::PodGroupPayload(*carried)
      : carried.ok()                    ? absl::StatusOr<v1::WorkloadPayload>(wl.spec().payload())
                                        : absl::StatusOr<v1::WorkloadPayload>(carried.status());
  if (!payload.ok()) {
    // Retrying cannot help until the pods change, which wakes the group again.
    common::Log("warning", "cannot carry the pod group's pods to its worker",
                {{"workload", what}, {"error", payload.status().ToString()}});
    return absl::OkStatus();
  }
  if (payload->content_type() == wl.spec().payload().content_type() &&
      payload->data() == wl.spec().payload().data()) {
    return absl::OkStatus();
  }
  v1::UpdateWorkloadPayloadRequest request;
  request.mutable_workload()->set_namespace_(wl.metadata().namespace_());
  request.mutable_workload()->set_name(wl.metadata().name());
  *request.mutable_payload() = *std::move(payload);
  request.set_expected_revision(wl.metadata().resource_version());
  TOLLGATE_ASSIGN_OR_RETURN(v1::UpdateWorkloadPayloadResponse updated,
                            admission_.UpdateWorkloadPayload(request));
  wl = updated.workload();
  common::Log("info", "carried the pod group's new pods to its workload",
              {{"workload", what}, {"pods", absl::StrCat(carried->size())}});
  return absl::OkStatus();
}

absl::Status PodController::ReportCopyPodStatus(const Json& pod, const v1::Workload& copy) {
  if (copy.metadata().labels().count(std::string(manifest::kMultiKueueOriginLabel)) == 0) {
    return absl::OkStatus();
  }
  return ReportJobStatusIfChanged(admission_, copy, manifest::PodStatusReport(pod));
}

absl::Status PodController::ReportCopyGroupStatus(const std::vector<Json>& pods,
                                                  const v1::Workload& copy) {
  if (copy.metadata().labels().count(std::string(manifest::kMultiKueueOriginLabel)) == 0 ||
      !copy.spec().has_payload() ||
      !manifest::IsMultiKueuePodGroup(copy.spec().payload().api_version(),
                                      copy.spec().payload().kind())) {
    return absl::OkStatus();
  }
  return ReportJobStatusIfChanged(admission_, copy, manifest::PodGroupStatusReport(pods));
}

absl::StatusOr<bool> PodController::ProjectRemoteGroupStatus(const std::vector<Json>& pods,
                                                             const v1::Workload& wl) {
  bool patched = false;
  for (const Json& pod : pods) {
    if (!manifest::IsGated(pod)) continue;
    TOLLGATE_ASSIGN_OR_RETURN(const bool projected, ProjectRemotePodStatus(pod, wl));
    patched = patched || projected;
  }
  return patched;
}

absl::StatusOr<bool> PodController::ProjectRemotePodStatus(const Json& pod,
                                                           const v1::Workload& wl) {
  if (!wl.status().has_job_status() || !wl.spec().has_payload() ||
      (wl.status().job_status().kind() != "Pod" &&
       !manifest::IsMultiKueuePodGroup(wl.status().job_status().api_version(),
                                       wl.status().job_status().kind()))) {
    return false;
  }
  absl::StatusOr<Json> projected = manifest::ProjectedPodStatus(pod, wl.status().job_status());
  // A group's pod not yet made on the worker: nothing to show yet.
  if (absl::IsNotFound(projected.status())) return false;
  const std::string ns = manifest::GetString(pod, {"metadata", "namespace"});
  const std::string name = manifest::GetString(pod, {"metadata", "name"});
  if (!projected.ok()) {
    common::Log("warning", "cannot project the remote pod's status",
                {{"pod", absl::StrCat(ns, "/", name)}, {"error", projected.status().ToString()}});
    return false;
  }
  const Json* current = manifest::Find(pod, {"status"});
  const Json from = current != nullptr && current->is_object() ? *current : Json::object();
  Json patch = manifest::MergePatchDiff(from, *projected);
  if (patch.empty()) return false;
  Json body = {{"status", std::move(patch)}};
  body["metadata"]["resourceVersion"] = manifest::GetString(pod, {"metadata", "resourceVersion"});
  TOLLGATE_RETURN_IF_ERROR(kube_.PatchStatus(PodResource(), ns, name, body).status());
  common::Log("info", "projected the remote pod's status",
              {{"pod", absl::StrCat(ns, "/", name)},
               {"phase", manifest::GetString(*projected, {"phase"})}});
  return true;
}

absl::StatusOr<bool> PodController::DeleteObjectOfGoneCopy(const manifest::ResourceKind& kind,
                                                           const Json& obj) {
  if (manifest::GetString(obj, {"metadata", "labels", manifest::kMultiKueueOriginLabel}).empty()) {
    return false;
  }
  const std::string ns = manifest::GetString(obj, {"metadata", "namespace"});
  const std::string name = manifest::GetString(obj, {"metadata", "name"});
  absl::Status deleted = kind.plural == "pods" ? kube_.Delete(kind, ns, name)
                                               : kube_.DeleteWithDependents(kind, ns, name);
  if (absl::IsNotFound(deleted)) return true;
  TOLLGATE_RETURN_IF_ERROR(deleted);
  common::Log("info", "deleted the object of a removed MultiKueue copy",
              {{"object", absl::StrCat(kind.plural, "/", ns, "/", name)},
               {"workload", manifest::PrebuiltWorkloadName(obj)}});
  return true;
}

}  // namespace tollgate::kube
