#include "metrics/metric_registry.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"

namespace tollgate::metrics {
namespace {

const char* TypeName(MetricType type) {
  switch (type) {
    case MetricType::kCounter:
      return "counter";
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kHistogram:
      return "histogram";
  }
  return "untyped";
}

}  // namespace

std::string EscapeHelp(absl::string_view help) {
  std::string out;
  out.reserve(help.size());
  for (char c : help) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string EscapeLabelValue(absl::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '"') {
      out += "\\\"";
    } else {
      out += c;
    }
  }
  return out;
}

std::string FormatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  // Shortest text that parses back to the same double: counters stay integral ("42"), and
  // bucket bounds print as written ("2.5").
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return std::string(buffer, result.ptr);
}

absl::Status ValidateName(absl::string_view name, bool label) {
  auto bad = [&] {
    return absl::InvalidArgumentError(
        absl::StrCat(label ? "label" : "metric", " name \"", name, "\" is not valid"));
  };
  if (name.empty()) return bad();
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    const bool digit = c >= '0' && c <= '9';
    if (letter || (i > 0 && digit) || (!label && c == ':')) continue;
    return bad();
  }
  if (label && name.substr(0, 2) == "__") return bad();
  return absl::OkStatus();
}

std::vector<double> KueueExponentialBuckets(int count) {
  std::vector<double> bounds;
  if (count <= 0) return bounds;
  bounds.push_back(1);
  double bound = 2.5;
  for (int i = 1; i < count; ++i) {
    bounds.push_back(bound);
    bound *= 2;
  }
  return bounds;
}

