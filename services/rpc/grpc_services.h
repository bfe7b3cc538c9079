#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "grpcpp/grpcpp.h"
#include "services/engine/tollgate_api.h"
#include "services/rpc/access_gate.h"
#include "services/rpc/watch_hub.h"
#include "tollgate/v1/auth.grpc.pb.h"
#include "tollgate/v1/service.grpc.pb.h"

namespace tollgate::rpc {

// The client identity whose Watch write share (WatchHub) a stream of `identity` uses: the
// authenticated user ("user:NAME"), whatever the method that established it. The anonymous
// identity (no authenticators: loopback or --insecure) is every client at once, so there the
// key is the connection ("peer:" and gRPC's peer address, which names the client's port):
// each connection gets its own share.
std::string WatchShareKey(const auth::Identity& identity, const grpc::ServerContextBase& context);

// The gRPC face of TollgateApi. Each handler is one call into the API and one status
// conversion (ToGrpcStatus); no request is interpreted here, so tollgated and the scenario
// runner share every rule. Unary handlers wait only for their own write to be durable, never
// for admission: clients follow admission with Watch or GetWorkload.
//
// Every handler first asks the AccessGate (services/rpc/access_gate.h) whether the caller may do
// what it asks; List, Watch and the visibility API filter what the caller may not see. A service
// built without a gate uses an open one (every caller the anonymous admin): in-process tests.
//
// The services hold the API and the gate by reference; both must outlive the gRPC server.
// Thread-safe.
// Submit and Finish, the calls adapters and load drivers make at high rates, are callback
// handlers: the executor completes them when their write is durable, so no gRPC thread is
// parked per request.
// Watch is a callback stream too (WatchHub): no thread per open watch.
using AdmissionServiceBase =
    v1::AdmissionService::WithCallbackMethod_Submit<v1::AdmissionService::WithCallbackMethod_Finish<
        v1::AdmissionService::WithCallbackMethod_Watch<v1::AdmissionService::Service>>>;

class AdmissionGrpcService final : public AdmissionServiceBase {
 public:
  // `gate` checks every call; null: an owned gate that lets every caller act as admin.
  explicit AdmissionGrpcService(engine::TollgateApi& api, AccessGate* gate = nullptr,
                                WatchHub::Options watch_options = {});

  grpc::ServerUnaryReactor* Submit(grpc::CallbackServerContext* context,
                                   const v1::SubmitRequest* request,
                                   v1::SubmitResponse* response) override;
  grpc::Status Admit(grpc::ServerContext* context, const v1::AdmitRequest* request,
                     v1::AdmitResponse* response) override;
  grpc::Status Preempt(grpc::ServerContext* context, const v1::PreemptRequest* request,
                       v1::PreemptResponse* response) override;
  grpc::ServerUnaryReactor* Finish(grpc::CallbackServerContext* context,
                                   const v1::FinishRequest* request,
                                   v1::FinishResponse* response) override;
  grpc::Status ReportStopped(grpc::ServerContext* context, const v1::ReportStoppedRequest* request,
                             v1::ReportStoppedResponse* response) override;
  grpc::Status ReportPodsReady(grpc::ServerContext* context,
                               const v1::ReportPodsReadyRequest* request,
                               v1::ReportPodsReadyResponse* response) override;
  grpc::Status ReportCheckpoint(grpc::ServerContext* context,
                                const v1::ReportCheckpointRequest* request,
                                v1::ReportCheckpointResponse* response) override;
  grpc::Status ReportReclaimablePods(grpc::ServerContext* context,
                                     const v1::ReportReclaimablePodsRequest* request,
                                     v1::ReportReclaimablePodsResponse* response) override;
  grpc::Status DeleteWorkload(grpc::ServerContext* context,
                              const v1::DeleteWorkloadRequest* request,
                              v1::DeleteWorkloadResponse* response) override;
  grpc::Status GetWorkload(grpc::ServerContext* context, const v1::GetWorkloadRequest* request,
                           v1::Workload* response) override;
  grpc::Status ListWorkloads(grpc::ServerContext* context, const v1::ListWorkloadsRequest* request,
                             v1::ListWorkloadsResponse* response) override;
  grpc::Status SetWorkloadActive(grpc::ServerContext* context,
                                 const v1::SetWorkloadActiveRequest* request,
                                 v1::SetWorkloadActiveResponse* response) override;
  grpc::Status Reprioritize(grpc::ServerContext* context, const v1::ReprioritizeRequest* request,
                            v1::ReprioritizeResponse* response) override;
  grpc::Status ReportJobState(grpc::ServerContext* context,
                              const v1::ReportJobStateRequest* request,
                              v1::ReportJobStateResponse* response) override;
  grpc::Status UpdateWorkloadPayload(grpc::ServerContext* context,
                                     const v1::UpdateWorkloadPayloadRequest* request,
                                     v1::UpdateWorkloadPayloadResponse* response) override;
  grpc::Status SetAdmissionGates(grpc::ServerContext* context,
                                 const v1::SetAdmissionGatesRequest* request,
                                 v1::SetAdmissionGatesResponse* response) override;
  grpc::Status SetPriorityBoost(grpc::ServerContext* context,
                                const v1::SetPriorityBoostRequest* request,
                                v1::SetPriorityBoostResponse* response) override;
  // Streams until the client cancels, the stream breaks, or StopWatches is called.
  grpc::ServerWriteReactor<v1::WatchEvent>* Watch(grpc::CallbackServerContext* context,
                                                  const v1::WatchRequest* request) override;

