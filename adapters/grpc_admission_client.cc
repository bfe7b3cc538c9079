#include "adapters/grpc_admission_client.h"

#include <grpcpp/client_context.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace tollgate::adapters {
namespace {

// grpc::StatusCode and absl::StatusCode share the canonical numbering.
absl::Status FromGrpc(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
}

// Sent as plain metadata, not gRPC call credentials: those refuse plaintext channels, and a
// token over loopback plaintext is a supported setup.
void AddToken(grpc::ClientContext& context, const std::string& token) {
  if (!token.empty()) context.AddMetadata("authorization", "Bearer " + token);
}

absl::StatusOr<std::string> ReadPem(absl::string_view what, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(what, " ", path, ": cannot open"));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

template <typename Response, typename Call>
absl::StatusOr<Response> Unary(absl::Duration timeout, const std::string& token, Call call) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + absl::ToChronoMilliseconds(timeout));
  AddToken(context, token);
  Response response;
  const grpc::Status status = call(&context, &response);
  if (!status.ok()) return FromGrpc(status);
  return response;
}

}  // namespace

GrpcAdmissionClient::GrpcAdmissionClient(std::shared_ptr<grpc::Channel> channel,
                                         absl::Duration call_timeout, std::string bearer_token)
    : channel_(std::move(channel)),
      admission_(v1::AdmissionService::NewStub(channel_)),
      config_(v1::ConfigService::NewStub(channel_)),
      call_timeout_(call_timeout),
      bearer_token_(std::move(bearer_token)) {}

absl::StatusOr<std::unique_ptr<GrpcAdmissionClient>> GrpcAdmissionClient::ConnectSecure(
    const std::string& target, absl::Duration call_timeout, const ClientSecurity& security) {
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
  if (!security.ca_file.empty() || !security.cert_file.empty()) {
    grpc::SslCredentialsOptions options;
    if (!security.ca_file.empty()) {
      absl::StatusOr<std::string> ca = ReadPem("CA", security.ca_file);
      if (!ca.ok()) return ca.status();
      options.pem_root_certs = *std::move(ca);
    }
    if (security.cert_file.empty() != security.key_file.empty()) {
      return absl::InvalidArgumentError(
          "a client certificate needs its key, and a key its "
          "certificate");
    }
    if (!security.cert_file.empty()) {
      absl::StatusOr<std::string> cert = ReadPem("client certificate", security.cert_file);
      if (!cert.ok()) return cert.status();
      absl::StatusOr<std::string> key = ReadPem("client key", security.key_file);
      if (!key.ok()) return key.status();
      options.pem_cert_chain = *std::move(cert);
      options.pem_private_key = *std::move(key);
    }
    credentials = grpc::SslCredentials(options);
  }
  std::string token;
  if (!security.token_file.empty()) {
    absl::StatusOr<std::string> text = ReadPem("token file", security.token_file);
    if (!text.ok()) return text.status();
    token = std::string(absl::StripAsciiWhitespace(*text));
  }
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 5000);
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 200);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 200);
  return std::make_unique<GrpcAdmissionClient>(grpc::CreateCustomChannel(target, credentials, args),
                                               call_timeout, std::move(token));
}

std::unique_ptr<GrpcAdmissionClient> GrpcAdmissionClient::Connect(const std::string& target,
                                                                  absl::Duration call_timeout) {
  grpc::ChannelArguments args;
  // Reconnect quickly after tollgated restarts; the default backoff grows to two minutes.
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 5000);
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 200);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 200);
  return std::make_unique<GrpcAdmissionClient>(
      grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args), call_timeout);
}

absl::StatusOr<v1::SubmitResponse> GrpcAdmissionClient::Submit(const v1::SubmitRequest& request) {
  return Unary<v1::SubmitResponse>(call_timeout_, bearer_token_, [&](auto* ctx, auto* resp) {
    return admission_->Submit(ctx, request, resp);
  });
}

absl::StatusOr<v1::Workload> GrpcAdmissionClient::GetWorkload(const v1::WorkloadRef& ref) {
  v1::GetWorkloadRequest request;
  *request.mutable_workload() = ref;
  return Unary<v1::Workload>(call_timeout_, bearer_token_, [&](auto* ctx, auto* resp) {
    return admission_->GetWorkload(ctx, request, resp);
  });
}

