#pragma once

// The node inventory calls an adapter makes to feed topology-aware scheduling
// (InventoryService; docs/topology.md), behind an interface so adapters are tested against a
// fake; GrpcInventoryClient is the real one.

#include "absl/status/statusor.h"
#include "tollgate/v1/inventory.pb.h"

namespace tollgate::client {

// Errors as AdmissionClient's. Thread-safe.
class InventoryClient {
 public:
  virtual ~InventoryClient() = default;

  virtual absl::StatusOr<v1::UpsertNodesResponse> UpsertNodes(
      const v1::UpsertNodesRequest& request) = 0;
  virtual absl::StatusOr<v1::DeleteNodeResponse> DeleteNode(
      const v1::DeleteNodeRequest& request) = 0;
  virtual absl::StatusOr<v1::ReportPodsResponse> ReportPods(
      const v1::ReportPodsRequest& request) = 0;
  virtual absl::StatusOr<v1::ListNodesResponse> ListNodes(const v1::ListNodesRequest& request) = 0;
  virtual absl::StatusOr<v1::NodeDetails> GetNode(const v1::GetNodeRequest& request) = 0;
};

}  // namespace tollgate::client
