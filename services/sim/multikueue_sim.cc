#include "services/sim/multikueue_sim.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/admission_checks.h"
#include "core/multikueue_checks.h"
#include "core/status_macros.h"
#include "services/api/config_codec.h"
#include "services/api/multikueue_codec.h"
#include "services/api/multikueue_views.h"

namespace tollgate::sim {
namespace {

// A pass that keeps changing things after this many rounds is a loop, not progress.
constexpr int kMaxPasses = 8;

v1::WorkloadRef RefOf(const v1::Workload& wl) {
  v1::WorkloadRef ref;
  ref.set_namespace_(wl.metadata().namespace_());
  ref.set_name(wl.metadata().name());
  return ref;
}

}  // namespace

MultiKueueSim::MultiKueueSim(const core::Clock& clock, core::MultiKueueSettings settings,
                             const std::vector<std::string>& connected)
    : clock_(clock),
      settings_(std::move(settings)),
      mode_(core::DispatcherModeOf(settings_.dispatcher_name)),
      last_gc_(clock.Now()) {
  for (const std::string& cluster : connected) Connect(cluster);
}

MultiKueueSim::Worker& MultiKueueSim::WorkerNamed(const std::string& cluster) {
  auto it = workers_.find(cluster);
  if (it == workers_.end()) {
    // A worker first heard of now: lost since now, as a client created disconnected.
    it = workers_.emplace(cluster, Worker{core::WorkerConnection(clock_.Now()), {}}).first;
  }
  return it->second;
}

void MultiKueueSim::Connect(const std::string& cluster) {
  WorkerNamed(cluster).connection.MarkConnected();
}

void MultiKueueSim::Disconnect(const std::string& cluster) {
  WorkerNamed(cluster).connection.MarkDisconnected(clock_.Now());
}

absl::StatusOr<MultiKueueSim::Copy*> MultiKueueSim::FindCopy(const std::string& key,
                                                             const std::string& cluster) {
  auto worker = workers_.find(cluster);
  if (worker != workers_.end()) {
    auto copy = worker->second.copies.find(key);
    if (copy != worker->second.copies.end()) return &copy->second;
  }
  return absl::NotFoundError(
      absl::StrCat("worker ", cluster, " holds no copy of ", key, " (the controller made none)"));
}

absl::Status MultiKueueSim::Admit(const std::string& key, const std::string& cluster,
                                  absl::Time since) {
  TOLLGATE_ASSIGN_OR_RETURN(Copy * copy, FindCopy(key, cluster));
  if (copy->view.finished.has_value()) {
    return absl::FailedPreconditionError(
        absl::StrCat("the copy of ", key, " on ", cluster, " has finished"));
  }
  if (!copy->active) {
    return absl::FailedPreconditionError(
        absl::StrCat("the copy of ", key, " on ", cluster, " is deactivated"));
  }
  copy->view.admitted_since = since;
  copy->view.evicted.reset();
  return absl::OkStatus();
}

absl::Status MultiKueueSim::Evict(const std::string& key, const std::string& cluster,
                                  const std::string& reason, const std::string& message) {
  TOLLGATE_ASSIGN_OR_RETURN(Copy * copy, FindCopy(key, cluster));
  if (copy->view.finished.has_value()) {
    return absl::FailedPreconditionError(
        absl::StrCat("the copy of ", key, " on ", cluster, " has finished"));
  }
  copy->view.admitted_since.reset();
  copy->view.evicted = core::RemoteCondition{clock_.Now(), reason, message};
  return absl::OkStatus();
}

absl::Status MultiKueueSim::Finish(const std::string& key, const std::string& cluster,
                                   const std::string& reason, const std::string& message) {
  TOLLGATE_ASSIGN_OR_RETURN(Copy * copy, FindCopy(key, cluster));
  copy->view.finished = core::RemoteCondition{clock_.Now(), reason, message};
  return absl::OkStatus();
}

absl::Status MultiKueueSim::Remove(const std::string& key, const std::string& cluster) {
  TOLLGATE_RETURN_IF_ERROR(FindCopy(key, cluster).status());
  workers_.at(cluster).copies.erase(key);
  return absl::OkStatus();
}

MultiKueueSim::Copy MultiKueueSim::CopyOf(const v1::Workload& wl) {
  Copy copy;
  copy.queue = wl.spec().queue_name();
  for (const v1::PodSet& ps : wl.spec().pod_sets())
    copy.pod_sets.emplace_back(ps.name(), ps.count());
  copy.active = !wl.spec().has_active() || wl.spec().active();
  return copy;
}

// What tollgate-multikueue compares (RemoteCopyOf): the LocalQueue, each pod set's name and
// count, and spec.active.
bool MultiKueueSim::SpecInSync(const Copy& copy, const v1::Workload& wl) {
  const Copy now = CopyOf(wl);
  return copy.queue == now.queue && copy.pod_sets == now.pod_sets && copy.active == now.active;
}

std::map<std::string, std::string> MultiKueueSim::CopyStates(const std::string& key) const {
  std::map<std::string, std::string> out;
  for (const auto& [cluster, worker] : workers_) {
    auto it = worker.copies.find(key);
    if (it == worker.copies.end()) continue;
    const core::RemoteCopy& view = it->second.view;
    out[cluster] = view.finished.has_value()         ? "Finished"
                   : view.admitted_since.has_value() ? "Admitted"
                   : view.evicted.has_value()        ? "Evicted"
                                                     : "Pending";
  }
  return out;
}

std::optional<absl::Time> MultiKueueSim::NextRecheck() const {
  const absl::Time now = clock_.Now();
  std::optional<absl::Time> next;
  auto consider = [&](absl::Time t) {
    if (t > now && (!next.has_value() || t < *next)) next = t;
  };
  for (const auto& [key, at] : rechecks_) consider(at);
  if (settings_.gc_interval > absl::ZeroDuration()) {
    bool orphans = false;
    for (const auto& [cluster, worker] : workers_) {
      for (const auto& [key, copy] : worker.copies) orphans = orphans || live_.count(key) == 0;
    }
    if (orphans) {
      absl::Time gc = last_gc_ + settings_.gc_interval;
      while (gc <= now) gc += settings_.gc_interval;
      consider(gc);
    }
  }
  return next;
}

absl::Status MultiKueueSim::Run(engine::TollgateApi& api) {
  for (int i = 0; i < kMaxPasses; ++i) {
    bool changed = false;
    TOLLGATE_RETURN_IF_ERROR(Pass(api, &changed));
    if (!changed) return absl::OkStatus();
  }
  return absl::InternalError(absl::StrCat("the MultiKueue controller still changed things after ",
                                          kMaxPasses, " passes at the same instant"));
}

absl::Status MultiKueueSim::Pass(engine::TollgateApi& api, bool* changed) {
  TOLLGATE_RETURN_IF_ERROR(ReportActivity(api, changed));
  TOLLGATE_ASSIGN_OR_RETURN(v1::ListWorkloadsResponse workloads,
                            api.ListWorkloads(v1::ListWorkloadsRequest()));
  std::set<std::string> live;
  std::vector<const v1::Workload*> listed;
  for (const v1::Workload& wl : workloads.workloads()) {
    live.insert(api::KeyOf(wl));
    listed.push_back(&wl);
  }
  for (const v1::Workload& wl : workloads.workloads()) {
    // The workload's MultiKueue check, if it carries one (a queue takes one at most).
    std::string check;
    for (const v1::AdmissionCheckState& s : wl.status().admission_checks()) {
      if (checks_.count(s.name()) > 0) check = s.name();
    }
    if (check.empty()) continue;
    const core::ConfigLookup lookup = core::FindMultiKueueConfig(checks_.at(check), configs_);
    // Without its config the check's workers are unknown: nothing is decided (as
    // tollgate-multikueue; Kueue's reconciler fails to read the group).
    if (lookup.config == nullptr) continue;
    TOLLGATE_RETURN_IF_ERROR(Reconcile(api, wl, check, lookup.config->clusters, listed, changed));
  }
  // Deleted on the manager since the last pass: its copies go at once where the worker
  // answers; garbage collection takes those on workers that are away.
  for (const std::string& key : live_) {
    if (live.count(key) > 0) continue;
    rounds_.erase(key);
    rechecks_.erase(key);
    for (auto& [cluster, worker] : workers_) {
      if (worker.connection.connected() && worker.copies.erase(key) > 0) *changed = true;
    }
  }
  live_ = std::move(live);
  CollectGarbage(changed);
  return absl::OkStatus();
}

void MultiKueueSim::CollectGarbage(bool* changed) {
  const absl::Time now = clock_.Now();
  if (settings_.gc_interval <= absl::ZeroDuration() || now - last_gc_ < settings_.gc_interval) {
    return;
  }
  while (now - last_gc_ >= settings_.gc_interval) last_gc_ += settings_.gc_interval;
  for (auto& [cluster, worker] : workers_) {
    if (!worker.connection.connected() || cluster_objects_.count(cluster) == 0) continue;
    std::vector<std::string> keys;
    for (const auto& [key, copy] : worker.copies) keys.push_back(key);
    for (const std::string& key : core::GarbageCopies(keys, live_)) {
      worker.copies.erase(key);
      *changed = true;
    }
  }
}

absl::Status MultiKueueSim::ReportActivity(engine::TollgateApi& api, bool* changed) {
  v1::ListObjectsRequest request;
  request.set_kind(v1::ADMISSION_CHECK);
  TOLLGATE_ASSIGN_OR_RETURN(v1::ListObjectsResponse checks, api.ListObjects(request));
  request.set_kind(v1::MULTI_KUEUE_CONFIG);
  TOLLGATE_ASSIGN_OR_RETURN(v1::ListObjectsResponse configs, api.ListObjects(request));
  request.set_kind(v1::MULTI_KUEUE_CLUSTER);
  TOLLGATE_ASSIGN_OR_RETURN(v1::ListObjectsResponse clusters, api.ListObjects(request));

  checks_.clear();
  for (const v1::ConfigObject& object : checks.objects()) {
    if (!object.has_admission_check()) continue;
    absl::StatusOr<core::AdmissionCheckSpec> spec =
        api::AdmissionCheckFromProto(object.admission_check());
    if (spec.ok() && spec->controller_name == core::kMultiKueueControllerName) {
      checks_[spec->name] = *std::move(spec);
    }
  }
  configs_.clear();
  for (const v1::ConfigObject& object : configs.objects()) {
    if (!object.has_multi_kueue_config()) continue;
    absl::StatusOr<core::MultiKueueConfigSpec> spec =
        api::MultiKueueConfigFromProto(object.multi_kueue_config());
    if (spec.ok()) configs_[spec->name] = *std::move(spec);
  }
  cluster_objects_.clear();
  std::map<std::string, core::MultiKueueClusterRuntime> runtimes;
  for (const v1::ConfigObject& object : clusters.objects()) {
    if (!object.has_multi_kueue_cluster()) continue;
    const std::string& name = object.multi_kueue_cluster().metadata().name();
    cluster_objects_.insert(name);
    const bool connected = WorkerNamed(name).connection.connected();
    // The connection's report, as tollgate-multikueue makes it.
    v1::SetMultiKueueClusterActiveRequest report;
    report.set_name(name);
    report.set_active(connected);
    report.set_reason(connected ? std::string(core::kClusterActiveReason)
                                : std::string(core::kClusterClientConnectionFailedReason));
    report.set_message(connected ? "Connected" : "the worker does not answer");
    const std::string text = absl::StrCat(connected, "|", report.reason());
    if (reported_clusters_[name] != text) {
      TOLLGATE_RETURN_IF_ERROR(api.SetMultiKueueClusterActive(report).status());
      reported_clusters_[name] = text;
      *changed = true;
    }
    core::MultiKueueClusterRuntime runtime;
    absl::StatusOr<core::MultiKueueClusterSpec> spec =
        api::MultiKueueClusterFromProto(object.multi_kueue_cluster());
    if (spec.ok()) runtime.spec = *std::move(spec);
    runtime.active = core::Condition{"Active", connected, report.reason(), report.message(),
                                     absl::InfinitePast()};
    runtimes[name] = std::move(runtime);
  }
  for (const auto& [name, spec] : checks_) {
    const core::CheckActivity activity = core::MultiKueueCheckActivity(spec, configs_, runtimes);
    const std::string text =
        absl::StrCat(activity.active, "|", activity.reason, "|", activity.message);
    if (reported_checks_[name] == text) continue;
    v1::SetAdmissionCheckActiveRequest report;
    report.set_name(name);
    report.set_active(activity.active);
    report.set_reason(activity.reason);
    report.set_message(activity.message);
    TOLLGATE_RETURN_IF_ERROR(api.SetAdmissionCheckActive(report).status());
    reported_checks_[name] = text;
    *changed = true;
  }
  return absl::OkStatus();
}

absl::Status MultiKueueSim::Reconcile(engine::TollgateApi& api, v1::Workload wl,
                                      const std::string& check,
                                      const std::vector<std::string>& config_clusters,
                                      const std::vector<const v1::Workload*>& listed,
                                      bool* changed) {
  const absl::Time now = clock_.Now();
  const std::string key = api::KeyOf(wl);
  rechecks_.erase(key);
  auto usable = [&](const std::string& cluster) -> Worker* {
    auto it = workers_.find(cluster);
    if (it == workers_.end() || cluster_objects_.count(cluster) == 0) return nullptr;
    return &it->second;
  };
  std::map<std::string, core::WorkerView> views;
  for (const std::string& cluster : config_clusters) {
    core::WorkerView view;
    if (Worker* worker = usable(cluster)) {
      view.connected = worker->connection.connected();
      view.lost_since = worker->connection.lost_since();
      auto copy = worker->copies.find(key);
      if (view.connected && copy != worker->copies.end()) {
        view.copy = copy->second.view;
        view.copy->spec_in_sync = SpecInSync(copy->second, wl);
      }
    } else {
      // No MultiKueueCluster of that name: unreachable, and lost since now at every look (as
      // for tollgate-multikueue and Kueue, which has no client for it), so a winner there stays
      // Ready until it is back.
      view.lost_since.reset();
    }
    views[cluster] = std::move(view);
  }
  const core::LocalView local = api::LocalViewOf(wl, check);
  const core::RemoteSyncPlan plan =
      core::PlanRemoteSync(local, views, settings_.worker_lost_timeout, now);

  for (const std::string& cluster : plan.remove_copies) {
    Worker* worker = usable(cluster);
    if (worker != nullptr && worker->connection.connected() && worker->copies.erase(key) > 0) {
      *changed = true;
    }
  }
  if (plan.deactivate_remote.has_value()) {
    Worker* worker = usable(*plan.deactivate_remote);
    if (worker != nullptr && worker->connection.connected()) {
      auto copy = worker->copies.find(key);
      if (copy != worker->copies.end() && copy->second.active) {
        // The worker evicts a deactivated copy with Kueue's reason for it.
        copy->second.active = false;
        copy->second.view.admitted_since.reset();
        copy->second.view.evicted = core::RemoteCondition{
            now, absl::StrCat("DeactivatedDueTo", plan.deactivate_reason),
            absl::StrCat("The workload is deactivated due to ", plan.deactivate_message)};
        *changed = true;
      }
    }
  }
  // Also while only reserved (Kueue finishes whatever the local state): a copy may finish on a
  // worker the manager could not see while it was admitted there, and the workload would
  // otherwise hold its quota here for good.
  if (plan.finish_local.has_value() && (wl.status().state() == v1::WORKLOAD_STATE_ADMITTED ||
                                        wl.status().state() == v1::WORKLOAD_STATE_QUOTA_RESERVED)) {
    v1::FinishRequest finish;
    *finish.mutable_workload() = RefOf(wl);
    finish.set_message(plan.finish_local->message.empty() ? plan.finish_local->reason
                                                          : plan.finish_local->message);
    finish.set_reason(plan.finish_local->reason.empty() ? std::string("Succeeded")
                                                        : plan.finish_local->reason);
    absl::StatusOr<v1::FinishResponse> finished = api.Finish(finish);
    if (!finished.ok()) {
      return absl::Status(finished.status().code(),
                          absl::StrCat("finishing ", key, ": ", finished.status().message()));
    }
    wl = finished->workload();
    *changed = true;
  }
  if (plan.check.has_value()) {
    v1::UpdateAdmissionCheckStateRequest request;
    *request.mutable_workload() = RefOf(wl);
    request.set_check(check);
    request.set_state(core::CheckStateName(plan.check->state));
    request.set_message(plan.check->message);
    request.set_expected_revision(wl.metadata().resource_version());
    if (plan.set_cluster_name.has_value()) request.set_cluster_name(*plan.set_cluster_name);
    absl::StatusOr<v1::UpdateAdmissionCheckStateResponse> updated =
        api.UpdateAdmissionCheckState(request);
    if (!updated.ok()) {
      return absl::Status(updated.status().code(),
                          absl::StrCat("setting ", key, "'s check ", check, " to ", request.state(),
                                       ": ", updated.status().message()));
    }
    wl = updated->workload();
    *changed = true;
  }
  if (plan.recheck_at.has_value()) rechecks_[key] = *plan.recheck_at;
  if (plan.nominate) {
    TOLLGATE_RETURN_IF_ERROR(Nominate(api, wl, check, config_clusters, listed, changed));
  }
  if (!api::HoldsQuota(wl)) rounds_.erase(key);
  return absl::OkStatus();
}

absl::Status MultiKueueSim::Nominate(engine::TollgateApi& api, const v1::Workload& wl,
                                     const std::string& check,
                                     const std::vector<std::string>& config_clusters,
                                     const std::vector<const v1::Workload*>& listed,
                                     bool* changed) {
  const absl::Time now = clock_.Now();
  const std::string key = api::KeyOf(wl);
  const core::LocalView local = api::LocalViewOf(wl, check);
  core::NominationGate gate;
  gate.holds_quota = local.holds_quota;
  gate.finished = local.finished;
  gate.check_state = local.check_state;
  gate.cluster_name = local.cluster_name;
  if (!core::MayNominate(gate)) return absl::OkStatus();

  core::NominationInput input;
  input.config_clusters = config_clusters;
  for (const std::string& cluster : config_clusters) {
    auto it = workers_.find(cluster);
    if (it != workers_.end() && cluster_objects_.count(cluster) > 0 &&
        it->second.connection.connected()) {
      input.connected.insert(cluster);
    }
  }
  input.nominated.assign(wl.status().nominated_cluster_names().begin(),
                         wl.status().nominated_cluster_names().end());
  input.step_size = settings_.incremental_step_size;
  // One of several workloads of one object (a LeaderWorkerSet's groups): all on one worker, as
  // the controller decides it; a conflict nominates nothing (the controller logs it).
  const std::optional<core::ComponentDecision> component = api::ComponentDecisionFor(wl, listed);
  if (component.has_value() && component->step != core::ComponentStep::kNominate &&
      component->step != core::ComponentStep::kFollow) {
    return absl::OkStatus();
  }
  if (component.has_value() && component->step == core::ComponentStep::kFollow) {
    input.only_on = component->cluster;
  }
  std::vector<core::AdmissionCheckState> checks;
  for (const v1::AdmissionCheckState& s : wl.status().admission_checks()) {
    core::AdmissionCheckState state;
    state.name = s.name();
    state.state = api::CheckStateOf(wl, s.name()).value_or(core::CheckState::kPending);
    checks.push_back(std::move(state));
  }
  const bool others_ready = !core::FirstOtherCheckNotReady(checks, check).has_value();
  if (!others_ready && !core::NominatesBeforeOtherChecksReady(mode_, input.only_on.has_value())) {
    return absl::OkStatus();
  }
  if (auto round = rounds_.find(key); round != rounds_.end()) input.round = round->second;
  const core::Nomination nomination = core::Nominate(mode_, input, now);
  if (nomination.new_round.has_value()) rounds_[key] = *nomination.new_round;
  if (nomination.recheck_at.has_value()) {
    auto it = rechecks_.find(key);
    if (it == rechecks_.end() || *nomination.recheck_at < it->second) {
      rechecks_[key] = *nomination.recheck_at;
    }
  }
  if (nomination.changed) {
    const v1::AdmissionCheckState* current = api::FindCheckState(wl, check);
    v1::UpdateAdmissionCheckStateRequest request;
    *request.mutable_workload() = RefOf(wl);
    request.set_check(check);
    request.set_state(core::CheckStateName(local.check_state));
    request.set_message(current != nullptr ? current->message() : "");
    request.set_expected_revision(wl.metadata().resource_version());
    request.set_set_nominated_cluster_names(true);
    for (const std::string& n : nomination.nominated) request.add_nominated_cluster_names(n);
    absl::Status status = api.UpdateAdmissionCheckState(request).status();
    if (!status.ok()) {
      return absl::Status(status.code(),
                          absl::StrCat("nominating workers for ", key, ": ", status.message()));
    }
    *changed = true;
  }
  // Copies only once every other check is Ready.
  if (!others_ready) return absl::OkStatus();
  std::set<std::string> with_copy;
  for (const std::string& cluster : input.connected) {
    if (workers_.at(cluster).copies.count(key) > 0) with_copy.insert(cluster);
  }
  const core::CopySync sync = core::SyncCopies(nomination.nominated, input.connected, with_copy);
  for (const std::string& cluster : sync.create) {
    workers_.at(cluster).copies[key] = CopyOf(wl);
    *changed = true;
  }
  for (const std::string& cluster : sync.remove) {
    workers_.at(cluster).copies.erase(key);
    *changed = true;
  }
  return absl::OkStatus();
}

}  // namespace tollgate::sim