absl::StatusOr<v1::ListWorkloadsResponse> GrpcAdmissionClient::ListWorkloads(
    const v1::ListWorkloadsRequest& request) {
  return Unary<v1::ListWorkloadsResponse>(call_timeout_, bearer_token_, [&](auto* ctx, auto* resp) {
    return admission_->ListWorkloads(ctx, request, resp);
  });
}

absl::StatusOr<v1::FinishResponse> GrpcAdmissionClient::Finish(const v1::FinishRequest& request) {
  return Unary<v1::FinishResponse>(call_timeout_, bearer_token_, [&](auto* ctx, auto* resp) {
    return admission_->Finish(ctx, request, resp);
  });
}

absl::StatusOr<v1::ReportStoppedResponse> GrpcAdmissionClient::ReportStopped(
    const v1::ReportStoppedRequest& request) {
  return Unary<v1::ReportStoppedResponse>(call_timeout_, bearer_token_, [&](auto* ctx, auto* resp) {
    return admission_->ReportStopped(ctx, request, resp);
  });
}

absl::StatusOr<v1::ReportPodsReadyResponse> GrpcAdmissionClient::ReportPodsReady(
    const v1::ReportPodsReadyRequest& request) {
  return Unary<v1::ReportPodsReadyResponse>(
      call_timeout_, bearer_token_,
      [&](auto* ctx, auto* resp) { return admission_->ReportPodsReady(ctx, request, resp); });
}

absl::StatusOr<v1::ReportCheckpointResponse> GrpcAdmissionClient::ReportCheckpoint(
    const v1::ReportCheckpointRequest& request) {
  return Unary<v1::ReportCheckpointResponse>(
      call_timeout_, bearer_token_,
      [&](auto* ctx, auto* resp) { return admission_->ReportCheckpoint(ctx, request, resp); });
}

absl::Status GrpcAdmissionClient::DeleteWorkload(const v1::DeleteWorkloadRequest& request) {
  return Unary<v1::DeleteWorkloadResponse>(
             call_timeout_, bearer_token_,
             [&](auto* ctx, auto* resp) { return admission_->DeleteWorkload(ctx, request, resp); })
      .status();
}

absl::Status GrpcAdmissionClient::Watch(const v1::WatchRequest& request,
                                        const std::function<bool(const v1::WatchEvent&)>& on_event,
                                        const StopSignal& stop) {
  grpc::ClientContext context;
  AddToken(context, bearer_token_);
  const int id = stop.AddCallback([&context] { context.TryCancel(); });
  std::unique_ptr<grpc::ClientReader<v1::WatchEvent>> reader = admission_->Watch(&context, request);
  v1::WatchEvent event;
  bool ended_by_us = false;
  while (reader->Read(&event)) {
    if (!on_event(event)) {
      ended_by_us = true;
      context.TryCancel();
      break;
    }
  }
  const grpc::Status status = reader->Finish();
  stop.RemoveCallback(id);
  if (ended_by_us || stop.stopped()) return absl::OkStatus();
  if (status.ok()) return absl::UnavailableError("tollgated ended the watch");
  return FromGrpc(status);
}

absl::StatusOr<v1::ConfigObject> GrpcAdmissionClient::GetObject(const v1::ObjectRef& ref) {
  v1::GetObjectRequest request;
  *request.mutable_ref() = ref;
  return Unary<v1::ConfigObject>(call_timeout_, bearer_token_, [&](auto* ctx, auto* resp) {
    return config_->Get(ctx, request, resp);
  });
}

absl::StatusOr<v1::ListObjectsResponse> GrpcAdmissionClient::ListObjects(
    const v1::ListObjectsRequest& request) {
  return Unary<v1::ListObjectsResponse>(call_timeout_, bearer_token_, [&](auto* ctx, auto* resp) {
    return config_->List(ctx, request, resp);
  });
}

absl::StatusOr<v1::ApplyResponse> GrpcAdmissionClient::Apply(const v1::ApplyRequest& request) {
  return Unary<v1::ApplyResponse>(call_timeout_, bearer_token_, [&](auto* ctx, auto* resp) {
    return config_->Apply(ctx, request, resp);
  });
}

absl::Status GrpcAdmissionClient::DeleteObject(const v1::ObjectRef& ref) {
  v1::DeleteObjectRequest request;
  *request.mutable_ref() = ref;
  return Unary<v1::DeleteObjectResponse>(
             call_timeout_, bearer_token_,
             [&](auto* ctx, auto* resp) { return config_->Delete(ctx, request, resp); })
      .status();
}

}  // namespace tollgate::adapters
