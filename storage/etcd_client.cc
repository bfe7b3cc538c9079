#include "storage/etcd_client.h"

#include <algorithm>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "clients/cpp/connection.h"
#include "common/file_util.h"
#include "common/host_port.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"

namespace tollgate::storage {
namespace {

// A failure that says nothing about the request, only about the member or the connection: the
// next endpoint may serve it.
bool IsConnectionError(const grpc::Status& status) {
  return status.error_code() == grpc::StatusCode::UNAVAILABLE ||
         status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED;
}

bool IsStatusMessage(const grpc::Status& status, grpc::StatusCode code, absl::string_view text) {
  return status.error_code() == code && absl::StrContains(status.error_message(), text);
}

std::string StripScheme(absl::string_view endpoint) {
  for (absl::string_view scheme : {"https://", "http://"}) {
    if (absl::StartsWith(endpoint, scheme)) return std::string(endpoint.substr(scheme.size()));
  }
  return std::string(endpoint);
}

}  // namespace

std::string EtcdPrefixEnd(absl::string_view prefix) {
  std::string end(prefix);
  while (!end.empty() && static_cast<uint8_t>(end.back()) == 0xff) end.pop_back();
  if (end.empty()) return std::string(1, '\0');
  end.back() = static_cast<char>(static_cast<uint8_t>(end.back()) + 1);
  return end;
}

absl::StatusOr<std::vector<std::string>> ParseEtcdEndpoints(absl::string_view comma_separated) {
  std::vector<std::string> endpoints;
  for (absl::string_view part : absl::StrSplit(comma_separated, ',')) {
    part = absl::StripAsciiWhitespace(part);
    const bool known_scheme = !absl::StrContains(part, "://") ||
                              absl::StartsWith(part, "http://") ||
                              absl::StartsWith(part, "https://");
    if (part.empty() || !known_scheme ||
        !common::ParseHostPort(StripScheme(part), "etcd endpoint", /*allow_port_zero=*/false)
             .ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "etcd endpoints: \"", part, "\" is not host:port (or http[s]://host:port) in \"",
          comma_separated, "\""));
    }
    endpoints.emplace_back(part);
  }
  return endpoints;
}

absl::Status EtcdStatus(const grpc::Status& status, absl::string_view what,
                        absl::string_view endpoint) {
  const std::string message =
      absl::StrCat(what, " at etcd ", endpoint, ": ", status.error_message());
  switch (status.error_code()) {
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return absl::UnavailableError(absl::StrCat(message, " (no answer in time)"));
    default:
      return absl::Status(static_cast<absl::StatusCode>(status.error_code()), message);
  }
}

bool IsStaleEtcdToken(const grpc::Status& status) {
  // etcd's ErrGRPCInvalidAuthToken (expired, or unknown to the member), ErrGRPCAuthOldRevision
  // (issued before a change to users or roles) and ErrGRPCUserEmpty (no token at all). All are
  // refused before anything applies.
  return status.error_code() == grpc::StatusCode::UNAUTHENTICATED ||
         IsStatusMessage(status, grpc::StatusCode::INVALID_ARGUMENT,
                         "revision of auth store is old") ||
         IsStatusMessage(status, grpc::StatusCode::INVALID_ARGUMENT, "user name is empty");
}

