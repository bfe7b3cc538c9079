#pragma once

// Fresh directories for tests that write files: stores, logs, certificates, port files.

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tollgate::test_support {

// Makes a new, empty directory named `prefix` plus a unique suffix under $TEST_TMPDIR (or /tmp)
// and returns its path.
absl::StatusOr<std::string> MakeScratchDir(absl::string_view prefix);

// Removes the directory and everything in it; nothing for an empty path (a SetUp that failed
// before making it), and errors are ignored: a test's outcome never depends on its cleanup.
void RemoveScratchDir(const std::string& path);

}  // namespace tollgate::test_support
