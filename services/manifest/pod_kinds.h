#pragma once

// The workloads Kueue makes for the gated kinds (docs/pod-integrations.md): a plain Pod, a pod
// group, a StatefulSet, each replica group of a LeaderWorkerSet, and (through its pods) a
// Deployment. Built from the objects as the API server serves them; pure. tollgate-kube submits
// them (adapters/kube/pod_controller.h) and `tollgate submit -f` reads them from files, so both
// make the same workload of the same object.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "services/manifest/job_kind.h"
#include "services/manifest/json_util.h"
#include "services/manifest/pod_group.h"
#include "tollgate/v1/objects.pb.h"

namespace tollgate::manifest {

// Kueue's index of a LeaderWorkerSet group's workload.
inline constexpr char kComponentIndexAnnotation[] = "kueue.x-k8s.io/component-workload-index";
// The pod index labels their controllers set, which rank their pods for topology placement.
inline constexpr char kStatefulSetPodIndexLabel[] = "apps.kubernetes.io/pod-index";
inline constexpr char kLeaderWorkerSetWorkerIndexLabel[] =
    "leaderworkerset.sigs.k8s.io/worker-index";

// A plain pod's workload: Kueue's name for it (`pod-<name>-<hash>`), one pod set `main` of one
// pod, owned by the pod; the priority from the kueue.x-k8s.io/priority-class label, else the
// pod's priorityClassName. INVALID_ARGUMENT naming the field for a malformed request.
absl::StatusOr<v1::Workload> PodWorkload(const Json& pod, absl::string_view queue);

// A pod group's workload: named after the group, one pod set per role (in the roles' order),
// annotated as a group workload; no owner (Kueue's pods own it together). `reference` is the
// pod the priority is read from.
absl::StatusOr<v1::Workload> PodGroupWorkload(absl::string_view ns, const PodGroupInfo& group,
                                              const std::vector<PodRole>& roles,
                                              const Json& reference, absl::string_view queue);

// A StatefulSet's group workload (Kueue's "prebuilt" one): `statefulset-<name>-<hash>`, owned by
// the StatefulSet, one pod set `main` of `replicas` pods from its template.
std::string StatefulSetWorkloadName(const Json& sts);
int32_t StatefulSetReplicas(const Json& sts);
absl::StatusOr<v1::Workload> StatefulSetWorkload(const Json& sts, absl::string_view queue);

// A LeaderWorkerSet's workloads, one per replica group in index order:
// `leaderworkerset-<name>-<index>-<hash>`, owned by it, pod sets `leader` (1) and `worker`
// (size - 1) with a leader template, else `main` (size).
std::string LeaderWorkerSetGroupName(const Json& lws, int32_t index);
int32_t LeaderWorkerSetReplicas(const Json& lws);
int32_t LeaderWorkerSetSize(const Json& lws);
absl::StatusOr<std::vector<v1::Workload>> LeaderWorkerSetWorkloads(const Json& lws,
                                                                   absl::string_view queue);

}  // namespace tollgate::manifest
