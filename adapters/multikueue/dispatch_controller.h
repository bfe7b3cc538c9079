#pragma once

// tollgate-multikueue's manager side (Kueue's multikueue admission check controller and its
// workload reconciler): follows the manager's workloads that carry a MultiKueue check, keeps a
// WorkerLink per MultiKueueCluster, reports the clusters' and the checks' Active conditions,
// and for each workload applies what the pure core decides (core/multikueue_remote_sync.h
// PlanRemoteSync, core/multikueue_dispatcher.h Nominate and SyncCopies): copies created and
// deleted on the workers, the check's state, status.clusterName and the nominees written with
// compare-and-swap on the workload's revision. One reconcile thread does every write; the
// watches and the configuration sync only mark workloads dirty and wake it.
// docs/multicluster.md describes the state machine.

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "adapters/multikueue/worker_link.h"
#include "clients/cpp/tollgate_client.h"
#include "common/stop_signal.h"
#include "core/clock.h"
#include "core/multikueue_checks.h"
#include "core/multikueue_dispatcher.h"
#include "tollgate/v1/objects.pb.h"

namespace tollgate::multikueue {

class DispatchController {
 public:
  struct Options {
    core::MultiKueueSettings settings;
    // The manager's own address: a MultiKueueCluster pointing there is refused (BadKubeConfig).
    std::string manager_address;
    // Where kubeConfig paths must lie (Kueue's /etc/multikueue/kubeconfigs).
    std::string kubeconfig_dir = std::string(kDefaultKubeConfigDir);
    // Where kubeConfig Secrets are mounted, a directory per Secret; empty: not read.
    std::string kubeconfig_secrets_dir;
    // Set: kubeConfig Secrets are read through the Kubernetes API instead (ApiSecretReader).
    SecretReader read_secret;
    // How often the AdmissionChecks, MultiKueueConfigs and MultiKueueClusters are read again.
    absl::Duration config_sync_period = absl::Seconds(10);
    absl::Duration call_timeout = absl::Seconds(10);
    // A worker whose watch brings nothing, not even a bookmark, this long counts as lost
    // (WorkerLink::Options::idle_timeout).
    absl::Duration worker_idle_timeout = absl::Seconds(30);
    absl::Duration min_backoff = absl::Milliseconds(100);
    absl::Duration max_backoff = absl::Seconds(5);
  };

  DispatchController(client::TollgateClient& manager, const core::Clock& clock, Options options);
  ~DispatchController();

  // Runs until `stop`.
  void Run(const common::StopSignal& stop);

  // A kubeConfig Secret was created, changed or deleted (WatchSecrets); "" when any may have
  // been. The configuration is synced at once if a cluster names it, as Kueue's secretHandler
  // queues the clusters using a Secret. Thread-safe.
  void SecretChanged(const std::string& secret);

 private:
  // What this controller last told the manager about one cluster's or check's Active condition.
  struct Reported {
    bool active = false;
    std::string reason;
    std::string message;
    bool operator==(const Reported&) const = default;
  };
  struct ClusterEntry {
    v1::MultiKueueCluster object;
    // What the connection was made (or refused) from: ResolveWorker's fingerprint.
    std::string fingerprint;
    std::shared_ptr<WorkerLink> link;
    // While the spec makes no link (a kubeconfig turned bad): when the link it replaced was
    // lost, so a winner there is retried workerLostTimeout after that, as Kueue keeps a
    // disconnected client's loss time. Unset when there never was a link: Kueue then counts the
    // worker as lost since each look, and never retries for it.
    std::optional<absl::Time> lost_without_link;
    // The connection's view: what to report as the cluster's Active condition.
    Reported state;
  };
  struct CheckEntry {
    core::AdmissionCheckSpec spec;
    std::optional<Reported> stored;
  };
  struct ManagedWorkload {
    v1::Workload workload;
    std::string check;
  };

  void ManagerWatchLoop(const common::StopSignal& stop);
  void ConfigLoop(const common::StopSignal& stop);
  void ReconcileLoop(const common::StopSignal& stop);
  // Reads the configuration objects and updates the links; returns whether anything changed.
  absl::StatusOr<bool> SyncConfig();
  void ReportActivity();
  void CollectGarbage();
  void Reconcile(const std::string& key);
  absl::Status Nominate(const ManagedWorkload& managed,
                        const std::vector<std::string>& config_clusters,
                        const std::map<std::string, std::shared_ptr<WorkerLink>>& links,
                        absl::Time now, bool* wrote);
  // One write of the check's state (compare-and-swap on the revision the controller saw), with
  // whatever else the pass records on the manager's workload.
  absl::Status UpdateCheck(
      const ManagedWorkload& managed, core::CheckState state, const std::string& message,
      const std::optional<std::string>& winner,
      const std::optional<std::vector<std::string>>& nominees,
      const std::optional<v1::WorkloadPayload>& job_status = std::nullopt,
      const std::optional<std::vector<v1::MultiKueueRemoteState>>& remotes = std::nullopt,
      bool remotes_only = false);

  // Something for the reconcile thread: a dirty workload, an Active condition to report, or stop.
  bool HasWork() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool ConfigSyncDue() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void MarkDirty(const std::string& key);
  // Reconciles `key` again after a short delay (a failed call on a worker or the manager).
  void RecheckLater(const std::string& key);
  void MarkAllDirty() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void OnConnection(const std::string& cluster, bool connected, const std::string& reason,
                    const std::string& message);

  client::TollgateClient& manager_;
  const core::Clock& clock_;
  const Options options_;
  const core::DispatcherMode mode_;

  mutable absl::Mutex mu_;
  std::map<std::string, CheckEntry> checks_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, core::MultiKueueConfigSpec> configs_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, ClusterEntry> clusters_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, Reported> clusters_reported_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, ManagedWorkload> workloads_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, core::IncrementalRound> rounds_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> dirty_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, absl::Time> rechecks_ ABSL_GUARDED_BY(mu_);
  bool activity_dirty_ ABSL_GUARDED_BY(mu_) = true;
  // A Secret a cluster names changed: sync before the period is up.
  bool config_sync_wanted_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace tollgate::multikueue
