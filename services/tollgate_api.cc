#include "services/tollgate_api.h"

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/quantity.h"
#include "core/status_macros.h"
#include "google/protobuf/util/time_util.h"
#include "services/api_codec.h"
#include "services/config_objects.h"
#include "services/real_clock.h"

namespace tollgate::services {
namespace {

using google::protobuf::util::TimeUtil;

// The core's key of the workload a request names ("default" when it names no namespace).
std::string KeyOf(const v1::WorkloadRef& ref) {
  return core::WorkloadKey{ref.namespace_().empty() ? "default" : ref.namespace_(), ref.name()}
      .ToString();
}

absl::Status RequireRef(const v1::WorkloadRef& ref) {
  if (ref.name().empty()) return absl::InvalidArgumentError("workload.name: must not be empty");
  return absl::OkStatus();
}

// `pending_revision` is the revision the current batch will commit under, which a workload
// changed by it but not yet persisted will get.
v1::Workload WorkloadProto(const core::ClusterState& state, const core::Workload& wl,
                           int64_t pending_revision) {
  v1::Workload out;
  WorkloadToProto(wl, &out);
  out.mutable_metadata()->set_resource_version(state.IsDirty(wl.id) ? pending_revision
                                                                    : wl.resource_version);
  return out;
}

absl::StatusOr<v1::Workload> WorkloadByKey(const core::ClusterState& state, absl::string_view key,
                                           int64_t revision) {
  const core::Workload* wl = state.FindWorkload(key);
  if (wl == nullptr) return absl::NotFoundError(absl::StrCat("workload ", key, " not found"));
  return WorkloadProto(state, *wl, revision);
}

void FillUsage(const std::vector<core::ResourceUsageRow>& rows,
               google::protobuf::RepeatedPtrField<v1::FlavorUsage>* out) {
  std::map<std::string, v1::FlavorUsage*> by_flavor;
  for (const core::ResourceUsageRow& row : rows) {
    v1::FlavorUsage*& flavor = by_flavor[row.flavor];
    if (flavor == nullptr) {
      flavor = out->Add();
      flavor->set_name(row.flavor);
    }
    v1::ResourceUsage* usage = flavor->add_resources();
    usage->set_name(row.resource);
    usage->set_total(core::FormatResourceScalar(row.resource, row.total));
    usage->set_borrowed(core::FormatResourceScalar(row.resource, row.borrowed));
  }
}

// Fills the status Kueue would report for the object (queue counts, usage, activity, share).
void FillStatus(const core::ClusterState& state, v1::ConfigObject& object) {
  switch (object.kind_case()) {
    case v1::ConfigObject::kClusterQueue: {
      v1::ClusterQueue* cq = object.mutable_cluster_queue();
      const std::string& name = cq->metadata().name();
      v1::ClusterQueueStatus* status = cq->mutable_status();
      status->Clear();
      const core::QueueCounts counts = state.ClusterQueueCounts(name);
      status->set_pending_workloads(static_cast<int32_t>(counts.pending));
      status->set_reserving_workloads(static_cast<int32_t>(counts.admitted));
      status->set_admitted_workloads(static_cast<int32_t>(counts.admitted));
      FillUsage(state.ClusterQueueUsage(name), status->mutable_flavors_usage());
      v1::Condition* active = status->add_conditions();
      active->set_type("Active");
      const core::ClusterQueueRuntime* runtime = state.cluster_queue(name);
      const bool is_active = runtime != nullptr && runtime->active;
      active->set_status(is_active ? "True" : "False");
      active->set_reason(is_active            ? "Ready"
                         : runtime == nullptr ? "Unknown"
                                              : runtime->inactive_reason);
      active->set_message(is_active ? "Can admit new workloads"
                                    : absl::StrCat("ClusterQueue ", name, " is inactive"));
      status->mutable_fair_sharing()->set_weighted_share(state.WeightedShare(name));
      break;
    }
    case v1::ConfigObject::kLocalQueue: {
      v1::LocalQueue* lq = object.mutable_local_queue();
      v1::LocalQueueStatus* status = lq->mutable_status();
      status->Clear();
      const core::QueueCounts counts =
          state.LocalQueueCounts(lq->metadata().namespace_(), lq->metadata().name());
      status->set_pending_workloads(static_cast<int32_t>(counts.pending));
      status->set_reserving_workloads(static_cast<int32_t>(counts.admitted));
      status->set_admitted_workloads(static_cast<int32_t>(counts.admitted));
      FillUsage(state.LocalQueueUsage(lq->metadata().namespace_(), lq->metadata().name()),
                status->mutable_flavors_usage());
      break;
    }
    case v1::ConfigObject::kCohort: {
      v1::Cohort* cohort = object.mutable_cohort();
      cohort->mutable_status()->Clear();
      cohort->mutable_status()->mutable_fair_sharing()->set_weighted_share(
          state.WeightedShare(cohort->metadata().name()));
      break;
    }
    default:
      break;
  }
}

}  // namespace

absl::StatusOr<TollgateApi::Operation<v1::SubmitResponse>> TollgateApi::SubmitOperation(
    const v1::SubmitRequest& request) {
  v1::Workload workload = request.workload();
  if (workload.metadata().namespace_().empty()) {
    workload.mutable_metadata()->set_namespace_("default");
  }
  TOLLGATE_ASSIGN_OR_RETURN(core::WorkloadSpec spec, WorkloadSpecFromProto(workload));
  return [spec = std::move(spec), uid = workload.metadata().uid()](
             AdmissionExecutor::Txn& txn) -> absl::StatusOr<v1::SubmitResponse> {
    TOLLGATE_ASSIGN_OR_RETURN(core::SubmitOutcome outcome,
                              txn.state().Submit(spec, uid, txn.now()));
    if (outcome.created) txn.MarkCreated(outcome.id);
    v1::SubmitResponse response;
    *response.mutable_workload() =
        WorkloadProto(txn.state(), *txn.state().workload(outcome.id), txn.commit_revision());
    response.set_created(outcome.created);
    return response;
  };
}

absl::StatusOr<v1::SubmitResponse> TollgateApi::Submit(const v1::SubmitRequest& request) {
  return Await(SubmitOperation(request));
}

void TollgateApi::SubmitAsync(const v1::SubmitRequest& request, Done<v1::SubmitResponse> done) {
  Dispatch(SubmitOperation(request), std::move(done));
}

absl::StatusOr<v1::AdmitResponse> TollgateApi::Admit(const v1::AdmitRequest& request) {
  TOLLGATE_RETURN_IF_ERROR(RequireRef(request.workload()));
  const std::string key = KeyOf(request.workload());
  return executor_.Run<v1::AdmitResponse>(
      [&](AdmissionExecutor::Txn& txn) -> absl::StatusOr<v1::AdmitResponse> {
        TOLLGATE_ASSIGN_OR_RETURN(core::AdmitNowResult result,
                                  txn.state().AdmitNow(key, request.dry_run(), txn.now()));
        v1::AdmitResponse response;
        switch (result.outcome) {
          case core::AdmitNowResult::Outcome::kAdmitted:
            response.set_outcome(v1::AdmitResponse::ADMITTED);
            break;
          case core::AdmitNowResult::Outcome::kPreempting:
            response.set_outcome(v1::AdmitResponse::PREEMPTING);
            break;
          case core::AdmitNowResult::Outcome::kPending:
            response.set_outcome(v1::AdmitResponse::PENDING);
            break;
        }
        if (!result.admission.cluster_queue.empty()) {
          v1::Workload scratch;
          core::Workload holder;
          holder.status.admission = result.admission;
          WorkloadToProto(holder, &scratch);
          *response.mutable_admission() = scratch.status().admission();
        }
        for (core::WorkloadId id : result.victims) {
          const core::Workload* victim = txn.state().workload(id);
          v1::WorkloadRef* ref = response.add_victims();
          ref->set_namespace_(victim->spec.namespace_name);
          ref->set_name(victim->spec.name);
        }
        response.set_message(result.message);
        TOLLGATE_ASSIGN_OR_RETURN(*response.mutable_workload(),
                                  WorkloadByKey(txn.state(), key, txn.commit_revision()));
        return response;
      });
}

absl::StatusOr<v1::PreemptResponse> TollgateApi::Preempt(const v1::PreemptRequest& request) {
  TOLLGATE_RETURN_IF_ERROR(RequireRef(request.workload()));
  const std::string key = KeyOf(request.workload());
  const std::string message = request.reason().empty() ? "Preempted on request" : request.reason();
  return executor_.Run<v1::PreemptResponse>(
      [&](AdmissionExecutor::Txn& txn) -> absl::StatusOr<v1::PreemptResponse> {
        TOLLGATE_RETURN_IF_ERROR(txn.state().Preempt(key, message, txn.now()));
        v1::PreemptResponse response;
        TOLLGATE_ASSIGN_OR_RETURN(*response.mutable_workload(),
                                  WorkloadByKey(txn.state(), key, txn.commit_revision()));
        return response;
      });
}

absl::StatusOr<TollgateApi::Operation<v1::FinishResponse>> TollgateApi::FinishOperation(
    const v1::FinishRequest& request) {
  TOLLGATE_RETURN_IF_ERROR(RequireRef(request.workload()));
  return [key = KeyOf(request.workload()), message = request.message()](
             AdmissionExecutor::Txn& txn) -> absl::StatusOr<v1::FinishResponse> {
    TOLLGATE_RETURN_IF_ERROR(txn.state().Finish(key, message, txn.now()));
    v1::FinishResponse response;
    TOLLGATE_ASSIGN_OR_RETURN(*response.mutable_workload(),
                              WorkloadByKey(txn.state(), key, txn.commit_revision()));
    return response;
  };
}

absl::StatusOr<v1::FinishResponse> TollgateApi::Finish(const v1::FinishRequest& request) {
  return Await(FinishOperation(request));
}

void TollgateApi::FinishAsync(const v1::FinishRequest& request, Done<v1::FinishResponse> done) {
  Dispatch(FinishOperation(request), std::move(done));
}

absl::StatusOr<v1::ReportStoppedResponse> TollgateApi::ReportStopped(
    const v1::ReportStoppedRequest& request) {
  TOLLGATE_RETURN_IF_ERROR(RequireRef(request.workload()));
  const std::string key = KeyOf(request.workload());
  return executor_.Run<v1::ReportStoppedResponse>(
      [&](AdmissionExecutor::Txn& txn) -> absl::StatusOr<v1::ReportStoppedResponse> {
        TOLLGATE_RETURN_IF_ERROR(txn.state().ReleaseEvicted(key, txn.now()));
        v1::ReportStoppedResponse response;
        TOLLGATE_ASSIGN_OR_RETURN(*response.mutable_workload(),
                                  WorkloadByKey(txn.state(), key, txn.commit_revision()));
        return response;
      });
}

absl::StatusOr<v1::ReportPodsReadyResponse> TollgateApi::ReportPodsReady(
    const v1::ReportPodsReadyRequest& request) {
  TOLLGATE_RETURN_IF_ERROR(RequireRef(request.workload()));
  const std::string key = KeyOf(request.workload());
  return executor_.Run<v1::ReportPodsReadyResponse>(
      [&](AdmissionExecutor::Txn& txn) -> absl::StatusOr<v1::ReportPodsReadyResponse> {
        TOLLGATE_RETURN_IF_ERROR(txn.state().SetPodsReady(key, txn.now()));
        v1::ReportPodsReadyResponse response;
        TOLLGATE_ASSIGN_OR_RETURN(*response.mutable_workload(),
                                  WorkloadByKey(txn.state(), key, txn.commit_revision()));
        return response;
      });
}

absl::StatusOr<v1::ReportCheckpointResponse> TollgateApi::ReportCheckpoint(
    const v1::ReportCheckpointRequest& request) {
  TOLLGATE_RETURN_IF_ERROR(RequireRef(request.workload()));
  const std::string key = KeyOf(request.workload());
  std::optional<absl::Time> checkpoint_time;
  if (request.has_checkpoint_time()) {
    TOLLGATE_ASSIGN_OR_RETURN(checkpoint_time,
                              RequestTimeFromProto("checkpoint_time", request.checkpoint_time()));
  }
  return executor_.Run<v1::ReportCheckpointResponse>(
      [&](AdmissionExecutor::Txn& txn) -> absl::StatusOr<v1::ReportCheckpointResponse> {
        TOLLGATE_RETURN_IF_ERROR(
            txn.state().RecordCheckpoint(key, checkpoint_time.value_or(txn.now()), txn.now()));
        v1::ReportCheckpointResponse response;
        TOLLGATE_ASSIGN_OR_RETURN(*response.mutable_workload(),
                                  WorkloadByKey(txn.state(), key, txn.commit_revision()));
        return response;
      });
}

absl::StatusOr<v1::DeleteWorkloadResponse> TollgateApi::DeleteWorkload(
    const v1::DeleteWorkloadRequest& request) {
  TOLLGATE_RETURN_IF_ERROR(RequireRef(request.workload()));
  const std::string key = KeyOf(request.workload());
  return executor_.Run<v1::DeleteWorkloadResponse>(
      [&](AdmissionExecutor::Txn& txn) -> absl::StatusOr<v1::DeleteWorkloadResponse> {
        TOLLGATE_RETURN_IF_ERROR(txn.state().Delete(key, txn.now()));
        return v1::DeleteWorkloadResponse();
      });
}

absl::StatusOr<v1::Workload> TollgateApi::GetWorkload(const v1::GetWorkloadRequest& request) {
  TOLLGATE_RETURN_IF_ERROR(RequireRef(request.workload()));
  const std::string key = KeyOf(request.workload());
  return executor_.Run<v1::Workload>([&](AdmissionExecutor::Txn& txn) {
    return WorkloadByKey(txn.state(), key, txn.read_revision());
  });
}

absl::StatusOr<v1::ListWorkloadsResponse> TollgateApi::ListWorkloads(
    const v1::ListWorkloadsRequest& request) {
  return executor_.Run<v1::ListWorkloadsResponse>(
      [&](AdmissionExecutor::Txn& txn) -> absl::StatusOr<v1::ListWorkloadsResponse> {
        v1::ListWorkloadsResponse response;
        const core::ClusterState& state = txn.state();
        for (const core::Workload* wl : state.AllWorkloads()) {
          if (!request.namespace_().empty() && wl->spec.namespace_name != request.namespace_()) {
            continue;
          }
          if (!request.queue_name().empty() && wl->spec.queue_name != request.queue_name()) {
            continue;
          }
          if (!request.cluster_queue().empty()) {
            const std::string* queued = state.QueuedIn(wl->id);
            const bool in_queue = (queued != nullptr && *queued == request.cluster_queue()) ||
                                  (wl->status.admission.has_value() &&
                                   wl->status.admission->cluster_queue == request.cluster_queue());
            if (!in_queue) continue;
          }
          *response.add_workloads() = WorkloadProto(state, *wl, txn.read_revision());
          if (request.state() != v1::WORKLOAD_STATE_UNSPECIFIED &&
              response.workloads().rbegin()->status().state() != request.state()) {
            response.mutable_workloads()->RemoveLast();
          }
        }
        response.set_revision(txn.read_revision());
        return response;
      });
}

absl::Status TollgateApi::Watch(const v1::WatchRequest& request,
                                const std::function<bool(const v1::WatchEvent&)>& send,
                                const std::function<bool()>& cancelled) {
  int64_t revision = request.since_revision();
  if (revision <= 0) {
    v1::ListWorkloadsRequest list;
    list.set_namespace_(request.namespace_());
    TOLLGATE_ASSIGN_OR_RETURN(v1::ListWorkloadsResponse snapshot, ListWorkloads(list));
    for (const v1::Workload& wl : snapshot.workloads()) {
      v1::WatchEvent event;
      event.set_type(v1::WatchEvent::ADDED);
      event.set_revision(snapshot.revision());
      *event.mutable_workload() = wl;
      if (!send(event)) return absl::OkStatus();
    }
    revision = snapshot.revision();
  }
  // Waiting for commits and spacing bookmarks are about the connection, not scheduling, so they
  // use wall time even when the scheduler runs on a simulated clock.
  const RealClock wall;
  absl::Time last_sent = wall.Now();
  while (!cancelled()) {
    absl::StatusOr<std::vector<storage::ChangeLogEntry>> entries =
        executor_.store().ReadChanges(revision, 1024);
    if (!entries.ok()) {
      if (absl::IsFailedPrecondition(entries.status())) {
        return absl::OutOfRangeError(absl::StrCat("watch from revision ", revision,
                                                  " is too old: ", entries.status().message(),
                                                  "; list again and watch from its revision"));
      }
      return entries.status();
    }
    for (const storage::ChangeLogEntry& entry : *entries) {
      for (const std::string& record : entry.records) {
        v1::WatchEvent event;
        if (!event.ParseFromString(record)) {
          return absl::DataLossError(
              absl::StrCat("change log entry ", entry.revision, " is not a WatchEvent"));
        }
        if (!request.namespace_().empty() &&
            event.workload().metadata().namespace_() != request.namespace_()) {
          continue;
        }
        event.set_revision(entry.revision);
        if (!send(event)) return absl::OkStatus();
        last_sent = wall.Now();
      }
      revision = entry.revision;
    }
    if (!entries->empty()) continue;
    // Idle: wait for the next commit, and tell the client where it stands now and then so a
    // reconnect can resume from a recent revision.
    executor_.WaitForRevision(revision, wall.Now() + absl::Seconds(1));
    if (wall.Now() - last_sent > absl::Seconds(10)) {
      v1::WatchEvent bookmark;
      bookmark.set_type(v1::WatchEvent::BOOKMARK);
      bookmark.set_revision(revision);
      if (!send(bookmark)) return absl::OkStatus();
      last_sent = wall.Now();
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::ApplyResponse> TollgateApi::Apply(const v1::ApplyRequest& request) {
  // Validate everything before touching the state: the request applies whole or not at all.
  std::vector<ValidatedObject> validated;
  for (int i = 0; i < request.objects_size(); ++i) {
    absl::StatusOr<ValidatedObject> object = ValidateConfigObject(request.objects(i));
    if (!object.ok()) {
      return absl::Status(object.status().code(),
                          request.objects_size() == 1
                              ? std::string(object.status().message())
                              : absl::StrCat("objects[", i, "]: ", object.status().message()));
    }
    validated.push_back(*std::move(object));
  }
  if (request.dry_run()) {
    v1::ApplyResponse response;
    *response.mutable_objects() = request.objects();
    response.set_revision(executor_.revision());
    return response;
  }
  return executor_.Run<v1::ApplyResponse>(
      [&](AdmissionExecutor::Txn& txn) -> absl::StatusOr<v1::ApplyResponse> {
        v1::ApplyResponse response;
        const int64_t revision = txn.commit_revision();
        for (int i = 0; i < request.objects_size(); ++i) {
          v1::ConfigObject object = request.objects(i);
          const ValidatedObject& v = validated[i];
          const std::string key = ConfigObjectKey(KindOf(object), v.namespace_name, v.name);
          v1::ObjectMeta* meta = MutableMetadataOf(object);
          // Keep creation time and bump generation across updates, as the API server does.
          absl::StatusOr<std::optional<std::string>> existing = txn.store().Get(key);
          v1::ConfigObject previous;
          if (existing.ok() && existing->has_value() && previous.ParseFromString(**existing)) {
            const v1::ObjectMeta& old = MetadataOf(previous);
            *meta->mutable_creation_timestamp() = old.creation_timestamp();
            meta->set_uid(old.uid());
            meta->set_generation(old.generation() + 1);
          } else {
            *meta->mutable_creation_timestamp() =
                TimeUtil::NanosecondsToTimestamp(absl::ToUnixNanos(txn.now()));
            meta->set_uid(absl::StrCat(KindName(KindOf(object)), "-", v.name, "-", revision));
            meta->set_generation(1);
          }
          meta->set_resource_version(revision);
          ApplyValidated(txn.state(), v, txn.now());
          txn.PutObject(key, object);
          FillStatus(txn.state(), object);
          *response.add_objects() = std::move(object);
        }
        response.set_revision(revision);
        return response;
      });
}

absl::StatusOr<v1::ConfigObject> TollgateApi::GetObject(const v1::GetObjectRequest& request) {
  TOLLGATE_RETURN_IF_ERROR(ToCoreKind(request.ref().kind()).status());
  const std::string key =
      ConfigObjectKey(request.ref().kind(), request.ref().namespace_(), request.ref().name());
  return executor_.Run<v1::ConfigObject>(
      [&](AdmissionExecutor::Txn& txn) -> absl::StatusOr<v1::ConfigObject> {
        TOLLGATE_ASSIGN_OR_RETURN(std::optional<std::string> value, txn.store().Get(key));
        if (!value.has_value()) {
          return absl::NotFoundError(absl::StrCat(
              KindName(request.ref().kind()), " ",
              request.ref().namespace_().empty() ? "" : request.ref().namespace_() + "/",
              request.ref().name(), " not found"));
        }
        v1::ConfigObject object;
        if (!object.ParseFromString(*value)) {
          return absl::DataLossError(absl::StrCat("store key ", key, " is not a ConfigObject"));
        }
        FillStatus(txn.state(), object);
        return object;
      });
}

absl::StatusOr<v1::ListObjectsResponse> TollgateApi::ListObjects(
    const v1::ListObjectsRequest& request) {
  TOLLGATE_RETURN_IF_ERROR(ToCoreKind(request.kind()).status());
  std::string prefix = ConfigObjectKey(request.kind(), "", "");
  if (IsNamespaced(request.kind()) && !request.namespace_().empty()) {
    prefix = ConfigObjectKey(request.kind(), request.namespace_(), "");
  }
  return executor_.Run<v1::ListObjectsResponse>(
      [&](AdmissionExecutor::Txn& txn) -> absl::StatusOr<v1::ListObjectsResponse> {
        v1::ListObjectsResponse response;
        absl::Status parse_error;
        TOLLGATE_RETURN_IF_ERROR(
            txn.store().Scan(prefix, [&](absl::string_view key, absl::string_view value) {
              v1::ConfigObject* object = response.add_objects();
              if (!object->ParseFromString(std::string(value))) {
                parse_error =
                    absl::DataLossError(absl::StrCat("store key ", key, " is not a ConfigObject"));
                return false;
              }
              FillStatus(txn.state(), *object);
              return true;
            }));
        TOLLGATE_RETURN_IF_ERROR(parse_error);
        response.set_revision(txn.revision());
        return response;
      });
}

absl::StatusOr<v1::DeleteObjectResponse> TollgateApi::DeleteObject(
    const v1::DeleteObjectRequest& request) {
  TOLLGATE_ASSIGN_OR_RETURN(core::ObjectKind kind, ToCoreKind(request.ref().kind()));
  const v1::ObjectRef ref = request.ref();
  return executor_.Run<v1::DeleteObjectResponse>(
      [&](AdmissionExecutor::Txn& txn) -> absl::StatusOr<v1::DeleteObjectResponse> {
        TOLLGATE_RETURN_IF_ERROR(
            txn.state().DeleteObject(kind, ref.namespace_(), ref.name(), txn.now()));
        txn.DeleteObject(ConfigObjectKey(ref.kind(), ref.namespace_(), ref.name()));
        v1::DeleteObjectResponse response;
        response.set_revision(txn.commit_revision());
        return response;
      });
}

absl::StatusOr<std::optional<absl::Time>> TollgateApi::NextTimer() {
  return executor_.Run<std::optional<absl::Time>>(
      [](AdmissionExecutor::Txn& txn) -> absl::StatusOr<std::optional<absl::Time>> {
        return txn.state().NextTimer();
      });
}

absl::StatusOr<v1::ListPendingWorkloadsResponse> TollgateApi::ListPendingWorkloads(
    const v1::ListPendingWorkloadsRequest& request) {
  const bool by_cluster_queue = !request.cluster_queue().empty();
  if (by_cluster_queue == !request.local_queue().empty()) {
    return absl::InvalidArgumentError(
        "name exactly one of cluster_queue, or namespace and local_queue");
  }
  return executor_.Run<v1::ListPendingWorkloadsResponse>(
      [&](AdmissionExecutor::Txn& txn) -> absl::StatusOr<v1::ListPendingWorkloadsResponse> {
        const core::ClusterState& state = txn.state();
        std::vector<core::PendingPosition> positions =
            by_cluster_queue ? state.PendingInClusterQueue(request.cluster_queue())
                             : state.PendingInLocalQueue(
                                   request.namespace_().empty() ? "default" : request.namespace_(),
                                   request.local_queue());
        v1::ListPendingWorkloadsResponse response;
        for (const core::PendingPosition& p : positions) {
          const core::Workload* wl = state.workload(p.id);
          v1::PendingWorkload* item = response.add_items();
          item->mutable_workload()->set_namespace_(wl->spec.namespace_name);
          item->mutable_workload()->set_name(wl->spec.name);
          item->set_local_queue(wl->spec.queue_name);
          item->set_cluster_queue(p.cluster_queue);
          item->set_priority(wl->priority);
          item->set_position_in_cluster_queue(static_cast<int32_t>(p.position_in_cluster_queue));
          item->set_position_in_local_queue(static_cast<int32_t>(p.position_in_local_queue));
          item->set_message(wl->status.pending_message);
        }
        return response;
      });
}

}  // namespace tollgate::services
