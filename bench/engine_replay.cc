#include "bench/engine_replay.h"

#include <chrono>
#include <cstdio>
#include <functional>
#include <queue>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/clock.h"
#include "core/cluster_state.h"
#include "core/status_macros.h"

namespace tollgate::bench {
namespace {

constexpr int64_t kMilli = 1000;
const absl::Time kEpoch = absl::FromUnixSeconds(1767225600);

absl::Status BuildCluster(const Profile& p, core::ClusterState& state, absl::Time now) {
  TOLLGATE_RETURN_IF_ERROR(state.ApplyNamespace({kReplayNamespace, {}}, now));
  TOLLGATE_RETURN_IF_ERROR(state.ApplyResourceFlavor({kReplayFlavor, {}, {}, {}}, now));
  for (int cq = 0; cq < p.cluster_queues(); ++cq) {
    core::ClusterQueueSpec spec;
    spec.name = ReplayCqName(cq);
    spec.cohort = ReplayCohortName(cq / p.cqs_per_cohort);
    spec.resource_groups = {
        {{"cpu"},
         {{kReplayFlavor,
           {{"cpu", p.nominal_cpu * kMilli, p.borrowing_limit_cpu * kMilli, std::nullopt}}}}}};
    spec.preemption.within_cluster_queue = core::PreemptionPolicy::kLowerPriority;
    spec.preemption.reclaim_within_cohort = core::PreemptionPolicy::kAny;
    TOLLGATE_RETURN_IF_ERROR(state.ApplyClusterQueue(std::move(spec), now));
    TOLLGATE_RETURN_IF_ERROR(state.ApplyLocalQueue(
        {kReplayNamespace, ReplayLqName(cq), ReplayCqName(cq), core::StopPolicy::kNone, 1.0}, now));
  }
  return absl::OkStatus();
}

struct Event {
  absl::Time at;
  // Finishes before creations at the same instant: the freed quota is there for the newcomers,
  // as it would be for a service that processes the earlier-sent Finish first.
  int kind = 0;  // 0 finish, 1 create
  int idx = 0;
  int64_t generation = 0;
  bool operator>(const Event& o) const {
    return std::tie(at, kind, idx) > std::tie(o.at, o.kind, o.idx);
  }
};

}  // namespace

absl::StatusOr<ReplayRecorder::Summary> RunEngineReplay(const Profile& profile,
                                                        const EngineReplayOptions& options) {
  const std::vector<PlannedWorkload> schedule = BuildSchedule(profile);
  core::SimulatedClock clock(kEpoch);
  core::ClusterState state{core::SchedulerConfig{}};
  TOLLGATE_RETURN_IF_ERROR(BuildCluster(profile, state, clock.Now()));

  ReplayRecorder recorder(profile, schedule);
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events;
  for (int i = 0; i < static_cast<int>(schedule.size()); ++i) {
    events.push(Event{kEpoch + schedule[i].at, 1, i, 0});
  }
  std::vector<core::WorkloadId> id_of(schedule.size(), 0);
  absl::flat_hash_map<core::WorkloadId, int> idx_of;
  std::vector<int64_t> generation(schedule.size(), 0);
  std::vector<absl::Time> admitted_at(schedule.size(), absl::InfinitePast());
  auto seconds = [](absl::Time t) { return absl::ToDoubleSeconds(t - kEpoch); };

  const auto wall_start = std::chrono::steady_clock::now();
  absl::Time next_progress = kEpoch + options.progress_every;
  int64_t cycles = 0;
  while (!events.empty()) {
    const absl::Time now = events.top().at;
    clock.Set(now);
    while (!events.empty() && events.top().at == now) {
      const Event e = events.top();
      events.pop();
      const PlannedWorkload& pw = schedule[e.idx];
      if (e.kind == 1) {
        const WorkloadClass& c = profile.classes[pw.cls];
        core::WorkloadSpec spec;
        spec.namespace_name = kReplayNamespace;
        spec.name = pw.name;
        spec.queue_name = ReplayLqName(pw.cq);
        spec.priority = c.priority;
        spec.pod_sets = {
            core::PodSetSpec{"main", 1, std::nullopt, {{"cpu", c.cpu * kMilli}}, {}, {}}};
        TOLLGATE_ASSIGN_OR_RETURN(core::SubmitOutcome out, state.Submit(std::move(spec), "", now));
        id_of[e.idx] = out.id;
        idx_of[out.id] = e.idx;
        recorder.Created(e.idx, seconds(now));
      } else if (e.generation == generation[e.idx] && recorder.running(e.idx)) {
        TOLLGATE_RETURN_IF_ERROR(
            state.Finish(absl::StrCat(kReplayNamespace, "/", pw.name), "", now));
        recorder.Finished(e.idx, seconds(now));
      }
    }
    // Settle, as the executor does after every batch.
    while (true) {
      core::CyclePlan plan = state.PlanCycle(now);
      state.ApplyCycle(plan, now);
      ++cycles;
      if (!plan.MadeProgress()) break;
    }
    for (core::WorkloadId id : state.TakeDirtyWorkloads()) {
      auto it = idx_of.find(id);
      if (it == idx_of.end()) continue;
      const int idx = it->second;
      const core::Workload* wl = state.workload(id);
      const bool holds = wl->status.state == core::WorkloadState::kAdmitted;
      if (holds && (!recorder.running(idx) || wl->status.admission_time != admitted_at[idx])) {
        // Newly admitted (or preempted and readmitted within this instant).
        if (recorder.running(idx)) recorder.Evicted(idx, seconds(now));
        recorder.Admitted(idx, seconds(now));
        admitted_at[idx] = wl->status.admission_time;
        ++generation[idx];
        events.push(
            Event{now + profile.classes[schedule[idx].cls].runtime, 0, idx, generation[idx]});
      } else if (!holds && recorder.running(idx) &&
                 wl->status.state != core::WorkloadState::kFinished) {
        recorder.Evicted(idx, seconds(now));
        ++generation[idx];
      }
    }
    state.TakeDeletedWorkloads();
    if (options.progress_every > absl::ZeroDuration() && now >= next_progress) {
      const double real_s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
      std::printf(
          "[engine %s] t=%7.1fs virtual (%.1fs real) created=%lld running=%lld "
          "finished=%lld evictions=%lld cycles=%lld\n",
          profile.name.c_str(), seconds(now), real_s,
          static_cast<long long>(recorder.created_count()),
          static_cast<long long>(recorder.running_count()),
          static_cast<long long>(recorder.finished_count()),
          static_cast<long long>(recorder.evictions()), static_cast<long long>(cycles));
      std::fflush(stdout);
      while (next_progress <= now) next_progress += options.progress_every;
    }
  }
  return recorder.Summarize();
}

}  // namespace tollgate::bench
