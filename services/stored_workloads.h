#pragma once

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/workload.h"

namespace tollgate::services {

// Parses stored (key, value) workload records into core workloads, in the same order, on all
// cores (restart time is dominated by this). DATA_LOSS names the first record, in input order,
// that is not a valid stored workload.
absl::StatusOr<std::vector<core::Workload>> ParseStoredWorkloads(
    const std::vector<std::pair<std::string, std::string>>& stored);

}  // namespace tollgate::services
