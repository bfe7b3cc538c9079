#include "adapters/multikueue/dispatch_controller.h"

#include <algorithm>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "common/json_log.h"
#include "core/admission_checks.h"
#include "core/multikueue_components.h"
#include "core/multikueue_remote_sync.h"
#include "core/status_macros.h"
#include "services/api/config_codec.h"
#include "services/api/multikueue_codec.h"
#include "services/api/multikueue_views.h"

namespace tollgate::multikueue {

using api::CheckStateOf;
using api::CheckStateText;
using api::ComponentOwnerOf;
using api::CopyOf;
using api::FindCheckState;
using api::FinishReasonOf;
using api::HoldsQuota;
using api::JobStatusToMirror;
using api::KeyOf;
using api::LocalViewOf;
using api::NeedsWinnerMark;
using api::PayloadToCarry;
using api::PriorityToCarry;
using api::RemoteCopyOf;
using api::RemoteStatesOf;
using api::SameRemoteStates;
using api::WorkerObservation;

namespace {

// Active condition as stored on an object's status.
std::optional<core::Condition> ActiveOf(
    const google::protobuf::RepeatedPtrField<v1::Condition>& c) {
  for (const v1::Condition& condition : c) {
    if (condition.type() != "Active") continue;
    return core::Condition{"Active", condition.status() == "True", condition.reason(),
                           condition.message(), absl::InfinitePast()};
  }
  return std::nullopt;
}

bool Backoff(int failures, absl::Duration min, absl::Duration max, const common::StopSignal& stop) {
  absl::Duration wait = min;
  for (int i = 0; i < failures && wait < max; ++i) wait *= 2;
  return !stop.WaitFor(std::min(wait, max));
}

std::vector<core::AdmissionCheckState> CoreChecksOf(const v1::Workload& wl) {
  std::vector<core::AdmissionCheckState> out;
  for (const v1::AdmissionCheckState& s : wl.status().admission_checks()) {
    core::AdmissionCheckState state;
    state.name = s.name();
    state.state = CheckStateOf(wl, s.name()).value_or(core::CheckState::kPending);
    out.push_back(std::move(state));
  }
  return out;
}

}  // namespace

DispatchController::DispatchController(client::TollgateClient& manager, const core::Clock& clock,
                                       Options options)
    : manager_(manager),
      clock_(clock),
      options_(std::move(options)),
      mode_(core::DispatcherModeOf(options_.settings.dispatcher_name)) {}

DispatchController::~DispatchController() {
  // Links stop their threads as they are destroyed; drop them outside the lock (their
  // listeners take it).
  std::map<std::string, ClusterEntry> clusters;
  {
    absl::MutexLock lock(&mu_);
    clusters.swap(clusters_);
  }
}

void DispatchController::MarkDirty(const std::string& key) {
  absl::MutexLock lock(&mu_);
  dirty_.insert(key);
}

void DispatchController::RecheckLater(const std::string& key) {
  absl::MutexLock lock(&mu_);
  rechecks_[key] = clock_.Now() + options_.min_backoff * 10;
}

void DispatchController::MarkAllDirty() {
  for (const auto& [key, unused] : workloads_) dirty_.insert(key);
}

void DispatchController::OnConnection(const std::string& cluster, bool connected,
                                      const std::string& reason, const std::string& message) {
  absl::MutexLock lock(&mu_);
  auto it = clusters_.find(cluster);
  if (it == clusters_.end()) return;
  const Reported state{connected, reason, connected ? "Connected" : message};
  if (it->second.state == state) return;
  common::Log(connected ? "info" : "warning", "worker connection",
              {{"cluster", cluster},
               {"connected", connected ? "true" : "false"},
               {"reason", reason},
               {"message", message}});
  it->second.state = state;
  activity_dirty_ = true;
  // A lost worker starts the grace; a connected one may get its copies now.
  MarkAllDirty();
}

absl::StatusOr<bool> DispatchController::SyncConfig() {
  v1::ListObjectsRequest request;
  request.set_kind(v1::ADMISSION_CHECK);
  TOLLGATE_ASSIGN_OR_RETURN(v1::ListObjectsResponse checks, manager_.ListObjects(request));
  request.set_kind(v1::MULTI_KUEUE_CONFIG);
  TOLLGATE_ASSIGN_OR_RETURN(v1::ListObjectsResponse configs, manager_.ListObjects(request));
  request.set_kind(v1::MULTI_KUEUE_CLUSTER);
  TOLLGATE_ASSIGN_OR_RETURN(v1::ListObjectsResponse clusters, manager_.ListObjects(request));

  std::map<std::string, CheckEntry> new_checks;
  for (const v1::ConfigObject& object : checks.objects()) {
    if (!object.has_admission_check()) continue;
    absl::StatusOr<core::AdmissionCheckSpec> spec =
        api::AdmissionCheckFromProto(object.admission_check());
    if (!spec.ok() || spec->controller_name != core::kMultiKueueControllerName) continue;
    std::optional<core::Condition> active =
        ActiveOf(object.admission_check().status().conditions());
    CheckEntry entry{*std::move(spec), std::nullopt};
    if (active.has_value())
      entry.stored = Reported{active->status, active->reason, active->message};
    new_checks[entry.spec.name] = std::move(entry);
  }
  std::map<std::string, core::MultiKueueConfigSpec> new_configs;
  for (const v1::ConfigObject& object : configs.objects()) {
    if (!object.has_multi_kueue_config()) continue;
    absl::StatusOr<core::MultiKueueConfigSpec> spec =
        api::MultiKueueConfigFromProto(object.multi_kueue_config());
    if (spec.ok()) new_configs[spec->name] = *std::move(spec);
  }

  bool changed = false;
  std::vector<std::shared_ptr<WorkerLink>> to_start;
  std::vector<std::shared_ptr<WorkerLink>> retired;
  {
    absl::MutexLock lock(&mu_);
    changed = new_configs != configs_;
    for (const auto& [name, entry] : new_checks) {
      auto it = checks_.find(name);
      if (it == checks_.end() || !(it->second.spec == entry.spec)) changed = true;
    }
    if (new_checks.size() != checks_.size()) changed = true;
    checks_ = std::move(new_checks);
    configs_ = std::move(new_configs);

    std::set<std::string> seen;
    for (const v1::ConfigObject& object : clusters.objects()) {
      if (!object.has_multi_kueue_cluster()) continue;
      const v1::MultiKueueCluster& cluster = object.multi_kueue_cluster();
      const std::string& name = cluster.metadata().name();
      seen.insert(name);
      if (std::optional<core::Condition> stored = ActiveOf(cluster.status().conditions())) {
        clusters_reported_.emplace(name, Reported{stored->status, stored->reason, stored->message});
      }
      ClusterEntry& entry = clusters_[name];
      // The files the spec names are read again at every sync: a rewritten kubeconfig or
      // credential makes a new connection, as Kueue's file watch does.
      ResolvedWorker resolved =
          ResolveWorker(cluster.spec(), options_.kubeconfig_dir, options_.kubeconfig_secrets_dir,
                        options_.read_secret);
      if (entry.fingerprint == resolved.fingerprint) {
        entry.object = cluster;
        continue;
      }
      changed = true;
      entry.object = cluster;
      entry.fingerprint = resolved.fingerprint;
      if (entry.link != nullptr) {
        entry.lost_without_link = entry.link->lost_since().value_or(clock_.Now());
        retired.push_back(std::move(entry.link));
      }
      entry.link.reset();
      if (!resolved.source.has_value()) {
        entry.state = Reported{false, resolved.reason, resolved.message};
        activity_dirty_ = true;
        continue;
      }
      if (resolved.source->address == options_.manager_address) {
        entry.state = Reported{false, std::string(core::kClusterBadKubeConfigReason),
                               absl::StrCat(resolved.source->address_field, ": \"",
                                            resolved.source->address, "\" is the manager itself")};
        activity_dirty_ = true;
        continue;
      }
      entry.state =
          Reported{false, std::string(core::kClusterClientConnectionFailedReason), "Connecting"};
      WorkerLink::Options link_options;
      link_options.origin = options_.settings.origin;
      link_options.call_timeout = options_.call_timeout;
      link_options.min_backoff = options_.min_backoff;
      link_options.max_backoff = options_.max_backoff;
      link_options.idle_timeout = options_.worker_idle_timeout;
      WorkerLink::Listener listener;
      listener.on_copy = [this](const std::string&, const std::string& key) { MarkDirty(key); };
      listener.on_connection = [this](const std::string& c, bool connected,
                                      const std::string& reason, const std::string& message) {
        OnConnection(c, connected, reason, message);
      };
      // Calls to it failed fast meanwhile (a copy not created, a write not made): every
      // workload gets a pass, as on a reconnect.
      listener.on_answering_again = [this](const std::string&) {
        absl::MutexLock lock(&mu_);
        MarkAllDirty();
      };
      entry.lost_without_link.reset();
      entry.link = std::make_shared<WorkerLink>(name, *std::move(resolved.source), clock_,
                                                link_options, std::move(listener));
      to_start.push_back(entry.link);
      activity_dirty_ = true;
    }
    for (auto it = clusters_.begin(); it != clusters_.end();) {
      if (seen.count(it->first) > 0) {
        ++it;
        continue;
      }
      changed = true;
      if (it->second.link != nullptr) retired.push_back(std::move(it->second.link));
      clusters_reported_.erase(it->first);
      it = clusters_.erase(it);
    }
    if (changed) {
      activity_dirty_ = true;
      MarkAllDirty();
    }
  }
  // Outside the lock: a link's listener takes it, and a retired link joins its thread.
  retired.clear();
  for (const std::shared_ptr<WorkerLink>& link : to_start) link->Start();
  return changed;
}

void DispatchController::ReportActivity() {
  std::vector<std::pair<std::string, Reported>> cluster_reports;
  std::vector<std::pair<std::string, Reported>> check_reports;
  {
    absl::MutexLock lock(&mu_);
    activity_dirty_ = false;
    std::map<std::string, core::MultiKueueClusterRuntime> runtimes;
    for (const auto& [name, entry] : clusters_) {
      absl::StatusOr<core::MultiKueueClusterSpec> spec =
          api::MultiKueueClusterFromProto(entry.object);
      core::MultiKueueClusterRuntime runtime;
      if (spec.ok()) runtime.spec = *std::move(spec);
      runtime.active = core::Condition{"Active", entry.state.active, entry.state.reason,
                                       entry.state.message, absl::InfinitePast()};
      runtimes[name] = std::move(runtime);
      auto reported = clusters_reported_.find(name);
      if (reported == clusters_reported_.end() || !(reported->second == entry.state)) {
        cluster_reports.emplace_back(name, entry.state);
      }
    }
    for (const auto& [name, entry] : checks_) {
      const core::CheckActivity activity =
          core::MultiKueueCheckActivity(entry.spec, configs_, runtimes);
      const Reported now{activity.active, activity.reason, activity.message};
      if (!entry.stored.has_value() || !(*entry.stored == now)) {
        check_reports.emplace_back(name, now);
      }
    }
  }
  for (const auto& [name, state] : cluster_reports) {
    v1::SetMultiKueueClusterActiveRequest request;
    request.set_name(name);
    request.set_active(state.active);
    request.set_reason(state.reason);
    request.set_message(state.message);
    absl::Status status = manager_.SetMultiKueueClusterActive(request).status();
    absl::MutexLock lock(&mu_);
    if (status.ok()) {
      clusters_reported_[name] = state;
    } else {
      activity_dirty_ = true;
      common::Log("warning", "cannot report a MultiKueueCluster's Active condition",
                  {{"cluster", name}, {"error", status.ToString()}});
    }
  }
  for (const auto& [name, state] : check_reports) {
    v1::SetAdmissionCheckActiveRequest request;
    request.set_name(name);
    request.set_active(state.active);
    request.set_reason(state.reason);
    request.set_message(state.message);
    absl::Status status = manager_.SetAdmissionCheckActive(request).status();
    absl::MutexLock lock(&mu_);
    if (status.ok()) {
      auto it = checks_.find(name);
      if (it != checks_.end()) it->second.stored = state;
    } else {
      activity_dirty_ = true;
      common::Log("warning", "cannot report an AdmissionCheck's Active condition",
                  {{"check", name}, {"error", status.ToString()}});
    }
  }
}

void DispatchController::ManagerWatchLoop(const common::StopSignal& stop) {
  int failures = 0;
  client::WatchCanceller canceller;
  const int callback = stop.AddCallback([&canceller] { canceller.Cancel(); });
  while (!stop.stopped()) {
    // From 0 each time: the listing's events bring every workload back after a disconnect.
    v1::WatchAdmissionChecksRequest request;
    request.set_controller_name(std::string(core::kMultiKueueControllerName));
    absl::Status watched = manager_.WatchAdmissionChecks(
        request,
        [&](const v1::WatchEvent& event) {
          failures = 0;
          if (event.type() == v1::WatchEvent::BOOKMARK || !event.has_workload()) {
            return !stop.stopped();
          }
          const std::string key = KeyOf(event.workload());
          absl::MutexLock lock(&mu_);
          if (event.type() == v1::WatchEvent::DELETED) {
            workloads_.erase(key);
            rounds_.erase(key);
          } else {
            std::string check;
            for (const v1::CheckControllerRef& ref : event.check_controllers()) {
              if (ref.controller_name() == core::kMultiKueueControllerName &&
                  ref.checks_size() > 0) {
                check = ref.checks(0);
              }
            }
            ManagedWorkload& managed = workloads_[key];
            // Never back to a revision older than the controller's own last write.
            if (managed.workload.metadata().resource_version() <=
                event.workload().metadata().resource_version()) {
              managed.workload = event.workload();
            }
            if (!check.empty()) managed.check = check;
          }
          dirty_.insert(key);
          // The other components of its object decide by this one (Kueue enqueues them).
          if (const std::string owner = ComponentOwnerOf(event.workload()); !owner.empty()) {
            for (const auto& [other_key, other] : workloads_) {
              if (other.workload.metadata().namespace_() ==
                      event.workload().metadata().namespace_() &&
                  ComponentOwnerOf(other.workload) == owner) {
                dirty_.insert(other_key);
              }
            }
          }
          return !stop.stopped();
        },
        &canceller);
    if (stop.stopped()) break;
    common::Log("warning", "manager admission check watch ended", {{"error", watched.ToString()}});
    if (!Backoff(failures++, options_.min_backoff, options_.max_backoff, stop)) break;
  }
  stop.RemoveCallback(callback);
}

bool DispatchController::ConfigSyncDue() const { return stopping_ || config_sync_wanted_; }

void DispatchController::SecretChanged(const std::string& secret) {
  absl::MutexLock lock(&mu_);
  if (!secret.empty()) {
    const bool named = std::any_of(clusters_.begin(), clusters_.end(), [&](const auto& entry) {
      const v1::MultiKueueClusterSpec& spec = entry.second.object.spec();
      return !spec.has_endpoint() && spec.kube_config().location_type() != "Path" &&
             spec.kube_config().location() == secret;
    });
    if (!named) return;
  }
  config_sync_wanted_ = true;
}

void DispatchController::ConfigLoop(const common::StopSignal& stop) {
  while (!stop.stopped()) {
    {
      absl::MutexLock lock(&mu_);
      mu_.AwaitWithTimeout(absl::Condition(this, &DispatchController::ConfigSyncDue),
                           options_.config_sync_period);
      if (stopping_) break;
      config_sync_wanted_ = false;
    }
    absl::StatusOr<bool> changed = SyncConfig();
    if (!changed.ok()) {
      common::Log("warning", "cannot read the MultiKueue configuration",
                  {{"error", changed.status().ToString()}});
    }
  }
}

void DispatchController::CollectGarbage() {
  v1::ListWorkloadsRequest request;
  absl::StatusOr<v1::ListWorkloadsResponse> listed = manager_.ListWorkloads(request);
  if (!listed.ok()) {
    common::Log("warning", "garbage collection cannot list the manager's workloads",
                {{"error", listed.status().ToString()}});
    return;
  }
  std::set<std::string> live;
  for (const v1::Workload& wl : listed->workloads()) {
    if (!wl.metadata().has_deletion_timestamp()) live.insert(KeyOf(wl));
  }
  std::vector<std::shared_ptr<WorkerLink>> links;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [name, entry] : clusters_) {
      if (entry.link != nullptr) links.push_back(entry.link);
    }
  }
  for (const std::shared_ptr<WorkerLink>& link : links) {
    if (!link->connected()) continue;
    std::vector<std::string> copies;
    std::map<std::string, v1::Workload> held = link->Copies();
    for (const auto& [key, unused] : held) copies.push_back(key);
    for (const std::string& key : core::GarbageCopies(copies, live)) {
      const v1::Workload& copy = held.at(key);
      absl::Status deleted = link->DeleteCopy(copy.metadata().namespace_(), copy.metadata().name());
      common::Log(deleted.ok() ? "info" : "warning", "garbage-collected a remote copy",
                  {{"cluster", link->cluster()},
                   {"workload", key},
                   {"error", deleted.ok() ? "" : deleted.ToString()}});
    }
  }
}

