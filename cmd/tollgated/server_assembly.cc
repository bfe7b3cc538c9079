#include "cmd/tollgated/server_assembly.h"

#include <utility>
#include <vector>

#include "services/rpc/store_identity_interceptor.h"

namespace tollgate {

ServingServices::ServingServices(engine::TollgateApi& api, Options options)
    : options_(std::move(options)),
      gate_(api, *options_.clock, options_.audit_log),
      admission_(api, &gate_, options_.watch),
      config_(api, &gate_),
      visibility_(api, &gate_),
      checks_(api, admission_.mutable_watch_hub(), &gate_),
      inventory_(api, &gate_),
      auth_(gate_),
      info_(gate_, options_.described_configuration),
      admin_(gate_, options_.backup, options_.store->Identity()) {}

std::unique_ptr<ServingServices> ServingServices::Create(engine::TollgateApi& api,
                                                         Options options) {
  std::unique_ptr<ServingServices> services(new ServingServices(api, std::move(options)));
  services->gate_.Configure(std::move(services->options_.authenticators),
                            std::move(services->options_.policy));
  if (services->options_.audit_log != nullptr) {
    services->scheduler_audit_ = std::make_unique<rpc::SchedulerAudit>(api, services->gate_);
    services->scheduler_audit_->Start(services->options_.loaded_revision);
  }
  if (services->options_.observability != nullptr) {
    services->options_.observability->AddWatchHub(services->admission_.watch_hub());
  }
  return services;
}

void ServingServices::AddTo(grpc::ServerBuilder& builder) {
  builder.RegisterService(&admission_);
  builder.RegisterService(&config_);
  builder.RegisterService(&visibility_);
  builder.RegisterService(&checks_);
  builder.RegisterService(&inventory_);
  builder.RegisterService(&auth_);
  builder.RegisterService(&info_);
  builder.RegisterService(&admin_);
  // One vector: each SetInterceptorCreators call replaces the previous one.
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> interceptors;
  interceptors.push_back(rpc::NewStoreIdentityInterceptorFactory(*options_.store));
  if (options_.observability != nullptr) {
    for (auto& interceptor : options_.observability->GrpcInterceptors()) {
      interceptors.push_back(std::move(interceptor));
    }
  }
  builder.experimental().SetInterceptorCreators(std::move(interceptors));
}

}  // namespace tollgate
