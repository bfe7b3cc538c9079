#pragma once

#include <string>

#include "absl/strings/string_view.h"

namespace tollgate::common {

// `s` as a JSON string literal, quotes included: the escapes JSON requires, control characters
// as \u00XX. Bytes >= 0x80 pass through (UTF-8 stays UTF-8).
std::string JsonQuote(absl::string_view s);

}  // namespace tollgate::common
