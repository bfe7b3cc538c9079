#include "clients/cpp/connection.h"

#include <grpcpp/create_channel.h>
#include <grpcpp/support/client_interceptor.h>

#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "services/api/metadata_keys.h"

namespace tollgate::client {
namespace {

class TokenInterceptor : public grpc::experimental::Interceptor {
 public:
  explicit TokenInterceptor(const std::string& header) : header_(header) {}
  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::PRE_SEND_INITIAL_METADATA)) {
      methods->GetSendInitialMetadata()->insert({api::kAuthorizationMetadataKey, header_});
    }
    methods->Proceed();
  }

 private:
  // The factory's, which the channel keeps as long as any call.
  const std::string& header_;
};

class TokenInterceptorFactory : public grpc::experimental::ClientInterceptorFactoryInterface {
 public:
  explicit TokenInterceptorFactory(absl::string_view token)
      : header_(absl::StrCat("Bearer ", token)) {}
  grpc::experimental::Interceptor* CreateClientInterceptor(
      grpc::experimental::ClientRpcInfo*) override {
    return new TokenInterceptor(header_);
  }

 private:
  const std::string header_;
};

}  // namespace

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> TlsChannelCredentials(
    const std::string& ca_file, const std::string& cert_file, const std::string& key_file,
    absl::string_view role_prefix) {
  if (cert_file.empty() != key_file.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(role_prefix, "client certificate and key go together: give both or neither"));
  }
  if (ca_file.empty() && cert_file.empty()) return grpc::InsecureChannelCredentials();
  grpc::SslCredentialsOptions options;
  if (!ca_file.empty()) {
    absl::StatusOr<std::string> ca =
        common::ReadFileNamedBy(absl::StrCat(role_prefix, "CA file"), ca_file);
    if (!ca.ok()) return ca.status();
    options.pem_root_certs = *std::move(ca);
  }
  if (!cert_file.empty()) {
    absl::StatusOr<std::string> cert =
        common::ReadFileNamedBy(absl::StrCat(role_prefix, "client certificate"), cert_file);
    if (!cert.ok()) return cert.status();
    absl::StatusOr<std::string> key =
        common::ReadFileNamedBy(absl::StrCat(role_prefix, "client key"), key_file);
    if (!key.ok()) return key.status();
    options.pem_cert_chain = *std::move(cert);
    options.pem_private_key = *std::move(key);
  }
  return grpc::SslCredentials(options);
}

absl::StatusOr<Credentials> LoadCredentials(const ConnectionFiles& files) {
  Credentials credentials;
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> channel =
      TlsChannelCredentials(files.ca_file, files.cert_file, files.key_file);
  if (!channel.ok()) return channel.status();
  credentials.channel = *std::move(channel);
  if (!files.token_file.empty()) {
    absl::StatusOr<std::string> text = common::ReadFileNamedBy("token file", files.token_file);
    if (!text.ok()) return text.status();
    const absl::string_view first_line = absl::string_view(*text).substr(0, text->find('\n'));
    credentials.bearer_token = std::string(absl::StripAsciiWhitespace(first_line));
    if (credentials.bearer_token.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("token file ", files.token_file, ": the file is empty"));
    }
  }
  return credentials;
}

std::shared_ptr<grpc::Channel> NewChannel(const std::string& target, const Credentials& credentials,
                                          grpc::ChannelArguments args) {
  if (!credentials.tls_server_name.empty()) {
    args.SetSslTargetNameOverride(credentials.tls_server_name);
  }
  if (credentials.bearer_token.empty()) {
    return grpc::CreateCustomChannel(target, credentials.channel, args);
  }
  std::vector<std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>> interceptors;
  interceptors.push_back(std::make_unique<TokenInterceptorFactory>(credentials.bearer_token));
  return grpc::experimental::CreateCustomChannelWithInterceptors(target, credentials.channel, args,
                                                                 std::move(interceptors));
}

}  // namespace tollgate::client
