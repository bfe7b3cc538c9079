#pragma once

// Small helpers shared by tollgate-bench's commands: flags, percentiles, time, memory.

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace tollgate::bench {

// --name=value flags after the command word. Unknown names are an error at lookup time only if
// the caller asks with Require/Check; `Unused` lists the ones nobody read.
class Flags {
 public:
  static absl::StatusOr<Flags> Parse(int argc, char** argv, int first);

  std::string String(absl::string_view name, absl::string_view fallback) const;
  absl::StatusOr<int64_t> Int(absl::string_view name, int64_t fallback) const;
  absl::StatusOr<double> Double(absl::string_view name, double fallback) const;
  absl::StatusOr<absl::Duration> Duration(absl::string_view name, absl::Duration fallback) const;
  bool Bool(absl::string_view name) const;
  // INVALID_ARGUMENT naming any flag not in `known`.
  absl::Status CheckKnown(const std::vector<std::string>& known) const;

 private:
  std::map<std::string, std::string, std::less<>> values_;
};

// Seconds on the monotonic clock (benchmarks time intervals only).
double MonotonicSeconds();

// CPU seconds (user + system) this process has used, on all of its threads.
double ProcessCpuSeconds();

// p in [0, 1]; sorts a copy.
double Percentile(std::vector<double> values, double p);

// The process's resident set size from /proc/self/status (VmRSS), in bytes.
int64_t ResidentBytes();

// One closed-loop load phase: its calls that succeeded, their latencies, and the first error.
struct PhaseResult {
  std::string name;
  int concurrency = 0;
  int64_t ok = 0;
  int64_t errors = 0;
  std::string first_error;
  double seconds = 0;
  std::vector<double> latency_ms;

  double throughput() const { return seconds > 0 ? static_cast<double>(ok) / seconds : 0; }
};

// Runs `call` back to back from `threads` threads for `duration`; `call(thread, seq)` returns
// an error text (empty on success).
PhaseResult RunPhase(const std::string& name, int threads, absl::Duration duration,
                     const std::function<std::string(int, int64_t)>& call);

// A fresh directory under `parent` (created), named with `prefix` and a random suffix.
absl::StatusOr<std::string> MakeTempDir(const std::string& parent, const std::string& prefix);

}  // namespace tollgate::bench
