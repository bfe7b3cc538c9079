#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "grpcpp/grpcpp.h"

namespace tollgate::services::ha {

// How to reach an etcd cluster.
struct EtcdConnection {
  // HOST:PORT of each member: IP literals (any number), or one DNS name that resolves to the
  // members (a headless Service). gRPC fails over between the addresses.
  std::vector<std::string> endpoints;
  // PEM files; all empty: plaintext. ca alone: server-authenticated TLS; cert and key: mTLS.
  std::string ca_file;
  std::string cert_file;
  std::string key_file;
};

// Splits "a:1,b:2" into endpoints; INVALID_ARGUMENT naming the flag for an empty list or an
// entry without a port.
absl::StatusOr<std::vector<std::string>> ParseEndpoints(const std::string& flag_name,
                                                        const std::string& value);

// One channel over every endpoint. INVALID_ARGUMENT for several DNS names (gRPC resolves one
// name to many addresses, not many names) and for unreadable PEM files.
absl::StatusOr<std::shared_ptr<grpc::Channel>> NewEtcdChannel(const EtcdConnection& connection);

}  // namespace tollgate::services::ha
