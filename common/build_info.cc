#include "common/build_info.h"

#include "absl/strings/str_cat.h"

namespace tollgate::common {

std::string Describe(const BuildInfo& info) {
  std::string text = absl::StrCat(info.version, " (", info.build_type, ", ", info.compiler, ";");
  for (size_t i = 0; i < info.dependencies.size(); ++i) {
    absl::StrAppend(&text, i == 0 ? " " : ", ", info.dependencies[i].first, " ",
                    info.dependencies[i].second);
  }
  absl::StrAppend(&text, ")");
  return text;
}

std::string VersionLine(absl::string_view program) {
  return absl::StrCat(program, " ", Describe(Current()), "\n");
}

bool AsksForVersion(int argc, char** argv) {
  if (argc != 2) return false;
  const absl::string_view arg = argv[1];
  return arg == "version" || arg == "--version";
}

}  // namespace tollgate::common