std::vector<double> DefaultLatencyBuckets() {
  return {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
}

// --- TextWriter --------------------------------------------------------------------------------

void TextWriter::BeginFamily(absl::string_view name, absl::string_view help, MetricType type,
                             std::vector<std::string> label_names) {
  name_ = std::string(name);
  label_names_ = std::move(label_names);
  absl::StrAppend(&out_, "# HELP ", name, " ", EscapeHelp(help), "\n");
  absl::StrAppend(&out_, "# TYPE ", name, " ", TypeName(type), "\n");
}

void TextWriter::WriteSeries(absl::string_view suffix, const LabelValues& values,
                             absl::string_view extra_label, absl::string_view extra_value,
                             double value) {
  absl::StrAppend(&out_, name_, suffix);
  const size_t n = std::min(values.size(), label_names_.size());
  if (n > 0 || !extra_label.empty()) {
    out_ += '{';
    bool first = true;
    for (size_t i = 0; i < n; ++i) {
      absl::StrAppend(&out_, first ? "" : ",", label_names_[i], "=\"", EscapeLabelValue(values[i]),
                      "\"");
      first = false;
    }
    if (!extra_label.empty()) {
      absl::StrAppend(&out_, first ? "" : ",", extra_label, "=\"", extra_value, "\"");
    }
    out_ += '}';
  }
  absl::StrAppend(&out_, " ", FormatValue(value), "\n");
}

void TextWriter::Sample(const LabelValues& values, double value) {
  WriteSeries("", values, "", "", value);
}

void TextWriter::Histogram(const LabelValues& values, const std::vector<double>& bounds,
                           const std::vector<uint64_t>& counts, double sum) {
  uint64_t cumulative = 0;
  for (size_t i = 0; i < bounds.size(); ++i) {
    cumulative += i < counts.size() ? counts[i] : 0;
    WriteSeries("_bucket", values, "le", FormatValue(bounds[i]), static_cast<double>(cumulative));
  }
  if (counts.size() > bounds.size()) cumulative += counts[bounds.size()];
  WriteSeries("_bucket", values, "le", "+Inf", static_cast<double>(cumulative));
  WriteSeries("_sum", values, "", "", sum);
  WriteSeries("_count", values, "", "", static_cast<double>(cumulative));
}

// --- Family ------------------------------------------------------------------------------------

Family::Family(std::string name, std::string help, MetricType type,
               std::vector<std::string> label_names, std::vector<double> bounds)
    : name_(std::move(name)),
      help_(std::move(help)),
      type_(type),
      label_names_(std::move(label_names)),
      bounds_(std::move(bounds)) {}

Family::Series::Series(const std::vector<double>& bounds)
    : bounds_(bounds), counts_(new std::atomic<uint64_t>[bounds.size() + 1]) {
  for (size_t i = 0; i <= bounds.size(); ++i) counts_[i].store(0, std::memory_order_relaxed);
}

void Family::Series::Observe(double value) {
  // The first bound at or above the value; +Inf (the last slot) when none is.
  const size_t slot = std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin();
  counts_[slot].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(value, std::memory_order_relaxed);
}

Family::Series& Family::Labels(const LabelValues& values) {
  absl::MutexLock lock(&mu_);
  std::unique_ptr<Series>& series = series_[values];
  if (series == nullptr) series.reset(new Series(bounds_));
  return *series;
}

int Family::DeleteMatching(const std::vector<std::pair<std::string, std::string>>& labels) {
  std::vector<std::pair<size_t, const std::string*>> wanted;
  for (const auto& [name, value] : labels) {
    auto it = std::find(label_names_.begin(), label_names_.end(), name);
    if (it == label_names_.end()) return 0;
    wanted.emplace_back(static_cast<size_t>(it - label_names_.begin()), &value);
  }
  absl::MutexLock lock(&mu_);
  int removed = 0;
  for (auto it = series_.begin(); it != series_.end();) {
    bool match = true;
    for (const auto& [index, value] : wanted) match = match && it->first[index] == *value;
    if (match) {
      it = series_.erase(it);
      ++removed;
    } else {
      ++it;
    }
  }
  return removed;
}

void Family::Write(TextWriter& writer) const {
  writer.BeginFamily(name_, help_, type_, label_names_);
  absl::MutexLock lock(&mu_);
  std::vector<uint64_t> counts(bounds_.size() + 1);
  for (const auto& [values, series] : series_) {
    if (type_ == MetricType::kHistogram) {
      for (size_t i = 0; i < counts.size(); ++i) {
        counts[i] = series->counts_[i].load(std::memory_order_relaxed);
      }
      writer.Histogram(values, bounds_, counts, series->sum_.load(std::memory_order_relaxed));
    } else {
      writer.Sample(values, series->value_.load(std::memory_order_relaxed));
    }
  }
}

// --- Registry ----------------------------------------------------------------------------------

Family& Registry::Add(std::unique_ptr<Family> family) {
  absl::MutexLock lock(&mu_);
  families_.push_back(std::move(family));
  return *families_.back();
}

Family& Registry::AddCounter(std::string name, std::string help,
                             std::vector<std::string> label_names) {
  return Add(std::make_unique<Family>(std::move(name), std::move(help), MetricType::kCounter,
                                      std::move(label_names), std::vector<double>()));
}

Family& Registry::AddGauge(std::string name, std::string help,
                           std::vector<std::string> label_names) {
  return Add(std::make_unique<Family>(std::move(name), std::move(help), MetricType::kGauge,
                                      std::move(label_names), std::vector<double>()));
}

Family& Registry::AddHistogram(std::string name, std::string help,
                               std::vector<std::string> label_names, std::vector<double> bounds) {
  return Add(std::make_unique<Family>(std::move(name), std::move(help), MetricType::kHistogram,
                                      std::move(label_names), std::move(bounds)));
}

void Registry::AddCollector(std::function<void(TextWriter&)> collect) {
  absl::MutexLock lock(&mu_);
  collectors_.push_back(std::move(collect));
}

std::string Registry::Render() const {
  TextWriter writer;
  std::vector<std::function<void(TextWriter&)>> collectors;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& family : families_) family->Write(writer);
    collectors = collectors_;
  }
  // Outside the lock: a collector may wait on the executor.
  for (const auto& collect : collectors) collect(writer);
  return writer.Take();
}

}  // namespace tollgate::metrics
