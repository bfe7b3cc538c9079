#pragma once

// The one place YAML text is loaded (yaml-cpp throws; nothing above sees it). Manifests,
// Kueue's Configuration, policy files, kubeconfig and the CLI's config file all come through
// here, so a syntax error reads the same everywhere: `SOURCE:LINE:COLUMN: invalid YAML: why`.

#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "yaml-cpp/yaml.h"

namespace tollgate::common {

// Every document of a multi-document stream (`---` separated), empty ones included as null
// nodes so callers can number documents as the file does.
absl::StatusOr<std::vector<YAML::Node>> LoadYamlDocuments(absl::string_view text,
                                                          absl::string_view source);

// A file that holds one document (an empty file is a null node).
absl::StatusOr<YAML::Node> LoadYamlDocument(absl::string_view text, absl::string_view source);

}  // namespace tollgate::common
