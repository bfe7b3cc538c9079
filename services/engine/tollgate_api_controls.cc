#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "google/protobuf/util/time_util.h"
#include "services/api/api_limits.h"
#include "services/api/workload_codec.h"
#include "services/engine/config_objects.h"
#include "services/engine/tollgate_api.h"
#include "services/engine/tollgate_api_internal.h"

// TollgateApi's operator controls: deleting configuration objects with in-use protection,
// stop/resume of queues, deactivate/activate and reprioritize of workloads, a new payload for a
// workload, the removal of its admission gates, and Preempt with an answer that says what the
// scheduling right after the eviction did.

namespace tollgate::engine {
namespace {

using api_internal::RequireWorkloadRef;
using api_internal::RequireWorkloadRevision;
using api_internal::WorkloadByKey;
using api_internal::WorkloadKeyOf;
using google::protobuf::util::TimeUtil;

// Workloads named in a DeleteObject answer; the rest are counted in the message.
constexpr size_t kMaxHeldByNamed = 5;

v1::WorkloadRef RefOf(const core::Workload& wl) {
  v1::WorkloadRef ref;
  ref.set_namespace_(wl.spec.namespace_name);
  ref.set_name(wl.spec.name);
  return ref;
}

// The admission's flavors as "cpu=spot, gpu=a100" (pod sets joined by "; ").
std::string FlavorsText(const core::Admission& admission) {
  std::vector<std::string> sets;
  for (const core::PodSetAssignment& ps : admission.pod_sets) {
    std::vector<std::string> parts;
    for (const auto& [resource, flavor] : ps.flavors) parts.push_back(resource + "=" + flavor);
    sets.push_back(absl::StrJoin(parts, ", "));
  }
  return absl::StrJoin(sets, "; ");
}

// Kueue's EvictionUnderlyingCause limit: the cause ends up in the Evicted reason after
// "DeactivatedDueTo", and in the eviction statistics.
constexpr size_t kMaxDeactivationReasonBytes = 316;

// The cause a deactivation names (Kueue's DeactivationTarget), or none for the plain one.
absl::StatusOr<std::optional<core::DeactivationCause>> DeactivationCauseOf(
    const v1::SetWorkloadActiveRequest& request) {
  const std::string& reason = request.deactivation_reason();
  const std::string& message = request.deactivation_message();
  if (reason.empty() && message.empty()) return std::nullopt;
  if (request.active()) {
    return absl::InvalidArgumentError(absl::StrCat(
        reason.empty() ? "deactivation_message" : "deactivation_reason",
        ": is given only with active false (a deactivation's cause), got active true"));
  }
  if (reason.empty()) {
    return absl::InvalidArgumentError(
        "deactivation_message: is given without deactivation_reason; the cause needs a reason");
  }
  TOLLGATE_RETURN_IF_ERROR(api::ValidateConditionReason("deactivation_reason", reason));
  if (reason.size() > kMaxDeactivationReasonBytes) {
    return absl::InvalidArgumentError(absl::StrCat("deactivation_reason: must be no more than ",
                                                   kMaxDeactivationReasonBytes, " bytes, got ",
                                                   reason.size()));
  }
  if (message.size() > api::kMaxMessageBytes) {
    return absl::InvalidArgumentError(absl::StrCat("deactivation_message: must be no more than ",
                                                   api::kMaxMessageBytes, " bytes, got ",
                                                   message.size()));
  }
  return core::DeactivationCause{reason, message};
}

}  // namespace

namespace api_internal {

void KeepDeletionTimestamp(const core::ClusterState& state, core::ObjectKind kind,
                           absl::string_view namespace_name, absl::string_view name,
                           v1::ObjectMeta& meta) {
  std::optional<absl::Time> since = state.TerminatingSince(kind, namespace_name, name);
  if (!since.has_value()) {
    meta.clear_deletion_timestamp();
    return;
  }
  *meta.mutable_deletion_timestamp() = TimeUtil::NanosecondsToTimestamp(absl::ToUnixNanos(*since));
}

}  // namespace api_internal

absl::StatusOr<v1::PreemptResponse> TollgateApi::Preempt(const v1::PreemptRequest& request) {
  TOLLGATE_RETURN_IF_ERROR(RequireWorkloadRef(request.workload()));
  const std::string key = WorkloadKeyOf(request.workload());
  if (request.reason().size() > api::kMaxMessageBytes) {
    return absl::InvalidArgumentError(absl::StrCat("reason: must be no more than ",
                                                   api::kMaxMessageBytes, " bytes, got ",
                                                   request.reason().size()));
  }
  const std::string message = request.reason().empty() ? "Preempted on request" : request.reason();
  const bool hold = request.hold();
  // Filled after the round's cycles: the answer tells what they did with the workload.
  auto response = std::make_shared<v1::PreemptResponse>();
  absl::Status done = executor_.RunStatus([&](AdmissionExecutor::Txn& txn) -> absl::Status {
    TOLLGATE_RETURN_IF_ERROR(txn.Preempt(key, message));
    // Evict and deactivate in one commit: it is never requeued in between.
    if (hold) TOLLGATE_RETURN_IF_ERROR(txn.SetActive(key, false));
    const core::WorkloadId id = txn.state().FindWorkload(key)->id;
    const int64_t pending_revision = txn.commit_revision();
    txn.AfterCycles([response, key, id, hold, pending_revision](
                        core::ClusterState& after,
                        const std::vector<core::PreemptionDecision>& preemptions) {
      const core::Workload* wl = after.workload(id);
      response->set_evicted(true);
      if (wl == nullptr) {
        response->set_message(absl::StrCat("workload ", key, " was evicted and then deleted"));
        return;
      }
      std::vector<std::string> victims;
      for (const core::PreemptionDecision& p : preemptions) {
        if (p.preemptor != id) continue;
        if (const core::Workload* victim = after.workload(p.victim)) {
          *response->add_preempted() = RefOf(*victim);
          victims.push_back(victim->Key());
        }
      }
      absl::StatusOr<v1::Workload> proto =
          WorkloadByKey(after, key, std::max(pending_revision, wl->resource_version));
      if (proto.ok()) *response->mutable_workload() = *std::move(proto);
      const std::string preempting =
          victims.empty() ? "" : absl::StrCat(" by preempting ", absl::StrJoin(victims, ", "));
      switch (wl->status.state) {
        case core::WorkloadState::kAdmitted:
          response->set_readmitted(true);
          response->set_message(absl::StrCat("evicted, then re-admitted by ClusterQueue ",
                                             wl->status.admission->cluster_queue, " (",
                                             FlavorsText(*wl->status.admission), ")", preempting));
          break;
        case core::WorkloadState::kQuotaReserved:
          response->set_readmitted(true);
          response->set_message(absl::StrCat(
              "evicted, then quota reserved again in ClusterQueue ",
              wl->status.admission->cluster_queue, " (", FlavorsText(*wl->status.admission), ")",
              preempting, "; it is admitted once its admission checks are Ready"));
          break;
        case core::WorkloadState::kEvicting:
          response->set_message(
              absl::StrCat("evicting: it keeps its quota until its pods are reported stopped",
                           hold ? "; deactivated, so it will not be requeued" : ""));
          break;
        default:
          if (hold || !wl->spec.active) {
            response->set_message("evicted and deactivated: it waits until activated");
          } else if (!victims.empty()) {
            response->set_message(absl::StrCat("evicted and requeued; it is preempting ",
                                               absl::StrJoin(victims, ", "),
                                               " to be admitted again"));
          } else {
            response->set_message(absl::StrCat(
                "evicted and requeued (Pending)",
                wl->status.pending_message.empty() ? "" : ": " + wl->status.pending_message));
          }
          break;
      }
    });
    return absl::OkStatus();
  });
  if (!done.ok()) return done;
  return *response;
}

absl::StatusOr<v1::SetWorkloadActiveResponse> TollgateApi::SetWorkloadActive(
    const v1::SetWorkloadActiveRequest& request) {
  TOLLGATE_RETURN_IF_ERROR(RequireWorkloadRef(request.workload()));
  TOLLGATE_ASSIGN_OR_RETURN(const std::optional<core::DeactivationCause> cause,
                            DeactivationCauseOf(request));
  const std::string key = WorkloadKeyOf(request.workload());
  return executor_.Run<v1::SetWorkloadActiveResponse>(
      [&](AdmissionExecutor::Txn& txn) -> absl::StatusOr<v1::SetWorkloadActiveResponse> {
        TOLLGATE_RETURN_IF_ERROR(txn.SetActive(key, request.active(), cause));
        v1::SetWorkloadActiveResponse response;
        TOLLGATE_ASSIGN_OR_RETURN(*response.mutable_workload(),
                                  WorkloadByKey(txn.state(), key, txn.commit_revision()));
        return response;
      });
}

absl::StatusOr<v1::ReprioritizeResponse> TollgateApi::Reprioritize(
    const v1::ReprioritizeRequest& request) {
  TOLLGATE_RETURN_IF_ERROR(RequireWorkloadRef(request.workload()));
  const std::string key = WorkloadKeyOf(request.workload());
  return executor_.Run<v1::ReprioritizeResponse>(
      [&](AdmissionExecutor::Txn& txn) -> absl::StatusOr<v1::ReprioritizeResponse> {
        TOLLGATE_RETURN_IF_ERROR(txn.SetPriority(key, request.priority()));
        v1::ReprioritizeResponse response;
        TOLLGATE_ASSIGN_OR_RETURN(*response.mutable_workload(),
                                  WorkloadByKey(txn.state(), key, txn.commit_revision()));
        return response;
      });
}

absl::StatusOr<v1::UpdateWorkloadPayloadResponse> TollgateApi::UpdateWorkloadPayload(
    const v1::UpdateWorkloadPayloadRequest& request) {
  TOLLGATE_RETURN_IF_ERROR(RequireWorkloadRef(request.workload()));
  if (!request.has_payload()) return absl::InvalidArgumentError("payload: Required value");
  if (request.expected_revision() < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected_revision: must not be negative (0: not checked), got ",
                     request.expected_revision()));
  }
  TOLLGATE_ASSIGN_OR_RETURN(core::WorkloadPayload payload,
                            api::PayloadFromProto("payload", request.payload()));
  const std::string key = WorkloadKeyOf(request.workload());
  const int64_t expected = request.expected_revision();
  return executor_.Run<v1::UpdateWorkloadPayloadResponse>(
      [&](AdmissionExecutor::Txn& txn) -> absl::StatusOr<v1::UpdateWorkloadPayloadResponse> {
        // 0: not checked; txn.SetPayload answers NOT_FOUND for a missing workload.
        if (expected > 0) {
          TOLLGATE_RETURN_IF_ERROR(RequireWorkloadRevision(txn.state(), key, expected,
                                                           txn.commit_revision(), "read it again"));
        }
        TOLLGATE_RETURN_IF_ERROR(txn.SetPayload(key, std::move(payload)));
        v1::UpdateWorkloadPayloadResponse response;
        TOLLGATE_ASSIGN_OR_RETURN(*response.mutable_workload(),
                                  WorkloadByKey(txn.state(), key, txn.commit_revision()));
        return response;
      });
}

