#pragma once

// How the CLI reaches tollgated and who it says it is: the server address, TLS (the CA that
// signed the server's certificate, a client certificate and key for mTLS) and a bearer token.
// Like a kubeconfig context, they can live in a config file (--config, else $TOLLGATE_CONFIG):
//
//   current-context: prod
//   contexts:
//   - name: prod
//     server: tollgate.example.com:50051
//     certificate-authority: /etc/tollgate/ca.pem
//     client-certificate: /home/me/.tollgate/me.pem   # with client-key, for mTLS
//     client-key: /home/me/.tollgate/me-key.pem
//     token-file: /home/me/.tollgate/token            # or token: ...
//
// Flags beat environment variables, which beat the config file. TLS is used when a CA or a
// client certificate is configured.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/security/credentials.h"

namespace tollgate::cli {

inline constexpr char kConfigEnvVar[] = "TOLLGATE_CONFIG";
inline constexpr char kTokenEnvVar[] = "TOLLGATE_TOKEN";

struct Connection {
  std::string server;
  std::string certificate_authority;  // PEM file
  std::string client_certificate;     // PEM file
  std::string client_key;             // PEM file
  std::string token;

  bool tls() const { return !certificate_authority.empty() || !client_certificate.empty(); }
};

// What the command line and environment say; empty means unset.
struct ConnectionInputs {
  std::string server_flag;
  std::string server_env;
  std::string config_flag;
  std::string config_env;
  std::string context_flag;
  std::string ca_flag;
  std::string cert_flag;
  std::string key_flag;
  std::string token_flag;
  std::string token_env;
};

// INVALID_ARGUMENT naming the file and field for a bad config file, an unknown context, a
// client certificate without its key; NOT_FOUND for a config file that does not exist.
absl::StatusOr<Connection> ResolveConnection(const ConnectionInputs& inputs);

// TLS credentials from the connection's PEM files (read now), or insecure ones.
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> ChannelCredentials(
    const Connection& connection);

}  // namespace tollgate::cli
