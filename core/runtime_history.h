#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace tollgate::core {

// How long workloads of each LocalQueue ran: admission to finish of the latest finished
// workloads, the evidence start-time estimates learn runtimes from when a workload declares no
// maximum execution time. Keeps the most recent kMaxSamplesPerQueue per LocalQueue, so a
// queue's estimate follows its recent jobs and memory stays bounded. Not thread-safe.
class RuntimeHistory {
 public:
  static constexpr size_t kMaxSamplesPerQueue = 512;

  // `local_queue` is LocalQueueKey(namespace, name). Negative durations are ignored.
  void Record(absl::string_view local_queue, absl::Duration ran);

  // The recorded durations of a LocalQueue, oldest first.
  const std::deque<absl::Duration>* Samples(absl::string_view local_queue) const;
  int64_t total_recorded() const { return total_recorded_; }

 private:
  std::map<std::string, std::deque<absl::Duration>, std::less<>> samples_;
  int64_t total_recorded_ = 0;
};

// A frozen, sorted view of a RuntimeHistory for one estimate: quantiles in O(log n).
class RuntimeDistribution {
 public:
  RuntimeDistribution() = default;
  explicit RuntimeDistribution(const RuntimeHistory& history, absl::string_view local_queue);

  bool empty() const { return sorted_.empty(); }
  size_t size() const { return sorted_.size(); }
  // Nearest-rank quantile, q in (0, 1]; nullopt when empty.
  std::optional<absl::Duration> Quantile(double q) const;
  // The quantile of the durations longer than `elapsed` (a workload that has run `elapsed`
  // already is one of those): its expected total run time. nullopt when it has outrun every
  // recorded duration.
  std::optional<absl::Duration> QuantileGiven(double q, absl::Duration elapsed) const;

 private:
  std::vector<absl::Duration> sorted_;
};

}  // namespace tollgate::core
