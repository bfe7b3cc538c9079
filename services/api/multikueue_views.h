#pragma once

// Between tollgated's API and the MultiKueue core (core/multikueue_remote_sync.h,
// core/multikueue_dispatcher.h): what a manager workload and a worker's copy say, as the pure
// decisions read them, and the copy the manager submits to a worker. No I/O.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "core/multikueue_components.h"
#include "core/multikueue_remote_sync.h"
#include "core/workload.h"
#include "tollgate/v1/objects.pb.h"

namespace tollgate::api {

// The label a copy carries with the manager's `origin` (Kueue's MultiKueueOriginLabel).
inline constexpr absl::string_view kOriginLabel = "kueue.x-k8s.io/multikueue-origin";

// "namespace/name".
std::string KeyOf(const v1::Workload& workload);

// The state of the check named `check` on the workload; nullopt when it does not carry it.
std::optional<core::CheckState> CheckStateOf(const v1::Workload& workload, absl::string_view check);
const v1::AdmissionCheckState* FindCheckState(const v1::Workload& workload,
                                              absl::string_view check);
// Pending, Ready, Retry, Rejected (the API's spelling).
std::string CheckStateText(core::CheckState state);

// Whether the workload holds quota now (reserved, admitted or evicting).
bool HoldsQuota(const v1::Workload& workload);

// The manager's own workload as PlanRemoteSync reads it, for its MultiKueue check `check`.
core::LocalView LocalViewOf(const v1::Workload& workload, absl::string_view check);

// A worker's copy as PlanRemoteSync reads it: admitted since (the worker's Admitted condition,
// its clock), evicted and finished with the worker's reason and message, and whether its spec
// still matches the manager's `origin_workload`.
core::RemoteCopy RemoteCopyOf(const v1::Workload& copy, const v1::Workload& origin_workload);

// The copy to submit on a worker: the same namespace, name, LocalQueue, pod sets, (effective)
// priority and payload (the job manifest), labels kept, plus the origin label. Status, owner and
// uid are the worker's own.
v1::Workload CopyOf(const v1::Workload& origin_workload, absl::string_view origin);

// Whether the manager must declare `copy` (on worker `cluster`) the winner: the manager
// recorded `cluster` as its clusterName, the copy holds quota there and is not marked yet.
// Marked only after the record, so at most one copy of a workload is ever marked.
bool NeedsWinnerMark(const v1::Workload& origin_workload, absl::string_view cluster,
                     const v1::Workload& copy);

// The manager's payload to carry to `copy` (a nominee's or the winner's), when it changed after
// the copy was made (a pod group that gained pods): both carry a payload of the same api_version
// and kind, the data differ, and the copy has not finished. nullopt: nothing to carry.
std::optional<v1::WorkloadPayload> PayloadToCarry(const v1::Workload& origin_workload,
                                                  const v1::Workload& copy);

// The manager's effective priority to carry to `copy` when it changed after the copy was made
// (a Reprioritize, or a priority class's new value), as Kueue's MultiKueue workload reconciler
// updates a remote's priority instead of removing the copy. nullopt: the same, or the copy has
// finished.
std::optional<int32_t> PriorityToCarry(const v1::Workload& origin_workload,
                                       const v1::Workload& copy);

// The winner's job status to mirror onto the manager's workload: the copy's, when it has one
// that the manager's workload does not have yet.
std::optional<v1::WorkloadPayload> JobStatusToMirror(const v1::Workload& origin_workload,
                                                     const v1::Workload& winner_copy);

// The Finished reason to finish the manager's workload with, from the copy's: Kueue's reasons
// pass through; empty (a worker that gives none) is Succeeded.
std::string FinishReasonOf(const core::RemoteCondition& finished);

// What the controller sees of one worker: whether it is connected, and its copy if it has one.
struct WorkerObservation {
  bool connected = false;
  std::optional<v1::Workload> copy;
};

// The state of a worker's copy as `tollgate describe` shows it (status.multi_kueue_remotes):
// Finished, Evicted (evicting, or evicted and not admitted since: requeued or deactivated),
// Admitted, or Pending (queued or reserving quota).
std::string RemoteStateOf(const v1::Workload& copy);

// The manager's status.multi_kueue_remotes for `origin_workload`: its nominees, its recorded
// winner and every worker holding a copy, by cluster name; a worker that is not connected (or
// not observed at all) is Unreachable, a connected one without a copy NoCopy.
std::vector<v1::MultiKueueRemoteState> RemoteStatesOf(
    const v1::Workload& origin_workload, const std::map<std::string, WorkerObservation>& workers);

// Whether the manager's workload already records exactly `remotes`.
bool SameRemoteStates(const v1::Workload& origin_workload,
                      const std::vector<v1::MultiKueueRemoteState>& remotes);

// Whether `copy` carries this manager's origin label.
bool HasOrigin(const v1::Workload& copy, absl::string_view origin);

// The uid of the object whose component workloads must run on one worker (a LeaderWorkerSet's
// groups: a component index and exactly one owner); "" for a workload that is no component.
std::string ComponentOwnerOf(const v1::Workload& workload);

// Kueue's rule for the workloads of one object that must run on one worker (a LeaderWorkerSet's
// groups; core::DecideComponentDispatch) applied to `workload` among the manager's `workloads`
// (which may include it): its component index and cluster, the others of its owner in its
// namespace. nullopt for a workload that is no such component (no component index, or not
// exactly one owner).
std::optional<core::ComponentDecision> ComponentDecisionFor(
    const v1::Workload& workload, const std::vector<const v1::Workload*>& workloads);

}  // namespace tollgate::api
