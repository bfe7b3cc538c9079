#include "cmd/tollgated/info_service.h"

#include "cmd/build_info/build_info.h"

namespace tollgate {

grpc::Status InfoGrpcService::GetBuildInfo(grpc::ServerContext* context,
                                           const v1::GetBuildInfoRequest* request,
                                           v1::BuildInfo* response) {
  const build_info::BuildInfo& info = build_info::Current();
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
  *response = configuration_;
  return grpc::Status::OK;
}

}  // namespace tollgate
