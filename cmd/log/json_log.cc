#include "cmd/log/json_log.h"

#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace tollgate::cmd {

std::string JsonQuote(absl::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
  return out;
}

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

}  // namespace tollgate::cmd
