#pragma once

// Replays a job trace through Tollgate's real service path (engine::TollgateApi over the executor,
// on an in-memory store) on a virtual clock: the same code tollgated runs, with submit, finish and
// timer instants as the only moments time moves. Deterministic: the same objects, trace and
// configuration give the same decisions, in the same order.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/scheduler_config.h"
#include "core/start_estimator.h"
#include "services/manifest/manifest_parser.h"
#include "services/sim/trace_reader.h"
#include "tollgate/v1/inventory.pb.h"

namespace tollgate::sim {

struct ReplayProgress {
  int64_t submitted = 0;
  int64_t finished = 0;
  int64_t total = 0;
  // Virtual time since the trace's start.
  absl::Duration virtual_time;
};

struct ReplayOptions {
  core::SchedulerConfig config;
  // The resource utilization, borrowing and lost work are measured in.
  std::string resource = "nvidia.com/gpu";
  // How often the queues' usage is sampled, in virtual time.
  absl::Duration sample_every = absl::Hours(1);
  // Called on the calling thread about every 1 % of the jobs finished; may be empty.
  std::function<void(const ReplayProgress&)> progress;
  // Every Nth submission (0: none) first asks, as a Submit dry run would, when the job would
  // start, in two ways: Tollgate's runtimes learned from each LocalQueue's finished jobs, and
  // Slurm's rule (every job runs to its time limit). Each job's time limit,
  // SlurmTimeLimit(duration), is given to that estimate only (not declared as
  // maximumExecutionTimeSeconds, which is enforced), so the replay's decisions are the same
  // with and without estimates.
  int64_t estimate_every = 0;
  // Bounds of each estimate; the runtime source and late quantile are set per method.
  core::StartEstimateOptions estimate_options;
  // The pod sets a job of each kind asks for (TraceColumns::kind), from a manifest of that kind
  // as tollgate-kube would translate it (services/manifest/job_kinds.h).
  std::map<std::string, std::vector<v1::PodSet>> kind_pod_sets;
  // Admission checks modelled as taking a fixed time to become Ready after the quota
  // reservation (a provisioning delay), by AdmissionCheck name. A check the queue manifests do
  // not define is created and required by every ClusterQueue; a defined check without a delay
  // here is Ready at once. Every check is active. The reservation holds the quota meanwhile.
  std::map<std::string, absl::Duration> check_delays;
  // The node inventory topology flavors place pods on (docs/topology.md); empty: none.
  std::vector<v1::Node> nodes;
  // A topology level every job without a kind must fit in (its pod set's
  // topologyRequest.required); empty: no topology request. A kind's pod sets keep their
  // manifest's own requests.
  std::string required_topology;
};

// The time limit a Slurm user would have given a job that ran `duration`: the next of 1 h,
// 4 h, 24 h and 7 days, and beyond that whole weeks.
absl::Duration SlurmTimeLimit(absl::Duration duration);

// A start estimate made at submission, as a wait from the submission.
struct WaitEstimate {
  core::StartEstimate::Kind kind = core::StartEstimate::Kind::kUnknown;
  // kEstimated: the predicted wait; kNotBefore: the least wait; kUnknown: zero.
  absl::Duration wait;
};

// What happened to one job of the trace.
struct JobOutcome {
  // The ClusterQueue that admitted it last (or that its LocalQueue points at, if never).
  std::string cluster_queue;
  // Virtual times since the trace's start; unset when it never happened.
  std::optional<absl::Duration> first_admitted;
  std::optional<absl::Duration> finished;
  int32_t preemptions = 0;
  // Resource-seconds of work thrown away by preemptions (a preempted job restarts from zero).
  double lost_resource_seconds = 0;
  // Time spent with quota reserved waiting for admission checks (every try), and the
  // resource-seconds that quota was held without running.
  absl::Duration check_wait;
  double reserved_idle_resource_seconds = 0;
  // Set for the jobs sampled by ReplayOptions::estimate_every.
  std::optional<WaitEstimate> learned_estimate;
  std::optional<WaitEstimate> slurm_estimate;
};

// One ClusterQueue at one sample instant; quantities in units of the measured resource.
struct QueueSample {
  double used = 0;
  double borrowed = 0;
  int32_t pending = 0;
  int32_t admitted = 0;
  // Kueue's weighted share (fair sharing), 0 when not in use.
  int64_t weighted_share = 0;
};

struct Sample {
  absl::Duration at;
  // By ClusterQueue name.
  std::map<std::string, QueueSample> queues;
};

struct QueueInfo {
  // Nominal quota of the measured resource over all flavors.
  double nominal = 0;
  // Fair-sharing weight (1 unless set).
  double weight = 1;
  std::string cohort;
};

struct ReplayResult {
  // Index-aligned with the trace's jobs.
  std::vector<JobOutcome> jobs;
  std::vector<Sample> samples;
  std::map<std::string, QueueInfo> queues;
  // When the last job finished (or the replay stopped because nothing more could run).
  absl::Duration end;
  int64_t settles = 0;
  // The replay modelled admission checks (ReplayOptions::check_delays or checks in the queues).
  bool has_checks = false;
};

// Applies `objects` (Kueue manifests: flavors, cohorts, ClusterQueues, LocalQueues, priority
// classes; Workloads in them are refused), then replays `jobs`. A job whose LocalQueue does not
// exist is refused by the service like any submit: that is an error naming the job.
absl::StatusOr<ReplayResult> ReplayTrace(const std::vector<manifest::Manifest>& objects,
                                         const std::vector<TraceJob>& jobs,
                                         const ReplayOptions& options);

}  // namespace tollgate::sim
