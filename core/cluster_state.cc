#include "core/cluster_state.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/admission_planner.h"
#include "core/fair_sharing.h"
#include "core/node_matching.h"
#include "core/saturating.h"

namespace tollgate::core {
namespace {

std::string LocalQueueKey(absl::string_view ns, absl::string_view name) {
  return absl::StrCat(ns, "/", name);
}

}  // namespace

ClusterState::ClusterState(SchedulerConfig config)
    : config_(std::move(config)), ids_by_key_(&workloads_) {
  workloads_.push_back(nullptr);  // ids start at 1
}

// --- Configuration -------------------------------------------------------------------------

absl::Status ClusterState::ApplyNamespace(NamespaceSpec spec, absl::Time now) {
  std::string name = spec.name;
  namespaces_[name] = std::move(spec);
  // Selectors may match differently now: give parked workloads another look.
  RequeueAllInadmissible(now);
  return absl::OkStatus();
}

absl::Status ClusterState::ApplyResourceFlavor(ResourceFlavorSpec spec, absl::Time now) {
  std::string name = spec.name;
  flavors_[name] = std::move(spec);
  RecomputeActivity();
  RerouteAllPending(now);
  RequeueAllInadmissible(now);
  return absl::OkStatus();
}

absl::Status ClusterState::ApplyClusterQueue(ClusterQueueSpec spec, absl::Time now) {
  std::string name = spec.name;
  cluster_queue_specs_[name] = std::move(spec);
  RebuildQuotaTree(now);
  return absl::OkStatus();
}

absl::Status ClusterState::ApplyCohort(CohortSpec spec, absl::Time now) {
  std::string name = spec.name;
  cohorts_[name] = std::move(spec);
  RebuildQuotaTree(now);
  return absl::OkStatus();
}

absl::Status ClusterState::ApplyLocalQueue(LocalQueueSpec spec, absl::Time now) {
  const std::string key = LocalQueueKey(spec.namespace_name, spec.name);
  local_queues_[key] = LocalQueueRuntime{std::move(spec)};
  if (config_.admission_fair_sharing.enable && !fair_usage_.contains(key)) {
    FairUsageLedger& ledger = fair_usage_[key];
    ledger.last_update = now;
    ledger.next_sample = now + config_.admission_fair_sharing.usage_sampling_interval;
  }
  RerouteAllPending(now);
  DrainStoppedQueues(now);
  return absl::OkStatus();
}

absl::Status ClusterState::ApplyPriorityClass(PriorityClassSpec spec, absl::Time now) {
  std::string name = spec.name;
  if (spec.is_pod_priority_class) {
    pod_priority_classes_[name] = std::move(spec);
  } else {
    workload_priority_classes_[name] = std::move(spec);
  }
  return absl::OkStatus();
}

absl::Status ClusterState::DeleteObject(ObjectKind kind, absl::string_view namespace_name,
                                        absl::string_view name, absl::Time now) {
  auto not_found = [&]() {
    return absl::NotFoundError(absl::StrCat(ObjectKindName(kind), " ",
                                            namespace_name.empty() ? "" : namespace_name,
                                            namespace_name.empty() ? "" : "/", name, " not found"));
  };
  const std::string key(name);
  switch (kind) {
    case ObjectKind::kNamespace:
      if (namespaces_.erase(key) == 0) return not_found();
      RequeueAllInadmissible(now);
      return absl::OkStatus();
    case ObjectKind::kResourceFlavor:
      if (flavors_.erase(key) == 0) return not_found();
      RecomputeActivity();
      RerouteAllPending(now);
      return absl::OkStatus();
    case ObjectKind::kClusterQueue:
      if (cluster_queue_specs_.erase(key) == 0) return not_found();
      RebuildQuotaTree(now);
      return absl::OkStatus();
    case ObjectKind::kCohort:
      if (cohorts_.erase(key) == 0) return not_found();
      RebuildQuotaTree(now);
      return absl::OkStatus();
    case ObjectKind::kLocalQueue:
      if (local_queues_.erase(LocalQueueKey(namespace_name, name)) == 0) return not_found();
      RerouteAllPending(now);
      return absl::OkStatus();
    case ObjectKind::kWorkloadPriorityClass:
      if (workload_priority_classes_.erase(key) == 0) return not_found();
      return absl::OkStatus();
    case ObjectKind::kPriorityClass:
      if (pod_priority_classes_.erase(key) == 0) return not_found();
      return absl::OkStatus();
  }
  return not_found();
}

void ClusterState::RebuildQuotaTree(absl::Time now) {
  tree_.Build(cluster_queue_specs_, cohorts_, fr_index_);

  // Keep queues of surviving ClusterQueues; drop the others (their workloads are re-routed).
  for (auto it = cluster_queues_.begin(); it != cluster_queues_.end();) {
    if (cluster_queue_specs_.count(it->first) == 0) {
      for (WorkloadId id : it->second.queue.InOrder()) queued_in_.erase(id);
      it = cluster_queues_.erase(it);
    } else {
      ++it;
    }
  }
  for (const auto& [name, spec] : cluster_queue_specs_) {
    ClusterQueueRuntime& cq = cluster_queues_[name];
    cq.spec = spec;
    cq.node = tree_.ClusterQueue(name);
    cq.group_of_resource.clear();
    for (size_t g = 0; g < spec.resource_groups.size(); ++g) {
      for (const std::string& r : spec.resource_groups[g].covered_resources) {
        cq.group_of_resource[r] = static_cast<int>(g);
      }
    }
    cq.holding.Clear();
  }
  cluster_queue_by_name_.clear();
  cluster_queue_by_node_.clear();
  for (auto& [name, cq] : cluster_queues_) {
    cluster_queue_by_name_[name] = &cq;
    if (cq.node != nullptr) cluster_queue_by_node_[cq.node] = &cq;
  }
  // Re-add the usage of every workload holding quota, in id order.
  for (const auto& wl : workloads_) {
    if (wl == nullptr || !wl->HoldsQuota() || !wl->status.admission.has_value()) continue;
    ClusterQueueRuntime* cq = mutable_cluster_queue(wl->status.admission->cluster_queue);
    if (cq == nullptr) continue;  // Its ClusterQueue is gone; the usage goes with it.
    cq->holding.Insert(*wl);
    AddUsageOf(*wl);
  }
  RecomputeActivity();
  RerouteAllPending(now);
  RequeueAllInadmissible(now);
  DrainStoppedQueues(now);
}

void ClusterState::RecomputeActivity() {
  for (auto& [name, cq] : cluster_queues_) {
    cq.active = true;
    cq.inactive_reason.clear();
    if (cq.spec.stop_policy != StopPolicy::kNone) {
      cq.active = false;
      cq.inactive_reason = "Stopped";
      continue;
    }
    if (tree_.InCycle(name)) {
      cq.active = false;
      cq.inactive_reason = "CohortCycle";
      continue;
    }
    for (const ResourceGroupSpec& group : cq.spec.resource_groups) {
      for (const FlavorQuotasSpec& f : group.flavors) {
        if (flavors_.count(f.flavor) == 0) {
          cq.active = false;
          cq.inactive_reason = absl::StrCat("FlavorNotFound: ", f.flavor);
        }
      }
    }
  }
}

void ClusterState::DrainStoppedQueues(absl::Time now) {
  for (auto& [name, cq] : cluster_queues_) {
    const bool drain_cq = cq.spec.stop_policy == StopPolicy::kHoldAndDrain;
    std::vector<WorkloadId> to_evict;
    for (WorkloadId id : cq.holding) {
      const Workload* wl = workload(id);
      if (wl == nullptr || wl->status.state != WorkloadState::kAdmitted) continue;
      bool drain = drain_cq;
      if (!drain) {
        auto lq = local_queues_.find(LocalQueueKey(wl->spec.namespace_name, wl->spec.queue_name));
        drain =
            lq != local_queues_.end() && lq->second.spec.stop_policy == StopPolicy::kHoldAndDrain;
      }
      if (drain) to_evict.push_back(id);
    }
    for (WorkloadId id : to_evict) {
      Workload& wl = *mutable_workload(id);
      StartEviction(wl, now, drain_cq ? "ClusterQueueStopped" : "LocalQueueStopped",
                    drain_cq ? absl::StrCat("The ClusterQueue ", name, " is stopped")
                             : absl::StrCat("The LocalQueue ", wl.spec.queue_name, " is stopped"));
    }
  }
}

// --- Routing and queues --------------------------------------------------------------------

ClusterState::Route ClusterState::RouteOf(const Workload& wl) {
  Route route;
  auto lq = local_queues_.find(LocalQueueKey(wl.spec.namespace_name, wl.spec.queue_name));
  if (lq == local_queues_.end()) {
    route.blocked_message = absl::StrCat("LocalQueue ", wl.spec.queue_name, " doesn't exist");
    return route;
  }
  if (lq->second.spec.stop_policy != StopPolicy::kNone) {
    route.blocked_message = absl::StrCat("LocalQueue ", wl.spec.queue_name, " is inactive");
    return route;
  }
  const std::string& cq_name = lq->second.spec.cluster_queue;
  auto cq = cluster_queues_.find(cq_name);
  if (cq == cluster_queues_.end()) {
    route.blocked_message = absl::StrCat("ClusterQueue ", cq_name, " doesn't exist");
    return route;
  }
  route.cluster_queue = &cq->second;
  if (!cq->second.active) {
    route.blocked_message = absl::StrCat("ClusterQueue ", cq_name, " is inactive");
  }
  return route;
}

absl::Time ClusterState::QueueOrderTime(const Workload& wl) const {
  if (config_.wait_for_pods_ready.enable &&
      config_.wait_for_pods_ready.requeuing_timestamp == RequeuingTimestamp::kEviction &&
      wl.status.history().pods_ready_eviction_time != absl::InfinitePast()) {
    return wl.status.history().pods_ready_eviction_time;
  }
  return wl.creation_time;
}

QueueKey ClusterState::KeyOf(const Workload& wl) const {
  return QueueKey{1, wl.priority, QueueOrderTime(wl), wl.id};
}

void ClusterState::Unqueue(Workload& wl) {
  auto it = queued_in_.find(wl.id);
  if (it == queued_in_.end()) return;
  ClusterQueueRuntime* cq = it->second;
  if (cq->queue.sticky() == wl.id) cq->queue.SetSticky(std::nullopt);
  cq->queue.Remove(wl.id);
  queued_in_.erase(it);
}

void ClusterState::Requeue(Workload& wl, absl::Time now) {
  Unqueue(wl);
  if (wl.status.state != WorkloadState::kPending || wl.status.deactivated || !wl.spec.active) {
    return;
  }
  QueueRouted(wl, RouteOf(wl), now, nullptr);
}

void ClusterState::QueueRouted(Workload& wl, const Route& route, absl::Time now,
                               absl::flat_hash_map<ClusterQueueRuntime*, PendingKeys>* keys) {
  if (route.cluster_queue != nullptr) {
    ClusterQueueRuntime& cq = *route.cluster_queue;
    const absl::Time requeue_at = wl.status.history().requeue_at;
    const bool backing_off = requeue_at > now;
    if (keys != nullptr) {
      PendingKeys& pending = (*keys)[&cq];
      (backing_off ? pending.inadmissible : pending.active).push_back(KeyOf(wl));
    } else if (backing_off) {
      cq.queue.PushInadmissible(KeyOf(wl));
    } else {
      cq.queue.PushActive(KeyOf(wl));
    }
    if (backing_off) timers_.insert({requeue_at, TimerKind::kBackoffExpired, wl.id});
    queued_in_[wl.id] = &cq;
  }
  if (!route.blocked_message.empty() && wl.status.pending_message != route.blocked_message) {
    wl.status.pending_message = route.blocked_message;
    SetCondition(wl.status,
                 Condition{"QuotaReserved", false, "Inadmissible", route.blocked_message, now});
    MarkDirty(wl.id);
  }
}

void ClusterState::RerouteAllPending(absl::Time now) {
  for (auto& wl : workloads_) {
    if (wl == nullptr || wl->status.state != WorkloadState::kPending) continue;
    Route route = RouteOf(*wl);
    auto it = queued_in_.find(wl->id);
    const bool same_queue = it != queued_in_.end() && it->second == route.cluster_queue;
    if (same_queue && route.blocked_message.empty()) continue;
    if (same_queue && wl->status.pending_message == route.blocked_message) continue;
    if (!same_queue) {
      Requeue(*wl, now);
    } else if (wl->status.pending_message != route.blocked_message) {
      wl->status.pending_message = route.blocked_message;
      SetCondition(wl->status,
                   Condition{"QuotaReserved", false, "Inadmissible", route.blocked_message, now});
      MarkDirty(wl->id);
    }
  }
}

void ClusterState::RequeueInadmissibleInTreeOf(absl::string_view cluster_queue, absl::Time now) {
  ClusterQueueRuntime* cq = mutable_cluster_queue(cluster_queue);
  if (cq == nullptr || cq->node == nullptr) return;
  auto ready_at = [this](WorkloadId id) { return workload(id)->status.history().requeue_at; };
  if (!cq->node->HasParent()) {
    cq->queue.RequeueInadmissible(now, ready_at);
    return;
  }
  for (QuotaNode* node : tree_.ClusterQueuesUnder(cq->node->Root())) {
    if (ClusterQueueRuntime* other = mutable_cluster_queue(node->name())) {
      other->queue.RequeueInadmissible(now, ready_at);
    }
  }
}

void ClusterState::RequeueAllInadmissible(absl::Time now) {
  auto ready_at = [this](WorkloadId id) { return workload(id)->status.history().requeue_at; };
  for (auto& [name, cq] : cluster_queues_) cq.queue.RequeueInadmissible(now, ready_at);
}

bool ClusterState::NamespaceMatches(const ClusterQueueSpec& cq,
                                    absl::string_view namespace_name) const {
  if (!cq.namespace_selector.has_value()) return true;
  const LabelSelector& selector = *cq.namespace_selector;
  if (selector.match_labels.empty() && selector.match_expressions.empty()) return true;
  static const Labels kNoLabels;
  auto it = namespaces_.find(std::string(namespace_name));
  // Kubernetes always labels a namespace with its own name.
  Labels labels = it == namespaces_.end() ? kNoLabels : it->second.labels;
  labels["kubernetes.io/metadata.name"] = std::string(namespace_name);
  return SelectorMatches(selector, labels);
}

const std::string* ClusterState::QueuedIn(WorkloadId id) const {
  auto it = queued_in_.find(id);
  return it == queued_in_.end() ? nullptr : &it->second->spec.name;
}

// --- Usage ---------------------------------------------------------------------------------

void ClusterState::AddUsageOf(const Workload& wl) {
  ClusterQueueRuntime* cq = mutable_cluster_queue(wl.status.admission->cluster_queue);
  if (cq == nullptr || cq->node == nullptr) return;
  for (const auto& [fr, value] : wl.quota_usage) cq->node->AddUsage(fr, value);
}

void ClusterState::RemoveUsageOf(const Workload& wl) {
  ClusterQueueRuntime* cq = mutable_cluster_queue(wl.status.admission->cluster_queue);
  if (cq == nullptr || cq->node == nullptr) return;
  for (const auto& [fr, value] : wl.quota_usage) cq->node->RemoveUsage(fr, value);
}

void ClusterState::ReleaseQuota(Workload& wl, absl::Time now) {
  if (!wl.HoldsQuota()) return;
  const std::string cq_name = wl.status.admission->cluster_queue;
  if (ClusterQueueRuntime* cq = mutable_cluster_queue(cq_name)) {
    if (cq->holding.Erase(wl.id)) RemoveUsageOf(wl);
  }
  wl.quota_usage.clear();
  unready_admitted_.erase(wl.id);
  RequeueInadmissibleInTreeOf(cq_name, now);
}

absl::Duration ClusterState::EvictionGrace(const Workload& wl) const {
  return wl.spec.checkpoint_grace_seconds > 0 ? absl::Seconds(wl.spec.checkpoint_grace_seconds)
                                              : config_.eviction_grace_period;
}

void ClusterState::StartEviction(Workload& wl, absl::Time now, const std::string& reason,
                                 const std::string& message) {
  if (wl.status.state != WorkloadState::kAdmitted) return;
  wl.status.state = WorkloadState::kEvicting;
  wl.status.mutable_history().evicted_at = now;
  RefileHeld(wl);
  SetCondition(wl.status, Condition{"Evicted", true, reason, message, now});
  AddEvent(wl.status, now, absl::StrCat("EvictedDueTo", reason), message);
  MarkDirty(wl.id);
  if (config_.evictions_need_ack) {
    // Cooperative preemption: the workload's own checkpoint grace, else the service default.
    wl.status.mutable_history().eviction_deadline = now + EvictionGrace(wl);
    SetCondition(wl.status,
                 Condition{"Preempting", true, reason,
                           absl::StrCat("checkpoint and stop by ",
                                        absl::FormatTime(wl.status.history().eviction_deadline)),
                           now});
    timers_.insert({wl.status.history().eviction_deadline, TimerKind::kEvictionGrace, wl.id});
  } else {
    // Nothing to wait for: the workload stops at once and returns to its queue.
    const absl::Status released = ReleaseEvicted(wl.Key(), now);
    (void)released;  // Cannot fail: the workload is evicting.
  }
}

absl::Status ClusterState::ReleaseEvicted(absl::string_view key, absl::Time now) {
  Workload* wl = FindMutable(key);
  if (wl == nullptr) return absl::NotFoundError(absl::StrCat("workload ", key, " not found"));
  if (wl->status.state != WorkloadState::kEvicting) {
    return absl::FailedPreconditionError(absl::StrCat(
        "workload ", key, " is ", WorkloadStateName(wl->status.state), ", not Evicting"));
  }
  ReleaseQuota(*wl, now);
  wl->status.state = WorkloadState::kPending;
  wl->status.admission.reset();
  wl->status.pods_ready = false;
  wl->status.mutable_history().eviction_deadline = absl::InfinitePast();
  SetCondition(wl->status, Condition{"Preempting", false, "Stopped", "", now});
  wl->status.pending_message =
      wl->status.deactivated
          ? "The workload is deactivated due to exceeding the maximum number of re-queuing "
            "retries"
          : "";
  SetCondition(wl->status, Condition{"QuotaReserved", false, "Pending", "Evicted, requeued", now});
  SetCondition(wl->status, Condition{"Admitted", false, "NoReservation", "", now});
  SetCondition(wl->status, Condition{"Requeued", true, "Evicted", "", now});
  AddEvent(wl->status, now, "Requeued", "Workload requeued after eviction");
  MarkDirty(wl->id);
  Requeue(*wl, now);
  return absl::OkStatus();
}

// --- Workloads -----------------------------------------------------------------------------

absl::StatusOr<int32_t> ClusterState::ResolvePriority(const WorkloadSpec& spec) const {
  if (spec.priority.has_value()) return *spec.priority;
  if (spec.priority_class_name.empty()) return 0;
  if (auto it = workload_priority_classes_.find(spec.priority_class_name);
      it != workload_priority_classes_.end()) {
    return it->second.value;
  }
  if (auto it = pod_priority_classes_.find(spec.priority_class_name);
      it != pod_priority_classes_.end()) {
    return it->second.value;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("spec.priorityClassName: priority class \"", spec.priority_class_name,
                   "\" not found (neither a WorkloadPriorityClass nor a PriorityClass)"));
}

absl::StatusOr<SubmitOutcome> ClusterState::Submit(WorkloadSpec spec, std::string uid,
                                                   absl::Time now) {
  if (spec.queue_name.empty()) {
    if (local_queues_.count(LocalQueueKey(spec.namespace_name, "default")) == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("spec.queueName: workload ", spec.namespace_name, "/", spec.name,
                       " names no queue and namespace ", spec.namespace_name,
                       " has no LocalQueue named \"default\""));
    }
    spec.queue_name = "default";
  }
  const std::string key = absl::StrCat(spec.namespace_name, "/", spec.name);
  if (std::optional<WorkloadId> id = ids_by_key_.Find(key)) {
    const Workload& existing = *workloads_[*id];
    if (existing.spec == spec) return SubmitOutcome{existing.id, false};
    return absl::AlreadyExistsError(
        absl::StrCat("workload ", key,
                     " already exists with a different spec; delete it first or use a new "
                     "name"));
  }
  absl::StatusOr<int32_t> priority = ResolvePriority(spec);
  if (!priority.ok()) return priority.status();