absl::StatusOr<v1::SetAdmissionGatesResponse> TollgateApi::SetAdmissionGates(
    const v1::SetAdmissionGatesRequest& request) {
  TOLLGATE_RETURN_IF_ERROR(RequireWorkloadRef(request.workload()));
  if (request.expected_revision() < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected_revision: must not be negative (0: not checked), got ",
                     request.expected_revision()));
  }
  const std::string key = WorkloadKeyOf(request.workload());
  const std::optional<std::string> gates =
      request.has_admission_gated_by() ? std::optional<std::string>(request.admission_gated_by())
                                       : std::nullopt;
  const int64_t expected = request.expected_revision();
  return executor_.Run<v1::SetAdmissionGatesResponse>(
      [&](AdmissionExecutor::Txn& txn) -> absl::StatusOr<v1::SetAdmissionGatesResponse> {
        if (expected > 0) {
          TOLLGATE_RETURN_IF_ERROR(RequireWorkloadRevision(txn.state(), key, expected,
                                                           txn.commit_revision(), "read it again"));
        }
        TOLLGATE_RETURN_IF_ERROR(txn.SetAdmissionGates(key, gates));
        v1::SetAdmissionGatesResponse response;
        TOLLGATE_ASSIGN_OR_RETURN(*response.mutable_workload(),
                                  WorkloadByKey(txn.state(), key, txn.commit_revision()));
        return response;
      });
}

