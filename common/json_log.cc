#include "common/json_log.h"

#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace tollgate::common {

void Log(absl::string_view level, absl::string_view msg, std::initializer_list<LogField> fields) {
  std::string line = absl::StrCat(
      "{\"ts\":", JsonQuote(absl::FormatTime(absl::RFC3339_full, absl::Now(), absl::UTCTimeZone())),
      ",\"level\":", JsonQuote(level), ",\"msg\":", JsonQuote(msg));
  for (const LogField& field : fields) {
    absl::StrAppend(&line, ",", JsonQuote(field.first), ":", JsonQuote(field.second));
  }
  line += "}\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

}  // namespace tollgate::common
