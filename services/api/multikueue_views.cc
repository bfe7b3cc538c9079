#include "services/api/multikueue_views.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace tollgate::api {
namespace {

absl::Time TimeOf(const google::protobuf::Timestamp& t) {
  return absl::FromUnixSeconds(t.seconds()) + absl::Nanoseconds(t.nanos());
}

const v1::Condition* FindTrue(const v1::WorkloadStatus& status, absl::string_view type) {
  for (const v1::Condition& c : status.conditions()) {
    if (c.type() == type && c.status() == "True") return &c;
  }
  return nullptr;
}

std::optional<core::RemoteCondition> RemoteConditionOf(const v1::WorkloadStatus& status,
                                                       absl::string_view type) {
  const v1::Condition* c = FindTrue(status, type);
  if (c == nullptr) return std::nullopt;
  return core::RemoteCondition{TimeOf(c->last_transition_time()), c->reason(), c->message()};
}

}  // namespace

std::string KeyOf(const v1::Workload& workload) {
  return absl::StrCat(workload.metadata().namespace_(), "/", workload.metadata().name());
}

const v1::AdmissionCheckState* FindCheckState(const v1::Workload& workload,
                                              absl::string_view check) {
  for (const v1::AdmissionCheckState& s : workload.status().admission_checks()) {
    if (s.name() == check) return &s;
  }
  return nullptr;
}

std::optional<core::CheckState> CheckStateOf(const v1::Workload& workload,
                                             absl::string_view check) {
  const v1::AdmissionCheckState* s = FindCheckState(workload, check);
  if (s == nullptr) return std::nullopt;
  if (s->state() == "Ready") return core::CheckState::kReady;
  if (s->state() == "Retry") return core::CheckState::kRetry;
  if (s->state() == "Rejected") return core::CheckState::kRejected;
  return core::CheckState::kPending;
}

std::string CheckStateText(core::CheckState state) { return core::CheckStateName(state); }

bool HoldsQuota(const v1::Workload& workload) {
  switch (workload.status().state()) {
    case v1::WORKLOAD_STATE_ADMITTED:
    case v1::WORKLOAD_STATE_QUOTA_RESERVED:
    case v1::WORKLOAD_STATE_EVICTING:
      return true;
    default:
      return false;
  }
}

core::LocalView LocalViewOf(const v1::Workload& workload, absl::string_view check) {
  core::LocalView local;
  local.holds_quota = HoldsQuota(workload);
  local.finished = workload.status().state() == v1::WORKLOAD_STATE_FINISHED;
  if (workload.status().state() == v1::WORKLOAD_STATE_EVICTING) {
    const v1::Condition* evicted = FindTrue(workload.status(), "Evicted");
    local.evicted_message = evicted != nullptr ? evicted->message() : std::string();
  }
  local.check_state = CheckStateOf(workload, check).value_or(core::CheckState::kPending);
  if (!workload.status().cluster_name().empty()) {
    local.cluster_name = workload.status().cluster_name();
  }
  return local;
}

core::RemoteCopy RemoteCopyOf(const v1::Workload& copy, const v1::Workload& origin_workload) {
  core::RemoteCopy remote;
  const v1::WorkloadStatus& status = copy.status();
  if (status.state() == v1::WORKLOAD_STATE_ADMITTED) {
    const v1::Condition* admitted = FindTrue(status, "Admitted");
    remote.admitted_since = admitted != nullptr && admitted->has_last_transition_time()
                                ? TimeOf(admitted->last_transition_time())
                                : TimeOf(status.admission_time());
  }
  remote.evicted = RemoteConditionOf(status, "Evicted");
  // A copy its worker evicted and admitted again in one step (a preemption without hold on a
  // worker with room) never shows Evicted=True to the manager; its Requeued condition, set by
  // the requeue and kept through the next admission, says it was evicted. Kueue's worker never
  // admits again in the step that evicts (its job stops first), so Kueue's manager sees the
  // eviction and retries: counted as evicted, the copy leads to the same Retry and fresh copies.
  if (!remote.evicted.has_value()) remote.evicted = RemoteConditionOf(status, "Requeued");
  if (status.state() == v1::WORKLOAD_STATE_FINISHED) {
    remote.finished = RemoteConditionOf(status, "Finished");
    if (!remote.finished.has_value()) remote.finished = core::RemoteCondition{};
  }
  // The worker normalizes quantities its own way, so only what names the work is compared:
  // the LocalQueue, each pod set's name and count, and spec.active (Kueue compares the whole
  // spec; docs/multicluster.md). A copy deactivated on its worker therefore no longer matches
  // an active workload and is removed, so a re-dispatch makes a fresh copy rather than waiting
  // on the inactive one.
  const v1::WorkloadSpec& a = copy.spec();
  const v1::WorkloadSpec& b = origin_workload.spec();
  const auto active = [](const v1::WorkloadSpec& spec) {
    return !spec.has_active() || spec.active();
  };
  bool same = a.queue_name() == b.queue_name() && a.pod_sets_size() == b.pod_sets_size() &&
              active(a) == active(b);
  for (int i = 0; same && i < a.pod_sets_size(); ++i) {
    same = a.pod_sets(i).name() == b.pod_sets(i).name() &&
           a.pod_sets(i).count() == b.pod_sets(i).count();
  }
  remote.spec_in_sync = same;
  return remote;
}

