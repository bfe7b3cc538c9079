#include "cmd/tollgate/cli_client.h"

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/sync_stream.h>

#include <chrono>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace tollgate::cli {
namespace {

// gRPC's connection failures carry the socket error somewhere in a long message ("failed to
// connect to all addresses; last error: UNKNOWN: ipv4:127.0.0.1:50051: Failed to connect to
// remote host: Connection refused"); users want just the cause.
std::string ConnectFailureCause(absl::string_view message) {
  const std::string lower = absl::AsciiStrToLower(message);
  struct Cause {
    absl::string_view needle;
    absl::string_view text;
  };
  static constexpr Cause kCauses[] = {
      {"connection refused", "connection refused"},
      {"dns resolution failed", "cannot resolve the host name"},
      {"name or service not known", "cannot resolve the host name"},
      {"no route to host", "no route to host"},
      {"network is unreachable", "network is unreachable"},
      {"connection reset", "connection lost"},
      {"socket closed", "connection lost"},
      {"broken pipe", "connection lost"},
      {"timed out", "connection timed out"},
      {"deadline", "connection timed out"},
  };
  for (const Cause& cause : kCauses) {
    if (absl::StrContains(lower, cause.needle)) return std::string(cause.text);
  }
  return std::string(message);
}

}  // namespace

std::string ResolveServer(absl::string_view flag_value, absl::string_view env_value) {
  if (!flag_value.empty()) return std::string(flag_value);
  if (!env_value.empty()) return std::string(env_value);
  return std::string(kDefaultServer);
}

void WatchCanceller::Cancel() {
  absl::MutexLock lock(&mu_);
  cancelled_ = true;
  if (context_ != nullptr) context_->TryCancel();
}

bool WatchCanceller::cancelled() const {
  absl::MutexLock lock(&mu_);
  return cancelled_;
}

bool WatchCanceller::Attach(grpc::ClientContext* context) {
  absl::MutexLock lock(&mu_);
  if (cancelled_) return false;
  context_ = context;
  return true;
}

void WatchCanceller::Detach() {
  // Under the lock, so Cancel never touches a context that is being destroyed.
  absl::MutexLock lock(&mu_);
  context_ = nullptr;
}

CliClient::CliClient(std::string target, absl::Duration call_timeout)
    : CliClient(std::move(target), grpc::InsecureChannelCredentials(), "", call_timeout) {}

CliClient::CliClient(std::string target, std::shared_ptr<grpc::ChannelCredentials> credentials,
                     std::string bearer_token, absl::Duration call_timeout)
    : target_(std::move(target)),
      call_timeout_(call_timeout),
      bearer_token_(std::move(bearer_token)),
      list_page_size_(kDefaultListPageSize),
      channel_(grpc::CreateChannel(target_, credentials)),
      admission_(v1::AdmissionService::NewStub(channel_)),
      config_(v1::ConfigService::NewStub(channel_)),
      visibility_(v1::VisibilityService::NewStub(channel_)),
      auth_(v1::AuthService::NewStub(channel_)),
      info_(v1::InfoService::NewStub(channel_)) {}

void CliClient::Authenticate(grpc::ClientContext& context) const {
  // Plain metadata rather than gRPC call credentials: those refuse plaintext channels, and a
  // token over loopback plaintext is a supported setup.
  if (!bearer_token_.empty()) context.AddMetadata("authorization", "Bearer " + bearer_token_);
}

absl::Status CliClient::FromGrpc(const grpc::Status& status, bool had_deadline) const {
  if (status.ok()) return absl::OkStatus();
  const grpc_connectivity_state state = channel_->GetState(/*try_to_connect=*/false);
  const bool connected = state == GRPC_CHANNEL_READY;
  const std::string& message = status.error_message();
  std::string cause;
  // The server itself answers UNAVAILABLE when its store cannot write; that one arrives over a
  // working connection and must reach the user unchanged.
  if (status.error_code() == grpc::StatusCode::UNAVAILABLE &&
      (!connected || absl::StrContains(message, "failed to connect"))) {
    cause = ConnectFailureCause(message);
  } else if (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED && had_deadline &&
             !connected) {
    cause = absl::StrCat("no answer within ", absl::FormatDuration(call_timeout_));
  }
  if (!cause.empty()) {
    return absl::UnavailableError(absl::StrCat("cannot reach tollgated at ", target_, ": ", cause,
                                               " (is tollgated running? set --server or ",
                                               kServerEnvVar, ")"));
  }
  // grpc::StatusCode and absl::StatusCode share the canonical numbering.
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), message);
}

