#include "test/support/scratch_dir.h"

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace tollgate::test_support {

absl::StatusOr<std::string> MakeScratchDir(absl::string_view prefix) {
  const char* tmp = getenv("TEST_TMPDIR");
  std::string path =
      absl::StrCat(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp", "/", prefix, "_XXXXXX");
  if (mkdtemp(path.data()) == nullptr) {
    return absl::InternalError(absl::StrCat("mkdtemp ", path, ": ", std::strerror(errno)));
  }
  return path;
}

void RemoveScratchDir(const std::string& path) {
  if (path.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(path, ignored);
}

}  // namespace tollgate::test_support
