#pragma once

#include <initializer_list>
#include <string>
#include <utility>

#include "absl/strings/string_view.h"
#include "common/json_text.h"

namespace tollgate::common {

using LogField = std::pair<absl::string_view, std::string>;

// One JSON object per line on stderr ({"ts", "level", "msg", fields...} in that order), written
// with a single call so lines from different threads never interleave. Log timestamps are for
// people reading the log, not decisions, so they use the wall clock, never an injected clock.
// Shared by tollgated and the adapters so their logs have one shape. Thread-safe.
void Log(absl::string_view level, absl::string_view msg,
         std::initializer_list<LogField> fields = {});

}  // namespace tollgate::common
