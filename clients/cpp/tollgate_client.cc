#include "clients/cpp/tollgate_client.h"

#include <grpcpp/security/credentials.h>
#include <grpcpp/support/sync_stream.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "services/api/metadata_keys.h"

namespace tollgate::client {
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

ClientOptions AdapterClientOptions(absl::Duration call_timeout) {
  ClientOptions options;
  options.call_timeout = call_timeout;
  options.quick_reconnect = true;
  return options;
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

TollgateClient::TollgateClient(std::string target, Credentials credentials, Options options)
    : target_(std::move(target)),
      credentials_(std::move(credentials)),
      options_(std::move(options)) {
  for (absl::string_view one : absl::StrSplit(target_, ',', absl::SkipWhitespace())) {
    endpoints_.push_back(NewEndpoint(std::string(absl::StripAsciiWhitespace(one))));
  }
  if (endpoints_.empty()) endpoints_.push_back(NewEndpoint(target_));
}

TollgateClient::TollgateClient(std::string target, absl::Duration call_timeout)
    : TollgateClient(std::move(target), Credentials(), [call_timeout] {
        Options options;
        options.call_timeout = call_timeout;
        return options;
      }()) {}

void TollgateClient::NoteStale(const std::multimap<grpc::string_ref, grpc::string_ref>& metadata) {
  auto revision = metadata.find(api::kStaleRevisionMetadataKey);
  if (revision == metadata.end() || !options_.on_stale || warned_stale_.exchange(true)) return;
  auto reason = metadata.find(api::kStaleReasonMetadataKey);
  options_.on_stale(absl::string_view(revision->second.data(), revision->second.size()),
                    reason == metadata.end()
                        ? absl::string_view()
                        : absl::string_view(reason->second.data(), reason->second.size()));
}

std::unique_ptr<TollgateClient::Endpoint> TollgateClient::NewEndpoint(std::string target) const {
  auto endpoint = std::make_unique<Endpoint>();
  endpoint->target = std::move(target);
  grpc::ChannelArguments args;
  if (options_.quick_reconnect) {
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 5000);
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 200);
    args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 200);
  }
  endpoint->channel = NewChannel(endpoint->target, credentials_, std::move(args));
  endpoint->admission = v1::AdmissionService::NewStub(endpoint->channel);
  endpoint->config = v1::ConfigService::NewStub(endpoint->channel);
  endpoint->visibility = v1::VisibilityService::NewStub(endpoint->channel);
  endpoint->auth = v1::AuthService::NewStub(endpoint->channel);
  endpoint->info = v1::InfoService::NewStub(endpoint->channel);
  endpoint->admin = v1::AdminService::NewStub(endpoint->channel);
  endpoint->checks = v1::AdmissionCheckService::NewStub(endpoint->channel);
  endpoint->inventory = v1::InventoryService::NewStub(endpoint->channel);
  return endpoint;
}

TollgateClient::Endpoint& TollgateClient::Current() const {
  absl::MutexLock lock(&mu_);
  return *endpoints_[current_];
}

std::optional<std::string> TollgateClient::NextEndpoint(const Endpoint& failed,
                                                        const std::string& leader) {
  absl::MutexLock lock(&mu_);
  if (endpoints_[current_].get() != &failed) return std::nullopt;  // another call moved on
  if (!leader.empty()) {
    for (size_t i = 0; i < endpoints_.size(); ++i) {
      if (endpoints_[i]->target == leader) {
        current_ = i;
        return leader;
      }
    }
    // The leader advertises an address the user did not list: follow it all the same.
    endpoints_.push_back(NewEndpoint(leader));
    current_ = endpoints_.size() - 1;
    return leader;
  }
  current_ = (current_ + 1) % endpoints_.size();
  return endpoints_[current_]->target;
}

absl::Status TollgateClient::FromGrpc(const Endpoint& endpoint, const grpc::Status& status,
                                      bool had_deadline) const {
  if (status.ok()) return absl::OkStatus();
  if (!Unreached(endpoint, status, had_deadline)) {
    // grpc::StatusCode and absl::StatusCode share the canonical numbering.
    return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
  }
  const std::string cause =
      status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED
          ? absl::StrCat("no answer within ", absl::FormatDuration(options_.call_timeout))
          : ConnectFailureCause(status.error_message());
  if (options_.unreachable_hint.empty()) {
    return absl::UnavailableError(
        absl::StrCat("cannot reach tollgated at ", endpoint.target, ": ", cause));
  }
  return absl::UnavailableError(absl::StrCat("cannot reach tollgated at ", endpoint.target, ": ",
                                             cause, " (", options_.unreachable_hint, ")"));
}

