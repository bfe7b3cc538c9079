#pragma once

#include "absl/status/status.h"
#include "grpcpp/support/status.h"

namespace tollgate::rpc {

// The one place an absl::Status becomes a grpc::Status: the code is mapped and the message kept
// unchanged, so clients see the field path and value the service named.
grpc::Status ToGrpcStatus(const absl::Status& status);

}  // namespace tollgate::rpc
