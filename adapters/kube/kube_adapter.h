#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "adapters/kube/job_controller.h"
#include "adapters/kube/pod_controller.h"
#include "adapters/kube/work_queue.h"
#include "clients/cpp/admission_client.h"
#include "common/stop_signal.h"
#include "core/clock.h"
#include "services/kubeapi/kube_client.h"

namespace tollgate::kube {

// Kubernetes objects as JSON, as the manifest library and the REST client read them.
using Json = manifest::Json;

// Drives a JobController: one informer thread per enabled kind (and one for Namespaces) that
// lists, then watches from the list's resourceVersion (watching again from the last version
// seen when a stream ends, re-listing on 410 Gone, backing off on errors); one thread following
// Tollgate's Watch from the last revision (kept in `state_file` across restarts; a reconnect
// re-queues every object, since changes may have been missed); and `workers` threads draining
// the work queue into Reconcile. Every `resync_period` every object is queued again and
// orphaned workloads are collected. Thread-safe.
class KubeAdapter {
 public:
  struct Options {
    int workers = 2;
    absl::Duration resync_period = absl::Minutes(5);
    absl::Duration min_backoff = absl::Milliseconds(200);
    absl::Duration max_backoff = absl::Seconds(30);
    // Where the last Tollgate revision seen is kept; empty: start from 0 (the current state).
    std::string state_file;
    bool watch_namespaces = true;
    // Rewritten every second by the main loop: "synced" once every informer has listed, else
    // "syncing". Its age is the liveness probe, its content the readiness probe (deploy/).
    std::string health_file;
  };

  // `pods`, when not null, reconciles the gated kinds (pods, Deployments, StatefulSets,
  // LeaderWorkerSets) it watches; it must outlive the adapter.
  KubeAdapter(kubeapi::KubeClient& kube, client::AdmissionClient& admission,
              JobController& controller, const core::Clock& clock, Options options,
              PodController* pods = nullptr);

  // Runs until `stop` fires, then returns once every thread has ended.
  void Run(const common::StopSignal& stop);

  // Every informer has listed once.
  bool Synced() const;

 private:
  void InformerLoop(const manifest::ResourceKind& kind, bool is_job_kind,
                    const common::StopSignal& stop);
  void TollgateLoop(const common::StopSignal& stop);
  void WorkerLoop();
  void EnqueueAll();
  // The keys an event on `obj` of `resource` queues: the PodController's mapping for the
  // kinds it handles, else the object's own key.
  std::vector<ObjectKey> KeysOf(const manifest::ResourceKind& kind, const Json& obj) const;
  // Queues the gated kinds' objects a workload change concerns.
  void EnqueueForWorkload(const v1::Workload& wl);
  void CollectOrphans();
  // Sleeps the backoff for the `failures`-th consecutive failure; false when stopped.
  bool Backoff(int failures, const common::StopSignal& stop) const;
  // Writes the newest revision to the state file if it changed (at most once a second unless
  // `force`).
  void PersistRevision(bool force);

  kubeapi::KubeClient& kube_;
  client::AdmissionClient& admission_;
  JobController& controller_;
  PodController* const pods_;
  const core::Clock& clock_;
  const Options options_;
  WorkQueue queue_;

  mutable absl::Mutex mu_;
  // resource plural -> object key -> UID, as the informers last saw them.
  std::map<std::string, std::map<ObjectKey, std::string>> cache_ ABSL_GUARDED_BY(mu_);
  // For the PodController's kinds: object key -> the keys its events queue (a pod's group, its
  // parent), so a resync queues what the live objects ask for.
  std::map<ObjectKey, std::vector<ObjectKey>> mapped_keys_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> synced_ ABSL_GUARDED_BY(mu_);
  int expected_informers_ ABSL_GUARDED_BY(mu_) = 0;
  // The newest Tollgate revision seen, and the one last written to the state file.
  int64_t revision_ ABSL_GUARDED_BY(mu_) = 0;
  // The store identity revision_ belongs to (from the watch events); empty before the first.
  std::string store_id_ ABSL_GUARDED_BY(mu_);
  int64_t store_epoch_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t persisted_revision_ ABSL_GUARDED_BY(mu_) = -1;
  absl::Time last_persist_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
};

// Where the Tollgate watch resumes: a revision and the store identity it belongs to.
struct ResumePoint {
  int64_t revision = 0;
  std::string store_id;
  int64_t store_epoch = 0;
};
// The resume point stored in a state file ("REVISION [STORE_ID EPOCH]"), or revision 0 when
// it is missing or unreadable.
ResumePoint ReadResumeFile(const std::string& path);
// Writes `point` to `path` atomically (temporary file and rename).
absl::Status WriteResumeFile(const std::string& path, const ResumePoint& point);
// The revision alone, for callers that do not care about the identity.
int64_t ReadRevisionFile(const std::string& path);
absl::Status WriteRevisionFile(const std::string& path, int64_t revision);

}  // namespace tollgate::kube