bool TollgateClient::Unreached(const Endpoint& endpoint, const grpc::Status& status,
                               bool had_deadline) {
  const grpc_connectivity_state state = endpoint.channel->GetState(/*try_to_connect=*/false);
  const bool connected = state == GRPC_CHANNEL_READY;
  // The server itself answers UNAVAILABLE when its store cannot write; that one arrives over a
  // working connection and must reach the user unchanged.
  if (status.error_code() == grpc::StatusCode::UNAVAILABLE) {
    return !connected || absl::StrContains(status.error_message(), "failed to connect");
  }
  return status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED && had_deadline && !connected;
}

std::string TollgateClient::RedirectedTo(const grpc::ClientContext& context,
                                         const grpc::Status& status) {
  if (status.error_code() != grpc::StatusCode::UNAVAILABLE) return "";
  const auto& trailers = context.GetServerTrailingMetadata();
  auto it = trailers.find(api::kLeaderMetadataKey);
  if (it != trailers.end()) return std::string(it->second.data(), it->second.size());
  return "";
}

bool TollgateClient::IsFollowerAnswer(const grpc::ClientContext& context,
                                      const grpc::Status& status) {
  return status.error_code() == grpc::StatusCode::UNAVAILABLE &&
         context.GetServerTrailingMetadata().count(api::kNotLeaderMetadataKey) > 0;
}

template <typename Response, typename Request, typename Fetch, typename Append>
absl::StatusOr<Response> TollgateClient::Paged(const Request& request, Fetch fetch, Append append) {
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
absl::StatusOr<Response> TollgateClient::Unary(Call call) {
  // A call is tried again elsewhere only when it certainly did nothing: the replica could not be
  // reached, or it answered that it is not the leader. Anything else (including a connection
  // lost mid-call, whose outcome is unknown) goes back to the caller as it is.
  const absl::Time give_up = absl::Now() + options_.call_timeout;
  absl::Duration pause = absl::Milliseconds(50);
  for (int attempt = 0;; ++attempt) {
    Endpoint& endpoint = Current();
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + options_.call_timeout));
    Response response;
    const grpc::Status status = call(endpoint, &context, &response);
    if (status.ok()) {
      NoteStale(context.GetServerTrailingMetadata());
      return response;
    }
    const bool follower = IsFollowerAnswer(context, status);
    const bool elsewhere = follower || Unreached(endpoint, status, /*had_deadline=*/true);
    size_t endpoints = 0;
    {
      absl::MutexLock lock(&mu_);
      endpoints = endpoints_.size();
    }
    if (!elsewhere || (endpoints == 1 && !follower) || absl::Now() >= give_up) {
      return FromGrpc(endpoint, status, /*had_deadline=*/true);
    }
    const std::string leader = RedirectedTo(context, status);
    NextEndpoint(endpoint, leader);
    // Every replica tried and none leads yet (an election in progress): wait a little before
    // the next round rather than spin.
    if (leader.empty() && attempt + 1 >= static_cast<int>(endpoints)) {
      absl::SleepFor(std::min(pause, give_up - absl::Now()));
      pause = std::min(pause * 2, absl::Seconds(1));
    }
  }
}

absl::StatusOr<v1::SubmitResponse> TollgateClient::Submit(const v1::SubmitRequest& request) {
  return Unary<v1::SubmitResponse>([&](Endpoint& e, grpc::ClientContext* c, v1::SubmitResponse* r) {
    return e.admission->Submit(c, request, r);
  });
}

absl::StatusOr<v1::AdmitResponse> TollgateClient::Admit(const v1::AdmitRequest& request) {
  return Unary<v1::AdmitResponse>([&](Endpoint& e, grpc::ClientContext* c, v1::AdmitResponse* r) {
    return e.admission->Admit(c, request, r);
  });
}

absl::StatusOr<v1::PreemptResponse> TollgateClient::Preempt(const v1::PreemptRequest& request) {
  return Unary<v1::PreemptResponse>(
      [&](Endpoint& e, grpc::ClientContext* c, v1::PreemptResponse* r) {
        return e.admission->Preempt(c, request, r);
      });
}

