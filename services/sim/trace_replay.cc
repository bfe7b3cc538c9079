#include "services/sim/trace_replay.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <queue>
#include <set>
#include <tuple>
#include <utility>
#include <variant>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/clock.h"
#include "core/quantity.h"
#include "core/status_macros.h"
#include "services/api/workload_codec.h"
#include "services/engine/admission_executor.h"
#include "services/engine/config_objects.h"
#include "services/engine/executor_observer.h"
#include "services/engine/tollgate_api.h"
#include "storage/memory_store.h"
#include "tollgate/v1/objects.pb.h"
#include "tollgate/v1/service.pb.h"

namespace tollgate::sim {
namespace {

// Any fixed instant works: only differences are reported. A fixed one keeps replays identical.
const absl::Time kTraceStart = absl::FromUnixSeconds(1767225600);  // 2026-01-01T00:00:00Z

double QuantityValue(const std::string& resource, const std::string& text) {
  if (text.empty()) return 0;
  absl::StatusOr<core::Quantity> q = core::Quantity::Parse(text);
  if (!q.ok()) return 0;
  return resource == "cpu" ? q->MilliValue() / 1000.0 : static_cast<double>(q->Value());
}

double ResourceTotal(const v1::Admission& admission, const std::string& resource) {
  double total = 0;
  for (const v1::PodSetAssignment& a : admission.pod_set_assignments()) {
    auto it = a.resource_usage().find(resource);
    if (it != a.resource_usage().end()) total += QuantityValue(resource, it->second);
  }
  return total;
}

// The queues' static facts, read from the manifests as applied.
absl::StatusOr<std::map<std::string, QueueInfo>> DescribeQueues(
    const std::vector<manifest::Manifest>& objects, const std::string& resource,
    std::map<std::string, std::string>& cluster_queue_of_local) {
  std::map<std::string, QueueInfo> queues;
  for (const manifest::Manifest& m : objects) {
    const auto* object = std::get_if<v1::ConfigObject>(&m.object);
    if (object == nullptr) continue;
    if (object->has_cluster_queue()) {
      const v1::ClusterQueue& cq = object->cluster_queue();
      QueueInfo& info = queues[cq.metadata().name()];
      info.cohort = cq.spec().cohort();
      for (const v1::ResourceGroup& group : cq.spec().resource_groups()) {
        for (const v1::FlavorQuotas& flavor : group.flavors()) {
          for (const v1::ResourceQuota& quota : flavor.resources()) {
            if (quota.name() == resource)
              info.nominal += QuantityValue(resource, quota.nominal_quota());
          }
        }
      }
      if (cq.spec().fair_sharing().has_weight()) {
        info.weight = QuantityValue("cpu", cq.spec().fair_sharing().weight());
      }
    } else if (object->has_local_queue()) {
      const v1::LocalQueue& lq = object->local_queue();
      cluster_queue_of_local[absl::StrCat(lq.metadata().namespace_(), "/", lq.metadata().name())] =
          lq.spec().cluster_queue();
    }
  }
  return queues;
}

// The committed changes of workloads, in commit order, as the change log would have told them
// (a deletion as a workload with only its name): the executor records no change log for the
// replay, so nothing is converted in full, serialized and parsed back. Only the fields the
// replay reads are filled (api::WorkloadOutcomeToProto); the messages are reused.
class CommittedWorkloads final : public engine::ExecutorObserver {
 public:
  void OnRound(int64_t) override {}
  void OnPlan(const core::CyclePlan&, const core::ClusterState&, absl::Time) override {}
  void OnCycle(const core::CyclePlan&, absl::Duration) override {}
  void OnWorkloadCommitted(const core::Workload& wl, const core::ClusterState&,
                           absl::Time) override {
    api::WorkloadOutcomeToProto(wl, &Next());
  }
  void OnWorkloadDeleted(const core::WorkloadKey& key) override {
    v1::Workload& wl = Next();
    wl.mutable_metadata()->set_namespace_(key.namespace_name);
    wl.mutable_metadata()->set_name(key.name);
    wl.clear_status();
  }
  void OnObjectErased(const core::ObjectName&) override {}
  void OnCommit(int64_t, absl::Duration, const absl::Status&) override {}

  // The changes since the last Clear, oldest first.
  const v1::Workload* begin() const { return changes_.data(); }
  const v1::Workload* end() const { return changes_.data() + used_; }
  void Clear() { used_ = 0; }

