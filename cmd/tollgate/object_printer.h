#pragma once

// kubectl's machine-readable output for Tollgate's objects: every object as the Kueue (or core)
// manifest it corresponds to, printed as YAML, JSON, `kind/name`, or through a JSONPath template.
// `get -o yaml` output loads back with `apply -f` (server-filled fields and status are dropped on
// the way in). Pure: no I/O beyond the stream handed in.

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"
#include "tollgate/v1/objects.pb.h"

namespace tollgate::cli {

using Json = nlohmann::json;

// The Kueue-shaped manifest: apiVersion, kind, metadata, spec (and status where Kueue has one).
// A Workload's pod sets carry their per-pod requests in a one-container pod template, as Kueue's
// Workload does.
Json ManifestOf(const v1::ConfigObject& object);
Json ManifestOf(const v1::Workload& workload);
// kubectl's `kind: List` around several manifests.
Json ListOf(std::vector<Json> items);

// YAML as kubectl prints it (keys sorted, two-space indent, sequences flush with their key).
std::string ToYaml(const Json& value);
// JSON as kubectl prints it (four-space indent).
std::string ToJson(const Json& value);

// -o FORMAT.
struct OutputFormat {
  enum class Kind { kTable, kWide, kYaml, kJson, kName, kJsonPath };
  Kind kind = Kind::kTable;
  std::string jsonpath;  // the template of -o jsonpath=...

  bool is_table() const { return kind == Kind::kTable || kind == Kind::kWide; }
};

// Parses -o's value ("" is the table); INVALID_ARGUMENT naming the accepted formats.
absl::StatusOr<OutputFormat> ParseOutputFormat(absl::string_view value);

// Renders a kubectl JSONPath template ("{.metadata.name}", "{range .items[*]}{.x}{\"\\n\"}{end}")
// against `root`. Supports fields (with `\.` escapes), [n], [*], range/end and quoted literals;
// several results of one expression are separated by a space, missing fields print nothing.
absl::StatusOr<std::string> RenderJsonPath(const Json& root, absl::string_view tmpl);

// The values an expression selects, for --sort-by (".metadata.name" or "{.metadata.name}").
absl::StatusOr<std::vector<Json>> SelectJsonPath(const Json& root, absl::string_view expr);

// The order that sorts `manifests` by the first value `expr` selects in each (numbers
// numerically, then strings; objects without the field first), stable: indexes into manifests.
absl::StatusOr<std::vector<size_t>> SortOrder(const std::vector<Json>& manifests,
                                              absl::string_view expr);

// Prints `items` in a non-table format. `single`: the user named one object, so YAML/JSON show
// it alone rather than in a List. `resources[i]` is the kubectl resource of items[i]
// ("clusterqueue.kueue.x-k8s.io") for -o name.
absl::Status PrintObjects(const OutputFormat& format, const std::vector<Json>& items,
                          const std::vector<std::string>& resources, bool single,
                          std::ostream& out);

}  // namespace tollgate::cli