template <typename Response, typename Request, typename Fetch, typename Append>
absl::StatusOr<Response> CliClient::Paged(const Request& request, Fetch fetch, Append append) {
  // A caller that pages itself gets exactly the page it asked for.
  if (request.limit() != 0 || !request.continue_token().empty()) return fetch(request);
  absl::Status expired;
  for (int attempt = 0; attempt < kListAttempts; ++attempt) {
    Request page = request;
    page.set_limit(list_page_size_);
    Response all;
    bool restart = false;
    while (true) {
      absl::StatusOr<Response> got = fetch(page);
      // The server could not keep the listing consistent (things changed under it): start over.
      if (absl::IsOutOfRange(got.status())) {
        expired = got.status();
        restart = true;
        break;
      }
      if (!got.ok()) return got.status();
      if (page.continue_token().empty()) all.set_revision(got->revision());
      append(all, *got);
      if (got->continue_token().empty()) break;
      page.set_continue_token(got->continue_token());
    }
    if (!restart) return all;
  }
  return absl::UnavailableError(absl::StrCat("the list kept changing while it was read (",
                                             kListAttempts,
                                             " attempts); last: ", expired.message()));
}

template <typename Response, typename Call>
absl::StatusOr<Response> CliClient::Unary(Call call) {
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + call_timeout_));
  Authenticate(context);
  Response response;
  const grpc::Status status = call(&context, &response);
  if (!status.ok()) return FromGrpc(status, /*had_deadline=*/true);
  return response;
}

absl::StatusOr<v1::SubmitResponse> CliClient::Submit(const v1::SubmitRequest& request) {
  return Unary<v1::SubmitResponse>([&](grpc::ClientContext* c, v1::SubmitResponse* r) {
    return admission_->Submit(c, request, r);
  });
}

absl::StatusOr<v1::AdmitResponse> CliClient::Admit(const v1::AdmitRequest& request) {
  return Unary<v1::AdmitResponse>([&](grpc::ClientContext* c, v1::AdmitResponse* r) {
    return admission_->Admit(c, request, r);
  });
}

absl::StatusOr<v1::PreemptResponse> CliClient::Preempt(const v1::PreemptRequest& request) {
  return Unary<v1::PreemptResponse>([&](grpc::ClientContext* c, v1::PreemptResponse* r) {
    return admission_->Preempt(c, request, r);
  });
}

absl::StatusOr<v1::ReportCheckpointResponse> CliClient::ReportCheckpoint(
    const v1::ReportCheckpointRequest& request) {
  return Unary<v1::ReportCheckpointResponse>(
      [&](grpc::ClientContext* c, v1::ReportCheckpointResponse* r) {
        return admission_->ReportCheckpoint(c, request, r);
      });
}

absl::StatusOr<v1::FinishResponse> CliClient::Finish(const v1::FinishRequest& request) {
  return Unary<v1::FinishResponse>([&](grpc::ClientContext* c, v1::FinishResponse* r) {
    return admission_->Finish(c, request, r);
  });
}

absl::StatusOr<v1::DeleteWorkloadResponse> CliClient::DeleteWorkload(
    const v1::DeleteWorkloadRequest& request) {
  return Unary<v1::DeleteWorkloadResponse>(
      [&](grpc::ClientContext* c, v1::DeleteWorkloadResponse* r) {
        return admission_->DeleteWorkload(c, request, r);
      });
}

absl::StatusOr<v1::Workload> CliClient::GetWorkload(const v1::GetWorkloadRequest& request) {
  return Unary<v1::Workload>([&](grpc::ClientContext* c, v1::Workload* r) {
    return admission_->GetWorkload(c, request, r);
  });
}

absl::StatusOr<v1::ListWorkloadsResponse> CliClient::ListWorkloads(
    const v1::ListWorkloadsRequest& request) {
  return Paged<v1::ListWorkloadsResponse>(
      request,
      [this](const v1::ListWorkloadsRequest& page) {
        return Unary<v1::ListWorkloadsResponse>(
            [&](grpc::ClientContext* c, v1::ListWorkloadsResponse* r) {
              return admission_->ListWorkloads(c, page, r);
            });
      },
      [](v1::ListWorkloadsResponse& all, v1::ListWorkloadsResponse& page) {
        for (v1::Workload& wl : *page.mutable_workloads()) all.add_workloads()->Swap(&wl);
      });
}

absl::StatusOr<v1::ApplyResponse> CliClient::Apply(const v1::ApplyRequest& request) {
  return Unary<v1::ApplyResponse>(
      [&](grpc::ClientContext* c, v1::ApplyResponse* r) { return config_->Apply(c, request, r); });
}

absl::StatusOr<v1::ConfigObject> CliClient::GetObject(const v1::GetObjectRequest& request) {
  return Unary<v1::ConfigObject>(
      [&](grpc::ClientContext* c, v1::ConfigObject* r) { return config_->Get(c, request, r); });
}

