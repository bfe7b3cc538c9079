#pragma once

#include <atomic>
#include <string>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "services/engine/tollgate_api.h"
#include "services/rpc/access_gate.h"

namespace tollgate::rpc {

// Writes the admissions and evictions the scheduler decides on its own to the audit log, with
// the reason, by following the API's Watch on a thread of its own: the executor stays unaware
// of auditing. A workload counts as admitted when its state becomes ADMITTED, and as preempted
// (or otherwise evicted) when it becomes EVICTING; the reason is the workload's latest event.
// Start once; the destructor stops the thread. The API and gate must outlive it.
class SchedulerAudit {
 public:
  SchedulerAudit(engine::TollgateApi& api, AccessGate& gate) : api_(api), gate_(gate) {}
  ~SchedulerAudit();
  SchedulerAudit(const SchedulerAudit&) = delete;
  SchedulerAudit& operator=(const SchedulerAudit&) = delete;

  // Follows changes after `revision`.
  void Start(int64_t revision);

 private:
  void Run(int64_t revision);
  void Observe(const v1::WatchEvent& event, bool seeding);

  engine::TollgateApi& api_;
  AccessGate& gate_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  // Only the watch thread touches it.
  absl::flat_hash_map<std::string, v1::WorkloadState> states_;
};

}  // namespace tollgate::rpc
