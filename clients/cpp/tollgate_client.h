#pragma once

#include <grpcpp/channel.h>
#include <grpcpp/client_context.h>
#include <grpcpp/support/status.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "clients/cpp/connection.h"
#include "grpcpp/security/credentials.h"
#include "tollgate/v1/auth.grpc.pb.h"
#include "tollgate/v1/inventory.grpc.pb.h"
#include "tollgate/v1/service.grpc.pb.h"
#include "tollgate/v1/service.pb.h"

namespace tollgate::client {

// Every unary call is a quick read or one durable write on the server, so a caller waiting
// longer than this is better told something is wrong.
inline constexpr absl::Duration kDefaultCallTimeout = absl::Seconds(10);
// Items per page when the client reads a whole list (kubectl's default chunk size).
inline constexpr int64_t kDefaultListPageSize = 500;
// Times a whole-list read starts over when the server expires its continue token.
inline constexpr int kListAttempts = 3;

// Stops a running TollgateClient::Watch from another thread. Thread-safe.
class WatchCanceller {
 public:
  // Ends the current watch, and any watch started later, as if the user pressed Ctrl-C.
  void Cancel();
  bool cancelled() const;

 private:
  friend class TollgateClient;
  // Returns false when already cancelled (the watch should not start).
  bool Attach(grpc::ClientContext* context);
  void Detach();

  mutable absl::Mutex mu_;
  grpc::ClientContext* context_ ABSL_GUARDED_BY(mu_) = nullptr;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
};

// How a TollgateClient behaves beyond where it connects.
struct ClientOptions {
  absl::Duration call_timeout = kDefaultCallTimeout;
  // Appended to "cannot reach tollgated at ..." (the CLI names its --server flag).
  std::string unreachable_hint = "is tollgated running?";
  // Called once per client, on the first answer a follower marks as possibly stale
  // (api::kStaleRevisionMetadataKey): the revision and the reason. The answer is returned
  // all the same.
  std::function<void(absl::string_view revision, absl::string_view reason)> on_stale;
  // Reconnect within a second or so after tollgated restarts (gRPC's default backoff grows to
  // two minutes): for long-running clients such as adapters.
  bool quick_reconnect = false;
};

// An adapter's options: `call_timeout`, and quick reconnects (it runs for months beside a
// tollgated that restarts).
ClientOptions AdapterClientOptions(absl::Duration call_timeout);

// The C++ client of tollgated, shared by the CLI, tollgate-kube and the bench tools: one channel
// and a stub per service for each replica of `target` (comma-separated for a replicated
// tollgated). A call that certainly did nothing (the replica could not be reached, or a
// follower's refusal carrying api::kNotLeaderMetadataKey) is tried again on the leader it
// names, else on the next replica, within `call_timeout`; the replica that answered stays the
// one used next. Each unary call gets `call_timeout` as its deadline. Errors come back as
// absl::Status with the server's message unchanged; when the server cannot be reached at all
// the status is UNAVAILABLE and reads `cannot reach tollgated at HOST:PORT: connection refused`
// followed by ClientOptions::unreachable_hint. Connecting is lazy: constructing a client never
// fails. Thread-safe.
class TollgateClient {
 public:
  using Options = ClientOptions;

  explicit TollgateClient(std::string target, Credentials credentials = {},
                          Options options = Options());
  // Plaintext, no token, default options but `call_timeout`.
  TollgateClient(std::string target, absl::Duration call_timeout);

  const std::string& target() const { return target_; }
  // Items per page when a List call reads everything (tests use small pages).
  void set_list_page_size(int64_t n) { list_page_size_ = n; }