absl::StatusOr<v1::ListObjectsResponse> CliClient::ListObjects(
    const v1::ListObjectsRequest& request) {
  return Paged<v1::ListObjectsResponse>(
      request,
      [this](const v1::ListObjectsRequest& page) {
        return Unary<v1::ListObjectsResponse>(
            [&](grpc::ClientContext* c, v1::ListObjectsResponse* r) {
              return config_->List(c, page, r);
            });
      },
      [](v1::ListObjectsResponse& all, v1::ListObjectsResponse& page) {
        for (v1::ConfigObject& o : *page.mutable_objects()) all.add_objects()->Swap(&o);
      });
}

absl::StatusOr<v1::DeleteObjectResponse> CliClient::DeleteObject(
    const v1::DeleteObjectRequest& request) {
  return Unary<v1::DeleteObjectResponse>([&](grpc::ClientContext* c, v1::DeleteObjectResponse* r) {
    return config_->Delete(c, request, r);
  });
}

absl::StatusOr<v1::SetStopPolicyResponse> CliClient::SetStopPolicy(
    const v1::SetStopPolicyRequest& request) {
  return Unary<v1::SetStopPolicyResponse>(
      [&](grpc::ClientContext* c, v1::SetStopPolicyResponse* r) {
        return config_->SetStopPolicy(c, request, r);
      });
}

absl::StatusOr<v1::SetWorkloadActiveResponse> CliClient::SetWorkloadActive(
    const v1::SetWorkloadActiveRequest& request) {
  return Unary<v1::SetWorkloadActiveResponse>(
      [&](grpc::ClientContext* c, v1::SetWorkloadActiveResponse* r) {
        return admission_->SetWorkloadActive(c, request, r);
      });
}

absl::StatusOr<v1::ReprioritizeResponse> CliClient::Reprioritize(
    const v1::ReprioritizeRequest& request) {
  return Unary<v1::ReprioritizeResponse>([&](grpc::ClientContext* c, v1::ReprioritizeResponse* r) {
    return admission_->Reprioritize(c, request, r);
  });
}

absl::StatusOr<v1::BuildInfo> CliClient::GetBuildInfo() {
  return Unary<v1::BuildInfo>([&](grpc::ClientContext* c, v1::BuildInfo* r) {
    return info_->GetBuildInfo(c, v1::GetBuildInfoRequest(), r);
  });
}

absl::StatusOr<v1::ListPendingWorkloadsResponse> CliClient::ListPendingWorkloads(
    const v1::ListPendingWorkloadsRequest& request) {
  return Paged<v1::ListPendingWorkloadsResponse>(
      request,
      [this](const v1::ListPendingWorkloadsRequest& page) {
        return Unary<v1::ListPendingWorkloadsResponse>(
            [&](grpc::ClientContext* c, v1::ListPendingWorkloadsResponse* r) {
              return visibility_->ListPendingWorkloads(c, page, r);
            });
      },
      [](v1::ListPendingWorkloadsResponse& all, v1::ListPendingWorkloadsResponse& page) {
        for (v1::PendingWorkload& p : *page.mutable_items()) all.add_items()->Swap(&p);
      });
}

absl::StatusOr<v1::CohortBreakdown> CliClient::GetCohortBreakdown(
    const v1::GetCohortBreakdownRequest& request) {
  return Unary<v1::CohortBreakdown>([&](grpc::ClientContext* c, v1::CohortBreakdown* r) {
    return visibility_->GetCohortBreakdown(c, request, r);
  });
}

absl::StatusOr<v1::WhoAmIResponse> CliClient::WhoAmI(const v1::WhoAmIRequest& request) {
  return Unary<v1::WhoAmIResponse>(
      [&](grpc::ClientContext* c, v1::WhoAmIResponse* r) { return auth_->WhoAmI(c, request, r); });
}

absl::StatusOr<v1::CanIResponse> CliClient::CanI(const v1::CanIRequest& request) {
  return Unary<v1::CanIResponse>(
      [&](grpc::ClientContext* c, v1::CanIResponse* r) { return auth_->CanI(c, request, r); });
}

absl::Status CliClient::Watch(const v1::WatchRequest& request,
                              const std::function<bool(const v1::WatchEvent&)>& on_event,
                              WatchCanceller* canceller) {
  grpc::ClientContext context;
  Authenticate(context);
  if (canceller != nullptr && !canceller->Attach(&context)) return absl::OkStatus();
  std::unique_ptr<grpc::ClientReader<v1::WatchEvent>> reader = admission_->Watch(&context, request);
  v1::WatchEvent event;
  bool stopped = false;
  while (reader->Read(&event)) {
    if (!on_event(event)) {
      stopped = true;
      context.TryCancel();
      break;
    }
  }
  const grpc::Status status = reader->Finish();
  const bool cancelled = canceller != nullptr && canceller->cancelled();
  if (canceller != nullptr) canceller->Detach();
  if (stopped || cancelled) return absl::OkStatus();
  return FromGrpc(status, /*had_deadline=*/false);
}

}  // namespace tollgate::cli
