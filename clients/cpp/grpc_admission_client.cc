#include "clients/cpp/grpc_admission_client.h"

#include <grpcpp/client_context.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "common/file_util.h"

namespace tollgate::client {
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

// A follower replica's "not the leader" answer (see docs/ha.md): nothing was done.
bool IsFollowerAnswer(const grpc::Status& status) {
  return status.error_code() == grpc::StatusCode::UNAVAILABLE &&
         absl::StartsWith(status.error_message(), "not the leader");
}

// The call never reached a server.
bool Unreached(grpc::Channel& channel, const grpc::Status& status) {
  if (status.error_code() != grpc::StatusCode::UNAVAILABLE &&
      status.error_code() != grpc::StatusCode::DEADLINE_EXCEEDED) {
    return false;
  }
  return channel.GetState(/*try_to_connect=*/false) != GRPC_CHANNEL_READY ||
         absl::StrContains(status.error_message(), "failed to connect");
}

std::string LeaderNamedIn(const grpc::ClientContext& context) {
  const auto& trailers = context.GetServerTrailingMetadata();
  auto it = trailers.find("tollgate-leader");
  return it == trailers.end() ? "" : std::string(it->second.data(), it->second.size());
}

}  // namespace

GrpcAdmissionClient::GrpcAdmissionClient(std::shared_ptr<grpc::Channel> channel,
                                         absl::Duration call_timeout, std::string bearer_token)
    : call_timeout_(call_timeout), bearer_token_(std::move(bearer_token)) {
  endpoints_.push_back(NewEndpoint("", std::move(channel)));
}

GrpcAdmissionClient::GrpcAdmissionClient(const std::string& targets,
                                         std::shared_ptr<grpc::ChannelCredentials> credentials,
                                         absl::Duration call_timeout, std::string bearer_token)
    : call_timeout_(call_timeout),
      bearer_token_(std::move(bearer_token)),
      credentials_(std::move(credentials)) {
  for (absl::string_view target : absl::StrSplit(targets, ',', absl::SkipWhitespace())) {
    const std::string one(absl::StripAsciiWhitespace(target));
    endpoints_.push_back(NewEndpoint(one, NewChannel(one)));
  }
  if (endpoints_.empty()) endpoints_.push_back(NewEndpoint(targets, NewChannel(targets)));
}

std::shared_ptr<grpc::Channel> GrpcAdmissionClient::NewChannel(const std::string& target) const {
  grpc::ChannelArguments args;
  // Reconnect quickly after tollgated restarts; the default backoff grows to two minutes.
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 5000);
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 200);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 200);
  return grpc::CreateCustomChannel(target, credentials_, args);
}

std::unique_ptr<GrpcAdmissionClient::Endpoint> GrpcAdmissionClient::NewEndpoint(
    std::string target, std::shared_ptr<grpc::Channel> channel) const {
  auto endpoint = std::make_unique<Endpoint>();
  endpoint->target = std::move(target);
  endpoint->channel = std::move(channel);
  endpoint->admission = v1::AdmissionService::NewStub(endpoint->channel);
  endpoint->config = v1::ConfigService::NewStub(endpoint->channel);
  return endpoint;
}

GrpcAdmissionClient::Endpoint& GrpcAdmissionClient::Current() const {
  absl::MutexLock lock(&mu_);
  return *endpoints_[current_];
}

void GrpcAdmissionClient::MoveOn(const Endpoint& failed, const std::string& leader) {
  absl::MutexLock lock(&mu_);
  if (endpoints_[current_].get() != &failed) return;  // another call moved on already
  if (!leader.empty() && credentials_ != nullptr) {
    for (size_t i = 0; i < endpoints_.size(); ++i) {
      if (endpoints_[i]->target == leader) {
        current_ = i;
        return;
      }
    }
    endpoints_.push_back(NewEndpoint(leader, NewChannel(leader)));
    current_ = endpoints_.size() - 1;
    return;
  }
  current_ = (current_ + 1) % endpoints_.size();
}

