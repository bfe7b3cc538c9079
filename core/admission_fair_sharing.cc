#include "core/admission_fair_sharing.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "core/admission_checks.h"
#include "core/config_registry.h"
#include "core/quota_requests.h"
#include "core/saturating.h"

namespace tollgate::core {
namespace {

// Whole units: Kueue counts cpu in cores, the rest as they are.
double Units(const std::string& resource, int64_t amount) {
  return resource == "cpu" ? static_cast<double>(amount) / 1000.0 : static_cast<double>(amount);
}

// Kueue's workload.IsAdmitted as its cache counts a LocalQueue's admitted usage: a reservation
// still waiting for its checks (or its delayed topology) is not admitted; an evicted workload
// stays admitted until its quota is released unless its checks were reset to Pending.
bool CountsAsAdmitted(const Workload& wl) {
  return wl.status.state == WorkloadState::kAdmitted ||
         (wl.status.state == WorkloadState::kEvicting &&
          AllChecksReady(wl.status.admission_checks()));
}

// What the LocalQueue's admitted workloads use now (Kueue's LocalQueue GetAdmittedUsage): the
// samples decay towards it. A reservation not admitted yet weighs through its entry penalty only.
std::map<std::string, double> AdmittedUsageOf(const WorkloadTable& workloads,
                                              const std::string& local_queue_key) {
  std::map<std::string, double> usage;
  for (const auto& wl : workloads.slots()) {
    if (wl == nullptr || !CountsAsAdmitted(*wl) ||
        LocalQueueKey(wl->spec.namespace_name, wl->spec.queue_name) != local_queue_key) {
      continue;
    }
    for (const PodSetAssignment& ps : wl->status.admission->pod_sets) {
      for (const auto& [resource, amount] : ps.resource_usage) {
        usage[resource] += Units(resource, amount);
      }
    }
  }
  return usage;
}

}  // namespace

void AdmissionFairSharingLedger::Track(const std::string& local_queue_key, absl::Time now) {
  if (!config_.enable || ledgers_.contains(local_queue_key)) return;
  Ledger& ledger = ledgers_[local_queue_key];
  ledger.last_update = now;
  ledger.next_sample = now + config_.usage_sampling_interval;
}

void AdmissionFairSharingLedger::PushEntryPenalty(const std::string& local_queue_key,
                                                  WorkloadId workload,
                                                  const std::map<std::string, int64_t>& requests) {
  auto it = ledgers_.find(local_queue_key);
  if (it == ledgers_.end()) return;
  // The share of a sampling interval's usage the decay would add: what the workload is charged
  // on entry.
  const double alpha = config_.usage_half_life_time == absl::ZeroDuration()
                           ? 0.0
                           : 1.0 - std::pow(0.5, absl::FDivDuration(config_.usage_sampling_interval,
                                                                    config_.usage_half_life_time));
  std::map<std::string, double> penalty;
  for (const auto& [resource, amount] : requests)
    penalty[resource] = Units(resource, amount) * alpha;
  it->second.penalties.insert_or_assign(workload, std::move(penalty));
  SumPending(it->second);
}

void AdmissionFairSharingLedger::SettleEntryPenalty(const std::string& local_queue_key,
                                                    WorkloadId workload,
                                                    const WorkloadTable& workloads,
                                                    absl::Time now) {
  auto it = ledgers_.find(local_queue_key);
  if (it == ledgers_.end()) return;
  std::map<std::string, double> penalty;
  if (auto record = it->second.penalties.find(workload); record != it->second.penalties.end()) {
    penalty = std::move(record->second);
    it->second.penalties.erase(record);
    SumPending(it->second);
  }
  Decay(local_queue_key, now, penalty, workloads);
}

void AdmissionFairSharingLedger::DropEntryPenalty(const std::string& local_queue_key,
                                                  WorkloadId workload) {
  auto it = ledgers_.find(local_queue_key);
  if (it == ledgers_.end() || it->second.penalties.erase(workload) == 0) return;
  SumPending(it->second);
}

void AdmissionFairSharingLedger::SumPending(Ledger& ledger) {
  ledger.pending.clear();
  for (const auto& [workload, penalty] : ledger.penalties) {
    for (const auto& [resource, value] : penalty) ledger.pending[resource] += value;
  }
}

bool AdmissionFairSharingLedger::SampleDue(const WorkloadTable& workloads, absl::Time now) {
  bool sampled = false;
  for (auto& [key, ledger] : ledgers_) {
    if (ledger.next_sample > now) continue;
    Decay(key, now, {}, workloads);
    while (ledger.next_sample <= now) ledger.next_sample += config_.usage_sampling_interval;
    sampled = true;
  }
  return sampled;
}

std::optional<absl::Time> AdmissionFairSharingLedger::NextSample() const {
  std::optional<absl::Time> next;
  for (const auto& [key, ledger] : ledgers_) {
    if (!next.has_value() || ledger.next_sample < *next) next = ledger.next_sample;
  }
  return next;
}

void AdmissionFairSharingLedger::Decay(const std::string& local_queue_key, absl::Time now,
                                       const std::map<std::string, double>& penalty,
                                       const WorkloadTable& workloads) {
  auto it = ledgers_.find(local_queue_key);
  if (it == ledgers_.end()) return;
  Ledger& ledger = it->second;
  const absl::Duration half_life = config_.usage_half_life_time;
  if (half_life == absl::ZeroDuration()) {
    if (!ledger.consumed.empty()) changed_.insert(local_queue_key);
    ledger.consumed.clear();
    ledger.last_update = now;
    return;
  }
  // Kueue's exponential decay: old * 0.5^(elapsed/halfLife) + current * (1 - that).
  const double elapsed = std::max(0.0, absl::ToDoubleSeconds(now - ledger.last_update));
  const double keep = std::pow(0.5, elapsed / absl::ToDoubleSeconds(half_life));
  std::map<std::string, double> current = AdmittedUsageOf(workloads, local_queue_key);
  std::map<std::string, double> next;
  for (const auto& [resource, value] : ledger.consumed) next[resource] += value * keep;
  for (const auto& [resource, value] : current) next[resource] += value * (1.0 - keep);
  for (const auto& [resource, value] : penalty) next[resource] += value;
  if (next != ledger.consumed) changed_.insert(local_queue_key);
  ledger.consumed = std::move(next);
  ledger.last_update = std::max(ledger.last_update, now);
}

void AdmissionFairSharingLedger::Seed(const std::string& local_queue_key,
                                      std::map<std::string, double> consumed, absl::Time now) {
  auto it = ledgers_.find(local_queue_key);
  if (it == ledgers_.end()) return;
  it->second.consumed = std::move(consumed);
  it->second.penalties.clear();
  it->second.pending.clear();
  it->second.last_update = now;
}

std::map<std::string, std::optional<std::map<std::string, double>>>
AdmissionFairSharingLedger::TakeChanged() {
  std::map<std::string, std::optional<std::map<std::string, double>>> changed;
  for (const std::string& key : changed_) {
    auto it = ledgers_.find(key);
    if (it == ledgers_.end()) {
      changed.emplace(key, std::nullopt);
    } else {
      changed.emplace(key, it->second.consumed);
    }
  }
  changed_.clear();
  return changed;
}

double AdmissionFairSharingLedger::WeightedUsage(const std::string& local_queue_key,
                                                 double local_queue_weight) const {
  double usage = 0;
  if (auto it = ledgers_.find(local_queue_key); it != ledgers_.end()) {
    auto weighted = [this](const std::string& resource, double value) {
      auto w = config_.resource_weights.find(resource);
      return (w == config_.resource_weights.end() ? 1.0 : w->second) * value;
    };
    for (const auto& [resource, value] : it->second.consumed) usage += weighted(resource, value);
    for (const auto& [resource, value] : it->second.pending) usage += weighted(resource, value);
  }
  if (local_queue_weight <= 0) return std::numeric_limits<double>::infinity();
  return usage / local_queue_weight;
}

std::map<std::string, int64_t> EntryPenaltyRequests(const SchedulerConfig& config,
                                                    const Workload& wl,
                                                    const ClusterQueueRuntime& cq) {
  std::map<std::string, int64_t> total;
  const bool adjusted = AdjustsQuotaRequests(config);
  for (const PodSetSpec& pod_set : wl.spec.pod_sets) {
    const int32_t count = CountAfterReclaim(wl.status, pod_set, config.reclaimable_pods);
    const ResourceAmounts per_pod =
        adjusted ? QuotaRequestsPerPod(config, pod_set, cq) : pod_set.requests;
    for (const auto& [resource, amount] : per_pod) {
      int64_t& sum = total[resource];
      sum = SatAdd(sum, SatMul(amount, count));
    }
  }
  return total;
}

}  // namespace tollgate::core
