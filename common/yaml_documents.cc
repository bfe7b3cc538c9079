#include "common/yaml_documents.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace tollgate::common {
namespace {

absl::Status InvalidYaml(absl::string_view source, const YAML::Exception& e) {
  if (e.mark.is_null()) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": invalid YAML: ", e.msg));
  }
  return absl::InvalidArgumentError(absl::StrCat(source, ":", e.mark.line + 1, ":",
                                                 e.mark.column + 1, ": invalid YAML: ", e.msg));
}

}  // namespace

absl::StatusOr<std::vector<YAML::Node>> LoadYamlDocuments(absl::string_view text,
                                                          absl::string_view source) {
  try {
    return YAML::LoadAll(std::string(text));
  } catch (const YAML::Exception& e) {
    return InvalidYaml(source, e);
  }
}

absl::StatusOr<YAML::Node> LoadYamlDocument(absl::string_view text, absl::string_view source) {
  try {
    return YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return InvalidYaml(source, e);
  }
}

}  // namespace tollgate::common
