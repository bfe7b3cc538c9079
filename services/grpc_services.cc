#include "services/grpc_services.h"

#include <cstdint>
#include <utility>

#include "absl/strings/str_cat.h"
#include "services/grpc_status.h"

namespace tollgate::services {
namespace {

template <typename T>
grpc::Status Reply(absl::StatusOr<T> result, T* response) {
  if (!result.ok()) return ToGrpcStatus(result.status());
  *response = *std::move(result);
  return grpc::Status::OK;
}

}  // namespace

grpc::ServerUnaryReactor* AdmissionGrpcService::Submit(grpc::CallbackServerContext* context,
                                                       const v1::SubmitRequest* request,
                                                       v1::SubmitResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  api_.SubmitAsync(*request, [reactor, response](absl::StatusOr<v1::SubmitResponse> result) {
    reactor->Finish(Reply(std::move(result), response));
  });
  return reactor;
}

grpc::Status AdmissionGrpcService::Admit(grpc::ServerContext* context,
                                         const v1::AdmitRequest* request,
                                         v1::AdmitResponse* response) {
  return Reply(api_.Admit(*request), response);
}

grpc::Status AdmissionGrpcService::Preempt(grpc::ServerContext* context,
                                           const v1::PreemptRequest* request,
                                           v1::PreemptResponse* response) {
  return Reply(api_.Preempt(*request), response);
}

grpc::ServerUnaryReactor* AdmissionGrpcService::Finish(grpc::CallbackServerContext* context,
                                                       const v1::FinishRequest* request,
                                                       v1::FinishResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  api_.FinishAsync(*request, [reactor, response](absl::StatusOr<v1::FinishResponse> result) {
    reactor->Finish(Reply(std::move(result), response));
  });
  return reactor;
}

grpc::Status AdmissionGrpcService::ReportStopped(grpc::ServerContext* context,
                                                 const v1::ReportStoppedRequest* request,
                                                 v1::ReportStoppedResponse* response) {
  return Reply(api_.ReportStopped(*request), response);
}

grpc::Status AdmissionGrpcService::ReportPodsReady(grpc::ServerContext* context,
                                                   const v1::ReportPodsReadyRequest* request,
                                                   v1::ReportPodsReadyResponse* response) {
  return Reply(api_.ReportPodsReady(*request), response);
}

grpc::Status AdmissionGrpcService::ReportCheckpoint(grpc::ServerContext* context,
                                                    const v1::ReportCheckpointRequest* request,
                                                    v1::ReportCheckpointResponse* response) {
  return Reply(api_.ReportCheckpoint(*request), response);
}

grpc::Status AdmissionGrpcService::DeleteWorkload(grpc::ServerContext* context,
                                                  const v1::DeleteWorkloadRequest* request,
                                                  v1::DeleteWorkloadResponse* response) {
  return Reply(api_.DeleteWorkload(*request), response);
}

grpc::Status AdmissionGrpcService::GetWorkload(grpc::ServerContext* context,
                                               const v1::GetWorkloadRequest* request,
                                               v1::Workload* response) {
  return Reply(api_.GetWorkload(*request), response);
}

grpc::Status AdmissionGrpcService::ListWorkloads(grpc::ServerContext* context,
                                                 const v1::ListWorkloadsRequest* request,
                                                 v1::ListWorkloadsResponse* response) {
  return Reply(api_.ListWorkloads(*request), response);
}

grpc::ServerWriteReactor<v1::WatchEvent>* AdmissionGrpcService::Watch(
    grpc::CallbackServerContext* context, const v1::WatchRequest* request) {
  return watch_hub_.Start(context, *request, api_.CheckWatchStart(*request));
}

grpc::Status ConfigGrpcService::Apply(grpc::ServerContext* context, const v1::ApplyRequest* request,
                                      v1::ApplyResponse* response) {
  return Reply(api_.Apply(*request), response);
}

grpc::Status ConfigGrpcService::Get(grpc::ServerContext* context,
                                    const v1::GetObjectRequest* request,
                                    v1::ConfigObject* response) {
  return Reply(api_.GetObject(*request), response);
}

grpc::Status ConfigGrpcService::List(grpc::ServerContext* context,
                                     const v1::ListObjectsRequest* request,
                                     v1::ListObjectsResponse* response) {
  return Reply(api_.ListObjects(*request), response);
}

grpc::Status ConfigGrpcService::Delete(grpc::ServerContext* context,
                                       const v1::DeleteObjectRequest* request,
                                       v1::DeleteObjectResponse* response) {
  return Reply(api_.DeleteObject(*request), response);
}

grpc::Status VisibilityGrpcService::ListPendingWorkloads(
    grpc::ServerContext* context, const v1::ListPendingWorkloadsRequest* request,
    v1::ListPendingWorkloadsResponse* response) {
  return Reply(api_.ListPendingWorkloads(*request), response);
}

}  // namespace tollgate::services
