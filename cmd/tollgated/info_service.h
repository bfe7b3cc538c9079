#pragma once

// tollgate.v1.InfoService: the running server's build, for `tollgate version`, and its
// effective scheduler configuration, for `tollgate get config`.

#include <grpcpp/grpcpp.h>

#include <utility>

#include "tollgate/v1/service.grpc.pb.h"

namespace tollgate {

// Answers from build_info::Current() and the configuration given at construction (fixed for
// the process's life: a changed --config file takes a restart); thread-safe.
class InfoGrpcService final : public v1::InfoService::Service {
 public:
  InfoGrpcService() = default;
  explicit InfoGrpcService(v1::SchedulerConfiguration configuration)
      : configuration_(std::move(configuration)) {}

  grpc::Status GetBuildInfo(grpc::ServerContext* context, const v1::GetBuildInfoRequest* request,
                            v1::BuildInfo* response) override;
  grpc::Status GetConfiguration(grpc::ServerContext* context,
                                const v1::GetConfigurationRequest* request,
                                v1::SchedulerConfiguration* response) override;

 private:
  const v1::SchedulerConfiguration configuration_;
};

}  // namespace tollgate