 private:
  v1::Workload& Next() {
    if (used_ == changes_.size()) changes_.emplace_back();
    return changes_[used_++];
  }

  std::vector<v1::Workload> changes_;
  size_t used_ = 0;
};

// Drives one replay; lives only inside ReplayTrace.
class Replayer {
 public:
  Replayer(const std::vector<TraceJob>& jobs, const ReplayOptions& options,
           core::SimulatedClock& clock, storage::MemoryStore& store,
           engine::AdmissionExecutor& executor, engine::TollgateApi& api,
           CommittedWorkloads& committed)
      : jobs_(jobs),
        options_(options),
        clock_(clock),
        store_(store),
        executor_(executor),
        api_(api),
        committed_(committed) {}

  absl::Status Run(ReplayResult& result) {
    result.jobs.resize(jobs_.size());
    running_since_.assign(jobs_.size(), std::nullopt);
    reserved_since_.assign(jobs_.size(), std::nullopt);
    generation_.assign(jobs_.size(), 0);
    held_.assign(jobs_.size(), 0);
    for (size_t i = 0; i < jobs_.size(); ++i) {
      index_of_.emplace(Key(jobs_[i].namespace_name, jobs_[i].name), static_cast<int>(i));
    }
    committed_.Clear();  // setting up the queues changed no workload; nothing to read
    absl::Duration next_sample = absl::ZeroDuration();
    size_t next_submit = 0;
    int64_t finished = 0;
    int64_t next_progress = 0;
    const int64_t progress_step = std::max<int64_t>(1, static_cast<int64_t>(jobs_.size()) / 100);

    while (true) {
      TOLLGATE_ASSIGN_OR_RETURN(std::optional<absl::Time> timer, api_.NextTimer());
      absl::Duration now = absl::InfiniteDuration();
      if (next_submit < jobs_.size()) now = std::min(now, jobs_[next_submit].submit);
      if (!finishes_.empty()) now = std::min(now, finishes_.top().at);
      if (!check_events_.empty()) now = std::min(now, check_events_.top().at);
      // Once every job ran, what timers remain change no outcome (objectRetentionPolicies'
      // deletions of finished workloads, stale hints): the replay ends with the last job.
      const bool all_done =
          next_submit == jobs_.size() && finished == static_cast<int64_t>(jobs_.size());
      if (timer.has_value() && !all_done) now = std::min(now, *timer - kTraceStart);
      if (now == absl::InfiniteDuration()) break;  // nothing can change any more
      if (next_sample <= now) {
        // Sample the state as it stood just before this instant.
        TOLLGATE_RETURN_IF_ERROR(TakeSample(next_sample, result));
        next_sample += options_.sample_every;
        continue;
      }
      clock_.Set(kTraceStart + now);
      while (!finishes_.empty() && finishes_.top().at == now) {
        const Finish f = finishes_.top();
        finishes_.pop();
        if (f.generation != generation_[f.job]) continue;  // preempted since
        // What TollgateApi::Finish does for a request without message or reason, less its
        // response: a conversion of the whole workload the replay would drop. (A trace job always
        // names its namespace: the trace reader refuses an empty one.)
        const std::string key = Key(jobs_[f.job].namespace_name, jobs_[f.job].name);
        absl::Status status = executor_.RunStatus(
            [&](engine::AdmissionExecutor::Txn& txn) { return txn.Finish(key, "", ""); });
        if (!status.ok()) {
          return absl::InternalError(
              absl::StrCat("finishing ", jobs_[f.job].name, ": ", status.message()));
        }
        result.jobs[f.job].finished = now;
        running_since_[f.job].reset();
        ++finished;
      }
      while (!check_events_.empty() && check_events_.top().at == now) {
        const CheckReady c = check_events_.top();
        check_events_.pop();
        if (c.generation != generation_[c.job]) continue;  // released since
        TOLLGATE_RETURN_IF_ERROR(SetCheckReady(c));
      }
      while (next_submit < jobs_.size() && jobs_[next_submit].submit == now) {
        TOLLGATE_RETURN_IF_ERROR(Submit(static_cast<int>(next_submit++), result));
      }
      TOLLGATE_RETURN_IF_ERROR(api_.Settle());
      ++result.settles;
      TOLLGATE_RETURN_IF_ERROR(ReadDecisions(now, result));
      if (options_.progress && finished >= next_progress) {
        options_.progress(
            {static_cast<int64_t>(next_submit), finished, static_cast<int64_t>(jobs_.size()), now});
        next_progress = finished + progress_step;
      }
      result.end = now;
    }
    TOLLGATE_RETURN_IF_ERROR(TakeSample(next_sample, result));
    if (options_.progress) {
      options_.progress({static_cast<int64_t>(next_submit), finished,
                         static_cast<int64_t>(jobs_.size()), result.end});
    }
    return absl::OkStatus();
  }

