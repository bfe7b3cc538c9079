#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "services/api/api_codec.h"
#include "services/api/check_codec.h"
#include "services/engine/config_objects.h"
#include "services/engine/tollgate_api.h"
#include "services/engine/tollgate_api_internal.h"

// TollgateApi's check-controller API (docs/admission-checks.md): a check's state on a workload,
// compare-and-swap on the workload's revision, and a check's Active condition.

namespace tollgate::engine {

using api_internal::RequireWorkloadRef;
using api_internal::RequireWorkloadRevision;
using api_internal::WorkloadByKey;
using api_internal::WorkloadKeyOf;

absl::StatusOr<v1::UpdateAdmissionCheckStateResponse> TollgateApi::UpdateAdmissionCheckState(
    const v1::UpdateAdmissionCheckStateRequest& request) {
  TOLLGATE_RETURN_IF_ERROR(RequireWorkloadRef(request.workload()));
  if (request.expected_revision() <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "expected_revision: must be the workload's metadata.resource_version the decision was "
        "made on (greater than 0), got ",
        request.expected_revision()));
  }
  TOLLGATE_ASSIGN_OR_RETURN(core::CheckStateUpdate update, api::CheckStateUpdateFromProto(request));
  const std::string key = WorkloadKeyOf(request.workload());
  const int64_t expected = request.expected_revision();
  return executor_.Run<v1::UpdateAdmissionCheckStateResponse>(
      [&](AdmissionExecutor::Txn& txn) -> absl::StatusOr<v1::UpdateAdmissionCheckStateResponse> {
        TOLLGATE_RETURN_IF_ERROR(
            RequireWorkloadRevision(txn.state(), key, expected, txn.commit_revision(),
                                    "read it again and decide on what it is now"));
        TOLLGATE_RETURN_IF_ERROR(txn.SetAdmissionCheckState(key, std::move(update)));
        v1::UpdateAdmissionCheckStateResponse response;
        TOLLGATE_ASSIGN_OR_RETURN(*response.mutable_workload(),
                                  WorkloadByKey(txn.state(), key, txn.commit_revision()));
        return response;
      });
}

absl::StatusOr<v1::SetAdmissionCheckActiveResponse> TollgateApi::SetAdmissionCheckActive(
    const v1::SetAdmissionCheckActiveRequest& request) {
  if (request.name().empty()) return absl::InvalidArgumentError("name: must not be empty");
  if (request.reason().size() > api::kMaxMessageBytes ||
      request.message().size() > api::kMaxMessageBytes) {
    return absl::InvalidArgumentError(absl::StrCat("reason, message: each must be no more than ",
                                                   api::kMaxMessageBytes, " bytes"));
  }
  const std::string key = ConfigObjectKey(v1::ADMISSION_CHECK, "", request.name());
  return executor_.Run<v1::SetAdmissionCheckActiveResponse>(
      [&](AdmissionExecutor::Txn& txn) -> absl::StatusOr<v1::SetAdmissionCheckActiveResponse> {
        TOLLGATE_ASSIGN_OR_RETURN(std::optional<std::string> stored, txn.ReadObject(key));
        if (!stored.has_value()) {
          return absl::NotFoundError(absl::StrCat("AdmissionCheck ", request.name(), " not found"));
        }
        v1::ConfigObject object;
        if (!object.ParseFromString(*stored)) {
          return absl::DataLossError(absl::StrCat("store key ", key, " is not a ConfigObject"));
        }
        const std::string status_before = object.admission_check().status().SerializeAsString();
        TOLLGATE_RETURN_IF_ERROR(txn.SetAdmissionCheckActive(request.name(), request.active(),
                                                             request.reason(), request.message()));
        // The condition as the state holds it (its transition time kept when unchanged), stored
        // so that a restart restores it; the same report again writes nothing.
        api_internal::FillObjectStatus(txn.state(), object);
        if (object.admission_check().status().SerializeAsString() != status_before) {
          MutableMetadataOf(object)->set_resource_version(txn.commit_revision());
          txn.StoreObject(key, object);
          last_object_write_ = txn.commit_revision();
        }
        v1::SetAdmissionCheckActiveResponse response;
        *response.mutable_admission_check() = object.admission_check();
        response.set_revision(MetadataOf(object).resource_version());
        return response;
      });
}

