#include "adapters/kube/topology_controller.h"

#include <algorithm>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "adapters/kube/informer.h"
#include "adapters/kube/node_feed.h"
#include "common/json_log.h"
#include "core/status_macros.h"
#include "services/manifest/kube_resource.h"
#include "services/manifest/topology_annotations.h"
#include "services/manifest/topology_enactment.h"

namespace tollgate::kube {
namespace {

constexpr char kWorkloadResource[] = "workloads";
// The inventory's limit per UpsertNodes and ReportPods call.
constexpr size_t kChunk = 1000;

std::string Serialized(const google::protobuf::Message& message) {
  std::string out;
  message.SerializeToString(&out);
  return out;
}

bool Gated(const Json& pod) {
  const Json* gates = manifest::Find(pod, {"spec", "schedulingGates"});
  if (gates == nullptr || !gates->is_array()) return false;
  return std::any_of(gates->begin(), gates->end(), [](const Json& gate) {
    return manifest::GetString(gate, {"name"}) == manifest::kTopologySchedulingGate;
  });
}

}  // namespace

TopologyController::TopologyController(KubeClient& kube, client::AdmissionClient& admission,
                                       client::InventoryClient& inventory, const core::Clock& clock,
                                       Options options)
    : kube_(kube),
      admission_(admission),
      inventory_(inventory),
      clock_(clock),
      options_(options),
      queue_(clock, options.min_backoff, options.max_backoff) {}

void TopologyController::NodeInformer(const common::StopSignal& stop) {
  InformerHandlers handlers;
  handlers.on_list = [&](const std::vector<Json>& nodes) {
    {
      absl::MutexLock lock(&mu_);
      nodes_.desired.clear();
      running_reporting_nodes_.clear();
      for (const Json& node : nodes) ObserveNode(node);
      RefreshRunningWorkloadsLocked();
      nodes_.listed = true;
    }
    FlushNodes();
  };
  handlers.on_event = [&](const WatchEvent& event) {
    {
      absl::MutexLock lock(&mu_);
      if (event.type == "DELETED") {
        const std::string name = manifest::GetString(event.object, {"metadata", "name"});
        nodes_.desired.erase(name);
        running_reporting_nodes_.erase(name);
      } else {
        ObserveNode(event.object);
      }
      RefreshRunningWorkloadsLocked();
    }
    FlushNodes();
  };
  InformerOptions informer;
  informer.min_backoff = options_.min_backoff;
  informer.max_backoff = options_.max_backoff;
  informer.what = "node";
  RunInformer(kube_, manifest::NodeResource(), handlers, clock_, informer, stop);
}

void TopologyController::ObserveNode(const Json& node) {
  absl::StatusOr<v1::Node> converted = NodeFromKube(node);
  if (!converted.ok()) return;
  const std::string name = converted->metadata().name();
  nodes_.desired[name] = *std::move(converted);
  if (NeedsRunningWorkloads(node)) {
    running_reporting_nodes_.insert(name);
  } else {
    running_reporting_nodes_.erase(name);
  }
}

bool TopologyController::RefreshRunningWorkloadsLocked() {
  bool changed = false;
  for (const std::string& name : running_reporting_nodes_) {
    auto it = nodes_.desired.find(name);
    if (it == nodes_.desired.end()) continue;
    const std::vector<std::string> running = RunningWorkloadsOn(it->second, workload_pods_);
    auto* field = it->second.mutable_status()->mutable_running_workloads();
    if (std::equal(running.begin(), running.end(), field->begin(), field->end())) continue;
    field->Assign(running.begin(), running.end());
    changed = true;
  }
  return changed;
}

bool TopologyController::ObservePod(const Json& pod, bool deleted) {
  const std::string key = ReportedPodName(pod);
  std::optional<v1::NodePod> reported = deleted ? std::nullopt : ReportedPodFromKube(pod);
  if (reported.has_value()) {
    pods_.desired[key] = *std::move(reported);
  } else {
    pods_.desired.erase(key);
  }
  if (!manifest::IsTopologyPod(pod)) return false;
  const std::string ns = manifest::GetString(pod, {"metadata", "namespace"});
  const std::string workload =
      manifest::GetString(pod, {"metadata", "annotations", manifest::kWorkloadAnnotation});
  if (workload.empty()) return false;
  const std::string name = manifest::GetString(pod, {"metadata", "name"});
  auto& pods = workload_pods_[ns][workload];
  if (deleted) {
    pods.erase(name);
    if (pods.empty()) workload_pods_[ns].erase(workload);
    if (workload_pods_[ns].empty()) workload_pods_.erase(ns);
  } else {
    pods[name] = pod;
  }
  // A deleted or released pod can free a domain for a gated one (Kueue queues on every change).
  queue_.Add(ObjectKey{kWorkloadResource, ns, workload});
  return true;
}

void TopologyController::PodInformer(const common::StopSignal& stop) {
  InformerHandlers handlers;
  handlers.on_list = [&](const std::vector<Json>& pods) {
    {
      absl::MutexLock lock(&mu_);
      pods_.desired.clear();
      workload_pods_.clear();
      for (const Json& pod : pods) ObservePod(pod, false);
      RefreshRunningWorkloadsLocked();
      pods_.listed = true;
    }
    FlushPods();
    FlushNodes();
  };
  handlers.on_event = [&](const WatchEvent& event) {
    bool nodes_changed = false;
    {
      absl::MutexLock lock(&mu_);
      nodes_changed =
          ObservePod(event.object, event.type == "DELETED") && RefreshRunningWorkloadsLocked();
    }
    FlushPods();
    if (nodes_changed) FlushNodes();
  };
  InformerOptions informer;
  informer.min_backoff = options_.min_backoff;
  informer.max_backoff = options_.max_backoff;
  informer.what = "pod";
  RunInformer(kube_, manifest::PodResource(), handlers, clock_, informer, stop);
}

template <typename Item>
std::optional<TopologyController::Diff<Item>> TopologyController::DiffOf(
    Mirror<Item>& mirror, const std::function<absl::StatusOr<SentItems>()>& read_back) {
  Diff<Item> diff;
  std::map<std::string, Item> desired;
  SentItems sent;
  bool known = false;
  {
    absl::MutexLock lock(&mu_);
    if (!mirror.listed) return std::nullopt;
    desired = mirror.desired;
    sent = mirror.sent;
    known = mirror.sent_known;
  }
  if (!known) {
    absl::StatusOr<SentItems> stored = read_back();
    if (!stored.ok()) {
      common::Log("warning", "cannot read the node inventory",
                  {{"error", stored.status().ToString()}});
      return std::nullopt;
    }
    sent = *std::move(stored);
    absl::MutexLock lock(&mu_);
    mirror.sent = sent;
    mirror.sent_known = true;
  }
  for (const auto& [name, item] : desired) {
    auto it = sent.find(name);
    if (it == sent.end() || it->second != Serialized(item)) diff.changed.push_back(item);
  }
  for (const auto& [name, unused] : sent) {
    if (desired.count(name) == 0) diff.removed.push_back(name);
  }
  return diff;
}

void TopologyController::FlushNodes() {
  absl::MutexLock flush(&flush_mu_);
  {
    // A not-ready or tainted node names the workloads still running on it, which needs the
    // pods: sent before they are listed, it would fail every placement on it at once.
    absl::MutexLock lock(&mu_);
    if (!pods_.listed) return;
  }
  std::optional<Diff<v1::Node>> diff = DiffOf<v1::Node>(nodes_, [&]() -> absl::StatusOr<SentItems> {
    TOLLGATE_ASSIGN_OR_RETURN(v1::ListNodesResponse inventory, inventory_.ListNodes({}));
    SentItems sent;
    for (const v1::NodeSummary& summary : inventory.nodes()) {
      sent[summary.node().metadata().name()] = Serialized(summary.node());
    }
    return sent;
  });
  if (!diff.has_value()) return;
  for (size_t begin = 0; begin < diff->changed.size(); begin += kChunk) {
    v1::UpsertNodesRequest request;
    const size_t end = std::min(diff->changed.size(), begin + kChunk);
    for (size_t i = begin; i < end; ++i) *request.add_nodes() = diff->changed[i];
    absl::StatusOr<v1::UpsertNodesResponse> upserted = inventory_.UpsertNodes(request);
    if (!upserted.ok()) {
      common::Log("warning", "cannot upsert nodes", {{"error", upserted.status().ToString()}});
      return;
    }
    absl::MutexLock lock(&mu_);
    for (const v1::Node& node : request.nodes()) {
      nodes_.sent[node.metadata().name()] = Serialized(node);
    }
  }
  for (const std::string& name : diff->removed) {
    v1::DeleteNodeRequest request;
    request.set_name(name);
    absl::StatusOr<v1::DeleteNodeResponse> deleted = inventory_.DeleteNode(request);
    if (!deleted.ok() && !absl::IsNotFound(deleted.status())) {
      common::Log("warning", "cannot delete node",
                  {{"node", name}, {"error", deleted.status().ToString()}});
      return;
    }
    absl::MutexLock lock(&mu_);
    nodes_.sent.erase(name);
  }
}

void TopologyController::FlushPods() {
  absl::MutexLock flush(&flush_mu_);
  // What an earlier tollgate-kube reported: the pods on each node that has some.
  std::optional<Diff<v1::NodePod>> diff =
      DiffOf<v1::NodePod>(pods_, [&]() -> absl::StatusOr<SentItems> {
        TOLLGATE_ASSIGN_OR_RETURN(v1::ListNodesResponse inventory, inventory_.ListNodes({}));
        SentItems sent;
        for (const v1::NodeSummary& summary : inventory.nodes()) {
          if (summary.reported_pods() == 0) continue;
          v1::GetNodeRequest request;
          request.set_name(summary.node().metadata().name());
          TOLLGATE_ASSIGN_OR_RETURN(v1::NodeDetails details, inventory_.GetNode(request));
          for (const v1::NodePod& pod : details.reported_pods()) sent[pod.name()] = Serialized(pod);
        }
        return sent;
      });
  if (!diff.has_value()) return;
  const std::vector<v1::NodePod>& changed = diff->changed;
  const std::vector<std::string>& removed = diff->removed;
  for (size_t begin = 0; begin < std::max(changed.size(), removed.size()); begin += kChunk) {
    v1::ReportPodsRequest request;
    for (size_t i = begin; i < std::min(changed.size(), begin + kChunk); ++i) {
      *request.add_pods() = changed[i];
    }
    for (size_t i = begin; i < std::min(removed.size(), begin + kChunk); ++i) {
      request.add_removed(removed[i]);
    }
    absl::StatusOr<v1::ReportPodsResponse> reported = inventory_.ReportPods(request);
    if (!reported.ok()) {
      common::Log("warning", "cannot report pods", {{"error", reported.status().ToString()}});
      return;
    }
    absl::MutexLock lock(&mu_);
    for (const v1::NodePod& pod : request.pods()) pods_.sent[pod.name()] = Serialized(pod);
    for (const std::string& name : request.removed()) pods_.sent.erase(name);
  }
}

void TopologyController::EnqueueGatedWorkloads() {
  absl::MutexLock lock(&mu_);
  for (const auto& [ns, workloads] : workload_pods_) {
    for (const auto& [workload, pods] : workloads) {
      if (std::any_of(pods.begin(), pods.end(), [](const auto& p) { return Gated(p.second); })) {
        queue_.Add(ObjectKey{kWorkloadResource, ns, workload});
      }
    }
  }
}

void TopologyController::ResyncLoop(const common::StopSignal& stop) {
  while (!stop.WaitFor(options_.resync_period)) {
    FlushNodes();
    FlushPods();
    EnqueueGatedWorkloads();
  }
}

absl::Status TopologyController::Reconcile(const std::string& ns, const std::string& name) {
  std::vector<Json> pods;
  {
    absl::MutexLock lock(&mu_);
    auto by_ns = workload_pods_.find(ns);
    if (by_ns == workload_pods_.end()) return absl::OkStatus();
    auto by_workload = by_ns->second.find(name);
    if (by_workload == by_ns->second.end()) return absl::OkStatus();
    for (const auto& [pod_name, pod] : by_workload->second) pods.push_back(pod);
  }
  if (std::none_of(pods.begin(), pods.end(), Gated)) return absl::OkStatus();
  v1::WorkloadRef ref;
  ref.set_namespace_(ns);
  ref.set_name(name);
  absl::StatusOr<v1::Workload> workload = admission_.GetWorkload(ref);
  if (absl::IsNotFound(workload.status())) return absl::OkStatus();
  TOLLGATE_RETURN_IF_ERROR(workload.status());
  absl::Status first_error;
  for (const manifest::PodUngate& ungate : manifest::PodsToUngate(*workload, pods)) {
    const Json* pod = nullptr;
    for (const Json& p : pods) {
      if (manifest::GetString(p, {"metadata", "name"}) == ungate.pod) pod = &p;
    }
    absl::StatusOr<Json> patched =
        kube_.Patch(manifest::PodResource(), ns, ungate.pod, PatchType::kJson,
                    manifest::UngatePatch(*pod, ungate.node_labels));
    if (!patched.ok() && !absl::IsNotFound(patched.status())) {
      // A pod that moved on (its resourceVersion test failed) is decided again from the newer
      // copy the informer brings.
      if (first_error.ok()) first_error = patched.status();
      continue;
    }
    if (patched.ok()) {
      common::Log("info", "released pod onto its topology domain",
                  {{"pod", absl::StrCat(ns, "/", ungate.pod)}, {"workload", name}});
      absl::MutexLock lock(&mu_);
      workload_pods_[ns][name][ungate.pod] = *patched;
    }
  }
  return first_error;
}

void TopologyController::WorkerLoop() {
  DrainWorkQueue(
      queue_, [this](const ObjectKey& key) { return Reconcile(key.ns, key.name); },
      "topology ungating");
}

void TopologyController::Run(const common::StopSignal& stop) {
  std::vector<std::thread> threads;
  threads.emplace_back([this, &stop] { NodeInformer(stop); });
  threads.emplace_back([this, &stop] { PodInformer(stop); });
  threads.emplace_back([this, &stop] { ResyncLoop(stop); });
  threads.emplace_back([this] { WorkerLoop(); });
  stop.WaitFor(absl::InfiniteDuration());
  queue_.ShutDown();
  for (std::thread& t : threads) t.join();
}

}  // namespace tollgate::kube
