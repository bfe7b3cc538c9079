#pragma once

// Checked reading of yaml-cpp nodes, shared by the manifest and the scenario parsers: field
// paths for messages, maps whose keys are checked once, typed scalars. Every error is an
// INVALID_ARGUMENT status that names where it happened; nothing here throws on malformed input
// (callers still catch yaml-cpp's own exceptions at their boundary).

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "yaml-cpp/yaml.h"

namespace tollgate::manifest {

// Names the place of every error: a label for the document or object ("foo.yaml: step 3
// (expect)", "ClusterQueue team-a") in front of a field path.
class Where {
 public:
  explicit Where(std::string label) : label_(std::move(label)) {}

  // "<label>: <path>: <what>", or "<label>: <what>" for an empty path.
  absl::Status Error(absl::string_view path, absl::string_view what) const;
  const std::string& label() const { return label_; }

 private:
  std::string label_;
};

// Field paths as messages spell them: "spec.cohort", "podSets[2]", "requests[cpu]".
std::string Join(absl::string_view path, absl::string_view key);
std::string Index(absl::string_view path, size_t i);
std::string MapKey(absl::string_view path, absl::string_view key);

// A node as a message shows it: `"text"` for a scalar, else "a map", "a list", "null".
std::string Describe(const YAML::Node& node);

// Null, "", [], {} and maps of such: what Kubernetes would store as an unset field.
bool IsEmpty(const YAML::Node& node);

// The entries of one YAML map. Every key must be a string and appear once; a null node reads
// as an empty map. Which keys are allowed and which values kept is the caller's rule (`keep`).
class MapFields {
 public:
  // `keep(key, value, key_path)`: true keeps the entry, false drops it, an error refuses the map.
  using KeepFn = absl::FunctionRef<absl::StatusOr<bool>(
      const std::string& key, const YAML::Node& value, const std::string& key_path)>;

  static absl::StatusOr<MapFields> Read(const Where& where, const YAML::Node& node,
                                        std::string path, KeepFn keep);

  // The value kept for `key`, or nullptr.
  const YAML::Node* Get(absl::string_view key) const;
  // The path of `key` inside this map, for messages.
  std::string Path(absl::string_view key) const { return Join(path_, key); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::map<std::string, YAML::Node> values_;
};

// A scalar's text; anything else (null included) is an error.
absl::StatusOr<std::string> Str(const Where& where, const YAML::Node& node, absl::string_view path);

// true/false, and YAML 1.1's yes/no and on/off: Kubernetes reads YAML with a 1.1 parser.
absl::StatusOr<bool> Bool(const Where& where, const YAML::Node& node, absl::string_view path);

// A scalar holding an integer in [lo, hi]; false for anything else.
bool ScalarInt(const YAML::Node& node, int64_t lo, int64_t hi, int64_t* out);

absl::Status ExpectList(const Where& where, const YAML::Node& node, absl::string_view path);
absl::Status ExpectMap(const Where& where, const YAML::Node& node, absl::string_view path);


}  // namespace tollgate::manifest
