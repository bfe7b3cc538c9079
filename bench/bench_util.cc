#include "bench/bench_util.h"

#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"

namespace tollgate::bench {

absl::StatusOr<Flags> Flags::Parse(int argc, char** argv, int first) {
  Flags flags;
  for (int i = first; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (!absl::ConsumePrefix(&arg, "--")) {
      return absl::InvalidArgumentError(absl::StrCat("unexpected argument \"", arg, "\""));
    }
    const size_t eq = arg.find('=');
    if (eq == absl::string_view::npos) {
      flags.values_[std::string(arg)] = "true";
    } else {
      flags.values_[std::string(arg.substr(0, eq))] = std::string(arg.substr(eq + 1));
    }
  }
  return flags;
}

std::string Flags::String(absl::string_view name, absl::string_view fallback) const {
  auto it = values_.find(name);
  return it == values_.end() ? std::string(fallback) : it->second;
}

absl::StatusOr<int64_t> Flags::Int(absl::string_view name, int64_t fallback) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  std::string text = it->second;
  text.erase(std::remove(text.begin(), text.end(), '_'), text.end());
  int64_t v = 0;
  if (!absl::SimpleAtoi(text, &v)) {
    return absl::InvalidArgumentError(absl::StrCat("--", name, ": not an integer: ", it->second));
  }
  return v;
}

absl::StatusOr<double> Flags::Double(absl::string_view name, double fallback) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  double v = 0;
  if (!absl::SimpleAtod(it->second, &v)) {
    return absl::InvalidArgumentError(absl::StrCat("--", name, ": not a number: ", it->second));
  }
  return v;
}

absl::StatusOr<absl::Duration> Flags::Duration(absl::string_view name,
                                               absl::Duration fallback) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  absl::Duration d;
  if (!absl::ParseDuration(it->second, &d)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", name, ": want a duration such as 10s, got ", it->second));
  }
  return d;
}

bool Flags::Bool(absl::string_view name) const {
  auto it = values_.find(name);
  return it != values_.end() && (it->second == "true" || it->second == "1");
}

absl::Status Flags::CheckKnown(const std::vector<std::string>& known) const {
  for (const auto& [name, value] : values_) {
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown flag --", name, " (known: ", absl::StrJoin(known, ", "), ")"));
    }
  }
  return absl::OkStatus();
}

double MonotonicSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double ProcessCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t i =
      std::min(values.size() - 1, static_cast<size_t>(p * static_cast<double>(values.size())));
  return values[i];
}

int64_t ResidentBytes() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    absl::string_view rest = line;
    if (absl::ConsumePrefix(&rest, "VmRSS:")) {
      rest = absl::StripAsciiWhitespace(rest);
      absl::ConsumeSuffix(&rest, "kB");
      int64_t kb = 0;
      if (absl::SimpleAtoi(absl::StripAsciiWhitespace(rest), &kb)) return kb * 1024;
    }
  }
  return -1;
}

absl::StatusOr<std::string> MakeTempDir(const std::string& parent, const std::string& prefix) {
  std::error_code ec;
  std::filesystem::create_directories(parent, ec);
  std::string templ = absl::StrCat(parent, "/", prefix, "XXXXXX");
  if (mkdtemp(templ.data()) == nullptr) {
    return absl::InternalError(absl::StrCat("mkdtemp ", templ, ": ", std::strerror(errno)));
  }
  return templ;
}

PhaseResult RunPhase(const std::string& name, int threads, absl::Duration duration,
                     const std::function<std::string(int, int64_t)>& call) {
  PhaseResult result;
  result.name = name;
  result.concurrency = threads;
  std::vector<std::vector<double>> latencies(threads);
  std::vector<int64_t> errors(threads, 0);
  std::vector<std::string> first_error(threads);
  std::atomic<bool> stop{false};
  const double start = MonotonicSeconds();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (int64_t seq = 0; !stop.load(std::memory_order_relaxed); ++seq) {
        const double t0 = MonotonicSeconds();
        std::string error = call(t, seq);
        const double t1 = MonotonicSeconds();
        if (error.empty()) {
          latencies[t].push_back((t1 - t0) * 1e3);
        } else if (errors[t]++ == 0) {
          first_error[t] = std::move(error);
        }
      }
    });
  }
  absl::SleepFor(duration);
  stop.store(true);
  for (std::thread& th : pool) th.join();
  result.seconds = MonotonicSeconds() - start;
  for (int t = 0; t < threads; ++t) {
    result.ok += static_cast<int64_t>(latencies[t].size());
    result.latency_ms.insert(result.latency_ms.end(), latencies[t].begin(), latencies[t].end());
    result.errors += errors[t];
    if (result.first_error.empty()) result.first_error = first_error[t];
  }
  return result;
}

}  // namespace tollgate::bench