absl::StatusOr<v1::ReportCheckpointResponse> TollgateClient::ReportCheckpoint(
    const v1::ReportCheckpointRequest& request) {
  return Unary<v1::ReportCheckpointResponse>(
      [&](Endpoint& e, grpc::ClientContext* c, v1::ReportCheckpointResponse* r) {
        return e.admission->ReportCheckpoint(c, request, r);
      });
}

absl::StatusOr<v1::FinishResponse> TollgateClient::Finish(const v1::FinishRequest& request) {
  return Unary<v1::FinishResponse>([&](Endpoint& e, grpc::ClientContext* c, v1::FinishResponse* r) {
    return e.admission->Finish(c, request, r);
  });
}

absl::StatusOr<v1::ReportStoppedResponse> TollgateClient::ReportStopped(
    const v1::ReportStoppedRequest& request) {
  return Unary<v1::ReportStoppedResponse>(
      [&](Endpoint& e, grpc::ClientContext* c, v1::ReportStoppedResponse* r) {
        return e.admission->ReportStopped(c, request, r);
      });
}

absl::StatusOr<v1::ReportPodsReadyResponse> TollgateClient::ReportPodsReady(
    const v1::ReportPodsReadyRequest& request) {
  return Unary<v1::ReportPodsReadyResponse>(
      [&](Endpoint& e, grpc::ClientContext* c, v1::ReportPodsReadyResponse* r) {
        return e.admission->ReportPodsReady(c, request, r);
      });
}

absl::StatusOr<v1::DeleteWorkloadResponse> TollgateClient::DeleteWorkload(
    const v1::DeleteWorkloadRequest& request) {
  return Unary<v1::DeleteWorkloadResponse>(
      [&](Endpoint& e, grpc::ClientContext* c, v1::DeleteWorkloadResponse* r) {
        return e.admission->DeleteWorkload(c, request, r);
      });
}

absl::StatusOr<v1::ReportReclaimablePodsResponse> TollgateClient::ReportReclaimablePods(
    const v1::ReportReclaimablePodsRequest& request) {
  return Unary<v1::ReportReclaimablePodsResponse>(
      [&](Endpoint& e, grpc::ClientContext* c, v1::ReportReclaimablePodsResponse* r) {
        return e.admission->ReportReclaimablePods(c, request, r);
      });
}

absl::StatusOr<v1::ReportJobStateResponse> TollgateClient::ReportJobState(
    const v1::ReportJobStateRequest& request) {
  return Unary<v1::ReportJobStateResponse>(
      [&](Endpoint& e, grpc::ClientContext* c, v1::ReportJobStateResponse* r) {
        return e.admission->ReportJobState(c, request, r);
      });
}

absl::StatusOr<v1::UpdateWorkloadPayloadResponse> TollgateClient::UpdateWorkloadPayload(
    const v1::UpdateWorkloadPayloadRequest& request) {
  return Unary<v1::UpdateWorkloadPayloadResponse>(
      [&](Endpoint& e, grpc::ClientContext* c, v1::UpdateWorkloadPayloadResponse* r) {
        return e.admission->UpdateWorkloadPayload(c, request, r);
      });
}

absl::StatusOr<v1::SetAdmissionGatesResponse> TollgateClient::SetAdmissionGates(
    const v1::SetAdmissionGatesRequest& request) {
  return Unary<v1::SetAdmissionGatesResponse>(
      [&](Endpoint& e, grpc::ClientContext* c, v1::SetAdmissionGatesResponse* r) {
        return e.admission->SetAdmissionGates(c, request, r);
      });
}

absl::StatusOr<v1::SetPriorityBoostResponse> TollgateClient::SetPriorityBoost(
    const v1::SetPriorityBoostRequest& request) {
  return Unary<v1::SetPriorityBoostResponse>(
      [&](Endpoint& e, grpc::ClientContext* c, v1::SetPriorityBoostResponse* r) {
        return e.admission->SetPriorityBoost(c, request, r);
      });
}

absl::StatusOr<v1::Workload> TollgateClient::GetWorkload(const v1::GetWorkloadRequest& request) {
  return Unary<v1::Workload>([&](Endpoint& e, grpc::ClientContext* c, v1::Workload* r) {
    return e.admission->GetWorkload(c, request, r);
  });
}

