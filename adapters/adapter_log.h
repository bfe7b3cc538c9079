#pragma once

#include <initializer_list>
#include <string>
#include <utility>

#include "absl/strings/string_view.h"

namespace tollgate::adapters {

using LogField = std::pair<absl::string_view, std::string>;

// One JSON object per line on stderr ({"ts", "level", "msg", fields...}), written with a single
// call so lines from different threads never interleave; the same shape tollgated logs.
// Thread-safe.
void Log(absl::string_view level, absl::string_view msg,
         std::initializer_list<LogField> fields = {});

}  // namespace tollgate::adapters
