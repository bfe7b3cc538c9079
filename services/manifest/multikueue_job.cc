#include "services/manifest/multikueue_job.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "services/manifest/admission_enactment.h"
#include "services/manifest/prebuilt_workload.h"

namespace tollgate::manifest {
namespace {

// Sets a Job status's Suspended condition to True with `reason` and `message`, replacing the
// one there (Kubernetes' validation wants it on a suspended Job that shows a run).
void SetSuspendedCondition(Json& status, const char* reason, const char* message, absl::Time now) {
  const std::string at = absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", now, absl::UTCTimeZone());
  Json condition = {{"type", "Suspended"}, {"status", "True"},         {"reason", reason},
                    {"message", message},  {"lastTransitionTime", at}, {"lastProbeTime", at}};
  Json& conditions = status["conditions"];
  if (!conditions.is_array()) conditions = Json::array();
  for (Json& c : conditions) {
    if (c.is_object() && GetString(c, {"type"}) == "Suspended") {
      c = std::move(condition);
      return;
    }
  }
  conditions.push_back(std::move(condition));
}

// The labels the Job controller puts on a Job's pod template (Kueue's cleanLabels).
constexpr absl::string_view kJobControllerLabels[] = {"controller-uid",
                                                      "batch.kubernetes.io/controller-uid",
                                                      "job-name", "batch.kubernetes.io/job-name"};

bool IsBatchJob(const JobKindTranslator& translator) {
  return translator.resource().group == "batch" && translator.resource().kind == "Job";
}

// Where a kind keeps its managedBy, by Kueue's MultiKueue adapters (their getManagedBy).
enum class ManagedByField { kNone, kSpec, kRunPolicy };

ManagedByField ManagedByFieldOf(const JobKindTranslator& translator) {
  const ResourceKind& r = translator.resource();
  if (IsBatchJob(translator) || r.group == "jobset.x-k8s.io" || r.group == "ray.io" ||
      r.group == "workload.codeflare.dev" ||
      (r.group == "trainer.kubeflow.org" && r.kind == "TrainJob")) {
    return ManagedByField::kSpec;
  }
  // The training operator's v1 kinds and MPIJob v2beta1 keep it in their run policy.
  if (r.group == "kubeflow.org") return ManagedByField::kRunPolicy;
  return ManagedByField::kNone;
}

void EraseManagedBy(const JobKindTranslator& translator, Json& obj) {
  Json* spec = obj.is_object() && obj.contains("spec") ? &obj["spec"] : nullptr;
  if (spec == nullptr || !spec->is_object()) return;
  switch (ManagedByFieldOf(translator)) {
    case ManagedByField::kNone:
      return;
    case ManagedByField::kSpec:
      spec->erase("managedBy");
      return;
    case ManagedByField::kRunPolicy:
      if (spec->contains("runPolicy") && (*spec)["runPolicy"].is_object()) {
        (*spec)["runPolicy"].erase("managedBy");
      }
      return;
  }
}

// A copy of an object's string map at `path` (labels, annotations), or an empty object.
Json StringMap(const Json& obj, std::initializer_list<absl::string_view> path) {
  const Json* map = Find(obj, path);
  Json out = Json::object();
  if (map == nullptr || !map->is_object()) return out;
  for (auto it = map->begin(); it != map->end(); ++it) {
    if (it.value().is_string()) out[it.key()] = it.value();
  }
  return out;
}

}  // namespace

bool ManagedByMultiKueue(const JobKindTranslator& translator, const Json& obj) {
  switch (ManagedByFieldOf(translator)) {
    case ManagedByField::kNone:
      return false;
    case ManagedByField::kSpec:
      return GetString(obj, {"spec", "managedBy"}) == kMultiKueueManagedBy;
    case ManagedByField::kRunPolicy:
      return GetString(obj, {"spec", "runPolicy", "managedBy"}) == kMultiKueueManagedBy;
  }
  return false;
}

bool ProjectsThroughMultiKueue(const JobKindTranslator& translator) {
  return ManagedByFieldOf(translator) != ManagedByField::kNone;
}

v1::WorkloadPayload JsonPayload(absl::string_view api_version, absl::string_view kind,
                                const Json& data) {
  v1::WorkloadPayload payload;
  payload.set_content_type(std::string(kJsonContentType));
  payload.set_api_version(std::string(api_version));
  payload.set_kind(std::string(kind));
  payload.set_data(Dump(data));
  return payload;
}

absl::StatusOr<Json> WorkerObjectFromPayload(const v1::WorkloadPayload& payload,
                                             absl::string_view ns, absl::string_view copy_name,
                                             absl::string_view origin) {
  if (payload.content_type() != kJsonContentType) {
    return absl::InvalidArgumentError(absl::StrCat("spec.payload.contentType: want \"",
                                                   kJsonContentType, "\", got \"",
                                                   payload.content_type(), "\""));
  }
  TOLLGATE_ASSIGN_OR_RETURN(Json obj, ParseJson(payload.data(), "spec.payload.data"));
  if (!obj.is_object() || GetString(obj, {"metadata", "name"}).empty()) {
    return absl::InvalidArgumentError(
        "spec.payload.data: must be a Kubernetes object with metadata.name");
  }
  obj["apiVersion"] = payload.api_version();
  obj["kind"] = payload.kind();
  Json& metadata = obj["metadata"];
  metadata["namespace"] = std::string(ns);
  for (const char* server_set : {"uid", "resourceVersion", "managedFields", "generation",
                                 "creationTimestamp", "ownerReferences", "deletionTimestamp"}) {
    metadata.erase(server_set);
  }
  obj.erase("status");
  Json& labels = Ensure(obj, {"metadata", "labels"});
  labels[kPrebuiltWorkloadKey] = std::string(copy_name);
  labels[std::string(kMultiKueueOriginLabel)] = std::string(origin);
  return obj;
}

Json CarriedMetadata(const Json& obj) {
  Json metadata = Json::object();
  metadata["name"] = GetString(obj, {"metadata", "name"});
  metadata["namespace"] = GetString(obj, {"metadata", "namespace"});
  Json labels = StringMap(obj, {"metadata", "labels"});
  if (!labels.empty()) metadata["labels"] = std::move(labels);
  Json annotations = StringMap(obj, {"metadata", "annotations"});
  for (auto it = annotations.begin(); it != annotations.end();) {
    if (absl::StartsWith(it.key(), "tollgate.dev/")) {
      it = annotations.erase(it);
    } else {
      ++it;
    }
  }
  if (!annotations.empty()) metadata["annotations"] = std::move(annotations);
  return metadata;
}

absl::StatusOr<v1::WorkloadPayload> JobManifestPayload(const JobKindTranslator& translator,
                                                       const Json& written) {
  const Json* spec = Find(written, {"spec"});
  if (spec == nullptr || !spec->is_object()) {
    return absl::InvalidArgumentError("spec: Required value (the job to carry has no spec)");
  }
  Json manifest = Json::object();
  manifest["apiVersion"] = translator.resource().ApiVersion();
  manifest["kind"] = translator.resource().kind;
  manifest["metadata"] = CarriedMetadata(written);
  manifest["spec"] = *spec;
  EraseManagedBy(translator, manifest);
  if (IsBatchJob(translator)) {
    manifest["spec"].erase("selector");
    Json* template_labels = nullptr;
    if (Json* t = &manifest["spec"]; t->contains("template") && (*t)["template"].is_object() &&
                                     (*t)["template"].contains("metadata") &&
                                     (*t)["template"]["metadata"].is_object()) {
      Json& meta = (*t)["template"]["metadata"];
      if (meta.contains("labels") && meta["labels"].is_object()) template_labels = &meta["labels"];
    }
    if (template_labels != nullptr) {
      for (absl::string_view label : kJobControllerLabels) {
        template_labels->erase(std::string(label));
      }
    }
  }
  translator.SetSuspended(manifest, true);
  return JsonPayload(translator.resource().ApiVersion(), translator.resource().kind, manifest);
}

absl::StatusOr<Json> RemoteJobFromPayload(const JobKindTranslator& translator,
                                          const v1::WorkloadPayload& payload, absl::string_view ns,
                                          absl::string_view copy_name, absl::string_view origin) {
  if (payload.api_version() != translator.resource().ApiVersion() ||
      payload.kind() != translator.resource().kind) {
    return absl::InvalidArgumentError(
        absl::StrCat("spec.payload: carries ", payload.api_version(), " ", payload.kind(), ", not ",
                     translator.resource().ApiVersion(), " ", translator.resource().kind));
  }
  TOLLGATE_ASSIGN_OR_RETURN(Json job, WorkerObjectFromPayload(payload, ns, copy_name, origin));
  EraseManagedBy(translator, job);
  translator.SetSuspended(job, true);
  return job;
}

bool MadeForAnotherCopy(const Json& job, const v1::Workload& copy) {
  const std::string made_for = Annotation(job, kMultiKueueCopyUidAnnotation);
  return !made_for.empty() && made_for != copy.metadata().uid();
}

bool MadeForOtherCopies(const Json& existing, const Json& wanted) {
  const std::string made_for = Annotation(existing, kMultiKueueCopyUidAnnotation);
  return !made_for.empty() && made_for != Annotation(wanted, kMultiKueueCopyUidAnnotation);
}

v1::WorkloadPayload JobStatusReport(const JobKindTranslator& translator, const Json& job) {
  Json reduced = Json::object();
  reduced["apiVersion"] = translator.resource().ApiVersion();
  reduced["kind"] = translator.resource().kind;
  translator.SetSuspended(reduced, translator.IsSuspended(job));
  const Json* status = Find(job, {"status"});
  reduced["status"] = status != nullptr && status->is_object() ? *status : Json::object();
  return JsonPayload(translator.resource().ApiVersion(), translator.resource().kind, reduced);
}

absl::StatusOr<JobStatusUpdate> DetermineStatusUpdate(const JobKindTranslator& translator,
                                                      const Json& local_job,
                                                      const v1::WorkloadPayload& report,
                                                      absl::Time now) {
  TOLLGATE_ASSIGN_OR_RETURN(Json remote, ParseJson(report.data(), "status.jobStatus.data"));
  if (!remote.is_object()) {
    return absl::InvalidArgumentError("status.jobStatus.data: must be a JSON object");
  }
  const Json* remote_status = Find(remote, {"status"});
  const Json remote_value =
      remote_status != nullptr && remote_status->is_object() ? *remote_status : Json::object();
  const Json* local_status = Find(local_job, {"status"});
  Json local_value =
      local_status != nullptr && local_status->is_object() ? *local_status : Json::object();
  if (!IsBatchJob(translator) || !translator.IsSuspended(local_job) ||
      translator.IsSuspended(remote) || translator.Finished(remote).has_value()) {
    return JobStatusUpdate{remote_value, false};
  }
  // Local suspended, remote running: no sync until the local job is unsuspended (a start time
  // set now would block spec updates), but Kubernetes' validation wants Suspended=True.
  if (!HasTrueCondition(local_job, "Suspended")) {
    SetSuspendedCondition(local_value, "MultiKueueAdapter", "Set by MultiKueue adapter", now);
  }
  return JobStatusUpdate{std::move(local_value), true};
}

std::optional<Json> StoppedRemoteStatus(const JobKindTranslator& translator, const Json& local_job,
                                        absl::Time now) {
  if (!IsBatchJob(translator) || !translator.IsSuspended(local_job) ||
      translator.Finished(local_job).has_value()) {
    return std::nullopt;
  }
  const Json* status = Find(local_job, {"status"});
  if (status == nullptr || !status->is_object()) return std::nullopt;
  const bool shows_a_run = GetInt(local_job, {"status", "active"}).value_or(0) > 0 ||
                           GetInt(local_job, {"status", "ready"}).value_or(0) > 0 ||
                           status->contains("startTime");
  if (!shows_a_run) return std::nullopt;
  Json stopped = *status;
  stopped.erase("active");
  stopped.erase("startTime");
  if (stopped.contains("ready")) stopped["ready"] = 0;
  SetSuspendedCondition(stopped, "JobSuspended", "Job suspended", now);
  return stopped;
}

}  // namespace tollgate::manifest