v1::Workload CopyOf(const v1::Workload& origin_workload, absl::string_view origin) {
  v1::Workload copy;
  v1::ObjectMeta* meta = copy.mutable_metadata();
  meta->set_name(origin_workload.metadata().name());
  meta->set_namespace_(origin_workload.metadata().namespace_());
  *meta->mutable_labels() = origin_workload.metadata().labels();
  *meta->mutable_annotations() = origin_workload.metadata().annotations();
  (*meta->mutable_labels())[std::string(kOriginLabel)] = std::string(origin);
  v1::WorkloadSpec* spec = copy.mutable_spec();
  spec->set_queue_name(origin_workload.spec().queue_name());
  // The effective priority, not the class: the worker need not define the manager's classes.
  spec->set_priority(origin_workload.status().priority());
  *spec->mutable_pod_sets() = origin_workload.spec().pod_sets();
  if (origin_workload.spec().has_maximum_execution_time_seconds()) {
    spec->set_maximum_execution_time_seconds(
        origin_workload.spec().maximum_execution_time_seconds());
  }
  if (origin_workload.spec().has_payload()) {
    *spec->mutable_payload() = origin_workload.spec().payload();
  }
  return copy;
}

bool NeedsWinnerMark(const v1::Workload& origin_workload, absl::string_view cluster,
                     const v1::Workload& copy) {
  return !cluster.empty() && origin_workload.status().cluster_name() == cluster &&
         HoldsQuota(copy) && !copy.status().multi_kueue_winner();
}

std::optional<v1::WorkloadPayload> PayloadToCarry(const v1::Workload& origin_workload,
                                                  const v1::Workload& copy) {
  if (!origin_workload.spec().has_payload() || !copy.spec().has_payload() ||
      copy.status().state() == v1::WORKLOAD_STATE_FINISHED) {
    return std::nullopt;
  }
  const v1::WorkloadPayload& local = origin_workload.spec().payload();
  const v1::WorkloadPayload& remote = copy.spec().payload();
  // Another kind is another object: tollgated refuses the change, and the copy is not this one's.
  if (local.api_version() != remote.api_version() || local.kind() != remote.kind()) {
    return std::nullopt;
  }
  if (local.content_type() == remote.content_type() && local.data() == remote.data()) {
    return std::nullopt;
  }
  return local;
}

std::optional<int32_t> PriorityToCarry(const v1::Workload& origin_workload,
                                       const v1::Workload& copy) {
  if (copy.status().state() == v1::WORKLOAD_STATE_FINISHED) return std::nullopt;
  // CopyOf writes the effective priority as the copy's explicit one.
  const int32_t priority = origin_workload.status().priority();
  if (copy.spec().has_priority() && copy.spec().priority() == priority) return std::nullopt;
  return priority;
}

std::optional<v1::WorkloadPayload> JobStatusToMirror(const v1::Workload& origin_workload,
                                                     const v1::Workload& winner_copy) {
  if (!winner_copy.status().has_job_status()) return std::nullopt;
  const v1::WorkloadPayload& remote = winner_copy.status().job_status();
  const v1::WorkloadPayload& local = origin_workload.status().job_status();
  if (origin_workload.status().has_job_status() && local.content_type() == remote.content_type() &&
      local.api_version() == remote.api_version() && local.kind() == remote.kind() &&
      local.data() == remote.data()) {
    return std::nullopt;
  }
  return remote;
}