absl::StatusOr<v1::Workload> TollgateApi::SetPriorityBoost(const v1::WorkloadRef& workload,
                                                           const std::optional<std::string>& value,
                                                           int64_t expected_revision) {
  TOLLGATE_RETURN_IF_ERROR(RequireWorkloadRef(workload));
  if (expected_revision < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "expected_revision: must not be negative (0: not checked), got ", expected_revision));
  }
  const std::string key = WorkloadKeyOf(workload);
  return executor_.Run<v1::Workload>(
      [&](AdmissionExecutor::Txn& txn) -> absl::StatusOr<v1::Workload> {
        if (expected_revision > 0) {
          TOLLGATE_RETURN_IF_ERROR(RequireWorkloadRevision(txn.state(), key, expected_revision,
                                                           txn.commit_revision(), "read it again"));
        }
        TOLLGATE_RETURN_IF_ERROR(txn.SetPriorityBoost(key, value));
        return WorkloadByKey(txn.state(), key, txn.commit_revision());
      });
}

absl::StatusOr<v1::DeleteObjectResponse> TollgateApi::DeleteObject(
    const v1::DeleteObjectRequest& request) {
  TOLLGATE_ASSIGN_OR_RETURN(core::ObjectKind kind, ToCoreKind(request.ref().kind()));
  const v1::ObjectRef ref = request.ref();
  return executor_.Run<v1::DeleteObjectResponse>(
      [&](AdmissionExecutor::Txn& txn) -> absl::StatusOr<v1::DeleteObjectResponse> {
        const std::string key = ConfigObjectKey(ref.kind(), ref.namespace_(), ref.name());
        TOLLGATE_ASSIGN_OR_RETURN(const bool terminating,
                                  txn.DeleteObject(kind, ref.namespace_(), ref.name(), key));
        last_object_write_ = txn.commit_revision();
        v1::DeleteObjectResponse response;
        response.set_revision(txn.commit_revision());
        if (!terminating) return response;
        // In use: stored as terminating (so a restart keeps it so) until its last workload ends.
        TOLLGATE_ASSIGN_OR_RETURN(std::optional<std::string> stored, txn.ReadObject(key));
        v1::ConfigObject object;
        if (stored.has_value() && !object.ParseFromString(*stored)) {
          return absl::DataLossError(absl::StrCat("store key ", key, " is not a ConfigObject"));
        }
        v1::ObjectMeta* meta = MutableMetadataOf(object);
        if (!meta->has_deletion_timestamp()) {
          api_internal::KeepDeletionTimestamp(txn.state(), kind, ref.namespace_(), ref.name(),
                                              *meta);
          meta->set_resource_version(txn.commit_revision());
          txn.StoreTerminatingObject(key, object);
        }
        response.set_terminating(true);
        // An AdmissionCheck is held by the ClusterQueues naming it, the others by workloads.
        const std::vector<std::string> held =
            kind == core::ObjectKind::kAdmissionCheck
                ? txn.state().ClusterQueuesUsingAdmissionCheck(ref.name())
                : txn.state().WorkloadsHoldingQuotaVia(kind, ref.namespace_(), ref.name());
        for (size_t i = 0; i < held.size() && i < kMaxHeldByNamed; ++i) {
          response.add_held_by(held[i]);
        }
        return response;
      });
}

