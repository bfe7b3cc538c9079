#include "services/sim/scenario_runner.h"

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/civil_time.h"
#include "core/clock.h"
#include "core/quantity.h"
#include "core/status_macros.h"
#include "google/protobuf/util/time_util.h"
#include "services/engine/admission_executor.h"
#include "services/engine/config_objects.h"
#include "services/engine/tollgate_api.h"
#include "services/sim/multikueue_sim.h"
#include "storage/rocksdb_store.h"
#include "storage/store.h"

namespace tollgate::sim {
namespace {

using google::protobuf::util::TimeUtil;

absl::Time ScenarioEpoch() {
  return absl::FromCivil(absl::CivilSecond(2026, 1, 1, 0, 0, 0), absl::UTCTimeZone());
}

// A temporary directory removed when the scenario ends.
class TempDir {
 public:
  static absl::StatusOr<TempDir> Create() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "tollgate-scenario-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
      return absl::InternalError(
          absl::StrCat("cannot create a temporary directory from ", pattern));
    }
    return TempDir(pattern);
  }
  TempDir(TempDir&& other) noexcept : path_(std::exchange(other.path_, "")) {}
  ~TempDir() {
    if (path_.empty()) return;
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  explicit TempDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

std::string StateName(v1::WorkloadState state) {
  switch (state) {
    case v1::WORKLOAD_STATE_PENDING:
      return "pending";
    case v1::WORKLOAD_STATE_ADMITTED:
      return "admitted";
    case v1::WORKLOAD_STATE_QUOTA_RESERVED:
      return "quota reserved";
    case v1::WORKLOAD_STATE_EVICTING:
      return "evicting";
    case v1::WORKLOAD_STATE_FINISHED:
      return "finished";
    default:
      return "unknown";
  }
}

std::string Quote(absl::string_view s) { return absl::StrCat("\"", s, "\""); }

// A step expected to be refused with a message containing `refused`: "" when it was, else what
// happened instead (`accepted` names what the step did when it was not refused).
std::string RefusalMismatch(absl::string_view what, const absl::Status& status,
                            absl::string_view refused, absl::string_view accepted) {
  if (status.ok()) {
    return absl::StrCat("expected ", what, " refused with ", Quote(refused), ", but it was ",
                        accepted);
  }
  if (status.message().find(refused) == absl::string_view::npos) {
    return absl::StrCat("expected ", what, " refused with ", Quote(refused), ", saw ",
                        Quote(status.message()));
  }
  return "";
}

std::string SetString(const std::set<std::string>& names) {
  return absl::StrCat("[", absl::StrJoin(names, ", "), "]");
}

// The service a scenario talks to: the executor and the API over one store, which a `restart`
// step stops and opens again on the same store, as a restarted tollgated does.
class ScenarioService {
 public:
  ScenarioService(storage::Store& store, core::SimulatedClock& clock, core::SchedulerConfig config)
      : store_(store), clock_(clock), config_(std::move(config)) {}

  absl::Status Start() {
    // The executor first: it stops before the API whose objects its queued operations use.
    executor_.reset();
    api_.reset();
    engine::AdmissionExecutor::Options options;
    options.schedule_continuously = false;
    TOLLGATE_ASSIGN_OR_RETURN(executor_,
                              engine::AdmissionExecutor::Open(store_, clock_, config_, options));
    api_ = std::make_unique<engine::TollgateApi>(*executor_);
    return absl::OkStatus();
  }
  engine::TollgateApi& api() { return *api_; }

 private:
  storage::Store& store_;
  core::SimulatedClock& clock_;
  const core::SchedulerConfig config_;
  // Destroyed in reverse: the executor stops before the API goes.
  std::unique_ptr<engine::TollgateApi> api_;
  std::unique_ptr<engine::AdmissionExecutor> executor_;
};

// Runs one scenario; every method returns the failure text ("" when fine) of its step.
class Run {
 public:
  Run(const Scenario& scenario, core::SimulatedClock& clock, ScenarioService& service)
      : scenario_(scenario), clock_(clock), service_(service) {
    if (scenario.multi_kueue.has_value()) {
      multi_kueue_ = std::make_unique<MultiKueueSim>(clock, scenario.config.multi_kueue,
                                                     scenario.multi_kueue->workers);
    }
  }

  ScenarioResult Execute() {
    ScenarioResult result;
    result.name = scenario_.name;
    for (size_t i = 0; i < scenario_.objects.size(); ++i) {
      if (std::string error = ApplyManifest(scenario_.objects[i]); !error.empty()) {
        result.failure = absl::StrCat("objects[", i, "]: ", error);
        return result;
      }
    }
    if (std::string error = UpsertNodes(scenario_.nodes); !error.empty()) {
      result.failure = error;
      return result;
    }
    if (std::string error = RunMultiKueue(); !error.empty()) {
      result.failure = absl::StrCat("objects: ", error);
      return result;
    }
    for (const Step& step : scenario_.steps) {
      std::string error = RunStep(step);
      // The MultiKueue controller answers whatever the step changed.
      if (error.empty() && step.kind != StepKind::kExpect) error = RunMultiKueue();
      if (!error.empty()) {
        result.failure =
            absl::StrCat("step ", step.index, " (", StepKindName(step.kind), "): ", error);
        return result;
      }
    }
    result.passed = true;
    return result;
  }

 private:
  std::string RunStep(const Step& step) {
    switch (step.kind) {
      case StepKind::kSubmit:
        for (const SubmitItem& item : step.submit) Submit(item);
        return "";
      case StepKind::kApply:
        for (const manifest::Manifest& m : step.apply) {
          if (std::string error = ApplyManifest(m); !error.empty()) return error;
        }
        return "";
      case StepKind::kDelete:
        return Delete(step.del);
      case StepKind::kSettle:
        return Settle();
      case StepKind::kAdvance:
        return Advance(step.advance);
      case StepKind::kFinish:
        return ForEachWorkload(step.workload_names, [this](const v1::WorkloadRef& ref) {
          v1::FinishRequest request;
          *request.mutable_workload() = ref;
          return api().Finish(request).status();
        });
      case StepKind::kPodsReady:
        return ForEachWorkload(step.workload_names, [this](const v1::WorkloadRef& ref) {
          v1::ReportPodsReadyRequest request;
          *request.mutable_workload() = ref;
          return api().ReportPodsReady(request).status();
        });
      case StepKind::kPodsNotReady:
        return ForEachWorkload(step.workload_names, [this](const v1::WorkloadRef& ref) {
          v1::ReportPodsReadyRequest request;
          *request.mutable_workload() = ref;
          request.set_ready(false);
          return api().ReportPodsReady(request).status();
        });
      case StepKind::kStopped:
        return ForEachWorkload(step.workload_names, [this](const v1::WorkloadRef& ref) {
          v1::ReportStoppedRequest request;
          *request.mutable_workload() = ref;
          return api().ReportStopped(request).status();
        });
      case StepKind::kExpect:
        return Expect(step.expect);
      case StepKind::kPreempt:
        return ForEachWorkload(step.workload_names, [this](const v1::WorkloadRef& ref) {
          v1::PreemptRequest request;
          *request.mutable_workload() = ref;
          return api().Preempt(request).status();
        });
      case StepKind::kDeactivate:
      case StepKind::kActivate:
        return ForEachWorkload(step.workload_names, [this, &step](const v1::WorkloadRef& ref) {
          v1::SetWorkloadActiveRequest request;
          *request.mutable_workload() = ref;
          request.set_active(step.kind == StepKind::kActivate);
          return api().SetWorkloadActive(request).status();
        });
      case StepKind::kReclaimablePods:
        // --- Job kinds: the adapter's report of pods a running job no longer needs.
        for (const auto& [name, pods] : step.reclaimable_pods) {
          std::string error = ForEachWorkload({name}, [this, &pods](const v1::WorkloadRef& ref) {
            v1::ReportReclaimablePodsRequest request;
            *request.mutable_workload() = ref;
            for (const auto& [pod_set, count] : pods) {
              v1::ReclaimablePod* p = request.add_reclaimable_pods();
              p->set_name(pod_set);
              p->set_count(count);
            }
            return api().ReportReclaimablePods(request).status();
          });
          if (!error.empty()) return error;
        }
        return "";
      case StepKind::kReprioritize:
        for (const auto& [name, priority] : step.priorities) {
          std::string error =
              ForEachWorkload({name}, [this, p = priority](const v1::WorkloadRef& ref) {
                v1::ReprioritizeRequest request;
                *request.mutable_workload() = ref;
                request.set_priority(p);
                return api().Reprioritize(request).status();
              });
          if (!error.empty()) return error;
        }
        return "";
      case StepKind::kHold:
      case StepKind::kRelease:
      case StepKind::kOutOfSync:
      case StepKind::kPodsMissing:
      case StepKind::kPodsReplaced:
      case StepKind::kBindOwner:
        return RunJobReport(step);
      case StepKind::kAdmissionGates:
        return RunAdmissionGates(step);
      case StepKind::kPriorityBoost:
        return RunPriorityBoost(step);
      case StepKind::kStop:
      case StepKind::kResume:
        for (const ObjectRef& ref : step.del) {
          v1::SetStopPolicyRequest request;
          request.mutable_ref()->set_kind(*engine::ConfigKindNamed(ref.kind));
          request.mutable_ref()->set_name(ref.name);
          request.mutable_ref()->set_namespace_(ref.ns);
          request.set_stop_policy(step.kind == StepKind::kResume ? "None"
                                  : ref.drain                    ? "HoldAndDrain"
                                                                 : "Hold");
          absl::Status status = api().SetStopPolicy(request).status();
          if (!status.ok()) {
            return absl::StrCat(StepKindName(step.kind), " ", ref.kind, " ", ref.name, ": ",
                                status.message());
          }
        }
        return "";
      case StepKind::kSetCheck:
        return SetChecks(step.check_updates);
      case StepKind::kActivateChecks:
      case StepKind::kDeactivateChecks:
        return SetChecksActive(step.workload_names, step.kind == StepKind::kActivateChecks);
      // --- Restart (issue 25).
      case StepKind::kRestart:
        if (absl::Status status = service_.Start(); !status.ok()) {
          return absl::StrCat("restart: ", status.message());
        }
        return "";
      // --- Topology (issue 28).
      case StepKind::kNodes:
      case StepKind::kDeleteNodes:
      case StepKind::kReportPods:
      case StepKind::kRemovePods:
        return RunTopologyStep(step);
      // --- MultiKueue.
      case StepKind::kRemoteAdmit:
      case StepKind::kRemoteEvict:
      case StepKind::kRemoteFinish:
      case StepKind::kRemoteDelete:
        return ReportRemote(step);
      case StepKind::kConnectWorkers:
      case StepKind::kDisconnectWorkers:
        for (const std::string& worker : step.names) {
          if (step.kind == StepKind::kConnectWorkers) {
            multi_kueue_->Connect(worker);
          } else {
            multi_kueue_->Disconnect(worker);
          }
        }
        return "";
    }
    return "unknown step";
  }

  // --- MultiKueue (docs/scenario-format.md, "MultiKueue") ----------------------------------------

  // A pass of the simulated controller, when the scenario has one.
  std::string RunMultiKueue() {
    if (multi_kueue_ == nullptr) return "";
    absl::Status status = multi_kueue_->Run(api());
    return status.ok() ? "" : absl::StrCat("MultiKueue controller: ", status.message());
  }

  std::string ReportRemote(const Step& step) {
    for (const RemoteReport& report : step.remote_reports) {
      absl::StatusOr<std::string> key = Resolve(report.workload);
      if (!key.ok()) return std::string(key.status().message());
      absl::Status status;
      switch (step.kind) {
        case StepKind::kRemoteAdmit:
          status = multi_kueue_->Admit(*key, report.cluster, clock_.Now() - report.ago);
          break;
        case StepKind::kRemoteEvict:
          status = multi_kueue_->Evict(*key, report.cluster, report.reason, report.message);
          break;
        case StepKind::kRemoteFinish:
          status = multi_kueue_->Finish(*key, report.cluster, report.reason, report.message);
          break;
        default:
          status = multi_kueue_->Remove(*key, report.cluster);
          break;
      }
      if (!status.ok()) return std::string(status.message());
    }
    return "";
  }

  std::string ExpectRemoteCopies(const CheckExpectations& expect) {
    for (const auto& [name, want] : expect.remote_copies) {
      absl::StatusOr<std::string> key = Resolve(name);
      if (!key.ok()) return absl::StrCat("remoteCopies: ", key.status().message());
      const std::map<std::string, std::string> got = multi_kueue_->CopyStates(*key);
      if (got != want) {
        auto text = [](const std::map<std::string, std::string>& copies) {
          std::vector<std::string> parts;
          for (const auto& [cluster, state] : copies) parts.push_back(cluster + ": " + state);
          return absl::StrCat("{", absl::StrJoin(parts, ", "), "}");
        };
        return absl::StrCat("expected ", name, "'s copies on the workers ", text(want), ", saw ",
                            text(got));
      }
    }
    return "";
  }

  // --- Admission checks (docs/scenario-format.md, "Admission checks") ------------------------

  // Each update as a controller posts it: at the workload's current revision.
  std::string SetChecks(const std::vector<CheckUpdateItem>& updates) {
    for (const CheckUpdateItem& item : updates) {
      absl::StatusOr<std::string> key = Resolve(item.workload);
      if (!key.ok()) return std::string(key.status().message());
      v1::GetWorkloadRequest get;
      *get.mutable_workload() = RefOf(*key);
      absl::StatusOr<v1::Workload> wl = api().GetWorkload(get);
      if (!wl.ok()) return absl::StrCat(item.workload, ": ", wl.status().message());
      v1::UpdateAdmissionCheckStateRequest request = item.request;
      *request.mutable_workload() = RefOf(*key);
      request.set_expected_revision(wl->metadata().resource_version());
      absl::Status status = api().UpdateAdmissionCheckState(request).status();
      const std::string what = absl::StrCat("setting check ", request.check(), " of ",
                                            item.workload, " to ", request.state());
      if (item.refused.has_value()) {
        if (std::string e = RefusalMismatch(what, status, *item.refused, "accepted"); !e.empty()) {
          return e;
        }
        continue;
      }
      if (!status.ok()) return absl::StrCat(what, ": ", status.message());
    }
    return "";
  }

  std::string SetChecksActive(const std::vector<std::string>& names, bool active) {
    for (const std::string& name : names) {
      v1::SetAdmissionCheckActiveRequest request;
      request.set_name(name);
      request.set_active(active);
      request.set_reason(active ? "Active" : "Inactive");
      absl::Status status = api().SetAdmissionCheckActive(request).status();
      if (!status.ok()) return absl::StrCat(name, ": ", status.message());
    }
    return "";
  }

  static const v1::AdmissionCheckState* FindCheckState(const v1::Workload& wl,
                                                       const std::string& name) {
    for (const v1::AdmissionCheckState& c : wl.status().admission_checks()) {
      if (c.name() == name) return &c;
    }
    return nullptr;
  }

  std::string ExpectChecks(const CheckExpectations& expect,
                           const std::map<std::string, const v1::Workload*>& by_key) {
    if (expect.quota_reserved.has_value()) {
      if (std::string e = CheckStateSet("quotaReserved", v1::WORKLOAD_STATE_QUOTA_RESERVED,
                                        *expect.quota_reserved, by_key);
          !e.empty()) {
        return e;
      }
    }
    for (const auto& [name, states] : expect.checks) {
      absl::StatusOr<std::string> key = Resolve(name);
      if (!key.ok() || by_key.count(*key) == 0) return absl::StrCat("checks: no workload ", name);
      const v1::Workload& wl = *by_key.at(*key);
      std::set<std::string> want;
      for (const auto& [check, state] : states) want.insert(check);
      std::set<std::string> seen;
      for (const v1::AdmissionCheckState& c : wl.status().admission_checks()) seen.insert(c.name());
      if (want != seen) {
        return absl::StrCat("expected ", name, " to carry checks ", SetString(want), ", saw ",
                            SetString(seen));
      }
      for (const auto& [check, state] : states) {
        const v1::AdmissionCheckState& got = *FindCheckState(wl, check);
        const std::string what = absl::StrCat(name, "'s check ", check);
        if (state.state.has_value() && got.state() != *state.state) {
          return absl::StrCat("expected ", what, " ", *state.state, ", saw ", got.state(), " (",
                              Quote(got.message()), ")");
        }
        if (state.message.has_value() && got.message().find(*state.message) == std::string::npos) {
          return absl::StrCat("expected ", what, " with a message containing ",
                              Quote(*state.message), ", saw ", Quote(got.message()));
        }
        if (state.retry_count.has_value() && got.retry_count() != *state.retry_count) {
          return absl::StrCat("expected ", what, " retried ", *state.retry_count, " time(s), saw ",
                              got.retry_count());
        }
        if (state.requeue_after_seconds.has_value() &&
            (!got.has_requeue_after_seconds() ||
             got.requeue_after_seconds() != *state.requeue_after_seconds)) {
          return absl::StrCat("expected ", what, " with requeueAfterSeconds ",
                              *state.requeue_after_seconds, ", saw ",
                              got.has_requeue_after_seconds()
                                  ? absl::StrCat(got.requeue_after_seconds())
                                  : std::string("none"));
        }
      }
    }
    for (const auto& [name, evicted] : expect.evicted) {
      absl::StatusOr<std::string> key = Resolve(name);
      if (!key.ok() || by_key.count(*key) == 0) return absl::StrCat("evicted: no workload ", name);
      const v1::Condition* condition = nullptr;
      for (const v1::Condition& c : by_key.at(*key)->status().conditions()) {
        if (c.type() == "Evicted") condition = &c;
      }
      if (condition == nullptr || condition->status() != "True") {
        return absl::StrCat("expected ", name, " evicted (", evicted.reason,
                            "), but its Evicted condition is not true");
      }
      if (condition->reason() != evicted.reason) {
        return absl::StrCat("expected ", name, " evicted for ", evicted.reason, ", saw ",
                            condition->reason());
      }
      if (evicted.message.has_value() &&
          condition->message().find(*evicted.message) == std::string::npos) {
        return absl::StrCat("expected ", name, "'s eviction message to contain ",
                            Quote(*evicted.message), ", saw ", Quote(condition->message()));
      }
    }
    if (expect.inactive.has_value()) {
      v1::ListObjectsRequest request;
      request.set_kind(v1::CLUSTER_QUEUE);
      absl::StatusOr<v1::ListObjectsResponse> queues = api().ListObjects(request);
      if (!queues.ok()) return std::string(queues.status().message());
      std::map<std::string, std::string> seen;
      for (const v1::ConfigObject& object : queues->objects()) {
        for (const v1::Condition& c : object.cluster_queue().status().conditions()) {
          if (c.type() == "Active" && c.status() != "True") {
            seen[object.cluster_queue().metadata().name()] = c.reason();
          }
        }
      }
      if (seen != *expect.inactive) {
        std::vector<std::string> want_text, seen_text;
        for (const auto& [cq, reason] : *expect.inactive) want_text.push_back(cq + ": " + reason);
        for (const auto& [cq, reason] : seen) seen_text.push_back(cq + ": " + reason);
        return absl::StrCat("expected inactive ClusterQueues {", absl::StrJoin(want_text, ", "),
                            "}, saw {", absl::StrJoin(seen_text, ", "), "}");
      }
    }
    for (const auto& [name, want] : expect.dispatch) {
      absl::StatusOr<std::string> key = Resolve(name);
      if (!key.ok() || by_key.count(*key) == 0) return absl::StrCat("dispatch: no workload ", name);
      const v1::WorkloadStatus& status = by_key.at(*key)->status();
      if (want.cluster_name.has_value() && status.cluster_name() != *want.cluster_name) {
        return absl::StrCat("expected ", name, " with clusterName ", Quote(*want.cluster_name),
                            ", saw ", Quote(status.cluster_name()));
      }
      const std::vector<std::string> nominated(status.nominated_cluster_names().begin(),
                                               status.nominated_cluster_names().end());
      if (want.nominated.has_value() && nominated != *want.nominated) {
        return absl::StrCat("expected ", name, " nominated to [",
                            absl::StrJoin(*want.nominated, ", "), "], saw [",
                            absl::StrJoin(nominated, ", "), "]");
      }
    }
    if (std::string e = ExpectRemoteCopies(expect); !e.empty()) return e;
    for (const auto& [name, sets] : expect.pod_set_info) {
      absl::StatusOr<std::string> key = Resolve(name);
      if (!key.ok() || by_key.count(*key) == 0)
        return absl::StrCat("podSetInfo: no workload ", name);
      const v1::Workload& wl = *by_key.at(*key);
      for (const auto& [set, want] : sets) {
        const v1::PodSetUpdate* got = nullptr;
        for (const v1::PodSetUpdate& info : wl.status().admitted_pod_sets()) {
          if (info.name() == set) got = &info;
        }
        if (got == nullptr) {
          return absl::StrCat("expected ", name, " admitted with what its checks add to pod set ",
                              set, ", but nothing was added");
        }
        for (auto [field, wanted, map] :
             {std::make_tuple("labels", &want.labels, &got->labels()),
              std::make_tuple("annotations", &want.annotations, &got->annotations()),
              std::make_tuple("nodeSelector", &want.node_selector, &got->node_selector())}) {
          if (!wanted->has_value()) continue;
          const std::map<std::string, std::string> have(map->begin(), map->end());
          if (have != **wanted) {
            std::vector<std::string> have_text;
            for (const auto& [k, v] : have) have_text.push_back(k + "=" + v);
            return absl::StrCat("expected ", name, " pod set ", set, " ", field,
                                " as written, saw {", absl::StrJoin(have_text, ", "), "}");
          }
        }
      }
    }
    return "";
  }

  // --- end of admission checks -----------------------------------------------------------------

  // --- Owners, holds, missing pods (docs/scenario-format.md): ReportJobState per workload.
  std::string RunJobReport(const Step& step) {
    if (step.kind == StepKind::kBindOwner) {
      for (const OwnerBinding& binding : step.bindings) {
        absl::StatusOr<std::string> key = Resolve(binding.workload);
        if (!key.ok()) return std::string(key.status().message());
        v1::ReportJobStateRequest request;
        *request.mutable_workload() = RefOf(*key);
        *request.mutable_bind_owner() = binding.owner;
        const absl::Status status = api().ReportJobState(request).status();
        const std::string what = absl::StrCat("binding ", binding.workload, " to ",
                                              binding.owner.kind(), " ", binding.owner.name());
        if (binding.refused.has_value()) {
          if (std::string e = RefusalMismatch(what, status, *binding.refused, "bound");
              !e.empty()) {
            return e;
          }
          continue;
        }
        if (!status.ok()) return absl::StrCat(what, ": ", status.message());
      }
      return "";
    }
    return ForEachWorkload(step.workload_names, [this, &step](const v1::WorkloadRef& ref) {
      v1::ReportJobStateRequest request;
      *request.mutable_workload() = ref;
      switch (step.kind) {
        case StepKind::kHold:
          request.set_on_hold(true);
          request.set_message("StatefulSet scaled to zero; workload on hold");
          break;
        case StepKind::kRelease:
          request.set_on_hold(false);
          break;
        case StepKind::kOutOfSync:
          request.set_out_of_sync(true);
          break;
        default:
          request.set_waiting_for_replacement_pods(step.kind == StepKind::kPodsMissing);
          break;
      }
      return api().ReportJobState(request).status();
    });
  }

  // kubectl annotate on each workload in turn, through SetAdmissionGates.
  std::string RunAdmissionGates(const Step& step) {
    for (const AdmissionGatesItem& change : step.gate_changes) {
      absl::StatusOr<std::string> key = Resolve(change.workload);
      if (!key.ok()) return absl::StrCat("admissionGates: ", key.status().message());
      v1::SetAdmissionGatesRequest request;
      const std::vector<std::string> parts = absl::StrSplit(*key, absl::MaxSplits('/', 1));
      request.mutable_workload()->set_namespace_(parts[0]);
      request.mutable_workload()->set_name(parts[1]);
      if (change.gated_by.has_value()) request.set_admission_gated_by(*change.gated_by);
      absl::Status status = api().SetAdmissionGates(request).status();
      const std::string what = absl::StrCat("admissionGates of ", change.workload);
      if (change.refused.has_value()) {
        if (std::string e = RefusalMismatch(what, status, *change.refused, "changed"); !e.empty()) {
          return e;
        }
        continue;
      }
      if (!status.ok()) return absl::StrCat(what, ": ", status.message());
    }
    return "";
  }

  // An external controller's patch of each workload's priority-boost annotation, in turn.
  std::string RunPriorityBoost(const Step& step) {
    for (const PriorityBoostItem& change : step.boost_changes) {
      absl::StatusOr<std::string> key = Resolve(change.workload);
      if (!key.ok()) return absl::StrCat("priorityBoost: ", key.status().message());
      v1::WorkloadRef ref;
      const std::vector<std::string> parts = absl::StrSplit(*key, absl::MaxSplits('/', 1));
      ref.set_namespace_(parts[0]);
      ref.set_name(parts[1]);
      absl::Status status = api().SetPriorityBoost(ref, change.value).status();
      const std::string what = absl::StrCat("priorityBoost of ", change.workload);
      if (change.refused.has_value()) {
        if (std::string e = RefusalMismatch(what, status, *change.refused, "changed"); !e.empty()) {
          return e;
        }
        continue;
      }
      if (!status.ok()) return absl::StrCat(what, ": ", status.message());
    }
    return "";
  }

  // conditions: each named condition of each named workload, as given.
  std::string ExpectConditions(const Expectation& expect,
                               std::map<std::string, const v1::Workload*>& by_key) {
    for (const auto& [name, by_type] : expect.conditions) {
      absl::StatusOr<std::string> key = Resolve(name);
      if (!key.ok() || by_key.count(*key) == 0)
        return absl::StrCat("conditions: no workload ", name);
      for (const auto& [type, want] : by_type) {
        const v1::Condition* got = nullptr;
        for (const v1::Condition& c : by_key.at(*key)->status().conditions()) {
          if (c.type() == type) got = &c;
        }
        const std::string what = absl::StrCat(name, "'s ", type, " condition");
        if (want.absent) {
          if (got != nullptr) {
            return absl::StrCat("expected no ", what, ", saw ", got->status(), "/", got->reason());
          }
          continue;
        }
        if (got == nullptr) return absl::StrCat("expected ", what, ", saw none");
        if (want.status.has_value() && got->status() != *want.status) {
          return absl::StrCat("expected ", what, " ", *want.status, ", saw ", got->status());
        }
        if (want.reason.has_value() && got->reason() != *want.reason) {
          return absl::StrCat("expected ", what, " with reason ", *want.reason, ", saw ",
                              Quote(got->reason()));
        }
        if (want.message.has_value() && got->message().find(*want.message) == std::string::npos) {
          return absl::StrCat("expected ", what, " with a message containing ",
                              Quote(*want.message), ", saw ", Quote(got->message()));
        }
      }
    }
    return "";
  }

  // admissionGated: the gated workloads, exactly; an active one also says so in its condition.
  std::string ExpectAdmissionGated(const Expectation& expect,
                                   std::map<std::string, const v1::Workload*>& by_key) {
    if (!expect.admission_gated.has_value()) return "";
    std::set<std::string> want;
    for (const std::string& name : *expect.admission_gated) {
      absl::StatusOr<std::string> key = Resolve(name);
      if (!key.ok()) return absl::StrCat("admissionGated: ", key.status().message());
      want.insert(*key);
    }
    std::set<std::string> seen;
    for (const auto& [key, wl] : by_key) {
      const auto& annotations = wl->metadata().annotations();
      auto gates = annotations.find("kueue.x-k8s.io/admission-gated-by");
      if (gates == annotations.end() || gates->second.empty()) continue;
      seen.insert(key);
      if (wl->spec().has_active() && !wl->spec().active()) continue;
      const v1::Condition* reserved = nullptr;
      for (const v1::Condition& c : wl->status().conditions()) {
        if (c.type() == "QuotaReserved") reserved = &c;
      }
      if (reserved == nullptr || reserved->status() != "False" ||
          reserved->reason() != "AdmissionGated") {
        return absl::StrCat("admissionGated: expected ", key,
                            "'s QuotaReserved condition False with reason AdmissionGated, saw ",
                            reserved == nullptr ? "none" : reserved->reason());
      }
    }
    if (want != seen) {
      return absl::StrCat("expected admissionGated ", SetString(want), ", saw ", SetString(seen));
    }
    return "";
  }

  std::string ExpectJobReports(const Expectation& expect,
                               std::map<std::string, const v1::Workload*>& by_key) {
    for (const auto& [label, want_names, flag] :
         {std::tuple{"onHold", &expect.on_hold, &v1::WorkloadStatus::on_hold},
          std::tuple{"waitingForPods", &expect.waiting_for_pods,
                     &v1::WorkloadStatus::waiting_for_replacement_pods}}) {
      if (!want_names->has_value()) continue;
      std::set<std::string> want;
      for (const std::string& name : **want_names) {
        absl::StatusOr<std::string> key = Resolve(name);
        if (!key.ok()) return absl::StrCat(label, ": ", key.status().message());
        want.insert(*key);
      }
      std::set<std::string> seen;
      for (const auto& [key, wl] : by_key) {
        if ((wl->status().*flag)()) seen.insert(key);
      }
      if (want != seen) {
        return absl::StrCat("expected ", label, " ", SetString(want), ", saw ", SetString(seen));
      }
    }
    for (const auto& [uid, names] : expect.owned_by) {
      v1::ListWorkloadsRequest request;
      request.set_owner_uid(uid);
      absl::StatusOr<v1::ListWorkloadsResponse> owned = api().ListWorkloads(request);
      if (!owned.ok()) return std::string(owned.status().message());
      std::set<std::string> want;
      for (const std::string& name : names) {
        absl::StatusOr<std::string> key = Resolve(name);
        if (!key.ok()) return absl::StrCat("ownedBy: ", key.status().message());
        want.insert(*key);
      }
      std::set<std::string> seen;
      for (const v1::Workload& wl : owned->workloads()) seen.insert(KeyOf(wl));
      if (want != seen) {
        return absl::StrCat("expected owner ", uid, " to control ", SetString(want), ", saw ",
                            SetString(seen));
      }
    }
    for (const auto& [name, labels] : expect.pod_labels) {
      absl::StatusOr<std::string> key = Resolve(name);
      if (!key.ok() || by_key.count(*key) == 0)
        return absl::StrCat("podLabels: no workload ", name);
      const v1::Workload& wl = *by_key[*key];
      if (wl.status().state() != v1::WORKLOAD_STATE_ADMITTED) {
        return absl::StrCat("podLabels: expected ", name, " admitted, saw it ",
                            StateName(wl.status().state()));
      }
      const std::map<std::string, std::string> got(wl.status().admission().pod_labels().begin(),
                                                   wl.status().admission().pod_labels().end());
      if (got != labels) {
        auto show = [](const std::map<std::string, std::string>& m) {
          return absl::StrCat("{", absl::StrJoin(m, ", ", absl::PairFormatter(": ")), "}");
        };
        return absl::StrCat("expected ", name, " admitted with pod labels ", show(labels), ", saw ",
                            show(got));
      }
    }
    return "";
  }

  std::string ApplyManifest(const manifest::Manifest& m) {
    if (const auto* workload = std::get_if<v1::Workload>(&m.object)) {
      SubmitItem item;
      item.name = workload->metadata().name();
      item.ns =
          workload->metadata().namespace_().empty() ? "default" : workload->metadata().namespace_();
      item.workload = *workload;
      Submit(item);
      return "";
    }
    v1::ApplyRequest request;
    *request.add_objects() = std::get<v1::ConfigObject>(m.object);
    absl::Status status = api().Apply(request).status();
    return status.ok() ? "" : absl::StrCat("apply ", m.kind, ": ", status.message());
  }

  void Submit(const SubmitItem& item) {
    // Each submission is one millisecond after the previous one, so list order is queue order.
    clock_.Advance(absl::Milliseconds(1));
    const std::string key = absl::StrCat(item.ns, "/", item.name);
    if (!item.workload.ok()) {
      rejected_[key] = std::string(item.workload.status().message());
      return;
    }
    v1::SubmitRequest request;
    *request.mutable_workload() = *item.workload;
    absl::StatusOr<v1::SubmitResponse> response = api().Submit(request);
    if (!response.ok()) {
      // A refused retry of an existing workload does not make the original refused.
      rejected_[key] = std::string(response.status().message());
      return;
    }
    rejected_.erase(key);
    submitted_.insert(key);
    if (item.runtime.has_value()) runtimes_[key] = *item.runtime;
  }

  std::string Delete(const std::vector<ObjectRef>& refs) {
    for (const ObjectRef& ref : refs) {
      absl::Status status;
      if (ref.kind == "Workload") {
        absl::StatusOr<std::string> key =
            Resolve(ref.ns.empty() ? ref.name : absl::StrCat(ref.ns, "/", ref.name));
        if (!key.ok()) return std::string(key.status().message());
        v1::DeleteWorkloadRequest request;
        *request.mutable_workload() = RefOf(*key);
        status = api().DeleteWorkload(request).status();
      } else {
        std::optional<v1::ObjectKind> kind = engine::ConfigKindNamed(ref.kind);
        if (!kind.has_value()) return absl::StrCat("delete: unknown kind ", Quote(ref.kind));
        v1::DeleteObjectRequest request;
        request.mutable_ref()->set_kind(*kind);
        request.mutable_ref()->set_name(ref.name);
        request.mutable_ref()->set_namespace_(ref.ns);
        status = api().DeleteObject(request).status();
      }
      if (ref.refused.has_value()) {
        if (status.ok()) {
          return absl::StrCat("expected deleting ", ref.kind, " ", ref.name, " refused with ",
                              Quote(*ref.refused), ", but it was deleted");
        }
        if (status.message().find(*ref.refused) == absl::string_view::npos) {
          return absl::StrCat("expected deleting ", ref.kind, " ", ref.name, " refused with ",
                              Quote(*ref.refused), ", saw ", Quote(status.message()));
        }
        continue;
      }
      if (!status.ok())
        return absl::StrCat("delete ", ref.kind, " ", ref.name, ": ", status.message());
    }
    return "";
  }

  static bool IsImplicitCohort(const v1::ConfigObject& object) {
    if (!object.has_cohort()) return false;
    for (const v1::Condition& c : object.cohort().status().conditions()) {
      if (c.type() == "Implicit" && c.status() == "True") return true;
    }
    return false;
  }

  // terminating / absent: the object's existence and deletion timestamp.
  std::string CheckObject(const ObjectRef& ref, bool want_terminating) {
    std::optional<v1::ObjectKind> kind = engine::ConfigKindNamed(ref.kind);
    if (!kind.has_value()) return absl::StrCat("not a configuration kind: ", Quote(ref.kind));
    v1::GetObjectRequest request;
    request.mutable_ref()->set_kind(*kind);
    request.mutable_ref()->set_name(ref.name);
    request.mutable_ref()->set_namespace_(ref.ns);
    absl::StatusOr<v1::ConfigObject> object = api().GetObject(request);
    const std::string what =
        absl::StrCat(ref.kind, " ", ref.ns.empty() ? "" : ref.ns + "/", ref.name);
    if (!want_terminating) {
      // A Cohort whose object is gone lives on implicitly while ClusterQueues name it: the
      // object is absent all the same.
      if (object.ok() && !IsImplicitCohort(*object)) {
        return absl::StrCat("expected ", what, " gone, but it exists");
      }
      if (!absl::IsNotFound(object.status())) return std::string(object.status().message());
      return "";
    }
    if (!object.ok())
      return absl::StrCat("expected ", what, " terminating: ", object.status().message());
    if (!engine::MetadataOf(*object).has_deletion_timestamp()) {
      return absl::StrCat("expected ", what, " terminating, but it is not being deleted");
    }
    return "";
  }

  std::string Settle() {
    absl::Status status = api().Settle();
    return status.ok() ? "" : absl::StrCat("settle: ", status.message());
  }

  // Moves the clock to `now + d`, stopping at every moment something is due — a workload's
  // runtime ends, or a service timer fires (pods-ready timeout, backoff, usage sampling) — to
  // let admission settle there, so work admitted mid-way also runs on time.
  std::string Advance(absl::Duration d) {
    const absl::Time target = clock_.Now() + d;
    while (true) {
      absl::StatusOr<std::vector<v1::Workload>> workloads = ListAll();
      if (!workloads.ok()) return std::string(workloads.status().message());
      std::optional<absl::Time> next;
      std::vector<std::string> due;
      for (const v1::Workload& wl : *workloads) {
        const std::string key = KeyOf(wl);
        auto runtime = runtimes_.find(key);
        if (runtime == runtimes_.end() || wl.status().state() != v1::WORKLOAD_STATE_ADMITTED) {
          continue;
        }
        // A runtime counts from admission (after any admission checks), not from reservation.
        google::protobuf::Timestamp admitted = wl.status().admission_time();
        for (const v1::Condition& c : wl.status().conditions()) {
          if (c.type() == "Admitted" && c.status() == "True") admitted = c.last_transition_time();
        }
        const absl::Time ends =
            absl::FromUnixNanos(TimeUtil::TimestampToNanoseconds(admitted)) + runtime->second;
        if (ends > target) continue;
        if (!next.has_value() || ends < *next) {
          next = ends;
          due.clear();
        }
        if (ends == *next) due.push_back(key);
      }
      absl::StatusOr<std::optional<absl::Time>> timer = api().NextTimer();
      if (!timer.ok()) return std::string(timer.status().message());
      if (timer->has_value() && **timer <= target && (!next.has_value() || **timer < *next)) {
        next = **timer;
        due.clear();
      }
      // The MultiKueue controller's own timers (worker-lost grace, Incremental rounds, garbage
      // collection) stop the clock too, and the service settles what it changed there.
      std::optional<absl::Time> recheck;
      if (multi_kueue_ != nullptr) recheck = multi_kueue_->NextRecheck();
      if (recheck.has_value() && *recheck <= target && (!next.has_value() || *recheck < *next)) {
        next = *recheck;
        due.clear();
      }
      if (!next.has_value()) break;
      if (*next > clock_.Now()) clock_.Set(*next);
      for (const std::string& key : due) {
        v1::FinishRequest request;
        *request.mutable_workload() = RefOf(key);
        request.set_message("runtime elapsed");
        absl::Status status = api().Finish(request).status();
        if (!status.ok()) return absl::StrCat("finish ", key, ": ", status.message());
      }
      if (std::string error = Settle(); !error.empty()) return error;
      if (multi_kueue_ != nullptr) {
        if (std::string error = RunMultiKueue(); !error.empty()) return error;
        if (std::string error = Settle(); !error.empty()) return error;
        if (std::string error = RunMultiKueue(); !error.empty()) return error;
      }
      if (due.empty() && *next <= clock_.Now() && timer->has_value() && **timer == *next) {
        // A timer that fired and re-armed at the same instant would loop forever.
        absl::StatusOr<std::optional<absl::Time>> again = api().NextTimer();
        if (again.ok() && again->has_value() && **again <= *next) break;
      }
    }
    clock_.Set(target);
    return Settle();
  }

  template <typename Fn>
  std::string ForEachWorkload(const std::vector<std::string>& names, Fn fn) {
    for (const std::string& name : names) {
      absl::StatusOr<std::string> key = Resolve(name);
      if (!key.ok()) return std::string(key.status().message());
      absl::Status status = fn(RefOf(*key));
      if (!status.ok()) return absl::StrCat(name, ": ", status.message());
    }
    return "";
  }

  static v1::WorkloadRef RefOf(const std::string& key) {
    std::pair<std::string, std::string> parts = absl::StrSplit(key, absl::MaxSplits('/', 1));
    v1::WorkloadRef ref;
    ref.set_namespace_(parts.first);
    ref.set_name(parts.second);
    return ref;
  }

  static std::string KeyOf(const v1::Workload& wl) {
    return absl::StrCat(wl.metadata().namespace_(), "/", wl.metadata().name());
  }

  absl::StatusOr<std::vector<v1::Workload>> ListAll() {
    TOLLGATE_ASSIGN_OR_RETURN(v1::ListWorkloadsResponse response,
                              api().ListWorkloads(v1::ListWorkloadsRequest()));
    return std::vector<v1::Workload>(response.workloads().begin(), response.workloads().end());
  }

  // `name` or `namespace/name` to the workload's key; a bare name must be unique.
  absl::StatusOr<std::string> Resolve(const std::string& name) {
    if (name.find('/') != std::string::npos) return name;
    TOLLGATE_ASSIGN_OR_RETURN(std::vector<v1::Workload> all, ListAll());
    std::vector<std::string> matches;
    for (const v1::Workload& wl : all) {
      if (wl.metadata().name() == name) matches.push_back(KeyOf(wl));
    }
    for (const auto& [key, message] : rejected_) {
      if (key.substr(key.find('/') + 1) == name &&
          std::find(matches.begin(), matches.end(), key) == matches.end()) {
        matches.push_back(key);
      }
    }
    if (matches.empty()) return absl::NotFoundError(absl::StrCat("no workload named ", name));
    if (matches.size() > 1) {
      return absl::InvalidArgumentError(absl::StrCat("workload name ", name, " is ambiguous (",
                                                     absl::StrJoin(matches, ", "),
                                                     "); write namespace/name"));
    }
    return matches.front();
  }

  // "" when the assignment's resourceUsage has exactly `want`'s resources, each equal as
  // Kueue's scalars; else what was expected and what was seen.
  static std::string PodSetUsageMismatch(const std::map<std::string, std::string>& want,
                                         const v1::PodSetAssignment& ps) {
    const std::map<std::string, std::string> got(ps.resource_usage().begin(),
                                                 ps.resource_usage().end());
    bool same = want.size() == got.size();
    for (const auto& [resource, text] : want) {
      auto it = got.find(resource);
      if (!same || it == got.end()) {
        same = false;
        break;
      }
      absl::StatusOr<core::Quantity> w = core::Quantity::Parse(text);
      absl::StatusOr<core::Quantity> g = core::Quantity::Parse(it->second);
      same = w.ok() && g.ok() &&
             core::ResourceScalar(resource, *w) == core::ResourceScalar(resource, *g);
    }
    if (same) return "";
    auto show = [](const std::map<std::string, std::string>& m) {
      return absl::StrCat("{", absl::StrJoin(m, ", ", absl::PairFormatter(": ")), "}");
    };
    return absl::StrCat(show(want), ", saw ", show(got));
  }

  std::string CheckStateSet(const std::string& label, v1::WorkloadState state,
                            const std::vector<WorkloadExpectation>& expected,
                            const std::map<std::string, const v1::Workload*>& by_key) {
    std::set<std::string> want;
    for (const WorkloadExpectation& e : expected) {
      absl::StatusOr<std::string> key = Resolve(e.name);
      if (!key.ok()) return absl::StrCat(label, ": ", key.status().message());
      want.insert(*key);
    }
    std::set<std::string> seen;
    for (const auto& [key, wl] : by_key) {
      v1::WorkloadState s = wl->status().state();
      // An evicting workload still runs and holds quota.
      if (s == v1::WORKLOAD_STATE_EVICTING) s = v1::WORKLOAD_STATE_ADMITTED;
      if (s == state) seen.insert(key);
    }
    if (want != seen) {
      return absl::StrCat("expected ", label, " ", SetString(want), ", saw ", SetString(seen));
    }
    for (const WorkloadExpectation& e : expected) {
      const v1::Workload& wl = *by_key.at(*Resolve(e.name));
      for (const v1::PodSetAssignment& ps : wl.status().admission().pod_set_assignments()) {
        for (const auto& [resource, flavor] : e.flavors) {
          auto it = ps.flavors().find(resource);
          const std::string got = it == ps.flavors().end() ? "<none>" : it->second;
          if (got != flavor) {
            return absl::StrCat("expected ", e.name, " pod set ", ps.name(), " to get ", resource,
                                " from flavor ", flavor, ", saw ", got);
          }
        }
        auto set = e.pod_set_flavors.find(ps.name());
        if (set == e.pod_set_flavors.end()) continue;
        for (const auto& [resource, flavor] : set->second) {
          auto it = ps.flavors().find(resource);
          const std::string got = it == ps.flavors().end() ? "<none>" : it->second;
          if (got != flavor) {
            return absl::StrCat("expected ", e.name, " pod set ", ps.name(), " to get ", resource,
                                " from flavor ", flavor, ", saw ", got);
          }
        }
      }
      for (const auto& [set_name, usage] : e.pod_set_usage) {
        const v1::PodSetAssignment* found = nullptr;
        for (const v1::PodSetAssignment& ps : wl.status().admission().pod_set_assignments()) {
          if (ps.name() == set_name) found = &ps;
        }
        if (found == nullptr) {
          return absl::StrCat("expected ", e.name, " to have an admitted pod set ", set_name);
        }
        if (std::string mismatch = PodSetUsageMismatch(usage, *found); !mismatch.empty()) {
          return absl::StrCat("expected ", e.name, " pod set ", set_name, " resourceUsage ",
                              mismatch);
        }
      }
      for (const auto& [set_name, flavors] : e.pod_set_flavors) {
        bool found = false;
        for (const v1::PodSetAssignment& ps : wl.status().admission().pod_set_assignments()) {
          found = found || ps.name() == set_name;
        }
        if (!found) {
          return absl::StrCat("expected ", e.name, " to have an admitted pod set ", set_name);
        }
      }
    }
    return "";
  }

  std::string Expect(const Expectation& expect) {
    absl::StatusOr<std::vector<v1::Workload>> all = ListAll();
    if (!all.ok()) return std::string(all.status().message());
    std::map<std::string, const v1::Workload*> by_key;
    for (const v1::Workload& wl : *all) by_key[KeyOf(wl)] = &wl;

    if (expect.admitted.has_value()) {
      if (std::string e =
              CheckStateSet("admitted", v1::WORKLOAD_STATE_ADMITTED, *expect.admitted, by_key);
          !e.empty()) {
        return e;
      }
    }
    if (expect.pending.has_value()) {
      if (std::string e =
              CheckStateSet("pending", v1::WORKLOAD_STATE_PENDING, *expect.pending, by_key);
          !e.empty()) {
        return e;
      }
    }
    if (expect.finished.has_value()) {
      if (std::string e =
              CheckStateSet("finished", v1::WORKLOAD_STATE_FINISHED, *expect.finished, by_key);
          !e.empty()) {
        return e;
      }
    }
    for (const auto& [name, count] : expect.preempted) {
      absl::StatusOr<std::string> key = Resolve(name);
      if (!key.ok() || by_key.count(*key) == 0)
        return absl::StrCat("preempted: no workload ", name);
      const int32_t got = by_key[*key]->status().preemption_count();
      if (got != count) {
        return absl::StrCat("expected ", name, " preempted ", count, " time(s), saw ", got);
      }
    }
    for (const auto& [name, reason] : expect.preemption_reasons) {
      absl::StatusOr<std::string> key = Resolve(name);
      if (!key.ok() || by_key.count(*key) == 0) {
        return absl::StrCat("preemptionReasons: no workload ", name);
      }
      const std::string& got = by_key[*key]->status().last_preemption_reason();
      if (got != reason) {
        return absl::StrCat("expected ", name, " preempted for ", reason, ", saw ",
                            got.empty() ? "no preemption" : got);
      }
    }
    for (const auto& [name, substring] : expect.reasons) {
      absl::StatusOr<std::string> key = Resolve(name);
      if (!key.ok() || by_key.count(*key) == 0) return absl::StrCat("reasons: no workload ", name);
      const v1::Workload& wl = *by_key[*key];
      if (wl.status().state() != v1::WORKLOAD_STATE_PENDING) {
        return absl::StrCat("expected ", name, " pending with reason ", Quote(substring),
                            ", saw it ", StateName(wl.status().state()));
      }
      if (wl.status().pending_message().find(substring) == std::string::npos) {
        return absl::StrCat("expected ", name, " pending with reason containing ", Quote(substring),
                            ", saw ", Quote(wl.status().pending_message()));
      }
    }
    for (const auto& [name, reason] : expect.pending_reasons) {
      absl::StatusOr<std::string> key = Resolve(name);
      if (!key.ok() || by_key.count(*key) == 0) {
        return absl::StrCat("pendingReasons: no workload ", name);
      }
      const v1::Workload& wl = *by_key[*key];
      if (wl.status().state() != v1::WORKLOAD_STATE_PENDING) {
        return absl::StrCat("expected ", name, " pending with reason ", reason, ", saw it ",
                            StateName(wl.status().state()));
      }
      std::string got = "no QuotaReserved condition";
      for (const v1::Condition& c : wl.status().conditions()) {
        if (c.type() == "QuotaReserved") {
          got = c.status() == "False" ? c.reason() : "QuotaReserved=" + c.status();
        }
      }
      if (got != reason) {
        return absl::StrCat("expected ", name, " pending with reason ", reason, ", saw ", got);
      }
    }
    for (const auto& [name, share] : expect.fair_share) {
      if (std::string e = CheckFairShare(name, share); !e.empty()) return e;
    }
    for (const UsageExpectation& usage : expect.usage) {
      if (std::string e = CheckUsage(usage); !e.empty()) return e;
    }
    for (const auto& [queue, names] : expect.queue_order) {
      if (std::string e = CheckQueueOrder(queue, names); !e.empty()) return e;
    }
    for (const ObjectRef& ref : expect.terminating) {
      if (std::string e = CheckObject(ref, true); !e.empty()) return e;
    }
    for (const ObjectRef& ref : expect.absent) {
      if (std::string e = CheckObject(ref, false); !e.empty()) return e;
    }
    for (const std::string& name : expect.deleted) {
      if (std::string e = CheckDeleted(name); !e.empty()) return e;
    }
    for (const std::string& name : expect.deactivated) {
      absl::StatusOr<std::string> key = Resolve(name);
      if (!key.ok()) return std::string(key.status().message());
      v1::GetWorkloadRequest request;
      *request.mutable_workload() = RefOf(*key);
      absl::StatusOr<v1::Workload> wl = api().GetWorkload(request);
      if (!wl.ok()) return std::string(wl.status().message());
      const bool inactive =
          (wl->spec().has_active() && !wl->spec().active()) || wl->status().deactivated();
      if (!inactive) return absl::StrCat("expected ", name, " deactivated, but it is active");
    }
    if (std::string e = ExpectChecks(expect.checks, by_key); !e.empty()) return e;
    if (std::string e = ExpectJobReports(expect, by_key); !e.empty()) return e;
    if (std::string e = ExpectAdmissionGated(expect, by_key); !e.empty()) return e;
    if (std::string e = ExpectConditions(expect, by_key); !e.empty()) return e;
    for (const auto& [name, substring] : expect.rejected) {
      const std::string key = name.find('/') == std::string::npos ? FindRejected(name) : name;
      auto it = rejected_.find(key);
      if (it == rejected_.end()) {
        return absl::StrCat("expected the submit of ", name, " refused with ", Quote(substring),
                            ", but it was accepted");
      }
      if (it->second.find(substring) == std::string::npos) {
        return absl::StrCat("expected the submit of ", name, " refused with ", Quote(substring),
                            ", saw ", Quote(it->second));
      }
    }
    return CheckTopology(expect, by_key);
  }

  // `deleted`: the workload was submitted by this scenario and exists no more. Only submitted
  // names count, so a misspelt name fails instead of passing for want of a workload.
  std::string CheckDeleted(const std::string& name) {
    std::vector<std::string> keys;
    for (const std::string& key : submitted_) {
      if (key == name || key.substr(key.find('/') + 1) == name) keys.push_back(key);
    }
    if (keys.empty()) {
      return absl::StrCat("deleted: no workload named ", name, " was submitted in this scenario");
    }
    if (keys.size() > 1) {
      return absl::StrCat("deleted: workload name ", name, " is ambiguous (",
                          absl::StrJoin(keys, ", "), "); write namespace/name");
    }
    v1::GetWorkloadRequest request;
    *request.mutable_workload() = RefOf(keys.front());
    absl::StatusOr<v1::Workload> wl = api().GetWorkload(request);
    if (wl.ok()) {
      return absl::StrCat("expected ", keys.front(), " deleted, but it exists (",
                          StateName(wl->status().state()), ")");
    }
    if (!absl::IsNotFound(wl.status())) return std::string(wl.status().message());
    return "";
  }

  std::string FindRejected(const std::string& name) {
    for (const auto& [key, message] : rejected_) {
      if (key.substr(key.find('/') + 1) == name) return key;
    }
    return "";
  }

  std::string CheckFairShare(const std::string& name, int64_t share) {
    for (v1::ObjectKind kind : {v1::CLUSTER_QUEUE, v1::COHORT}) {
      v1::GetObjectRequest request;
      request.mutable_ref()->set_kind(kind);
      request.mutable_ref()->set_name(name);
      absl::StatusOr<v1::ConfigObject> object = api().GetObject(request);
      if (!object.ok()) continue;
      const int64_t got = kind == v1::CLUSTER_QUEUE
                              ? object->cluster_queue().status().fair_sharing().weighted_share()
                              : object->cohort().status().fair_sharing().weighted_share();
      if (got != share) {
        return absl::StrCat("expected fair share of ", name, " ", share, ", saw ", got);
      }
      return "";
    }
    // A cohort named only by ClusterQueues has no object; ask the ClusterQueues' view.
    v1::GetObjectRequest request;
    request.mutable_ref()->set_kind(v1::COHORT);
    request.mutable_ref()->set_name(name);
    return absl::StrCat("fairShare: no ClusterQueue or Cohort named ", name);
  }

  std::string CheckUsage(const UsageExpectation& usage) {
    v1::GetObjectRequest request;
    request.mutable_ref()->set_kind(v1::CLUSTER_QUEUE);
    request.mutable_ref()->set_name(usage.cluster_queue);
    absl::StatusOr<v1::ConfigObject> object = api().GetObject(request);
    if (!object.ok()) return absl::StrCat("usage: ", object.status().message());
    std::string total = "0";
    std::string borrowed = "0";
    for (const v1::FlavorUsage& flavor : object->cluster_queue().status().flavors_usage()) {
      if (flavor.name() != usage.flavor) continue;
      for (const v1::ResourceUsage& r : flavor.resources()) {
        if (r.name() != usage.resource) continue;
        total = r.total();
        borrowed = r.borrowed();
      }
    }
    auto same = [&](const std::string& want, const std::string& got) {
      absl::StatusOr<core::Quantity> w = core::Quantity::Parse(want);
      absl::StatusOr<core::Quantity> g = core::Quantity::Parse(got);
      return w.ok() && g.ok() &&
             core::ResourceScalar(usage.resource, *w) == core::ResourceScalar(usage.resource, *g);
    };
    const std::string where =
        absl::StrCat(usage.cluster_queue, " ", usage.flavor, " ", usage.resource);
    if (!same(usage.used, total)) {
      return absl::StrCat("expected usage of ", where, " ", usage.used, ", saw ", total);
    }
    if (usage.borrowed.has_value() && !same(*usage.borrowed, borrowed)) {
      return absl::StrCat("expected borrowed ", where, " ", *usage.borrowed, ", saw ", borrowed);
    }
    return "";
  }

  std::string CheckQueueOrder(const std::string& queue, const std::vector<std::string>& names) {
    std::pair<std::string, std::string> parts = absl::StrSplit(queue, absl::MaxSplits('/', 1));
    v1::ListPendingWorkloadsRequest request;
    request.set_namespace_(parts.first);
    request.set_local_queue(parts.second);
    absl::StatusOr<v1::ListPendingWorkloadsResponse> response = api().ListPendingWorkloads(request);
    if (!response.ok()) return absl::StrCat("queueOrder: ", response.status().message());
    std::vector<std::string> got;
    std::vector<std::string> want;
    for (const v1::PendingWorkload& item : response->items()) {
      got.push_back(item.workload().name());
    }
    for (const std::string& name : names) {
      want.push_back(name.find('/') == std::string::npos ? name : name.substr(name.find('/') + 1));
    }
    if (got != want) {
      return absl::StrCat("expected queue order of ", queue, " [", absl::StrJoin(want, ", "),
                          "], saw [", absl::StrJoin(got, ", "), "]");
    }
    return "";
  }

  // --- Topology (issue 28): the node inventory through the service, and the placements.

  std::string UpsertNodes(const std::vector<v1::Node>& nodes) {
    if (nodes.empty()) return "";
    v1::UpsertNodesRequest request;
    for (const v1::Node& node : nodes) *request.add_nodes() = node;
    absl::Status status = api().UpsertNodes(request).status();
    return status.ok() ? "" : absl::StrCat("nodes: ", status.message());
  }

  std::string RunTopologyStep(const Step& step) {
    switch (step.kind) {
      case StepKind::kNodes:
        return UpsertNodes(step.nodes);
      case StepKind::kDeleteNodes:
        for (const std::string& name : step.names) {
          v1::DeleteNodeRequest request;
          request.set_name(name);
          absl::Status status = api().DeleteNode(request).status();
          if (!status.ok()) return absl::StrCat("delete node ", name, ": ", status.message());
        }
        return "";
      case StepKind::kReportPods:
      case StepKind::kRemovePods: {
        v1::ReportPodsRequest request;
        for (const v1::NodePod& pod : step.pods) *request.add_pods() = pod;
        for (const std::string& name : step.names) request.add_removed(name);
        absl::Status status = api().ReportPods(request).status();
        return status.ok() ? "" : std::string(status.message());
      }
      default:
        return "not a topology step";
    }
  }

  static std::string DomainsString(
      const std::vector<std::pair<std::vector<std::string>, int32_t>>& domains) {
    std::vector<std::string> parts;
    for (const auto& [values, count] : domains) {
      parts.push_back(absl::StrCat("[", absl::StrJoin(values, ","), "]:", count));
    }
    return absl::StrCat("{", absl::StrJoin(parts, " "), "}");
  }

  std::string CheckTopologyAssignments(
      const std::string& name, const std::map<std::string, TopologyAssignmentExpectation>& pod_sets,
      const std::map<std::string, const v1::Workload*>& by_key) {
    absl::StatusOr<std::string> key = Resolve(name);
    if (!key.ok() || by_key.count(*key) == 0) {
      return absl::StrCat("topologyAssignments: no workload ", name);
    }
    const v1::Workload& wl = *by_key.at(*key);
    for (const auto& [set_name, want] : pod_sets) {
      const v1::PodSetAssignment* psa = nullptr;
      for (const v1::PodSetAssignment& ps : wl.status().admission().pod_set_assignments()) {
        if (ps.name() == set_name) psa = &ps;
      }
      if (psa == nullptr) {
        return absl::StrCat("expected ", name, " to have an admitted pod set ", set_name);
      }
      const v1::TopologyAssignment& got = psa->topology_assignment();
      if (want.levels.has_value()) {
        const std::vector<std::string> got_levels(got.levels().begin(), got.levels().end());
        if (got_levels != *want.levels) {
          return absl::StrCat("expected ", name, " pod set ", set_name, " placed by levels [",
                              absl::StrJoin(*want.levels, ", "), "], saw [",
                              absl::StrJoin(got_levels, ", "), "]");
        }
      }
      // The same domains with the same counts, whatever the order they are listed in.
      std::vector<std::pair<std::vector<std::string>, int32_t>> want_domains;
      std::vector<std::pair<std::vector<std::string>, int32_t>> got_domains;
      for (const TopologyDomainExpectation& d : want.domains) {
        want_domains.emplace_back(d.values, d.count);
      }
      for (const v1::TopologyDomainAssignment& d : got.domains()) {
        got_domains.emplace_back(std::vector<std::string>(d.values().begin(), d.values().end()),
                                 d.count());
      }
      std::sort(want_domains.begin(), want_domains.end());
      std::sort(got_domains.begin(), got_domains.end());
      if (want_domains != got_domains) {
        return absl::StrCat("expected ", name, " pod set ", set_name, " placed on ",
                            DomainsString(want_domains), ", saw ", DomainsString(got_domains));
      }
    }
    return "";
  }

  std::string CheckTopology(const Expectation& expect,
                            const std::map<std::string, const v1::Workload*>& by_key) {
    for (const auto& [name, pod_sets] : expect.topology_assignments) {
      if (std::string e = CheckTopologyAssignments(name, pod_sets, by_key); !e.empty()) return e;
    }
    for (const auto& [name, nodes] : expect.unhealthy_nodes) {
      absl::StatusOr<std::string> key = Resolve(name);
      if (!key.ok() || by_key.count(*key) == 0) {
        return absl::StrCat("unhealthyNodes: no workload ", name);
      }
      const auto& field = by_key.at(*key)->status().unhealthy_nodes();
      std::vector<std::string> got(field.begin(), field.end());
      std::vector<std::string> want = nodes;
      std::sort(got.begin(), got.end());
      std::sort(want.begin(), want.end());
      if (got != want) {
        return absl::StrCat("expected ", name, " to have unhealthy nodes [",
                            absl::StrJoin(want, ", "), "], saw [", absl::StrJoin(got, ", "), "]");
      }
    }
    return "";
  }

  engine::TollgateApi& api() { return service_.api(); }

  const Scenario& scenario_;
  core::SimulatedClock& clock_;
  ScenarioService& service_;
  std::map<std::string, std::string> rejected_;
  // "namespace/name" of every workload this scenario submitted successfully.
  std::set<std::string> submitted_;
  std::map<std::string, absl::Duration> runtimes_;
  // Set when the scenario plays the MultiKueue controller (`multiKueue:`).
  std::unique_ptr<MultiKueueSim> multi_kueue_;
};

}  // namespace

core::SchedulerConfig ToSchedulerConfig(const manifest::KueueConfiguration& config) {
  core::SchedulerConfig out = config.scheduler;
  out.evictions_need_ack = false;
  return out;
}

absl::StatusOr<ScenarioResult> RunScenario(const Scenario& scenario) {
  TOLLGATE_ASSIGN_OR_RETURN(TempDir dir, TempDir::Create());
  core::SchedulerConfig config = ToSchedulerConfig(scenario.config);
  config.local_queue_label_keys_to_copy = scenario.cost_attribution_labels;
  config.evictions_need_ack = scenario.evictions_need_ack;
  TOLLGATE_ASSIGN_OR_RETURN(std::unique_ptr<storage::RocksDbStore> store,
                            storage::RocksDbStore::Open(dir.path() + "/db"));
  core::SimulatedClock clock(ScenarioEpoch());
  ScenarioService service(*store, clock, config);
  TOLLGATE_RETURN_IF_ERROR(service.Start());
  Run run(scenario, clock, service);
  return run.Execute();
}

int RunScenarioCommand(const std::vector<std::string>& paths, std::ostream& out) {
  absl::StatusOr<std::vector<std::string>> files = CollectScenarioFiles(paths);
  if (!files.ok()) {
    out << "error: " << files.status().message() << "\n0 passed, 1 failed\n";
    return 1;
  }
  int passed = 0;
  int failed = 0;
  for (const std::string& file : *files) {
    absl::StatusOr<Scenario> scenario = ParseScenarioFile(file);
    if (!scenario.ok()) {
      out << "FAIL " << file << ": " << scenario.status().message() << "\n";
      ++failed;
      continue;
    }
    absl::StatusOr<ScenarioResult> result = RunScenario(*scenario);
    if (!result.ok()) {
      out << "FAIL " << scenario->name << ": " << result.status().message() << "\n";
      ++failed;
    } else if (result->passed) {
      out << "PASS " << result->name << "\n";
      ++passed;
    } else {
      out << "FAIL " << result->name << ": " << result->failure << "\n";
      ++failed;
    }
    out.flush();
  }
  out << passed << " passed, " << failed << " failed\n";
  return failed == 0 && passed > 0 ? 0 : 1;
}

}  // namespace tollgate::sim
