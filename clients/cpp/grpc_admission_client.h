#pragma once

#include <functional>
#include <memory>
#include <string>

#include "absl/time/time.h"
#include "clients/cpp/admission_client.h"
#include "clients/cpp/connection.h"
#include "clients/cpp/tollgate_client.h"

namespace tollgate::client {

// AdmissionClient over tollgated's gRPC API: the calls an adapter makes, through the shared
// TollgateClient (replicas, following the leader, status mapping; docs/ha.md). Unary calls get
// `call_timeout` as deadline; Watch has none and is ended through its StopSignal. Connecting is
// lazy, so constructing never fails and a tollgated that is down yields UNAVAILABLE per call.
// Thread-safe.
class GrpcAdmissionClient final : public AdmissionClient {
 public:
  // `target`: HOST:PORT, or several separated by commas for a replicated tollgated.
  GrpcAdmissionClient(const std::string& target, Credentials credentials,
                      absl::Duration call_timeout);
  // With the credentials `files` name (read now; errors name a file that cannot be read).
  static absl::StatusOr<std::unique_ptr<GrpcAdmissionClient>> Connect(
      const std::string& target, absl::Duration call_timeout, const ConnectionFiles& files = {});

  absl::StatusOr<v1::SubmitResponse> Submit(const v1::SubmitRequest& request) override;
  absl::StatusOr<v1::Workload> GetWorkload(const v1::WorkloadRef& ref) override;
  absl::StatusOr<v1::ListWorkloadsResponse> ListWorkloads(
      const v1::ListWorkloadsRequest& request) override;
  absl::StatusOr<v1::FinishResponse> Finish(const v1::FinishRequest& request) override;
  absl::StatusOr<v1::ReportStoppedResponse> ReportStopped(
      const v1::ReportStoppedRequest& request) override;
  absl::StatusOr<v1::ReportPodsReadyResponse> ReportPodsReady(
      const v1::ReportPodsReadyRequest& request) override;
  absl::StatusOr<v1::ReportCheckpointResponse> ReportCheckpoint(
      const v1::ReportCheckpointRequest& request) override;
  absl::StatusOr<v1::ReportJobStateResponse> ReportJobState(
      const v1::ReportJobStateRequest& request) override;
  absl::Status DeleteWorkload(const v1::DeleteWorkloadRequest& request) override;
  absl::StatusOr<v1::UpdateWorkloadPayloadResponse> UpdateWorkloadPayload(
      const v1::UpdateWorkloadPayloadRequest& request) override;
  absl::StatusOr<v1::SetAdmissionGatesResponse> SetAdmissionGates(
      const v1::SetAdmissionGatesRequest& request) override;
  absl::StatusOr<v1::SetPriorityBoostResponse> SetPriorityBoost(
      const v1::SetPriorityBoostRequest& request) override;
  absl::StatusOr<v1::ReportReclaimablePodsResponse> ReportReclaimablePods(
      const v1::ReportReclaimablePodsRequest& request) override;
  // A stream tollgated ends by itself is UNAVAILABLE, so the caller watches again from its
  // revision.
  absl::Status Watch(const v1::WatchRequest& request,
                     const std::function<bool(const v1::WatchEvent&)>& on_event,
                     const common::StopSignal& stop) override;

  absl::StatusOr<v1::ConfigObject> GetObject(const v1::ObjectRef& ref) override;
  absl::StatusOr<v1::ListObjectsResponse> ListObjects(
      const v1::ListObjectsRequest& request) override;
  absl::StatusOr<v1::ApplyResponse> Apply(const v1::ApplyRequest& request) override;
  absl::Status DeleteObject(const v1::ObjectRef& ref) override;

  // Ended streams are UNAVAILABLE, as with Watch.
  absl::Status WatchAdmissionChecks(const v1::WatchAdmissionChecksRequest& request,
                                    const std::function<bool(const v1::WatchEvent&)>& on_event,
                                    const common::StopSignal& stop) override;
  absl::StatusOr<v1::UpdateAdmissionCheckStateResponse> UpdateAdmissionCheckState(
      const v1::UpdateAdmissionCheckStateRequest& request) override;
  absl::StatusOr<v1::SetAdmissionCheckActiveResponse> SetAdmissionCheckActive(
      const v1::SetAdmissionCheckActiveRequest& request) override;
  absl::StatusOr<v1::SetMultiKueueClusterActiveResponse> SetMultiKueueClusterActive(
      const v1::SetMultiKueueClusterActiveRequest& request) override;

 private:
  TollgateClient client_;
};

}  // namespace tollgate::client
