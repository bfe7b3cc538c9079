#include "adapters/kube/provisioning_controller.h"

#include <algorithm>
#include <thread>

#include "absl/strings/str_cat.h"
#include "common/json_log.h"
#include "core/status_macros.h"
#include "services/kubeapi/informer.h"
#include "services/manifest/admission_enactment.h"
#include "services/manifest/pod_set_info.h"

namespace tollgate::kube {
namespace {

namespace prov = provisioning;

// Work queue keys name workloads.
constexpr char kWorkloadResource[] = "workloads";

bool HoldsQuota(const v1::Workload& wl) {
  return wl.status().state() == v1::WORKLOAD_STATE_QUOTA_RESERVED ||
         wl.status().state() == v1::WORKLOAD_STATE_ADMITTED;
}

}  // namespace

ProvisioningController::ProvisioningController(kubeapi::KubeClient& kube,
                                               client::AdmissionClient& admission,
                                               const JobController& jobs, const core::Clock& clock,
                                               Options options)
    : kube_(kube),
      admission_(admission),
      jobs_(jobs),
      clock_(clock),
      options_(options),
      queue_(clock, options.min_backoff, options.max_backoff) {}

bool ProvisioningController::Backoff(int failures, const common::StopSignal& stop) const {
  return kubeapi::WaitBackoff(failures, options_.min_backoff, options_.max_backoff, stop);
}

void ProvisioningController::EnqueueWorkload(const std::string& ns, const std::string& name) {
  if (ns.empty() || name.empty()) return;
  queue_.Add(ObjectKey{kWorkloadResource, ns, name});
}

absl::StatusOr<bool> ProvisioningController::SyncChecks() {
  v1::ListObjectsRequest list;
  list.set_kind(v1::ADMISSION_CHECK);
  TOLLGATE_ASSIGN_OR_RETURN(v1::ListObjectsResponse checks, admission_.ListObjects(list));
  std::map<std::string, CheckConfig> fresh;
  for (const v1::ConfigObject& object : checks.objects()) {
    const v1::AdmissionCheck& check = object.admission_check();
    if (check.spec().controller_name() != prov::kControllerName) continue;
    CheckConfig& entry = fresh[check.metadata().name()];
    absl::StatusOr<std::string> config_name = prov::ConfigNameOf(check.spec());
    if (!config_name.ok()) {
      entry.config = config_name.status();
    } else {
      absl::StatusOr<Json> obj =
          kube_.Get(prov::ProvisioningRequestConfigResource(), "", *config_name);
      if (obj.ok()) {
        entry.config = prov::ParseConfig(*obj);
      } else if (absl::IsNotFound(obj.status())) {
        // Kueue's message: the API server's own.
        entry.config = absl::NotFoundError(absl::StrCat(
            "provisioningrequestconfigs.kueue.x-k8s.io \"", *config_name, "\" not found"));
      } else {
        return obj.status();
      }
    }
    const prov::Activation activation = prov::ActivationFor(entry.config.status());
    if (!prov::ActivationIsCurrent(check, activation)) {
      v1::SetAdmissionCheckActiveRequest request;
      request.set_name(check.metadata().name());
      request.set_active(activation.active);
      request.set_reason(activation.reason);
      request.set_message(activation.message);
      TOLLGATE_RETURN_IF_ERROR(admission_.SetAdmissionCheckActive(request).status());
      common::Log("info", "admission check activity set",
                  {{"check", check.metadata().name()},
                   {"active", activation.active ? "true" : "false"},
                   {"reason", activation.reason},
                   {"message", activation.message}});
    }
  }
  auto describe = [](const std::map<std::string, CheckConfig>& checks) {
    std::string out;
    for (const auto& [name, entry] : checks) {
      absl::StrAppend(&out, name, "=", entry.config.status().ToString(), ";");
      if (entry.config.ok()) {
        const prov::Config& c = *entry.config;
        absl::StrAppend(&out, c.name, ",", c.provisioning_class_name, ",", c.backoff_limit_count,
                        ",", c.backoff_base_seconds, ",", c.backoff_max_seconds, ",",
                        c.managed_resources.size(), ",", c.node_selector_updates.size(), ",",
                        static_cast<int>(c.merge_policy));
        for (const auto& [k, v] : c.parameters) absl::StrAppend(&out, ",", k, "=", v);
      }
    }
    return out;
  };
  absl::MutexLock lock(&mu_);
  const bool changed = describe(fresh) != describe(checks_);
  checks_ = std::move(fresh);
  checks_synced_ = true;
  return changed;
}

absl::StatusOr<std::vector<Json>> ProvisioningController::RequestsOf(const std::string& ns,
                                                                     const std::string& name) {
  std::vector<Json> out;
  absl::StatusOr<kubeapi::ListResult> list = kube_.List(prov::ProvisioningRequestResource(), ns);
  if (absl::IsNotFound(list.status())) return out;  // The CRD is not installed.
  if (!list.ok()) return list.status();
  for (Json& request : list->items) {
    if (manifest::GetString(request, {"metadata", "annotations", prov::kWorkloadAnnotation}) ==
        name) {
      out.push_back(std::move(request));
    }
  }
  return out;
}

absl::Status ProvisioningController::DeleteRequest(const std::string& ns, const Json& request) {
  const std::string name = manifest::GetString(request, {"metadata", "name"});
  absl::Status deleted = kube_.Delete(prov::ProvisioningRequestResource(), ns, name);
  if (!deleted.ok() && !absl::IsNotFound(deleted)) return deleted;
  // Kueue leaves the PodTemplates to the garbage collector through their owner reference;
  // deleting them here does not depend on one.
  if (const Json* pod_sets = manifest::Find(request, {"spec", "podSets"});
      pod_sets != nullptr && pod_sets->is_array()) {
    for (const Json& ps : *pod_sets) {
      absl::Status gone = kube_.Delete(prov::PodTemplateResource(), ns,
                                       manifest::GetString(ps, {"podTemplateRef", "name"}));
      if (!gone.ok() && !absl::IsNotFound(gone)) return gone;
    }
  }
  common::Log("info", "provisioning request deleted", {{"namespace", ns}, {"name", name}});
  return absl::OkStatus();
}

absl::StatusOr<ProvisioningController::JobView> ProvisioningController::ReadJob(
    const v1::Workload& wl) {
  const std::string& ns = wl.metadata().namespace_();
  std::optional<ObjectKey> owner = jobs_.OwnerOf(ns, wl.metadata().name());
  if (!owner.has_value()) {
    return absl::UnavailableError(absl::StrCat("the job of workload ", ns, "/",
                                               wl.metadata().name(), " has not been seen yet"));
  }
  const manifest::JobKindTranslator* translator = jobs_.TranslatorFor(owner->resource);
  if (translator == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat("no translator for ", owner->resource));
  }
  TOLLGATE_ASSIGN_OR_RETURN(Json job, kube_.Get(translator->resource(), ns, owner->name));
  TOLLGATE_ASSIGN_OR_RETURN(Json original, manifest::RestoreOriginalFields(job));
  manifest::FlavorMap flavors;
  for (const std::string& name : manifest::AssignedFlavors(wl.status().admission())) {
    v1::ObjectRef ref;
    ref.set_kind(v1::RESOURCE_FLAVOR);
    ref.set_name(name);
    TOLLGATE_ASSIGN_OR_RETURN(v1::ConfigObject flavor, admission_.GetObject(ref));
    flavors[name] = flavor.resource_flavor();
  }
  // The templates as the pods will run: the flavors' node selectors and tolerations applied
  // (not the checks' podSetUpdates: this check is one of them, and Kueue leaves them out too).
  TOLLGATE_ASSIGN_OR_RETURN(
      std::vector<manifest::PodSetInfo> infos,
      manifest::PodSetInfosFromAdmission(wl.status().admission(), flavors, {}));
  TOLLGATE_ASSIGN_OR_RETURN(
      Json placed, manifest::ApplyAdmission(*translator, original, infos,
                                            manifest::AdmissionFingerprint(wl.status().admission()),
                                            jobs_.lookup()));
  TOLLGATE_ASSIGN_OR_RETURN(std::vector<manifest::PodSetSource> sources,
                            translator->PodSets(placed, jobs_.lookup()));
  JobView view;
  for (manifest::PodSetSource& source : sources) {
    view.pod_templates[source.name] = std::move(source.pod_template);
  }
  if (const Json* annotations = manifest::Find(job, {"metadata", "annotations"});
      annotations != nullptr && annotations->is_object()) {
    for (const auto& [key, value] : annotations->items()) {
      if (value.is_string()) view.annotations[key] = value.get<std::string>();
    }
  }
  view.owner = {{"apiVersion", translator->resource().ApiVersion()},
                {"kind", translator->resource().kind},
                {"name", owner->name},
                {"uid", manifest::GetString(job, {"metadata", "uid"})}};
  return view;
}