 private:
  struct Finish {
    absl::Duration at;
    int job = 0;
    int64_t generation = 0;
    bool operator>(const Finish& o) const { return std::tie(at, job) > std::tie(o.at, o.job); }
  };

  // One check of one reservation becoming Ready.
  struct CheckReady {
    absl::Duration at;
    int job = 0;
    int64_t generation = 0;
    std::string check;
    bool operator>(const CheckReady& o) const {
      return std::tie(at, job, check) > std::tie(o.at, o.job, o.check);
    }
  };

  // The check controller of the replay: Ready, at the workload's current revision (nothing
  // else changes a workload between two instants of the virtual clock).
  absl::Status SetCheckReady(const CheckReady& c) {
    v1::GetWorkloadRequest get;
    get.mutable_workload()->set_namespace_(jobs_[c.job].namespace_name);
    get.mutable_workload()->set_name(jobs_[c.job].name);
    TOLLGATE_ASSIGN_OR_RETURN(v1::Workload wl, api_.GetWorkload(get));
    if (wl.status().state() != v1::WORKLOAD_STATE_QUOTA_RESERVED) return absl::OkStatus();
    v1::UpdateAdmissionCheckStateRequest request;
    *request.mutable_workload() = get.workload();
    request.set_check(c.check);
    request.set_state("Ready");
    request.set_message("Provisioned (simulated delay)");
    request.set_expected_revision(wl.metadata().resource_version());
    absl::Status status = api_.UpdateAdmissionCheckState(request).status();
    if (!status.ok()) {
      return absl::InternalError(absl::StrCat("setting check ", c.check, " of ", jobs_[c.job].name,
                                              " Ready: ", status.message()));
    }
    return absl::OkStatus();
  }

  static std::string Key(absl::string_view ns, absl::string_view name) {
    return absl::StrCat(ns, "/", name);
  }

  absl::Status Submit(int job_index, ReplayResult& result) {
    const TraceJob& job = jobs_[job_index];
    v1::SubmitRequest request;
    v1::Workload& wl = *request.mutable_workload();
    wl.mutable_metadata()->set_namespace_(job.namespace_name);
    wl.mutable_metadata()->set_name(job.name);
    wl.mutable_spec()->set_queue_name(job.local_queue);
    if (job.priority.has_value()) wl.mutable_spec()->set_priority(*job.priority);
    if (!job.kind.empty()) {
      auto it = options_.kind_pod_sets.find(job.kind);
      if (it == options_.kind_pod_sets.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat("trace row ", job.row, " (", job.name, "): no manifest of kind \"",
                         job.kind, "\" to take its pod sets from (--kind-manifests)"));
      }
      for (const v1::PodSet& ps : it->second) *wl.mutable_spec()->add_pod_sets() = ps;
    } else {
      v1::PodSet& pods = *wl.mutable_spec()->add_pod_sets();
      pods.set_name("main");
      pods.set_count(job.pods);
      (*pods.mutable_requests())[options_.resource] = absl::StrCat(job.per_pod);
      if (!options_.required_topology.empty()) {
        pods.mutable_topology_request()->set_required(options_.required_topology);
      }
    }
    if (options_.estimate_every > 0 && job_index % options_.estimate_every == 0) {
      TOLLGATE_RETURN_IF_ERROR(Estimate(job_index, wl, result));
    }
    absl::Status status = api_.Submit(request).status();
    if (!status.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("trace row ", job.row, " (", job.name,
                                                     "): submit refused: ", status.message()));
    }
    return absl::OkStatus();
  }

