#pragma once

// The ClusterState fixture core tests share: one flavor "a100" of the resource "gpu", queues
// added with a LocalQueue "q" in a namespace, and cycles driven until no progress, the way the
// executor drives them.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "absl/time/time.h"
#include "core/cluster_state.h"
#include "gtest/gtest.h"

namespace tollgate::core {

inline const absl::Time kFixtureStart = absl::FromUnixSeconds(1767225600);

// A ClusterQueue with `nominal` gpus of flavor a100.
inline ClusterQueueSpec GpuQueue(std::string name, std::string cohort, int64_t nominal,
                                 std::optional<int64_t> borrowing = std::nullopt) {
  ClusterQueueSpec spec;
  spec.name = std::move(name);
  spec.cohort = std::move(cohort);
  spec.resource_groups = {{{"gpu"}, {{"a100", {{"gpu", nominal, borrowing, std::nullopt}}}}}};
  return spec;
}

// ClusterQueue cq with 4 a100 GPUs and LocalQueue ns/q, for tests that build their own state.
inline void AddFourGpuQueue(ClusterState& state, absl::Time now) {
  ASSERT_TRUE(state.ApplyResourceFlavor({"a100", {}, {}, {}}, now).ok());
  ASSERT_TRUE(state.ApplyClusterQueue(GpuQueue("cq", "", 4), now).ok());
  ASSERT_TRUE(state.ApplyLocalQueue({"ns", "q", "cq", StopPolicy::kNone, 1.0}, now).ok());
}

// Fires the timers due at `at`, then runs cycles until one makes no progress.
inline void SettleAt(ClusterState& state, absl::Time at) {
  state.FireTimers(at);
  for (int i = 0; i < 100; ++i) {
    CyclePlan plan = state.PlanCycle(at);
    state.ApplyCycle(plan, at);
    if (!plan.MadeProgress()) return;
  }
}

// One pod set of `gpus` pods, one gpu each, in LocalQueue `queue` of namespace `ns`.
inline WorkloadSpec GpuJob(std::string name, std::string ns, int32_t gpus, int32_t priority = 0,
                           std::string queue = "q") {
  WorkloadSpec spec;
  spec.name = std::move(name);
  spec.namespace_name = std::move(ns);
  spec.queue_name = std::move(queue);
  spec.priority = priority;
  spec.pod_sets = {PodSetSpec{"main", gpus, std::nullopt, {{"gpu", 1}}, {}, {}}};
  return spec;
}

// A GpuJob declaring its maximum execution time, which start estimates read as its runtime.
inline WorkloadSpec TimedGpuJob(std::string name, std::string ns, int32_t gpus, int32_t priority,
                                std::optional<int32_t> max_seconds) {
  WorkloadSpec spec = GpuJob(std::move(name), std::move(ns), gpus, priority);
  spec.maximum_execution_time_seconds = max_seconds;
  return spec;
}

class GpuClusterStateTest : public ::testing::Test {
 protected:
  GpuClusterStateTest() : GpuClusterStateTest(SchedulerConfig{}) {}
  explicit GpuClusterStateTest(SchedulerConfig config) : state_(std::move(config)) {
    EXPECT_TRUE(state_.ApplyResourceFlavor({"a100", {}, {}, {}}, now_).ok());
  }

  // `cq` and a LocalQueue "q" pointing at it in namespace `ns`.
  void AddQueue(ClusterQueueSpec cq, const std::string& ns) {
    const std::string name = cq.name;
    ASSERT_TRUE(state_.ApplyClusterQueue(std::move(cq), now_).ok());
    ASSERT_TRUE(state_.ApplyLocalQueue({ns, "q", name, StopPolicy::kNone, 1.0}, now_).ok());
  }

  // One millisecond after the previous submit, so queue order is submit order.
  void Submit(WorkloadSpec spec) {
    now_ += absl::Milliseconds(1);
    ASSERT_TRUE(state_.Submit(std::move(spec), "", now_).ok());
  }

  // Plans and applies cycles until one makes no progress; returns how many did.
  int Settle() {
    int cycles = 0;
    while (true) {
      CyclePlan plan = state_.PlanCycle(now_);
      state_.ApplyCycle(plan, now_);
      if (!plan.MadeProgress()) return cycles;
      ++cycles;
    }
  }

  WorkloadState StateOf(const std::string& key) { return state_.FindWorkload(key)->status.state; }
  bool Terminating(ObjectKind kind, const std::string& ns, const std::string& name) {
    return state_.TerminatingSince(kind, ns, name).has_value();
  }

  absl::Time now_ = kFixtureStart;
  ClusterState state_;
};

}  // namespace tollgate::core
