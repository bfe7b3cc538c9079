#include "clients/cpp/grpc_inventory_client.h"

#include <utility>

namespace tollgate::client {

GrpcInventoryClient::GrpcInventoryClient(const std::string& target, Credentials credentials,
                                         absl::Duration call_timeout)
    : client_(target, std::move(credentials), AdapterClientOptions(call_timeout)) {}

absl::StatusOr<std::unique_ptr<GrpcInventoryClient>> GrpcInventoryClient::Connect(
    const std::string& target, absl::Duration call_timeout, const ConnectionFiles& files) {
  absl::StatusOr<Credentials> credentials = LoadCredentials(files);
  if (!credentials.ok()) return credentials.status();
  return std::make_unique<GrpcInventoryClient>(target, *std::move(credentials), call_timeout);
}

absl::StatusOr<v1::UpsertNodesResponse> GrpcInventoryClient::UpsertNodes(
    const v1::UpsertNodesRequest& request) {
  return client_.UpsertNodes(request);
}

absl::StatusOr<v1::DeleteNodeResponse> GrpcInventoryClient::DeleteNode(
    const v1::DeleteNodeRequest& request) {
  return client_.DeleteNode(request);
}

absl::StatusOr<v1::ReportPodsResponse> GrpcInventoryClient::ReportPods(
    const v1::ReportPodsRequest& request) {
  return client_.ReportPods(request);
}

absl::StatusOr<v1::ListNodesResponse> GrpcInventoryClient::ListNodes(
    const v1::ListNodesRequest& request) {
  return client_.ListNodes(request);
}

absl::StatusOr<v1::NodeDetails> GrpcInventoryClient::GetNode(const v1::GetNodeRequest& request) {
  return client_.GetNode(request);
}

}  // namespace tollgate::client
