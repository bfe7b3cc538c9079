#include "bench/bench_credentials.h"

#include <grpcpp/security/credentials.h>
#include <grpcpp/support/client_interceptor.h>

#include <tuple>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/file_util.h"

namespace tollgate::bench {
namespace {

// Adds the bearer token to every call's initial metadata.
class TokenInterceptor : public grpc::experimental::Interceptor {
 public:
  explicit TokenInterceptor(const std::string& header) : header_(header) {}
  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::PRE_SEND_INITIAL_METADATA)) {
      methods->GetSendInitialMetadata()->insert({"authorization", header_});
    }
    methods->Proceed();
  }

 private:
  const std::string& header_;
};

class TokenInterceptorFactory : public grpc::experimental::ClientInterceptorFactoryInterface {
 public:
  explicit TokenInterceptorFactory(std::string token) : header_("Bearer " + std::move(token)) {}
  grpc::experimental::Interceptor* CreateClientInterceptor(
      grpc::experimental::ClientRpcInfo*) override {
    return new TokenInterceptor(header_);
  }

 private:
  const std::string header_;
};

}  // namespace

absl::Status LoadClientAuth(ClientAuth& auth) {
  if (auth.cert_file.empty() != auth.key_file.empty()) {
    return absl::InvalidArgumentError("--cert and --key go together");
  }
  if (!auth.cert_file.empty() && auth.ca_file.empty()) {
    return absl::InvalidArgumentError("--cert needs --ca (the server's CA) for TLS");
  }
  for (auto [flag, path, pem] : {std::tuple<const char*, const std::string*, std::string*>{
                                     "ca", &auth.ca_file, &auth.ca_pem},
                                 {"cert", &auth.cert_file, &auth.cert_pem},
                                 {"key", &auth.key_file, &auth.key_pem},
                                 {"token-file", &auth.token_file, &auth.token}}) {
    if (path->empty()) continue;
    absl::StatusOr<std::string> text = common::ReadFileNamedBy(absl::StrCat("--", flag), *path);
    if (!text.ok()) return text.status();
    *pem = *std::move(text);
  }
  if (!auth.token_file.empty()) {
    auth.token =
        std::string(absl::StripAsciiWhitespace(auth.token.substr(0, auth.token.find('\n'))));
    if (auth.token.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("--token-file=", auth.token_file, ": empty"));
    }
  }
  return absl::OkStatus();
}

std::shared_ptr<grpc::Channel> NewAuthenticatedChannel(const std::string& address,
                                                       const ClientAuth& auth,
                                                       grpc::ChannelArguments args) {
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
  if (auth.tls()) {
    grpc::SslCredentialsOptions options;
    options.pem_root_certs = auth.ca_pem;
    options.pem_cert_chain = auth.cert_pem;
    options.pem_private_key = auth.key_pem;
    credentials = grpc::SslCredentials(options);
    if (!auth.server_name.empty()) args.SetSslTargetNameOverride(auth.server_name);
  }
  if (auth.token.empty()) return grpc::CreateCustomChannel(address, credentials, args);
  std::vector<std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>> interceptors;
  interceptors.push_back(std::make_unique<TokenInterceptorFactory>(auth.token));
  return grpc::experimental::CreateCustomChannelWithInterceptors(address, credentials, args,
                                                                 std::move(interceptors));
}

}  // namespace tollgate::bench