  auto wl = std::make_unique<Workload>();
  wl->id = static_cast<WorkloadId>(workloads_.size());
  wl->uid = uid.empty() ? absl::StrCat("tollgate-", wl->id) : std::move(uid);
  wl->creation_time = now;
  wl->spec = std::move(spec);
  wl->priority = *priority;
  wl->status.state = WorkloadState::kPending;
  AddEvent(wl->status, now, "Created",
           absl::StrCat("Submitted to LocalQueue ", wl->spec.queue_name));
  Workload& ref = *wl;
  workloads_.push_back(std::move(wl));
  ids_by_key_.Insert(ref.id);
  MarkDirty(ref.id);
  Requeue(ref, now);
  return SubmitOutcome{ref.id, true};
}

absl::Status ClusterState::Restore(Workload workload) {
  std::vector<std::unique_ptr<Workload>> one;
  one.push_back(std::make_unique<Workload>(std::move(workload)));
  return RestoreAll(std::move(one));
}

absl::Status ClusterState::RestoreAll(std::vector<std::unique_ptr<Workload>> workloads) {
  for (const std::unique_ptr<Workload>& wl : workloads) {
    if (wl == nullptr) return absl::InvalidArgumentError("RestoreAll: no workload");
  }
  const size_t base = workloads_.size();
  const size_t count = workloads.size();
  workloads_.reserve(base + count);
  ids_by_key_.reserve(ids_by_key_.size() + count);
  queued_in_.reserve(queued_in_.size() + count);
  for (std::unique_ptr<Workload>& wl : workloads) {
    wl->id = static_cast<WorkloadId>(workloads_.size());
    workloads_.push_back(std::move(wl));
  }

  // The key index depends on nothing else restored, and filling it (a hash of the names and a
  // probe that misses the cache per workload) is a good part of the work: for a large restore a
  // helper thread fills it while this one routes and queues. Neither side touches what the
  // other writes: the helper reads only the workloads' names and workloads_ (which neither
  // grows here), and writes only ids_by_key_.
  std::optional<std::string> duplicate;
  auto index_keys = [this, base, count, &duplicate] {
    for (size_t i = base; i < base + count; ++i) {
      const Workload& wl = *workloads_[i];
      if (!ids_by_key_.Insert(wl.id) && !duplicate.has_value()) duplicate = wl.Key();
    }
  };
  constexpr size_t kMinForHelper = 1 << 16;
  std::thread indexer;
  if (count >= kMinForHelper) {
    indexer = std::thread(index_keys);
  } else {
    index_keys();
  }

  absl::flat_hash_map<ClusterQueueRuntime*, PendingKeys> keys;
  // Routing does not change during a restore, and stored workloads mostly share a few
  // LocalQueues: the route of the previous workload's LocalQueue is reused.
  std::optional<CachedRoute> last_route;
  absl::Status status;
  for (size_t i = base; i < base + count; ++i) {
    // The workloads were just decoded elsewhere and are cold; fetch a few ahead.
    constexpr size_t kPrefetchDistance = 8;
    if (i + kPrefetchDistance < base + count) {
      const Workload& ahead = *workloads_[i + kPrefetchDistance];
      __builtin_prefetch(&ahead.spec);
      __builtin_prefetch(&ahead.status);
    }
    status = RestoreOne(*workloads_[i], &keys, &last_route);
    if (!status.ok()) break;
  }
  // Queued even after an error, so that queued_in_ and the queues agree.
  for (auto& [cq, pending] : keys) {
    cq->queue.PushAll(std::move(pending.active), /*inadmissible=*/false);
    cq->queue.PushAll(std::move(pending.inadmissible), /*inadmissible=*/true);
  }
  if (indexer.joinable()) indexer.join();
  if (duplicate.has_value()) {
    return absl::AlreadyExistsError(absl::StrCat("workload ", *duplicate, " restored twice"));
  }
  return status;
}

