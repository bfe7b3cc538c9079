#pragma once

// A JobSet's replicated jobs as pod sets (Kueue: pkg/controller/jobs/jobset), shared by JobSet
// and by TrainJob, whose runtime is a JobSet template: one pod set per replicated job, named
// after it, of replicas x min(parallelism, completions) pods (replicas and parallelism default
// to 1, completions to parallelism); and the pods of succeeded jobs, which are reclaimable.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "services/manifest/job_kind.h"
#include "services/manifest/json_util.h"

namespace tollgate::manifest {

// `jobs` is spec.replicatedJobs at JSON pointer `pointer` (template paths point into it;
// `path` names it in messages). INVALID_ARGUMENT for an empty list, a job without name or
// template, a repeated name, or counts out of range.
absl::StatusOr<std::vector<PodSetSource>> ReplicatedJobPodSets(const Json& jobs,
                                                               absl::string_view pointer,
                                                               absl::string_view path);

// Kueue's JobSet.ReclaimablePods: for each pod set whose replicated job reports succeeded jobs
// in `statuses` (name, succeeded; at most its replicas), those jobs' pods.
std::vector<ReclaimablePod> SucceededReplicaPods(const std::vector<PodSetSource>& sources,
                                                 const Json& statuses);

// Kueue's JobSet.PodsReady: Σ replicas == Σ (ready + succeeded) over `statuses`, every job of
// every replicated job runs or ran to completion.
bool AllReplicasReady(const std::vector<PodSetSource>& sources, const Json& statuses);

// Kueue's JobSet.IsActive: some replicated job in `statuses` reports active jobs.
bool AnyReplicaActive(const Json& statuses);

}  // namespace tollgate::manifest