absl::StatusOr<std::unique_ptr<EtcdClient>> EtcdClient::Connect(
    const EtcdConnectionOptions& options) {
  if (options.endpoints.empty()) {
    return absl::InvalidArgumentError("etcd endpoints: at least one host:port is required");
  }
  if (options.cert_file.empty() != options.key_file.empty()) {
    return absl::InvalidArgumentError(
        "etcd TLS: the client certificate and key files go together (got only one)");
  }
  if (options.rpc_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat("etcd rpc_timeout must be positive, got ",
                                                   absl::FormatDuration(options.rpc_timeout)));
  }
  if (!options.user.empty() && options.password.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("etcd user \"", options.user, "\": the password is empty"));
  }
  if (options.user.empty() && !options.password.empty()) {
    return absl::InvalidArgumentError("etcd password given without a user");
  }
  bool tls = !options.ca_file.empty() || !options.cert_file.empty();
  for (const std::string& endpoint : options.endpoints) {
    if (absl::StartsWith(endpoint, "https://")) tls = true;
  }
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
  if (tls) {
    // An https:// endpoint with no file given verifies etcd against the system's roots.
    if (options.ca_file.empty() && options.cert_file.empty()) {
      credentials = grpc::SslCredentials(grpc::SslCredentialsOptions());
    } else {
      absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> files =
          client::TlsChannelCredentials(options.ca_file, options.cert_file, options.key_file,
                                        "etcd ");
      if (!files.ok()) return files.status();
      credentials = *std::move(files);
    }
  }
  std::unique_ptr<EtcdClient> client(new EtcdClient(options));
  for (const std::string& endpoint : options.endpoints) {
    grpc::ChannelArguments args;
    // Large range pages and commit batches: etcd's own request limit is the one that counts.
    args.SetMaxReceiveMessageSize(-1);
    args.SetMaxSendMessageSize(-1);
    // Reconnect to a restarted member quickly rather than after gRPC's default backoff.
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
    Endpoint e;
    e.address = StripScheme(endpoint);
    e.channel = grpc::CreateCustomChannel(e.address, credentials, args);
    e.kv = etcdserverpb::KV::NewStub(e.channel);
    e.lease = etcdserverpb::Lease::NewStub(e.channel);
    e.watch = etcdserverpb::Watch::NewStub(e.channel);
    e.auth = etcdserverpb::Auth::NewStub(e.channel);
    client->endpoints_.push_back(std::move(e));
  }
  if (!options.user.empty()) {
    // A wrong password or user is a configuration error: say so now rather than have every
    // later call fail. An etcd that cannot be reached yet is not: it may come up later.
    absl::Status authenticated = client->Authenticate();
    if (!authenticated.ok() && !absl::IsUnavailable(authenticated)) return authenticated;
  }
  return client;
}

void EtcdClient::Shutdown() {
  absl::MutexLock lock(&calls_mu_);
  shut_down_ = true;
  for (grpc::ClientContext* context : calls_) context->TryCancel();
}

absl::Status EtcdClient::Track(grpc::ClientContext* context) {
  absl::MutexLock lock(&calls_mu_);
  if (shut_down_) return absl::CancelledError("etcd client shut down (stepping down)");
  calls_.insert(context);
  return absl::OkStatus();
}

void EtcdClient::Untrack(grpc::ClientContext* context) {
  absl::MutexLock lock(&calls_mu_);
  calls_.erase(context);
}

absl::Status EtcdClient::Authenticate() {
  if (options_.user.empty()) return absl::OkStatus();
  // WithRetries authorizes each try before the call, so a call that does nothing authenticates
  // (across members, within rpc_timeout).
  return WithRetries("Authenticate", /*retry=*/true,
                     [](Endpoint&, grpc::ClientContext&) { return grpc::Status::OK; });
}

absl::StatusOr<std::string> EtcdClient::Authorize(Endpoint& endpoint, grpc::ClientContext& context,
                                                  absl::Time deadline) {
  if (options_.user.empty()) return std::string();
  std::string token;
  {
    absl::MutexLock lock(&token_mu_);
    token = token_;
  }
  if (token.empty()) {
    etcdserverpb::AuthenticateRequest request;
    request.set_name(options_.user);
    request.set_password(options_.password);
    etcdserverpb::AuthenticateResponse response;
    grpc::ClientContext auth_context;
    auth_context.set_deadline(absl::ToChronoTime(deadline));
    if (absl::Status tracked = Track(&auth_context); !tracked.ok()) return tracked;
    const grpc::Status status = endpoint.auth->Authenticate(&auth_context, request, &response);
    Untrack(&auth_context);
    if (!status.ok()) {
      if (IsConnectionError(status) || status.error_code() == grpc::StatusCode::CANCELLED) {
        return EtcdStatus(status, absl::StrCat("Authenticate as \"", options_.user, "\""),
                          endpoint.address);
      }
      return absl::UnauthenticatedError(absl::StrCat("etcd refused authentication as user \"",
                                                     options_.user, "\" at ", endpoint.address,
                                                     ": ", status.error_message()));
    }
    token = response.token();
    absl::MutexLock lock(&token_mu_);
    token_ = token;
  }
  context.AddMetadata("token", token);
  return token;
}

void EtcdClient::DropToken(const std::string& token) {
  absl::MutexLock lock(&token_mu_);
  // Another thread may already have replaced it with a good one.
  if (token_ == token) token_.clear();
}

