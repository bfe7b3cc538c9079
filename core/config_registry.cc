#include "core/config_registry.h"

#include <utility>

#include "core/node_matching.h"

namespace tollgate::core {

void ConfigRegistry::PutNamespace(NamespaceSpec spec) {
  std::string name = spec.name;
  namespaces_[name] = std::move(spec);
}

void ConfigRegistry::PutResourceFlavor(ResourceFlavorSpec spec) {
  std::string name = spec.name;
  flavors_[name] = std::move(spec);
}

void ConfigRegistry::PutClusterQueue(ClusterQueueSpec spec) {
  std::string name = spec.name;
  cluster_queue_specs_[name] = std::move(spec);
}

void ConfigRegistry::PutCohort(CohortSpec spec) {
  std::string name = spec.name;
  cohorts_[name] = std::move(spec);
}

void ConfigRegistry::PutLocalQueue(LocalQueueSpec spec) {
  const std::string key = LocalQueueKey(spec.namespace_name, spec.name);
  local_queues_[key] = LocalQueueRuntime{std::move(spec)};
}

void ConfigRegistry::PutAdmissionCheck(AdmissionCheckSpec spec) {
  std::string name = spec.name;
  admission_checks_[name].spec = std::move(spec);
}

bool ConfigRegistry::SetAdmissionCheckActive(const std::string& name, Condition active) {
  auto it = admission_checks_.find(name);
  if (it == admission_checks_.end()) return false;
  it->second.active = std::move(active);
  return true;
}

void ConfigRegistry::PutMultiKueueConfig(MultiKueueConfigSpec spec) {
  std::string name = spec.name;
  multikueue_configs_[name] = std::move(spec);
}

void ConfigRegistry::PutMultiKueueCluster(MultiKueueClusterSpec spec) {
  std::string name = spec.name;
  multikueue_clusters_[name].spec = std::move(spec);
}

bool ConfigRegistry::SetMultiKueueClusterActive(const std::string& name, Condition active) {
  auto it = multikueue_clusters_.find(name);
  if (it == multikueue_clusters_.end()) return false;
  it->second.active = std::move(active);
  return true;
}

void ConfigRegistry::PutPriorityClass(PriorityClassSpec spec) {
  std::string name = spec.name;
  if (spec.is_pod_priority_class) {
    pod_priority_classes_[name] = std::move(spec);
  } else {
    workload_priority_classes_[name] = std::move(spec);
  }
}

absl::StatusOr<int32_t> ConfigRegistry::ResolvePriority(const WorkloadSpec& spec) const {
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

bool ConfigRegistry::NamespaceMatches(const ClusterQueueSpec& cq,
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

}  // namespace tollgate::core
