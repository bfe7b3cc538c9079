#include "core/runtime_history.h"

#include <algorithm>
#include <cmath>

namespace tollgate::core {

void RuntimeHistory::Record(absl::string_view local_queue, absl::Duration ran) {
  if (ran < absl::ZeroDuration()) return;
  auto it = samples_.find(local_queue);
  if (it == samples_.end())
    it = samples_.emplace(std::string(local_queue), std::deque<absl::Duration>()).first;
  it->second.push_back(ran);
  if (it->second.size() > kMaxSamplesPerQueue) it->second.pop_front();
  ++total_recorded_;
}

const std::deque<absl::Duration>* RuntimeHistory::Samples(absl::string_view local_queue) const {
  auto it = samples_.find(local_queue);
  return it == samples_.end() ? nullptr : &it->second;
}

RuntimeDistribution::RuntimeDistribution(const RuntimeHistory& history,
                                         absl::string_view local_queue) {
  if (const std::deque<absl::Duration>* samples = history.Samples(local_queue)) {
    sorted_.assign(samples->begin(), samples->end());
    std::sort(sorted_.begin(), sorted_.end());
  }
}

namespace {

// Nearest rank of quantile q among n sorted values, as an index.
size_t NearestRank(double q, size_t n) {
  const double rank = std::ceil(q * static_cast<double>(n));
  return static_cast<size_t>(std::clamp(rank, 1.0, static_cast<double>(n))) - 1;
}

}  // namespace

std::optional<absl::Duration> RuntimeDistribution::Quantile(double q) const {
  if (sorted_.empty()) return std::nullopt;
  return sorted_[NearestRank(q, sorted_.size())];
}

std::optional<absl::Duration> RuntimeDistribution::QuantileGiven(double q,
                                                                 absl::Duration elapsed) const {
  auto first = std::upper_bound(sorted_.begin(), sorted_.end(), elapsed);
  const size_t n = static_cast<size_t>(sorted_.end() - first);
  if (n == 0) return std::nullopt;
  return first[NearestRank(q, n)];
}

}  // namespace tollgate::core