absl::Status ClusterState::RestoreOne(Workload& ref,
                                      absl::flat_hash_map<ClusterQueueRuntime*, PendingKeys>* keys,
                                      std::optional<CachedRoute>* last_route) {
  if (ref.HoldsQuota()) {
    const std::string key = ref.Key();
    if (!ref.status.admission.has_value()) {
      return absl::DataLossError(absl::StrCat("workload ", key, " holds quota without admission"));
    }
    ref.quota_usage.clear();
    for (const PodSetAssignment& ps : ref.status.admission->pod_sets) {
      for (const auto& [resource, flavor] : ps.flavors) {
        for (const auto& [r, amount] : ps.resource_usage) {
          if (r != resource || amount == 0) continue;
          ref.quota_usage.emplace_back(fr_index_.Intern(flavor, resource), amount);
        }
      }
    }
    if (ClusterQueueRuntime* cq = mutable_cluster_queue(ref.status.admission->cluster_queue)) {
      cq->holding.Insert(ref);
      AddUsageOf(ref);
    }
    if (ref.status.state == WorkloadState::kEvicting && config_.evictions_need_ack) {
      if (ref.status.history().eviction_deadline == absl::InfinitePast()) {
        ref.status.mutable_history().eviction_deadline =
            ref.status.history().evicted_at + EvictionGrace(ref);
      }
      timers_.insert({ref.status.history().eviction_deadline, TimerKind::kEvictionGrace, ref.id});
    }
    if (ref.status.state == WorkloadState::kAdmitted) {
      ArmPreemptionProtectionTimer(ref, ref.status.admission_time);
    }
    if (ref.status.state == WorkloadState::kAdmitted && config_.wait_for_pods_ready.enable &&
        !ref.status.pods_ready) {
      unready_admitted_.insert(ref.id);
      timers_.insert({ref.status.admission_time + config_.wait_for_pods_ready.timeout,
                      TimerKind::kPodsReadyTimeout, ref.id});
    }
  } else if (ref.status.state == WorkloadState::kPending && !ref.status.deactivated &&
             ref.spec.active) {
    // Requeue at the workload's creation time, as a fresh id is not queued yet.
    if (!last_route->has_value() || (*last_route)->namespace_name != ref.spec.namespace_name ||
        (*last_route)->queue_name != ref.spec.queue_name) {
      *last_route = CachedRoute{ref.spec.namespace_name, ref.spec.queue_name, RouteOf(ref)};
    }
    QueueRouted(ref, (*last_route)->route, ref.creation_time, keys);
  }
  return absl::OkStatus();
}

