#pragma once

// Reading whole files, the one way every binary and parser does it.

#include <string>

#include "absl/status/statusor.h"

namespace tollgate {

// The file's bytes. An error names the file and says why ("cannot read PATH: No such file or
// directory"), with the code errno maps to (NOT_FOUND, PERMISSION_DENIED, ...); a failure while
// reading is DATA_LOSS.
absl::StatusOr<std::string> ReadFileToString(const std::string& path);

}  // namespace tollgate
