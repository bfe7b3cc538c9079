#pragma once

// The ProvisioningRequest admission check's controller (Kueue's
// pkg/controller/admissionchecks/provisioning/): follows, through Tollgate's check API, the
// workloads that hold quota and carry a check of kueue.x-k8s.io/provisioning-request, keeps one
// cluster-autoscaler ProvisioningRequest (and its PodTemplates) per check and attempt in the API
// server, and posts what the request's conditions mean as the check's state. The decisions are
// provisioning.{h,cc}'s; this file reads and writes. docs/admission-checks.md.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "adapters/kube/job_controller.h"
#include "adapters/kube/provisioning.h"
#include "adapters/kube/work_queue.h"
#include "clients/cpp/admission_client.h"
#include "common/stop_signal.h"
#include "core/clock.h"
#include "services/kubeapi/kube_client.h"

namespace tollgate::kube {

// Kubernetes objects as JSON, as the manifest library and the REST client read them.
using Json = manifest::Json;

// Threads: Tollgate's WatchAdmissionChecks for the controller (relisting from 0 after any
// break), an informer of ProvisioningRequests (a change queues the workload it belongs to), a
// loop that every `check_sync_period` reads the AdmissionChecks of the controller and their
// ProvisioningRequestConfigs and sets each check's Active condition, and one worker. Reconcile
// of a workload: re-read it, post each check's new state with the revision read
// (compare-and-swap; a stale revision re-reads and decides again), delete requests no check
// keeps, create the next attempt. A workload that no longer holds quota (evicted, finished,
// deleted) loses its requests. Thread-safe.
class ProvisioningController {
 public:
  struct Options {
    absl::Duration check_sync_period = absl::Seconds(10);
    absl::Duration min_backoff = absl::Milliseconds(200);
    absl::Duration max_backoff = absl::Seconds(30);
    int max_stale_retries = 5;
  };

  // `jobs` tells which job a workload belongs to (its pod templates and annotations).
  ProvisioningController(kubeapi::KubeClient& kube, client::AdmissionClient& admission,
                         const JobController& jobs, const core::Clock& clock, Options options);

  // Runs until `stop` fires.
  void Run(const common::StopSignal& stop);

  // Reads the controller's AdmissionChecks and their configs; sets their Active conditions.
  // Returns whether some check's config changed.
  absl::StatusOr<bool> SyncChecks();
  // One workload, by namespace and name.
  absl::Status Reconcile(const std::string& ns, const std::string& name);

 private:
  // A check of this controller: its config, or why there is none.
  struct CheckConfig {
    absl::StatusOr<provisioning::Config> config = absl::UnknownError("not read yet");
  };

  void WatchLoop(const common::StopSignal& stop);
  void RequestInformer(const common::StopSignal& stop);
  void ChecksLoop(const common::StopSignal& stop);
  void WorkerLoop();
  void EnqueueWorkload(const std::string& ns, const std::string& name);
  absl::StatusOr<std::vector<Json>> RequestsOf(const std::string& ns, const std::string& name);
  absl::Status DeleteRequest(const std::string& ns, const Json& request);
  absl::Status CreateRequest(const v1::Workload& wl, const std::string& check, int32_t attempt,
                             const provisioning::Config& config);
  // The job's pod templates per pod set with the workload's flavors applied, its annotations,
  // and an ownerReference to it.
  struct JobView {
    std::map<std::string, Json> pod_templates;
    std::map<std::string, std::string> annotations;
    Json owner;
  };
  absl::StatusOr<JobView> ReadJob(const v1::Workload& wl);
  bool Backoff(int failures, const common::StopSignal& stop) const;

  kubeapi::KubeClient& kube_;
  client::AdmissionClient& admission_;
  const JobController& jobs_;
  const core::Clock& clock_;
  const Options options_;
  WorkQueue queue_;

  mutable absl::Mutex mu_;
  // This controller's checks by name.
  std::map<std::string, CheckConfig> checks_ ABSL_GUARDED_BY(mu_);
  // SyncChecks succeeded once: before, a workload's checks cannot be told apart, and deciding
  // would delete the requests of checks not known yet.
  bool checks_synced_ ABSL_GUARDED_BY(mu_) = false;
  // Workloads seen through the watch ("ns" -> names), queued again when a config changes.
  std::map<std::string, std::set<std::string>> known_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tollgate::kube
