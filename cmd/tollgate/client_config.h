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
#include "absl/strings/string_view.h"
#include "clients/cpp/connection.h"

namespace tollgate::cli {

inline constexpr absl::string_view kDefaultServer = "127.0.0.1:50051";
inline constexpr absl::string_view kServerEnvVar = "TOLLGATE_SERVER";
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

// The client core's credentials: TLS from the connection's PEM files (read now), or insecure
// ones, and the bearer token.
absl::StatusOr<client::Credentials> CredentialsFor(const Connection& connection);

// Which tollgated to talk to: the --server flag, else $TOLLGATE_SERVER, else kDefaultServer.
std::string ResolveServer(absl::string_view flag_value, absl::string_view env_value);

}  // namespace tollgate::cli