absl::StatusOr<v1::ListWorkloadsResponse> TollgateClient::ListWorkloads(
    const v1::ListWorkloadsRequest& request) {
  return Paged<v1::ListWorkloadsResponse>(
      request,
      [this](const v1::ListWorkloadsRequest& page) {
        return Unary<v1::ListWorkloadsResponse>(
            [&](Endpoint& e, grpc::ClientContext* c, v1::ListWorkloadsResponse* r) {
              return e.admission->ListWorkloads(c, page, r);
            });
      },
      [](v1::ListWorkloadsResponse& all, v1::ListWorkloadsResponse& page) {
        for (v1::Workload& wl : *page.mutable_workloads()) all.add_workloads()->Swap(&wl);
      });
}

absl::StatusOr<v1::ApplyResponse> TollgateClient::Apply(const v1::ApplyRequest& request) {
  return Unary<v1::ApplyResponse>([&](Endpoint& e, grpc::ClientContext* c, v1::ApplyResponse* r) {
    return e.config->Apply(c, request, r);
  });
}

absl::StatusOr<v1::ConfigObject> TollgateClient::GetObject(const v1::GetObjectRequest& request) {
  return Unary<v1::ConfigObject>([&](Endpoint& e, grpc::ClientContext* c, v1::ConfigObject* r) {
    return e.config->Get(c, request, r);
  });
}

absl::StatusOr<v1::ListObjectsResponse> TollgateClient::ListObjects(
    const v1::ListObjectsRequest& request) {
  return Paged<v1::ListObjectsResponse>(
      request,
      [this](const v1::ListObjectsRequest& page) {
        return Unary<v1::ListObjectsResponse>(
            [&](Endpoint& e, grpc::ClientContext* c, v1::ListObjectsResponse* r) {
              return e.config->List(c, page, r);
            });
      },
      [](v1::ListObjectsResponse& all, v1::ListObjectsResponse& page) {
        for (v1::ConfigObject& o : *page.mutable_objects()) all.add_objects()->Swap(&o);
      });
}

absl::StatusOr<v1::DeleteObjectResponse> TollgateClient::DeleteObject(
    const v1::DeleteObjectRequest& request) {
  return Unary<v1::DeleteObjectResponse>(
      [&](Endpoint& e, grpc::ClientContext* c, v1::DeleteObjectResponse* r) {
        return e.config->Delete(c, request, r);
      });
}

absl::StatusOr<v1::SetStopPolicyResponse> TollgateClient::SetStopPolicy(
    const v1::SetStopPolicyRequest& request) {
  return Unary<v1::SetStopPolicyResponse>(
      [&](Endpoint& e, grpc::ClientContext* c, v1::SetStopPolicyResponse* r) {
        return e.config->SetStopPolicy(c, request, r);
      });
}

absl::StatusOr<v1::SetWorkloadActiveResponse> TollgateClient::SetWorkloadActive(
    const v1::SetWorkloadActiveRequest& request) {
  return Unary<v1::SetWorkloadActiveResponse>(
      [&](Endpoint& e, grpc::ClientContext* c, v1::SetWorkloadActiveResponse* r) {
        return e.admission->SetWorkloadActive(c, request, r);
      });
}

absl::StatusOr<v1::ReprioritizeResponse> TollgateClient::Reprioritize(
    const v1::ReprioritizeRequest& request) {
  return Unary<v1::ReprioritizeResponse>(
      [&](Endpoint& e, grpc::ClientContext* c, v1::ReprioritizeResponse* r) {
        return e.admission->Reprioritize(c, request, r);
      });
}

absl::StatusOr<v1::UpdateAdmissionCheckStateResponse> TollgateClient::UpdateAdmissionCheckState(
    const v1::UpdateAdmissionCheckStateRequest& request) {
  return Unary<v1::UpdateAdmissionCheckStateResponse>(
      [&](Endpoint& e, grpc::ClientContext* c, v1::UpdateAdmissionCheckStateResponse* r) {
        return e.checks->UpdateAdmissionCheckState(c, request, r);
      });
}

absl::StatusOr<v1::SetAdmissionCheckActiveResponse> TollgateClient::SetAdmissionCheckActive(
    const v1::SetAdmissionCheckActiveRequest& request) {
  return Unary<v1::SetAdmissionCheckActiveResponse>(
      [&](Endpoint& e, grpc::ClientContext* c, v1::SetAdmissionCheckActiveResponse* r) {
        return e.checks->SetAdmissionCheckActive(c, request, r);
      });
}

