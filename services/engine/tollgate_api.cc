#include "services/engine/tollgate_api.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/cohort_breakdown.h"
#include "core/error_text.h"
#include "core/quantity.h"
#include "core/real_clock.h"
#include "core/status_macros.h"
#include "core/submit_preview.h"
#include "google/protobuf/util/time_util.h"
#include "services/api/api_codec.h"
#include "services/api/api_validation.h"
#include "services/api/breakdown_codec.h"
#include "services/engine/config_objects.h"
#include "services/engine/list_pages.h"
#include "services/engine/tollgate_api_internal.h"

namespace tollgate::engine {
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
  api::WorkloadToProto(wl, &out);
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

// A cohort's usage like a ClusterQueue's: its ClusterQueues' total and what it borrows from its
// parent, per flavor and resource.
void FillCohortUsage(const core::ClusterState& state, v1::Cohort& cohort) {
  absl::StatusOr<core::CohortBreakdown> breakdown =
      core::CohortBreakdownOf(state, cohort.metadata().name());
  if (!breakdown.ok()) return;  // A stored Cohort is always in the tree; nothing to show if not.
  std::vector<core::ResourceUsageRow> rows;
  for (const core::CohortResourceTotals& t : breakdown->totals) {
    rows.push_back({t.flavor, t.resource, t.usage, t.borrowed});
  }
  FillUsage(rows, cohort.mutable_status()->mutable_flavors_usage());
}

// A cohort Kueue creates because a ClusterQueue or a Cohort's parent names it: no stored object,
// but it exists, so Get answers with an empty spec and an "Implicit" condition.
std::optional<v1::ConfigObject> ImplicitCohort(const core::ClusterState& state,
                                               absl::string_view name) {
  if (state.tree().Cohort(name) == nullptr) return std::nullopt;
  v1::ConfigObject object;
  object.mutable_cohort()->mutable_metadata()->set_name(std::string(name));
  return object;
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
      status->set_reserving_workloads(static_cast<int32_t>(counts.reserving));
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
                          : runtime != nullptr && !runtime->inactive_message.empty()
                              ? runtime->inactive_message
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
      status->set_reserving_workloads(static_cast<int32_t>(counts.reserving));
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
      FillCohortUsage(state, *cohort);
      const std::string& name = cohort->metadata().name();
      if (state.cohorts().count(name) == 0 && state.tree().Cohort(name) != nullptr) {
        v1::Condition* implicit = cohort->mutable_status()->add_conditions();
        implicit->set_type("Implicit");
        implicit->set_status("True");
        implicit->set_reason("NoCohortObject");
        implicit->set_message(
            "named by a ClusterQueue's cohort or a Cohort's parent; no Cohort object is stored");
      }
      break;
    }
    case v1::ConfigObject::kAdmissionCheck: {
      // The live Active condition, which its controller sets; Apply never changes it.
      v1::AdmissionCheck* check = object.mutable_admission_check();
      check->mutable_status()->Clear();
      auto it = state.admission_checks().find(check->metadata().name());
      if (it == state.admission_checks().end() || !it->second.active.has_value()) break;
      *check->mutable_status() =
          api::AdmissionCheckToProto(it->second.spec, it->second.active).status();
      break;
    }
    case v1::ConfigObject::kMultiKueueCluster: {
      // The live Active condition, which the connection to the worker sets.
      v1::MultiKueueCluster* cluster = object.mutable_multi_kueue_cluster();
      cluster->mutable_status()->Clear();
      auto it = state.multikueue_clusters().find(cluster->metadata().name());
      if (it == state.multikueue_clusters().end() || !it->second.active.has_value()) break;
      *cluster->mutable_status() =
          api::MultiKueueClusterToProto(it->second.spec, it->second.active).status();
      break;
    }
    default:
      break;
  }
}

// Free text a request stores with a workload.
absl::Status CheckMessage(absl::string_view field, absl::string_view text) {
  if (text.size() <= api::kMaxMessageBytes) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      field, ": must be no more than ", api::kMaxMessageBytes, " bytes, got ", text.size()));
}

// A workload's place in list order: by namespace, then name (not by the "ns/name" string, where
// '-' and '.' sort before '/').
struct WorkloadName {
  absl::string_view namespace_name;
  absl::string_view name;
};

bool NameLess(const WorkloadName& a, const WorkloadName& b) {
  if (a.namespace_name != b.namespace_name) return a.namespace_name < b.namespace_name;
  return a.name < b.name;
}

// Views into `key`, which must outlive the result.
WorkloadName SplitWorkloadKey(absl::string_view key) {
  const size_t slash = key.find('/');
  if (slash == absl::string_view::npos) return {absl::string_view(), key};
  return {key.substr(0, slash), key.substr(slash + 1)};
}