Workload* ClusterState::FindMutable(absl::string_view key) {
  std::optional<WorkloadId> id = ids_by_key_.Find(key);
  return id.has_value() ? workloads_[*id].get() : nullptr;
}

const Workload* ClusterState::FindWorkload(absl::string_view key) const {
  std::optional<WorkloadId> id = ids_by_key_.Find(key);
  return id.has_value() ? workloads_[*id].get() : nullptr;
}

const Workload* ClusterState::workload(WorkloadId id) const {
  if (id <= 0 || id >= static_cast<WorkloadId>(workloads_.size())) return nullptr;
  return workloads_[id].get();
}

Workload* ClusterState::mutable_workload(WorkloadId id) {
  if (id <= 0 || id >= static_cast<WorkloadId>(workloads_.size())) return nullptr;
  return workloads_[id].get();
}

std::vector<const Workload*> ClusterState::AllWorkloads() const {
  std::vector<const Workload*> out;
  for (const auto& wl : workloads_) {
    if (wl != nullptr) out.push_back(wl.get());
  }
  return out;
}

absl::Status ClusterState::Finish(absl::string_view key, absl::string_view message,
                                  absl::Time now) {
  Workload* wl = FindMutable(key);
  if (wl == nullptr) return absl::NotFoundError(absl::StrCat("workload ", key, " not found"));
  if (wl->status.state == WorkloadState::kFinished) return absl::OkStatus();
  if (!wl->HoldsQuota()) {
    return absl::FailedPreconditionError(absl::StrCat("workload ", key, " is ",
                                                      WorkloadStateName(wl->status.state),
                                                      "; only an admitted workload can finish"));
  }
  ReleaseQuota(*wl, now);
  wl->status.state = WorkloadState::kFinished;
  wl->status.pending_message.clear();
  SetCondition(wl->status, Condition{"Finished", true, "Succeeded", std::string(message), now});
  AddEvent(wl->status, now, "Finished",
           message.empty() ? "Workload finished" : std::string(message));
  MarkDirty(wl->id);
  return absl::OkStatus();
}