  absl::StatusOr<v1::SubmitResponse> Submit(const v1::SubmitRequest& request);
  absl::StatusOr<v1::AdmitResponse> Admit(const v1::AdmitRequest& request);
  absl::StatusOr<v1::PreemptResponse> Preempt(const v1::PreemptRequest& request);
  absl::StatusOr<v1::ReportCheckpointResponse> ReportCheckpoint(
      const v1::ReportCheckpointRequest& request);
  absl::StatusOr<v1::FinishResponse> Finish(const v1::FinishRequest& request);
  absl::StatusOr<v1::ReportStoppedResponse> ReportStopped(const v1::ReportStoppedRequest& request);
  absl::StatusOr<v1::ReportPodsReadyResponse> ReportPodsReady(
      const v1::ReportPodsReadyRequest& request);
  absl::StatusOr<v1::DeleteWorkloadResponse> DeleteWorkload(
      const v1::DeleteWorkloadRequest& request);
  absl::StatusOr<v1::ReportReclaimablePodsResponse> ReportReclaimablePods(
      const v1::ReportReclaimablePodsRequest& request);
  absl::StatusOr<v1::ReportJobStateResponse> ReportJobState(
      const v1::ReportJobStateRequest& request);
  absl::StatusOr<v1::UpdateWorkloadPayloadResponse> UpdateWorkloadPayload(
      const v1::UpdateWorkloadPayloadRequest& request);
  absl::StatusOr<v1::SetAdmissionGatesResponse> SetAdmissionGates(
      const v1::SetAdmissionGatesRequest& request);
  absl::StatusOr<v1::SetPriorityBoostResponse> SetPriorityBoost(
      const v1::SetPriorityBoostRequest& request);
  absl::StatusOr<v1::Workload> GetWorkload(const v1::GetWorkloadRequest& request);
  // The List calls page: a request without limit and continue_token reads the whole list in
  // pages of list_page_size items, all at the first page's revision, and starts over (up to
  // kListAttempts times) when the server expires the listing. A request with either gets that
  // one page.
  absl::StatusOr<v1::ListWorkloadsResponse> ListWorkloads(const v1::ListWorkloadsRequest& request);

  absl::StatusOr<v1::ApplyResponse> Apply(const v1::ApplyRequest& request);
  absl::StatusOr<v1::ConfigObject> GetObject(const v1::GetObjectRequest& request);
  absl::StatusOr<v1::ListObjectsResponse> ListObjects(const v1::ListObjectsRequest& request);
  absl::StatusOr<v1::DeleteObjectResponse> DeleteObject(const v1::DeleteObjectRequest& request);
  absl::StatusOr<v1::SetStopPolicyResponse> SetStopPolicy(const v1::SetStopPolicyRequest& request);
  absl::StatusOr<v1::SetWorkloadActiveResponse> SetWorkloadActive(
      const v1::SetWorkloadActiveRequest& request);
  absl::StatusOr<v1::ReprioritizeResponse> Reprioritize(const v1::ReprioritizeRequest& request);
  // AdmissionCheckService: one check's state on one workload (compare-and-swap on the
  // workload's revision), and a check's Active condition.
  absl::StatusOr<v1::UpdateAdmissionCheckStateResponse> UpdateAdmissionCheckState(
      const v1::UpdateAdmissionCheckStateRequest& request);
  absl::StatusOr<v1::SetAdmissionCheckActiveResponse> SetAdmissionCheckActive(
      const v1::SetAdmissionCheckActiveRequest& request);
  absl::StatusOr<v1::SetMultiKueueClusterActiveResponse> SetMultiKueueClusterActive(
      const v1::SetMultiKueueClusterActiveRequest& request);
  // On a MultiKueue worker: the manager's copy that won (docs/multicluster.md).
  absl::StatusOr<v1::MarkMultiKueueWinnerResponse> MarkMultiKueueWinner(
      const v1::MarkMultiKueueWinnerRequest& request);

  absl::StatusOr<v1::ListPendingWorkloadsResponse> ListPendingWorkloads(
      const v1::ListPendingWorkloadsRequest& request);
  absl::StatusOr<v1::CohortBreakdown> GetCohortBreakdown(
      const v1::GetCohortBreakdownRequest& request);

  absl::StatusOr<v1::WhoAmIResponse> WhoAmI(const v1::WhoAmIRequest& request);
  absl::StatusOr<v1::CanIResponse> CanI(const v1::CanIRequest& request);

  // The server's build (InfoService).
  absl::StatusOr<v1::BuildInfo> GetBuildInfo();
  // The server's effective scheduler configuration (InfoService).
  absl::StatusOr<v1::SchedulerConfiguration> GetConfiguration();
  // A checkpoint of the live store into a directory on the server's machine (AdminService).
  absl::StatusOr<v1::BackupResponse> Backup(const v1::BackupRequest& request);

