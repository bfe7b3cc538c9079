#include "common/file_util.h"

#include <cerrno>
#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace tollgate::common {

absl::StatusOr<std::string> ReadFileToString(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::ErrnoToStatus(errno, absl::StrCat("cannot read ", path));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return absl::DataLossError(absl::StrCat("cannot read ", path, ": read failed"));
  return text.str();
}

absl::StatusOr<std::string> ReadFileNamedBy(absl::string_view name, const std::string& path) {
  absl::StatusOr<std::string> text = ReadFileToString(path);
  if (!text.ok())
    return absl::Status(text.status().code(), absl::StrCat(name, ": ", text.status().message()));
  return text;
}

}  // namespace tollgate::common
