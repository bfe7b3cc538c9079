#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "core/workload.h"

namespace tollgate::core {

class ClusterState;

// What Submit would do with a spec, decided without changing anything: the one place Submit's
// checks live, so a dry run and the real submission cannot disagree.
struct SubmitPreview {
  // The spec as it would be stored (a spec naming no queue gets the namespace's "default").
  WorkloadSpec spec;
  // The priority it would get (explicit, its class's value, or 0).
  int32_t priority = 0;
  // The identical workload already stored (Submit then returns it, created=false), or null.
  const Workload* existing = nullptr;
};

// INVALID_ARGUMENT when the spec names no queue and its namespace has no LocalQueue "default",
// or its priority class is unknown; ALREADY_EXISTS when the name is taken by a different spec,
// or by a workload that another object (`owner`'s uid differs) controls.
absl::StatusOr<SubmitPreview> PreviewSubmit(const ClusterState& state, WorkloadSpec spec,
                                            const WorkloadOwner* owner = nullptr);

}  // namespace tollgate::core