absl::StatusOr<std::optional<core::WorkloadState>> StateFilter(v1::WorkloadState state) {
  switch (state) {
    case v1::WORKLOAD_STATE_UNSPECIFIED:
      return std::nullopt;
    case v1::WORKLOAD_STATE_PENDING:
      return core::WorkloadState::kPending;
    case v1::WORKLOAD_STATE_ADMITTED:
      return core::WorkloadState::kAdmitted;
    case v1::WORKLOAD_STATE_QUOTA_RESERVED:
      return core::WorkloadState::kQuotaReserved;
    case v1::WORKLOAD_STATE_EVICTING:
      return core::WorkloadState::kEvicting;
    case v1::WORKLOAD_STATE_FINISHED:
      return core::WorkloadState::kFinished;
    default:
      break;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("state: unsupported value ", static_cast<int>(state),
                   ": supported values: WORKLOAD_STATE_UNSPECIFIED (any), WORKLOAD_STATE_PENDING, "
                   "WORKLOAD_STATE_QUOTA_RESERVED, WORKLOAD_STATE_ADMITTED, "
                   "WORKLOAD_STATE_EVICTING, WORKLOAD_STATE_FINISHED"));
}

// The LocalQueue `namespace_name/name`, or null.
const core::LocalQueueSpec* FindLocalQueue(const core::ClusterState& state,
                                           absl::string_view namespace_name,
                                           absl::string_view name) {
  auto it = state.local_queues().find(absl::StrCat(namespace_name, "/", name));
  if (it == state.local_queues().end()) return nullptr;
  return &it->second.spec;
}

}  // namespace

namespace api_internal {

std::string WorkloadKeyOf(const v1::WorkloadRef& ref) { return KeyOf(ref); }
absl::Status RequireWorkloadRef(const v1::WorkloadRef& ref) { return RequireRef(ref); }
absl::StatusOr<v1::Workload> WorkloadByKey(const core::ClusterState& state, absl::string_view key,
                                           int64_t pending_revision) {
  return engine::WorkloadByKey(state, key, pending_revision);
}
void FillObjectStatus(const core::ClusterState& state, v1::ConfigObject& object) {
  FillStatus(state, object);
}
absl::Status RequireWorkloadRevision(const core::ClusterState& state, absl::string_view key,
                                     int64_t expected, int64_t pending_revision,
                                     absl::string_view advice) {
  const core::Workload* wl = state.FindWorkload(key);
  if (wl == nullptr) return absl::NotFoundError(absl::StrCat("workload ", key, " not found"));
  const bool changing = state.IsDirty(wl->id);
  const int64_t current = changing ? pending_revision : wl->resource_version;
  if (current == expected) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "workload ", key, " is at revision ", current, changing ? " (a change being committed)" : "",
      ", not the expected revision ", expected, ": it changed since it was read; ", advice));
}

}  // namespace api_internal

