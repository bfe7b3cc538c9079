#pragma once

// Reads Kubernetes-style Kueue manifests (kueue.x-k8s.io/v1beta1 and v1beta2, plus core v1
// Namespace and scheduling.k8s.io/v1 PriorityClass) into Tollgate's API objects, so that a Kueue
// user's YAML loads unchanged.
//
// Field handling, in the order it is decided:
//  * a field Tollgate implements is mapped onto the proto (v1beta1 and v1beta2 spellings of the
//    same field, e.g. ClusterQueue spec.cohort / spec.cohortName, both land in one proto field);
//  * server-populated metadata (uid, resourceVersion, managedFields, ...) and every `status`
//    section are accepted and dropped, so `kubectl get -o yaml` output loads too;
//  * a Kueue field Tollgate does not implement is accepted only while empty, otherwise the
//    result is UNIMPLEMENTED naming its path: silently dropping e.g. admissionChecks would admit
//    workloads Kueue would hold back;
//  * anything else is INVALID_ARGUMENT naming its path, as `kubectl apply` (strict field
//    validation) would refuse it.
//
// Every error message starts with the kind and object name and names the field path, e.g.
// `ClusterQueue team-a: unknown field spec.resourceGroups[0].flavors[0].resources[1].nominalQuote`.

#include <string>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tollgate/v1/objects.pb.h"
#include "yaml-cpp/yaml.h"

namespace tollgate::manifest {

struct Manifest {
  // A Workload is not a configuration object: it is submitted, not applied.
  std::variant<tollgate::v1::ConfigObject, tollgate::v1::Workload> object;
  // The manifest's `kind`, e.g. "ClusterQueue".
  std::string kind;
};

// Parses a multi-document YAML file (documents separated by `---`; empty documents are
// skipped) as every reader of manifest files does (`tollgate apply -f`, `tollgated --manifests`,
// `tollgate simulate`): each document through ParseInputDocument (manifest_input.h), so a
// `kind: List` and the job kinds load everywhere. Every document needs its apiVersion; an empty
// file is INVALID_ARGUMENT. Errors are prefixed with `source_name` and the 1-based document
// number.
absl::StatusOr<std::vector<Manifest>> ParseManifests(absl::string_view yaml_text,
                                                     absl::string_view source_name);

class ObjectLookup;     // job_kind.h
class GatedKindsInput;  // gated_kinds_input.h
// The same, with the objects a job may refer to (a TrainJob's runtime) in `lookup`, and a line
// in `notes` for every document that carries no work and is skipped (see ParseInputDocument).
// A file of only such documents is no error. Pods of a pod group go to `gated` when given (a
// file of only such pods is no error either; their workload comes from gated->Finish).
absl::StatusOr<std::vector<Manifest>> ParseManifests(absl::string_view yaml_text,
                                                     absl::string_view source_name,
                                                     const ObjectLookup& lookup,
                                                     std::vector<std::string>& notes,
                                                     GatedKindsInput* gated = nullptr);

// Parses one already-parsed manifest. A non-empty `path_prefix` (e.g. "foo.yaml: objects[2]")
// is put in front of every error message.
absl::StatusOr<Manifest> ParseManifestNode(const YAML::Node& node, absl::string_view path_prefix);

// True when `status` came from a malformed value inside a Workload (a quantity that does not
// parse, a count that is not an integer) rather than from the manifest's structure. Callers
// that submit workloads on a user's behalf report such errors as a refused submit, like the
// service would, instead of rejecting the whole input.
bool IsValueError(const absl::Status& status);

}  // namespace tollgate::manifest