EtcdClient::Endpoint& EtcdClient::Pick() {
  const size_t start = current_.load();
  for (size_t i = 0; i < endpoints_.size(); ++i) {
    Endpoint& e = endpoints_[(start + i) % endpoints_.size()];
    if (e.channel->GetState(/*try_to_connect=*/true) != GRPC_CHANNEL_TRANSIENT_FAILURE) {
      if (i != 0) current_ = (start + i) % endpoints_.size();
      return e;
    }
  }
  return endpoints_[start % endpoints_.size()];
}

void EtcdClient::MoveOn(const Endpoint& failed) {
  for (size_t i = 0; i < endpoints_.size(); ++i) {
    if (&endpoints_[i] == &failed) {
      size_t expected = i;
      current_.compare_exchange_strong(expected, (i + 1) % endpoints_.size());
      return;
    }
  }
}

template <typename Call>
absl::Status EtcdClient::WithRetries(absl::string_view what, bool retry, Call call) {
  // A retried call keeps trying the members in turn, with a short backoff, until one answers or
  // rpc_timeout has passed in all: an election after a member's loss takes about a second, and
  // members answer "no leader" meanwhile.
  const absl::Time deadline = absl::Now() + options_.rpc_timeout;
  absl::Duration backoff = absl::Milliseconds(20);
  absl::Status last;
  bool token_renewed = false;
  while (true) {
    Endpoint& endpoint = Pick();
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(deadline));
    if (absl::Status tracked = Track(&context); !tracked.ok()) return tracked;
    absl::StatusOr<std::string> token = Authorize(endpoint, context, deadline);
    if (token.ok()) {
      const grpc::Status status = call(endpoint, context);
      Untrack(&context);
      if (status.ok()) return absl::OkStatus();
      if (!options_.user.empty() && IsStaleEtcdToken(status) && !token_renewed) {
        // Refused before anything applied (even a write): authenticate again and resend, once.
        DropToken(*token);
        token_renewed = true;
        continue;
      }
      last = EtcdStatus(status, what, endpoint.address);
      if (!retry || !IsConnectionError(status)) return last;
    } else {
      Untrack(&context);
      last = token.status();
      if (!retry || !absl::IsUnavailable(last)) return last;
    }
    MoveOn(endpoint);
    if (absl::Now() + backoff >= deadline) return last;
    absl::SleepFor(backoff);
    backoff = std::min(backoff * 2, absl::Milliseconds(250));
  }
}

absl::StatusOr<etcdserverpb::RangeResponse> EtcdClient::Range(
    const etcdserverpb::RangeRequest& request) {
  etcdserverpb::RangeResponse response;
  absl::Status status =
      WithRetries("Range", /*retry=*/true, [&](Endpoint& e, grpc::ClientContext& context) {
        return e.kv->Range(&context, request, &response);
      });
  if (!status.ok()) return status;
  return response;
}

absl::StatusOr<etcdserverpb::TxnResponse> EtcdClient::Txn(const etcdserverpb::TxnRequest& request) {
  etcdserverpb::TxnResponse response;
  absl::Status status =
      WithRetries("Txn", /*retry=*/false, [&](Endpoint& e, grpc::ClientContext& context) {
        return e.kv->Txn(&context, request, &response);
      });
  if (!status.ok()) return status;
  return response;
}

absl::StatusOr<etcdserverpb::TxnResponse> EtcdClient::ReadTxn(
    const etcdserverpb::TxnRequest& request) {
  etcdserverpb::TxnResponse response;
  absl::Status status =
      WithRetries("Txn (read)", /*retry=*/true, [&](Endpoint& e, grpc::ClientContext& context) {
        return e.kv->Txn(&context, request, &response);
      });
  if (!status.ok()) return status;
  return response;
}

absl::Status EtcdClient::Compact(int64_t etcd_revision) {
  etcdserverpb::CompactionRequest request;
  request.set_revision(etcd_revision);
  etcdserverpb::CompactionResponse response;
  return WithRetries("Compact", /*retry=*/true, [&](Endpoint& e, grpc::ClientContext& context) {
    return e.kv->Compact(&context, request, &response);
  });
}

absl::StatusOr<etcdserverpb::LeaseGrantResponse> EtcdClient::LeaseGrant(int64_t ttl_seconds) {
  etcdserverpb::LeaseGrantRequest request;
  request.set_ttl(ttl_seconds);
  etcdserverpb::LeaseGrantResponse response;
  absl::Status status =
      WithRetries("LeaseGrant", /*retry=*/true, [&](Endpoint& e, grpc::ClientContext& context) {
        return e.lease->LeaseGrant(&context, request, &response);
      });
  if (!status.ok()) return status;
  if (!response.error().empty()) {
    return absl::FailedPreconditionError(absl::StrCat("LeaseGrant: ", response.error()));
  }
  return response;
}