absl::Status TollgateApi::CheckNoDeletionInFlight(
    const AdmissionExecutor::Txn& txn, const ContinueToken& token,
    const std::function<bool(absl::string_view, absl::string_view)>& touches_rest) {
  // Deletions committed by now are in the change log; keep only this batch's.
  std::erase_if(deletions_in_flight_,
                [&](const auto& entry) { return entry.first <= txn.revision(); });
  for (const auto& [revision, key] : deletions_in_flight_) {
    const WorkloadName name = SplitWorkloadKey(key);
    if (touches_rest(name.namespace_name, name.name)) {
      return ContinueExpired(token, absl::StrCat("a deletion of ", key, " is in flight"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<TollgateApi::Operation<v1::SubmitResponse>> TollgateApi::SubmitOperation(
    const v1::SubmitRequest& request, std::optional<SubmissionEstimate>* estimate) {
  v1::Workload workload = request.workload();
  if (workload.metadata().namespace_().empty()) {
    workload.mutable_metadata()->set_namespace_("default");
  }
  if (!executor_.scheduler_config().partial_admission) {
    // Kueue's workload webhook defaults before it validates: with PartialAdmission off its
    // defaulter drops every minCount of a new workload, so none is checked or kept.
    for (v1::PodSet& ps : *workload.mutable_spec()->mutable_pod_sets()) ps.clear_min_count();
  }
  TOLLGATE_ASSIGN_OR_RETURN(core::WorkloadSpec spec, api::WorkloadSpecFromProto(workload));
  TOLLGATE_ASSIGN_OR_RETURN(std::optional<core::WorkloadOwner> owner,
                            api::WorkloadOwnerFromProto(workload));
  return [this, spec = std::move(spec), uid = workload.metadata().uid(), owner = std::move(owner),
          dry_run = request.dry_run(),
          estimate](AdmissionExecutor::Txn& txn) -> absl::StatusOr<v1::SubmitResponse> {
    // A uid names one object for its whole life: another workload's is refused, and the
    // service's own never repeats one (the commit revision is new in every batch).
    std::string assigned = uid;
    if (!uid.empty()) {
      const core::Workload* holder = uids_.Find(txn.state(), uid);
      if (holder != nullptr &&
          (holder->spec.namespace_name != spec.namespace_name || holder->spec.name != spec.name)) {
        return absl::AlreadyExistsError(absl::StrCat(
            "Workload ", spec.namespace_name, "/", spec.name,
            ": metadata.uid: ", core::QuoteValue(uid), " is already the uid of workload ",
            holder->spec.namespace_name, "/", holder->spec.name));
      }
    }
    if (dry_run) return PreviewSubmit(txn, spec, uid, owner, estimate);
    if (uid.empty() &&
        txn.state().FindWorkload(absl::StrCat(spec.namespace_name, "/", spec.name)) == nullptr) {
      do {
        assigned = absl::StrCat("tollgate-", txn.revision() + 1, "-", ++uid_sequence_);
      } while (uids_.Find(txn.state(), assigned) != nullptr);
    }
    TOLLGATE_ASSIGN_OR_RETURN(core::SubmitOutcome outcome, txn.Submit(spec, assigned, owner));
    if (outcome.created) {
      txn.MarkCreated(outcome.id);
      uids_.Added(txn.state(), outcome.id);
    }
    v1::SubmitResponse response;
    *response.mutable_workload() =
        WorkloadProto(txn.state(), *txn.state().workload(outcome.id), txn.commit_revision());
    response.set_created(outcome.created);
    return response;
  };
}

absl::StatusOr<v1::SubmitResponse> TollgateApi::PreviewSubmit(
    AdmissionExecutor::Txn& txn, const core::WorkloadSpec& spec, const std::string& uid,
    const std::optional<core::WorkloadOwner>& owner, std::optional<SubmissionEstimate>* estimate) {
  TOLLGATE_ASSIGN_OR_RETURN(
      core::SubmitPreview preview,
      core::PreviewSubmit(txn.state(), spec, owner.has_value() ? &*owner : nullptr));
  v1::SubmitResponse response;
  response.set_created(preview.existing == nullptr);
  if (preview.existing != nullptr) {
    *response.mutable_workload() = WorkloadProto(txn.state(), *preview.existing, txn.revision());
    return response;
  }
  // The workload as Submit would store it, before any cycle looks at it.
  core::Workload wl;
  wl.uid = uid;
  if (owner.has_value()) wl.owner = *owner;
  wl.creation_time = txn.now();
  wl.spec = std::move(preview.spec);
  wl.priority = preview.priority;
  api::WorkloadToProto(wl, response.mutable_workload());
  *response.mutable_workload()->mutable_metadata()->mutable_creation_timestamp() =
      TimeUtil::NanosecondsToTimestamp(absl::ToUnixNanos(txn.now()));
  // "If I submit this now, when would it start?": answered by the caller after the operation,
  // from a snapshot, so the forward simulation does not run on the executor thread.
  if (estimate != nullptr) {
    const core::ClusterState& state = txn.state();
    *estimate =
        SubmissionEstimate{start_estimates_.Snapshot(state, txn.read_revision(),
                                                     !state.HasUncommittedChanges(), txn.now()),
                           wl.spec, txn.read_revision()};
  }
  return response;
}

absl::StatusOr<v1::SubmitResponse> TollgateApi::Submit(const v1::SubmitRequest& request) {
  if (!request.dry_run()) return Await(SubmitOperation(request, nullptr));
  std::optional<SubmissionEstimate> estimate;
  absl::StatusOr<v1::SubmitResponse> response = Await(SubmitOperation(request, &estimate));
  if (!response.ok() || !estimate.has_value()) return response;
  TOLLGATE_ASSIGN_OR_RETURN(
      core::StartEstimate e,
      core::EstimateSubmission(*estimate->snapshot, estimate->spec, start_estimates_.options()));
  StartEstimateToProto(e, estimate->revision, response->mutable_start_estimate());
  return response;
}

void TollgateApi::SubmitAsync(const v1::SubmitRequest& request, Done<v1::SubmitResponse> done) {
  // A dry run's estimate is computed on the calling thread after the executor's part, so it is
  // answered as the blocking call is: it never holds the executor thread.
  if (request.dry_run()) return done(Submit(request));
  Dispatch(SubmitOperation(request, nullptr), std::move(done));
}

absl::StatusOr<v1::AdmitResponse> TollgateApi::Admit(const v1::AdmitRequest& request) {
  TOLLGATE_RETURN_IF_ERROR(RequireRef(request.workload()));
  const std::string key = KeyOf(request.workload());
  std::optional<StartEstimateCache::Ticket> ticket;
  core::WorkloadId estimate_id = 0;
  auto response = executor_.Run<v1::AdmitResponse>(
      [&](AdmissionExecutor::Txn& txn) -> absl::StatusOr<v1::AdmitResponse> {
        ticket.reset();
        TOLLGATE_ASSIGN_OR_RETURN(core::AdmitNowResult result,
                                  txn.AdmitNow(key, request.dry_run()));
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
          api::WorkloadToProto(holder, &scratch);
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
        if (request.dry_run() && result.outcome == core::AdmitNowResult::Outcome::kPending) {
          if (const core::Workload* wl = txn.state().FindWorkload(key)) {
            estimate_id = wl->id;
            ticket = EstimateTicket(txn);
          }
        }
        return response;
      });
  // Computed here, on the caller's thread, not on the executor's.
  if (response.ok() && ticket.has_value()) {
    TOLLGATE_ASSIGN_OR_RETURN(auto estimates, start_estimates_.Resolve(*ticket));
    auto it = estimates->by_id.find(estimate_id);
    if (it != estimates->by_id.end()) {
      StartEstimateToProto(it->second, ticket->revision, response->mutable_start_estimate());
    }
  }
  return response;
}

absl::StatusOr<TollgateApi::Operation<v1::FinishResponse>> TollgateApi::FinishOperation(
    const v1::FinishRequest& request) {
  TOLLGATE_RETURN_IF_ERROR(RequireRef(request.workload()));
  TOLLGATE_RETURN_IF_ERROR(CheckMessage("message", request.message()));
  TOLLGATE_RETURN_IF_ERROR(api::ValidateConditionReason("reason", request.reason()));
  return [key = KeyOf(request.workload()), message = request.message(), reason = request.reason()](
             AdmissionExecutor::Txn& txn) -> absl::StatusOr<v1::FinishResponse> {
    TOLLGATE_RETURN_IF_ERROR(txn.Finish(key, message, reason));
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
        TOLLGATE_RETURN_IF_ERROR(txn.ReleaseEvicted(key));
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
        TOLLGATE_RETURN_IF_ERROR(txn.SetPodsReady(key, !request.has_ready() || request.ready()));
        v1::ReportPodsReadyResponse response;
        TOLLGATE_ASSIGN_OR_RETURN(*response.mutable_workload(),
                                  WorkloadByKey(txn.state(), key, txn.commit_revision()));
        return response;
      });
}

absl::StatusOr<v1::ReportJobStateResponse> TollgateApi::ReportJobState(
    const v1::ReportJobStateRequest& request) {
  TOLLGATE_RETURN_IF_ERROR(RequireRef(request.workload()));
  const std::string key = KeyOf(request.workload());
  std::optional<core::WorkloadOwner> owner;
  std::optional<core::WorkloadPayload> job_status;
  switch (request.report_case()) {
    case v1::ReportJobStateRequest::kBindOwner: {
      TOLLGATE_ASSIGN_OR_RETURN(owner,
                                api::OwnerReferenceFromProto("bind_owner", request.bind_owner()));
      break;
    }
    case v1::ReportJobStateRequest::kOutOfSync:
      if (!request.out_of_sync()) {
        return absl::InvalidArgumentError("out_of_sync: must be true when set");
      }
      break;
    case v1::ReportJobStateRequest::kJobStatus: {
      TOLLGATE_ASSIGN_OR_RETURN(job_status,
                                api::PayloadFromProto("job_status", request.job_status()));
      break;
    }
    case v1::ReportJobStateRequest::kOnHold:
    case v1::ReportJobStateRequest::kWaitingForReplacementPods:
      break;
    case v1::ReportJobStateRequest::REPORT_NOT_SET:
      return absl::InvalidArgumentError(
          "report: one of bind_owner, out_of_sync, on_hold, waiting_for_replacement_pods or "
          "job_status is required");
  }
  TOLLGATE_RETURN_IF_ERROR(CheckMessage("message", request.message()));
  return executor_.Run<v1::ReportJobStateResponse>(
      [&](AdmissionExecutor::Txn& txn) -> absl::StatusOr<v1::ReportJobStateResponse> {
        switch (request.report_case()) {
          case v1::ReportJobStateRequest::kBindOwner:
            TOLLGATE_RETURN_IF_ERROR(txn.BindOwner(key, *owner));
            break;
          case v1::ReportJobStateRequest::kOutOfSync:
            TOLLGATE_RETURN_IF_ERROR(txn.MarkOutOfSync(key));
            break;
          case v1::ReportJobStateRequest::kOnHold:
            TOLLGATE_RETURN_IF_ERROR(txn.SetOnHold(key, request.on_hold(), request.message()));
            break;
          case v1::ReportJobStateRequest::kJobStatus:
            TOLLGATE_RETURN_IF_ERROR(txn.SetJobStatus(key, *job_status));
            break;
          default:
            TOLLGATE_RETURN_IF_ERROR(
                txn.SetWaitingForReplacementPods(key, request.waiting_for_replacement_pods()));
            break;
        }
        v1::ReportJobStateResponse response;
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
    TOLLGATE_ASSIGN_OR_RETURN(
        checkpoint_time, api::RequestTimeFromProto("checkpoint_time", request.checkpoint_time()));
  }
  return executor_.Run<v1::ReportCheckpointResponse>(
      [&](AdmissionExecutor::Txn& txn) -> absl::StatusOr<v1::ReportCheckpointResponse> {
        TOLLGATE_RETURN_IF_ERROR(txn.RecordCheckpoint(key, checkpoint_time.value_or(txn.now())));
        v1::ReportCheckpointResponse response;
        TOLLGATE_ASSIGN_OR_RETURN(*response.mutable_workload(),
                                  WorkloadByKey(txn.state(), key, txn.commit_revision()));
        return response;
      });
}

absl::StatusOr<v1::ReportReclaimablePodsResponse> TollgateApi::ReportReclaimablePods(
    const v1::ReportReclaimablePodsRequest& request) {
  TOLLGATE_RETURN_IF_ERROR(RequireRef(request.workload()));
  const std::string key = KeyOf(request.workload());
  std::vector<std::pair<std::string, int32_t>> pods;
  for (const v1::ReclaimablePod& p : request.reclaimable_pods())
    pods.emplace_back(p.name(), p.count());
  return executor_.Run<v1::ReportReclaimablePodsResponse>(
      [&](AdmissionExecutor::Txn& txn) -> absl::StatusOr<v1::ReportReclaimablePodsResponse> {
        TOLLGATE_RETURN_IF_ERROR(txn.SetReclaimablePods(key, pods));
        v1::ReportReclaimablePodsResponse response;
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
        // The index finds the id by the uid, so it forgets the workload while it still exists.
        const core::Workload* wl = txn.state().FindWorkload(key);
        if (wl != nullptr) uids_.Removed(txn.state(), wl->id);
        if (absl::Status deleted = txn.DeleteWorkload(key); !deleted.ok()) {
          if (wl != nullptr && txn.state().workload(wl->id) == wl) uids_.Added(txn.state(), wl->id);
          return deleted;
        }
        deletions_in_flight_.emplace_back(txn.revision() + 1, key);
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
  TOLLGATE_ASSIGN_OR_RETURN(std::optional<core::WorkloadState> state_filter,
                            StateFilter(request.state()));
  TOLLGATE_ASSIGN_OR_RETURN(
      const ListPager pager,
      ListPager::Start(
          {"workloads", request.namespace_(), request.queue_name(), request.cluster_queue(),
           absl::StrCat(static_cast<int>(request.state())), request.owner_uid()},
          request.limit(), request.continue_token()));
  const std::optional<ContinueToken>& token = pager.token();
  const std::optional<WorkloadName> after =
      token.has_value() ? std::optional<WorkloadName>(SplitWorkloadKey(token->last_key))
                        : std::nullopt;
  std::optional<StartEstimateCache::Ticket> ticket;
  std::vector<std::pair<core::WorkloadId, std::string>> estimate_ids;
  auto listed = executor_.Run<v1::ListWorkloadsResponse>(
      [&](AdmissionExecutor::Txn& txn) -> absl::StatusOr<v1::ListWorkloadsResponse> {
        ticket.reset();
        estimate_ids.clear();
        const core::ClusterState& state = txn.state();
        const bool any_namespace = request.namespace_().empty();
        // Whether a change to this workload could alter what the rest of the listing shows.
        auto touches_rest = [&](absl::string_view ns, absl::string_view name) {
          return (any_namespace || ns == request.namespace_()) &&
                 (!after.has_value() || NameLess(*after, WorkloadName{ns, name}));
        };
        int64_t revision = txn.read_revision();
        if (token.has_value()) {
          TOLLGATE_RETURN_IF_ERROR(CheckUnchangedSince(
              executor_.store(), *token, txn.revision(), [&](const v1::WatchEvent& event) {
                const v1::ObjectMeta& m = event.workload().metadata();
                return !touches_rest(m.namespace_(), m.name());
              }));
          TOLLGATE_RETURN_IF_ERROR(CheckNoDeletionInFlight(txn, *token, touches_rest));
          revision = token->revision;
        }
        std::vector<const core::Workload*> rest;
        // An owner's workloads come from the owner index, in id order as AllWorkloads.
        std::vector<const core::Workload*> candidates;
        if (request.owner_uid().empty()) {
          candidates = state.AllWorkloads();
        } else {
          for (core::WorkloadId id : state.WorkloadsOwnedBy(request.owner_uid())) {
            candidates.push_back(state.workload(id));
          }
        }
        for (const core::Workload* wl : candidates) {
          if (!touches_rest(wl->spec.namespace_name, wl->spec.name)) continue;
          // Changed by an earlier operation of this batch, so newer than the token's revision.
          if (token.has_value() && state.IsDirty(wl->id)) {
            return ContinueExpired(*token, absl::StrCat("a write to ", wl->spec.namespace_name, "/",
                                                        wl->spec.name, " is in flight"));
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
          if (state_filter.has_value() && wl->status.state != *state_filter) continue;
          rest.push_back(wl);
        }
        auto by_name = [](const core::Workload* a, const core::Workload* b) {
          return NameLess(WorkloadName{a->spec.namespace_name, a->spec.name},
                          WorkloadName{b->spec.namespace_name, b->spec.name});
        };
        // Only the page needs ordering: a page of 500 out of 100k costs a selection, not a sort.
        const size_t want = request.limit() > 0
                                ? std::min(rest.size(), static_cast<size_t>(request.limit()))
                                : rest.size();
        if (want < rest.size()) {
          std::nth_element(rest.begin(), rest.begin() + want, rest.end(), by_name);
        }
        std::sort(rest.begin(), rest.begin() + want, by_name);
        v1::ListWorkloadsResponse response;
        int64_t bytes = 0;
        size_t taken = 0;
        for (; taken < want; ++taken) {
          v1::Workload* out = response.add_workloads();
          *out = WorkloadProto(state, *rest[taken], txn.read_revision());
          bytes += static_cast<int64_t>(out->ByteSizeLong());
          if (pager.Overflows(response.workloads_size(), bytes)) {
            response.mutable_workloads()->RemoveLast();
            break;
          }
        }
        if (request.include_start_estimates()) {
          ticket = EstimateTicket(txn);
          for (size_t i = 0; i < taken; ++i) estimate_ids.emplace_back(rest[i]->id, rest[i]->Key());
        }
        pager.Finish(response, revision, static_cast<int64_t>(taken),
                     static_cast<int64_t>(rest.size() - taken),
                     taken > 0 ? rest[taken - 1]->Key() : "");
        return response;
      });
  // Computed here, on the caller's thread, not on the executor's.
  if (listed.ok() && ticket.has_value()) {
    TOLLGATE_ASSIGN_OR_RETURN(auto estimates, start_estimates_.Resolve(*ticket));
    for (const auto& [id, key] : estimate_ids) {
      auto it = estimates->by_id.find(id);
      if (it == estimates->by_id.end()) continue;
      StartEstimateToProto(it->second, ticket->revision,
                           &(*listed->mutable_start_estimates())[key]);
    }
  }
  return listed;
}

absl::Status TollgateApi::CheckWatchStart(const v1::WatchRequest& request) const {
  if (request.since_revision() < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "since_revision: must be >= 0 (0 = current state first), got ", request.since_revision()));
  }
  const storage::StoreIdentity identity = executor_.store().Identity();
  if (!request.store_id().empty() && request.store_id() != identity.store_id) {
    return absl::FailedPreconditionError(absl::StrCat(
        "store_id \"", request.store_id(), "\" is not this server's store \"", identity.store_id,
        "\" (its data dir was replaced): revisions of the old store mean nothing here; list "
        "again (or watch from revision 0) and resume from that revision"));
  }
  if (!request.store_id().empty() && request.store_epoch() != 0 &&
      request.store_epoch() != identity.epoch) {
    return absl::FailedPreconditionError(absl::StrCat(
        "store_epoch ", request.store_epoch(), " is not this store's epoch ", identity.epoch,
        " (it was restored from a backup or started after accepting data loss, so its history "
        "changed): list again (or watch from revision 0) and resume from that revision"));
  }
  const int64_t current = executor_.store().CurrentRevision();
  if (request.since_revision() > current) {
    return absl::OutOfRangeError(
        absl::StrCat("since_revision ", request.since_revision(),
                     " is ahead of the store's current revision ", current,
                     ": it belongs to another history (a replaced or restored store); list again "
                     "(or watch from revision 0) and resume from that revision"));
  }
  return absl::OkStatus();
}

absl::Status TollgateApi::Watch(const v1::WatchRequest& request,
                                const std::function<bool(const v1::WatchEvent&)>& send,
                                const std::function<bool()>& cancelled) {
  TOLLGATE_RETURN_IF_ERROR(CheckWatchStart(request));
  const storage::StoreIdentity identity = executor_.store().Identity();
  const auto send_stamped = [&](v1::WatchEvent& event) {
    event.set_store_id(identity.store_id);
    event.set_store_epoch(identity.epoch);
    return send(event);
  };
  int64_t revision = request.since_revision();
  if (revision == 0) {
    v1::ListWorkloadsRequest list;
    list.set_namespace_(request.namespace_());
    TOLLGATE_ASSIGN_OR_RETURN(v1::ListWorkloadsResponse snapshot, ListWorkloads(list));
    for (const v1::Workload& wl : snapshot.workloads()) {
      v1::WatchEvent event;
      event.set_type(v1::WatchEvent::ADDED);
      event.set_revision(snapshot.revision());
      *event.mutable_workload() = wl;
      if (!send_stamped(event)) return absl::OkStatus();
    }
    revision = snapshot.revision();
  }
  // Waiting for commits and spacing bookmarks are about the connection, not scheduling, so they
  // use wall time even when the scheduler runs on a simulated clock.
  const core::RealClock wall;
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
        if (!send_stamped(event)) return absl::OkStatus();
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
      if (!send_stamped(bookmark)) return absl::OkStatus();
      last_sent = wall.Now();
    }
  }
  return absl::OkStatus();
}

absl::Status TollgateApi::CheckImmutable(const AdmissionExecutor::Txn& txn,
                                         const ValidatedObject& object) const {
  const auto* check = std::get_if<core::AdmissionCheckSpec>(&object.spec);
  if (check == nullptr) return absl::OkStatus();
  auto it = txn.state().admission_checks().find(check->name);
  if (it == txn.state().admission_checks().end() ||
      it->second.spec.controller_name == check->controller_name) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat("AdmissionCheck ", check->name,
                   ": spec.controllerName: ", api::codec::Quote(check->controller_name),
                   " would replace ", api::codec::Quote(it->second.spec.controller_name),
                   ": the field is immutable (delete the AdmissionCheck and create it again)"));
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
        // Kueue's immutable fields, against what is stored, before anything applies.
        for (int i = 0; i < request.objects_size(); ++i) {
          absl::Status immutable = CheckImmutable(txn, validated[i]);
          if (!immutable.ok()) {
            return absl::Status(immutable.code(),
                                request.objects_size() == 1
                                    ? std::string(immutable.message())
                                    : absl::StrCat("objects[", i, "]: ", immutable.message()));
          }
        }
        v1::ApplyResponse response;
        const int64_t revision = txn.commit_revision();
        // Checks against the current state, all before any change: the apply is all or none.
        for (int i = 0; i < request.objects_size(); ++i) {
          if (const auto* topology = std::get_if<core::TopologySpec>(&validated[i].spec)) {
            if (absl::Status s = txn.state().CheckTopology(*topology); !s.ok()) {
              return absl::Status(
                  s.code(),
                  absl::StrCat(request.objects_size() == 1 ? std::string()
                                                           : absl::StrCat("objects[", i, "]: "),
                               "Topology ", topology->name, ": ", s.message()));
            }
          }
        }
        for (int i = 0; i < request.objects_size(); ++i) {
          v1::ConfigObject object = request.objects(i);
          const ValidatedObject& v = validated[i];
          const std::string key = ConfigObjectKey(KindOf(object), v.namespace_name, v.name);
          v1::ObjectMeta* meta = MutableMetadataOf(object);
          // Keep creation time and bump generation across updates, as the API server does.
          absl::StatusOr<std::optional<std::string>> existing = txn.ReadObject(key);
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
          // An update does not undo a deletion in progress (as on the API server).
          api_internal::KeepDeletionTimestamp(txn.state(), v.kind, v.namespace_name, v.name, *meta);
          if (object.has_admission_check()) {
            // Its status is its controller's: kept from the stored object, never applied.
            *object.mutable_admission_check()->mutable_status() =
                previous.admission_check().status();
          }
          if (object.has_multi_kueue_cluster()) {
            // Likewise the connection's.
            *object.mutable_multi_kueue_cluster()->mutable_status() =
                previous.multi_kueue_cluster().status();
          }
          txn.ApplyObject(v, key, object);
          last_object_write_ = revision;
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
        TOLLGATE_ASSIGN_OR_RETURN(std::optional<std::string> value, txn.ReadObject(key));
        if (!value.has_value() && request.ref().kind() == v1::COHORT) {
          if (std::optional<v1::ConfigObject> implicit =
                  ImplicitCohort(txn.state(), request.ref().name())) {
            FillStatus(txn.state(), *implicit);
            return *implicit;
          }
        }
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
  TOLLGATE_ASSIGN_OR_RETURN(
      const ListPager pager,
      ListPager::Start({"objects", prefix}, request.limit(), request.continue_token()));
  const std::optional<ContinueToken>& token = pager.token();
  return executor_.Run<v1::ListObjectsResponse>(
      [&](AdmissionExecutor::Txn& txn) -> absl::StatusOr<v1::ListObjectsResponse> {
        // The scan reads the store, which holds what is committed.
        int64_t revision = txn.revision();
        if (token.has_value()) {
          // Configuration changes rarely, so any write since the first page expires the token.
          if (last_object_write_ > token->revision || revision < token->revision) {
            return ContinueExpired(*token, "configuration objects changed since");
          }
          revision = token->revision;
        }
        v1::ListObjectsResponse response;
        absl::Status parse_error;
        int64_t bytes = 0;
        int64_t remaining = 0;
        bool full = false;
        std::string last_key;
        TOLLGATE_RETURN_IF_ERROR(
            txn.ScanCommittedObjects(prefix, [&](absl::string_view key, absl::string_view value) {
              if (token.has_value() && key <= token->last_key) return true;
              full = full || !pager.HasRoom(response.objects_size());
              if (full) {
                ++remaining;  // counted, not parsed
                return true;
              }
              v1::ConfigObject* object = response.add_objects();
              if (!object->ParseFromString(std::string(value))) {
                parse_error =
                    absl::DataLossError(absl::StrCat("store key ", key, " is not a ConfigObject"));
                return false;
              }
              FillStatus(txn.state(), *object);
              bytes += static_cast<int64_t>(object->ByteSizeLong());
              if (pager.Overflows(response.objects_size(), bytes)) {
                response.mutable_objects()->RemoveLast();
                full = true;
                ++remaining;
                return true;
              }
              last_key = std::string(key);
              return true;
            }));
        TOLLGATE_RETURN_IF_ERROR(parse_error);
        pager.Finish(response, revision, response.objects_size(), remaining, last_key);
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
  const std::string ns = request.namespace_().empty() ? "default" : request.namespace_();
  TOLLGATE_ASSIGN_OR_RETURN(
      const ListPager pager,
      ListPager::Start({"pending", request.cluster_queue(), by_cluster_queue ? "" : ns,
                        request.local_queue(), request.workload_name()},
                       request.limit(), request.continue_token()));
  const std::optional<ContinueToken>& token = pager.token();
  std::optional<StartEstimateCache::Ticket> ticket;
  std::vector<core::WorkloadId> estimate_ids;
  auto listed = executor_.Run<v1::ListPendingWorkloadsResponse>(
      [&](AdmissionExecutor::Txn& txn) -> absl::StatusOr<v1::ListPendingWorkloadsResponse> {
        ticket.reset();
        estimate_ids.clear();
        const core::ClusterState& state = txn.state();
        std::string cluster_queue = request.cluster_queue();
        if (by_cluster_queue) {
          if (state.cluster_queue(cluster_queue) == nullptr) {
            return absl::NotFoundError(
                absl::StrCat("ClusterQueue ", core::QuoteValue(cluster_queue), " not found"));
          }
        } else {
          const core::LocalQueueSpec* lq = FindLocalQueue(state, ns, request.local_queue());
          if (lq == nullptr) {
            return absl::NotFoundError(absl::StrCat("LocalQueue ", core::EchoedText(ns), "/",
                                                    core::QuoteValue(request.local_queue()),
                                                    " not found"));
          }
          cluster_queue = lq->cluster_queue;
        }
        int64_t revision = txn.read_revision();
        if (token.has_value()) {
          // Positions shift with any change in the ClusterQueue, so any change to one of its
          // workloads, or to configuration, expires the token.
          if (last_object_write_ > token->revision) {
            return ContinueExpired(*token, "configuration objects changed since");
          }
          if (state.HasUncommittedChanges() && revision != token->revision) {
            return ContinueExpired(*token, "writes to workloads are in flight");
          }
          TOLLGATE_RETURN_IF_ERROR(CheckUnchangedSince(
              executor_.store(), *token, txn.revision(), [&](const v1::WatchEvent& event) {
                const v1::Workload& wl = event.workload();
                if (event.type() == v1::WatchEvent::DELETED) return false;  // queue unknown
                if (wl.status().admission().cluster_queue() == cluster_queue) return false;
                const core::LocalQueueSpec* lq =
                    FindLocalQueue(state, wl.metadata().namespace_(), wl.spec().queue_name());
                return lq == nullptr || lq->cluster_queue != cluster_queue;
              }));
          revision = token->revision;
        }
        std::vector<core::PendingPosition> positions =
            by_cluster_queue ? state.PendingInClusterQueue(cluster_queue)
                             : state.PendingInLocalQueue(ns, request.local_queue());
        size_t begin = 0;
        if (token.has_value()) {
          begin = static_cast<size_t>(token->offset);
          const core::Workload* last = begin >= 1 && begin <= positions.size()
                                           ? state.workload(positions[begin - 1].id)
                                           : nullptr;
          if (last == nullptr ||
              absl::StrCat(last->spec.namespace_name, "/", last->spec.name) != token->last_key) {
            return ContinueExpired(*token, "the queue's order changed since");
          }
        }
        if (!request.workload_name().empty()) {
          // One workload's positions: keep just it.
          std::vector<core::PendingPosition> only;
          for (core::PendingPosition& p : positions) {
            const core::Workload* wl = state.workload(p.id);
            if (wl->spec.namespace_name == ns && wl->spec.name == request.workload_name()) {
              only.push_back(std::move(p));
            }
          }
          positions = std::move(only);
        }
        v1::ListPendingWorkloadsResponse response;
        size_t end = positions.size();
        if (request.limit() > 0 && begin + static_cast<size_t>(request.limit()) < end) {
          end = begin + static_cast<size_t>(request.limit());
        }
        for (size_t i = begin; i < end; ++i) {
          const core::PendingPosition& p = positions[i];
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
        if (request.include_start_estimates() && end > begin) {
          ticket = EstimateTicket(txn);
          for (size_t i = begin; i < end; ++i) estimate_ids.push_back(positions[i].id);
        }
        pager.Finish(response, revision, static_cast<int64_t>(end - begin),
                     static_cast<int64_t>(positions.size() - end),
                     end > begin ? state.workload(positions[end - 1].id)->Key() : "");
        return response;
      });
  // Computed here, on the caller's thread, not on the executor's.
  if (listed.ok() && ticket.has_value()) {
    TOLLGATE_ASSIGN_OR_RETURN(auto estimates, start_estimates_.Resolve(*ticket));
    for (size_t i = 0; i < estimate_ids.size(); ++i) {
      auto it = estimates->by_id.find(estimate_ids[i]);
      if (it == estimates->by_id.end()) continue;
      StartEstimateToProto(it->second, ticket->revision,
                           listed->mutable_items(static_cast<int>(i))->mutable_start_estimate());
    }
  }
  return listed;
}

absl::StatusOr<v1::CohortBreakdown> TollgateApi::GetCohortBreakdown(
    const v1::GetCohortBreakdownRequest& request) {
  const int named = static_cast<int>(!request.cohort().empty()) +
                    static_cast<int>(!request.cluster_queue().empty()) +
                    static_cast<int>(!request.workload().name().empty());
  if (named != 1) {
    return absl::InvalidArgumentError(
        "name exactly one of cohort, cluster_queue or workload (namespace and name)");
  }
  return executor_.Run<v1::CohortBreakdown>(
      [&](AdmissionExecutor::Txn& txn) -> absl::StatusOr<v1::CohortBreakdown> {
        const core::ClusterState& state = txn.state();
        absl::StatusOr<core::CohortBreakdown> breakdown;
        if (!request.cohort().empty()) {
          breakdown = core::CohortBreakdownOf(state, request.cohort());
        } else if (!request.cluster_queue().empty()) {
          breakdown = core::ClusterQueueBreakdown(state, request.cluster_queue(), nullptr);
        } else {
          const std::string key = KeyOf(request.workload());
          const core::Workload* wl = state.FindWorkload(key);
          if (wl == nullptr)
            return absl::NotFoundError(absl::StrCat("workload ", key, " not found"));
          const std::string* cluster_queue = state.QueuedIn(wl->id);
          if (wl->status.state != core::WorkloadState::kPending || cluster_queue == nullptr) {
            return absl::FailedPreconditionError(absl::StrCat(
                "workload ", key, " is ", core::WorkloadStateName(wl->status.state),
                wl->status.state == core::WorkloadState::kPending ? " but not queued in any "
                                                                    "ClusterQueue"
                                                                  : ", not waiting in a queue"));
          }
          breakdown = core::ClusterQueueBreakdown(state, *cluster_queue, wl);
        }
        if (!breakdown.ok()) return breakdown.status();
        const core::Workload* analysed =
            breakdown->workload.has_value() ? state.workload(*breakdown->workload) : nullptr;
        v1::CohortBreakdown out = api::CohortBreakdownToProto(*breakdown, analysed);
        out.set_revision(txn.read_revision());
        return out;
      });
}

StartEstimateCache::Ticket TollgateApi::EstimateTicket(AdmissionExecutor::Txn& txn) {
  const core::ClusterState& state = txn.state();
  return start_estimates_.Prepare(state, txn.read_revision(), !state.HasUncommittedChanges(),
                                  txn.now());
}

}  // namespace tollgate::engine
