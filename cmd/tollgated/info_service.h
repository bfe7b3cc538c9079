#pragma once

// tollgate.v1.InfoService: the running server's build, for `tollgate version`.

#include <grpcpp/grpcpp.h>

#include "tollgate/v1/service.grpc.pb.h"

namespace tollgate {

// Answers from build_info::Current(); stateless, thread-safe.
class InfoGrpcService final : public v1::InfoService::Service {
 public:
  grpc::Status GetBuildInfo(grpc::ServerContext* context, const v1::GetBuildInfoRequest* request,
                            v1::BuildInfo* response) override;
};

}  // namespace tollgate
