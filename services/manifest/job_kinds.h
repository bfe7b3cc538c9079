#pragma once

// The one table of the job kinds Tollgate admits (docs/job-kinds.md): every consumer —
// tollgate-kube, `tollgate submit -f`, `tollgate simulate`, scenarios — finds a kind here, so a
// new kind is one translator file plus one row in job_kinds.cc.

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "services/manifest/job_kind.h"

namespace tollgate::manifest {

// Every kind, in the order docs and help texts list them. The translators live as long as the
// process.
absl::Span<const JobKindTranslator* const> AllJobKinds();

// The kind of this CamelCase name (exact spelling), or null.
const JobKindTranslator* FindJobKind(absl::string_view kind);
// The kind of this lower-case plural ("jobsets"), or null.
const JobKindTranslator* FindJobKindByPlural(absl::string_view plural);
// The kind Kueue's integrations.frameworks calls `framework` ("jobset.x-k8s.io/jobset"), or null.
const JobKindTranslator* FindJobKindByFramework(absl::string_view framework);

// The kind of a manifest with this apiVersion and kind: null when the kind is not a job kind;
// INVALID_ARGUMENT naming the apiVersion Tollgate reads when the kind is one but the apiVersion
// is another (an older or newer version of the group, or another group).
absl::StatusOr<const JobKindTranslator*> JobKindOfManifest(absl::string_view api_version,
                                                           absl::string_view kind);

// "Job (batch/v1), JobSet (jobset.x-k8s.io/v1alpha2), ..." for messages and help.
std::string JobKindList();
// "batch/job, jobset.x-k8s.io/jobset, ...": every framework name, for messages and help.
std::string FrameworkList();

// One factory per translator file; each is a row of the table.
std::unique_ptr<JobKindTranslator> NewJobTranslator();
std::unique_ptr<JobKindTranslator> NewCronJobTranslator();
std::unique_ptr<JobKindTranslator> NewJobSetTranslator();
std::unique_ptr<JobKindTranslator> NewMpiJobTranslator();
std::unique_ptr<JobKindTranslator> NewPyTorchJobTranslator();
std::unique_ptr<JobKindTranslator> NewTfJobTranslator();
std::unique_ptr<JobKindTranslator> NewJaxJobTranslator();
std::unique_ptr<JobKindTranslator> NewPaddleJobTranslator();
std::unique_ptr<JobKindTranslator> NewXgboostJobTranslator();
std::unique_ptr<JobKindTranslator> NewTrainJobTranslator();
std::unique_ptr<JobKindTranslator> NewRayJobTranslator();
std::unique_ptr<JobKindTranslator> NewRayClusterTranslator();
std::unique_ptr<JobKindTranslator> NewRayServiceTranslator();
std::unique_ptr<JobKindTranslator> NewSparkApplicationTranslator();
std::unique_ptr<JobKindTranslator> NewAppWrapperTranslator();

}  // namespace tollgate::manifest