absl::Status ProvisioningController::CreateRequest(const v1::Workload& wl, const std::string& check,
                                                   int32_t attempt, const prov::Config& config) {
  TOLLGATE_ASSIGN_OR_RETURN(JobView job, ReadJob(wl));
  TOLLGATE_ASSIGN_OR_RETURN(prov::RequestObjects objects,
                            prov::BuildRequest(wl, check, attempt, config, job.pod_templates,
                                               job.annotations, job.owner));
  const std::string& ns = wl.metadata().namespace_();
  // Templates first: the autoscaler reads them as soon as it sees the request.
  for (const Json& pod_template : objects.pod_templates) {
    absl::Status created = kube_.Create(prov::PodTemplateResource(), ns, pod_template).status();
    if (!created.ok() && !absl::IsAlreadyExists(created)) return created;
  }
  absl::Status created =
      kube_.Create(prov::ProvisioningRequestResource(), ns, objects.request).status();
  if (absl::IsAlreadyExists(created)) return absl::OkStatus();
  if (!created.ok()) return created;
  common::Log("info", "provisioning request created",
              {{"namespace", ns},
               {"name", manifest::GetString(objects.request, {"metadata", "name"})},
               {"workload", wl.metadata().name()}});
  return absl::OkStatus();
}

absl::Status ProvisioningController::Reconcile(const std::string& ns, const std::string& name) {
  std::map<std::string, CheckConfig> checks;
  {
    absl::MutexLock lock(&mu_);
    if (!checks_synced_) {
      return absl::UnavailableError("the provisioning admission checks have not been read yet");
    }
    checks = checks_;
  }
  for (int round = 0;; ++round) {
    v1::WorkloadRef ref;
    ref.set_namespace_(ns);
    ref.set_name(name);
    absl::StatusOr<v1::Workload> read = admission_.GetWorkload(ref);
    if (!read.ok() && !absl::IsNotFound(read.status())) return read.status();
    TOLLGATE_ASSIGN_OR_RETURN(std::vector<Json> requests, RequestsOf(ns, name));
    if (!read.ok() || !HoldsQuota(*read)) {
      // Finished, evicted or gone: the capacity is not needed any more.
      for (const Json& request : requests) TOLLGATE_RETURN_IF_ERROR(DeleteRequest(ns, request));
      if (!read.ok()) {
        absl::MutexLock lock(&mu_);
        known_[ns].erase(name);
      }
      return absl::OkStatus();
    }
    v1::Workload wl = *std::move(read);

    struct Step {
      std::string check;
      const prov::Config* config;
      prov::CheckPlan plan;
    };
    std::vector<Step> steps;
    std::vector<prov::CheckPlan> plans;
    for (const v1::AdmissionCheckState& state : wl.status().admission_checks()) {
      auto it = checks.find(state.name());
      if (it == checks.end()) continue;
      const prov::Config* config = it->second.config.ok() ? &*it->second.config : nullptr;
      TOLLGATE_ASSIGN_OR_RETURN(prov::CheckPlan plan, prov::PlanCheck(wl, state, config, requests));
      plans.push_back(plan);
      steps.push_back({state.name(), config, std::move(plan)});
    }

    bool stale = false;
    for (const Step& step : steps) {
      if (!step.plan.update.has_value()) continue;
      const prov::CheckUpdate& update = *step.plan.update;
      v1::UpdateAdmissionCheckStateRequest request;
      *request.mutable_workload() = ref;
      request.set_check(step.check);
      request.set_state(update.state);
      request.set_message(update.message);
      if (update.requeue_after_seconds.has_value()) {
        request.set_requeue_after_seconds(*update.requeue_after_seconds);
      }
      for (const v1::PodSetUpdate& u : update.pod_set_updates) *request.add_pod_set_updates() = u;
      request.set_expected_revision(wl.metadata().resource_version());
      absl::StatusOr<v1::UpdateAdmissionCheckStateResponse> answer =
          admission_.UpdateAdmissionCheckState(request);
      if (absl::IsFailedPrecondition(answer.status())) {
        stale = true;
        break;
      }
      if (!answer.ok()) return answer.status();
      common::Log("info", "admission check state set",
                  {{"workload", absl::StrCat(ns, "/", name)},
                   {"check", step.check},
                   {"state", update.state},
                   {"message", update.message}});
      wl = answer->workload();
    }
    if (stale) {
      // The workload changed since it was read: decide again on what it is now.
      if (round + 1 >= options_.max_stale_retries) {
        return absl::AbortedError(absl::StrCat("workload ", ns, "/", name,
                                               " kept changing while its checks were decided"));
      }
      continue;
    }
    if (!HoldsQuota(wl)) {
      for (const Json& request : requests) TOLLGATE_RETURN_IF_ERROR(DeleteRequest(ns, request));
      return absl::OkStatus();
    }
    for (const std::string& unused : prov::UnusedRequests(requests, plans)) {
      for (const Json& request : requests) {
        if (manifest::GetString(request, {"metadata", "name"}) == unused) {
          TOLLGATE_RETURN_IF_ERROR(DeleteRequest(ns, request));
        }
      }
    }
    for (const Step& step : steps) {
      if (!step.plan.create_attempt.has_value() || step.config == nullptr) continue;
      TOLLGATE_RETURN_IF_ERROR(
          CreateRequest(wl, step.check, *step.plan.create_attempt, *step.config));
    }
    return absl::OkStatus();
  }
}