absl::StatusOr<v1::SetMultiKueueClusterActiveResponse> TollgateApi::SetMultiKueueClusterActive(
    const v1::SetMultiKueueClusterActiveRequest& request) {
  if (request.name().empty()) return absl::InvalidArgumentError("name: must not be empty");
  if (request.reason().size() > api::kMaxMessageBytes ||
      request.message().size() > api::kMaxMessageBytes) {
    return absl::InvalidArgumentError(absl::StrCat("reason, message: each must be no more than ",
                                                   api::kMaxMessageBytes, " bytes"));
  }
  if (request.reason().empty()) {
    return absl::InvalidArgumentError(
        "reason: must not be empty (Kueue's reasons: Active, BadKubeConfig, InsecureKubeConfig, "
        "ClientConnectionFailed)");
  }
  const std::string key = ConfigObjectKey(v1::MULTI_KUEUE_CLUSTER, "", request.name());
  return executor_.Run<v1::SetMultiKueueClusterActiveResponse>(
      [&](AdmissionExecutor::Txn& txn) -> absl::StatusOr<v1::SetMultiKueueClusterActiveResponse> {
        TOLLGATE_ASSIGN_OR_RETURN(std::optional<std::string> stored, txn.ReadObject(key));
        if (!stored.has_value()) {
          return absl::NotFoundError(
              absl::StrCat("MultiKueueCluster ", request.name(), " not found"));
        }
        v1::ConfigObject object;
        if (!object.ParseFromString(*stored)) {
          return absl::DataLossError(absl::StrCat("store key ", key, " is not a ConfigObject"));
        }
        const std::string status_before = object.multi_kueue_cluster().status().SerializeAsString();
        TOLLGATE_RETURN_IF_ERROR(txn.SetMultiKueueClusterActive(
            request.name(), request.active(), request.reason(), request.message()));
        // Stored as the state holds it, so a restart restores it; the same report again
        // writes nothing.
        api_internal::FillObjectStatus(txn.state(), object);
        if (object.multi_kueue_cluster().status().SerializeAsString() != status_before) {
          MutableMetadataOf(object)->set_resource_version(txn.commit_revision());
          txn.StoreObject(key, object);
          last_object_write_ = txn.commit_revision();
        }
        v1::SetMultiKueueClusterActiveResponse response;
        *response.mutable_multi_kueue_cluster() = object.multi_kueue_cluster();
        response.set_revision(MetadataOf(object).resource_version());
        return response;
      });
}

absl::StatusOr<v1::MarkMultiKueueWinnerResponse> TollgateApi::MarkMultiKueueWinner(
    const v1::MarkMultiKueueWinnerRequest& request) {
  TOLLGATE_RETURN_IF_ERROR(RequireWorkloadRef(request.workload()));
  if (request.origin().size() > api::kMaxPayloadFieldBytes) {
    return absl::InvalidArgumentError(absl::StrCat("origin: must be no more than ",
                                                   api::kMaxPayloadFieldBytes, " bytes, got ",
                                                   request.origin().size(), " bytes"));
  }
  const std::string key = WorkloadKeyOf(request.workload());
  return executor_.Run<v1::MarkMultiKueueWinnerResponse>(
      [&](AdmissionExecutor::Txn& txn) -> absl::StatusOr<v1::MarkMultiKueueWinnerResponse> {
        TOLLGATE_RETURN_IF_ERROR(txn.MarkMultiKueueWinner(key, request.origin()));
        v1::MarkMultiKueueWinnerResponse response;
        TOLLGATE_ASSIGN_OR_RETURN(*response.mutable_workload(),
                                  WorkloadByKey(txn.state(), key, txn.commit_revision()));
        return response;
      });
}

absl::StatusOr<v1::WatchRequest> TollgateApi::CheckWatchChecksStart(
    const v1::WatchAdmissionChecksRequest& request) const {
  if (request.controller_name().empty()) {
    return absl::InvalidArgumentError(
        "controller_name: must name the controller whose checks to watch (an AdmissionCheck's "
        "spec.controllerName)");
  }
  v1::WatchRequest watch;
  watch.set_since_revision(request.since_revision());
  watch.set_namespace_(request.namespace_());
  watch.set_store_id(request.store_id());
  watch.set_store_epoch(request.store_epoch());
  TOLLGATE_RETURN_IF_ERROR(CheckWatchStart(watch));
  return watch;
}

absl::StatusOr<std::string> TollgateApi::AdmissionCheckController(const std::string& name) {
  return executor_.Run<std::string>(
      [&](AdmissionExecutor::Txn& txn) -> absl::StatusOr<std::string> {
        auto it = txn.state().admission_checks().find(name);
        if (it == txn.state().admission_checks().end()) {
          return absl::NotFoundError(absl::StrCat("AdmissionCheck ", name, " not found"));
        }
        return it->second.spec.controller_name;
      });
}

}  // namespace tollgate::engine
