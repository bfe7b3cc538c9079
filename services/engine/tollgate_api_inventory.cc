#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/names.h"
#include "core/status_macros.h"
#include "core/topology_views.h"
#include "services/api/api_codec.h"
#include "services/engine/tollgate_api.h"

// TollgateApi's node inventory for Topology Aware Scheduling (docs/topology.md): nodes and the
// pods Tollgate does not place go into the state and the store together, in one commit; the
// reads answer from the state.

namespace tollgate::engine {
namespace {

// The most nodes or pods one call writes: a batch stays well within one commit.
constexpr int kMaxInventoryBatch = 1000;

absl::Status CheckBatch(absl::string_view field, int size) {
  if (size > kMaxInventoryBatch) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": must have at most ", kMaxInventoryBatch, " items, got ", size));
  }
  return absl::OkStatus();
}

v1::NodeSummary SummaryOf(const core::NodeView& view) {
  v1::NodeSummary out;
  *out.mutable_node() = api::NodeToProto(view.node);
  for (const std::string& flavor : view.flavors) out.add_flavors(flavor);
  out.set_reported_pods(view.reported_pods);
  out.set_placed_pods(view.placed_pods);
  api::ResourceAmountsToProto(view.free, out.mutable_free());
  return out;
}

v1::WorkloadRef RefOfKey(const std::string& key) {
  v1::WorkloadRef ref;
  const size_t slash = key.find('/');
  ref.set_namespace_(key.substr(0, slash));
  ref.set_name(slash == std::string::npos ? key : key.substr(slash + 1));
  return ref;
}

}  // namespace

absl::StatusOr<v1::UpsertNodesResponse> TollgateApi::UpsertNodes(
    const v1::UpsertNodesRequest& request) {
  TOLLGATE_RETURN_IF_ERROR(CheckBatch("nodes", request.nodes_size()));
  // Validated before the state is touched: all or none.
  std::vector<core::NodeSpec> nodes;
  nodes.reserve(request.nodes_size());
  for (int i = 0; i < request.nodes_size(); ++i) {
    absl::StatusOr<core::NodeSpec> node = api::NodeFromProto(request.nodes(i));
    if (!node.ok()) {
      return absl::Status(node.status().code(),
                          request.nodes_size() == 1
                              ? std::string(node.status().message())
                              : absl::StrCat("nodes[", i, "]: ", node.status().message()));
    }
    for (const core::NodeSpec& earlier : nodes) {
      if (earlier.name == node->name) {
        return absl::InvalidArgumentError(absl::StrCat(
            "nodes[", i, "].metadata.name: duplicate value ", core::QuoteValue(node->name)));
      }
    }
    nodes.push_back(*std::move(node));
  }
  return executor_.Run<v1::UpsertNodesResponse>(
      [&](AdmissionExecutor::Txn& txn) -> absl::StatusOr<v1::UpsertNodesResponse> {
        for (core::NodeSpec& node : nodes) {
          TOLLGATE_RETURN_IF_ERROR(txn.UpsertNode(std::move(node)));
        }
        v1::UpsertNodesResponse response;
        response.set_revision(txn.commit_revision());
        return response;
      });
}

absl::StatusOr<v1::DeleteNodeResponse> TollgateApi::DeleteNode(
    const v1::DeleteNodeRequest& request) {
  if (request.name().empty()) return absl::InvalidArgumentError("name: required value, got \"\"");
  return executor_.Run<v1::DeleteNodeResponse>(
      [&](AdmissionExecutor::Txn& txn) -> absl::StatusOr<v1::DeleteNodeResponse> {
        TOLLGATE_RETURN_IF_ERROR(txn.DeleteNode(request.name()));
        v1::DeleteNodeResponse response;
        response.set_revision(txn.commit_revision());
        return response;
      });
}

