#pragma once

#include <memory>

#include "grpcpp/support/server_interceptor.h"
#include "metrics/metric_registry.h"

namespace tollgate::rpc {

// A gRPC server interceptor factory recording every call: tollgate_grpc_server_handled_total
// (service, method, code), tollgate_grpc_server_handling_seconds (service, method; from the
// call's start to its status) and tollgate_watch_subscribers (open Watch streams). The families
// live in `registry`, which must outlive the server. Thread-safe.
std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> MakeGrpcMetricsInterceptor(
    metrics::Registry& registry);

}  // namespace tollgate::rpc