  // Ends every open and future Watch with UNAVAILABLE (naming the revision to resume from).
  // Called at the start of a graceful shutdown: a watch otherwise never ends on its own and
  // would hold the server until the shutdown deadline cancels it.
  void StopWatches() { watch_hub_.Stop(); }
  const WatchHub& watch_hub() const { return watch_hub_; }
  // Shared with AdmissionCheckGrpcService's WatchAdmissionChecks streams.
  WatchHub& mutable_watch_hub() { return watch_hub_; }

 private:
  engine::TollgateApi& api_;
  std::unique_ptr<AccessGate> owned_gate_;
  AccessGate& gate_;
  WatchHub watch_hub_;
};

class ConfigGrpcService final : public v1::ConfigService::Service {
 public:
  explicit ConfigGrpcService(engine::TollgateApi& api, AccessGate* gate = nullptr);

  grpc::Status Apply(grpc::ServerContext* context, const v1::ApplyRequest* request,
                     v1::ApplyResponse* response) override;
  grpc::Status Get(grpc::ServerContext* context, const v1::GetObjectRequest* request,
                   v1::ConfigObject* response) override;
  grpc::Status List(grpc::ServerContext* context, const v1::ListObjectsRequest* request,
                    v1::ListObjectsResponse* response) override;
  grpc::Status Delete(grpc::ServerContext* context, const v1::DeleteObjectRequest* request,
                      v1::DeleteObjectResponse* response) override;
  grpc::Status SetStopPolicy(grpc::ServerContext* context, const v1::SetStopPolicyRequest* request,
                             v1::SetStopPolicyResponse* response) override;

 private:
  // Puts the applied policy objects in force after a write of one.
  void RefreshPolicy();
  engine::TollgateApi& api_;
  std::unique_ptr<AccessGate> owned_gate_;
  AccessGate& gate_;
};

class VisibilityGrpcService final : public v1::VisibilityService::Service {
 public:
  explicit VisibilityGrpcService(engine::TollgateApi& api, AccessGate* gate = nullptr);

  grpc::Status ListPendingWorkloads(grpc::ServerContext* context,
                                    const v1::ListPendingWorkloadsRequest* request,
                                    v1::ListPendingWorkloadsResponse* response) override;
  grpc::Status GetCohortBreakdown(grpc::ServerContext* context,
                                  const v1::GetCohortBreakdownRequest* request,
                                  v1::CohortBreakdown* response) override;

 private:
  engine::TollgateApi& api_;
  std::unique_ptr<AccessGate> owned_gate_;
  AccessGate& gate_;
};

// The check-controller API (docs/admission-checks.md). A request naming a check is authorized
// with that check's controllerName (verb check, kind AdmissionCheck), so a RoleBinding confined
// to some controllers (controllerNames) lets its holder touch only their checks; updates are
// audited with the workload and the state posted. Its watches share `hub` (the
// AdmissionGrpcService's), which must outlive it.
class AdmissionCheckGrpcService final
    : public v1::AdmissionCheckService::WithCallbackMethod_WatchAdmissionChecks<
          v1::AdmissionCheckService::Service> {
 public:
  AdmissionCheckGrpcService(engine::TollgateApi& api, WatchHub& hub, AccessGate* gate = nullptr);

  grpc::ServerWriteReactor<v1::WatchEvent>* WatchAdmissionChecks(
      grpc::CallbackServerContext* context,
      const v1::WatchAdmissionChecksRequest* request) override;
  grpc::Status UpdateAdmissionCheckState(grpc::ServerContext* context,
                                         const v1::UpdateAdmissionCheckStateRequest* request,
                                         v1::UpdateAdmissionCheckStateResponse* response) override;
  grpc::Status SetAdmissionCheckActive(grpc::ServerContext* context,
                                       const v1::SetAdmissionCheckActiveRequest* request,
                                       v1::SetAdmissionCheckActiveResponse* response) override;
  grpc::Status SetMultiKueueClusterActive(
      grpc::ServerContext* context, const v1::SetMultiKueueClusterActiveRequest* request,
      v1::SetMultiKueueClusterActiveResponse* response) override;
  grpc::Status MarkMultiKueueWinner(grpc::ServerContext* context,
                                    const v1::MarkMultiKueueWinnerRequest* request,
                                    v1::MarkMultiKueueWinnerResponse* response) override;

 private:
  // The request for `verb` on check `name`, with its controllerName when the check exists.
  auth::AccessRequest CheckRequest(absl::string_view verb, const std::string& name);

  engine::TollgateApi& api_;
  WatchHub& hub_;
  std::unique_ptr<AccessGate> owned_gate_;
  AccessGate& gate_;
};

// WhoAmI and CanI: what the caller is and may do, asked of the same gate.
class AuthGrpcService final : public v1::AuthService::Service {
 public:
  explicit AuthGrpcService(AccessGate& gate) : gate_(gate) {}

  grpc::Status WhoAmI(grpc::ServerContext* context, const v1::WhoAmIRequest* request,
                      v1::WhoAmIResponse* response) override;
  grpc::Status CanI(grpc::ServerContext* context, const v1::CanIRequest* request,
                    v1::CanIResponse* response) override;

 private:
  AccessGate& gate_;
};

}  // namespace tollgate::rpc
