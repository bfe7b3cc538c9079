#pragma once

// Admissions as Kueue hands them to a job (podset.PodSetInfo): built from a workload's
// admission, its flavors and its admission checks' podSetUpdates, and merged into pod templates
// with Kueue's conflict rules. Pure.

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "services/manifest/job_kind.h"
#include "services/manifest/json_util.h"
#include "tollgate/v1/objects.pb.h"

namespace tollgate::manifest {

using FlavorMap = std::map<std::string, v1::ResourceFlavor>;

// One PodSetInfo per admitted pod set, in the admission's order (Kueue's
// getPodSetsInfoFromStatus): its count; node selector and tolerations of each assigned flavor
// (a later flavor's label overwrites an earlier one's, as Kueue's maps.Copy); the label
// kueue.x-k8s.io/podset; then every update of `updates` for that pod set merged in with
// MergeUpdate. NOT_FOUND for a flavor missing from `flavors`; a conflict between updates is
// FAILED_PRECONDITION marked permanent, naming the check, the field, the key and both values.
absl::StatusOr<std::vector<PodSetInfo>> PodSetInfosFromAdmission(
    const v1::Admission& admission, const FlavorMap& flavors,
    const std::vector<PodSetUpdate>& updates);

// The admission checks' podSetUpdates of an admitted workload, one per pod set, from its
// status.admitted_pod_sets (docs/admission-checks.md): the service merged them with the
// flavors' and the pod set's own values and refused conflicts when it admitted the workload, so
// merging them again with PodSetInfosFromAdmission adds only what the checks asked for. Empty
// when no check updates a pod set.
std::vector<PodSetUpdate> PodSetUpdatesOf(const v1::Workload& workload);

// Kueue's PodSetInfo.Merge: `from`'s labels, annotations and node selector are added to
// `into`'s (a key already set to another value is a permanent FAILED_PRECONDITION naming
// `what`, the field, the key and both values); tolerations and scheduling gates are appended
// unless present.
absl::Status MergeInfo(PodSetInfo& into, const PodSetInfo& from, absl::string_view what);

// Kueue's podset.Merge into a PodTemplateSpec (JSON): metadata.labels, metadata.annotations,
// spec.nodeSelector, spec.tolerations and spec.schedulingGates of `pod_template` take `info`'s
// with MergeInfo's rules. `where` names the template in conflict messages.
absl::Status MergeIntoTemplate(Json& pod_template, const PodSetInfo& info, absl::string_view where);

// Tolerations are the same when key, effect, value and operator (Equal when empty) are
// (Kubernetes' MatchToleration, as Kueue compares them).
bool SameToleration(const Json& a, const Json& b);

// The info for `name` in `infos`, or null.
const PodSetInfo* FindInfo(const std::vector<PodSetInfo>& infos, absl::string_view name);

// A string map from a JSON object (non-string values skipped); empty for null or a non-object.
std::map<std::string, std::string> StringMap(const Json* object);

}  // namespace tollgate::manifest
