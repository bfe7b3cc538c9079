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
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "adapters/kube/kube_client.h"
#include "adapters/kube/node_feed.h"
#include "adapters/kube/work_queue.h"
#include "clients/cpp/admission_client.h"
#include "clients/cpp/inventory_client.h"
#include "common/stop_signal.h"
#include "core/clock.h"

namespace tollgate::kube {

// Threads: a Node informer (a (re)list upserts every node and deletes the inventory's others;
// events upsert or delete one), a Pod informer (pods bound to a node and not placed by Tollgate
// are reported with their requests, and removed when they end or go; pods carrying the
// topology gate queue their workload), a loop that queues every workload with gated pods again
// each `resync_period` (a workload whose assignment changed, e.g. after a node failure, is
// picked up there), and one worker. Reconcile of a workload: read it from Tollgate, decide which
// gated pods go to which domain, and patch each (node selector + gate removal, guarded by its
// resourceVersion). tollgate-kube owns the inventory it feeds: nodes another feeder upserted
// are deleted at the next list. Thread-safe.
class TopologyController {
 public:
  struct Options {
    absl::Duration resync_period = absl::Seconds(10);
    absl::Duration min_backoff = absl::Milliseconds(200);
    absl::Duration max_backoff = absl::Seconds(30);
  };

  TopologyController(KubeClient& kube, client::AdmissionClient& admission,
                     client::InventoryClient& inventory, const core::Clock& clock, Options options);

  // Runs until `stop` fires.
  void Run(const common::StopSignal& stop);

  // One workload, by namespace and name.
  absl::Status Reconcile(const std::string& ns, const std::string& name);

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
  // running workloads may have changed; the caller refreshes them once per batch).
  bool ObservePod(const Json& pod, bool deleted) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Records a Node as the inventory should have it.
  void ObserveNode(const Json& node) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Sets the running workloads of every node that needs them (NeedsRunningWorkloads); whether
  // any changed.
  bool RefreshRunningWorkloadsLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void FlushNodes();
  void FlushPods();
  void EnqueueGatedWorkloads();

  KubeClient& kube_;
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
};

}  // namespace tollgate::kube
