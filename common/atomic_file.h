#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace tollgate::common {

// Writes `contents` to a temporary file beside `path` and renames it into place, so a reader
// never sees a half-written file (port files, adapters' resume revisions).
absl::Status WriteFileAtomically(const std::string& path, absl::string_view contents);

}  // namespace tollgate::common
