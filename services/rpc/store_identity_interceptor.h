#pragma once

#include <memory>

#include "grpcpp/support/server_interceptor.h"
#include "storage/store.h"

namespace tollgate::rpc {

// Response headers (initial metadata) naming the store every answer comes from, so a client
// that lists and then watches can pass the identity its revision belongs to
// (WatchRequest.store_id / store_epoch) and be told to re-list instead of going blind when the
// store was replaced or restored.

// Creates an interceptor per call that adds both headers to every RPC's response. The store
// must outlive the server. Thread-safe.
std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
NewStoreIdentityInterceptorFactory(const storage::Store& store);

}  // namespace tollgate::rpc