  // Asks, before the job is submitted, when it would start: the question a Submit dry run
  // answers, through the same executor, on the state the submission will meet.
  absl::Status Estimate(int job_index, const v1::Workload& wl, ReplayResult& result) {
    TOLLGATE_ASSIGN_OR_RETURN(core::WorkloadSpec spec, api::WorkloadSpecFromProto(wl));
    core::StartEstimateOptions learned = options_.estimate_options;
    learned.runtimes = core::RuntimeSource::kHistoryOnly;
    learned.late_quantile = 0;  // the replay scores the likely start only
    core::StartEstimateOptions slurm = learned;
    slurm.runtimes = core::RuntimeSource::kDeclaredOnly;
    // Each job's Slurm-rule time limit, given to the estimate only: declared as
    // maximumExecutionTimeSeconds it would be enforced, and a job preempted and restarted could
    // be deactivated by it, changing the replay's decisions.
    slurm.declared_runtime = [this](const core::Workload& w) -> std::optional<absl::Duration> {
      auto it = index_of_.find(Key(w.spec.namespace_name, w.spec.name));
      if (it == index_of_.end()) return std::nullopt;
      return SlurmTimeLimit(jobs_[it->second].duration);
    };
    using Pair = std::pair<core::StartEstimate, core::StartEstimate>;
    TOLLGATE_ASSIGN_OR_RETURN(
        Pair estimates,
        executor_.Run<Pair>([&](engine::AdmissionExecutor::Txn& txn) -> absl::StatusOr<Pair> {
          TOLLGATE_ASSIGN_OR_RETURN(
              core::StartEstimate a,
              core::EstimateSubmission(txn.state(), spec, txn.now(), learned));
          TOLLGATE_ASSIGN_OR_RETURN(core::StartEstimate b,
                                    core::EstimateSubmission(txn.state(), spec, txn.now(), slurm));
          return Pair(std::move(a), std::move(b));
        }));
    const absl::Time submitted = clock_.Now();
    auto wait = [submitted](const core::StartEstimate& e) {
      WaitEstimate w;
      w.kind = e.kind;
      if (e.kind != core::StartEstimate::Kind::kUnknown) w.wait = e.likely - submitted;
      return w;
    };
    result.jobs[job_index].learned_estimate = wait(estimates.first);
    result.jobs[job_index].slurm_estimate = wait(estimates.second);
    return absl::OkStatus();
  }

  // Learns who was admitted and preempted from the workloads committed since the last call.
  absl::Status ReadDecisions(absl::Duration now, ReplayResult& result) {
    for (const v1::Workload& wl : committed_) Observe(wl, now, result);
    committed_.Clear();
    // The store's change log holds only the revisions (workload changes are not recorded):
    // keep it from growing with the replay.
    const int64_t revision = store_.CurrentRevision();
    if (revision > 0) TOLLGATE_RETURN_IF_ERROR(store_.CompactChanges(revision));
    return absl::OkStatus();
  }

  void Observe(const v1::Workload& wl, absl::Duration now, ReplayResult& result) {
    auto it = index_of_.find(Key(wl.metadata().namespace_(), wl.metadata().name()));
    if (it == index_of_.end()) return;
    // A deletion (objectRetentionPolicies' afterFinished removing a finished job): the job's
    // outcome was recorded when it finished.
    if (!wl.has_status() || wl.status().state() == v1::WORKLOAD_STATE_UNSPECIFIED) return;
    const int i = it->second;
    JobOutcome& out = result.jobs[i];
    const v1::WorkloadStatus& status = wl.status();
    const int32_t new_preemptions = status.preemption_count() - out.preemptions;
    if (new_preemptions > 0 && running_since_[i].has_value()) {
      // Its run so far is lost: the job restarts from zero when admitted again.
      out.lost_resource_seconds += held_[i] * absl::ToDoubleSeconds(now - *running_since_[i]);
      running_since_[i].reset();
      ++generation_[i];
    }
    out.preemptions = status.preemption_count();
    if (status.state() == v1::WORKLOAD_STATE_QUOTA_RESERVED && !reserved_since_[i].has_value()) {
      // A new reservation: its checks become Ready after their delays.
      reserved_since_[i] = now;
      held_[i] = ResourceTotal(status.admission(), options_.resource);
      ++generation_[i];
      for (const v1::AdmissionCheckState& check : status.admission_checks()) {
        auto delay = options_.check_delays.find(check.name());
        check_events_.push(CheckReady{
            now + (delay == options_.check_delays.end() ? absl::ZeroDuration() : delay->second), i,
            generation_[i], check.name()});
      }
    } else if (status.state() != v1::WORKLOAD_STATE_QUOTA_RESERVED &&
               reserved_since_[i].has_value()) {
      // Admitted, or released before its checks were all Ready.
      const absl::Duration waited = now - *reserved_since_[i];
      out.check_wait += waited;
      out.reserved_idle_resource_seconds += held_[i] * absl::ToDoubleSeconds(waited);
      reserved_since_[i].reset();
      if (status.state() != v1::WORKLOAD_STATE_ADMITTED) ++generation_[i];
    }
    if (status.state() == v1::WORKLOAD_STATE_ADMITTED && !running_since_[i].has_value()) {
      running_since_[i] = now;
      held_[i] = ResourceTotal(status.admission(), options_.resource);
      out.cluster_queue = status.admission().cluster_queue();
      if (!out.first_admitted.has_value()) out.first_admitted = now;
      finishes_.push(Finish{now + jobs_[i].duration, i, ++generation_[i]});
    } else if (status.state() != v1::WORKLOAD_STATE_ADMITTED &&
               status.state() != v1::WORKLOAD_STATE_FINISHED && running_since_[i].has_value()) {
      // Evicted without a preemption (a stopped queue drained it, a pods-ready timeout).
      out.lost_resource_seconds += held_[i] * absl::ToDoubleSeconds(now - *running_since_[i]);
      running_since_[i].reset();
      ++generation_[i];
    }
  }