void ProvisioningController::WatchLoop(const common::StopSignal& stop) {
  int failures = 0;
  while (!stop.stopped()) {
    // From 0 every time: the listing's ADDED events queue every workload again, so nothing
    // missed while disconnected is lost.
    v1::WatchAdmissionChecksRequest request;
    request.set_controller_name(std::string(prov::kControllerName));
    absl::Status watched = admission_.WatchAdmissionChecks(
        request,
        [&](const v1::WatchEvent& event) {
          failures = 0;
          if (event.type() == v1::WatchEvent::BOOKMARK) return !stop.stopped();
          const v1::ObjectMeta& meta = event.workload().metadata();
          {
            absl::MutexLock lock(&mu_);
            known_[meta.namespace_()].insert(meta.name());
          }
          EnqueueWorkload(meta.namespace_(), meta.name());
          return !stop.stopped();
        },
        stop);
    if (stop.stopped()) break;
    common::Log("warning", "admission check watch ended", {{"error", watched.ToString()}});
    if (!Backoff(failures++, stop)) break;
  }
}

void ProvisioningController::RequestInformer(const common::StopSignal& stop) {
  auto enqueue = [&](const Json& request) {
    EnqueueWorkload(
        manifest::GetString(request, {"metadata", "namespace"}),
        manifest::GetString(request, {"metadata", "annotations", prov::kWorkloadAnnotation}));
  };
  kubeapi::InformerHandlers handlers;
  handlers.on_list = [&](const std::vector<Json>& requests) {
    for (const Json& request : requests) enqueue(request);
  };
  handlers.on_event = [&](const kubeapi::WatchEvent& event) { enqueue(event.object); };
  kubeapi::InformerOptions informer;
  informer.min_backoff = options_.min_backoff;
  informer.max_backoff = options_.max_backoff;
  informer.what = "provisioning request";
  kubeapi::RunInformer(kube_, prov::ProvisioningRequestResource(), handlers, clock_, informer,
                       stop);
}

