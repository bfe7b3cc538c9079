#pragma once

// The Tollgate calls an adapter makes, behind an interface so adapters are tested against a
// fake; GrpcAdmissionClient is the real one.

#include <cstdint>
#include <functional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/stop_signal.h"
#include "tollgate/v1/objects.pb.h"
#include "tollgate/v1/service.pb.h"

namespace tollgate::client {

// Errors are the service's (proto/tollgate/v1/service.proto): INVALID_ARGUMENT, NOT_FOUND,
// FAILED_PRECONDITION, ALREADY_EXISTS, and UNAVAILABLE when tollgated cannot be reached.
// Thread-safe.
class AdmissionClient {
 public:
  virtual ~AdmissionClient() = default;

  virtual absl::StatusOr<v1::SubmitResponse> Submit(const v1::SubmitRequest& request) = 0;
  virtual absl::StatusOr<v1::Workload> GetWorkload(const v1::WorkloadRef& ref) = 0;
  virtual absl::StatusOr<v1::ListWorkloadsResponse> ListWorkloads(
      const v1::ListWorkloadsRequest& request) = 0;
  virtual absl::StatusOr<v1::FinishResponse> Finish(const v1::FinishRequest& request) = 0;
  virtual absl::StatusOr<v1::ReportStoppedResponse> ReportStopped(
      const v1::ReportStoppedRequest& request) = 0;
  virtual absl::StatusOr<v1::ReportPodsReadyResponse> ReportPodsReady(
      const v1::ReportPodsReadyRequest& request) = 0;
  virtual absl::StatusOr<v1::ReportCheckpointResponse> ReportCheckpoint(
      const v1::ReportCheckpointRequest& request) = 0;
  // What a workload's job reports: bind a prebuilt workload, out of sync, hold, pods missing.
  virtual absl::StatusOr<v1::ReportJobStateResponse> ReportJobState(
      const v1::ReportJobStateRequest& request) = 0;
  virtual absl::Status DeleteWorkload(const v1::DeleteWorkloadRequest& request) = 0;
  // A new spec.payload for a workload that carries one (a pod group grown after its workload was
  // made).
  virtual absl::StatusOr<v1::UpdateWorkloadPayloadResponse> UpdateWorkloadPayload(
      const v1::UpdateWorkloadPayloadRequest& request) = 0;
  // Kueue's AdmissionGatedBy: a new value of the workload's admission gates (only removals).
  virtual absl::StatusOr<v1::SetAdmissionGatesResponse> SetAdmissionGates(
      const v1::SetAdmissionGatesRequest& request) = 0;
  // Kueue's PriorityBoost: sets or removes the workload's kueue.x-k8s.io/priority-boost.
  virtual absl::StatusOr<v1::SetPriorityBoostResponse> SetPriorityBoost(
      const v1::SetPriorityBoostRequest& request) = 0;
  virtual absl::StatusOr<v1::ReportReclaimablePodsResponse> ReportReclaimablePods(
      const v1::ReportReclaimablePodsRequest& request) = 0;
  // Streams workload changes after request.since_revision to `on_event` until it returns
  // false or `stop` fires (both OK), or the stream breaks (its status; OUT_OF_RANGE when the
  // revision has been compacted away: watch again from 0).
  virtual absl::Status Watch(const v1::WatchRequest& request,
                             const std::function<bool(const v1::WatchEvent&)>& on_event,
                             const common::StopSignal& stop) = 0;

  virtual absl::StatusOr<v1::ConfigObject> GetObject(const v1::ObjectRef& ref) = 0;
  virtual absl::StatusOr<v1::ListObjectsResponse> ListObjects(
      const v1::ListObjectsRequest& request) = 0;
  virtual absl::StatusOr<v1::ApplyResponse> Apply(const v1::ApplyRequest& request) = 0;
  virtual absl::Status DeleteObject(const v1::ObjectRef& ref) = 0;

  // AdmissionCheckService, for adapters that run a check controller (tollgate-kube's
  // ProvisioningRequest check). UNIMPLEMENTED unless the implementation supports it.
  virtual absl::Status WatchAdmissionChecks(
      const v1::WatchAdmissionChecksRequest& /*request*/,
      const std::function<bool(const v1::WatchEvent&)>& /*on_event*/,
      const common::StopSignal& /*stop*/) {
    return absl::UnimplementedError("WatchAdmissionChecks");
  }
  virtual absl::StatusOr<v1::UpdateAdmissionCheckStateResponse> UpdateAdmissionCheckState(
      const v1::UpdateAdmissionCheckStateRequest& /*request*/) {
    return absl::UnimplementedError("UpdateAdmissionCheckState");
  }
  virtual absl::StatusOr<v1::SetAdmissionCheckActiveResponse> SetAdmissionCheckActive(
      const v1::SetAdmissionCheckActiveRequest& /*request*/) {
    return absl::UnimplementedError("SetAdmissionCheckActive");
  }
  virtual absl::StatusOr<v1::SetMultiKueueClusterActiveResponse> SetMultiKueueClusterActive(
      const v1::SetMultiKueueClusterActiveRequest& /*request*/) {
    return absl::UnimplementedError("SetMultiKueueClusterActive");
  }
};

}  // namespace tollgate::client