template <typename Response, typename Call>
absl::StatusOr<Response> GrpcAdmissionClient::Unary(Call call) {
  // Retried elsewhere only when it certainly did nothing (see docs/ha.md); a connection lost
  // mid-call has an unknown outcome and goes back to the caller.
  const absl::Time give_up = absl::Now() + call_timeout_;
  absl::Duration pause = absl::Milliseconds(50);
  for (int attempt = 1;; ++attempt) {
    Endpoint& endpoint = Current();
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + call_timeout_));
    AddToken(context, bearer_token_);
    Response response;
    const grpc::Status status = call(endpoint, &context, &response);
    if (status.ok()) return response;
    const bool follower = IsFollowerAnswer(status);
    size_t endpoints = 0;
    {
      absl::MutexLock lock(&mu_);
      endpoints = endpoints_.size();
    }
    const bool elsewhere = follower || (endpoints > 1 && Unreached(*endpoint.channel, status));
    if (!elsewhere || absl::Now() >= give_up) return FromGrpc(status);
    const std::string leader = LeaderNamedIn(context);
    MoveOn(endpoint, leader);
    if (leader.empty() && attempt % static_cast<int>(endpoints) == 0) {
      absl::SleepFor(std::min(pause, give_up - absl::Now()));
      pause = std::min(pause * 2, absl::Seconds(1));
    }
  }
}

absl::StatusOr<std::unique_ptr<GrpcAdmissionClient>> GrpcAdmissionClient::ConnectSecure(
    const std::string& target, absl::Duration call_timeout, const ClientSecurity& security) {
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
  if (!security.ca_file.empty() || !security.cert_file.empty()) {
    grpc::SslCredentialsOptions options;
    if (!security.ca_file.empty()) {
      absl::StatusOr<std::string> ca = common::ReadFileNamedBy("CA", security.ca_file);
      if (!ca.ok()) return ca.status();
      options.pem_root_certs = *std::move(ca);
    }
    if (security.cert_file.empty() != security.key_file.empty()) {
      return absl::InvalidArgumentError(
          "a client certificate needs its key, and a key its "
          "certificate");
    }
    if (!security.cert_file.empty()) {
      absl::StatusOr<std::string> cert =
          common::ReadFileNamedBy("client certificate", security.cert_file);
      if (!cert.ok()) return cert.status();
      absl::StatusOr<std::string> key = common::ReadFileNamedBy("client key", security.key_file);
      if (!key.ok()) return key.status();
      options.pem_cert_chain = *std::move(cert);
      options.pem_private_key = *std::move(key);
    }
    credentials = grpc::SslCredentials(options);
  }
  std::string token;
  if (!security.token_file.empty()) {
    absl::StatusOr<std::string> text = common::ReadFileNamedBy("token file", security.token_file);
    if (!text.ok()) return text.status();
    token = std::string(absl::StripAsciiWhitespace(*text));
  }
  return std::make_unique<GrpcAdmissionClient>(target, credentials, call_timeout, std::move(token));
}

std::unique_ptr<GrpcAdmissionClient> GrpcAdmissionClient::Connect(const std::string& target,
                                                                  absl::Duration call_timeout) {
  return std::make_unique<GrpcAdmissionClient>(target, grpc::InsecureChannelCredentials(),
                                               call_timeout);
}

absl::StatusOr<v1::SubmitResponse> GrpcAdmissionClient::Submit(const v1::SubmitRequest& request) {
  return Unary<v1::SubmitResponse>(
      [&](Endpoint& e, auto* ctx, auto* resp) { return e.admission->Submit(ctx, request, resp); });
}

absl::StatusOr<v1::Workload> GrpcAdmissionClient::GetWorkload(const v1::WorkloadRef& ref) {
  v1::GetWorkloadRequest request;
  *request.mutable_workload() = ref;
  return Unary<v1::Workload>([&](Endpoint& e, auto* ctx, auto* resp) {
    return e.admission->GetWorkload(ctx, request, resp);
  });
}

absl::StatusOr<v1::ListWorkloadsResponse> GrpcAdmissionClient::ListWorkloads(
    const v1::ListWorkloadsRequest& request) {
  return Unary<v1::ListWorkloadsResponse>([&](Endpoint& e, auto* ctx, auto* resp) {
    return e.admission->ListWorkloads(ctx, request, resp);
  });
}

absl::StatusOr<v1::FinishResponse> GrpcAdmissionClient::Finish(const v1::FinishRequest& request) {
  return Unary<v1::FinishResponse>(
      [&](Endpoint& e, auto* ctx, auto* resp) { return e.admission->Finish(ctx, request, resp); });
}

