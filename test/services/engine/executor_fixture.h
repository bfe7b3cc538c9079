#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/clock.h"
#include "services/engine/admission_executor.h"
#include "services/engine/tollgate_api.h"
#include "storage/memory_store.h"
#include "tollgate/v1/service.pb.h"

namespace tollgate::engine {

// 2026-01-01T00:00:00Z: where the service tests' simulated clocks start.
inline const absl::Time kFixtureStart = absl::FromUnixSeconds(1767225600);

// One ResourceFlavor "default", one ClusterQueue "cq" covering cpu with it, and a LocalQueue "q"
// pointing at "cq" in each namespace. Empty strings leave a field unset.
struct OneQueueConfig {
  std::string nominal_cpu = "4";
  std::string lending_limit;
  std::string cohort;
  // ClusterQueue spec.preemption.withinClusterQueue, e.g. "LowerPriority".
  std::string preempt_within_cluster_queue;
  std::vector<std::string> namespaces = {"team"};
};
v1::ApplyRequest OneQueueApplyRequest(const OneQueueConfig& config);

// A workload of one pod set "main" (one pod) in LocalQueue "q", ready for TollgateApi::Submit.
v1::SubmitRequest OnePodSubmitRequest(const std::string& namespace_name, const std::string& name,
                                      const std::string& cpu,
                                      std::optional<int32_t> priority = std::nullopt);

// The real executor and API facade over an in-memory store, on a simulated clock: what the
// service, dashboard and CLI tests build on. Close (or destruction) stops the executor before
// the API, whose objects its queued operations use.
struct ExecutorFixture {
  explicit ExecutorFixture(absl::Time start = kFixtureStart) : clock(start) {}
  ~ExecutorFixture() { Close(); }
  ExecutorFixture(const ExecutorFixture&) = delete;
  ExecutorFixture& operator=(const ExecutorFixture&) = delete;

  // Opens the executor on `store` (loading whatever it holds) and the API over it.
  absl::Status Open(AdmissionExecutor::Options options, core::SchedulerConfig config = {});
  void Close();
  // Applies OneQueueApplyRequest(config) through the API.
  absl::Status ApplyOneQueue(const OneQueueConfig& config = OneQueueConfig());

  core::SimulatedClock clock;
  storage::MemoryStore store;
  std::unique_ptr<AdmissionExecutor> executor;
  std::unique_ptr<TollgateApi> api;
};

// The options the tests that settle by hand use: no cycles unless the test asks for them.
AdmissionExecutor::Options SettleByHand();

}  // namespace tollgate::engine