absl::StatusOr<v1::SetMultiKueueClusterActiveResponse> TollgateClient::SetMultiKueueClusterActive(
    const v1::SetMultiKueueClusterActiveRequest& request) {
  return Unary<v1::SetMultiKueueClusterActiveResponse>(
      [&](Endpoint& e, grpc::ClientContext* c, v1::SetMultiKueueClusterActiveResponse* r) {
        return e.checks->SetMultiKueueClusterActive(c, request, r);
      });
}

absl::StatusOr<v1::MarkMultiKueueWinnerResponse> TollgateClient::MarkMultiKueueWinner(
    const v1::MarkMultiKueueWinnerRequest& request) {
  return Unary<v1::MarkMultiKueueWinnerResponse>(
      [&](Endpoint& e, grpc::ClientContext* c, v1::MarkMultiKueueWinnerResponse* r) {
        return e.checks->MarkMultiKueueWinner(c, request, r);
      });
}

absl::StatusOr<v1::BuildInfo> TollgateClient::GetBuildInfo() {
  return Unary<v1::BuildInfo>([&](Endpoint& e, grpc::ClientContext* c, v1::BuildInfo* r) {
    return e.info->GetBuildInfo(c, v1::GetBuildInfoRequest(), r);
  });
}

absl::StatusOr<v1::SchedulerConfiguration> TollgateClient::GetConfiguration() {
  return Unary<v1::SchedulerConfiguration>(
      [&](Endpoint& e, grpc::ClientContext* c, v1::SchedulerConfiguration* r) {
        return e.info->GetConfiguration(c, v1::GetConfigurationRequest(), r);
      });
}

absl::StatusOr<v1::BackupResponse> TollgateClient::Backup(const v1::BackupRequest& request) {
  return Unary<v1::BackupResponse>([&](Endpoint& e, grpc::ClientContext* c, v1::BackupResponse* r) {
    return e.admin->Backup(c, request, r);
  });
}

absl::StatusOr<v1::UpsertNodesResponse> TollgateClient::UpsertNodes(
    const v1::UpsertNodesRequest& request) {
  return Unary<v1::UpsertNodesResponse>(
      [&](Endpoint& e, grpc::ClientContext* c, v1::UpsertNodesResponse* r) {
        return e.inventory->UpsertNodes(c, request, r);
      });
}

absl::StatusOr<v1::DeleteNodeResponse> TollgateClient::DeleteNode(
    const v1::DeleteNodeRequest& request) {
  return Unary<v1::DeleteNodeResponse>(
      [&](Endpoint& e, grpc::ClientContext* c, v1::DeleteNodeResponse* r) {
        return e.inventory->DeleteNode(c, request, r);
      });
}

absl::StatusOr<v1::ReportPodsResponse> TollgateClient::ReportPods(
    const v1::ReportPodsRequest& request) {
  return Unary<v1::ReportPodsResponse>(
      [&](Endpoint& e, grpc::ClientContext* c, v1::ReportPodsResponse* r) {
        return e.inventory->ReportPods(c, request, r);
      });
}

absl::StatusOr<v1::ListNodesResponse> TollgateClient::ListNodes(
    const v1::ListNodesRequest& request) {
  return Unary<v1::ListNodesResponse>(
      [&](Endpoint& e, grpc::ClientContext* c, v1::ListNodesResponse* r) {
        return e.inventory->ListNodes(c, request, r);
      });
}

absl::StatusOr<v1::NodeDetails> TollgateClient::GetNode(const v1::GetNodeRequest& request) {
  return Unary<v1::NodeDetails>([&](Endpoint& e, grpc::ClientContext* c, v1::NodeDetails* r) {
    return e.inventory->GetNode(c, request, r);
  });
}

absl::StatusOr<v1::GetTopologyUsageResponse> TollgateClient::GetTopologyUsage(
    const v1::GetTopologyUsageRequest& request) {
  return Unary<v1::GetTopologyUsageResponse>(
      [&](Endpoint& e, grpc::ClientContext* c, v1::GetTopologyUsageResponse* r) {
        return e.inventory->GetTopologyUsage(c, request, r);
      });
}

