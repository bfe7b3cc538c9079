#pragma once

// Topology-aware scheduling in a Kubernetes cluster (Kueue's pkg/controller/tas/): feeds
// Tollgate's node inventory from the cluster's Nodes and from the pods Tollgate does not place,
// and releases the pods of placed workloads onto their domains (the topology ungater). The
// decisions are node_feed.h's and services/manifest/topology_enactment.h's; this file reads and
// writes. docs/topology.md.

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "adapters/kube/kube_events.h"
#include "adapters/kube/node_feed.h"
#include "adapters/kube/work_queue.h"
#include "clients/cpp/admission_client.h"
#include "clients/cpp/inventory_client.h"
#include "common/stop_signal.h"
#include "core/clock.h"
#include "services/kubeapi/kube_client.h"

namespace tollgate::kube {

// Kubernetes objects as JSON, as the manifest library and the REST client read them.
using Json = manifest::Json;

// Threads: a Node informer (a (re)list upserts every node and deletes the inventory's others;
// events upsert or delete one), a Pod informer (pods bound to a node and not placed by Tollgate
// are reported with their requests, and removed when they end or go; pods carrying the
// topology gate queue their workload), a loop that queues every workload with gated pods again
// each `resync_period` (a workload whose assignment changed, e.g. after a node failure, is
// picked up there), and one worker. Reconcile of a workload: read it from Tollgate, decide which
// gated pods go to which domain, and patch each (node selector + gate removal, guarded by its
// resourceVersion). Reconcile of a host (Kueue's node controller failing pods): the pods released
// onto it by their hostname node selector and never bound there are marked Failed, with the
// TerminatedByKueue condition and a PodTerminatedByKueue event, when their workload's placement
// no longer names the node or the node fails it (pod_termination.h); a host is looked at when its
// node changes, after the inventory heard of it, and when such a pod changes. tollgate-kube owns
// the inventory it feeds: nodes another feeder upserted are deleted at the next list.
// Thread-safe.
class TopologyController {
 public:
  struct Options {
    absl::Duration resync_period = absl::Seconds(10);
    absl::Duration min_backoff = absl::Milliseconds(200);
    absl::Duration max_backoff = absl::Seconds(30);
    // Who records the events about pods it fails.
    EventSource events;
  };

  TopologyController(kubeapi::KubeClient& kube, client::AdmissionClient& admission,
                     client::InventoryClient& inventory, const core::Clock& clock, Options options);

  // Runs until `stop` fires.
  void Run(const common::StopSignal& stop);

  // One workload, by namespace and name.
  absl::Status Reconcile(const std::string& ns, const std::string& name);
  // The pods released onto one node (by its hostname) and not bound there.
  absl::Status ReconcileHost(const std::string& host);

 private:
  // What the inventory should hold, and what it acknowledged (serialized, by name), for
  // nodes or for reported pods. Flushing sends the difference; what fails stays different and
  // is sent again at the next flush.
  template <typename Item>
  struct Mirror {
    std::map<std::string, Item> desired;
    std::map<std::string, std::string> sent;
    // The informer has listed once: `desired` is the whole truth.
    bool listed = false;
    // `sent` was read back from the inventory (once, at start: an earlier tollgate-kube may
    // have left items this one never saw).
    bool sent_known = false;
  };

  // Serialized items by name, as the inventory holds them.
  using SentItems = std::map<std::string, std::string>;
  template <typename Item>
  struct Diff {
    std::vector<Item> changed;
    std::vector<std::string> removed;
  };
  // What `mirror`'s flush must send; `read_back` fills `sent` the first time. nullopt before the
  // informer listed or when the read-back failed (logged).
  template <typename Item>
  std::optional<Diff<Item>> DiffOf(Mirror<Item>& mirror,
                                   const std::function<absl::StatusOr<SentItems>()>& read_back);

  void NodeInformer(const common::StopSignal& stop);
  void PodInformer(const common::StopSignal& stop);
  void ResyncLoop(const common::StopSignal& stop);
  void WorkerLoop();

  // Returns whether the pod is one placed by topology-aware scheduling (then the nodes'
  // running workloads may have changed; the caller refreshes them once per batch). Adds the host
  // a released, unbound pod waits for to `hosts`.
  bool ObservePod(const Json& pod, bool deleted, std::set<std::string>& hosts)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Records a Node as the inventory should have it; adds its hostname to `hosts` when it changed
  // and pods wait for it.
  void ObserveNode(const Json& node, std::set<std::string>& hosts)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ForgetNode(const std::string& name) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Every host that released, unbound pods wait for.
  std::set<std::string> WaitedHostsLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void EnqueueHosts(const std::set<std::string>& hosts);
  // Sets the running workloads of every node that needs them (NeedsRunningWorkloads); whether
  // any changed.
  bool RefreshRunningWorkloadsLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void FlushNodes();
  void FlushPods();
  void EnqueueGatedWorkloads();
  // Stores the copy the ungating patch returned for a pod of `workload`, unless the informer
  // already replaced `before` (the copy that was patched) or deleted the pod.
  void KeepReleasedCopy(const std::string& ns, const std::string& workload, const Json& before,
                        Json released);
  // Marks one released, unbound pod Failed (Kueue's markPodsFailed) and records the event.
  absl::Status FailPod(const Json& pod);

  kubeapi::KubeClient& kube_;
  client::AdmissionClient& admission_;
  client::InventoryClient& inventory_;
  const core::Clock& clock_;
  const Options options_;
  WorkQueue queue_;

  // Serializes flushes, so two never send the same difference. Taken before mu_.
  absl::Mutex flush_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  mutable absl::Mutex mu_;
  Mirror<v1::Node> nodes_ ABSL_GUARDED_BY(mu_);
  Mirror<v1::NodePod> pods_ ABSL_GUARDED_BY(mu_);
  // Pods placed by topology-aware scheduling, as last seen.
  WorkloadPods workload_pods_ ABSL_GUARDED_BY(mu_);
  // Nodes that name the workloads still running on them: not ready, or tainted
  // (NeedsRunningWorkloads).
  std::set<std::string> running_reporting_nodes_ ABSL_GUARDED_BY(mu_);
  // Hostname -> node name and back, of the nodes listed; and the nodes without a Ready condition
  // (they fail their placements at once and no pod: Kueue's node controller stops there).
  std::map<std::string, std::string> node_by_hostname_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::string> host_of_node_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> nodes_without_ready_ ABSL_GUARDED_BY(mu_);
  // Released, unbound pods (ReleasedUnboundHost) by the hostname they wait for: namespace,
  // workload, pod name.
  std::map<std::string, std::set<std::tuple<std::string, std::string, std::string>>>
      unbound_by_host_ ABSL_GUARDED_BY(mu_);
  uint64_t event_sequence_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace tollgate::kube
