#include "services/rpc/info_service.h"

#include <string>

#include "common/build_info.h"
#include "services/rpc/grpc_status.h"

namespace tollgate::rpc {

grpc::Status InfoGrpcService::Authenticate(grpc::ServerContext& context, absl::string_view what) {
  absl::StatusOr<auth::Identity> identity = gate_.Authenticate(context);
  if (identity.ok()) return grpc::Status::OK;
  auth::AccessRequest request;
  request.verb = "get";
  request.name = std::string(what);
  gate_.AuditUnauthenticated(request, identity.status());
  return rpc::ToGrpcStatus(identity.status());
}

grpc::Status InfoGrpcService::GetBuildInfo(grpc::ServerContext* context,
                                           const v1::GetBuildInfoRequest* request,
                                           v1::BuildInfo* response) {
  if (grpc::Status status = Authenticate(*context, "BuildInfo"); !status.ok()) return status;
  const common::BuildInfo& info = common::Current();
  response->set_version(info.version);
  response->set_build_type(info.build_type);
  response->set_compiler(info.compiler);
  for (const auto& [name, version] : info.dependencies) {
    (*response->mutable_dependencies())[name] = version;
  }
  return grpc::Status::OK;
}

grpc::Status InfoGrpcService::GetConfiguration(grpc::ServerContext* context,
                                               const v1::GetConfigurationRequest* request,
                                               v1::SchedulerConfiguration* response) {
  if (grpc::Status status = Authenticate(*context, "Configuration"); !status.ok()) return status;
  *response = configuration_;
  return grpc::Status::OK;
}

}  // namespace tollgate::rpc
