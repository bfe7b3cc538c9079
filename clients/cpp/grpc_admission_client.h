#pragma once

#include <grpcpp/channel.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "clients/cpp/admission_client.h"
#include "grpcpp/security/credentials.h"
#include "tollgate/v1/service.grpc.pb.h"

namespace tollgate::client {

// AdmissionClient over tollgated's gRPC API: one channel per replica of a comma-separated
// target. A call that certainly did nothing (the replica was unreachable, or a follower answered
// "not the leader") moves on to the leader it named or the next replica (docs/ha.md). Unary calls
// get `call_timeout` as deadline; Watch has none and is ended through its StopSignal. Connecting is
// lazy, so constructing never fails and a tollgated that is down yields UNAVAILABLE per call.
// Thread-safe.
class GrpcAdmissionClient final : public AdmissionClient {
 public:
  // How the client proves tollgated's identity and its own (docs/security.md). Empty fields are
  // unused; TLS is on when a CA or a client certificate is given.
  struct ClientSecurity {
    std::string ca_file;
    std::string cert_file;
    std::string key_file;
    // A file holding the bearer token (a mounted Secret), sent on every call.
    std::string token_file;
  };

  GrpcAdmissionClient(std::shared_ptr<grpc::Channel> channel,
                      absl::Duration call_timeout = absl::Seconds(10),
                      std::string bearer_token = "");
  // One channel per "host:port" of the comma-separated `targets`.
  GrpcAdmissionClient(const std::string& targets,
                      std::shared_ptr<grpc::ChannelCredentials> credentials,
                      absl::Duration call_timeout, std::string bearer_token = "");
  // A channel to "host:port" with `security`; errors name a PEM or token file that cannot be
  // read.
  static absl::StatusOr<std::unique_ptr<GrpcAdmissionClient>> ConnectSecure(
      const std::string& target, absl::Duration call_timeout, const ClientSecurity& security);
  // An insecure channel to "host:port".
  static std::unique_ptr<GrpcAdmissionClient> Connect(const std::string& target,
                                                      absl::Duration call_timeout);

  absl::StatusOr<v1::SubmitResponse> Submit(const v1::SubmitRequest& request) override;
  absl::StatusOr<v1::Workload> GetWorkload(const v1::WorkloadRef& ref) override;
  absl::StatusOr<v1::ListWorkloadsResponse> ListWorkloads(
      const v1::ListWorkloadsRequest& request) override;
  absl::StatusOr<v1::FinishResponse> Finish(const v1::FinishRequest& request) override;
  absl::StatusOr<v1::ReportStoppedResponse> ReportStopped(
      const v1::ReportStoppedRequest& request) override;
  absl::StatusOr<v1::ReportPodsReadyResponse> ReportPodsReady(
      const v1::ReportPodsReadyRequest& request) override;
  absl::StatusOr<v1::ReportCheckpointResponse> ReportCheckpoint(
      const v1::ReportCheckpointRequest& request) override;
  absl::Status DeleteWorkload(const v1::DeleteWorkloadRequest& request) override;
  absl::StatusOr<v1::ReportReclaimablePodsResponse> ReportReclaimablePods(
      const v1::ReportReclaimablePodsRequest& request) override;
  absl::Status Watch(const v1::WatchRequest& request,
                     const std::function<bool(const v1::WatchEvent&)>& on_event,
                     const common::StopSignal& stop) override;

  absl::StatusOr<v1::ConfigObject> GetObject(const v1::ObjectRef& ref) override;
  absl::StatusOr<v1::ListObjectsResponse> ListObjects(
      const v1::ListObjectsRequest& request) override;
  absl::StatusOr<v1::ApplyResponse> Apply(const v1::ApplyRequest& request) override;
  absl::Status DeleteObject(const v1::ObjectRef& ref) override;

 private:
  struct Endpoint {
    std::string target;
    std::shared_ptr<grpc::Channel> channel;
    std::unique_ptr<v1::AdmissionService::Stub> admission;
    std::unique_ptr<v1::ConfigService::Stub> config;
  };
  template <typename Response, typename Call>
  absl::StatusOr<Response> Unary(Call call);
  std::shared_ptr<grpc::Channel> NewChannel(const std::string& target) const;
  std::unique_ptr<Endpoint> NewEndpoint(std::string target,
                                        std::shared_ptr<grpc::Channel> channel) const;
  Endpoint& Current() const;
  // Moves on from `failed` to `leader` (added when not listed) or the next replica.
  void MoveOn(const Endpoint& failed, const std::string& leader);

  const absl::Duration call_timeout_;
  const std::string bearer_token_;
  // Null when built over a caller's channel: a named leader cannot be dialled then.
  const std::shared_ptr<grpc::ChannelCredentials> credentials_;
  mutable absl::Mutex mu_;
  // Only appended to, so an Endpoint& stays valid while the client lives.
  std::vector<std::unique_ptr<Endpoint>> endpoints_ ABSL_GUARDED_BY(mu_);
  size_t current_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace tollgate::client
