#pragma once

#include <memory>
#include <string>

#include "absl/time/time.h"
#include "clients/cpp/connection.h"
#include "clients/cpp/inventory_client.h"
#include "clients/cpp/tollgate_client.h"

namespace tollgate::client {

// InventoryClient over tollgated's gRPC API, through the shared TollgateClient (replicas,
// following the leader), connecting lazily as GrpcAdmissionClient does. Thread-safe.
class GrpcInventoryClient final : public InventoryClient {
 public:
  // `target`: HOST:PORT, or several separated by commas for a replicated tollgated.
  GrpcInventoryClient(const std::string& target, Credentials credentials,
                      absl::Duration call_timeout);
  static absl::StatusOr<std::unique_ptr<GrpcInventoryClient>> Connect(
      const std::string& target, absl::Duration call_timeout, const ConnectionFiles& files = {});

  absl::StatusOr<v1::UpsertNodesResponse> UpsertNodes(
      const v1::UpsertNodesRequest& request) override;
  absl::StatusOr<v1::DeleteNodeResponse> DeleteNode(const v1::DeleteNodeRequest& request) override;
  absl::StatusOr<v1::ReportPodsResponse> ReportPods(const v1::ReportPodsRequest& request) override;
  absl::StatusOr<v1::ListNodesResponse> ListNodes(const v1::ListNodesRequest& request) override;
  absl::StatusOr<v1::NodeDetails> GetNode(const v1::GetNodeRequest& request) override;

 private:
  TollgateClient client_;
};

}  // namespace tollgate::client
