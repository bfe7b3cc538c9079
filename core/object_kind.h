#pragma once

// The one table of the object kinds Tollgate serves: each kind's name, plural and short names,
// API group and versions, scope, and where it sits in a restart. The manifest parser, the
// service layer (store keys, proto kinds), the CLI and the scenario runner all read it, so a
// new kind gets its row here instead of a case in each of them.

#include <optional>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace tollgate::core {

// The configuration kinds: the scheduling kinds ClusterState holds, and the authorization policy
// kinds (Role, RoleBinding, QueueGrant), which are stored and served like them but never reach
// the scheduler (KindTraits::policy). Workload is not one: it has its own lifecycle.
enum class ObjectKind {
  kNamespace,
  kResourceFlavor,
  kClusterQueue,
  kCohort,
  kLocalQueue,
  kWorkloadPriorityClass,
  kPriorityClass,
  kRole,
  kRoleBinding,
  kQueueGrant,
  kAdmissionCheck,
  // Topology Aware Scheduling's Topology (docs/topology.md).
  kTopology,
  // MultiKueue's worker list and workers (docs/multicluster.md).
  kMultiKueueConfig,
  kMultiKueueCluster,
};

struct KindTraits {
  // The manifest `kind`, e.g. "ClusterQueue"; also the kind in messages and store keys.
  absl::string_view name;
  // kubectl's resource name, e.g. "clusterqueues".
  absl::string_view plural;
  // Other names the CLI accepts besides the singular, the plural and the kind itself.
  std::vector<absl::string_view> short_names;
  // API group ("" for the core group) and the versions of it that serve this kind.
  absl::string_view group;
  std::vector<absl::string_view> versions;
  bool namespaced = false;
  // Unset for Workload.
  std::optional<ObjectKind> config_kind;
  // Configuration kinds are re-applied on restart in ascending order, so references resolve the
  // way they did when the objects were written.
  int apply_order = 0;
  // An authorization policy kind (group tollgate.dev): stored, listed and deleted like the
  // other configuration kinds, read by the authorizer, never applied to ClusterState.
  bool policy = false;
};

// Every kind, Workload first, in the order users see them listed.
absl::Span<const KindTraits> AllKinds();

// The row of a manifest kind (exact spelling), or null.
const KindTraits* FindKind(absl::string_view name);

const KindTraits& TraitsOf(ObjectKind kind);

// TraitsOf(kind).name, NUL-terminated.
const char* ObjectKindName(ObjectKind kind);

// TraitsOf(kind).policy.
bool IsPolicyKind(ObjectKind kind);

}  // namespace tollgate::core
