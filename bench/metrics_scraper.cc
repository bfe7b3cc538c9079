#include "bench/metrics_scraper.h"

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "httplib.h"

namespace tollgate::bench {

MetricsScraper::MetricsScraper(int port, absl::Duration interval)
    : port_(port), interval_(interval), thread_([this] { Loop(); }) {}

MetricsScraper::~MetricsScraper() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  thread_.join();
}

void MetricsScraper::Loop() {
  httplib::Client client("127.0.0.1", port_);
  client.set_read_timeout(10, 0);
  while (true) {
    const absl::Time start = absl::Now();
    httplib::Result result = client.Get("/metrics");
    const absl::Duration took = absl::Now() - start;
    absl::MutexLock lock(&mu_);
    if (result && result->status == 200) {
      scrapes_++;
      last_bytes_ = result->body.size();
      total_ += took;
      max_ = std::max(max_, took);
    } else {
      failures_++;
    }
    // Wakes early when stopping.
    auto stopping = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return stopping_; };
    if (mu_.AwaitWithTimeout(absl::Condition(&stopping), interval_)) return;
  }
}

std::string MetricsScraper::Summary() const {
  absl::MutexLock lock(&mu_);
  return absl::StrFormat("%d scrapes of %d bytes, mean %.2f ms, max %.2f ms, %d failed", scrapes_,
                         last_bytes_,
                         scrapes_ == 0 ? 0.0 : absl::ToDoubleMilliseconds(total_) / scrapes_,
                         absl::ToDoubleMilliseconds(max_), failures_);
}

}  // namespace tollgate::bench
