#include "services/ha/etcd_channel.h"

#include <arpa/inet.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/file_util.h"
#include "core/status_macros.h"

namespace tollgate::services::ha {
namespace {

bool IsIpv4Literal(absl::string_view host_port) {
  const size_t colon = host_port.rfind(':');
  if (colon == absl::string_view::npos) return false;
  const std::string host(host_port.substr(0, colon));
  in_addr addr;
  return inet_pton(AF_INET, host.c_str(), &addr) == 1;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ParseEndpoints(const std::string& flag_name,
                                                        const std::string& value) {
  std::vector<std::string> endpoints;
  for (absl::string_view one : absl::StrSplit(value, ',', absl::SkipWhitespace())) {
    one = absl::StripAsciiWhitespace(one);
    absl::ConsumePrefix(&one, "http://");
    absl::ConsumePrefix(&one, "https://");
    const size_t colon = one.rfind(':');
    if (colon == absl::string_view::npos || colon + 1 == one.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", flag_name, ": want HOST:PORT entries, got \"", one, "\""));
    }
    endpoints.emplace_back(one);
  }
  if (endpoints.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("--", flag_name, ": no endpoint given"));
  }
  return endpoints;
}

absl::StatusOr<std::shared_ptr<grpc::Channel>> NewEtcdChannel(const EtcdConnection& connection) {
  if (connection.endpoints.empty()) return absl::InvalidArgumentError("etcd: no endpoint");
  std::string target;
  bool all_ipv4 = true;
  for (const std::string& endpoint : connection.endpoints) all_ipv4 &= IsIpv4Literal(endpoint);
  if (all_ipv4) {
    target = absl::StrCat("ipv4:", absl::StrJoin(connection.endpoints, ","));
  } else if (connection.endpoints.size() == 1) {
    target = absl::StrCat("dns:///", connection.endpoints[0]);
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "etcd endpoints \"", absl::StrJoin(connection.endpoints, ","),
        "\": give IP addresses, or one DNS name that resolves to every member (a headless "
        "Service)"));
  }
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
  if (!connection.ca_file.empty() || !connection.cert_file.empty()) {
    if (connection.cert_file.empty() != connection.key_file.empty()) {
      return absl::InvalidArgumentError("--etcd-cert and --etcd-key go together");
    }
    grpc::SslCredentialsOptions ssl;
    if (!connection.ca_file.empty()) {
      TOLLGATE_ASSIGN_OR_RETURN(ssl.pem_root_certs, ReadFileToString(connection.ca_file));
    }
    if (!connection.cert_file.empty()) {
      TOLLGATE_ASSIGN_OR_RETURN(ssl.pem_cert_chain, ReadFileToString(connection.cert_file));
      TOLLGATE_ASSIGN_OR_RETURN(ssl.pem_private_key, ReadFileToString(connection.key_file));
    }
    credentials = grpc::SslCredentials(ssl);
  }
  grpc::ChannelArguments args;
  // etcd answers keepalives fast; a dead member should be noticed in about a second.
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 1000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 1000);
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  args.SetMaxReceiveMessageSize(64 << 20);
  return grpc::CreateCustomChannel(target, credentials, args);
}

}  // namespace tollgate::services::ha
