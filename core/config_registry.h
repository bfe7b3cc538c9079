#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "core/admission_checks.h"
#include "core/multikueue_checks.h"
#include "core/object_kind.h"
#include "core/types.h"

namespace tollgate::core {

// The key of a LocalQueue (and of its admission-fair-sharing ledger): "namespace/name".
inline std::string LocalQueueKey(absl::string_view namespace_name, absl::string_view name) {
  return absl::StrCat(namespace_name, "/", name);
}

struct LocalQueueRuntime {
  LocalQueueSpec spec;
};

// The configuration objects as last applied: Namespaces, ResourceFlavors, ClusterQueue and
// Cohort specs, LocalQueues and priority classes. It only stores and answers; what a change
// means for the quota tree and the queues is ClusterState's to decide. Not thread-safe.
class ConfigRegistry {
 public:
  // Put* inserts or replaces the object of that name; Erase* returns false when it is absent.
  void PutNamespace(NamespaceSpec spec);
  void PutResourceFlavor(ResourceFlavorSpec spec);
  void PutClusterQueue(ClusterQueueSpec spec);
  void PutCohort(CohortSpec spec);
  void PutLocalQueue(LocalQueueSpec spec);
  // A PriorityClass or a WorkloadPriorityClass, by spec.is_pod_priority_class.
  void PutPriorityClass(PriorityClassSpec spec);
  // Replaces the spec and keeps the Active condition its controller reported.
  void PutAdmissionCheck(AdmissionCheckSpec spec);
  // The check's Active condition; false when the check is absent.
  bool SetAdmissionCheckActive(const std::string& name, Condition active);
  bool EraseAdmissionCheck(const std::string& name) { return admission_checks_.erase(name) > 0; }
  void PutMultiKueueConfig(MultiKueueConfigSpec spec);
  // Replaces the spec and keeps the Active condition its connection reported.
  void PutMultiKueueCluster(MultiKueueClusterSpec spec);
  // The cluster's Active condition; false when the cluster is absent.
  bool SetMultiKueueClusterActive(const std::string& name, Condition active);
  bool EraseMultiKueueConfig(const std::string& name) {
    return multikueue_configs_.erase(name) > 0;
  }
  bool EraseMultiKueueCluster(const std::string& name) {
    return multikueue_clusters_.erase(name) > 0;
  }
  bool EraseNamespace(const std::string& name) { return namespaces_.erase(name) > 0; }
  bool EraseResourceFlavor(const std::string& name) { return flavors_.erase(name) > 0; }
  bool EraseClusterQueue(const std::string& name) { return cluster_queue_specs_.erase(name) > 0; }
  bool EraseCohort(const std::string& name) { return cohorts_.erase(name) > 0; }
  bool EraseLocalQueue(absl::string_view namespace_name, absl::string_view name) {
    return local_queues_.erase(LocalQueueKey(namespace_name, name)) > 0;
  }
  bool EraseWorkloadPriorityClass(const std::string& name) {
    return workload_priority_classes_.erase(name) > 0;
  }
  bool ErasePodPriorityClass(const std::string& name) {
    return pod_priority_classes_.erase(name) > 0;
  }

  const std::map<std::string, NamespaceSpec>& namespaces() const { return namespaces_; }
  const std::map<std::string, ResourceFlavorSpec>& flavors() const { return flavors_; }
  const std::map<std::string, ClusterQueueSpec>& cluster_queue_specs() const {
    return cluster_queue_specs_;
  }
  const std::map<std::string, CohortSpec>& cohorts() const { return cohorts_; }
  // Keyed by LocalQueueKey.
  const std::map<std::string, LocalQueueRuntime>& local_queues() const { return local_queues_; }
  const std::map<std::string, PriorityClassSpec>& workload_priority_classes() const {
    return workload_priority_classes_;
  }
  const std::map<std::string, PriorityClassSpec>& pod_priority_classes() const {
    return pod_priority_classes_;
  }
  const std::map<std::string, AdmissionCheckRuntime>& admission_checks() const {
    return admission_checks_;
  }
  const std::map<std::string, MultiKueueConfigSpec>& multikueue_configs() const {
    return multikueue_configs_;
  }
  const std::map<std::string, MultiKueueClusterRuntime>& multikueue_clusters() const {
    return multikueue_clusters_;
  }
  // Null when absent.
  const AdmissionCheckRuntime* FindAdmissionCheck(absl::string_view name) const {
    auto it = admission_checks_.find(std::string(name));
    return it == admission_checks_.end() ? nullptr : &it->second;
  }

  // Null when absent.
  const LocalQueueRuntime* FindLocalQueue(absl::string_view namespace_name,
                                          absl::string_view name) const {
    auto it = local_queues_.find(LocalQueueKey(namespace_name, name));
    return it == local_queues_.end() ? nullptr : &it->second;
  }
  bool HasFlavor(const std::string& name) const { return flavors_.count(name) > 0; }

  // Objects deleted while in use (Kueue's finalizers): kept, and marked terminating since the
  // deletion, until ClusterState finds them unused and erases them. Keyed by kind and name
  // (LocalQueueKey for LocalQueues).
  void MarkTerminating(ObjectKind kind, std::string key, absl::Time since) {
    terminating_.emplace(std::make_pair(kind, std::move(key)), since);
  }
  void ClearTerminating(ObjectKind kind, const std::string& key) {
    terminating_.erase(std::make_pair(kind, key));
  }
  bool IsTerminating(ObjectKind kind, absl::string_view key) const {
    return !terminating_.empty() && terminating_.count(std::make_pair(kind, std::string(key))) > 0;
  }
  const std::map<std::pair<ObjectKind, std::string>, absl::Time>& terminating() const {
    return terminating_;
  }
  // The workload's effective priority: its explicit value, else its class's (a
  // WorkloadPriorityClass first, then a PriorityClass), else 0. INVALID_ARGUMENT naming the
  // class when it is not found.
  absl::StatusOr<int32_t> ResolvePriority(const WorkloadSpec& spec) const;
  // Whether the ClusterQueue's namespaceSelector admits workloads of the namespace.
  bool NamespaceMatches(const ClusterQueueSpec& cq, absl::string_view namespace_name) const;

 private:
  std::map<std::string, NamespaceSpec> namespaces_;
  std::map<std::string, ResourceFlavorSpec> flavors_;
  std::map<std::string, ClusterQueueSpec> cluster_queue_specs_;
  std::map<std::string, CohortSpec> cohorts_;
  std::map<std::string, LocalQueueRuntime> local_queues_;
  std::map<std::string, PriorityClassSpec> workload_priority_classes_;
  std::map<std::string, PriorityClassSpec> pod_priority_classes_;
  std::map<std::string, AdmissionCheckRuntime> admission_checks_;
  std::map<std::string, MultiKueueConfigSpec> multikueue_configs_;
  std::map<std::string, MultiKueueClusterRuntime> multikueue_clusters_;
  std::map<std::pair<ObjectKind, std::string>, absl::Time> terminating_;
};

}  // namespace tollgate::core