absl::StatusOr<v1::ReportStoppedResponse> GrpcAdmissionClient::ReportStopped(
    const v1::ReportStoppedRequest& request) {
  return Unary<v1::ReportStoppedResponse>([&](Endpoint& e, auto* ctx, auto* resp) {
    return e.admission->ReportStopped(ctx, request, resp);
  });
}

absl::StatusOr<v1::ReportPodsReadyResponse> GrpcAdmissionClient::ReportPodsReady(
    const v1::ReportPodsReadyRequest& request) {
  return Unary<v1::ReportPodsReadyResponse>([&](Endpoint& e, auto* ctx, auto* resp) {
    return e.admission->ReportPodsReady(ctx, request, resp);
  });
}

absl::StatusOr<v1::ReportReclaimablePodsResponse> GrpcAdmissionClient::ReportReclaimablePods(
    const v1::ReportReclaimablePodsRequest& request) {
  return Unary<v1::ReportReclaimablePodsResponse>([&](Endpoint& e, auto* ctx, auto* resp) {
    return e.admission->ReportReclaimablePods(ctx, request, resp);
  });
}

absl::StatusOr<v1::ReportCheckpointResponse> GrpcAdmissionClient::ReportCheckpoint(
    const v1::ReportCheckpointRequest& request) {
  return Unary<v1::ReportCheckpointResponse>([&](Endpoint& e, auto* ctx, auto* resp) {
    return e.admission->ReportCheckpoint(ctx, request, resp);
  });
}

absl::Status GrpcAdmissionClient::DeleteWorkload(const v1::DeleteWorkloadRequest& request) {
  return Unary<v1::DeleteWorkloadResponse>([&](Endpoint& e, auto* ctx, auto* resp) {
           return e.admission->DeleteWorkload(ctx, request, resp);
         })
      .status();
}

absl::Status GrpcAdmissionClient::Watch(const v1::WatchRequest& request,
                                        const std::function<bool(const v1::WatchEvent&)>& on_event,
                                        const common::StopSignal& stop) {
  grpc::ClientContext context;
  AddToken(context, bearer_token_);
  const int id = stop.AddCallback([&context] { context.TryCancel(); });
  // A stream that dies moves the client on for the next one, which the caller starts (it knows
  // the revision to resume from).
  Endpoint& endpoint = Current();
  std::unique_ptr<grpc::ClientReader<v1::WatchEvent>> reader =
      endpoint.admission->Watch(&context, request);
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
  if (IsFollowerAnswer(status) || Unreached(*endpoint.channel, status) ||
      status.error_code() == grpc::StatusCode::UNAVAILABLE) {
    MoveOn(endpoint, LeaderNamedIn(context));
  }
  if (status.ok()) return absl::UnavailableError("tollgated ended the watch");
  return FromGrpc(status);
}

absl::StatusOr<v1::ConfigObject> GrpcAdmissionClient::GetObject(const v1::ObjectRef& ref) {
  v1::GetObjectRequest request;
  *request.mutable_ref() = ref;
  return Unary<v1::ConfigObject>(
      [&](Endpoint& e, auto* ctx, auto* resp) { return e.config->Get(ctx, request, resp); });
}

absl::StatusOr<v1::ListObjectsResponse> GrpcAdmissionClient::ListObjects(
    const v1::ListObjectsRequest& request) {
  return Unary<v1::ListObjectsResponse>(
      [&](Endpoint& e, auto* ctx, auto* resp) { return e.config->List(ctx, request, resp); });
}

absl::StatusOr<v1::ApplyResponse> GrpcAdmissionClient::Apply(const v1::ApplyRequest& request) {
  return Unary<v1::ApplyResponse>(
      [&](Endpoint& e, auto* ctx, auto* resp) { return e.config->Apply(ctx, request, resp); });
}

absl::Status GrpcAdmissionClient::DeleteObject(const v1::ObjectRef& ref) {
  v1::DeleteObjectRequest request;
  *request.mutable_ref() = ref;
  return Unary<v1::DeleteObjectResponse>([&](Endpoint& e, auto* ctx, auto* resp) {
           return e.config->Delete(ctx, request, resp);
         })
      .status();
}

}  // namespace tollgate::client