absl::StatusOr<v1::ListPendingWorkloadsResponse> TollgateClient::ListPendingWorkloads(
    const v1::ListPendingWorkloadsRequest& request) {
  return Paged<v1::ListPendingWorkloadsResponse>(
      request,
      [this](const v1::ListPendingWorkloadsRequest& page) {
        return Unary<v1::ListPendingWorkloadsResponse>(
            [&](Endpoint& e, grpc::ClientContext* c, v1::ListPendingWorkloadsResponse* r) {
              return e.visibility->ListPendingWorkloads(c, page, r);
            });
      },
      [](v1::ListPendingWorkloadsResponse& all, v1::ListPendingWorkloadsResponse& page) {
        for (v1::PendingWorkload& p : *page.mutable_items()) all.add_items()->Swap(&p);
      });
}

absl::StatusOr<v1::CohortBreakdown> TollgateClient::GetCohortBreakdown(
    const v1::GetCohortBreakdownRequest& request) {
  return Unary<v1::CohortBreakdown>(
      [&](Endpoint& e, grpc::ClientContext* c, v1::CohortBreakdown* r) {
        return e.visibility->GetCohortBreakdown(c, request, r);
      });
}

absl::StatusOr<v1::WhoAmIResponse> TollgateClient::WhoAmI(const v1::WhoAmIRequest& request) {
  return Unary<v1::WhoAmIResponse>([&](Endpoint& e, grpc::ClientContext* c, v1::WhoAmIResponse* r) {
    return e.auth->WhoAmI(c, request, r);
  });
}

absl::StatusOr<v1::CanIResponse> TollgateClient::CanI(const v1::CanIRequest& request) {
  return Unary<v1::CanIResponse>([&](Endpoint& e, grpc::ClientContext* c, v1::CanIResponse* r) {
    return e.auth->CanI(c, request, r);
  });
}

absl::Status TollgateClient::Watch(const v1::WatchRequest& request,
                                   const std::function<bool(const v1::WatchEvent&)>& on_event,
                                   WatchCanceller* canceller) {
  return Stream(
      request.since_revision(),
      [&request](Endpoint& endpoint, grpc::ClientContext* context) {
        return endpoint.admission->Watch(context, request);
      },
      on_event, canceller);
}

absl::Status TollgateClient::WatchAdmissionChecks(
    const v1::WatchAdmissionChecksRequest& request,
    const std::function<bool(const v1::WatchEvent&)>& on_event, WatchCanceller* canceller) {
  return Stream(
      request.since_revision(),
      [&request](Endpoint& endpoint, grpc::ClientContext* context) {
        return endpoint.checks->WatchAdmissionChecks(context, request);
      },
      on_event, canceller);
}

template <typename Open>
absl::Status TollgateClient::Stream(int64_t since_revision, Open open,
                                    const std::function<bool(const v1::WatchEvent&)>& on_event,
                                    WatchCanceller* canceller) {
  const absl::Time give_up = absl::Now() + options_.call_timeout;
  for (int attempt = 0;; ++attempt) {
    Endpoint& endpoint = Current();
    grpc::ClientContext context;
    // A follower behind the revision resumed from waits for its copy (or redirects) rather than
    // refuse the watch as ahead of its store (docs/ha.md, "Follower reads").
    if (since_revision > 0) {
      context.AddMetadata(api::kMinRevisionMetadataKey, absl::StrCat(since_revision));
    }
    if (canceller != nullptr && !canceller->Attach(&context)) return absl::OkStatus();
    std::unique_ptr<grpc::ClientReader<v1::WatchEvent>> reader = open(endpoint, &context);
    v1::WatchEvent event;
    bool stopped = false;
    bool received = false;
    while (reader->Read(&event)) {
      if (!received) NoteStale(context.GetServerInitialMetadata());
      received = true;
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
    // Only a stream that never started moves to another replica: once events arrived, the
    // caller decides where to resume from.
    const bool elsewhere = !received && (IsFollowerAnswer(context, status) ||
                                         Unreached(endpoint, status, /*had_deadline=*/false));
    if (!elsewhere || absl::Now() >= give_up) {
      return FromGrpc(endpoint, status, /*had_deadline=*/false);
    }
    NextEndpoint(endpoint, RedirectedTo(context, status));
    if (attempt > 0) absl::SleepFor(absl::Milliseconds(100));
  }
}

}  // namespace tollgate::client
