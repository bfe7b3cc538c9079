#pragma once

// Which worker clusters a MultiKueue workload is copied to (Kueue's MultiKueue dispatchers,
// pkg/controller/workloaddispatcher and the nomination step of the multikueue workload
// reconciler): AllAtOnce nominates every connected worker, Incremental adds a step of workers
// per round in config order, External leaves the nomination to another controller. Pure: the
// caller passes the time, the config's clusters, which workers are connected and what the
// workload carries; the result says what to write and when to look again.
// docs/multicluster.md describes the state machine.

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "core/workload.h"

namespace tollgate::core {

// Kueue's dispatcher names (Configuration multiKueue.dispatcherName); any other name is an
// external dispatcher.
inline constexpr absl::string_view kAllAtOnceDispatcherName =
    "kueue.x-k8s.io/multikueue-dispatcher-all-at-once";
inline constexpr absl::string_view kIncrementalDispatcherName =
    "kueue.x-k8s.io/multikueue-dispatcher-incremental";

enum class DispatcherMode { kAllAtOnce, kIncremental, kExternal };
DispatcherMode DispatcherModeOf(absl::string_view dispatcher_name);

// How long an Incremental round waits for one of its nominees to admit before the next step
// is nominated (Kueue's fixed incrementalDispatcherRoundTimeout).
inline constexpr absl::Duration kIncrementalRoundTimeout = absl::Minutes(5);

// Kueue's Configuration multiKueue section, with Kueue's defaults.
struct MultiKueueSettings {
  // Between two garbage collections of remote copies whose origin workload is gone; zero turns
  // the collection off.
  absl::Duration gc_interval = absl::Minutes(1);
  // The value of the origin label on the copies this manager creates.
  std::string origin = "multikueue";
  // How long the check stays Ready while the worker that admitted the workload is unreachable.
  absl::Duration worker_lost_timeout = absl::Minutes(15);
  std::string dispatcher_name = std::string(kAllAtOnceDispatcherName);
  // Incremental only: workers added per round (Kueue's incrementalDispatcherConfig.stepSize).
  int incremental_step_size = 3;
  bool operator==(const MultiKueueSettings&) const = default;
};

// Kueue's ShouldSkipClusterNomination, with the local conditions the dispatchers check before
// it: nominate only while the workload holds quota, has not finished, its MultiKueue check is
// Pending and no cluster has won it yet.
struct NominationGate {
  bool holds_quota = false;
  bool finished = false;
  CheckState check_state = CheckState::kPending;
  // status.clusterName; set once a worker admitted the workload, never changed afterwards.
  std::optional<std::string> cluster_name;
};
bool MayNominate(const NominationGate& gate);

// Whether every check of the workload other than the MultiKueue one is Ready: copies are made
// only then, so no worker admits a workload another check still holds back (Kueue's
// allNonMKAdmissionChecksReady). The first check that is not, by name, for the caller's
// message.
std::optional<std::string> FirstOtherCheckNotReady(const std::vector<AdmissionCheckState>& checks,
                                                   absl::string_view multikueue_check);

// Whether a nomination is written while another check of the workload is not Ready yet. Kueue's
// workload reconciler writes AllAtOnce's nominees, and the single worker of a component whose
// siblings run there, only past the same gate as the copies (allNonMKAdmissionChecksReady), so
// such a workload shows no nominees until then; the Incremental dispatcher is a reconciler of
// its own without that gate, and an External dispatcher writes what it decides. The copies
// wait for the other checks in every mode.
bool NominatesBeforeOtherChecksReady(DispatcherMode mode, bool follows_component);

// An Incremental dispatcher's memory of a workload: when its last round started. Kueue keeps it
// in memory per workload and forgets it when the workload finishes, loses its quota or is
// deleted, so a restart starts a new round at once; the caller keeps it the same way.
struct IncrementalRound {
  absl::Time started = absl::InfinitePast();
};

struct NominationInput {
  // MultiKueueConfig.spec.clusters, in config order.
  std::vector<std::string> config_clusters;
  // The config's clusters with a connected client (Kueue's available remote clients).
  std::set<std::string> connected;
  // status.nominatedClusterNames as stored.
  std::vector<std::string> nominated;
  // Incremental only: the round in progress, if one was started.
  std::optional<IncrementalRound> round;
  int step_size = 3;
  // A component of an object whose other workloads run on this worker (core::ComponentStep::
  // kFollow): it is nominated there alone, whatever the dispatcher (Kueue's
  // syncToSingleCluster).
  std::optional<std::string> only_on;
};

struct Nomination {
  // What status.nominatedClusterNames should hold.
  std::vector<std::string> nominated;
  // Whether that differs from what is stored (the caller writes only then).
  bool changed = false;
  // Incremental: the round that starts now (set when this call nominated a new step).
  std::optional<IncrementalRound> new_round;
  // Incremental: when the round in progress ends, so the caller looks again then.
  std::optional<absl::Time> recheck_at;
  // Incremental: every cluster of the config is nominated already (Kueue's ErrNoMoreWorkers);
  // nothing changes until one of the nominees admits or the check leaves Pending.
  bool no_more_workers = false;
};

// AllAtOnce: every connected worker of the config, sorted by name; written only when the set
// differs from what is stored.
Nomination NominateAllAtOnce(const NominationInput& input);
// Incremental: the first round at once, then after each round's timeout (strictly after, as
// Kueue compares) the next `step_size` clusters of the config not nominated yet, in config
// order, appended to the earlier nominees. Connection does not matter here: a nominee that is
// not connected gets its copy once it is.
Nomination NominateIncremental(const NominationInput& input, absl::Time now);
// External: what another controller stored, unchanged.
Nomination NominateExternal(const NominationInput& input);
// The dispatcher of `mode` (Incremental's step size from input.step_size).
Nomination Nominate(DispatcherMode mode, const NominationInput& input, absl::Time now);

// Which remote copies to create and delete so the copies match the nomination: a copy on every
// connected nominee that lacks one, none on a worker that is not nominated. Nominees that are
// not connected are listed so the caller can report them (Kueue's "no remote client for
// nominated cluster"). Each list sorted by cluster name.
struct CopySync {
  std::vector<std::string> create;
  std::vector<std::string> remove;
  std::vector<std::string> unreachable_nominees;
  bool operator==(const CopySync&) const = default;
};
CopySync SyncCopies(const std::vector<std::string>& nominated,
                    const std::set<std::string>& connected, const std::set<std::string>& with_copy);

// The workload events that record a dispatch: `describe workload` shows them, and tollgated's
// multikueue_workloads_dispatched_total and multikueue_workloads_admitted_total (Kueue's
// metrics) count them. A nomination event names the clusters it added, in the order written.
inline constexpr absl::string_view kNominatedEventReason = "MultiKueueNominated";
inline constexpr absl::string_view kAdmittedOnWorkerEventReason = "MultiKueueAdmitted";
std::string NominatedEventMessage(const std::vector<std::string>& added);
// The clusters a kNominatedEventReason event's message names (cluster names are object names:
// no commas or spaces).
std::vector<std::string> NominatedClustersOf(absl::string_view message);

}  // namespace tollgate::core
