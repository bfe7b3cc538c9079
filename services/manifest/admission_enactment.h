#pragma once

// Admission decisions enacted on job objects and taken back: Kueue's RunWithPodSetsInfo and
// RestorePodSetsInfo for every kind. Pure; returns the desired object and leaves patching to
// the caller. What an admission changes is recorded on the object itself, so a restarted
// adapter can restore it without state of its own.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "services/manifest/job_kind.h"
#include "services/manifest/json_util.h"
#include "services/manifest/pod_set_info.h"
#include "tollgate/v1/objects.pb.h"

namespace tollgate::manifest {

// The values the enacted fields had before the admission, so eviction restores them exactly
// and the workload is always computed from the job as written. Layout:
//   {"fields": {"<JSON pointer>": <value before, or null when absent>, ...}}
// (Written by earlier versions, and still read: {"templates": {"<pointer to a template>":
// {"nodeSelector": ..., "tolerations": ...}}, "created": ["<pointer>"], "parallelism": n}.)
inline constexpr absl::string_view kOriginalTemplatesAnnotation =
    "tollgate.dev/original-pod-templates";
// Which admission the object was changed for (AdmissionFingerprint).
inline constexpr absl::string_view kAdmissionAnnotation = "tollgate.dev/admission";

// The ResourceFlavor names `admission` assigns, sorted and unique.
std::vector<std::string> AssignedFlavors(const v1::Admission& admission);

// A stable string naming the ClusterQueue, each pod set's flavors and admitted count.
std::string AdmissionFingerprint(const v1::Admission& admission);

// `obj` with `infos` enacted by the kind's translator, starting from the object as written
// (RestoreOriginalFields): the previous values of translator.EnactedFields go to
// kOriginalTemplatesAnnotation and `fingerprint` to kAdmissionAnnotation. The suspend field is
// left alone. A conflict is returned as the translator reports it (IsPermanentError).
absl::StatusOr<Json> ApplyAdmission(const JobKindTranslator& translator, const Json& obj,
                                    const std::vector<PodSetInfo>& infos,
                                    absl::string_view fingerprint, const ObjectLookup& lookup);

// `obj` with the fields recorded in kOriginalTemplatesAnnotation put back and both annotations
// removed; `obj` unchanged when it has no such annotation. INVALID_ARGUMENT when the
// annotation is malformed.
absl::StatusOr<Json> RestoreOriginalFields(const Json& obj);

// The annotation value of `key`, or "".
std::string Annotation(const Json& obj, absl::string_view key);
// Sets (or, for an empty value, removes) an annotation on a desired-state object.
void SetAnnotation(Json& obj, absl::string_view key, absl::string_view value);

}  // namespace tollgate::manifest
