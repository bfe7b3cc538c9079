#include "services/manifest/yaml_json.h"

#include <cstdint>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/yaml_documents.h"
#include "core/status_macros.h"
#include "yaml-cpp/yaml.h"

namespace tollgate::manifest {

Json JsonFromYaml(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      Json j = Json::object();
      for (const auto& kv : node) j[kv.first.Scalar()] = JsonFromYaml(kv.second);
      return j;
    }
    case YAML::NodeType::Sequence: {
      Json j = Json::array();
      for (const auto& item : node) j.push_back(JsonFromYaml(item));
      return j;
    }
    case YAML::NodeType::Scalar: {
      const std::string& s = node.Scalar();
      if (node.Tag() == "!") return s;  // quoted
      if (s == "true" || s == "True") return true;
      if (s == "false" || s == "False") return false;
      if (s == "null" || s == "~") return nullptr;
      int64_t i = 0;
      if (absl::SimpleAtoi(s, &i)) return i;
      double d = 0;
      if (!s.empty() && (absl::ascii_isdigit(static_cast<unsigned char>(s[0])) || s[0] == '-') &&
          absl::SimpleAtod(s, &d)) {
        return d;
      }
      return s;
    }
    default:
      return nullptr;
  }
}

absl::StatusOr<std::vector<Json>> JsonDocumentsFromYaml(absl::string_view text,
                                                        absl::string_view source) {
  TOLLGATE_ASSIGN_OR_RETURN(std::vector<YAML::Node> documents,
                            common::LoadYamlDocuments(text, source));
  std::vector<Json> out;
  for (const YAML::Node& doc : documents) {
    if (doc.IsNull()) continue;
    out.push_back(JsonFromYaml(doc));
  }
  return out;
}

}  // namespace tollgate::manifest
