#include "adapters/adapter_log.h"

#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "adapters/kube/json_util.h"

namespace tollgate::adapters {

void Log(absl::string_view level, absl::string_view msg, std::initializer_list<LogField> fields) {
  kube::Json line = kube::Json::object();
  // Log timestamps are for people reading the log, not decisions, so they use the wall clock
  // directly rather than the injected core::Clock.
  line["ts"] = absl::FormatTime(absl::RFC3339_full, absl::Now(), absl::UTCTimeZone());
  line["level"] = std::string(level);
  line["msg"] = std::string(msg);
  for (const LogField& field : fields) line[std::string(field.first)] = field.second;
  const std::string text = kube::Dump(line) + "\n";
  std::fwrite(text.data(), 1, text.size(), stderr);
  std::fflush(stderr);
}

}  // namespace tollgate::adapters
