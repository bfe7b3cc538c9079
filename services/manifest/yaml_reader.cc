#include "services/manifest/yaml_reader.h"

#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace tollgate::manifest {

absl::Status Where::Error(absl::string_view path, absl::string_view what) const {
  return absl::InvalidArgumentError(path.empty() ? absl::StrCat(label_, ": ", what)
                                                 : absl::StrCat(label_, ": ", path, ": ", what));
}

std::string Join(absl::string_view path, absl::string_view key) {
  return path.empty() ? std::string(key) : absl::StrCat(path, ".", key);
}

std::string Index(absl::string_view path, size_t i) { return absl::StrCat(path, "[", i, "]"); }

std::string MapKey(absl::string_view path, absl::string_view key) {
  return absl::StrCat(path, "[", key, "]");
}

std::string Describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Scalar:
      return absl::StrCat("\"", node.Scalar(), "\"");
    case YAML::NodeType::Null:
      return "null";
    case YAML::NodeType::Undefined:
      break;
  }
  return "nothing";
}

bool IsEmpty(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return true;
    case YAML::NodeType::Scalar:
      return node.Scalar().empty();
    case YAML::NodeType::Sequence:
      return node.size() == 0;
    case YAML::NodeType::Map:
      for (const auto& kv : node) {
        if (!IsEmpty(kv.second)) return false;
      }
      return true;
  }
  return true;
}

absl::StatusOr<MapFields> MapFields::Read(const Where& where, const YAML::Node& node,
                                          std::string path, KeepFn keep) {
  MapFields fields;
  fields.path_ = std::move(path);
  if (node.IsNull()) return fields;
  if (!node.IsMap()) {
    return where.Error(fields.path_, absl::StrCat("expected a map, got ", Describe(node)));
  }
  // Dropped keys count too: a field given twice is an error even when its value is ignored.
  std::set<std::string> seen;
  for (const auto& kv : node) {
    if (!kv.first.IsScalar()) return where.Error(fields.path_, "map keys must be strings");
    const std::string& key = kv.first.Scalar();
    const std::string key_path = fields.Path(key);
    if (!seen.insert(key).second) return where.Error(key_path, "duplicate key");
    absl::StatusOr<bool> kept = keep(key, kv.second, key_path);
    if (!kept.ok()) return kept.status();
    if (*kept) fields.values_.emplace(key, kv.second);
  }
  return fields;
}

const YAML::Node* MapFields::Get(absl::string_view key) const {
  auto it = values_.find(std::string(key));
  return it == values_.end() ? nullptr : &it->second;
}

absl::StatusOr<std::string> Str(const Where& where, const YAML::Node& node,
                                absl::string_view path) {
  if (!node.IsScalar()) {
    return where.Error(path, absl::StrCat("expected a string, got ", Describe(node)));
  }
  return node.Scalar();
}

absl::StatusOr<bool> Bool(const Where& where, const YAML::Node& node, absl::string_view path) {
  if (node.IsScalar()) {
    const std::string s = absl::AsciiStrToLower(node.Scalar());
    if (s == "true" || s == "yes" || s == "on") return true;
    if (s == "false" || s == "no" || s == "off") return false;
  }
  return where.Error(path, absl::StrCat("expected true or false, got ", Describe(node)));
}

bool ScalarInt(const YAML::Node& node, int64_t lo, int64_t hi, int64_t* out) {
  int64_t v = 0;
  if (!node.IsScalar() || !absl::SimpleAtoi(node.Scalar(), &v) || v < lo || v > hi) return false;
  *out = v;
  return true;
}

absl::Status ExpectList(const Where& where, const YAML::Node& node, absl::string_view path) {
  if (!node.IsSequence()) {
    return where.Error(path, absl::StrCat("expected a list, got ", Describe(node)));
  }
  return absl::OkStatus();
}

absl::Status ExpectMap(const Where& where, const YAML::Node& node, absl::string_view path) {
  if (!node.IsMap()) {
    return where.Error(path, absl::StrCat("expected a map, got ", Describe(node)));
  }
  return absl::OkStatus();
}

}  // namespace tollgate::manifest
