#pragma once

#include <functional>
#include <string>

#include "grpcpp/generic/async_generic_service.h"
#include "grpcpp/grpcpp.h"

namespace tollgate::ha {

// What a follower replica answers to every tollgate.v1 call: UNAVAILABLE, nothing done, marked
// by the api::kNotLeaderMetadataKey trailer (what clients recognise a redirect by), with the
// leader's advertised address in the api::kLeaderMetadataKey trailer and in the message ("not
// the leader; the leader is at HOST:PORT"), so clients retry there. With no leader known (an
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

  // The status a follower answers with, for `leader` ("" for none known), and the trailers that
  // mark it as a redirect; every refusal that sends a client to the leader goes through it.
  static grpc::Status Redirect(grpc::ServerContextBase& context, const std::string& leader);

 private:
  std::function<std::string()> leader_address_;
};

}  // namespace tollgate::ha
