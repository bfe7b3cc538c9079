#pragma once

// Kueue's node controller failing pods it released onto a node they can no longer reach
// (pkg/controller/tas/node_controller.go: getWorkloadStatus, getPodsToTerminate,
// markPodsFailed): such a pod would stay Pending for ever, so it is marked Failed and its job
// controller creates a replacement, which the ungater releases onto the workload's new domain.
// Pure; no I/O. docs/topology.md, "Node failures".

#include <map>
#include <optional>
#include <string>

#include "absl/time/time.h"
#include "core/topology.h"
#include "core/types.h"
#include "core/workload.h"
#include "services/manifest/json_util.h"

namespace tollgate::kube {

// Kueue's words, on the pod and in its event.
inline constexpr char kTerminatedByKueueCondition[] = "TerminatedByKueue";
inline constexpr char kTerminatedByKueueReason[] = "UnschedulableOnAssignedNode";
inline constexpr char kTerminatedByKueueMessage[] =
    "Pod terminated by Kueue NodeController due to node taint";
inline constexpr char kPodTerminatedByKueueEvent[] = "PodTerminatedByKueue";
inline constexpr char kPodTerminatedAction[] = "PodTerminated";

// The hostname a pod was released onto and has not reached: a pod placed by topology-aware
// scheduling (with the kueue.x-k8s.io/workload annotation), phase Pending, not bound
// (no spec.nodeName), without the topology gate, with a kubernetes.io/hostname node selector.
// nullopt for any other pod.
std::optional<std::string> ReleasedUnboundHost(const manifest::Json& pod);

// Whether `wl`'s pods released onto `node` and not bound there are to be failed (Kueue's
// getWorkloadStatus with TASReplaceNodeOnPodTermination and TASReplaceNodeOnNodeTaints, its
// defaults). Never for a finished workload or one whose Evicted condition is True (until quota
// is reserved again); otherwise when
// * its placement does not name the node (pods left behind on a replaced domain, or a
//   workload without admission: Kueue's stray pods), or
// * the node is not ready, or
// * the node has a NoSchedule or NoExecute taint that a pod set placed there does not tolerate,
//   or tolerates only for tolerationSeconds (core::ClassifyTaint; a cordoned node counts as
//   tainted NoSchedule).
// Unlike the placement itself, this does not wait for the workload's running pods: a pod that
// was never bound cannot start there. `flavors` holds the flavors the admission names (their
// tolerations count); a node without a Ready condition or deleted fails no pod (Kueue leaves
// them too), so the caller does not ask.
bool FailsUnboundPodsOn(const core::NodeSpec& node, const core::Workload& wl,
                        const std::map<std::string, core::ResourceFlavorSpec>& flavors);

// Whether the decision needs the flavors: the node is ready with a NoSchedule or NoExecute
// taint (or cordoned) and the workload's placement names it.
bool NeedsFlavors(const core::NodeSpec& node, const core::Workload& wl);

// The status merge patch that marks `pod` Failed with the TerminatedByKueue condition appended
// to its conditions (as Kueue appends it), conditional on the pod's resourceVersion.
manifest::Json TerminationStatusPatch(const manifest::Json& pod, absl::Time now);

}  // namespace tollgate::kube
