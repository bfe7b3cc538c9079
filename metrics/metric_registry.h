#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace tollgate::metrics {

enum class MetricType { kCounter, kGauge, kHistogram };

// Label values in the order of the family's label names.
using LabelValues = std::vector<std::string>;

// Writes the Prometheus text exposition format (version 0.0.4): one family at a time, HELP and
// TYPE first, then its samples. Escapes HELP text and label values as the format requires and
// writes values so they parse back exactly (shortest round-trip form, NaN, +Inf, -Inf).
// A family's samples must follow its Begin call; families must not repeat. Not thread-safe.
class TextWriter {
 public:
  void BeginFamily(absl::string_view name, absl::string_view help, MetricType type,
                   std::vector<std::string> label_names);
  // One counter or gauge sample of the current family.
  void Sample(const LabelValues& values, double value);
  // One histogram of the current family: `counts[i]` observations fell at or below
  // `bounds[i]` and above the previous bound (not cumulative); `counts` has one more entry than
  // `bounds`, for +Inf.
  void Histogram(const LabelValues& values, const std::vector<double>& bounds,
                 const std::vector<uint64_t>& counts, double sum);
  const std::string& text() const { return out_; }
  std::string Take() { return std::move(out_); }

 private:
  void WriteSeries(absl::string_view suffix, const LabelValues& values,
                   absl::string_view extra_label, absl::string_view extra_value, double value);

  std::string out_;
  std::string name_;
  std::vector<std::string> label_names_;
};

// The text format's escaping, exposed for tests.
std::string EscapeHelp(absl::string_view help);
std::string EscapeLabelValue(absl::string_view value);
std::string FormatValue(double value);
// OK when `name` is a valid metric or label name (label names may not contain ':').
absl::Status ValidateName(absl::string_view name, bool label);

// Kueue's wait-time buckets: 1, 2.5, 5, 10, ... doubling (`count` bounds in all).
std::vector<double> KueueExponentialBuckets(int count);
// Prometheus' client default buckets (.005 ... 10 seconds).
std::vector<double> DefaultLatencyBuckets();

// A labelled family of counters, gauges set by the recorder, or histograms, kept in memory and
// rendered at scrape time. Finding a series takes a short mutex; recording into a series found
// once (Series&) is lock-free, so hot paths keep the series they use. Thread-safe.
class Family {
 public:
  // One labelled series. Stable: it lives as long as its family, unless DeleteMatching removes
  // it.
  class Series {
   public:
    // Counter: adds `delta` (>= 0). Gauge: adds (may be negative).
    void Add(double delta = 1) { value_.fetch_add(delta, std::memory_order_relaxed); }
    void Set(double value) { value_.store(value, std::memory_order_relaxed); }
    // Histogram only.
    void Observe(double value);

   private:
    friend class Family;
    explicit Series(const std::vector<double>& bounds);
    const std::vector<double>& bounds_;
    std::atomic<double> value_{0};
    std::atomic<double> sum_{0};
    std::unique_ptr<std::atomic<uint64_t>[]> counts_;
  };

  Family(std::string name, std::string help, MetricType type, std::vector<std::string> label_names,
         std::vector<double> bounds);
  // The series for these label values (one per label name), created at zero on first use.
  Series& Labels(const LabelValues& values);
  void Add(const LabelValues& values, double delta = 1) { Labels(values).Add(delta); }
  void Set(const LabelValues& values, double value) { Labels(values).Set(value); }
  void Observe(const LabelValues& values, double value) { Labels(values).Observe(value); }
  // Removes every series whose labels have these values (Prometheus' DeletePartialMatch), as
  // Kueue clears a deleted LocalQueue's or Cohort's series; returns how many. A Series& of a
  // removed series dangles: its holder must drop it first. A name that is not one of the
  // family's labels matches nothing.
  int DeleteMatching(const std::vector<std::pair<std::string, std::string>>& labels);
  void Write(TextWriter& writer) const;
  const std::string& name() const { return name_; }

 private:
  const std::string name_;
  const std::string help_;
  const MetricType type_;
  const std::vector<std::string> label_names_;
  const std::vector<double> bounds_;
  mutable absl::Mutex mu_;
  // Ordered so every scrape lists series in the same order.
  std::map<LabelValues, std::unique_ptr<Series>> series_ ABSL_GUARDED_BY(mu_);
};

// The families a process exposes, plus collectors that write families computed at scrape time
// (state-derived gauges, process statistics). Families live as long as the registry.
// Thread-safe.
class Registry {
 public:
  Family& AddCounter(std::string name, std::string help, std::vector<std::string> label_names);
  Family& AddGauge(std::string name, std::string help, std::vector<std::string> label_names);
  Family& AddHistogram(std::string name, std::string help, std::vector<std::string> label_names,
                       std::vector<double> bounds);
  // `collect` runs on the scraping thread for every scrape, after the recorded families.
  void AddCollector(std::function<void(TextWriter&)> collect);

  // The whole exposition.
  std::string Render() const;

 private:
  Family& Add(std::unique_ptr<Family> family);

  mutable absl::Mutex mu_;
  std::vector<std::unique_ptr<Family>> families_ ABSL_GUARDED_BY(mu_);
  std::vector<std::function<void(TextWriter&)>> collectors_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tollgate::metrics