  // The topology inventory (InventoryService; docs/topology.md).
  absl::StatusOr<v1::UpsertNodesResponse> UpsertNodes(const v1::UpsertNodesRequest& request);
  absl::StatusOr<v1::DeleteNodeResponse> DeleteNode(const v1::DeleteNodeRequest& request);
  absl::StatusOr<v1::ReportPodsResponse> ReportPods(const v1::ReportPodsRequest& request);
  absl::StatusOr<v1::ListNodesResponse> ListNodes(const v1::ListNodesRequest& request);
  absl::StatusOr<v1::NodeDetails> GetNode(const v1::GetNodeRequest& request);
  absl::StatusOr<v1::GetTopologyUsageResponse> GetTopologyUsage(
      const v1::GetTopologyUsageRequest& request);

  // Streams events to `on_event` until it returns false, `canceller` (may be null) is
  // cancelled, or the server ends the stream. The stream has no deadline: it lives as long as
  // the user watches. Ending by `on_event` or `canceller` is OK.
  absl::Status Watch(const v1::WatchRequest& request,
                     const std::function<bool(const v1::WatchEvent&)>& on_event,
                     WatchCanceller* canceller);
  // AdmissionCheckService.WatchAdmissionChecks, streamed like Watch.
  absl::Status WatchAdmissionChecks(const v1::WatchAdmissionChecksRequest& request,
                                    const std::function<bool(const v1::WatchEvent&)>& on_event,
                                    WatchCanceller* canceller);

 private:
  // One replica.
  struct Endpoint {
    std::string target;
    // shared_ptr because gRPC hands channels out that way and the stubs share it.
    std::shared_ptr<grpc::Channel> channel;
    std::unique_ptr<v1::AdmissionService::Stub> admission;
    std::unique_ptr<v1::ConfigService::Stub> config;
    std::unique_ptr<v1::VisibilityService::Stub> visibility;
    std::unique_ptr<v1::AuthService::Stub> auth;
    std::unique_ptr<v1::InfoService::Stub> info;
    std::unique_ptr<v1::AdminService::Stub> admin;
    std::unique_ptr<v1::AdmissionCheckService::Stub> checks;
    std::unique_ptr<v1::InventoryService::Stub> inventory;
  };

  template <typename Response, typename Call>
  absl::StatusOr<Response> Unary(Call call);
  // A watch stream: `open(endpoint, context)` starts it on one replica.
  template <typename Open>
  absl::Status Stream(int64_t since_revision, Open open,
                      const std::function<bool(const v1::WatchEvent&)>& on_event,
                      WatchCanceller* canceller);
  void NoteStale(const std::multimap<grpc::string_ref, grpc::string_ref>& metadata);
  // Reads every page of a List call through `fetch` and concatenates them with `append`.
  template <typename Response, typename Request, typename Fetch, typename Append>
  absl::StatusOr<Response> Paged(const Request& request, Fetch fetch, Append append);
  // The one place a grpc::Status becomes an absl::Status on the client side.
  absl::Status FromGrpc(const Endpoint& endpoint, const grpc::Status& status,
                        bool had_deadline) const;
  // The call never reached a server (refused, unresolvable, no connection before the deadline).
  static bool Unreached(const Endpoint& endpoint, const grpc::Status& status, bool had_deadline);
  // A follower's refusal (api::kNotLeaderMetadataKey): nothing was done.
  static bool IsFollowerAnswer(const grpc::ClientContext& context, const grpc::Status& status);
  // The leader a follower named in its refusal, or "".
  static std::string RedirectedTo(const grpc::ClientContext& context, const grpc::Status& status);
  std::unique_ptr<Endpoint> NewEndpoint(std::string target) const;
  Endpoint& Current() const;
  // Moves on from `failed` to `leader` (added when not listed) or the next replica; returns
  // where to, or nullopt when another call already moved on.
  std::optional<std::string> NextEndpoint(const Endpoint& failed, const std::string& leader);

  const std::string target_;
  const Credentials credentials_;
  const Options options_;
  int64_t list_page_size_ = kDefaultListPageSize;
  mutable absl::Mutex mu_;
  // Only ever appended to, so an Endpoint& stays valid while the client lives.
  std::vector<std::unique_ptr<Endpoint>> endpoints_ ABSL_GUARDED_BY(mu_);
  size_t current_ ABSL_GUARDED_BY(mu_) = 0;
  // Whether this client has warned about an answer that may be stale (once per client).
  std::atomic<bool> warned_stale_{false};
};

}  // namespace tollgate::client