std::string FinishReasonOf(const core::RemoteCondition& finished) {
  return finished.reason.empty() ? std::string("Succeeded") : finished.reason;
}

std::string RemoteStateOf(const v1::Workload& copy) {
  switch (copy.status().state()) {
    case v1::WORKLOAD_STATE_FINISHED:
      return "Finished";
    case v1::WORKLOAD_STATE_EVICTING:
      return "Evicted";
    case v1::WORKLOAD_STATE_ADMITTED:
      return "Admitted";
    default:
      return FindTrue(copy.status(), "Evicted") != nullptr ? "Evicted" : "Pending";
  }
}

std::vector<v1::MultiKueueRemoteState> RemoteStatesOf(
    const v1::Workload& origin_workload, const std::map<std::string, WorkerObservation>& workers) {
  std::set<std::string> clusters(origin_workload.status().nominated_cluster_names().begin(),
                                 origin_workload.status().nominated_cluster_names().end());
  if (!origin_workload.status().cluster_name().empty()) {
    clusters.insert(origin_workload.status().cluster_name());
  }
  for (const auto& [cluster, worker] : workers) {
    if (worker.connected && worker.copy.has_value()) clusters.insert(cluster);
  }
  std::vector<v1::MultiKueueRemoteState> out;
  for (const std::string& cluster : clusters) {
    v1::MultiKueueRemoteState& remote = out.emplace_back();
    remote.set_cluster(cluster);
    auto it = workers.find(cluster);
    if (it == workers.end() || !it->second.connected) {
      remote.set_state("Unreachable");
    } else if (!it->second.copy.has_value()) {
      remote.set_state("NoCopy");
    } else {
      remote.set_state(RemoteStateOf(*it->second.copy));
    }
  }
  return out;
}

bool SameRemoteStates(const v1::Workload& origin_workload,
                      const std::vector<v1::MultiKueueRemoteState>& remotes) {
  const auto& recorded = origin_workload.status().multi_kueue_remotes();
  if (recorded.size() != static_cast<int>(remotes.size())) return false;
  for (int i = 0; i < recorded.size(); ++i) {
    if (recorded[i].cluster() != remotes[i].cluster() ||
        recorded[i].state() != remotes[i].state()) {
      return false;
    }
  }
  return true;
}

bool HasOrigin(const v1::Workload& copy, absl::string_view origin) {
  auto it = copy.metadata().labels().find(std::string(kOriginLabel));
  return it != copy.metadata().labels().end() && it->second == origin;
}

namespace {

core::ComponentWorkload ComponentOf(const v1::Workload& wl) {
  core::ComponentWorkload out;
  out.name = wl.metadata().name();
  auto it = wl.metadata().annotations().find(std::string(core::kComponentWorkloadIndexAnnotation));
  if (it != wl.metadata().annotations().end()) out.index = core::ComponentIndexOf(it->second);
  out.cluster_name = wl.status().cluster_name();
  return out;
}

int ExpectedComponents(const v1::Workload& wl) {
  auto it = wl.metadata().annotations().find(std::string(core::kComponentWorkloadCountAnnotation));
  return it == wl.metadata().annotations().end() ? 0 : core::ComponentIndexOf(it->second);
}

}  // namespace

std::string ComponentOwnerOf(const v1::Workload& wl) {
  if (wl.metadata().annotations().count(std::string(core::kComponentWorkloadIndexAnnotation)) ==
          0 ||
      wl.metadata().owner_references_size() != 1) {
    return "";
  }
  return wl.metadata().owner_references(0).uid();
}

std::optional<core::ComponentDecision> ComponentDecisionFor(
    const v1::Workload& workload, const std::vector<const v1::Workload*>& workloads) {
  const std::string owner = ComponentOwnerOf(workload);
  if (owner.empty()) return std::nullopt;
  std::vector<core::ComponentWorkload> others;
  for (const v1::Workload* other : workloads) {
    if (other->metadata().namespace_() != workload.metadata().namespace_() ||
        other->metadata().name() == workload.metadata().name() ||
        ComponentOwnerOf(*other) != owner) {
      continue;
    }
    others.push_back(ComponentOf(*other));
  }
  return core::DecideComponentDispatch(ComponentOf(workload), others, ExpectedComponents(workload));
}

}  // namespace tollgate::api
