#pragma once

// What `apply`, `submit` and `diff` read with -f: Kueue manifests (via services/manifest), the
// job kinds tollgate-kube admits (batch/v1 Job, ray.io RayJob, kubeflow.org PyTorchJob, turned
// into Workloads by the same translators), and `kind: List` of any of them.

#include <istream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "services/manifest/job_kind.h"
#include "services/manifest/manifest_parser.h"
#include "yaml-cpp/yaml.h"

namespace tollgate::manifest {

class GatedKindsInput;

// One YAML document (or List item) as a Manifest. Job kinds become their Workload, named as
// tollgate-kube names it (`job-NAME-SUFFIX`), the suffix derived from kind, namespace and name so
// submitting the same file twice is idempotent; a manifest with only metadata.generateName gets
// a fresh name as the API server would give it. Unknown kinds: INVALID_ARGUMENT listing what is
// accepted.
absl::StatusOr<std::vector<Manifest>> ParseInputDocument(const YAML::Node& node,
                                                         absl::string_view where);
// The same, with the other documents a job may refer to (a TrainJob's runtime) in `lookup`.
// Objects that carry no work (a ConfigMap, a Service, a TrainingRuntime) and CronJobs (whose
// Jobs are the workloads) give no manifest but a line in `notes` naming them. Pods of a pod group
// are kept in `gated` until its Finish makes their group's workload; without `gated` the
// document stands alone (docs/pod-integrations.md).
absl::StatusOr<std::vector<Manifest>> ParseInputDocument(const YAML::Node& node,
                                                         absl::string_view where,
                                                         const ObjectLookup& lookup,
                                                         std::vector<std::string>& notes,
                                                         GatedKindsInput* gated = nullptr);

// Reads every manifest -f names, in order: "-" is `in`, a folder means its *.yaml, *.yml and
// *.json files in name order (as `kubectl apply -f DIR`).
absl::StatusOr<std::vector<Manifest>> ReadManifests(std::istream& in,
                                                    const std::vector<std::string>& paths);
// The same, adding a note for every document skipped (see ParseInputDocument). The jobs of all
// files may refer to objects in any of them.
absl::StatusOr<std::vector<Manifest>> ReadManifests(std::istream& in,
                                                    const std::vector<std::string>& paths,
                                                    std::vector<std::string>& notes);

// `-n NS` on apply/submit/diff, as kubectl: the namespace of namespaced manifests that name none.
// The parser already filled in "default" for those, so an explicit "default" is taken over too.
void UseNamespace(absl::string_view ns, std::vector<Manifest>& manifests);

}  // namespace tollgate::manifest
