#include "clients/cpp/grpc_admission_client.h"

#include <utility>

namespace tollgate::client {

GrpcAdmissionClient::GrpcAdmissionClient(const std::string& target, Credentials credentials,
                                         absl::Duration call_timeout)
    : client_(target, std::move(credentials), AdapterClientOptions(call_timeout)) {}

absl::StatusOr<std::unique_ptr<GrpcAdmissionClient>> GrpcAdmissionClient::Connect(
    const std::string& target, absl::Duration call_timeout, const ConnectionFiles& files) {
  absl::StatusOr<Credentials> credentials = LoadCredentials(files);
  if (!credentials.ok()) return credentials.status();
  return std::make_unique<GrpcAdmissionClient>(target, *std::move(credentials), call_timeout);
}

absl::StatusOr<v1::SubmitResponse> GrpcAdmissionClient::Submit(const v1::SubmitRequest& request) {
  return client_.Submit(request);
}

absl::StatusOr<v1::Workload> GrpcAdmissionClient::GetWorkload(const v1::WorkloadRef& ref) {
  v1::GetWorkloadRequest request;
  *request.mutable_workload() = ref;
  return client_.GetWorkload(request);
}

absl::StatusOr<v1::ListWorkloadsResponse> GrpcAdmissionClient::ListWorkloads(
    const v1::ListWorkloadsRequest& request) {
  return client_.ListWorkloads(request);
}

absl::StatusOr<v1::FinishResponse> GrpcAdmissionClient::Finish(const v1::FinishRequest& request) {
  return client_.Finish(request);
}

absl::StatusOr<v1::ReportStoppedResponse> GrpcAdmissionClient::ReportStopped(
    const v1::ReportStoppedRequest& request) {
  return client_.ReportStopped(request);
}

absl::StatusOr<v1::ReportPodsReadyResponse> GrpcAdmissionClient::ReportPodsReady(
    const v1::ReportPodsReadyRequest& request) {
  return client_.ReportPodsReady(request);
}

absl::StatusOr<v1::ReportReclaimablePodsResponse> GrpcAdmissionClient::ReportReclaimablePods(
    const v1::ReportReclaimablePodsRequest& request) {
  return client_.ReportReclaimablePods(request);
}

absl::StatusOr<v1::ReportCheckpointResponse> GrpcAdmissionClient::ReportCheckpoint(
    const v1::ReportCheckpointRequest& request) {
  return client_.ReportCheckpoint(request);
}

absl::StatusOr<v1::UpdateWorkloadPayloadResponse> GrpcAdmissionClient::UpdateWorkloadPayload(
    const v1::UpdateWorkloadPayloadRequest& request) {
  return client_.UpdateWorkloadPayload(request);
}

absl::StatusOr<v1::SetAdmissionGatesResponse> GrpcAdmissionClient::SetAdmissionGates(
    const v1::SetAdmissionGatesRequest& request) {
  return client_.SetAdmissionGates(request);
}

absl::StatusOr<v1::SetPriorityBoostResponse> GrpcAdmissionClient::SetPriorityBoost(
    const v1::SetPriorityBoostRequest& request) {
  return client_.SetPriorityBoost(request);
}

absl::StatusOr<v1::ReportJobStateResponse> GrpcAdmissionClient::ReportJobState(
    const v1::ReportJobStateRequest& request) {
  return client_.ReportJobState(request);
}

absl::Status GrpcAdmissionClient::DeleteWorkload(const v1::DeleteWorkloadRequest& request) {
  return client_.DeleteWorkload(request).status();
}

namespace {

// Runs `watch(on_event, canceller)` until the caller or `stop` ends it; a stream the server
// ended is UNAVAILABLE so the caller resumes from its revision.
template <typename WatchCall>
absl::Status StoppableWatch(WatchCall watch,
                            const std::function<bool(const v1::WatchEvent&)>& on_event,
                            const common::StopSignal& stop) {
  WatchCanceller canceller;
  const int id = stop.AddCallback([&canceller] { canceller.Cancel(); });
  bool ended_by_caller = false;
  absl::Status status = watch(
      [&](const v1::WatchEvent& event) {
        if (on_event(event)) return true;
        ended_by_caller = true;
        return false;
      },
      &canceller);
  stop.RemoveCallback(id);
  if (ended_by_caller || stop.stopped()) return absl::OkStatus();
  if (status.ok()) return absl::UnavailableError("tollgated ended the watch");
  return status;
}

}  // namespace

absl::Status GrpcAdmissionClient::Watch(const v1::WatchRequest& request,
                                        const std::function<bool(const v1::WatchEvent&)>& on_event,
                                        const common::StopSignal& stop) {
  return StoppableWatch(
      [&](const std::function<bool(const v1::WatchEvent&)>& forward, WatchCanceller* canceller) {
        return client_.Watch(request, forward, canceller);
      },
      on_event, stop);
}

absl::Status GrpcAdmissionClient::WatchAdmissionChecks(
    const v1::WatchAdmissionChecksRequest& request,
    const std::function<bool(const v1::WatchEvent&)>& on_event, const common::StopSignal& stop) {
  return StoppableWatch(
      [&](const std::function<bool(const v1::WatchEvent&)>& forward, WatchCanceller* canceller) {
        return client_.WatchAdmissionChecks(request, forward, canceller);
      },
      on_event, stop);
}

absl::StatusOr<v1::UpdateAdmissionCheckStateResponse>
GrpcAdmissionClient::UpdateAdmissionCheckState(
    const v1::UpdateAdmissionCheckStateRequest& request) {
  return client_.UpdateAdmissionCheckState(request);
}

absl::StatusOr<v1::SetMultiKueueClusterActiveResponse>
GrpcAdmissionClient::SetMultiKueueClusterActive(
    const v1::SetMultiKueueClusterActiveRequest& request) {
  return client_.SetMultiKueueClusterActive(request);
}

absl::StatusOr<v1::SetAdmissionCheckActiveResponse> GrpcAdmissionClient::SetAdmissionCheckActive(
    const v1::SetAdmissionCheckActiveRequest& request) {
  return client_.SetAdmissionCheckActive(request);
}

absl::StatusOr<v1::ConfigObject> GrpcAdmissionClient::GetObject(const v1::ObjectRef& ref) {
  v1::GetObjectRequest request;
  *request.mutable_ref() = ref;
  return client_.GetObject(request);
}

absl::StatusOr<v1::ListObjectsResponse> GrpcAdmissionClient::ListObjects(
    const v1::ListObjectsRequest& request) {
  return client_.ListObjects(request);
}

absl::StatusOr<v1::ApplyResponse> GrpcAdmissionClient::Apply(const v1::ApplyRequest& request) {
  return client_.Apply(request);
}

absl::Status GrpcAdmissionClient::DeleteObject(const v1::ObjectRef& ref) {
  v1::DeleteObjectRequest request;
  *request.mutable_ref() = ref;
  return client_.DeleteObject(request).status();
}

}  // namespace tollgate::client
