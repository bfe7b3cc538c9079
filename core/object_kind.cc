#include "core/object_kind.h"

namespace tollgate::core {
namespace {

constexpr absl::string_view kKueue = "kueue.x-k8s.io";
constexpr absl::string_view kScheduling = "scheduling.k8s.io";
// Tollgate's own kinds (docs/security.md): the authorization policy.
constexpr absl::string_view kTollgate = "tollgate.dev";

const std::vector<KindTraits>& Table() {
  // Kueue's v1beta1 and v1beta2 serve the same objects; Cohort started out in v1alpha1.
  static const auto* const kTable = new std::vector<KindTraits>{
      {"Workload", "workloads", {"wl"}, kKueue, {"v1beta1", "v1beta2"}, true, std::nullopt, 0},
      {"ClusterQueue",
       "clusterqueues",
       {"cq"},
       kKueue,
       {"v1beta1", "v1beta2"},
       false,
       ObjectKind::kClusterQueue,
       4},
      {"LocalQueue",
       "localqueues",
       {"lq", "queue", "queues"},
       kKueue,
       {"v1beta1", "v1beta2"},
       true,
       ObjectKind::kLocalQueue,
       5},
      {"Cohort",
       "cohorts",
       {},
       kKueue,
       {"v1alpha1", "v1beta1", "v1beta2"},
       false,
       ObjectKind::kCohort,
       3},
      {"ResourceFlavor",
       "resourceflavors",
       {"flavor", "flavors", "rf"},
       kKueue,
       {"v1beta1", "v1beta2"},
       false,
       ObjectKind::kResourceFlavor,
       1},
      {"WorkloadPriorityClass",
       "workloadpriorityclasses",
       {"wpc"},
       kKueue,
       {"v1beta1", "v1beta2"},
       false,
       ObjectKind::kWorkloadPriorityClass,
       2},
      {"PriorityClass",
       "priorityclasses",
       {"pc"},
       kScheduling,
       {"v1"},
       false,
       ObjectKind::kPriorityClass,
       2},
      {"Namespace", "namespaces", {"ns"}, "", {"v1"}, false, ObjectKind::kNamespace, 0},
      // ClusterQueues name checks; applied before them so a restart does not see the queues
      // inactive for a moment.
      {"AdmissionCheck",
       "admissionchecks",
       {"ac", "check", "checks"},
       kKueue,
       {"v1beta1", "v1beta2"},
       false,
       ObjectKind::kAdmissionCheck,
       1},
      // Policy kinds name nothing the scheduler holds; a RoleBinding may name a Role applied
      // in the same file, so roles come first.
      {"Role", "roles", {}, kTollgate, {"v1alpha1"}, false, ObjectKind::kRole, 6, true},
      {"RoleBinding",
       "rolebindings",
       {"rb"},
       kTollgate,
       {"v1alpha1"},
       false,
       ObjectKind::kRoleBinding,
       7,
       true},
      {"QueueGrant",
       "queuegrants",
       {"qg"},
       kTollgate,
       {"v1alpha1"},
       false,
       ObjectKind::kQueueGrant,
       7,
       true},
      // Kueue served Topology as v1alpha1 before v1beta1. A ResourceFlavor may name a Topology
      // that does not exist yet, so the order between the two does not matter.
      {"Topology",
       "topologies",
       {"topo"},
       kKueue,
       {"v1alpha1", "v1beta1", "v1beta2"},
       false,
       ObjectKind::kTopology,
       1},
      // MultiKueue: an AdmissionCheck names its config, a config names clusters; every name may
      // be missing for a while (the check is then inactive), so their order does not matter.
      {"MultiKueueConfig",
       "multikueueconfigs",
       {"mkconf"},
       kKueue,
       {"v1beta1", "v1beta2"},
       false,
       ObjectKind::kMultiKueueConfig,
       1},
      {"MultiKueueCluster",
       "multikueueclusters",
       {"mkc"},
       kKueue,
       {"v1beta1", "v1beta2"},
       false,
       ObjectKind::kMultiKueueCluster,
       1},
  };
  return *kTable;
}

}  // namespace

absl::Span<const KindTraits> AllKinds() { return Table(); }

const KindTraits* FindKind(absl::string_view name) {
  for (const KindTraits& traits : Table()) {
    if (traits.name == name) return &traits;
  }
  return nullptr;
}

const KindTraits& TraitsOf(ObjectKind kind) {
  for (const KindTraits& traits : Table()) {
    if (traits.config_kind == kind) return traits;
  }
  // Every enumerator has a row (test/core/object_kind_test.cc checks it); this only answers a
  // value cast from outside the enum.
  static const KindTraits kUnknown{"Unknown", "unknown", {}, "", {}, false, std::nullopt, 0};
  return kUnknown;
}

const char* ObjectKindName(ObjectKind kind) { return TraitsOf(kind).name.data(); }

bool IsPolicyKind(ObjectKind kind) { return TraitsOf(kind).policy; }

}  // namespace tollgate::core
