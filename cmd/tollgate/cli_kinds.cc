#include "cmd/tollgate/cli_kinds.h"

#include <algorithm>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "services/config_objects.h"

namespace tollgate::cli {

const std::vector<KindInfo>& Kinds() {
  static const auto* kinds = new std::vector<KindInfo>{
      {"workload",
       "Workload",
       "workload.kueue.x-k8s.io",
       v1::OBJECT_KIND_UNSPECIFIED,
       true,
       {"workloads", "wl"}},
      {"clusterqueue",
       "ClusterQueue",
       "clusterqueue.kueue.x-k8s.io",
       v1::CLUSTER_QUEUE,
       false,
       {"clusterqueues", "cq"}},
      {"localqueue",
       "LocalQueue",
       "localqueue.kueue.x-k8s.io",
       v1::LOCAL_QUEUE,
       true,
       {"localqueues", "lq", "queue", "queues"}},
      {"cohort", "Cohort", "cohort.kueue.x-k8s.io", v1::COHORT, false, {"cohorts"}},
      {"resourceflavor",
       "ResourceFlavor",
       "resourceflavor.kueue.x-k8s.io",
       v1::RESOURCE_FLAVOR,
       false,
       {"resourceflavors", "flavor", "flavors", "rf"}},
      {"workloadpriorityclass",
       "WorkloadPriorityClass",
       "workloadpriorityclass.kueue.x-k8s.io",
       v1::WORKLOAD_PRIORITY_CLASS,
       false,
       {"workloadpriorityclasses", "wpc"}},
      {"priorityclass",
       "PriorityClass",
       "priorityclass.scheduling.k8s.io",
       v1::PRIORITY_CLASS,
       false,
       {"priorityclasses", "pc"}},
      {"namespace", "Namespace", "namespace", v1::NAMESPACE, false, {"namespaces", "ns"}},
  };
  return *kinds;
}

const KindInfo* FindKind(absl::string_view word) {
  const std::string lower = absl::AsciiStrToLower(word);
  for (const KindInfo& info : Kinds()) {
    if (info.name == lower || absl::AsciiStrToLower(info.kind) == lower ||
        std::find(info.aliases.begin(), info.aliases.end(), lower) != info.aliases.end()) {
      return &info;
    }
  }
  // kubectl also takes the fully qualified spelling, e.g. clusterqueues.kueue.x-k8s.io.
  if (size_t dot = lower.find('.'); dot != std::string::npos) {
    const KindInfo* info = FindKind(lower.substr(0, dot));
    if (info != nullptr && absl::EndsWith(info->resource, lower.substr(dot))) return info;
  }
  return nullptr;
}

const KindInfo& KindByObjectKind(v1::ObjectKind kind) {
  for (const KindInfo& info : Kinds()) {
    if (info.object_kind == kind) return info;
  }
  return Kinds().front();  // unreachable for the kinds ConfigObject can hold
}

v1::ObjectRef RefOf(const v1::ConfigObject& object) {
  v1::ObjectRef ref;
  ref.set_kind(services::KindOf(object));
  if (KindByObjectKind(ref.kind()).namespaced) {
    ref.set_namespace_(services::MetadataOf(object).namespace_().empty()
                           ? "default"
                           : services::MetadataOf(object).namespace_());
  }
  ref.set_name(services::MetadataOf(object).name());
  return ref;
}

v1::ConfigObject UserIntent(v1::ConfigObject object) {
  if (object.kind_case() != v1::ConfigObject::KIND_NOT_SET) {
    v1::ObjectMeta* meta = services::MutableMetadataOf(object);
    meta->clear_uid();
    meta->clear_resource_version();
    meta->clear_generation();
    meta->clear_creation_timestamp();
    if (!KindByObjectKind(services::KindOf(object)).namespaced) meta->clear_namespace_();
  }
  // Only through the set member: mutable_*() of another one would switch the oneof.
  if (object.has_cluster_queue()) object.mutable_cluster_queue()->clear_status();
  if (object.has_local_queue()) object.mutable_local_queue()->clear_status();
  if (object.has_cohort()) object.mutable_cohort()->clear_status();
  return object;
}

}  // namespace tollgate::cli