absl::Status DispatchController::UpdateCheck(
    const ManagedWorkload& managed, core::CheckState state, const std::string& message,
    const std::optional<std::string>& winner,
    const std::optional<std::vector<std::string>>& nominees,
    const std::optional<v1::WorkloadPayload>& job_status,
    const std::optional<std::vector<v1::MultiKueueRemoteState>>& remotes, bool remotes_only) {
  v1::UpdateAdmissionCheckStateRequest request;
  request.mutable_workload()->set_namespace_(managed.workload.metadata().namespace_());
  request.mutable_workload()->set_name(managed.workload.metadata().name());
  request.set_check(managed.check);
  request.set_state(CheckStateText(state));
  request.set_message(message);
  request.set_expected_revision(managed.workload.metadata().resource_version());
  if (winner.has_value()) request.set_cluster_name(*winner);
  if (nominees.has_value()) {
    request.set_set_nominated_cluster_names(true);
    for (const std::string& n : *nominees) request.add_nominated_cluster_names(n);
  }
  if (job_status.has_value()) *request.mutable_job_status() = *job_status;
  if (remotes.has_value()) {
    request.set_set_multi_kueue_remotes(true);
    for (const v1::MultiKueueRemoteState& remote : *remotes) {
      *request.add_multi_kueue_remotes() = remote;
    }
  }
  absl::StatusOr<v1::UpdateAdmissionCheckStateResponse> updated =
      manager_.UpdateAdmissionCheckState(request);
  if (!updated.ok()) return updated.status();
  // A write of the remote states alone: the next pass decides on it at once, not on the view
  // before it until the watch brings it (a decision on that stale view would have its write
  // refused after its changes on the workers were made: a copy removed, its Retry refused,
  // then "no longer exists"). The pass's other writes keep waiting for the watch, as before.
  if (!remotes_only) return absl::OkStatus();
  absl::MutexLock lock(&mu_);
  auto it = workloads_.find(KeyOf(updated->workload()));
  if (it != workloads_.end() && it->second.workload.metadata().resource_version() <
                                    updated->workload().metadata().resource_version()) {
    it->second.workload = updated->workload();
  }
  return absl::OkStatus();
}

