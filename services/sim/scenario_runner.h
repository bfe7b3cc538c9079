#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/scheduler_config.h"
#include "services/sim/scenario_parser.h"

namespace tollgate::sim {

struct ScenarioResult {
  std::string name;
  bool passed = false;
  // "step N: what was expected, what was seen" when it failed.
  std::string failure;
};

// The scheduler configuration a scenario's `config` section asks for (parsed as tollgated
// parses --config). Evictions complete at once, as the format specifies (the adapter
// acknowledges immediately).
core::SchedulerConfig ToSchedulerConfig(const manifest::KueueConfiguration& config);

// Runs one scenario on a fresh RocksDB store in a temporary directory and a simulated clock
// starting at 2026-01-01T00:00:00Z, through engine::TollgateApi: the same code path as the gRPC
// service. Returns an error only when the scenario could not be run at all (e.g. no temp dir).
absl::StatusOr<ScenarioResult> RunScenario(const Scenario& scenario);

// `tollgate scenario run PATH...`: parses and runs every scenario found under `paths`, prints
// `PASS name` or `FAIL name: ...` per scenario and the closing `N passed, N failed` line.
// Returns the process exit code: 0 only when every scenario passed.
int RunScenarioCommand(const std::vector<std::string>& paths, std::ostream& out);

}  // namespace tollgate::sim
