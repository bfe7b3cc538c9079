#include "services/rpc/store_identity_interceptor.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "services/api/metadata_keys.h"

namespace tollgate::rpc {
namespace {

class StoreIdentityInterceptor final : public grpc::experimental::Interceptor {
 public:
  explicit StoreIdentityInterceptor(const storage::Store& store) : store_(store) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::PRE_SEND_INITIAL_METADATA)) {
      // Read per call: the epoch is fixed while serving, but this keeps the header honest if
      // that ever changes.
      const storage::StoreIdentity identity = store_.Identity();
      std::multimap<std::string, std::string>* metadata = methods->GetSendInitialMetadata();
      metadata->emplace(api::kStoreIdMetadataKey, identity.store_id);
      metadata->emplace(api::kStoreEpochMetadataKey, absl::StrCat(identity.epoch));
    }
    methods->Proceed();
  }

 private:
  const storage::Store& store_;
};

class StoreIdentityInterceptorFactory final
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit StoreIdentityInterceptorFactory(const storage::Store& store) : store_(store) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* /*info*/) override {
    return new StoreIdentityInterceptor(store_);
  }

 private:
  const storage::Store& store_;
};

}  // namespace

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
NewStoreIdentityInterceptorFactory(const storage::Store& store) {
  return std::make_unique<StoreIdentityInterceptorFactory>(store);
}

}  // namespace tollgate::rpc