void ProvisioningController::ChecksLoop(const common::StopSignal& stop) {
  do {
    absl::StatusOr<bool> changed = SyncChecks();
    if (!changed.ok()) {
      common::Log("warning", "cannot sync provisioning admission checks",
                  {{"error", changed.status().ToString()}});
      continue;
    }
    if (!*changed) continue;
    std::vector<std::pair<std::string, std::string>> all;
    {
      absl::MutexLock lock(&mu_);
      for (const auto& [ns, names] : known_) {
        for (const std::string& n : names) all.emplace_back(ns, n);
      }
    }
    for (const auto& [ns, n] : all) EnqueueWorkload(ns, n);
  } while (!stop.WaitFor(options_.check_sync_period));
}

void ProvisioningController::WorkerLoop() {
  DrainWorkQueue(
      queue_, [this](const ObjectKey& key) { return Reconcile(key.ns, key.name); },
      "provisioning reconcile");
}

void ProvisioningController::Run(const common::StopSignal& stop) {
  // The checks first, so the first workloads are decided with their configs.
  absl::StatusOr<bool> first = SyncChecks();
  if (!first.ok()) {
    common::Log("warning", "cannot sync provisioning admission checks",
                {{"error", first.status().ToString()}});
  }
  std::vector<std::thread> threads;
  threads.emplace_back([this, &stop] { ChecksLoop(stop); });
  threads.emplace_back([this, &stop] { WatchLoop(stop); });
  threads.emplace_back([this, &stop] { RequestInformer(stop); });
  threads.emplace_back([this] { WorkerLoop(); });
  stop.WaitFor(absl::InfiniteDuration());
  queue_.ShutDown();
  for (std::thread& t : threads) t.join();
}

}  // namespace tollgate::kube