  absl::Status TakeSample(absl::Duration at, ReplayResult& result) {
    v1::ListObjectsRequest request;
    request.set_kind(v1::CLUSTER_QUEUE);
    TOLLGATE_ASSIGN_OR_RETURN(v1::ListObjectsResponse response, api_.ListObjects(request));
    Sample sample;
    sample.at = at;
    for (const v1::ConfigObject& object : response.objects()) {
      const v1::ClusterQueue& cq = object.cluster_queue();
      QueueSample& q = sample.queues[cq.metadata().name()];
      q.pending = cq.status().pending_workloads();
      q.admitted = cq.status().admitted_workloads();
      q.weighted_share = cq.status().fair_sharing().weighted_share();
      for (const v1::FlavorUsage& flavor : cq.status().flavors_usage()) {
        for (const v1::ResourceUsage& usage : flavor.resources()) {
          if (usage.name() != options_.resource) continue;
          q.used += QuantityValue(options_.resource, usage.total());
          q.borrowed += QuantityValue(options_.resource, usage.borrowed());
        }
      }
    }
    result.samples.push_back(std::move(sample));
    return absl::OkStatus();
  }

  const std::vector<TraceJob>& jobs_;
  const ReplayOptions& options_;
  core::SimulatedClock& clock_;
  storage::MemoryStore& store_;
  engine::AdmissionExecutor& executor_;
  engine::TollgateApi& api_;

  absl::flat_hash_map<std::string, int> index_of_;
  std::vector<std::optional<absl::Duration>> running_since_;
  // Since when each job holds a reservation waiting for its admission checks.
  std::vector<std::optional<absl::Duration>> reserved_since_;
  std::vector<int64_t> generation_;
  // Units of the measured resource each running job holds.
  std::vector<double> held_;
  std::priority_queue<Finish, std::vector<Finish>, std::greater<>> finishes_;
  std::priority_queue<CheckReady, std::vector<CheckReady>, std::greater<>> check_events_;
  CommittedWorkloads& committed_;
};

// The queue manifests' objects, plus an AdmissionCheck for each modelled delay the manifests do
// not define, required by every ClusterQueue.
absl::StatusOr<std::vector<v1::ConfigObject>> WithModelledChecks(
    const std::vector<manifest::Manifest>& objects,
    const std::map<std::string, absl::Duration>& delays) {
  std::vector<v1::ConfigObject> out;
  std::set<std::string> defined;
  for (const manifest::Manifest& m : objects) {
    const auto* object = std::get_if<v1::ConfigObject>(&m.object);
    if (object == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("the queue manifests hold a ", m.kind,
                                                     "; a replay submits only the trace's jobs"));
    }
    if (object->has_admission_check()) defined.insert(object->admission_check().metadata().name());
    out.push_back(*object);
  }
  std::vector<std::string> added;
  for (const auto& [name, delay] : delays) {
    if (defined.count(name) > 0) continue;
    v1::ConfigObject check;
    check.mutable_admission_check()->mutable_metadata()->set_name(name);
    check.mutable_admission_check()->mutable_spec()->set_controller_name(
        "tollgate.dev/simulated-provisioning");
    // Checks first: a ClusterQueue naming one applies cleanly after it.
    out.insert(out.begin(), std::move(check));
    added.push_back(name);
  }
  for (v1::ConfigObject& object : out) {
    if (!object.has_cluster_queue()) continue;
    v1::ClusterQueueSpec& spec = *object.mutable_cluster_queue()->mutable_spec();
    for (const std::string& name : added) {
      if (spec.has_admission_checks_strategy()) {
        spec.mutable_admission_checks_strategy()->add_admission_checks()->set_name(name);
      } else {
        spec.add_admission_checks(name);
      }
    }
  }
  return out;
}

}  // namespace