absl::Status DispatchController::Nominate(
    const ManagedWorkload& managed, const std::vector<std::string>& config_clusters,
    const std::map<std::string, std::shared_ptr<WorkerLink>>& links, absl::Time now, bool* wrote) {
  const v1::Workload& wl = managed.workload;
  const std::string key = KeyOf(wl);
  core::NominationGate gate;
  gate.holds_quota = HoldsQuota(wl);
  gate.finished = wl.status().state() == v1::WORKLOAD_STATE_FINISHED;
  gate.check_state = CheckStateOf(wl, managed.check).value_or(core::CheckState::kPending);
  if (!wl.status().cluster_name().empty()) gate.cluster_name = wl.status().cluster_name();
  if (!core::MayNominate(gate)) return absl::OkStatus();

  core::NominationInput input;
  input.config_clusters = config_clusters;
  for (const auto& [name, link] : links) {
    if (link->connected()) input.connected.insert(name);
  }
  input.nominated.assign(wl.status().nominated_cluster_names().begin(),
                         wl.status().nominated_cluster_names().end());
  input.step_size = options_.settings.incremental_step_size;

  // One of several workloads of one object (a LeaderWorkerSet's groups): all on one worker.
  std::optional<core::ComponentDecision> component;
  if (!ComponentOwnerOf(wl).empty()) {
    absl::MutexLock lock(&mu_);
    std::vector<const v1::Workload*> all;
    all.reserve(workloads_.size());
    for (const auto& [other_key, other] : workloads_) all.push_back(&other.workload);
    component = api::ComponentDecisionFor(wl, all);
  }
  if (component.has_value()) {
    if (component->step == core::ComponentStep::kConflict) {
      return absl::FailedPreconditionError(absl::StrCat(key, ": ", component->message));
    }
    if (component->step == core::ComponentStep::kWaitForComponents ||
        component->step == core::ComponentStep::kWaitForPrimary) {
      // A change of another component (its creation, its admission on a worker) wakes this one.
      return absl::OkStatus();
    }
  }

  if (component.has_value() && component->step == core::ComponentStep::kFollow) {
    input.only_on = component->cluster;
  }
  // Copies only once every other check is Ready, and AllAtOnce's nominees too; that check's
  // change wakes us again.
  const bool others_ready =
      !core::FirstOtherCheckNotReady(CoreChecksOf(wl), managed.check).has_value();
  if (!others_ready && !core::NominatesBeforeOtherChecksReady(mode_, input.only_on.has_value())) {
    return absl::OkStatus();
  }
  {
    absl::MutexLock lock(&mu_);
    auto it = rounds_.find(key);
    if (it != rounds_.end()) input.round = it->second;
  }
  const core::Nomination nomination = core::Nominate(mode_, input, now);
  {
    absl::MutexLock lock(&mu_);
    if (nomination.new_round.has_value()) rounds_[key] = *nomination.new_round;
    if (nomination.recheck_at.has_value()) rechecks_[key] = *nomination.recheck_at;
  }
  if (nomination.changed) {
    *wrote = true;
    const v1::AdmissionCheckState* current = FindCheckState(wl, managed.check);
    TOLLGATE_RETURN_IF_ERROR(UpdateCheck(managed, gate.check_state,
                                         current != nullptr ? current->message() : "", std::nullopt,
                                         nomination.nominated));
  }
  if (!others_ready) return absl::OkStatus();
  std::set<std::string> with_copy;
  for (const auto& [name, link] : links) {
    if (link->connected() && link->Copy(key).has_value()) with_copy.insert(name);
  }
  const core::CopySync sync = core::SyncCopies(nomination.nominated, input.connected, with_copy);
  for (const std::string& cluster : sync.create) {
    absl::Status created = links.at(cluster)->CreateCopy(CopyOf(wl, options_.settings.origin));
    common::Log(created.ok() ? "info" : "warning", "created a remote copy",
                {{"cluster", cluster},
                 {"workload", key},
                 {"error", created.ok() ? "" : created.ToString()}});
  }
  for (const std::string& cluster : sync.remove) {
    TOLLGATE_RETURN_IF_ERROR(
        links.at(cluster)->DeleteCopy(wl.metadata().namespace_(), wl.metadata().name()));
  }
  return absl::OkStatus();
}

