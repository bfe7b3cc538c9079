#pragma once

// YAML documents as Kubernetes reads them, into JSON: plain scalars that look like integers,
// floats, booleans or null become those, quoted ones stay strings. Used to read job manifests
// (any kind of job_kinds.h) from files, so the CLI, scenarios and simulation see the same JSON
// the adapter gets from the API server.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "services/manifest/json_util.h"

namespace YAML {
class Node;
}

namespace tollgate::manifest {

Json JsonFromYaml(const YAML::Node& node);

// Every non-empty document of `text`; a syntax error names `source`, line and column.
absl::StatusOr<std::vector<Json>> JsonDocumentsFromYaml(absl::string_view text,
                                                        absl::string_view source);

}  // namespace tollgate::manifest
