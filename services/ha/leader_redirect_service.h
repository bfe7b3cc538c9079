#pragma once

#include <functional>
#include <string>

#include "grpcpp/generic/async_generic_service.h"
#include "grpcpp/grpcpp.h"

namespace tollgate::ha {

// The trailing metadata key a follower names the leader's address under.
inline constexpr char kLeaderMetadataKey[] = "tollgate-leader";

// What a follower replica answers to every tollgate.v1 call: UNAVAILABLE, nothing done, with the
// leader's advertised address in the message ("not the leader; the leader is at HOST:PORT") and
// in the `tollgate-leader` trailing metadata, so clients retry there. With no leader known (an
// election in progress, etcd unreachable) the message says so and clients try another replica.
// Any other unknown method stays UNIMPLEMENTED. Registered as the server's generic service, it
// sees only methods no registered service claims. Thread-safe.
class LeaderRedirectService final : public grpc::CallbackGenericService {
 public:
  // Returns the leader's address, or "" when no leader is known; called once per call.
  explicit LeaderRedirectService(std::function<std::string()> leader_address)
      : leader_address_(std::move(leader_address)) {}

  grpc::ServerGenericBidiReactor* CreateReactor(
      grpc::GenericCallbackServerContext* context) override;

  // The status a follower answers with, for `leader` ("" for none known).
  static grpc::Status RedirectStatus(const std::string& leader);

 private:
  std::function<std::string()> leader_address_;
};

}  // namespace tollgate::ha
