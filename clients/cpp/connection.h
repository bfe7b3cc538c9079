#pragma once

// How a client reaches tollgated and who it says it is (docs/security.md): the one place PEM
// and token files become gRPC credentials, and the one way a bearer token rides on calls. Used
// by the CLI, tollgate-kube, the bench tools, and (for its TLS) the etcd client.

#include <grpcpp/channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/channel_arguments.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tollgate::client {

// Files that say how to connect. Empty fields are unused; TLS is on when a CA or a client
// certificate is given (a client certificate needs its key, and a key its certificate).
struct ConnectionFiles {
  std::string ca_file;    // the CA that signed the server's certificate
  std::string cert_file;  // a client certificate (mTLS)
  std::string key_file;
  std::string token_file;  // a bearer token (its first line; a mounted Secret, say)
};

struct Credentials {
  // TLS, or insecure (plaintext) when no TLS file was given.
  std::shared_ptr<grpc::ChannelCredentials> channel = grpc::InsecureChannelCredentials();
  // Sent as `authorization: Bearer TOKEN` on every call when not empty.
  std::string bearer_token;
  // The name the server's certificate must carry, when it differs from the target's host.
  std::string tls_server_name;
};

// TLS credentials from PEM files, or insecure ones when `ca_file` and `cert_file` are empty.
// Errors name the file and its role, prefixed with `role_prefix` ("etcd " gives "etcd CA file
// /x: ...").
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> TlsChannelCredentials(
    const std::string& ca_file, const std::string& cert_file, const std::string& key_file,
    absl::string_view role_prefix = "");

// Reads every file of `files` now.
absl::StatusOr<Credentials> LoadCredentials(const ConnectionFiles& files);

// A channel to one `target` (HOST:PORT) with `credentials`; the bearer token is added to every
// call by an interceptor, as plain metadata rather than gRPC call credentials (those refuse
// plaintext channels, and a token over loopback plaintext is a supported setup). `args` as for
// grpc::CreateCustomChannel.
std::shared_ptr<grpc::Channel> NewChannel(const std::string& target, const Credentials& credentials,
                                          grpc::ChannelArguments args = {});

}  // namespace tollgate::client
