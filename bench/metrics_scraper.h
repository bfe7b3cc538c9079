#pragma once

#include <atomic>
#include <string>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace tollgate::bench {

// Scrapes a tollgated's /metrics every `interval` on its own thread while it lives, as a
// Prometheus server would (more often than the usual 15 s, to make the cost visible), and
// keeps the scrape count and latencies. Thread-safe.
class MetricsScraper {
 public:
  MetricsScraper(int port, absl::Duration interval);
  ~MetricsScraper();
  MetricsScraper(const MetricsScraper&) = delete;
  MetricsScraper& operator=(const MetricsScraper&) = delete;

  // "N scrapes of B bytes, mean X ms, max Y ms, F failed".
  std::string Summary() const;

 private:
  void Loop();

  const int port_;
  const absl::Duration interval_;
  mutable absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  int scrapes_ ABSL_GUARDED_BY(mu_) = 0;
  int failures_ ABSL_GUARDED_BY(mu_) = 0;
  size_t last_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Duration total_ ABSL_GUARDED_BY(mu_);
  absl::Duration max_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace tollgate::bench
