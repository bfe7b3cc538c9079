#pragma once

// tollgate.v1.InfoService: the running server's build, for `tollgate version`. Behind the access
// gate like every other RPC: any authenticated caller may read it (the version tells an attacker
// which advisories apply, so callers without credentials get UNAUTHENTICATED; every identity
// with credentials may, as Kubernetes lets every authenticated user read /version).

#include <grpcpp/grpcpp.h>

#include "services/access_gate.h"
#include "tollgate/v1/service.grpc.pb.h"

namespace tollgate {

// Answers from build_info::Current(); thread-safe. `gate` must outlive it.
class InfoGrpcService final : public v1::InfoService::Service {
 public:
  explicit InfoGrpcService(services::AccessGate& gate) : gate_(gate) {}

  grpc::Status GetBuildInfo(grpc::ServerContext* context, const v1::GetBuildInfoRequest* request,
                            v1::BuildInfo* response) override;

 private:
  services::AccessGate& gate_;
};

}  // namespace tollgate