absl::StatusOr<int64_t> EtcdClient::LeaseKeepAliveOnce(int64_t lease_id) {
  etcdserverpb::LeaseKeepAliveResponse response;
  absl::Status status =
      WithRetries("LeaseKeepAlive", /*retry=*/true, [&](Endpoint& e, grpc::ClientContext& context) {
        auto stream = e.lease->LeaseKeepAlive(&context);
        etcdserverpb::LeaseKeepAliveRequest request;
        request.set_id(lease_id);
        if (!stream->Write(request) || !stream->Read(&response)) {
          context.TryCancel();
          grpc::Status finished = stream->Finish();
          return finished.ok() ? grpc::Status(grpc::StatusCode::UNAVAILABLE, "stream closed")
                               : finished;
        }
        stream->WritesDone();
        context.TryCancel();
        (void)stream->Finish();  // Cancelled on purpose: the one answer has been read.
        return grpc::Status::OK;
      });
  if (!status.ok()) return status;
  if (response.ttl() <= 0) {
    return absl::NotFoundError(absl::StrCat("etcd lease ", lease_id, " has expired"));
  }
  return response.ttl();
}

absl::Status EtcdClient::LeaseRevoke(int64_t lease_id) {
  etcdserverpb::LeaseRevokeRequest request;
  request.set_id(lease_id);
  etcdserverpb::LeaseRevokeResponse response;
  return WithRetries("LeaseRevoke", /*retry=*/true, [&](Endpoint& e, grpc::ClientContext& context) {
    return e.lease->LeaseRevoke(&context, request, &response);
  });
}

absl::StatusOr<std::vector<mvccpb::Event>> EtcdClient::WatchOnce(absl::string_view key,
                                                                 int64_t from_revision,
                                                                 absl::Duration timeout) {
  return WatchRangeOnce(key, "", from_revision, timeout);
}

absl::StatusOr<std::vector<mvccpb::Event>> EtcdClient::WatchRangeOnce(absl::string_view key,
                                                                      absl::string_view range_end,
                                                                      int64_t from_revision,
                                                                      absl::Duration timeout) {
  Endpoint& endpoint = Pick();
  grpc::ClientContext context;
  const absl::Time deadline = absl::Now() + timeout;
  context.set_deadline(absl::ToChronoTime(deadline));
  if (absl::Status tracked = Track(&context); !tracked.ok()) return tracked;
  absl::Cleanup untrack = [this, &context] { Untrack(&context); };
  absl::StatusOr<std::string> token = Authorize(endpoint, context, deadline);
  if (!token.ok()) return token.status();
  auto stream = endpoint.watch->Watch(&context);
  etcdserverpb::WatchRequest request;
  request.mutable_create_request()->set_key(std::string(key));
  if (!range_end.empty()) request.mutable_create_request()->set_range_end(std::string(range_end));
  request.mutable_create_request()->set_start_revision(from_revision);
  std::vector<mvccpb::Event> events;
  if (stream->Write(request)) {
    etcdserverpb::WatchResponse response;
    while (stream->Read(&response)) {
      if (response.canceled() || response.compact_revision() != 0) {
        context.TryCancel();
        (void)stream->Finish();  // Cancelled on purpose; the reason is reported below.
        return absl::FailedPreconditionError(absl::StrCat(
            "etcd watch on ", key, " from revision ", from_revision, " cancelled: ",
            response.cancel_reason(), " (compacted to ", response.compact_revision(), ")"));
      }
      if (response.events_size() > 0) {
        events.assign(response.events().begin(), response.events().end());
        break;
      }
    }
  }
  context.TryCancel();
  const grpc::Status finished = stream->Finish();
  if (!events.empty()) return events;
  if (finished.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED ||
      finished.error_code() == grpc::StatusCode::CANCELLED || finished.ok()) {
    return absl::DeadlineExceededError(
        absl::StrCat("no change to ", key, " within ", absl::FormatDuration(timeout)));
  }
  if (IsStaleEtcdToken(finished)) {
    // The caller retries; the next try authenticates again.
    DropToken(*token);
    return EtcdStatus(finished, "Watch", endpoint.address);
  }
  MoveOn(endpoint);
  return EtcdStatus(finished, "Watch", endpoint.address);
}

}  // namespace tollgate::storage