absl::Status ClusterState::Delete(absl::string_view key, absl::Time now) {
  std::optional<WorkloadId> found = ids_by_key_.Find(key);
  if (!found.has_value()) {
    return absl::NotFoundError(absl::StrCat("workload ", key, " not found"));
  }
  const WorkloadId id = *found;
  Workload& wl = *workloads_[id];
  Unqueue(wl);
  ReleaseQuota(wl, now);
  deleted_.push_back(std::string(key));
  dirty_.erase(id);
  ids_by_key_.Erase(id);
  workloads_[id].reset();
  return absl::OkStatus();
}

absl::Status ClusterState::Evict(absl::string_view key, absl::string_view reason,
                                 absl::string_view message, absl::Time now) {
  Workload* wl = FindMutable(key);
  if (wl == nullptr) return absl::NotFoundError(absl::StrCat("workload ", key, " not found"));
  if (wl->status.state != WorkloadState::kAdmitted) {
    return absl::FailedPreconditionError(
        absl::StrCat("workload ", key, " is ", WorkloadStateName(wl->status.state),
                     "; only an admitted workload can be evicted"));
  }
  StartEviction(*wl, now, std::string(reason), std::string(message));
  return absl::OkStatus();
}

absl::Status ClusterState::Preempt(absl::string_view key, absl::string_view message,
                                   absl::Time now) {
  Workload* wl = FindMutable(key);
  if (wl == nullptr) return absl::NotFoundError(absl::StrCat("workload ", key, " not found"));
  if (wl->status.state != WorkloadState::kAdmitted) {
    return absl::FailedPreconditionError(
        absl::StrCat("workload ", key, " is ", WorkloadStateName(wl->status.state),
                     "; only an admitted workload can be preempted"));
  }
  RecordPreemption(wl->status, now);
  wl->status.mutable_history().last_preemption_reason = "OnRequest";
  SetCondition(wl->status, Condition{"Preempted", true, "OnRequest", std::string(message), now});
  AddEvent(wl->status, now, "Preempted", std::string(message));
  StartEviction(*wl, now, "Preempted", std::string(message));
  return absl::OkStatus();
}

absl::Status ClusterState::RecordCheckpoint(absl::string_view key, absl::Time at, absl::Time now) {
  Workload* wl = FindMutable(key);
  if (wl == nullptr) return absl::NotFoundError(absl::StrCat("workload ", key, " not found"));
  if (at > now) {
    return absl::InvalidArgumentError(absl::StrCat("checkpoint_time: ", absl::FormatTime(at),
                                                   " is in the future (now ", absl::FormatTime(now),
                                                   ")"));
  }
  if (!wl->HoldsQuota()) {
    return absl::FailedPreconditionError(
        absl::StrCat("workload ", key, " is ", WorkloadStateName(wl->status.state),
                     "; only a running workload can report a checkpoint"));
  }
  // Reports may arrive out of order; the latest checkpoint wins.
  if (at <= wl->status.history().last_checkpoint_time) return absl::OkStatus();
  wl->status.mutable_history().last_checkpoint_time = at;
  MarkDirty(wl->id);
  RefileHeld(*wl);
  return absl::OkStatus();
}

void ClusterState::RefileHeld(const Workload& wl) {
  if (ClusterQueueRuntime* cq = mutable_cluster_queue(wl.status.admission->cluster_queue)) {
    if (cq->holding.contains(wl.id)) cq->holding.Insert(wl);
  }
}

void ClusterState::ArmPreemptionProtectionTimer(const Workload& wl, absl::Time now) {
  const ClusterQueueRuntime* cq = cluster_queue(wl.status.admission->cluster_queue);
  if (cq == nullptr) return;
  if (std::optional<absl::Time> until = PreemptionProtectedUntil(wl.status, cq->spec, now)) {
    timers_.insert({*until, TimerKind::kPreemptionProtectionEnds, wl.id});
  }
}

absl::Status ClusterState::SetPodsReady(absl::string_view key, absl::Time now) {
  Workload* wl = FindMutable(key);
  if (wl == nullptr) return absl::NotFoundError(absl::StrCat("workload ", key, " not found"));
  if (wl->status.state != WorkloadState::kAdmitted) {
    return absl::FailedPreconditionError(
        absl::StrCat("workload ", key, " is ", WorkloadStateName(wl->status.state),
                     "; pods can only be ready for an admitted workload"));
  }
  unready_admitted_.erase(wl->id);
  if (!wl->status.pods_ready) {
    wl->status.pods_ready = true;
    SetCondition(wl->status,
                 Condition{"PodsReady", true, "PodsReady", "All pods are running", now});
    MarkDirty(wl->id);
  }
  return absl::OkStatus();
}

// --- Scheduling ----------------------------------------------------------------------------

CyclePlan ClusterState::PlanCycle(absl::Time now) {
  AdmissionPlanner planner(*this);
  return planner.PlanCycle(now, cycle_ + 1);
}

