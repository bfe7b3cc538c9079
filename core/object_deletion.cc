#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/cluster_state.h"
#include "core/deletion_rule.h"

// ClusterState's deletion of configuration objects, each kind by its DeletionRule: Kueue's
// in-use protection where Kueue has it (a ClusterQueue that workloads still hold quota in is kept
// and marked terminating until the last of them ends; a ResourceFlavor a queue still names cannot
// be deleted), and erased at once where it has none (a Cohort, a LocalQueue): what runs through
// it keeps running and keeps its quota.

namespace tollgate::core {
namespace {

// At most this many workloads are named in a message; the rest are counted.
constexpr size_t kMaxNamed = 5;

std::string NameList(const std::vector<std::string>& names) {
  std::vector<std::string> shown(names.begin(), names.begin() + std::min(names.size(), kMaxNamed));
  std::string text = absl::StrJoin(shown, ", ");
  if (names.size() > kMaxNamed) absl::StrAppend(&text, " and ", names.size() - kMaxNamed, " more");
  return text;
}

bool NamesFlavor(const std::vector<ResourceGroupSpec>& groups, const std::string& flavor) {
  for (const ResourceGroupSpec& group : groups) {
    for (const FlavorQuotasSpec& f : group.flavors) {
      if (f.flavor == flavor) return true;
    }
  }
  return false;
}

}  // namespace

std::string ObjectName::ToString() const {
  return absl::StrCat(ObjectKindName(kind), " ", namespace_name.empty() ? "" : namespace_name,
                      namespace_name.empty() ? "" : "/", name);
}

std::string ClusterState::RegistryKey(ObjectKind kind, absl::string_view namespace_name,
                                      absl::string_view name) {
  return kind == ObjectKind::kLocalQueue ? LocalQueueKey(namespace_name, name) : std::string(name);
}

bool ClusterState::ObjectExists(ObjectKind kind, absl::string_view namespace_name,
                                absl::string_view name) const {
  const std::string key(name);
  switch (kind) {
    case ObjectKind::kNamespace:
      return registry_.namespaces().count(key) > 0;
    case ObjectKind::kResourceFlavor:
      return registry_.flavors().count(key) > 0;
    case ObjectKind::kClusterQueue:
      return registry_.cluster_queue_specs().count(key) > 0;
    case ObjectKind::kCohort:
      return registry_.cohorts().count(key) > 0;
    case ObjectKind::kLocalQueue:
      return registry_.FindLocalQueue(namespace_name, name) != nullptr;
    case ObjectKind::kWorkloadPriorityClass:
      return registry_.workload_priority_classes().count(key) > 0;
    case ObjectKind::kPriorityClass:
      return registry_.pod_priority_classes().count(key) > 0;
    case ObjectKind::kAdmissionCheck:
      return registry_.FindAdmissionCheck(name) != nullptr;
    case ObjectKind::kRole:
    case ObjectKind::kRoleBinding:
    case ObjectKind::kQueueGrant:
      return false;  // policy kinds never reach the scheduling state
    case ObjectKind::kTopology:
      return topology_.FindTopology(name) != nullptr;
    case ObjectKind::kMultiKueueConfig:
      return registry_.multikueue_configs().count(key) > 0;
    case ObjectKind::kMultiKueueCluster:
      return registry_.multikueue_clusters().count(key) > 0;
  }
  return false;
}

std::vector<std::string> ClusterState::ClusterQueuesUsingAdmissionCheck(
    absl::string_view name) const {
  std::vector<std::string> out;
  for (const auto& [cq_name, spec] : registry_.cluster_queue_specs()) {
    for (const AdmissionCheckStrategyRule& rule : spec.admission_checks) {
      if (rule.name == name) {
        out.push_back(cq_name);
        break;
      }
    }
  }
  return out;
}

bool ClusterState::InUse(ObjectKind kind, absl::string_view namespace_name,
                         absl::string_view name) const {
  switch (DeletionRuleOf(kind)) {
    case DeletionRule::kTerminatesWhileInUse:
      return !WorkloadsHoldingQuotaVia(kind, namespace_name, name).empty();
    case DeletionRule::kTerminatesWhileNamed:
      return kind == ObjectKind::kTopology ? !FlavorsNamingTopology(name).empty()
                                           : !ClusterQueuesUsingAdmissionCheck(name).empty();
    case DeletionRule::kRefusedWhileNamed:
    case DeletionRule::kAtOnce:
      return false;
  }
  return false;
}

std::vector<std::string> ClusterState::WorkloadsHoldingQuotaVia(ObjectKind kind,
                                                                absl::string_view namespace_name,
                                                                absl::string_view name) const {
  std::set<WorkloadId> ids;
  auto add_cluster_queue = [&](absl::string_view cq_name) {
    if (const ClusterQueueRuntime* cq = cluster_queue(cq_name)) {
      for (WorkloadId id : cq->holding) ids.insert(id);
    }
  };
  switch (kind) {
    case ObjectKind::kClusterQueue:
      add_cluster_queue(name);
      break;
    case ObjectKind::kCohort:
      if (QuotaNode* node = tree_.Cohort(name)) {
        for (QuotaNode* cq : tree_.ClusterQueuesUnder(node)) add_cluster_queue(cq->name());
      }
      break;
    case ObjectKind::kLocalQueue:
    case ObjectKind::kNamespace: {
      // A Namespace object is cluster-scoped: its own name is the namespace.
      const absl::string_view ns = kind == ObjectKind::kNamespace ? name : namespace_name;
      for (const auto& slot : workloads_.slots()) {
        const Workload* wl = slot.get();
        if (wl == nullptr || !wl->HoldsQuota() || wl->spec.namespace_name != ns) continue;
        if (kind == ObjectKind::kLocalQueue && wl->spec.queue_name != name) continue;
        ids.insert(wl->id);
      }
      break;
    }
    default:
      break;
  }
  std::vector<std::string> keys;
  keys.reserve(ids.size());
  for (WorkloadId id : ids) keys.push_back(workload(id)->Key());
  return keys;
}

std::vector<std::string> ClusterState::QueuesNamingFlavor(absl::string_view flavor) const {
  const std::string name(flavor);
  std::vector<std::string> out;
  for (const auto& [cq_name, spec] : registry_.cluster_queue_specs()) {
    if (NamesFlavor(spec.resource_groups, name))
      out.push_back(absl::StrCat("ClusterQueue ", cq_name));
  }
  for (const auto& [cohort_name, spec] : registry_.cohorts()) {
    if (NamesFlavor(spec.resource_groups, name))
      out.push_back(absl::StrCat("Cohort ", cohort_name));
  }
  return out;
}

std::vector<std::string> ClusterState::FlavorsNamingTopology(absl::string_view topology) const {
  std::vector<std::string> out;
  for (const auto& [flavor_name, flavor] : registry_.flavors()) {
    if (flavor.topology_name == topology)
      out.push_back(absl::StrCat("ResourceFlavor ", flavor_name));
  }
  return out;
}

absl::Status ClusterState::DeleteObject(ObjectKind kind, absl::string_view namespace_name,
                                        absl::string_view name, absl::Time now) {
  if (!ObjectExists(kind, namespace_name, name)) {
    return absl::NotFoundError(absl::StrCat(
        ObjectName{kind, std::string(namespace_name), std::string(name)}.ToString(), " not found"));
  }
  const std::string key = RegistryKey(kind, namespace_name, name);
  // Deleting a terminating object again changes nothing, as a second kubectl delete does.
  if (registry_.IsTerminating(kind, key)) return absl::OkStatus();
  switch (DeletionRuleOf(kind)) {
    case DeletionRule::kRefusedWhileNamed: {
      const std::vector<std::string> users = QueuesNamingFlavor(name);
      if (!users.empty()) {
        return absl::FailedPreconditionError(
            absl::StrCat(ObjectKindName(kind), " ", name, " is in use by ", NameList(users),
                         "; remove it from their resourceGroups (or delete them) first"));
      }
      break;
    }
    case DeletionRule::kTerminatesWhileInUse:
    case DeletionRule::kTerminatesWhileNamed:
      if (InUse(kind, namespace_name, name)) {
        registry_.MarkTerminating(kind, key, now);
        OnTerminatingChanged(now);
        return absl::OkStatus();
      }
      break;
    case DeletionRule::kAtOnce:
      break;
  }
  EraseObject(kind, namespace_name, name, now);
  return absl::OkStatus();
}

void ClusterState::EraseObject(ObjectKind kind, absl::string_view namespace_name,
                               absl::string_view name, absl::Time now) {
  const std::string key(name);
  registry_.ClearTerminating(kind, RegistryKey(kind, namespace_name, name));
  switch (kind) {
    case ObjectKind::kNamespace:
      registry_.EraseNamespace(key);
      RerouteAllPending(now);
      RequeueAllInadmissible(now);
      return;
    case ObjectKind::kResourceFlavor:
      registry_.EraseResourceFlavor(key);
      topology_.SetFlavors(registry_.flavors());
      RecomputeActivity();
      RerouteAllPending(now);
      // It may have been the last flavor naming a terminating Topology.
      if (!registry_.terminating().empty()) finalize_check_due_ = true;
      return;
    case ObjectKind::kClusterQueue:
      registry_.EraseClusterQueue(key);
      RebuildQuotaTree(now);
      return;
    case ObjectKind::kCohort:
      registry_.EraseCohort(key);
      RebuildQuotaTree(now);
      return;
    case ObjectKind::kLocalQueue:
      registry_.EraseLocalQueue(namespace_name, name);
      // Kueue drops the LocalQueue's admission fair sharing usage with it: a LocalQueue
      // re-created under the name starts afresh.
      fair_usage_.Forget(LocalQueueKey(namespace_name, name));
      RerouteAllPending(now);
      SyncAllChecks(now);
      // Kueue's workload controller gives back a reservation still waiting for its checks
      // ("LocalQueue q is terminating or missing"); what was admitted keeps running.
      CancelReservationsInInactiveQueues(now);
      return;
    case ObjectKind::kWorkloadPriorityClass:
      registry_.EraseWorkloadPriorityClass(key);
      return;
    case ObjectKind::kPriorityClass:
      registry_.ErasePodPriorityClass(key);
      return;
    case ObjectKind::kAdmissionCheck:
      // Only reached once no ClusterQueue names it, so no queue's activity changes.
      registry_.EraseAdmissionCheck(key);
      return;
    case ObjectKind::kRole:
    case ObjectKind::kRoleBinding:
    case ObjectKind::kQueueGrant:
      return;  // policy kinds never reach the scheduling state
    case ObjectKind::kTopology:
      // Only reached once no flavor names it, so nothing is placed on it.
      DeleteTopology(name, now).IgnoreError();
      return;
    case ObjectKind::kMultiKueueConfig:
      registry_.EraseMultiKueueConfig(key);
      return;
    case ObjectKind::kMultiKueueCluster:
      registry_.EraseMultiKueueCluster(key);
      return;
  }
}

void ClusterState::OnTerminatingChanged(absl::Time now) {
  RecomputeActivity();
  RerouteAllPending(now);
  CancelReservationsInInactiveQueues(now);
  finalize_check_due_ = true;
}

std::optional<absl::Time> ClusterState::TerminatingSince(ObjectKind kind,
                                                         absl::string_view namespace_name,
                                                         absl::string_view name) const {
  auto it =
      registry_.terminating().find(std::make_pair(kind, RegistryKey(kind, namespace_name, name)));
  if (it == registry_.terminating().end()) return std::nullopt;
  return it->second;
}

absl::Status ClusterState::RestoreTerminating(ObjectKind kind, absl::string_view namespace_name,
                                              absl::string_view name, absl::Time since,
                                              absl::Time now) {
  if (!ObjectExists(kind, namespace_name, name)) {
    return absl::NotFoundError(absl::StrCat(
        ObjectName{kind, std::string(namespace_name), std::string(name)}.ToString(), " not found"));
  }
  if (!CanTerminate(kind)) {
    // Stored as terminating by a version that protected this kind: deleted under today's rule,
    // now, and reported to the executor so the stored object goes at its first commit.
    EraseObject(kind, namespace_name, name, now);
    erased_on_restore_.push_back(ObjectName{kind, std::string(namespace_name), std::string(name)});
    return absl::OkStatus();
  }
  registry_.MarkTerminating(kind, RegistryKey(kind, namespace_name, name), since);
  OnTerminatingChanged(now);
  return absl::OkStatus();
}

std::vector<ObjectName> ClusterState::TakeFinalizedObjects(absl::Time now) {
  std::vector<ObjectName> finalized = std::move(erased_on_restore_);
  erased_on_restore_.clear();
  if (!finalize_check_due_) return finalized;
  finalize_check_due_ = false;
  // A copy: erasing changes the registry's set.
  const std::map<std::pair<ObjectKind, std::string>, absl::Time> terminating =
      registry_.terminating();
  for (const auto& [kind_key, since] : terminating) {
    const auto& [kind, key] = kind_key;
    ObjectName object{kind, "", key};
    if (kind == ObjectKind::kLocalQueue) {
      const size_t slash = key.find('/');
      object.namespace_name = key.substr(0, slash);
      object.name = key.substr(slash + 1);
    }
    if (InUse(kind, object.namespace_name, object.name)) continue;
    EraseObject(kind, object.namespace_name, object.name, now);
    finalized.push_back(std::move(object));
  }
  return finalized;
}

}  // namespace tollgate::core