absl::StatusOr<v1::ReportPodsResponse> TollgateApi::ReportPods(
    const v1::ReportPodsRequest& request) {
  TOLLGATE_RETURN_IF_ERROR(CheckBatch("pods", request.pods_size()));
  TOLLGATE_RETURN_IF_ERROR(CheckBatch("removed", request.removed_size()));
  std::vector<api::ReportedPod> pods;
  pods.reserve(request.pods_size());
  for (int i = 0; i < request.pods_size(); ++i) {
    TOLLGATE_ASSIGN_OR_RETURN(
        api::ReportedPod pod,
        api::NodePodFromProto(request.pods(i), absl::StrCat("pods[", i, "]")));
    pods.push_back(std::move(pod));
  }
  return executor_.Run<v1::ReportPodsResponse>(
      [&](AdmissionExecutor::Txn& txn) -> absl::StatusOr<v1::ReportPodsResponse> {
        for (const std::string& name : request.removed()) {
          if (txn.state().topology().pods().count(name) == 0) continue;
          TOLLGATE_RETURN_IF_ERROR(txn.RemovePod(name));
        }
        for (api::ReportedPod& pod : pods) {
          const v1::NodePod stored = api::NodePodToProto(pod.name, pod.node, pod.requests);
          TOLLGATE_RETURN_IF_ERROR(txn.ReportPod(std::move(pod.name), std::move(pod.node),
                                                 std::move(pod.requests), stored));
        }
        v1::ReportPodsResponse response;
        response.set_revision(txn.commit_revision());
        return response;
      });
}

absl::StatusOr<v1::ListNodesResponse> TollgateApi::ListNodes(const v1::ListNodesRequest& request) {
  return executor_.Run<v1::ListNodesResponse>(
      [&](AdmissionExecutor::Txn& txn) -> absl::StatusOr<v1::ListNodesResponse> {
        v1::ListNodesResponse response;
        for (const core::NodeView& view : core::NodeViews(txn.state())) {
          *response.add_nodes() = SummaryOf(view);
        }
        response.set_revision(txn.read_revision());
        return response;
      });
}

absl::StatusOr<v1::NodeDetails> TollgateApi::GetNode(const v1::GetNodeRequest& request) {
  if (request.name().empty()) return absl::InvalidArgumentError("name: required value, got \"\"");
  return executor_.Run<v1::NodeDetails>(
      [&](AdmissionExecutor::Txn& txn) -> absl::StatusOr<v1::NodeDetails> {
        std::optional<core::NodeView> view = core::NodeDetails(txn.state(), request.name());
        if (!view.has_value()) {
          return absl::NotFoundError(
              absl::StrCat("Node ", core::QuoteValue(request.name()), " not found"));
        }
        v1::NodeDetails out;
        *out.mutable_summary() = SummaryOf(*view);
        const auto& reported = txn.state().topology().pods();
        for (const std::string& name : view->reported) {
          auto it = reported.find(name);
          if (it == reported.end()) continue;
          *out.add_reported_pods() =
              api::NodePodToProto(name, it->second.node, it->second.requests);
        }
        for (const core::NodePlacementView& p : view->placements) {
          v1::NodePlacement* pp = out.add_placements();
          *pp->mutable_workload() = RefOfKey(p.workload);
          pp->set_pod_set(p.pod_set);
          pp->set_flavor(p.flavor);
          pp->set_count(p.count);
          api::ResourceAmountsToProto(p.per_pod, pp->mutable_requests());
        }
        for (const std::string& key : view->unhealthy_for) {
          *out.add_unhealthy_for() = RefOfKey(key);
        }
        out.set_revision(txn.read_revision());
        return out;
      });
}

absl::StatusOr<v1::GetTopologyUsageResponse> TollgateApi::GetTopologyUsage(
    const v1::GetTopologyUsageRequest& request) {
  return executor_.Run<v1::GetTopologyUsageResponse>(
      [&](AdmissionExecutor::Txn& txn) -> absl::StatusOr<v1::GetTopologyUsageResponse> {
        std::vector<core::FlavorTopologyView> views =
            core::TopologyViews(txn.state(), request.flavor());
        if (!request.flavor().empty() && views.empty()) {
          return absl::NotFoundError(absl::StrCat("ResourceFlavor ",
                                                  core::QuoteValue(request.flavor()),
                                                  " not found or has no spec.topologyName"));
        }
        v1::GetTopologyUsageResponse response;
        for (core::FlavorTopologyView& view : views) {
          v1::FlavorTopology* f = response.add_flavors();
          f->set_flavor(view.flavor);
          f->set_topology(view.topology);
          f->set_topology_missing(view.topology_missing);
          for (const std::string& level : view.levels) f->add_levels(level);
          for (const core::TopologyDomainView& d : view.domains) {
            v1::TopologyDomainUsage* pd = f->add_domains();
            pd->set_level(d.level);
            for (const std::string& v : d.values) pd->add_values(v);
            api::ResourceAmountsToProto(d.capacity, pd->mutable_capacity());
            api::ResourceAmountsToProto(d.used, pd->mutable_used());
            api::ResourceAmountsToProto(d.free, pd->mutable_free());
            pd->set_nodes(d.nodes);
          }
        }
        response.set_revision(txn.read_revision());
        return response;
      });
}

}  // namespace tollgate::engine