absl::StatusOr<v1::SetStopPolicyResponse> TollgateApi::SetStopPolicy(
    const v1::SetStopPolicyRequest& request) {
  const v1::ObjectRef ref = request.ref();
  if (ref.kind() != v1::CLUSTER_QUEUE && ref.kind() != v1::LOCAL_QUEUE) {
    return absl::InvalidArgumentError(
        absl::StrCat("ref.kind: only a ClusterQueue or a LocalQueue can be stopped, got ",
                     v1::ObjectKind_Name(ref.kind())));
  }
  if (ref.name().empty()) return absl::InvalidArgumentError("ref.name: must not be empty");
  const std::string& policy = request.stop_policy();
  if (policy != "None" && policy != "Hold" && policy != "HoldAndDrain") {
    return absl::InvalidArgumentError(absl::StrCat(
        "stop_policy: must be None, Hold or HoldAndDrain, got \"", policy.substr(0, 64), "\""));
  }
  const std::string ns =
      ref.kind() == v1::LOCAL_QUEUE && ref.namespace_().empty() ? "default" : ref.namespace_();
  const std::string key = ConfigObjectKey(ref.kind(), ns, ref.name());
  return executor_.Run<v1::SetStopPolicyResponse>(
      [&](AdmissionExecutor::Txn& txn) -> absl::StatusOr<v1::SetStopPolicyResponse> {
        TOLLGATE_ASSIGN_OR_RETURN(std::optional<std::string> stored, txn.ReadObject(key));
        if (!stored.has_value()) {
          return absl::NotFoundError(absl::StrCat(KindName(ref.kind()), " ",
                                                  ref.kind() == v1::LOCAL_QUEUE ? ns + "/" : "",
                                                  ref.name(), " not found"));
        }
        v1::ConfigObject object;
        if (!object.ParseFromString(*stored)) {
          return absl::DataLossError(absl::StrCat("store key ", key, " is not a ConfigObject"));
        }
        // The stored spec with only stopPolicy changed, through the same validation and apply
        // path as a full re-apply.
        if (ref.kind() == v1::CLUSTER_QUEUE) {
          object.mutable_cluster_queue()->mutable_spec()->set_stop_policy(policy);
        } else {
          object.mutable_local_queue()->mutable_spec()->set_stop_policy(policy);
        }
        ClearStatus(object);
        TOLLGATE_ASSIGN_OR_RETURN(ValidatedObject validated, ValidateConfigObject(object));
        v1::ObjectMeta* meta = MutableMetadataOf(object);
        meta->set_generation(meta->generation() + 1);
        meta->set_resource_version(txn.commit_revision());
        txn.ApplyObject(validated, key, object);
        last_object_write_ = txn.commit_revision();
        v1::SetStopPolicyResponse response;
        api_internal::FillObjectStatus(txn.state(), object);
        *response.mutable_object() = std::move(object);
        response.set_revision(txn.commit_revision());
        return response;
      });
}

}  // namespace tollgate::engine
