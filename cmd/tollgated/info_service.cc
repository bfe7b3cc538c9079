#include "cmd/tollgated/info_service.h"

#include "cmd/build_info/build_info.h"
#include "services/grpc_status.h"

namespace tollgate {

grpc::Status InfoGrpcService::GetBuildInfo(grpc::ServerContext* context,
                                           const v1::GetBuildInfoRequest* request,
                                           v1::BuildInfo* response) {
  absl::StatusOr<auth::Identity> identity = gate_.Authenticate(*context);
  if (!identity.ok()) {
    auth::AccessRequest request;
    request.verb = "get";
    request.name = "BuildInfo";
    gate_.AuditUnauthenticated(request, identity.status());
    return services::ToGrpcStatus(identity.status());
  }
  const build_info::BuildInfo& info = build_info::Current();
  response->set_version(info.version);
  response->set_build_type(info.build_type);
  response->set_compiler(info.compiler);
  for (const auto& [name, version] : info.dependencies) {
    (*response->mutable_dependencies())[name] = version;
  }
  return grpc::Status::OK;
}

}  // namespace tollgate
