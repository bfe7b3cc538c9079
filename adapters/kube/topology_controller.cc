#include "adapters/kube/topology_controller.h"

#include <algorithm>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "adapters/kube/node_feed.h"
#include "adapters/kube/pod_termination.h"
#include "common/json_log.h"
#include "core/status_macros.h"
#include "core/topology.h"
#include "services/api/config_codec.h"
#include "services/api/topology_codec.h"
#include "services/api/workload_codec.h"
#include "services/kubeapi/informer.h"
#include "services/manifest/kube_resource.h"
#include "services/manifest/topology_annotations.h"
#include "services/manifest/topology_enactment.h"

namespace tollgate::kube {
namespace {

constexpr char kWorkloadResource[] = "workloads";
// Work queue keys of hosts (ReconcileHost) are nodes by hostname.
constexpr char kHostResource[] = "nodes";
// The inventory's limit per UpsertNodes and ReportPods call.
constexpr size_t kChunk = 1000;

std::string Serialized(const google::protobuf::Message& message) {
  std::string out;
  message.SerializeToString(&out);
  return out;
}

using Flavors = std::map<std::string, core::ResourceFlavorSpec>;

// The flavors the workload's admission names, read from Tollgate.
absl::StatusOr<Flavors> AdmittedFlavors(client::AdmissionClient& admission,
                                        const core::Workload& wl) {
  Flavors out;
  if (!wl.status.admission.has_value()) return out;
  for (const core::PodSetAssignment& psa : wl.status.admission->pod_sets) {
    for (const auto& [resource, flavor] : psa.flavors) {
      if (out.count(flavor) > 0) continue;
      v1::ObjectRef ref;
      ref.set_kind(v1::RESOURCE_FLAVOR);
      ref.set_name(flavor);
      TOLLGATE_ASSIGN_OR_RETURN(v1::ConfigObject object, admission.GetObject(ref));
      TOLLGATE_ASSIGN_OR_RETURN(out[flavor],
                                api::ResourceFlavorFromProto(object.resource_flavor()));
    }
  }
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

TopologyController::TopologyController(kubeapi::KubeClient& kube,
                                       client::AdmissionClient& admission,
                                       client::InventoryClient& inventory, const core::Clock& clock,
                                       Options options)
    : kube_(kube),
      admission_(admission),
      inventory_(inventory),
      clock_(clock),
      options_(options),
      queue_(clock, options.min_backoff, options.max_backoff) {}

void TopologyController::NodeInformer(const common::StopSignal& stop) {
  kubeapi::InformerHandlers handlers;
  handlers.on_list = [&](const std::vector<Json>& nodes) {
    std::set<std::string> hosts;
    {
      absl::MutexLock lock(&mu_);
      nodes_.desired.clear();
      running_reporting_nodes_.clear();
      node_by_hostname_.clear();
      host_of_node_.clear();
      nodes_without_ready_.clear();
      for (const Json& node : nodes) ObserveNode(node, hosts);
      RefreshRunningWorkloadsLocked();
      nodes_.listed = true;
      hosts = WaitedHostsLocked();
    }
    FlushNodes();
    // After the inventory heard of the nodes, as Kueue records a failed node before it fails
    // the pods there.
    EnqueueHosts(hosts);
  };
  handlers.on_event = [&](const kubeapi::WatchEvent& event) {
    std::set<std::string> hosts;
    {
      absl::MutexLock lock(&mu_);
      if (event.type == "DELETED") {
        ForgetNode(manifest::GetString(event.object, {"metadata", "name"}));
      } else {
        ObserveNode(event.object, hosts);
      }
      RefreshRunningWorkloadsLocked();
    }
    FlushNodes();
    EnqueueHosts(hosts);
  };
  kubeapi::InformerOptions informer;
  informer.min_backoff = options_.min_backoff;
  informer.max_backoff = options_.max_backoff;
  informer.what = "node";
  kubeapi::RunInformer(kube_, manifest::NodeResource(), handlers, clock_, informer, stop);
}

void TopologyController::ObserveNode(const Json& node, std::set<std::string>& hosts) {
  absl::StatusOr<v1::Node> converted = NodeFromKube(node);
  if (!converted.ok()) return;
  const std::string name = converted->metadata().name();
  auto label = converted->metadata().labels().find(core::kHostnameLabel);
  const std::string host = label == converted->metadata().labels().end() ? name : label->second;
  // Running workloads are the inventory's view, refreshed apart: compare without them.
  auto previous = nodes_.desired.find(name);
  bool changed = previous == nodes_.desired.end();
  if (!changed) {
    v1::Node before = previous->second;
    before.mutable_status()->clear_running_workloads();
    changed = Serialized(before) != Serialized(*converted);
  }
  if (auto old = host_of_node_.find(name); old != host_of_node_.end() && old->second != host) {
    if (auto it = node_by_hostname_.find(old->second);
        it != node_by_hostname_.end() && it->second == name) {
      node_by_hostname_.erase(it);
    }
  }
  host_of_node_[name] = host;
  if (std::string& named = node_by_hostname_[host]; named != name) {
    named = name;
    changed = true;
  }
  if (manifest::FindCondition(node, "Ready") == nullptr) {
    nodes_without_ready_.insert(name);
  } else {
    nodes_without_ready_.erase(name);
  }
  nodes_.desired[name] = *std::move(converted);
  if (NeedsRunningWorkloads(node)) {
    running_reporting_nodes_.insert(name);
  } else {
    running_reporting_nodes_.erase(name);
  }
  if (changed && unbound_by_host_.count(host) > 0) hosts.insert(host);
}

void TopologyController::ForgetNode(const std::string& name) {
  nodes_.desired.erase(name);
  running_reporting_nodes_.erase(name);
  nodes_without_ready_.erase(name);
  if (auto host = host_of_node_.find(name); host != host_of_node_.end()) {
    if (auto it = node_by_hostname_.find(host->second);
        it != node_by_hostname_.end() && it->second == name) {
      node_by_hostname_.erase(it);
    }
    host_of_node_.erase(host);
  }
}

std::set<std::string> TopologyController::WaitedHostsLocked() const {
  std::set<std::string> hosts;
  for (const auto& [host, unused] : unbound_by_host_) hosts.insert(host);
  return hosts;
}

void TopologyController::EnqueueHosts(const std::set<std::string>& hosts) {
  for (const std::string& host : hosts) queue_.Add(ObjectKey{kHostResource, "", host});
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

bool TopologyController::ObservePod(const Json& pod, bool deleted, std::set<std::string>& hosts) {
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
  const auto ref = std::make_tuple(ns, workload, name);
  if (auto old = pods.find(name); old != pods.end()) {
    if (std::optional<std::string> host = ReleasedUnboundHost(old->second)) {
      auto waiting = unbound_by_host_.find(*host);
      if (waiting != unbound_by_host_.end()) {
        waiting->second.erase(ref);
        if (waiting->second.empty()) unbound_by_host_.erase(waiting);
      }
    }
  }
  if (std::optional<std::string> host = ReleasedUnboundHost(pod); host.has_value() && !deleted) {
    unbound_by_host_[*host].insert(ref);
    // Kueue's node controller looks at the node a pending pod was sent to on every change of it.
    hosts.insert(*host);
  }
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
  kubeapi::InformerHandlers handlers;
  handlers.on_list = [&](const std::vector<Json>& pods) {
    std::set<std::string> hosts;
    {
      absl::MutexLock lock(&mu_);
      pods_.desired.clear();
      workload_pods_.clear();
      unbound_by_host_.clear();
      for (const Json& pod : pods) ObservePod(pod, false, hosts);
      RefreshRunningWorkloadsLocked();
      pods_.listed = true;
    }
    FlushPods();
    FlushNodes();
    EnqueueHosts(hosts);
  };
  handlers.on_event = [&](const kubeapi::WatchEvent& event) {
    bool nodes_changed = false;
    std::set<std::string> hosts;
    {
      absl::MutexLock lock(&mu_);
      nodes_changed = ObservePod(event.object, event.type == "DELETED", hosts) &&
                      RefreshRunningWorkloadsLocked();
    }
    FlushPods();
    if (nodes_changed) FlushNodes();
    EnqueueHosts(hosts);
  };
  kubeapi::InformerOptions informer;
  informer.min_backoff = options_.min_backoff;
  informer.max_backoff = options_.max_backoff;
  informer.what = "pod";
  kubeapi::RunInformer(kube_, manifest::PodResource(), handlers, clock_, informer, stop);
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
        kube_.Patch(manifest::PodResource(), ns, ungate.pod, kubeapi::PatchType::kJson,
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
      KeepReleasedCopy(ns, name, *pod, *std::move(patched));
    }
  }
  return first_error;
}

void TopologyController::KeepReleasedCopy(const std::string& ns, const std::string& workload,
                                          const Json& before, Json released) {
  absl::MutexLock lock(&mu_);
  auto by_ns = workload_pods_.find(ns);
  if (by_ns == workload_pods_.end()) return;
  auto by_workload = by_ns->second.find(workload);
  if (by_workload == by_ns->second.end()) return;
  const std::string name = manifest::GetString(released, {"metadata", "name"});
  auto stored = by_workload->second.find(name);
  // The informer may have brought the released copy, or a newer one (the scheduler marking it
  // unschedulable), while the patch returned: keeping the patch's copy over it would make every
  // later status patch of the pod fail its resourceVersion precondition, with no event left to
  // bring the newer copy back. A pod deleted meanwhile stays deleted.
  if (stored == by_workload->second.end() ||
      manifest::GetString(stored->second, {"metadata", "resourceVersion"}) !=
          manifest::GetString(before, {"metadata", "resourceVersion"})) {
    return;
  }
  stored->second = std::move(released);
}

absl::Status TopologyController::ReconcileHost(const std::string& host) {
  v1::Node node;
  // By workload (namespace, name): its released pods waiting for this host.
  std::map<std::pair<std::string, std::string>, std::vector<Json>> waiting;
  {
    absl::MutexLock lock(&mu_);
    if (!nodes_.listed || !pods_.listed) return absl::OkStatus();
    auto name = node_by_hostname_.find(host);
    // A node that is gone, or has no Ready condition, fails its placements at once and no pod
    // (Kueue's node controller returns before looking at pods).
    if (name == node_by_hostname_.end() || nodes_without_ready_.count(name->second) > 0) {
      return absl::OkStatus();
    }
    node = nodes_.desired.at(name->second);
    auto refs = unbound_by_host_.find(host);
    if (refs == unbound_by_host_.end()) return absl::OkStatus();
    for (const auto& [ns, workload, pod] : refs->second) {
      auto by_ns = workload_pods_.find(ns);
      if (by_ns == workload_pods_.end()) continue;
      auto by_workload = by_ns->second.find(workload);
      if (by_workload == by_ns->second.end()) continue;
      auto found = by_workload->second.find(pod);
      if (found != by_workload->second.end()) waiting[{ns, workload}].push_back(found->second);
    }
  }
  absl::StatusOr<core::NodeSpec> spec = api::NodeFromProto(node);
  if (!spec.ok()) {
    // The inventory refuses it too; the node's next change brings it here again.
    common::Log("warning", "cannot read node",
                {{"host", host}, {"error", spec.status().ToString()}});
    return absl::OkStatus();
  }
  absl::Status first_error;
  auto keep = [&](const absl::Status& status) {
    if (first_error.ok() && !status.ok()) first_error = status;
  };
  for (const auto& [key, pods] : waiting) {
    v1::WorkloadRef ref;
    ref.set_namespace_(key.first);
    ref.set_name(key.second);
    absl::StatusOr<v1::Workload> stored = admission_.GetWorkload(ref);
    // Kueue leaves the pods of a workload that is gone.
    if (absl::IsNotFound(stored.status())) continue;
    if (!stored.ok()) {
      keep(stored.status());
      continue;
    }
    absl::StatusOr<core::Workload> wl = api::WorkloadFromStoredProto(*stored);
    if (!wl.ok()) {
      keep(wl.status());
      continue;
    }
    absl::StatusOr<Flavors> flavors = NeedsFlavors(*spec, *wl) ? AdmittedFlavors(admission_, *wl)
                                                               : absl::StatusOr<Flavors>(Flavors());
    if (!flavors.ok()) {
      keep(flavors.status());
      continue;
    }
    if (!FailsUnboundPodsOn(*spec, *wl, *flavors)) continue;
    for (const Json& pod : pods) keep(FailPod(pod));
  }
  return first_error;
}

absl::Status TopologyController::FailPod(const Json& pod) {
  const std::string ns = manifest::GetString(pod, {"metadata", "namespace"});
  const std::string name = manifest::GetString(pod, {"metadata", "name"});
  absl::StatusOr<Json> patched = kube_.PatchStatus(manifest::PodResource(), ns, name,
                                                   TerminationStatusPatch(pod, clock_.Now()));
  if (absl::IsNotFound(patched.status())) return absl::OkStatus();
  // A pod that moved on (its resourceVersion precondition failed) is decided again from the
  // newer copy the informer brings.
  TOLLGATE_RETURN_IF_ERROR(patched.status());
  common::Log("info", "failed a pod released onto a node it cannot reach",
              {{"pod", absl::StrCat(ns, "/", name)},
               {"node", manifest::GetString(pod, {"spec", "nodeSelector", core::kHostnameLabel})}});
  uint64_t sequence = 0;
  {
    absl::MutexLock lock(&mu_);
    sequence = ++event_sequence_;
  }
  RecordKubeEvent(kube_, manifest::PodResource(), *patched, "Normal", kPodTerminatedByKueueEvent,
                  kTerminatedByKueueMessage, clock_.Now(), sequence, options_.events,
                  kPodTerminatedAction);
  return absl::OkStatus();
}

void TopologyController::WorkerLoop() {
  DrainWorkQueue(
      queue_,
      [this](const ObjectKey& key) {
        return key.resource == kHostResource ? ReconcileHost(key.name)
                                             : Reconcile(key.ns, key.name);
      },
      "topology");
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
