#pragma once

// Reading whole files, the one way every binary and parser does it.

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tollgate::common {

// The file's bytes. An error names the file and says why ("cannot read PATH: No such file or
// directory"), with the code errno maps to (NOT_FOUND, PERMISSION_DENIED, ...); a failure while
// reading is DATA_LOSS.
absl::StatusOr<std::string> ReadFileToString(const std::string& path);

// ReadFileToString for a file that a flag or a config field names: the error leads with that
// name ("--tls-ca: cannot read /etc/ca.pem: No such file or directory") and keeps the code.
absl::StatusOr<std::string> ReadFileNamedBy(absl::string_view name, const std::string& path);

}  // namespace tollgate::common