absl::Duration SlurmTimeLimit(absl::Duration duration) {
  for (absl::Duration limit :
       {absl::Hours(1), absl::Hours(4), absl::Hours(24), absl::Hours(24 * 7)}) {
    if (duration <= limit) return limit;
  }
  const absl::Duration week = absl::Hours(24 * 7);
  return week * std::ceil(absl::FDivDuration(duration, week));
}

absl::StatusOr<ReplayResult> ReplayTrace(const std::vector<manifest::Manifest>& objects,
                                         const std::vector<TraceJob>& jobs,
                                         const ReplayOptions& options) {
  if (options.sample_every <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--sample-every: must be positive");
  }
  ReplayResult result;
  std::map<std::string, std::string> cluster_queue_of_local;
  TOLLGATE_ASSIGN_OR_RETURN(result.queues,
                            DescribeQueues(objects, options.resource, cluster_queue_of_local));
  if (result.queues.empty()) {
    return absl::InvalidArgumentError("the queue manifests define no ClusterQueue");
  }

  storage::MemoryStore store;
  core::SimulatedClock clock(kTraceStart);
  engine::AdmissionExecutor::Options executor_options;
  executor_options.schedule_continuously = false;
  executor_options.run_on_caller = true;
  CommittedWorkloads committed;
  executor_options.observer = &committed;
  executor_options.record_workload_changes = false;
  TOLLGATE_ASSIGN_OR_RETURN(
      std::unique_ptr<engine::AdmissionExecutor> executor,
      engine::AdmissionExecutor::Open(store, clock, options.config, executor_options));
  engine::TollgateApi api(*executor);
  TOLLGATE_ASSIGN_OR_RETURN(std::vector<v1::ConfigObject> configs,
                            WithModelledChecks(objects, options.check_delays));
  std::vector<std::string> checks;
  for (const v1::ConfigObject& object : configs) {
    v1::ApplyRequest request;
    *request.add_objects() = object;
    absl::Status status = api.Apply(request).status();
    if (!status.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("apply ", engine::MetadataOf(object).name(), ": ", status.message()));
    }
    if (object.has_admission_check()) checks.push_back(object.admission_check().metadata().name());
  }
  // The replay is every check's controller: all of them are active.
  for (const std::string& check : checks) {
    v1::SetAdmissionCheckActiveRequest request;
    request.set_name(check);
    request.set_active(true);
    request.set_reason("Active");
    request.set_message("The simulated controller is ready");
    TOLLGATE_RETURN_IF_ERROR(api.SetAdmissionCheckActive(request).status());
  }
  result.has_checks = !checks.empty();
  if (!options.nodes.empty()) {
    v1::UpsertNodesRequest request;
    for (const v1::Node& node : options.nodes) *request.add_nodes() = node;
    absl::Status status = api.UpsertNodes(request).status();
    if (!status.ok())
      return absl::InvalidArgumentError(absl::StrCat("--nodes: ", status.message()));
  }

  Replayer replayer(jobs, options, clock, store, *executor, api, committed);
  TOLLGATE_RETURN_IF_ERROR(replayer.Run(result));
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (!result.jobs[i].cluster_queue.empty()) continue;
    auto it =
        cluster_queue_of_local.find(absl::StrCat(jobs[i].namespace_name, "/", jobs[i].local_queue));
    if (it != cluster_queue_of_local.end()) result.jobs[i].cluster_queue = it->second;
  }
  return result;
}

}  // namespace tollgate::sim