void ClusterState::ApplyCycle(const CyclePlan& plan, absl::Time now) {
  cycle_ = plan.cycle;
  // Requeue the heads first: evictions below complete after the cycle in Kueue, so a head parked
  // now is woken by the quota its cohort's victims release.
  for (const PendingDecision& p : plan.pending) {
    Workload* wl = mutable_workload(p.id);
    if (wl == nullptr) continue;
    if (wl->status.pending_message != p.message) {
      wl->status.pending_message = p.message;
      SetCondition(wl->status, Condition{"QuotaReserved", false, "Pending", p.message, now});
      MarkDirty(p.id);
    }
    auto queued = queued_in_.find(p.id);
    if (queued == queued_in_.end()) continue;
    ClusterQueueRuntime* cq = queued->second;
    if (p.sticky) cq->queue.SetSticky(p.id);
    if (p.requeue == RequeueKind::kPark) cq->queue.Park(p.id);
  }
  for (const AdmissionDecision& a : plan.admissions) {
    Workload* wl = mutable_workload(a.id);
    if (wl == nullptr) continue;
    Unqueue(*wl);
    wl->status.state = WorkloadState::kAdmitted;
    wl->status.admission = a.admission;
    wl->status.admission_time = now;
    wl->status.pending_message.clear();
    wl->status.pods_ready = false;
    wl->quota_usage.assign(a.usage.begin(), a.usage.end());
    ClusterQueueRuntime* cq = mutable_cluster_queue(a.admission.cluster_queue);
    cq->holding.Insert(*wl);
    AddUsageOf(*wl);
    const std::string message =
        absl::StrCat("Quota reserved in ClusterQueue ", a.admission.cluster_queue);
    // Grow each list once for the three conditions and two events below.
    wl->status.conditions.reserve(wl->status.conditions.size() + 3);
    wl->status.events.reserve(std::min(kMaxWorkloadEvents, wl->status.events.size() + 2));
    SetCondition(wl->status, Condition{"QuotaReserved", true, "QuotaReserved", message, now});
    SetCondition(wl->status,
                 Condition{"Admitted", true, "Admitted", "The workload is admitted", now});
    SetCondition(wl->status, Condition{"Evicted", false, "Admitted", "", now});
    AddEvent(wl->status, now, "QuotaReserved", message);
    AddEvent(wl->status, now, "Admitted",
             absl::StrCat("Admitted by ClusterQueue ", a.admission.cluster_queue));
    MarkDirty(wl->id);
    if (UsesAdmissionFairSharing(cq->spec)) {
      // Kueue charges an entry penalty on admission and settles it with the decayed usage at
      // once, so the LocalQueue's next workload already sees the cost.
      const SchedulerConfig::AdmissionFairSharing& afs = config_.admission_fair_sharing;
      const double alpha = afs.usage_half_life_time == absl::ZeroDuration()
                               ? 0.0
                               : 1.0 - std::pow(0.5, absl::FDivDuration(afs.usage_sampling_interval,
                                                                        afs.usage_half_life_time));
      std::map<std::string, double> penalty;
      for (const PodSetAssignment& ps : a.admission.pod_sets) {
        for (const auto& [resource, amount] : ps.resource_usage) {
          const double units = resource == "cpu" ? static_cast<double>(amount) / 1000.0
                                                 : static_cast<double>(amount);
          penalty[resource] += units * alpha;
        }
      }
      DecayLocalQueueUsage(LocalQueueKey(wl->spec.namespace_name, wl->spec.queue_name), now,
                           penalty);
    }
    if (config_.wait_for_pods_ready.enable) {
      unready_admitted_.insert(wl->id);
      timers_.insert(
          {now + config_.wait_for_pods_ready.timeout, TimerKind::kPodsReadyTimeout, wl->id});
    }
    ArmPreemptionProtectionTimer(*wl, now);
  }
  for (const PreemptionDecision& p : plan.preemptions) {
    Workload* victim = mutable_workload(p.victim);
    if (victim == nullptr || victim->status.state != WorkloadState::kAdmitted) continue;
    const Workload* preemptor = workload(p.preemptor);
    RecordPreemption(victim->status, now);
    victim->status.mutable_history().last_preemption_reason = p.reason;
    SetCondition(victim->status, Condition{"Preempted", true, p.reason, p.message, now});
    AddEvent(victim->status, now, "Preempted",
             absl::StrCat(p.message, "; preemptor ",
                          preemptor != nullptr ? preemptor->Key() : std::string("unknown")));
    StartEviction(*victim, now, "Preempted", p.message);
  }
}

absl::StatusOr<AdmitNowResult> ClusterState::AdmitNow(absl::string_view key, bool dry_run,
                                                      absl::Time now) {
  Workload* wl = FindMutable(key);
  if (wl == nullptr) return absl::NotFoundError(absl::StrCat("workload ", key, " not found"));
  AdmitNowResult result;
  if (wl->HoldsQuota()) {
    result.outcome = AdmitNowResult::Outcome::kAdmitted;
    result.admission = *wl->status.admission;
    return result;
  }
  if (wl->status.state != WorkloadState::kPending) {
    return absl::FailedPreconditionError(
        absl::StrCat("workload ", key, " is ", WorkloadStateName(wl->status.state)));
  }
  Route route = RouteOf(*wl);
  if (route.cluster_queue == nullptr || !route.blocked_message.empty()) {
    result.message = route.blocked_message;
    return result;
  }
  ClusterQueueRuntime& cq = *route.cluster_queue;
  if (!NamespaceMatches(cq.spec, wl->spec.namespace_name)) {
    result.message = "workload namespace doesn't match ClusterQueue selector";
    return result;
  }
  AdmissionPlanner planner(*this);
  AdmissionPlanner::Evaluation eval = planner.Evaluate(*wl, cq, now);
  const FlavorMode mode = eval.assignment.RepresentativeMode();
  CyclePlan plan;
  plan.cycle = cycle_;
  if (mode == FlavorMode::kFit) {
    result.outcome = AdmitNowResult::Outcome::kAdmitted;
    result.admission = eval.assignment.ToAdmission(cq.spec.name);
    AdmissionDecision decision{wl->id, result.admission, {}};
    decision.usage.assign(eval.assignment.usage.begin(), eval.assignment.usage.end());
    plan.admissions.push_back(std::move(decision));
  } else if (mode == FlavorMode::kPreempt && !eval.targets.empty()) {
    result.outcome = AdmitNowResult::Outcome::kPreempting;
    result.admission = eval.assignment.ToAdmission(cq.spec.name);
    result.message = absl::StrCat(eval.assignment.Message(), ". Pending the preemption of ",
                                  eval.targets.size(), " workload(s)");
    for (const PreemptionTarget& t : eval.targets) {
      result.victims.push_back(t.id);
      if (workload(t.id)->status.state == WorkloadState::kEvicting) continue;
      plan.preemptions.push_back(
          PreemptionDecision{t.id, wl->id, t.reason,
                             absl::StrCat("Preempted to accommodate a workload (UID: ", wl->uid,
                                          ") due to ", t.reason)});
    }
    plan.pending.push_back(
        PendingDecision{wl->id, result.message, RequeueKind::kImmediate,
                        cq.spec.queueing_strategy == QueueingStrategy::kBestEffortFifo});
  } else {
    result.message = eval.assignment.Message();
  }
  if (!dry_run) ApplyCycle(plan, now);
  return result;
}

