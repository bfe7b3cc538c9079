#pragma once

// How error messages echo a value the client sent: C-escaped, in double quotes, and cut to a
// bounded length. A 100 KB label echoed whole would push the status past gRPC's
// status-message limit and turn an INVALID_ARGUMENT into a RESOURCE_EXHAUSTED.

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace tollgate::core {

// Longest part of a value an error message quotes (before escaping).
inline constexpr size_t kMaxEchoedValueBytes = 128;

// `value` escaped, its first kMaxEchoedValueBytes bytes only and a note of its full size when
// longer. No quotes (for names inside paths).
std::string EchoedText(absl::string_view value);

// EchoedText in double quotes: `"abc"`, `"aaaa..."... (5000 bytes)`.
std::string QuoteValue(absl::string_view value);

}  // namespace tollgate::core
