#pragma once

// The MultiKueue controller and its workers, played inside a scenario (docs/scenario-format.md,
// "MultiKueue"): the scenario reports what each worker does with its copy (admits, evicts,
// finishes, loses it) and whether the worker answers; each pass takes the decisions
// tollgate-multikueue takes, through the same pure core (core::PlanRemoteSync, core::Nominate,
// core::SyncCopies, core::GarbageCopies, core::MultiKueueCheckActivity), and writes them to the
// manager through engine::TollgateApi as the controller writes them over gRPC. A worker here is
// its copies as the core's views see them, not a tollgated: what a worker decides is the
// scenario's to state. Not the controller: it carries no job (no payload, no winner mark, no
// mirrored job status) and keeps no remote states for describe.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/clock.h"
#include "core/multikueue_dispatcher.h"
#include "core/multikueue_remote_sync.h"
#include "core/types.h"
#include "services/engine/tollgate_api.h"
#include "tollgate/v1/objects.pb.h"

namespace tollgate::sim {

class MultiKueueSim {
 public:
  // `connected`: the workers that answer from the start; any other cluster name is a worker
  // that does not answer until connected.
  MultiKueueSim(const core::Clock& clock, core::MultiKueueSettings settings,
                const std::vector<std::string>& connected);

  // --- What a worker reports (the scenario's steps). `key` is "namespace/name"; the copy must
  // exist on `cluster` (the controller made it), or the report is refused naming both.
  // Admitted on the worker since `since` (the worker's clock).
  absl::Status Admit(const std::string& key, const std::string& cluster, absl::Time since);
  // Evicted on the worker (its quota released, Admitted false) with the worker's reason.
  absl::Status Evict(const std::string& key, const std::string& cluster, const std::string& reason,
                     const std::string& message);
  absl::Status Finish(const std::string& key, const std::string& cluster, const std::string& reason,
                      const std::string& message);
  // The copy is gone from the worker without the manager asking.
  absl::Status Remove(const std::string& key, const std::string& cluster);
  // The worker answers again / stops answering (its copies stay where they are).
  void Connect(const std::string& cluster);
  void Disconnect(const std::string& cluster);

  // One controller pass over every workload of the manager and every worker, repeated until a
  // pass changes nothing (at most a few times). Returns the first write the manager refused.
  absl::Status Run(engine::TollgateApi& api);

  // When a pass is due even if nothing is reported: the worker-lost grace, the end of an
  // Incremental round, the next garbage collection while an orphaned copy waits; nullopt when
  // nothing is due.
  std::optional<absl::Time> NextRecheck() const;

  // The copies of `key` by worker, with their state as `tollgate describe` names it: Pending,
  // Admitted, Evicted or Finished.
  std::map<std::string, std::string> CopyStates(const std::string& key) const;

 private:
  // A worker's copy: the core's view of it, and what of the manager's spec it was made from
  // (for RemoteCopy::spec_in_sync, compared as tollgate-multikueue compares it).
  struct Copy {
    core::RemoteCopy view;
    std::string queue;
    std::vector<std::pair<std::string, int32_t>> pod_sets;
    bool active = true;
  };
  struct Worker {
    core::WorkerConnection connection;
    std::map<std::string, Copy> copies;
  };

  absl::StatusOr<Copy*> FindCopy(const std::string& key, const std::string& cluster);
  Worker& WorkerNamed(const std::string& cluster);
  // One pass; sets *changed when it wrote or changed a copy.
  absl::Status Pass(engine::TollgateApi& api, bool* changed);
  absl::Status ReportActivity(engine::TollgateApi& api, bool* changed);
  // `listed`: every workload of the manager as the pass read them (for the rule on the
  // workloads of one object, api::ComponentDecisionFor).
  absl::Status Reconcile(engine::TollgateApi& api, v1::Workload wl, const std::string& check,
                         const std::vector<std::string>& config_clusters,
                         const std::vector<const v1::Workload*>& listed, bool* changed);
  absl::Status Nominate(engine::TollgateApi& api, const v1::Workload& wl, const std::string& check,
                        const std::vector<std::string>& config_clusters,
                        const std::vector<const v1::Workload*>& listed, bool* changed);
  // Every gcInterval: copies on answering workers whose workload is gone (core::GarbageCopies).
  void CollectGarbage(bool* changed);
  static Copy CopyOf(const v1::Workload& wl);
  static bool SpecInSync(const Copy& copy, const v1::Workload& wl);

  const core::Clock& clock_;
  const core::MultiKueueSettings settings_;
  const core::DispatcherMode mode_;
  std::map<std::string, Worker> workers_;
  // Incremental rounds by workload, forgotten when it gives up its quota (as the controller).
  std::map<std::string, core::IncrementalRound> rounds_;
  std::map<std::string, absl::Time> rechecks_;
  absl::Time last_gc_;
  // What the last pass read from the manager: its MultiKueue checks, configs, the names of its
  // MultiKueueClusters (a worker without one is unusable) and its workloads ("ns/name").
  std::map<std::string, core::AdmissionCheckSpec> checks_;
  std::map<std::string, core::MultiKueueConfigSpec> configs_;
  std::set<std::string> cluster_objects_;
  std::set<std::string> live_;
  // The Active conditions last reported, to report only changes.
  std::map<std::string, std::string> reported_clusters_;
  std::map<std::string, std::string> reported_checks_;
};

}  // namespace tollgate::sim