void DispatchController::Reconcile(const std::string& key) {
  const absl::Time now = clock_.Now();
  std::optional<ManagedWorkload> managed;
  std::vector<std::string> config_clusters;
  std::map<std::string, std::shared_ptr<WorkerLink>> links;
  std::string config_error;
  std::map<std::string, absl::Time> lost_without_link;
  {
    absl::MutexLock lock(&mu_);
    rechecks_.erase(key);
    auto it = workloads_.find(key);
    if (it != workloads_.end() && !it->second.check.empty()) {
      managed = it->second;
      auto check = checks_.find(managed->check);
      if (check != checks_.end()) {
        const core::ConfigLookup lookup = core::FindMultiKueueConfig(check->second.spec, configs_);
        if (lookup.config != nullptr) {
          config_clusters = lookup.config->clusters;
        } else {
          config_error = lookup.error.empty() ? "no MultiKueueConfig" : lookup.error;
        }
      } else {
        config_error = absl::StrCat("no AdmissionCheck ", managed->check);
      }
    }
    for (const auto& [name, entry] : clusters_) {
      if (entry.link != nullptr) {
        links[name] = entry.link;
      } else if (entry.lost_without_link.has_value()) {
        lost_without_link[name] = *entry.lost_without_link;
      }
    }
  }
  const size_t slash = key.find('/');
  const std::string ns = key.substr(0, slash);
  const std::string name = key.substr(slash + 1);
  if (!managed.has_value()) {
    // Gone on the manager (or never ours): its copies go at once; garbage collection catches
    // those on workers that are away.
    for (const auto& [cluster, link] : links) {
      if (!link->connected() || !link->Copy(key).has_value()) continue;
      absl::Status deleted = link->DeleteCopy(ns, name);
      // After a delay, not at once: a worker that does not answer fails the call at once
      // (WorkerLink), and marking it dirty again would spin the reconcile thread on it.
      if (!deleted.ok()) RecheckLater(key);
    }
    return;
  }
  if (!config_error.empty()) {
    // Without its config the workers of the check are unknown, so nothing is decided: Kueue's
    // reconciler fails to read the group and leaves the workload and its copies as they are
    // (an admitted workload is not retried for it). A change of the config wakes it again.
    common::Log("info", "MultiKueue config not loaded, workload left as it is",
                {{"workload", key}, {"error", config_error}});
    return;
  }
  const v1::Workload& wl = managed->workload;
  // What each worker holds, for describe (status.multi_kueue_remotes); written with the pass's
  // first write on the manager's workload, or alone when the pass writes nothing else.
  std::map<std::string, WorkerObservation> observed;
  for (const auto& [cluster, link] : links) {
    WorkerObservation& o = observed[cluster];
    o.connected = link->connected();
    if (o.connected) o.copy = link->Copy(key);
  }
  std::optional<std::vector<v1::MultiKueueRemoteState>> remotes;
  if (HoldsQuota(wl)) {
    std::vector<v1::MultiKueueRemoteState> seen = RemoteStatesOf(wl, observed);
    if (!SameRemoteStates(wl, seen)) remotes = std::move(seen);
  }
  bool wrote = false;
  std::map<std::string, core::WorkerView> workers;
  for (const std::string& cluster : config_clusters) {
    core::WorkerView view;
    auto link = links.find(cluster);
    if (link != links.end()) {
      view.connected = link->second->connected();
      view.lost_since = link->second->lost_since();
      if (view.connected) {
        if (std::optional<v1::Workload> copy = link->second->Copy(key)) {
          view.copy = RemoteCopyOf(*copy, wl);
        }
      }
    } else if (auto lost = lost_without_link.find(cluster); lost != lost_without_link.end()) {
      // Its kubeconfig turned bad: lost since the link it had was.
      view.lost_since = lost->second;
    } else {
      // No MultiKueueCluster, or never a link: Kueue has no client for it and counts it lost
      // since now at every look, so a winner there stays Ready until it is back.
      view.lost_since.reset();
    }
    workers[cluster] = std::move(view);
  }
  const core::LocalView local = LocalViewOf(wl, managed->check);
  const core::RemoteSyncPlan plan =
      core::PlanRemoteSync(local, workers, options_.settings.worker_lost_timeout, now);

  absl::Status failed;
  auto note = [&](absl::Status status) {
    if (!status.ok() && failed.ok()) failed = std::move(status);
  };
  if (plan.deactivate_remote.has_value()) {
    auto link = links.find(*plan.deactivate_remote);
    if (link != links.end() && link->second->connected()) {
      // The cause makes the worker evict the copy as Kueue's does:
      // DeactivatedDueToEvictedOnManagerCluster, "... due to Evicted on manager: ...".
      note(link->second->DeactivateCopy(ns, name, plan.deactivate_reason, plan.deactivate_message));
    }
  }
  // A payload that changed on the manager (a pod group's later pods) goes to every copy that
  // stays, nominees' and the winner's alike, as Kueue syncs the group's pods at each reconcile;
  // so does a new priority, which Kueue updates on the remote instead of removing the copy.
  if (local.holds_quota) {
    for (const auto& [cluster, link] : links) {
      if (!link->connected() || absl::c_linear_search(plan.remove_copies, cluster)) continue;
      std::optional<v1::Workload> copy = link->Copy(key);
      if (!copy.has_value()) continue;
      if (std::optional<int32_t> priority = PriorityToCarry(wl, *copy)) {
        absl::Status carried = link->ReprioritizeCopy(ns, name, *priority);
        common::Log(carried.ok() ? "info" : "warning", "carried the new priority to a remote copy",
                    {{"cluster", cluster},
                     {"workload", key},
                     {"priority", absl::StrCat(*priority)},
                     {"error", carried.ok() ? "" : carried.ToString()}});
        note(std::move(carried));
      }
      if (std::optional<v1::WorkloadPayload> payload = PayloadToCarry(wl, *copy)) {
        absl::Status carried = link->UpdateCopyPayload(*copy, *payload);
        common::Log(carried.ok() ? "info" : "warning", "carried the new payload to a remote copy",
                    {{"cluster", cluster},
                     {"workload", key},
                     {"error", carried.ok() ? "" : carried.ToString()}});
        note(std::move(carried));
      }
    }
  }
  // The winner's job status, mirrored with the check's state (before a finish, so the final
  // status reaches the manager's job).
  std::optional<v1::WorkloadPayload> mirror;
  if (plan.mirror_from.has_value() && local.holds_quota) {
    auto link = links.find(*plan.mirror_from);
    if (link != links.end() && link->second->connected()) {
      if (std::optional<v1::Workload> copy = link->second->Copy(key)) {
        mirror = JobStatusToMirror(wl, *copy);
      }
    }
  }
  const v1::AdmissionCheckState* current_check = FindCheckState(wl, managed->check);
  const std::string current_message =
      current_check != nullptr ? current_check->message() : std::string();
  if (mirror.has_value() && !plan.check.has_value()) {
    note(UpdateCheck(*managed, local.check_state, current_message, std::nullopt, std::nullopt,
                     mirror, std::exchange(remotes, std::nullopt)));
    wrote = true;
  }
  if (remotes.has_value() && plan.finish_local.has_value() && !wrote) {
    // Before the finish: a finished workload is dispatched nowhere and takes no more records.
    note(UpdateCheck(*managed, local.check_state, current_message, std::nullopt, std::nullopt,
                     std::nullopt, std::exchange(remotes, std::nullopt), /*remotes_only=*/true));
    wrote = true;
  }
  // Also while only reserved (Kueue finishes whatever the local state): a copy may finish on a
  // worker the manager could not see while it was admitted there, and the workload would
  // otherwise hold its quota here for good.
  if (plan.finish_local.has_value() && (wl.status().state() == v1::WORKLOAD_STATE_ADMITTED ||
                                        wl.status().state() == v1::WORKLOAD_STATE_QUOTA_RESERVED)) {
    v1::FinishRequest finish;
    finish.mutable_workload()->set_namespace_(ns);
    finish.mutable_workload()->set_name(name);
    finish.set_message(plan.finish_local->message.empty() ? plan.finish_local->reason
                                                          : plan.finish_local->message);
    finish.set_reason(FinishReasonOf(*plan.finish_local));
    note(manager_.Finish(finish).status());
  }
  std::optional<std::string> winner = local.cluster_name;
  bool check_recorded = true;
  if (plan.check.has_value()) {
    absl::Status updated = UpdateCheck(*managed, plan.check->state, plan.check->message,
                                       plan.set_cluster_name, std::nullopt, mirror,
                                       wrote ? std::nullopt : std::exchange(remotes, std::nullopt));
    wrote = true;
    check_recorded = updated.ok();
    if (updated.ok() && plan.set_cluster_name.has_value()) {
      common::Log("info", "workload admitted on a worker",
                  {{"workload", key}, {"cluster", *plan.set_cluster_name}});
      winner = plan.set_cluster_name;
    }
    note(std::move(updated));
  }
  // Copies go only once the transition that removes them is recorded (the winner, the Retry of
  // an evicted copy): a write that lost a race to a newer revision leaves them, so the next
  // reconcile decides on the same copies again, not on their absence.
  if (check_recorded) {
    for (const std::string& cluster : plan.remove_copies) {
      auto link = links.find(cluster);
      if (link != links.end() && link->second->connected()) {
        note(link->second->DeleteCopy(ns, name));
      }
    }
  }
  if (winner.has_value() && local.holds_quota) {
    // Exactly once: only the copy on the recorded winner is ever marked, and only after the
    // record; the worker's tollgate-kube creates the job for a marked copy alone.
    auto link = links.find(*winner);
    if (link != links.end() && link->second->connected()) {
      std::optional<v1::Workload> copy = link->second->Copy(key);
      v1::Workload recorded = wl;
      recorded.mutable_status()->set_cluster_name(*winner);
      if (copy.has_value() && NeedsWinnerMark(recorded, *winner, *copy)) {
        absl::Status marked = link->second->MarkWinner(ns, name);
        common::Log(marked.ok() ? "info" : "warning", "marked the winning copy",
                    {{"cluster", *winner},
                     {"workload", key},
                     {"error", marked.ok() ? "" : marked.ToString()}});
        note(std::move(marked));
      }
    }
  }
  if (plan.recheck_at.has_value()) {
    absl::MutexLock lock(&mu_);
    rechecks_[key] = *plan.recheck_at;
  }
  if (plan.nominate) note(Nominate(*managed, config_clusters, links, now, &wrote));
  if (remotes.has_value() && !wrote && local.holds_quota) {
    note(UpdateCheck(*managed, local.check_state, current_message, std::nullopt, std::nullopt,
                     std::nullopt, std::move(remotes), /*remotes_only=*/true));
  }
  if (!local.holds_quota) {
    // Not this controller's concern any more once its copies are gone: forgotten, so finished
    // workloads do not pile up (a new reservation brings it back through the watch).
    bool copies_left = false;
    for (const auto& [cluster, link] : links) {
      copies_left = copies_left || !link->connected() || link->Copy(key).has_value();
    }
    absl::MutexLock lock(&mu_);
    rounds_.erase(key);
    auto it = workloads_.find(key);
    if (!copies_left && failed.ok() && it != workloads_.end() &&
        it->second.workload.metadata().resource_version() == wl.metadata().resource_version()) {
      workloads_.erase(it);
    }
  }
  if (!failed.ok()) {
    // A stale revision is answered by the watch's next event; anything else is tried again
    // after a short delay.
    if (!absl::IsFailedPrecondition(failed)) {
      common::Log("warning", "multikueue reconcile failed",
                  {{"workload", key}, {"error", failed.ToString()}});
      RecheckLater(key);
    }
  }
}

