#pragma once

// How the benchmark driver authenticates to a secured tollgated: TLS (a CA to verify the
// server, optionally a client certificate for mTLS) and/or a bearer token (static or OIDC),
// sent on every call by a client interceptor so the calls measured are the ones a real client
// makes, authentication included.

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace tollgate::bench {

struct ClientAuth {
  std::string ca_file;    // --ca: verify the server's certificate (enables TLS)
  std::string cert_file;  // --cert / --key: client certificate (mTLS)
  std::string key_file;
  std::string token_file;   // --token-file: the bearer token, first line
  std::string server_name;  // --tls-server-name: the name to verify when it differs from the host

  // Filled by LoadClientAuth.
  std::string ca_pem, cert_pem, key_pem;
  std::string token;  // also settable directly (--token)

  bool tls() const { return !ca_file.empty(); }
};

// Reads the files named by `auth` once; INVALID_ARGUMENT / FAILED_PRECONDITION naming the flag.
absl::Status LoadClientAuth(ClientAuth& auth);

// A channel to `address` with `auth`'s credentials; `args` as for grpc::CreateCustomChannel.
std::shared_ptr<grpc::Channel> NewAuthenticatedChannel(const std::string& address,
                                                       const ClientAuth& auth,
                                                       grpc::ChannelArguments args);

}  // namespace tollgate::bench
