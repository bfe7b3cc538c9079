#include "services/rpc/inventory_service.h"

#include <functional>
#include <string>
#include <utility>

#include "core/real_clock.h"
#include "services/rpc/grpc_status.h"

namespace tollgate::rpc {
namespace {

std::unique_ptr<AccessGate> OpenGate(engine::TollgateApi& api, AccessGate* gate) {
  if (gate != nullptr) return nullptr;
  static const core::RealClock* const clock = new core::RealClock();
  return std::make_unique<AccessGate>(api, *clock, nullptr);
}

auth::AccessRequest Request(absl::string_view verb, absl::string_view kind,
                            absl::string_view name = "") {
  auth::AccessRequest request;
  request.verb = std::string(verb);
  request.kind = std::string(kind);
  request.name = std::string(name);
  return request;
}

// Authorizes, runs and (for writes) audits one call.
template <typename T>
grpc::Status Serve(AccessGate& gate, grpc::ServerContext& context, auth::AccessRequest access,
                   bool audited, const std::function<absl::StatusOr<T>()>& run, T* response) {
  absl::StatusOr<AuthorizedCall> call = gate.Check(context, std::move(access));
  if (!call.ok()) return ToGrpcStatus(call.status());
  absl::StatusOr<T> result = run();
  if (audited) gate.Finish(*call, result.status());
  if (!result.ok()) return ToGrpcStatus(result.status());
  *response = *std::move(result);
  return grpc::Status::OK;
}

}  // namespace

InventoryGrpcService::InventoryGrpcService(engine::TollgateApi& api, AccessGate* gate)
    : api_(api), owned_gate_(OpenGate(api, gate)), gate_(gate ? *gate : *owned_gate_) {}

grpc::Status InventoryGrpcService::UpsertNodes(grpc::ServerContext* context,
                                               const v1::UpsertNodesRequest* request,
                                               v1::UpsertNodesResponse* response) {
  return Serve<v1::UpsertNodesResponse>(
      gate_, *context, Request("apply", "Node"), true, [&] { return api_.UpsertNodes(*request); },
      response);
}

grpc::Status InventoryGrpcService::DeleteNode(grpc::ServerContext* context,
                                              const v1::DeleteNodeRequest* request,
                                              v1::DeleteNodeResponse* response) {
  return Serve<v1::DeleteNodeResponse>(
      gate_, *context, Request("delete", "Node", request->name()), true,
      [&] { return api_.DeleteNode(*request); }, response);
}

grpc::Status InventoryGrpcService::ReportPods(grpc::ServerContext* context,
                                              const v1::ReportPodsRequest* request,
                                              v1::ReportPodsResponse* response) {
  return Serve<v1::ReportPodsResponse>(
      gate_, *context, Request("report", "Node"), true, [&] { return api_.ReportPods(*request); },
      response);
}

grpc::Status InventoryGrpcService::ListNodes(grpc::ServerContext* context,
                                             const v1::ListNodesRequest* request,
                                             v1::ListNodesResponse* response) {
  return Serve<v1::ListNodesResponse>(
      gate_, *context, Request("list", "Node"), false, [&] { return api_.ListNodes(*request); },
      response);
}

grpc::Status InventoryGrpcService::GetNode(grpc::ServerContext* context,
                                           const v1::GetNodeRequest* request,
                                           v1::NodeDetails* response) {
  return Serve<v1::NodeDetails>(
      gate_, *context, Request("get", "Node", request->name()), false,
      [&] { return api_.GetNode(*request); }, response);
}

grpc::Status InventoryGrpcService::GetTopologyUsage(grpc::ServerContext* context,
                                                    const v1::GetTopologyUsageRequest* request,
                                                    v1::GetTopologyUsageResponse* response) {
  return Serve<v1::GetTopologyUsageResponse>(
      gate_, *context, Request("get", "Topology"), false,
      [&] { return api_.GetTopologyUsage(*request); }, response);
}

}  // namespace tollgate::rpc
