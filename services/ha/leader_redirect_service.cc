#include "services/ha/leader_redirect_service.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "services/api/metadata_keys.h"

namespace tollgate::ha {
namespace {

// Answers at once without reading the request: the call is refused whatever it says.
class FinishedReactor final : public grpc::ServerGenericBidiReactor {
 public:
  explicit FinishedReactor(const grpc::Status& status) { Finish(status); }
  void OnDone() override { delete this; }
};

}  // namespace

grpc::Status LeaderRedirectService::Redirect(grpc::ServerContextBase& context,
                                             const std::string& leader) {
  context.AddTrailingMetadata(api::kNotLeaderMetadataKey, "true");
  if (!leader.empty()) context.AddTrailingMetadata(api::kLeaderMetadataKey, leader);
  if (leader.empty()) {
    return grpc::Status(grpc::StatusCode::UNAVAILABLE,
                        "not the leader, and no leader is elected right now (an election is in "
                        "progress or etcd is unreachable); retry on another replica");
  }
  return grpc::Status(grpc::StatusCode::UNAVAILABLE,
                      absl::StrCat("not the leader; the leader is at ", leader));
}

grpc::ServerGenericBidiReactor* LeaderRedirectService::CreateReactor(
    grpc::GenericCallbackServerContext* context) {
  if (!absl::StartsWith(context->method(), "/tollgate.v1.")) {
    return new FinishedReactor(grpc::Status(grpc::StatusCode::UNIMPLEMENTED,
                                            absl::StrCat("unknown method ", context->method())));
  }
  return new FinishedReactor(Redirect(*context, leader_address_()));
}

}  // namespace tollgate::ha
