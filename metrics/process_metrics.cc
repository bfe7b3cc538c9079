#include "metrics/process_metrics.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/file_util.h"

namespace tollgate::metrics {
namespace {

// Seconds since the epoch at boot, from /proc/stat's btime.
absl::StatusOr<double> BootTime() {
  absl::StatusOr<std::string> stat = common::ReadFileToString("/proc/stat");
  if (!stat.ok()) return stat.status();
  for (absl::string_view line : absl::StrSplit(*stat, '\n')) {
    if (absl::ConsumePrefix(&line, "btime ")) {
      double btime = 0;
      if (absl::SimpleAtod(line, &btime)) return btime;
    }
  }
  return absl::UnavailableError("/proc/stat has no btime");
}

}  // namespace

absl::StatusOr<ProcessStats> ReadProcessStats() {
  absl::StatusOr<std::string> stat = common::ReadFileToString("/proc/self/stat");
  if (!stat.ok()) return stat.status();
  // The command name (field 2) is in parentheses and may contain spaces: fields resume after
  // the last ')'.
  const size_t close = stat->rfind(')');
  if (close == std::string::npos) return absl::DataLossError("/proc/self/stat: no ')'");
  std::vector<std::string> fields =
      absl::StrSplit(absl::string_view(*stat).substr(close + 2), ' ', absl::SkipEmpty());
  // fields[0] is field 3 (state): field N is fields[N - 3].
  auto field = [&](int n) -> double {
    double v = 0;
    if (n - 3 < static_cast<int>(fields.size())) (void)absl::SimpleAtod(fields[n - 3], &v);
    return v;
  };
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  ProcessStats stats;
  stats.cpu_seconds = (field(14) + field(15)) / ticks;
  stats.threads = field(20);
  stats.virtual_bytes = field(23);
  stats.resident_bytes = field(24) * page;
  absl::StatusOr<double> boot = BootTime();
  if (boot.ok()) stats.start_time_seconds = *boot + field(22) / ticks;

  if (DIR* dir = opendir("/proc/self/fd"); dir != nullptr) {
    int count = 0;
    while (dirent* entry = readdir(dir)) {
      if (entry->d_name[0] != '.') count++;
    }
    closedir(dir);
    // Not counting the descriptor opendir itself held.
    stats.open_fds = count - 1;
  }
  rlimit limit;
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0) stats.max_fds = static_cast<double>(limit.rlim_cur);
  return stats;
}

void WriteProcessMetrics(TextWriter& writer) {
  absl::StatusOr<ProcessStats> stats = ReadProcessStats();
  if (!stats.ok()) return;
  auto gauge = [&](const char* name, const char* help, MetricType type, double value) {
    writer.BeginFamily(name, help, type, {});
    writer.Sample({}, value);
  };
  gauge("process_cpu_seconds_total", "User and system CPU time spent by tollgated, in seconds.",
        MetricType::kCounter, stats->cpu_seconds);
  gauge("process_resident_memory_bytes", "Resident set size of tollgated, in bytes.",
        MetricType::kGauge, stats->resident_bytes);
  gauge("process_virtual_memory_bytes", "Virtual memory size of tollgated, in bytes.",
        MetricType::kGauge, stats->virtual_bytes);
  gauge("process_start_time_seconds", "When tollgated started, in seconds since the Unix epoch.",
        MetricType::kGauge, stats->start_time_seconds);
  gauge("process_open_fds", "File descriptors tollgated has open.", MetricType::kGauge,
        stats->open_fds);
  gauge("process_max_fds", "The most file descriptors tollgated may open.", MetricType::kGauge,
        stats->max_fds);
  gauge("process_threads", "Threads in tollgated.", MetricType::kGauge, stats->threads);
}

}  // namespace tollgate::metrics