bool ClusterState::FireTimers(absl::Time now) {
  bool changed = false;
  for (auto& [key, ledger] : fair_usage_) {
    if (ledger.next_sample > now) continue;
    DecayLocalQueueUsage(key, now, {});
    const absl::Duration interval = config_.admission_fair_sharing.usage_sampling_interval;
    while (ledger.next_sample <= now) ledger.next_sample += interval;
    changed = true;
  }
  while (!timers_.empty() && std::get<0>(*timers_.begin()) <= now) {
    const auto [at, kind, id] = *timers_.begin();
    timers_.erase(timers_.begin());
    Workload* wl = mutable_workload(id);
    if (wl == nullptr) continue;
    switch (kind) {
      case TimerKind::kEvictionGrace:
        if (wl->status.state == WorkloadState::kEvicting &&
            wl->status.history().eviction_deadline <= now) {
          changed = ReleaseEvicted(wl->Key(), now).ok() || changed;
        }
        break;
      case TimerKind::kPodsReadyTimeout:
        if (wl->status.state == WorkloadState::kAdmitted && !wl->status.pods_ready &&
            wl->status.admission_time + config_.wait_for_pods_ready.timeout <= now) {
          PodsReadyTimeout(*wl, now);
          changed = true;
        }
        break;
      case TimerKind::kPreemptionProtectionEnds:
        // The workload may be a victim again: preemptors parked for lack of candidates retry.
        if (wl->status.state == WorkloadState::kAdmitted) {
          RequeueInadmissibleInTreeOf(wl->status.admission->cluster_queue, now);
          changed = true;
        }
        break;
      case TimerKind::kBackoffExpired: {
        auto queued = queued_in_.find(id);
        if (queued == queued_in_.end() || wl->status.history().requeue_at > now) break;
        ClusterQueueRuntime* cq = queued->second;
        if (cq->queue.IsInadmissible(id)) {
          cq->queue.PushActive(KeyOf(*wl));
          changed = true;
        }
        break;
      }
    }
  }
  return changed;
}

void ClusterState::PodsReadyTimeout(Workload& wl, absl::Time now) {
  const SchedulerConfig::WaitForPodsReady& w = config_.wait_for_pods_ready;
  if (w.backoff_limit_count.has_value() &&
      wl.status.history().requeue_count + 1 > *w.backoff_limit_count) {
    wl.status.deactivated = true;
    StartEviction(wl, now, "Deactivated",
                  "The workload is deactivated due to exceeding the maximum number of re-queuing "
                  "retries");
    return;
  }
  wl.status.mutable_history().requeue_count++;
  // Kueue's backoff without its 0.01% jitter: base * 2^(n-1), capped.
  double wait_seconds = static_cast<double>(w.backoff_base_seconds);
  for (int32_t i = 1; i < wl.status.history().requeue_count; ++i) wait_seconds *= 2;
  if (w.backoff_max_seconds > 0) {
    wait_seconds = std::min(wait_seconds, static_cast<double>(w.backoff_max_seconds));
  }
  wl.status.mutable_history().requeue_at = now + absl::Seconds(wait_seconds);
  wl.status.mutable_history().pods_ready_eviction_time = now;
  StartEviction(wl, now, "PodsReadyTimeout",
                absl::StrCat("Exceeded the PodsReady timeout ", wl.Key()));
}

std::optional<absl::Time> ClusterState::NextTimer() const {
  std::optional<absl::Time> next;
  if (!timers_.empty()) next = std::get<0>(*timers_.begin());
  for (const auto& [key, ledger] : fair_usage_) {
    if (!next.has_value() || ledger.next_sample < *next) next = ledger.next_sample;
  }
  return next;
}

bool ClusterState::UsesAdmissionFairSharing(const ClusterQueueSpec& cq) const {
  return config_.admission_fair_sharing.enable &&
         cq.admission_mode == AdmissionMode::kUsageBasedFairSharing;
}

std::map<std::string, double> ClusterState::AdmittedUsageOf(
    const std::string& local_queue_key) const {
  std::map<std::string, double> usage;
  for (const auto& wl : workloads_) {
    if (wl == nullptr || !wl->HoldsQuota() ||
        LocalQueueKey(wl->spec.namespace_name, wl->spec.queue_name) != local_queue_key) {
      continue;
    }
    for (const PodSetAssignment& ps : wl->status.admission->pod_sets) {
      for (const auto& [resource, amount] : ps.resource_usage) {
        usage[resource] +=
            resource == "cpu" ? static_cast<double>(amount) / 1000.0 : static_cast<double>(amount);
      }
    }
  }
  return usage;
}

void ClusterState::DecayLocalQueueUsage(const std::string& local_queue_key, absl::Time now,
                                        const std::map<std::string, double>& penalty) {
  auto it = fair_usage_.find(local_queue_key);
  if (it == fair_usage_.end()) return;
  FairUsageLedger& ledger = it->second;
  const absl::Duration half_life = config_.admission_fair_sharing.usage_half_life_time;
  if (half_life == absl::ZeroDuration()) {
    ledger.consumed.clear();
    ledger.last_update = now;
    return;
  }
  // Kueue's exponential decay: old * 0.5^(elapsed/halfLife) + current * (1 - that).
  const double elapsed = std::max(0.0, absl::ToDoubleSeconds(now - ledger.last_update));
  const double keep = std::pow(0.5, elapsed / absl::ToDoubleSeconds(half_life));
  std::map<std::string, double> current = AdmittedUsageOf(local_queue_key);
  std::map<std::string, double> next;
  for (const auto& [resource, value] : ledger.consumed) next[resource] += value * keep;
  for (const auto& [resource, value] : current) next[resource] += value * (1.0 - keep);
  for (const auto& [resource, value] : penalty) next[resource] += value;
  ledger.consumed = std::move(next);
  ledger.last_update = std::max(ledger.last_update, now);
}

double ClusterState::LocalQueueFairUsage(absl::string_view namespace_name,
                                         absl::string_view name) const {
  const std::string key = LocalQueueKey(namespace_name, name);
  double weight = 1.0;
  if (auto lq = local_queues_.find(key); lq != local_queues_.end()) {
    weight = lq->second.spec.fair_weight;
  }
  double usage = 0;
  if (auto it = fair_usage_.find(key); it != fair_usage_.end()) {
    for (const auto& [resource, value] : it->second.consumed) {
      auto w = config_.admission_fair_sharing.resource_weights.find(resource);
      usage +=
          (w == config_.admission_fair_sharing.resource_weights.end() ? 1.0 : w->second) * value;
    }
  }
  if (weight <= 0) return std::numeric_limits<double>::infinity();
  return usage / weight;
}

