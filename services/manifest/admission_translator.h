#pragma once

// Admission decisions applied to job objects and taken back: Kueue's RunWithPodSetsInfo and
// RestorePodSetsInfo. Pure; returns the desired object and leaves the patching to the caller.

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "services/manifest/json_util.h"
#include "services/manifest/workload_translator.h"
#include "tollgate/v1/objects.pb.h"

namespace tollgate::manifest {

// The pod templates' nodeSelector/tolerations (and a Job's parallelism) before admission
// changed them, so eviction can put them back and resubmission sees the original spec.
inline constexpr absl::string_view kOriginalTemplatesAnnotation =
    "tollgate.dev/original-pod-templates";
// Which admission the templates were changed for (AdmissionFingerprint).
inline constexpr absl::string_view kAdmissionAnnotation = "tollgate.dev/admission";

using FlavorMap = std::map<std::string, v1::ResourceFlavor>;

// The ResourceFlavor names `admission` assigns, sorted and unique.
std::vector<std::string> AssignedFlavors(const v1::Admission& admission);

// A stable string naming the ClusterQueue, each pod set's flavors and admitted count.
std::string AdmissionFingerprint(const v1::Admission& admission);

// `obj` with the admission applied to its pod templates, starting from the original templates:
// each admitted pod set's template gets its flavors' nodeLabels merged into nodeSelector (the
// flavor wins on a clash) and their tolerations appended unless already present; a template the
// object lacks (RayJob's default submitter) is created; a partially admitted Job gets its
// parallelism lowered to the admitted count. The originals go to kOriginalTemplatesAnnotation
// and the fingerprint to kAdmissionAnnotation. spec.suspend is left alone. NOT_FOUND when a
// needed flavor is missing from `flavors`.
absl::StatusOr<Json> ApplyAdmission(const JobKindTranslator& translator, const Json& obj,
                                    const v1::Admission& admission, const FlavorMap& flavors);

// `obj` with the templates recorded in kOriginalTemplatesAnnotation put back and both
// annotations removed; `obj` unchanged when it has no such annotation. INVALID_ARGUMENT when
// the annotation is malformed.
absl::StatusOr<Json> RestoreOriginalTemplates(const Json& obj);

// The annotation value of `key`, or "".
std::string Annotation(const Json& obj, absl::string_view key);
// Sets (or, for an empty value, removes) an annotation on a desired-state object.
void SetAnnotation(Json& obj, absl::string_view key, absl::string_view value);

}  // namespace tollgate::manifest
