#include "common/atomic_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "absl/strings/str_cat.h"

namespace tollgate::common {

absl::Status WriteFileAtomically(const std::string& path, absl::string_view contents) {
  const std::string tmp = absl::StrCat(path, ".tmp.", getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << contents;
    out.close();
    if (!out) {
      return absl::InternalError(absl::StrCat(tmp, ": write failed: ", std::strerror(errno)));
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string error = std::strerror(errno);
    std::remove(tmp.c_str());
    return absl::InternalError(absl::StrCat("rename ", tmp, " to ", path, ": ", error));
  }
  return absl::OkStatus();
}

}  // namespace tollgate::common
