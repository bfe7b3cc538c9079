#pragma once

// tollgate.v1.InfoService: the running server's build, for `tollgate version`, and its effective
// scheduler configuration, for `tollgate get config`. Behind the access gate like every other
// RPC: any authenticated caller may read them (the version tells an attacker which advisories
// apply, so callers without credentials get UNAUTHENTICATED; every identity with credentials
// may, as Kubernetes lets every authenticated user read /version).

#include <grpcpp/grpcpp.h>

#include <utility>

#include "absl/strings/string_view.h"
#include "services/rpc/access_gate.h"
#include "tollgate/v1/service.grpc.pb.h"

namespace tollgate::rpc {

// Answers from common::Current() and the configuration given at construction (fixed for
// the process's life: a changed --config file takes a restart); thread-safe. `gate` must
// outlive it.
class InfoGrpcService final : public v1::InfoService::Service {
 public:
  InfoGrpcService(rpc::AccessGate& gate, v1::SchedulerConfiguration configuration)
      : gate_(gate), configuration_(std::move(configuration)) {}

  grpc::Status GetBuildInfo(grpc::ServerContext* context, const v1::GetBuildInfoRequest* request,
                            v1::BuildInfo* response) override;
  grpc::Status GetConfiguration(grpc::ServerContext* context,
                                const v1::GetConfigurationRequest* request,
                                v1::SchedulerConfiguration* response) override;

 private:
  // OK for any authenticated caller; otherwise audits the attempt on `what` and refuses.
  grpc::Status Authenticate(grpc::ServerContext& context, absl::string_view what);

  rpc::AccessGate& gate_;
  const v1::SchedulerConfiguration configuration_;
};

}  // namespace tollgate::rpc