bool DispatchController::HasWork() const { return stopping_ || !dirty_.empty() || activity_dirty_; }

void DispatchController::ReconcileLoop(const common::StopSignal& stop) {
  absl::Time next_gc = options_.settings.gc_interval > absl::ZeroDuration()
                           ? clock_.Now() + options_.settings.gc_interval
                           : absl::InfiniteFuture();
  while (!stop.stopped()) {
    std::vector<std::string> keys;
    bool report = false;
    {
      absl::MutexLock lock(&mu_);
      absl::Time wake = next_gc;
      for (const auto& [key, at] : rechecks_) wake = std::min(wake, at);
      const absl::Time now = clock_.Now();
      if (wake > now) {
        mu_.AwaitWithDeadline(absl::Condition(this, &DispatchController::HasWork), wake);
      }
      if (stopping_) break;
      const absl::Time after = clock_.Now();
      for (const auto& [key, at] : rechecks_) {
        if (at <= after) dirty_.insert(key);
      }
      keys.assign(dirty_.begin(), dirty_.end());
      dirty_.clear();
      report = activity_dirty_;
    }
    if (report) ReportActivity();
    for (const std::string& key : keys) Reconcile(key);
    if (clock_.Now() >= next_gc) {
      CollectGarbage();
      next_gc = clock_.Now() + options_.settings.gc_interval;
    }
  }
}

void DispatchController::Run(const common::StopSignal& stop) {
  absl::StatusOr<bool> first = SyncConfig();
  if (!first.ok()) {
    common::Log("warning", "cannot read the MultiKueue configuration",
                {{"error", first.status().ToString()}});
  }
  const int callback = stop.AddCallback([this] {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  });
  std::vector<std::thread> threads;
  threads.emplace_back([this, &stop] { ManagerWatchLoop(stop); });
  threads.emplace_back([this, &stop] { ConfigLoop(stop); });
  threads.emplace_back([this, &stop] { ReconcileLoop(stop); });
  for (std::thread& t : threads) t.join();
  stop.RemoveCallback(callback);
}

}  // namespace tollgate::multikueue
