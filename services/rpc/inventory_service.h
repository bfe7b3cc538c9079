#pragma once

// tollgate.v1.InventoryService: the node inventory of Topology Aware Scheduling (nodes, the pods
// Tollgate does not place, and the views of what is placed where; docs/topology.md). Each
// handler asks the AccessGate first: kind Node with verbs apply, delete, report, get and list;
// the topology view is `get` on kind Topology (docs/security.md).

#include <memory>

#include "grpcpp/grpcpp.h"
#include "services/engine/tollgate_api.h"
#include "services/rpc/access_gate.h"
#include "tollgate/v1/inventory.grpc.pb.h"

namespace tollgate::rpc {

// Holds the API and the gate by reference; both must outlive the gRPC server. Thread-safe.
class InventoryGrpcService final : public v1::InventoryService::Service {
 public:
  // `gate` checks every call; null: an owned gate that lets every caller act as admin.
  explicit InventoryGrpcService(engine::TollgateApi& api, AccessGate* gate = nullptr);

  grpc::Status UpsertNodes(grpc::ServerContext* context, const v1::UpsertNodesRequest* request,
                           v1::UpsertNodesResponse* response) override;
  grpc::Status DeleteNode(grpc::ServerContext* context, const v1::DeleteNodeRequest* request,
                          v1::DeleteNodeResponse* response) override;
  grpc::Status ReportPods(grpc::ServerContext* context, const v1::ReportPodsRequest* request,
                          v1::ReportPodsResponse* response) override;
  grpc::Status ListNodes(grpc::ServerContext* context, const v1::ListNodesRequest* request,
                         v1::ListNodesResponse* response) override;
  grpc::Status GetNode(grpc::ServerContext* context, const v1::GetNodeRequest* request,
                       v1::NodeDetails* response) override;
  grpc::Status GetTopologyUsage(grpc::ServerContext* context,
                                const v1::GetTopologyUsageRequest* request,
                                v1::GetTopologyUsageResponse* response) override;

 private:
  engine::TollgateApi& api_;
  std::unique_ptr<AccessGate> owned_gate_;
  AccessGate& gate_;
};

}  // namespace tollgate::rpc