std::optional<WorkloadId> ClusterState::HeadOf(const ClusterQueueRuntime& cq) const {
  if (!UsesAdmissionFairSharing(cq.spec)) return cq.queue.Head();
  // The first active workload of each LocalQueue competes; the least-used LocalQueue wins,
  // then the usual priority and age order.
  std::optional<WorkloadId> best;
  double best_usage = 0;
  std::set<std::string> seen;
  for (WorkloadId id : cq.queue.ActiveInOrder()) {
    const Workload* wl = workload(id);
    const std::string lq = LocalQueueKey(wl->spec.namespace_name, wl->spec.queue_name);
    if (!seen.insert(lq).second) continue;
    const double usage = LocalQueueFairUsage(wl->spec.namespace_name, wl->spec.queue_name);
    if (!best.has_value() || usage < best_usage) {
      best = id;
      best_usage = usage;
    }
  }
  return best;
}

std::vector<WorkloadId> ClusterState::OrderForVisibility(const ClusterQueueRuntime& cq) const {
  std::vector<WorkloadId> order = cq.queue.InOrder();
  if (!UsesAdmissionFairSharing(cq.spec)) return order;
  std::map<WorkloadId, double> usage;
  for (WorkloadId id : order) {
    const Workload* wl = workload(id);
    usage[id] = LocalQueueFairUsage(wl->spec.namespace_name, wl->spec.queue_name);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&usage](WorkloadId a, WorkloadId b) { return usage[a] < usage[b]; });
  return order;
}

std::vector<WorkloadId> ClusterState::TakeDirtyWorkloads() {
  std::vector<WorkloadId> out(dirty_.begin(), dirty_.end());
  dirty_.clear();
  return out;
}

std::vector<std::string> ClusterState::TakeDeletedWorkloads() {
  std::vector<std::string> out;
  out.swap(deleted_);
  return out;
}

// --- Visibility ----------------------------------------------------------------------------

const ClusterQueueRuntime* ClusterState::cluster_queue(absl::string_view name) const {
  auto it = cluster_queue_by_name_.find(name);
  return it == cluster_queue_by_name_.end() ? nullptr : it->second;
}

ClusterQueueRuntime* ClusterState::mutable_cluster_queue(absl::string_view name) {
  auto it = cluster_queue_by_name_.find(name);
  return it == cluster_queue_by_name_.end() ? nullptr : it->second;
}

const ClusterQueueRuntime* ClusterState::cluster_queue(const QuotaNode* node) const {
  auto it = cluster_queue_by_node_.find(node);
  return it == cluster_queue_by_node_.end() ? nullptr : it->second;
}

std::vector<ResourceUsageRow> ClusterState::ClusterQueueUsage(absl::string_view name) const {
  std::vector<ResourceUsageRow> rows;
  const ClusterQueueRuntime* cq = cluster_queue(name);
  if (cq == nullptr || cq->node == nullptr) return rows;
  for (const ResourceGroupSpec& group : cq->spec.resource_groups) {
    for (const FlavorQuotasSpec& flavor : group.flavors) {
      for (const ResourceQuotaSpec& quota : flavor.resources) {
        ResourceUsageRow row{flavor.flavor, quota.resource, 0, 0};
        if (auto fr = fr_index_.Find(flavor.flavor, quota.resource)) {
          row.total = cq->node->Usage(*fr);
          row.borrowed = std::max<int64_t>(0, SatSub(row.total, quota.nominal));
        }
        rows.push_back(std::move(row));
      }
    }
  }
  return rows;
}

std::vector<ResourceUsageRow> ClusterState::LocalQueueUsage(absl::string_view namespace_name,
                                                            absl::string_view name) const {
  std::map<std::pair<std::string, std::string>, int64_t> totals;
  for (const auto& wl : workloads_) {
    if (wl == nullptr || !wl->HoldsQuota() || wl->spec.namespace_name != namespace_name ||
        wl->spec.queue_name != name) {
      continue;
    }
    for (const auto& [fr, value] : wl->quota_usage) {
      int64_t& total = totals[{fr_index_.Flavor(fr), fr_index_.Resource(fr)}];
      total = SatAdd(total, value);
    }
  }
  std::vector<ResourceUsageRow> rows;
  for (const auto& [key, total] : totals) rows.push_back({key.first, key.second, total, 0});
  return rows;
}

QueueCounts ClusterState::ClusterQueueCounts(absl::string_view name) const {
  QueueCounts counts;
  const ClusterQueueRuntime* cq = cluster_queue(name);
  if (cq == nullptr) return counts;
  counts.pending = cq->queue.size();
  counts.admitted = static_cast<int64_t>(cq->holding.size());
  return counts;
}

QueueCounts ClusterState::LocalQueueCounts(absl::string_view namespace_name,
                                           absl::string_view name) const {
  QueueCounts counts;
  for (const auto& wl : workloads_) {
    if (wl == nullptr || wl->spec.namespace_name != namespace_name || wl->spec.queue_name != name) {
      continue;
    }
    if (wl->status.state == WorkloadState::kPending) counts.pending++;
    if (wl->HoldsQuota()) counts.admitted++;
  }
  return counts;
}

std::vector<PendingPosition> ClusterState::PendingInClusterQueue(absl::string_view name) const {
  std::vector<PendingPosition> out;
  const ClusterQueueRuntime* cq = cluster_queue(name);
  if (cq == nullptr) return out;
  std::map<std::string, int64_t> per_local_queue;
  int64_t position = 0;
  for (WorkloadId id : OrderForVisibility(*cq)) {
    const Workload* wl = workload(id);
    PendingPosition p;
    p.id = id;
    p.cluster_queue = std::string(name);
    p.position_in_cluster_queue = position++;
    p.position_in_local_queue =
        per_local_queue[LocalQueueKey(wl->spec.namespace_name, wl->spec.queue_name)]++;
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<PendingPosition> ClusterState::PendingInLocalQueue(absl::string_view namespace_name,
                                                               absl::string_view name) const {
  std::vector<PendingPosition> out;
  auto lq = local_queues_.find(LocalQueueKey(namespace_name, name));
  if (lq == local_queues_.end()) return out;
  for (PendingPosition& p : PendingInClusterQueue(lq->second.spec.cluster_queue)) {
    const Workload* wl = workload(p.id);
    if (wl->spec.namespace_name == namespace_name && wl->spec.queue_name == name) {
      out.push_back(std::move(p));
    }
  }
  return out;
}

int64_t ClusterState::WeightedShare(absl::string_view name) const {
  const QuotaNode* node = tree_.ClusterQueue(name);
  if (node == nullptr) node = tree_.Cohort(name);
  if (node == nullptr) return 0;
  return ComputeDrs(*node, fr_index_).RoundedWeightedShare();
}

}  // namespace tollgate::core
