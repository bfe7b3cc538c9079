#pragma once

// MultiKueue's projection of the gated kinds (docs/multicluster.md, "The pod-based kinds"): the
// decisions of Kueue's pod and statefulset MultiKueue adapters (pkg/controller/jobs/pod/
// pod_multikueue_adapter.go, statefulset/statefulset_multikueue_adapter.go; jobframework's
// SetMultiKueueMeta; api.CloneObjectMetaForCreation). These kinds have no managedBy: on the
// manager their pods stay gated while the workload is admitted through a MultiKueue check
// (Kueue's ShouldSkipLocalExecution); the object travels with the workload as a payload, the
// winning worker creates it, and (for a plain Pod) its status comes back. tollgate-kube does the
// I/O; these are pure.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "services/manifest/json_util.h"
#include "services/manifest/kube_resource.h"
#include "tollgate/v1/objects.pb.h"

namespace tollgate::manifest {

// The annotation a remote StatefulSet carries with the manager's object's uid (Kueue's
// MultiKueueOriginUIDAnnotation).
inline constexpr absl::string_view kMultiKueueOriginUidAnnotation =
    "kueue.x-k8s.io/multikueue-origin-uid";

const ResourceKind& StatefulSetKind();
const ResourceKind& LeaderWorkerSetKind();

// Whether a payload of this apiVersion and kind is one of the gated kinds MultiKueue carries: a
// plain Pod (v1), a pod group (v1 PodList), a StatefulSet (apps/v1) or a LeaderWorkerSet
// (leaderworkerset.x-k8s.io/v1).
bool IsMultiKueueGatedKind(absl::string_view api_version, absl::string_view kind);
// Whether it is a pod group's payload: a v1 PodList of the group's pods.
bool IsMultiKueuePodGroup(absl::string_view api_version, absl::string_view kind);

// The manifest a manager's workload carries for a gated Pod or a StatefulSet, as Kueue's
// adapters build the remote object: metadata keeps only name, namespace, labels and annotations
// (Tollgate's own tollgate.dev/ annotations dropped), the spec as it is (a Pod keeps its
// scheduling gates, so it waits on the worker for the copy's admission), no status; a
// StatefulSet or a LeaderWorkerSet is annotated with the manager's uid. INVALID_ARGUMENT (naming
// the field) for an object without a spec or of another kind.
absl::StatusOr<v1::WorkloadPayload> GatedObjectPayload(const ResourceKind& kind, const Json& obj);

// The object a worker creates for its copy `copy_name` (in `ns`) that the manager declared the
// winner: the carried manifest with the labels kueue.x-k8s.io/prebuilt-workload-name (it binds
// to the copy instead of getting a workload of its own) and the origin label, server-set fields
// dropped. A LeaderWorkerSet gets no prebuilt-workload label: it is bound to all its groups' copies
// by their names (RemoteLeaderWorkerSetCopies). INVALID_ARGUMENT (naming the field) when the
// payload is not a manifest of a gated kind.
absl::StatusOr<Json> RemoteGatedObjectFromPayload(const v1::WorkloadPayload& payload,
                                                  absl::string_view ns, absl::string_view copy_name,
                                                  absl::string_view origin);

// The manifest a pod group's workload carries: a v1 PodList whose items are the group's pods, each
// as GatedObjectPayload carries a Pod (Kueue's pod adapter syncs every pod of the group to the
// worker). INVALID_ARGUMENT (naming the pod and the field) for no pods or a pod without a spec.
absl::StatusOr<v1::WorkloadPayload> PodGroupPayload(const std::vector<Json>& pods);

// The pods a pod group's payload carries now, of the group's `pods` on the manager's cluster
// (Kueue's syncPodGroup syncs every pod of the group at each reconcile, so pods made after the
// workload, fast admission's later members and replacements for failed ones, reach the worker):
// those the payload `carried` has already (by name, in its order), whatever their phase (a failed
// one's worker pod exists), then the runnable or succeeded ones it has not, in the order of
// `pods`. A pod being
// deleted, or gone, is no longer carried (Kueue syncs only the pods it lists; the worker's is left
// as Kueue leaves it). INVALID_ARGUMENT naming the field for a `carried` that is not a PodList.
absl::StatusOr<std::vector<Json>> GroupPodsToCarry(const std::vector<Json>& pods,
                                                   const v1::WorkloadPayload& carried);

// The pods a worker creates for its winning copy from a pod group's payload, each as
// RemoteGatedObjectFromPayload makes a Pod. INVALID_ARGUMENT (naming the field) for a payload
// that is not a PodList of pods.
absl::StatusOr<std::vector<Json>> RemotePodsFromGroupPayload(const v1::WorkloadPayload& payload,
                                                             absl::string_view ns,
                                                             absl::string_view copy_name,
                                                             absl::string_view origin);

// The copies a worker's LeaderWorkerSet (made from a payload) runs under, one per replica group:
// the names the manager's tollgate-kube gave its group workloads, from the manager's uid in the
// origin-uid annotation (as Kueue's worker names them). Empty without that annotation.
std::vector<std::string> RemoteLeaderWorkerSetCopies(const Json& lws);

// What a worker reports of its pod group: a v1 PodList whose items are each pod's name and
// status, by name.
v1::WorkloadPayload PodGroupStatusReport(const std::vector<Json>& pods);

// What a worker reports of its pod (status.job_status): apiVersion v1, kind Pod and the pod's
// status. (Kueue syncs no StatefulSet status: the manager's StatefulSet controller would
// overwrite it.)
v1::WorkloadPayload PodStatusReport(const Json& pod);

// The status the manager's gated pod should have, given the winner's report (Kueue's
// syncLocalPodWithRemote): the remote pod's status, except that while the local pod is gated and
// the remote one not yet scheduled (no PodScheduled=True), the local PodScheduled condition
// (SchedulingGated) is kept, so the manager's autoscaler does not take the pod for an
// unschedulable one. A pod group's report (PodGroupStatusReport) gives each pod the status of the
// worker's pod of its name; NOT_FOUND when it has none (not created there yet). INVALID_ARGUMENT
// naming the field for a report that is neither.
absl::StatusOr<Json> ProjectedPodStatus(const Json& local_pod, const v1::WorkloadPayload& report);

}  // namespace tollgate::manifest
