#include "core/submit_preview.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "core/cluster_state.h"

namespace tollgate::core {

absl::StatusOr<SubmitPreview> PreviewSubmit(const ClusterState& state, WorkloadSpec spec) {
  if (spec.queue_name.empty()) {
    if (state.registry().FindLocalQueue(spec.namespace_name, "default") == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("spec.queueName: workload ", spec.namespace_name, "/", spec.name,
                       " names no queue and namespace ", spec.namespace_name,
                       " has no LocalQueue named \"default\""));
    }
    spec.queue_name = "default";
  }
  SubmitPreview preview;
  if (const Workload* found =
          state.FindWorkload(absl::StrCat(spec.namespace_name, "/", spec.name))) {
    if (found->spec != spec) {
      return absl::AlreadyExistsError(
          absl::StrCat("workload ", found->Key(),
                       " already exists with a different spec; delete it first or use a new "
                       "name"));
    }
    preview.existing = found;
    preview.priority = found->priority;
    preview.spec = std::move(spec);
    return preview;
  }
  absl::StatusOr<int32_t> priority = state.registry().ResolvePriority(spec);
  if (!priority.ok()) return priority.status();
  preview.priority = *priority;
  preview.spec = std::move(spec);
  return preview;
}

}  // namespace tollgate::core
